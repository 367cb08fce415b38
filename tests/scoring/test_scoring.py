"""End-to-end scoring: evaluate() on hand-made benchmarks, the sample and the real encoder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.loading import Benchmark, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import EmbeddingStore, HashEncoder, OneHotEncoder
from crystalbench.errors import InputError
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import BenchmarkItem, ItemResult, Prediction, RunSummary
from fakes import CountingEncoder

HASH = ScoreConfig(encoder="hash", use_cache=False)


def _bench(items):
    return Benchmark(name="t", items=items)


def _item(i, steps, answer="3", source="plotqa", **extra):
    return BenchmarkItem(
        id=str(i),
        source=source,
        question=f"How many bars are there in chart {i}?",
        answer=answer,
        reference_steps=steps,
        **extra,
    )


def test_golden_item_through_the_whole_pipeline():
    """A hand-built embedding table gives exact, hand-computed item metrics."""
    c = 0.35
    s = np.sqrt(1 - c * c)
    table = {
        "r0": [1, 0, 0, 0],
        "r1": [0, 1, 0, 0],
        "r2": [0, 0, 1, 0],
        "p_r1": [0, 1, 0, 0],  # exact copy of r1
        "p_r0_edge": [c, 0, 0, s],  # cosine 0.35 with r0: matches in paper mode only
        "p_noise": [0, 0, 0, 1],
    }
    bench = _bench([_item(0, ["r0", "r1", "r2"])])
    pred = Prediction(id="0", reasoning_steps=["p_r1", "p_r0_edge", "p_noise"], answer="3")
    paper = evaluate(bench, [pred], HASH, encoder=OneHotEncoder(table)).items[0]
    assert paper.matches[0][:2] == (0, 1)
    assert sorted(m[:2] for m in paper.matches) == [(0, 1), (1, 0)]
    assert paper.precision == pytest.approx(2 / 3)
    assert paper.recall == pytest.approx(2 / 3)
    assert paper.f1 == pytest.approx(2 / 3)
    # Reference order (r0 <- p1, r1 <- p0): Q = [1, 0], LIS 1/2.
    assert paper.lis == 0.5
    assert paper.ordered_f1 == pytest.approx((2 / 3) * (0.7 + 0.3 * 0.5))
    assert len(paper.out_of_order) == 1
    assert paper.answer_correct is True

    compat = evaluate(
        bench,
        [pred],
        ScoreConfig(encoder="hash", use_cache=False, compat="crystal-metrics-0.2"),
        encoder=OneHotEncoder(table),
    ).items[0]
    assert [m[:2] for m in compat.matches] == [(0, 1)]
    assert compat.f1 == pytest.approx(1 / 3)


def test_missing_predictions_score_zero_and_are_counted():
    bench = _bench([_item(i, ["one step", "two step"]) for i in range(4)])
    preds = [Prediction(id="0", reasoning_steps=["one step", "two step"], answer="3")]
    run = evaluate(bench, preds, HASH)
    summary = run.summary
    assert summary.n_items == 4
    assert summary.n_missing == 3
    assert summary.n_scored == 1
    assert summary.match_f1 == pytest.approx(0.25)
    assert summary.accuracy == pytest.approx(0.25)
    missing = run.items[1]
    assert missing.missing
    assert missing.parse_status == "missing"
    assert (missing.f1, missing.answer_correct, missing.answer_rule) == (0.0, False, "missing")


def test_unparseable_response_is_counted_as_parse_failure():
    bench = _bench([_item(0, ["a b c"]), _item(1, ["d e f"])])
    preds = [
        Prediction(id="0", response="}}}###"),
        Prediction(id="1", response=""),
    ]
    summary = evaluate(bench, preds, HASH).summary
    assert summary.n_parse_failed == 2
    assert summary.n_scored == 0
    assert summary.n_missing == 0
    assert summary.match_f1 == 0.0


def test_macro_average_over_items_not_pooled_steps():
    bench = _bench([_item(0, ["alpha one"]), _item(1, [f"beta {i} gamma {i}" for i in range(9)])])
    preds = [
        Prediction(id="0", reasoning_steps=["alpha one"], answer="3"),
        Prediction(id="1", reasoning_steps=["unrelated words here"], answer="3"),
    ]
    run = evaluate(bench, preds, HASH)
    assert [i.f1 for i in run.items] == [1.0, 0.0]
    assert run.summary.match_f1 == 0.5  # pooled F1 would be 2 * (1/2 * 1/10) / (1/2 + 1/10)


def test_each_unique_text_is_encoded_once():
    steps = ["shared step", "another"]
    bench = _bench([_item(i, steps) for i in range(5)])
    preds = [Prediction(id=str(i), reasoning_steps=["shared step", f"own {i}"]) for i in range(5)]
    encoder = CountingEncoder(HashEncoder(dim=64))
    evaluate(bench, preds, HASH, encoder=encoder)
    assert sorted(encoder.seen) == sorted(
        {"shared step", "another", *[f"own {i}" for i in range(5)]}
    )


def test_rescoring_with_another_threshold_makes_no_encoder_calls(tmp_path):
    bench = load_benchmark("sample")
    preds = [
        Prediction(id=i.id, reasoning_steps=i.reference_steps[::-1], answer=i.answer) for i in bench
    ]
    store = EmbeddingStore(tmp_path / "cache.sqlite")
    first = CountingEncoder(HashEncoder(dim=64))
    evaluate(bench, preds, HASH, encoder=first, store=store)
    assert first.seen
    second = CountingEncoder(HashEncoder(dim=64))
    again = evaluate(
        bench,
        preds,
        ScoreConfig(encoder="hash", threshold=0.5, alpha=0.0),
        encoder=second,
        store=store,
    )
    assert second.seen == []
    assert again.summary.config["threshold"] == 0.5


def test_blank_steps_are_dropped_and_counted():
    bench = _bench([_item(0, ["real step", "   "])])
    preds = [Prediction(id="0", reasoning_steps=["real step", ""], answer="3")]
    item = evaluate(bench, preds, HASH).items[0]
    assert (item.n_pred, item.n_ref, item.n_blank_dropped) == (1, 1, 2)
    assert item.f1 == 1.0


def test_unknown_ids_raise_or_are_counted_when_lenient(tmp_path):
    bench = _bench([_item(0, ["a"])])
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"id": "0", "reasoning_steps": ["a"]})
        + "\n"
        + json.dumps({"id": "nope", "reasoning_steps": ["a"]})
        + "\n"
    )
    with pytest.raises(InputError, match=r"p\.jsonl:2: field id: unknown item id 'nope'"):
        evaluate(bench, load_predictions(path), HASH)
    lenient = ScoreConfig(encoder="hash", use_cache=False, lenient=True)
    summary = evaluate(bench, load_predictions(path, lenient=True), lenient).summary
    assert summary.n_unknown_ids == 1
    assert "nope" in summary.problems[0]
    assert summary.match_f1 == 1.0


def test_sources_filter_and_breakdowns():
    bench = _bench(
        [
            _item(0, ["a"], source="mmvp"),
            _item(1, ["b"], source="plotqa"),
            _item(2, ["c"], source="plotqa"),
        ]
    )
    preds = [Prediction(id=str(i), reasoning_steps=[s], answer="3") for i, s in enumerate("abc")]
    full = evaluate(bench, preds, HASH).summary
    assert set(full.by_source) == {"mmvp", "plotqa"}
    assert full.by_source["plotqa"].n_items == 2
    only = evaluate(
        bench, preds, ScoreConfig(encoder="hash", use_cache=False, sources=["mmvp"])
    ).summary
    assert only.n_items == 1
    assert set(only.by_source) == {"mmvp"}


def test_difficulty_from_data_or_derived():
    bench = _bench([_item(0, ["a"] * 3, difficulty="hard"), _item(1, ["a"] * 3)])
    run = evaluate(bench, [], HASH)
    assert [i.difficulty for i in run.items] == ["hard", "easy"]
    assert set(run.summary.by_difficulty) == {"easy", "hard"}


def test_results_files_round_trip(tmp_path):
    bench = load_benchmark("sample")
    preds = load_predictions(_first_pred_file())
    run = evaluate(bench, preds, HASH, out_dir=tmp_path)
    lines = (tmp_path / "examples.jsonl").read_text().splitlines()
    assert len(lines) == len(bench)
    records = [ItemResult.model_validate_json(line) for line in lines]
    assert [r.id for r in records] == bench.ids
    assert all(r.schema_version == "1" for r in records)
    summary = RunSummary.model_validate_json((tmp_path / "summary.json").read_text())
    assert summary.schema_version == "1"
    assert summary.match_f1 == pytest.approx(run.summary.match_f1)
    for key in (
        "encoder",
        "threshold",
        "alpha",
        "order_metric",
        "compat",
        "package_version",
        "benchmark_fingerprint",
    ):
        assert key in summary.config
    # Every number is traceable: matches index into the stored steps.
    for record in records:
        for p, r, cos in record.matches:
            assert 0 <= p < len(record.pred_steps)
            assert 0 <= r < len(record.ref_steps)
            assert cos >= np.float32(0.35)


def _first_pred_file():
    from crystalbench.data import SAMPLE_DIR

    return sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]


@pytest.mark.slow
def test_sample_styles_separate_with_the_real_encoder(tmp_path):
    """The bundled model styles show the paper's diagnostic patterns with all-MiniLM-L6-v2."""
    from crystalbench.data import SAMPLE_DIR
    from crystalbench.encoders import load_encoder

    bench = load_benchmark("sample")
    encoder = load_encoder("minilm-offline")
    store = EmbeddingStore(tmp_path / "cache.sqlite")
    config = ScoreConfig(encoder="minilm-offline")
    summaries = {}
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        summaries[path.stem] = evaluate(
            bench, load_predictions(path), config, encoder=encoder, store=store
        ).summary
    terse = summaries["terse-precise"]
    verbose = summaries["verbose-recall"]
    scrambled = summaries["scrambled-order"]
    messy = summaries["messy-raw"]
    assert terse.precision > terse.recall + 0.3
    assert verbose.recall > terse.recall + 0.3
    assert verbose.precision < terse.precision
    assert scrambled.lis < min(terse.lis, verbose.lis) - 0.2
    assert scrambled.ordered_f1 < scrambled.match_f1 - 0.05
    assert messy.n_missing >= 1
    assert messy.n_parse_failed >= 1
    if "right-answer-weak-reasoning" in summaries:
        weak = summaries["right-answer-weak-reasoning"]
        assert weak.accuracy > 0.8
        assert weak.match_f1 < terse.match_f1


def test_free_form_answers_go_to_the_judge_and_failures_are_unscored():
    from crystalbench.judges import ScriptedJudge

    items = [
        _item(0, ["a"], answer="the red barn", source="realworldqa"),
        _item(1, ["b"], answer="a small dog", source="realworldqa"),
        _item(2, ["c"], answer="blue", source="realworldqa"),
    ]
    judge = ScriptedJudge({("the red barn", "the barn that is red"): True})
    preds = [
        Prediction(id="0", reasoning_steps=["a"], answer="the barn that is red"),
        Prediction(id="1", reasoning_steps=["b"], answer="a puppy"),  # no verdict: judge fails
        Prediction(id="2", reasoning_steps=["c"], answer="Blue."),  # exact after normalising
    ]
    run = evaluate(_bench(items), preds, HASH, judge=judge)
    assert [i.answer_correct for i in run.items] == [True, None, True]
    assert [i.answer_rule for i in run.items] == ["judge", "judge_failed", "exact"]
    assert len(judge.calls) == 2  # the exact match never reached the judge
    assert run.summary.n_judge_unscored == 1
    assert run.summary.accuracy == pytest.approx(2 / 3)  # unscored counts as not correct
    assert run.summary.config["judge"]["kind"] == "scripted"
