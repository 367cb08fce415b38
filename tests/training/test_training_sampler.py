"""The curriculum sampler keeps TRL's ``RepeatSampler`` contract over a fixed schedule."""

from __future__ import annotations

import pytest

from crystalbench.training.sampler import CurriculumSampler


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
