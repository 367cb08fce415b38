"""``crystal score`` and ``crystal run`` with ``--extractor-url`` / ``--extractor-model``: a
scripted loopback server reads the answers no rule committed on; the run says which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from fakes import make_item, write_jsonl

pytest.importorskip("openai")
pytest.importorskip("uvicorn")
from servers.openai_server import LoopbackServer, ServerState

runner = CliRunner()
GROUP = "The taller bar belongs to the second group, so that one wins."


def files(tmp_path: Path) -> tuple[Path, Path]:
    items = [
        make_item("1", answer="B", options=["first group", "second group"]),
        make_item("2", answer="7"),
    ]
    bench = write_jsonl(tmp_path / "bench.jsonl", [i.model_dump(mode="json") for i in items])
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"id": "1", "response": GROUP}, {"id": "2", "response": "Counting.\nAnswer: 7"}],
    )
    return bench, preds


def score(tmp_path: Path, out: str, *extra: str):
    bench, preds = files(tmp_path)
    args = ["score", "-b", str(bench), "-p", str(preds), "-o", str(tmp_path / out),
            "--encoder", "hash", "--cache-dir", str(tmp_path / "cache"), "--no-progress",
            *extra]  # fmt: skip
    return runner.invoke(app, args)


def read(folder: Path) -> tuple[dict, list[dict]]:
    summary = json.loads((folder / "summary.json").read_text())
    records = [json.loads(line) for line in (folder / "examples.jsonl").open()]
    return summary, records


def test_score_with_an_extractor_then_from_the_cache(tmp_path):
    with LoopbackServer(ServerState()) as server:
        server.state.configure({"answers": {"so that one wins": json.dumps({"answer": "B"})}})
        flags = ("--extractor-url", server.base_url, "--extractor-model", "reader")
        first = score(tmp_path, "a", *flags)
        assert first.exit_code == 0, first.output
        assert "1 answers read by the model" in first.output
        assert "0 failed calls" in first.output
        assert len(server.state.log) == 1  # only the item no rule committed on
        summary, records = read(tmp_path / "a")
        assert summary["config"]["answer_extraction"] == "rules+model"
        assert summary["config"]["extractor"]["model"] == "reader"
        extraction = summary["extraction"]
        assert (extraction["n_asked"], extraction["n_extracted"], extraction["n_failed"]) == (
            1,
            1,
            0,
        )
        assert records[0]["answer_extraction"] == "model"
        assert records[0]["answer_extractor"] == "model:reader"
        assert records[0]["answer_correct"] is True
        assert records[1]["answer_extraction"] == "answer_line"
        assert "answer_extractor" not in records[1]

        again = score(tmp_path, "b", *flags)
        assert again.exit_code == 0, again.output
        assert len(server.state.log) == 1  # from the cache
        assert read(tmp_path / "b")[0]["extraction"]["cache_hits"] == 1

    plain = score(tmp_path, "c")  # the default: rules only, said so
    assert plain.exit_code == 0, plain.output
    assert "answer extractor" not in plain.output
    summary, records = read(tmp_path / "c")
    assert summary["config"]["answer_extraction"] == "rules"
    assert "extraction" not in summary
    assert "extractor" not in summary["config"]
    assert records[0]["pred_answer"] is None
    assert "answer_extractor" not in records[0]


def test_an_extractor_without_its_model_is_one_clear_line(tmp_path):
    result = score(tmp_path, "a", "--extractor-url", "http://127.0.0.1:9/v1")
    assert result.exit_code == 2
    assert "extractor" in result.output
    assert "model" in result.output
    assert "Traceback" not in result.output


def test_run_reads_the_answers_no_rule_committed_on(tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    item = load_benchmark("sample").items[0]
    with LoopbackServer(ServerState()) as server:
        server.state.configure(
            {
                "answers": {
                    item.question[:20]: GROUP,  # the model under test: a sentence-only answer
                    "Response:\n" + GROUP: json.dumps({"answer": item.answer}),
                }
            }
        )
        args = ["run", "-m", "test-model", "-o", str(tmp_path / "run"), "-b", "sample",
                "--base-url", server.base_url, "--limit", "1", "--encoder", "hash",
                "--no-progress", "--no-report", "--extractor-url", server.base_url,
                "--extractor-model", "reader"]  # fmt: skip
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "1 answers read by the model" in result.output
    summary, records = read(tmp_path / "run")
    assert summary["extraction"]["n_extracted"] == 1
    assert records[0]["pred_answer"] == item.answer
    assert records[0]["answer_extraction"] == "model"
