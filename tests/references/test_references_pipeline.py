"""End to end on the bundled sample: scripted generators and validator on a loopback server."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from references_helpers import FAST, config_data
from scripted_models import GENERATORS, VALIDATOR, ScriptedModels, chain_for
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.errors import InputError
from crystalbench.references import (
    build_references,
    load_references_config,
    regenerate_references,
)
from crystalbench.references.engine import LocalEngine

SAMPLE_PREDICTIONS = Path(__file__).parents[2] / "src/crystalbench/data/sample/predictions"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def build(server, item_set, out, **extra):
    config = load_references_config(overrides=config_data(server, item_set, **extra))
    retry = dataclasses.replace(FAST, max_attempts=config.max_attempts)
    return build_references(config, out, engine=LocalEngine(config, retry=retry))


def test_build_on_the_sample_with_rejections_and_another_round(
    server, item_set, sample_items, tmp_path
):
    ids = [item.id for item in sample_items]
    script = ScriptedModels(
        sample_items, reject_first={ids[0], ids[7], ids[20]}, reject_always={ids[33]}
    )
    server.state.script = script
    out = tmp_path / "refs"
    result = build(server, item_set, out, max_rounds=2)

    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_items"] == 40
    assert summary["n_accepted"] == 39
    assert summary["n_rejected"] == 1
    assert summary["n_regenerated"] == 4  # three accepted in round 2, one rejected twice
    assert summary["rounds"] == {"1": 40, "2": 4}
    assert summary["accepted_by_round"] == {"1": 36, "2": 3}
    assert summary["gates"]["rejected"] == 5
    assert summary["share_another_round"] == pytest.approx(4 / 40)
    assert [r["id"] for r in summary["rejected"]] == [ids[33]]
    assert summary["rejected"][0]["reasons"] == ["step 2 is out of order"]
    assert result.rejected == [ids[33]]
    assert rows(out / "rejected.jsonl")[0]["id"] == ids[33]

    # Round 2 asked every generator again with seeds that differ from round 1's.
    candidates = rows(out / "candidates.jsonl")
    assert len({c["key"] for c in candidates}) == len(candidates) == 40 * 4 + 4 * 4
    for item_id in (ids[0], ids[7], ids[20], ids[33]):
        by_round = {
            r: {
                c["model"]: c["seed"]
                for c in candidates
                if c["item_id"] == item_id and c["round"] == r
            }
            for r in (1, 2)
        }
        assert set(by_round[1]) == set(by_round[2]) == set(GENERATORS)
        assert not set(by_round[1].values()) & set(by_round[2].values())
    seen = [e["seed"] for e in server.state.log if e["model"] in GENERATORS]
    assert len(seen) == len(set(seen)) == len(candidates)
    assert all(e["image"] for e in server.state.log)

    verdicts = rows(out / "verdicts.jsonl")
    assert len(verdicts) == 40 + 4
    assert sum(v["accept"] is False for v in verdicts) == 5

    # The benchmark loads as a scored benchmark, with provenance on every step.
    bench = load_benchmark(out)
    assert [item.id for item in bench.items] == [i for i in ids if i != ids[33]]
    by_id = {item.id: item for item in sample_items}
    for item in bench.items:
        provenance = item.metadata["reference_provenance"]
        assert len(provenance) == len(item.reference_steps) >= 1
        assert item.metadata["reference_round"] == (
            2 if item.id in (ids[0], ids[7], ids[20]) else 1
        )
        candidate_steps = {
            s for model in GENERATORS for s in chain_for(model, by_id[item.id].reference_steps)
        }
        for step, entry in zip(item.reference_steps, provenance, strict=True):
            assert step in candidate_steps
            assert 1 <= entry["support"] <= entry["n_chains"] == 4
            assert entry["medoid"]["text"] == step
            assert entry["medoid"] in entry["members"]
            assert set(entry["models"]) == {m["model"] for m in entry["members"]}
        assert bench.image_bytes(item) == Path(by_id[item.id].image).read_bytes()
    # The distractor of gen-d never makes it into a chain with support > 1.
    first = bench.items[1]
    assert first.metadata["reference_provenance"][0]["support"] == 4

    # crystal score accepts it (the rejected item's prediction is skipped under --lenient).
    predictions = SAMPLE_PREDICTIONS / "terse-precise.jsonl"
    scored = CliRunner().invoke(
        app,
        [
            "score",
            "-b",
            str(out),
            "-p",
            str(predictions),
            "-o",
            str(tmp_path / "scored"),
            "--encoder",
            "hash",
            "--no-cache",
            "--lenient",
        ],
    )
    assert scored.exit_code == 0, scored.output
    assert json.loads((tmp_path / "scored" / "summary.json").read_text())["n_items"] == 39

    report = (out / "report.html").read_text()
    assert "Reference construction: 39 of 40 items accepted" in report
    assert ids[33] in report
    assert "step 2 is out of order" in report
    assert "http://" not in report.replace(server.base_url, "")
    assert "<script" not in report


def test_rerun_of_a_finished_build_sends_nothing(server, item_set, sample_items, tmp_path):
    server.state.script = ScriptedModels(sample_items)
    out = tmp_path / "refs"
    build(server, item_set, out, limit=5)
    sent = len(server.state.log)
    again = build(server, item_set, out, limit=5)
    assert len(server.state.log) == sent
    assert again.summary["n_accepted"] == 5


def test_bad_generator_output_is_counted_and_retried(server, item_set, sample_items, tmp_path):
    ids = [item.id for item in sample_items]
    truncated = '{"reasoning_steps": ["The figure shows a tri'
    bad = {
        ("gen-b", ids[0]): [
            {"text": "lorem ipsum dolor"},
            {"text": ""},
            {"text": truncated, "finish_reason": "length"},
        ],
        ("gen-a", ids[1]): [
            {"text": '{"steps": ["x"], "answer": "B"}'},
            {"status": 500},
            {"status": 500},
        ],
        ("gen-c", ids[2]): [{"text": '{"reasoning_steps": "one string"}'}],
    }
    server.state.script = ScriptedModels(sample_items, bad=bad)
    out = tmp_path / "refs"
    build(server, item_set, out, limit=3, max_attempts=2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_accepted"] == 3
    by = {name: g["by_status"] for name, g in summary["generators"].items()}
    assert by["gen-b"] == {"empty": 1, "garbage": 1, "ok": 2, "truncated": 1}
    assert by["gen-a"] == {"error": 1, "ok": 3, "wrong_schema": 1}
    assert by["gen-c"] == {"ok": 3, "wrong_schema": 1}
    assert summary["generators"]["gen-a"]["errors_by_kind"] == {"server_error": 1}
    candidates = {c["key"]: c for c in rows(out / "candidates.jsonl")}
    # gen-b on item 0 used all three attempts, each with its own seed; the item still
    # got a consensus from the other three chains.
    attempts = [candidates[f"{ids[0]}|gen-b|r1|s0|a{a}"] for a in range(3)]
    assert [a["status"] for a in attempts] == ["garbage", "empty", "truncated"]
    assert len({a["seed"] for a in attempts}) == 3
    consensus = {c["key"]: c for c in rows(out / "consensus.jsonl")}
    assert consensus[f"{ids[0]}|r1"]["chain"]["n_chains"] == 3
    # gen-a on item 1: wrong schema, then a 500 retried by the HTTP layer and failed
    # again (max_attempts 2): an error record, then the third attempt answered.
    assert candidates[f"{ids[1]}|gen-a|r1|s0|a1"]["http_attempts"] == 2
    assert candidates[f"{ids[1]}|gen-a|r1|s0|a2"]["status"] == "ok"


def test_validator_garbage_is_retried_and_never_accepts(server, item_set, sample_items, tmp_path):
    ids = [item.id for item in sample_items]
    bad = {(VALIDATOR, ids[0]): [{"text": "looks fine"}] * 3}
    server.state.script = ScriptedModels(sample_items, bad=bad)
    out = tmp_path / "refs"
    result = build(server, item_set, out, limit=2, max_rounds=1)
    assert result.rejected == [ids[0]]
    summary = result.summary
    assert summary["validator"]["by_status"] == {"ok": 1, "unparsed": 3}
    assert summary["rejected"][0]["status"] == "validator_error"


def test_no_validator_accepts_every_consensus(server, item_set, sample_items, tmp_path):
    server.state.script = ScriptedModels(sample_items, reject_always={sample_items[0].id})
    out = tmp_path / "refs"
    result = build(server, item_set, out, limit=3, validate=False)
    assert len(result.accepted) == 3
    assert all(e["model"] != VALIDATOR for e in server.state.log)
    assert result.summary["validator"] is None


def test_too_few_chains_fails_the_round_and_regenerates(server, item_set, sample_items, tmp_path):
    item = sample_items[0]
    bad = {(g, item.id): [{"text": ""}] * 3 for g in GENERATORS[:3]}
    server.state.script = ScriptedModels(sample_items, bad=bad)
    out = tmp_path / "refs"
    result = build(server, item_set, out, limit=1)
    assert result.accepted == [item.id]
    first = rows(out / "consensus.jsonl")[0]
    assert first["failure"] == "too_few_chains"
    assert first["chain"] is None
    assert result.summary["gates"] == {"accepted": 1, "too_few_chains": 1}
    assert load_benchmark(out).items[0].metadata["reference_round"] == 2


def test_regenerate_sends_items_back_with_fresh_seeds(server, item_set, sample_items, tmp_path):
    ids = [item.id for item in sample_items[:4]]
    server.state.script = ScriptedModels(sample_items)
    out = tmp_path / "refs"
    build(server, item_set, out, limit=4)
    ids_file = tmp_path / "review.jsonl"
    ids_file.write_text(json.dumps({"item_id": ids[1], "verdict": "reject"}) + "\n")
    config = load_references_config(overrides=config_data(server, item_set, limit=4))
    result = regenerate_references(
        out, [ids[1]], source=str(ids_file), engine=LocalEngine(config, retry=FAST)
    )
    assert result.summary["n_sent_back"] == 1
    bench = load_benchmark(out)
    regenerated = next(item for item in bench.items if item.id == ids[1])
    assert regenerated.metadata["reference_round"] == 2
    provenance = regenerated.metadata["reference_provenance"]
    assert all(p["previous_index"] is not None for p in provenance)
    round2 = [c for c in rows(out / "candidates.jsonl") if c["round"] == 2]
    assert {c["item_id"] for c in round2} == {ids[1]}
    assert json.loads((out / "regenerations.jsonl").read_text())["after_round"] == 1
    with pytest.raises(InputError, match="not items of this build"):
        regenerate_references(out, ["nope"], engine=LocalEngine(config, retry=FAST))


def test_a_folder_of_another_build_is_refused(server, item_set, sample_items, tmp_path):
    server.state.script = ScriptedModels(sample_items)
    out = tmp_path / "refs"
    build(server, item_set, out, limit=1)
    with pytest.raises(InputError, match="theta differ"):
        build(server, item_set, out, limit=1, theta=0.5)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a reference build"):
        build(server, item_set, other, limit=1)


def test_consensus_runs_in_chunks_with_the_same_result(
    server, item_set, sample_items, tmp_path, monkeypatch
):
    from crystalbench.references import pipeline

    server.state.script = ScriptedModels(sample_items)
    whole = build(server, item_set, tmp_path / "whole", limit=5)
    monkeypatch.setattr(pipeline, "REFERENCES_CONSENSUS_CHUNK", 2)
    server.state.script = ScriptedModels(sample_items)
    chunked = build(server, item_set, tmp_path / "chunked", limit=5)
    assert chunked.summary["n_accepted"] == whole.summary["n_accepted"] == 5
    first = rows(tmp_path / "whole" / "consensus.jsonl")
    second = rows(tmp_path / "chunked" / "consensus.jsonl")
    assert [r["chain"] for r in first] == [r["chain"] for r in second]
