"""EasyR1 batch reward function over the CRYSTAL reward core.

EasyR1 loads ``worker.reward.reward_function: <file>.py:compute_score`` and, for a
``REWARD_TYPE = "batch"`` module, calls ``compute_score(reward_inputs, **reward_function_kwargs)``
once per batch with ``reward_inputs[i] = {"response": str, "response_length": int,
"ground_truth": str}``. Only ``ground_truth`` reaches the reward (hiyouga/EasyR1#448), so the
whole item travels in it as JSON: build the dataset's answer column with
:func:`~crystalbench.rewards.items.ground_truth_json` (layout in
:mod:`crystalbench.rewards.items`) and point ``data.answer_key`` at it.

Each result holds ``overall`` (the reward EasyR1 trains on), ``format`` and ``accuracy``
(EasyR1's standard keys) plus ``step_f1``, ``cpr_answer``, ``cpr_reasoning`` and
``unscored`` for its logs. The ``heldout`` keyword adds held-out graders (a list of
``{name, kind, encoder, tau}``, see :func:`~crystalbench.rewards.runtime.heldout_graders`):
each is one more key, ``heldout_<name>``, that EasyR1 logs (``reward/heldout_<name>`` in
training, ``val/heldout_<name>_reward`` in validation) and never adds to ``overall``;
``crystal train-select`` then picks a checkpoint by one of them. ``reward_function_kwargs``
choose ``kind`` (default ``cpr``) and the scorer settings of
:func:`~crystalbench.rewards.runtime.shared_source`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crystalbench.rewards.items import item_from_ground_truth
from crystalbench.rewards.runtime import heldout_sources, kind_and_source, score_dicts

__all__ = ["REWARD_NAME", "REWARD_TYPE", "compute_score"]

REWARD_NAME = "crystal"
"""Name EasyR1 logs the reward under."""

REWARD_TYPE = "batch"
"""EasyR1 calls :func:`compute_score` once per batch."""


def compute_score(
    reward_inputs: Sequence[Mapping[str, Any]], **kwargs: Any
) -> list[dict[str, float]]:
    """EasyR1 batch reward: one dict per response (see module docstring).

    Args:
        reward_inputs: ``{"response": ..., "ground_truth": ...}`` per response.
        **kwargs: ``kind``, scorer settings (``encoder``, ``tau``, ``server_url``...) and
            ``heldout`` graders.

    Raises:
        InputError: A ground truth lacks what the reward needs (gold answer, reference steps).

    Examples:
        >>> from crystalbench.types import BenchmarkItem
        >>> from crystalbench.rewards.items import ground_truth_json
        >>> gt = ground_truth_json(BenchmarkItem(id="1", source="x", question="2+2?",
        ...                        answer="4", reference_steps=["Add 2 and 2."]))
        >>> out = compute_score([{"response": '{"reasoning_steps": ["Add 2 and 2."], '
        ...                       '"answer": "4"}', "response_length": 9, "ground_truth": gt}],
        ...                     encoder="hash")
        >>> out[0]["overall"], out[0]["format"], out[0]["accuracy"]
        (1.0, 1.0, 1.0)
    """
    kind, source = kind_and_source(kwargs)
    items = [item_from_ground_truth(r.get("ground_truth")) for r in reward_inputs]
    results = score_dicts(
        source, [r.get("response") for r in reward_inputs], items, kind, heldout_sources(kwargs)
    )
    return [
        {
            "overall": r["score"],
            "format": r["format"],
            "accuracy": r["answer_correct"],
            "step_f1": r["step_f1"],
            "cpr_answer": r["cpr_answer"],
            "cpr_reasoning": r["cpr_reasoning"],
            "unscored": r["unscored"],
            **{key: value for key, value in r.items() if key.startswith("heldout_")},
        }
        for r in results
    ]
