"""Globs a user types: `crystal leaderboard crystal-demo/*` skips what is not a results folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.errors import InputError
from crystalbench.report import build_report, select_results
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item

ITEMS = [
    make_item("1", ["The red bar is the tallest.", "It reaches 40."], answer="40"),
    make_item("2", ["Count the dots.", "There are seven dots."], answer="7"),
]


@pytest.fixture
def demo_like(tmp_path: Path) -> Path:
    """What `crystal demo` leaves: results folders, and report.html beside them."""
    root = tmp_path / "crystal-demo"
    bench = make_benchmark(ITEMS)
    for style, steps in (("terse", ["It reaches 40."]), ("verbose", ["The red bar is tallest."])):
        preds = [Prediction(id="1", reasoning_steps=steps, answer="40")]
        evaluate(bench, preds, HASH_CONFIG, out_dir=root / style)
    build_report([root / "terse", root / "verbose"], root / "report.html", n_resamples=10)
    (root / "notes").mkdir()  # a folder of the user's that is not a results folder
    return root


def _glob(root: Path) -> list[str]:
    return sorted(str(p) for p in root.iterdir() if not p.name.startswith("."))


def test_select_results_keeps_results_folders_and_says_why_others_are_skipped(demo_like):
    selection = select_results(_glob(demo_like))
    assert [p.name for p in selection.paths] == ["terse", "verbose"]
    assert selection.skipped == [
        f"skipped {demo_like / 'notes'}: not a results folder (no summary.json)",
        f"skipped {demo_like / 'report.html'}: a file, not a results folder",
    ]


def test_names_follow_the_folders_they_belong_to(demo_like):
    paths = [demo_like / "report.html", demo_like / "terse", demo_like / "verbose"]
    selection = select_results(paths, names=["page", "Terse", "Verbose"])
    assert selection.names == ["Terse", "Verbose"]
    with pytest.raises(InputError, match="2 names for 3 results folders"):
        select_results(paths, names=["a", "b"])


def test_the_file_of_a_results_folder_counts_as_the_folder(demo_like):
    selection = select_results([demo_like / "terse" / "summary.json"])
    assert selection.skipped == []


@pytest.mark.parametrize("command", [["leaderboard", "--no-ci"], ["report", "--resamples", "10"]])
def test_cli_skips_with_a_note_and_goes_on(demo_like, tmp_path, command):
    extra = ["--out", str(tmp_path / "out.html")] if command[0] == "report" else []
    result = CliRunner().invoke(app, [*command, *_glob(demo_like), *extra])
    assert result.exit_code == 0, result.output
    assert f"note: skipped {demo_like / 'report.html'}: a file, not a results folder" in (
        result.output.replace("\n", "")
    )
    assert "terse" in result.output
    assert "verbose" in result.output


@pytest.mark.parametrize("command", ["leaderboard", "report"])
def test_cli_fails_when_nothing_usable_is_left(demo_like, tmp_path, command):
    result = CliRunner().invoke(
        app,
        [
            command,
            str(demo_like / "report.html"),
            str(demo_like / "notes"),
            "-o",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code == 2
    assert "none of the paths given is a results folder" in result.output


def test_compare_names_the_path_that_is_not_a_results_folder(demo_like):
    result = CliRunner().invoke(
        app, ["compare", str(demo_like / "terse"), str(demo_like / "report.html")]
    )
    assert result.exit_code == 2
    assert "compare needs two results folders" in result.output
    assert "report.html: a file, not a results folder" in result.output.replace("\n", "")
