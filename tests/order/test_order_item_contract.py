"""The ``reference_precedence`` field contract, as ``BenchmarkItem`` will carry it.

``ProposedItem`` below is the field and validator to add to ``types.BenchmarkItem``, verbatim
(``BenchmarkItem`` is not edited in this round). The messages a user sees go through the
benchmark loader's own conversion of validation errors (file, line, field).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from crystalbench.data.loading import _validation_error
from crystalbench.errors import InputError
from crystalbench.precedence import check_precedence


class ProposedItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    reference_steps: list[str]
    reference_precedence: list[tuple[StrictInt, StrictInt]] | None = None
    """Partial order of ``reference_steps``: ``[a, b]`` means step ``a`` must come before
    step ``b`` (0-based; the transitive closure is implied, steps it does not order are
    interchangeable). ``None``: the chain's own order, as the paper. Applies to the primary
    chain only; alternative chains keep their own order."""

    @field_validator("reference_precedence")
    @classmethod
    def _precedence_fits_the_chain(
        cls, value: list[tuple[int, int]] | None, info: ValidationInfo
    ) -> list[tuple[int, int]] | None:
        steps = info.data.get("reference_steps")
        if value is None or steps is None:  # no steps: their own error is reported
            return value
        return check_precedence(value, len(steps))


def load(row: dict[str, Any]) -> ProposedItem:
    """What the loader does with one JSONL row (line 7 of items.jsonl)."""
    try:
        return ProposedItem.model_validate(row)
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
