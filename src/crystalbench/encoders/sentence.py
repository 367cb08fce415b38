"""sentence-transformers encoders, loaded lazily (torch is imported only here).

A model named by its hub id is looked up first
(:func:`~crystalbench.encoders.model_files.hub_model_source`): an unreachable hub fails the
load in seconds, or the copy in the local cache is used; loading prints no "Loading weights"
progress bar (:func:`~crystalbench.encoders.model_files.quiet_weight_loading`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench._internal.extras import require
from crystalbench.config.settings import ENCODE_BATCH_SIZE, GPU_ENCODE_BATCH_SIZE
from crystalbench.encoders.base import l2_normalise
from crystalbench.encoders.model_files import (
    OFFLINE_HINT,
    HubUnreachableError,
    bundled_model_folder,
    hub_model_source,
    model_label,
    offline_model_path,
    quiet_weight_loading,
)
from crystalbench.errors import EncoderUnavailableError

__all__ = [
    "OFFLINE_HINT",
    "HubUnreachableError",
    "SentenceTransformerEncoder",
    "offline_model_path",
    "pick_device",
]


def _fingerprint_folder(folder: Path) -> str:
    """Cheap content fingerprint of a model folder: configs fully, weights by size and head."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        digest.update(rel.encode())
        size = path.stat().st_size
        digest.update(str(size).encode())
        with path.open("rb") as handle:
            digest.update(handle.read(1 << 20) if size > (1 << 20) else handle.read())
    return digest.hexdigest()[:16]


def pick_device(device: str | None = None) -> str:
    """``device`` if given, else ``cuda`` when a GPU is visible, else ``mps``, else ``cpu``."""
    if device and device != "auto":
        return device
    torch: Any = require(
        "torch",
        what="a sentence encoder on torch",
        extra="embed",
        hint=OFFLINE_HINT,
        kind=EncoderUnavailableError,
    )

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


GPU_BATCH_SIZE = GPU_ENCODE_BATCH_SIZE
"""Default sentences per forward pass on a GPU (CPU: ``ENCODE_BATCH_SIZE``)."""


class SentenceTransformerEncoder:
    """Any sentence-transformers model by hub name or local path.

    The model loads on first use, never in the constructor, so building an encoder is
    free and errors about downloads surface when encoding starts (with offline advice).

    Args:
        name_or_path: Hub name (``all-distilroberta-v1``), ``minilm-offline``,
            ``mpnet-offline`` or a folder.
        device: ``cuda``, ``cuda:1``, ``cpu``, ``mps`` or ``None`` for automatic.
        dtype: ``float32`` or ``float16`` (float16 needs a GPU: the weights are halved
            and batches run in half precision; vectors come back as float32).
        batch_size: Sentences per forward pass; ``None`` picks 64 on CPU and 1024 on a
            GPU (texts arrive length-sorted, so batches waste little padding).
        threads: torch intra-op threads for this process (``None``: torch's default).
        cache_dir: The cache folder a packaged model (``mpnet-offline``) is unpacked into
            (``<cache_dir>/models``; ``None``: the default cache folder).
    """

    def __init__(
        self,
        name_or_path: str,
        *,
        device: str | None = None,
        dtype: str = "float32",
        batch_size: int | None = None,
        threads: int | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        if dtype not in ("float32", "float16"):
            from crystalbench.errors import UnknownNameError

            raise UnknownNameError("encoder dtype", dtype, ("float32", "float16"))
        self.name = name_or_path
        self.device_request = device
        self.dtype = dtype
        self.batch_size_request = batch_size
        self.threads = threads
        self.cache_dir = cache_dir
        self._model: Any = None
        self._identity: str | None = None
        self._device: str | None = None

    def _resolve_path(self) -> str:
        bundled = bundled_model_folder(self.name, self.cache_dir)
        return str(bundled) if bundled is not None else self.name

    @property
    def identity(self) -> str:
        """``st:<name>:<weights fingerprint>:<dtype>``; local folders are fingerprinted."""
        if self._identity is None:
            target = self._resolve_path()
            folder = Path(target)
            fingerprint = _fingerprint_folder(folder) if folder.is_dir() else "hub"
            label = model_label(self.name)
            self._identity = f"st:{label}:{fingerprint}:{self.dtype}"
        return self._identity

    @property
    def device(self) -> str:
        """The device the model runs on (resolved on first use)."""
        if self._device is None:
            self._device = pick_device(self.device_request)
        return self._device

    @property
    def batch_size(self) -> int:
        """Sentences per forward pass (see the class docstring for the defaults)."""
        if self.batch_size_request:
            return self.batch_size_request
        return GPU_BATCH_SIZE if self.device.startswith("cuda") else ENCODE_BATCH_SIZE

    @batch_size.setter
    def batch_size(self, value: int | None) -> None:
        self.batch_size_request = value

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loads on first access)."""
        if self._model is None:
            self._model = self._load()
        return self._model

    def load(self) -> None:
        """Load the model now (instead of on the first encode)."""
        _ = self.model

    def _load(self) -> Any:
        require(  # before the hub is asked anything: the missing extra is named at once
            "sentence_transformers",
            what=f"encoder {self.name!r}",
            extra="embed",
            hint=OFFLINE_HINT,
            load=False,
            kind=EncoderUnavailableError,
        )
        # Where the model comes from is settled before torch is imported (seconds), so an
        # unreachable hub fails the load at once.
        target = self._resolve_path()
        if not Path(target).expanduser().is_dir():
            target = hub_model_source(target)
        device = self.device
        if self.dtype == "float16" and not device.startswith(("cuda", "mps")):
            raise EncoderUnavailableError(
                f"--dtype float16 needs a GPU, but the encoder would run on {device!r}; "
                "use float32 on CPU (or --backend onnx-int8 for a faster CPU path)"
            )
        from sentence_transformers import SentenceTransformer

        if self.threads:
            import torch

            torch.set_num_threads(self.threads)
        try:
            with quiet_weight_loading():
                model = SentenceTransformer(target, device=device)
        except Exception as exc:  # hub errors come in many classes (OSError, HTTP, gated)
            from crystalbench._internal.hub_probe import offline_mode

            offline = offline_mode()
            raise EncoderUnavailableError(
                f"could not load sentence encoder {self.name!r}"
                f"{f' ({offline})' if offline else ''}: {type(exc).__name__}: {exc}. "
                "It is not cached locally and the model hub could not be reached or access "
                "was refused. " + OFFLINE_HINT
            ) from exc
        if self.dtype == "float16":
            model = model.half()
        model.eval()
        return model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as unit-length float32 rows."""
        if not texts:
            model = self.model
            dim = (
                model.get_embedding_dimension()
                if hasattr(model, "get_embedding_dimension")
                else model.get_sentence_embedding_dimension()
            )
            return np.zeros((0, dim or 0), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        # float16 models return float16 arrays: widen before normalising.
        return l2_normalise(np.asarray(vectors, dtype=np.float32))
