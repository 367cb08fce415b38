"""The step verifier in the reports: the leaderboard's verified precision / hallucination rate
columns (only when a run was verified), runs with different verifiers marked not comparable,
the HTML report's leaderboard and item data carrying each unmatched step's verdict, and
``crystal leaderboard`` of runs without a verifier unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.config.judging import VerifierConfig
from crystalbench.config.scoring import ScoreConfig
from crystalbench.judges.verifier import ScriptedVerifier
from crystalbench.report import build_report
from crystalbench.report.leaderboard import leaderboard_rows, render
from crystalbench.report.loading import load_runs
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import make_benchmark, make_item

runner = CliRunner()

REFERENCE = ["The chart has three bars.", "The tallest bar is C."]
GREEN = "The sky in the picture is green."
SUPPORTED = "Bar A is shorter than bar B."
BENCH = make_benchmark([make_item("q1", REFERENCE, answer="C")])
PREDICTIONS = [Prediction(id="q1", reasoning_steps=[REFERENCE[0], GREEN, SUPPORTED], answer="C")]


def _score(out: Path, verifier_name: str | None) -> Path:
    if verifier_name is None:
        evaluate(BENCH, PREDICTIONS, ScoreConfig(encoder="hash", use_cache=False), out_dir=out)
        return out
    config = ScoreConfig(
        encoder="hash",
        use_cache=False,
        verify="unmatched",
        verifier=VerifierConfig(url="http://127.0.0.1:9/v1", model=verifier_name),
    )
    script = {GREEN: "wrong_perception", SUPPORTED: "supported"}
    verifier = ScriptedVerifier(script, name=verifier_name)
    evaluate(BENCH, PREDICTIONS, config, verifier=verifier, out_dir=out)
    return out


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    return {
        "plain": _score(tmp_path / "plain", None),
        "x": _score(tmp_path / "x", "judge-x"),
        "y": _score(tmp_path / "y", "judge-y"),
    }


def test_the_columns_and_the_note(folders):
    runs = load_runs([folders["plain"], folders["x"], folders["y"]])
    rows = leaderboard_rows(runs, n_resamples=20)
    plain, x, y = rows
    assert y.verifier.startswith("judge-y")
    assert plain.verifier == "none"
    assert plain.verified_precision is None
    # 3 steps: 1 matched, 1 supported, 1 wrong_perception.
    assert x.verified_precision == pytest.approx(2 / 3)
    assert x.hallucination_rate == pytest.approx(1 / 3)
    assert x.verifier.startswith("judge-x (unmatched")
    md = render(rows, "md", intervals=False)
    header = md.splitlines()[0]
    assert "Verified prec." in header
    assert "Halluc. rate" in header
    assert "| 0.667 | 0.333 | 0 |" in md
    assert "NOT comparable on these columns" in md
    csv_head = render(rows, "csv").splitlines()[0].split(",")
    assert {"verifier", "verified_precision", "hallucination_rate", "n_unverified"} <= set(csv_head)
    tex = render(rows, "tex", intervals=False)
    assert "Verified prec." in tex
    assert "NOT comparable" in tex


def test_one_verifier_is_comparable_and_no_verifier_shows_no_column(folders):
    same = leaderboard_rows(load_runs([folders["x"], folders["x"]]), n_resamples=20)
    assert "NOT comparable" not in render(same, "md", intervals=False)
    plain = leaderboard_rows(load_runs([folders["plain"]]), n_resamples=20)
    md = render(plain, "md", intervals=False)
    assert "Verif" not in md
    assert "verifier" not in render(plain, "csv").splitlines()[0]


def test_the_html_report_marks_unmatched_steps_by_verdict(folders, tmp_path):
    out = tmp_path / "report.html"
    build_report([folders["x"], folders["y"]], out, benchmark=BENCH)
    page = out.read_text()
    assert 'data-key="verified_precision"' in page
    assert "Runs with different verifiers are not comparable" in page
    data = page[page.index('"verd"') :][:400]
    # [pred, label, p_correct, judge, reason] for each unmatched step.
    assert '[1,"wrong_perception",0.0,"model:judge-x"' in data
    assert '[2,"supported",1.0,"model:judge-x"' in data
    assert (
        "verdict-"
        in (Path(__file__).parents[2] / "src/crystalbench/report/assets/report.js").read_text()
    )


def test_crystal_leaderboard_prints_the_columns(folders, tmp_path):
    result = runner.invoke(
        app, ["leaderboard", str(folders["x"]), str(folders["y"]), "--output-format", "md"]
    )
    assert result.exit_code == 0, result.output
    assert "Verified prec." in result.output
    assert "NOT comparable" in result.output
    summary = json.loads((folders["x"] / "summary.json").read_text())
    assert summary["verification"]["verified_precision"] == pytest.approx(2 / 3)
