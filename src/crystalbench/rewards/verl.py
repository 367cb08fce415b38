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
verl logs as ``reward_extra_info``. The ``heldout`` keyword adds held-out graders (a list of
``{name, kind, encoder, tau}``, see :func:`~crystalbench.rewards.runtime.heldout_graders`):
each is one more key, ``heldout_<name>`` (e.g. step F1 under another encoder, answer
accuracy), that verl logs in training and validation
(``val-aux/<source>/heldout_<name>/mean@1``) and never adds to ``score``; ``crystal
train-select`` then picks a checkpoint by one of them. Because verl cannot skip a row, a row
whose answer the judge could not decide scores 0 with ``unscored = 1``; a row lacking the
data its reward needs (no gold answer, no reference steps) is a dataset bug and raises
:class:`~crystalbench.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crystalbench.rewards.items import item_from_ground_truth
from crystalbench.rewards.runtime import heldout_sources, kind_and_source, score_dicts

# ``kind_and_source`` and ``score_dicts`` are shared with the EasyR1 adapter and live in
# :mod:`crystalbench.rewards.runtime`; they stay importable from here.
__all__ = ["compute_score", "compute_score_batch", "kind_and_source", "score_dicts"]


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
        **kwargs: ``kind``, scorer settings and ``heldout`` graders; other keys verl passes
            are ignored.

    Returns:
        ``{"score": reward, "format": ..., "answer_correct": ..., "step_f1": ...,
        "cpr_answer": ..., "cpr_reasoning": ..., "unscored": ...}`` plus
        ``heldout_<name>`` per held-out grader.

    Examples:
        >>> compute_score("crystal", '{"reasoning_steps": ["Add."], "answer": "4"}',
        ...               "4", {"reference_steps": ["Add."]}, encoder="hash")["score"]
        1.0
    """
    kind, source = kind_and_source(kwargs)
    item = item_from_ground_truth(ground_truth, extra_info)
    return score_dicts(source, [solution_str], [item], kind, heldout_sources(kwargs))[0]


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
        >>> compute_score_batch(["c"], ['{"reasoning_steps": ["Add."], "answer": "5"}'], ["4"],
        ...                     [{"reference_steps": ["Add."]}], encoder="hash",
        ...                     heldout=[{"name": "accuracy", "kind": "answer"}])[0]
        ... # doctest: +ELLIPSIS
        {'score': 0.105, ..., 'heldout_accuracy': 0.0}
    """
    kind, source = kind_and_source(kwargs)
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    items = [
        item_from_ground_truth(gt, info) for gt, info in zip(ground_truths, infos, strict=True)
    ]
    return score_dicts(source, solution_strs, items, kind, heldout_sources(kwargs))
