"""Records of the fact guard: why two steps were kept apart, and where they conflict.

:class:`~crystalbench.types.TextSpan`, :class:`~crystalbench.types.ConflictSpans`,
:class:`~crystalbench.types.Veto` and :data:`~crystalbench.types.VetoReason` live with the
other records of a run (an item record carries its vetoes) and are re-exported here;
:class:`Conflict` is what a guard's check returns.
"""

from __future__ import annotations

from crystalbench.types import (
    VETO_REASONS,
    ConflictSpans,
    Record,
    TextSpan,
    Veto,
    VetoReason,
    VetoScope,
)

__all__ = [
    "VETO_REASONS",
    "Conflict",
    "ConflictSpans",
    "TextSpan",
    "Veto",
    "VetoReason",
    "VetoScope",
]


class Conflict(Record):
    """Two steps state incompatible facts: why, and where (what a guard's check returns)."""

    reason: VetoReason
    """Which rule found the conflict (see :data:`~crystalbench.types.VetoReason`)."""
    spans: ConflictSpans
    """The conflicting text in each step."""
