"""Control rewards: what a "gain" looks like when the reward carries no signal.

On Qwen models a random reward alone has bought most of an RL gain (spurious-reward results
on MATH-500), so a CPR gain means little until it beats the same run trained on noise.
:class:`RandomReward` is the ``random`` strategy's reward function: for every completion a
uniform draw on CPR's range ``[0, a_w + s_w]``, seeded by the run's seed, the call and the row
(and the completion's text, so ranks and repeated prompts draw independently). It never looks
at the answer or the steps. Torch-free.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

__all__ = ["RandomReward"]


class RandomReward:
    """A TRL reward function returning seeded noise on CPR's scale.

    Args:
        seed: The run's seed.
        scale: Upper end of the range (CPR's maximum, ``a_w + s_w``).

    Examples:
        >>> reward = RandomReward(seed=1, scale=1.0)
        >>> first = reward(prompts=["p", "p"], completions=["a", "b"])
        >>> all(0.0 <= r <= 1.0 for r in first), first == RandomReward(1, 1.0)(
        ...     prompts=["p", "p"], completions=["a", "b"])
        (True, True)
        >>> reward(prompts=["p"], completions=["a"]) != first[:1]  # a new call, a new draw
        True
    """

    __name__ = "crystal_random"

    def __init__(self, seed: int, scale: float = 1.0) -> None:
        self.seed = seed
        self.scale = scale
        self.calls = 0

    def __repr__(self) -> str:
        return f"RandomReward(seed={self.seed}, scale={self.scale:g})"

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """One draw per completion (see the class docstring)."""
        call = self.calls
        self.calls += 1
        out: list[float | None] = []
        for row, completion in enumerate(completions or []):
            text = f"{self.seed}:{call}:{row}:{completion!r}".encode()
            draw = int.from_bytes(hashlib.sha256(text).digest()[:8], "big") / 2**64
            out.append(draw * self.scale)
        return out
