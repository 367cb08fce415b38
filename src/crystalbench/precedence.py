"""Partial-order references: which reference steps must come before which.

An item may carry ``reference_precedence``: a list of ``[a, b]`` pairs of 0-based indices into
its ``reference_steps``, meaning step ``a`` must come before step ``b``. The transitive closure
is implied (``[0, 1]`` and ``[1, 2]`` order 0 before 2); two steps the closure does not order
are *interchangeable*. ``None`` (no field) means the chain's own order, a total order, as the
paper; an empty list means every step is interchangeable.

A precedence is refused when it cannot hold or does not fit its chain (each error says which
pair and why, for the loader to wrap with file, line and field):

- an entry that is not two integers, or an index outside the chain;
- a self-pair ``[a, a]`` (a step cannot come before itself);
- a cycle (named: ``1 -> 3 -> 1``): no order of the steps satisfies it;
- a pair ``[a, b]`` with ``a > b``: the reference chain itself must be an order its
  precedence allows (a *linear extension*), so that the reference scored against itself still
  gets order 1.0 and ``None`` stays the strongest precedence of a chain. Reorder the steps
  instead.

Pure functions of plain data; relations are held as bitmasks (``successors[a]`` has bit ``b``
set when ``a`` comes before ``b`` in the closure), since chains are short.

Examples:
    >>> p = Precedence.from_pairs([[0, 2], [1, 2], [2, 3], [0, 3]], 4)
    >>> p.reduction()
    [(0, 2), (1, 2), (2, 3)]
    >>> p.precedes(1, 3), p.precedes(0, 1), p.interchangeable()
    (True, False, [(0, 1)])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

__all__ = [
    "Precedence",
    "PrecedenceError",
    "check_precedence",
    "find_cycle",
    "transitive_closure",
    "transitive_reduction",
]


class PrecedenceError(ValueError):
    """A precedence that cannot hold or does not fit its chain.

    A ``ValueError``, so that a pydantic validator raising it becomes a validation error on
    the field (``reference_precedence``), which the benchmark loader reports with file and
    line.

    Attributes:
        pair: 0-based position in the given list of the pair at fault (``None`` for a cycle).
        cycle: The steps of a cycle, first step repeated at the end (``None`` otherwise).

    Examples:
        >>> str(PrecedenceError("step 7 is outside the chain", pair=2))
        'step 7 is outside the chain'
    """

    def __init__(
        self, message: str, *, pair: int | None = None, cycle: tuple[int, ...] | None = None
    ) -> None:
        super().__init__(message)
        self.pair = pair
        self.cycle = cycle

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments: rebuild through a helper so the error pickles (workers).
        return (_rebuild_precedence_error, (str(self), self.pair, self.cycle))


def _rebuild_precedence_error(
    message: str, pair: int | None, cycle: tuple[int, ...] | None
) -> PrecedenceError:
    return PrecedenceError(message, pair=pair, cycle=cycle)


def _as_pair(entry: Any, position: int) -> tuple[int, int]:
    """``entry`` as two ints, or an error naming the entry."""
    if (
        isinstance(entry, (str, bytes))
        or not isinstance(entry, Sequence)
        or len(entry) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in entry)
    ):
        raise PrecedenceError(
            f"pair {position} ({entry!r}) is not two step indices [a, b]", pair=position
        )
    return int(entry[0]), int(entry[1])


def _successor_lists(pairs: Iterable[tuple[int, int]], n_steps: int) -> list[list[int]]:
    successors: list[list[int]] = [[] for _ in range(n_steps)]
    for a, b in sorted(set(pairs)):
        successors[a].append(b)
    return successors


def find_cycle(pairs: Iterable[tuple[int, int]], n_steps: int) -> tuple[int, ...] | None:
    """One cycle of the directed graph ``pairs`` on steps ``0..n_steps-1``, or ``None``.

    The search starts from the lowest step and follows successors in ascending order, so the
    cycle reported is deterministic. The first step is repeated at the end.

    Examples:
        >>> find_cycle([(0, 1), (1, 2), (2, 1)], 3)
        (1, 2, 1)
        >>> find_cycle([(0, 1), (0, 2)], 3) is None
        True
    """
    successors = _successor_lists(pairs, n_steps)
    state = [0] * n_steps  # 0: unseen, 1: on the current path, 2: done
    for root in range(n_steps):
        if state[root]:
            continue
        path = [root]
        cursors = [0]
        state[root] = 1
        while path:
            node = path[-1]
            if cursors[-1] < len(successors[node]):
                nxt = successors[node][cursors[-1]]
                cursors[-1] += 1
                if state[nxt] == 1:
                    return (*path[path.index(nxt) :], nxt)
                if state[nxt] == 0:
                    state[nxt] = 1
                    path.append(nxt)
                    cursors.append(0)
            else:
                state[node] = 2
                path.pop()
                cursors.pop()
    return None


def check_precedence(
    precedence: Iterable[Any] | None, n_steps: int
) -> list[tuple[int, int]] | None:
    """Validate a precedence for a chain of ``n_steps`` and normalise it.

    The check a ``BenchmarkItem.reference_precedence`` validator calls. The normalised form
    is the pairs as ``(a, b)`` tuples, sorted, each once (the closure, and so every score,
    is unchanged; implied pairs are kept as given).

    Args:
        precedence: ``[a, b]`` pairs (step ``a`` before step ``b``), or ``None`` (the
            chain's own order; returned as ``None``).
        n_steps: Steps in the reference chain.

    Returns:
        The sorted, de-duplicated pairs, or ``None``.

    Raises:
        PrecedenceError: An entry that is not two ints, an index outside the chain, a
            self-pair, a cycle (named), or a pair against the chain's own order.

    Examples:
        >>> check_precedence([[1, 2], [0, 2], [1, 2]], 3)
        [(0, 2), (1, 2)]
        >>> check_precedence(None, 3) is None
        True
        >>> check_precedence([[0, 3]], 3)
        Traceback (most recent call last):
        ...
        crystalbench.precedence.PrecedenceError: pair 0 [0, 3]: step 3 is outside the chain (steps 0..2)
        >>> check_precedence([[0, 1], [1, 2], [2, 0]], 3)
        Traceback (most recent call last):
        ...
        crystalbench.precedence.PrecedenceError: the pairs form a cycle 0 -> 1 -> 2 -> 0: no order of the steps satisfies them
    """  # noqa: E501
    if precedence is None:
        return None
    if isinstance(precedence, (str, bytes)) or not isinstance(precedence, Iterable):
        raise PrecedenceError(f"expected a list of [a, b] pairs, got {precedence!r}")
    pairs = [_as_pair(entry, position) for position, entry in enumerate(precedence)]
    span = f"steps 0..{n_steps - 1}" if n_steps else "the chain has no steps"
    for position, (a, b) in enumerate(pairs):
        for step in (a, b):
            if not 0 <= step < n_steps:
                raise PrecedenceError(
                    f"pair {position} [{a}, {b}]: step {step} is outside the chain ({span})",
                    pair=position,
                )
        if a == b:
            raise PrecedenceError(
                f"pair {position} [{a}, {b}]: a step cannot come before itself", pair=position
            )
    cycle = find_cycle(pairs, n_steps)
    if cycle is not None:
        raise PrecedenceError(
            f"the pairs form a cycle {' -> '.join(map(str, cycle))}: no order of the steps "
            "satisfies them",
            cycle=cycle,
        )
    for position, (a, b) in enumerate(pairs):
        if a > b:
            raise PrecedenceError(
                f"pair {position} [{a}, {b}]: step {a} must come before step {b}, but "
                "reference_steps lists it after; list the steps in an order the precedence "
                "allows",
                pair=position,
            )
    return sorted(set(pairs))


def _closure_masks(pairs: Iterable[tuple[int, int]], n_steps: int) -> list[int]:
    """``masks[a]``: bit ``b`` set when ``a`` reaches ``b``.

    Raises:
        PrecedenceError: ``pairs`` has a cycle (named).
    """
    pairs = list(pairs)
    successors = _successor_lists(pairs, n_steps)
    indegree = [0] * n_steps
    for targets in successors:
        for b in targets:
            indegree[b] += 1
    order = [a for a in range(n_steps) if indegree[a] == 0]
    for node in order:  # Kahn's algorithm; ``order`` grows while it is read
        for b in successors[node]:
            indegree[b] -= 1
            if indegree[b] == 0:
                order.append(b)
    if len(order) < n_steps:
        cycle = find_cycle(pairs, n_steps)
        raise PrecedenceError(
            f"the pairs form a cycle {' -> '.join(map(str, cycle or ()))}", cycle=cycle
        )
    masks = [0] * n_steps
    for node in reversed(order):
        mask = 0
        for b in successors[node]:
            mask |= (1 << b) | masks[b]
        masks[node] = mask
    return masks


def _reduction_of(masks: Sequence[int]) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    for a, mask in enumerate(masks):
        implied = 0
        rest = mask
        while rest:
            low = rest & -rest
            implied |= masks[low.bit_length() - 1]
            rest ^= low
        direct = mask & ~implied
        pairs.extend((a, b) for b in set_bits(direct))
    return pairs


def set_bits(mask: int) -> list[int]:
    """Positions of the set bits of ``mask``, ascending.

    Examples:
        >>> set_bits(0b1010)
        [1, 3]
    """
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def transitive_closure(pairs: Iterable[tuple[int, int]], n_steps: int) -> list[tuple[int, int]]:
    """Every pair the precedence implies, sorted.

    Raises:
        PrecedenceError: ``pairs`` has a cycle.

    Examples:
        >>> transitive_closure([(0, 1), (1, 2)], 3)
        [(0, 1), (0, 2), (1, 2)]
    """
    masks = _closure_masks(pairs, n_steps)
    return [(a, b) for a, mask in enumerate(masks) for b in set_bits(mask)]


def transitive_reduction(pairs: Iterable[tuple[int, int]], n_steps: int) -> list[tuple[int, int]]:
    """The fewest pairs with the same closure, sorted (unique for an acyclic relation).

    Raises:
        PrecedenceError: ``pairs`` has a cycle.

    Examples:
        >>> transitive_reduction([(0, 1), (1, 2), (0, 2)], 3)
        [(0, 1), (1, 2)]
    """
    return _reduction_of(_closure_masks(pairs, n_steps))


@dataclass(frozen=True)
class Precedence:
    """A validated precedence of one reference chain, with its closure as bitmasks.

    Build it once per item (:meth:`from_pairs` or :meth:`chain`) and pass it to the order
    metrics (:func:`crystalbench.scoring.order.order_fields`).

    Attributes:
        n_steps: Steps in the reference chain.
        pairs: The normalised pairs (:func:`check_precedence`).
        successors: ``successors[a]`` has bit ``b`` set when ``a`` must come before ``b``
            (the closure).

    Examples:
        >>> Precedence.chain(3).reduction()
        [(0, 1), (1, 2)]
        >>> Precedence.from_pairs([], 2).interchangeable()
        [(0, 1)]
    """

    n_steps: int
    pairs: tuple[tuple[int, int], ...]
    successors: tuple[int, ...]

    @classmethod
    def from_pairs(cls, pairs: Iterable[Any], n_steps: int) -> Precedence:
        """Validate ``pairs`` for a chain of ``n_steps`` (see :func:`check_precedence`).

        Raises:
            PrecedenceError: As :func:`check_precedence`.
        """
        normalised = check_precedence(pairs, n_steps) or []
        return cls(n_steps, tuple(normalised), tuple(_closure_masks(normalised, n_steps)))

    @classmethod
    def chain(cls, n_steps: int) -> Precedence:
        """The chain's own order ``0 < 1 < ... < n_steps - 1`` (what ``None`` means).

        Examples:
            >>> Precedence.chain(3).precedes(0, 2)
            True
        """
        full = (1 << n_steps) - 1
        successors = tuple(full & ~((1 << (a + 1)) - 1) for a in range(n_steps))
        pairs = tuple((a, a + 1) for a in range(n_steps - 1))
        return cls(n_steps, pairs, successors)

    def precedes(self, a: int, b: int) -> bool:
        """Whether step ``a`` must come before step ``b`` (in the closure)."""
        return bool(self.successors[a] >> b & 1)

    def closure(self) -> list[tuple[int, int]]:
        """Every implied pair, sorted."""
        return [(a, b) for a, mask in enumerate(self.successors) for b in set_bits(mask)]

    def reduction(self) -> list[tuple[int, int]]:
        """The transitive reduction, sorted: the pairs to store or draw."""
        return _reduction_of(self.successors)

    def interchangeable(self) -> list[tuple[int, int]]:
        """Pairs ``(a, b)``, ``a < b``, of steps that may come in either order, sorted."""
        return [
            (a, b)
            for a in range(self.n_steps)
            for b in range(a + 1, self.n_steps)
            if not (self.successors[a] >> b & 1)
        ]

    def restricted_to(self, steps: Sequence[int]) -> Precedence:
        """The precedence among some of the steps, renumbered ``0..len(steps)-1``.

        What the scorer needs when it drops blank reference steps before matching: match
        indices then count the kept steps only. Orders implied through a step left out stay
        (``0 -> 1 -> 2`` without step 1 still orders 0 before 2).

        Args:
            steps: The steps kept, in ascending order.

        Examples:
            >>> p = Precedence.from_pairs([[0, 1], [1, 2], [0, 3]], 4)
            >>> p.restricted_to([0, 2, 3]).pairs
            ((0, 1), (0, 2))
        """
        if any(b <= a for a, b in pairwise(steps)) or (steps and steps[-1] >= self.n_steps):
            raise ValueError(f"steps must be ascending indices below {self.n_steps}: {steps}")
        position = {step: k for k, step in enumerate(steps)}
        successors = tuple(
            sum(1 << position[b] for b in set_bits(self.successors[a]) if b in position)
            for a in steps
        )
        return Precedence(len(steps), tuple(_reduction_of(successors)), successors)

    def is_total_on(self, steps: Sequence[int]) -> bool:
        """Whether the closure orders every two of ``steps`` (given in ascending order).

        Pairs go forward (``a < b``), so the closure orders them all exactly when it orders
        each one before the next: then the order metrics are the paper's on those steps.

        Examples:
            >>> p = Precedence.from_pairs([[0, 1], [1, 3]], 4)
            >>> p.is_total_on([0, 1, 3]), p.is_total_on([0, 2])
            (True, False)
        """
        return all(self.successors[a] >> b & 1 for a, b in pairwise(steps))
