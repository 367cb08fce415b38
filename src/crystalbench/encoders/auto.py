"""The ``auto`` encoder back end: ONNX Runtime on CPU when it can run the model, else torch.

Starting a ``crystal score`` process on the torch path costs several seconds before the
first sentence is encoded (``import sentence_transformers`` alone takes about 8 s on a
2-core machine). ONNX Runtime with the ``tokenizers`` library runs the same model from a
graph exported once (with torch) and cached, and imports neither torch, transformers nor
sentence-transformers; its vectors equal torch's to about 1e-6.

:func:`choose_backend` decides from cheap facts only (no heavy import, nothing loaded):

- ``float16``, an explicit GPU device (``cuda``, ``cuda:1``, ``mps``) or a visible CUDA /
  ROCm GPU with ``device`` left automatic: **torch** (GPUs batch far better there);
- ``onnxruntime`` or ``tokenizers`` not installed: **torch**;
- otherwise (CPU): **ONNX Runtime fp32**, through an :class:`AutoEncoder` that checks on
  first use that an export exists or can be made, and falls back to torch (with a logged
  warning) when the model cannot be exported.

The identity of an ``auto`` encoder is the identity of the path that runs
(``onnx-fp32:...`` or ``st:...``), so results say which path produced them and the
embedding cache never mixes their vectors.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench._internal.extras import install_command
from crystalbench.encoders.base import Encoder
from crystalbench.errors import EncoderUnavailableError

LOG = logging.getLogger("crystalbench.encoders")

_GPU_DEVICE_FILES = ("/dev/nvidia0", "/dev/nvidiactl", "/dev/kfd")


def gpu_visible() -> bool:
    """True when a CUDA (or ROCm) GPU looks usable, judged without importing torch.

    ``CUDA_VISIBLE_DEVICES`` set to an empty string or ``-1`` hides every GPU; otherwise
    the NVIDIA or AMD kernel driver's device files decide.

    Examples:
        >>> isinstance(gpu_visible(), bool)
        True
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return False
    return any(os.path.exists(path) for path in _GPU_DEVICE_FILES)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def choose_backend(name: str, *, device: str | None, dtype: str) -> tuple[str, str]:
    """The back end ``auto`` picks for these settings, and why (one short phrase).

    Returns ``("onnx", reason)`` when ONNX Runtime should be tried (the export itself is
    checked by :class:`AutoEncoder` on first use) or ``("torch", reason)``.

    Examples:
        >>> choose_backend("minilm-offline", device="cuda", dtype="float32")
        ('torch', 'device cuda')
        >>> choose_backend("minilm-offline", device=None, dtype="float16")
        ('torch', 'float16 runs on torch')
    """
    if dtype != "float32":
        return "torch", f"{dtype} runs on torch"
    if device and device not in ("cpu", "auto"):
        return "torch", f"device {device}"
    if device in (None, "auto") and gpu_visible():
        return "torch", "a GPU is visible"
    missing = [m for m in ("onnxruntime", "tokenizers") if not _installed(m)]
    if missing:
        return "torch", f"{' and '.join(missing)} not installed"
    return "onnx", "CPU"


class AutoEncoder:
    """ONNX Runtime fp32 when this model has (or can get) an export, else torch.

    The choice is made once, on first use of :attr:`identity` or :meth:`encode`: when the
    cached export exists it is used at once (no torch import); when it is missing it is
    made now (this needs torch and sentence-transformers, once per model and cache
    folder); when making it fails, a warning is logged and the torch encoder runs.

    Args:
        onnx: The ONNX Runtime encoder to try first.
        torch_factory: Builds the torch encoder (called only when it is needed).

    Examples:
        >>> from crystalbench.encoders import load_encoder
        >>> type(load_encoder("minilm-offline", device="cpu")).__name__
        'AutoEncoder'
    """

    def __init__(self, onnx: Any, torch_factory: Callable[[], Encoder]) -> None:
        self.onnx = onnx
        self.torch_factory = torch_factory
        self._chosen: Encoder | None = None
        self._lock = threading.Lock()
        self.reason = ""
        """Why the chosen path runs (empty until chosen)."""

    # ------------------------------------------------------------------ choice
    @property
    def chosen(self) -> Encoder:
        """The encoder that runs (chosen on first access)."""
        if self._chosen is None:
            with self._lock:
                if self._chosen is None:
                    self._chosen = self._choose()
        return self._chosen

    @property
    def backend(self) -> str | None:
        """``"onnx"`` or ``"torch"`` once chosen, ``None`` before."""
        if self._chosen is None:
            return None
        return "onnx" if self._chosen is self.onnx else "torch"

    def _choose(self) -> Encoder:
        if self.onnx.export_ready():
            self.reason = "cached ONNX export"
            return self.onnx
        if not (_installed("torch") and _installed("sentence_transformers")):
            raise EncoderUnavailableError(
                f"encoder {self.onnx.name!r} has no ONNX export in {self.onnx.export_folder} "
                "yet, and making one (or running the model with torch) needs torch and "
                f"sentence-transformers: {install_command('embed,onnx')}"
            )
        from crystalbench.encoders.model_files import HubUnreachableError

        try:
            self.onnx.export()
        except HubUnreachableError:  # torch could not get the model either: say so at once
            raise
        except Exception as exc:  # any other export failure falls back to the torch path
            LOG.warning(
                "could not export encoder %r to ONNX (%s: %s); running it with torch",
                self.onnx.name,
                type(exc).__name__,
                exc,
            )
            self.reason = f"ONNX export failed: {type(exc).__name__}"
            return self.torch_factory()
        self.reason = "ONNX export made now"
        return self.onnx

    def _use_torch(self) -> Encoder:
        with self._lock:
            if self._chosen is None:
                self._chosen = self.torch_factory()
                self.reason = "the torch model was asked for"
        return self._chosen

    # ------------------------------------------------------------------ Encoder
    @property
    def identity(self) -> str:
        """The identity of the path that runs (``onnx-fp32:...`` or ``st:...``)."""
        return self.chosen.identity

    @property
    def batch_size(self) -> int:
        """Sentences per forward pass of the chosen encoder."""
        return int(getattr(self.chosen, "batch_size", 0) or 0)

    @property
    def model(self) -> Any:
        """The torch ``SentenceTransformer``, for code that needs the torch model itself.

        Asking for it before anything was encoded makes this encoder run on torch (code
        that reaches for ``.model`` wants torch: the reward loader's ZeRO-3 guard,
        benchmarks sharing one model object). Once ONNX Runtime runs there is no torch
        model and this raises :class:`EncoderUnavailableError`.
        """
        chosen = self._chosen if self._chosen is not None else self._use_torch()
        if chosen is self.onnx:
            raise EncoderUnavailableError(
                "this encoder runs on ONNX Runtime and has no torch model; "
                "build it with backend='torch' to get one"
            )
        return chosen.model  # type: ignore[attr-defined]

    def load(self) -> None:
        """Choose the path and load its model now (instead of on the first encode)."""
        loader = getattr(self.chosen, "load", None)
        if loader is not None:
            loader()

    def preload(self) -> bool:
        """Start loading the ONNX session in the background when its export is cached
        (see :meth:`OnnxEncoder.preload`); the choice of path is unchanged by it."""
        if self._chosen is not None and self._chosen is not self.onnx:
            return False
        return bool(self.onnx.preload())

    def close(self) -> None:
        """Wait for a background load still under way."""
        self.onnx.close()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` with the chosen encoder."""
        return self.chosen.encode(texts)

    @property
    def export_folder(self) -> Path:
        """Where the ONNX export of this model is (or would be) cached."""
        return Path(self.onnx.export_folder)
