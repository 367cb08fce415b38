"""Statistics against known cases: bootstrap intervals, paired bootstrap, permutation tests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.stats import (
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
