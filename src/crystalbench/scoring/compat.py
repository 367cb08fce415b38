"""crystal-metrics 0.2.0's step-matching rules, as data for :mod:`crystalbench.scoring.matching`.

``crystal-metrics`` (``reasoning.py``, ``MLLMReasoningEvaluator``) differs from the paper in
four places that change step numbers:

- it keeps a pair when ``S > tau`` (strict), the paper when ``S >= tau``;
- it sorts ``(similarity, pred_index, ref_index)`` tuples in reverse, so among equal
  similarities the higher predicted index wins, then the higher reference index (the paper:
  the lower ones);
- it computes the cosines in float32 throughout (the paper mode accumulates the dot products
  in float64, so identical steps get identical cosines);
- it embeds and counts the predicted steps exactly as given: ``""`` and ``"  "`` are steps
  (they count in ``m`` and lower precision; they are never stripped), where the paper drops
  blank steps before embedding and counts them in ``n_blank_dropped``.

The maths in :mod:`crystalbench.scoring.matching` takes a
:class:`~crystalbench.scoring.matching.MatchRules`;
this module says which rules a compat mode means, and which predicted steps it scores.
"""

from __future__ import annotations

from collections.abc import Sequence

from crystalbench.defaults import COMPAT_CRYSTAL_METRICS, COMPAT_MODES, TAU
from crystalbench.errors import UnknownNameError
from crystalbench.scoring.matching import MatchRules


def match_rules(compat: str | None, tau: float = TAU) -> MatchRules:
    """The matching rules of a compat mode (``None`` or ``"none"``: the paper's).

    Raises:
        UnknownNameError: ``compat`` is not one of ``COMPAT_MODES``.

    Examples:
        >>> match_rules("crystal-metrics-0.2").strict, match_rules(None).strict
        (True, False)
        >>> match_rules("none", tau=0.5)
        MatchRules(tau=0.5, strict=False, ties_high_first=False, float32_products=False)
    """
    if compat is None or compat == COMPAT_MODES[0]:
        return MatchRules(tau=tau)
    if compat == COMPAT_CRYSTAL_METRICS:
        return MatchRules(tau=tau, strict=True, ties_high_first=True, float32_products=True)
    raise UnknownNameError("compat mode", str(compat), COMPAT_MODES)


def scores_alternative_chains(compat: str | None) -> bool:
    """False when the mode scores the primary reference chain only (crystal-metrics 0.2
    knows one chain per item); paper mode scores every chain and keeps the best.

    Examples:
        >>> scores_alternative_chains("crystal-metrics-0.2"), scores_alternative_chains("none")
        (False, True)
    """
    return compat != COMPAT_CRYSTAL_METRICS


def reads_precedence(compat: str | None) -> bool:
    """False when the mode scores order against the chain's own order even where the item
    carries a ``reference_precedence`` (crystal-metrics 0.2 knows no partial orders); paper
    mode reads it (``docs/metrics.md``, "Partial-order references").

    Examples:
        >>> reads_precedence("crystal-metrics-0.2"), reads_precedence("none")
        (False, True)
    """
    return compat != COMPAT_CRYSTAL_METRICS


def keeps_blank_steps(compat: str | None) -> bool:
    """True when the mode scores predicted steps as given, blank ones included.

    Examples:
        >>> keeps_blank_steps("crystal-metrics-0.2"), keeps_blank_steps("none")
        (True, False)
    """
    return compat == COMPAT_CRYSTAL_METRICS


def given_steps(steps: Sequence[str]) -> list[str]:
    """The predicted steps crystal-metrics 0.2.0 scores: the list as given, unchanged.

    Blank and whitespace-only entries stay, and no step is stripped (the package embeds
    ``predictions[id]["reasoning_steps"]`` directly).

    Examples:
        >>> given_steps(["Read the axis.", "  ", ""])
        ['Read the axis.', '  ', '']
    """
    return list(steps)
