"""The adapter protocol shared by every source: rows in, item drafts out.

An adapter knows one source dataset's published layout and conventions. The builder
(:mod:`crystalbench.sources.build`) asks it to open a location (a hub id or a local copy),
reads its rows, and hands each row to :meth:`SourceAdapter.convert`, which returns either a
:class:`Draft` (the item's text fields, its answer type set explicitly, its image bytes) or a
:class:`Skip` with the reason. A row that breaks the source's own layout raises an
:class:`~crystalbench.errors.InputError` naming the file and the row (:meth:`RowRef.error`).

Item ids are always ``source/upstream-id`` (``mathvision/1024``, ``scienceqa/test-17``), so
item sets can be merged without collisions.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from crystalbench.errors import InputError
from crystalbench.sources.reading import open_table_copy
from crystalbench.sources.rows import RowSource, UpstreamRow
from crystalbench.types import AnswerType, BenchmarkItem

MAX_SKIPPED_LISTED: Final = 1000
"""Skipped rows listed one by one in ``build.json`` (all are counted, by reason)."""

MAX_OPTIONS: Final = 26
"""Most options an item may have (letters A-Z)."""

MANIFEST_NAME: Final = "manifest.json"
"""File of every build: the upstream ids it took, usable as ``--manifest`` to rebuild."""

ITEMS_NAME: Final = "items.jsonl"
"""The item set's items, one :class:`~crystalbench.types.BenchmarkItem` per line."""

BUILD_NAME: Final = "build.json"
"""The item set's provenance: upstream location, revision, counts, skipped rows."""

STATS_HISTOGRAM_BINS: Final = 10
"""Most bins of the steps-per-item histogram of ``crystal data stats``."""

IMAGES_DIR: Final = "images"
"""Folder of the item set's images, named after the sanitised item ids."""


@dataclass(frozen=True)
class Draft:
    """What an adapter makes of one row: an item without id, image path or references."""

    question: str
    answer: str
    answer_type: AnswerType
    options: list[str] = field(default_factory=list)
    image: bytes | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    image_field: str = "image"
    """The column the image came from (named when its bytes are not an image)."""


@dataclass(frozen=True)
class Skip:
    """A row the source's convention leaves out (e.g. a ScienceQA question without image)."""

    reason: str


@dataclass(frozen=True)
class AdapterOptions:
    """Per-build switches an adapter may read.

    Attributes:
        corrections: Apply the packaged ground-truth corrections (MMVP).
        hub_config: Hub configuration (subset) name overriding the adapter's default.
    """

    corrections: bool = True
    hub_config: str | None = None


class SourceAdapter(ABC):
    """One source dataset: where it lives, how its rows become items.

    Subclasses set the class attributes and implement :meth:`upstream_id` and
    :meth:`convert`; layouts other than the hub's (Parquet, ``save_to_disk``) override
    :meth:`open_local`.
    """

    name: ClassVar[str]
    """Name on the command line (``scienceqa-img``)."""
    source: ClassVar[str]
    """``BenchmarkItem.source`` of its items (``scienceqa``), as in CRYSTAL's ``source`` column."""
    title: ClassVar[str]
    """Human name of the source."""
    hub_id: ClassVar[str | None]
    """Canonical hub id, the default ``--from``; ``None`` when the source has none."""
    hub_configs: ClassVar[Mapping[str, str | None]] = {}
    """Known hub ids -> the configuration to load (``None``: the default one)."""
    default_split: ClassVar[str]
    splits: ClassVar[tuple[str, ...]]
    """Splits the source publishes."""
    license: ClassVar[str]
    """Licence of the upstream data, copied into every item's metadata."""
    layouts: ClassVar[str]
    """One line describing the local layouts understood (for help and docs)."""
    image_columns: ClassVar[tuple[str, ...]] = ("image",)
    """Columns holding image data (read only in the second, converting pass)."""
    required_columns: ClassVar[tuple[str, ...]] = ()
    """Columns every row must have."""
    needs_selection: ClassVar[bool] = False
    """True when a build must say which rows to take (``--manifest`` or ``--sample``)."""
    layout_hint: ClassVar[str] = ""
    """Added to the error for a layout that lacks the source's columns."""

    def __init__(self, options: AdapterOptions | None = None) -> None:
        self.options = options or AdapterOptions()
        self.notes: list[str] = []
        """Conventions applied during this build, written into ``build.json``."""
        self.counters: dict[str, int] = {}
        """Counts of conventions applied (``corrections_applied``...), into ``build.json``."""
        self.root: Path | None = None
        """The local copy's folder (images named by relative paths live under it)."""

    # -- locating -----------------------------------------------------------------------------

    def hub_config(self, hub_id: str) -> str | None:
        """The configuration to load for ``hub_id``."""
        if self.options.hub_config is not None:
            return self.options.hub_config
        return self.hub_configs.get(hub_id)

    def open_local(self, path: Path, split: str) -> RowSource:
        """Rows of a local copy: Parquet files or a ``save_to_disk`` folder by default."""
        return open_table_copy(
            path,
            split,
            image_columns=self.image_columns,
            config=self.hub_config(self.hub_id) if self.hub_id else None,
        )

    # -- converting ---------------------------------------------------------------------------

    def check_columns(self, source: RowSource, columns: set[str], where: str) -> None:
        """Raise when the layout lacks a required column (names what was found)."""
        missing = [c for c in self.required_columns if c not in columns]
        if missing:
            hint = f" ({self.layout_hint})" if self.layout_hint else ""
            raise InputError(
                f"not the {self.title} layout: missing column(s) {', '.join(missing)}; "
                f"found {', '.join(sorted(columns)) or 'none'}{hint}",
                path=where,
            )

    @abstractmethod
    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """The row's id in the source (its id column, or ``split-index`` when it has none)."""

    def stratum(self, row: UpstreamRow) -> str:
        """The stratum a seeded ``--sample`` balances over (one stratum by default)."""
        return self.source

    @abstractmethod
    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """The row as an item draft, or why the source's convention leaves it out."""

    def finish(self, items: list[BenchmarkItem]) -> None:
        """Look at the built items as a whole (e.g. MMVP's incomplete pairs); add notes."""
        del items

    def multiple_choice(self, options: list[str], position: int, metadata: dict[str, Any]) -> str:
        """The gold letter of option ``position`` (checked by the caller), its text kept in
        ``metadata["answer_text"]`` and the item counted as ``multiple_choice``."""
        metadata["answer_text"] = options[position]
        self.count("multiple_choice")
        return letter(position)

    def count(self, key: str, by: int = 1) -> None:
        """Add to one of this build's convention counters."""
        self.counters[key] = self.counters.get(key, 0) + by


# ---------------------------------------------------------------------------------------------
# Helpers adapters share
# ---------------------------------------------------------------------------------------------


def letter(index: int) -> str:
    """The option letter of a 0-based index.

    Examples:
        >>> letter(0), letter(3)
        ('A', 'D')
    """
    return chr(ord("A") + index)


def gold_answer_type(answer: str) -> AnswerType:
    """The type of an open (option-less) gold answer, by crystalbench's one rule.

    Used only where the source does not say: a number or numeric expression is ``numeric``,
    yes/no/true/false is ``yes_no``, anything else ``free_form`` (see
    :func:`crystalbench.answers.infer_answer_type`).

    Examples:
        >>> gold_answer_type("12"), gold_answer_type("No"), gold_answer_type("(1,2)")
        ('numeric', 'yes_no', 'free_form')
    """
    from crystalbench.answers import infer_answer_type

    probe = BenchmarkItem(id="-", source="-", question="", answer=answer, reference_steps=[])
    return infer_answer_type(probe)


def upstream_text(row: UpstreamRow, value: object, name: str) -> str:
    """An upstream id from a column value: text or an integer, no control characters.

    Examples:
        >>> from crystalbench.sources.rows import RowRef
        >>> upstream_text(UpstreamRow(RowRef("f", 0), {}, 0), 1024, "id")
        '1024'
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise row.ref.error(f"expected an id (text or integer), got {value!r}", name)
    text = str(value).strip()
    if not text or re.search(r"[\x00-\x1f\x7f]", text):
        raise row.ref.error(f"unusable id {value!r}", name)
    return text


def text_field(row: UpstreamRow, name: str, *, allow_empty: bool = False) -> str:
    """A string column of ``row``, stripped; raises naming the row when absent or not text."""
    value = row.data.get(name)
    if value is None:
        if allow_empty:
            return ""
        raise row.ref.error("missing value", name)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise row.ref.error(f"expected text, got {type(value).__name__}", name)
    text = str(value).strip()
    if not text and not allow_empty:
        raise row.ref.error("empty value", name)
    return text


def int_field(row: UpstreamRow, name: str) -> int:
    """An integer column of ``row`` (an int, or a string of digits)."""
    value = row.data.get(name)
    if isinstance(value, bool):
        raise row.ref.error("expected an integer, got a boolean", name)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    raise row.ref.error(f"expected an integer, got {value!r}", name)


def string_list(row: UpstreamRow, name: str) -> list[str]:
    """A list-of-strings column (``None`` reads as empty)."""
    value = row.data.get(name)
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise row.ref.error(f"expected a list of strings, got {type(value).__name__}", name)
    out: list[str] = []
    for position, entry in enumerate(value):
        if not isinstance(entry, (str, int, float)) or isinstance(entry, bool):
            raise row.ref.error(f"entry {position} is {type(entry).__name__}, expected text", name)
        out.append(str(entry).strip())
    return out


def check_options(row: UpstreamRow, options: list[str], name: str) -> list[str]:
    """Options as given, refusing blank entries or more than ``MAX_OPTIONS``."""
    if len(options) > MAX_OPTIONS:
        raise row.ref.error(f"{len(options)} options; at most {MAX_OPTIONS} are supported", name)
    for position, option in enumerate(options):
        if not option:
            raise row.ref.error(f"option {letter(position)} is empty", name)
    return options


def column_image(row: UpstreamRow, name: str) -> bytes | None:
    """Encoded image bytes from an image column (an Arrow image struct or raw bytes)."""
    value = row.data.get(name)
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value) or None
    if isinstance(value, Mapping):
        data = value.get("bytes")
        if data:
            return bytes(data)
        return None
    raise row.ref.error(f"expected image bytes, got {type(value).__name__}", name)


def image_from_root(row: UpstreamRow, relative: str, root: Path | None, name: str) -> bytes:
    """Read an image a row names by a path relative to the local copy's root.

    The path must stay inside the root (no absolute paths, no ``..``, no links out).
    """
    if root is None:
        raise row.ref.error(
            f"the image is only given as the path {relative!r} and this copy has no folder "
            "to read it from (pass the local copy's folder with --from)",
            name,
        )
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in candidate.parts or not relative.strip():
        raise row.ref.error(f"image path {relative!r} must be relative to the copy", name)
    base = root.resolve()
    target = (base / candidate).resolve()
    if base not in target.parents:
        raise row.ref.error(f"image path {relative!r} leaves the copy's folder", name)
    if not target.is_file():
        raise row.ref.error(f"image file {target} not found", name)
    return target.read_bytes()


# ---------------------------------------------------------------------------------------------
# Registry (the lookups live in registry.py, which imports the built-in adapters)
# ---------------------------------------------------------------------------------------------

REGISTRY: dict[str, type[SourceAdapter]] = {}
"""Adapter classes by name, filled by :func:`register`."""


def register(adapter: type[SourceAdapter]) -> type[SourceAdapter]:
    """Class decorator adding an adapter to the registry under its ``name``."""
    if adapter.name in REGISTRY:
        raise ValueError(f"source adapter {adapter.name!r} registered twice")
    REGISTRY[adapter.name] = adapter
    return adapter
