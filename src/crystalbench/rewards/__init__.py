"""CRYSTAL rewards for GRPO: a pure core, a batched scorer, and TRL / verl / EasyR1 adapters.

Quick start (TRL)::

    from crystalbench.rewards import RewardScorer, load_reward_encoder, trl_reward_funcs

    scorer = RewardScorer(load_reward_encoder("all-distilroberta-v1"))   # paper encoder, tau
    reward_funcs = trl_reward_funcs(scorer, ["cpr_answer", "cpr_reasoning"])  # sums to CPR

See ``docs/rewards.md`` for the format contract, every reward kind, the verl and EasyR1
entry points (:mod:`crystalbench.rewards.verl`, :mod:`crystalbench.rewards.easyr1`) and the
reward server. Importing this package does not import torch.
"""

from __future__ import annotations

from crystalbench.rewards.client import RemoteRewardScorer, RewardServerError
from crystalbench.rewards.core import (
    FormatCheck,
    StepScores,
    check_format,
    cpr_parts,
    cpr_reward,
    guard_steps,
    make_breakdown,
    make_signals,
    reference_steps,
    reward_components,
    score_completion,
    score_steps,
)
from crystalbench.rewards.encoder_loading import (
    load_reward_encoder,
    outside_zero3,
    reward_device,
)
from crystalbench.rewards.items import (
    completion_text,
    ground_truth_json,
    item_from_fields,
    item_from_ground_truth,
    items_from_columns,
)
from crystalbench.rewards.runtime import shared_source
from crystalbench.rewards.scorer import RewardScorer, ScorerStats
from crystalbench.rewards.trl import CrystalReward, trl_reward_funcs
from crystalbench.rewards.types import (
    REWARD_KINDS,
    FormatRules,
    HeldoutGrader,
    RewardBreakdown,
    RewardKind,
    RewardSignals,
    RewardWeights,
    SignalSource,
    StepGuards,
)

__all__ = [
    "REWARD_KINDS",
    "CrystalReward",
    "FormatCheck",
    "FormatRules",
    "HeldoutGrader",
    "RemoteRewardScorer",
    "RewardBreakdown",
    "RewardKind",
    "RewardScorer",
    "RewardServerError",
    "RewardSignals",
    "RewardWeights",
    "ScorerStats",
    "SignalSource",
    "StepGuards",
    "StepScores",
    "check_format",
    "completion_text",
    "cpr_parts",
    "cpr_reward",
    "ground_truth_json",
    "guard_steps",
    "item_from_fields",
    "item_from_ground_truth",
    "items_from_columns",
    "load_reward_encoder",
    "make_breakdown",
    "make_signals",
    "outside_zero3",
    "reference_steps",
    "reward_components",
    "reward_device",
    "score_completion",
    "score_steps",
    "shared_source",
    "trl_reward_funcs",
]
