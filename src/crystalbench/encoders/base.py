"""The encoder protocol every sentence encoder satisfies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    """Turns sentences into L2-normalised float32 embeddings.

    ``identity`` names the encoder exactly (model, weights, precision, backend): the
    embedding cache is keyed by it, so two encoders that can produce different vectors
    must never share an identity.
    """

    @property
    def identity(self) -> str:
        """Stable string naming the model, weights, precision and backend."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as a ``(len(texts), dim)`` float32 array of unit rows."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit length; all-zero rows stay zero (their cosines are 0).

    Examples:
        >>> l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)
