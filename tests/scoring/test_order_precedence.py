"""Validating a reference precedence, and its closure and reduction."""

from __future__ import annotations

import pickle
from itertools import pairwise, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.precedence import (
    Precedence,
    PrecedenceError,
    check_precedence,
    find_cycle,
    transitive_closure,
    transitive_reduction,
)


def reaches(pairs, n):
    """Reachability by Floyd-Warshall: the oracle for the bitmask closure."""
    reach = [[False] * n for _ in range(n)]
    for a, b in pairs:
        reach[a][b] = True
    for k, a, b in product(range(n), repeat=3):
        if reach[a][k] and reach[k][b]:
            reach[a][b] = True
    return {(a, b) for a in range(n) for b in range(n) if reach[a][b]}


@st.composite
def dags(draw, max_steps=10):
    """Random acyclic pairs (forward edges), possibly with redundant and repeated pairs."""
    n = draw(st.integers(0, max_steps))
    forward = [(a, b) for a in range(n) for b in range(a + 1, n)]
    pairs = draw(st.lists(st.sampled_from(forward), max_size=25)) if forward else []
    return n, pairs


# ----------------------------------------------------------------------------- validation


def test_valid_precedence_is_sorted_and_deduplicated():
    assert check_precedence([[2, 3], (0, 1), [0, 1], [0, 3]], 4) == [(0, 1), (0, 3), (2, 3)]
    assert check_precedence([], 4) == []
    assert check_precedence(None, 4) is None


@pytest.mark.parametrize(
    ("pairs", "message", "position"),
    [
        ([[0, 1], [1, 4]], "pair 1 [1, 4]: step 4 is outside the chain (steps 0..3)", 1),
        ([[-1, 2]], "pair 0 [-1, 2]: step -1 is outside the chain", 0),
        ([[0, 1], [2, 2]], "pair 1 [2, 2]: a step cannot come before itself", 1),
        ([[0, 1], [1]], "pair 1 ([1]) is not two step indices", 1),
        ([[0, 1.5]], "pair 0 ([0, 1.5]) is not two step indices", 0),
        ([[True, 2]], "is not two step indices", 0),
        (["01"], "is not two step indices", 0),
        ([[0, 2], [3, 1]], "pair 1 [3, 1]: step 3 must come before step 1, but reference_steps", 1),
    ],
)
def test_bad_pairs_are_refused_naming_the_pair(pairs, message, position):
    with pytest.raises(PrecedenceError) as caught:
        check_precedence(pairs, 4)
    assert message in str(caught.value)
    assert caught.value.pair == position
    assert isinstance(caught.value, ValueError)  # pydantic validators wrap ValueError


def test_a_cycle_is_refused_and_named():
    with pytest.raises(PrecedenceError) as caught:
        check_precedence([[0, 1], [3, 1], [1, 2], [2, 3]], 4)
    assert caught.value.cycle == (1, 2, 3, 1)
    assert "cycle 1 -> 2 -> 3 -> 1" in str(caught.value)
    assert caught.value.pair is None


def test_two_step_cycle_is_named_before_the_backward_pair():
    with pytest.raises(PrecedenceError, match=r"cycle 0 -> 1 -> 0"):
        check_precedence([[0, 1], [1, 0]], 2)


def test_not_a_list_is_refused():
    with pytest.raises(PrecedenceError, match="expected a list of"):
        check_precedence("0,1", 2)  # type: ignore[arg-type]
    with pytest.raises(PrecedenceError, match="the chain has no steps"):
        check_precedence([[0, 1]], 0)


def test_error_pickles_with_its_attributes():
    with pytest.raises(PrecedenceError) as caught:
        check_precedence([[0, 1], [1, 0]], 2)
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert copy.cycle == (0, 1, 0)


def test_closure_functions_refuse_a_cycle():
    with pytest.raises(PrecedenceError, match="cycle 0 -> 1 -> 0"):
        transitive_closure([(0, 1), (1, 0)], 2)
    with pytest.raises(PrecedenceError):
        transitive_reduction([(2, 0), (0, 2)], 3)


# ----------------------------------------------------------------------------- structure


def test_worked_example_closure_reduction_interchangeable():
    p = Precedence.from_pairs([[0, 2], [1, 2], [2, 3], [0, 3]], 4)
    assert p.pairs == ((0, 2), (0, 3), (1, 2), (2, 3))
    assert p.closure() == [(0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert p.reduction() == [(0, 2), (1, 2), (2, 3)]
    assert p.interchangeable() == [(0, 1)]
    assert p.is_total_on([0, 2, 3])
    assert not p.is_total_on([0, 1, 3])


def test_chain_is_the_total_order():
    p = Precedence.chain(4)
    assert p == Precedence.from_pairs([[0, 1], [1, 2], [2, 3]], 4)
    assert p.interchangeable() == []
    assert p.closure() == [(a, b) for a in range(4) for b in range(a + 1, 4)]
    assert Precedence.chain(0).closure() == []


@settings(max_examples=200, deadline=None)
@given(dags())
def test_closure_and_reduction_against_floyd_warshall(case):
    n, pairs = case
    closure = set(transitive_closure(pairs, n))
    assert closure == reaches(pairs, n)
    reduction = transitive_reduction(pairs, n)
    assert set(reduction) <= set(pairs)
    assert reaches(reduction, n) == closure
    for edge in reduction:  # minimal: no pair of the reduction is implied by the others
        assert edge not in reaches([e for e in reduction if e != edge], n)
    p = Precedence.from_pairs(pairs, n)
    assert set(p.closure()) == closure
    assert p.reduction() == reduction
    assert find_cycle(pairs, n) is None
    for a, b in p.interchangeable():
        assert not p.precedes(a, b)
        assert not p.precedes(b, a)


@settings(max_examples=200, deadline=None)
@given(dags(max_steps=8), st.data())
def test_a_backward_pair_closing_a_path_is_named_as_a_cycle(case, data):
    n, pairs = case
    closure = transitive_closure(pairs, n)
    if not closure:
        return
    a, b = data.draw(st.sampled_from(closure))
    with pytest.raises(PrecedenceError) as caught:
        check_precedence([*pairs, [b, a]], n)
    cycle = caught.value.cycle
    assert cycle is not None
    assert cycle[0] == cycle[-1]
    every = {*pairs, (b, a)}
    assert all(step in every for step in pairwise(cycle))


def test_restricting_keeps_orders_implied_through_dropped_steps():
    """Blank reference steps are dropped before matching: the precedence follows the kept
    steps, renumbered, with the orders that passed through a dropped step."""
    p = Precedence.from_pairs([[0, 1], [1, 2], [2, 4], [0, 3]], 5)
    kept = p.restricted_to([0, 2, 3, 4])
    assert kept.n_steps == 4
    assert kept.closure() == [(0, 1), (0, 2), (0, 3), (1, 3)]
    assert kept.pairs == tuple(kept.reduction()) == ((0, 1), (0, 2), (1, 3))
    assert Precedence.chain(5).restricted_to([1, 3, 4]) == Precedence.chain(3)
    assert p.restricted_to([]).n_steps == 0
    with pytest.raises(ValueError, match="ascending"):
        p.restricted_to([2, 1])
    with pytest.raises(ValueError, match="below 5"):
        p.restricted_to([0, 5])


@settings(max_examples=100, deadline=None)
@given(dags(), st.data())
def test_restriction_is_the_induced_order(case, data):
    n, pairs = case
    p = Precedence.from_pairs(pairs, n)
    kept = sorted(data.draw(st.sets(st.integers(0, n - 1))) if n else [])
    sub = p.restricted_to(kept)
    expected = {(x, y) for x, a in enumerate(kept) for y, b in enumerate(kept) if p.precedes(a, b)}
    assert set(sub.closure()) == expected
    assert Precedence.from_pairs(sub.pairs, len(kept)) == sub
