"""Errors raised on *our* bad data: files, configs and names.

Model output never raises (see :mod:`crystalbench.parsing`); everything a user hands
us does, at once, saying where the problem is.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class CrystalbenchError(Exception):
    """Base class of every error crystalbench raises on purpose."""


class InputError(CrystalbenchError):
    """A file, line or field a user gave us is malformed.

    Args:
        message: What is wrong.
        path: The file, when there is one.
        line: 1-based line number, when there is one.
        field: The offending field, when there is one.
        key: The record's key in a JSON object keyed by id, when there is one.

    Examples:
        >>> str(InputError("expected a list", path="preds.jsonl", line=3, field="reasoning_steps"))
        'preds.jsonl:3: field reasoning_steps: expected a list'
        >>> str(InputError("must be a string", path="preds.json", key="q7", field="answer"))
        "preds.json: key 'q7': field answer: must be a string"
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        key: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.key = key
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        if self.key is not None:
            where += f"key {self.key!r}: "
        if self.field is not None:
            where += f"field {self.field}: "
        return where + self.message

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments: rebuild through a helper so the error pickles (workers).
        return (
            _rebuild_input_error,
            (type(self), self.message, self.path, self.line, self.field, self.key),
        )


def _rebuild_input_error(
    cls: type[InputError],
    message: str,
    path: str | None,
    line: int | None,
    field: str | None,
    key: str | None,
) -> InputError:
    return cls(message, path=path, line=line, field=field, key=key)


class ImageError(InputError, ValueError):
    """An item's image cannot be used: outside the allowed folders, not decodable, truncated,
    or over the pixel cap (a possible decompression bomb).

    It is an :class:`InputError` (the CLI exits 2 when it stops a command) and a
    ``ValueError`` (what an image that cannot be decoded has always raised).
    """


class UnknownNameError(CrystalbenchError, KeyError):
    """An unknown name (encoder, compat mode, source...) with the closest valid names."""

    def __init__(self, kind: str, name: str, valid: Iterable[str]) -> None:
        valid = sorted(set(valid))
        close = difflib.get_close_matches(name, valid, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        self.message = f"unknown {kind} {name!r}{hint} (valid: {', '.join(valid)})"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class EncoderUnavailableError(CrystalbenchError):
    """A sentence encoder could not be loaded (no network, no hub access, missing extra)."""


class BenchmarkUnavailableError(CrystalbenchError):
    """A benchmark could not be loaded (gated hub dataset, no network, missing extra)."""
