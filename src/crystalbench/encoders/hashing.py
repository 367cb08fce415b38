"""A deterministic, dependency-free encoder for tests and offline smoke runs."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from crystalbench.encoders.base import l2_normalise

_TOKEN = re.compile(r"[a-z0-9]+")


class HashEncoder:
    """Hashed bag of words and word bigrams, L2-normalised.

    Identical texts get identical vectors, texts sharing words get positive cosines and
    unrelated texts are near zero, so matching logic can be tested with exact,
    reproducible values and no model. It is *not* a semantic encoder: never report its
    numbers as CRYSTAL numbers.

    Args:
        dim: Embedding size.

    Examples:
        >>> enc = HashEncoder()
        >>> v = enc.encode(["The bar for 2019 is tallest", "the bar for 2019 is tallest"])
        >>> float(v[0] @ v[1])
        1.0
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    @property
    def identity(self) -> str:
        """Stable identity used as the cache key prefix."""
        return f"hash-bow-v1:{self.dim}"

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        words = _TOKEN.findall(text.lower())
        features = words + [a + " " + b for a, b in pairwise(words)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[bucket] += sign
        return vec

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see class docstring)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return l2_normalise(np.stack([self._vector(t) for t in texts]))


class OneHotEncoder:
    """Maps each listed text to a fixed vector; for golden tests with exact cosines.

    Args:
        table: ``{text: vector}``; vectors are normalised on the way in.

    Examples:
        >>> enc = OneHotEncoder({"a": [1, 0], "b": [0.6, 0.8]})
        >>> round(float(enc.encode(["a"])[0] @ enc.encode(["b"])[0]), 6)
        0.6
    """

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        keys = list(table)
        matrix = l2_normalise(np.asarray([table[k] for k in keys], dtype=np.float32))
        self._rows = {k: matrix[i] for i, k in enumerate(keys)}
        self.dim = matrix.shape[1]
        digest = hashlib.sha256(repr(sorted((k, tuple(v)) for k, v in table.items())).encode())
        self._identity = "onehot:" + digest.hexdigest()[:16]

    @property
    def identity(self) -> str:
        """Identity derived from the table's contents."""
        return self._identity

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Look each text up; unknown texts raise ``KeyError`` (a test bug)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._rows[t] for t in texts])
