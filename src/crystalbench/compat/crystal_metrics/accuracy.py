"""crystal-metrics 0.2.0's ``accuracy`` module on crystalbench's compat answer rules.

Every decision is :func:`crystalbench.answers.compat.compat_judgement`, the rules
``crystal score --answer-rules crystal-metrics-0.2`` uses, so the drop-in and the scorer
can never disagree; the classes here only give them crystal-metrics' names and records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import crystalbench.answers.compat as rules
from crystalbench.defaults import NUMERIC_ABS_TOL, NUMERIC_REL_TOL

__all__ = ["AccuracyCalculator", "AccuracyResult", "AnswerNormalizer"]


@dataclass
class AccuracyResult:
    """One answer's verdict, field for field crystal-metrics'."""

    is_correct: bool
    predicted_answer: str
    ground_truth_answer: str
    normalized_prediction: str
    normalized_ground_truth: str
    match_type: str
    confidence: float = 1.0


class AnswerNormalizer:
    """crystal-metrics' answer normaliser (static methods, as there).

    Examples:
        >>> AnswerNormalizer.normalize_yes_no("incorrect"), AnswerNormalizer.extract_choice("B.")
        ('yes', 'B')
    """

    @staticmethod
    def normalize_text(text: Any) -> str:
        """Lower case, ASCII quotes, no punctuation except decimal points."""
        return rules.cm_normalize_text(text)

    @staticmethod
    def extract_number(text: Any) -> float | None:
        """The first number after lead-ins such as "the answer is" are removed."""
        return rules.cm_first_number(text)

    @staticmethod
    def compare_numbers(
        predicted: float,
        ground_truth: float,
        relative_tolerance: float = NUMERIC_REL_TOL,
        absolute_tolerance: float = NUMERIC_ABS_TOL,
        delta: float = 1e-10,
    ) -> tuple[bool, str, float]:
        """``(is_correct, match_type, confidence)`` with its tolerances and extra leniency."""
        return rules.cm_compare_numbers(
            predicted, ground_truth, relative_tolerance, absolute_tolerance, delta
        )

    @staticmethod
    def extract_choice(text: Any, problem_text: str | None = None) -> str | None:
        """The choice letter named by the answer (or by its option text in the problem)."""
        return rules.cm_choice_letter(text, problem_text)

    @staticmethod
    def match_answer_to_option(answer_text: Any, problem_text: str) -> str | None:
        """The letter of the ``"X) text"`` line the answer text matches."""
        return rules.cm_option_letter(answer_text, problem_text)

    @staticmethod
    def is_yes_no_question(text: Any) -> bool:
        """Whether the normalised answer is yes, no, true or false."""
        return rules.cm_is_yes_no(text)

    @staticmethod
    def normalize_yes_no(text: Any) -> str:
        """``yes`` / ``no`` by substring, else the normalised text."""
        return rules.cm_yes_no(text)


class AccuracyCalculator:
    """crystal-metrics' multi-format accuracy: numbers, yes/no, choices, text.

    Args:
        use_llm_grader: Ask an LLM (:class:`~crystalbench.compat.crystal_metrics.judge.LLMGrader`)
            about multi-word text mismatches; needs ``crystalbench[openai]``.
        llm_model: The grader's model name.
        base_url: The grader's OpenAI-compatible endpoint.
        numeric_relative_tolerance: Relative tolerance for numbers.
        numeric_absolute_tolerance: Absolute tolerance for numbers.
        delta: Guard against dividing by a zero gold.

    Examples:
        >>> calc = AccuracyCalculator()
        >>> r = calc.evaluate_single("Q", "", "Paris")
        >>> r.is_correct, r.match_type, r.confidence
        (True, 'exact', 0.7)
    """

    def __init__(
        self,
        use_llm_grader: bool = False,
        llm_model: str = "llama3.2",
        base_url: str = "http://localhost:11434/v1",
        numeric_relative_tolerance: float = NUMERIC_REL_TOL,
        numeric_absolute_tolerance: float = NUMERIC_ABS_TOL,
        delta: float = 1e-10,
    ) -> None:
        self.normalizer = AnswerNormalizer()
        self.use_llm_grader = use_llm_grader
        self.llm_grader: Any = None
        if use_llm_grader:
            from crystalbench.compat.crystal_metrics.judge import LLMGrader

            self.llm_grader = LLMGrader(model=llm_model, base_url=base_url)
        self.numeric_relative_tolerance = numeric_relative_tolerance
        self.numeric_absolute_tolerance = numeric_absolute_tolerance
        self.delta = delta

    def evaluate_single(
        self, question: str, predicted_answer: str, ground_truth_answer: str
    ) -> AccuracyResult:
        """Numbers -> yes/no -> choice -> exact text -> single-word mismatch -> LLM grader
        (when enabled) -> substring fallback (which credits a blank answer)."""
        judgement = rules.compat_judgement(
            predicted_answer,
            ground_truth_answer,
            question,
            relative_tolerance=self.numeric_relative_tolerance,
            absolute_tolerance=self.numeric_absolute_tolerance,
            delta=self.delta,
        )
        correct, match_type, confidence = (
            judgement.correct,
            judgement.match_type,
            judgement.confidence,
        )
        if judgement.asks_grader and self.use_llm_grader and self.llm_grader:
            correct, confidence = self.llm_grader.verify_answer(
                question, predicted_answer, ground_truth_answer
            )
            match_type = "llm_verified"
        return AccuracyResult(
            is_correct=correct,
            predicted_answer=predicted_answer,
            ground_truth_answer=ground_truth_answer,
            normalized_prediction=judgement.predicted,
            normalized_ground_truth=judgement.gold,
            match_type=match_type,
            confidence=confidence,
        )

    def evaluate_dataset(
        self,
        predictions: Mapping[Any, Mapping[str, Any]],
        ground_truth: Mapping[Any, Mapping[str, Any]],
    ) -> dict[str, Any]:
        """Accuracy over the predictions that have a ground truth, with the
        confidence-weighted accuracy, counts per ``match_type`` and one row per sample."""
        results = []
        for idx, prediction in predictions.items():
            if idx not in ground_truth:
                continue
            result = self.evaluate_single(
                prediction.get("question", ""),
                prediction.get("answer", ""),
                ground_truth[idx].get("answer", ""),
            )
            results.append(
                {
                    "sample_idx": idx,
                    "is_correct": result.is_correct,
                    "predicted": result.predicted_answer,
                    "ground_truth": result.ground_truth_answer,
                    "normalized_pred": result.normalized_prediction,
                    "normalized_gt": result.normalized_ground_truth,
                    "match_type": result.match_type,
                    "confidence": result.confidence,
                }
            )
        total = len(results)
        correct = sum(1 for row in results if row["is_correct"])
        weighted = sum(row["confidence"] for row in results if row["is_correct"])
        by_type: dict[str, dict[str, Any]] = {}
        for match_type in dict.fromkeys(row["match_type"] for row in results):
            rows = [row for row in results if row["match_type"] == match_type]
            right = sum(1 for row in rows if row["is_correct"])
            by_type[match_type] = {
                "count": len(rows),
                "correct": right,
                "accuracy": right / len(rows),
                "avg_confidence": sum(row["confidence"] for row in rows) / len(rows),
            }
        return {
            "overall_accuracy": correct / total if total > 0 else 0.0,
            "weighted_accuracy": weighted / total if total > 0 else 0.0,
            "total_samples": total,
            "correct_samples": correct,
            "type_statistics": by_type,
            "detailed_results": results,
        }
