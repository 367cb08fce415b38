"""Evaluator validation: pair sampling, human agreement, the ablation, a judge matcher."""

from __future__ import annotations

from crystalbench.validation.candidates import best_unmatched

__all__ = ["best_unmatched"]
