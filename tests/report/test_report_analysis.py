"""The report's numbers (report/analysis.py), computed apart from the HTML that shows them."""

from __future__ import annotations

import numpy as np
import pytest

import crystalbench.report.html as html_module
from crystalbench.report import RunData
from crystalbench.report.analysis import (
    FAILURE_LISTS,
    distributions,
    failure_lists,
    group_breakdown,
    group_order,
    quadrants,
    reference_steps_histogram,
)
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item

ITEMS = [
    make_item(
        "a",
        ["The bar for 2019 is the tallest.", "It reaches 42 units.", "So the answer is 42."],
        answer="42",
        source="plotqa",
        difficulty="easy",
    ),
    make_item(
        "b",
        ["The circle is inside the square.", "The square has side 4."],
        answer="4",
        source="mathvision",
        difficulty="hard",
    ),
    make_item("c", ["The light is red."], answer="no", source="realworldqa", difficulty="easy"),
    make_item("d", ["Count the apples.", "There are five."], answer="5", difficulty="medium"),
]

PREDICTIONS = [
    # right answer, sound reasoning (F1 1), but out of order
    Prediction(
        id="a",
        reasoning_steps=[
            "It reaches 42 units.",
            "The bar for 2019 is the tallest.",
            "So the answer is 42.",
        ],
        answer="42",
    ),
    # right answer, no reasoning at all
    Prediction(id="b", reasoning_steps=[], answer="4"),
    # wrong answer, sound reasoning
    Prediction(id="c", reasoning_steps=["The light is red."], answer="yes"),
    # d: missing
]


@pytest.fixture
def run(tmp_path) -> RunData:
    scored = evaluate(make_benchmark(ITEMS), PREDICTIONS, HASH_CONFIG)
    return RunData(name="m", path=tmp_path, summary=scored.summary, items=scored.items)


def test_failure_lists(run):
    lists = failure_lists(run, weak_f1=0.3, sound_f1=0.7)
    assert set(lists) == set(FAILURE_LISTS)
    ids = {key: [run.items[k].id for k in positions] for key, positions in lists.items()}
    assert ids == {
        "weak_reasoning": ["b"],
        "sound_wrong": ["c"],
        "no_steps": ["b"],
        "parse_failed": [],
        "missing": ["d"],
        "out_of_order": ["a"],
    }


def test_quadrants_count_every_item_once(run):
    counts = quadrants(run, weak_f1=0.3, sound_f1=0.7)
    assert counts["right_sound"] == 1  # a
    assert counts["right_weak"] == 1  # b
    assert counts["wrong_sound"] == 1  # c
    assert counts["wrong_weak"] == 1  # d: missing counts as wrong, F1 0
    assert sum(counts.values()) == len(run.items)


def test_group_breakdown_means_and_counts(run):
    tiers = group_breakdown(run, "difficulty", n_resamples=20, confidence=0.9, seed=0)
    assert list(tiers) == ["easy", "medium", "hard"]
    easy = tiers["easy"]
    assert (easy.n, easy.n_missing, easy.n_no_steps, easy.n_parse_failed) == (2, 0, 0, 0)
    assert easy.metrics["match_f1"].estimate == pytest.approx(1.0)
    assert easy.metrics["accuracy"].estimate == pytest.approx(0.5)
    assert tiers["hard"].n_no_steps == 1
    assert tiers["medium"].n_missing == 1
    sources = group_breakdown(run, "source", n_resamples=20, confidence=0.9, seed=0)
    assert list(sources) == ["mathvision", "plotqa", "realworldqa"]
    assert sources["plotqa"].metrics["lis"].estimate < 1.0  # a's scrambled chain


def test_group_order():
    assert group_order(["hard", "x-large", "easy"], "difficulty") == ["easy", "hard", "x-large"]


def test_distributions_and_reference_lengths(run):
    shown = distributions(run)
    assert shown.steps.n == 4
    assert shown.steps.mean == pytest.approx((3 + 0 + 1 + 0) / 4)
    assert sum(shown.steps.shares) == pytest.approx(1.0)
    assert shown.lis.n == 1  # only a has two matches or more
    assert shown.f1_by_length[0].n == 4  # every chain has 1-5 steps
    refs = reference_steps_histogram([run, run])  # each item once, not once per run
    assert refs.n == 4
    assert refs.mean == pytest.approx(np.mean([3, 2, 1, 2]))


def test_the_html_module_computes_no_statistic():
    for name in ("bootstrap_cis", "binned_means", "histogram_shares", "compare_paired"):
        assert not hasattr(html_module, name), name
