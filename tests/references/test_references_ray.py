"""The Ray engine on a local Ray instance against the loopback server, and the GPU path's
argument mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from references_helpers import config_data
from scripted_models import GENERATORS, ScriptedModels

from crystalbench.data import load_benchmark
from crystalbench.inference.records import GenerationSettings
from crystalbench.references import (
    ModelEndpoint,
    ReferencesConfig,
    build_references,
    load_references_config,
)
from crystalbench.references.engine import Job
from crystalbench.references.ray_engine import (
    vllm_processor_kwargs,
    vllm_request,
    vllm_result,
)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ray_engine_builds_the_same_benchmark_as_the_local_engine(
    ray_local, server, item_set, sample_items, tmp_path, cache_dir
):
    ids = [item.id for item in sample_items]

    def bad():  # fresh queues per build (they are consumed)
        return {("gen-b", ids[2]): [{"text": "garbage"}], ("gen-c", ids[3]): [{"status": 400}]}

    server.state.script = ScriptedModels(sample_items, reject_first={ids[1]}, bad=bad())
    data = config_data(server, item_set, limit=6, engine="ray")
    data["ray"] = {"batch_size": 4, "concurrency": 2}
    ray_out = tmp_path / "ray"
    result = build_references(load_references_config(overrides=data), ray_out)
    assert result.summary["engine"] == "ray"
    assert result.summary["n_accepted"] == 6
    assert result.summary["rounds"] == {"1": 6, "2": 1}
    candidates = {c["key"]: c for c in rows(ray_out / "candidates.jsonl")}
    assert candidates[f"{ids[2]}|gen-b|r1|s0|a0"]["status"] == "garbage"
    assert candidates[f"{ids[2]}|gen-b|r1|s0|a1"]["status"] == "ok"
    assert candidates[f"{ids[3]}|gen-c|r1|s0|a0"]["error_kind"] == "bad_request"
    assert all(c["engine"] == "ray" for c in candidates.values())

    server.state.script = ScriptedModels(sample_items, reject_first={ids[1]}, bad=bad())
    data["engine"] = "local"
    local_out = tmp_path / "local"
    build_references(load_references_config(overrides=data), local_out)
    ray_bench = {item.id: item for item in load_benchmark(ray_out).items}
    local_bench = {item.id: item for item in load_benchmark(local_out).items}
    assert list(ray_bench) == list(local_bench)
    for item_id, item in local_bench.items():
        assert ray_bench[item_id].reference_steps == item.reference_steps
        assert ray_bench[item_id].metadata == item.metadata

    # Resume: a rerun finds everything journaled and sends nothing.
    sent = len(server.state.log)
    data["engine"] = "ray"
    build_references(load_references_config(overrides=data), ray_out)
    assert len(server.state.log) == sent


def test_vllm_processor_arguments_map_from_the_model_options():
    endpoint = ModelEndpoint(
        name="maverick",
        model="meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        vllm={
            "tensor_parallel_size": 8,
            "max_model_len": 32768,
            "gpu_memory_utilization": 0.9,
            "accelerator_type": "H100",
            "batch_size": 8,
        },
    )
    config = ReferencesConfig(ray={"processor": "vllm", "concurrency": 3})
    kwargs = vllm_processor_kwargs(endpoint, config)
    assert kwargs["model_source"] == "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"
    assert kwargs["engine_kwargs"] == {
        "tensor_parallel_size": 8,
        "max_model_len": 32768,
        "gpu_memory_utilization": 0.9,
    }
    assert kwargs["accelerator_type"] == "H100"
    assert kwargs["batch_size"] == 8
    assert kwargs["concurrency"] == 3
    assert kwargs["should_continue_on_error"] is True
    override = ModelEndpoint(name="m", vllm={"model_source": "/models/m"})
    assert vllm_processor_kwargs(override, config)["model_source"] == "/models/m"


def test_vllm_rows_carry_the_image_prompt_and_seed_and_keep_errors(sample_items):
    item = sample_items[0]
    settings = GenerationSettings(temperature=0.7, top_p=0.95, max_tokens=256, seed=123)
    row = vllm_request(Job("k1", item.id, "m", "Explain.", settings, image_path=item.image))
    content = row["messages"][0]["content"]
    assert content[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert row["sampling_params"] == {
        "temperature": 0.7,
        "max_tokens": 256,
        "top_p": 0.95,
        "seed": 123,
    }
    failed = vllm_result({"key": "k1", "__inference_error__": "prompt too long"})
    assert failed.error_kind == "generation"
    assert not failed.ok
    done = vllm_result(
        {"key": "k1", "generated_text": "{}", "num_generated_tokens": 3, "__inference_error__": ""}
    )
    assert done.ok
    assert done.text == "{}"
    assert done.completion_tokens == 3
    assert GENERATORS  # the scripted models are shared with the Ray test above
