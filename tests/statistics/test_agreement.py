"""The agreement statistics of crystalbench.statistics.agreement, pinned against written-out
formulas,
published values and independent computations with the libraries (other input layouts)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("statsmodels")
krippendorff = pytest.importorskip("krippendorff")

from crystalbench.statistics.agreement import (  # noqa: E402
    ABSTENTIONS,
    binary_kappa,
    bootstrap_interval,
    cohen_kappa,
    kappa_of_table,
    krippendorff_alpha,
    rater_agreement,
    wilson_interval,
)


def hand_kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen (1960), written out: observed agreement against chance from both marginals."""
    n = len(first)
    labels = set(first) | set(second)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    chance = sum((first.count(c) / n) * (second.count(c) / n) for c in labels)
    return None if chance == 1 else (observed - chance) / (1 - chance)


labels_strategy = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1, max_size=40
)


@given(labels_strategy)
@settings(max_examples=200, deadline=None)
def test_cohen_kappa_is_the_written_out_formula(pairs):
    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    expected = hand_kappa(first, second)
    value = cohen_kappa(first, second)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected, abs=1e-12)


def test_cohen_kappa_agrees_with_scikit_learn():
    """An independent implementation, where it is installed."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randrange(5, 60)
        first = [rng.choice("xyz") for _ in range(n)]
        second = [x if rng.random() < 0.6 else rng.choice("xyz") for x in first]
        if len(set(first) | set(second)) < 2:
            continue
        assert cohen_kappa(first, second) == pytest.approx(
            sklearn_metrics.cohen_kappa_score(first, second), abs=1e-12
        )


def test_binary_kappa_of_booleans_equals_the_table_and_the_labels():
    matcher = [True] * 53 + [False] * 47
    people = [True] * 37 + [False] * 63  # the paper's Table 3: TP 37, FP 16, FN 0, TN 47
    value = cohen_kappa(matcher, people)
    assert value == pytest.approx(binary_kappa(37, 16, 0, 47))
    assert value == pytest.approx(kappa_of_table([[37, 16], [0, 47]]))
    as_text = ["m" if x else "n" for x in matcher], ["m" if x else "n" for x in people]
    assert value == pytest.approx(cohen_kappa(*as_text))
    assert round(value, 3) == 0.685


def test_cohen_kappa_refuses_sequences_of_different_lengths():
    with pytest.raises(ValueError, match="2 labels against 1"):
        cohen_kappa(["a", "b"], ["a"])


def test_krippendorff_alpha_of_krippendorffs_own_example():
    """The nominal reliability data of Krippendorff (2011), 4 coders x 12 units: 0.743."""
    nan = math.nan
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    units = [
        [str(int(coder[u])) for coder in coders if not math.isnan(coder[u])] for u in range(12)
    ]
    assert round(krippendorff_alpha(units), 3) == 0.743


def test_krippendorff_alpha_is_undefined_without_pairs_or_variety():
    assert krippendorff_alpha([["match"], ["no_match"]]) is None
    assert krippendorff_alpha([["match", "match"]] * 3) is None


def random_ratings(seed: int, n_units: int = 40, raters: str = "abcd") -> dict:
    rng = random.Random(seed)
    ratings = {}
    for unit in range(n_units):
        truth = rng.choice(["match", "no_match"])
        labels = {}
        for rater in raters:
            x = rng.random()
            if x < 0.15:
                continue  # did not label this unit
            if x < 0.25:
                labels[rater] = "unsure"
            elif x < 0.45:
                labels[rater] = "no_match" if truth == "match" else "match"
            else:
                labels[rater] = truth
        ratings[f"u{unit:03d}"] = labels
    return ratings


@pytest.mark.parametrize("seed", range(6))
def test_rater_agreement_equals_the_library_on_reliability_data(seed):
    """alpha from the raters x units matrix with abstentions and gaps as NaN (the other input
    layout of the krippendorff package), kappa of each pair from the written-out formula."""
    ratings = random_ratings(seed)
    report = rater_agreement(ratings, n_resamples=0)
    raters = sorted({r for unit in ratings.values() for r in unit})
    code = {"match": 1.0, "no_match": 0.0}
    data = np.array(
        [[code.get(ratings[u].get(r, ""), np.nan) for u in sorted(ratings)] for r in raters]
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert report.krippendorff_alpha == pytest.approx(expected, abs=1e-12)
    assert report.n_abstained == sum(
        label in ABSTENTIONS for unit in ratings.values() for label in unit.values()
    )
    for pair in report.pairwise:
        both = [
            (unit[pair.a], unit[pair.b])
            for unit in ratings.values()
            if unit.get(pair.a) in code and unit.get(pair.b) in code
        ]
        assert pair.n == len(both)
        expected_kappa = hand_kappa([x for x, _ in both], [y for _, y in both])
        assert pair.cohen_kappa == pytest.approx(expected_kappa, abs=1e-12)
    kappas = [p.cohen_kappa for p in report.pairwise if p.cohen_kappa is not None]
    assert report.mean_pairwise_kappa == pytest.approx(sum(kappas) / len(kappas))
    assert report.cohen_kappa is None  # four raters: no single pair is the headline


def test_rater_agreement_does_not_depend_on_the_order_of_units():
    ratings = random_ratings(11)
    shuffled = list(ratings.items())
    random.Random(1).shuffle(shuffled)
    first = rater_agreement(ratings, n_resamples=200, seed=3)
    second = rater_agreement(dict(shuffled), n_resamples=200, seed=3)
    assert first.model_dump() == second.model_dump()
    assert first.alpha_interval is not None
    assert first.alpha_interval.low < first.krippendorff_alpha < first.alpha_interval.high
    other_seed = rater_agreement(ratings, n_resamples=200, seed=4)
    assert other_seed.alpha_interval != first.alpha_interval


def test_rater_agreement_of_two_raters_and_of_one():
    ratings = {
        "p1": {"ann": "match", "bob": "match"},
        "p2": {"ann": "match", "bob": "no_match"},
        "p3": {"ann": "no_match", "bob": "no_match"},
        "p4": {"ann": "no_match", "bob": "no_match"},
    }
    two = rater_agreement(ratings, n_resamples=0)
    assert two.cohen_kappa == pytest.approx(0.5)  # p_o 3/4, p_e 1/2
    assert two.mean_pairwise_kappa == pytest.approx(0.5)
    assert two.alpha_interval is None
    one = rater_agreement({k: {"ann": v["ann"]} for k, v in ratings.items()}, n_resamples=50)
    assert one.krippendorff_alpha is None
    assert one.pairwise == []
    assert "one annotator" in (one.note or "")


def test_an_interval_counts_resamples_where_the_statistic_is_undefined():
    values = np.array([0.0, 0.0, 0.0, 1.0])

    def mean_unless_constant(indices: np.ndarray) -> float:
        sample = values[indices]
        return math.nan if sample.min() == sample.max() else float(sample.mean())

    interval = bootstrap_interval(4, mean_unless_constant, n_resamples=400, seed=0)
    assert interval is not None
    # (3/4)^4 of resamples hold only zeros: about 127 of 400
    assert 90 < interval.n_undefined < 170
    assert 0.25 <= interval.low <= interval.high <= 0.75


def test_wilson_interval_is_the_written_out_formula():
    z = 1.959963984540054
    for count, n in [(84, 100), (0, 8), (8, 8), (3, 17)]:
        p = count / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        low, high = wilson_interval(count, n)
        assert (low, high) == pytest.approx((centre - half, centre + half), abs=1e-12)
