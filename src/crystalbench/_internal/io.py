"""Reading and writing our files: JSON, JSONL and CSV with line numbers, atomic writes.

Every file a user hands us (predictions, benchmarks, configs, results) is read here, so every
loader refuses bad input the same way: an :class:`~crystalbench.errors.InputError` naming the
file, the line (or key) and the field, never a Python traceback. The reader refuses bytes that
are not UTF-8, JSON that is malformed or nested deeper than :data:`~crystalbench.defaults.
MAX_JSON_DEPTH`, a key repeated inside one object, ``NaN``/``Infinity`` and numbers that
overflow (``1e400``) or have more digits than Python converts, strings holding lone UTF-16
surrogates (``"\\ud800"``), and records over the size limits (:class:`InputLimits`).

Every write that replaces a file goes through a temporary file in the same folder and
``os.replace``, so a crash never leaves a half-written results file behind. The files get
the permissions of any file the user creates (``0o666`` less the umask), not the
owner-only ``0o600`` of :func:`tempfile.mkstemp`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from crystalbench.config.settings import (
    MAX_FILE_BYTES,
    MAX_FILE_BYTES_ENV,
    MAX_JSON_DEPTH,
    MAX_JSON_DEPTH_ENV,
    MAX_LINE_BYTES,
    MAX_LINE_BYTES_ENV,
    MAX_RESPONSE_CHARS,
    MAX_RESPONSE_CHARS_ENV,
)
from crystalbench.errors import InputError

# --------------------------------------------------------------------------- limits


@dataclass(frozen=True)
class InputLimits:
    """Size and nesting limits on the files a user hands us (documented in the README).

    Every loader takes ``limits=None``, meaning :meth:`from_env`: the environment variables
    ``CRYSTALBENCH_MAX_LINE_BYTES``, ``CRYSTALBENCH_MAX_FILE_BYTES``,
    ``CRYSTALBENCH_MAX_JSON_DEPTH`` and ``CRYSTALBENCH_MAX_RESPONSE_CHARS`` when set, else the
    values in :mod:`crystalbench.defaults`.

    Examples:
        >>> InputLimits().max_json_depth
        64
        >>> InputLimits.from_env({"CRYSTALBENCH_MAX_LINE_BYTES": "1024"}).max_line_bytes
        1024
    """

    max_line_bytes: int = MAX_LINE_BYTES
    """Largest record in bytes: a JSONL line, one ``<id>.json`` file, a config file."""
    max_file_bytes: int = MAX_FILE_BYTES
    """Largest JSON document read whole (a ``.json`` predictions file), in bytes."""
    max_json_depth: int = MAX_JSON_DEPTH
    """Deepest nesting of arrays and objects in one record."""
    max_response_chars: int = MAX_RESPONSE_CHARS
    """Longest prediction text (response, answer, all reasoning steps together)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> InputLimits:
        """Limits from the environment, falling back to the defaults.

        Raises:
            InputError: A variable is set to something other than a positive integer.
        """
        variables = {
            "max_line_bytes": MAX_LINE_BYTES_ENV,
            "max_file_bytes": MAX_FILE_BYTES_ENV,
            "max_json_depth": MAX_JSON_DEPTH_ENV,
            "max_response_chars": MAX_RESPONSE_CHARS_ENV,
        }
        return cls(**positive_ints_from_env(variables, environ))


def positive_ints_from_env(
    variables: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, int]:
    """The set ones of ``variables`` (field name -> environment variable) as positive
    integers, by field name; unset and blank variables are left out (their defaults hold).

    Raises:
        InputError: A variable is set to something other than a positive integer.

    Examples:
        >>> positive_ints_from_env({"side": "SIDE", "pixels": "PIXELS"}, {"SIDE": "1_024"})
        {'side': 1024}
    """
    env = os.environ if environ is None else environ
    values: dict[str, int] = {}
    for name, variable in variables.items():
        raw = env.get(variable)
        if raw is not None and raw.strip():
            values[name] = positive_int_from_env(variable, raw)
    return values


def positive_int_from_env(variable: str, raw: str) -> int:
    """``raw`` (the value of environment variable ``variable``) as a positive integer.

    Underscores are allowed as digit separators (``16_777_216``).

    Raises:
        InputError: Not a positive integer; the message names the variable.
    """
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise InputError(f"must be a positive integer, got {raw!r}", field=f"${variable}")
    return value


def note_first_line(
    seen: dict[str, int], key: str, line: int, *, path: str | Path, field: str, what: str
) -> None:
    """Remember that ``key`` (an id of a record) is on ``line``; a repeat is an error that
    names both lines.

    Raises:
        InputError: ``key`` was seen before (``what``: how the message names it).

    Examples:
        >>> seen = {}
        >>> note_first_line(seen, "a", 1, path="b.jsonl", field="id", what="item id")
        >>> note_first_line(seen, "a", 4, path="b.jsonl", field="id", what="item id")
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: b.jsonl:4: field id: duplicate item id 'a' (first on line 1)
    """
    if key in seen:
        raise InputError(
            f"duplicate {what} {key!r} (first on line {seen[key]})",
            path=path,
            line=line,
            field=field,
        )
    seen[key] = line


def resolve_limits(limits: InputLimits | None) -> InputLimits:
    """``limits`` itself, or :meth:`InputLimits.from_env` when it is ``None``."""
    return limits if limits is not None else InputLimits.from_env()


# --------------------------------------------------------------------------- parsing JSON


class _BadNumber:
    """Stands in for a number we refuse (NaN, an overflow, too many digits) until the record
    holding it is checked, so the error can name the field."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        _hooks.fired = True
        self.text = text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"

    def describe(self) -> str:
        if self.text in ("NaN", "Infinity", "-Infinity"):
            return f"{self.text} is not a number (use null or a string)"
        if "(" in self.text:
            return f"number {self.text} has too many digits"
        return f"number {self.text} is out of range"


class _RepeatedKeys(dict[str, Any]):
    """A JSON object in which a key appeared more than once (the first value is kept)."""

    repeated: list[str]


_hooks = threading.local()
"""``fired`` is set when a parsing hook left a stand-in or a repeated-key object."""


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    _hooks.fired = True
    first: _RepeatedKeys = _RepeatedKeys()
    first.repeated = []
    for key, value in pairs:
        if key in first:
            if key not in first.repeated:
                first.repeated.append(key)
            continue
        first[key] = value
    return first


def _parse_float(text: str) -> float | _BadNumber:
    value = float(text)
    return value if math.isfinite(value) else _BadNumber(text)


def _parse_int(text: str) -> int | _BadNumber:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return _BadNumber(text)


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_pairs, parse_float=_parse_float, parse_constant=_BadNumber
)
_DIGITS_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_pairs,
    parse_float=_parse_float,
    parse_int=_parse_int,
    parse_constant=_BadNumber,
)
"""Used only after the fast decoder failed on an integer too long to convert: its hook
leaves a stand-in, so the error can name the field (a hook on every integer costs time)."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class MalformedJsonError(InputError):
    """JSON that does not parse; ``reason`` is the parser's own message (``Extra data``...)."""

    def __init__(self, reason: str, column: int, *, path: str | Path | None, line: int) -> None:
        super().__init__(f"malformed JSON ({reason} at column {column})", path=path, line=line)
        self.reason = reason
        self.column = column

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_malformed, (self.reason, self.column, self.path, self.line))


def _rebuild_malformed(
    reason: str, column: int, path: str | None, line: int | None
) -> MalformedJsonError:
    return MalformedJsonError(reason, column, path=path, line=line or 0)


class JsonProblem(Exception):
    """What :func:`check_json_value` found wrong: a message and the field it is in."""

    def __init__(self, message: str, field: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def _field_path(parts: Iterable[str | int]) -> str | None:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + part
    return text or None


def check_json_value(value: Any, *, max_depth: int) -> None:
    """Refuse a parsed value holding a stand-in for a bad number, a repeated key, a lone
    surrogate, or nesting deeper than ``max_depth`` (walked iteratively: no recursion).

    Raises:
        JsonProblem: The first problem, with the field path (``reasoning_steps[2]``).
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, dict):
            if len(parts) >= max_depth:
                raise JsonProblem(f"JSON nested deeper than {max_depth} levels", None)
            if isinstance(node, _RepeatedKeys):
                key = node.repeated[0]
                raise JsonProblem(
                    f"key {key!r} appears more than once in one object", _field_path(parts)
                )
            for key, child in reversed(node.items()):
                if _SURROGATE.search(key):
                    raise JsonProblem(
                        "key holds a lone UTF-16 surrogate (not valid Unicode)", _field_path(parts)
                    )
                if isinstance(child, (dict, list, _BadNumber, str)):
                    stack.append((child, (*parts, key)))
        elif isinstance(node, list):
            if len(parts) >= max_depth:
                raise JsonProblem(f"JSON nested deeper than {max_depth} levels", None)
            for index in range(len(node) - 1, -1, -1):
                child = node[index]
                if isinstance(child, (dict, list, _BadNumber, str)):
                    stack.append((child, (*parts, index)))
        elif isinstance(node, _BadNumber):
            raise JsonProblem(node.describe(), _field_path(parts))
        elif isinstance(node, str) and _SURROGATE.search(node):
            raise JsonProblem(
                "string holds a lone UTF-16 surrogate (not valid Unicode)", _field_path(parts)
            )


def decode_json(
    text: str,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    limits: InputLimits | None = None,
    check: bool = True,
) -> Any:
    """Parse one JSON document strictly; errors name the file, the line and the field.

    Args:
        text: The JSON text.
        path: The file, for messages.
        line: The line the document is on (a JSONL line), for messages; when ``None`` (a
            document read whole), a syntax error names its own line.
        limits: Nesting limit (default :meth:`InputLimits.from_env`).
        check: Check the whole value now. Pass ``False`` for a document holding many
            records, then call :func:`check_record` on each, so that ``--lenient`` can skip
            a bad record instead of refusing the file.

    Raises:
        InputError: Malformed JSON, or (when ``check``) a refused value.

    Examples:
        >>> decode_json('{"id": 1, "answer": "B"}')
        {'id': 1, 'answer': 'B'}
        >>> try:
        ...     decode_json('{"id": 1, "answer": NaN}', path="p.jsonl", line=4)
        ... except InputError as error:
        ...     print(error)
        p.jsonl:4: field answer: NaN is not a number (use null or a string)
    """
    limits = resolve_limits(limits)
    _hooks.fired = False
    try:
        try:
            value = _DECODER.decode(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer with more digits than Python converts
            _hooks.fired = False
            value = _DIGITS_DECODER.decode(text)
    except json.JSONDecodeError as exc:
        # A document read whole: the error's own line is the one to name.
        raise MalformedJsonError(
            exc.msg, exc.colno, path=path, line=line if line is not None else exc.lineno
        ) from None
    except RecursionError:
        raise InputError(
            f"JSON nested deeper than {limits.max_json_depth} levels", path=path, line=line
        ) from None
    if check and _needs_check(text, limits.max_json_depth):
        check_record(value, path=path, line=line, limits=limits)
    return value


def _needs_check(text: str, max_depth: int) -> bool:
    """Whether a value just decoded from ``text`` may hold something we refuse.

    Plain records (the common case) are not walked: no parsing hook fired, the text has
    fewer brackets than the depth limit and no surrogate escape.
    """
    return bool(
        getattr(_hooks, "fired", False)
        or text.count("[") + text.count("{") > max_depth
        or ("\\u" in text and _SURROGATE_ESCAPE.search(text))
    )


def check_record(
    value: Any,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    key: str | None = None,
    limits: InputLimits | None = None,
) -> None:
    """Refuse a parsed record (from :func:`decode_json` with ``check=False``) holding a
    refused value: a bad number, a repeated key, a lone surrogate, too-deep nesting.

    Args:
        value: The record.
        path: The file, for messages.
        line: The line, for messages.
        key: The record's key in a document keyed by id, for messages.
        limits: Nesting limit (default :meth:`InputLimits.from_env`).

    Raises:
        InputError: The first problem, naming the field.
    """
    limits = resolve_limits(limits)
    try:
        check_json_value(value, max_depth=limits.max_json_depth)
    except JsonProblem as problem:
        raise InputError(
            problem.message, path=path, line=line, key=key, field=problem.field
        ) from None


def decode_utf8(data: bytes, *, path: str | Path | None = None, line: int | None = None) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark is dropped).

    Raises:
        InputError: The bytes are not UTF-8; names the line (counted in ``data`` when
            ``line`` is not given) and the byte column.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column}); save the file "
            "as UTF-8",
            path=path,
            line=bad_line,
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


# --------------------------------------------------------------------------- reading files


def read_text_file(
    path: str | Path,
    *,
    max_bytes: int | None = None,
    what: str = "file",
    limit_env: str = MAX_LINE_BYTES_ENV,
) -> str:
    """A whole UTF-8 text file, refusing one over ``max_bytes`` (default: the line limit;
    ``limit_env`` names the variable that raises it, for the message).

    Raises:
        InputError: Missing, too large, or not UTF-8 (names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} not found", path=path)
    limit = max_bytes if max_bytes is not None else resolve_limits(None).max_line_bytes
    size = path.stat().st_size
    if size > limit:
        raise InputError(
            f"{what} is {size:,} bytes, over the limit of {limit:,} (raise it with ${limit_env})",
            path=path,
        )
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew while we looked
        raise InputError(f"{what} is over the limit of {limit:,} bytes", path=path)
    return decode_utf8(data, path=path)


def read_json_file(
    path: str | Path,
    *,
    limits: InputLimits | None = None,
    whole: bool = True,
    check: bool = True,
) -> Any:
    """Parse a JSON file strictly (see :func:`decode_json`).

    Args:
        path: The file.
        limits: Limits (default :meth:`InputLimits.from_env`).
        whole: The file is a document of many records, bounded by ``max_file_bytes``;
            ``False``: one record (an ``<id>.json`` file), bounded by ``max_line_bytes``.
        check: As in :func:`decode_json`.

    Raises:
        InputError: Missing, too large, not UTF-8, malformed or refused values.
    """
    limits = resolve_limits(limits)
    limit = limits.max_file_bytes if whole else limits.max_line_bytes
    text = read_text_file(
        path, max_bytes=limit, limit_env=MAX_FILE_BYTES_ENV if whole else MAX_LINE_BYTES_ENV
    )
    return decode_json(text, path=path, limits=limits, check=check)


def iter_lines(path: Path, *, max_line_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """``(number, bytes)`` per line of a binary file; ``None`` for a line over the limit,
    which is skipped without being held in memory."""
    with path.open("rb") as handle:
        number = 0
        while True:
            chunk = handle.readline(max_line_bytes + 1)
            if not chunk:
                return
            number += 1
            if len(chunk) > max_line_bytes and not chunk.endswith(b"\n"):
                while chunk and not chunk.endswith(b"\n"):  # skip the rest of the line
                    chunk = handle.readline(1 << 20)
                yield number, None
                continue
            yield number, chunk


def read_jsonl(
    path: str | Path,
    *,
    allow_empty: bool = False,
    skipped: list[str] | None = None,
    limits: InputLimits | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Each line is read as bytes and refused unless it is UTF-8, within ``max_line_bytes``,
    valid JSON nested at most ``max_json_depth`` deep, an object, and free of the values
    :func:`decode_json` refuses.

    Args:
        path: The file.
        allow_empty: Accept a file with no records (otherwise an :class:`InputError`).
        skipped: When given, malformed lines are described here and skipped instead of
            raising (``--lenient``).
        limits: Limits (default :meth:`InputLimits.from_env`).

    Raises:
        InputError: A line is not valid, or the file is empty; the message names the file,
            the 1-based line and, where there is one, the field.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    limits = resolve_limits(limits)
    seen = False
    for number, raw in iter_lines(path, max_line_bytes=limits.max_line_bytes):
        if raw is not None and not raw.strip():
            continue
        try:
            if raw is None:
                raise InputError(
                    f"line is over the limit of {limits.max_line_bytes:,} bytes "
                    f"(raise it with ${MAX_LINE_BYTES_ENV})",
                    path=path,
                    line=number,
                )
            text = decode_utf8(raw, path=path, line=number)
            if number == 1 and not text.strip():  # only a byte-order mark
                continue
            value = decode_json(text, path=path, line=number, limits=limits)
            if not isinstance(value, dict):
                raise InputError(
                    f"expected a JSON object per line, got {_json_type(value)}",
                    path=path,
                    line=number,
                )
        except InputError as error:
            if skipped is None:
                raise
            skipped.append(str(error))
            continue
        seen = True
        yield number, value
    if not seen and not allow_empty:
        raise InputError("file holds no records", path=path)


def read_csv(
    path: str | Path,
    required: Sequence[str] = (),
    *,
    limits: InputLimits | None = None,
) -> list[tuple[int, dict[str, str]]]:
    """``(line, row)`` for each record of a UTF-8 CSV file with a header row: the one CSV
    reader of the label and pair files (``crystal review import``, ``crystal validate``).

    A leading byte-order mark is dropped; a row with fewer cells than the header lacks the
    missing columns (a caller reads them as absent); ``line`` is the 1-based line where the
    record ends (a quoted cell may span lines).

    Args:
        path: The file.
        required: Columns the header must hold.
        limits: Limits (default :meth:`InputLimits.from_env`); the file must be within
            ``max_file_bytes``.

    Raises:
        InputError: A missing file, one over the size limit or not UTF-8, a header without a
            required column or with a column named twice, a row with more cells than the
            header, malformed CSV, or no record at all (names the file and the line).

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "labels.csv").write_text("pair_id,label\\np1,match\\np2\\n")
        >>> read_csv(folder / "labels.csv", ["pair_id"])
        [(2, {'pair_id': 'p1', 'label': 'match'}), (3, {'pair_id': 'p2'})]
    """
    path = Path(path)
    limits = resolve_limits(limits)
    text = read_text_file(
        path, max_bytes=limits.max_file_bytes, what="file", limit_env=MAX_FILE_BYTES_ENV
    )
    # strict: an unclosed quote is an error, not a cell that swallows the rest of the file
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = list(reader.fieldnames or [])
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", path=path, line=1) from None
    missing = [name for name in required if name not in header]
    if missing:
        raise InputError(
            f"CSV header lacks {', '.join(missing)} (it has {', '.join(header) or 'nothing'})",
            path=path,
            line=1,
        )
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputError(
            f"CSV header names {', '.join(repeated)} more than once", path=path, line=1
        )
    rows: list[tuple[int, dict[str, str]]] = []
    ended = 1  # the line the last record (the header first) ended on
    try:
        for row in reader:
            if None in row:
                raise InputError("more cells than header columns", path=path, line=reader.line_num)
            rows.append((reader.line_num, {k: v for k, v in row.items() if v is not None}))
            ended = reader.line_num
    except csv.Error as exc:  # named at the line its record starts: where a quote was opened
        raise InputError(f"malformed CSV ({exc})", path=path, line=ended + 1) from None
    if not rows:
        raise InputError("file holds no records", path=path)
    return rows


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


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


def sync_folder(folder: str | Path) -> None:
    """Make the renames and new files in ``folder`` durable: ``fsync`` the folder itself
    (POSIX; a no-op where folders cannot be opened or synced, as on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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


class AppendLog:
    """An append-only file of whole lines, for journals that must survive ``kill -9``.

    Each line goes out through one ``O_APPEND`` descriptor in as few ``write`` calls as the
    kernel allows (one, for lines of ordinary size), so a crash leaves at most one torn
    last line (which the readers repair, see
    :meth:`crystalbench.inference.records.ResultsFile.repair`). ``fsync`` runs at most
    every ``fsync_interval`` seconds (``0``: after every line) and at :meth:`close`.

    Examples:
        >>> import tempfile
        >>> log = AppendLog(Path(tempfile.mkdtemp()) / "a.jsonl", fsync_interval=0)
        >>> log.write_line('{"id": 1}'); log.write_line('{"id": 2}'); log.close()
        >>> log.path.read_text().splitlines()
        ['{"id": 1}', '{"id": 2}']
    """

    def __init__(self, path: str | Path, *, fsync_interval: float = 1.0) -> None:
        self.path = Path(path)
        self.fsync_interval = fsync_interval
        self._fd: int | None = None
        self._last_sync = 0.0
        self._dirty = False

    @property
    def is_open(self) -> bool:
        """Whether the append descriptor is open."""
        return self._fd is not None

    def open(self) -> None:
        """Open for appending (creating the file and its folder); a no-op when open."""
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._last_sync = time.monotonic()

    def write_line(self, text: str) -> None:
        """Append ``text`` and a newline as one line (opening the file first if needed)."""
        self.open()
        assert self._fd is not None
        view = memoryview((text + "\n").encode("utf-8"))
        while view:
            view = view[os.write(self._fd, view) :]
        self._dirty = True
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_interval:
            os.fsync(self._fd)
            self._last_sync = now
            self._dirty = False

    def close(self) -> None:
        """``fsync`` what is not synced yet and close the descriptor."""
        if self._fd is not None:
            if self._dirty:
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
            self._dirty = False


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
