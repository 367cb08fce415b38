"""Rows as read from a source's layout, and where each one lives.

The lowest layer of the adapters: :mod:`~crystalbench.sources.reading` produces rows,
:mod:`~crystalbench.sources.base` adapters consume them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from crystalbench.errors import InputError

BUILD_BATCH_ROWS: Final = 64
"""Rows read per batch from Parquet and Arrow files (bounds memory with large images)."""


@dataclass(frozen=True)
class RowRef:
    """Where one upstream row lives, for error messages and ``build.json``.

    Attributes:
        file: The file (or folder, or hub id and split) the row was read from.
        row: 0-based row index in a table, or 1-based line number in a text file.
        is_line: True when ``row`` is a line number (CSV), False for a table row.
    """

    file: str
    row: int
    is_line: bool = False

    def __str__(self) -> str:
        return f"{self.file}:{self.row}" if self.is_line else f"{self.file} row {self.row}"

    def error(self, message: str, field: str | None = None) -> InputError:
        """An :class:`InputError` naming this row's file and row (and the field, if any).

        Examples:
            >>> str(RowRef("data/test.parquet", 17).error("expected a letter", "answer"))
            'data/test.parquet row 17: field answer: expected a letter'
            >>> str(RowRef("Questions.csv", 5, is_line=True).error("bad options", "Options"))
            'Questions.csv:5: field Options: bad options'
        """
        if self.is_line:
            return InputError(message, path=self.file, line=self.row, field=field)
        return InputError(message, path=str(self), field=field)


@dataclass(frozen=True)
class UpstreamRow:
    """One row of a source as read from its layout.

    Attributes:
        ref: Where it lives.
        data: Column name -> value. Image columns hold ``{"bytes": ..., "path": ...}``
            structs, raw bytes, or ``None``; they are absent when the row was read text-only.
        index: 0-based position of the row in the split as read (files in order).
    """

    ref: RowRef
    data: Mapping[str, Any]
    index: int


class RowSource(Protocol):
    """Rows of one split of one source, in a stable order."""

    kind: str
    """Layout read: ``hub``, ``parquet``, ``save_to_disk``, ``csv``, ``json``."""
    files: list[str]
    """Files (or the hub id) the rows come from, as recorded in ``build.json``."""
    columns: list[str]
    """Column names (of the first row, for layouts without a schema)."""

    def count(self) -> int | None:
        """Number of rows, when known without reading them."""

    def rows(self, *, with_images: bool) -> Iterator[UpstreamRow]:
        """Every row in order; image columns only when ``with_images``."""
