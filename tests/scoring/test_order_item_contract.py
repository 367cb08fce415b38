"""The ``reference_precedence`` field contract of ``BenchmarkItem``: normalised when valid,
refused with the file, line and field through the benchmark loader's own conversion of
validation errors when not."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from crystalbench.data.loading import _validation_error
from crystalbench.errors import InputError
from crystalbench.types import BenchmarkItem

ITEM = {"id": "1", "source": "plotqa", "question": "?", "answer": "15"}


def load(row: dict[str, Any]) -> BenchmarkItem:
    """What the loader does with one JSONL row (line 7 of items.jsonl)."""
    try:
        return BenchmarkItem.model_validate({**ITEM, **row})
    except ValidationError as exc:
        raise _validation_error(exc, "items.jsonl", 7) from None


def test_a_valid_precedence_is_normalised():
    item = load({"reference_steps": ["a", "b", "c"], "reference_precedence": [[1, 2], [0, 2]]})
    assert item.reference_precedence == [(0, 2), (1, 2)]
    assert load({"reference_steps": ["a"]}).reference_precedence is None
    assert load({"reference_steps": ["a"], "reference_precedence": []}).reference_precedence == []


@pytest.mark.parametrize(
    ("precedence", "message"),
    [
        (
            [[0, 3]],
            "items.jsonl:7: field reference_precedence: Value error, pair 0 [0, 3]: step 3 is "
            "outside the chain (steps 0..2)",
        ),
        (
            [[0, 1], [1, 2], [2, 0]],
            "items.jsonl:7: field reference_precedence: Value error, the pairs form a cycle "
            "0 -> 1 -> 2 -> 0: no order of the steps satisfies them",
        ),
        ([[1, 1]], "field reference_precedence: Value error, pair 0 [1, 1]: a step cannot"),
        ([[2, 0]], "field reference_precedence: Value error, pair 0 [2, 0]: step 2 must come"),
        ([[True, 1]], "items.jsonl:7: field reference_precedence.0.0: Input should be a valid"),
        ([["0", 1]], "field reference_precedence.0.0: Input should be a valid integer"),
        ([[0, 1, 2]], "field reference_precedence.0: Tuple should have at most 2 items"),
        ("0,1", "field reference_precedence: Input should be a valid list"),
    ],
)
def test_bad_precedences_name_file_line_and_field(precedence, message):
    with pytest.raises(InputError) as caught:
        load({"reference_steps": ["a", "b", "c"], "reference_precedence": precedence})
    assert message in str(caught.value)


def test_bad_steps_are_reported_before_the_precedence():
    with pytest.raises(InputError, match=r"field reference_steps\.1"):
        load({"reference_steps": ["a", 3], "reference_precedence": [[0, 5]]})
