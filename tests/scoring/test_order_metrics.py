"""Order metrics against a precedence: worked examples, parity with the paper's order metrics
on the chain's own order, and properties checked against an exhaustive search."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.precedence import Precedence
from crystalbench.scoring.matching import (
    chain_fields,
    kendall_score,
    lis_ratio,
    longest_increasing_subsequence,
    ordered_f1,
    precision_recall_f1,
)
from crystalbench.scoring.order import (
    OrderFields,
    conflict_pairs,
    largest_consistent_set,
    order_fields,
    precedence_kendall,
)

# ----------------------------------------------------------------------------- strategies


@st.composite
def matchings(draw, max_steps=12):
    """``(n_pred, n_ref, matches)``: a random one-to-one matching, in a random order."""
    n_pred = draw(st.integers(0, max_steps))
    n_ref = draw(st.integers(0, max_steps))
    k = draw(st.integers(0, min(n_pred, n_ref)))
    preds = draw(st.permutations(range(n_pred)))[:k]
    refs = draw(st.permutations(range(n_ref)))[:k]
    return n_pred, n_ref, list(zip(preds, refs, strict=True))


@st.composite
def forward_precedences(draw, n_steps):
    """A random precedence on ``n_steps`` steps: each forward pair drawn with one density."""
    density = draw(st.sampled_from([0.0, 0.15, 0.4, 0.8, 1.0]))
    flips = draw(
        st.lists(
            st.floats(0, 1, exclude_max=True),
            min_size=n_steps * (n_steps - 1) // 2,
            max_size=n_steps * (n_steps - 1) // 2,
        )
    )
    forward = [(a, b) for a in range(n_steps) for b in range(a + 1, n_steps)]
    return Precedence.from_pairs(
        [pair for pair, u in zip(forward, flips, strict=True) if u < density], n_steps
    )


@st.composite
def matched_with_precedence(draw, max_steps=9):
    n_pred, n_ref, matches = draw(matchings(max_steps))
    return n_pred, n_ref, matches, draw(forward_precedences(n_ref))


def one_hot(n_pred, n_ref, matches):
    """A similarity matrix whose greedy matching is exactly ``matches``."""
    sim = np.zeros((n_pred, n_ref), dtype=np.float32)
    for i, j, *_ in matches:
        sim[i, j] = 1.0
    return sim


def brute_force(matches, precedence):
    """Every largest consistent set, by exhaustive search (the oracle for small cases)."""
    pairs = sorted(((i, j) for i, j, *_ in matches), key=lambda p: p[1])

    def consistent(subset):
        return not any(
            (precedence.precedes(ja, jb) and ia > ib) or (precedence.precedes(jb, ja) and ib > ia)
            for (ia, ja), (ib, jb) in combinations(subset, 2)
        )

    for size in range(len(pairs), 0, -1):
        found = [list(s) for s in combinations(pairs, size) if consistent(s)]
        if found:
            return found
    return [[]]


# ----------------------------------------------------------------------------- worked examples


def test_interchangeable_chart_readings_keep_full_order_with_the_precedence():
    """A chart item: read bar A (0), read bar B (1), compare (2), answer (3). Steps 0 and 1 are
    independent. A model that reads B first loses LIS without the precedence, not with it."""
    swapped = [(0, 1, 0.9), (1, 0, 0.9), (2, 2, 0.8), (3, 3, 0.8)]
    either = Precedence.from_pairs([[0, 2], [1, 2], [2, 3]], 4)
    paper = order_fields(swapped)
    assert paper.lis == 0.75
    assert paper.out_of_order == [(1, 0)]
    assert paper.kendall == pytest.approx(5 / 6)  # one discordant pair of six: tau 2/3
    assert order_fields(swapped, either) == OrderFields(1.0, 1.0, [])
    # The comparison itself must still follow both readings: stating it first is penalised.
    early = [(2, 0), (3, 1), (0, 2), (4, 3)]
    scored = order_fields(early, either)
    assert scored.lis == 0.75
    assert scored.out_of_order == [(0, 2)]
    # Ordered pairs: 0<2, 1<2, 0<3, 1<3, 2<3 -> concordant 3, discordant 2 -> tau 0.2.
    assert scored.kendall == pytest.approx(0.6)


def test_ordered_f1_follows_the_precedence():
    swapped = [(0, 1), (1, 0), (2, 2), (3, 3)]
    either = Precedence.from_pairs([[0, 2], [1, 2], [2, 3]], 4)
    f1 = precision_recall_f1(4, 4, 4)[2]
    assert ordered_f1(f1, order_fields(swapped).lis) == pytest.approx(0.925)
    assert ordered_f1(f1, order_fields(swapped, either).lis) == 1.0


def test_kendall_counts_only_ordered_pairs():
    """Steps 1 and 2 interchangeable; the only ordered pairs involve step 0 and step 3."""
    precedence = Precedence.from_pairs([[0, 1], [0, 2], [1, 3], [2, 3]], 4)
    matches = [(0, 0), (2, 1), (1, 2), (3, 3)]
    assert precedence_kendall(matches, precedence) == 1.0
    backwards = [(3, 0), (1, 1), (2, 2), (0, 3)]
    # Ordered pairs (0,1) (0,2) (0,3) (1,3) (2,3): all discordant.
    assert precedence_kendall(backwards, precedence) == 0.0


def test_conflict_order_is_not_a_total_order_and_greedy_by_length_is_not_enough():
    """Conflicts 0-3, 1-3, 2-3 only (3 must follow the others; the model states it first):
    dropping the single match 3 keeps three matches."""
    precedence = Precedence.from_pairs([[0, 3], [1, 3], [2, 3]], 4)
    matches = [(1, 0), (2, 1), (3, 2), (0, 3)]
    assert conflict_pairs(matches, precedence) == [
        ((1, 0), (0, 3)),
        ((2, 1), (0, 3)),
        ((3, 2), (0, 3)),
    ]
    assert largest_consistent_set(matches, precedence) == [(1, 0), (2, 1), (3, 2)]
    assert order_fields(matches, precedence).out_of_order == [(0, 3)]


def test_tie_break_keeps_the_higher_reference_steps():
    """Two maximum consistent sets; the one with the higher reference steps is kept, as the
    paper's LIS keeps the subsequence ending on the smallest values."""
    matches = [(1, 0), (0, 1)]
    assert order_fields(matches).out_of_order == [(1, 0)]
    assert largest_consistent_set(matches, Precedence.chain(2)) == [(0, 1)]


def test_empty_precedence_orders_nothing():
    matches = [(3, 0), (2, 1), (1, 2), (0, 3)]
    assert order_fields(matches, Precedence.from_pairs([], 4)) == OrderFields(1.0, 1.0, [])
    assert order_fields(matches) == OrderFields(0.25, 0.0, [(3, 0), (2, 1), (1, 2)])


def test_fewer_than_two_matches_is_order_one():
    precedence = Precedence.chain(3)
    assert order_fields([], precedence) == OrderFields(1.0, 1.0, [])
    assert order_fields([(2, 1, 0.5)], precedence) == OrderFields(1.0, 1.0, [])


def test_bad_matches_are_refused():
    with pytest.raises(ValueError, match="one to one"):
        order_fields([(0, 0), (0, 1)], Precedence.chain(2))
    with pytest.raises(ValueError, match=r"covers steps 0\.\.1"):
        order_fields([(0, 0), (1, 5)], Precedence.chain(2))


# ----------------------------------------------------------------------------- parity


@settings(max_examples=500, deadline=None)
@given(matchings())
def test_chain_order_equals_the_paper_exactly(case):
    """With the chain's own order as the precedence, every number is the paper's, bit for bit:
    the fast path (None, and a total precedence) and the general algorithm alike."""
    n_pred, n_ref, matches = case
    today = chain_fields(one_hot(n_pred, n_ref, matches))
    chain = Precedence.chain(n_ref)
    sequence = [i for i, j in sorted(matches, key=lambda m: m[1])]
    expected = OrderFields(today["lis"], today["kendall"], today["out_of_order"])
    assert order_fields(matches) == expected
    assert order_fields(matches, chain) == expected
    if len(matches) >= 2:
        kept = largest_consistent_set(matches, chain)
        positions = longest_increasing_subsequence(sequence)
        assert len(kept) / len(matches) == today["lis"] == lis_ratio(sequence)
        assert [i for i, _ in kept] == [sequence[p] for p in positions]
        assert precedence_kendall(matches, chain) == today["kendall"] == kendall_score(sequence)
        assert ordered_f1(today["f1"], len(kept) / len(matches)) == today["ordered_f1"]


@settings(max_examples=150, deadline=None)
@given(matched_with_precedence(max_steps=8))
def test_general_algorithm_is_exact_and_deterministic(case):
    """The kept set is consistent, as large as an exhaustive search finds, and the
    lexicographically highest of the largest (reference steps read from the top)."""
    _, _, matches, precedence = case
    kept = largest_consistent_set(matches, precedence)
    every_largest = brute_force(matches, precedence)
    assert len(kept) == len(every_largest[0])
    assert sorted(kept, key=lambda p: p[1]) in every_largest
    assert max(every_largest, key=lambda s: sorted((j for _, j in s), reverse=True)) == kept
    fields = order_fields(matches, precedence)
    if len(matches) >= 2:
        assert fields.lis == len(kept) / len(matches)
        assert sorted(fields.out_of_order + kept, key=lambda p: p[1]) == sorted(
            ((i, j) for i, j in matches), key=lambda p: p[1]
        )


@settings(max_examples=150, deadline=None)
@given(matched_with_precedence(), st.data())
def test_more_precedence_never_raises_lis(case, data):
    """Adding pairs only adds conflicts: the largest consistent set cannot grow."""
    _, n_ref, matches, precedence = case
    extra = data.draw(forward_precedences(n_ref))
    stronger = Precedence.from_pairs([*precedence.pairs, *extra.pairs], n_ref)
    weaker = order_fields(matches, precedence)
    assert order_fields(matches, stronger).lis <= weaker.lis
    assert order_fields(matches, Precedence.chain(n_ref)).lis <= weaker.lis
    assert weaker.lis <= order_fields(matches, Precedence.from_pairs([], n_ref)).lis == 1.0


def test_more_precedence_can_raise_kendall():
    """Kendall is a share of the ordered pairs, so it is not monotone: a new concordant pair
    raises it. (LIS and Ordered F1 with LIS are monotone; see the test above.)"""
    matches = [(1, 0), (0, 1), (2, 2)]
    weak = Precedence.from_pairs([[0, 1]], 3)
    strong = Precedence.from_pairs([[0, 1], [1, 2]], 3)
    assert precedence_kendall(matches, weak) == 0.0
    assert precedence_kendall(matches, strong) == pytest.approx(2 / 3)


@settings(max_examples=150, deadline=None)
@given(matched_with_precedence())
def test_bounds_and_invariance_to_how_the_precedence_is_written(case):
    _, n_ref, matches, precedence = case
    fields = order_fields(matches, precedence)
    assert 0.0 <= fields.kendall <= 1.0
    assert 1 / max(len(matches), 1) <= fields.lis <= 1.0
    same = [
        Precedence.from_pairs(precedence.reduction(), n_ref),
        Precedence.from_pairs(precedence.closure(), n_ref),
    ]
    for other in same:
        assert order_fields(list(reversed(matches)), other) == fields


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10).flatmap(forward_precedences), st.randoms(use_true_random=False))
def test_any_order_the_precedence_allows_scores_one(precedence, rng):
    """A prediction stating the reference steps in any linear extension of the precedence keeps
    every match; the reference against itself is one such order."""
    n = precedence.n_steps
    order: list[int] = []
    remaining = set(range(n))
    while remaining:  # a random topological order
        ready = sorted(
            s for s in remaining if not any(precedence.precedes(r, s) for r in remaining)
        )
        pick = rng.choice(ready)
        order.append(pick)
        remaining.discard(pick)
    matches = [(position, step) for position, step in enumerate(order)]
    assert order_fields(matches, precedence) == OrderFields(1.0, 1.0, [])
    assert order_fields([(j, j) for j in range(n)], precedence) == OrderFields(1.0, 1.0, [])


def test_longer_chains_stay_fast():
    """The exact search on 40 matches with a dense, non-total precedence stays well under a
    second (a guard against an exponential method)."""
    import random
    import time

    rng = random.Random(7)
    n = 40
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.3]
    precedence = Precedence.from_pairs(pairs, n)
    preds = list(range(n))
    rng.shuffle(preds)
    matches = list(zip(preds, range(n), strict=True))
    assert not precedence.is_total_on(list(range(n)))
    start = time.perf_counter()
    fields = order_fields(matches, precedence)
    elapsed = time.perf_counter() - start
    assert 0 < fields.lis < 1
    assert elapsed < 1.0
