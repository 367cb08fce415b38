"""What the drop-in's modules share: crystal-metrics' greedy matching and order scores on
crystalbench's matcher, and the encoders behind its model names.

crystal-metrics compares and sorts similarities at the precision of the matrix it is given
(float32 from sentence-transformers, float64 from word overlap or from test embeddings).
:func:`crystalbench.scoring.matching.greedy_pairs` works in float32, so :func:`greedy_matches`
hands it the *ranks* of the passing similarities instead of the values: the order, the
strict threshold and the tie rule (:func:`crystalbench.scoring.compat.match_rules`) are
then exactly crystal-metrics', at any precision.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from crystalbench.defaults import COMPAT_CRYSTAL_METRICS, ENCODER
from crystalbench.encoders import CachingEncoder, EmbeddingStore, Encoder, load_encoder
from crystalbench.scoring.compat import match_rules
from crystalbench.scoring.matching import greedy_pairs, kendall_score, lis_ratio

__all__ = [
    "DEFAULT_MODEL",
    "ModelEncoder",
    "build_caching_encoder",
    "greedy_matches",
    "kendall_tau",
    "lis",
    "redirect_model",
]

DEFAULT_MODEL = ENCODER
"""crystal-metrics' default sentence encoder (the paper's): ``all-distilroberta-v1``."""

_RANK_RULES = match_rules(COMPAT_CRYSTAL_METRICS, tau=0.0)
_REDIRECTS: dict[str, str | Encoder] = {}
_LOCK = threading.Lock()


def redirect_model(model_name: str, to: str | Encoder | None) -> None:
    """Load ``to`` wherever crystal-metrics code asks for the model ``model_name``.

    For machines without the model hub: ``redirect_model("all-distilroberta-v1",
    "minilm-offline")`` makes every evaluator and semantic reward built afterwards with the
    default model use the bundled MiniLM (thresholds still follow the name asked for).
    ``to=None`` removes the redirection.

    Examples:
        >>> redirect_model("all-distilroberta-v1", "hash")
        >>> build_caching_encoder("all-distilroberta-v1", use_cache=False).identity
        'hash-bow-v1:256'
        >>> redirect_model("all-distilroberta-v1", None)
    """
    with _LOCK:
        if to is None:
            _REDIRECTS.pop(model_name, None)
        else:
            _REDIRECTS[model_name] = to


class ModelEncoder:
    """A model object with crystal-metrics' ``encode(texts, convert_to_tensor=False,
    show_progress_bar=False)`` (a ``SentenceTransformer``) seen as an :class:`Encoder`.

    Its vectors are returned as the model gives them (crystal-metrics normalises them
    itself); they are kept in memory only, since an object has no stable identity.

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> class Model:
        ...     def encode(self, texts, convert_to_tensor=False, show_progress_bar=False):
        ...         return HashEncoder().encode(texts) * 2
        >>> vectors = ModelEncoder(Model()).encode(["a"])
        >>> vectors.dtype, float(vectors.max())
        (dtype('float32'), 2.0)
    """

    def __init__(self, model: Any) -> None:
        self.model = model

    @property
    def identity(self) -> str:
        """Names this object for the life of the process (never written to disk)."""
        return f"object:{type(self.model).__name__}:{id(self.model)}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The model's vectors for ``texts``, as float32 rows."""
        vectors = self.model.encode(list(texts), convert_to_tensor=False, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def build_caching_encoder(
    model: Any,
    *,
    device: str | None = None,
    cache_dir: str | None = None,
    use_cache: bool = True,
) -> CachingEncoder:
    """The cached encoder for a crystal-metrics ``model`` argument (nothing loads yet).

    Args:
        model: A model name or folder (``all-distilroberta-v1``, ``minilm-offline``, any
            sentence-transformers name, ``hash``), a crystalbench :class:`Encoder`, or an
            object with ``encode`` (a ``SentenceTransformer``).
        device: ``cuda``, ``cpu``, ... ; ``None`` or ``"auto"``: a GPU when one is visible.
        cache_dir: Folder of the on-disk embedding cache (default
            :func:`crystalbench.encoders.default_cache_dir`).
        use_cache: ``False``: keep no vectors on disk.

    Examples:
        >>> build_caching_encoder("hash", use_cache=False).embed(["a b"]).shape
        (1, 256)
    """
    if isinstance(model, str):
        with _LOCK:
            model = _REDIRECTS.get(model, model)
    if isinstance(model, str):
        encoder: Encoder = load_encoder(
            model, device=None if device in (None, "auto") else device, cache_dir=cache_dir
        )
    elif isinstance(model, Encoder):
        encoder = model
    elif callable(getattr(model, "encode", None)):
        return CachingEncoder(ModelEncoder(model))
    else:
        raise TypeError(
            f"expected a model name, an Encoder or a model with encode(), got {model!r}"
        )
    store = EmbeddingStore.default(cache_dir) if use_cache else None
    return CachingEncoder(encoder, store)


def greedy_matches(similarity: Any, threshold: float) -> list[tuple[int, int, Any]]:
    """crystal-metrics' greedy 1:1 matching: pairs with ``S > threshold``, highest first,
    ties to the higher predicted then reference index; ``(i, j, S[i, j])`` in acceptance
    order, each similarity as the matrix holds it.

    Examples:
        >>> S = np.array([[0.9, 0.5], [0.9, 0.4]])
        >>> [(i, j) for i, j, _ in greedy_matches(S, 0.35)]
        [(1, 0), (0, 1)]
        >>> greedy_matches(np.array([[0.35]]), 0.35)
        []
    """
    sim = np.asarray(similarity)
    if sim.ndim != 2 or sim.size == 0:
        return []
    # Compared value by value, as crystal-metrics does (a NaN never passes).
    passing = np.fromiter((v > threshold for v in sim.flat), dtype=bool, count=sim.size)
    passing = passing.reshape(sim.shape)
    values = sim[passing]
    if values.size == 0:
        return []
    ranks = np.full(sim.shape, -1.0, dtype=np.float32)
    ranks[passing] = np.searchsorted(np.unique(values), values) + 1
    return [(i, j, sim[i, j]) for i, j, _ in greedy_pairs(ranks, _RANK_RULES)]


def _prediction_order(pairs: Sequence[tuple[int, int, Any]]) -> list[int]:
    return [int(pair[0]) for pair in sorted(pairs, key=lambda pair: pair[1])]


def kendall_tau(pairs: Sequence[tuple[int, int, Any]]) -> float:
    """Kendall's tau in [-1, 1] of the matched pairs read in reference order; 1.0 with
    fewer than two pairs.

    Examples:
        >>> kendall_tau([(2, 0, 1.0), (1, 1, 1.0), (0, 2, 1.0)]), kendall_tau([(0, 0, 1.0)])
        (-1.0, 1.0)
    """
    sequence = _prediction_order(pairs)
    k = len(sequence)
    if k < 2:
        return 1.0
    total = k * (k - 1) / 2
    # kendall_score is (tau + 1) / 2; the balance of pairs is an integer, so dividing it
    # again gives crystal-metrics' tau to the last bit.
    balance = round((2.0 * kendall_score(sequence) - 1.0) * total)
    return balance / total


def lis(pairs: Sequence[tuple[int, int, Any]]) -> float:
    """LIS ratio of the matched pairs read in reference order; 1.0 with fewer than two.

    Examples:
        >>> round(lis([(2, 0, 1.0), (1, 1, 1.0), (0, 2, 1.0)]), 4)
        0.3333
    """
    return lis_ratio(_prediction_order(pairs))
