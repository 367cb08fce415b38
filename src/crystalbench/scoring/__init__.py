"""Scoring: from prediction sets to per-item records and summaries, in one engine.

The data flow inside, one module each: :mod:`.matching` (greedy one-to-one matching, P/R/F1,
Ordered F1), :mod:`.order` (LIS, Kendall, partial orders), :mod:`.compat` (the match rules of
crystal-metrics 0.2), :mod:`.filters` (candidate filters: the fact guard), :mod:`.items`
(one item scored), :mod:`.engine` (every set in one pass), :mod:`.aggregate` (the summary's
macro-averages), :mod:`.results` (the results folder), and the doors:
:mod:`.evaluation` (:func:`evaluate`), :mod:`.evaluation_many` (:func:`evaluate_many`) and
:mod:`.job` (``crystal score``).

- :class:`ScoringEngine`: configured once from a :class:`~crystalbench.config.scoring.ScoreConfig`;
  :meth:`~ScoringEngine.run` scores any number of :class:`ScoredSet` in one pass (one
  encoder, each distinct text encoded once).
- :class:`ItemScorer`: the per-item step, stage by stage: prepare, candidates (where
  candidate filters such as the judge matcher and the fact guard apply, each reading the item
  through a :class:`ChainContext`), chain metrics, the record.
- :class:`Aggregator`: the macro-averages of the summary.

The names below load lazily: importing one module of this package (``matching``, say) does
not import the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crystalbench.scoring.aggregate import Aggregator
    from crystalbench.scoring.engine import ProgressHook, RunResult, ScoringEngine, recurring_texts
    from crystalbench.scoring.items import (
        CandidateFilter,
        ChainContext,
        ItemScorer,
        PreparedItem,
        ReferenceChain,
        StepVectors,
        is_empty_prediction,
        non_blank,
        reference_chain,
    )
    from crystalbench.scoring.sets import ScoredSet, as_prediction_set, check_ids

_EXPORTS = {
    "Aggregator": "crystalbench.scoring.aggregate",
    "ProgressHook": "crystalbench.scoring.engine",
    "RunResult": "crystalbench.scoring.engine",
    "ScoringEngine": "crystalbench.scoring.engine",
    "recurring_texts": "crystalbench.scoring.engine",
    "CandidateFilter": "crystalbench.scoring.items",
    "ChainContext": "crystalbench.scoring.items",
    "ItemScorer": "crystalbench.scoring.items",
    "PreparedItem": "crystalbench.scoring.items",
    "ReferenceChain": "crystalbench.scoring.items",
    "StepVectors": "crystalbench.scoring.items",
    "is_empty_prediction": "crystalbench.scoring.items",
    "non_blank": "crystalbench.scoring.items",
    "reference_chain": "crystalbench.scoring.items",
    "ScoredSet": "crystalbench.scoring.sets",
    "as_prediction_set": "crystalbench.scoring.sets",
    "check_ids": "crystalbench.scoring.sets",
}

__all__ = [
    "Aggregator",
    "CandidateFilter",
    "ChainContext",
    "ItemScorer",
    "PreparedItem",
    "ProgressHook",
    "ReferenceChain",
    "RunResult",
    "ScoredSet",
    "ScoringEngine",
    "StepVectors",
    "as_prediction_set",
    "check_ids",
    "is_empty_prediction",
    "non_blank",
    "recurring_texts",
    "reference_chain",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'crystalbench.scoring' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
