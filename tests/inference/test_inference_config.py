"""InferenceConfig: defaults from settings.py, YAML + overrides, and the config-driven runs
(run_inference, run_benchmark) with a scripted backend."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from crystalbench.config import settings
from crystalbench.config.scoring import load_config, load_config_with_overrides
from crystalbench.data import load_benchmark
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.inference import (
    GenerationSettings,
    InferenceConfig,
    RunConfig,
    load_inference_config,
    run_benchmark,
    run_inference,
)
from crystalbench.inference.backends.base import BackendError
from crystalbench.inference.backends.scripted import ScriptedBackend
from crystalbench.inference.pipeline import backend_from_config, manifest_path
from fakes import HASH_CONFIG

ANSWER = '{"reasoning_steps": ["The bar is red."], "answer": "B"}'


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("sample")


def test_defaults_come_from_settings_py():
    config = InferenceConfig(model="m")
    assert config.benchmark == "waybarrios/CRYSTAL"
    assert config.backend == "openai"
    assert config.concurrency == settings.INFER_CONCURRENCY
    assert config.timeout == settings.INFER_TIMEOUT
    assert config.max_attempts == settings.INFER_MAX_ATTEMPTS
    assert config.max_retry_after == settings.INFER_MAX_RETRY_AFTER
    assert config.api_key_env == settings.OPENAI_API_KEY_ENV
    assert config.fsync_interval == settings.INFER_FSYNC_INTERVAL
    assert config.abort_after == settings.INFER_ABORT_AFTER
    assert config.generation == GenerationSettings(
        temperature=settings.INFER_TEMPERATURE, max_tokens=settings.INFER_MAX_TOKENS
    )
    policy = config.retry_policy()
    assert (policy.max_attempts, policy.max_retry_after) == (6, 600.0)


def test_the_config_is_frozen_and_strict():
    config = InferenceConfig(model="m")
    with pytest.raises(ValidationError):
        config.timeout = 1.0  # type: ignore[misc]
    with pytest.raises(ValidationError, match="temprature"):
        InferenceConfig(model="m", temprature=0.2)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="max_tokens"):
        InferenceConfig(model="m", generation={"max_tokens": 0})
    with pytest.raises(UnknownNameError, match="transformers"):
        InferenceConfig(model="m", backend="transfomers")
    assert InferenceConfig(model="m", sources=[" mmvp ", ""]).sources == ["mmvp"]
    assert InferenceConfig(model="m", ids=[" "]).ids is None


def test_yaml_loads_with_load_config_and_with_overrides(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(
        "model: Qwen/Qwen2.5-VL-7B-Instruct\n"
        "base_urls: [http://gpu1:8000/v1, http://gpu2:8000/v1]\n"
        "concurrency: 64\n"
        "generation: {temperature: 0.0, seed: 3}\n"
    )
    plain = load_config(path, InferenceConfig)
    assert plain.concurrency == 64
    assert plain.generation.seed == 3
    merged = load_inference_config(
        path, {"concurrency": 8, "generation.max_tokens": 512, "limit": 5}
    )
    assert merged.concurrency == 8  # the flag wins
    assert merged.generation == GenerationSettings(temperature=0.0, max_tokens=512, seed=3)
    assert merged.base_urls == ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
    assert merged.limit == 5
    assert merged.model == plain.model


def test_a_bad_value_names_its_file_only_when_it_came_from_the_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("model: m\nconcurrency: 0\n")
    with pytest.raises(InputError) as from_file:
        load_inference_config(path)
    assert from_file.value.path == str(path)
    assert from_file.value.field == "concurrency"
    with pytest.raises(InputError) as missing:
        load_inference_config(tmp_path / "missing.yaml")
    assert "not found" in str(missing.value)
    path.write_text("model: m\n")
    with pytest.raises(InputError) as flag:
        load_inference_config(path, {"timeout": -1.0})
    assert flag.value.path is None
    assert flag.value.field == "timeout"


def test_an_api_key_variable_that_is_not_set_is_an_input_error(monkeypatch):
    monkeypatch.delenv("MY_PROVIDER_KEY", raising=False)
    with pytest.raises(InputError, match="MY_PROVIDER_KEY is not set"):
        backend_from_config(InferenceConfig(model="m", api_key_env="MY_PROVIDER_KEY"))


def test_run_inference_selects_answers_and_records_its_config(bench, tmp_path):
    config = InferenceConfig(
        model="scripted",
        benchmark="sample",
        sources=["mmvp"],
        limit=2,
        generation=GenerationSettings(temperature=0.0, max_tokens=64),
    )
    out = tmp_path / "preds.jsonl"
    starts: list[str] = []
    done = run_inference(
        config,
        out,
        backend=ScriptedBackend({"*": ANSWER}),
        manifest=manifest_path(out),
        on_start=starts.append,
    )
    expected = [i.id for i in bench.items if i.source == "mmvp"][:2]
    assert done.selected.ids == expected
    assert done.benchmark.ids == bench.ids
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == expected
    assert done.summary.config == config
    assert done.summary.generation == config.generation
    assert starts == [f"scripted via openai on 2 items of sample -> {out}"]
    manifest = json.loads((tmp_path / "preds.inference.json").read_text())
    assert InferenceConfig.model_validate(manifest["config"]) == config
    assert manifest["n_ok"] == 2


def test_run_inference_passes_the_config_to_the_runner(bench, tmp_path):
    config = InferenceConfig(model="scripted", benchmark="sample", limit=6, abort_after=3)
    failing = ScriptedBackend({}, max_in_flight=1)  # every item fails: not_scripted
    from crystalbench.inference import InferenceAbortedError

    with pytest.raises(InferenceAbortedError, match="first 3 items all failed"):
        run_inference(config, tmp_path / "p.jsonl", benchmark=bench, backend=failing)
    retried = ScriptedBackend(
        {"*": ANSWER}, failures={bench.ids[0]: [BackendError("timeout", "slow", retryable=True)]}
    )
    again = config.model_copy(update={"retry_errors": True, "max_attempts": 2})
    done = run_inference(again, tmp_path / "p.jsonl", benchmark=bench, backend=retried)
    assert done.summary.n_retried_errors == 3
    assert done.summary.n_ok == 6
    assert done.summary.attempts == 7


def test_run_benchmark_infers_scores_and_reports_in_one_folder(bench, tmp_path):
    item = bench.items[0]
    perfect = json.dumps({"reasoning_steps": item.reference_steps, "answer": item.answer})
    config = RunConfig(model="scripted", benchmark="sample", limit=3, scoring=HASH_CONFIG)
    seen = []
    done = run_benchmark(
        config,
        tmp_path / "run",
        benchmark=bench,
        backend=ScriptedBackend({item.id: perfect, "*": ANSWER}),
        on_inferred=seen.append,
    )
    folder = tmp_path / "run"
    assert done.files == [
        "predictions.jsonl",
        "inference.json",
        "examples.jsonl",
        "summary.json",
        "report.html",
    ]
    assert all((folder / name).is_file() for name in done.files)
    assert seen == [done.inference]
    assert done.scores.summary.n_items == 3
    assert done.scores.items[0].f1 == 1.0
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["n_items"] == 3
    assert summary["config"]["encoder"] == "hash"  # config.scoring scored it
    recorded = json.loads((folder / "inference.json").read_text())["config"]
    assert InferenceConfig.model_validate(recorded) == config.inference()
    assert "scoring" not in recorded  # inference.json records the inference part alone

    without = run_benchmark(
        config.model_copy(update={"report": False}), tmp_path / "bare", benchmark=bench,
        backend=ScriptedBackend({"*": ANSWER}),
    )  # fmt: skip
    assert without.report is None
    assert not (tmp_path / "bare" / "report.html").exists()


def test_a_run_config_file_holds_inference_fields_and_a_scoring_section(tmp_path, monkeypatch):
    path = tmp_path / "run.yaml"
    path.write_text("model: m\nlimit: 4\nscoring:\n  encoder: hash\n  threshold: 0.5\n")
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    config = load_config_with_overrides(RunConfig, path, {"scoring.threshold": 0.6})
    assert (config.limit, config.scoring.encoder, config.scoring.threshold) == (4, "hash", 0.6)
    assert config.scoring.cache_dir == str(tmp_path / "cache")  # a nested model's variable
    path.write_text("model: m\nscoring:\n  threshold: 3\n")
    with pytest.raises(InputError) as error:
        load_config_with_overrides(RunConfig, path, {})
    assert (error.value.path, error.value.line, error.value.field) == (
        str(path),
        3,
        "scoring.threshold",
    )


def _bench_with_outside_image(tmp_path):
    """A JSONL benchmark whose one image lies outside its folder (in ``tmp/images``)."""
    from io import BytesIO

    from PIL import Image

    images = tmp_path / "images"
    images.mkdir()
    buffer = BytesIO()
    Image.new("RGB", (3000, 1500), (200, 30, 30)).save(buffer, "PNG")
    (images / "wide.png").write_bytes(buffer.getvalue())
    bench_dir = tmp_path / "bench"
    bench_dir.mkdir()
    row = {
        "id": "q1",
        "source": "plotqa",
        "question": "How many bars?",
        "answer": "3",
        "reference_steps": ["Count the bars."],
        "image": "../images/wide.png",
    }
    (bench_dir / "b.jsonl").write_text(json.dumps(row) + "\n")
    return bench_dir / "b.jsonl", images


class _Recording(ScriptedBackend):
    """Scripted backend that keeps the longer side of each image it is sent."""

    def __init__(self) -> None:
        super().__init__({"*": ANSWER})
        self.sides: list[int] = []

    async def complete(self, request):
        if request.image is not None:
            self.sides.append(max(request.image.variant_size(request.image_max_side)))
        return await super().complete(request)


def test_image_root_lets_a_run_read_images_outside_the_benchmark_folder(tmp_path):
    path, images = _bench_with_outside_image(tmp_path)
    refused = InferenceConfig(model="scripted", benchmark=str(path))
    with pytest.raises(InputError, match="image"):
        run_inference(refused, tmp_path / "p.jsonl", backend=ScriptedBackend({"*": ANSWER}))
    assert not (tmp_path / "p.jsonl").exists()
    allowed = refused.model_copy(update={"image_root": str(images)})
    backend = _Recording()
    done = run_inference(allowed, tmp_path / "p.jsonl", backend=backend)
    assert done.summary.n_ok == 1
    assert backend.sides == [settings.IMAGE_MAX_SIDE]  # 3000 px sent at the default cap


def test_max_image_side_caps_the_first_request(tmp_path):
    path, images = _bench_with_outside_image(tmp_path)
    config = InferenceConfig(
        model="scripted", benchmark=str(path), image_root=str(images), max_image_side=512
    )
    backend = _Recording()
    run_inference(config, tmp_path / "p.jsonl", backend=backend)
    assert backend.sides == [512]
