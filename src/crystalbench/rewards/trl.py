"""TRL ``GRPOTrainer`` reward functions over the CRYSTAL reward core.

TRL calls each reward function as (``trl/trainer/grpo_trainer.py::_calculate_rewards``)::

    reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids,
                **{column: [value per completion] for every dataset column but "prompt"},
                trainer_state=..., log_extra=..., log_metric=...)

and expects one ``float`` (or ``None``: skip this row) per completion. The functions here
read the item of each row from the dataset columns ``answer`` (or ``solution``),
``reference_steps``, ``answer_type``, ``options``, ``question``, ``id`` and ``source``,
accept plain or conversational completions, and ignore any other keyword. A row without a
gold answer (or without reference steps, for the step rewards) gets ``None``.

All functions made from one scorer share its memo, so a trainer that calls
``[cpr_answer, cpr_reasoning]`` on a batch pays for one encoder pass. With
``reward_weights=[1, 1]`` and TRL's default ``sum_then_normalize`` the pair reproduces CPR
exactly, logs the two parts separately, and gives PCGrad its two objectives.

Examples:
    >>> from crystalbench.encoders import HashEncoder
    >>> from crystalbench.rewards.scorer import RewardScorer
    >>> answer_part, step_part = trl_reward_funcs(RewardScorer(HashEncoder()),
    ...                                           ["cpr_answer", "cpr_reasoning"])
    >>> answer_part.__name__, step_part.__name__
    ('crystal_cpr_answer', 'crystal_cpr_reasoning')
    >>> text = '{"reasoning_steps": ["Add 2 and 2."], "answer": "4"}'
    >>> answer_part(prompts=["2+2?"], completions=[[{"role": "assistant", "content": text}]],
    ...             answer=["4"], reference_steps=[["Add 2 and 2."]], completion_ids=[[1]])
    [0.65]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from crystalbench.errors import UnknownNameError
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.items import items_from_columns
from crystalbench.rewards.types import (
    REWARD_KINDS,
    RewardBreakdown,
    RewardKind,
    RewardWeights,
    SignalSource,
)

# ``SignalSource`` lives in :mod:`crystalbench.rewards.types`; it is re-exported here for
# code that imported it from this module.
__all__ = ["CrystalReward", "SignalSource", "trl_reward_funcs"]


class CrystalReward:
    """One TRL reward function: a named callable returning ``list[float | None]``.

    Args:
        source: RewardScorer (in process) or reward-server client.
        kind: Reward kind this function returns.
        weights: Weights and CPR constants; the source's when ``None``.
        name: ``__name__`` TRL logs the reward under (``crystal_<kind>`` by default).
        log_metrics: Also log batch means through TRL's ``log_metric`` (``crystal/format``,
            ``crystal/answer_correct``, ``crystal/step_f1``, ``crystal/steps``) and each
            row's format error through ``log_extra``. Turn it on for one function of a set.
    """

    def __init__(
        self,
        source: SignalSource,
        kind: RewardKind,
        *,
        weights: RewardWeights | None = None,
        name: str | None = None,
        log_metrics: bool = False,
    ) -> None:
        if kind not in REWARD_KINDS:
            raise UnknownNameError("reward kind", kind, REWARD_KINDS)
        self.source = source
        self.kind: RewardKind = kind
        self.weights = weights
        self.log_metrics = log_metrics
        self.__name__ = name or f"crystal_{kind}"

    def __repr__(self) -> str:
        return f"CrystalReward({self.__name__!r}, kind={self.kind!r})"

    def breakdowns(self, completions: Sequence[Any], **columns: Any) -> list[RewardBreakdown]:
        """Full breakdowns for a batch given TRL-style columns (for inspection and logging)."""
        items = items_from_columns(len(completions), columns)
        weights = self.weights or self.source.weights
        return [
            make_breakdown(s, self.kind, weights) for s in self.source.signals(completions, items)
        ]

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Rewards for a batch, called the way ``GRPOTrainer`` calls reward functions."""
        rows = list(completions or [])
        found = self.breakdowns(rows, **kwargs)
        if self.log_metrics:
            _log(found, kwargs.get("log_metric"), kwargs.get("log_extra"))
        return [b.total for b in found]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _log(
    found: Sequence[RewardBreakdown],
    log_metric: Callable[[str, float], None] | None,
    log_extra: Callable[[str, list[Any]], None] | None,
) -> None:
    # Every rank must log the same keys, so every key is logged even for an empty batch.
    if callable(log_metric):
        log_metric("crystal/format", _mean([float(b.format_ok) for b in found]))
        log_metric(
            "crystal/answer_correct",
            _mean([float(b.answer_correct) for b in found if b.answer_correct is not None]),
        )
        log_metric("crystal/step_f1", _mean([b.step_f1 for b in found if b.step_f1 is not None]))
        log_metric("crystal/steps", _mean([float(b.n_steps) for b in found]))
    if callable(log_extra):
        log_extra("crystal_format_error", [b.format_error or "" for b in found])


def trl_reward_funcs(
    source: SignalSource,
    kinds: Sequence[RewardKind] = ("cpr_answer", "cpr_reasoning"),
    *,
    weights: RewardWeights | None = None,
    log_metrics: bool = True,
) -> list[CrystalReward]:
    """Reward functions for ``GRPOTrainer(reward_funcs=...)``, one per kind.

    Common sets (use ``reward_weights`` of ones unless noted):

    - CPR, split for logging / PCGrad: ``["cpr_answer", "cpr_reasoning"]`` (the default);
    - CPR as one function: ``["cpr"]``;
    - Composite: ``["format", "answer", "step_f1"]`` with ``reward_weights=[w_f, w_a, w_s]``;
    - Answer-only / CPR-Curriculum phase 1: ``["format", "answer"]``.

    Args:
        source: A :class:`~crystalbench.rewards.scorer.RewardScorer` or a
            :class:`~crystalbench.rewards.client.RemoteRewardScorer`.
        kinds: One function per kind, in this order.
        weights: Weights and CPR constants (the source's when ``None``).
        log_metrics: Log the batch means through the first function (see
            :class:`CrystalReward`).
    """
    return [
        CrystalReward(source, kind, weights=weights, log_metrics=log_metrics and index == 0)
        for index, kind in enumerate(kinds)
    ]
