"""Answers that look like arithmetic but are not: clock times, ranges and ratios.

"3:30" is half past three, "25-30" is a range and "3:2" is a ratio; evaluated as
arithmetic they would read 0.1, -5 and 1.5. These readers take them as what they are, so
the answer rules can compare like with like and never hand them to the math verifier.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from crystalbench.normalize.latex import prepare_math
from crystalbench.normalize.numbers import ParsedNumber, Token, find_numbers, numeric_text

__all__ = [
    "Clock",
    "NumberRange",
    "clocks_agree",
    "find_clocks",
    "find_ranges",
    "find_ratios",
    "format_ratio",
    "looks_shaped",
    "parse_clock",
    "parse_range",
    "parse_ratio",
    "ratios_agree",
]


# ---------------------------------------------------------------------------------------------
# Clock times
# ---------------------------------------------------------------------------------------------


class Clock(NamedTuple):
    """A time of day as written: "3:30", "15:45:10", "3:30 pm", "3 o'clock"."""

    hours: int
    minutes: int
    seconds: int | None
    """``None`` when the time was written without seconds."""
    meridiem: str | None
    """``"am"``, ``"pm"`` or ``None``."""

    @property
    def minute_of_day(self) -> int:
        hours = self.hours % 24
        if self.meridiem is not None:
            hours = self.hours % 12 + (12 if self.meridiem == "pm" else 0)
        return hours * 60 + self.minutes

    @property
    def on_24_hours(self) -> bool:
        """True when the time says which half of the day it is (am/pm, 13:00-23:59, 0:xx)."""
        return self.meridiem is not None or self.hours >= 13 or self.hours in (0, 24)

    def __str__(self) -> str:
        seconds = f":{self.seconds:02d}" if self.seconds is not None else ""
        meridiem = f" {self.meridiem}" if self.meridiem else ""
        return f"{self.hours}:{self.minutes:02d}{seconds}{meridiem}"


_CLOCK = re.compile(
    r"(?<![\w.:])(?P<h>\d{1,2})(?:"
    r":(?P<m>\d{2})(?::(?P<s>\d{2}))?(?:\s*(?P<mer>[ap])\.?\s?m\b\.?)?"
    r"|\s*(?P<mer2>[ap])\.?\s?m\b\.?"
    r"|\s*o['’]?\s?clock\b)(?![:\d])",
    re.IGNORECASE,
)


def _clock(match: re.Match[str]) -> Clock | None:
    hours, minutes = int(match["h"]), int(match["m"] or 0)
    seconds = int(match["s"]) if match["s"] is not None else None
    meridiem = match["mer"] or match["mer2"]
    meridiem = f"{meridiem.lower()}m" if meridiem else None
    if minutes > 59 or (seconds or 0) > 59 or hours > 24:
        return None
    if meridiem is not None and not 1 <= hours <= 12:
        return None
    return Clock(hours, minutes, seconds, meridiem)


def find_clocks(text: str) -> list[Token[Clock]]:
    """Every clock time in ``text``, in order.

    Examples:
        >>> [str(token.value) for token in find_clocks("from 3:30 pm to 15:45, not 7:75")]
        ['3:30 pm', '15:45']
    """
    found = []
    for match in _CLOCK.finditer(text):
        clock = _clock(match)
        if clock is not None:
            found.append(Token(match.start(), match.end(), clock, match.group(0)))
    return found


def parse_clock(text: str) -> Clock | None:
    """``text`` read as one clock time ("3:30", "10:05:30", "3:30 PM", "3 o'clock"), else None.

    "3:2" is not a time (minutes have two digits). Whether "12:15" is a time or a ratio is
    the caller's decision (see :func:`crystalbench.answers.infer_answer_type`).

    Examples:
        >>> parse_clock("3:30"), parse_clock("3:2"), parse_clock("7:75")
        (Clock(hours=3, minutes=30, seconds=None, meridiem=None), None, None)
        >>> str(parse_clock("3 p.m.")), str(parse_clock("nine o'clock"))
        ('3:00 pm', '9:00')
    """
    prepared = numeric_text(prepare_math(text)).strip().rstrip(".").strip()
    match = _CLOCK.fullmatch(prepared)
    if match is None and prepared.lower().endswith(("a.m", "p.m")):
        match = _CLOCK.fullmatch(prepared + ".")
    return _clock(match) if match is not None else None


def clocks_agree(predicted: Clock, gold: Clock) -> bool:
    """Same time of day, to the gold's precision (seconds only when the gold has them).

    On a 12-hour dial "3:30" and "15:30" are the same reading: the two times compare on a
    24-hour clock only when both say which half of the day they are.

    Examples:
        >>> clocks_agree(parse_clock("15:30"), parse_clock("3:30"))
        True
        >>> clocks_agree(parse_clock("3:30 am"), parse_clock("15:30"))
        False
    """
    period = 24 * 60 if predicted.on_24_hours and gold.on_24_hours else 12 * 60
    if (predicted.minute_of_day - gold.minute_of_day) % period != 0:
        return False
    return gold.seconds is None or (predicted.seconds or 0) == gold.seconds


# ---------------------------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------------------------


class NumberRange(NamedTuple):
    """A range as written: "25-30", "25 to 30", "between 25 and 30", "1990–2000"."""

    low: float
    high: float
    percent: bool

    def __str__(self) -> str:
        sign = "%" if self.percent else ""
        return f"{self.low:.10g}{sign}-{self.high:.10g}{sign}"


_RANGE_JOIN = re.compile(
    r"(?:\s*(?:°|%|[^\W\d_][\w°%./^²³-]*)){0,2}?\s*(?:-|–|to|and|through)\s*[$€£¥]?\s*",
    re.IGNORECASE,
)


def _range_from(
    first: Token[ParsedNumber], second: Token[ParsedNumber], region: str
) -> NumberRange | None:
    gap = region[first.end : second.start]
    if not _RANGE_JOIN.fullmatch(gap):
        return None
    if re.search(r"\band\b", gap, re.IGNORECASE) and not re.search(
        r"\bbetween\s*$", region[: first.start], re.IGNORECASE
    ):
        return None
    low_text, high_text = first.text.strip().lstrip("+"), second.text.strip().lstrip("+")
    low, high = first.value.value, second.value.value
    percent = first.value.percent or second.value.percent
    if high < low and re.fullmatch(r"\d{1,2}", high_text) and re.fullmatch(r"\d{3,4}", low_text):
        scale = 10 ** len(high_text)  # "1990-91" is 1990 to 1991
        if low - low % scale + high >= low:
            high = low - low % scale + high
    return NumberRange(low, high, percent)


def find_ranges(text: str) -> list[Token[NumberRange]]:
    """Every range in ``text``: two numbers joined by a dash, "to", or "between ... and".

    Examples:
        >>> [str(token.value) for token in find_ranges("it took 25-30 min, in 1990–91")]
        ['25-30', '1990-1991']
    """
    numbers = find_numbers(text)
    found: list[Token[NumberRange]] = []
    index = 0
    while index + 1 < len(numbers):
        first, second = numbers[index], numbers[index + 1]
        span = _range_from(first, second, text)
        if span is None:
            index += 1
            continue
        found.append(Token(first.start, second.end, span, text[first.start : second.end]))
        index += 2
    return found


def parse_range(text: str) -> NumberRange | None:
    """``text`` read as one range ("25-30", "25 to 30 cm", "between 10 and 12"), else None.

    Examples:
        >>> str(parse_range("25-30")), str(parse_range("1990–2000")), parse_range("-5")
        ('25-30', '1990-2000', None)
    """
    prepared = numeric_text(prepare_math(text)).strip()
    ranges = find_ranges(prepared)
    if len(ranges) != 1 or len(find_numbers(prepared)) != 2:
        return None
    token = ranges[0]
    before = prepared[: token.start].strip().lower()
    after = prepared[token.end :].strip()
    if before not in ("", "from", "between") or not re.fullmatch(
        r"(?:[^\W\d_][\w°%./^²³-]*\s*){0,3}\.?", after
    ):
        return None
    return token.value


# ---------------------------------------------------------------------------------------------
# Ratios
# ---------------------------------------------------------------------------------------------

_PART = r"\d+(?:\.\d+)?"
_RATIO_COLON = re.compile(rf"(?<![\w.:])({_PART})((?:\s*:\s*{_PART})+)(?![\w:]|\.\d)")
_RATIO_TO = re.compile(rf"(?<![\w.:])({_PART})\s+to\s+({_PART})(?![\w:]|\.\d)", re.IGNORECASE)


def _parts(match: re.Match[str]) -> tuple[float, ...]:
    return tuple(float(part) for part in re.findall(_PART, match.group(0)))


def parse_ratio(text: str, *, allow_to: bool = False) -> tuple[float, ...] | None:
    """``text`` read as one ratio ("3:2", "1 : 4", "1:2:3"; "3 to 2" with ``allow_to``).

    Examples:
        >>> parse_ratio("3:2"), parse_ratio("1:2:3"), parse_ratio("3 to 2", allow_to=True)
        ((3.0, 2.0), (1.0, 2.0, 3.0), (3.0, 2.0))
        >>> parse_ratio("3/2") is None, parse_ratio("3 to 2") is None
        (True, True)
    """
    prepared = numeric_text(prepare_math(text)).strip().rstrip(".").strip()
    patterns = (_RATIO_COLON, _RATIO_TO) if allow_to else (_RATIO_COLON,)
    for pattern in patterns:
        match = pattern.fullmatch(prepared)
        if match is not None:
            return _parts(match)
    return None


def find_ratios(text: str) -> list[Token[tuple[float, ...]]]:
    """Every ratio in ``text`` ("3:2", "3 to 2"); other numbers count as ``n:1``.

    Examples:
        >>> [token.value for token in find_ratios("6 to 4, i.e. 3:2 or 1.5")]
        [(6.0, 4.0), (3.0, 2.0), (1.5, 1.0)]
    """
    found: list[Token[tuple[float, ...]]] = []
    for pattern in (_RATIO_COLON, _RATIO_TO):
        for match in pattern.finditer(text):
            if not any(token.start < match.end() and match.start() < token.end for token in found):
                found.append(Token(match.start(), match.end(), _parts(match), match.group(0)))
    for number in find_numbers(text):
        if not any(token.start < number.end and number.start < token.end for token in found):
            found.append(Token(number.start, number.end, (number.value.value, 1.0), number.text))
    return sorted(found, key=lambda token: token.start)


def ratios_agree(predicted: tuple[float, ...], gold: tuple[float, ...]) -> bool:
    """Same ratio once reduced ("6:4" is "3:2"; "1.5" read as "1.5:1" is too).

    Examples:
        >>> ratios_agree((6.0, 4.0), (3.0, 2.0)), ratios_agree((2.0, 3.0), (3.0, 2.0))
        (True, False)
    """
    if len(predicted) != len(gold) or not any(gold) or not any(predicted):
        return False
    for p_part, g_part in zip(predicted, gold, strict=True):
        left, right = p_part * gold[0], g_part * predicted[0]
        if abs(left - right) > 1e-9 * max(abs(left), abs(right), 1.0):
            return False
    return True


def format_ratio(parts: tuple[float, ...]) -> str:
    """A ratio in lowest terms: ``(6, 4)`` -> ``"3:2"``.

    Examples:
        >>> format_ratio((6.0, 4.0)), format_ratio((1.5, 1.0))
        ('3:2', '1.5:1')
    """
    if all(float(part).is_integer() for part in parts):
        divisor = 0
        for part in parts:
            divisor = math.gcd(divisor, int(part))
        divisor = divisor or 1
        return ":".join(str(int(part) // divisor) for part in parts)
    return ":".join(format(part, ".10g") for part in parts)


_SHAPED = re.compile(r"\d\s*[:–]\s*\d|\d-\d|\d\s+(?:to|or)\s+\d", re.IGNORECASE)


def looks_shaped(text: str) -> bool:
    """True when ``text`` holds a time, ratio, range or alternative ("3:30", "25-30", "3 or 4").

    The numeric rule never hands such text to the math verifier, which would read it as
    arithmetic, unless it holds symbolic markup (``3-2\\sqrt{2}`` is an expression).

    Examples:
        >>> looks_shaped("25-30"), looks_shaped("3:2"), looks_shaped("3 or 4")
        (True, True, True)
        >>> looks_shaped("12.5"), looks_shaped(r"2\\sqrt{3}")
        (False, False)
    """
    return bool(_SHAPED.search(numeric_text(prepare_math(text))))
