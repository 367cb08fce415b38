"""CPR-Curriculum order: easy-to-hard, tie-breaks, pacing (torch-free)."""

from __future__ import annotations

import pytest

from crystalbench.errors import UnknownNameError
from crystalbench.training.curriculum import (
    curriculum_order,
    curriculum_schedule,
    stage_buckets,
    staged_schedule,
)
from fakes import make_item


def item(item_id, n_steps, source="s"):
    return make_item(item_id, [f"step {k}" for k in range(n_steps)], source=source)


ITEMS = [item("e", 5), item("a", 1), item("d", 3), item("b", 1), item("c", 2), item("f", 3)]


def test_order_goes_from_fewer_to_more_reference_steps():
    order = curriculum_order(ITEMS, tie_break="id")
    assert [ITEMS[i].id for i in order] == ["a", "b", "c", "d", "f", "e"]
    counts = [
        len(ITEMS[i].reference_steps) for i in curriculum_order(ITEMS, tie_break="hash", seed=3)
    ]
    assert counts == sorted(counts)


def test_blank_reference_steps_do_not_count():
    padded = item("p", 1).model_copy(update={"reference_steps": ["one", " ", ""]})
    order = curriculum_order([item("q", 2), padded], tie_break="id")
    assert order == [1, 0]


def test_hash_tie_break_is_deterministic_and_seeded():
    many = [item(f"x{i:02d}", 2) for i in range(30)]
    first = curriculum_order(many, tie_break="hash", seed=1)
    assert first == curriculum_order(list(many), tie_break="hash", seed=1)
    assert first != curriculum_order(many, tie_break="hash", seed=2)
    assert first != list(range(30))  # mixes rather than keeping file order
    with pytest.raises(UnknownNameError):
        curriculum_order(many, tie_break="random")


def test_staged_buckets_keep_equal_counts_together_and_widen():
    order = curriculum_order(ITEMS, tie_break="id")  # counts 1, 1, 2, 3, 3, 5
    buckets = stage_buckets(ITEMS, 3, order)
    assert [[ITEMS[i].id for i in b] for b in buckets] == [["a", "b"], ["c", "d", "f"], ["e"]]
    schedule = staged_schedule(ITEMS, 3, tie_break="id", seed=0)
    stages = [schedule[:2], schedule[2:7], schedule[7:]]
    assert [sorted(ITEMS[i].id for i in s) for s in stages] == [
        ["a", "b"],
        ["a", "b", "c", "d", "f"],
        ["a", "b", "c", "d", "e", "f"],
    ]
    assert len(schedule) == 2 + 5 + 6


def test_schedule_dispatches_on_pacing():
    assert curriculum_schedule(ITEMS, "one_pass", tie_break="id") == curriculum_order(
        ITEMS, tie_break="id"
    )
    assert len(curriculum_schedule(ITEMS, "staged", stages=2, tie_break="id")) > len(ITEMS)
    with pytest.raises(UnknownNameError):
        curriculum_schedule(ITEMS, "anti")
