"""crystal-metrics 0.2.0's ``similarity`` module: word-overlap and Jaccard similarities, and
step F1 by word overlap or by sentence embeddings, on crystalbench's matcher and encoders.

``semantic_match_f1`` uses a process-local default encoder (``all-distilroberta-v1`` on
CPU, loaded on first use, as there) behind crystalbench's embedding cache: each distinct
step is embedded once, and a reference seen again comes from the cache.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any

import numpy as np

from crystalbench.compat.crystal_metrics._scoring import (
    DEFAULT_MODEL,
    build_caching_encoder,
    greedy_matches,
)
from crystalbench.encoders import CachingEncoder
from crystalbench.scoring.matching import precision_recall_f1

__all__ = [
    "best_match_f1",
    "jaccard_similarity",
    "semantic_match_f1",
    "tokenize",
    "word_overlap_similarity",
]

_semantic_model_cache: dict[int, CachingEncoder | None] = {}


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``).

    Examples:
        >>> tokenize("The 2019 bar, tallest!")
        ['the', '2019', 'bar', 'tallest']
    """
    return re.findall(r"\w+", text.lower())


def jaccard_similarity(text1: str, text2: str) -> float:
    """Shared distinct words over all distinct words (1.0 for two wordless texts).

    Examples:
        >>> jaccard_similarity("a red bar", "the red bar")
        0.5
    """
    words1, words2 = set(tokenize(text1)), set(tokenize(text2))
    if not words1 and not words2:
        return 1.0
    if not words1 or not words2:
        return 0.0
    return len(words1 & words2) / len(words1 | words2)


def word_overlap_similarity(text1: str, text2: str) -> float:
    """Shared word count over the geometric mean of the two token counts.

    Examples:
        >>> word_overlap_similarity("red bar red", "red bar")
        0.8164965809277261
    """
    words1, words2 = tokenize(text1), tokenize(text2)
    if not words1 and not words2:
        return 1.0
    if not words1 or not words2:
        return 0.0
    shared = sum((Counter(words1) & Counter(words2)).values())
    return shared / (len(words1) * len(words2)) ** 0.5


def _get_semantic_model() -> CachingEncoder | None:
    """This process's default encoder on CPU, or ``None`` (after printing why) when it
    cannot be loaded."""
    pid = os.getpid()
    if pid not in _semantic_model_cache:
        try:
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
            encoder_cache = build_caching_encoder(DEFAULT_MODEL, device="cpu")
            load = getattr(encoder_cache.encoder, "load", None)
            if load is not None:
                load()
            _semantic_model_cache[pid] = encoder_cache
        except Exception as error:
            print(f"semantic_match_f1: model init failed for PID {pid}: {error}")
            _semantic_model_cache[pid] = None
    return _semantic_model_cache.get(pid)


_named_caches: dict[Any, tuple[Any, CachingEncoder]] = {}


def _named_encoder_cache(model: Any) -> CachingEncoder | None:
    """The cached encoder for a ``model`` argument, built once per name or object."""
    if model is None:
        return _get_semantic_model()
    key = model if isinstance(model, str) else id(model)
    found = _named_caches.get(key)
    if found is None or found[0] is not model:
        # A name is an extension (crystal-metrics fails over to its default model there).
        found = (
            model,
            build_caching_encoder(model, device="cpu", use_cache=isinstance(model, str)),
        )
        _named_caches[key] = found
    return found[1]


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-8)


def semantic_match_f1(
    predicted_steps: list[str],
    reference_steps: list[str],
    model: Any = None,
    threshold: float = 0.70,
) -> tuple[float, int, int]:
    """Step F1 by sentence-embedding cosine: ``(f1, matched predictions, matched references)``.

    Args:
        predicted_steps: The completion's steps.
        reference_steps: The reference steps.
        model: ``None`` (the default encoder), a model name, a crystalbench ``Encoder`` or
            an object with ``encode`` (a ``SentenceTransformer``).
        threshold: A pair matches when its cosine is above it.

    Raises:
        RuntimeError: No encoder could be loaded.

    Examples:
        >>> semantic_match_f1(["The bar is red."], ["the bar is red", "x"], model="hash")
        (0.6666666666666666, 1, 1)
    """
    if not predicted_steps or not reference_steps:
        return 0.0, 0, 0
    encoder_cache = _get_semantic_model() if model is None else None
    if model is None and encoder_cache is None:
        raise RuntimeError("SentenceTransformer not available")
    texts = [*predicted_steps, *reference_steps]
    try:
        encoder = encoder_cache if encoder_cache is not None else _named_encoder_cache(model)
        assert encoder is not None  # only the default model can be missing
        vectors = encoder.embed(texts)
    except Exception as error:  # as there: retry once with a fresh default encoder
        _semantic_model_cache.pop(os.getpid(), None)
        encoder_cache = _get_semantic_model()
        if encoder_cache is None:
            raise RuntimeError(f"SentenceTransformer encoding failed: {error}") from error
        vectors = encoder_cache.embed(texts)
    n_pred = len(predicted_steps)
    similarity = np.dot(_unit_rows(vectors[:n_pred]), _unit_rows(vectors[n_pred:]).T)
    return _greedy_f1(similarity, n_pred, len(reference_steps), threshold)


def best_match_f1(
    predicted_steps: list[str],
    reference_steps: list[str],
    threshold: float = 0.3,
) -> tuple[float, int, int]:
    """Step F1 by word overlap (no model): ``(f1, matched predictions, matched references)``.

    Examples:
        >>> best_match_f1(["the light is green", "so go"], ["the light is green"])
        (0.6666666666666666, 1, 1)
    """
    if not predicted_steps or not reference_steps:
        return 0.0, 0, 0
    similarity = np.zeros((len(predicted_steps), len(reference_steps)))
    for i, pred in enumerate(predicted_steps):
        for j, ref in enumerate(reference_steps):
            similarity[i, j] = word_overlap_similarity(pred, ref)
    return _greedy_f1(similarity, len(predicted_steps), len(reference_steps), threshold)


def _greedy_f1(
    similarity_matrix: np.ndarray, n_pred: int, n_ref: int, threshold: float
) -> tuple[float, int, int]:
    """Greedy 1:1 matching above ``threshold`` over the first ``n_pred`` x ``n_ref`` block:
    ``(f1, matched predictions, matched references)``."""
    pairs = greedy_matches(np.asarray(similarity_matrix)[:n_pred, :n_ref], threshold)
    if n_pred <= 0 or n_ref <= 0:
        return 0.0, len(pairs), len(pairs)
    return precision_recall_f1(len(pairs), n_pred, n_ref)[2], len(pairs), len(pairs)
