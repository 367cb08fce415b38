"""Copies with a slot changed: a predicted step that is a reference step with a value, a name or
a relation word replaced.

The pair rules veto one pair at a time, and greedy matching then goes on to the next best
pair: a step that copies "The bar for Chile shows a value of 12,450." with 11,450 is vetoed
against it and goes on to match "The bar for Peru shows a value of 8,120." or "The highest
bar is Chile with 12,450 arrivals.". Read as text, though, the step is plainly the Chile step
with its value changed: it states a wrong fact, and a wrong fact should match nothing. Under
both guards such a step is blocked for the whole item
(:func:`copied_with_a_wrong_fact`; the engine's
:class:`~crystalbench.scoring.filters.guard.candidates.GuardFilter` and the plain definition
:func:`crystalbench.scoring.filters.guard.veto_copied_steps` use it).

A predicted step is a **copy** of a reference step (:func:`copy_of`) when their words are the
same and in the same order, and either

- only values differ (any number of them: "The difference is 11,450 - 3,900 = 7,550." is
  "The difference is 12,450 - 3,200 = 9,250." with its three values changed), or
- one stretch of one or two words differs, with no value in it ("Peru" for "Chile",
  "lowest" for "highest", "left" for "right"), and at least three words around it are the
  same.

The copy states a wrong fact when the guard's rules find a clash between it and the step it
copies. It is not blocked when it is also a copy, with values only, of a reference step it
agrees with ("Row 2 has 3 cells." copies both "Row 1 has 2 cells." and "Row 2 has 3 cells.";
"The value is 12450." copies "The value is 12,450."): a correct restatement of another
reference step.

Pure: no I/O, no model; the word reading is cached by text.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from crystalbench.normalize.numbers import parse_number
from crystalbench.scoring.filters.guard.lexicon import (
    COLOUR_FAMILIES,
    COMPARATIVES,
    ORDINALS,
    POSITIONS,
    PREPOSITIONS,
    STATES,
    SUPERLATIVES,
    TEMPORAL,
)
from crystalbench.scoring.filters.guard.records import Conflict, ConflictSpans, TextSpan
from crystalbench.scoring.filters.guard.text import stem

__all__ = ["copied_with_a_wrong_fact", "copy_of", "same_words", "slot_conflict"]

_TOKEN = re.compile(
    r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|[-+]?\d+(?:\.\d+)?%?|[^\W\d_]+(?:'[^\W\d_]+)?|[^\w\s]"
)
_VALUE = "\x00#"
"""What a value is read as in a step's words (its written form is kept beside)."""
_MAX_SLOT = 2
"""Words a changed slot may span ("South Africa" for "Chile")."""
_MIN_KEPT = 3
"""Words a one-slot copy keeps around the slot."""
_STATE_STEMS = {stem(word): readings for word, readings in STATES.items() if "_" not in word}


class _Words:
    """A step read as words: lower-cased, values as one mark; the values as written; each
    word's span in the step and whether it is capitalised inside the sentence."""

    __slots__ = ("capital", "spans", "text", "values", "words")

    def __init__(self, text: str) -> None:
        words: list[str] = []
        values: list[str] = []
        spans: list[tuple[int, int]] = []
        capital: list[bool] = []
        for match in _TOKEN.finditer(text):
            token = match.group(0)
            if token[-1].isdigit() or token.endswith("%"):
                words.append(_VALUE)
                values.append(token.replace(",", ""))
            else:
                words.append(token.lower())
            spans.append(match.span())
            capital.append(bool(spans[:-1]) and token[:1].isupper())
        while words and words[-1] in (".", "!", ";"):
            words.pop()
        self.text = text
        self.words = tuple(words)
        self.values = tuple(values)
        self.spans = tuple(spans)
        self.capital = tuple(capital)


@functools.lru_cache(maxsize=1 << 16)
def _read(text: str) -> _Words:
    return _Words(text)


def same_words(pred_step: str, ref_step: str) -> bool:
    """The two steps have the same words in the same order, values aside.

    Examples:
        >>> same_words("The value is 12450.", "The value is 12,450.")
        True
        >>> same_words("The bar for Peru shows 8,120.", "The bar for Chile shows 8,120.")
        False
    """
    return _read(pred_step).words == _read(ref_step).words


def _slot(a: _Words, b: _Words) -> tuple[int, int, int] | None:
    """Where one stretch of words differs: ``(start, end in a, end in b)``, or None when the
    steps differ in more than one stretch of at most two words (or not at all)."""
    if abs(len(a.words) - len(b.words)) > _MAX_SLOT - 1:
        return None
    start = 0
    shorter = min(len(a.words), len(b.words))
    while start < shorter and a.words[start] == b.words[start]:
        start += 1
    end = 0
    while end < shorter - start and a.words[-1 - end] == b.words[-1 - end]:
        end += 1
    slot_a, slot_b = a.words[start : len(a.words) - end], b.words[start : len(b.words) - end]
    if not slot_a or not slot_b or len(slot_a) > _MAX_SLOT or len(slot_b) > _MAX_SLOT:
        return None
    if _VALUE in slot_a or _VALUE in slot_b:
        return None  # a value and a word changed: two slots
    if any(not word[0].isalpha() for word in (*slot_a, *slot_b)):
        return None  # punctuation: another sentence shape
    if a.values != b.values or start + end < _MIN_KEPT:
        return None  # a word and a value changed: two slots
    return start, len(a.words) - end, len(b.words) - end


def copy_of(pred_step: str, ref_step: str) -> bool:
    """``pred_step`` is ``ref_step`` with its values, or one slot of one or two words,
    changed (see the module docstring).

    Examples:
        >>> copy_of("The difference is 11,450 - 3,900 = 7,550.",
        ...         "The difference is 12,450 - 3,200 = 9,250.")
        True
        >>> copy_of("The bar for Peru shows a value of 12,450.",
        ...         "The bar for Chile shows a value of 12,450.")
        True
        >>> copy_of("The bar for Chile shows a value of 12,450.",
        ...         "The bar for Chile shows a value of 12,450.")
        False
        >>> copy_of("Row 2 contains 3 cells.", "Row 1 has 2 cells.")
        False
        >>> copy_of("The highest bar is Chile.", "The bar for Chile is the highest one.")
        False
    """
    a, b = _read(pred_step), _read(ref_step)
    if a.words == b.words:
        return a.values != b.values
    return _slot(a, b) is not None


def _number(written: str) -> tuple[float, int] | None:
    parsed = parse_number(written)
    if parsed is None:
        return None
    mantissa = written.rstrip("%")
    decimals = len(mantissa.rsplit(".", 1)[1]) if "." in mantissa else 0
    return parsed.value, decimals


def _values_differ(a: str, b: str) -> bool:
    """Two values written in one place differ, beyond the precision of the coarser
    ("3.46" / "3.464" agree; "40" / "40.0" agree; "12" / "13" differ)."""
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return a != b
    if math.isclose(x[0], y[0], rel_tol=1e-9, abs_tol=1e-12):
        return False
    coarser = min(x[1], y[1])
    return coarser == 0 or abs(x[0] - y[0]) > 0.5 * 10.0 ** (-coarser) + 1e-12


def _readings(word: str) -> tuple[Any, ...]:
    return (
        COMPARATIVES.get(word, ())
        + SUPERLATIVES.get(word, ())
        + PREPOSITIONS.get(word, ())
        + _STATE_STEMS.get(stem(word), ())
    )


def _opposed(a: str, b: str) -> bool:
    """Two relation words of one dimension with different poles ("highest" / "lowest",
    "rises" / "falls", "open" / "closed")."""
    return any(x.dimension == y.dimension and x.value != y.value
               for x in _readings(a) for y in _readings(b))  # fmt: skip


def _names_a_thing(words: _Words, start: int, end: int) -> bool:
    """The words name which thing: a name (capitalised inside the sentence), a label, an
    ordinal, a day or month."""
    for position in range(start, end):
        word = words.words[position]
        if not (words.capital[position] or word in ORDINALS or word in TEMPORAL):
            return False
    return True


def slot_conflict(pred_step: str, ref_step: str) -> Conflict | None:
    """What a copy's changed slot says wrong, read from the words alone (for the copies the
    rules find compatible): a value written in the same place that differs (``sqrt(13)`` /
    ``sqrt(12)``, ``4/2`` / ``3/2``: values the number rule does not compare), a relation
    word for its opposite (``relation``: "rises" / "falls", "open" / "closed"), a position
    for another (``relation``: "the *right* side" / "the *left* side"), a colour for another
    (``colour``), or a thing named for another (``entity``: "Peru" / "Fiji", "AC" / "AB",
    "the *second* row" / "the *first* row").

    Examples:
        >>> slot_conflict("Taking the root gives AM = sqrt(13).",
        ...               "Taking the root gives AM = sqrt(12).").reason
        'number'
        >>> slot_conflict("The bar for Peru ends at 58.5%.",
        ...               "The bar for Fiji ends at 58.5%.").reason
        'entity'
        >>> slot_conflict("The right side is labelled 8.", "The left side is labelled 8.").reason
        'relation'
        >>> slot_conflict("The bar for Chile displays 8.", "The bar for Chile shows 8.") is None
        True
    """
    a, b = _read(pred_step), _read(ref_step)
    if a.words == b.words:
        values_at = [k for k, word in enumerate(a.words) if word == _VALUE]
        for index, (x, y) in enumerate(zip(a.values, b.values, strict=True)):
            if _values_differ(x, y):
                position = values_at[index]
                return _conflict("number", a, b, position, position + 1, position + 1)
        return None
    slot = _slot(a, b)
    if slot is None:
        return None
    start, end_a, end_b = slot
    words_a, words_b = a.words[start:end_a], b.words[start:end_b]
    if len(words_a) == len(words_b) == 1:
        x, y = words_a[0], words_b[0]
        if _opposed(x, y) or (x in POSITIONS and y in POSITIONS and POSITIONS[x] != POSITIONS[y]):
            return _conflict("relation", a, b, start, end_a, end_b)
        if (
            x in COLOUR_FAMILIES
            and y in COLOUR_FAMILIES
            and not (set(COLOUR_FAMILIES[x]) & set(COLOUR_FAMILIES[y]))
        ):
            return _conflict("colour", a, b, start, end_a, end_b)
    if _names_a_thing(a, start, end_a) and _names_a_thing(b, start, end_b):
        return _conflict("entity", a, b, start, end_a, end_b)
    return None


def _conflict(reason: Any, a: _Words, b: _Words, start: int, end_a: int, end_b: int) -> Conflict:
    def span(words: _Words, text: str, end: int) -> TextSpan:
        first, last = words.spans[start][0], words.spans[end - 1][1]
        return TextSpan(start=first, end=last, text=text[first:last])

    return Conflict(
        reason=reason,
        spans=ConflictSpans(pred=span(a, a.text, end_a), ref=span(b, b.text, end_b)),
    )


Decide = Callable[[str, str], Any]
"""The guard's verdict on a pair ``(pred_step, ref_step)``: a conflict, or None."""


def copied_with_a_wrong_fact(
    pred_steps: Sequence[str], ref_steps: Sequence[str], decide: Decide
) -> dict[int, tuple[int, Any]]:
    """The predicted steps that copy a reference step with a changed slot stating a wrong
    fact: ``{pred index: (ref index, conflict)}`` (the first such reference step).

    Args:
        pred_steps: The predicted steps.
        ref_steps: The reference steps of one chain.
        decide: The guard's verdict on one pair (a conflict or None); asked only about
            copies.

    Examples:
        >>> from crystalbench.scoring.filters.guard import FactGuard
        >>> refs = ["The bar for Chile shows a value of 12,450.",
        ...         "The bar for Peru shows a value of 8,120."]
        >>> preds = ["The bar for Chile shows a value of 11,450.",
        ...          "The bar for Peru shows a value of 8120."]
        >>> found = copied_with_a_wrong_fact(preds, refs, FactGuard().check)
        >>> {i: (j, conflict.reason) for i, (j, conflict) in found.items()}
        {0: (0, 'number')}
    """
    blocked: dict[int, tuple[int, Any]] = {}
    ref_words = [_read(step).words for step in ref_steps]
    for i, pred_step in enumerate(pred_steps):
        if pred_step in ref_steps:
            continue
        words = _read(pred_step).words
        found: tuple[int, Any] | None = None
        agrees = False
        for j, ref_step in enumerate(ref_steps):
            if not copy_of(pred_step, ref_step):
                if ref_words[j] == words:  # the same values written otherwise
                    agrees = True
                    break
                continue
            conflict = decide(pred_step, ref_step) or slot_conflict(pred_step, ref_step)
            if conflict is None:
                if ref_words[j] == words:
                    agrees = True
                    break
            elif found is None:
                found = (j, conflict)
        if found is not None and not agrees:
            blocked[i] = found
    return blocked
