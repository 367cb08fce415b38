"""Statistics against known cases: bootstrap intervals, paired bootstrap, permutation tests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.statistics.intervals import (
    binned_means,
    bootstrap_ci,
    bootstrap_cis,
    compare_paired,
    group_means,
    histogram_shares,
    holm,
    length_bins,
    paired_bootstrap,
    paired_permutation,
    paired_test,
)

# --------------------------------------------------------------------------- bootstrap intervals


def test_interval_of_a_constant_is_degenerate():
    ci = bootstrap_ci([0.42] * 50, n_resamples=500, seed=3)
    assert (ci.estimate, ci.low, ci.high) == (0.42, 0.42, 0.42)
    assert ci.n == 50


def test_interval_of_two_values_spans_both():
    # Resampling two items gives means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4,
    # so the 2.5% and 97.5% quantiles are 0 and 1.
    ci = bootstrap_ci([0.0, 1.0], n_resamples=4000, seed=0)
    assert (ci.estimate, ci.low, ci.high) == (0.5, 0.0, 1.0)


def test_single_item_and_empty_input():
    one = bootstrap_ci([0.3])
    assert (one.estimate, one.low, one.high, one.n) == (0.3, 0.3, 0.3, 1)
    none = bootstrap_ci([])
    assert (none.estimate, none.low, none.high, none.n) == (0.0, 0.0, 0.0, 0)


def test_intervals_are_seeded_and_reproducible():
    values = np.random.default_rng(1).random(80)
    first = bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7) == first
    assert bootstrap_ci(values, seed=8) != first


def test_coverage_on_a_known_distribution():
    """About 95% of intervals from normal samples contain the true mean."""
    rng = np.random.default_rng(2024)
    trials, hits = 200, 0
    for trial in range(trials):
        sample = rng.normal(0.5, 0.2, size=60)
        ci = bootstrap_ci(sample, n_resamples=400, seed=trial)
        hits += ci.low <= 0.5 <= ci.high
    coverage = hits / trials
    # Percentile intervals undercover slightly at n = 60; 95% +- 3.5 binomial s.e.
    assert 0.88 <= coverage <= 0.99, coverage


def test_interval_width_matches_the_normal_approximation():
    sample = np.random.default_rng(5).normal(0.0, 1.0, size=400)
    ci = bootstrap_ci(sample, n_resamples=2000, seed=1)
    expected = 2 * 1.96 * sample.std(ddof=1) / np.sqrt(sample.size)
    assert (ci.high - ci.low) == pytest.approx(expected, rel=0.12)


def test_all_columns_share_the_same_resampled_items():
    x = np.random.default_rng(3).random(50)
    cis = bootstrap_cis({"x": x, "twice": 2 * x, "const": np.ones(50)}, n_resamples=300, seed=4)
    assert cis["twice"].low == pytest.approx(2 * cis["x"].low)
    assert cis["twice"].high == pytest.approx(2 * cis["x"].high)
    assert (cis["const"].low, cis["const"].high) == (1.0, 1.0)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="different lengths"):
        bootstrap_cis({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([0.1, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci([0.1, 0.2], n_resamples=0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.integers(0, 99))
def test_interval_brackets_the_estimate(values, seed):
    ci = bootstrap_ci(values, n_resamples=60, seed=seed)
    assert min(values) - 1e-12 <= ci.low <= ci.estimate <= ci.high <= max(values) + 1e-12


# --------------------------------------------------------------------------- paired bootstrap


def test_identical_runs_give_p_one():
    values = np.random.default_rng(0).random(100)
    delta, low, high, p = paired_bootstrap(values, values.copy())
    assert (delta, low, high, p) == (0.0, 0.0, 0.0, 1.0)


def test_clearly_shifted_run_gives_small_p_and_interval_around_the_shift():
    rng = np.random.default_rng(11)
    a = rng.random(200)
    b = a + 0.2 + rng.normal(0, 0.05, size=200)
    _delta, low, high, p = paired_bootstrap(a, b, n_resamples=1000, seed=2)
    assert low < 0.2 < high
    assert low > 0.15
    assert p <= 2 / 1001


def test_noise_only_difference_is_not_significant():
    rng = np.random.default_rng(12)
    a = rng.random(300)
    b = a + rng.normal(0, 0.1, size=300)
    b -= b.mean() - a.mean()  # exactly no mean difference
    _, low, high, p = paired_bootstrap(a, b, seed=1)
    assert low < 0 < high
    assert p > 0.5


def test_paired_bootstrap_constant_shift():
    delta, low, high, p = paired_bootstrap([0.1, 0.2, 0.3], [0.3, 0.4, 0.5], n_resamples=99)
    assert delta == pytest.approx(0.2)
    assert low == pytest.approx(0.2)
    assert high == pytest.approx(0.2)
    assert p == pytest.approx(1 / 100)


def test_paired_bootstrap_length_mismatch_raises():
    with pytest.raises(ValueError, match="equal lengths"):
        paired_bootstrap([1, 2], [1, 2, 3])


# --------------------------------------------------------------------------- permutation test


def test_permutation_exact_tiny_case_enumerated_by_hand():
    # d = (1, 2, 3): sum 6. Of the 8 sign patterns only +++ (6) and --- (-6) reach |6|.
    delta, p, exact, patterns = paired_permutation([0, 0, 0], [1, 2, 3])
    assert (delta, p, exact, patterns) == (2.0, 0.25, True, 8)


def test_permutation_exact_mixed_signs_by_hand():
    # d = (1, -1, 2), |sum| = 2. Sign patterns on (1, -1, 2):
    # +++ 2, ++- -2, +-+ 4, +-- 0, -++ 0, -+- -4, --+ 2, --- -2 -> 6 of 8 reach |2|.
    _, p, exact, _ = paired_permutation([0, 1, 0], [1, 0, 2])
    assert exact
    assert p == 0.75


def test_permutation_ignores_items_without_difference():
    _, p, exact, patterns = paired_permutation([0, 0, 0, 5, 7], [1, 2, 3, 5, 7])
    assert (p, exact, patterns) == (0.25, True, 8)


def test_permutation_on_accuracy_is_exact_mcnemar():
    # Six discordant items, all won by B: two-sided p = 2 / 2**6.
    _, p, exact, _ = paired_permutation([0] * 6 + [1] * 10, [1] * 6 + [1] * 10)
    assert exact
    assert p == 2 / 64


def test_permutation_identical_runs():
    assert paired_permutation([0.3, 0.6], [0.3, 0.6]) == (0.0, 1.0, True, 1)


def test_permutation_monte_carlo_agrees_with_exact():
    rng = np.random.default_rng(9)
    a = rng.random(12)
    b = a + rng.normal(0.08, 0.2, size=12)
    _, exact_p, exact, _ = paired_permutation(a, b)
    _, mc_p, mc_exact, n = paired_permutation(a, b, n_permutations=20000, exact_max_nonzero=0)
    assert exact
    assert not mc_exact
    assert n == 20000
    assert mc_p == pytest.approx(exact_p, abs=0.015)


def test_permutation_brute_force_matches_enumeration():
    d = np.array([0.3, -0.1, 0.25, 0.05, -0.2])
    observed = abs(d.sum())
    count = sum(
        abs(np.dot(signs, d)) >= observed - 1e-12
        for signs in itertools.product((1, -1), repeat=d.size)
    )
    _, p, _, _ = paired_permutation(np.zeros(5), d)
    assert p == count / 2**5


def test_monte_carlo_shifted_run_small_p():
    rng = np.random.default_rng(4)
    a = rng.random(500)
    _, p, exact, _ = paired_permutation(a, a + 0.1, n_permutations=999)
    assert not exact
    assert p == 1 / 1000


# --------------------------------------------------------------------------- combined


def test_paired_test_record():
    test = paired_test([0.2, 0.4, 0.6, 0.8], [0.2, 0.4, 0.6, 0.8])
    assert test.delta == 0.0
    assert test.p_bootstrap == 1.0
    assert test.p_permutation == 1.0
    assert test.n_differing == 0
    assert test.mean_a == test.mean_b == pytest.approx(0.5)


def test_compare_paired_groups_by_hand():
    a = {"f1": [0.0, 0.5, 1.0, 0.2], "acc": [0, 1, 1, 0]}
    b = {"f1": [0.5, 0.5, 1.0, 0.6], "acc": [1, 1, 1, 0]}
    result = compare_paired(a, b, groups=["x", "y", "y", "x"], n_resamples=200)
    assert result.n == 4
    assert result.metrics["f1"].delta == pytest.approx((0.5 + 0.4) / 4)
    assert list(result.by_group) == ["x", "y"]
    assert result.by_group["x"]["f1"].delta == pytest.approx(0.45)
    assert result.by_group["x"]["acc"].delta == pytest.approx(0.5)
    assert result.by_group["y"]["f1"].delta == 0.0
    assert result.by_group["y"]["acc"].p_permutation == 1.0


def test_compare_paired_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="metrics differ"):
        compare_paired({"f1": [1.0]}, {"acc": [1.0]})
    with pytest.raises(ValueError, match="labels"):
        compare_paired({"f1": [1.0, 0.0]}, {"f1": [1.0, 0.0]}, groups=["a"])


def test_holm_by_hand():
    # Sorted: 0.01 * 3 = 0.03; 0.02 * 2 = 0.04; 0.2 * 1 = 0.2.
    assert holm([0.2, 0.01, 0.02]) == [0.2, 0.03, 0.04]
    assert holm([0.5, 0.6]) == [1.0, 1.0]


# --------------------------------------------------------------------------- breakdowns


def test_group_means_and_bins_by_hand():
    assert group_means([1.0, 0.0, 0.5, 0.5], ["b", "a", "b", "a"]) == {
        "a": (2, 0.25),
        "b": (2, 0.75),
    }
    bins = length_bins([1, 6, 9])
    assert [label for _, _, label in bins] == ["1-5", "6-8", "9+"]
    result = binned_means([3, 5, 6, 20], [0.2, 0.4, 1.0, 0.0], bins)
    assert [(b.n, b.mean) for b in result] == [(2, pytest.approx(0.3)), (1, 1.0), (1, 0.0)]
    assert result[0].sem == pytest.approx(np.std([0.2, 0.4], ddof=1) / np.sqrt(2))
    assert result[1].sem is None


def test_histogram_shares_by_hand():
    assert histogram_shares([0.05, 0.15, 0.15, 1.0], [0.0, 0.1, 0.2, 1.0]) == [0.25, 0.5, 0.25]
    assert histogram_shares([], [0.0, 0.5, 1.0]) == [0.0, 0.0]


def test_compare_paired_resamples_metrics_together_like_single_tests():
    rng = np.random.default_rng(6)
    a = {"f1": rng.random(40), "acc": rng.integers(0, 2, 40).astype(float)}
    b = {"f1": rng.random(40), "acc": rng.integers(0, 2, 40).astype(float)}
    joint = compare_paired(a, b, n_resamples=300, seed=5)
    for name in ("f1", "acc"):
        single = paired_test(a[name], b[name], n_resamples=300, seed=5)
        # Same resampled items; only float rounding of the matrix product may differ.
        assert joint.metrics[name].model_dump() == pytest.approx(single.model_dump(), rel=1e-12)


# --------------------------------------------------------------------------- parity


def _hand_written_bootstrap(matrix: np.ndarray, n_resamples: int, confidence: float, seed: int):
    """The bootstrap crystalbench used before it moved onto scipy: resampled rows turned
    into counts, every column averaged by one matrix product, in chunks of 4M draws."""
    rng = np.random.default_rng(seed)
    n, k = matrix.shape
    out = np.empty((n_resamples, k))
    chunk = max(1, 4_000_000 // n)
    for start in range(0, n_resamples, chunk):
        size = min(n_resamples, start + chunk) - start
        rows = rng.integers(0, n, size=(size, n)) + np.arange(size)[:, None] * n
        counts = np.bincount(rows.ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = (counts @ matrix) / n
    tail = (1 - confidence) / 2
    return out, np.quantile(out, tail, axis=0), np.quantile(out, 1 - tail, axis=0)


@pytest.mark.parametrize("n", [40, 6372])
def test_intervals_match_the_former_hand_written_bootstrap(n):
    """scipy draws the same rows from the same seed: the numbers did not move (only float
    rounding of the means), at the sample's size and at CRYSTAL's (several batches)."""
    rng = np.random.default_rng(n)
    columns = {"f1": rng.random(n), "acc": rng.integers(0, 2, n).astype(float)}
    cis = bootstrap_cis(columns, n_resamples=300, seed=11)
    _, low, high = _hand_written_bootstrap(np.stack(list(columns.values()), 1), 300, 0.95, 11)
    for index, name in enumerate(columns):
        assert cis[name].low == pytest.approx(low[index], abs=1e-12)
        assert cis[name].high == pytest.approx(high[index], abs=1e-12)


def test_paired_bootstrap_matches_the_former_hand_written_one():
    rng = np.random.default_rng(3)
    a = rng.random(500)
    b = np.clip(a + rng.normal(0.02, 0.1, 500), 0, 1)
    delta, low, high, p = paired_bootstrap(a, b, n_resamples=400, seed=5)
    samples, lo, hi = _hand_written_bootstrap((b - a)[:, None], 400, 0.95, 5)
    extreme = np.abs(samples[:, 0] - delta) >= abs(delta) - 1e-9
    assert (low, high) == (pytest.approx(lo[0], abs=1e-12), pytest.approx(hi[0], abs=1e-12))
    assert p == (1 + extreme.sum()) / 401


def test_bootstrap_equals_scipy_called_directly():
    from scipy import stats as scipy_stats

    values = np.random.default_rng(8).random(120)
    ci = bootstrap_ci(values, n_resamples=500, confidence=0.9, seed=2)
    direct = scipy_stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=500,
        confidence_level=0.9,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert (ci.low, ci.high) == (pytest.approx(direct.low), pytest.approx(direct.high))


def _scipy_sign_flip(d: np.ndarray, n_resamples: int, seed: int) -> float:
    from scipy import stats as scipy_stats

    return float(
        scipy_stats.permutation_test(
            (d,),
            lambda x, axis: np.abs(np.sum(x, axis=axis)),
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_resamples,
            alternative="greater",
            rng=np.random.default_rng(seed),
        ).pvalue
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_permutation_equals_scipy_permutation_test(seed):
    """Our sign-flip test is scipy's permutation_test with permutation_type="samples" on the
    non-zero differences (kept for speed, see the module docstring)."""
    rng = np.random.default_rng(seed)
    a = rng.random(30)
    b = a.copy()
    changed = rng.choice(30, size=10, replace=False)
    b[changed] += rng.normal(0.05, 0.2, size=10)
    _, p, exact, patterns = paired_permutation(a, b)
    assert exact
    assert patterns == 2**10
    d = (b - a)[b != a]
    assert p == pytest.approx(_scipy_sign_flip(d, n_resamples=2**10, seed=0), abs=1e-12)


def test_monte_carlo_permutation_agrees_with_scipy_within_noise():
    rng = np.random.default_rng(22)
    a = rng.random(400)
    b = a + rng.normal(0.0, 0.15, 400)
    _, ours, exact, n = paired_permutation(a, b, n_permutations=4000, seed=3)
    theirs = _scipy_sign_flip(b - a, n_resamples=4000, seed=3)
    assert not exact
    # Two independent Monte Carlo estimates of one p-value: within 5 binomial s.e.
    se = np.sqrt(2 * theirs * (1 - theirs) / n)
    assert 0.05 < theirs < 0.95  # a p-value away from the edges, where noise is largest
    assert abs(ours - theirs) <= 5 * se


def test_holm_equals_statsmodels_and_a_hand_computation():
    from statsmodels.stats.multitest import multipletests

    p = [0.04, 0.001, 0.03, 0.2, 0.012]
    # Sorted 0.001, 0.012, 0.03, 0.04, 0.2 times 5, 4, 3, 2, 1, then running maxima.
    assert holm(p) == [0.09, 0.005, 0.09, 0.2, 0.048]
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert holm([]) == []
