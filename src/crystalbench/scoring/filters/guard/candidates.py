"""The fact guard in the scoring engine: a candidate filter (``--guard facts|facts-strict``).

:class:`GuardFilter` is a :class:`~crystalbench.scoring.CandidateFilter`: per item and
reference chain it removes the pairs whose steps state incompatible facts, so greedy
one-to-one matching goes on to the next best pair and everything downstream (P, R, F1, LIS,
Ordered F1, the reward) follows.

It reads only the pairs the greedy walk reaches: it walks the candidates as matching does
(:func:`crystalbench.scoring.matching.greedy_pairs` with a ``veto``), and asks the guard about a
pair
only when both of its steps are still unmatched, the moment the pair would be accepted. The
matches are exactly those of matching over the matrix with *every* conflicting pair removed
(a pair reached later, one of whose steps is taken, is skipped either way), at the cost of a
few checks per item instead of one per pair above tau. The pairs it vetoes are the ones
recorded (``vetoed`` in the item's record): those that would have matched but for the guard.

Two scopes:

- ``facts`` (the issue's rule): a conflicting pair is no candidate, and a predicted step that
  copies a reference step with one slot changed to a wrong fact (a value, a name, a relation
  word: :mod:`crystalbench.scoring.filters.guard.slots`) is no candidate with any reference
  step of the chain (issue 30: otherwise it goes on to match a neighbouring step, "The bar
  for Chile shows 11,450." vetoed against "... 12,450." but matched to "The bar for Peru
  shows 8,120.");
- ``facts-strict``: besides, a predicted step that contradicts its *closest* reference step
  (the highest cosine among its candidates: the step it restates) matches nothing, copy or
  not ("There are 4 shaded squares in the first row." against "The first row has 2 shaded
  squares.").

Decisions are remembered by :class:`~crystalbench.scoring.filters.guard.memo.DecisionMemo` (in the
embedding cache's file when the run has one), so a re-score reads no step again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from crystalbench.defaults import GUARDS, GuardKind
from crystalbench.errors import UnknownNameError
from crystalbench.scoring.filters.guard.guard import FactGuard
from crystalbench.scoring.filters.guard.memo import (
    DecisionMemo,
    pack_conflict,
    pair_key,
    unpack_conflict,
)
from crystalbench.scoring.filters.guard.records import Conflict
from crystalbench.scoring.filters.guard.slots import copied_with_a_wrong_fact
from crystalbench.types import Veto

__all__ = ["GuardFilter"]

_MAX_GUARDS = 4096
"""Per-options guards kept (an item's options build one; items share them by options)."""


class GuardFilter:
    """The fact guard as a candidate filter (see the module docstring).

    Args:
        kind: ``facts`` or ``facts-strict``.
        store: Where decisions are remembered between runs (the run's
            :class:`~crystalbench.encoders.EmbeddingStore`); ``None``: in memory only.

    Raises:
        UnknownNameError: ``kind`` is not a guard (``none`` builds no filter).

    Examples:
        >>> from crystalbench.scoring.items import ChainContext
        >>> from crystalbench.scoring.matching import MatchRules
        >>> S = np.array([[0.89, 0.6], [0.2, 0.85]], dtype=np.float32)
        >>> pred = ["The angle ABC is 50 degrees.", "The area equals 16."]
        >>> ref = ["The angle ABC is 40 degrees.", "The area is 16 square units."]
        >>> context = ChainContext(None, MatchRules())
        >>> out = GuardFilter("facts").candidates(S, pred, ref, context)
        >>> np.isnan(out).tolist(), [(v.pred, v.ref, v.reason, v.scope) for v in context.vetoes]
        ([[True, True], [False, False]], [(0, 0, 'number', 'step')])

        The first step copies the first reference step with its value changed: it matches
        nothing (a ``step`` veto), under ``facts`` as under ``facts-strict``.
    """

    name = "guard"
    """Key of the guard's seconds in the run's timings."""

    def __init__(self, kind: GuardKind | str, *, store: Any = None) -> None:
        if kind not in GUARDS or kind == "none":
            raise UnknownNameError("guard", str(kind), tuple(g for g in GUARDS if g != "none"))
        self.kind = str(kind)
        self.strict = kind == "facts-strict"
        self.memo = DecisionMemo(store)
        self._guards: dict[tuple[str, ...], _ItemOptions] = {}
        self.pairs_checked = 0
        """Pairs the guard was asked about (from the memo or read)."""
        self.pairs_read = 0
        """Pairs whose steps were read (not answered from the memo)."""
        self.seconds = 0.0
        """Seconds spent in :meth:`prepare` and :meth:`finish` (the checks themselves are
        timed by the item scorer)."""

    # ------------------------------------------------------------------ the protocol
    def prepare(self, batch: Sequence[Any]) -> None:
        """Read the remembered decisions (once per store file and process)."""
        began = time.perf_counter()
        self.memo.load()
        self.seconds += time.perf_counter() - began

    def candidates(
        self,
        similarity: np.ndarray,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        context: Any,
    ) -> np.ndarray:
        """``similarity`` with the vetoed pairs (and, ``facts-strict``, the blocked steps)
        set to NaN; the vetoes go to ``context`` (a
        :class:`~crystalbench.scoring.ChainContext`: the item's options, the match rules),
        and so do the matches of the walk (:attr:`~crystalbench.scoring.ChainContext.matches`:
        the scorer need not walk the returned matrix again)."""
        from crystalbench.scoring.matching import greedy_pairs

        vetoes: list[Veto] = []
        if not len(pred_steps) or not len(ref_steps):
            context.add_vetoes(vetoes)
            return similarity
        item = self._item_options(context.options)
        sim = np.asarray(similarity, dtype=np.float32)
        rules = context.rules
        decide = self._decide
        strict = self.strict
        # facts-strict: per predicted step, the closest reference step it was found
        # compatible with, or -1 when it contradicts it (the step is blocked).
        checked: dict[int, int] = {}
        closest: list[np.ndarray] = []  # every row's closest reference step, read when needed
        # both scopes: a copy of a reference step with a slot changed to a wrong fact
        # matches nothing (recorded as a step veto when the walk first reaches its row)
        copies = copied_with_a_wrong_fact(
            pred_steps, ref_steps, lambda pred_step, ref_step: decide(item, pred_step, ref_step)
        )

        def veto(i: int, j: int, value: float) -> bool:
            copied = copies.get(i)
            if copied is not None:
                column, conflict = copied
                if conflict is not None:  # recorded once, then only blocked
                    copies[i] = (column, None)
                    vetoes.append(
                        Veto.from_conflict(
                            conflict,
                            pred=i,
                            ref=column,
                            cosine=float(sim[i, column]),
                            scope="step",
                        )
                    )
                return True
            if strict:
                state = checked.get(i)
                if state is None:
                    state = checked[i] = self._closest_check(
                        item, pred_steps, ref_steps, sim, i, closest, vetoes, rules
                    )
                if state < 0:
                    return True
                if state == j:
                    return False  # the pair just found compatible
            pred_step, ref_step = pred_steps[i], ref_steps[j]
            if pred_step == ref_step:
                return False  # a step cannot contradict itself
            found = decide(item, pred_step, ref_step)
            if found is None:
                return False
            vetoes.append(Veto.from_conflict(found, pred=i, ref=j, cosine=value))
            return True

        matches = greedy_pairs(sim, rules, veto=veto)
        context.add_vetoes(vetoes)
        context.matches = matches
        if not vetoes:
            return similarity
        out = np.array(sim, dtype=np.float32, copy=True)
        for entry in vetoes:
            if entry.scope == "step":
                out[entry.pred, :] = np.nan
            else:
                out[entry.pred, entry.ref] = np.nan
        return out

    def _closest_check(
        self,
        item: _ItemOptions,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        sim: np.ndarray,
        row: int,
        closest: list[np.ndarray],
        vetoes: list[Veto],
        rules: Any,
    ) -> int:
        """``facts-strict``: predicted step ``row`` against its closest reference step. The
        column when they are compatible; -1 when they conflict (the step is blocked, and
        recorded as a ``step`` veto)."""
        if not closest:
            closest.append(_closest_columns(sim, rules))
        column = int(closest[0][row])
        pred_step, ref_step = pred_steps[row], ref_steps[column]
        if pred_step == ref_step:
            return column
        found = self._decide(item, pred_step, ref_step)
        if found is None:
            return column
        vetoes.append(
            Veto.from_conflict(
                found, pred=row, ref=column, cosine=float(sim[row, column]), scope="step"
            )
        )
        return -1

    def finish(self) -> None:
        """Write the decisions made to the store."""
        began = time.perf_counter()
        self.memo.flush()
        self.seconds += time.perf_counter() - began

    def record(self) -> dict[str, Any]:
        """``{"guard_rules": <the rule version>}`` for the run's config record (which guard
        ran is the config's own ``guard`` field)."""
        return {"guard_rules": self.memo.namespace}

    # ------------------------------------------------------------------ helpers
    def _item_options(self, options: Sequence[str]) -> _ItemOptions:
        key = tuple(str(option) for option in options)
        found = self._guards.get(key)
        if found is None:
            if len(self._guards) >= _MAX_GUARDS:
                self._guards.clear()
            found = self._guards[key] = _ItemOptions(key)
        return found

    def _decide(self, item: _ItemOptions, pred_step: str, ref_step: str) -> Conflict | None:
        """The guard's verdict on one pair: remembered (a conflict with its reason and
        spans), or read (and remembered)."""
        self.pairs_checked += 1
        key = pair_key(item.key, pred_step, ref_step)
        known = self.memo.get(key)
        if known == 0.0:
            return None  # the common case: one digest, one lookup
        if known is not None and known > 0:
            reason, spans = unpack_conflict(known, pred_step, ref_step)
            return Conflict(reason=reason, spans=spans)
        found = item.guard.check(pred_step, ref_step)  # unknown, or spans that did not pack
        if known is None:
            self.pairs_read += 1
            self.memo.put(key, 0.0 if found is None else pack_conflict(found.reason, found.spans))
        return found


class _ItemOptions:
    """An item's options: their memo key, and the guard that reads them (built when a pair
    of the item is first read, not when every decision comes from the memo)."""

    __slots__ = ("_guard", "key", "options")

    def __init__(self, options: tuple[str, ...]) -> None:
        self.options = options
        self.key = "\x1f".join(options)
        self._guard: FactGuard | None = None

    @property
    def guard(self) -> FactGuard:
        if self._guard is None:
            self._guard = FactGuard(self.options)
        return self._guard


def _closest_columns(sim: np.ndarray, rules: Any) -> np.ndarray:
    """Each predicted step's closest reference step: its candidate with the highest cosine
    (ties as the walk orders them: the lower index, or the higher one under crystal-metrics
    rules). Read only for rows with a candidate (others give an arbitrary column).

    Examples:
        >>> from crystalbench.scoring.matching import MatchRules
        >>> S = np.array([[0.5, 0.9, 0.9], [0.2, np.nan, 0.4]], dtype=np.float32)
        >>> _closest_columns(S, MatchRules()).tolist()
        [1, 2]
        >>> _closest_columns(S, MatchRules(ties_high_first=True)).tolist()
        [2, 2]
    """
    tau = np.float32(rules.tau)
    with np.errstate(invalid="ignore"):
        passing = (sim > tau) if rules.strict else (sim >= tau)  # NaN never passes
    values = np.where(passing, sim, -np.inf)
    if rules.ties_high_first:
        return values.shape[1] - 1 - values[:, ::-1].argmax(axis=1)
    return values.argmax(axis=1)
