"""verl reward functions over the CRYSTAL reward core.

Point verl's ``custom_reward_function.path`` at this file (or a two-line file that imports
from it) and choose the function name:

- ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)`` for
  verl's default per-sample ``naive`` reward manager;
- ``compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs)``
  for the ``batch`` reward manager (one encoder pass per batch: use it).

The item comes from ``ground_truth``: either the JSON layout of
:func:`~crystalbench.rewards.items.ground_truth_json` (the whole item), or the bare gold
answer with ``reference_steps`` (and ``options``, ``answer_type``, ``question``) in the row's
``extra_info``. Keyword arguments (verl's ``custom_reward_function.reward_kwargs``) choose the
reward ``kind`` (default ``cpr``) and the scorer settings of
:func:`~crystalbench.rewards.runtime.shared_source` (``server_url``, ``encoder``, ``tau``,
``device``, ``allow_think``, ``cache_dir``).

Each result is a dict: ``score`` (the reward, read by verl) plus ``format``,
``answer_correct``, ``step_f1``, ``cpr_answer``, ``cpr_reasoning`` and ``unscored``, which
verl logs as ``reward_extra_info``. Because verl cannot skip a row, a row whose answer the
judge could not decide scores 0 with ``unscored = 1``; a row lacking the data its reward
needs (no gold answer, no reference steps) is a dataset bug and raises
:class:`~crystalbench.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.items import item_from_ground_truth
from crystalbench.rewards.runtime import shared_source
from crystalbench.rewards.trl import SignalSource
from crystalbench.rewards.types import (
    ANSWER_KINDS,
    REWARD_KINDS,
    STEP_KINDS,
    RewardKind,
    RewardSignals,
)
from crystalbench.types import BenchmarkItem

__all__ = ["compute_score", "compute_score_batch", "kind_and_source", "score_dicts"]

_SOURCE_KEYS = ("server_url", "encoder", "tau", "device", "allow_think", "cache_dir")


def score_dicts(
    source: SignalSource,
    solution_strs: Sequence[Any],
    items: Sequence[BenchmarkItem | None],
    kind: RewardKind = "cpr",
) -> list[dict[str, float]]:
    """verl-style result dicts for a batch (the shared body of both entry points).

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> from crystalbench.rewards.scorer import RewardScorer
        >>> item = item_from_ground_truth("4", {"reference_steps": ["Add 2 and 2."]})
        >>> text = '{"reasoning_steps": ["Add 2 and 2."], "answer": "4"}'
        >>> score_dicts(RewardScorer(HashEncoder()), [text], [item])[0]["score"]
        1.0
    """
    for index, item in enumerate(items):
        if item is None and kind in ANSWER_KINDS:
            raise InputError(f"row {index}: no gold answer in ground_truth", field="ground_truth")
        if kind in STEP_KINDS and (
            item is None or not any(s.strip() for s in item.reference_steps)
        ):
            raise InputError(
                f"row {index}: reward {kind!r} needs reference_steps in the ground truth "
                "JSON or in extra_info",
                field="reference_steps",
            )
    signals = source.signals(list(solution_strs), list(items))
    return [_result(s, kind, source) for s in signals]


def _result(signals: RewardSignals, kind: RewardKind, source: SignalSource) -> dict[str, float]:
    chosen = make_breakdown(signals, kind, source.weights)
    cpr = make_breakdown(signals, "cpr", source.weights)
    return {
        "score": chosen.total if chosen.total is not None else 0.0,
        "format": float(signals.format_ok),
        "answer_correct": float(bool(signals.answer_correct)),
        "step_f1": signals.step_f1 if signals.step_f1 is not None else 0.0,
        "cpr_answer": cpr.components.get("answer", 0.0),
        "cpr_reasoning": cpr.components.get("reasoning", 0.0),
        "unscored": float(chosen.total is None),
    }


def kind_and_source(kwargs: Mapping[str, Any]) -> tuple[RewardKind, SignalSource]:
    """The reward kind and the process-wide scorer named by a trainer's reward kwargs."""
    kind = kwargs.get("kind", "cpr")
    if kind not in REWARD_KINDS:
        raise UnknownNameError("reward kind", str(kind), REWARD_KINDS)
    source = shared_source(**{k: kwargs[k] for k in _SOURCE_KEYS if kwargs.get(k) is not None})
    return kind, source


def compute_score(
    data_source: str | None,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's per-sample reward: the CRYSTAL reward of one response (see module docstring).

    Args:
        data_source: verl's data source tag (not used for scoring).
        solution_str: The decoded response.
        ground_truth: The ground-truth JSON, or the bare gold answer.
        extra_info: The row's ``extra_info`` (reference steps etc. when the ground truth is
            a bare answer).
        **kwargs: ``kind`` and scorer settings; other keys verl passes are ignored.

    Returns:
        ``{"score": reward, "format": ..., "answer_correct": ..., "step_f1": ...,
        "cpr_answer": ..., "cpr_reasoning": ..., "unscored": ...}``.

    Examples:
        >>> compute_score("crystal", '{"reasoning_steps": ["Add."], "answer": "4"}',
        ...               "4", {"reference_steps": ["Add."]}, encoder="hash")["score"]
        1.0
    """
    kind, source = kind_and_source(kwargs)
    item = item_from_ground_truth(ground_truth, extra_info)
    return score_dicts(source, [solution_str], [item], kind)[0]


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """verl's batch reward (``reward_manager.name=batch``): one encoder pass per batch.

    Examples:
        >>> compute_score_batch(["c", "c"], ['{"reasoning_steps": ["Add."], "answer": "4"}',
        ...                     "4"], ["4", "4"], [{"reference_steps": ["Add."]}] * 2,
        ...                     encoder="hash")[1]["score"]
        0.0
    """
    kind, source = kind_and_source(kwargs)
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    items = [
        item_from_ground_truth(gt, info) for gt, info in zip(ground_truths, infos, strict=True)
    ]
    return score_dicts(source, solution_strs, items, kind)
