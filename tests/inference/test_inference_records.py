"""The inference output file: appends, torn-line repair, latest-wins, compaction, locking."""

from __future__ import annotations

import json
import os

import pytest

from crystalbench.data.predictions import load_predictions
from crystalbench.errors import InputError
from crystalbench.inference.records import (
    FileLockedError,
    GenerationSettings,
    InferenceRecord,
    ResultsFile,
)


def record(item_id, *, response="Answer: B", error=None, model="m", **extra):
    base = {
        "id": item_id,
        "model": model,
        "backend": "openai",
        "prompt_name": "infer_v1",
        "prompt_hash": "abc",
        "generation": GenerationSettings(),
        "created_at": "2026-01-01T00:00:00+00:00",
    }
    if error is None:
        base.update(response=response, steps=["s"], answer="B", parse_status="markup")
    else:
        base.update(error=error, error_kind="server_error", attempts=6)
    base.update(extra)
    return InferenceRecord(**base)


def append_all(results, records):
    with results.writing():
        for r in records:
            results.append(r)


def test_appended_records_read_back_in_order(tmp_path):
    results = ResultsFile(tmp_path / "p.jsonl")
    append_all(results, [record("a"), record("b", error="HTTP 500")])
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b"]
    loaded = results.load()
    assert list(loaded.by_id) == ["a", "b"]
    assert loaded.done_ids == {"a"}
    assert loaded.error_ids == {"b"}
    assert loaded.torn is None


def test_a_torn_last_line_is_truncated_and_reported(tmp_path):
    path = tmp_path / "p.jsonl"
    append_all(ResultsFile(path), [record("a"), record("b")])
    complete = path.read_bytes()
    torn = b'{"id": "c", "model": "m", "response": "half a rec'
    path.write_bytes(complete + torn)

    loaded = ResultsFile(path).load()

    assert loaded.torn is not None
    assert loaded.torn.offset == len(complete)
    assert loaded.torn.length == len(torn)
    assert loaded.torn.preview.startswith('{"id": "c"')
    assert path.read_bytes() == complete  # exactly the complete lines remain
    assert list(loaded.by_id) == ["a", "b"]
    assert ResultsFile(path).load().torn is None  # repaired once, nothing left to repair


def test_a_file_that_is_only_a_torn_line_becomes_empty(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"id": "x", "mo')
    loaded = ResultsFile(path).load()
    assert loaded.torn is not None
    assert loaded.torn.offset == 0
    assert path.read_bytes() == b""
    assert loaded.by_id == {}


def test_a_torn_multibyte_character_is_repaired(tmp_path):
    path = tmp_path / "p.jsonl"
    append_all(ResultsFile(path), [record("a", response="ünïcode ✓")])
    good = path.read_bytes()
    path.write_bytes(good + '{"id": "b", "response": "✓'.encode()[:-1])  # cut inside ✓
    loaded = ResultsFile(path).load()
    assert loaded.torn is not None
    assert path.read_bytes() == good
    assert loaded.by_id["a"].response == "ünïcode ✓"


def test_a_malformed_complete_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "p.jsonl"
    append_all(ResultsFile(path), [record("a")])
    with path.open("a") as handle:
        handle.write("not json\n")
    with pytest.raises(InputError) as info:
        ResultsFile(path).load()
    assert info.value.line == 2
    assert "p.jsonl:2" in str(info.value)


def test_a_foreign_record_is_an_error_naming_the_field(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "a", "reasoning_steps": ["x"], "answer": "B"}) + "\n")
    with pytest.raises(InputError) as info:
        ResultsFile(path).load()
    assert info.value.line == 1
    assert info.value.field in {"model", "backend", "prompt_name", "prompt_hash"}


def test_the_latest_record_for_an_id_wins_and_compaction_keeps_one(tmp_path):
    path = tmp_path / "p.jsonl"
    results = ResultsFile(path)
    append_all(results, [record("a", error="timeout"), record("b"), record("a", response="new")])
    loaded = results.load()
    assert loaded.duplicates == 1
    assert loaded.by_id["a"].response == "new"
    assert loaded.done_ids == {"a", "b"}

    results.compact(loaded, order=["a", "b"])

    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    assert rows[0]["response"] == "new"
    assert ResultsFile(path).load().duplicates == 0


def test_compaction_puts_ids_in_benchmark_order_and_unknown_ids_last(tmp_path):
    path = tmp_path / "p.jsonl"
    results = ResultsFile(path)
    append_all(results, [record("z"), record("c"), record("a"), record("b")])
    results.compact(results.load(), order=["a", "b", "c"])
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == [
        "a",
        "b",
        "c",
        "z",
    ]


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path):
    first = ResultsFile(tmp_path / "p.jsonl")
    second = ResultsFile(tmp_path / "p.jsonl")
    with first.writing(), pytest.raises(FileLockedError):
        second.lock()
    second.lock()  # released once the first writer is done
    second.unlock()


def test_fsync_policy(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])

    every = ResultsFile(tmp_path / "every.jsonl", fsync_interval=0)
    append_all(every, [record("a"), record("b"), record("c")])
    assert len(calls) == 3  # one per record, nothing left to sync at close

    calls.clear()
    rarely = ResultsFile(tmp_path / "rarely.jsonl", fsync_interval=3600)
    append_all(rarely, [record("a"), record("b"), record("c")])
    assert len(calls) == 1  # only when closing


def test_records_score_directly_and_error_records_count_as_missing(tmp_path):
    path = tmp_path / "p.jsonl"
    append_all(
        ResultsFile(path),
        [
            record("a", response='{"reasoning_steps": ["x"], "answer": "C"}'),
            record("b", error="500"),
        ],
    )
    predictions = load_predictions(path)
    assert predictions.by_id["a"].response == '{"reasoning_steps": ["x"], "answer": "C"}'
    missing = predictions.by_id["b"]
    assert missing.response is None
    assert missing.answer is None
    assert missing.reasoning_steps is None
    assert predictions.model == "m"


def test_generation_settings_reject_nonsense():
    with pytest.raises(ValueError):
        GenerationSettings(temperature=-1)
    with pytest.raises(ValueError):
        GenerationSettings(max_tokens=0)
    with pytest.raises(ValueError):
        GenerationSettings(top_p=1.5)
