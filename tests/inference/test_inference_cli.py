"""``crystal infer`` and ``crystal run`` against a loopback server, including a kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from servers.openai_server import LoopbackServer

runner = CliRunner()
MODEL = "test-model"


@pytest.fixture(scope="module")
def server():
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def state(server):
    server.state.configure({})
    return server.state


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("sample")


def infer_args(server, out, *extra):
    return [
        "infer",
        "-m",
        MODEL,
        "-o",
        str(out),
        "-b",
        "sample",
        "--base-url",
        server.base_url,
        "--no-progress",
        *extra,
    ]


def ids_in(path):
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_limit_sources_and_ids_select_items(server, state, bench, tmp_path):
    out = tmp_path / "limit.jsonl"
    result = runner.invoke(app, infer_args(server, out, "--limit", "3"))
    assert result.exit_code == 0, result.output
    assert ids_in(out) == bench.ids[:3]

    out = tmp_path / "sources.jsonl"
    result = runner.invoke(app, infer_args(server, out, "--sources", "mmvp,plotqa"))
    assert result.exit_code == 0, result.output
    expected = [i.id for i in bench.items if i.source in {"mmvp", "plotqa"}]
    assert ids_in(out) == expected
    assert expected

    out = tmp_path / "ids.jsonl"
    chosen = [bench.ids[7], bench.ids[2]]
    result = runner.invoke(app, infer_args(server, out, "--ids", ",".join(chosen)))
    assert result.exit_code == 0, result.output
    assert ids_in(out) == [bench.ids[2], bench.ids[7]]  # written in benchmark order

    listing = tmp_path / "ids.txt"
    listing.write_text(f"{bench.ids[9]}\n\n{bench.ids[4]}\n")
    out = tmp_path / "ids-file.jsonl"
    result = runner.invoke(app, infer_args(server, out, "--ids", f"@{listing}"))
    assert result.exit_code == 0, result.output
    assert ids_in(out) == [bench.ids[4], bench.ids[9]]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sources", "mathvison"], "mathvision"),
        (["--ids", "no-such-id"], "no-such-id"),
        (["--extra-body", "{top_k: 1}"], "extra-body"),
        (["--prompt-file", "missing-template.txt"], "not found"),
        (["--model-backend", "vllmm"], "vllm"),
        (["--concurrency", "0"], "field concurrency"),
        (["--temperature", "-1"], "field generation.temperature"),
        (["--timeout", "0"], "field timeout"),
        (["--max-retry-after", "-5"], "field max_retry_after"),
    ],
)
def test_bad_options_exit_2_with_a_message(server, state, tmp_path, extra, message):
    result = runner.invoke(app, infer_args(server, tmp_path / "p.jsonl", *extra))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert state.log == []


def test_resume_and_retry_errors(server, state, bench, tmp_path):
    out = tmp_path / "p.jsonl"
    broken = bench.items[2]
    state.faults[broken.question] = [{"status": 500}] * 2
    result = runner.invoke(app, infer_args(server, out, "--limit", "5", "--max-attempts", "2"))
    assert result.exit_code == 1, result.output
    assert "--retry-errors" in result.output
    assert len(state.log) == 4 + 2

    state.log.clear()
    result = runner.invoke(app, infer_args(server, out, "--limit", "6"))
    assert result.exit_code == 1, result.output  # the error record is still pending
    assert len(state.log) == 1  # only the sixth item: finished ones and the error are skipped

    state.log.clear()
    result = runner.invoke(app, infer_args(server, out, "--limit", "6", "--retry-errors"))
    assert result.exit_code == 0, result.output
    assert [e["key"] for e in state.log] == [broken.question]  # just the failed item
    assert ids_in(out) == bench.ids[:6]
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows[broken.id]["error"] is None


def test_a_prompt_file_is_used(server, state, bench, tmp_path):
    template = tmp_path / "official.txt"
    template.write_text("MARKER-7 Answer this: {question}\n{options}\nJSON only.\n")
    state.answers["MARKER-7"] = '{"reasoning_steps": ["Custom prompt seen."], "answer": "Q"}'
    out = tmp_path / "p.jsonl"
    result = runner.invoke(
        app, infer_args(server, out, "--limit", "2", "--prompt-file", str(template))
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["answer"] for r in rows} == {"Q"}
    assert {r["prompt_name"] for r in rows} == {"official.txt"}


def test_run_infers_scores_and_reports(server, state, bench, tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    out_dir = tmp_path / "run"
    item = bench.items[0]
    state.answers[item.question] = json.dumps(
        {"reasoning_steps": item.reference_steps, "answer": item.answer}
    )
    args = [
        "run",
        "-m",
        MODEL,
        "-o",
        str(out_dir),
        "-b",
        "sample",
        "--base-url",
        server.base_url,
        "--limit",
        "4",
        "--encoder",
        "hash",
        "--no-progress",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Match F1" in result.output
    examples = [json.loads(line) for line in (out_dir / "examples.jsonl").read_text().splitlines()]
    assert [e["id"] for e in examples] == bench.ids[:4]
    perfect = examples[0]
    assert perfect["f1"] == 1.0
    assert perfect["answer_correct"] is True
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["n_items"] == 4
    assert summary["n_missing"] == 0
    inference = json.loads((out_dir / "inference.json").read_text())
    assert inference["n_ok"] == 4
    assert inference["config"]["model"] == MODEL
    assert inference["config"]["limit"] == 4
    assert inference["config"]["base_urls"] == [server.base_url]
    assert (out_dir / "report.html").is_file()
    assert not (out_dir / "predictions.inference.json").exists()  # inference.json is the one

    state.log.clear()
    result = runner.invoke(app, args)  # resumes: nothing to ask, scores again from the cache
    assert result.exit_code == 0, result.output
    assert state.log == []
    assert "from the cache" in result.output


def line_count(path):
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_kill_9_mid_run_then_resume(server, state, bench, tmp_path):
    """SIGKILL a real `crystal infer` process mid-run; the rerun loses and duplicates nothing."""
    state.delay = 0.25
    out = tmp_path / "p.jsonl"
    args = infer_args(server, out, "--concurrency", "3", "--fsync-interval", "0")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "crystalbench.cli.main", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 60
    try:
        while line_count(out) < 6:
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "crystal infer wrote too few records"
            time.sleep(0.02)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    before = out.read_bytes()
    survivors = [json.loads(line) for line in before.split(b"\n")[:-1]]
    assert 6 <= len(survivors) < len(bench)

    time.sleep(0.3)  # let the server receive whatever the dead process had already sent
    rerun_started = time.time()
    state.delay = 0.0
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output

    text = out.read_text()
    assert text.endswith("\n")
    final = [json.loads(line) for line in text.splitlines()]
    assert [r["id"] for r in final] == bench.ids  # every id exactly once, in order
    by_id = {r["id"]: r for r in final}
    for record in survivors:  # records written before the kill are kept as they were
        assert by_id[record["id"]] == record
    # The rerun asked for exactly the items without a record (the killed process's
    # in-flight requests may still finish on the server, but nobody writes them).
    rerun_requests = [e for e in state.log if e["t"] >= rerun_started]
    assert len(rerun_requests) == len(bench) - len(survivors)


def test_a_torn_line_is_repaired_and_reported(server, state, bench, tmp_path):
    out = tmp_path / "p.jsonl"
    assert runner.invoke(app, infer_args(server, out, "--limit", "3")).exit_code == 0
    complete = out.read_bytes()
    out.write_bytes(complete + b'{"id": "' + bench.ids[3].encode() + b'", "model": "test-mo')
    state.log.clear()
    result = runner.invoke(app, infer_args(server, out, "--limit", "4"))
    assert result.exit_code == 0, result.output
    assert "torn" in result.output
    assert ids_in(out) == bench.ids[:4]
    assert len(state.log) == 1


def test_no_model_anywhere_exits_2(server, state, tmp_path):
    args = infer_args(server, tmp_path / "p.jsonl")
    at = args.index("-m")
    result = runner.invoke(app, args[:at] + args[at + 2 :])
    assert result.exit_code == 2, result.output
    assert "--model" in result.output
    assert state.log == []


def test_a_config_file_sets_the_run_and_flags_win(server, state, bench, tmp_path):
    config = tmp_path / "qwen.yaml"
    config.write_text(
        f"model: {MODEL}\n"
        "benchmark: sample\n"
        f"base_urls: [{server.base_url}]\n"
        "limit: 2\n"
        "generation:\n"
        "  temperature: 0.0\n"
        "  max_tokens: 77\n"
        "extra_body: {top_k: 20}\n"
    )
    out = tmp_path / "p.jsonl"
    result = runner.invoke(
        app, ["infer", "--config", str(config), "-o", str(out), "--limit", "3", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == bench.ids[:3]  # the flag's limit, not the file's
    assert {json.dumps(r["generation"], sort_keys=True) for r in rows} == {
        json.dumps({"max_tokens": 77, "seed": None, "temperature": 0.0, "top_p": None})
    }
    manifest = json.loads((tmp_path / "p.inference.json").read_text())
    assert manifest["n_ok"] == 3
    assert manifest["config"]["limit"] == 3
    assert manifest["config"]["generation"]["max_tokens"] == 77
    assert manifest["config"]["extra_body"] == {"top_k": 20}
    from crystalbench.inference import InferenceConfig

    again = InferenceConfig.model_validate(manifest["config"])  # the record reloads as is
    assert again.limit == 3
    assert again.base_urls == [server.base_url]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "model: m\ntemprature: 0.3\n",
            "bad.yaml:2: field temprature: unknown field (valid: abort_after",
        ),
        ("model: m\ngeneration: {max_tokens: 0}\n", "field generation.max_tokens"),
        ("model: m\nbackend: ollama\n", "unknown backend 'ollama'"),
        ("- model\n", "expected a mapping"),
    ],
)
def test_a_bad_config_file_exits_2_naming_the_field(server, state, tmp_path, text, message):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    result = runner.invoke(app, ["infer", "--config", str(config), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert state.log == []


def test_timeout_bounds_a_request_the_server_drips(server, state, tmp_path):
    state.configure({"drip": 0.5})  # every answer: one byte per half second, 10 s in all
    out = tmp_path / "p.jsonl"
    started = time.monotonic()
    result = runner.invoke(
        app, infer_args(server, out, "--limit", "1", "--timeout", "1", "--max-attempts", "1")
    )
    assert time.monotonic() - started < 4.0
    assert result.exit_code == 1, result.output
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["error_kind"] == "timeout"
    assert 1.0 <= record["total_s"] < 1.6


def test_max_retry_after_caps_what_a_server_asks_for(server, state, tmp_path):
    state.configure({"retry_after": "3600"})  # first request of each prompt: 429, "wait 1 h"
    out = tmp_path / "p.jsonl"
    result = runner.invoke(app, infer_args(server, out, "--limit", "1", "--max-retry-after", "0.3"))
    assert result.exit_code == 0, result.output
    first, second = state.log
    assert (first["status"], second["status"]) == (429, 200)
    assert 0.3 <= second["t"] - first["t"] < 1.5


def test_a_documented_variable_is_read_and_named_when_bad(server, state, tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_IMAGE_MAX_SIDE", "huge")
    result = runner.invoke(app, infer_args(server, tmp_path / "p.jsonl", "--limit", "1"))
    assert result.exit_code == 2, result.output
    assert "field max_image_side" in result.output
    assert "(from the environment variable CRYSTALBENCH_IMAGE_MAX_SIDE)" in result.output
    monkeypatch.setenv("CRYSTALBENCH_IMAGE_MAX_SIDE", "300")
    out = tmp_path / "p.jsonl"
    result = runner.invoke(app, infer_args(server, out, "--limit", "1"))
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "p.inference.json").read_text())
    assert manifest["config"]["max_image_side"] == 300
    out = tmp_path / "q.jsonl"
    flag = runner.invoke(app, infer_args(server, out, "--limit", "1", "--max-image-side", "200"))
    assert flag.exit_code == 0, flag.output
    manifest = json.loads((tmp_path / "q.inference.json").read_text())
    assert manifest["config"]["max_image_side"] == 200  # the flag wins over the variable


def test_run_reads_a_scoring_section_and_the_old_score_config(server, state, tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    config = tmp_path / "run.yaml"
    config.write_text(
        f"model: {MODEL}\nbenchmark: sample\nbase_urls: [{server.base_url}]\nlimit: 2\n"
        "report: false\nscoring:\n  encoder: hash\n  threshold: 0.5\n"
    )
    out = tmp_path / "run"
    args = ["run", "--config", str(config), "-o", str(out), "--no-progress", "--tau", "0.6"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["config"]["encoder"], summary["config"]["threshold"]) == ("hash", 0.6)
    assert not (out / "report.html").exists()
    assert summary["config"]["cache_dir"] == str(tmp_path / "cache")

    for old in ("--out-dir", "--score-config", "--encoder-device"):  # never published
        args = ["run", "-m", MODEL, "-b", "sample", "--base-url", server.base_url, old, "x"]
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert f"No such option: {old}" in result.output
        assert not (tmp_path / "x").exists()
