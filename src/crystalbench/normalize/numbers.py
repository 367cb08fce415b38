"""Numbers in answer text: reading one, finding the one a model commits to, hedges.

Spellings read: signs, decimals, thousands separators ("1,234"; "1 234" with a space or a
thin space), a decimal comma ("3,5", "12,75 cm"), fractions (``3/4``, ``\\frac{3}{4}``), mixed
numbers ("1 1/2", ``3 \\frac{1}{2}``, "1½"), percent, degrees, scientific notation, a
currency sign, trailing unit words, and numbers in words ("seven", "twenty-one",
"minus 3"; see :mod:`crystalbench.normalize.number_words`).

A comma is a decimal comma only in digits, a comma and one or two digits, with no other
comma group and no bracket closing right after it ("3,5" is 3.5; "1,234" is 1234; "3,5,7" and
"(2,3)" are lists). A point is always a decimal point. A space separates thousands only
between groups of exactly three digits after a first group of one to three ("1 234 567").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from crystalbench.normalize.extraction import _EQUALS, answer_tail, extract_boxed
from crystalbench.normalize.latex import has_symbolic_markup, prepare_math
from crystalbench.normalize.number_words import words_to_digits

__all__ = [
    "NumberReading",
    "ParsedNumber",
    "Token",
    "extract_number",
    "find_numbers",
    "hedge_around",
    "locate_committed",
    "numbers_close",
    "parse_number",
    "read_number",
]


class ParsedNumber(NamedTuple):
    """A number read from text."""

    value: float
    """The value (a percentage keeps its face value: "50%" is 50.0)."""
    percent: bool
    """True when the number carried a percent sign."""


_NUM = (
    r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 1,234 and 1,234.5
    r"|\d{1,3}(?: \d{3})+(?![\d/])(?:[.,]\d+)?"  # 1 234 (a space or thin space)
    r"|\d+,\d{1,2}(?![\d,])(?!\s*[)\]])"  # 3,5 and 12,75 (a decimal comma)
    r"|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
)
_NUMBER = re.compile(
    rf"(?<![\w.%°])(?P<sign>[-+])?(?:[$€£¥]\s?)?(?P<num>{_NUM})"
    rf"(?:\s*/\s*(?P<den_sign>[-+])?(?P<den>{_NUM}))?(?P<percent>\s*%)?"
)
_UNIT_WORDS = r"(?:\s*[A-Za-zµΩ°][\w/^²³·.\-]*){0,3}"
_STRICT_HEAD = (
    rf"\s*(?:[$€£¥]\s*)?(?P<sign>[-+])?\s*(?:[$€£¥]\s*)?(?P<num>{_NUM})"
    rf"(?:\s*/\s*(?P<den_sign>[-+])?(?P<den>{_NUM}))?"
    rf"\s*(?P<percent>%)?\s*°?"
)
_STRICT_NUMBER = re.compile(rf"{_STRICT_HEAD}{_UNIT_WORDS}\s*\.?\s*")
_STRICT_BARE = re.compile(rf"{_STRICT_HEAD}\s*\.?\s*")
"""A number spelled in words must stand alone to count ("Seven Samurai" is a title)."""
_MIXED = re.compile(r"(?<![\w.,/])(?P<whole>\d{1,3})\s+(?P<num>\d+)\s*/\s*(?P<den>\d+)(?![\w.,/])")


def _mixed_numbers(text: str) -> str:
    """ "1 1/2" -> "3/2" (the fraction must be proper; the whole part has 1 to 3 digits)."""

    def rewrite(match: re.Match[str]) -> str:
        whole, num, den = int(match["whole"]), int(match["num"]), int(match["den"])
        if not 0 < num < den:
            return match.group(0)
        return f"{whole * den + num}/{den}"

    return _MIXED.sub(rewrite, text)


def numeric_text(text: str) -> str:
    """Prepared text with number words and mixed numbers rewritten (see the module notes)."""
    return _mixed_numbers(words_to_digits(text))


def _to_float(number: str) -> float:
    mantissa, marker, exponent = number.replace(" ", "").lower().partition("e")
    if re.fullmatch(r"\d+,\d{1,2}", mantissa):  # a decimal comma
        mantissa = mantissa.replace(",", ".")
    return float(mantissa.replace(",", "") + marker + exponent)


def _number_from_match(match: re.Match[str]) -> ParsedNumber | None:
    value = _to_float(match["num"])
    if match["den"] is not None:
        denominator = _to_float(match["den"])
        if denominator == 0:
            return None
        value /= denominator
        if match["den_sign"] == "-":
            value = -value
    if match["sign"] == "-":
        value = -value
    if not math.isfinite(value):
        return None
    return ParsedNumber(value, match["percent"] is not None)


def parse_number(text: str) -> ParsedNumber | None:
    """Read ``text`` as one number, or ``None`` when it is anything else.

    Accepts signs, thousands separators, decimal commas, decimals, fractions (``3/4``,
    ``\\frac{3}{4}``, ``\\dfrac``), mixed numbers, percent, degrees, scientific notation
    (``1.2e3``, ``1.2 \\times 10^{3}``), a currency sign and up to three trailing unit words;
    a number in words only on its own ("seven", "minus 3"). Text with two numbers, or with
    words before the number, is not a number.

    Examples:
        >>> parse_number("1,234.5")
        ParsedNumber(value=1234.5, percent=False)
        >>> parse_number(r"\\frac{3}{4}").value, parse_number("-$3.50").value
        (0.75, -3.5)
        >>> parse_number("45^\\\\circ").value, parse_number("12 cm").value
        (45.0, 12.0)
        >>> parse_number("25%")
        ParsedNumber(value=25.0, percent=True)
        >>> parse_number("1.2 × 10^3").value
        1200.0
        >>> parse_number("3,5").value, parse_number("1 234").value, parse_number("1 1/2").value
        (3.5, 1234.0, 1.5)
        >>> parse_number("twenty-one").value, parse_number("Seven Samurai") is None
        (21.0, True)
        >>> parse_number("2 dogs and 3 cats") is None, parse_number("2\\\\sqrt{3}") is None
        (True, True)
    """
    if has_symbolic_markup(text):
        return None
    prepared = prepare_math(text).strip()
    rewritten = numeric_text(prepared)
    in_words = words_to_digits(prepared) != prepared
    match = (_STRICT_BARE if in_words else _STRICT_NUMBER).fullmatch(rewritten)
    if match is None:
        return None
    return _number_from_match(match)


# ---------------------------------------------------------------------------------------------
# Tokens, the committed one, and hedges
# ---------------------------------------------------------------------------------------------

T = TypeVar("T")


@dataclass(frozen=True)
class Token(Generic[T]):
    """A value found in a text, with where it stands."""

    start: int
    end: int
    value: T
    text: str
    """The token as written (after preparation)."""


def find_numbers(text: str) -> list[Token[ParsedNumber]]:
    """Every number in ``text`` (prepared), in order.

    Examples:
        >>> [token.value.value for token in find_numbers("3 apples, 4,5 kg and 1 234 m")]
        [3.0, 4.5, 1234.0]
    """
    found = []
    for match in _NUMBER.finditer(text):
        number = _number_from_match(match)
        if number is not None:
            found.append(Token(match.start(), match.end(), number, match.group(0)))
    return found


@dataclass(frozen=True)
class Located(Generic[T]):
    """The tokens of the region an answer commits in, and which of them it commits to."""

    region: str
    tokens: list[Token[T]]
    index: int


def locate_committed(text: str, finder: Callable[[str], list[Token[T]]]) -> Located[T] | None:
    """Find the token an answer commits to, with the tokens around it.

    In order: inside the last ``\\boxed{}`` (that box decides); the first token after the
    last answer phrase ("the answer is", "Answer:"; that phrase decides); the first token
    after the last ``=``; else the *last* token in the text. The region is prepared
    (LaTeX, Unicode, number words and mixed numbers rewritten).
    """
    boxed = extract_boxed(str(text))
    if boxed is not None:
        return locate_committed(boxed, finder)
    prepared = prepare_math(text)
    tail = answer_tail(prepared)
    if tail is not None:
        region = numeric_text(tail)
        tokens = finder(region)
        return Located(region, tokens, 0) if tokens else None
    parts = _EQUALS.split(prepared)
    if len(parts) > 1:
        region = numeric_text(parts[-1])
        tokens = finder(region)
        if tokens:
            return Located(region, tokens, 0)
    region = numeric_text(prepared)
    tokens = finder(region)
    return Located(region, tokens, len(tokens) - 1) if tokens else None


_GAP_UNIT = r"(?:°|%|[^\W\d_][\w°%./^²³·-]*)"
_APPROX = r"(?:about|approximately|around|roughly|nearly|almost|maybe|perhaps)"
_HEDGE_GAP = re.compile(
    rf"(?:\s*{_GAP_UNIT}){{0,2}}?\s*,?\s*\(?\s*"
    r"(?:(?:either\s+)?or(?:\s+(?:maybe|possibly|perhaps|probably|even|rather|so))?"
    r"|maybe|possibly|perhaps|probably|nor|to|~|–|±|\+/-|\+-)"
    rf"\s*(?:{_APPROX}\s+)?[$€£¥]?\s*",
    re.IGNORECASE,
)
_AND_GAP = re.compile(rf"(?:\s*{_GAP_UNIT}){{0,2}}?\s+and\s+(?:{_APPROX}\s+)?[$€£¥]?\s*", re.I)
_BETWEEN_BEFORE = re.compile(rf"\bbetween\s+(?:{_APPROX}\s+)?[$€£¥]?\s*$", re.IGNORECASE)
_FROM_BEFORE = re.compile(rf"\bfrom\s+(?:{_APPROX}\s+)?[$€£¥]?\s*$", re.IGNORECASE)
_LIST_GAP = re.compile(r"\s*,\s*")


def _gap_kind(region: str, left: Token[T], right: Token[T]) -> str | None:
    """How two neighbouring tokens are joined: ``hedge``, ``list`` or not at all (None)."""
    gap = region[left.end : right.start]
    before = region[: left.start]
    if re.fullmatch(r"[°%]?-", gap):  # "25-30", "20%-30%": a range
        return "hedge"
    if _HEDGE_GAP.fullmatch(gap):
        if re.search(r"\bto\s*\S*\s*$", gap, re.IGNORECASE) and _FROM_BEFORE.search(before):
            return None  # "from 2010 to 2012": a change, not a hedge
        return "hedge"
    if _AND_GAP.fullmatch(gap) and _BETWEEN_BEFORE.search(before):
        return "hedge"
    if _LIST_GAP.fullmatch(gap):
        return "list"
    return None


def hedge_around(
    region: str,
    tokens: Sequence[Token[T]],
    index: int,
    same: Callable[[T, T], bool] = lambda a, b: a == b,
) -> str | None:
    """The hedge the committed token stands in ("3 or 4", "between 10 and 12"), else None.

    Tokens joined to the committed one by "or", "maybe", "possibly", "to", a range dash,
    "between ... and", "±" (and lists of them: "1, 2 or 3") form a hedge unless they all have
    the same value. "from X to Y" is a change, not a hedge; "about 3" alone is no hedge.

    Examples:
        >>> region = "I counted 3 or 4"
        >>> tokens = find_numbers(region)
        >>> hedge_around(region, tokens, 1)
        '3 or 4'
        >>> region = "between 2010 and 2012 it rose by 27"
        >>> hedge_around(region, find_numbers(region), 2) is None
        True
    """
    low = high = index
    kinds = []
    while low > 0:
        kind = _gap_kind(region, tokens[low - 1], tokens[low])
        if kind is None:
            break
        kinds.append(kind)
        low -= 1
    while high + 1 < len(tokens):
        kind = _gap_kind(region, tokens[high], tokens[high + 1])
        if kind is None:
            break
        kinds.append(kind)
        high += 1
    if "hedge" not in kinds:
        return None
    run = tokens[low : high + 1]
    if all(same(token.value, run[0].value) for token in run):
        return None
    start, end = run[0].start, run[-1].end
    between = _BETWEEN_BEFORE.search(region[:start])
    if between is not None:
        start = between.start()
    text = region[start:end]
    if text.count("(") > text.count(")") and region[end:].lstrip().startswith(")"):
        text = region[start : region.index(")", end) + 1]
    return text.strip()


class NumberReading(NamedTuple):
    """The number an answer commits to, and the hedge it stands in, if any."""

    number: ParsedNumber
    text: str
    """The number as written (after preparation), e.g. ``3.46`` or ``45%``."""
    hedge: str | None
    """The hedge ("3 or 4", "25-30") when the answer names several values; else None."""


def _same_number(a: ParsedNumber, b: ParsedNumber) -> bool:
    """Equal values, also across a percent sign ("50% (or 0.5)" names one value)."""
    scale = 1.0 if a.percent == b.percent else (0.01 if a.percent else 100.0)
    return numbers_close(a.value * scale, b.value, abs_tol=0.0, rel_tol=1e-9)


def read_number(text: str) -> NumberReading | None:
    """The number a model's answer commits to (see :func:`locate_committed`), with its hedge.

    Examples:
        >>> read_number("The answer is 3 or 4.").hedge
        '3 or 4'
        >>> reading = read_number("At first I thought 3 or 4, but it is 5")
        >>> reading.number.value, reading.hedge
        (5.0, None)
        >>> read_number("about 3").hedge is None, read_number("about 3 to 4").hedge
        (True, '3 to 4')
    """
    located = locate_committed(text, find_numbers)
    if located is None:
        return None
    region, tokens, index = located.region, located.tokens, located.index
    token = tokens[index]
    hedge = hedge_around(region, tokens, index, _same_number)
    return NumberReading(token.value, token.text.strip(), hedge)


def extract_number(text: str) -> ParsedNumber | None:
    """The number a model's answer commits to.

    In order: inside the last ``\\boxed{}`` (that box decides); the first number after the
    last answer phrase ("the answer is", "Answer:"; that phrase decides); the first number
    after the last ``=``; else the *last* number in the text (so "In 2019 the value was 45"
    reads 45, not 2019). Numbers in words count ("the answer is seven").

    Examples:
        >>> extract_number("In 2019 the value was 45").value
        45.0
        >>> extract_number("The answer is 1,234 people, up from 1,000.").value
        1234.0
        >>> extract_number(r"3 + 4 = \\boxed{7}").value
        7.0
        >>> extract_number("3 apples and 4 pears: the answer is seven.").value
        7.0
        >>> extract_number("x = -3/4 m").value
        -0.75
    """
    reading = read_number(text)
    return reading.number if reading is not None else None


def numbers_close(predicted: float, gold: float, *, abs_tol: float, rel_tol: float) -> bool:
    """True iff ``|p - g| <= abs_tol`` or ``|p - g| / max(|g|, 1e-9) <= rel_tol``.

    Examples:
        >>> numbers_close(10.9, 10.0, abs_tol=0.05, rel_tol=0.10)
        True
        >>> numbers_close(11.1, 10.0, abs_tol=0.05, rel_tol=0.10)
        False
    """
    difference = abs(predicted - gold)
    # a tiny epsilon keeps values that sit on the boundary (0.1 + 0.05 ...) inside it
    return difference <= abs_tol + 1e-12 or difference / max(abs(gold), 1e-9) <= rel_tol + 1e-12
