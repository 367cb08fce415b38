"""Numeric answers: one number, a clock time, a range or a ratio; hedges are wrong.

The gold's shape (:func:`crystalbench.answers.answer_type.numeric_shape`) picks the rule:

- one number (rule ``numeric``, or ``symbolic`` when math-verify reads either side): the
  number the answer commits to, within ``NUMERIC_ABS_TOL`` or ``NUMERIC_REL_TOL`` of the gold;
- a clock time (``numeric_time``): the same time of day, to the minute (to the second when
  the gold has seconds); "3:30" and "15:30" agree unless both say which half of the day;
- a range (``numeric_range``): the same range, each end within ``NUMERIC_ABS_TOL`` (a
  relative band would let "1990-2000" match "1800-1900"); a single number is not a range;
- a ratio (``numeric_ratio``): the same ratio in lowest terms ("6:4" is "3:2"; "3 to 2",
  "3/2" and "1.5" read as ``1.5:1`` agree too), exactly.

An answer that commits to several values ("3 or 4", "4, maybe 5", "between 10 and 12",
"about 3 to 4", a range for a one-number gold) is wrong with rule ``numeric_hedged``.
Time, range and ratio text is never evaluated by the math verifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from crystalbench.answers.answer_type import NumericShape, gold_number
from crystalbench.answers.rules import shown
from crystalbench.defaults import NUMERIC_ABS_TOL, NUMERIC_REL_TOL
from crystalbench.errors import InputError
from crystalbench.normalize import (
    ParsedNumber,
    clean_answer,
    clocks_agree,
    committed_segment,
    has_symbolic_markup,
    numbers_close,
    parse_clock,
    parse_number,
    parse_range,
    parse_ratio,
    ratios_agree,
    read_number,
    symbolic_value,
)
from crystalbench.normalize.numbers import Token, hedge_around, locate_committed
from crystalbench.normalize.shapes import (
    NumberRange,
    find_clocks,
    find_ranges,
    find_ratios,
    format_ratio,
    looks_shaped,
)
from crystalbench.types import AnswerVerdict, BenchmarkItem

__all__ = ["numeric_verdict"]

T = TypeVar("T")


def _format_number(value: float) -> str:
    return format(value, ".10g")


def _numbers_agree(predicted: ParsedNumber, gold: ParsedNumber) -> bool:
    """Paper tolerance; when exactly one side is a percentage, either scale may match."""
    candidates = [predicted.value]
    if predicted.percent and not gold.percent:
        candidates.append(predicted.value / 100)
    elif gold.percent and not predicted.percent:
        candidates.append(predicted.value * 100)
    return any(
        numbers_close(value, gold.value, abs_tol=NUMERIC_ABS_TOL, rel_tol=NUMERIC_REL_TOL)
        for value in candidates
    )


def _hedged(hedge: str, gold: str) -> AnswerVerdict:
    return AnswerVerdict(
        correct=False,
        rule="numeric_hedged",
        answer_type="numeric",
        predicted=shown(hedge),
        gold=gold,
        detail=f"several values named ({shown(hedge)}): a hedge is wrong",
    )


_SYMBOLIC_HEDGE = re.compile(
    r"\s*,?\s+(?:or(?:\s+(?:maybe|possibly|perhaps))?|maybe|possibly|perhaps)\s+", re.I
)


def _symbolic_hedge(segment: str) -> str | None:
    """ "2\\sqrt{3} or 3\\sqrt{2}": two different values offered, in math the reader can't read."""
    parts = [part for part in _SYMBOLIC_HEDGE.split(segment) if part.strip()]
    if len(parts) < 2:
        return None
    values = []
    for part in parts:
        number = parse_number(part)
        value = number.value if number is not None else symbolic_value(part)
        if value is None:
            return None
        values.append(value)
    if all(abs(value - values[0]) <= 1e-9 * max(abs(values[0]), 1.0) for value in values):
        return None
    return segment.strip()


def _point(predicted: str, item: BenchmarkItem) -> AnswerVerdict:
    rule = "numeric"
    gold = parse_number(item.answer)
    if gold is None:
        value = gold_number(item.answer)
        if value is None:
            raise InputError(
                f"item {item.id}: gold answer {item.answer!r} is not a number or a numeric "
                "expression",
                field="answer",
            )
        gold, rule = ParsedNumber(value, False), "symbolic"
    gold_text = _format_number(gold.value)
    segment = committed_segment(predicted)
    readings: list[ParsedNumber] = []
    if has_symbolic_markup(segment):  # math our number reader cannot read: 2\\sqrt{3}, \\pi
        hedge = _symbolic_hedge(segment)
        if hedge is not None:
            return _hedged(hedge, gold_text)
        value = symbolic_value(segment)
        if value is not None:
            readings.append(ParsedNumber(value, "%" in segment))
            rule = "symbolic"
    if not readings:
        reading = read_number(predicted)
        if reading is not None:
            if reading.hedge is not None:
                return _hedged(reading.hedge, gold_text)
            readings.append(reading.number)
        if rule == "symbolic" and not looks_shaped(segment):
            value = symbolic_value(segment)  # a symbolic gold also gets math-verify's reading
            if value is not None:
                readings.append(ParsedNumber(value, "%" in segment))
    if not readings:
        return AnswerVerdict(
            correct=False,
            rule=rule,
            answer_type="numeric",
            gold=gold_text,
            detail="no number in the answer",
        )
    agreeing = [reading for reading in readings if _numbers_agree(reading, gold)]
    answer = agreeing[0] if agreeing else readings[0]
    return AnswerVerdict(
        correct=bool(agreeing),
        rule=rule,
        answer_type="numeric",
        predicted=_format_number(answer.value),
        gold=gold_text,
    )


def _shaped(
    predicted: str,
    *,
    rule: str,
    gold: T,
    gold_text: str,
    finder: Callable[[str], list[Token[T]]],
    agree: Callable[[T, T], bool],
    show: Callable[[T], str],
    what: str,
) -> AnswerVerdict:
    """One rule for times, ranges and ratios: find the committed one, refuse hedges, compare."""
    located = locate_committed(predicted, finder)
    if located is None:
        return AnswerVerdict(
            correct=False,
            rule=rule,
            answer_type="numeric",
            gold=gold_text,
            detail=f"no {what} in the answer",
        )
    hedge = hedge_around(located.region, located.tokens, located.index, agree)
    if hedge is not None:
        return _hedged(hedge, gold_text)
    answer = located.tokens[located.index].value
    return AnswerVerdict(
        correct=agree(answer, gold),
        rule=rule,
        answer_type="numeric",
        predicted=show(answer),
        gold=gold_text,
    )


def _ranges_agree(predicted: NumberRange, gold: NumberRange) -> bool:
    return all(
        numbers_close(p, g, abs_tol=NUMERIC_ABS_TOL, rel_tol=0.0)
        for p, g in ((predicted.low, gold.low), (predicted.high, gold.high))
    )


def _unreadable(item: BenchmarkItem, what: str) -> InputError:
    return InputError(f"item {item.id}: gold answer {item.answer!r} is not {what}", field="answer")


@dataclass(frozen=True)
class _Shape(Generic[T]):
    """How a gold of one shape (time, range, ratio) is read, found in an answer and compared."""

    rule: str
    what: str
    parse: Callable[[str], T | None]
    finder: Callable[[str], list[Token[T]]]
    agree: Callable[[T, T], bool]
    show: Callable[[T], str]


_SHAPES: dict[str, _Shape[Any]] = {
    "time": _Shape("numeric_time", "clock time", parse_clock, find_clocks, clocks_agree, str),
    "range": _Shape("numeric_range", "range", parse_range, find_ranges, _ranges_agree, str),
    "ratio": _Shape(
        "numeric_ratio",
        "ratio",
        lambda text: parse_ratio(text, allow_to=True),
        find_ratios,
        ratios_agree,
        format_ratio,
    ),
}


def numeric_verdict(
    predicted: str, item: BenchmarkItem, shape: NumericShape | None
) -> AnswerVerdict:
    """Score a non-blank answer against a numeric gold of the given shape.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="How many?", answer="4",
        ...                      reference_steps=[])
        >>> numeric_verdict("It is 3 or 4.", item, None).rule
        'numeric_hedged'
        >>> clock = item.model_copy(update={"answer": "3:30"})
        >>> numeric_verdict("The clock shows 15:30.", clock, "time").correct
        True
    """
    spec = _SHAPES.get(shape) if shape is not None else None
    if spec is None:
        return _point(predicted, item)
    gold = spec.parse(clean_answer(item.answer))
    if gold is None:
        raise _unreadable(item, f"a {spec.what}")
    return _shaped(
        predicted, rule=spec.rule, gold=gold, gold_text=spec.show(gold),
        finder=spec.finder, agree=spec.agree, show=spec.show, what=spec.what,
    )  # fmt: skip
