"""Conventions that change a number without saying so get counted where the numbers are shown.

- LIS and Kendall are 1.0 for an item with fewer than two matched pairs (the paper's
  convention: the order is undefined). Missing and step-less items therefore carry LIS 1.0,
  which raises the LIS column: ``n_order_undefined`` says how many items did.
- crystal-metrics 0.2.0 credits a blank answer against a free-text gold (its substring
  fallback finds ``""`` everywhere); compat answer rules reproduce it as ``compat_blank``,
  counted in ``n_compat_blank``. Paper rules call the same answer missing.
"""

from __future__ import annotations

from pathlib import Path

from crystalbench.config.scoring import ScoreConfig
from crystalbench.report import build_report, leaderboard_rows, load_run
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item

ITEMS = [
    make_item("two", ["The bar for May is 40.", "The bar for June is 55."], answer="15"),
    make_item("one", ["The capital is Paris."], answer="Paris", source="realworldqa"),
    make_item("gone", ["A step.", "Another step."], answer="3"),
    make_item("empty", ["Count the dots.", "There are five."], answer="5"),
]

PREDICTIONS = [
    # two matches: the order is defined
    Prediction(
        id="two",
        reasoning_steps=["The bar for May is 40.", "The bar for June is 55."],
        answer="15",
    ),
    # a structured record with a blank answer; one match only
    Prediction(id="one", reasoning_steps=["The capital is Paris."], answer=""),
    # "gone" has no prediction; "empty" answers without a step
    Prediction(id="empty", reasoning_steps=[], answer="5"),
]


def _run(tmp_path: Path, **config: object) -> object:
    bench = make_benchmark(ITEMS)
    return evaluate(bench, PREDICTIONS, HASH_CONFIG.model_copy(update=config), out_dir=tmp_path)


def test_items_with_fewer_than_two_matches_are_counted(tmp_path: Path) -> None:
    run = _run(tmp_path)
    by_id = {item.id: item for item in run.items}
    undefined = [item.id for item in run.items if len(item.matches) < 2]
    assert sorted(undefined) == ["empty", "gone", "one"]
    # the convention itself: LIS 1.0 for each of them, although two of them score F1 0
    assert all(by_id[i].lis == 1.0 for i in undefined)
    assert by_id["gone"].f1 == by_id["empty"].f1 == 0.0
    assert run.summary.n_order_undefined == 3
    assert run.summary.by_source["plotqa"].n_order_undefined == 2
    row = leaderboard_rows([load_run(tmp_path)], n_resamples=10)[0]
    assert row.n_order_undefined == 3


def test_the_report_says_the_order_convention_raised_lis(tmp_path: Path) -> None:
    _run(tmp_path / "run")
    page = build_report([tmp_path / "run"], tmp_path / "report.html").read_text()
    assert '"n_order_undefined":3' in page
    assert "by the paper's convention" in page


def test_a_blank_answer_is_credited_and_counted_only_under_crystal_metrics_rules(
    tmp_path: Path,
) -> None:
    paper = _run(tmp_path / "paper")
    one = next(item for item in paper.items if item.id == "one")
    assert (one.answer_correct, one.answer_rule) == (False, "missing")
    assert paper.summary.n_compat_blank == 0

    compat = _run(tmp_path / "compat", answer_rules="crystal-metrics-0.2")
    one = next(item for item in compat.items if item.id == "one")
    assert (one.answer_correct, one.answer_rule) == (True, "compat_blank")
    assert compat.summary.n_compat_blank == 1
    # a missing prediction stays missing: crystal-metrics never sees one
    gone = next(item for item in compat.items if item.id == "gone")
    assert gone.answer_rule == "missing"
    assert ScoreConfig(answer_rules="crystal-metrics-0.2").answer_rules != "paper"
