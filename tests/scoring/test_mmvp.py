"""MMVP pair accuracy: per question and per pair (both questions right), incomplete pairs."""

from __future__ import annotations

import json

import pytest

from crystalbench.report import leaderboard_rows, load_run, render
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.mmvp import item_pair, summarize_pairs
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item


def _mmvp(index: int, answer: str, **metadata):
    """An MMVP question as the adapter writes it (pair number and both item ids)."""
    pair = (index - 1) // 2
    meta = {"pair": pair, "pair_items": [f"mmvp/{2 * pair + 1}", f"mmvp/{2 * pair + 2}"]}
    meta.update(metadata)
    return make_item(
        f"mmvp/{index}",
        ["Look at the car.", f"The car faces {answer}."],
        answer=answer,
        source="mmvp",
        options=["Left", "Right"],
        metadata=meta,
    )


def _benchmark():
    """Pairs 0 and 1 complete, pair 2 with its second question absent; one unpaired item."""
    items = [_mmvp(i, "(a)" if i % 2 else "(b)") for i in (1, 2, 3, 4, 5)]
    return make_benchmark([*items, make_item("plot-1", ["Read the bar."], answer="3")])


def _predictions(right: set[str]):
    bench = _benchmark()
    out = []
    for item in bench.items:
        wrong = "(b)" if item.answer == "(a)" else "(a)"
        out.append(
            Prediction(
                id=item.id,
                reasoning_steps=item.reference_steps,
                answer=item.answer if item.id in right else wrong,
            )
        )
    return out


def test_pair_accuracy_by_hand(tmp_path):
    """Pair 0 both right, pair 1 one right, pair 2 incomplete (its one question right)."""
    right = {"mmvp/1", "mmvp/2", "mmvp/3", "mmvp/5", "plot-1"}
    run = evaluate(_benchmark(), _predictions(right), HASH_CONFIG, out_dir=tmp_path)
    pairs = run.summary.pairs
    assert pairs is not None
    assert (pairs.n_paired_items, pairs.n_pairs, pairs.n_pairs_right) == (5, 3, 1)
    assert pairs.n_pairs_incomplete == 1
    assert pairs.question_accuracy == pytest.approx(4 / 5)
    assert pairs.pair_accuracy == pytest.approx(1 / 3)
    assert run.summary.accuracy == pytest.approx(5 / 6)  # the per-item number is unchanged
    line = json.loads((tmp_path / "examples.jsonl").read_text().splitlines()[0])
    assert (line["pair"], line["pair_size"]) == ("mmvp/0", 2)
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["pairs"]["pair_accuracy"] == pytest.approx(1 / 3)


def test_a_missing_prediction_makes_its_pair_wrong():
    preds = [p for p in _predictions({"mmvp/1", "mmvp/2", "mmvp/3"}) if p.id != "mmvp/2"]
    pairs = evaluate(_benchmark(), preds, HASH_CONFIG).summary.pairs
    assert pairs is not None
    assert pairs.n_pairs_right == 0
    assert pairs.n_paired_items == 5  # the missing one is still a paired question


def test_no_pairs_no_pair_summary():
    bench = make_benchmark([make_item(1, ["Read the bar."])])
    assert evaluate(bench, [], HASH_CONFIG).summary.pairs is None


def test_pair_ids_without_a_member_list_use_pairs_of_two():
    """The bundled sample writes ``pair: "mmvp-pair-1"`` without ``pair_items``."""
    item = make_item("mmvp-01", ["s"], source="mmvp", metadata={"pair": "mmvp-pair-1"})
    assert item_pair(item) == ("mmvp/mmvp-pair-1", 2)
    assert item_pair(make_item("x", ["s"])) == (None, None)
    three = summarize_pairs([("p", 3, True), ("p", 3, True)])
    assert three is not None
    assert three.n_pairs_incomplete == 1
    assert three.pair_accuracy == 0.0


def test_the_sample_reports_its_mmvp_pairs():
    from crystalbench.data import load_benchmark

    bench = load_benchmark("sample")
    perfect = [
        Prediction(id=i.id, reasoning_steps=i.reference_steps, answer=i.answer) for i in bench.items
    ]
    pairs = evaluate(bench, perfect, HASH_CONFIG).summary.pairs
    assert pairs is not None
    assert (pairs.n_pairs, pairs.n_pairs_incomplete, pairs.pair_accuracy) == (4, 0, 1.0)


def test_leaderboards_show_pair_accuracy_only_for_paired_runs(tmp_path):
    right = {"mmvp/1", "mmvp/2", "mmvp/3", "mmvp/5"}
    evaluate(_benchmark(), _predictions(right), HASH_CONFIG, out_dir=tmp_path / "paired")
    plain = make_benchmark([make_item(1, ["Read the bar."])])
    evaluate(plain, [], HASH_CONFIG, out_dir=tmp_path / "plain")
    rows = leaderboard_rows([load_run(tmp_path / "paired")], n_resamples=20)
    assert rows[0].pairs is not None
    assert rows[0].pairs.n_pairs_right == 1
    md = render(rows, "md", intervals=False)
    header, _, line = md.splitlines()[:3]
    assert header.endswith("| Paired Q acc (%) | Pair acc (%) |")
    assert line.endswith("| 80.00 | 33.33 |")
    assert "1/3 pairs right, 1 incomplete" in md
    csv_lines = render(rows, "csv").splitlines()
    cells = dict(zip(csv_lines[0].split(","), csv_lines[1].split(","), strict=True))
    assert float(cells["pair_accuracy"]) == pytest.approx(1 / 3)
    assert cells["n_pairs_incomplete"] == "1"
    assert "Pair acc (\\%)" in render(rows, "tex")
    unpaired = leaderboard_rows([load_run(tmp_path / "plain")], n_resamples=20)
    assert "Pair acc" not in render(unpaired, "md") + render(unpaired, "csv")
    both = leaderboard_rows(
        [load_run(tmp_path / "paired"), load_run(tmp_path / "plain")], n_resamples=20
    )
    assert render(both, "md", intervals=False).splitlines()[3].endswith("| - | - |")


def test_cli_table_has_pair_columns(tmp_path):
    from rich.console import Console

    from crystalbench.cli.common import leaderboard_table

    run = evaluate(_benchmark(), _predictions({"mmvp/1", "mmvp/2"}), HASH_CONFIG)
    console = Console(width=300, record=True)
    console.print(leaderboard_table([("m", run.summary)]))
    text = console.export_text()
    assert "Pair acc (%)" in text
    assert "33.33" in text
    assert "Pairs incomplete" in text
