"""The paper rules for multiple-choice, yes/no and free-form answers.

Numeric answers have their own module (:mod:`crystalbench.answers.numeric`); the entry
points that pick a rule are in :mod:`crystalbench.answers.scoring`.
"""

from __future__ import annotations

from typing import NamedTuple

from crystalbench.answers.options import (
    gold_option_index,
    item_options,
    letter,
    resolve_choice,
)
from crystalbench.errors import InputError
from crystalbench.judges.base import Judge, JudgeRequest
from crystalbench.normalize import answer_key, clean_answer, math_equivalent, parse_yes_no
from crystalbench.types import AnswerType, AnswerVerdict, BenchmarkItem

__all__ = ["NeedsJudge", "free_form_verdict", "multiple_choice_verdict", "shown", "yes_no_verdict"]

_SHOWN_CHARS = 200
"""Longest normalised answer text kept in a verdict (the raw answer is stored elsewhere)."""


def shown(text: str) -> str:
    """``text`` cut to the length a verdict keeps."""
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


class NeedsJudge(NamedTuple):
    """A verdict the rules could not reach: ask the judge, else use ``fallback``."""

    request: JudgeRequest
    answer_type: AnswerType
    predicted: str
    gold: str
    fallback: AnswerVerdict
    """Verdict when the judge fails (paper: unscored; compat: substring fallback)."""


def multiple_choice_verdict(predicted: str, item: BenchmarkItem) -> AnswerVerdict:
    """Both sides resolve to an option (letter, text or value); correct iff they agree.

    Rules: ``mc_letter``, ``mc_text``, ``mc_value`` (resolved by the option's value),
    ``mc_ambiguous`` (a hedge over several options), ``mc_unresolved``.
    """
    options = item_options(item)
    gold_index = gold_option_index(item.answer, options)
    if gold_index is None or (options and gold_index >= len(options)):
        raise InputError(
            f"item {item.id}: gold answer {item.answer!r} is neither an option letter nor "
            f"one of the options {options!r}",
            field="answer",
        )
    resolution = resolve_choice(predicted, options)
    gold = letter(gold_index)
    if resolution.option is None:
        rule = "mc_ambiguous" if resolution.how == "ambiguous" else "mc_unresolved"
        return AnswerVerdict(
            correct=False,
            rule=rule,
            answer_type="multiple_choice",
            predicted=None,
            gold=gold,
            detail=resolution.detail,
        )
    return AnswerVerdict(
        correct=resolution.option == gold_index,
        rule={"letter": "mc_letter", "value": "mc_value"}.get(resolution.how, "mc_text"),
        answer_type="multiple_choice",
        predicted=letter(resolution.option),
        gold=gold,
        detail=resolution.detail,
    )


def yes_no_verdict(predicted: str, item: BenchmarkItem) -> AnswerVerdict:
    """The committed yes/no word against the gold's; abstentions and hedges are wrong."""
    gold = parse_yes_no(item.answer)
    if gold is None:
        raise InputError(
            f"item {item.id}: gold answer {item.answer!r} is not yes or no", field="answer"
        )
    answer = parse_yes_no(predicted)
    return AnswerVerdict(
        correct=answer == gold,
        rule="yes_no",
        answer_type="yes_no",
        predicted=answer,
        gold=gold,
        detail=None if answer is not None else "no yes/no answer (absent, hedged or abstained)",
    )


def free_form_verdict(
    predicted: str, item: BenchmarkItem, judge: Judge | None
) -> AnswerVerdict | NeedsJudge:
    """Exact match of the answer keys (accents folded, a one-letter answer kept), then
    math-verify for LaTeX golds, then the judge when one is configured."""
    gold = answer_key(item.answer)
    answer = answer_key(predicted)
    matched = answer == gold and (answer or clean_answer(predicted) == clean_answer(item.answer))
    answer = shown(answer)
    if matched:
        return AnswerVerdict(
            correct=True, rule="exact", answer_type="free_form", predicted=answer, gold=gold
        )
    if math_equivalent(predicted, item.answer):
        return AnswerVerdict(
            correct=True, rule="symbolic", answer_type="free_form", predicted=answer, gold=gold
        )
    if judge is None:
        return AnswerVerdict(
            correct=False, rule="exact", answer_type="free_form", predicted=answer, gold=gold
        )
    return NeedsJudge(
        request=JudgeRequest(item.question, item.answer, predicted),
        answer_type="free_form",
        predicted=answer,
        gold=gold,
        fallback=AnswerVerdict(
            correct=None, rule="judge_failed", answer_type="free_form", predicted=answer, gold=gold
        ),
    )
