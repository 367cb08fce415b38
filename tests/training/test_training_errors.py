"""``crystal train`` keeps the error contract on a CPU (issue 30, points 2 and 3).

Every configuration or environment problem ends in one line naming the field to change, exit
code 2, no traceback, within seconds, and leaves no run folder behind: bf16 without a GPU, an
unreachable hub (through the probe scoring uses), a missing extra, an unreachable leakage
benchmark, a setting TRL's ``GRPOConfig`` refuses.
"""

from __future__ import annotations

import socket
import sys
import time

import pytest
from typer.testing import CliRunner

from crystalbench._internal.hub_probe import OFFLINE_VARIABLES, forget_probes
from crystalbench.cli.main import app
from crystalbench.training.config import TrainingError, load_train_config

runner = CliRunner()

CPU = ["--set", "grpo.bf16=false", "--set", "grpo.use_cpu=true", "--set", "grpo.use_vllm=false"]
NO_LEAK_CHECK = ["--set", "data.leakage.benchmark=null", "--set", "data.leakage.on_leak=ignore"]


def train(out, *extra):
    args = ["train", "--config", "recipe:qwen2_5_vl_3b_cpr", "-o", str(out)]
    args += ["--set", "data.train=sample", "--set", "rewards.encoder=hash", *extra]
    return runner.invoke(app, args)


def one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr("crystalbench.training.preflight.gpu_visible", lambda: False)


@pytest.fixture
def dead_hub(monkeypatch, tmp_path):
    """A hub address where nothing listens, an empty hub cache, offline mode off."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    for name in OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
    forget_probes()
    yield
    forget_probes()


def test_bf16_recipe_on_a_cpu_names_the_fields(tmp_path, no_gpu):
    """Today: a 66-line ValueError traceback from transformers, exit 1, an empty folder."""
    result = train(tmp_path / "run", *NO_LEAK_CHECK)
    line = one_line_error(result, "no GPU", "grpo.bf16", "grpo.use_cpu=true")
    assert "bf16" in line
    assert not (tmp_path / "run").exists()


def test_unset_bf16_on_a_cpu_is_trls_default_and_refused_too(tmp_path, no_gpu):
    config = load_train_config(
        "recipe:qwen2_5_vl_3b_cpr",
        {"data.train": "sample", "grpo.bf16": None, "grpo.use_vllm": False},
    )
    from crystalbench.training.preflight import check_environment

    with pytest.raises(TrainingError, match="TRL's default"):
        check_environment(config, check_model=False)


def test_vllm_without_a_gpu_names_use_vllm(tmp_path, no_gpu, monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: object())
    config = load_train_config(
        "recipe:qwen2_5_vl_3b_cpr",
        {"data.train": "sample", "grpo.bf16": False, "grpo.use_cpu": True},
    )
    from crystalbench.training.preflight import check_environment

    with pytest.raises(TrainingError, match=r"grpo\.use_vllm=false"):
        check_environment(config, check_model=False)


def test_unreachable_hub_is_found_in_seconds_by_the_scoring_probe(tmp_path, no_gpu, dead_hub):
    """Today: 2 min 41 s of huggingface_hub retries, then a 172-line traceback."""
    started = time.monotonic()
    result = train(tmp_path / "run", *CPU, *NO_LEAK_CHECK)
    elapsed = time.monotonic() - started
    one_line_error(result, "model.name_or_path", "Qwen/Qwen2.5-VL-3B-Instruct", "could not be")
    assert elapsed < 15, elapsed
    assert not (tmp_path / "run").exists()


def test_unreachable_leakage_benchmark_names_the_config_field(tmp_path, no_gpu, dead_hub):
    """Today the message says "pass its folder with --benchmark", which ``train`` lacks."""
    result = train(tmp_path / "run", *CPU, "--set", "model.name_or_path=tiny:qwen2.5-vl")
    line = one_line_error(result, "data.leakage.benchmark", "--set data.leakage.benchmark=")
    assert "--benchmark " not in line
    assert not (tmp_path / "run").exists()


def test_missing_train_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trl", None)
    result = train(tmp_path / "run", *CPU, *NO_LEAK_CHECK)
    one_line_error(result, "crystalbench[train]")
    assert not (tmp_path / "run").exists()


def test_a_setting_grpo_config_refuses_is_one_line():
    from crystalbench.training.building import grpo_settings

    with pytest.raises(TrainingError, match=r"GRPOConfig refuses the grpo settings: .*nope"):
        grpo_settings({"output_dir": "unused", "use_cpu": True, "optim": "nope"})


def test_a_failed_start_leaves_no_folder_but_a_trained_run_keeps_its_own(tmp_path):
    from crystalbench.training.runner import remove_failed_start

    started = tmp_path / "started"
    (started / ".dataset_cache" / "x").mkdir(parents=True)
    (started / "crystal_train_run.json").write_text("{}")
    assert remove_failed_start(started)
    assert not started.exists()
    trained = tmp_path / "trained"
    (trained / "checkpoint-3").mkdir(parents=True)
    assert not remove_failed_start(trained)
    assert (trained / "checkpoint-3").is_dir()
