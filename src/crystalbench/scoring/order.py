"""Order metrics of matched steps: LIS and Kendall, against the chain or a precedence.

Pure maths on the matches of one item (``(pred_index, ref_index[, cosine])`` tuples, one to
one) and, optionally, a :class:`~crystalbench.precedence.Precedence` on the reference steps.
Without one (``None``), the reference chain's own order is the precedence and every number is
the paper's (``docs/metrics.md``, "Order").

**The generalisation.** Two matches ``x = (i1, j1)`` and ``y = (i2, j2)`` are *ordered
against* the precedence when ``j1`` must come before ``j2`` but the prediction states them the
other way round (``i1 > i2``; ``i1 == i2`` cannot happen, matching is one to one). Write
``x < y`` for that. It is a strict partial order on the matches (the *conflict order*): it is
the intersection of two strict partial orders, the precedence read on reference indices and
the reversed order of prediction indices, so it is irreflexive and transitive
(``j1 < j2 < j3`` and ``i1 > i2 > i3`` give ``j1 < j3`` and ``i1 > i3``). A set of matches
with no two ordered against the precedence is an *antichain* of the conflict order, so:

- **LIS** = (size of a maximum antichain) / (number of matches), 1.0 below two matches. With
  the chain's own order the antichains are exactly the increasing subsequences of the
  prediction indices read in reference order: the paper's LIS.
- **Kendall** = ``(tau + 1) / 2`` over the pairs of matches the precedence orders,
  ``tau = (concordant - discordant) / (concordant + discordant)``; 1.0 when it orders none.
- **out of order**: the matches outside one maximum antichain, in reference order. Among
  several maximum antichains the one kept is the one whose reference indices, read from the
  highest down, are lexicographically largest: exactly the longest increasing subsequence
  :func:`longest_increasing_subsequence` picks (the one ending on the smallest values), so
  the chain's own order reproduces today's ``out_of_order`` too.

**The algorithm (exact).** By Dilworth's theorem the largest antichain of a poset of ``k``
elements has ``k - v`` elements, where ``v`` is a maximum matching of the bipartite graph with
an edge ``x -> y`` for every ``x < y`` (Fulkerson's proof, through König's theorem; the
conflict order is transitive, so chains of the cover need no shortcuts). :func:`largest_
consistent_set` computes ``v`` with augmenting paths (Kuhn, ``O(k * e)`` for ``e`` conflicting
pairs, ``e <= k^2 / 2``) and picks the lexicographic antichain greedily: from the highest
reference index down, a match is kept when a maximum antichain still contains it with the ones
kept so far (the remaining poset, the matches incomparable to all kept, must still hold an
antichain of the missing size). A match comparable to none left is kept without a matching.
Worst case ``O(k^2 * e)``; chains are short (``k`` is the number of matched steps, at most a
few dozen). :func:`order_fields` takes the paper's ``O(k log k)`` path whenever the precedence
orders every two matched steps (always for ``None``), where both give the same numbers.

Examples:
    Steps 0 and 1 read two values off a chart, step 2 compares them. A model reads them the
    other way round:

    >>> from crystalbench.precedence import Precedence
    >>> matches = [(0, 1), (1, 0), (2, 2)]
    >>> order_fields(matches).lis, order_fields(matches).out_of_order
    (0.6666666666666666, [(1, 0)])
    >>> either = Precedence.from_pairs([[0, 2], [1, 2]], 3)
    >>> order_fields(matches, either)
    OrderFields(lis=1.0, kendall=1.0, out_of_order=[])
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import NamedTuple

from crystalbench.precedence import Precedence, set_bits

__all__ = [
    "MatchPair",
    "OrderFields",
    "conflict_pairs",
    "kendall_score",
    "largest_consistent_set",
    "longest_increasing_subsequence",
    "order_fields",
    "precedence_kendall",
]

MatchPair = tuple[int, int] | tuple[int, int, float]
"""A match: ``(pred_index, ref_index)``, optionally with its cosine (as ``greedy_pairs``)."""


class OrderFields(NamedTuple):
    """The order fields of one item (those of :class:`~crystalbench.types.ChainScore`)."""

    lis: float
    """Largest consistent share of the matches (the LIS ratio)."""
    kendall: float
    """``(tau + 1) / 2`` over the pairs the precedence orders."""
    out_of_order: list[tuple[int, int]]
    """``(pred_index, ref_index)`` of the matches outside the kept set, in reference order."""


def longest_increasing_subsequence(sequence: Sequence[int]) -> list[int]:
    """Positions (into ``sequence``) of one longest strictly increasing subsequence.

    Among several longest subsequences the one that ends on the smallest values is
    returned, which makes the choice deterministic.

    Examples:
        >>> longest_increasing_subsequence([3, 0, 1, 4, 2])
        [1, 2, 4]
        >>> longest_increasing_subsequence([])
        []
    """
    tails: list[int] = []  # tails[k]: smallest tail value of an increasing run of length k+1
    tail_pos: list[int] = []
    parent: list[int] = [-1] * len(sequence)
    for pos, value in enumerate(sequence):
        k = bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
            tail_pos.append(pos)
        else:
            tails[k] = value
            tail_pos[k] = pos
        parent[pos] = tail_pos[k - 1] if k > 0 else -1
    if not tail_pos:
        return []
    chain = []
    pos = tail_pos[-1]
    while pos != -1:
        chain.append(pos)
        pos = parent[pos]
    return chain[::-1]


def kendall_score(sequence: Sequence[int]) -> float:
    """Kendall tau of the sequence against sorted order, normalised to [0, 1].

    ``(tau + 1) / 2`` with ``tau = (concordant - discordant) / (k (k - 1) / 2)``;
    1.0 with fewer than two elements.

    Examples:
        >>> kendall_score([0, 1, 2])
        1.0
        >>> kendall_score([2, 1, 0])
        0.0
    """
    k = len(sequence)
    if k < 2:
        return 1.0
    seq = list(sequence)
    # Chains are short (k <= a few dozen): counting in Python beats numpy's overhead.
    balance = 0
    for pos, left in enumerate(seq):
        for right in seq[pos + 1 :]:
            if right > left:
                balance += 1
            elif right < left:
                balance -= 1
    tau = balance / (k * (k - 1) / 2)
    return (tau + 1.0) / 2.0


def _by_reference(matches: Sequence[MatchPair], precedence: Precedence) -> list[tuple[int, int]]:
    """``(pred, ref)`` pairs sorted by reference index, checked against the precedence."""
    pairs = sorted(((m[0], m[1]) for m in matches), key=lambda pair: pair[1])
    preds = {i for i, _ in pairs}
    refs = [j for _, j in pairs]
    if len(preds) != len(pairs) or len(set(refs)) != len(pairs):
        raise ValueError(f"matches must be one to one, got {pairs}")
    if refs and not 0 <= refs[0] <= refs[-1] < precedence.n_steps:
        raise ValueError(
            f"a match names reference step {refs[-1] if refs[-1] >= 0 else refs[0]}, but the "
            f"precedence covers steps 0..{precedence.n_steps - 1}"
        )
    return pairs


def _conflict_masks(pairs: Sequence[tuple[int, int]], precedence: Precedence) -> list[int]:
    """``above[x]``: bit ``y`` set when ``x < y`` in the conflict order (see the module)."""
    successors = precedence.successors
    above = [0] * len(pairs)
    for x, (ix, jx) in enumerate(pairs):
        must_follow = successors[jx]
        mask = 0
        for y, (iy, jy) in enumerate(pairs):
            if iy < ix and must_follow >> jy & 1:
                mask |= 1 << y
        above[x] = mask
    return above


def _augment(
    u: int, above: Sequence[int], alive: int, owner: dict[int, int], seen: list[int]
) -> bool:
    """Kuhn's augmenting path from left vertex ``u`` (depth at most ``k``)."""
    free = above[u] & alive & ~seen[0]
    while free:
        low = free & -free
        v = low.bit_length() - 1
        seen[0] |= low
        held = owner.get(v)
        if held is None or _augment(held, above, alive, owner, seen):
            owner[v] = u
            return True
        free &= ~seen[0]
    return False


def _antichain_size(above: Sequence[int], alive: int) -> int:
    """Largest antichain among the elements in ``alive`` (Dilworth: size - matching)."""
    owner: dict[int, int] = {}
    matched = 0
    rest = alive
    while rest:
        low = rest & -rest
        u = low.bit_length() - 1
        rest ^= low
        if above[u] & alive and _augment(u, above, alive, owner, [0]):
            matched += 1
    return alive.bit_count() - matched


def _lexicographic_antichain(above: Sequence[int]) -> int:
    """The maximum antichain kept (bitmask), highest positions preferred (module docstring)."""
    k = len(above)
    below = [0] * k
    for x, mask in enumerate(above):
        rest = mask
        while rest:
            low = rest & -rest
            below[low.bit_length() - 1] |= 1 << x
            rest ^= low
    comparable = [above[x] | below[x] for x in range(k)]
    alive = (1 << k) - 1
    missing = _antichain_size(above, alive)
    chosen = 0
    for x in range(k - 1, -1, -1):
        bit = 1 << x
        if not alive & bit:
            continue
        if not any(comparable[y] & alive for y in range(x + 1) if alive >> y & 1):
            return chosen | alive  # what is left is an antichain: keep it whole
        rest = alive & ~comparable[x] & ~bit
        # ``alive`` always holds an antichain of ``missing`` elements; x may join the kept
        # set when its incomparable remainder still holds one of ``missing - 1``.
        if not comparable[x] & alive or _antichain_size(above, rest) == missing - 1:
            chosen |= bit
            alive = rest
            missing -= 1
        else:
            alive &= ~bit
    return chosen


def largest_consistent_set(
    matches: Sequence[MatchPair], precedence: Precedence
) -> list[tuple[int, int]]:
    """One largest set of matches with no two ordered against the precedence (exact).

    Always the general algorithm of the module docstring (the reference implementation that
    :func:`order_fields` shortcuts when the precedence orders all matched steps).

    Args:
        matches: One-to-one ``(pred_index, ref_index[, cosine])`` tuples, any order.
        precedence: The precedence on the reference steps.

    Returns:
        ``(pred_index, ref_index)`` of the kept matches, in reference order.

    Raises:
        ValueError: The matches are not one to one, or name a step outside the precedence.

    Examples:
        >>> from crystalbench.precedence import Precedence
        >>> largest_consistent_set([(2, 0), (1, 1), (0, 2)], Precedence.chain(3))
        [(0, 2)]
        >>> largest_consistent_set([(2, 0), (1, 1), (0, 2)], Precedence.from_pairs([[0, 2]], 3))
        [(1, 1), (0, 2)]
    """
    pairs = _by_reference(matches, precedence)
    kept = _lexicographic_antichain(_conflict_masks(pairs, precedence))
    return [pair for x, pair in enumerate(pairs) if kept >> x & 1]


def conflict_pairs(
    matches: Sequence[MatchPair], precedence: Precedence
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every two matches ordered against the precedence, as ``(x, y)``: ``x``'s reference
    step must come first, yet ``x``'s prediction comes later. Sorted by reference index.

    Examples:
        >>> from crystalbench.precedence import Precedence
        >>> conflict_pairs([(1, 0), (0, 1), (2, 2)], Precedence.chain(3))
        [((1, 0), (0, 1))]
    """
    pairs = _by_reference(matches, precedence)
    above = _conflict_masks(pairs, precedence)
    return [(pairs[x], pairs[y]) for x in range(len(pairs)) for y in set_bits(above[x])]


def precedence_kendall(matches: Sequence[MatchPair], precedence: Precedence) -> float:
    """Kendall over the pairs of matches the precedence orders, normalised to [0, 1].

    ``(tau + 1) / 2`` with ``tau = (concordant - discordant) / (concordant + discordant)``;
    1.0 when the precedence orders no two matched steps (or with fewer than two matches).
    With the chain's own order it equals :func:`kendall_score` of the sequence, bit for bit.

    Examples:
        >>> from crystalbench.precedence import Precedence
        >>> precedence_kendall([(1, 0), (0, 1), (2, 2)], Precedence.chain(3))
        0.6666666666666666
        >>> precedence_kendall([(1, 0), (0, 1), (2, 2)], Precedence.from_pairs([[0, 2]], 3))
        1.0
    """
    pairs = _by_reference(matches, precedence)
    successors = precedence.successors
    balance = 0
    ordered = 0
    for x, (ix, jx) in enumerate(pairs):
        for iy, jy in pairs[x + 1 :]:
            if successors[jx] >> jy & 1:
                ordered += 1
                balance += 1 if ix < iy else -1
            elif successors[jy] >> jx & 1:
                ordered += 1
                balance += 1 if iy < ix else -1
    if ordered == 0:
        return 1.0
    # The same float operations as kendall_score: equal bit for bit on a total order.
    tau = balance / ordered
    return (tau + 1.0) / 2.0


def order_fields(matches: Sequence[MatchPair], precedence: Precedence | None = None) -> OrderFields:
    """LIS ratio, Kendall and the out-of-order matches of one item.

    What :func:`crystalbench.scoring.matching.chain_fields` needs: with ``precedence=None`` (the
    chain's own order) it is the paper's computation, unchanged; with a precedence, the
    generalisation of the module docstring. Whenever the precedence orders every two matched
    reference steps, the paper's ``O(k log k)`` path gives the same numbers and is taken.

    Args:
        matches: One-to-one ``(pred_index, ref_index[, cosine])`` tuples, any order.
        precedence: The reference steps' precedence, or ``None`` for the chain's own order.

    Returns:
        :class:`OrderFields` (1.0, 1.0 and no out-of-order match below two matches).

    Raises:
        ValueError: (with a precedence) the matches are not one to one, or name a step
            outside it.

    Examples:
        >>> order_fields([(2, 0, 0.9), (1, 1, 0.8), (0, 2, 0.7)])
        OrderFields(lis=0.3333333333333333, kendall=0.0, out_of_order=[(2, 0), (1, 1)])
        >>> order_fields([(0, 0)])
        OrderFields(lis=1.0, kendall=1.0, out_of_order=[])
    """
    if len(matches) < 2:
        return OrderFields(1.0, 1.0, [])
    if precedence is None:
        by_ref = sorted(((m[0], m[1]) for m in matches), key=lambda pair: pair[1])
    else:
        by_ref = _by_reference(matches, precedence)
    if precedence is None or precedence.is_total_on([j for _, j in by_ref]):
        sequence = [i for i, _ in by_ref]
        keep = set(longest_increasing_subsequence(sequence))
        out_of_order = [pair for k, pair in enumerate(by_ref) if k not in keep]
        return OrderFields(len(keep) / len(sequence), kendall_score(sequence), out_of_order)
    kept = _lexicographic_antichain(_conflict_masks(by_ref, precedence))
    out_of_order = [pair for x, pair in enumerate(by_ref) if not kept >> x & 1]
    return OrderFields(
        kept.bit_count() / len(by_ref), precedence_kendall(by_ref, precedence), out_of_order
    )
