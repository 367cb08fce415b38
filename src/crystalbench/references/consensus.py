"""Multi-model consensus: candidate chains in, one reference chain with provenance out.

Pure and deterministic: no I/O, no model (the embeddings come in, or an encoder that is
only asked to embed). The rule, step by step:

1. **Canonical order.** Chains are sorted by ``(model, sample, seed, steps)`` and steps are
   numbered in that order (the *canonical index*). Everything below works on that order,
   so the result never depends on the order in which chains arrive.
2. **Graph.** Every pair of steps from *different* chains with cosine ``>= theta`` is an
   edge (cosines in float64 from unit rows; the matrix is symmetrised). Steps of one chain
   are never linked directly: a chain's own steps are distinct claims by construction, so
   one chain gives itself back; they can still meet in one cluster through steps of other
   chains.
3. **Clusters** are the connected components (:func:`scipy.sparse.csgraph.
   connected_components`, undirected): linking is transitive, so A~B and B~C put A and C
   together even when A and C are far apart.
4. **Medoid.** Each cluster is represented by the member with the smallest mean
   dissimilarity ``1 - cos`` to the other members (a singleton is its own medoid). Scores
   within :data:`~crystalbench.config.settings.REFERENCES_TIE_TOLERANCE` of the best are ties,
   broken by the lowest canonical index.
5. **Support** of a cluster: the number of distinct candidate chains with a member in it,
   and which models those chains came from. With ``min_support > 1`` clusters with less
   support are dropped (kept in :attr:`ConsensusChain.dropped`); the paper keeps every
   cluster (``min_support = 1``, the default).
6. **Order**: the first-round position rule, or in later rounds the order closest in edit
   distance to the previous round's chain (:mod:`crystalbench.references.ordering`).

Example::

    from crystalbench.encoders import load_encoder
    from crystalbench.references import CandidateChain, build_consensus

    chains = [CandidateChain(model="qwen", seed=1, steps=("The bar is red.", "So B.")),
              CandidateChain(model="gemma", seed=2, steps=("The bar is coloured red.",))]
    chain = build_consensus(chains, load_encoder("minilm-offline"), theta=0.6)
    chain.steps, chain.provenance[0].support
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import Field

from crystalbench.config.settings import (
    REFERENCES_MIN_SUPPORT,
    REFERENCES_THETA,
    REFERENCES_TIE_TOLERANCE,
)
from crystalbench.references.ordering import (
    id_sequence,
    levenshtein,
    match_previous,
    position_order,
    stabilised_order,
)
from crystalbench.types import Record


@dataclass(frozen=True)
class CandidateChain:
    """One candidate chain: who wrote it and its steps.

    Attributes:
        model: The generator's name.
        seed: The request's seed.
        steps: The parsed steps, in order.
        sample: Which of the model's samples in the round (0 for the first).
        key: The candidate record this chain came from (carried into provenance).
    """

    model: str
    seed: int
    steps: tuple[str, ...]
    sample: int = 0
    key: str = ""

    def sort_key(self) -> tuple[Any, ...]:
        """The canonical order of chains (independent of arrival order)."""
        return (self.model, self.sample, self.seed, self.steps, self.key)


class StepRef(Record):
    """One candidate step: which chain it belongs to and where."""

    model: str
    """Generator name."""
    seed: int
    """Seed of the chain's request."""
    sample: int = 0
    """Sample number of the chain within its model and round."""
    index: int
    """0-based position in its chain."""
    text: str
    """The step as the generator wrote it (after parsing)."""
    key: str = ""
    """Key of the candidate record (``item|model|round|sample|attempt``)."""


class StepProvenance(Record):
    """Where one consensus step came from: its cluster."""

    support: int
    """Distinct candidate chains with a member in the cluster."""
    n_chains: int
    """Candidate chains the consensus was built from (support is out of this)."""
    models: list[str]
    """Models whose chains have a member in the cluster (sorted)."""
    medoid: StepRef
    """The member chosen as the step (its text is the step)."""
    members: list[StepRef]
    """Every candidate step in the cluster, in canonical order."""
    mean_position: float
    """Mean relative position ``(p + 0.5) / L`` of the members (the first-round key)."""
    cohesion: float
    """Mean cosine of the medoid to the other members (1.0 for a singleton)."""
    previous_index: int | None = None
    """Later rounds: the previous chain's step this cluster was matched to (``None``: new)."""


class ConsensusChain(Record):
    """The consensus of one item's candidate chains, with the provenance of every step."""

    steps: list[str]
    """The reference chain: one medoid per kept cluster, in order."""
    provenance: list[StepProvenance]
    """One entry per step, same order."""
    dropped: list[StepProvenance] = Field(default_factory=list)
    """Clusters under ``min_support`` (not in the chain), in first-round order."""
    order_rule: Literal["position", "stabilised"]
    """``position`` (first round) or ``stabilised`` (closest to the previous chain)."""
    edit_distance: int | None = None
    """Levenshtein distance to the previous chain (stabilised rule only)."""
    theta: float
    """Linking threshold used (cosine ``>= theta``)."""
    min_support: int
    """Minimum support a cluster needed to be kept."""
    n_chains: int
    """Candidate chains used (empty chains excluded)."""
    n_candidate_steps: int
    """Candidate steps clustered."""
    n_clusters: int
    """Clusters found (kept and dropped)."""


@dataclass
class _Clusters:
    labels: np.ndarray
    members: list[list[int]] = field(default_factory=list)


def canonical_chains(chains: Sequence[CandidateChain]) -> list[CandidateChain]:
    """Non-empty chains in canonical order (see the module docstring).

    Examples:
        >>> a = CandidateChain("m2", 1, ("x",)); b = CandidateChain("m1", 5, ("y",))
        >>> [c.model for c in canonical_chains([a, b, CandidateChain("m0", 0, ())])]
        ['m1', 'm2']
    """
    return sorted((c for c in chains if c.steps), key=CandidateChain.sort_key)


def _unit64(vectors: np.ndarray) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"embeddings must be a 2-d array, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def _components(similarity: np.ndarray, chain_of: np.ndarray, theta: float) -> _Clusters:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    linked = similarity >= theta
    linked &= chain_of[:, None] != chain_of[None, :]
    _, labels = connected_components(csr_matrix(linked), directed=False)
    # Number clusters by their first (lowest canonical index) member.
    order: dict[int, int] = {}
    members: list[list[int]] = []
    for node, label in enumerate(labels.tolist()):
        if label not in order:
            order[label] = len(members)
            members.append([])
        members[order[label]].append(node)
    return _Clusters(labels=labels, members=members)


def _member_scores(similarity: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each step's mean cosine to the other members of its cluster (1.0 for singletons),
    for every cluster at once."""
    same = labels[:, None] == labels[None, :]
    sizes = same.sum(axis=1)
    sums = np.where(same, similarity, 0.0).sum(axis=1) - np.diagonal(similarity)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sizes > 1, sums / np.maximum(sizes - 1, 1), 1.0)


def _medoid(scores: np.ndarray, members: list[int], tolerance: float) -> tuple[int, float]:
    """The member with the highest mean cosine to the others (= smallest mean ``1 - cos``);
    ties within ``tolerance`` go to the lowest canonical index (members are in that order)."""
    if len(members) == 1:
        return members[0], 1.0
    values = [float(scores[m]) for m in members]
    best = max(values)
    for node, value in zip(members, values, strict=True):
        if value >= best - tolerance:
            return node, value
    raise AssertionError("unreachable")  # pragma: no cover


def consensus_from_embeddings(
    chains: Sequence[CandidateChain],
    embeddings: Sequence[np.ndarray],
    *,
    theta: float = REFERENCES_THETA,
    min_support: int = REFERENCES_MIN_SUPPORT,
    previous: Sequence[str] | None = None,
    previous_embeddings: np.ndarray | None = None,
    tie_tolerance: float = REFERENCES_TIE_TOLERANCE,
) -> ConsensusChain:
    """The consensus of ``chains`` given one embedding matrix per chain.

    Args:
        chains: Candidate chains in any order (empty ones are ignored).
        embeddings: ``embeddings[i]`` has one row per step of ``chains[i]``.
        theta: Link steps of different chains at cosine ``>= theta``.
        min_support: Keep only clusters with members from at least this many chains.
        previous: The previous round's chain (later rounds), or ``None`` (first round).
        previous_embeddings: One row per step of ``previous``.
        tie_tolerance: Medoid scores this close to the best are ties.

    Raises:
        ValueError: The embeddings do not fit the chains (a caller bug, not model output).

    Examples:
        >>> chains = [CandidateChain("a", 1, ("x", "y")), CandidateChain("b", 2, ("x2",))]
        >>> vectors = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.9, 0.1]])]
        >>> chain = consensus_from_embeddings(chains, vectors, theta=0.8)
        >>> chain.steps, [p.support for p in chain.provenance]
        (['x', 'y'], [2, 1])
    """
    if len(chains) != len(embeddings):
        raise ValueError(f"{len(chains)} chains but {len(embeddings)} embedding matrices")
    if min_support < 1:
        raise ValueError("min_support must be at least 1")
    paired = []
    for chain, matrix in zip(chains, embeddings, strict=True):
        matrix = np.asarray(matrix)
        if len(chain.steps) != (matrix.shape[0] if matrix.ndim == 2 else 0) and chain.steps:
            raise ValueError(
                f"chain of {chain.model} (seed {chain.seed}) has {len(chain.steps)} steps but "
                f"{matrix.shape[0] if matrix.ndim else 0} embeddings"
            )
        if chain.steps:
            paired.append((chain, matrix))
    paired.sort(key=lambda pair: pair[0].sort_key())
    ordered = [chain for chain, _ in paired]
    n_chains = len(ordered)
    refs: list[StepRef] = []
    chain_of: list[int] = []
    positions: list[float] = []
    for number, chain in enumerate(ordered):
        length = len(chain.steps)
        for index, text in enumerate(chain.steps):
            refs.append(
                StepRef(
                    model=chain.model,
                    seed=chain.seed,
                    sample=chain.sample,
                    index=index,
                    text=text,
                    key=chain.key,
                )
            )
            chain_of.append(number)
            positions.append((index + 0.5) / length)
    if not refs:
        return ConsensusChain(
            steps=[],
            provenance=[],
            order_rule="position",
            theta=theta,
            min_support=min_support,
            n_chains=0,
            n_candidate_steps=0,
            n_clusters=0,
        )
    vectors = _unit64(np.concatenate([matrix for _, matrix in paired], axis=0))
    similarity = vectors @ vectors.T
    similarity = (similarity + similarity.T) / 2.0
    chain_index = np.asarray(chain_of)
    clusters = _components(similarity, chain_index, theta)

    entries: list[StepProvenance] = []
    medoid_nodes: list[int] = []
    scores = _member_scores(similarity, clusters.labels)
    for members in clusters.members:
        medoid, cohesion = _medoid(scores, members, tie_tolerance)
        chains_in = sorted({chain_of[m] for m in members})
        models = sorted({ordered[c].model for c in chains_in})
        entries.append(
            StepProvenance(
                support=len(chains_in),
                n_chains=n_chains,
                models=models,
                medoid=refs[medoid],
                members=[refs[m] for m in members],
                mean_position=sum(positions[m] for m in members) / len(members),
                cohesion=round(cohesion, 6),
            )
        )
        medoid_nodes.append(medoid)

    first = position_order(
        [e.mean_position for e in entries], [e.support for e in entries], medoid_nodes
    )
    kept = [c for c in first if entries[c].support >= min_support]
    dropped = [entries[c] for c in first if entries[c].support < min_support]

    if previous is None or len(previous) == 0:
        order = kept
        rule: Literal["position", "stabilised"] = "position"
        distance: int | None = None
        matched: dict[int, int] = {}
    else:
        if previous_embeddings is None or len(previous_embeddings) != len(previous):
            raise ValueError("previous_embeddings needs one row per previous step")
        prev = _unit64(np.asarray(previous_embeddings))
        local = {cluster: row for row, cluster in enumerate(kept)}
        medoid_rows = vectors[[medoid_nodes[c] for c in kept]]
        found = match_previous(medoid_rows @ prev.T, theta)
        matched = {kept[row]: column for row, column in found.items()}
        keys = [entries[c].mean_position for c in kept]
        result = stabilised_order(
            len(previous),
            {local[c]: column for c, column in matched.items()},
            keys,
            list(range(len(kept))),
        )
        order = [kept[row] for row in result.order]
        rule = "stabilised"
        distance = levenshtein(
            id_sequence(result.order, {local[c]: v for c, v in matched.items()}, len(previous)),
            list(range(len(previous))),
        )
    provenance = [entries[c].model_copy(update={"previous_index": matched.get(c)}) for c in order]
    return ConsensusChain(
        steps=[entry.medoid.text for entry in provenance],
        provenance=provenance,
        dropped=dropped,
        order_rule=rule,
        edit_distance=distance,
        theta=theta,
        min_support=min_support,
        n_chains=n_chains,
        n_candidate_steps=len(refs),
        n_clusters=len(entries),
    )


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Run BLAS on one thread while many small consensus matrices are multiplied.

    An item's similarity matrix is about 50 x 50: OpenBLAS's thread start-up costs more
    than the product (1.0 ms against 0.07 ms per item on a loaded 2-core machine,
    ``benchmarks/results/references.md``). Uses ``threadpoolctl`` when it is installed
    (scikit-learn brings it), else changes nothing. Enter it once per batch of items: it
    inspects the loaded libraries each time.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is optional
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def embed_texts(encoder: Any, texts: Sequence[str]) -> np.ndarray:
    """Embed with a :class:`~crystalbench.encoders.CachingEncoder` (``embed``) or any
    :class:`~crystalbench.encoders.Encoder` (``encode``)."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    embed = getattr(encoder, "embed", None)
    return np.asarray(embed(list(texts)) if embed is not None else encoder.encode(list(texts)))


def build_consensus(
    chains: Sequence[CandidateChain],
    encoder: Any,
    *,
    theta: float = REFERENCES_THETA,
    min_support: int = REFERENCES_MIN_SUPPORT,
    previous: Sequence[str] | None = None,
) -> ConsensusChain:
    """The consensus of ``chains``, embedding their steps with ``encoder``.

    Args:
        chains: Candidate chains (any order; empty ones are ignored).
        encoder: An :class:`~crystalbench.encoders.Encoder` or a
            :class:`~crystalbench.encoders.CachingEncoder` (its cache is used).
        theta: Link steps at cosine ``>= theta``.
        min_support: Keep clusters with members from at least this many chains.
        previous: The previous round's chain, to keep the order stable (later rounds).

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> chains = [CandidateChain("a", 1, ("The bar is red.", "So the answer is B.")),
        ...           CandidateChain("b", 2, ("the bar is red",))]
        >>> chain = build_consensus(chains, HashEncoder(), theta=0.9)
        >>> chain.steps, chain.provenance[0].models
        (['The bar is red.', 'So the answer is B.'], ['a', 'b'])
    """
    texts = [step for chain in chains for step in chain.steps]
    previous_list = list(previous or [])
    vectors = embed_texts(encoder, texts + previous_list)
    split: list[np.ndarray] = []
    start = 0
    for chain in chains:
        split.append(vectors[start : start + len(chain.steps)])
        start += len(chain.steps)
    return consensus_from_embeddings(
        chains,
        split,
        theta=theta,
        min_support=min_support,
        previous=previous_list or None,
        previous_embeddings=vectors[start:] if previous_list else None,
    )
