"""A drop-in for ``crystal-metrics`` 0.2.0: its public API on crystalbench's engine.

Switching is one line::

    import crystalbench.compat.crystal_metrics as crystal_metrics  # was: import crystal_metrics

The evaluator, the accuracy calculator and answer normaliser, the reward functions and the
similarity helpers keep crystal-metrics' names, signatures, return types and numbers:
matching, order scores and answer rules are crystalbench's compat mode
(``compat="crystal-metrics-0.2"``, ``answer_rules="crystal-metrics-0.2"``), the
differences from the paper included. Encoders load on first use (importing this module
imports no torch), each distinct text is embedded once and cached on disk, and whole
datasets and reward batches are embedded in batched calls. The submodules carry the same
names as there (``reasoning``, ``accuracy``, ``rewards``, ``similarity``, ``judge``).

What still differs, and why: ``docs/crystal-metrics.md``. crystal-metrics' own test suite
runs against this module in crystalbench's CI (``tests/compat/test_crystal_metrics_suite.py``).

Examples:
    >>> import crystalbench.compat.crystal_metrics as crystal_metrics
    >>> crystal_metrics.AccuracyCalculator().evaluate_single("Is it on?", "Yes.", "yes").is_correct
    True
    >>> crystal_metrics.rewards.check_answer_match("(b)", "b")
    False
"""

from __future__ import annotations

from crystalbench.compat.crystal_metrics._scoring import redirect_model
from crystalbench.compat.crystal_metrics.accuracy import (
    AccuracyCalculator,
    AccuracyResult,
    AnswerNormalizer,
)
from crystalbench.compat.crystal_metrics.reasoning import (
    EvaluationMetrics,
    MLLMReasoningEvaluator,
    load_json_data,
    save_results,
)
from crystalbench.compat.crystal_metrics.rewards import (
    accuracy_reward,
    causal_process_reward,
    format_reward,
    parse_reasoning_steps,
    select_reward_func,
    semantic_reasoning_reward,
    word_overlap_reasoning_reward,
)
from crystalbench.compat.crystal_metrics.similarity import (
    best_match_f1,
    jaccard_similarity,
    semantic_match_f1,
    word_overlap_similarity,
)

__version__ = "0.2.0"
"""The crystal-metrics release whose API and numbers this module reproduces."""

__all__ = [
    "AccuracyCalculator",
    "AccuracyResult",
    "AnswerNormalizer",
    "EvaluationMetrics",
    "MLLMReasoningEvaluator",
    "__version__",
    "accuracy_reward",
    "best_match_f1",
    "causal_process_reward",
    "format_reward",
    "jaccard_similarity",
    "load_json_data",
    "parse_reasoning_steps",
    "save_results",
    "select_reward_func",
    "semantic_match_f1",
    "semantic_reasoning_reward",
    "word_overlap_reasoning_reward",
    "word_overlap_similarity",
]

# Importing the submodules above makes them attributes too (``crystal_metrics.rewards``),
# as in crystal-metrics; redirect_model is our addition and stays out of __all__, which
# lists exactly crystal-metrics' names.
_EXTENSIONS = (redirect_model,)
