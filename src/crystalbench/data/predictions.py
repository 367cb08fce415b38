"""Reading a model's predictions in every form we accept.

- JSONL, one record per line: ``{"id", "reasoning_steps", "answer"}`` or ``{"id", "response"}``
  (raw text, parsed later). ``crystal infer`` output files score directly: their raw
  ``response`` is re-parsed (their ``steps``/``answer`` are derived from it); ``steps`` counts
  as ``reasoning_steps`` only when there is no ``response``. Other keys are ignored.
- A folder of ``<id>.json`` files (the authors' inference script writes these), each
  ``{"reasoning_steps": [...], "answer": "..."}``.
- One JSON object keyed by id: ``{"<id>": {"reasoning_steps": [...], "answer": "..."}}``
  (the ``crystal-metrics`` format); a value may also be the raw response string. A ``.json``
  file may also hold a list of records, or JSON lines (read as JSONL).

Every file is read through :mod:`crystalbench._internal.io`, which refuses bytes that are not UTF-8,
lone surrogates, ``NaN``/``Infinity``/overflowing numbers, repeated keys, too-deep nesting
and records over the size limits (:class:`~crystalbench._internal.io.InputLimits`). Malformed input
raises :class:`~crystalbench.errors.InputError` naming the file, the line (or key) and the
field, unless ``lenient`` is set, in which case the problem is recorded in
:attr:`PredictionSet.problems` and the record is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crystalbench._internal.io import (
    InputLimits,
    MalformedJsonError,
    check_record,
    decode_json,
    read_json_file,
    read_jsonl,
    read_text_file,
    resolve_limits,
)
from crystalbench.config.settings import MAX_FILE_BYTES_ENV, MAX_RESPONSE_CHARS_ENV
from crystalbench.errors import InputError
from crystalbench.types import Prediction

_STEP_KEYS = ("reasoning_steps", "steps")


@dataclass
class PredictionSet:
    """Predictions keyed by item id, with where each came from and what was skipped."""

    source: str
    by_id: dict[str, Prediction]
    where: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    """``id -> (file, line)`` of each record, for error messages."""
    problems: list[str] = field(default_factory=list)
    """Records skipped under ``lenient`` (each message names file, line and field)."""
    model: str | None = None
    """Model name when the records agree on one."""

    def __len__(self) -> int:
        return len(self.by_id)

    def __iter__(self) -> Iterator[Prediction]:
        return iter(self.by_id.values())


class _Where:
    """Where a record is: file, line (JSONL, list entry) and key (JSON keyed by id)."""

    __slots__ = ("key", "line", "path")

    def __init__(self, path: Path, line: int | None = None, key: str | None = None) -> None:
        self.path = path
        self.line = line
        self.key = key

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(message, path=self.path, line=self.line, key=self.key, field=field)


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _record_to_prediction(
    record: Any, item_id: str | None, where: _Where, limits: InputLimits
) -> Prediction:
    """Validate one record; raises InputError naming file/line (or key)/field."""
    if isinstance(record, str):
        if item_id is None:
            raise where.error("expected an object with an 'id'")
        _check_size(record, "response", where, limits)
        return Prediction(id=item_id, response=record)
    if not isinstance(record, dict):
        if where.key is not None:
            raise where.error(f"expected an object or a response string, got {_json_type(record)}")
        raise where.error(f"expected a JSON object, got {_json_type(record)}")
    raw_id = record.get("id", item_id)
    if raw_id is None:
        raise where.error("missing 'id'", "id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise where.error(f"id must be a string or integer, got {_json_type(raw_id)}", "id")
    pid = str(raw_id)
    steps: list[str] | None = None
    raw_response = record.get("response")
    # ``crystal infer`` records carry the raw ``response`` plus ``steps``/``answer`` parsed
    # from it; re-parse the response so scoring always uses the current parser.
    derived_only = raw_response is not None and record.get("reasoning_steps") is None
    for key in _STEP_KEYS:
        if derived_only:
            break
        if key in record and record[key] is not None:
            value = record[key]
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list):
                raise where.error(f"must be a list of strings, got {_json_type(value)}", key)
            bad = [i for i, s in enumerate(value) if not isinstance(s, str)]
            if bad:
                raise where.error(
                    f"element {bad[0]} is {type(value[bad[0]]).__name__}, not a string", key
                )
            _check_size("".join(value), key, where, limits)
            steps = value
            break
    answer = None if derived_only else record.get("answer")
    if answer is not None and not isinstance(answer, str):
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = str(answer)
        else:
            raise where.error(f"must be a string, got {type(answer).__name__}", "answer")
    if answer is not None:
        _check_size(answer, "answer", where, limits)
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        raise where.error(f"must be a string, got {type(response).__name__}", "response")
    if response is not None:
        _check_size(response, "response", where, limits)
    model = record.get("model")
    if response is None and steps is None and answer is None and record.get("error"):
        # An inference error record: nothing to score, treated as missing.
        return Prediction(id=pid, model=model if isinstance(model, str) else None)
    return Prediction(
        id=pid,
        reasoning_steps=steps,
        answer=answer,
        response=response,
        model=model if isinstance(model, str) else None,
    )


def _check_size(text: str, field: str, where: _Where, limits: InputLimits) -> None:
    if len(text) > limits.max_response_chars:
        raise where.error(
            f"{len(text):,} characters, over the limit of {limits.max_response_chars:,} "
            f"(raise it with ${MAX_RESPONSE_CHARS_ENV})",
            field,
        )


def _missing_hint(path: Path) -> str:
    """What a mistyped predictions path may have meant: the closest names in its folder,
    else the bundled sample's files (``crystal data sample`` writes them).

    Examples:
        >>> hint = _missing_hint(Path("no-such-folder/terse-precis.jsonl"))
        >>> hint.startswith("; did you mean the sample's terse-precise.jsonl?")
        True
        >>> "`crystal data sample -o no-such-folder`" in hint
        True
    """
    from crystalbench._internal.paths import close_names
    from crystalbench.data.sample_copy import sample_prediction_files

    close = close_names(path)
    if close:
        return f"; did you mean {', '.join(repr(str(name)) for name in close)}?"
    folder = path.parent.as_posix() if str(path.parent) not in ("", ".") else "runs"
    write = f"`crystal data sample -o {folder}` writes the sample's prediction sets there"
    styles = close_names(Path(path.name), sample_prediction_files())
    if styles:
        return f"; did you mean the sample's {styles[0].name}? {write}"
    return f" (to try the bundled sample: {write})"


def load_predictions(
    path: str | Path, *, lenient: bool = False, limits: InputLimits | None = None
) -> PredictionSet:
    """Read predictions from a JSONL file, a JSON object file or a folder of ``<id>.json``.

    Args:
        path: Where the predictions are.
        lenient: Skip bad records (recorded in ``problems``) instead of raising. A file
            that cannot be read as a whole (a ``.json`` document that does not parse) still
            raises.
        limits: Size and nesting limits (default :meth:`InputLimits.from_env`: the
            ``CRYSTALBENCH_MAX_*`` environment variables, else :mod:`crystalbench.defaults`).

    Raises:
        InputError: Missing file, empty file, malformed JSON, bytes that are not UTF-8,
            refused values (NaN, repeated keys...), records over the limits, wrong types or
            duplicate ids; the message names the file, the line or key, and the field.

    Examples:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
        >>> _ = p.write_text('{"id": 1, "reasoning_steps": ["a"], "answer": "B"}\\n')
        >>> load_predictions(p).by_id["1"].answer
        'B'
    """
    path = Path(path)
    limits = resolve_limits(limits)
    out = PredictionSet(source=str(path), by_id={})
    if not path.exists():
        raise InputError("predictions not found" + _missing_hint(path), path=path)
    skipped = out.problems if lenient else None

    def add(record: Any, item_id: str | None, where: _Where, *, check: bool = False) -> None:
        try:
            if check:
                check_record(record, path=where.path, line=where.line, key=where.key, limits=limits)
            pred = _record_to_prediction(record, item_id, where, limits)
            if pred.id in out.by_id:
                first_path, first_line = out.where[pred.id]
                first = f"{first_path}:{first_line}" if first_line is not None else first_path
                raise where.error(f"duplicate id {pred.id!r} (first at {first})", "id")
        except InputError as exc:
            if not lenient:
                raise
            out.problems.append(str(exc))
            return
        out.by_id[pred.id] = pred
        out.where[pred.id] = (str(where.path), where.line)

    def add_jsonl(file: Path) -> None:
        for line, record in read_jsonl(file, skipped=skipped, limits=limits):
            add(record, None, _Where(file, line))

    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError("folder holds no <id>.json files", path=path)
        for file in files:
            try:
                record = read_json_file(file, limits=limits, whole=False)
            except InputError as error:
                if not lenient:
                    raise
                out.problems.append(str(error))
                continue
            add(record, file.stem, _Where(file))
        if not out.by_id:
            raise InputError("no valid records", path=path)
    elif path.suffix == ".jsonl":
        add_jsonl(path)
        if not out.by_id:
            raise InputError("no valid records", path=path)
    else:
        text = read_text_file(path, max_bytes=limits.max_file_bytes, limit_env=MAX_FILE_BYTES_ENV)
        if not text.strip():
            raise InputError("file holds no records", path=path)
        try:
            data = decode_json(text, path=path, limits=limits, check=False)
        except MalformedJsonError as exc:
            # A .json file holding JSON lines is a common mix-up; read it as JSONL.
            if exc.reason == "Extra data":
                add_jsonl(path)
                if not out.by_id:
                    raise InputError("no valid records", path=path) from None
                return _finish(out)
            raise
        if isinstance(data, dict):
            if not data:
                raise InputError("file holds no records", path=path)
            for key in getattr(data, "repeated", ()):
                # The same id twice at the top level: the first value is kept (under lenient).
                repeated = InputError(
                    "duplicate id: the key appears more than once", path=path, key=key, field="id"
                )
                if not lenient:
                    raise repeated
                out.problems.append(str(repeated))
            for key, record in data.items():
                add(record, str(key), _Where(path, key=str(key)), check=True)
        elif isinstance(data, list):
            if not data:
                raise InputError("file holds no records", path=path)
            for index, record in enumerate(data):
                add(record, None, _Where(path, line=index + 1), check=True)
        else:
            raise InputError(
                f"expected a JSON object keyed by id or a list of records, got {_json_type(data)}",
                path=path,
            )
        if not out.by_id:
            raise InputError("no valid records", path=path)
    return _finish(out)


def _finish(out: PredictionSet) -> PredictionSet:
    models = {p.model for p in out.by_id.values() if p.model}
    if len(models) == 1:
        out.model = models.pop()
    return out
