"""Ordering a consensus chain's clusters: the first-round rule and the stabilised rule.

Pure functions of plain data (no I/O, no models).

**First round (position rule).** Each member step at 0-based position ``p`` of a candidate
chain of ``L`` steps has the relative position ``(p + 0.5) / L`` (in ``(0, 1)``, defined
for one-step chains). A cluster's key is the mean relative position of its members; clusters
are sorted by that key, then by support (more chains first), then by the canonical index of
the medoid (:mod:`crystalbench.references.consensus` fixes that index independently of the
order the chains arrived in). This is the Borda-style mean-rank aggregation.

**Later rounds (stabilised rule).** Each cluster of the new round is matched to at most one
step of the previous round's chain (a one-to-one assignment maximising cosine, pairs below
the threshold refused; see :func:`match_previous`). Writing the previous chain as the ids
``0..p-1`` and the new clusters as their matched ids (unmatched clusters get fresh ids),
the chosen order has the smallest Levenshtein distance to ``0..p-1`` over **all** orders of
the new clusters, and among those, the one closest to the position rule. The minimum is
``max(p, c) - k`` (``c`` clusters, ``k`` of them matched): matched clusters keep the
previous order, and the ``u`` unmatched ones are spread over the ``k + 1`` gaps of the
previous chain so that no gap needs more edits than it must. Which gap each unmatched
cluster goes to is chosen by a small dynamic programme that also minimises the distance
of each unmatched cluster from its natural gap (where its mean position puts it among the
matched clusters), keeping the unmatched clusters in position order.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


def levenshtein(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Edit distance (unit insertions, deletions, substitutions) between two sequences.

    Sequences of ids are compared element by element (never as joined strings, where
    ``[1, 12]`` and ``[11, 2]`` would look alike).

    Examples:
        >>> levenshtein([0, 1, 2], [0, 2]), levenshtein([], [5, 6])
        (1, 2)
        >>> levenshtein("kitten", "sitting")
        3
        >>> levenshtein([1, 12], [11, 2])
        2
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, start=1):
        current = [i]
        for j, right in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right))
            )
        previous = current
    return previous[-1]


def position_order(
    keys: Sequence[float], supports: Sequence[int], medoids: Sequence[int]
) -> list[int]:
    """Cluster indices in first-round order: mean relative position, then support
    (descending), then the medoid's canonical index.

    Examples:
        >>> position_order([0.6, 0.2, 0.6], [1, 2, 3], [9, 4, 7])
        [1, 2, 0]
    """
    return sorted(range(len(keys)), key=lambda c: (keys[c], -supports[c], medoids[c]))


def match_previous(similarity: np.ndarray, theta: float) -> dict[int, int]:
    """One-to-one matching of new clusters (rows) to previous steps (columns).

    The assignment maximises the summed cosine among pairs at or above ``theta``
    (:func:`scipy.optimize.linear_sum_assignment`); pairs below ``theta`` are never
    matched.

    Returns:
        ``{cluster index: previous step index}`` for the matched clusters.

    Examples:
        >>> sim = np.array([[0.9, 0.5], [0.8, 0.7], [0.1, 0.2]])
        >>> match_previous(sim, 0.6)
        {0: 0, 1: 1}
    """
    from scipy.optimize import linear_sum_assignment

    if similarity.size == 0:
        return {}
    valid = similarity >= theta
    if not valid.any():
        return {}
    # Invalid pairs cost more than any set of valid ones, so they are only ever taken
    # when a row has no valid column left; they are dropped below.
    penalty = float(similarity.shape[0] + similarity.shape[1] + 1)
    cost = np.where(valid, -similarity, penalty)
    rows, cols = linear_sum_assignment(cost)
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True) if valid[r, c]}


@dataclass(frozen=True)
class StabilisedOrder:
    """The stabilised order of a round's clusters and how far it is from the previous chain."""

    order: list[int]
    """Cluster indices, in chain order."""
    edit_distance: int
    """Levenshtein distance between the new and the previous id sequences."""
    displacement: int
    """Summed distance (in gaps) of the unmatched clusters from their natural gaps."""


def stabilised_order(
    n_previous: int,
    matched: dict[int, int],
    keys: Sequence[float],
    tie_order: Sequence[int],
) -> StabilisedOrder:
    """The order of minimal edit distance to the previous chain (see the module docstring).

    Args:
        n_previous: Steps in the previous round's chain.
        matched: ``{cluster: previous step index}`` (one-to-one).
        keys: Mean relative position of each cluster (the first-round key).
        tie_order: Every cluster index in first-round order (breaks ties between keys).

    Examples:
        Previous chain ``0 1 2``; clusters 0 and 1 match steps 2 and 0, cluster 2 is new
        with a position between them:

        >>> result = stabilised_order(3, {0: 2, 1: 0}, [0.9, 0.1, 0.5], [1, 2, 0])
        >>> result.order, result.edit_distance
        ([1, 2, 0], 1)
    """
    rank = {cluster: r for r, cluster in enumerate(tie_order)}
    skeleton = sorted(matched, key=matched.__getitem__)
    unmatched = sorted(
        (c for c in range(len(keys)) if c not in matched), key=lambda c: (keys[c], rank[c])
    )
    anchors = [matched[c] for c in skeleton]
    bounds = [-1, *anchors, n_previous]
    gaps = [bounds[i + 1] - bounds[i] - 1 for i in range(len(bounds) - 1)]
    skeleton_keys = [keys[c] for c in skeleton]
    natural = [sum(1 for k in skeleton_keys if k < keys[c]) for c in unmatched]
    n_gaps, n_free = len(gaps), len(unmatched)
    inf = (1 << 60, 1 << 60)
    # best[g][j]: (edits, displacement) of placing the first j unmatched clusters into gaps < g.
    best = [[inf] * (n_free + 1) for _ in range(n_gaps + 1)]
    choice = [[0] * (n_free + 1) for _ in range(n_gaps + 1)]
    best[0][0] = (0, 0)
    for g in range(n_gaps):
        for j in range(n_free + 1):
            if best[g][j] == inf:
                continue
            moved = 0
            for h in range(n_free - j + 1):
                if h:
                    moved += abs(g - natural[j + h - 1])
                cost = (best[g][j][0] + max(gaps[g], h), best[g][j][1] + moved)
                if cost < best[g + 1][j + h]:
                    best[g + 1][j + h] = cost
                    choice[g + 1][j + h] = h
    counts = [0] * n_gaps
    j = n_free
    for g in range(n_gaps, 0, -1):
        counts[g - 1] = choice[g][j]
        j -= counts[g - 1]
    order: list[int] = []
    taken = 0
    for g in range(n_gaps):
        order.extend(unmatched[taken : taken + counts[g]])
        taken += counts[g]
        if g < len(skeleton):
            order.append(skeleton[g])
    edits, displacement = best[n_gaps][n_free]
    return StabilisedOrder(order=order, edit_distance=edits, displacement=displacement)


def id_sequence(order: Sequence[int], matched: dict[int, int], n_previous: int) -> list[int]:
    """The ids an order stands for: matched clusters their previous index, the others
    fresh ids from ``n_previous`` on (for :func:`levenshtein` against ``range(n_previous)``).

    Examples:
        >>> id_sequence([1, 2, 0], {0: 2, 1: 0}, 3)
        [0, 3, 2]
    """
    fresh = iter(range(n_previous, n_previous + len(order)))
    return [matched[c] if c in matched else next(fresh) for c in order]
