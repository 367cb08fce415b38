"""The paper rules for multiple-choice, yes/no and free-form answers.

Numeric answers have their own module (:mod:`crystalbench.answers.numeric`); the entry
points that pick a rule are in :mod:`crystalbench.answers.scoring`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from crystalbench.answers.options import (
    gold_option_index,
    item_options,
    letter,
    resolve_choice,
)
from crystalbench.errors import InputError
from crystalbench.judges.base import Judge, JudgeRequest
from crystalbench.normalize import (
    answer_key,
    clean_answer,
    find_choice_letters,
    math_equivalent,
    parse_yes_no,
)
from crystalbench.types import AnswerType, AnswerVerdict, BenchmarkItem

__all__ = [
    "NeedsJudge",
    "free_form_verdict",
    "gold_letter",
    "gold_letter_set",
    "letter_verdict",
    "multiple_choice_verdict",
    "option_set_verdict",
    "shown",
    "yes_no_verdict",
]

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


# MARK: option letters as golds (sets of options; letters where the options are in the image)

_GOLD_LETTER = r"[(（]?\s*([A-Z])\s*[)）]?"
_GOLD_JOIN = r"\s*(?:[,，;；/&、]|\band\b|\n)\s*|\s+"
_GOLD_SET = re.compile(rf"{_GOLD_LETTER}(?:(?:{_GOLD_JOIN}){_GOLD_LETTER})+")
_GOLD_ONE = re.compile(rf"{_GOLD_LETTER}[.]?")


def gold_letter_set(gold: str) -> frozenset[str] | None:
    """The options of a gold that names several ("A, C", "B and D", "C\\nD"); ``None``
    for any other gold (one letter, text).

    Examples:
        >>> sorted(gold_letter_set("A, C")), sorted(gold_letter_set("D and B"))
        (['A', 'C'], ['B', 'D'])
        >>> gold_letter_set("C") is None, gold_letter_set("A cat") is None
        (True, True)
    """
    text = gold.strip()
    if _GOLD_SET.fullmatch(text) is None:
        return None
    letters = frozenset(re.findall(r"[A-Z]", text))
    return letters if len(letters) > 1 else None


def gold_letter(gold: str) -> str | None:
    """The option letter a gold is ("C", "(C)", "C."), ``None`` otherwise."""
    m = _GOLD_ONE.fullmatch(gold.strip())
    return m.group(1) if m is not None else None


def _named_letters(predicted: str, n_options: int | None) -> tuple[str, ...]:
    return find_choice_letters(predicted.replace("，", ",").replace("、", ","), n_options).letters


def option_set_verdict(
    predicted: str, item: BenchmarkItem, gold: frozenset[str], answer_type: AnswerType
) -> AnswerVerdict:
    """A gold naming several options: the options the answer names, compared as a set
    ("A and C" answers "A, C"; "D, B" answers "B, D"; "A" alone does not). Rule ``mc_set``.
    """
    options = item_options(item)
    named = _named_letters(predicted, len(options) or None)
    gold_text = ", ".join(sorted(gold))
    return AnswerVerdict(
        correct=bool(named) and frozenset(named) == gold,
        rule="mc_set",
        answer_type=answer_type,
        predicted=", ".join(sorted(set(named))) or None,
        gold=gold_text,
        detail=None if named else "no option letter in the answer",
    )


def letter_verdict(predicted: str, gold: str) -> AnswerVerdict | None:
    """A gold that is an option letter while the options are not in the data (they are in
    the image: LogicVista): the letter the answer names, its option text after it ignored
    ("C. There is a blue swallow" and "B) B" name C and B). Rule ``letter``; ``None`` when
    the answer names no single letter (the free-form rule decides then)."""
    named = _named_letters(predicted, None)
    if len(named) != 1:
        return None
    return AnswerVerdict(
        correct=named[0] == gold,
        rule="letter",
        answer_type="free_form",
        predicted=named[0],
        gold=gold,
    )
