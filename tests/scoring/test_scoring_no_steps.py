"""Items that parsed but gave no step get their own count, everywhere the counts are shown."""

from __future__ import annotations

import csv
import io
import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.report import (
    build_report,
    leaderboard_rows,
    load_run,
    render_csv,
    render_latex,
    render_markdown,
)
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import MetricSummary, Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item, write_jsonl

ITEMS = [
    make_item(
        "chart-1",
        ["The tallest bar is labelled 2019.", "Its value is 42 units."],
        answer="42",
        source="plotqa",
    ),
    make_item(
        "chart-2",
        ["Count the bars above the line.", "Three bars are above it."],
        answer="3",
        source="plotqa",
    ),
    make_item(
        "door-1",
        ["The door on the left is open.", "So the answer is B."],
        answer="B",
        options=["closed", "open"],
        source="realworldqa",
    ),
    make_item(
        "door-2",
        ["Look at the handle.", "It is turned down."],
        answer="A",
        options=["down", "up"],
        source="realworldqa",
    ),
    make_item("fig-1", ["Angle ABC is 40 degrees."], answer="40", source="mathvision"),
    make_item("fig-2", ["The two triangles are similar."], answer="2", source="mathvision"),
    make_item("fig-3", ["Side AB is twice side CD."], answer="2", source="mathvision"),
]

PREDICTIONS = [
    # scored: steps of its own
    {
        "id": "chart-1",
        "reasoning_steps": ["The tallest bar is labelled 2019.", "It reaches 42."],
        "answer": "42",
    },
    # no steps: the answer alone, as a structured record
    {"id": "chart-2", "reasoning_steps": [], "answer": "3"},
    # no steps: raw text holding only an answer
    {"id": "door-1", "response": "The answer is (B)."},
    # no steps: the JSON schema with blank steps only (paper mode drops them)
    {"id": "door-2", "response": '{"reasoning_steps": ["", "  "], "answer": "A"}'},
    # parse failed: nothing but whitespace
    {"id": "fig-1", "response": "   "},
    # scored
    {"id": "fig-2", "reasoning_steps": ["The two triangles are similar."], "answer": "2"},
    # fig-3: missing
]


@pytest.fixture
def run():
    preds = [Prediction.model_validate(record) for record in PREDICTIONS]
    return evaluate(make_benchmark(ITEMS), preds, HASH_CONFIG)


def _adds_up(summary: MetricSummary) -> bool:
    return summary.n_items == (
        summary.n_scored + summary.n_no_steps + summary.n_missing + summary.n_parse_failed
    )


def test_no_steps_items_have_their_own_count(run):
    summary = run.summary
    counts = (
        summary.n_items,
        summary.n_scored,
        summary.n_no_steps,
        summary.n_missing,
        summary.n_parse_failed,
    )
    assert counts == (7, 2, 3, 1, 1)
    assert [item.id for item in run.items if item.no_steps] == ["chart-2", "door-1", "door-2"]
    # They still count in every mean, with step metrics 0 (their answers are right).
    assert summary.accuracy == pytest.approx(5 / 7)
    assert all(item.f1 == 0.0 for item in run.items if item.no_steps)


def test_counts_add_up_overall_and_per_group(run):
    summary = run.summary
    assert _adds_up(summary)
    assert summary.by_source["plotqa"].n_no_steps == 1
    assert summary.by_source["realworldqa"].n_no_steps == 2
    assert summary.by_source["mathvision"].n_no_steps == 0
    for group in [*summary.by_source.values(), *summary.by_difficulty.values()]:
        assert _adds_up(group)
    assert sum(g.n_no_steps for g in summary.by_difficulty.values()) == 3


def test_compat_mode_scores_blank_steps_so_they_are_not_no_steps():
    preds = [Prediction(id="door-2", reasoning_steps=["", "  "], answer="A")]
    bench = make_benchmark(ITEMS)
    paper = evaluate(bench, preds, HASH_CONFIG).summary
    compat = evaluate(
        bench, preds, HASH_CONFIG.model_copy(update={"compat": "crystal-metrics-0.2"})
    ).summary
    assert (paper.n_scored, paper.n_no_steps) == (0, 1)
    assert (compat.n_scored, compat.n_no_steps) == (1, 0)


@pytest.fixture
def folders(tmp_path, run):
    preds = [Prediction.model_validate(record) for record in PREDICTIONS]
    bench = make_benchmark(ITEMS)
    a = tmp_path / "answers-often"
    evaluate(bench, preds, HASH_CONFIG, out_dir=a)
    full = [
        Prediction(id=item.id, reasoning_steps=list(item.reference_steps), answer=item.answer)
        for item in ITEMS
    ]
    b = tmp_path / "full-chains"
    evaluate(bench, full, HASH_CONFIG, out_dir=b)
    return a, b


def test_leaderboard_shows_the_count_in_every_format(folders):
    rows = leaderboard_rows([load_run(f) for f in folders], n_resamples=20)
    assert [(row.n_scored, row.n_no_steps) for row in rows] == [(2, 3), (7, 0)]
    markdown = render_markdown(rows, intervals=False).splitlines()
    assert markdown[0].endswith("| Items | No steps | Missing | Parse fail |")
    assert markdown[2].endswith("| 7 | 3 | 1 | 1 |")
    table = list(csv.DictReader(io.StringIO(render_csv(rows))))
    assert [r["n_no_steps"] for r in table] == ["3", "0"]
    assert [r["n_scored"] for r in table] == ["2", "7"]
    latex = render_latex(rows, intervals=False)
    assert "Ordered F1 & Items & No steps & Missing & Parse fail \\\\" in latex
    assert "& 7 & 3 & 1 & 1 \\\\" in latex


def test_cli_tables_show_the_count(tmp_path, folders):
    preds = write_jsonl(tmp_path / "preds.jsonl", PREDICTIONS)
    bench = write_jsonl(tmp_path / "bench.jsonl", [item.model_dump() for item in ITEMS])
    result = CliRunner().invoke(
        app,
        [
            "score",
            "-b",
            str(bench),
            "-p",
            str(preds),
            "-o",
            str(tmp_path / "out"),
            "--encoder",
            "hash",
            "--no-cache",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "No steps" in result.output
    assert "items 7 | scored 2 | no steps 3 | missing 1 | parse fail 1" in result.output
    board = CliRunner().invoke(app, ["leaderboard", *map(str, folders), "--no-ci"])
    assert board.exit_code == 0, board.output
    assert "| Items | No steps | Missing | Parse fail |" in board.output


def test_report_shows_the_count_and_lists_the_items(tmp_path, folders):
    page = build_report(list(folders), tmp_path / "r.html", n_resamples=20).read_text()
    assert 'data-key="n_no_steps"' in page
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    first = data["runs"][0]
    assert first["counts"]["n_no_steps"] == 3
    assert first["counts"]["n_scored"] == 2
    assert len(first["failures"]["no_steps"]) == 3
    assert first["by_source"]["realworldqa"]["n_no_steps"] == 2


def test_old_summary_without_the_count_still_loads(tmp_path, folders):
    """Results written before n_no_steps (and before run ids): the count comes from the items.

    Such items were part of n_scored then; they move to n_no_steps, quietly.
    """
    folder: Path = folders[0]
    summary = json.loads((folder / "summary.json").read_text())
    for block in [summary, *summary["by_source"].values(), *summary["by_difficulty"].values()]:
        block["n_scored"] += block.pop("n_no_steps")
    for key in ("run_id", "examples_sha256"):
        summary.pop(key)
    (folder / "summary.json").write_text(json.dumps(summary))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_run(folder)
    assert (loaded.summary.n_scored, loaded.summary.n_no_steps) == (2, 3)
    assert loaded.summary.by_source["realworldqa"].n_no_steps == 2
    assert all(_adds_up(g) for g in [loaded.summary, *loaded.summary.by_source.values()])
