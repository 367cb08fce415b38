"""The metrics table: one declaration that the records, aggregator, loader and tables follow."""

from __future__ import annotations

import numpy as np
import pytest

from crystalbench.metrics import (
    COUNTS,
    LEADERBOARD,
    LEADERBOARD_KEYS,
    METRIC,
    METRICS,
    PAPER_TABLE_COUNTS,
    TABLE_COUNTS,
    format_value,
    metric,
)
from crystalbench.report import TABLE2, RunData
from crystalbench.report.leaderboard import METRIC_KEYS
from crystalbench.scoring.evaluation import Aggregator, evaluate
from crystalbench.types import ChainScore, ItemResult, MetricSummary, Prediction, RunSummary
from fakes import HASH_CONFIG, make_benchmark, make_item


def test_every_summary_number_is_declared_once():
    """Each MetricSummary field is a metric or a count of the table, and nothing else."""
    declared = [m.key for m in METRICS] + [c.key for c in COUNTS]
    assert len(declared) == len(set(declared))
    assert set(declared) == set(MetricSummary.model_fields)


def test_every_metric_reads_a_per_item_field():
    for declared in METRICS:
        assert declared.item_field in ItemResult.model_fields, declared.key
    # The mapping the loader used to keep to itself now lives in the table.
    assert METRIC["match_f1"].item_field == "f1"
    assert METRIC["steps"].item_field == "n_pred"
    assert METRIC["accuracy"].item_field == "answer_correct"
    assert METRIC["accuracy"].average == "share_true"


def test_chain_fields_are_declared_in_chain_score_and_shared_by_item_result():
    chain = list(ChainScore.model_fields)
    item = list(ItemResult.model_fields)
    assert item[item.index("n_pred") : item.index("n_pred") + len(chain)] == chain
    assert item[:6] == ["schema_version", "id", "source", "difficulty", "missing", "parse_status"]
    for name in chain:  # declared once: the same FieldInfo, docstring included
        assert (
            ItemResult.model_fields[name].description == ChainScore.model_fields[name].description
        )


def test_table2_is_the_paper_order_and_the_leaderboard_reads_it():
    assert LEADERBOARD_KEYS == (
        "accuracy",
        "match_f1",
        "precision",
        "recall",
        "steps",
        "lis",
        "ordered_f1",
    )
    assert TABLE2 == LEADERBOARD
    assert METRIC_KEYS == LEADERBOARD_KEYS
    assert METRIC["steps"].higher_is_better is None  # never bolded
    assert not METRIC["kendall"].leaderboard
    assert [c.key for c in TABLE_COUNTS] == ["n_items", "n_no_steps", "n_missing", "n_parse_failed"]
    # The Markdown and LaTeX leaderboards show what the terminal shows (issue 30).
    assert [c.key for c in PAPER_TABLE_COUNTS] == [
        "n_items",
        "n_no_steps",
        "n_missing",
        "n_parse_failed",
    ]
    assert [c.key for c in PAPER_TABLE_COUNTS] == [c.key for c in TABLE_COUNTS]


def test_bounds_hold_on_a_scored_run():
    bench = make_benchmark(
        [
            make_item(1, ["The bar for 2019 is the tallest.", "So the answer is 2019."]),
            make_item(2, ["Count the red circles.", "There are four."], answer="4"),
            make_item(3, ["Read the y-axis label."]),
        ]
    )
    preds = [
        Prediction(id="1", reasoning_steps=["So the answer is 2019.", "The 2019 bar is tallest."]),
        Prediction(id="2", answer="4"),
    ]
    run = evaluate(bench, preds, HASH_CONFIG)
    for declared in METRICS:
        values = [declared.item_value(item) for item in run.items]
        assert min(values) >= declared.low, declared.key
        if declared.high is not None:
            assert max(values) <= declared.high, declared.key
        # The summary value is the macro mean of the per-item values the loader reads.
        assert getattr(run.summary, declared.key) == pytest.approx(np.mean(values))


def test_loader_values_follow_the_table(tmp_path):
    bench = make_benchmark([make_item(1, ["Read the axis."]), make_item(2, ["Count bars."])])
    preds = [Prediction(id="1", reasoning_steps=["Read the axis."], answer="3")]
    run = evaluate(bench, preds, HASH_CONFIG)
    data = RunData(name="x", path=tmp_path, summary=run.summary, items=run.items)
    assert data.values("accuracy").tolist() == [1.0, 0.0]
    assert data.values("steps").tolist() == [1.0, 0.0]
    assert data.values("match_f1").tolist() == [1.0, 0.0]
    with pytest.raises(KeyError, match="valid: accuracy, match_f1"):
        data.values("bleu")


def test_aggregator_is_driven_by_the_table():
    aggregator = Aggregator()
    assert set(aggregator.values) == {m.key for m in METRICS}
    summary = aggregator.summary({})
    assert isinstance(summary, RunSummary)
    assert summary.n_items == 0


def test_format_value_and_lookup():
    assert format_value(0.12345, METRIC["accuracy"].number_format) == "12.35"
    assert format_value(7.349, METRIC["steps"].number_format) == "7.35"
    assert format_value(0.6666, METRIC["lis"].number_format) == "0.667"
    with pytest.raises(KeyError, match="unknown metric 'f1'"):
        metric("f1")
