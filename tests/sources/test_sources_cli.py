"""``crystal data build / merge / stats / sources`` and check-leakage on item sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    mathvision_rows,
    write_mathvision,
    write_mmvp_original,
    write_scienceqa,
)

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.sources import read_item_set

runner = CliRunner()


def test_build_then_stats_then_merge(tmp_path):
    mmvp = write_mmvp_original(tmp_path / "MMVP")
    result = runner.invoke(
        app, ["data", "build", "mmvp", "--from", str(mmvp), "--out", str(tmp_path / "a")]
    )
    assert result.exit_code == 0, result.output
    assert "items written: 4" in result.output
    assert "answer types: multiple_choice 4" in result.output
    math = write_mathvision(tmp_path / "mv")
    result = runner.invoke(
        app,
        [
            "data",
            "build",
            "mathvision",
            "--from",
            str(math),
            "-o",
            str(tmp_path / "b"),
            "--limit",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "note: stopped at --limit 2" in result.output
    result = runner.invoke(
        app,
        ["data", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c")],
    )
    assert result.exit_code == 0, result.output
    assert "merged: 6 items" in result.output
    stats_file = tmp_path / "stats.json"
    result = runner.invoke(
        app, ["data", "stats", "-b", str(tmp_path / "c"), "--out", str(stats_file)]
    )
    assert result.exit_code == 0, result.output
    assert "6 items" in result.output
    assert "reference steps: none yet" in result.output
    assert json.loads(stats_file.read_text())["by_source"] == {"mmvp": 4, "mathvision": 2}


def test_stats_of_the_sample_prints_steps_and_tiers():
    result = runner.invoke(app, ["data", "stats", "-b", "sample"])
    assert result.exit_code == 0, result.output
    assert "reference steps per item (40 items with references" in result.output
    assert "difficulty: easy" in result.output


def test_malformed_row_exits_2_naming_file_and_row(tmp_path):
    rows = mathvision_rows()
    rows[2] = dict(rows[2], options=["x", "y"], answer="Q")
    math = write_mathvision(tmp_path / "mv", rows)
    result = runner.invoke(
        app, ["data", "build", "mathvision", "--from", str(math), "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
    assert "test-00000-of-00001-5e3f8c21.parquet row 2: field answer" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x").exists()


def test_hub_unreachable_exits_2(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "ds"))
    result = runner.invoke(app, ["data", "build", "textvqa", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "cannot load lmms-lab/textvqa split 'train'" in result.output
    assert "--from" in result.output


def test_sources_lists_every_adapter():
    result = runner.invoke(app, ["data", "sources"])
    assert result.exit_code == 0, result.output
    for name in ("mathvision", "scienceqa-img", "realworldqa", "mmvp", "plotqa", "textvqa"):
        assert name in result.output
    assert "MathLLMs/MathVision" in result.output


def test_training_pool_is_checked_for_leakage(tmp_path):
    """ScienceQA-IMG train built as a training pool is read as it is (no references needed):
    clean against the sample, and every item leaks against a set built from the same rows."""
    write_scienceqa(tmp_path / "sqa")
    command = ["data", "build", "scienceqa-img", "--from", str(tmp_path / "sqa")]
    pool, same = tmp_path / "pool", tmp_path / "same"
    for out in (pool, same):
        result = runner.invoke(app, [*command, "--split", "train", "--out", str(out)])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["data", "check-leakage", str(pool), "-b", "sample"])
    assert result.exit_code == 0, result.output
    assert "3 training items checked against 40 benchmark items" in result.output
    result = runner.invoke(app, ["data", "check-leakage", str(pool), "-b", str(same)])
    assert result.exit_code == 1, result.output
    assert "leaks: 3" in result.output


def test_item_set_with_references_loads_as_a_benchmark(tmp_path):
    """Once references are filled in, items.jsonl is a benchmark JSONL (crystal score reads it)."""
    math = write_mathvision(tmp_path / "mv")
    out = tmp_path / "set"
    assert (
        runner.invoke(
            app, ["data", "build", "mathvision", "--from", str(math), "--out", str(out)]
        ).exit_code
        == 0
    )
    lines = []
    for line in (out / "items.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["reference_steps"] = ["Look at the figure.", f"The answer is {record['answer']}."]
        lines.append(json.dumps(record))
    (out / "items.jsonl").write_text("\n".join(lines) + "\n")
    bench = load_benchmark(out / "items.jsonl")
    assert [i.id for i in bench.items] == [i.id for i in read_item_set(out).items]
    first = bench.items[0]
    assert Path(first.image).is_absolute()
    assert bench.image_bytes(first) == Path(read_item_set(out).items[0].image).read_bytes()
    assert {i.answer_type for i in bench.items} == {"multiple_choice", "numeric", "free_form"}


def test_an_item_set_runs_through_infer_and_is_refused_by_score(tmp_path):
    """An item set has no references yet: `crystal infer` runs a model on it as it is, and
    `crystal score` (and `crystal run`, before any request) refuse it saying so."""
    from crystalbench.inference import InferenceConfig, RunConfig, run_benchmark, run_inference
    from crystalbench.inference.backends.scripted import ScriptedBackend
    from fakes import HASH_CONFIG

    mmvp = write_mmvp_original(tmp_path / "MMVP")
    items = tmp_path / "set"
    built = runner.invoke(app, ["data", "build", "mmvp", "--from", str(mmvp), "--out", str(items)])
    assert built.exit_code == 0, built.output
    backend = ScriptedBackend({"*": '{"reasoning_steps": ["The dog faces left."], "answer": "A"}'})
    for spec in (items, items / "items.jsonl"):
        config = InferenceConfig(model="scripted", benchmark=str(spec))
        out = tmp_path / f"preds-{spec.name}.jsonl"
        done = run_inference(config, out, backend=backend)
        assert done.summary.n_ok == 4
        assert len(out.read_text().splitlines()) == 4
    result = runner.invoke(
        app,
        ["score", "-b", str(items), "-p", str(out), "-o", str(tmp_path / "r"), "--encoder", "hash"],
    )
    assert result.exit_code == 2
    said = " ".join(result.output.split())  # rich wraps long lines
    assert "item set without references yet" in said
    assert "crystal references build" in said
    assert not (tmp_path / "r" / "summary.json").exists()
    config = InferenceConfig(model="scripted", benchmark=str(items))
    sent: list[str] = []

    class Counting(ScriptedBackend):
        async def complete(self, request):
            sent.append(request.item_id)
            return await super().complete(request)

    with pytest.raises(Exception, match="item set without references yet"):
        run_benchmark(
            RunConfig(**config.model_dump(), scoring=HASH_CONFIG),
            tmp_path / "run",
            backend=Counting({"*": "A"}),
        )
    assert sent == []
