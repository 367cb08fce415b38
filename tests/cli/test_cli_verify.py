"""``crystal score --verify`` end to end: the sample against a scripted loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app

pytest.importorskip("uvicorn")
from servers.openai_server import LoopbackServer, ServerState

SAMPLE = Path(__file__).resolve().parents[2] / "src/crystalbench/data/sample/predictions"
runner = CliRunner()


def score(out: Path, server: LoopbackServer, cache: Path, *extra: str):
    args = ["score", "-b", "sample", "-p", str(SAMPLE / "verbose-recall.jsonl"), "-o", str(out),
            "--encoder", "hash", "--limit", "3", "--cache-dir", str(cache), "--verify",
            "unmatched", "--verifier-url", server.base_url, "--verifier-model", "vlm",
            "--quiet", *extra]  # fmt: skip
    return runner.invoke(app, args)


def test_score_with_a_verifier_then_from_the_cache_then_dry(tmp_path):
    verdict = json.dumps({"label": "supported", "p_correct": 0.9, "reason": "fine"})
    with LoopbackServer(ServerState()) as server:
        server.state.configure({"answers": {"Step to check:": verdict}})
        first = score(tmp_path / "a", server, tmp_path / "cache")
        assert first.exit_code == 0, first.output
        sent = len(server.state.log)
        assert sent > 0
        summary = json.loads((tmp_path / "a" / "summary.json").read_text())
        verified = summary["verification"]
        assert verified["n_unverified"] == 0
        assert verified["requests"] == sent
        assert summary["config"]["verify"] == "unmatched"
        records = [json.loads(line) for line in (tmp_path / "a" / "examples.jsonl").open()]
        unmatched = sum(len(r["pred_steps"]) - len({m[0] for m in r["matches"]}) for r in records)
        assert sum(len(r["verdicts"]) for r in records) == unmatched == verified["n_checked"]

        again = score(tmp_path / "b", server, tmp_path / "cache")
        assert again.exit_code == 0, again.output
        assert len(server.state.log) == sent  # every call from the cache
        assert (
            json.loads((tmp_path / "b" / "summary.json").read_text())["verification"]["cache_hits"]
            == sent
        )

        dry = score(tmp_path / "c", server, tmp_path / "cache-dry", "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert len(server.state.log) == sent  # nothing sent
        assert "dry run" in dry.output


def test_verify_without_a_verifier_is_one_clear_line(tmp_path):
    result = runner.invoke(
        app,
        ["score", "-b", "sample", "-p", str(SAMPLE / "verbose-recall.jsonl"), "-o", str(tmp_path),
         "--encoder", "hash", "--verify", "unmatched"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "needs a verifier" in result.output
    assert "Traceback" not in result.output


def test_score_with_two_judges_reports_their_agreement(tmp_path):
    pytest.importorskip("krippendorff")
    supported = json.dumps({"label": "supported", "p_correct": 0.9, "reason": "fine"})
    wrong = json.dumps({"label": "wrong_logic", "p_correct": 0.2, "reason": "no"})
    with LoopbackServer(ServerState()) as server:
        server.state.configure(
            {"model_answers": {"a": {"Step to check:": supported}, "b": {"Step to check:": wrong}}}
        )
        result = runner.invoke(
            app,
            ["score", "-b", "sample", "-p", str(SAMPLE / "verbose-recall.jsonl"), "-o",
             str(tmp_path / "out"), "--encoder", "hash", "--limit", "3", "--cache-dir",
             str(tmp_path / "cache"), "--verify", "unmatched", "--verifier-url",
             server.base_url, "--verifier-model", "a", "--verifier-model", "b"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert {entry["model"] for entry in server.state.log} == {"a", "b"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    verified = summary["verification"]
    assert [j["model"] for j in summary["config"]["verifier"]["judges"]] == ["a", "b"]
    agreement = verified["agreement"]
    # a always supports, b never: every tie goes to b's wrong_logic.
    assert agreement["n_ties"] == agreement["n_units"] > 0
    assert agreement["percent_agreement"] == 0.0
    assert verified["labels"]["supported"] == 0
    assert agreement["by_judge"]["model:a"]["verified_precision"] > verified["verified_precision"]
    assert "2 judges" in result.output


def test_run_takes_the_verifier(tmp_path):
    """``crystal run --verify unmatched``: infer from a loopback server, then score with the
    verifier (the same server, asked about the unmatched steps); the verdicts land in the
    run's records and the verification block in its summary."""
    verdict = json.dumps({"label": "wrong_perception", "p_correct": 0.1, "reason": "no"})
    out = tmp_path / "run"
    with LoopbackServer(ServerState()) as server:
        server.state.configure({"answers": {"Step to check:": verdict}})
        args = ["run", "-m", "test-model", "-b", "sample", "--base-url", server.base_url,
                "--limit", "2", "-o", str(out), "--encoder", "hash", "--no-report",
                "--no-progress", "--cache-dir", str(tmp_path / "cache"), "--verify",
                "unmatched", "--verifier-url", server.base_url,
                "--verifier-model", "vlm"]  # fmt: skip
        result = runner.invoke(app, args)
        asked = [e for e in server.state.log if e["key"] == "Step to check:"]
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    verified = summary["verification"]
    assert verified["n_checked"] > 0
    assert verified["labels"]["wrong_perception"] == verified["n_model_verdicts"] > 0
    assert len(asked) == verified["requests"]
    assert summary["config"]["verifier"]["model"] == "vlm"
    assert "verifier vlm (unmatched" in result.output
    assert "Halluc" in result.output  # the verifier's columns in the run's table
