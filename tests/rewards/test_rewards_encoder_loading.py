"""Loading the reward encoder: once per process, on the rank's device, outside ZeRO-3."""

from __future__ import annotations

import sys

import pytest

from crystalbench.rewards import encoder_loading
from crystalbench.rewards.encoder_loading import (
    load_reward_encoder,
    outside_zero3,
    reward_device,
    zero3_enabled,
)


class FakeZero3Config:
    """Stands in for transformers' HfDeepSpeedConfig of a ZeRO-3 run (no DeepSpeed needed)."""

    def __init__(self) -> None:
        self.config = {"zero_optimization": {"stage": 3}}

    def is_zero3(self) -> bool:
        return True


@pytest.fixture
def zero3():
    """Register a ZeRO-3 config the way TrainingArguments does under DeepSpeed."""
    from transformers.integrations import deepspeed as hf_ds

    config = FakeZero3Config()
    hf_ds.set_hf_deepspeed_config(config)
    try:
        yield config
    finally:
        hf_ds.unset_hf_deepspeed_config()


def test_outside_zero3_suspends_and_restores(zero3):
    assert zero3_enabled()
    with outside_zero3():
        assert not zero3_enabled()
        with outside_zero3():  # re-entrant
            assert not zero3_enabled()
        assert not zero3_enabled()
    assert zero3_enabled()


def test_outside_zero3_restores_after_an_error(zero3):
    with pytest.raises(RuntimeError), outside_zero3():
        raise RuntimeError("load failed")
    assert zero3_enabled()


def test_encoder_loads_under_zero3_only_with_the_guard(zero3, monkeypatch):
    """Under ZeRO-3 transformers would build the encoder inside deepspeed.zero.Init (here:
    fail importing deepspeed; on a cluster: partition it into 1-D shards, the
    "'weight' must be 2-D" failure). The guarded loader gets a whole, working model."""
    from sentence_transformers import SentenceTransformer

    from crystalbench.encoders.sentence import offline_model_path

    with pytest.raises(Exception, match="deepspeed"):
        SentenceTransformer(str(offline_model_path()), device="cpu")

    monkeypatch.setattr(encoder_loading, "_ENCODERS", {})
    encoder = load_reward_encoder("minilm-offline", device="cpu", backend="torch")
    assert zero3_enabled()  # the trainer's config is back
    weights = [p for p in encoder.model.parameters() if p.dim() >= 2]  # type: ignore[attr-defined]
    assert weights
    assert all(p.dim() == 2 and p.numel() > 0 for p in weights)
    vectors = encoder.encode(["The bar for 2020 is the tallest.", "2020 has the tallest bar."])
    assert vectors.shape == (2, 384)
    assert float(vectors[0] @ vectors[1]) > 0.8
    same = load_reward_encoder("minilm-offline", device="cpu", backend="torch")
    assert same is encoder  # once per process
    assert encoder.batch_size == encoder_loading.CPU_BATCH_SIZE  # type: ignore[attr-defined]


def test_device_follows_local_rank(monkeypatch):
    import torch

    assert reward_device("cpu") == "cpu"
    monkeypatch.setattr(encoder_loading, "gpu_visible", lambda: False)
    if sys.platform != "darwin":
        assert reward_device() == "cpu"  # decided without asking torch
    monkeypatch.setattr(encoder_loading, "gpu_visible", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert reward_device() == "cuda:3"
    monkeypatch.setenv("LOCAL_RANK", "5")  # more ranks than visible GPUs
    assert reward_device() == "cuda:1"
    monkeypatch.delenv("LOCAL_RANK")
    assert reward_device() == "cuda:0"
    assert reward_device("cuda:2") == "cuda:2"


def test_hash_encoder_and_shared_source_need_no_torch():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from crystalbench.rewards import load_reward_encoder, shared_source\n"
        "load_reward_encoder('hash'); shared_source(encoder='hash')\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_the_reward_encoder_takes_the_default_fast_path_on_a_cpu(monkeypatch):
    """Rewards score with the same encoder path as `crystal score`: ONNX Runtime on a CPU."""
    monkeypatch.setattr(encoder_loading, "_ENCODERS", {})
    encoder = load_reward_encoder("minilm-offline", device="cpu")
    vectors = encoder.encode(["The red bar is the tallest."])
    assert vectors.shape == (1, 384)
    assert encoder.identity.startswith("onnx-fp32:")
