"""Records of the fact guard: why two steps were kept apart, and where they conflict."""

from __future__ import annotations

from typing import Final, Literal, get_args

from crystalbench.types import Record

__all__ = ["VETO_REASONS", "Conflict", "ConflictSpans", "TextSpan", "Veto", "VetoReason"]

VetoReason = Literal["number", "negation", "relation", "option", "colour"]
"""Why a pair was vetoed:

- ``number``: the two steps give different values of one quantity ("40 degrees" / "50
  degrees", "3 apples" / "7 apples");
- ``negation``: one step negates what the other states ("open" / "not open", "yes" / "no");
- ``relation``: opposed comparatives, positions, changes or states said of the same things
  ("taller" / "shorter", "left of" / "right of", "increases" / "decreases", "solid" /
  "liquid"), the same relation with its arguments swapped, or one superlative said of two
  different things ("the left console is the smallest" / "the middle console is the
  smallest");
- ``option``: the steps name different options of the item (letters or option texts);
- ``colour``: the steps give one thing different colours.
"""

VETO_REASONS: Final[tuple[str, ...]] = get_args(VetoReason)
"""The veto reasons, read off :data:`VetoReason`."""


class TextSpan(Record):
    """A stretch of a step's text.

    Examples:
        >>> TextSpan(start=13, end=23, text="40 degrees").model_dump()
        {'start': 13, 'end': 23, 'text': '40 degrees'}
    """

    start: int
    """Character offset of the first character in the step as written."""
    end: int
    """Character offset just past the last character."""
    text: str
    """``step[start:end]``."""


class ConflictSpans(Record):
    """The two stretches of text that conflict, one in each step."""

    pred: TextSpan
    """In the predicted step."""
    ref: TextSpan
    """In the reference step."""


class Conflict(Record):
    """Two steps state incompatible facts: why, and where (what a guard's check returns)."""

    reason: VetoReason
    """Which rule found the conflict (see :data:`VetoReason`)."""
    spans: ConflictSpans
    """The conflicting text in each step."""


class Veto(Record):
    """A step pair above the threshold that the guard kept from matching.

    One line of the ``vetoed`` list of an item record (``examples.jsonl``).

    Examples:
        >>> span = TextSpan(start=0, end=2, text="40")
        >>> veto = Veto(pred=0, ref=3, cosine=0.89, reason="number",
        ...             spans=ConflictSpans(pred=span, ref=span))
        >>> sorted(veto.model_dump())
        ['cosine', 'pred', 'reason', 'ref', 'spans']
    """

    pred: int
    """0-based index of the predicted step."""
    ref: int
    """0-based index of the reference step."""
    cosine: float
    """Cosine similarity of the pair (at or above the threshold)."""
    reason: VetoReason
    """Which rule vetoed the pair (see :data:`VetoReason`)."""
    spans: ConflictSpans
    """The conflicting text in each step."""

    @classmethod
    def from_conflict(cls, conflict: Conflict, *, pred: int, ref: int, cosine: float) -> Veto:
        """The veto of pair ``(pred, ref)`` for a conflict a guard found."""
        return cls(pred=pred, ref=ref, cosine=cosine, reason=conflict.reason, spans=conflict.spans)
