"""Reading and writing our files: JSONL with line numbers, atomic writes.

Every write that replaces a file goes through a temporary file in the same folder and
``os.replace``, so a crash never leaves a half-written results file behind. The files get
the permissions of any file the user creates (``0o666`` less the umask), not the
owner-only ``0o600`` of :func:`tempfile.mkstemp`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from crystalbench.errors import InputError


def read_jsonl(
    path: str | Path,
    *,
    allow_empty: bool = False,
    skipped: list[str] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Args:
        path: The file.
        allow_empty: Accept a file with no records (otherwise an :class:`InputError`).
        skipped: When given, malformed lines are described here and skipped instead of
            raising (``--lenient``).

    Raises:
        InputError: A line is not valid JSON or not a JSON object, or the file is empty;
            the message names the file and the 1-based line.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    seen = False
    with path.open("r", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            error: InputError | None = None
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                error = InputError(
                    f"malformed JSON ({exc.msg} at column {exc.colno})", path=path, line=number
                )
            else:
                if not isinstance(value, dict):
                    error = InputError(
                        f"expected a JSON object per line, got {type(value).__name__}",
                        path=path,
                        line=number,
                    )
            if error is not None:
                if skipped is None:
                    raise error
                skipped.append(str(error))
                continue
            seen = True
            yield number, value
    if not seen and not allow_empty:
        raise InputError("file holds no records", path=path)


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows.

    ``os.umask`` can only be read by setting it, which for a moment changes it for every
    thread; Linux shows it in ``/proc/self/status``, read first.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _user_mode(fd: int) -> None:
    """Give a file made by :func:`tempfile.mkstemp` (``0o600``) the user's usual mode."""
    if not hasattr(os, "fchmod"):  # Windows: no modes to set
        return
    with contextlib.suppress(OSError):  # a file system without modes: keep mkstemp's
        os.fchmod(fd, 0o666 & ~current_umask())


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _user_mode(fd)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: str | Path, value: Any) -> None:
    """Write ``value`` as pretty JSON, atomically."""
    atomic_write_text(
        path, json.dumps(value, indent=2, ensure_ascii=False, default=_default) + "\n"
    )


class AtomicJsonlWriter:
    """Streams records to ``path`` through a temporary file renamed on success.

    Use as a context manager; on an exception the temporary file is removed and the
    previous ``path`` (if any) stays untouched.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        _user_mode(fd)
        self._handle = os.fdopen(fd, "w", encoding="utf-8")
        self.count = 0

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Append one record as a JSON line."""
        if isinstance(record, BaseModel):
            line = record.model_dump_json()
        else:
            line = json.dumps(record, ensure_ascii=False, default=_default)
        self._handle.write(line + "\n")
        self.count += 1

    def __enter__(self) -> AtomicJsonlWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            os.replace(self._tmp, self.path)
        else:
            self._handle.close()
            Path(self._tmp).unlink(missing_ok=True)


def write_jsonl(path: str | Path, records: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Write all ``records`` atomically; returns how many were written."""
    with AtomicJsonlWriter(path) as writer:
        for record in records:
            writer.write(record)
    return writer.count


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")
