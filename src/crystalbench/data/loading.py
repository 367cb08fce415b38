"""Loading a CRYSTAL benchmark from the hub, a local copy, Parquet, JSONL or the sample.

``load_benchmark(spec)`` accepts:

- ``sample``: the bundled 40-item sample (``crystalbench/data/sample``);
- ``waybarrios/CRYSTAL`` (or any ``owner/name`` hub id): the gated hub dataset, split ``test``;
- a folder written by ``datasets.Dataset.save_to_disk``;
- a ``.parquet`` file with the hub's columns;
- a ``.jsonl`` file of :class:`~crystalbench.types.BenchmarkItem` records whose ``image``
  is a path relative to the file.

Hub-style rows carry ``image``, ``question``, ``answer``, ``reference_steps``, ``choices``,
``options`` and ``source``; the row index is the item id.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crystalbench.errors import BenchmarkUnavailableError, InputError
from crystalbench.io import read_jsonl
from crystalbench.types import BenchmarkItem

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
HUB_DATASET = "waybarrios/CRYSTAL"
HUB_SPLIT = "test"
HUB_COLUMNS = ("image", "question", "answer", "reference_steps", "choices", "options", "source")

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
        """SHA-256 (first 16 hex digits) over every item's id, question, options, answer and steps.

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
                        ],
                        ensure_ascii=False,
                    ).encode()
                )
                digest.update(b"\n")
            self._fingerprint = digest.hexdigest()[:16]
        return self._fingerprint

    def image_bytes(self, item: BenchmarkItem) -> bytes | None:
        """The item's image as encoded bytes, or ``None`` when it has none."""
        if self.image_loader is None:
            return None
        return self.image_loader(item)

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


def load_benchmark(spec: str | Path, *, split: str = HUB_SPLIT) -> Benchmark:
    """Load a benchmark from any supported place (see the module docstring).

    Args:
        spec: ``sample``, a hub id, a ``save_to_disk`` folder, a ``.parquet`` or ``.jsonl`` file.
        split: Hub split (CRYSTAL has ``test``).

    Raises:
        InputError: A local file is malformed (names file, line and field).
        BenchmarkUnavailableError: The hub dataset cannot be reached or is gated.

    Examples:
        >>> bench = load_benchmark("sample")
        >>> len(bench) >= 40, bench.sources[:2]
        (True, ['mathvision', 'scienceqa'])
    """
    text = str(spec)
    if text == "sample":
        return load_jsonl_benchmark(SAMPLE_DIR / "benchmark.jsonl", name="sample")
    path = Path(text).expanduser()
    if path.exists():
        if path.is_dir():
            if (path / "benchmark.jsonl").is_file():
                return load_jsonl_benchmark(path / "benchmark.jsonl", name=text)
            return load_saved_dataset(path)
        if path.suffix == ".jsonl":
            return load_jsonl_benchmark(path, name=text)
        if path.suffix == ".parquet":
            return load_parquet_benchmark(path)
        raise InputError("unsupported benchmark file (use .jsonl, .parquet or a folder)", path=path)
    if re.fullmatch(r"[\w.-]+/[\w.-]+", text):
        return load_hub_benchmark(text, split=split)
    raise InputError(
        "benchmark not found: not 'sample', not an existing file or folder, and not a hub id "
        f"like {HUB_DATASET}",
        path=text,
    )


def load_jsonl_benchmark(path: str | Path, *, name: str | None = None) -> Benchmark:
    """Read a JSONL benchmark; ``image`` paths are resolved relative to the file."""
    path = Path(path)
    base = path.resolve().parent
    items: list[BenchmarkItem] = []
    seen: dict[str, int] = {}
    for number, row in read_jsonl(path):
        if "id" in row and not isinstance(row["id"], str):
            row = {**row, "id": str(row["id"])}
        if "choices" in row and "options" not in row:
            row = {**row, "options": row.pop("choices")}
        try:
            item = BenchmarkItem.model_validate(row)
        except ValidationError as exc:
            raise _validation_error(exc, path, number) from None
        if item.id in seen:
            raise InputError(
                f"duplicate item id {item.id!r} (first on line {seen[item.id]})",
                path=path,
                line=number,
                field="id",
            )
        seen[item.id] = number
        if not item.reference_steps:
            raise InputError(
                "reference_steps is empty", path=path, line=number, field="reference_steps"
            )
        if item.image is not None:
            image_path = Path(item.image)
            if not image_path.is_absolute():
                image_path = base / image_path
            item = item.model_copy(update={"image": str(image_path)})
        items.append(item)
    return Benchmark(name=name or str(path), items=items, image_loader=_file_image)


def _file_image(item: BenchmarkItem) -> bytes | None:
    if item.image is None:
        return None
    path = Path(item.image)
    if not path.is_file():
        raise InputError("image file not found", path=path, field="image")
    return path.read_bytes()


def _validation_error(exc: ValidationError, path: Path | str, line: int | None) -> InputError:
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first.get("loc", ())) or None
    message = first.get("msg", "invalid value")
    if first.get("type") == "extra_forbidden":
        valid = ", ".join(BenchmarkItem.model_fields)
        message = f"unknown field (valid fields: {valid})"
    return InputError(message, path=path, line=line, field=loc)


def hub_row_to_item(row: dict[str, Any], index: int, *, where: str = "dataset") -> BenchmarkItem:
    """Convert one hub-style row (``question``, ``answer``, ``reference_steps``...) to an item.

    Examples:
        >>> hub_row_to_item({"question": "Q?", "answer": "B", "reference_steps": ["s"],
        ...                  "choices": [], "options": ["x", "y"], "source": "MMVP"}, 7).options
        ['x', 'y']
    """
    options = [str(o) for o in (row.get("choices") or row.get("options") or [])]
    steps = row.get("reference_steps")
    if isinstance(steps, str):
        try:
            steps = json.loads(steps)
        except json.JSONDecodeError:
            steps = [line for line in steps.splitlines() if line.strip()]
    if not isinstance(steps, list) or not steps:
        raise InputError(
            "reference_steps must be a non-empty list of strings",
            path=where,
            line=index,
            field="reference_steps",
        )
    for name in ("question", "answer"):
        if row.get(name) is None:
            raise InputError("missing value", path=where, line=index, field=name)
    metadata = {k: v for k, v in row.items() if k not in HUB_COLUMNS and _jsonable(v)}
    return BenchmarkItem(
        id=str(row.get("id", index)),
        source=str(row.get("source") or "unknown").lower(),
        question=str(row["question"]),
        options=options,
        answer=str(row["answer"]),
        reference_steps=[str(s) for s in steps],
        image=f"row:{index}",
        difficulty=row.get("difficulty")
        if row.get("difficulty") in ("easy", "medium", "hard")
        else None,
        metadata=metadata,
    )


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _image_to_bytes(value: Any) -> bytes | None:
    """Encoded bytes from a PIL image, an Arrow image struct, raw bytes or a path."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict):
        if value.get("bytes"):
            return bytes(value["bytes"])
        if value.get("path"):
            return Path(value["path"]).read_bytes()
        return None
    if isinstance(value, str):
        return Path(value).read_bytes()
    save = getattr(value, "save", None)
    if save is not None:
        buffer = io.BytesIO()
        fmt = getattr(value, "format", None) or "PNG"
        value.save(buffer, format=fmt if fmt in ("PNG", "JPEG", "WEBP") else "PNG")
        return buffer.getvalue()
    raise TypeError(f"unsupported image value {type(value).__name__}")


def _dataset_benchmark(dataset: Any, name: str) -> Benchmark:
    """Items from a ``datasets.Dataset`` without decoding images; images load on demand."""
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
    image_column = dataset.select_columns(["image"]) if has_image else None

    def loader(item: BenchmarkItem) -> bytes | None:
        if image_column is None or item.image is None or not item.image.startswith("row:"):
            return None
        return _image_to_bytes(image_column[int(item.image[4:])]["image"])

    return Benchmark(name=name, items=items, image_loader=loader)


def _require_datasets(what: str) -> Any:
    try:
        import datasets
    except ImportError as exc:
        raise BenchmarkUnavailableError(
            f"{what} needs the 'datasets' package: pip install 'crystalbench[hub]'"
        ) from exc
    return datasets


def load_saved_dataset(path: str | Path) -> Benchmark:
    """A folder written by ``Dataset.save_to_disk`` (or a ``DatasetDict`` with ``test``)."""
    datasets = _require_datasets("a save_to_disk folder")
    try:
        loaded = datasets.load_from_disk(str(path))
    except FileNotFoundError as exc:
        raise InputError(f"not a save_to_disk folder ({exc})", path=path) from None
    if isinstance(loaded, datasets.DatasetDict):
        split = HUB_SPLIT if HUB_SPLIT in loaded else next(iter(loaded))
        loaded = loaded[split]
    return _dataset_benchmark(loaded, str(path))


def load_parquet_benchmark(path: str | Path) -> Benchmark:
    """A Parquet file with the hub's columns (images as Arrow image structs)."""
    datasets = _require_datasets("a Parquet benchmark")
    loaded = datasets.Dataset.from_parquet(str(path))
    if "image" in loaded.column_names and not isinstance(loaded.features["image"], datasets.Image):
        loaded = loaded.cast_column("image", datasets.Image())
    return _dataset_benchmark(loaded, str(path))


def load_hub_benchmark(repo_id: str, *, split: str = HUB_SPLIT) -> Benchmark:
    """The hub dataset (CRYSTAL is gated: accept its terms and log in first).

    Raises:
        BenchmarkUnavailableError: No network, hub unreachable, or access not granted; the
            message explains how to pass a local copy instead.
    """
    datasets = _require_datasets(f"the hub dataset {repo_id}")
    try:
        loaded = datasets.load_dataset(repo_id, split=split)
    except Exception as exc:  # hub failures arrive as many exception types
        text = f"{type(exc).__name__}: {exc}"
        gated = any(word in text.lower() for word in ("gated", "401", "403", "access", "auth"))
        reason = (
            "access is not granted (CRYSTAL is gated: request access on its hub page, then "
            "`huggingface-cli login`)"
            if gated
            else "the hub could not be reached (no network, HF_HUB_OFFLINE=1, or the hub is down)"
        )
        raise BenchmarkUnavailableError(
            f"cannot load {repo_id} split {split!r}: {reason}. Details: {text}\n"
            "To use a local copy, pass one of: a folder saved with "
            "`datasets.load_dataset('waybarrios/CRYSTAL', split='test').save_to_disk(DIR)` "
            "(--benchmark DIR), a Parquet file (--benchmark crystal.parquet), or a JSONL file "
            "(--benchmark crystal.jsonl). Try the bundled sample with --benchmark sample."
        ) from exc
    return _dataset_benchmark(loaded, repo_id)
