"""Loading a CRYSTAL benchmark from the hub, a local copy, Parquet, JSONL or the sample.

``load_benchmark(spec)`` accepts:

- ``sample``: the bundled 40-item sample (``crystalbench/data/sample``);
- ``waybarrios/CRYSTAL`` (or any ``owner/name`` hub id): the gated hub dataset, split ``test``;
- a folder written by ``datasets.Dataset.save_to_disk`` (or ``DatasetDict.save_to_disk``:
  the split is picked), or a snapshot of the hub's files (``huggingface-cli download
  waybarrios/CRYSTAL --repo-type dataset --local-dir DIR``: the split's Parquet files);
- a ``.parquet`` file with the hub's columns;
- a ``.jsonl`` file of :class:`~crystalbench.types.BenchmarkItem` records whose ``image``
  is a path relative to the file, or a JSONL export of the hub dataset (rows with both
  ``choices`` and ``options``, or without ``id``).

The hub, ``save_to_disk`` folders and Parquet files are opened by :mod:`crystalbench.data.hub`,
the module ``crystal data build`` reads its sources with. Hub-style rows carry ``image``,
``question``, ``answer``, ``reference_steps``, ``choices``, ``options`` and ``source``; the
row index is the item id. One function, :func:`hub_row_to_item`, turns such a row into an
item for the hub, Parquet, ``save_to_disk`` and JSONL paths alike.

Image files must lie under the benchmark file's folder or under ``image_root`` (symlinks are
resolved first); images are decoded fully and checked against the pixel cap whenever
:meth:`Benchmark.image_bytes` hands them out (see :mod:`crystalbench.data.images`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crystalbench._internal.io import InputLimits, note_first_line, read_jsonl
from crystalbench._internal.paths import local_path
from crystalbench.data.hub import (
    HUB_ID_PATTERN,
    datasets_module,
    find_split_files,
    is_save_to_disk,
    load_hub,
    load_saved,
    undecoded_images,
)
from crystalbench.data.images import (
    ImageLimits,
    check_image,
    image_roots,
    read_image_file,
    resolve_image_path,
)
from crystalbench.errors import ImageError, InputError
from crystalbench.types import BenchmarkItem

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
HUB_DATASET = "waybarrios/CRYSTAL"
HUB_SPLIT = "test"
HUB_COLUMNS = ("image", "question", "answer", "reference_steps", "choices", "options", "source")
PRECEDENCE_COLUMN = "reference_precedence"
"""An optional column of hub-style rows: the item's ``reference_precedence`` (a list of
``[a, b]`` pairs, or the same as JSON text; null or absent: the chain's own order)."""

ImageLoader = Callable[[BenchmarkItem], bytes | None]


@dataclass
class Benchmark:
    """A loaded benchmark: items in order, where they came from, and image access.

    Attributes:
        name: What the user passed (``sample``, a hub id, a path).
        items: Items in benchmark order.
        image_loader: Returns an item's image as encoded bytes (PNG/JPEG), or ``None``.
    """

    name: str
    items: list[BenchmarkItem]
    image_loader: ImageLoader | None = None
    _by_id: dict[str, BenchmarkItem] = field(default_factory=dict, repr=False)
    _fingerprint: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        by_id: dict[str, BenchmarkItem] = {}
        for item in self.items:
            if item.id in by_id:
                raise InputError(f"duplicate item id {item.id!r}", path=self.name, field="id")
            by_id[item.id] = item
        self._by_id = by_id

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items)

    def get(self, item_id: str) -> BenchmarkItem | None:
        """The item with this id, or ``None``."""
        return self._by_id.get(item_id)

    @property
    def ids(self) -> list[str]:
        """Item ids in order."""
        return [item.id for item in self.items]

    @property
    def sources(self) -> list[str]:
        """Distinct sources in first-seen order."""
        return list(dict.fromkeys(item.source for item in self.items))

    @property
    def fingerprint(self) -> str:
        """SHA-256 (first 16 hex digits) over every item's id, question, options, answer and steps
        (with its alternative chains and its precedence, when it has them).

        Two benchmarks with the same fingerprint score identically; the fingerprint is
        written into every results file.
        """
        if self._fingerprint is None:
            digest = hashlib.sha256()
            for item in self.items:
                digest.update(
                    json.dumps(
                        [
                            item.id,
                            item.source,
                            item.question,
                            item.options,
                            item.answer,
                            item.answer_type,
                            item.reference_steps,
                            # Only when present, so single-chain fingerprints stay as they were.
                            *([item.reference_chains] if item.reference_chains else []),
                            # Likewise: a precedence changes the order scores.
                            *(
                                [{"precedence": item.reference_precedence}]
                                if item.reference_precedence is not None
                                else []
                            ),
                        ],
                        ensure_ascii=False,
                    ).encode()
                )
                digest.update(b"\n")
            self._fingerprint = digest.hexdigest()[:16]
        return self._fingerprint

    def image_bytes(self, item: BenchmarkItem) -> bytes | None:
        """The item's image as encoded bytes, or ``None`` when it has none.

        The image is decoded fully before it is handed out, so what a caller gets is a
        whole image within the pixel cap (``CRYSTALBENCH_IMAGE_MAX_PIXELS``, default
        :data:`~crystalbench.config.settings.IMAGE_MAX_PIXELS`).

        Raises:
            ImageError: The file is outside the allowed folders, missing, not decodable,
                truncated or over the pixel cap (an :class:`InputError` and a ``ValueError``).
        """
        if self.image_loader is None:
            return None
        data = self.image_loader(item)
        if not data:
            return None
        is_file = item.image is not None and not item.image.startswith("row:")
        check_image(
            data,
            max_pixels=ImageLimits.from_env().max_pixels,
            what=f"image of item {item.id}",
            path=item.image if is_file else self.name,
        )
        return data

    def subset(
        self,
        *,
        sources: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> Benchmark:
        """A benchmark restricted to some sources and/or ids, optionally the first ``limit``.

        Raises:
            InputError: An unknown source or id was asked for.
        """
        items = self.items
        if sources:
            known = set(self.sources)
            unknown = [s for s in sources if s not in known]
            if unknown:
                from crystalbench.errors import UnknownNameError

                raise UnknownNameError("source", unknown[0], known)
            wanted = set(sources)
            items = [item for item in items if item.source in wanted]
        if ids:
            unknown_ids = [i for i in ids if i not in self._by_id]
            if unknown_ids:
                raise InputError(f"unknown item ids: {', '.join(unknown_ids[:5])}", path=self.name)
            wanted_ids = set(ids)
            items = [item for item in items if item.id in wanted_ids]
        if limit is not None:
            items = items[:limit]
        return Benchmark(name=self.name, items=list(items), image_loader=self.image_loader)


def load_benchmark(
    spec: str | Path,
    *,
    split: str = HUB_SPLIT,
    image_root: str | Path | None = None,
    limits: InputLimits | None = None,
    require_references: bool = True,
) -> Benchmark:
    """Load a benchmark from any supported place (see the module docstring).

    Args:
        spec: ``sample``, a hub id, a ``save_to_disk`` or snapshot folder, a ``.parquet`` or
            ``.jsonl`` file.
        split: The split of the hub dataset, a ``DatasetDict`` folder or a snapshot folder
            (CRYSTAL has ``test``).
        image_root: A folder item images may also lie under, besides the benchmark file's
            own folder; images anywhere else are refused.
        limits: Size and nesting limits for JSONL files (default
            :meth:`~crystalbench._internal.io.InputLimits.from_env`).
        require_references: Refuse items without ``reference_steps`` (scoring needs them).
            ``False`` also accepts an *item set* (``crystal data build`` output: a folder
            with ``items.jsonl``, or that file), whose references are not built yet; this is
            what ``crystal infer`` does.

    Raises:
        InputError: A local file is malformed (names file, line and field), an item's
            image lies outside the allowed folders, (``require_references``) an item has
            no reference steps, or ``spec`` looks like a local path and does not exist
            (:func:`crystalbench._internal.paths.local_path`: "no such file or folder",
            before any hub lookup).
        BenchmarkUnavailableError: The hub dataset cannot be reached or is gated.

    Examples:
        >>> bench = load_benchmark("sample")
        >>> len(bench) >= 40, bench.sources[:2]
        (True, ['mathvision', 'scienceqa'])
    """
    text = str(spec)
    if text == "sample":
        return load_jsonl_benchmark(
            SAMPLE_DIR / "benchmark.jsonl", name="sample", image_root=image_root, limits=limits
        )
    path = local_path(text, what="benchmark")
    if path is not None:
        if path.is_dir():
            for file_name in ("benchmark.jsonl", ITEM_SET_FILE):
                if (path / file_name).is_file():
                    return load_jsonl_benchmark(
                        path / file_name,
                        name=text,
                        image_root=image_root,
                        limits=limits,
                        require_references=require_references,
                    )
            if is_save_to_disk(path):
                return load_saved_dataset(path, split=split, image_root=image_root)
            return load_parquet_benchmark(path, split=split, image_root=image_root)
        if path.suffix == ".jsonl":
            return load_jsonl_benchmark(
                path,
                name=text,
                image_root=image_root,
                limits=limits,
                require_references=require_references,
            )
        if path.suffix == ".parquet":
            return load_parquet_benchmark(path, split=split, image_root=image_root)
        raise InputError("unsupported benchmark file (use .jsonl, .parquet or a folder)", path=path)
    if HUB_ID_PATTERN.fullmatch(text):
        return load_hub_benchmark(text, split=split, image_root=image_root)
    raise InputError(
        "benchmark not found: not 'sample', not an existing file or folder, and not a hub id "
        f"like {HUB_DATASET}",
        path=text,
    )


def is_hub_row(row: dict[str, Any]) -> bool:
    """Whether a JSONL record is a row of the hub dataset rather than a ``BenchmarkItem``.

    Hub rows carry both ``choices`` and ``options`` (either may be empty) and need no ``id``
    (the row index is the id); a native record always has an ``id``.

    Examples:
        >>> is_hub_row({"question": "q", "choices": [], "options": ["a"], "answer": "a"})
        True
        >>> is_hub_row({"id": "q1", "question": "q", "options": ["a"], "answer": "a"})
        False
    """
    return ("choices" in row and "options" in row) or "id" not in row


def load_jsonl_benchmark(
    path: str | Path,
    *,
    name: str | None = None,
    image_root: str | Path | None = None,
    limits: InputLimits | None = None,
    require_references: bool = True,
) -> Benchmark:
    """Read a JSONL benchmark: native :class:`BenchmarkItem` records or hub-shaped rows.

    Whether the file holds hub rows is decided on its first record (:func:`is_hub_row`);
    hub rows go through :func:`hub_row_to_item`, exactly as Parquet and hub rows do.
    ``image`` paths are resolved relative to the file (symlinks included) and must lie
    under its folder or under ``image_root``.

    Raises:
        InputError: A malformed line, field or id, an image outside the allowed folders
            (names the file, the line and the field), or, with ``require_references``, an
            item without reference steps (an item set says that it has no references yet).
    """
    path = Path(path)
    base = path.resolve().parent
    roots = image_roots(base, image_root)
    items: list[BenchmarkItem] = []
    embedded: dict[str, bytes] = {}
    seen: dict[str, int] = {}
    hub: bool | None = None
    for number, row in read_jsonl(path, limits=limits):
        if hub is None:
            hub = is_hub_row(row)
        if hub:
            item = hub_row_to_item(row, len(items), where=str(path), line=number)
            item = _hub_jsonl_image(
                item, row.get("image"), base=base, roots=roots, path=path, line=number
            )
            if item.image is not None and item.image.startswith("row:"):
                embedded[item.image[4:]] = _embedded_bytes(row["image"], path, number)
        else:
            item = _native_item(row, path, number, require_references=require_references)
            if item.image is not None:
                resolved = resolve_image_path(
                    item.image, base=base, roots=roots, path=path, line=number
                )
                item = item.model_copy(update={"image": str(resolved)})
        note_first_line(seen, item.id, number, path=path, field="id", what="item id")
        items.append(item)
    return Benchmark(name=name or str(path), items=items, image_loader=_FileImages(roots, embedded))


def _native_item(
    row: dict[str, Any], path: Path, number: int, *, require_references: bool = True
) -> BenchmarkItem:
    if "id" in row and not isinstance(row["id"], str):
        row = {**row, "id": _id_text(row["id"], path=path, line=number)}
    if "choices" in row and "options" not in row:
        row = {("options" if key == "choices" else key): value for key, value in row.items()}
    try:
        item = BenchmarkItem.model_validate(row)
    except ValidationError as exc:
        raise _validation_error(exc, path, number) from None
    if require_references and not item.reference_steps:
        if is_item_set(path):
            raise InputError(
                f"{path.parent} is an item set without references yet (built by `crystal data "
                "build`): scoring needs reference_steps. Build them first (`crystal references "
                "build`), then score; `crystal infer` runs on the item set as it is",
                path=path,
                line=number,
                field="reference_steps",
            )
        raise InputError(
            "reference_steps is empty", path=path, line=number, field="reference_steps"
        )
    return item


ITEM_SET_FILE = "items.jsonl"
"""The file of an item set (``crystal data build`` output), beside its ``build.json``."""


def is_item_set(path: Path) -> bool:
    """Whether a JSONL file is an item set: ``items.jsonl`` or a file beside ``build.json``."""
    return path.name == ITEM_SET_FILE or (path.parent / "build.json").is_file()


def _json_kind(value: Any) -> str:
    names = {list: "array", dict: "object", bool: "boolean", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _id_text(value: Any, *, path: Path | str, line: int | None) -> str:
    """An item id as text: a string or an integer, never a list, object, boolean or float."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        f"id must be a string or integer, got {_json_kind(value)}",
        path=path,
        line=line,
        field="id",
    )


def _hub_jsonl_image(
    item: BenchmarkItem, value: Any, *, base: Path, roots: tuple[Path, ...], path: Path, line: int
) -> BenchmarkItem:
    """The image of a hub row exported to JSONL: a path, ``{"path": ...}`` or base64 bytes.

    Embedded bytes keep the ``row:<id>`` key; a path is resolved and checked like a native
    item's image.
    """
    if isinstance(value, dict) and value.get("bytes"):
        return item.model_copy(update={"image": f"row:{item.id}"})
    if isinstance(value, dict):
        value = value.get("path")
    if value is None:
        return item.model_copy(update={"image": None})
    if not isinstance(value, str):
        raise InputError(
            "must be a path, {'path': ...} or {'bytes': <base64>}, got " + _json_kind(value),
            path=path,
            line=line,
            field="image",
        )
    resolved = resolve_image_path(value, base=base, roots=roots, path=path, line=line)
    return item.model_copy(update={"image": str(resolved)})


def _embedded_bytes(value: dict[str, Any], path: Path, line: int) -> bytes:
    raw = value["bytes"]
    if not isinstance(raw, str):
        raise InputError(
            f"must be a base64 string, got {_json_kind(raw)}",
            path=path,
            line=line,
            field="image.bytes",
        )
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise InputError("not valid base64", path=path, line=line, field="image.bytes") from None


class _FileImages:
    """Image loader of a JSONL benchmark: files under the allowed roots, or embedded bytes."""

    def __init__(self, roots: tuple[Path, ...], embedded: dict[str, bytes]) -> None:
        self.roots = roots
        self.embedded = embedded

    def __call__(self, item: BenchmarkItem) -> bytes | None:
        if item.image is None:
            return None
        if item.image.startswith("row:"):
            return self.embedded.get(item.image[4:])
        return read_image_file(Path(item.image), roots=self.roots, what=f"item {item.id}")


def _validation_error(exc: ValidationError, path: Path | str, line: int | None) -> InputError:
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first.get("loc", ())) or None
    message = first.get("msg", "invalid value")
    if first.get("type") == "extra_forbidden":
        valid = ", ".join(BenchmarkItem.model_fields)
        message = f"unknown field (valid fields: {valid})"
    return InputError(message, path=path, line=line, field=loc)


def hub_row_to_item(
    row: dict[str, Any], index: int, *, where: str = "dataset", line: int | None = None
) -> BenchmarkItem:
    """Convert one hub-style row (``question``, ``answer``, ``reference_steps``...) to an item.

    The one conversion used by the hub, Parquet, ``save_to_disk`` and JSONL paths: options
    come from ``choices``, else ``options`` (either may be empty); the id is the row's ``id``
    when it has one, else ``index``; a ``reference_precedence`` column is the item's
    precedence (a list of pairs or its JSON text; null: none); other scalar columns go to
    ``metadata``.

    Args:
        row: The row.
        index: Its 0-based position (the id when the row has none).
        where: The file or dataset, for messages.
        line: The line named in messages (default: ``index``).

    Raises:
        InputError: A missing or malformed field (names ``where``, the line and the field).

    Examples:
        >>> hub_row_to_item({"question": "Q?", "answer": "B", "reference_steps": ["s"],
        ...                  "choices": [], "options": ["x", "y"], "source": "MMVP"}, 7).options
        ['x', 'y']
    """
    at = index if line is None else line

    def text(value: Any, name: str) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(
                f"must be text, got {_json_kind(value)}", path=where, line=at, field=name
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{value} is not a number", path=where, line=at, field=name)
        return str(value)

    option_field = "choices" if row.get("choices") else "options"
    raw_options = row.get(option_field) or []
    if not isinstance(raw_options, (list, tuple)):
        raise InputError(
            f"must be a list, got {_json_kind(raw_options)}",
            path=where,
            line=at,
            field=option_field,
        )
    options = [text(o, f"{option_field}[{i}]") for i, o in enumerate(raw_options)]
    steps = row.get("reference_steps")
    if isinstance(steps, str):
        try:
            steps = json.loads(steps)
        except (json.JSONDecodeError, RecursionError, ValueError):
            steps = [line for line in steps.splitlines() if line.strip()]
    if not isinstance(steps, (list, tuple)) or not steps:
        raise InputError(
            "reference_steps must be a non-empty list of strings",
            path=where,
            line=at,
            field="reference_steps",
        )
    for name in ("question", "answer"):
        if row.get(name) is None:
            raise InputError("missing value", path=where, line=at, field=name)
    raw_id = row.get("id")
    item_id = _id_text(raw_id, path=where, line=at) if raw_id is not None else str(index)
    precedence = row.get(PRECEDENCE_COLUMN)
    if isinstance(precedence, str):
        try:
            precedence = json.loads(precedence)
        except (json.JSONDecodeError, RecursionError, ValueError):
            raise InputError(
                "must be a list of [a, b] pairs (or its JSON text)",
                path=where,
                line=at,
                field=PRECEDENCE_COLUMN,
            ) from None
    metadata: dict[str, Any] = {}
    for key, value in row.items():
        if key in HUB_COLUMNS or key in ("id", PRECEDENCE_COLUMN) or not _jsonable(value):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{value} is not a number", path=where, line=at, field=key)
        metadata[key] = value
    fields = {
        "id": item_id,
        "source": text(row.get("source") or "unknown", "source").lower(),
        "question": text(row["question"], "question"),
        "options": options,
        "answer": text(row["answer"], "answer"),
        "reference_steps": [text(s, f"reference_steps[{i}]") for i, s in enumerate(steps)],
        "image": f"row:{index}",
        "difficulty": row.get("difficulty")
        if row.get("difficulty") in ("easy", "medium", "hard")
        else None,
        "metadata": metadata,
    }
    if precedence is not None:
        fields[PRECEDENCE_COLUMN] = precedence
    try:
        return BenchmarkItem.model_validate(fields)
    except ValidationError as exc:
        raise _validation_error(exc, where, at) from None


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _image_to_bytes(
    value: Any, *, base: Path | None, roots: tuple[Path, ...], what: str
) -> bytes | None:
    """Encoded bytes from an Arrow image struct, raw bytes, a path or a PIL image.

    A path (a struct without bytes, or a plain string) must lie under ``roots`` once
    resolved against ``base``; it is refused before the file is opened.
    """
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict):
        if value.get("bytes"):
            return bytes(value["bytes"])
        if not value.get("path"):
            return None
        value = str(value["path"])
    if isinstance(value, str):
        if base is None or not roots:
            raise ImageError(
                f"image is a path ({value}) and this dataset has no folder images may lie in; "
                "pass --image-root",
                path=what,
                field="image",
            )
        resolved = resolve_image_path(value, base=base, roots=roots, path=what)
        return read_image_file(resolved, roots=roots, what=what)
    save = getattr(value, "save", None)
    if save is not None:
        buffer = io.BytesIO()
        fmt = getattr(value, "format", None) or "PNG"
        value.save(buffer, format=fmt if fmt in ("PNG", "JPEG", "WEBP") else "PNG")
        return buffer.getvalue()
    raise ImageError(f"unsupported image value {type(value).__name__}", path=what, field="image")


def _dataset_benchmark(
    dataset: Any,
    name: str,
    *,
    base: Path | None = None,
    image_root: str | Path | None = None,
) -> Benchmark:
    """Items from a ``datasets.Dataset`` without decoding images; images load on demand.

    Images are read undecoded (``datasets.Image(decode=False)``): embedded bytes are handed
    out as stored, and a path-only image must lie under ``base`` or ``image_root``.
    """
    missing = [
        c for c in ("question", "answer", "reference_steps") if c not in dataset.column_names
    ]
    if missing:
        raise InputError(
            f"dataset lacks required columns {missing}; found {dataset.column_names}", path=name
        )
    text_columns = [c for c in dataset.column_names if c != "image"]
    rows = dataset.select_columns(text_columns).to_list()
    items = [hub_row_to_item(row, index, where=name) for index, row in enumerate(rows)]
    has_image = "image" in dataset.column_names
    image_column = (
        undecoded_images(dataset.select_columns(["image"]), ["image"]) if has_image else None
    )
    roots: tuple[Path, ...] = ()
    if base is not None:
        roots = image_roots(base, image_root)
    elif image_root is not None:
        roots = image_roots(Path(image_root), None)
        base = roots[0]

    def loader(item: BenchmarkItem) -> bytes | None:
        if image_column is None or item.image is None or not item.image.startswith("row:"):
            return None
        index = int(item.image[4:])
        return _image_to_bytes(
            image_column[index]["image"], base=base, roots=roots, what=f"{name} row {index}"
        )

    return Benchmark(name=name, items=items, image_loader=loader)


def load_saved_dataset(
    path: str | Path, *, split: str = HUB_SPLIT, image_root: str | Path | None = None
) -> Benchmark:
    """A folder written by ``Dataset.save_to_disk`` (or a ``DatasetDict``: ``split`` picks
    one).

    Path-only images must lie under the folder or under ``image_root``.

    Raises:
        InputError: The folder cannot be read, or a ``DatasetDict`` lacks ``split``.
    """
    dataset, _name = load_saved(Path(path), split)
    return _dataset_benchmark(dataset, str(path), base=Path(path), image_root=image_root)


def load_parquet_benchmark(
    path: str | Path, *, split: str = HUB_SPLIT, image_root: str | Path | None = None
) -> Benchmark:
    """A Parquet file with the hub's columns (images as Arrow image structs), or a snapshot
    folder of the hub's files (the Parquet files of ``split``).

    Path-only images must lie under the file's folder (the snapshot folder) or under
    ``image_root``.

    Raises:
        InputError: A folder without Parquet files of ``split``, or a file that is not Parquet.
    """
    path = Path(path)
    datasets = datasets_module("a Parquet benchmark")
    files = find_split_files(path, split, None, option="--benchmark") if path.is_dir() else [path]
    try:
        loaded = datasets.Dataset.from_parquet([str(f) for f in files])
    except Exception as exc:  # pyarrow's ArrowInvalid, OSError...
        raise InputError(f"not a readable Parquet benchmark ({exc})", path=path) from None
    if "image" in loaded.column_names and not isinstance(loaded.features["image"], datasets.Image):
        loaded = loaded.cast_column("image", datasets.Image(decode=False))
    base = path.resolve() if path.is_dir() else path.resolve().parent
    return _dataset_benchmark(loaded, str(path), base=base, image_root=image_root)


def load_hub_benchmark(
    repo_id: str, *, split: str = HUB_SPLIT, image_root: str | Path | None = None
) -> Benchmark:
    """The hub dataset (CRYSTAL is gated: accept its terms and log in first).

    Its images are embedded in the downloaded files; a path-only image must lie under the
    datasets cache or under ``image_root``.

    Raises:
        BenchmarkUnavailableError: No network, hub unreachable, or access not granted; the
            message explains how to pass a local copy instead.
    """
    loaded = load_hub(
        repo_id,
        split,
        option="--benchmark",
        alternatives="A Parquet file (--benchmark crystal.parquet) or a JSONL file "
        "(--benchmark crystal.jsonl) works too. Try the bundled sample with --benchmark sample.",
    )
    datasets = datasets_module(f"the hub dataset {repo_id}")
    cache = Path(datasets.config.HF_DATASETS_CACHE)
    return _dataset_benchmark(loaded, repo_id, base=cache, image_root=image_root)
