"""CPR-Curriculum: easy-to-hard order, pacing, TRL's sampler contract, checkpoint selection."""

from __future__ import annotations

import json

import pytest

from crystalbench.errors import UnknownNameError
from crystalbench.training.config import TrainingError
from crystalbench.training.curriculum import (
    CurriculumSampler,
    curriculum_order,
    curriculum_schedule,
    select_best_checkpoint,
    stage_buckets,
    staged_schedule,
)
from crystalbench.types import BenchmarkItem


def item(item_id, n_steps, source="s"):
    return BenchmarkItem(
        id=item_id,
        source=source,
        question="?",
        answer="a",
        reference_steps=[f"step {k}" for k in range(n_steps)],
    )


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


def test_sampler_honours_trl_repeat_sampler_contract():
    from trl.trainer.utils import RepeatSampler

    ours = CurriculumSampler(list(range(7)), mini_repeat_count=2, batch_size=3, repeat_count=4)
    trl = RepeatSampler(
        list(range(7)), mini_repeat_count=2, batch_size=3, repeat_count=4, shuffle=False
    )
    assert list(ours) == list(trl)
    assert len(ours) == len(trl) == 48


def test_sampler_follows_the_schedule_in_generation_groups():
    sampler = CurriculumSampler([5, 1, 4, 1], mini_repeat_count=2, batch_size=2, repeat_count=2)
    assert list(sampler) == [5, 5, 1, 1, 5, 5, 1, 1, 4, 4, 1, 1, 4, 4, 1, 1]
    with pytest.raises(ValueError):
        CurriculumSampler([1], mini_repeat_count=0)


def _phase_dir(tmp_path, records, checkpoints):
    for step in checkpoints:
        (tmp_path / f"checkpoint-{step}").mkdir()
    (tmp_path / "validation.jsonl").write_text(
        "".join(json.dumps({"step": s, "n_items": 10, "metrics": m}) + "\n" for s, m in records),
        encoding="utf-8",
    )
    return tmp_path


def test_best_checkpoint_is_chosen_on_validation(tmp_path):
    run = _phase_dir(
        tmp_path,
        [
            (100, {"accuracy": 0.40, "format_rate": 0.90}),
            (200, {"accuracy": 0.55, "format_rate": 0.80}),
            (300, {"accuracy": 0.55, "format_rate": 0.95}),  # tie on accuracy, better format
            (350, {"accuracy": 0.70, "format_rate": 1.00}),  # best, but never saved
            (400, {"accuracy": 0.30, "format_rate": 1.00}),
        ],
        checkpoints=[100, 200, 300, 400],
    )
    choice = select_best_checkpoint(run, "accuracy")
    assert (choice.step, choice.value) == (300, 0.55)
    assert choice.path == str(run / "checkpoint-300")
    assert choice.candidates == [(100, 0.40), (200, 0.55), (300, 0.55), (400, 0.30)]
    assert select_best_checkpoint(run, "format_rate").step == 400


def test_equal_scores_go_to_the_earlier_checkpoint(tmp_path):
    run = _phase_dir(tmp_path, [(1, {"accuracy": 0.5}), (2, {"accuracy": 0.5})], [1, 2])
    assert select_best_checkpoint(run).step == 1


def test_no_validated_checkpoint_is_an_error(tmp_path):
    run = _phase_dir(tmp_path, [(5, {"accuracy": 0.5})], [10])
    with pytest.raises(TrainingError, match="no validated checkpoint"):
        select_best_checkpoint(run)
    with pytest.raises(UnknownNameError):
        select_best_checkpoint(run, "loss")
