"""Alternative reference chains: whole candidate chains kept beside the consensus.

With the paper's settings (every cluster kept) the consensus chain is the union of the
candidates' clusters, so a model that follows one generator's reasoning path exactly is
still charged for the steps of the other paths (its precision stays high, its recall does
not). ``alternatives = k`` keeps up to ``k`` candidate chains of the accepted round as
``reference_chains``; scoring then takes, per item, the best of the consensus and those chains.

The pick is pure and deterministic. Each candidate chain is read as the set of consensus
clusters its steps fell into (from the provenance's member lists). Chains whose set equals the
consensus's, or another picked chain's, add nothing and are never picked. Among the rest the
first pick is the chain farthest from the consensus (lowest Jaccard similarity of cluster
sets, so the most distinct path), and each next pick the chain farthest from everything
picked so far (its highest Jaccard similarity to a picked set or to the consensus is the
lowest); ties go to the lower candidate key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crystalbench.references.consensus import ConsensusChain

__all__ = ["Alternative", "pick_alternatives"]


@dataclass(frozen=True)
class Alternative:
    """One candidate chain kept as an alternative reference."""

    key: str
    """Candidate record key (``item|model|r<round>|s<sample>|a<attempt>``)."""
    model: str
    seed: int
    steps: tuple[str, ...]
    clusters: tuple[int, ...]
    """Indices of the consensus steps whose clusters hold this chain's steps."""
    similarity: float
    """Its highest Jaccard similarity to the consensus or an earlier pick when picked."""


def _jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def pick_alternatives(
    chain: ConsensusChain, candidates: Mapping[str, Sequence[str]], k: int
) -> list[Alternative]:
    """Up to ``k`` candidate chains that take a different path from the consensus.

    Args:
        chain: The accepted consensus chain (its provenance names every member step's
            candidate record).
        candidates: Candidate key -> its parsed steps (the ``ok`` records of the round).
        k: How many to keep (0: none).

    Examples:
        >>> from crystalbench.references import CandidateChain, build_consensus
        >>> from crystalbench.encoders import HashEncoder
        >>> chains = [
        ...     CandidateChain("a", 1, ("x is 2", "y is 3", "sum is 5"), key="a"),
        ...     CandidateChain("b", 2, ("x is 2", "y is 3", "sum is 5"), key="b"),
        ...     CandidateChain("c", 3, ("count the dots", "sum is 5"), key="c"),
        ... ]
        >>> consensus = build_consensus(chains, HashEncoder(), theta=0.99)
        >>> steps = {c.key: c.steps for c in chains}
        >>> [(a.key, a.steps) for a in pick_alternatives(consensus, steps, 2)]
        [('c', ('count the dots', 'sum is 5')), ('a', ('x is 2', 'y is 3', 'sum is 5'))]
    """
    if k <= 0:
        return []
    clusters: dict[str, set[int]] = {}
    seeds: dict[str, tuple[str, int]] = {}
    for index, provenance in enumerate(chain.provenance):
        for member in provenance.members:
            if member.key in candidates:
                clusters.setdefault(member.key, set()).add(index)
                seeds[member.key] = (member.model, member.seed)
    whole = frozenset(range(len(chain.provenance)))
    taken: list[frozenset[int]] = [whole]
    picked: list[Alternative] = []
    pool = {key: frozenset(found) for key, found in clusters.items()}
    while len(picked) < k:
        best: tuple[float, str] | None = None
        for key in sorted(pool):
            found = pool[key]
            if any(found == t for t in taken):
                continue
            score = max(_jaccard(found, t) for t in taken)
            if best is None or score < best[0]:
                best = (score, key)
        if best is None:
            break
        score, key = best
        found = pool.pop(key)
        model, seed = seeds[key]
        picked.append(
            Alternative(key, model, seed, tuple(candidates[key]), tuple(sorted(found)), score)
        )
        taken.append(found)
    return picked
