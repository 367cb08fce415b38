"""Inferring a reference precedence from the candidate chains behind a consensus.

Several generators write the same solution; where they state two steps in either order, the
steps are interchangeable, and a model should not lose order credit for swapping them
(``crystal references build --precedence``; the metrics are in :mod:`crystalbench.scoring.order`).
Pure functions of plain data (no I/O, no models). The rule:

1. **Sequences.** Each candidate chain is read as the consensus steps its own steps fell
   into, in its order (:func:`step_sequences`, from the provenance's member lists). A chain
   *holds* a consensus step when one of its steps is in that step's cluster; when several
   are (two of its steps linked through other chains), its *first* one counts: the point
   where the chain first states that fact. Steps of clusters outside the chain (dropped
   under ``min_support``) are ignored.
2. **Votes.** For two consensus steps ``a < b`` (indices in the consensus chain), ``both`` is
   the number of chains holding both, ``agree`` those stating ``a`` first.
3. **Admissible pairs.** The precedence may order ``a`` before ``b`` when no chain holds both,
   or when ``agree >= share * both`` (``share`` in ``(0.5, 1]``, default 1.0: all of them).
   It never orders ``b`` before ``a``: the consensus chain must stay an order its own
   precedence allows (the reference scored against itself keeps order 1.0, and the item
   loader refuses a backward pair). Pairs the chains agree on *against* the consensus order
   (``agree_back >= share * both``) get no edge; they are returned as ``against_chain`` for
   the build report, since the consensus order there disagrees with every chain (it can:
   the order is a mean position, or kept close to an earlier round's).
4. **Edges.** Every admissible pair with ``both >= min_chains`` is a candidate edge. Edges
   are added strongest first (more agreeing chains, then the lower ``a``, then ``b``), each
   only when the closure of the edges so far stays inside the admissible pairs: two agreed
   edges ``a -> c`` and ``c -> b`` would otherwise order ``a`` before ``b`` against chains
   that state ``b`` first (chains that hold ``a`` and ``b`` but not ``c``). Such an edge is
   left out and returned as ``contested``. The result is acyclic (every edge goes forward),
   maximal (no candidate could still be added: the closure only grows) and independent of
   the order the chains come in.
5. **Stored** as its transitive reduction (every edge of it is a candidate, with its own
   votes), the form ``BenchmarkItem.reference_precedence`` takes.

Examples:
    Four generators read two bars (consensus steps 0 and 1) in either order, then compare
    them (2) and answer (3):

    >>> inferred = infer_precedence([[0, 1, 2, 3], [1, 0, 2, 3], [0, 1, 2, 3], [1, 0, 2]], 4)
    >>> inferred.pairs
    [(0, 2), (1, 2), (2, 3)]
    >>> [(e.before, e.after, e.agree, e.both) for e in inferred.edges]
    [(0, 2, 4, 4), (1, 2, 4, 4), (2, 3, 3, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from crystalbench.config.settings import (
    REFERENCES_PRECEDENCE_MIN_CHAINS,
    REFERENCES_PRECEDENCE_SHARE,
)
from crystalbench.precedence import set_bits, transitive_reduction
from crystalbench.references.consensus import ConsensusChain
from crystalbench.types import Record

__all__ = ["InferredPrecedence", "PrecedenceVotes", "infer_precedence", "step_sequences"]


class PrecedenceVotes(Record):
    """How the candidate chains order two consensus steps."""

    before: int
    """The consensus step that comes first (0-based index into the consensus chain)."""
    after: int
    """The consensus step that comes second."""
    agree: int
    """Chains stating ``before``'s step ahead of ``after``'s."""
    both: int
    """Chains holding both steps (``agree`` is out of this)."""


class InferredPrecedence(Record):
    """A precedence inferred from candidate chains, with the votes behind every decision."""

    pairs: list[tuple[int, int]]
    """The transitive reduction: what ``reference_precedence`` stores (sorted)."""
    edges: list[PrecedenceVotes]
    """The votes of each pair of ``pairs``, same order."""
    against_chain: list[PrecedenceVotes] = Field(default_factory=list)
    """Orders the chains agree on that go against the consensus chain's own order (no edge;
    ``before`` is the step the chains state first, the later one in the consensus)."""
    contested: list[PrecedenceVotes] = Field(default_factory=list)
    """Agreed orders left out because, with stronger edges, they would imply an order the
    chains disagree on."""
    share: float
    """Share of the chains holding both steps that had to agree."""
    min_chains: int
    """Chains that had to hold both steps."""
    n_chains: int
    """Candidate chains read."""

    def edges_from(self, step: int) -> list[PrecedenceVotes]:
        """The stored edges out of ``step`` (for its entry in the step provenance)."""
        return [edge for edge in self.edges if edge.before == step]


def step_sequences(chain: ConsensusChain) -> list[list[int]]:
    """Each candidate chain as the consensus-step indices of its steps, in its own order.

    Chains are told apart by their provenance (``key``, ``model``, ``sample``, ``seed``) and
    listed in that order; a chain none of whose steps is in the consensus is absent.

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> from crystalbench.references.consensus import CandidateChain, build_consensus
        >>> chains = [CandidateChain("a", 1, ("x", "y", "z"), key="a"),
        ...           CandidateChain("b", 2, ("y", "x"), key="b")]
        >>> consensus = build_consensus(chains, HashEncoder(), theta=0.99)
        >>> consensus.steps, step_sequences(consensus)
        (['y', 'x', 'z'], [[1, 0, 2], [0, 1]])
        >>> infer_precedence(step_sequences(consensus), 3).pairs
        [(0, 2), (1, 2)]
    """
    found: dict[tuple[str, str, int, int], list[tuple[int, int]]] = {}
    for step, provenance in enumerate(chain.provenance):
        for member in provenance.members:
            identity = (member.key, member.model, member.sample, member.seed)
            found.setdefault(identity, []).append((member.index, step))
    return [[step for _, step in sorted(found[identity])] for identity in sorted(found)]


def _votes(
    sequences: Sequence[Sequence[int | None]], n_steps: int
) -> tuple[list[list[int]], list[list[int]]]:
    """``ahead[a][b]``: chains stating ``a`` before ``b``; ``both[a][b]`` (``a < b``)."""
    ahead = [[0] * n_steps for _ in range(n_steps)]
    both = [[0] * n_steps for _ in range(n_steps)]
    for number, sequence in enumerate(sequences):
        first: dict[int, int] = {}
        for position, step in enumerate(sequence):
            if step is None:
                continue
            if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < n_steps:
                raise ValueError(
                    f"chain {number} names consensus step {step!r} (steps 0..{n_steps - 1})"
                )
            first.setdefault(step, position)
        held = sorted(first)
        for x, a in enumerate(held):
            for b in held[x + 1 :]:
                both[a][b] += 1
                if first[a] < first[b]:
                    ahead[a][b] += 1
                else:
                    ahead[b][a] += 1
    return ahead, both


def infer_precedence(
    sequences: Sequence[Sequence[int | None]],
    n_steps: int,
    *,
    share: float = REFERENCES_PRECEDENCE_SHARE,
    min_chains: int = REFERENCES_PRECEDENCE_MIN_CHAINS,
) -> InferredPrecedence:
    """The precedence the candidate chains agree on (see the module docstring).

    Args:
        sequences: Per candidate chain, the consensus-step index of each of its steps in
            its own order (:func:`step_sequences`); ``None`` for a step outside the chain.
        n_steps: Steps in the consensus chain.
        share: Share of the chains holding both steps that must state them in the
            consensus order for an edge, in ``(0.5, 1]``.
        min_chains: Chains that must hold both steps for an edge (at least 1).

    Returns:
        The :class:`InferredPrecedence` (its ``pairs`` pass
        :func:`~crystalbench.precedence.check_precedence` for ``n_steps``).

    Raises:
        ValueError: ``share`` or ``min_chains`` out of range, or a sequence naming a step
            outside ``0..n_steps-1`` (a caller's bug).

    Examples:
        >>> infer_precedence([[0, 1, 2], [1, 0, 2], [0, 2]], 3).pairs
        [(0, 2), (1, 2)]
        >>> infer_precedence([[0, 1], [0, 1], [1, 0]], 2, share=0.6).edges
        [PrecedenceVotes(before=0, after=1, agree=2, both=3)]
    """
    if not 0.5 < share <= 1.0:
        raise ValueError(f"share must be in (0.5, 1], got {share}")
    if min_chains < 1:
        raise ValueError(f"min_chains must be at least 1, got {min_chains}")
    ahead, both = _votes(sequences, n_steps)
    tolerance = 1e-9  # so that share * both compares as the fraction it stands for

    def agreed(a: int, b: int, held: int) -> bool:
        return held > 0 and ahead[a][b] >= share * held - tolerance

    admissible = [0] * n_steps  # bit b of admissible[a]: the closure may order a before b
    candidates: list[PrecedenceVotes] = []
    against: list[PrecedenceVotes] = []
    for a in range(n_steps):
        for b in range(a + 1, n_steps):
            held = both[a][b]
            if held == 0 or agreed(a, b, held):
                admissible[a] |= 1 << b
                if held >= min_chains:
                    candidates.append(
                        PrecedenceVotes(before=a, after=b, agree=ahead[a][b], both=held)
                    )
            elif held >= min_chains and agreed(b, a, held):
                against.append(PrecedenceVotes(before=b, after=a, agree=ahead[b][a], both=held))
    candidates.sort(key=lambda v: (-v.agree, v.before, v.after))
    later = [0] * n_steps  # closure of the accepted edges: bit b of later[a]
    earlier = [0] * n_steps  # its transpose
    accepted: list[tuple[int, int]] = []
    contested: list[PrecedenceVotes] = []
    for votes in candidates:
        a, b = votes.before, votes.after
        if later[a] >> b & 1:
            accepted.append((a, b))  # implied already
            continue
        heads = earlier[a] | 1 << a
        tails = later[b] | 1 << b
        if any(tails & ~admissible[x] for x in set_bits(heads)):
            contested.append(votes)
            continue
        accepted.append((a, b))
        for x in set_bits(heads):
            later[x] |= tails
        for y in set_bits(tails):
            earlier[y] |= heads
    pairs = transitive_reduction(accepted, n_steps)
    return InferredPrecedence(
        pairs=pairs,
        edges=[
            PrecedenceVotes(before=a, after=b, agree=ahead[a][b], both=both[a][b]) for a, b in pairs
        ],
        against_chain=sorted(against, key=lambda v: (v.after, v.before)),
        contested=sorted(contested, key=lambda v: (v.before, v.after)),
        share=share,
        min_chains=min_chains,
        n_chains=len(sequences),
    )
