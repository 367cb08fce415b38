"""Statistics over per-item values: bootstrap intervals, paired tests, breakdowns.

Everything here works on plain arrays (one value per benchmark item), seeded and
deterministic: the same values in the same order with the same seed give the same numbers on
every machine. Resampling comes from maintained libraries where they do the same thing:

- :func:`bootstrap_ci` / :func:`bootstrap_cis`: percentile bootstrap intervals for macro
  means (Efron & Tibshirani 1993, ch. 13), computed by :func:`scipy.stats.bootstrap`.
  :func:`bootstrap_cis` resamples the *same* items for every metric of a run, so the
  intervals of Match F1, precision and recall describe one set of resampled benchmarks.
- :func:`paired_bootstrap`: interval and two-sided p-value for the difference of two runs
  scored on the same items (resampling items, keeping pairs together; the resampled means
  come from :func:`scipy.stats.bootstrap`). The p-value is the share of centred bootstrap
  differences at least as far from zero as the observed one (Efron & Tibshirani 1993,
  alg. 16.1 style, with the +1 correction).
- :func:`paired_permutation`: sign-flip permutation test of the mean paired difference;
  exact (every sign pattern enumerated) when few items differ, Monte Carlo otherwise.
  On 0/1 values (accuracy) it is the exact conditional McNemar test. This one is ours:
  it is the test :func:`scipy.stats.permutation_test` runs with
  ``permutation_type="samples"`` (tests check that both give the same p-values), but
  scipy's takes about 20 times as long on CRYSTAL's 6,372 items (11.4 s against 0.54 s per
  test), and a report compares every run with a baseline on six metrics and five sources
  (``benchmarks/bench_stats.py``, ``benchmarks/results/stats.md``).
- :func:`compare_paired`: both tests for several metrics, overall and per group (source).
- :func:`holm`: Holm-Bonferroni adjusted p-values, by
  :func:`statsmodels.stats.multitest.multipletests` (``pip install 'crystalbench[stats]'``).
- :func:`binned_means` and :func:`histogram_shares`: the numbers behind the report's
  length and distribution plots.

Agreement between raters (Cohen's kappa, Krippendorff's alpha, Wilson and bootstrap
intervals) lives in :mod:`crystalbench.statistics.agreement`.

scipy is a dependency of crystalbench, statsmodels an extra; both are imported only when a
function needs them, so ``import crystalbench`` stays light. P-values are not adjusted for
multiple comparisons; :func:`holm` does that when needed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from crystalbench._internal.extras import require
from crystalbench.types import Record

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples for intervals and paired bootstrap tests."""

DEFAULT_PERMUTATIONS = 10000
"""Random sign patterns of the Monte Carlo permutation test."""

DEFAULT_CONFIDENCE = 0.95
"""Two-sided confidence level of every interval."""

DEFAULT_SEED = 0
"""Seed of every random draw (numpy ``default_rng``)."""

EXACT_MAX_NONZERO = 16
"""Paired differences with at most this many non-zero entries are tested exactly (2^16 patterns)."""

_CHUNK_ELEMENTS = 4_000_000
"""Resample batches hold at most this many gathered values (bounds memory on big runs)."""


class Interval(Record):
    """A point estimate with a two-sided bootstrap confidence interval."""

    estimate: float
    """The statistic on the original data (the macro mean)."""
    low: float
    """Lower bound of the interval."""
    high: float
    """Upper bound of the interval."""
    confidence: float = DEFAULT_CONFIDENCE
    """Confidence level, e.g. 0.95."""
    n: int = 0
    """Number of items the statistic was computed from."""
    n_resamples: int = DEFAULT_RESAMPLES
    """Bootstrap resamples used (0 when the interval is degenerate by construction)."""


class PairedTest(Record):
    """Difference ``b - a`` of two runs on the same items, with its interval and p-values."""

    n: int
    """Number of paired items."""
    mean_a: float
    """Macro mean of run A."""
    mean_b: float
    """Macro mean of run B."""
    delta: float
    """``mean_b - mean_a``."""
    low: float
    """Lower bound of the paired bootstrap interval of ``delta``."""
    high: float
    """Upper bound of the paired bootstrap interval of ``delta``."""
    confidence: float = DEFAULT_CONFIDENCE
    """Confidence level of the interval."""
    p_bootstrap: float
    """Two-sided paired bootstrap p-value for ``delta == 0``."""
    p_permutation: float
    """Two-sided sign-flip permutation p-value for ``delta == 0``."""
    permutation_exact: bool
    """True when every sign pattern was enumerated (the p-value is exact)."""
    n_differing: int
    """Items whose two values differ (the only ones the permutation test can flip)."""
    n_resamples: int = DEFAULT_RESAMPLES
    """Bootstrap resamples."""
    n_permutations: int = DEFAULT_PERMUTATIONS
    """Sign patterns evaluated (``2 ** n_differing`` when exact)."""


class PairedComparison(Record):
    """Paired tests of several metrics between two runs, overall and per group."""

    n: int
    """Paired items."""
    metrics: dict[str, PairedTest]
    """One test per metric name (e.g. ``match_f1``, ``accuracy``)."""
    by_group: dict[str, dict[str, PairedTest]]
    """Per group (e.g. source): one test per metric, on that group's items only."""


class Bin(Record):
    """One bin of :func:`binned_means`."""

    label: str
    """Human label of the bin, e.g. ``"9-11"`` or ``"21+"``."""
    low: float
    """Inclusive lower edge."""
    high: float
    """Exclusive upper edge (``inf`` for the last bin)."""
    n: int
    """Items in the bin."""
    mean: float | None
    """Mean of the values in the bin; ``None`` when it is empty."""
    sem: float | None
    """Standard error of the mean; ``None`` with fewer than two items."""


# --------------------------------------------------------------------------- helpers


def _as_1d(values: ArrayLike, name: str = "values") -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds NaN or infinite values")
    return array


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")


def _check_resamples(n_resamples: int) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")


def _bootstrap_means(
    matrix: np.ndarray, n_resamples: int, confidence: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile bootstrap of the means of the columns of ``(n, k)`` ``matrix``.

    :func:`scipy.stats.bootstrap` draws rows with replacement, the same rows for every
    column (one sample of shape ``(k, n)``, resampled along its last axis), in batches of
    at most ``_CHUNK_ELEMENTS`` gathered values.

    Returns:
        ``(samples, low, high)``: the ``(n_resamples, k)`` resampled means and the
        percentile bounds of each column.
    """
    from scipy import stats

    n, k = matrix.shape
    result = stats.bootstrap(
        (np.ascontiguousarray(matrix.T),),
        np.mean,
        n_resamples=n_resamples,
        batch=max(1, _CHUNK_ELEMENTS // max(1, n * k)),
        vectorized=True,
        axis=-1,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    samples = np.asarray(result.bootstrap_distribution, dtype=np.float64).reshape(k, -1).T
    low = np.asarray(interval.low, dtype=np.float64).reshape(k)
    high = np.asarray(interval.high, dtype=np.float64).reshape(k)
    return samples, low, high


# --------------------------------------------------------------------------- intervals


def bootstrap_cis(
    columns: Mapping[str, ArrayLike],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals of the means of several per-item columns.

    Every resample draws one set of items (with replacement) used for every column,
    so the intervals are those of one resampled benchmark.

    Args:
        columns: Metric name -> one value per item (all of the same length).
        n_resamples: Bootstrap resamples.
        confidence: Two-sided confidence level.
        seed: Seed of the resampling.

    Returns:
        Metric name -> :class:`Interval` (in the order of ``columns``). With no items the
        estimate and bounds are 0 and ``n`` is 0; with one item, or when a column is
        constant, the interval is degenerate (low = high = estimate).

    Raises:
        ValueError: Columns of different lengths, non-finite values, or bad parameters.

    Examples:
        >>> cis = bootstrap_cis({"f1": [0.5] * 10, "acc": [0, 1] * 5}, n_resamples=200)
        >>> cis["f1"].low, cis["f1"].high
        (0.5, 0.5)
        >>> cis["acc"].estimate, 0.1 < cis["acc"].low < 0.5 < cis["acc"].high < 0.9
        (0.5, True)
    """
    _check_confidence(confidence)
    _check_resamples(n_resamples)
    names = list(columns)
    arrays = [_as_1d(columns[name], name) for name in names]
    lengths = {a.size for a in arrays}
    if len(lengths) > 1:
        raise ValueError(f"columns have different lengths: {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    if not names:
        return {}
    if n == 0:
        return {
            name: Interval(
                estimate=0.0, low=0.0, high=0.0, confidence=confidence, n=0, n_resamples=0
            )
            for name in names
        }
    matrix = np.stack(arrays, axis=1)
    estimates = matrix.mean(axis=0)
    constant = np.all(matrix == matrix[0], axis=0)
    # A constant's mean is the constant itself, not its rounded sum divided by n.
    estimates[constant] = matrix[0, constant]
    if n == 1 or bool(constant.all()):
        return {
            name: Interval(
                estimate=float(estimates[i]),
                low=float(estimates[i]),
                high=float(estimates[i]),
                confidence=confidence,
                n=n,
                n_resamples=0,
            )
            for i, name in enumerate(names)
        }
    _, low, high = _bootstrap_means(matrix, n_resamples, confidence, seed)
    result: dict[str, Interval] = {}
    for i, name in enumerate(names):
        estimate = float(estimates[i])
        if constant[i]:
            lo = hi = estimate
        else:
            # Quantiles of float means can fall a hair outside [min, max]; the mean cannot.
            lo, hi = float(min(low[i], estimate)), float(max(high[i], estimate))
        result[name] = Interval(
            estimate=estimate, low=lo, high=hi, confidence=confidence, n=n, n_resamples=n_resamples
        )
    return result


def bootstrap_ci(
    values: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Percentile bootstrap interval of the mean of ``values``.

    Args:
        values: One value per item.
        n_resamples: Bootstrap resamples.
        confidence: Two-sided confidence level.
        seed: Seed of the resampling.

    Returns:
        The :class:`Interval`; degenerate for a constant (or single) value.

    Examples:
        >>> ci = bootstrap_ci([0.7] * 25)
        >>> (ci.estimate, ci.low, ci.high)
        (0.7, 0.7, 0.7)
        >>> ci = bootstrap_ci(list(range(11)), seed=1)
        >>> ci.estimate, ci.low < 5.0 < ci.high
        (5.0, True)
    """
    return bootstrap_cis(
        {"value": values}, n_resamples=n_resamples, confidence=confidence, seed=seed
    )["value"]


# --------------------------------------------------------------------------- paired tests


def _paired_arrays(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    left, right = _as_1d(a, "a"), _as_1d(b, "b")
    if left.size != right.size:
        raise ValueError(f"paired values need equal lengths, got {left.size} and {right.size}")
    return left, right


def _tolerance(scale: float) -> float:
    # Sums of the same floats in another order differ by rounding; ties must stay ties.
    return 1e-9 * max(1.0, scale)


def paired_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float, float, float]:
    """Paired bootstrap of the mean difference ``b - a``.

    Items are resampled with replacement, keeping each item's two values together.

    Args:
        a: Run A's value per item.
        b: Run B's value per item, same items in the same order.
        n_resamples: Bootstrap resamples.
        confidence: Two-sided confidence level of the interval.
        seed: Seed of the resampling.

    Returns:
        ``(delta, low, high, p_value)``: the observed mean difference, its percentile
        interval, and the two-sided p-value ``(1 + #{|d* - delta| >= |delta|}) / (1 + B)``
        where ``d*`` are the resampled mean differences (centred on the null). Identical
        runs give ``delta = 0`` and ``p = 1``; with no items every number is 0 and p is 1.

    Examples:
        >>> paired_bootstrap([0.2, 0.4, 0.6], [0.2, 0.4, 0.6])
        (0.0, 0.0, 0.0, 1.0)
        >>> delta, low, high, p = paired_bootstrap([0.0] * 30, [0.5, 0.6] * 15)
        >>> round(delta, 2), 0.5 <= low <= high <= 0.6, p == 1 / 1001
        (0.55, True, True)
    """
    _check_confidence(confidence)
    _check_resamples(n_resamples)
    left, right = _paired_arrays(a, b)
    return _bootstrap_differences((right - left)[:, None], n_resamples, confidence, seed)[0]


def _bootstrap_differences(
    diffs: np.ndarray, n_resamples: int, confidence: float, seed: int
) -> list[tuple[float, float, float, float]]:
    """:func:`paired_bootstrap` for every column of ``(n, k)`` differences at once.

    One set of resampled items serves every column, so the metrics of a comparison are
    resampled together (and the work is one matrix product, not k).
    """
    n, k = diffs.shape
    if n == 0:
        return [(0.0, 0.0, 0.0, 1.0)] * k
    deltas = diffs.mean(axis=0)
    constant = np.all(diffs == diffs[0], axis=0)
    deltas[constant] = diffs[0, constant]
    out: list[tuple[float, float, float, float]] = []
    varying = np.flatnonzero(~constant)
    if varying.size:
        samples, low, high = _bootstrap_means(diffs[:, varying], n_resamples, confidence, seed)
    else:
        samples, low, high = np.empty((n_resamples, 0)), np.empty(0), np.empty(0)
    column = {int(j): c for c, j in enumerate(varying)}
    for j in range(k):
        delta = float(deltas[j])
        if constant[j]:
            # Every resample has the same mean: the interval is a point and the centred
            # bootstrap distribution is all zeros (p = 1 when delta = 0, minimal otherwise).
            p = 1.0 if delta == 0.0 else 1.0 / (1 + n_resamples)
            out.append((delta, delta, delta, p))
            continue
        c = column[j]
        extreme = np.abs(samples[:, c] - delta) >= abs(delta) - _tolerance(abs(delta))
        p = min(1.0, (1.0 + float(extreme.sum())) / (1.0 + n_resamples))
        out.append((delta, min(float(low[c]), delta), max(float(high[c]), delta), p))
    return out


def paired_permutation(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    exact_max_nonzero: int = EXACT_MAX_NONZERO,
) -> tuple[float, float, bool, int]:
    """Two-sided sign-flip permutation test of the mean paired difference ``b - a``.

    Under the null hypothesis the two runs are exchangeable on each item, so each
    difference is equally likely to carry either sign. The statistic is
    ``|sum(d)|``; items with ``d = 0`` cannot change it and are left out. When at most
    ``exact_max_nonzero`` differences are non-zero every one of the ``2 ** k`` sign
    patterns is enumerated and the p-value is exact; otherwise ``n_permutations``
    random patterns give ``(1 + #{|T*| >= |T|}) / (1 + n_permutations)``.

    Args:
        a: Run A's value per item.
        b: Run B's value per item, same items in the same order.
        n_permutations: Random sign patterns when the test is not exact.
        seed: Seed of the random patterns.
        exact_max_nonzero: Enumerate exactly up to this many non-zero differences.

    Returns:
        ``(delta, p_value, exact, n_patterns)``.

    Examples:
        Differences 1, 2, 3: of the 8 sign patterns only +++ and --- reach |sum| = 6.

        >>> paired_permutation([0, 0, 0], [1, 2, 3])
        (2.0, 0.25, True, 8)
        >>> paired_permutation([1, 2], [1, 2])
        (0.0, 1.0, True, 1)
    """
    _check_resamples(n_permutations)
    left, right = _paired_arrays(a, b)
    if left.size == 0:
        return 0.0, 1.0, True, 1
    diff = right - left
    delta = float(diff.mean())
    nonzero = diff[diff != 0.0]
    k = int(nonzero.size)
    observed = abs(float(nonzero.sum()))
    tol = _tolerance(float(np.abs(nonzero).sum()) if k else 0.0)
    if k == 0:
        return delta, 1.0, True, 1
    if k <= exact_max_nonzero:
        count = 0
        total = 1 << k
        bits = np.arange(k, dtype=np.int64)
        block = 1 << 14
        for start in range(0, total, block):
            patterns = np.arange(start, min(total, start + block), dtype=np.int64)
            signs = 1.0 - 2.0 * ((patterns[:, None] >> bits) & 1)
            count += int((np.abs(signs @ nonzero) >= observed - tol).sum())
        return delta, count / total, True, total
    rng = np.random.default_rng(seed)
    count = 0
    sum_d = float(nonzero.sum())
    chunk = max(1, _CHUNK_ELEMENTS // k)
    n_bytes = (k + 7) // 8
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        # One random bit per item and pattern: sign +1 where the bit is set, else -1, so
        # sum(sign * d) = 2 * (bits . d) - sum(d).
        raw = np.frombuffer(rng.bytes(size * n_bytes), dtype=np.uint8).reshape(size, n_bytes)
        signs_set = np.unpackbits(raw, axis=1, count=k)
        statistics = 2.0 * (signs_set @ nonzero) - sum_d
        count += int((np.abs(statistics) >= observed - tol).sum())
    return delta, (1.0 + count) / (1.0 + n_permutations), False, n_permutations


def paired_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> PairedTest:
    """Paired bootstrap and permutation test of ``mean(b) - mean(a)``.

    Args:
        a: Run A's value per item.
        b: Run B's value per item, same items in the same order.
        n_resamples: Bootstrap resamples (interval and bootstrap p-value).
        n_permutations: Random sign patterns when the permutation test is not exact.
        confidence: Confidence level of the interval.
        seed: Seed of both tests.

    Returns:
        A :class:`PairedTest`.

    Examples:
        >>> test = paired_test([1, 0, 1, 1], [1, 1, 1, 1])
        >>> test.delta, test.p_permutation, test.permutation_exact, test.n_differing
        (0.25, 1.0, True, 1)
    """
    left, right = _paired_arrays(a, b)
    bootstrap = paired_bootstrap(
        left, right, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return _paired_test(left, right, bootstrap, n_resamples, n_permutations, confidence, seed)


def _paired_test(
    left: np.ndarray,
    right: np.ndarray,
    bootstrap: tuple[float, float, float, float],
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    seed: int,
) -> PairedTest:
    delta, low, high, p_boot = bootstrap
    _, p_perm, exact, n_patterns = paired_permutation(
        left, right, n_permutations=n_permutations, seed=seed
    )
    return PairedTest(
        n=int(left.size),
        mean_a=float(left.mean()) if left.size else 0.0,
        mean_b=float(right.mean()) if right.size else 0.0,
        delta=delta,
        low=low,
        high=high,
        confidence=confidence,
        p_bootstrap=p_boot,
        p_permutation=p_perm,
        permutation_exact=exact,
        n_differing=int(np.count_nonzero(right - left)),
        n_resamples=n_resamples,
        n_permutations=n_patterns,
    )


def compare_paired(
    a: Mapping[str, ArrayLike],
    b: Mapping[str, ArrayLike],
    groups: Sequence[str] | None = None,
    *,
    group_metrics: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Paired tests of every metric of ``a`` against ``b``, overall and per group.

    Args:
        a: Metric name -> run A's value per item.
        b: Metric name -> run B's value per item (same metrics, items and order).
        groups: Optional group label per item (e.g. the source dataset); groups are
            reported in sorted order.
        group_metrics: Metrics tested within each group (default: all of them).
        n_resamples: Bootstrap resamples.
        n_permutations: Random sign patterns when a permutation test is not exact.
        confidence: Confidence level.
        seed: Seed of every test.

    Returns:
        A :class:`PairedComparison`.

    Raises:
        ValueError: Metrics differ between ``a`` and ``b``, or lengths disagree.

    Examples:
        >>> cmp = compare_paired({"f1": [0.2, 0.4, 0.5, 0.5]}, {"f1": [0.3, 0.5, 0.5, 0.5]},
        ...                      groups=["x", "x", "y", "y"])
        >>> round(cmp.metrics["f1"].delta, 3), sorted(cmp.by_group), cmp.by_group["y"]["f1"].delta
        (0.05, ['x', 'y'], 0.0)
    """
    if list(a) != list(b):
        raise ValueError(f"metrics differ: {list(a)} vs {list(b)}")
    arrays_a = {name: _as_1d(values, name) for name, values in a.items()}
    arrays_b = {name: _as_1d(values, name) for name, values in b.items()}
    sizes = {v.size for v in (*arrays_a.values(), *arrays_b.values())}
    if len(sizes) > 1:
        raise ValueError(f"per-item arrays have different lengths: {sorted(sizes)}")
    n = sizes.pop() if sizes else 0

    _check_confidence(confidence)
    _check_resamples(n_resamples)
    _check_resamples(n_permutations)

    def tests(names: Sequence[str], mask: np.ndarray | None) -> dict[str, PairedTest]:
        lefts = [arrays_a[name] if mask is None else arrays_a[name][mask] for name in names]
        rights = [arrays_b[name] if mask is None else arrays_b[name][mask] for name in names]
        size = lefts[0].size if lefts else 0
        diffs = (
            np.stack([r - le for le, r in zip(lefts, rights, strict=True)], axis=1)
            if names
            else np.empty((size, 0))
        )
        boots = _bootstrap_differences(diffs, n_resamples, confidence, seed)
        return {
            name: _paired_test(le, r, boot, n_resamples, n_permutations, confidence, seed)
            for name, le, r, boot in zip(names, lefts, rights, boots, strict=True)
        }

    metrics = tests(list(arrays_a), None)
    by_group: dict[str, dict[str, PairedTest]] = {}
    per_group = list(arrays_a) if group_metrics is None else list(group_metrics)
    unknown = [name for name in per_group if name not in arrays_a]
    if unknown:
        raise ValueError(f"group_metrics {unknown} are not among the metrics {list(arrays_a)}")
    if groups is not None:
        labels = np.asarray(list(groups), dtype=object)
        if labels.size != n:
            raise ValueError(f"groups has {labels.size} labels for {n} items")
        for group in sorted({str(g) for g in labels}):
            by_group[group] = tests(per_group, labels == group)
    return PairedComparison(n=n, metrics=metrics, by_group=by_group)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given), by statsmodels'
    :func:`~statsmodels.stats.multitest.multipletests` (``method="holm"``).

    Raises:
        MissingExtraError: statsmodels is not installed (``pip install 'crystalbench[stats]'``;
            an ``ImportError``).

    Examples:
        >>> holm([0.01, 0.04, 0.03])
        [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.size == 0:
        return []
    _, adjusted, _, _ = _multipletests()(p, method="holm")
    return [round(float(x), 12) for x in adjusted]


def _multipletests() -> Any:
    multitest: Any = require(
        "statsmodels.stats.multitest", what="multiple-testing corrections", extra="stats"
    )
    return multitest.multipletests


# --------------------------------------------------------------------------- breakdowns


def group_means(values: ArrayLike, groups: Sequence[str]) -> dict[str, tuple[int, float]]:
    """Count and mean of ``values`` per group label, groups sorted.

    Examples:
        >>> group_means([1.0, 0.0, 0.5], ["b", "a", "b"])
        {'a': (1, 0.0), 'b': (2, 0.75)}
    """
    array = _as_1d(values)
    labels = np.asarray(list(groups), dtype=object)
    if labels.size != array.size:
        raise ValueError(f"groups has {labels.size} labels for {array.size} values")
    out: dict[str, tuple[int, float]] = {}
    for group in sorted({str(g) for g in labels}):
        selected = array[labels == group]
        out[group] = (int(selected.size), float(selected.mean()))
    return out


def length_bins(edges: Sequence[int]) -> list[tuple[float, float, str]]:
    """Integer bins ``[edges[i], edges[i+1])`` plus an open last bin, with labels.

    Examples:
        >>> length_bins([1, 6, 9])
        [(1, 6, '1-5'), (6, 9, '6-8'), (9, inf, '9+')]
    """
    bins: list[tuple[float, float, str]] = []
    for low, high in itertools.pairwise(edges):
        label = f"{low}" if high - low == 1 else f"{low}-{high - 1}"
        bins.append((low, high, label))
    bins.append((edges[-1], float("inf"), f"{edges[-1]}+"))
    return bins


def binned_means(x: ArrayLike, y: ArrayLike, bins: Sequence[tuple[float, float, str]]) -> list[Bin]:
    """Mean of ``y`` (with its standard error) for the items whose ``x`` falls in each bin.

    Args:
        x: Binning value per item (e.g. the number of reference steps).
        y: Value to average per item (e.g. Match F1).
        bins: ``(low, high, label)`` with ``low <= x < high``, e.g. from :func:`length_bins`.

    Examples:
        >>> [(b.label, b.n, b.mean) for b in binned_means([2, 3, 7], [1.0, 0.5, 0.2],
        ...                                                length_bins([1, 5]))]
        [('1-4', 2, 0.75), ('5+', 1, 0.2)]
    """
    xs, ys = _as_1d(x, "x"), _as_1d(y, "y")
    if xs.size != ys.size:
        raise ValueError(f"x and y differ in length: {xs.size} vs {ys.size}")
    out: list[Bin] = []
    for low, high, label in bins:
        selected = ys[(xs >= low) & (xs < high)]
        n = int(selected.size)
        mean = float(selected.mean()) if n else None
        sem = float(selected.std(ddof=1) / np.sqrt(n)) if n >= 2 else None
        out.append(Bin(label=label, low=float(low), high=float(high), n=n, mean=mean, sem=sem))
    return out


def histogram_shares(values: ArrayLike, edges: Sequence[float]) -> list[float]:
    """Share of ``values`` in each bin ``[edges[i], edges[i+1])``; the last bin is closed.

    Values outside ``[edges[0], edges[-1]]`` are not counted. With no values every
    share is 0.

    Examples:
        >>> histogram_shares([0.0, 0.5, 1.0, 1.0], [0.0, 0.5, 1.0])
        [0.25, 0.75]
    """
    array = _as_1d(values)
    counts, _ = np.histogram(array, bins=np.asarray(edges, dtype=np.float64))
    if array.size == 0:
        return [0.0] * int(counts.size)
    return [float(c) / array.size for c in counts]
