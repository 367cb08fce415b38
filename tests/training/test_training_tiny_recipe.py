"""``recipe:tiny-cpu``: ``crystal train`` and ``crystal train-sweep`` run offline on a CPU with
the bundled tiny Qwen2.5-VL-shaped model and the bundled sample as the pool (issue 32.3)."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from crystalbench.cli.main import app

runner = CliRunner()


def test_the_tiny_model_is_qwen2_5_vl_shaped_and_emits_whole_completions():
    from crystalbench.data import load_benchmark
    from crystalbench.training.tiny_model import (
        build_tiny_model,
        completion_tokens,
        tiny_generation_kwargs,
    )

    items = load_benchmark("sample").items
    model, processor = build_tiny_model("tiny:qwen2.5-vl", items, seed=0)
    assert type(model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    assert sum(p.numel() for p in model.parameters()) < 200_000
    tokens = completion_tokens(items)
    tokenizer = processor.tokenizer
    ids = tokenizer.convert_tokens_to_ids(tokens)
    assert len(set(ids)) == len(tokens)  # each completion is one token
    banned = {row[0] for row in tiny_generation_kwargs(processor)["bad_words_ids"]}
    assert banned.isdisjoint(ids)
    assert tokenizer.eos_token_id not in banned
    assert tokenizer.convert_tokens_to_ids("<|image_pad|>") in banned


@pytest.mark.slow
def test_crystal_train_with_the_tiny_recipe_runs_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        ["train", "--config", "recipe:tiny-cpu", "-o", str(out), "--set", "grpo.max_steps=2"],
    )
    assert result.exit_code == 0, result.output
    assert "main: 2 steps" in result.output
    saved = yaml.safe_load((out / "crystal_train_config.yaml").read_text())
    assert saved["model"]["name_or_path"] == "tiny:qwen2.5-vl"
    assert saved["data"]["train"] == "sample"
    records = [json.loads(line) for line in (out / "validation.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [0, 2]
    assert all(r["n_items"] == 8 for r in records)  # 20 % of the 40 sample items
    assert (out / "checkpoint-2" / "model.safetensors").is_file()


@pytest.mark.slow
def test_crystal_train_sweep_with_the_tiny_recipe_runs_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "sweep"
    result = runner.invoke(
        app,
        [
            *("train-sweep", "--config", "recipe:tiny-cpu", "--grid", "0.6", "-o", str(out)),
            *("--set", "grpo.max_steps=1", "--set", "grpo.eval_steps=1"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Best a_w by validation harmonic: 0.60" in result.output
    assert len((out / "sweep.jsonl").read_text().splitlines()) == 1
