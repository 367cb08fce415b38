"""Inferring a reference precedence from candidate chains (``references build --precedence``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.encoders import HashEncoder
from crystalbench.precedence import Precedence, check_precedence, transitive_closure
from crystalbench.references.consensus import CandidateChain, build_consensus
from crystalbench.references.precedence import (
    PrecedenceVotes,
    infer_precedence,
    step_sequences,
)
from crystalbench.scoring.order import order_fields


def votes(inferred):
    return [(v.before, v.after, v.agree, v.both) for v in inferred.edges]


# ----------------------------------------------------------------------------- worked examples


def test_unanimous_orders_become_edges_stored_as_a_reduction():
    inferred = infer_precedence([[0, 1, 2, 3], [0, 1, 2, 3], [0, 2, 3]], 4)
    assert inferred.pairs == [(0, 1), (1, 2), (2, 3)]
    assert votes(inferred) == [(0, 1, 2, 2), (1, 2, 2, 2), (2, 3, 3, 3)]
    assert inferred.n_chains == 3
    assert inferred.against_chain == []
    assert inferred.contested == []
    assert Precedence.from_pairs(inferred.pairs, 4) == Precedence.chain(4)


def test_one_chain_stating_the_other_order_makes_two_steps_interchangeable():
    inferred = infer_precedence([[0, 1, 2], [0, 1, 2], [0, 1, 2], [1, 0, 2]], 3)
    assert inferred.pairs == [(0, 2), (1, 2)]
    assert votes(inferred) == [(0, 2, 4, 4), (1, 2, 4, 4)]
    assert Precedence.from_pairs(inferred.pairs, 3).interchangeable() == [(0, 1)]


def test_a_share_below_one_tolerates_a_minority():
    chains = [[0, 1, 2], [0, 1, 2], [0, 1, 2], [1, 0, 2]]
    inferred = infer_precedence(chains, 3, share=0.75)
    assert inferred.pairs == [(0, 1), (1, 2)]
    assert votes(inferred) == [(0, 1, 3, 4), (1, 2, 4, 4)]
    assert infer_precedence(chains, 3, share=0.8).pairs == [(0, 2), (1, 2)]
    # Two against two is never an edge, whatever the share.
    assert infer_precedence([[0, 1], [0, 1], [1, 0], [1, 0]], 2, share=0.51).pairs == []


def test_min_chains_asks_for_more_witnesses():
    chains = [[0, 1, 2], [0, 2]]  # steps 0 and 1 meet in one chain only
    assert infer_precedence(chains, 3).pairs == [(0, 1), (1, 2)]
    assert infer_precedence(chains, 3, min_chains=2).pairs == [(0, 2)]


def test_steps_that_never_meet_get_no_edge_of_their_own():
    """Two paths to the answer (1 and 2 never in one chain): they are interchangeable."""
    inferred = infer_precedence([[0, 1, 3], [0, 2, 3]], 4)
    assert inferred.pairs == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert Precedence.from_pairs(inferred.pairs, 4).interchangeable() == [(1, 2)]


def test_an_order_agreed_against_the_consensus_order_is_reported_not_stored():
    inferred = infer_precedence([[0, 2, 1], [0, 2, 1]], 3)
    assert inferred.pairs == [(0, 1), (0, 2)]
    assert inferred.against_chain == [PrecedenceVotes(before=2, after=1, agree=2, both=2)]
    check_precedence(inferred.pairs, 3)


def test_an_edge_implying_a_disputed_order_is_contested():
    """0 -> 1 (chain X) and 1 -> 2 (chain Y) would imply 0 -> 2, which chain Z contradicts."""
    inferred = infer_precedence([[0, 1], [1, 2], [2, 0]], 3)
    assert inferred.pairs == [(0, 1)]
    assert inferred.contested == [PrecedenceVotes(before=1, after=2, agree=1, both=1)]
    assert inferred.against_chain == [PrecedenceVotes(before=2, after=0, agree=1, both=1)]


def test_stronger_edges_are_placed_first():
    """Same conflict, but 1 -> 2 has two witnesses: it wins over 0 -> 1."""
    inferred = infer_precedence([[0, 1], [1, 2], [1, 2], [2, 0]], 3)
    assert inferred.pairs == [(1, 2)]
    assert inferred.contested == [PrecedenceVotes(before=0, after=1, agree=1, both=1)]


def test_first_occurrence_counts_and_outside_steps_are_ignored():
    # chain 0 states step 0 again at the end; None marks a step of a dropped cluster
    inferred = infer_precedence([[0, None, 1, 0], [None, 0, 1]], 2)
    assert votes(inferred) == [(0, 1, 2, 2)]


def test_edges_from_a_step():
    inferred = infer_precedence([[0, 1, 2], [1, 0, 2]], 3)
    assert [(v.before, v.after) for v in inferred.edges_from(0)] == [(0, 2)]
    assert inferred.edges_from(2) == []


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="share must be in"):
        infer_precedence([[0, 1]], 2, share=0.5)
    with pytest.raises(ValueError, match="min_chains"):
        infer_precedence([[0, 1]], 2, min_chains=0)
    with pytest.raises(ValueError, match="names consensus step 2"):
        infer_precedence([[0, 2]], 2)


def test_no_chains_no_edges():
    inferred = infer_precedence([], 3)
    assert inferred.pairs == []
    assert inferred.n_chains == 0


# ----------------------------------------------------------------------------- from a consensus


def test_from_candidate_chains_to_an_order_score():
    """End to end: four generators, two of them read the bars the other way round; the
    consensus gets a precedence under which a model reading B first keeps its order."""
    a, b = "The bar for May is 40.", "The bar for June is 55."
    diff, answer = "June minus May is 15.", "So the answer is 15."
    chains = [
        CandidateChain("m1", 1, (a, b, diff, answer), key="m1"),
        CandidateChain("m2", 2, (b, a, diff, answer), key="m2"),
        CandidateChain("m3", 3, (a, b, diff, answer), key="m3"),
        CandidateChain("m4", 4, (b, a, diff), key="m4"),
    ]
    consensus = build_consensus(chains, HashEncoder(), theta=0.99)
    sequences = step_sequences(consensus)
    assert len(sequences) == 4
    inferred = infer_precedence(sequences, len(consensus.steps))
    steps = consensus.steps
    first, second = sorted([steps.index(a), steps.index(b)])
    assert inferred.pairs == [(first, 2), (second, 2), (2, 3)]
    assert steps[2:] == [diff, answer]
    precedence = Precedence.from_pairs(inferred.pairs, len(steps))
    swapped = [(0, second), (1, first), (2, 2), (3, 3)]
    assert order_fields(swapped).lis == 0.75
    assert order_fields(swapped, precedence).lis == 1.0


# ----------------------------------------------------------------------------- properties


@st.composite
def chain_sets(draw):
    n = draw(st.integers(0, 7))
    chain = st.lists(st.integers(0, n - 1), max_size=8, unique=True) if n else st.just([])
    return n, draw(st.lists(chain, max_size=6))


def pair_votes(sequences, a, b):
    ahead = held = 0
    for sequence in sequences:
        if a in sequence and b in sequence:
            held += 1
            ahead += sequence.index(a) < sequence.index(b)
    return ahead, held


@settings(max_examples=200, deadline=None)
@given(chain_sets(), st.sampled_from([1.0, 0.75, 0.6]), st.sampled_from([1, 2]))
def test_inferred_precedence_is_valid_agreed_and_maximal(case, share, min_chains):
    n, sequences = case
    inferred = infer_precedence(sequences, n, share=share, min_chains=min_chains)
    assert check_precedence(inferred.pairs, n) == inferred.pairs  # acyclic, forward, sorted
    closure = set(transitive_closure(inferred.pairs, n))

    def admissible(a, b):
        ahead, held = pair_votes(sequences, a, b)
        return held == 0 or ahead >= share * held - 1e-9

    assert all(admissible(a, b) for a, b in closure)  # never an order the chains dispute
    for edge in inferred.edges:
        ahead, held = pair_votes(sequences, edge.before, edge.after)
        assert (edge.agree, edge.both) == (ahead, held)
        assert held >= min_chains
        assert ahead >= share * held - 1e-9
    # Maximal: any agreed pair not implied yet would bring in a disputed order.
    for a in range(n):
        for b in range(a + 1, n):
            ahead, held = pair_votes(sequences, a, b)
            if (a, b) in closure or held < min_chains or not admissible(a, b):
                continue
            extended = set(transitive_closure([*inferred.pairs, (a, b)], n))
            assert not all(admissible(x, y) for x, y in extended)
    # Independent of the order the chains come in.
    assert infer_precedence(sequences[::-1], n, share=share, min_chains=min_chains) == inferred


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 5))
def test_chains_that_all_follow_the_consensus_give_its_own_order(n, copies):
    inferred = infer_precedence([list(range(n))] * copies, n)
    assert Precedence.from_pairs(inferred.pairs, n) == Precedence.chain(n)
