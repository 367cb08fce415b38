"""The curriculum sampler: TRL's sampler contract over a fixed schedule of dataset indices.

``GRPOTrainer`` draws prompts through a sampler with a fixed contract (TRL's
``RepeatSampler``): each index is yielded ``num_generations`` times in a row, prompts come in
chunks of ``generation_batch_size // num_generations`` (an incomplete last chunk is dropped)
and each chunk is repeated ``num_iterations * steps_per_generation`` times.
:class:`CurriculumSampler` keeps that contract over a precomputed schedule
(:func:`crystalbench.training.curriculum.curriculum_schedule`), so every rank draws the same
prompts in the same order. This module imports torch; the order itself does not need it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from torch.utils.data import Sampler

__all__ = ["CurriculumSampler"]


class CurriculumSampler(Sampler[int]):
    """TRL's ``RepeatSampler`` contract over a fixed schedule of dataset indices.

    Args:
        schedule: Dataset indices in the order prompts should be drawn (may repeat).
        mini_repeat_count: Consecutive repeats of each index (``num_generations``).
        batch_size: Prompts per chunk (``generation_batch_size // num_generations``).
        repeat_count: Repeats of each chunk (``num_iterations * steps_per_generation``).

    Examples:
        >>> list(CurriculumSampler([2, 0, 1], mini_repeat_count=2, batch_size=1, repeat_count=2))
        [2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1]
        >>> list(CurriculumSampler([2, 0, 1], mini_repeat_count=1, batch_size=2))  # 1 dropped
        [2, 0]
    """

    def __init__(
        self,
        schedule: Sequence[int],
        mini_repeat_count: int,
        batch_size: int = 1,
        repeat_count: int = 1,
    ) -> None:
        if mini_repeat_count < 1 or batch_size < 1 or repeat_count < 1:
            raise ValueError("repeat counts and batch size must be positive")
        self.schedule = list(schedule)
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count

    def __iter__(self) -> Iterator[int]:
        full = len(self.schedule) // self.batch_size * self.batch_size
        for start in range(0, full, self.batch_size):
            chunk = self.schedule[start : start + self.batch_size]
            for _ in range(self.repeat_count):
                for index in chunk:
                    for _ in range(self.mini_repeat_count):
                        yield index

    def __len__(self) -> int:
        return (
            len(self.schedule)
            // self.batch_size
            * self.batch_size
            * self.mini_repeat_count
            * self.repeat_count
        )
