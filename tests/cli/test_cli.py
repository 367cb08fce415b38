"""The ``crystal`` CLI: success paths and every error path of ``crystal score``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR, load_benchmark

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def score_args(preds, out, *extra):
    return [
        "score",
        "--benchmark",
        "sample",
        "--predictions",
        str(preds),
        "--out",
        str(out),
        "--encoder",
        "hash",
        "--no-progress",
        *extra,
    ]


def write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_score_writes_results_and_prints_summary(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    result = runner.invoke(app, score_args(preds, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "Match F1" in result.output
    assert "By source" in result.output
    lines = (tmp_path / "out" / "examples.jsonl").read_text().splitlines()
    assert len(lines) == len(load_benchmark("sample"))
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["encoder"] == "hash"
    assert summary["config"]["threshold"] == 0.35
    assert summary["config"]["alpha"] == 0.3
    assert summary["config"]["order_metric"] == "lis"


def test_score_options_reach_the_config(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    result = runner.invoke(
        app,
        score_args(
            preds,
            tmp_path / "out",
            "--threshold",
            "0.5",
            "--alpha",
            "0",
            "--order",
            "kendall",
            "--compat",
            "crystal-metrics-0.2",
            "--sources",
            "mmvp,plotqa",
        ),
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    config = summary["config"]
    assert (config["threshold"], config["alpha"], config["order_metric"], config["compat"]) == (
        0.5,
        0.0,
        "kendall",
        "crystal-metrics-0.2",
    )
    assert set(summary["by_source"]) == {"mmvp", "plotqa"}
    assert summary["n_items"] == 16


def test_score_accepts_a_config_file(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    config = tmp_path / "c.yaml"
    config.write_text("encoder: hash\nthreshold: 0.6\n")
    result = runner.invoke(
        app,
        [
            "score",
            "-b",
            "sample",
            "-p",
            str(preds),
            "-o",
            str(tmp_path / "o"),
            "--config",
            str(config),
            "--no-progress",
            "--alpha",
            "0.1",
        ],
    )
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "o" / "summary.json").read_text())["config"]
    assert (written["encoder"], written["threshold"], written["alpha"]) == ("hash", 0.6, 0.1)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            ['{"id": "mathvision-01", "reasoning_steps": ["a"]}', "{oops"],
            "p.jsonl:2: malformed JSON",
        ),
        (
            [{"id": "mathvision-01", "reasoning_steps": "x"}, {"id": "mathvision-01"}],
            "p.jsonl:2: field id: duplicate id",
        ),
        ([{"id": "mathvision-01", "reasoning_steps": [1]}], "p.jsonl:1: field reasoning_steps"),
        (
            [{"id": "no-such-item", "reasoning_steps": ["a"]}],
            "p.jsonl:1: field id: unknown item id",
        ),
        ([{"id": "mathvision-01", "answer": {"x": 1}}], "p.jsonl:1: field answer"),
        (["[1, 2]"], "p.jsonl:1: expected a JSON object"),
    ],
)
def test_bad_prediction_files_exit_2_naming_file_and_line(tmp_path, cache, rows, expected):
    preds = write(tmp_path / "p.jsonl", rows)
    result = runner.invoke(app, score_args(preds, tmp_path / "out"))
    assert result.exit_code == 2
    assert expected in result.output.replace("\n", "")
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "summary.json").exists()


def test_empty_predictions_file(tmp_path, cache):
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    result = runner.invoke(app, score_args(preds, tmp_path / "out"))
    assert result.exit_code == 2
    assert "holds no records" in result.output


def test_lenient_counts_skips(tmp_path, cache):
    preds = write(
        tmp_path / "p.jsonl",
        [{"id": "mathvision-01", "reasoning_steps": ["a"]}, "{bad", {"id": "ghost", "answer": "1"}],
    )
    result = runner.invoke(app, [*score_args(preds, tmp_path / "out"), "--lenient"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_invalid_records"] == 1
    assert summary["n_unknown_ids"] == 1
    assert "skipped records 2" in result.output


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--compat", "crystal-metrics"], "unknown compat mode 'crystal-metrics'"),
        (["--sources", "mathvison"], "did you mean 'mathvision'"),
        (["--order", "spearman"], "field scoring.order_metric: Input should be 'lis' or 'kendall'"),
        (["--threshold", "7"], "field scoring.threshold: Input should be less than or equal to 1"),
        (["--tau", "7"], "(from --tau 7)"),
        (["--limit", "0"], "field scoring.limit: Input should be greater than or equal to 1"),
        (["--ids", "nope-1,nope-2"], "unknown item ids: nope-1, nope-2"),
        (["--ids", "@missing-ids.txt"], "missing-ids.txt: field ids: ids file not found"),
        (
            ["--judge-url", "http://127.0.0.1:9/v1"],
            "field scoring.judge.model: required with scoring.judge.url (from --judge-url "
            "http://127.0.0.1:9/v1): give --judge-model",
        ),
        (["--matcher", "judge"], "matcher 'judge' needs an endpoint"),
        (["--input-format", "xlsx"], "field input_format: Input should be 'auto', 'crystal'"),
    ],
)
def test_bad_options_exit_2(tmp_path, cache, extra, expected):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    result = runner.invoke(app, [*score_args(preds, tmp_path / "out"), *extra])
    assert result.exit_code == 2, result.output
    assert expected in result.output.replace("\n", "")


def test_missing_inputs_exit_2(tmp_path, cache):
    result = runner.invoke(app, score_args(tmp_path / "nope.jsonl", tmp_path / "out"))
    assert result.exit_code == 2
    assert "predictions not found" in result.output
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    result = runner.invoke(
        app,
        [
            "score",
            "-b",
            str(tmp_path / "b.jsonl"),
            "-p",
            str(preds),
            "-o",
            str(tmp_path / "o"),
            "--encoder",
            "hash",
        ],
    )
    assert result.exit_code == 2
    assert "benchmark not found" in result.output


def test_cache_info_and_clear(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    assert runner.invoke(app, score_args(preds, tmp_path / "out")).exit_code == 0
    info = runner.invoke(app, ["cache", "info"])
    assert info.exit_code == 0
    assert "hash-bow-v1:256" in info.output
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0
    assert "removed" in cleared.output
    assert "hash-bow" not in runner.invoke(app, ["cache", "info"]).output


@pytest.mark.slow
def test_demo_prints_leaderboard(tmp_path, cache):
    result = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "CRYSTAL sample leaderboard" in result.output
    assert "minilm-offline" in result.output
    assert "NOT comparable" in result.output
    for style in ("terse-precise", "verbose-recall", "scrambled-order", "messy-raw"):
        assert style in result.output
        assert (tmp_path / "demo" / style / "summary.json").is_file()
    assert (tmp_path / "demo" / "report.html").is_file()
    assert "report.html" in result.output


def test_demo_without_a_report_writes_none_and_names_none(tmp_path, cache):
    """``--no-report`` once ended in an UnboundLocalError (found by the docs' examples)."""
    out = tmp_path / "demo"
    result = runner.invoke(app, ["demo", "--out", str(out), "--encoder", "hash", "--no-report"])
    assert result.exit_code == 0, result.output
    assert (out / "terse-precise" / "summary.json").is_file()
    assert not (out / "report.html").exists()
    assert "report.html" not in result.output


def test_ids_and_limit_score_a_subset_recorded_in_the_summary(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    bench = load_benchmark("sample")
    listing = tmp_path / "ids.txt"
    listing.write_text(f"{bench.ids[7]}\n{bench.ids[3]}\n{bench.ids[30]}\n")
    result = runner.invoke(
        app, score_args(preds, tmp_path / "out", "--ids", f"@{listing}", "--limit", "2")
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_items"] == 2
    assert summary["config"]["ids"] == [bench.ids[7], bench.ids[3], bench.ids[30]]
    assert summary["config"]["limit"] == 2
    scored = [json.loads(line)["id"] for line in (tmp_path / "out" / "examples.jsonl").open()]
    assert scored == [bench.ids[3], bench.ids[7]]  # benchmark order, the first two of the ids


def test_quiet_prints_nothing_but_errors(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    result = runner.invoke(app, score_args(preds, tmp_path / "out", "-q"))
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert (tmp_path / "out" / "summary.json").is_file()
    bad = runner.invoke(app, score_args(preds, tmp_path / "out", "-q", "--limit", "0"))
    assert bad.exit_code == 2
    assert bad.stdout == ""
    assert "field scoring.limit" in bad.stderr


def test_an_error_message_is_printed_as_text_not_markup(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    result = runner.invoke(app, score_args(preds, tmp_path / "out", "--ids", "x[embed]"))
    assert result.exit_code == 2
    assert "unknown item ids: x[embed]" in result.output


def test_a_toml_config_file_and_its_bad_value(tmp_path, cache):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    config = tmp_path / "score.toml"
    config.write_text('encoder = "hash"\nalpha = 0.2\n')
    args = ["score", "-b", "sample", "-p", str(preds), "-o", str(tmp_path / "o"), "--no-progress"]
    result = runner.invoke(app, [*args, "--config", str(config)])
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "o" / "summary.json").read_text())["config"]
    assert (written["encoder"], written["alpha"]) == ("hash", 0.2)
    config.write_text('encoder = "hash"\nalpha = 2\n')
    result = runner.invoke(app, [*args, "--config", str(config)])
    assert result.exit_code == 2
    assert f"{config}: field scoring.alpha: Input should be less than or equal to 1" in (
        result.output.replace("\n", "")
    )


def test_cache_info_on_a_new_folder_creates_nothing(tmp_path):
    folder = tmp_path / "no-cache-here"
    for command in ("info", "clear"):
        result = runner.invoke(app, ["cache", command, "--cache-dir", str(folder)])
        assert result.exit_code == 0, result.output
        assert "no embedding cache at" in result.output
    assert not folder.exists()
