"""crystal-metrics 0.2.0's answer heuristics (``answer_rules="crystal-metrics-0.2"``).

Re-implemented from the behaviour of ``crystal_metrics/accuracy.py`` (``AnswerNormalizer``
and ``AccuracyCalculator.evaluate_single``). The quirks are deliberate: reproducing them is
the point of this mode, so that the package's published accuracies can be recomputed.
``tests/answers/test_answers.py`` checks parity with the real package. Rules are named
``compat_*``.

:func:`compat_judgement` is the whole decision with everything crystal-metrics reports
(its ``match_type`` and ``confidence`` too); :func:`compat_verdict` turns it into the
:class:`~crystalbench.types.AnswerVerdict` the scorer records, and the drop-in module
:mod:`crystalbench.compat.crystal_metrics` into crystal-metrics' own ``AccuracyResult``.

Paper mode never imports this module; :func:`crystalbench.answers.score_answer` dispatches
here when compat mode is asked for. A judge, when given, runs where crystal-metrics' LLM
grader runs (multi-word text mismatches), and a failed judge falls back to its string
matching, as the package does.

A blank answer (``""``, whitespace) is credited by crystal-metrics against every gold that is
not yes/no: its substring fallback finds ``""`` inside any text. This module
reproduces that under its own rule name, ``compat_blank``, so that a summary can count the
items it decided (:func:`compat_blank_outcome`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from crystalbench.defaults import NUMERIC_ABS_TOL, NUMERIC_REL_TOL
from crystalbench.judges.base import JudgeRequest
from crystalbench.types import AnswerType, AnswerVerdict, BenchmarkItem

__all__ = [
    "BLANK_RULE",
    "CompatJudgement",
    "CompatOutcome",
    "cm_choice_letter",
    "cm_compare_numbers",
    "cm_first_number",
    "cm_is_yes_no",
    "cm_normalize_text",
    "cm_option_letter",
    "cm_yes_no",
    "compat_blank_outcome",
    "compat_judgement",
    "compat_question",
    "compat_verdict",
]

BLANK_RULE = "compat_blank"
"""Rule name of a blank answer that crystal-metrics' substring fallback credits."""

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


def cm_normalize_text(text: object) -> str:
    """crystal-metrics' text normaliser: lower case, ASCII quotes, no punctuation but decimals.

    Examples:
        >>> cm_normalize_text("  The ‘Big’ (red) car, 3.5 m. ")
        'the big red car 3.5 m'
    """
    text = str(text).strip().lower()
    for old, new in (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'), ("`", "'")):
        text = text.replace(old, new)
    text = re.sub(r"(?<!\d)\.(?!\d)", "", text)
    text = re.sub(r"""[,()"\[\]{}']""", "", text)
    return re.sub(r"\s+", " ", text)


def cm_first_number(text: object) -> float | None:
    """The first number in the text after lead-ins such as "the answer is" are removed.

    Examples:
        >>> cm_first_number("In 2019 the value was 45"), cm_first_number("none")
        (2019.0, None)
    """
    text = str(text).strip().lower()
    for lead_in in _CM_LEAD_INS:
        text = re.sub(re.escape(lead_in) + r":?\s*", "", text, flags=re.IGNORECASE)
    first = re.search(r"-?\d+\.?\d*", text)
    return float(first.group(0)) if first else None


def cm_compare_numbers(
    predicted: float,
    gold: float,
    relative_tolerance: float = NUMERIC_REL_TOL,
    absolute_tolerance: float = NUMERIC_ABS_TOL,
    delta: float = _CM_DELTA,
) -> tuple[bool, str, float]:
    """``(correct, match_type, confidence)`` of two numbers, with crystal-metrics' extra
    leniency (``|d| < 0.01``; for answers with at most two decimals, 15 % or the rounded gold).

    Examples:
        >>> cm_compare_numbers(5.0, 5.0), cm_compare_numbers(8.0, 7.0)
        ((True, 'numeric_exact', 1.0), (True, 'numeric_rounded', 0.85))
        >>> cm_compare_numbers(5.0, 42.0)
        (False, 'numeric_mismatch', 0.0)
    """
    if predicted == gold:
        return True, "numeric_exact", 1.0
    difference = abs(predicted - gold)
    if difference <= absolute_tolerance:
        return True, "numeric_rounded", 0.95
    relative = difference / max(abs(gold), delta)
    if relative <= relative_tolerance:
        return True, "numeric_rounded", 0.9
    if difference < 0.01:
        return True, "numeric_rounded", 1.0
    if gold != 0:
        digits = str(predicted).rstrip("0").rstrip(".")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if decimals <= 2:
            if relative < 0.15:
                return True, "numeric_rounded", 0.85
            if abs(predicted - round(gold, decimals)) < 1e-6:
                return True, "numeric_rounded", 0.95
    return False, "numeric_mismatch", 0.0


def cm_option_letter(answer: object, question: str) -> str | None:
    """The letter of the ``"X) text"`` line of the question whose text the answer is (or
    contains, or is contained in, at a length ratio of at least 0.8).

    Examples:
        >>> cm_option_letter("Paris", "Capital?\\nA) London\\nB) Paris")
        'B'
    """
    target = cm_normalize_text(answer)
    for letter, option in re.findall(r"([A-Z])\)\s*([^\n]+)", question):
        text = cm_normalize_text(option)
        if target == text:
            return str(letter)
        if target in text or text in target:
            shorter, longer = sorted((len(target), len(text)))
            if longer > 0 and shorter / longer >= 0.8:
                return str(letter)
    return None


def cm_choice_letter(answer: object, question: str | None = None) -> str | None:
    """The choice letter an answer names, by crystal-metrics' patterns (no word boundary:
    "answer is blue" names B), else by option text when a question is given.

    Examples:
        >>> cm_choice_letter("(b)"), cm_choice_letter("answer is blue"), cm_choice_letter("42")
        ('B', 'B', None)
    """
    normalised = cm_normalize_text(answer)
    if len(normalised) <= 3:
        single = re.search(r"^([a-z])$", normalised)
        if single:
            return single.group(1).upper()
    for pattern in _CM_LETTER_PATTERNS:
        found = pattern.search(normalised)
        if found:
            return found.group(1).upper()
    return cm_option_letter(answer, question) if question else None


def cm_is_yes_no(text: object) -> bool:
    """Whether the normalised text is exactly yes, no, true or false.

    Examples:
        >>> cm_is_yes_no("Yes."), cm_is_yes_no("yes indeed")
        (True, False)
    """
    return cm_normalize_text(text) in ("yes", "no", "true", "false")


def cm_yes_no(text: object) -> str:
    """``yes`` or ``no`` by substring ("incorrect" holds "correct", so it reads as yes), else
    the normalised text.

    Examples:
        >>> cm_yes_no("incorrect"), cm_yes_no("I don't know"), cm_yes_no("maybe")
        ('yes', 'no', 'maybe')
    """
    normalised = cm_normalize_text(text)
    for word in ("yes", "true", "correct", "affirmative"):
        if word in normalised:
            return "yes"
    for word in ("no", "false", "incorrect", "negative"):
        if word in normalised:
            return "no"
    return normalised


class CompatJudgement(NamedTuple):
    """crystal-metrics 0.2.0's decision on one answer, with what it reports about it."""

    correct: bool
    """Its verdict from string matching (before any LLM grader)."""
    rule: str
    """Our rule name: ``compat_numeric``, ``compat_yes_no``, ``compat_choice``,
    ``compat_exact``, ``compat_single_word``, ``compat_substring`` or ``compat_blank``."""
    match_type: str
    """Its own name for the rule: ``numeric_exact``, ``numeric_rounded``,
    ``numeric_mismatch``, ``yes_no``, ``choice`` or ``exact``."""
    confidence: float
    """Its confidence in the verdict."""
    predicted: str
    """The prediction as compared (number, yes/no, letter or normalised text)."""
    gold: str
    """The gold answer as compared."""
    asks_grader: bool
    """True where crystal-metrics consults its LLM grader when one is enabled (text
    mismatches beyond a single word); ``correct`` is then its fallback."""


def compat_judgement(
    predicted: object,
    gold: object,
    question: str,
    *,
    relative_tolerance: float = NUMERIC_REL_TOL,
    absolute_tolerance: float = NUMERIC_ABS_TOL,
    delta: float = _CM_DELTA,
) -> CompatJudgement:
    """crystal-metrics 0.2.0's ``AccuracyCalculator.evaluate_single``, string rules only.

    Resolution order: numbers -> yes/no -> choice letters -> exact text -> single-word
    mismatch -> substring fallback (where its LLM grader would run when enabled).

    Args:
        predicted: The model's answer, as given (blank answers included; other types
            are read as their ``str``, as crystal-metrics does).
        gold: The gold answer.
        question: The question text its option lines (``"A) text"``) are read from.
        relative_tolerance: Its ``numeric_relative_tolerance``.
        absolute_tolerance: Its ``numeric_absolute_tolerance``.
        delta: Its guard against dividing by a zero gold.

    Examples:
        >>> compat_judgement("Yes", "no", "Q").match_type
        'yes_no'
        >>> j = compat_judgement("", "Paris", "Q")
        >>> j.correct, j.rule, j.match_type, j.confidence
        (True, 'compat_blank', 'exact', 0.7)
    """

    def result(
        correct: bool, rule: str, kind: str, confidence: float, answer: str, target: str
    ) -> CompatJudgement:
        return CompatJudgement(correct, rule, kind, confidence, answer, target, False)

    answer_number, gold_number = cm_first_number(predicted), cm_first_number(gold)
    if answer_number is not None and gold_number is not None:
        correct, kind, confidence = cm_compare_numbers(
            answer_number, gold_number, relative_tolerance, absolute_tolerance, delta
        )
        return result(
            correct, "compat_numeric", kind, confidence, str(answer_number), str(gold_number)
        )
    answer_norm, gold_norm = cm_normalize_text(predicted), cm_normalize_text(gold)
    if cm_is_yes_no(gold_norm):
        answer_yn, gold_yn = cm_yes_no(predicted), cm_yes_no(gold)
        return result(answer_yn == gold_yn, "compat_yes_no", "yes_no", 1.0, answer_yn, gold_yn)
    answer_choice, gold_choice = (
        cm_choice_letter(predicted, question),
        cm_choice_letter(gold, question),
    )
    if answer_choice is not None or gold_choice is not None:
        if answer_choice is None:
            answer_choice = cm_option_letter(predicted, question)
        if gold_choice is None:
            gold_choice = cm_option_letter(gold, question)
        if answer_choice is not None and gold_choice is not None:
            same = answer_choice == gold_choice
            return result(same, "compat_choice", "choice", 1.0, answer_choice, gold_choice)
    if answer_norm == gold_norm:
        return result(True, "compat_exact", "exact", 1.0, answer_norm, gold_norm)
    if len(gold_norm.split()) == 1 and len(answer_norm.split()) == 1:
        return result(False, "compat_single_word", "exact", 1.0, answer_norm, gold_norm)
    inside = answer_norm in gold_norm or gold_norm in answer_norm
    rule = BLANK_RULE if inside and not str(predicted).strip() else "compat_substring"
    return CompatJudgement(
        inside, rule, "exact", 0.7 if inside else 0.3, answer_norm, gold_norm, True
    )


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


_BLANK_DETAIL = (
    "blank answer credited: crystal-metrics 0.2.0's substring fallback finds '' in any gold"
)


def compat_verdict(
    predicted: str, item: BenchmarkItem, answer_type: AnswerType, *, with_judge: bool
) -> CompatOutcome:
    """crystal-metrics 0.2.0's ``evaluate_single`` for one answer.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="Is it on?", answer="yes",
        ...                      reference_steps=[])
        >>> compat_verdict("incorrect", item, "yes_no", with_judge=False).verdict.correct
        True
    """
    question = compat_question(item)
    judgement = compat_judgement(predicted, item.answer, question)
    verdict = AnswerVerdict(
        correct=judgement.correct,
        rule=judgement.rule,
        answer_type=answer_type,
        predicted=judgement.predicted,
        gold=judgement.gold,
        detail=_BLANK_DETAIL
        if judgement.rule == BLANK_RULE
        else "crystal-metrics 0.2.0 heuristics",
    )
    if not (with_judge and judgement.asks_grader):
        return CompatOutcome(verdict, None)
    return CompatOutcome(verdict, JudgeRequest(question, item.answer, predicted))


def compat_blank_outcome(
    predicted: str, item: BenchmarkItem, answer_type: AnswerType, *, with_judge: bool
) -> CompatOutcome | None:
    """What crystal-metrics makes of a blank answer (``""``, whitespace), or ``None`` where
    it is simply wrong (yes/no golds), so that it stays ``missing``.

    crystal-metrics 0.2.0 reads a blank answer through its substring fallback, and ``""``
    is inside every gold: the verdict is correct, rule ``compat_blank``. With a grader
    enabled it asks the grader first (the verdict is then the fallback), as it does.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="Q", answer="Paris",
        ...                      reference_steps=[])
        >>> compat_blank_outcome("", item, "free_form", with_judge=False).verdict.rule
        'compat_blank'
        >>> yes = BenchmarkItem(id="2", source="x", question="Q", answer="yes", reference_steps=[])
        >>> compat_blank_outcome("  ", yes, "yes_no", with_judge=False) is None
        True
    """
    outcome = compat_verdict(predicted, item, answer_type, with_judge=with_judge)
    return outcome if outcome.verdict.rule == BLANK_RULE else None
