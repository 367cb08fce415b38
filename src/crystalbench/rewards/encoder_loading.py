"""Load the reward's sentence encoder once per process, on the right device, outside ZeRO-3.

Why this module exists: under DeepSpeed ZeRO-3, ``TrainingArguments`` / ``GRPOConfig``
register the DeepSpeed config with transformers (``set_hf_deepspeed_config``), and from then
on every ``from_pretrained`` runs inside ``deepspeed.zero.Init``, which partitions the new
model's parameters across ranks. A sentence encoder loaded inside a reward function then has
empty 1-D weight shards and fails on its first forward pass with ``'weight' must be 2-D``
(2U1/Qwen-VL-Series-Finetune#212, trl#600). :func:`outside_zero3` suspends that hook while
the encoder loads and restores it afterwards:

- transformers' global DeepSpeed config is unset (``unset_hf_deepspeed_config``) and put
  back (``set_hf_deepspeed_config``) on exit, so ``from_pretrained`` does not enter
  ``zero.Init``;
- if DeepSpeed is already imported and a ``zero.Init`` context is open around the caller,
  its patches are lifted with ``shutdown_init_context`` and re-applied with
  ``restore_init_context`` (DeepSpeed's own API for "run this block with the original
  initialisers").

:func:`load_reward_encoder` loads the model eagerly inside that guard, on
``cuda:$LOCAL_RANK`` when a GPU is visible (each rank uses its own GPU; a few hundred MB for
all-distilroberta-v1), and caches it per process so every reward function and every call
shares one copy. An alternative that avoids the question entirely is a separate reward
server (``crystal serve-rewards``) shared by all ranks.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from crystalbench.config.settings import ENCODE_BATCH_SIZE, ENCODER_BACKEND
from crystalbench.encoders import Encoder, load_encoder
from crystalbench.encoders.auto import gpu_visible

__all__ = [
    "CPU_BATCH_SIZE",
    "load_reward_encoder",
    "local_rank",
    "outside_zero3",
    "reward_device",
    "zero3_enabled",
]

CPU_BATCH_SIZE = ENCODE_BATCH_SIZE
"""Sentences per forward pass on CPU: measured fastest for MiniLM on this project's CPU
(larger batches thrash the cache; see ``benchmarks/results/rewards.md``)."""

GPU_BATCH_SIZE = 256
"""Sentences per forward pass on a GPU (reward batches are a few thousand steps)."""

_ENCODERS: dict[tuple[Any, ...], Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def local_rank() -> int:
    """This process's rank on its node (``LOCAL_RANK``, set by torchrun / accelerate)."""
    try:
        return int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError:
        return 0


def reward_device(device: str | None = None) -> str:
    """Device for the reward encoder: ``device`` if given, else ``cuda:<LOCAL_RANK>`` when a
    GPU is visible (modulo the visible count), else ``mps``, else ``cpu``."""
    if device and device != "auto":
        return device
    if not gpu_visible() and sys.platform != "darwin":
        return "cpu"  # no GPU device node: no need to import torch to learn that
    import torch

    if torch.cuda.is_available():
        return f"cuda:{local_rank() % max(torch.cuda.device_count(), 1)}"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def zero3_enabled() -> bool:
    """True while transformers would load new models partitioned under ZeRO-3."""
    if "transformers" not in sys.modules:
        return False
    try:
        from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled
    except ImportError:
        return False
    return bool(is_deepspeed_zero3_enabled())


@contextmanager
def outside_zero3() -> Iterator[None]:
    """Run the block with ZeRO-3 model partitioning suspended (see module docstring).

    Safe to use without DeepSpeed or transformers (it then does nothing) and re-entrant.

    Examples:
        >>> with outside_zero3():
        ...     zero3_enabled()
        False
    """
    saved = None
    hf_ds: Any = None
    if "transformers" in sys.modules or "sentence_transformers" in sys.modules:
        try:
            from transformers.integrations import deepspeed as hf_ds
        except ImportError:
            hf_ds = None
    if hf_ds is not None:
        reference = getattr(hf_ds, "_hf_deepspeed_config_weak_ref", None)
        saved = reference() if reference is not None else None
        hf_ds.unset_hf_deepspeed_config()
    zero_params: Any = None
    if "deepspeed" in sys.modules:
        try:
            import deepspeed.runtime.zero.partition_parameters

            zero_params = deepspeed.runtime.zero.partition_parameters
        except ImportError:
            zero_params = None
    lifted = bool(zero_params is not None and getattr(zero_params, "top_level_context", None))
    if lifted:
        zero_params.shutdown_init_context()
    try:
        yield
    finally:
        if lifted:
            zero_params.restore_init_context()
        if hf_ds is not None and saved is not None:
            hf_ds.set_hf_deepspeed_config(saved)


def load_reward_encoder(
    name: str,
    *,
    device: str | None = None,
    dtype: str = "float32",
    batch_size: int | None = None,
    backend: str = ENCODER_BACKEND,
) -> Encoder:
    """The reward encoder ``name``, loaded now, once per process, outside ZeRO-3.

    Later calls with the same arguments return the same object, so any number of reward
    functions share one model. ``hash`` needs no torch.

    Args:
        name: ``hash``, ``minilm-offline``, a sentence-transformers name or a folder (use the
            evaluation encoder, default ``all-distilroberta-v1``).
        device: ``cuda:N`` / ``cpu`` / ``mps``; ``None`` picks ``cuda:$LOCAL_RANK`` if a GPU
            is visible.
        dtype: ``float32`` (same numbers as evaluation) or ``float16`` (GPU only).
        batch_size: Sentences per forward pass; 64 on CPU, 256 on GPU when ``None``.
        backend: As in :func:`crystalbench.encoders.load_encoder`; ``auto`` (default) runs
            ONNX Runtime on a CPU and torch on a GPU, the same path as ``crystal score``.

    Raises:
        EncoderUnavailableError: The model cannot be loaded (offline, missing extra).

    Examples:
        >>> load_reward_encoder("hash") is load_reward_encoder("hash")
        True
    """
    if name == "hash":
        key: tuple[Any, ...] = ("hash",)
        with _ENCODERS_LOCK:
            if key not in _ENCODERS:
                _ENCODERS[key] = load_encoder("hash")
            return _ENCODERS[key]
    resolved = reward_device(device)
    size = batch_size or (CPU_BATCH_SIZE if resolved == "cpu" else GPU_BATCH_SIZE)
    key = (name, resolved, dtype, size, backend)
    with _ENCODERS_LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = load_encoder(
                name, device=resolved, dtype=dtype, batch_size=size, backend=backend
            )
            with outside_zero3():
                encoder.load()  # type: ignore[attr-defined]  # load now, inside the guard
            _ENCODERS[key] = encoder
        return encoder
