"""Every threshold from one matching: the step metrics at tau' >= tau without a new matching.

The greedy matching walks the candidate pairs in one fixed order (cosine, highest first, then
the tie rule) and accepts a pair when both steps are free. At a higher threshold the
candidates are a *prefix* of that same list, and the walk over a prefix accepts exactly the
pairs the full walk accepted within it. So the matches at tau' are the leading matches (in
acceptance order, cosine non-increasing) of the matches at tau whose cosine still passes
tau'. From an item scored at the lowest threshold of an ablation, :func:`chain_at` gives the
item's metrics at any higher one, identical to scoring again (a test checks every field), in
microseconds and without the similarity matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from crystalbench.precedence import Precedence
from crystalbench.scoring.matching import match_metrics

THRESHOLD_FIELDS: tuple[str, ...] = (
    "precision",
    "recall",
    "f1",
    "lis",
    "kendall",
    "ordered_f1",
)
"""The per-item fields that depend on the threshold (the others do not)."""


def passing_prefix(
    matches: Sequence[tuple[int, int, float]], tau: float, *, strict: bool = False
) -> int:
    """How many leading matches pass ``tau`` (float32 comparison, as the matcher makes it).

    Examples:
        >>> passing_prefix([(0, 0, 0.9), (1, 1, 0.5), (2, 2, 0.4)], 0.45)
        2
    """
    bar = float(np.float32(tau))
    count = 0
    for _, _, cosine in matches:
        if cosine > bar or (cosine == bar and not strict):
            count += 1
        else:
            break
    return count


def chain_at(
    item: Any,
    tau: float,
    *,
    strict: bool = False,
    alpha: float,
    order_metric: str,
) -> dict[str, float]:
    """The threshold-dependent metrics of an item at ``tau`` (>= the tau it was scored at).

    Args:
        item: An :class:`~crystalbench.types.ItemResult` (``matches``, ``n_pred``, ``n_ref``,
            the metric fields at its own threshold, and ``ref_precedence`` when its order
            was scored against a partial-order reference).
        tau: The higher threshold.
        strict: The compat rule ``S > tau``.
        alpha: Order weight of Ordered Match F1.
        order_metric: ``lis`` or ``kendall``.

    Returns:
        ``precision``, ``recall``, ``f1``, ``lis``, ``kendall``, ``ordered_f1``.

    Examples:
        >>> from types import SimpleNamespace as NS
        >>> item = NS(matches=[(1, 0, 0.9), (0, 1, 0.6)], n_pred=2, n_ref=2, f1=1.0,
        ...           precision=1.0, recall=1.0, lis=0.5, kendall=0.0, ordered_f1=0.85)
        >>> chain_at(item, 0.7, alpha=0.3, order_metric="lis")["f1"]
        0.5
    """
    matches = item.matches
    k = passing_prefix(matches, tau, strict=strict)
    if k == len(matches):
        return {name: getattr(item, name) for name in THRESHOLD_FIELDS}
    # The order the item was scored against (a partial-order reference), on its ref_steps.
    pairs = getattr(item, "ref_precedence", None)
    precedence = Precedence.from_pairs(pairs, item.n_ref) if pairs is not None else None
    metrics = match_metrics(
        matches[:k],
        item.n_pred,
        item.n_ref,
        alpha=alpha,
        order_metric=order_metric,
        precedence=precedence,
    )
    return {name: metrics[name] for name in THRESHOLD_FIELDS}
