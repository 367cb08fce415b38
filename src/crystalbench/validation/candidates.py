"""The best unmatched candidate of every step: the near misses that pair sampling needs.

Scoring exports, per item, the accepted matches (``ItemResult.matches``). A study of the
matcher also needs pairs it did *not* accept, across the whole cosine range: for every
predicted step, the reference step it is most similar to among those it is not matched
with, and the same for every reference step. :func:`best_unmatched` computes them from the
item's similarity matrix. Scoring does not store them (``examples.jsonl`` holds the matches
only): ``crystal validate sample-pairs`` recomputes them from the run's cached embeddings
(``benchmarks/results/validation.md`` measures why).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def best_unmatched(
    similarity: np.ndarray, matches: Sequence[tuple[int, int, float]]
) -> list[tuple[int, int, float]]:
    """For each step, its most similar step on the other side that it is not matched with.

    Rows first: for every predicted step ``i`` (in order), the unmatched pair ``(i, j)``
    with the highest cosine; then for every reference step ``j``, the unmatched pair
    ``(i, j)`` with the highest cosine, unless that pair is already listed. Ties go to
    the lower index (``numpy.argmax``). A step with no unmatched partner (the other side
    has one step, and it is its match) contributes nothing.

    Args:
        similarity: ``(m, n)`` cosine matrix of predicted against reference steps.
        matches: The accepted ``(pred_index, ref_index, cosine)`` pairs.

    Returns:
        ``(pred_index, ref_index, cosine)`` triples, each pair once.

    Examples:
        >>> S = np.array([[0.9, 0.3], [0.2, 0.1]], dtype=np.float32)
        >>> [(i, j, round(c, 2)) for i, j, c in best_unmatched(S, [(0, 0, 0.9)])]
        [(0, 1, 0.3), (1, 0, 0.2)]
    """
    sim = np.asarray(similarity, dtype=np.float32)
    if sim.ndim != 2 or sim.size == 0:
        return []
    masked = sim.copy()
    if matches:
        masked[[m[0] for m in matches], [m[1] for m in matches]] = -np.inf
    n_pred, n_ref = masked.shape
    best_ref = masked.argmax(axis=1)
    best_pred = masked.argmax(axis=0)
    row_values = masked[np.arange(n_pred), best_ref].tolist()
    col_values = masked[best_pred, np.arange(n_ref)].tolist()
    out: list[tuple[int, int, float]] = []
    seen: set[tuple[int, int]] = set()
    for i, (j, value) in enumerate(zip(best_ref.tolist(), row_values, strict=True)):
        if value != -np.inf:
            out.append((i, j, value))
            seen.add((i, j))
    for j, (i, value) in enumerate(zip(best_pred.tolist(), col_values, strict=True)):
        if value != -np.inf and (i, j) not in seen:
            out.append((i, j, value))
    return out
