"""The fact guard: the door the scoring engine, rewards and validation go through.

Build one :class:`FactGuard` per item (it holds the item's options), then either ask about
one pair (:meth:`FactGuard.check`) or about every pair of a similarity matrix at or above the
threshold (:meth:`FactGuard.veto_mask`). Facts are read once per step text
(:func:`~crystalbench.scoring.filters.guard.facts.step_facts` is cached), so a step met by many
others costs
its reading once.

In greedy matching vetoed pairs are not candidates, so greedy one-to-one matching goes on to
the next best pair. As a mask over every pair at or above tau::

    guard = build_guard(config.guard, item.options)
    if guard is not None:
        mask, vetoes = guard.veto_mask(pred_steps, ref_steps, similarity, tau)
        similarity = without_vetoed(similarity, mask)
    pairs = greedy_pairs(similarity, rules)

The scoring engine gets the same matches while reading only the pairs the greedy walk
reaches (:class:`crystalbench.scoring.filters.guard.candidates.GuardFilter`,
``ScoreConfig(guard=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crystalbench.defaults import GUARDS, GuardKind
from crystalbench.errors import UnknownNameError
from crystalbench.scoring.filters.guard.facts import StepFacts, step_facts
from crystalbench.scoring.filters.guard.options import OptionReader
from crystalbench.scoring.filters.guard.records import Conflict, ConflictSpans, TextSpan, Veto
from crystalbench.scoring.filters.guard.rules import (
    Clash,
    binding_clash,
    colour_clash,
    computation_clash,
    negation_clash,
    number_clash,
    relation_clash,
)
from crystalbench.scoring.filters.guard.text import OffsetMap

__all__ = [
    "FactGuard",
    "build_guard",
    "veto_copied_steps",
    "veto_whole_steps",
    "without_vetoed",
]

_RULES = (
    number_clash,
    colour_clash,
    relation_clash,
    negation_clash,
    binding_clash,
    computation_clash,
)
"""Order in which the rules are asked (the option rule, when the item has options or a step
names a letter, comes first); the first that finds a clash names the veto's reason (the
binding and computation rules report ``number``: different values)."""


def _may_clash(pred: StepFacts, ref: StepFacts) -> bool:
    """A cheap test that lets most pairs skip the rules: a rule needs facts on both sides
    (or a negation on one)."""
    return bool(
        (pred.quantities and ref.quantities)
        or len(pred.negations) % 2 != len(ref.negations) % 2
        or (pred.answer and ref.answer)
        or (pred.relations and ref.relations)
        or (pred.colours and ref.colours)
    )


def _span(facts: StepFacts, start: int, end: int) -> TextSpan:
    first, last = OffsetMap(facts.text, facts.prepared).span(start, end)
    return TextSpan(start=first, end=last, text=facts.text[first:last])


class FactGuard:
    """Keeps step pairs that state incompatible facts from matching (``--guard facts``).

    Args:
        options: The item's answer options, if it has any (option texts are then compared
            too; option letters are compared in any case).

    Examples:
        >>> guard = FactGuard()
        >>> conflict = guard.check("The angle ABC is 50 degrees.", "The angle ABC is 40 degrees.")
        >>> conflict.reason, conflict.spans.pred.text, conflict.spans.ref.text
        ('number', '50 degrees', '40 degrees')
        >>> guard.check("The area equals 16.", "The area is 16 square units.") is None
        True
        >>> guard.check("B is shorter than A.", "A is taller than B.") is None
        True
        >>> FactGuard(options=["fox", "grass", "frog"]).check(
        ...     "Therefore the producer is the fox.", "Therefore the producer is the grass."
        ... ).reason
        'option'
    """

    kind: GuardKind = "facts"

    def __init__(self, options: Sequence[str] = ()) -> None:
        self.options = tuple(str(option) for option in options)
        self._reader = OptionReader(self.options)

    def clash(self, pred: StepFacts, ref: StepFacts) -> Clash | None:
        """The first rule's clash between two read steps (prepared-text offsets), or None."""
        if not (pred.asserts and ref.asserts):
            return None  # a restated question states no fact
        found = self._reader.clash(pred, ref)
        if found is not None:
            return found
        if not _may_clash(pred, ref):
            return None
        for rule in _RULES:
            found = rule(pred, ref)
            if found is not None:
                return found
        return None

    def check(self, pred_step: str, ref_step: str) -> Conflict | None:
        """Do the two steps state incompatible facts? The conflict, or None.

        Args:
            pred_step: A predicted step.
            ref_step: A reference step.

        Returns:
            The reason and the two conflicting spans (offsets in the steps as written), or
            None when the guard finds the steps compatible.
        """
        pred, ref = step_facts(pred_step), step_facts(ref_step)
        found = self.clash(pred, ref)
        if found is None:
            return None
        return Conflict(
            reason=found.reason,
            spans=ConflictSpans(pred=_span(pred, *found.pred), ref=_span(ref, *found.ref)),
        )

    def veto_mask(
        self,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        similarity: np.ndarray,
        tau: float,
        *,
        strict: bool = False,
    ) -> tuple[np.ndarray, list[Veto]]:
        """Check every pair at or above ``tau``; the vetoed pairs as a mask and as records.

        Pairs below the threshold are never read (they cannot match anyway), so the cost
        follows the number of candidate pairs.

        Args:
            pred_steps: The ``m`` predicted steps.
            ref_steps: The ``n`` reference steps.
            similarity: ``(m, n)`` cosine similarities.
            tau: The matching threshold (compared at float32 precision, as matching does).
            strict: Candidates are ``S > tau`` (crystal-metrics rules) instead of ``S >= tau``.

        Returns:
            ``(mask, vetoes)``: a boolean ``(m, n)`` array, True where a pair is vetoed, and
            one :class:`~crystalbench.scoring.filters.guard.records.Veto` per vetoed pair, by
            prediction
            then reference index.

        Raises:
            ValueError: The similarity matrix does not have the steps' shape.

        Examples:
            >>> guard = FactGuard()
            >>> S = np.array([[0.89, 0.2], [0.1, 0.85]], dtype=np.float32)
            >>> mask, vetoes = guard.veto_mask(
            ...     ["The angle is 50 degrees.", "The area equals 16."],
            ...     ["The angle is 40 degrees.", "The area is 16 square units."], S, 0.35)
            >>> mask.tolist(), [(v.pred, v.ref, v.reason) for v in vetoes]
            ([[True, False], [False, False]], [(0, 0, 'number')])
        """
        sim = np.asarray(similarity, dtype=np.float32)
        shape = (len(pred_steps), len(ref_steps))
        if sim.shape != shape and sim.size + shape[0] * shape[1] > 0:
            raise ValueError(f"similarity has shape {sim.shape}, the steps {shape}")
        mask = np.zeros(shape, dtype=bool)
        vetoes: list[Veto] = []
        if sim.size == 0:
            return mask, vetoes
        tau32 = np.float32(tau)
        rows, cols = np.nonzero(sim > tau32 if strict else sim >= tau32)
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            conflict = self.check(pred_steps[i], ref_steps[j])
            if conflict is not None:
                mask[i, j] = True
                vetoes.append(Veto.from_conflict(conflict, pred=i, ref=j, cosine=float(sim[i, j])))
        return mask, vetoes


def without_vetoed(similarity: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The similarity matrix with vetoed pairs set below any threshold (``-inf``, float32).

    Examples:
        >>> S = np.array([[0.9, 0.8]], dtype=np.float32)
        >>> without_vetoed(S, np.array([[True, False]])).tolist()
        [[-inf, 0.800000011920929]]
    """
    out = np.array(similarity, dtype=np.float32, copy=True)
    out[np.asarray(mask, dtype=bool)] = -np.inf
    return out


def veto_whole_steps(
    mask: np.ndarray,
    similarity: np.ndarray,
    tau: float,
    *,
    strict: bool = False,
    ties_high_first: bool = False,
) -> np.ndarray:
    """Extend vetoes to whole predicted steps: a predicted step whose closest reference step
    (highest cosine, at or above ``tau``) is vetoed matches nothing.

    Between reference steps tied for closest, the one the greedy walk reaches first counts:
    the lower index, or the higher one with ``ties_high_first`` (crystal-metrics rules), as
    in the engine's lazy version.

    The issue's rule vetoes pairs, so greedy matching goes on to the next best pair; a step
    that copies a reference step with a wrong number then often matches a *neighbouring*
    reference step ("The first row has 4 shaded squares." vetoed against "The first row has 2
    shaded squares." but matched to "The second row has 1 shaded square."), which is not a
    contradiction and so not vetoed. This stricter scope is ``--guard facts-strict``
    (measured in ``benchmarks/RESULTS.md``; the engine applies it lazily, as the greedy walk
    reaches each step: :class:`crystalbench.scoring.filters.guard.candidates.GuardFilter`).

    Examples:
        >>> S = np.array([[0.9, 0.8], [0.2, 0.7]], dtype=np.float32)
        >>> veto_whole_steps(np.array([[True, False], [False, False]]), S, 0.35).tolist()
        [[True, True], [False, False]]
        >>> tied = np.array([[0.8, 0.8]], dtype=np.float32)
        >>> first = np.array([[True, False]])
        >>> veto_whole_steps(first, tied, 0.35).tolist()
        [[True, True]]
        >>> veto_whole_steps(first, tied, 0.35, ties_high_first=True).tolist()
        [[True, False]]
    """
    out = np.array(mask, dtype=bool, copy=True)
    sim = np.asarray(similarity, dtype=np.float32)
    if sim.size == 0:
        return out
    # Reversing the columns makes argmax pick the highest index among ties.
    best = sim.shape[1] - 1 - sim[:, ::-1].argmax(axis=1) if ties_high_first else sim.argmax(axis=1)
    rows = np.arange(sim.shape[0])
    best_value = sim[rows, best]
    tau32 = np.float32(tau)
    passing = best_value > tau32 if strict else best_value >= tau32
    out[passing & out[rows, best]] = True
    return out


def veto_copied_steps(
    mask: np.ndarray, pred_steps: Sequence[str], ref_steps: Sequence[str], guard: FactGuard
) -> np.ndarray:
    """Extend vetoes to the predicted steps that copy a reference step with one slot changed
    to a wrong fact (:mod:`crystalbench.scoring.filters.guard.slots`): such a step matches
    nothing, under ``facts`` as under ``facts-strict``.

    The plain definition of what the engine does as the greedy walk reaches each step
    (:class:`crystalbench.scoring.filters.guard.candidates.GuardFilter`).

    Examples:
        >>> refs = ["The bar for Chile shows a value of 12,450.",
        ...         "The bar for Peru shows a value of 8,120."]
        >>> preds = ["The bar for Chile shows a value of 11,450.", "Peru: 8,120."]
        >>> mask = np.zeros((2, 2), dtype=bool)
        >>> veto_copied_steps(mask, preds, refs, FactGuard()).tolist()
        [[True, True], [False, False]]
    """
    from crystalbench.scoring.filters.guard.slots import copied_with_a_wrong_fact

    out = np.array(mask, dtype=bool, copy=True)
    for row in copied_with_a_wrong_fact(pred_steps, ref_steps, guard.check):
        out[row, :] = True
    return out


def build_guard(kind: GuardKind | str, options: Sequence[str] = ()) -> FactGuard | None:
    """The guard called ``kind`` for an item with ``options``; None for ``none`` (the paper).

    ``facts`` and ``facts-strict`` read pairs with the same rules; they differ in what a
    conflict removes from the candidates, which is the scoring engine's business
    (:class:`crystalbench.scoring.filters.guard.candidates.GuardFilter`).

    Raises:
        UnknownNameError: ``kind`` is not a guard.

    Examples:
        >>> build_guard("none") is None, type(build_guard("facts", ["A", "B"])).__name__
        (True, 'FactGuard')
    """
    if kind == "none":
        return None
    if kind in GUARDS:
        return FactGuard(options)
    raise UnknownNameError("guard", str(kind), GUARDS)
