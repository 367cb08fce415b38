"""Quantities in a step: a number with its unit, what it counts, and how it was written.

Numbers come from :func:`crystalbench.normalize.numbers.find_numbers` (the same reader the
answers use: decimals, thousands separators, fractions, ``\\frac``, percent, scientific
notation, number words). This module adds what a comparison between two steps needs:

- the **unit** after the number, converted to its dimension's base unit ("100 cm" is "1 m";
  "6 cm" and "6 degrees" are different quantities and never compared);
- the **counted noun** ("3 *apples*"), so that "2 triangles" and "3 circles" are not read as
  two values of one quantity;
- whether the number is an **index** rather than a quantity: a year ("in 2019"), a position
  ("row 2", "the 3rd bar");
- whether it is **symbolic** ("2 sqrt(3)", "9 pi": compared by value only once evaluated,
  which the guard does not do) or **approximate** ("about 3.5");
- its written **precision** ("3.46" agrees with "3.464"; "3" does not agree with "3.4").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from crystalbench.normalize.numbers import parse_number
from crystalbench.scoring.filters.guard.lexicon import (
    APPROXIMATE,
    INDEX_NOUNS,
    SCALE_WORDS,
    STOP_WORDS,
    SYMBOLIC_WORDS,
    UNITS,
    Unit,
)
from crystalbench.scoring.filters.guard.text import TextToken

__all__ = ["Quantity", "quantities_agree", "read_quantities"]

_EXACT = 99
"""Precision of a fraction or a ratio: exact."""
_MAX_UNIT_TOKENS = 3
"""Tokens a unit may span ("square units", "km / h", "degrees Celsius")."""
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number of a step, with what the comparison of two steps needs to know about it."""

    value: float
    """The value in the base unit of its dimension (a percentage keeps its face value)."""
    face: float
    """The value as written, before unit conversion ("50 km/h": 50)."""
    dimension: str
    """``angle``, ``length``, ``percent``... or ``""`` for a plain number."""
    noun: frozenset[str]
    """Stems of the words it counts ("3 shaded squares": ``{"shad", "squar"}``)."""
    decimals: int
    """Digits after the decimal point as written; 99 for a fraction; negative for a value
    written to the ten, hundred... ("12.5 thousand": -2; "about 12,500": -2)."""
    approximate: bool
    """Written with "about", "approximately", "~"..."""
    symbolic: bool
    """Part of a symbolic expression ("2 sqrt(3)", "9 pi")."""
    index: bool
    """A year, or a position ("row 2", "3rd"): it says which thing, not how much."""
    parts: tuple[float, ...]
    """Numerator and denominator of a fraction ("12.4 / 3"), else empty: a step that
    writes the division and one that writes its two values agree."""
    start: int
    """Start in the prepared text (the number)."""
    end: int
    """End in the prepared text (the number and its unit)."""

    @property
    def quantity(self) -> bool:
        """A value that can contradict another (not an index, not symbolic)."""
        return not (self.index or self.symbolic)


def _decimals(text: str) -> int:
    if "/" in text or ":" in text:
        return _EXACT
    mantissa = text.lower().split("e")[0].strip().rstrip("%").strip()
    for mark in (".", ","):
        if mark in mantissa:
            fraction = mantissa.rsplit(mark, 1)[1]
            if mark == "," and len(fraction) == 3:  # a thousands separator
                continue
            return len(fraction)
    return 0


def _unit_after(tokens: Sequence[TextToken], index: int) -> tuple[Unit | None, float, int]:
    """The unit and scale word after token ``index``: ``(unit, multiplier, last index)``."""
    last = index
    multiplier = 1.0
    if last + 1 < len(tokens) and tokens[last + 1].low in SCALE_WORDS:
        multiplier = SCALE_WORDS[tokens[last + 1].low]
        last += 1
    for width in range(_MAX_UNIT_TOKENS, 0, -1):
        window = tokens[last + 1 : last + 1 + width]
        if len(window) < width or any(t.kind in ("number", "break") for t in window):
            continue
        glued = "".join(t.text for t in window).lower()
        spaced = " ".join(t.text for t in window).lower()
        for name in (spaced, glued):
            if name in UNITS:
                after = tokens[last + width + 1] if last + width + 1 < len(tokens) else None
                generic = UNITS[name].dimension == ""
                if generic and after is not None and after.kind == "word":
                    continue  # "16 unit cells": "unit" describes the cells
                return UNITS[name], multiplier, last + width
    return None, multiplier, last


def _noun_after(tokens: Sequence[TextToken], index: int) -> frozenset[str]:
    """Stems of up to two content words right after ``index`` ("3 shaded squares")."""
    nouns: list[str] = []
    for token in tokens[index + 1 : index + 3]:
        low = token.low
        if token.kind != "word" or low in STOP_WORDS or low in SYMBOLIC_WORDS:
            break
        nouns.append(token.key)
    return frozenset(nouns)


_YEAR_LEAD = frozenset(
    [
        "in",
        "for",
        "of",
        "since",
        "from",
        "to",
        "by",
        "until",
        "till",
        "during",
        "between",
        "and",
        "year",
        "years",
        "before",
        "after",
        "around",
    ]
)


def _is_year(
    tokens: Sequence[TextToken], index: int, unit: Unit | None, noun: frozenset[str]
) -> bool:
    """A year: four digits from 1800 to 2100, no unit, and after "in", "for", "since"...,
    ending a range ("2011-2013"), or counting nothing ("There are 1800 marbles" counts
    marbles)."""
    token = tokens[index]
    previous = tokens[index - 1] if index > 0 else None
    digits = token.text.strip().lstrip("-+–")
    value = abs(token.number.value) if token.number is not None else math.nan
    plausible = unit is None and digits.isdigit() and len(digits) == 4 and 1800 <= value <= 2100
    after_year_word = previous is not None and previous.low in _YEAR_LEAD
    dash = previous is not None and previous.text in ("-", "–")
    before = tokens[index - 2] if dash and index > 1 else previous
    range_end = before is not None and before.kind == "number"
    return plausible and (after_year_word or range_end or not noun)


def _symbolic_positions(tokens: Sequence[TextToken]) -> set[int]:
    """Tokens inside a symbolic expression: ``sqrt(...)``, next to ``pi`` or ``√``."""
    marked: set[int] = set()
    for index, token in enumerate(tokens):
        if token.low in SYMBOLIC_WORDS or token.text in ("√", "π"):
            marked.update((index - 2, index - 1, index + 1))
            if index + 1 < len(tokens) and tokens[index + 1].text == "(":
                depth = 0
                for position in range(index + 1, len(tokens)):
                    text = tokens[position].text
                    depth += (text == "(") - (text == ")")
                    marked.add(position)
                    if depth == 0:
                        break
    return marked


def _one(tokens: Sequence[TextToken], index: int) -> Quantity | None:
    """A bare "one" before a noun ("one apple"); "the left one", "one of them" are not."""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None or following.kind != "word":
        return None
    low = following.low
    if low in STOP_WORDS or low in ("one", "another"):
        return None
    token = tokens[index]
    return Quantity(
        1.0, 1.0, "", frozenset({following.key}), 0, False, False, False, (), token.start, token.end
    )


def _joined(tokens: Sequence[TextToken], index: int, mark: str) -> bool:
    """Token ``index`` is followed, without spaces, by ``mark`` and another number."""
    return (
        index + 2 < len(tokens)
        and tokens[index + 1].text == mark
        and tokens[index + 2].kind == "number"
        and tokens[index + 2].number is not None
    )


def _ratio(tokens: Sequence[TextToken], index: int) -> Quantity | None:
    """A ratio or a clock ("3:2", "10:30"), one value."""
    first, second = tokens[index], tokens[index + 2]
    assert first.number is not None
    assert second.number is not None
    if tokens[index + 1].start != first.end or second.start != tokens[index + 1].end:
        return None
    if len(second.text.strip()) == 2 and first.number.value <= 24:
        value = first.number.value * 60 + second.number.value
        return Quantity(
            value,
            value,
            "clock",
            frozenset(),
            _EXACT,
            False,
            False,
            False,
            (),
            first.start,
            second.end,
        )
    if not second.number.value:
        return None
    value = first.number.value / second.number.value
    return Quantity(
        value, value, "", frozenset(), _EXACT, False, False, False, (), first.start, second.end
    )


def _power(tokens: Sequence[TextToken], index: int, symbolic: bool) -> Quantity | None:
    """A number to a number's power ("6^2"), read as its value (36)."""
    base, exponent = tokens[index], tokens[index + 2]
    assert base.number is not None
    assert exponent.number is not None
    try:
        value = base.number.value**exponent.number.value
    except (OverflowError, ZeroDivisionError):
        return None
    if not isinstance(value, float | int) or not math.isfinite(value):
        return None
    value = float(value)
    return Quantity(
        value, value, "", frozenset(), _EXACT, False, symbolic, False, (), base.start, exponent.end
    )


def _fraction_parts(text: str) -> tuple[float, ...]:
    """Numerator and denominator of a fraction as written ("12.4/3", "4 / 2"), else ()."""
    if "/" not in text:
        return ()
    top, _, bottom = text.partition("/")
    a, b = parse_number(top.strip().lstrip("$€£¥")), parse_number(bottom.strip().rstrip("%"))
    if a is None or b is None:
        return ()
    return (a.value, b.value)


def read_quantities(tokens: Sequence[TextToken]) -> list[Quantity]:
    """The quantities of a tokenised step (see
    :func:`crystalbench.scoring.filters.guard.text.tokenize`).

    Examples:
        >>> from crystalbench.scoring.filters.guard.text import tokenize, prepare_step
        >>> found = read_quantities(tokenize(prepare_step("The angle is 40 degrees; 3 apples.")))
        >>> [(q.value, q.dimension, sorted(q.noun)) for q in found]
        [(40.0, 'angle', []), (3.0, '', ['appl'])]
        >>> [q.index for q in read_quantities(tokenize("In 2019, row 2 held 45 items."))]
        [True, True, False]
        >>> [q.value for q in read_quantities(tokenize("6 - 4 = 2 and x = -3"))]
        [6.0, 4.0, 2.0, -3.0]
        >>> found = read_quantities(tokenize("6^2 = 36, AB^2 = 4 / 2"))
        >>> [(q.value, q.symbolic, q.parts) for q in found]
        [(36.0, False, ()), (36.0, False, ()), (2.0, True, ()), (2.0, False, (4.0, 2.0))]
    """
    found: list[Quantity] = []
    skip_until = -1
    symbolic_at = _symbolic_positions(tokens)
    for index, token in enumerate(tokens):
        if index <= skip_until:
            continue
        if token.kind == "word" and token.low == "one":
            one = _one(tokens, index)
            if one is not None:
                found.append(one)
            continue
        if token.kind != "number" or token.number is None:
            continue
        if _joined(tokens, index, ":"):
            ratio = _ratio(tokens, index)
            if ratio is not None:
                found.append(ratio)
                skip_until = index + 2
                continue
        if _joined(tokens, index, "^"):
            power = _power(tokens, index, index in symbolic_at)
            if power is not None:
                found.append(power)
                skip_until = index + 2
                continue
        previous = tokens[index - 1] if index > 0 else None
        exponent = (
            previous is not None
            and previous.text == "^"
            and index > 1
            and tokens[index - 2].kind == "word"
        )
        found.append(_quantity(tokens, index, exponent or index in symbolic_at))
        skip_until = _last_index(tokens, index, found[-1])
    return found


def _last_index(tokens: Sequence[TextToken], index: int, quantity: Quantity) -> int:
    last = index
    while last + 1 < len(tokens) and tokens[last + 1].start < quantity.end:
        last += 1
    return last


def _quantity(tokens: Sequence[TextToken], index: int, symbolic: bool) -> Quantity:
    """The quantity of number token ``index``: value, unit, counted noun, flags."""
    token = tokens[index]
    assert token.number is not None
    value = token.number.value
    text = token.text.strip()
    previous = tokens[index - 1] if index > 0 else None
    if text[:1] in "-+" and previous is not None:
        binary = previous.kind == "number" or previous.text in (")", "]", "°", "%")
        binary = binary or (previous.kind == "word" and previous.text.isupper())
        if binary:  # "180 - 50": subtraction, not a negative number
            value = abs(value)
    unit, multiplier, end_index = _unit_after(tokens, index)
    currency = text.lstrip("-+")[:1]
    if currency in "$€£¥" and currency:
        unit = UNITS.get(currency, unit)
    if token.number.percent:
        unit = UNITS["%"]
    face = value * multiplier
    value = face * unit.scale if unit is not None else face
    following = tokens[end_index + 1] if end_index + 1 < len(tokens) else None
    ordinal = (
        following is not None
        and following.start == token.end
        and following.low in _ORDINAL_SUFFIXES
    )
    if ordinal:
        end_index += 1
    index_noun = previous is not None and previous.kind == "word" and previous.key in INDEX_NOUNS
    approximate = (
        previous is not None
        and (previous.text.lower() in APPROXIMATE or previous.text in ("~", "≈"))
    ) or (index > 1 and tokens[index - 2].text.lower() in APPROXIMATE)
    noun = frozenset() if ordinal else _noun_after(tokens, end_index)
    decimals = _decimals(text)
    if decimals < _EXACT and multiplier != 1.0:  # "12.5 thousand": to the hundred
        decimals -= round(math.log10(multiplier))
    elif decimals == 0 and approximate and face == int(face) and face:
        # "about 12,500": to the hundred (its trailing zeros)
        decimals = -(len(str(int(abs(face)))) - len(str(int(abs(face))).rstrip("0")))
    return Quantity(
        value=value,
        face=face,
        dimension=unit.dimension if unit is not None else "",
        noun=noun,
        decimals=decimals,
        approximate=approximate,
        symbolic=symbolic,
        index=ordinal or index_noun or _is_year(tokens, index, unit, noun),
        parts=_fraction_parts(text),
        start=token.start,
        end=tokens[end_index].end,
    )


def _readings(quantity: Quantity, converted: bool) -> tuple[tuple[float, int], ...]:
    """Values the quantity may stand for, each with its written precision: a percentage is
    also its fraction (50% = 0.5; "58.5%" is 0.585 to three decimals)."""
    value = quantity.value if converted else quantity.face
    if quantity.dimension == "percent":
        return ((value, quantity.decimals), (value / 100.0, quantity.decimals + 2))
    return ((value, quantity.decimals),)


def _close(a: float, b: float, a_decimals: int, b_decimals: int, loose: bool) -> bool:
    if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
        return True
    coarser = min(a_decimals, b_decimals)
    if coarser >= _EXACT:
        return False
    if coarser != 0 or loose:  # "3.46" vs "3.464", "about 3" vs "3.2", "12.5 thousand"
        return abs(a - b) <= 0.5 * 10.0 ** (-coarser) + 1e-12
    return False


def dimensions_comparable(a: Quantity, b: Quantity) -> bool:
    """Two quantities measure the same kind of thing (a plain number compares with any
    measure; a count of things does not compare with a measure).

    Examples:
        >>> from crystalbench.scoring.filters.guard.text import tokenize
        >>> cm, deg, plain = read_quantities(tokenize("6 cm, 6 degrees, 6"))
        >>> dimensions_comparable(cm, deg), dimensions_comparable(cm, plain)
        (False, True)
    """
    if a.dimension and b.dimension:
        return a.dimension == b.dimension
    # a count of things ("two thermometers") is not a measured value ("15 °C", "58%")
    return not ((a.dimension and b.noun) or (b.dimension and a.noun))


def quantities_agree(a: Quantity, b: Quantity) -> bool:
    """The two quantities state the same value, however each is written.

    Percentages also read as fractions (``50%`` = ``0.5`` = ``1/2``); units convert within a
    dimension (``1 m`` = ``100 cm``); a value agrees with a more precise one that rounds to
    it (``3.46`` = ``3.464``; ``3`` only when written "about 3"; ``12.5 thousand`` =
    ``12,450``; ``12,500`` only when written "about 12,500").

    Examples:
        >>> from crystalbench.scoring.filters.guard.text import tokenize, prepare_step
        >>> def q(text):
        ...     return read_quantities(tokenize(prepare_step(text)))[0]
        >>> quantities_agree(q("50%"), q("1/2")), quantities_agree(q("16"), q("sixteen"))
        (True, True)
        >>> quantities_agree(q("1 m"), q("100 cm")), quantities_agree(q("40°"), q("40 degrees"))
        (True, True)
        >>> quantities_agree(q("3.46"), q("3.464")), quantities_agree(q("3"), q("3.4"))
        (True, False)
        >>> quantities_agree(q("about 3"), q("3.4")), quantities_agree(q("40°"), q("50°"))
        (True, False)
        >>> quantities_agree(q("58.5%"), q("0.585")), quantities_agree(q("58.5%"), q("60.5%"))
        (True, False)
        >>> quantities_agree(q("12.5 thousand"), q("12,450"))
        True
        >>> quantities_agree(q("12,500"), q("12,450"))
        False
        >>> quantities_agree(q("about 12,500"), q("12,450"))
        True
        >>> quantities_agree(q("about 12,500"), q("11,450"))
        False
    """
    if not dimensions_comparable(a, b):
        return False
    loose = a.approximate or b.approximate
    converted = bool(a.dimension and b.dimension)  # "1 m" / "100 cm"; else "50" / "50 km/h"
    return any(
        _close(x, y, x_decimals, y_decimals, loose)
        for x, x_decimals in _readings(a, converted)
        for y, y_decimals in _readings(b, converted)
    )
