"""No run loses a user's results: ``crystal score``, ``run`` and ``demo`` refuse an output
folder holding results of other predictions or another configuration (one line naming what
is there and ``--overwrite``, exit 2), never mix a one-set folder with a folder of sets, and
a failed start leaves nothing behind (no lock file, no empty folder, no empty database)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR
from crystalbench.scoring.results import EXAMPLES_FILE, LOCK_FILE, SUMMARY_FILE
from servers.openai_server import LoopbackServer

runner = CliRunner()
TERSE = SAMPLE_DIR / "predictions" / "terse-precise.jsonl"
VERBOSE = SAMPLE_DIR / "predictions" / "verbose-recall.jsonl"
MESSY = SAMPLE_DIR / "predictions" / "messy-raw.jsonl"


@pytest.fixture(autouse=True)
def private_cache(cache_dir):
    return cache_dir


def score(*predictions: str | Path, out: Path, extra: tuple[str, ...] = ()):
    args = ["score", "-b", "sample", "-o", str(out), "--encoder", "hash", "--no-progress"]
    for value in predictions:
        args += ["-p", str(value)]
    return runner.invoke(app, [*args, *extra])


def one_line_refusal(result, *names: str) -> str:
    """The refusal: exit 2, one ``error:`` line naming what is there and --overwrite."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    (line,) = lines
    assert line.startswith("error: ")
    assert "--overwrite" in line
    for name in names:
        assert name in line, line
    assert "Traceback" not in result.output
    return line


def test_score_refuses_the_results_of_another_predictions_file(tmp_path):
    out = tmp_path / "results" / "mine"
    assert score(TERSE, out=out).exit_code == 0
    before = (out / SUMMARY_FILE).read_bytes(), (out / EXAMPLES_FILE).read_bytes()
    line = one_line_refusal(score(VERBOSE, out=out), str(out), str(TERSE), str(VERBOSE))
    assert "sha256" in line
    assert ((out / SUMMARY_FILE).read_bytes(), (out / EXAMPLES_FILE).read_bytes()) == before


def test_score_takes_the_same_input_and_configuration_again(tmp_path):
    out = tmp_path / "mine"
    assert score(TERSE, out=out).exit_code == 0
    first = json.loads((out / SUMMARY_FILE).read_text())
    # Settings that change how a run goes, not what it computes, are the same run.
    again = score(TERSE, out=out, extra=("--no-cache", "--lenient", "--batch-size", "16"))
    assert again.exit_code == 0, again.output
    second = json.loads((out / SUMMARY_FILE).read_text())
    assert second["match_f1"] == first["match_f1"]
    assert second["run_id"] != first["run_id"]


def test_a_copy_of_the_same_file_is_the_same_input(tmp_path):
    copy = tmp_path / "copy.jsonl"
    shutil.copyfile(TERSE, copy)
    assert score(TERSE, out=tmp_path / "o").exit_code == 0
    assert score(copy, out=tmp_path / "o").exit_code == 0


def test_score_refuses_another_configuration(tmp_path):
    out = tmp_path / "mine"
    assert score(TERSE, out=out).exit_code == 0
    one_line_refusal(score(TERSE, out=out, extra=("--threshold", "0.4")), "threshold 0.4")
    one_line_refusal(score(TERSE, out=out, extra=("--guard", "facts")), "guard facts")
    one_line_refusal(score(TERSE, out=out, extra=("--limit", "5")), "limit 5")


def test_score_refuses_a_changed_predictions_file(tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copyfile(TERSE, preds)
    out = tmp_path / "mine"
    assert score(preds, out=out).exit_code == 0
    shutil.copyfile(VERBOSE, preds)
    one_line_refusal(score(preds, out=out), "changed since those results were written")


def test_overwrite_replaces_them(tmp_path):
    out = tmp_path / "mine"
    assert score(TERSE, out=out).exit_code == 0
    result = score(VERBOSE, out=out, extra=("--overwrite",))
    assert result.exit_code == 0, result.output
    summary = json.loads((out / SUMMARY_FILE).read_text())
    assert summary["config"]["predictions"] == str(VERBOSE)
    assert len(summary["config"]["predictions_sha256"]) == 64


def test_several_sets_never_mix_with_one_set(tmp_path):
    single = tmp_path / "single"
    assert score(TERSE, out=single).exit_code == 0
    line = one_line_refusal(score(f"a={TERSE}", f"b={VERBOSE}", out=single), "one set")
    assert str(single / SUMMARY_FILE) in line
    assert not (single / "a").exists()

    board = tmp_path / "board"
    assert score(f"a={TERSE}", f"b={VERBOSE}", out=board).exit_code == 0
    one_line_refusal(score(MESSY, out=board), "2 sets", "a/", "b/")
    assert not (board / SUMMARY_FILE).exists()

    # --overwrite: the one set replaces the board, which is gone, never mixed in.
    replaced = score(MESSY, out=board, extra=("--overwrite",))
    assert replaced.exit_code == 0, replaced.output
    assert (board / SUMMARY_FILE).is_file()
    assert not (board / "a").exists()
    assert not (board / "b").exists()


def test_a_board_takes_more_sets_of_its_configuration_only(tmp_path):
    board = tmp_path / "board"
    assert score(f"a={TERSE}", f"b={VERBOSE}", out=board).exit_code == 0
    added = score(f"c={MESSY}", out=board)
    assert added.exit_code == 0, added.output
    assert (board / "c" / SUMMARY_FILE).is_file()
    line = one_line_refusal(score(f"d={MESSY}", out=board, extra=("--guard", "facts")))
    assert "another benchmark or configuration" in line
    assert not (board / "d").exists()
    one_line_refusal(score(f"a={MESSY}", out=board), str(board / "a"))


def test_an_unknown_encoder_leaves_nothing_behind(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    nested = tmp_path / "new" / "deeper"
    for out in (empty, nested):
        result = score(TERSE, out=out, extra=("--encoder", "no-such-encoder"))
        assert result.exit_code == 2, result.output
    assert list(empty.iterdir()) == []
    assert not (tmp_path / "new").exists()


def test_a_failed_run_keeps_the_earlier_results_and_their_lock_only(tmp_path):
    out = tmp_path / "mine"
    assert score(TERSE, out=out).exit_code == 0
    before = sorted(p.name for p in out.iterdir())
    result = score(TERSE, out=out, extra=("--encoder", "no-such-encoder", "--overwrite"))
    assert result.exit_code == 2
    assert sorted(p.name for p in out.iterdir()) == before
    assert LOCK_FILE in before


def test_review_import_of_a_missing_or_bad_file_creates_no_database(tmp_path):
    db = tmp_path / "review.sqlite"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    for source in (tmp_path / "missing.jsonl", bad):
        result = runner.invoke(app, ["review", "import", str(source), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def run_args(server, out: Path, *extra: str) -> list[str]:
    return [
        *("run", "-m", "test-model", "-b", "sample", "--base-url", server.base_url),
        *("--limit", "3", "-o", str(out), "--encoder", "hash", "--no-report", "--no-progress"),
        *extra,
    ]


def test_run_resumes_its_own_folder_and_refuses_another_runs(tmp_path):
    scored = tmp_path / "scored"
    assert score(TERSE, out=scored).exit_code == 0
    before = (scored / SUMMARY_FILE).read_bytes()
    out = tmp_path / "run"
    with LoopbackServer() as server:
        server.state.configure({})
        line = one_line_refusal(runner.invoke(app, run_args(server, scored)), str(scored))
        assert "predictions" in line
        assert (scored / SUMMARY_FILE).read_bytes() == before
        assert not (scored / "predictions.jsonl").exists()  # refused before any request

        assert runner.invoke(app, run_args(server, out)).exit_code == 0
        again = runner.invoke(app, run_args(server, out, "--limit", "5"))
        assert again.exit_code == 0, again.output  # resumed: a larger selection
        one_line_refusal(
            runner.invoke(app, run_args(server, out, "--threshold", "0.5")), "threshold 0.5"
        )
        replaced = runner.invoke(app, run_args(server, out, "--threshold", "0.5", "--overwrite"))
        assert replaced.exit_code == 0, replaced.output
    assert json.loads((out / SUMMARY_FILE).read_text())["config"]["threshold"] == 0.5


@pytest.mark.parametrize("command", ["infer", "run"])
def test_a_failed_start_of_inference_leaves_no_folder(tmp_path, command, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    out = tmp_path / "new" / ("preds.jsonl" if command == "infer" else "run")
    args = [command, "-m", "m", "-b", "sample", "--base-url", "http://127.0.0.1:9/v1"]
    args += ["-o", str(out), "--no-progress"]
    if command == "run":
        args += ["--encoder", "hash"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "unreachable" in result.output
    assert list(tmp_path.iterdir()) == []


def test_demo_refuses_another_encoders_results(tmp_path):
    out = tmp_path / "demo"
    args = ["demo", "-o", str(out), "--encoder", "hash", "--no-report", "--no-progress"]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, args).exit_code == 0  # the same demo again
    args[4] = "minilm-offline"
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2
    assert "encoder minilm-offline here, hash there" in refused.output
    assert "--overwrite" in refused.output
