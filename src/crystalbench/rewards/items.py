"""Trainer data -> completion text and :class:`~crystalbench.types.BenchmarkItem`.

Trainers hand rewards their data in three shapes: TRL passes every dataset column as a
keyword list, verl passes ``ground_truth`` plus an ``extra_info`` dict, EasyR1 passes only a
``ground_truth`` string. This module turns each into the one record the reward core reads,
and defines the ground-truth JSON layout that carries a whole item through a string:

.. code-block:: json

    {"id": "17", "source": "mathvision", "question": "Which bar is tallest?",
     "options": ["2019", "2020"], "answer": "B", "answer_type": "multiple_choice",
     "reference_steps": ["Find the bar for 2019.", "..."]}

Only ``answer`` is required; ``reference_steps`` is needed by the step rewards. A malformed
column or ground truth is our own bad data and raises :class:`~crystalbench.errors.InputError`;
a missing one makes the row unscored.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from crystalbench.errors import InputError
from crystalbench.types import BenchmarkItem

__all__ = [
    "ANSWER_COLUMNS",
    "completion_text",
    "ground_truth_json",
    "item_from_fields",
    "item_from_ground_truth",
    "items_from_columns",
]

ANSWER_COLUMNS = ("answer", "solution")
"""Dataset columns read as the gold answer, first present wins (TRL's own rewards use
``solution``)."""

ITEM_FIELDS = ("id", "source", "question", "options", "answer", "answer_type", "reference_steps")


def completion_text(completion: Any) -> str | None:
    """The text of one completion, plain or conversational; ``None`` when it holds none.

    Conversational completions are message lists (``[{"role": "assistant", "content":
    ...}]``); the last assistant message is the answer (earlier ones may be tool calls).
    Content given as blocks (``[{"type": "text", "text": ...}]``) is joined.

    Examples:
        >>> completion_text("plain")
        'plain'
        >>> completion_text([{"role": "assistant", "content": "hi"}])
        'hi'
        >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "a"},
        ...                                                   {"type": "text", "text": "b"}]}])
        'ab'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence) and completion:
        messages = [m for m in completion if isinstance(m, Mapping)]
        assistant = [m for m in messages if m.get("role", "assistant") == "assistant"]
        if assistant:
            return _content_text(assistant[-1].get("content"))
    return None


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [
            block.get("text")
            for block in content
            if isinstance(block, Mapping) and block.get("type", "text") == "text"
        ]
        texts = [p for p in parts if isinstance(p, str)]
        return "".join(texts) if texts else None
    return None


def _string_list(value: Any, field: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return []
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{where}: {field} is not a JSON list: {exc}", field=field
                ) from None
        else:
            raise InputError(f"{where}: {field} must be a list of strings", field=field)
    if hasattr(value, "tolist"):  # numpy arrays from datasets / pandas
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InputError(
            f"{where}: {field} must be a list of strings, got {type(value).__name__}", field=field
        )
    return list(value)


def _answer_string(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(f"{where}: answer must be a string, got bool", field="answer")
    if isinstance(value, (int, float)):
        return str(value)
    if not isinstance(value, str):
        raise InputError(
            f"{where}: answer must be a string, got {type(value).__name__}", field="answer"
        )
    return value if value.strip() else None


def item_from_fields(fields: Mapping[str, Any], *, where: str = "row") -> BenchmarkItem | None:
    """Build an item from loose fields; ``None`` when no gold answer is given.

    Args:
        fields: ``answer`` (or ``solution``), ``reference_steps``, ``options``,
            ``answer_type``, ``question``, ``id``, ``source``; lists may be JSON strings.
        where: Where the fields came from, for error messages.

    Raises:
        InputError: A field has the wrong type, or the answer type is unknown.

    Examples:
        >>> item_from_fields({"solution": 4, "reference_steps": '["Count the dots."]'})
        ... # doctest: +ELLIPSIS
        BenchmarkItem(id='row', source='unknown', question='', options=[], answer='4', ...)
        >>> item_from_fields({"reference_steps": ["x"]}) is None
        True
    """
    answer = None
    for column in ANSWER_COLUMNS:
        if fields.get(column) is not None:
            answer = _answer_string(fields[column], where)
            break
    if answer is None:
        return None
    identifier = fields.get("id")
    try:
        return BenchmarkItem(
            id=str(identifier) if identifier is not None else where,
            source=str(fields.get("source") or "unknown"),
            question=str(fields.get("question") or ""),
            options=_string_list(fields.get("options"), "options", where),
            answer=answer,
            answer_type=fields.get("answer_type") or None,
            reference_steps=_string_list(fields.get("reference_steps"), "reference_steps", where),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(p) for p in problem["loc"])
        raise InputError(f"{where}: {problem['msg']}", field=field) from None


def items_from_columns(n_rows: int, columns: Mapping[str, Any]) -> list[BenchmarkItem | None]:
    """One item per row from TRL-style keyword columns (each a list with ``n_rows`` values).

    Columns that are not lists of the right length (``trainer_state``, ``log_metric``...) are
    ignored.

    Examples:
        >>> items = items_from_columns(2, {"answer": ["A", None], "trainer_state": object()})
        >>> items[0].answer, items[1]
        ('A', None)
    """
    rows: list[dict[str, Any]] = [{} for _ in range(n_rows)]
    for name in (*ANSWER_COLUMNS, *ITEM_FIELDS):
        values = columns.get(name)
        if isinstance(values, (list, tuple)) and len(values) == n_rows:
            for row, value in zip(rows, values, strict=True):
                row[name] = value
    return [item_from_fields(row, where=f"row {i}") for i, row in enumerate(rows)]


def ground_truth_json(item: BenchmarkItem) -> str:
    """The ground-truth string that carries ``item`` through verl / EasyR1 datasets.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="?", answer="B",
        ...                      options=["a", "b"], reference_steps=["Look."])
        >>> ground_truth_json(item)
        '{"id": "1", "source": "x", "question": "?", "options": ["a", "b"], "answer": "B", \
"answer_type": null, "reference_steps": ["Look."]}'
        >>> item_from_ground_truth(ground_truth_json(item)) == item
        True
    """
    record = item.model_dump(include=set(ITEM_FIELDS))
    return json.dumps({key: record[key] for key in ITEM_FIELDS}, ensure_ascii=False)


@functools.lru_cache(maxsize=16_384)
def _fields_from_text(text: str) -> tuple[tuple[str, Any], ...]:
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and {"answer", "solution"} & set(value):
            return tuple((k, _freeze(v)) for k, v in value.items())
    return (("answer", text),)


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def item_from_ground_truth(
    ground_truth: Any, extra_info: Mapping[str, Any] | None = None
) -> BenchmarkItem | None:
    """Read an item from a ground truth (layout in the module docstring), plus verl's extra_info.

    A ground truth that is not a JSON object with an ``answer`` is the gold answer itself;
    the other fields may then come from ``extra_info`` (verl). Fields present in the ground
    truth win over ``extra_info``.

    Examples:
        >>> item_from_ground_truth("42", {"reference_steps": ["Add."]}).reference_steps
        ['Add.']
        >>> item_from_ground_truth('{"answer": "B", "options": ["x", "y"]}').options
        ['x', 'y']
    """
    fields: dict[str, Any] = {}
    if extra_info:
        fields.update(
            {k: extra_info[k] for k in (*ANSWER_COLUMNS, *ITEM_FIELDS) if k in extra_info}
        )
    if isinstance(ground_truth, Mapping):
        given: dict[str, Any] = dict(ground_truth)
    elif isinstance(ground_truth, str):
        given = dict(_fields_from_text(ground_truth))
    else:
        given = {"answer": ground_truth}
    if {"answer", "solution"} & set(given):
        fields.pop("answer", None)
        fields.pop("solution", None)
    fields.update(given)
    return item_from_fields(fields, where="ground_truth")
