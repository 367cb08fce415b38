"""The scoring engine: one path from prediction sets to per-item records and summaries.

Every door goes through it: :func:`crystalbench.scoring.evaluate` (one set),
:func:`crystalbench.scoring_many.evaluate_many` (several sets, one encoder), ``crystal
score`` and ``crystal run``, the lmms-eval task, the ablation, and the reward scorer
(whose step matching is :class:`ItemScorer`'s).

- :class:`ScoringEngine` (:mod:`.core`): configured once from a
  :class:`~crystalbench.config.ScoreConfig`; :meth:`~ScoringEngine.run` scores any number of
  :class:`ScoredSet` in one pass (one encoder, each distinct text encoded once);
  :meth:`~ScoringEngine.iter_results` yields one set's records as they come.
- :class:`ItemScorer` (:mod:`.items`): the per-item step, stage by stage: prepare, candidates
  (where candidate filters such as the judge matcher and the fact guard apply, each reading
  the item through a :class:`ChainContext`), chain metrics, the record.
- :class:`Aggregator` (:mod:`.aggregate`): the macro-averages of the summary.
"""

from __future__ import annotations

from crystalbench.engine.aggregate import Aggregator
from crystalbench.engine.core import ProgressHook, RunResult, ScoringEngine, recurring_texts
from crystalbench.engine.items import (
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
from crystalbench.engine.sets import ScoredSet, as_prediction_set, check_ids

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
