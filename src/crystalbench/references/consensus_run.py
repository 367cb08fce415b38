"""Consensus for many items at once: the configured encoder behind the cache, one batched
embedding call per chunk of items, then :func:`~crystalbench.references.consensus.
consensus_from_embeddings` per item. Both engines call this (the local one in process, the Ray
engine inside its consensus map), so it sits below them and below the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crystalbench.references.config import ReferencesConfig
from crystalbench.references.consensus import (
    CandidateChain,
    ConsensusChain,
    consensus_from_embeddings,
    embed_texts,
    single_blas_thread,
)

__all__ = ["ConsensusTask", "compute_consensus", "open_encoder"]


@dataclass
class ConsensusTask:
    """One item's consensus to compute (what the engines' consensus stage receives)."""

    item_id: str
    round: int
    chains: list[CandidateChain]
    previous: list[str] | None
    candidate_keys: list[str]


def compute_consensus(
    tasks: Sequence[ConsensusTask], encoder: Any, config: ReferencesConfig
) -> list[ConsensusChain]:
    """The consensus of each task, embedding all their steps in one batched call.

    Args:
        tasks: Items with their valid chains (and previous chains).
        encoder: An encoder or :class:`~crystalbench.encoders.CachingEncoder`.
        config: Gives ``theta`` and ``min_support``.
    """
    texts: list[str] = []
    for task in tasks:
        for chain in task.chains:
            texts.extend(chain.steps)
        texts.extend(task.previous or [])
    unique = list(dict.fromkeys(texts))
    vectors = embed_texts(encoder, unique)
    row = {text: i for i, text in enumerate(unique)}
    out = []
    with single_blas_thread():
        for task in tasks:
            embeddings = [vectors[[row[s] for s in chain.steps]] for chain in task.chains]
            previous = task.previous or None
            out.append(
                consensus_from_embeddings(
                    task.chains,
                    embeddings,
                    theta=config.theta,
                    min_support=config.min_support,
                    previous=previous,
                    previous_embeddings=vectors[[row[s] for s in previous]] if previous else None,
                )
            )
    return out


def open_encoder(config: ReferencesConfig) -> Any:
    """The configuration's encoder behind the embedding cache."""
    from crystalbench.encoders import CachingEncoder, EmbeddingStore, load_encoder

    store = EmbeddingStore.default(config.cache_dir) if config.use_cache else None
    encoder = load_encoder(config.encoder, cache_dir=config.cache_dir, device=config.device)
    return CachingEncoder(encoder, store)
