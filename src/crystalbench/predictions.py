"""Reading a model's predictions in every form we accept.

- JSONL, one record per line: ``{"id", "reasoning_steps", "answer"}`` or ``{"id", "response"}``
  (raw text, parsed later). ``crystal infer`` output files score directly: their raw
  ``response`` is re-parsed (their ``steps``/``answer`` are derived from it); ``steps`` counts
  as ``reasoning_steps`` only when there is no ``response``. Other keys are ignored.
- A folder of ``<id>.json`` files (the authors' inference script writes these), each
  ``{"reasoning_steps": [...], "answer": "..."}``.
- One JSON object keyed by id: ``{"<id>": {"reasoning_steps": [...], "answer": "..."}}``
  (the ``crystal-metrics`` format); a value may also be the raw response string.

Malformed input raises :class:`~crystalbench.errors.InputError` naming the file, the line
(or key) and the field, unless ``lenient`` is set, in which case the problem is recorded
in :attr:`PredictionSet.problems` and the record is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crystalbench.errors import InputError
from crystalbench.io import read_jsonl
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


def _record_to_prediction(
    record: Any, item_id: str | None, path: Path, line: int | None
) -> Prediction:
    """Validate one record; raises InputError naming file/line/field."""
    if isinstance(record, str):
        if item_id is None:
            raise InputError("expected an object with an 'id'", path=path, line=line)
        return Prediction(id=item_id, response=record)
    if not isinstance(record, dict):
        raise InputError(
            f"expected a JSON object, got {type(record).__name__}", path=path, line=line
        )
    raw_id = record.get("id", item_id)
    if raw_id is None:
        raise InputError("missing 'id'", path=path, line=line, field="id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise InputError(
            f"id must be a string or integer, got {type(raw_id).__name__}",
            path=path,
            line=line,
            field="id",
        )
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
                raise InputError(
                    f"must be a list of strings, got {type(value).__name__}",
                    path=path,
                    line=line,
                    field=key,
                )
            bad = [i for i, s in enumerate(value) if not isinstance(s, str)]
            if bad:
                raise InputError(
                    f"element {bad[0]} is {type(value[bad[0]]).__name__}, not a string",
                    path=path,
                    line=line,
                    field=key,
                )
            steps = value
            break
    answer = None if derived_only else record.get("answer")
    if answer is not None and not isinstance(answer, str):
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = str(answer)
        else:
            raise InputError(
                f"must be a string, got {type(answer).__name__}",
                path=path,
                line=line,
                field="answer",
            )
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        raise InputError(
            f"must be a string, got {type(response).__name__}",
            path=path,
            line=line,
            field="response",
        )
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


def load_predictions(path: str | Path, *, lenient: bool = False) -> PredictionSet:
    """Read predictions from a JSONL file, a JSON object file or a folder of ``<id>.json``.

    Args:
        path: Where the predictions are.
        lenient: Skip bad records (recorded in ``problems``) instead of raising.

    Raises:
        InputError: Missing file, empty file, malformed JSON, wrong types or duplicate ids.

    Examples:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
        >>> _ = p.write_text('{"id": 1, "reasoning_steps": ["a"], "answer": "B"}\\n')
        >>> load_predictions(p).by_id["1"].answer
        'B'
    """
    path = Path(path)
    out = PredictionSet(source=str(path), by_id={})
    if not path.exists():
        raise InputError("predictions not found", path=path)

    def add(record: Any, item_id: str | None, where_path: Path, line: int | None) -> None:
        try:
            pred = _record_to_prediction(record, item_id, where_path, line)
            if pred.id in out.by_id:
                first_path, first_line = out.where[pred.id]
                first = f"{first_path}:{first_line}" if first_line is not None else first_path
                raise InputError(
                    f"duplicate id {pred.id!r} (first at {first})",
                    path=where_path,
                    line=line,
                    field="id",
                )
        except InputError as exc:
            if not lenient:
                raise
            out.problems.append(str(exc))
            return
        out.by_id[pred.id] = pred
        out.where[pred.id] = (str(where_path), line)

    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError("folder holds no <id>.json files", path=path)
        for file in files:
            try:
                record = json.loads(file.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                error = InputError(f"malformed JSON ({exc.msg} at line {exc.lineno})", path=file)
                if not lenient:
                    raise error from None
                out.problems.append(str(error))
                continue
            add(record, file.stem, file, None)
    elif path.suffix == ".jsonl":
        for line, record in read_jsonl(path, skipped=out.problems if lenient else None):
            add(record, None, path, line)
        if not out.by_id:
            raise InputError("no valid records", path=path)
    else:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            raise InputError("file holds no records", path=path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            # A .json file holding JSON lines is a common mix-up; read it as JSONL.
            if exc.msg == "Extra data":
                for line, record in read_jsonl(path):
                    add(record, None, path, line)
                return _finish(out)
            raise InputError(
                f"malformed JSON ({exc.msg} at line {exc.lineno})", path=path
            ) from None
        if isinstance(data, dict):
            if not data:
                raise InputError("file holds no records", path=path)
            for key, record in data.items():
                add(record, str(key), path, None)
        elif isinstance(data, list):
            if not data:
                raise InputError("file holds no records", path=path)
            for index, record in enumerate(data):
                add(record, None, path, index + 1)
        else:
            raise InputError("expected a JSON object keyed by id or a list of records", path=path)
    return _finish(out)


def _finish(out: PredictionSet) -> PredictionSet:
    models = {p.model for p in out.by_id.values() if p.model}
    if len(models) == 1:
        out.model = models.pop()
    return out
