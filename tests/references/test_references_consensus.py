"""Golden consensus cases with hand-made embeddings, and properties of the consensus rule."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.encoders import OneHotEncoder
from crystalbench.references import CandidateChain, build_consensus, consensus_from_embeddings
from crystalbench.references.ordering import (
    id_sequence,
    levenshtein,
    match_previous,
    stabilised_order,
)


def unit(angle_degrees: float) -> list[float]:
    """A 2-d unit vector at this angle (cosines between them are cos of the differences)."""
    radians = math.radians(angle_degrees)
    return [math.cos(radians), math.sin(radians)]


def test_components_chain_through_a_middle_member():
    # A~B (cos 0.94), B~C (0.94), A and C far apart (0.77 < 0.9): one cluster through B.
    table = {"A": unit(0), "B": unit(20), "C": unit(40), "D": unit(90)}
    chains = [
        CandidateChain("m1", 1, ("A", "D")),
        CandidateChain("m2", 2, ("B",)),
        CandidateChain("m3", 3, ("C",)),
    ]
    chain = build_consensus(chains, OneHotEncoder(table), theta=0.9)
    assert chain.n_clusters == 2
    big = chain.provenance[0]
    assert sorted(m.text for m in big.members) == ["A", "B", "C"]
    # B is closest on average to A and C: the medoid, even though A and C are not linked.
    assert big.medoid.text == "B"
    assert big.support == 3
    assert big.models == ["m1", "m2", "m3"]
    assert chain.steps == ["B", "D"]
    assert chain.provenance[1].support == 1
    assert chain.provenance[1].members[0].model == "m1"


def test_threshold_is_inclusive():
    vectors = [np.array([[1.0, 0.0]]), np.array([[0.6, 0.8]])]
    chains = [CandidateChain("a", 1, ("x",)), CandidateChain("b", 2, ("y",))]
    at = consensus_from_embeddings(chains, vectors, theta=0.6)
    above = consensus_from_embeddings(chains, vectors, theta=np.nextafter(0.6, 1.0))
    assert at.n_clusters == 1
    assert above.n_clusters == 2


def test_medoid_tie_is_broken_by_the_canonical_order_not_arrival():
    # Two members with the same mean similarity: the one of the first chain in canonical
    # order (model name "alpha" < "beta") wins, whichever chain arrives first.
    table = {"left": unit(0), "right": unit(10)}
    a = CandidateChain("beta", 7, ("right",))
    b = CandidateChain("alpha", 9, ("left",))
    for chains in ([a, b], [b, a]):
        chain = build_consensus(chains, OneHotEncoder(table), theta=0.5)
        assert chain.steps == ["left"]
        assert chain.provenance[0].medoid.model == "alpha"
        assert [m.model for m in chain.provenance[0].members] == ["alpha", "beta"]


def test_three_way_symmetric_tie_takes_the_lowest_canonical_index():
    table = {"p": unit(0), "q": unit(120), "r": unit(240)}  # all pairwise cos = -0.5
    chains = [
        CandidateChain("m3", 1, ("r",)),
        CandidateChain("m1", 1, ("p",)),
        CandidateChain("m2", 1, ("q",)),
    ]
    chain = build_consensus(chains, OneHotEncoder(table), theta=-0.6)
    assert chain.n_clusters == 1
    assert chain.steps == ["p"]


def test_first_round_order_is_the_mean_relative_position():
    # X is first in both chains; Y is 2nd of 2 in m1 (0.75) and 3rd of 3 in m2 (0.833);
    # Z only in m2 at position 2 of 3 (0.5).
    table = {"X1": unit(0), "X2": unit(2), "Y1": unit(60), "Y2": unit(62), "Z": unit(120)}
    chains = [
        CandidateChain("m1", 1, ("X1", "Y1")),
        CandidateChain("m2", 2, ("X2", "Z", "Y2")),
    ]
    chain = build_consensus(chains, OneHotEncoder(table), theta=0.99)
    assert chain.order_rule == "position"
    assert chain.steps == ["X1", "Z", "Y1"]
    positions = [round(p.mean_position, 4) for p in chain.provenance]
    assert positions == [round((0.25 + 1 / 6) / 2, 4), 0.5, round((0.75 + 2.5 / 3) / 2, 4)]


def test_equal_positions_put_the_better_supported_cluster_first():
    table = {"a": unit(0), "b": unit(90), "b2": unit(91)}
    chains = [
        CandidateChain("m1", 1, ("a",)),
        CandidateChain("m2", 1, ("b",)),
        CandidateChain("m3", 1, ("b2",)),
    ]
    chain = build_consensus(chains, OneHotEncoder(table), theta=0.99)
    assert chain.steps == ["b", "a"]  # both at 0.5; b has support 2


def test_later_round_keeps_the_previous_order():
    # Previous chain: P0 P1 P2. The new candidates restate them in the order P2, P0, P1
    # (their positions alone would give that order) plus a new step N near the end.
    table = {
        "P0": unit(0), "P1": unit(40), "P2": unit(80),
        "n0": unit(1), "n1": unit(41), "n2": unit(81), "N": unit(160),
    }  # fmt: skip
    chains = [
        CandidateChain("m1", 11, ("n2", "n0", "n1", "N")),
        CandidateChain("m2", 12, ("n2", "n0", "n1", "N")),
    ]
    encoder = OneHotEncoder(table)
    first = build_consensus(chains, encoder, theta=0.99)
    assert first.steps == ["n2", "n0", "n1", "N"]
    later = build_consensus(chains, encoder, theta=0.99, previous=["P0", "P1", "P2"])
    assert later.order_rule == "stabilised"
    assert later.steps == ["n0", "n1", "n2", "N"]
    assert [p.previous_index for p in later.provenance] == [0, 1, 2, None]
    assert later.edit_distance == 1  # one insertion


def test_stabilised_new_cluster_fills_a_gap_left_by_a_dropped_step():
    # Previous: P0 P1 P2; P1 has no counterpart now; the new step sits between P0 and P2.
    table = {"P0": unit(0), "P1": unit(45), "P2": unit(90), "a": unit(0.5), "c": unit(90.5),
             "new": unit(200)}  # fmt: skip
    chains = [CandidateChain("m", 1, ("a", "new", "c")), CandidateChain("k", 2, ("a", "c"))]
    later = build_consensus(chains, OneHotEncoder(table), theta=0.99, previous=["P0", "P1", "P2"])
    assert later.steps == ["a", "new", "c"]
    assert later.edit_distance == 1  # one substitution


def test_min_support_drops_and_records_clusters():
    table = {"a": unit(0), "a2": unit(1), "solo": unit(90)}
    chains = [CandidateChain("m1", 1, ("a", "solo")), CandidateChain("m2", 2, ("a2",))]
    chain = build_consensus(chains, OneHotEncoder(table), theta=0.99, min_support=2)
    assert chain.steps == ["a"]
    assert [d.medoid.text for d in chain.dropped] == ["solo"]
    assert chain.n_clusters == 2


def test_empty_chains_are_ignored_and_all_empty_gives_nothing():
    table = {"a": unit(0)}
    chains = [CandidateChain("m1", 1, ()), CandidateChain("m2", 2, ("a",))]
    chain = build_consensus(chains, OneHotEncoder(table), theta=0.5)
    assert chain.steps == ["a"]
    assert chain.n_chains == 1
    assert build_consensus([CandidateChain("m", 1, ())], OneHotEncoder(table)).steps == []


def test_mismatched_embeddings_raise():
    with pytest.raises(ValueError, match="embeddings"):
        consensus_from_embeddings(
            [CandidateChain("a", 1, ("x", "y"))], [np.zeros((1, 2))], theta=0.5
        )


def test_match_previous_refuses_pairs_below_theta():
    sim = np.array([[0.95, 0.2], [0.3, 0.4]])
    assert match_previous(sim, 0.5) == {0: 0}
    assert match_previous(np.zeros((0, 3)), 0.5) == {}


# ------------------------------------------------------------------------- properties

_WORDS = ["red", "bar", "tall", "axis", "label", "two", "sum", "angle", "side", "blue"]
step_text = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join)
chains_strategy = st.lists(st.lists(step_text, min_size=1, max_size=5), min_size=1, max_size=4).map(
    lambda lists: [
        CandidateChain(model=f"m{i % 3}", seed=i, steps=tuple(steps), sample=i // 3)
        for i, steps in enumerate(lists)
    ]
)


def _embed(chains):
    from crystalbench.encoders import HashEncoder

    encoder = HashEncoder(dim=32)
    return [encoder.encode(list(c.steps)) for c in chains]


@settings(max_examples=60, deadline=None)
@given(chains=chains_strategy, theta=st.sampled_from([0.2, 0.5, 0.8]), data=st.data())
def test_result_does_not_depend_on_arrival_order(chains, theta, data):
    embeddings = _embed(chains)
    permutation = data.draw(st.permutations(range(len(chains))))
    base = consensus_from_embeddings(chains, embeddings, theta=theta)
    shuffled = consensus_from_embeddings(
        [chains[i] for i in permutation], [embeddings[i] for i in permutation], theta=theta
    )
    assert shuffled == base


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(step_text, min_size=1, max_size=8), theta=st.floats(-1.0, 1.0))
def test_one_chain_gives_itself_back(steps, theta):
    chain = CandidateChain("only", 3, tuple(steps))
    result = consensus_from_embeddings([chain], _embed([chain]), theta=theta)
    assert result.steps == steps
    assert all(p.support == 1 for p in result.provenance)
    assert [p.medoid.index for p in result.provenance] == list(range(len(steps)))


@settings(max_examples=60, deadline=None)
@given(chains=chains_strategy, theta=st.floats(-0.5, 1.0), min_support=st.integers(1, 3))
def test_every_output_step_is_a_real_candidate_step(chains, theta, min_support):
    result = consensus_from_embeddings(chains, _embed(chains), theta=theta, min_support=min_support)
    by_ref = {(c.model, c.seed, c.sample, i): s for c in chains for i, s in enumerate(c.steps)}
    for step, prov in zip(result.steps, result.provenance, strict=True):
        medoid = prov.medoid
        assert by_ref[(medoid.model, medoid.seed, medoid.sample, medoid.index)] == step
        assert medoid in prov.members
        assert prov.support >= min_support
        assert prov.support == len({(m.model, m.seed, m.sample) for m in prov.members})
    members = [m for p in (*result.provenance, *result.dropped) for m in p.members]
    assert len(members) == sum(len(c.steps) for c in chains) == result.n_candidate_steps


@settings(max_examples=80, deadline=None)
@given(
    n_previous=st.integers(0, 5),
    n_clusters=st.integers(1, 5),
    data=st.data(),
)
def test_stabilised_order_has_the_minimum_edit_distance_over_all_orders(
    n_previous, n_clusters, data
):
    k = data.draw(st.integers(0, min(n_previous, n_clusters)))
    clusters = data.draw(st.permutations(range(n_clusters)))[:k]
    columns = sorted(data.draw(st.permutations(range(n_previous)))[:k]) if k else []
    columns = data.draw(st.permutations(columns)) if columns else []
    matched = dict(zip(clusters, columns, strict=True))
    keys = data.draw(st.lists(st.floats(0, 1), min_size=n_clusters, max_size=n_clusters))
    result = stabilised_order(n_previous, matched, keys, list(range(n_clusters)))
    assert sorted(result.order) == list(range(n_clusters))
    target = list(range(n_previous))
    got = levenshtein(id_sequence(result.order, matched, n_previous), target)
    best = min(
        levenshtein(id_sequence(list(order), matched, n_previous), target)
        for order in itertools.permutations(range(n_clusters))
    )
    assert got == best == result.edit_distance == max(n_previous, n_clusters) - k


@given(a=st.lists(st.integers(0, 3), max_size=6), b=st.lists(st.integers(0, 3), max_size=6))
def test_levenshtein_is_symmetric_and_bounded(a, b):
    assert levenshtein(a, b) == levenshtein(b, a)
    assert abs(len(a) - len(b)) <= levenshtein(a, b) <= max(len(a), len(b))
    assert (levenshtein(a, b) == 0) == (a == b)
