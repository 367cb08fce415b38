"""``crystal score`` with several prediction sets: one process, OUT/NAME/ each, one leaderboard,
bad sets failing alone (exit 2), and OUT ready for ``crystal leaderboard`` and ``report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR
from crystalbench.scoring.results import EXAMPLES_FILE, SUMMARY_FILE
from fakes import write_jsonl

runner = CliRunner()
SAMPLE_PREDICTIONS = SAMPLE_DIR / "predictions"
SAMPLE_FILES = sorted(SAMPLE_PREDICTIONS.glob("*.jsonl"))


@pytest.fixture(autouse=True)
def private_cache(cache_dir):
    return cache_dir


def score(*predictions: str, out: Path, extra: tuple[str, ...] = ()):
    args = ["score", "-b", "sample", "-o", str(out), "--encoder", "hash", "--no-progress"]
    for value in predictions:
        args += ["-p", value]
    return runner.invoke(app, [*args, *extra])


def summary_of(folder: Path) -> dict:
    data = json.loads((folder / SUMMARY_FILE).read_text())
    data.pop("run_id")
    data["config"].pop("created_at")
    return data


def assert_like_single_runs(out: Path, named: dict[str, Path], tmp_path: Path) -> None:
    """Each OUT/NAME equals what a single ``crystal score`` of that file writes."""
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(named)
    for name, path in named.items():
        alone = tmp_path / "alone" / name
        result = score(str(path), out=alone)
        assert result.exit_code == 0, result.output
        assert (out / name / EXAMPLES_FILE).read_bytes() == (alone / EXAMPLES_FILE).read_bytes()
        assert summary_of(out / name) == summary_of(alone)


def test_named_files_score_into_one_folder_each(tmp_path):
    out = tmp_path / "board"
    named = {"first": SAMPLE_FILES[0], "second": SAMPLE_FILES[2], "third": SAMPLE_FILES[4]}
    result = score(*(f"{name}={path}" for name, path in named.items()), out=out)
    assert result.exit_code == 0, result.output
    assert "CRYSTAL leaderboard (sample)" in result.output
    table = result.output[result.output.index("CRYSTAL leaderboard") :]
    assert [name for name in named if name in table] == list(named)
    assert table.index("first") < table.index("second") < table.index("third")
    assert "wrote 3 results folders" in result.output
    assert f"crystal leaderboard {out}/*" in result.output
    assert not (out / EXAMPLES_FILE).exists()
    assert_like_single_runs(out, named, tmp_path)


def test_the_sample_folder_scores_all_five_sets(tmp_path):
    out = tmp_path / "board"
    result = score(str(SAMPLE_PREDICTIONS), out=out)
    assert result.exit_code == 0, result.output
    assert_like_single_runs(out, {p.stem: p for p in SAMPLE_FILES}, tmp_path)
    summary = json.loads((out / "messy-raw" / SUMMARY_FILE).read_text())
    assert summary["config"]["predictions"] == str(SAMPLE_PREDICTIONS / "messy-raw.jsonl")


def test_quoted_and_shell_expanded_globs(tmp_path):
    quoted = score(str(SAMPLE_PREDICTIONS / "s*.jsonl"), out=tmp_path / "q")
    assert quoted.exit_code == 0, quoted.output
    assert sorted(p.name for p in (tmp_path / "q").iterdir()) == ["scrambled-order"]
    expanded = runner.invoke(  # what `-p preds/*.jsonl` becomes in an unquoted shell
        app,
        [
            "score",
            "-b",
            "sample",
            "-p",
            *(str(p) for p in SAMPLE_FILES[:3]),
            "-o",
            str(tmp_path / "e"),
            "--encoder",
            "hash",
            "--no-progress",
        ],
    )
    assert expanded.exit_code == 0, expanded.output
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == sorted(
        p.stem for p in SAMPLE_FILES[:3]
    )


def test_a_bad_file_among_good_ones_fails_alone_with_exit_2(tmp_path):
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [{"id": "mmvp-01", "answer": "(a)"}, {"id": "mmvp-02", "answer": 1.5e999}],
    )
    unknown = write_jsonl(tmp_path / "unknown.jsonl", [{"id": "nope", "answer": "(a)"}])
    out = tmp_path / "board"
    result = score(
        f"good={SAMPLE_FILES[1]}",
        str(bad),
        str(unknown),
        f"gone={tmp_path / 'gone.jsonl'}",
        f"good={SAMPLE_FILES[2]}",
        f"../up={SAMPLE_FILES[3]}",
        "=x.jsonl",
        f"last={SAMPLE_FILES[4]}",
        out=out,
    )
    assert result.exit_code == 2, result.output
    output = result.output
    assert "Traceback" not in output
    assert "6 of 8 prediction sets failed (the others were scored)" in output
    assert f"bad: {bad}:2: field answer:" in output
    assert f"unknown: {unknown}:1: field id: unknown item id 'nope'" in output
    assert f"gone: {tmp_path / 'gone.jsonl'}: predictions not found" in output
    assert "duplicate name 'good', already given to" in output
    assert "refused name '../up': it holds '/'" in output
    assert "expected NAME=FILE with both parts, got '=x.jsonl'" in output
    # the failures are listed after the leaderboard of the sets that scored
    assert output.index("CRYSTAL leaderboard") < output.index("prediction sets failed")
    assert_like_single_runs(out, {"good": SAMPLE_FILES[1], "last": SAMPLE_FILES[4]}, tmp_path)
    assert not (tmp_path / "up").exists()


def test_lenient_skips_instead_of_failing(tmp_path):
    unknown = write_jsonl(
        tmp_path / "unknown.jsonl", [{"id": "nope", "answer": "(a)"}, {"id": "mmvp-01"}]
    )
    result = score(str(unknown), str(SAMPLE_FILES[0]), out=tmp_path / "o", extra=("--lenient",))
    assert result.exit_code == 0, result.output
    assert "unknown: skipped records 1" in result.output


def test_a_failed_set_says_its_folder_keeps_earlier_results(tmp_path):
    out = tmp_path / "board"
    assert score(f"a={SAMPLE_FILES[0]}", f"b={SAMPLE_FILES[1]}", out=out).exit_code == 0
    broken = write_jsonl(tmp_path / "broken.jsonl", ["{oops"])
    result = score(f"a={broken}", f"b={SAMPLE_FILES[1]}", out=out, extra=("--overwrite",))
    assert result.exit_code == 2
    assert "(its folder keeps an earlier run's results)" in result.output
    assert (out / "a" / SUMMARY_FILE).is_file()


def test_every_set_failing_prints_no_table(tmp_path):
    result = score(f"a={tmp_path / 'x.jsonl'}", f"b={tmp_path / 'y.jsonl'}", out=tmp_path / "o")
    assert result.exit_code == 2
    assert "2 of 2 prediction sets failed:" in result.output
    assert "CRYSTAL leaderboard" not in result.output


def test_a_single_file_still_writes_out_itself(tmp_path):
    out = tmp_path / "one"
    result = score(str(SAMPLE_FILES[0]), out=out)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        EXAMPLES_FILE,
        SUMMARY_FILE,
    ]
    assert "CRYSTAL scores (sample)" in result.output
    assert "By source" in result.output


def test_leaderboard_and_report_read_the_output_folder(tmp_path):
    out = tmp_path / "board"
    assert score(str(SAMPLE_PREDICTIONS), out=out).exit_code == 0
    folders = sorted(str(p) for p in out.iterdir())
    board = runner.invoke(app, ["leaderboard", *folders, "--resamples", "20", "-f", "csv"])
    assert board.exit_code == 0, board.output
    rows = board.output.strip().splitlines()[1:]
    assert sorted(row.split(",")[0] for row in rows) == sorted(p.stem for p in SAMPLE_FILES)
    report = tmp_path / "report.html"
    made = runner.invoke(
        app,
        ["report", *folders, "-o", str(report), "--resamples", "20", "--permutations", "50"],
    )
    assert made.exit_code == 0, made.output
    html = report.read_text()
    assert all(p.stem in html for p in SAMPLE_FILES)


@pytest.mark.slow
def test_minilm_leaderboard_equals_single_runs(tmp_path):
    """The real offline encoder: one process for three sets, then one process per set.

    Every metric is identical; matched pairs' cosines agree to 1e-6 (their last float32
    bits depend on which texts share a padded batch; see tests/scoring/test_scoring_many.py).
    """
    out = tmp_path / "board"
    named = {p.stem: p for p in SAMPLE_FILES[2:]}
    args = ["score", "-b", "sample", "-o", str(out), "--encoder", "minilm-offline"]
    args += ["--no-progress", "--no-cache", *(x for p in named.values() for x in ("-p", str(p)))]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    for name, path in named.items():
        alone = tmp_path / "alone" / name
        single = ["score", "-b", "sample", "-p", str(path), "-o", str(alone), "--no-progress"]
        done = runner.invoke(app, [*single, "--encoder", "minilm-offline", "--no-cache"])
        assert done.exit_code == 0, done.output
        together_items = (out / name / EXAMPLES_FILE).read_text().splitlines()
        alone_items = (alone / EXAMPLES_FILE).read_text().splitlines()
        assert len(together_items) == len(alone_items) == 40
        for a, b in zip(alone_items, together_items, strict=True):
            a, b = json.loads(a), json.loads(b)
            pairs_a, pairs_b = a.pop("matches"), b.pop("matches")
            assert a == b
            assert [m[:2] for m in pairs_a] == [m[:2] for m in pairs_b]
            assert all(abs(m[2] - n[2]) <= 1e-6 for m, n in zip(pairs_a, pairs_b, strict=True))
        a, b = summary_of(alone), summary_of(out / name)
        a.pop("examples_sha256"), b.pop("examples_sha256")
        assert a == b
