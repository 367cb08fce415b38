"""CPR-Curriculum order: which training items phase 2 sees, and in which order.

Torch-free: the sampler that feeds this order to TRL is
:class:`crystalbench.training.sampler.CurriculumSampler`; the phase hand-over is
:func:`crystalbench.training.strategies.run_curriculum`.

Phase 2 sees items from fewer to more reference steps (:func:`reference_step_count`). Items
with the same count are ordered by a seeded hash of their id (``tie_break="hash"``, which mixes
sources deterministically) or by the id itself (``tie_break="id"``). Two pacings:

- ``one_pass``: the whole pool once per epoch in that order (:func:`curriculum_order`);
- ``staged``: the ordered pool is cut into ``stages`` buckets by step count (equal counts
  never straddle two buckets); stage ``k`` is a seeded shuffle of buckets ``1..k``, so the
  pool widens towards longer chains and shorter ones are revisited ("baby steps",
  :func:`staged_schedule`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from crystalbench.errors import UnknownNameError
from crystalbench.training.data import reference_step_count
from crystalbench.types import BenchmarkItem

__all__ = [
    "curriculum_order",
    "curriculum_schedule",
    "stage_buckets",
    "staged_schedule",
]


def _tie_key(item: BenchmarkItem, tie_break: str, seed: int) -> str:
    if tie_break == "id":
        return item.id
    if tie_break == "hash":
        return hashlib.sha256(f"{seed}:{item.id}".encode()).hexdigest()
    raise UnknownNameError("tie break", tie_break, ("hash", "id"))


def curriculum_order(
    items: Sequence[BenchmarkItem], *, tie_break: str = "hash", seed: int = 0
) -> list[int]:
    """Indices of ``items`` from fewer to more reference steps (deterministic tie-break).

    Examples:
        >>> def item(i, n):
        ...     return BenchmarkItem(id=str(i), source="x", question="?", answer="a",
        ...                          reference_steps=["s"] * n)
        >>> items = [item(0, 3), item(1, 1), item(2, 2), item(3, 1)]
        >>> curriculum_order(items, tie_break="id")
        [1, 3, 2, 0]
    """
    keyed = [
        (reference_step_count(item), _tie_key(item, tie_break, seed), index)
        for index, item in enumerate(items)
    ]
    return [index for _, _, index in sorted(keyed)]


def stage_buckets(
    items: Sequence[BenchmarkItem], stages: int, order: Sequence[int]
) -> list[list[int]]:
    """Cut an easy-to-hard ``order`` into at most ``stages`` buckets of similar size.

    Each bucket takes its share of the items still unassigned (``remaining / stages left``),
    and its end moves forward to the next change of step count, so items with equal step
    counts share a bucket (there are fewer buckets when there are fewer distinct counts).

    Examples:
        >>> def item(n):
        ...     return BenchmarkItem(id=str(n), source="x", question="?", answer="a",
        ...                          reference_steps=["s"] * n)
        >>> items = [item(n) for n in (1, 1, 1, 2, 3, 4)]
        >>> stage_buckets(items, 2, range(6))
        [[0, 1, 2], [3, 4, 5]]
        >>> stage_buckets(items, 3, range(6))
        [[0, 1, 2], [3, 4], [5]]
    """
    order = list(order)
    counts = [reference_step_count(items[i]) for i in order]
    n = len(order)
    buckets: list[list[int]] = []
    start = 0
    for k in range(1, stages + 1):
        end = n if k == stages else start + max(1, round((n - start) / (stages - k + 1)))
        while 0 < end < n and counts[end] == counts[end - 1]:
            end += 1
        if end > start:
            buckets.append(order[start:end])
            start = end
        if start >= n:
            break
    return buckets


def staged_schedule(
    items: Sequence[BenchmarkItem], stages: int, *, tie_break: str = "hash", seed: int = 0
) -> list[int]:
    """Baby-steps schedule: stage ``k`` is a seeded shuffle of buckets ``1..k``.

    Examples:
        >>> def item(i, n):
        ...     return BenchmarkItem(id=str(i), source="x", question="?", answer="a",
        ...                          reference_steps=["s"] * n)
        >>> items = [item(i, n) for i, n in enumerate((5, 1, 3, 1))]
        >>> schedule = staged_schedule(items, 2, tie_break="id")
        >>> sorted(schedule[:2]), sorted(schedule[2:])
        ([1, 3], [0, 1, 2, 3])
    """
    buckets = stage_buckets(items, stages, curriculum_order(items, tie_break=tie_break, seed=seed))
    schedule: list[int] = []
    pool: list[int] = []
    for k, bucket in enumerate(buckets):
        pool = pool + bucket
        stage = list(pool)
        random.Random(f"crystal-curriculum:{seed}:{k}").shuffle(stage)
        schedule.extend(stage)
    return schedule


def curriculum_schedule(
    items: Sequence[BenchmarkItem],
    pacing: str,
    *,
    stages: int = 3,
    tie_break: str = "hash",
    seed: int = 0,
) -> list[int]:
    """The index schedule of one epoch for a pacing (``one_pass`` or ``staged``).

    Raises:
        UnknownNameError: Unknown pacing.
    """
    if pacing == "one_pass":
        return curriculum_order(items, tie_break=tie_break, seed=seed)
    if pacing == "staged":
        return staged_schedule(items, stages, tie_break=tie_break, seed=seed)
    raise UnknownNameError("curriculum pacing", pacing, ("one_pass", "staged"))
