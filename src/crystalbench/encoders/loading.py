"""Build one encoder in this process (the worker processes of
:mod:`crystalbench.encoders.parallel` call this too, so imports run one way:
``encoders`` -> ``parallel`` -> ``loading``)."""

from __future__ import annotations

from pathlib import Path

from crystalbench.config.settings import ENCODER_BACKENDS
from crystalbench.encoders.auto import AutoEncoder, choose_backend
from crystalbench.encoders.base import Encoder
from crystalbench.encoders.hashing import HashEncoder

BACKENDS = ENCODER_BACKENDS
"""How sentence-transformers models run: automatic, PyTorch, ONNX Runtime fp32 or int8."""


def check_backend(backend: str) -> None:
    """Refuse an unknown backend name.

    Raises:
        UnknownNameError: ``backend`` is not one of :data:`BACKENDS`.
    """
    if backend not in BACKENDS:
        from crystalbench.errors import UnknownNameError

        raise UnknownNameError("encoder backend", backend, BACKENDS)


def load_single_encoder(
    name: str,
    *,
    backend: str,
    device: str | None = None,
    dtype: str = "float32",
    batch_size: int | None = None,
    threads: int | None = None,
    cache_dir: str | Path | None = None,
) -> Encoder:
    """The single-process encoder ``name`` on ``backend`` (see
    :func:`crystalbench.encoders.load_encoder` for the arguments)."""
    check_backend(backend)
    if name == "hash":
        if backend not in ("auto", "torch") or dtype != "float32":
            from crystalbench.errors import EncoderUnavailableError

            raise EncoderUnavailableError(
                f"the hash encoder has no {backend}/{dtype} variant; it only runs as is"
            )
        return HashEncoder()
    from crystalbench._internal.paths import local_path
    from crystalbench.config.settings import ENCODE_BATCH_SIZE
    from crystalbench.defaults import OFFLINE_ENCODER
    from crystalbench.encoders.packaged_models import PACKAGED_MODELS

    if name != OFFLINE_ENCODER and name not in PACKAGED_MODELS:
        local_path(name, option="--encoder")  # a mistyped folder is not sent to the hub

    def torch_encoder() -> Encoder:
        from crystalbench.encoders.sentence import SentenceTransformerEncoder

        return SentenceTransformerEncoder(
            name,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            threads=threads,
            cache_dir=cache_dir,
        )

    if backend == "auto":
        if choose_backend(name, device=device, dtype=dtype)[0] == "torch":
            return torch_encoder()
    elif backend == "torch":
        return torch_encoder()
    from crystalbench.encoders.onnx_backend import OnnxEncoder

    onnx = OnnxEncoder(
        name,
        precision="int8" if backend == "onnx-int8" else "fp32",
        batch_size=batch_size or ENCODE_BATCH_SIZE,
        cache_dir=cache_dir,
        threads=threads,
    )
    return onnx if backend != "auto" else AutoEncoder(onnx, torch_encoder)
