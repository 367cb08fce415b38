"""Encoding spread over several worker processes (CPU cores or GPUs) for large runs.

:class:`ParallelEncoder` wraps an :class:`EncoderSpec`: each worker process builds its own
copy of the encoder (with a fixed number of threads, or on its own GPU), and every
``encode`` call is cut into length-balanced shares, one per worker, whose vectors are put
back in input order. The vectors are those of the wrapped encoder, so the identity is the
wrapped encoder's: the embedding cache is shared with single-process runs.

Workers start on the first ``encode`` (``spawn`` start method: safe with torch and CUDA)
and stop with :meth:`ParallelEncoder.close` or at interpreter exit.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from crystalbench.config.settings import ENCODE_BATCH_SIZE, ENCODER_BACKEND, GPU_ENCODE_BATCH_SIZE
from crystalbench.encoders.base import Encoder


@dataclass(frozen=True)
class EncoderSpec:
    """Everything needed to build an encoder in another process (picklable).

    Attributes:
        name: ``hash``, ``minilm-offline``, a sentence-transformers name or folder.
        backend: ``auto``, ``torch``, ``onnx`` or ``onnx-int8``.
        device: Device for torch models (``cpu``, ``cuda:1``...); ``None`` for automatic.
        dtype: ``float32`` or ``float16`` (torch on GPU).
        batch_size: Sentences per forward pass; ``None`` for the encoder's default.
        threads: Threads per worker (torch intra-op / ONNX Runtime intra-op).
        cache_dir: Embedding-cache folder (ONNX exports live under it).
    """

    name: str
    backend: str = ENCODER_BACKEND
    device: str | None = None
    dtype: str = "float32"
    batch_size: int | None = None
    threads: int | None = None
    cache_dir: str | None = None

    def build(self) -> Encoder:
        """Build the (single-process) encoder this spec describes."""
        from crystalbench.encoders.loading import load_single_encoder

        return load_single_encoder(
            self.name,
            backend=self.backend,
            device=self.device,
            dtype=self.dtype,
            batch_size=self.batch_size,
            threads=self.threads,
            cache_dir=self.cache_dir,
        )


# One encoder per worker process, built by the pool initializer.
_WORKER_ENCODER: Encoder | None = None


def _init_worker(spec: EncoderSpec) -> None:
    global _WORKER_ENCODER
    if spec.threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(spec.threads)
        if spec.backend == "torch" and spec.name != "hash":
            import torch

            torch.set_num_threads(spec.threads)
    _WORKER_ENCODER = spec.build()


def _encode_in_worker(texts: list[str]) -> np.ndarray:
    assert _WORKER_ENCODER is not None, "worker initializer did not run"
    return np.ascontiguousarray(_WORKER_ENCODER.encode(texts), dtype=np.float32)


def _warm_worker() -> int:
    return os.getpid()


def split_balanced(lengths: Sequence[int], parts: int, block: int) -> list[list[int]]:
    """Deal indices into ``parts`` shares of similar total length.

    Indices are sorted by length (longest first), cut into blocks of ``block`` and the
    blocks dealt in a snake order (0, 1, ..., p-1, p-1, ..., 0, ...), so each share gets
    long and short texts alike and keeps whole length-sorted batches.

    Examples:
        >>> split_balanced([5, 1, 4, 2, 3, 6], parts=2, block=1)
        [[5, 4, 3], [0, 2, 1]]
        >>> split_balanced([1, 2], parts=3, block=8)
        [[1, 0], [], []]
    """
    order = sorted(range(len(lengths)), key=lambda k: lengths[k], reverse=True)
    shares: list[list[int]] = [[] for _ in range(parts)]
    blocks = [order[s : s + block] for s in range(0, len(order), block)]
    for number, chunk in enumerate(blocks):
        lap, slot = divmod(number, parts)
        target = slot if lap % 2 == 0 else parts - 1 - slot
        shares[target].extend(chunk)
    return shares


class ParallelEncoder:
    """Runs one encoder per worker process and splits each batch of texts between them.

    Args:
        spec: The encoder each worker builds.
        workers: Number of worker processes (ignored when ``devices`` is given).
        devices: One worker per device (``["cuda:0", "cuda:1"]``): multi-GPU encoding.
        min_texts: Calls with fewer texts than this run in the calling process (a local
            copy of the encoder) while the workers are not started yet, where starting them
            would cost more than it saves; once started, every call goes to the workers.

    Examples:
        >>> enc = ParallelEncoder(EncoderSpec("hash"), workers=2, min_texts=10_000)
        >>> enc.identity, enc.encode(["a b", "c"]).shape
        ('hash-bow-v1:256', (2, 256))
    """

    def __init__(
        self,
        spec: EncoderSpec,
        *,
        workers: int = 2,
        devices: Sequence[str] | None = None,
        min_texts: int = 256,
    ) -> None:
        self.devices = list(devices) if devices else []
        self.workers = len(self.devices) if self.devices else max(1, workers)
        self.spec = spec
        self.min_texts = min_texts
        self._local: Encoder | None = None
        self._pools: list[ProcessPoolExecutor] = []
        self._lock = threading.Lock()
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        """The wrapped encoder's identity (the vectors are the same)."""
        if self._identity is None:
            self._identity = self._local_encoder().identity
        return self._identity

    @property
    def batch_size(self) -> int:
        """Sentences per forward pass in each worker."""
        if self.spec.batch_size:
            return self.spec.batch_size
        on_gpu = any(d.startswith("cuda") for d in self.devices) or str(
            self.spec.device or ""
        ).startswith("cuda")
        return GPU_ENCODE_BATCH_SIZE if on_gpu else ENCODE_BATCH_SIZE

    def _local_encoder(self) -> Encoder:
        if self._local is None:
            device = self.devices[0] if self.devices else self.spec.device
            self._local = replace(self.spec, device=device).build()
        return self._local

    def _start(self) -> list[ProcessPoolExecutor]:
        with self._lock:
            if not self._pools:
                context = multiprocessing.get_context("spawn")
                for worker in range(self.workers):
                    spec = self.spec
                    if self.devices:
                        spec = replace(spec, device=self.devices[worker])
                    self._pools.append(
                        ProcessPoolExecutor(
                            max_workers=1,
                            mp_context=context,
                            initializer=_init_worker,
                            initargs=(spec,),
                        )
                    )
                atexit.register(self.close)
                # Build every worker's model now, in parallel, before timing-sensitive work.
                for future in [pool.submit(_warm_worker) for pool in self._pools]:
                    future.result()
            return self._pools

    def start(self) -> None:
        """Start the workers (and load their models) now instead of on the first call."""
        self._start()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` across the workers; rows come back in input order."""
        if self.workers == 1 or (not self._pools and len(texts) < self.min_texts):
            return self._local_encoder().encode(texts)
        pools = self._start()
        block = self.batch_size
        shares = split_balanced([len(t) for t in texts], len(pools), block)
        futures: list[tuple[list[int], Future[Any]]] = [
            (share, pool.submit(_encode_in_worker, [texts[k] for k in share]))
            for pool, share in zip(pools, shares, strict=True)
            if share
        ]
        out: np.ndarray | None = None
        for share, future in futures:
            vectors = future.result()
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[share] = vectors
        assert out is not None
        return out

    def close(self) -> None:
        """Stop the worker processes."""
        with self._lock:
            for pool in self._pools:
                pool.shutdown(wait=True, cancel_futures=True)
            self._pools = []

    def __enter__(self) -> ParallelEncoder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
