"""Pure step-matching maths: greedy one-to-one matching, P/R/F1, LIS, Kendall, Ordered F1.

Functions here take plain numbers and arrays; no I/O, no models. The contract is
``docs/metrics.md``. The order scores (LIS, Kendall, and their partial-order generalisation)
live in :mod:`crystalbench.scoring.order`; they are re-exported here. Similarities are float32 (as
sentence encoders produce them) and the threshold is compared at float32 precision. Which
rules a compat mode means lives in :mod:`crystalbench.scoring.compat`; here every function
takes a :class:`MatchRules`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crystalbench.defaults import ALPHA, ORDER_METRIC, TAU
from crystalbench.errors import UnknownNameError
from crystalbench.precedence import Precedence
from crystalbench.scoring.order import kendall_score, longest_increasing_subsequence, order_fields
from crystalbench.types import ChainScore, StepMatch

__all__ = [
    "ORDER_METRICS",
    "MatchRules",
    "chain_fields",
    "check_order_metric",
    "cosine_matrix",
    "greedy_match",
    "greedy_pairs",
    "kendall_score",
    "lis_ratio",
    "longest_increasing_subsequence",
    "match_metrics",
    "ordered_f1",
    "precision_recall_f1",
    "prediction_order",
    "score_chain",
]

ORDER_METRICS = ("lis", "kendall")


@dataclass(frozen=True)
class MatchRules:
    """How similarities are computed and candidate pairs accepted.

    Attributes:
        tau: Similarity threshold.
        strict: ``S > tau`` (crystal-metrics 0.2.0) instead of ``S >= tau`` (paper).
        ties_high_first: Among equal similarities, prefer the higher prediction index, then
            the higher reference index (crystal-metrics sorts tuples in reverse). The paper
            mode prefers the lower indices.
        float32_products: Accumulate the cosine dot products in float32, as crystal-metrics
            does (needed for exact parity). The paper mode accumulates in float64 and rounds
            the result to float32: identical steps then get identical cosines, so the tie
            rule (not float32 rounding noise of the matrix product, about 1e-7) decides
            between them, whatever the batch layout of the product.

    :func:`crystalbench.scoring.compat.match_rules` gives the rules of a compat mode.

    Examples:
        >>> MatchRules(tau=0.5).tau, MatchRules().float32_products
        (0.5, False)
    """

    tau: float = TAU
    strict: bool = False
    ties_high_first: bool = False
    float32_products: bool = False


def cosine_matrix(pred: np.ndarray, ref: np.ndarray, rules: MatchRules | None = None) -> np.ndarray:
    """Cosine similarities of two sets of L2-normalised embeddings, as float32.

    Args:
        pred: ``(m, d)`` predicted-step embeddings.
        ref: ``(n, d)`` reference-step embeddings.
        rules: Say whether the products accumulate in float64 (paper, default) or float32
            (crystal-metrics; see :attr:`MatchRules.float32_products`).

    Returns:
        ``(m, n)`` float32 matrix ``S[i, j] = pred[i] . ref[j]``.

    Examples:
        >>> cosine_matrix(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    m = pred.shape[0] if pred.ndim == 2 else 0
    n = ref.shape[0] if ref.ndim == 2 else 0
    if m == 0 or n == 0:
        return np.zeros((m, n), dtype=np.float32)
    if rules is not None and rules.float32_products:
        product = pred.astype(np.float32, copy=False) @ ref.astype(np.float32, copy=False).T
    else:
        product = pred.astype(np.float64) @ ref.astype(np.float64).T
    return product.astype(np.float32, copy=False)


def greedy_pairs(
    similarity: np.ndarray,
    rules: MatchRules | None = None,
    *,
    veto: Callable[[int, int, float], bool] | None = None,
) -> list[tuple[int, int, float]]:
    """:func:`greedy_match` as plain ``(pred_index, ref_index, cosine)`` tuples.

    The same matches in the same order, without building records (for hot loops).

    ``veto(i, j, cosine)`` is asked about each pair the walk reaches with both steps still
    unmatched, just before accepting it; a pair it vetoes is skipped and the walk goes on.
    The matches are those of the walk over the matrix with every vetoed pair removed, but
    only the pairs the walk reaches are asked about (a fact guard reads a few pairs per
    item, not every pair above the threshold).

    Examples:
        >>> S = np.array([[0.9, 0.8], [0.95, 0.2]], dtype=np.float32)
        >>> [(i, j) for i, j, _ in greedy_pairs(S)]
        [(1, 0), (0, 1)]
        >>> [(i, j) for i, j, _ in greedy_pairs(S, veto=lambda i, j, c: (i, j) == (1, 0))]
        [(0, 0)]
    """
    rules = rules or MatchRules()
    sim = np.asarray(similarity, dtype=np.float32)
    if sim.ndim != 2 or sim.size == 0:
        return []
    tau32 = np.float32(rules.tau)
    passing = sim > tau32 if rules.strict else sim >= tau32
    rows, cols = np.nonzero(passing)
    if rows.size == 0:
        return []
    values = sim[rows, cols]
    # np.lexsort sorts by the last key first, ascending.
    if rules.ties_high_first:
        order = np.lexsort((-cols, -rows, -values))
    else:
        order = np.lexsort((cols, rows, -values))
    n_pred, n_ref = sim.shape
    used_pred = [False] * n_pred
    used_ref = [False] * n_ref
    pairs: list[tuple[int, int, float]] = []
    limit = min(n_pred, n_ref)
    # Python ints and floats from .tolist(): the loop is the hot path of a whole run.
    for i, j, value in zip(
        rows[order].tolist(), cols[order].tolist(), values[order].tolist(), strict=True
    ):
        if used_pred[i] or used_ref[j]:
            continue
        if veto is not None and veto(i, j, value):
            continue
        used_pred[i] = True
        used_ref[j] = True
        pairs.append((i, j, value))
        if len(pairs) == limit:
            break
    return pairs


def greedy_match(similarity: np.ndarray, rules: MatchRules | None = None) -> list[StepMatch]:
    """Greedy one-to-one matching over pairs that pass the threshold.

    Candidates are sorted by similarity, highest first; ties go to the lower prediction
    index, then the lower reference index (or the higher ones under crystal-metrics
    rules). Each candidate is accepted when neither of its steps is matched yet.

    Args:
        similarity: ``(m, n)`` similarity matrix.
        rules: Threshold and tie order; paper rules by default.

    Returns:
        Accepted matches in acceptance order.

    Examples:
        >>> S = np.array([[0.9, 0.8], [0.95, 0.2]], dtype=np.float32)
        >>> [(x.pred_index, x.ref_index) for x in greedy_match(S)]
        [(1, 0), (0, 1)]
    """
    return [
        StepMatch(pred_index=i, ref_index=j, cosine=value)
        for i, j, value in greedy_pairs(similarity, rules)
    ]


def prediction_order(matches: Sequence[StepMatch]) -> list[int]:
    """Prediction indices of the matches read in reference order (the sequence Q).

    Examples:
        >>> prediction_order([StepMatch(pred_index=2, ref_index=0, cosine=1.0),
        ...                   StepMatch(pred_index=0, ref_index=1, cosine=1.0)])
        [2, 0]
    """
    return [m.pred_index for m in sorted(matches, key=lambda m: m.ref_index)]


def lis_ratio(sequence: Sequence[int]) -> float:
    """Length of the longest strictly increasing subsequence over the sequence length.

    Order is undefined with fewer than two elements; the ratio is then 1.0.

    Examples:
        >>> lis_ratio([0, 2, 1, 3])
        0.75
        >>> lis_ratio([5])
        1.0
    """
    if len(sequence) < 2:
        return 1.0
    return len(longest_increasing_subsequence(sequence)) / len(sequence)


def precision_recall_f1(n_matched: int, n_pred: int, n_ref: int) -> tuple[float, float, float]:
    """Per-item precision, recall and F1 with the contract's edge cases.

    Examples:
        >>> precision_recall_f1(2, 4, 2)
        (0.5, 1.0, 0.6666666666666666)
        >>> precision_recall_f1(0, 0, 0)
        (1.0, 1.0, 1.0)
        >>> precision_recall_f1(0, 0, 3)
        (0.0, 0.0, 0.0)
    """
    if n_pred == 0 and n_ref == 0:
        return 1.0, 1.0, 1.0
    if n_pred == 0 or n_ref == 0:
        return 0.0, 0.0, 0.0
    precision = n_matched / n_pred
    recall = n_matched / n_ref
    if precision + recall == 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def ordered_f1(f1: float, order: float, alpha: float = ALPHA) -> float:
    """Ordered Match F1: ``f1 * ((1 - alpha) + alpha * order)``.

    Examples:
        >>> round(ordered_f1(0.773, 0.560), 2)
        0.67
    """
    return f1 * ((1.0 - alpha) + alpha * order)


def check_order_metric(order_metric: str) -> None:
    """Raise :class:`~crystalbench.errors.UnknownNameError` for an unknown order metric."""
    if order_metric not in ORDER_METRICS:
        raise UnknownNameError("order metric", order_metric, ORDER_METRICS)


def chain_fields(
    similarity: np.ndarray,
    *,
    rules: MatchRules | None = None,
    alpha: float = ALPHA,
    order_metric: str = ORDER_METRIC,
    precedence: Precedence | None = None,
    matches: list[tuple[int, int, float]] | None = None,
) -> dict[str, Any]:
    """The fields of :class:`~crystalbench.types.ChainScore` as a plain dict, for hot loops.

    :func:`score_chain` is ``ChainScore(**chain_fields(...))``. The scorer builds each
    :class:`~crystalbench.types.ItemResult` (which shares ``ChainScore``'s fields) straight
    from this dict, so that one record is validated per item, not two. Matches are
    ``(pred_index, ref_index, cosine)`` tuples in acceptance order; ``out_of_order`` holds
    the ``(pred_index, ref_index)`` pairs outside the chosen longest increasing subsequence
    (with a precedence: the largest consistent set), in reference order.

    ``precedence`` is the reference steps' partial order (``docs/metrics.md``, "Partial-order
    references"); ``None`` is the chain's own order, the paper. ``matches``: the greedy
    matches of ``similarity`` under ``rules`` when the caller has walked it already (a fact
    guard's walk); they are not computed again.

    Examples:
        >>> f = chain_fields(np.eye(3, dtype=np.float32)[::-1])
        >>> f["f1"], f["lis"], f["out_of_order"]
        (1.0, 0.3333333333333333, [(2, 0), (1, 1)])
        >>> either = Precedence.from_pairs([], 3)  # every step interchangeable
        >>> chain_fields(np.eye(3, dtype=np.float32)[::-1], precedence=either)["lis"]
        1.0
    """
    check_order_metric(order_metric)
    sim = np.asarray(similarity, dtype=np.float32)
    if sim.ndim != 2:
        sim = sim.reshape(0, 0)
    n_pred, n_ref = sim.shape
    if matches is None:
        matches = greedy_pairs(sim, rules)
    return {
        "n_pred": n_pred,
        "n_ref": n_ref,
        "matches": matches,
        **match_metrics(
            matches, n_pred, n_ref, alpha=alpha, order_metric=order_metric, precedence=precedence
        ),
    }


def match_metrics(
    matches: Sequence[tuple[int, int, float]],
    n_pred: int,
    n_ref: int,
    *,
    alpha: float = ALPHA,
    order_metric: str = ORDER_METRIC,
    precedence: Precedence | None = None,
) -> dict[str, Any]:
    """The step metrics of one item from its accepted matches, the one place they are
    computed: :func:`chain_fields` after matching, and
    :func:`crystalbench.validation.thresholds.chain_at` on a prefix of the matches.

    Matches are ``(pred_index, ref_index, cosine)`` in acceptance order. Returns
    ``out_of_order`` (the ``(pred_index, ref_index)`` pairs outside the chosen longest
    increasing subsequence, in reference order), ``precision``, ``recall``, ``f1``, ``lis``,
    ``kendall`` and ``ordered_f1``. The order fields come from
    :func:`crystalbench.scoring.order.order_fields` against ``precedence`` (``None``: the chain's
    own order, the paper).

    Examples:
        >>> m = match_metrics([(1, 0, 0.9), (0, 1, 0.8)], 2, 3, alpha=0.3, order_metric="lis")
        >>> round(m["f1"], 3), m["lis"], m["out_of_order"]
        (0.8, 0.5, [(1, 0)])
    """
    precision, recall, f1 = precision_recall_f1(len(matches), n_pred, n_ref)
    lis, kendall, out_of_order = order_fields(matches, precedence)
    order = lis if order_metric == "lis" else kendall
    return {
        "out_of_order": out_of_order,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "lis": lis,
        "kendall": kendall,
        "ordered_f1": ordered_f1(f1, order, alpha),
    }


def score_chain(
    similarity: np.ndarray,
    *,
    rules: MatchRules | None = None,
    alpha: float = ALPHA,
    order_metric: str = ORDER_METRIC,
    precedence: Precedence | None = None,
) -> ChainScore:
    """All step metrics of one item from its similarity matrix.

    Args:
        similarity: ``(m, n)`` cosine matrix of predicted against reference steps.
        rules: Matching rules (threshold, tie order).
        alpha: Order weight of Ordered Match F1.
        order_metric: ``"lis"`` or ``"kendall"``: which order score Ordered F1 uses.
        precedence: The reference steps' partial order (``None``: the chain's own order).

    Returns:
        The item's :class:`~crystalbench.types.ChainScore`.

    Raises:
        UnknownNameError: ``order_metric`` is neither ``lis`` nor ``kendall``.

    Examples:
        >>> s = score_chain(np.eye(3, dtype=np.float32)[::-1])
        >>> s.f1, s.lis, round(s.ordered_f1, 2)
        (1.0, 0.3333333333333333, 0.8)
        >>> s.out_of_order
        [(2, 0), (1, 1)]
    """
    return ChainScore(
        **chain_fields(
            similarity,
            rules=rules,
            alpha=alpha,
            order_metric=order_metric,
            precedence=precedence,
        )
    )
