"""Item sets on disk: the writer, the reader and manifests.

An *item set* is a folder::

    DIR/items.jsonl    one BenchmarkItem per line, reference_steps empty, image relative
    DIR/images/        the images, named after the sanitised item ids (never after paths
                       found in the data)
    DIR/build.json     provenance (a BuildRecord or a MergeRecord)
    DIR/manifest.json  the upstream ids taken, usable as --manifest to rebuild the set

:class:`ItemSetWriter` builds it in a hidden ``.DIR.partial-*`` folder beside ``DIR`` and
renames it into place only when everything is written, so a killed build never leaves a
half-written item set that looks complete (at most a hidden partial folder, safe to delete).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from crystalbench._internal.io import (
    AtomicJsonlWriter,
    atomic_write_json,
    note_first_line,
    read_jsonl,
    sync_folder,
)
from crystalbench.data.loading import Benchmark
from crystalbench.errors import InputError
from crystalbench.sources.base import BUILD_NAME, IMAGES_DIR, ITEMS_NAME, MANIFEST_NAME
from crystalbench.sources.rows import RowRef
from crystalbench.types import BenchmarkItem, Record

IMAGE_EXTENSIONS = {
    "JPEG": "jpg",
    "MPO": "jpg",
    "PNG": "png",
    "GIF": "gif",
    "WEBP": "webp",
    "BMP": "bmp",
    "TIFF": "tif",
}
"""File extension of each image format Pillow detects (others use the format's name)."""


def item_id(source: str, upstream_id: str) -> str:
    """The item id of an upstream row: ``source/upstream-id``.

    Examples:
        >>> item_id("scienceqa", "test-17")
        'scienceqa/test-17'
    """
    return f"{source}/{upstream_id}"


def safe_name(text: str) -> str:
    """A file-name stem from an id: letters, digits, ``.``, ``_``, ``-`` only.

    Examples:
        >>> safe_name("mathvision/1024"), safe_name("mmvp/../../etc/passwd"), safe_name("a.b")
        ('mathvision-1024', 'mmvp-etc-passwd', 'a.b')
    """
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", text.replace("/", "-"))
    stem = re.sub(r"[-.]{2,}", "-", stem).strip("._-")
    return stem[:100] or "item"


def image_extension(data: bytes, ref: RowRef | None = None, field: str = "image") -> str:
    """The extension for encoded image bytes, after checking Pillow can read them.

    Raises:
        InputError: The bytes are not an image Pillow can open (names the row when given).
    """
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            fmt = image.format or ""
            image.verify()
    except Exception as exc:  # Pillow raises OSError, SyntaxError, DecompressionBombError...
        message = f"image cannot be decoded ({type(exc).__name__}: {exc})"
        raise (ref.error(message, field) if ref else InputError(message)) from None
    return IMAGE_EXTENSIONS.get(fmt, fmt.lower() or "bin")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def check_target(out: Path, overwrite: bool) -> None:
    """Refuse to replace anything that is not a previous item set, or one without ``overwrite``.

    Raises:
        InputError: ``out`` exists and is a file, a non-empty folder that is not an item set,
            or an item set while ``overwrite`` is off.
    """
    if not out.exists():
        return
    if not out.is_dir():
        raise InputError("exists and is not a folder", path=out)
    if not any(out.iterdir()):
        return
    if not (out / BUILD_NAME).is_file():
        raise InputError(
            "exists and is not an item set (no build.json); choose another --out", path=out
        )
    if not overwrite:
        raise InputError(
            "an item set already exists here; pass --overwrite to replace it", path=out
        )


class ItemSetWriter:
    """Writes an item set into a hidden partial folder and renames it into place on commit.

    Use as a context manager: leaving it with an exception (or without :meth:`commit`)
    deletes the partial folder and leaves ``out`` as it was.

    Examples:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "set"
        >>> with ItemSetWriter(out) as writer:
        ...     _ = writer.add(BenchmarkItem(id="demo/1", source="demo", question="Q?",
        ...                    answer="1", answer_type="numeric", reference_steps=[]))
        ...     _ = writer.commit(lambda sha: {"kind": "build", "items_sha256": sha}, ["1"])
        >>> sorted(p.name for p in out.iterdir())
        ['build.json', 'images', 'items.jsonl', 'manifest.json']
    """

    def __init__(self, out: str | Path, *, overwrite: bool = False) -> None:
        self.out = Path(out).expanduser().absolute()
        check_target(self.out, overwrite)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.partial-", dir=self.out.parent))
        (self.tmp / IMAGES_DIR).mkdir()
        self._items = AtomicJsonlWriter(self.tmp / ITEMS_NAME)
        self._names: set[str] = set()
        self._ids: set[str] = set()
        self.count = 0
        self._done = False

    def image_name(self, item_id: str, extension: str) -> str:
        """A fresh file name for an item's image (unique case-insensitively)."""
        stem = safe_name(item_id)
        name = f"{stem}.{extension}"
        if name.lower() in self._names:
            digest = hashlib.sha256(item_id.encode()).hexdigest()
            for length in range(8, len(digest) + 1, 4):
                name = f"{stem}-{digest[:length]}.{extension}"
                if name.lower() not in self._names:
                    break
        self._names.add(name.lower())
        return name

    def add(
        self,
        item: BenchmarkItem,
        image: bytes | None = None,
        *,
        ref: RowRef | None = None,
        image_field: str = "image",
    ) -> BenchmarkItem:
        """Write one item (and its image bytes, checked and named after its id).

        Raises:
            InputError: A duplicate id, or image bytes Pillow cannot read.
        """
        if item.id in self._ids:
            where = f" ({ref})" if ref else ""
            raise InputError(f"duplicate item id {item.id!r}{where}", field="id")
        if image is not None:
            name = self.image_name(item.id, image_extension(image, ref, image_field))
            (self.tmp / IMAGES_DIR / name).write_bytes(image)
            item = item.model_copy(update={"image": f"{IMAGES_DIR}/{name}"})
        self._ids.add(item.id)
        self._items.write(item)
        self.count += 1
        return item

    def add_file(self, item: BenchmarkItem, image_path: Path | None) -> BenchmarkItem:
        """Write one item whose image is an existing file (merging item sets)."""
        data = image_path.read_bytes() if image_path is not None else None
        return self.add(item.model_copy(update={"image": None}), data)

    def commit(self, record: Any, manifest_ids: Sequence[str], manifest_meta: Any = None) -> Path:
        """Finish: ``items.jsonl``, ``manifest.json``, ``build.json``, then rename into place.

        Args:
            record: ``build.json`` content, or a callable taking the SHA-256 of
                ``items.jsonl`` and returning it (a record or a dict).
            manifest_ids: Upstream ids taken, in order.
            manifest_meta: Extra keys for ``manifest.json`` (source, split...).

        Returns:
            The item set's folder.
        """
        self._items.__exit__(None, None, None)
        digest = file_sha256(self.tmp / ITEMS_NAME)
        value = record(digest) if callable(record) else record
        if isinstance(value, Record):
            value = value.model_dump(mode="json")
        manifest = {**(manifest_meta or {}), "ids": list(manifest_ids)}
        atomic_write_json(self.tmp / MANIFEST_NAME, manifest)
        atomic_write_json(self.tmp / BUILD_NAME, value)
        sync_folder(self.tmp / IMAGES_DIR)
        sync_folder(self.tmp)
        old: Path | None = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.out.parent))
            os.replace(self.out, old / self.out.name)
        os.replace(self.tmp, self.out)
        sync_folder(self.out.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        self._done = True
        return self.out

    def abort(self) -> None:
        """Delete the partial folder; ``out`` stays as it was."""
        if not self._done:
            self._items.__exit__(RuntimeError, None, None)
            shutil.rmtree(self.tmp, ignore_errors=True)
            self._done = True

    def __enter__(self) -> ItemSetWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.abort()


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


@dataclass
class ItemSet:
    """An item set read back: its items (image paths absolute) and its ``build.json``."""

    path: Path
    items: list[BenchmarkItem]
    record: dict[str, Any] | None

    @property
    def sources(self) -> list[str]:
        """Distinct sources in first-seen order."""
        return list(dict.fromkeys(item.source for item in self.items))


def is_item_set(path: str | Path) -> bool:
    """True for a folder holding ``items.jsonl``."""
    return (Path(path) / ITEMS_NAME).is_file()


def read_item_set(path: str | Path) -> ItemSet:
    """Read and check an item set folder (or its ``items.jsonl``).

    Every line must be a valid :class:`BenchmarkItem`; ids must be unique; an image must be a
    relative path inside the folder and exist. ``reference_steps`` may be empty.

    Raises:
        InputError: Naming the file, the line and the field of the first problem.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file or folder (expected an item set folder)", path=path)
    folder = path.parent if path.is_file() else path
    items_file = folder / ITEMS_NAME
    if not items_file.is_file():
        raise InputError(f"not an item set (no {ITEMS_NAME})", path=folder)
    base = folder.resolve()
    items: list[BenchmarkItem] = []
    seen: dict[str, int] = {}
    for number, row in read_jsonl(items_file):
        try:
            item = BenchmarkItem.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or None
            raise InputError(
                first.get("msg", "invalid value"), path=items_file, line=number, field=where
            ) from None
        note_first_line(seen, item.id, number, path=items_file, field="id", what="item id")
        if item.image is not None:
            relative = Path(item.image)
            target = (base / relative).resolve()
            if relative.is_absolute() or base not in target.parents:
                raise InputError(
                    "image must be a path inside the item set",
                    path=items_file,
                    line=number,
                    field="image",
                )
            if not target.is_file():
                raise InputError(
                    f"image file {target} not found", path=items_file, line=number, field="image"
                )
            item = item.model_copy(update={"image": str(target)})
        items.append(item)
    record: dict[str, Any] | None = None
    build = folder / BUILD_NAME
    if build.is_file():
        try:
            record = json.loads(build.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg})", path=build, line=exc.lineno) from None
    return ItemSet(path=folder, items=items, record=record)


def load_items(spec: str | Path, *, split: str | None = None) -> Benchmark:
    """An item set folder (``crystal data build``), or any benchmark spec, as a benchmark.

    For the commands that read items whether or not they have references yet
    (``crystal data stats``, ``crystal data check-leakage``).

    Args:
        spec: An item set folder, or anything :func:`crystalbench.data.load_benchmark` reads.
        split: The hub split of a hub dataset (default: the benchmark's, ``test``).

    Raises:
        InputError: A malformed item set or benchmark.
    """
    if is_item_set(spec):
        return item_set_benchmark(spec)
    from crystalbench.data.loading import HUB_SPLIT, load_benchmark

    return load_benchmark(spec, split=split or HUB_SPLIT)


def item_set_benchmark(path: str | Path) -> Benchmark:
    """An item set as a :class:`~crystalbench.data.loading.Benchmark` (images from files).

    For the commands that need no references (``check-leakage``, ``stats``).
    """
    item_set = read_item_set(path)

    def loader(item: BenchmarkItem) -> bytes | None:
        return Path(item.image).read_bytes() if item.image is not None else None

    return Benchmark(name=str(item_set.path), items=item_set.items, image_loader=loader)


# ---------------------------------------------------------------------------------------------
# Manifests
# ---------------------------------------------------------------------------------------------


def read_manifest(path: str | Path, source: str, adapter: str) -> list[str]:
    """Upstream ids listed by a manifest file.

    A ``.json`` manifest is a list of ids or an object with an ``ids`` list (as every build
    writes in ``DIR/manifest.json``; its ``source``, when present, must be this source). Any
    other file lists one id per line (``#`` starts a comment). Ids may be upstream ids
    (``1024``) or item ids (``mathvision/1024``).

    Raises:
        InputError: The file is unreadable, for another source, or lists an id twice.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("manifest file not found", path=path)
    entries: list[tuple[int | None, Any]] = []
    if path.suffix == ".json":
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg})", path=path, line=exc.lineno) from None
        if isinstance(value, dict):
            named = value.get("source")
            if named is not None and named not in (source, adapter):
                raise InputError(
                    f"manifest is for source {named!r}, not {adapter!r}", path=path, field="source"
                )
            value = value.get("ids")
        if not isinstance(value, list):
            raise InputError("expected a list of ids or an object with an 'ids' list", path=path)
        entries = [(None, entry) for entry in value]
    else:
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            text = raw.split("#", 1)[0].strip()
            if text:
                entries.append((number, text))
    ids: list[str] = []
    first: dict[str, int] = {}
    prefix = f"{source}/"
    for position, (line, entry) in enumerate(entries):
        if isinstance(entry, bool) or not isinstance(entry, (str, int)):
            raise InputError(
                f"id {position} is {type(entry).__name__}, expected text", path=path, line=line
            )
        text = str(entry).strip()
        if text.startswith(prefix):
            text = text[len(prefix) :]
        if not text:
            raise InputError(f"id {position} is empty", path=path, line=line)
        if text in first:
            raise InputError(f"id {text!r} is listed twice", path=path, line=line)
        first[text] = position
        ids.append(text)
    if not ids:
        raise InputError("manifest lists no ids", path=path)
    return ids
