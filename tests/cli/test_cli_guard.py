"""``--guard`` through the commands: ``crystal score`` (the guard line, the counts line, the
records), ``crystal run`` (a real OpenAI-compatible server on loopback), ``crystal report``,
``crystal leaderboard`` in every format, and ``crystal compare``: which guard each run used,
and that runs with different guards are not comparable."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.scoring.results import EXAMPLES_FILE, SUMMARY_FILE
from fakes import write_jsonl
from servers.openai_server import LoopbackServer

runner = CliRunner()
NUMBER = re.compile(r"\d+")


@pytest.fixture(autouse=True)
def private_cache(cache_dir):
    return cache_dir


@pytest.fixture(scope="module")
def copier(tmp_path_factory) -> Path:
    """The sample's reference chains with their numbers moved (answers right)."""
    rng = random.Random(3)
    rows = [
        {
            "id": item.id,
            "reasoning_steps": [
                NUMBER.sub(lambda m: str(int(m.group()) + rng.choice([1, 2])), step)
                for step in item.reference_steps
            ],
            "answer": item.answer,
        }
        for item in load_benchmark("sample").items
    ]
    return write_jsonl(tmp_path_factory.mktemp("copier") / "copier.jsonl", rows)


def score(predictions: Path, out: Path, *extra: str):
    args = ["score", "-b", "sample", "-p", str(predictions), "-o", str(out)]
    return runner.invoke(app, [*args, "--encoder", "hash", "--no-progress", *extra])


def test_score_with_a_guard_prints_and_records_its_vetoes(copier, tmp_path):
    result = score(copier, tmp_path / "facts", "--guard", "facts")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "facts" / SUMMARY_FILE).read_text())
    assert summary["config"]["guard"] == "facts"
    assert summary["config"]["guard_rules"].startswith("guard:")
    pairs, items = summary["n_vetoed_pairs"], summary["n_vetoed_items"]
    assert pairs >= items > 5
    assert sum(summary["vetoed_by_reason"].values()) == pairs
    reasons = ", ".join(f"{k} {v}" for k, v in summary["vetoed_by_reason"].items() if v)
    assert f"guard facts: {pairs} pairs vetoed in {items} items ({reasons})" in result.output
    assert f"vetoed pairs {pairs} | vetoed items {items}" in result.output  # the counts line
    lines = [json.loads(line) for line in (tmp_path / "facts" / EXAMPLES_FILE).open()]
    assert all("vetoed" in line for line in lines)
    assert sum(len(line["vetoed"]) for line in lines) == pairs
    plain = score(copier, tmp_path / "none")
    assert plain.exit_code == 0, plain.output
    assert "guard" not in plain.output.split("CRYSTAL scores")[1].split("encoder")[0]
    assert "vetoed" not in (tmp_path / "none" / EXAMPLES_FILE).read_text()
    none = json.loads((tmp_path / "none" / SUMMARY_FILE).read_text())
    assert none["config"]["guard"] == "none"
    assert none["match_f1"] > summary["match_f1"]


def test_a_bad_guard_names_the_valid_ones_and_exits_2(copier, tmp_path):
    result = score(copier, tmp_path / "x", "--guard", "fact")
    assert result.exit_code == 2
    assert "facts-strict" in result.output
    config = tmp_path / "score.yaml"
    config.write_text("encoder: hash\nguard: facts-strict\n")
    from_file = score(copier, tmp_path / "y", "--config", str(config))
    assert from_file.exit_code == 0, from_file.output
    written = json.loads((tmp_path / "y" / SUMMARY_FILE).read_text())
    assert written["config"]["guard"] == "facts-strict"
    config.write_text("encoder: hash\nguard: strict\n")
    bad = score(copier, tmp_path / "z", "--config", str(config))
    assert bad.exit_code == 2
    assert "score.yaml:2" in bad.output
    assert "field scoring.guard" in bad.output


def test_several_sets_print_one_guard_line_each(copier, tmp_path):
    out = tmp_path / "board"
    args = ["score", "-b", "sample", "-o", str(out), "--encoder", "hash", "--no-progress"]
    args += ["-p", f"copier={copier}", "-p", f"again={copier}", "--guard", "facts-strict"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "copier: guard facts-strict:" in result.output
    assert "again: guard facts-strict:" in result.output
    assert "Guard" in result.output  # the leaderboard table's column


@pytest.fixture
def two_runs(copier, tmp_path) -> tuple[Path, Path]:
    for guard in ("none", "facts"):
        result = score(copier, tmp_path / guard, "--guard", guard)
        assert result.exit_code == 0, result.output
    return tmp_path / "none", tmp_path / "facts"


@pytest.mark.parametrize("fmt", ["md", "csv", "tex"])
def test_leaderboards_name_the_guard_and_mark_mixed_guards(two_runs, fmt):
    plain, guarded = two_runs
    args = ["leaderboard", str(plain), str(guarded), "--output-format", fmt, "--resamples", "20"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    text = result.stdout
    if fmt == "csv":
        header, *rows = text.splitlines()
        assert header.split(",")[:2] == ["model", "guard"]
        assert [row.split(",")[1] for row in rows] == ["none", "facts"]
        assert "n_vetoed_pairs" in header
    else:
        assert "Guard" in text
        assert "Runs with different guards are NOT comparable (none, facts)" in text
    alone = runner.invoke(app, ["leaderboard", str(plain), "--output-format", fmt])
    assert "Guard" not in alone.stdout  # the paper's table, unchanged, without a guard
    assert "guard" not in alone.stdout.splitlines()[0]


def test_compare_and_report_warn_about_different_guards(two_runs, tmp_path):
    plain, guarded = two_runs
    compared = runner.invoke(app, ["compare", str(plain), str(guarded), "--resamples", "20"])
    assert compared.exit_code == 0, compared.output
    assert "fact guard: 'none' vs 'facts'" in compared.stderr
    report = runner.invoke(
        app, ["report", str(plain), str(guarded), "-o", str(tmp_path / "r.html"), "--no-images"]
    )
    assert report.exit_code == 0, report.output
    assert "fact guard: 'none' vs 'facts'" in report.stderr
    assert "not comparable" in report.output  # the leaderboard table's caption
    page = (tmp_path / "r.html").read_text()
    assert '"guard":"facts"' in page
    assert "different fact guards" in page  # the page's banner


def test_run_takes_the_guard(tmp_path):
    """``crystal run --guard facts``: infer (a loopback server), then score with the guard."""
    out = tmp_path / "run"
    with LoopbackServer() as server:
        server.state.configure({})
        args = [
            *("run", "-m", "test-model", "-b", "sample", "--base-url", server.base_url),
            *("--limit", "3", "-o", str(out), "--encoder", "hash", "--guard", "facts"),
            *("--no-report", "--no-progress"),
        ]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / SUMMARY_FILE).read_text())
    assert summary["config"]["guard"] == "facts"
    assert "guard facts:" in result.output
