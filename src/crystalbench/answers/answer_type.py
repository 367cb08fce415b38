"""Answer types: from the data, or inferred from the options and the gold's shape."""

from __future__ import annotations

import re
from typing import Literal

from crystalbench.answers.options import gold_option_index, parse_embedded_options
from crystalbench.normalize import (
    clean_answer,
    has_symbolic_markup,
    normalize_text,
    parse_clock,
    parse_number,
    parse_range,
    parse_ratio,
    symbolic_value,
)
from crystalbench.normalize.shapes import looks_shaped
from crystalbench.types import AnswerType, BenchmarkItem

__all__ = ["NumericShape", "gold_number", "infer_answer_type", "numeric_shape"]

NumericShape = Literal["time", "ratio", "range"]
"""Numeric golds that are not one number: compared as what they are, never as arithmetic."""

_RATIO_QUESTION = re.compile(r"\bratios?\b|\bproportions?\b|\baspect\b|\bscale\b", re.I)


def numeric_shape(item: BenchmarkItem) -> NumericShape | None:
    """Whether the gold is a clock time, a ratio or a range (else ``None``: one number).

    - a time: ``H:MM`` (two-digit minutes, hours up to 24), ``H:MM:SS``, "3:30 pm",
      "3 pm", "3 o'clock";
    - a ratio: numbers joined by colons that are not a time ("3:2", "1:4", "16:9",
      "1:2:3"); when the question asks for a ratio (it says "ratio", "proportion", "aspect"
      or "scale") a time-like "12:15" and "3 to 2" are ratios too;
    - a range: two numbers joined by a dash, "to" or "between ... and" ("25-30",
      "1990–2000", "10 to 12 cm").

    Examples:
        >>> def item(answer, question="Q?"):
        ...     return BenchmarkItem(id="1", source="x", question=question, answer=answer,
        ...                          reference_steps=[])
        >>> [numeric_shape(item(a)) for a in ("3:30", "3:2", "25-30", "12")]
        ['time', 'ratio', 'range', None]
        >>> numeric_shape(item("12:15", "What is the ratio of boys to girls?"))
        'ratio'
    """
    gold = clean_answer(item.answer)
    asks_ratio = bool(_RATIO_QUESTION.search(item.question))
    if not re.search(r"\d", gold):
        return "time" if parse_clock(gold) is not None else None
    if parse_clock(gold) is not None and not asks_ratio:
        return "time"
    if parse_ratio(gold, allow_to=asks_ratio) is not None:
        return "ratio"
    if parse_range(gold) is not None:
        return "range"
    return None


def _is_yes_no_gold(gold: str) -> bool:
    return normalize_text(gold) in {"yes", "no", "true", "false"}


def gold_number(gold: str) -> float | None:
    """The value of a numeric gold ("1,234", "3/4", "2\\sqrt{3}", "seven"), else ``None``."""
    number = parse_number(gold)
    if number is not None:
        return number.value
    cleaned = clean_answer(gold)
    if re.search(r"\d|\\pi|π", gold) and (
        has_symbolic_markup(cleaned) or not looks_shaped(cleaned)
    ):
        return symbolic_value(cleaned, prose=False)
    return None


def infer_answer_type(item: BenchmarkItem) -> AnswerType:
    """The answer type of ``item``: from the data when given, else inferred.

    Inference, in order: options given -> ``multiple_choice``; options embedded in the
    question and the gold names one of them -> ``multiple_choice``; the gold is a clock
    time, a ratio or a range (see :func:`numeric_shape`) -> ``numeric``; the gold is a
    number or a numeric expression ("1,234", "3/4", "45^\\circ", "2\\sqrt{3}", "seven") ->
    ``numeric``; the gold is yes/no/true/false -> ``yes_no``; otherwise ``free_form``.

    Examples:
        >>> def item(answer, question="Q?", options=()):
        ...     return BenchmarkItem(id="1", source="x", question=question, answer=answer,
        ...                          options=list(options), reference_steps=[])
        >>> infer_answer_type(item("B", options=["cat", "dog"]))
        'multiple_choice'
        >>> infer_answer_type(item("A", question="Side?\\nA. Left\\nB. Right"))
        'multiple_choice'
        >>> infer_answer_type(item(r"2\\sqrt{3}")), infer_answer_type(item("No"))
        ('numeric', 'yes_no')
        >>> infer_answer_type(item("3:30")), infer_answer_type(item("25-30"))
        ('numeric', 'numeric')
        >>> infer_answer_type(item("a red umbrella"))
        'free_form'
    """
    if item.answer_type is not None:
        return item.answer_type
    if item.options:
        return "multiple_choice"
    embedded = parse_embedded_options(item.question)
    if embedded and gold_option_index(item.answer, embedded) is not None:
        return "multiple_choice"
    if numeric_shape(item) is not None or gold_number(item.answer) is not None:
        return "numeric"
    if _is_yes_no_gold(item.answer):
        return "yes_no"
    return "free_form"
