"""The default encoder path: ONNX Runtime on CPU (``auto``), equal to torch, torch-free.

- which back end ``auto`` picks, and its fall-back to torch when a model cannot be exported;
- on the bundled sample, the fast path gives exactly the torch path's per-item metrics
  through ``crystalbench.scoring.evaluation.evaluate``, with vectors within 1e-5;
- ``crystal score`` on the fast path, once the export is cached, imports neither torch nor
  transformers nor sentence-transformers (checked in a fresh interpreter), for MiniLM and
  for a RoBERTa model shaped like all-distilroberta-v1 (random weights, built offline).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import AutoEncoder, HashEncoder, auto, choose_backend, load_encoder
from crystalbench.encoders.sentence import SentenceTransformerEncoder
from crystalbench.errors import EncoderUnavailableError
from crystalbench.scoring.evaluation import evaluate

HEAVY = ("torch", "transformers", "sentence_transformers")
METRICS = ("precision", "recall", "f1", "lis", "kendall", "ordered_f1")


# --------------------------------------------------------------------------- choosing
@pytest.fixture
def cpu_only(monkeypatch):
    """A machine without a GPU, with onnxruntime, tokenizers and torch installed."""
    monkeypatch.setattr(auto, "gpu_visible", lambda: False)
    monkeypatch.setattr(auto, "_installed", lambda module: True)


def test_auto_picks_onnx_on_cpu_and_torch_for_gpus_and_float16(cpu_only, monkeypatch):
    assert choose_backend("minilm-offline", device=None, dtype="float32") == ("onnx", "CPU")
    assert choose_backend("minilm-offline", device="cpu", dtype="float32")[0] == "onnx"
    assert choose_backend("minilm-offline", device="cuda:1", dtype="float32")[0] == "torch"
    assert choose_backend("minilm-offline", device="mps", dtype="float32")[0] == "torch"
    assert choose_backend("minilm-offline", device=None, dtype="float16")[0] == "torch"
    assert isinstance(load_encoder("minilm-offline"), AutoEncoder)
    assert isinstance(load_encoder("minilm-offline", device="cuda"), SentenceTransformerEncoder)
    assert isinstance(load_encoder("minilm-offline", backend="torch"), SentenceTransformerEncoder)
    assert isinstance(load_encoder("hash"), HashEncoder)

    monkeypatch.setattr(auto, "gpu_visible", lambda: True)
    assert choose_backend("minilm-offline", device=None, dtype="float32") == (
        "torch",
        "a GPU is visible",
    )
    # A GPU is there, but the user asked for the CPU: the CPU fast path.
    assert choose_backend("minilm-offline", device="cpu", dtype="float32")[0] == "onnx"


def test_auto_needs_onnxruntime_and_tokenizers(monkeypatch):
    monkeypatch.setattr(auto, "gpu_visible", lambda: False)
    monkeypatch.setattr(auto, "_installed", lambda module: module != "onnxruntime")
    assert choose_backend("minilm-offline", device=None, dtype="float32") == (
        "torch",
        "onnxruntime not installed",
    )
    assert isinstance(load_encoder("minilm-offline"), SentenceTransformerEncoder)


def test_gpu_visibility_follows_device_files_and_cuda_visible_devices(tmp_path, monkeypatch):
    device = tmp_path / "nvidia0"
    monkeypatch.setattr(auto, "_GPU_DEVICE_FILES", (str(device),))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert not auto.gpu_visible()
    device.write_text("")
    assert auto.gpu_visible()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert not auto.gpu_visible()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert auto.gpu_visible()


class FakeOnnx:
    """Stands in for an OnnxEncoder: an export that exists, or one that cannot be made."""

    name = "some-model"
    export_folder = Path("/nowhere/onnx/some-model")

    def __init__(self, *, ready: bool, exportable: bool = True) -> None:
        self.ready = ready
        self.exportable = exportable
        self.exports = 0
        self.inner = HashEncoder(dim=16)
        self.identity = "onnx-fp32:some-model:0123"

    def export_ready(self) -> bool:
        return self.ready

    def export(self) -> None:
        self.exports += 1
        if not self.exportable:
            raise RuntimeError("Exporting the operator 'custom_pool' is not supported")
        self.ready = True

    def encode(self, texts):
        return self.inner.encode(texts)


class FakeTorch(HashEncoder):
    identity = "st:some-model:0123:float32"  # type: ignore[assignment]
    model = "the torch model"


def test_auto_runs_a_cached_export_and_makes_a_missing_one(cpu_only):
    ready = AutoEncoder(FakeOnnx(ready=True), FakeTorch)
    assert ready.identity == "onnx-fp32:some-model:0123"
    assert ready.backend == "onnx"
    assert ready.onnx.exports == 0
    missing = AutoEncoder(FakeOnnx(ready=False), FakeTorch)
    assert missing.encode(["a b"]).shape == (1, 16)
    assert missing.onnx.exports == 1
    assert missing.backend == "onnx"
    assert missing.reason == "ONNX export made now"
    with pytest.raises(EncoderUnavailableError, match="ONNX Runtime"):
        _ = missing.model


def test_auto_falls_back_to_torch_when_the_model_cannot_be_exported(cpu_only, caplog):
    encoder = AutoEncoder(FakeOnnx(ready=False, exportable=False), FakeTorch)
    with caplog.at_level(logging.WARNING, logger="crystalbench.encoders"):
        assert encoder.identity == "st:some-model:0123:float32"
    assert encoder.backend == "torch"
    assert "could not export encoder 'some-model' to ONNX" in caplog.text
    assert "custom_pool" in caplog.text
    assert encoder.encode(["x"]).shape == (1, 256)


def test_asking_for_the_torch_model_first_chooses_torch(cpu_only):
    """The reward loader's ZeRO-3 guard and benchmarks reach for ``.model``: they get torch."""
    encoder = AutoEncoder(FakeOnnx(ready=True), FakeTorch)
    assert encoder.model == "the torch model"
    assert encoder.identity == "st:some-model:0123:float32"


def test_without_torch_a_missing_export_says_what_to_install(monkeypatch):
    monkeypatch.setattr(auto, "_installed", lambda module: module not in ("torch",))
    encoder = AutoEncoder(FakeOnnx(ready=False), FakeTorch)
    with pytest.raises(EncoderUnavailableError, match=r"crystalbench\[embed,onnx\]"):
        _ = encoder.identity


# --------------------------------------------------------------------------- real models
@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    """One cache folder per module: the MiniLM export is made once, here."""
    pytest.importorskip("onnxruntime")
    folder = tmp_path_factory.mktemp("fast-path-cache")
    load_encoder("minilm-offline", device="cpu", cache_dir=folder).load()  # type: ignore[attr-defined]
    return folder


def sample_texts() -> list[str]:
    bench = load_benchmark("sample")
    texts = [s for item in bench.items for s in item.reference_steps]
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        for pred in load_predictions(path):
            texts.extend(pred.reasoning_steps or [])
    return list(dict.fromkeys(texts))


@pytest.mark.slow
def test_fast_path_gives_the_torch_path_metrics_on_the_sample(export_dir):
    fast = load_encoder("minilm-offline", device="cpu", cache_dir=export_dir)
    slow = load_encoder("minilm-offline", backend="torch", device="cpu")
    texts = sample_texts()
    gap = float(np.abs(fast.encode(texts) - slow.encode(texts)).max())
    assert gap < 1e-5
    assert fast.identity.startswith("onnx-fp32:all-MiniLM-L6-v2:")
    assert slow.identity.startswith("st:all-MiniLM-L6-v2:")
    bench = load_benchmark("sample")
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        preds = load_predictions(path)
        for compat in ("none", "crystal-metrics-0.2"):
            config = ScoreConfig(encoder="minilm-offline", use_cache=False, compat=compat)
            a = evaluate(bench, preds, config, encoder=fast)
            b = evaluate(bench, preds, config, encoder=slow)
            for x, y in zip(a.items, b.items, strict=True):
                assert [m[:2] for m in x.matches] == [m[:2] for m in y.matches], (path, x.id)
                assert [getattr(x, k) for k in METRICS] == [getattr(y, k) for k in METRICS]
                assert x.answer_correct == y.answer_correct
            assert a.summary.config["encoder_identity"] == fast.identity


def _run_isolated(code: str, env: dict[str, str]) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_crystal_score_on_the_fast_path_imports_no_torch(export_dir, tmp_path):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    out = tmp_path / "out"
    args = ["score", "-b", "sample", "-p", str(preds), "-o", str(out), "--no-progress"]
    args += ["--encoder", "minilm-offline"]
    code = f"""
        import json, sys
        from crystalbench.cli.main import app
        try:
            app({args!r}, standalone_mode=False)
        except SystemExit as exc:
            assert not exc.code, exc.code
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in {set(HEAVY)!r})
        print(json.dumps({{"heavy": heavy, "hub": "huggingface_hub" in sys.modules}}))
    """
    hide_gpus = {"CUDA_VISIBLE_DEVICES": ""}  # the default path on a CPU machine
    result = _run_isolated(code, {"CRYSTALBENCH_CACHE_DIR": str(export_dir), **hide_gpus})
    assert result == {"heavy": [], "hub": False}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["encoder_identity"].startswith("onnx-fp32:all-MiniLM-L6-v2:")
    examples = (out / "examples.jsonl").read_text().splitlines()
    assert len(examples) == len(load_benchmark("sample"))


@pytest.mark.slow
def test_a_roberta_model_runs_torch_free_with_the_torch_vectors(tmp_path):
    """all-distilroberta-v1's path (byte-level BPE, no token_type_ids, pad id 1, RoBERTa
    position ids, truncation at 512), on a random-weight model of the same architecture."""
    pytest.importorskip("onnxruntime")
    from random_st_models import build_random_roberta

    texts = sample_texts()
    folder = build_random_roberta(tmp_path / "roberta", texts, size="small")
    cache = tmp_path / "cache"
    fast = load_encoder(str(folder), device="cpu", cache_dir=cache)
    probe = [*texts[:40], "", "   padded  ", "Ünïcödé — dashes… and 🙂", "x " * 700]
    torch_vectors = load_encoder(str(folder), backend="torch", device="cpu").encode(probe)
    assert float(np.abs(fast.encode(probe) - torch_vectors).max()) < 1e-5
    assert fast.identity.startswith(f"onnx-fp32:{folder}:")
    code = f"""
        import json, sys
        import numpy as np
        from crystalbench.encoders import load_encoder
        encoder = load_encoder({str(folder)!r}, cache_dir={str(cache)!r})
        vectors = encoder.encode({probe!r})
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in {set(HEAVY)!r})
        print(json.dumps({{"heavy": heavy, "identity": encoder.identity,
                          "vectors": vectors.tolist()}}))
    """
    result = _run_isolated(code, {"CUDA_VISIBLE_DEVICES": ""})
    assert result["heavy"] == []
    assert result["identity"] == fast.identity
    gap = np.abs(np.asarray(result["vectors"], dtype=np.float32) - torch_vectors).max()
    assert float(gap) < 1e-5
