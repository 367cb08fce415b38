"""crystal-metrics 0.2.0's answer heuristics (``answer_rules="crystal-metrics-0.2"``).

Re-implemented from the behaviour of ``crystal_metrics/accuracy.py`` (``AnswerNormalizer``
and ``AccuracyCalculator.evaluate_single``). The quirks are deliberate: reproducing them is
the point of this mode, so that the package's published accuracies can be recomputed.
``tests/answers/test_answers.py`` checks parity with the real package. Rules are named
``compat_*``.

Paper mode never imports this module; :func:`crystalbench.answers.score_answer` dispatches
here when compat mode is asked for. A judge, when given, runs where crystal-metrics' LLM
grader runs (multi-word text mismatches), and a failed judge falls back to its string
matching, as the package does.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from crystalbench.defaults import NUMERIC_ABS_TOL, NUMERIC_REL_TOL
from crystalbench.judges.base import JudgeRequest
from crystalbench.types import AnswerType, AnswerVerdict, BenchmarkItem

__all__ = ["CompatOutcome", "compat_question", "compat_verdict"]

_CM_DELTA = 1e-10
_CM_LEAD_INS = ("the answer is", "the result is", "answer", "result", "approximately", "about")
_CM_LETTER_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        r"^([a-z])\)",
        r"^\(([a-z])\)",
        r"^([a-z])\.",
        r"option\s+([a-z])",
        r"choice\s+([a-z])",
        r"answer\s+is\s+([a-z])",
        r"\(([a-z])\)",
        r"\b([a-z])\)",
    )
)


def _cm_normalize(text: str) -> str:
    text = str(text).strip().lower()
    for old, new in (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'), ("`", "'")):
        text = text.replace(old, new)
    text = re.sub(r"(?<!\d)\.(?!\d)", "", text)
    text = re.sub(r"""[,()"\[\]{}']""", "", text)
    return re.sub(r"\s+", " ", text)


def _cm_number(text: str) -> float | None:
    text = str(text).strip().lower()
    for lead_in in _CM_LEAD_INS:
        text = re.sub(re.escape(lead_in) + r":?\s*", "", text, flags=re.IGNORECASE)
    first = re.search(r"-?\d+\.?\d*", text)
    return float(first.group(0)) if first else None


def _cm_numbers_agree(predicted: float, gold: float) -> bool:
    difference = abs(predicted - gold)
    if predicted == gold or difference <= NUMERIC_ABS_TOL:
        return True
    relative = difference / max(abs(gold), _CM_DELTA)
    if relative <= NUMERIC_REL_TOL or difference < 0.01:
        return True
    if gold != 0:
        digits = str(predicted).rstrip("0").rstrip(".")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if decimals <= 2 and (relative < 0.15 or abs(predicted - round(gold, decimals)) < 1e-6):
            return True
    return False


def _cm_option_for_text(answer: str, question: str) -> str | None:
    target = _cm_normalize(answer)
    for letter, option in re.findall(r"([A-Z])\)\s*([^\n]+)", question):
        text = _cm_normalize(option)
        if target == text:
            return str(letter)
        if target in text or text in target:
            shorter, longer = sorted((len(target), len(text)))
            if longer > 0 and shorter / longer >= 0.8:
                return str(letter)
    return None


def _cm_choice(answer: str, question: str) -> str | None:
    normalised = _cm_normalize(answer)
    if len(normalised) <= 3:
        single = re.search(r"^([a-z])$", normalised)
        if single:
            return single.group(1).upper()
    for pattern in _CM_LETTER_PATTERNS:
        found = pattern.search(normalised)
        if found:
            return found.group(1).upper()
    return _cm_option_for_text(answer, question) if question else None


def _cm_yes_no(text: str) -> str:
    normalised = _cm_normalize(text)
    for word in ("yes", "true", "correct", "affirmative"):
        if word in normalised:
            return "yes"
    for word in ("no", "false", "incorrect", "negative"):
        if word in normalised:
            return "no"
    return normalised


def compat_question(item: BenchmarkItem) -> str:
    """The question text crystal-metrics would have seen for ``item``.

    The authors' inference script appends the options as ``"A) text"`` lines after a blank
    line; crystal-metrics matches option texts against such lines. Questions without a
    separate option list are used as they are.

    Examples:
        >>> compat_question(BenchmarkItem(id="1", source="x", question="Pet?",
        ...                               options=["cat", "dog"], answer="A", reference_steps=[]))
        'Pet?\\n\\nA) cat\\nB) dog'
    """
    if not item.options:
        return item.question
    lines = "\n".join(
        f"{chr(ord('A') + index)}) {option}" for index, option in enumerate(item.options)
    )
    return f"{item.question}\n\n{lines}"


class CompatOutcome(NamedTuple):
    """crystal-metrics' verdict, and the question for its LLM grader where it would ask one."""

    verdict: AnswerVerdict
    """The string-matching verdict; also the fallback when the judge fails."""
    judge_request: JudgeRequest | None
    """Set where crystal-metrics runs its grader (multi-word text mismatches) and a judge
    is configured; ``None`` when the verdict stands."""


def compat_verdict(
    predicted: str, item: BenchmarkItem, answer_type: AnswerType, *, with_judge: bool
) -> CompatOutcome:
    """crystal-metrics 0.2.0's ``evaluate_single`` for one non-blank answer.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="Is it on?", answer="yes",
        ...                      reference_steps=[])
        >>> compat_verdict("incorrect", item, "yes_no", with_judge=False).verdict.correct
        True
    """
    question = compat_question(item)
    gold_text = item.answer

    def verdict(correct: bool, rule: str, answer: str, gold: str) -> CompatOutcome:
        return CompatOutcome(
            AnswerVerdict(
                correct=correct,
                rule=rule,
                answer_type=answer_type,
                predicted=answer,
                gold=gold,
                detail="crystal-metrics 0.2.0 heuristics",
            ),
            None,
        )

    answer_number, gold_number = _cm_number(predicted), _cm_number(gold_text)
    if answer_number is not None and gold_number is not None:
        return verdict(
            _cm_numbers_agree(answer_number, gold_number),
            "compat_numeric",
            str(answer_number),
            str(gold_number),
        )
    answer_norm, gold_norm = _cm_normalize(predicted), _cm_normalize(gold_text)
    if _cm_normalize(gold_norm) in ("yes", "no", "true", "false"):
        answer_yn, gold_yn = _cm_yes_no(predicted), _cm_yes_no(gold_text)
        return verdict(answer_yn == gold_yn, "compat_yes_no", answer_yn, gold_yn)
    answer_choice, gold_choice = _cm_choice(predicted, question), _cm_choice(gold_text, question)
    if answer_choice is not None or gold_choice is not None:
        if answer_choice is None:
            answer_choice = _cm_option_for_text(predicted, question)
        if gold_choice is None:
            gold_choice = _cm_option_for_text(gold_text, question)
        if answer_choice is not None and gold_choice is not None:
            return verdict(
                answer_choice == gold_choice, "compat_choice", answer_choice, gold_choice
            )
    if answer_norm == gold_norm:
        return verdict(True, "compat_exact", answer_norm, gold_norm)
    if len(gold_norm.split()) == 1 and len(answer_norm.split()) == 1:
        return verdict(False, "compat_single_word", answer_norm, gold_norm)
    substring = verdict(
        answer_norm in gold_norm or gold_norm in answer_norm,
        "compat_substring",
        answer_norm,
        gold_norm,
    )
    if not with_judge:
        return substring
    return substring._replace(judge_request=JudgeRequest(question, gold_text, predicted))
