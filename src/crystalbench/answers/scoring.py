"""Entry points: pick the rule for each item, run the judge where one is needed.

This is the single place where paper mode and compat mode part: with
``compat="crystal-metrics-0.2"`` the answer goes to :mod:`crystalbench.answers.compat`,
otherwise to the paper rules.
"""

from __future__ import annotations

from collections.abc import Sequence

import crystalbench.answers.compat as compat_answers
from crystalbench.answers.answer_type import infer_answer_type, numeric_shape
from crystalbench.answers.numeric import numeric_verdict
from crystalbench.answers.rules import (
    NeedsJudge,
    free_form_verdict,
    gold_letter,
    gold_letter_set,
    letter_verdict,
    multiple_choice_verdict,
    option_set_verdict,
    yes_no_verdict,
)
from crystalbench.defaults import COMPAT_CRYSTAL_METRICS, COMPAT_MODES
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.judges.base import Judge, JudgeVerdict, judge_many
from crystalbench.types import AnswerType, AnswerVerdict, BenchmarkItem

__all__ = ["score_answer", "score_answers"]


def _check_compat(compat: str | None) -> bool:
    if compat is None or compat == "none":
        return False
    if compat == COMPAT_CRYSTAL_METRICS:
        return True
    raise UnknownNameError("compat mode", compat, COMPAT_MODES)


def _compat(
    predicted: str, item: BenchmarkItem, answer_type: AnswerType, judge: Judge | None
) -> AnswerVerdict | NeedsJudge | None:
    """The compat verdict; ``None`` for a blank answer crystal-metrics does not credit."""
    with_judge = judge is not None
    if predicted.strip():
        outcome = compat_answers.compat_verdict(predicted, item, answer_type, with_judge=with_judge)
    else:
        blank = compat_answers.compat_blank_outcome(
            predicted, item, answer_type, with_judge=with_judge
        )
        if blank is None:
            return None
        outcome = blank
    if outcome.judge_request is None:
        return outcome.verdict
    return NeedsJudge(
        request=outcome.judge_request,
        answer_type=answer_type,
        predicted=outcome.verdict.predicted or "",
        gold=outcome.verdict.gold or "",
        fallback=outcome.verdict,
    )


_LETTER_TYPES = frozenset({"multiple_choice", "free_form"})


def _rules(
    predicted: str | None, item: BenchmarkItem, judge: Judge | None, compat: str | None
) -> AnswerVerdict | NeedsJudge:
    use_compat = _check_compat(compat)
    answer_type = infer_answer_type(item)
    if not item.answer.strip():
        raise InputError(f"item {item.id}: empty gold answer", field="answer")
    if use_compat and predicted is not None:
        # None: a blank answer crystal-metrics does not credit (it credits most: compat_blank)
        outcome = _compat(predicted, item, answer_type, judge)
        if outcome is not None:
            return outcome
    if predicted is None or not predicted.strip():
        return AnswerVerdict(
            correct=False,
            rule="missing",
            answer_type=answer_type,
            gold=item.answer,
            detail="no answer",
        )
    gold_set = gold_letter_set(item.answer) if answer_type in _LETTER_TYPES else None
    if gold_set is not None:  # "A, C": several options, compared as a set
        return option_set_verdict(predicted, item, gold_set, answer_type)
    if answer_type == "multiple_choice":
        return multiple_choice_verdict(predicted, item)
    if answer_type == "free_form":
        letter = gold_letter(item.answer)
        if letter is not None:  # an option letter with the options in the image
            exact = free_form_verdict(predicted, item, None)
            verdict = letter_verdict(predicted, letter)
            if verdict is not None and verdict.correct and not exact.correct:  # type: ignore[union-attr]
                return verdict  # "C. There is a blue swallow" names C
    if answer_type == "numeric":
        return numeric_verdict(predicted, item, numeric_shape(item))
    if answer_type == "yes_no":
        return yes_no_verdict(predicted, item)
    return free_form_verdict(predicted, item, judge)


def _apply_judge(pending: NeedsJudge, verdict: JudgeVerdict) -> AnswerVerdict:
    if verdict.correct is None:
        reason = f"judge failed: {verdict.error or 'no verdict'}"
        return pending.fallback.model_copy(update={"detail": reason})
    return AnswerVerdict(
        correct=verdict.correct,
        rule="judge",
        answer_type=pending.answer_type,
        predicted=pending.predicted,
        gold=pending.gold,
        detail=verdict.reason,
    )


def score_answer(
    predicted: str | None,
    item: BenchmarkItem,
    *,
    judge: Judge | None = None,
    compat: str | None = None,
) -> AnswerVerdict:
    """Decide whether ``predicted`` answers ``item`` correctly.

    Args:
        predicted: The model's extracted final answer (may be a sentence); ``None`` or
            blank counts as missing (wrong).
        item: The benchmark item (gold answer, options, answer type).
        judge: Decides free-form mismatches; without one they are wrong.
        compat: ``None`` (paper rules) or ``"crystal-metrics-0.2"``.

    Returns:
        The verdict: ``correct`` (``None`` when the judge failed), the deciding ``rule``,
        the type, and the normalised values compared.

    Raises:
        InputError: The gold answer cannot be read as the item's answer type.
        UnknownNameError: Unknown compat mode.

    Examples:
        >>> item = BenchmarkItem(id="7", source="mathvision", question="Which?",
        ...                      options=["3", "4", "5"], answer="B", reference_steps=[])
        >>> score_answer("The answer is (B).", item).correct
        True
        >>> score_answer("answer is blue", item).rule
        'mc_unresolved'
        >>> plot = BenchmarkItem(id="8", source="plotqa", question="Max?", answer="1,234",
        ...                      reference_steps=[])
        >>> score_answer("In 2019 it peaked at 1240", plot).correct
        True
    """
    outcome = _rules(predicted, item, judge, compat)
    if isinstance(outcome, AnswerVerdict):
        return outcome
    assert judge is not None  # NeedsJudge only arises with a judge
    try:
        verdict = judge.judge(*outcome.request)
    except Exception as error:  # a judge must not raise; never let one stop scoring
        verdict = JudgeVerdict(correct=None, error=f"{type(error).__name__}: {error}")
    return _apply_judge(outcome, verdict)


def score_answers(
    predicted: Sequence[str | None],
    items: Sequence[BenchmarkItem],
    *,
    judge: Judge | None = None,
    compat: str | None = None,
    max_workers: int = 8,
) -> list[AnswerVerdict]:
    """:func:`score_answer` over many items; the judge calls go out together, concurrently.

    Examples:
        >>> items = [BenchmarkItem(id=str(i), source="x", question="?", answer=a,
        ...                        reference_steps=[]) for i, a in enumerate(["yes", "12"])]
        >>> [v.correct for v in score_answers(["Yes.", "12.3"], items)]
        [True, True]
    """
    if len(predicted) != len(items):
        raise ValueError(f"{len(predicted)} answers for {len(items)} items")
    outcomes = [
        _rules(answer, item, judge, compat) for answer, item in zip(predicted, items, strict=True)
    ]
    pending = [outcome for outcome in outcomes if isinstance(outcome, NeedsJudge)]
    if pending:
        assert judge is not None
        verdicts = judge_many(
            judge, [outcome.request for outcome in pending], max_workers=max_workers
        )
        answered = iter(verdicts)
        outcomes = [
            _apply_judge(outcome, next(answered)) if isinstance(outcome, NeedsJudge) else outcome
            for outcome in outcomes
        ]
    return [outcome for outcome in outcomes if isinstance(outcome, AnswerVerdict)]
