"""Building reference chains by multi-model consensus (placeholder, filled in below)."""

from __future__ import annotations

from crystalbench.references.consensus import (
    CandidateChain,
    ConsensusChain,
    StepProvenance,
    StepRef,
    build_consensus,
    consensus_from_embeddings,
)

__all__ = [
    "CandidateChain",
    "ConsensusChain",
    "StepProvenance",
    "StepRef",
    "build_consensus",
    "consensus_from_embeddings",
]
