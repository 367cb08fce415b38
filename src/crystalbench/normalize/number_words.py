"""Numbers written in words ("seven", "twenty-one", "one hundred and five", "minus 3").

:func:`words_to_digits` rewrites them as digits so that the number readers see one
spelling. A bare "one" is a pronoun as often as a number ("the left one", "one of them"):
it is read only as the first word of the text it stands in ("One.", "The answer is one").
"""

from __future__ import annotations

import re

__all__ = ["words_to_digits"]

_UNIT_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
_TENS_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_UNITS = {word: value for value, word in enumerate(_UNIT_WORDS)}
_TENS = {word: 10 * (index + 2) for index, word in enumerate(_TENS_WORDS)}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_WORD = "|".join(sorted([*_UNITS, *_TENS, "hundred", *_SCALES], key=len, reverse=True))
_PHRASE = re.compile(
    rf"(?<![\w-])(?:{_WORD})(?:(?:\s+and\s+|\s*-\s*|\s+)(?:{_WORD}))*(?![\w-])", re.IGNORECASE
)
_TOKEN = re.compile(rf"(?:{_WORD})(?![\w])", re.IGNORECASE)
_SIGN_WORD = re.compile(r"(?<![\w.])(?:minus|negative)\s+(?=[\d.])", re.IGNORECASE)


def _split_numbers(tokens: list[str]) -> list[tuple[int, int, int]]:
    """Group word tokens into numbers: ``(first token, last token, value)`` each.

    A token that cannot continue the number being read ("seven eight", "three four")
    starts a new one.
    """
    numbers: list[tuple[int, int, int]] = []
    start, total, current, last = 0, 0, 0, ""

    def close(end: int) -> None:
        numbers.append((start, end, total + current))

    for index, raw in enumerate(tokens):
        token = raw.lower()
        if token in _UNITS:
            value = _UNITS[token]
            fits = last in ("", "hundred", "scale") or (last == "tens" and 0 < value < 10)
            kind = "unit"
        elif token in _TENS:
            value = _TENS[token]
            fits = last in ("", "hundred", "scale")
            kind = "tens"
        elif token == "hundred":
            value = 0
            fits = last in ("unit", "tens") and 0 < current < 100
            kind = "hundred"
        else:
            value = 0
            fits = last in ("unit", "tens", "hundred") and current > 0
            kind = "scale"
        if index > 0 and not fits:
            close(index - 1)
            start, total, current, last = index, 0, 0, ""
            fits = kind in ("unit", "tens")
        if not fits:  # "hundred" or "thousand" with no number before it: not a number
            start, total, current, last = index + 1, 0, 0, ""
            continue
        if kind in ("unit", "tens"):
            current += value
        elif kind == "hundred":
            current *= 100
        else:
            total += current * _SCALES[token]
            current = 0
        last = kind
    if last:
        close(len(tokens) - 1)
    return numbers


def words_to_digits(text: str) -> str:
    """Rewrite numbers written in words, and "minus"/"negative" before a number, as digits.

    A bare "one" is kept as a word unless it is the first word of ``text``. "minus" after a
    number is subtraction and is kept ("7 minus 3").

    Examples:
        >>> words_to_digits("There are seven cars and twenty-one bikes.")
        'There are 7 cars and 21 bikes.'
        >>> words_to_digits("one hundred and five"), words_to_digits("minus 3")
        ('105', '-3')
        >>> words_to_digits("One."), words_to_digits("the left one")
        ('1.', 'the left one')
        >>> words_to_digits("seven eight"), words_to_digits("7 minus 3")
        ('7 8', '7 minus 3')
    """
    first_word = re.search(r"[^\W\d_]+", text)
    first_start = first_word.start() if first_word else -1

    def phrase(match: re.Match[str]) -> str:
        tokens = list(_TOKEN.finditer(match.group(0)))
        words = [token.group(0) for token in tokens]
        pieces, cursor = [], 0
        for first, last, value in _split_numbers(words):
            begin, end = tokens[first].start(), tokens[last].end()
            is_bare_one = first == last and words[first].lower() == "one"
            if is_bare_one and match.start() + begin != first_start:
                continue
            pieces.append(match.group(0)[cursor:begin])
            pieces.append(str(value))
            cursor = end
        pieces.append(match.group(0)[cursor:])
        return "".join(pieces)

    text = _PHRASE.sub(phrase, text)

    def sign(match: re.Match[str]) -> str:
        before = text[: match.start()].rstrip()
        return match.group(0) if before[-1:].isdigit() else "-"

    return _SIGN_WORD.sub(sign, text)
