"""Options: reading them from an item, and resolving an answer (or a gold) to one of them.

An option is named by its letter ("B", "(b)", ``\\boxed{B}``), by its text, or by its value
("0.5" for an option written ``$\\frac{1}{2}$``). Options and answers go through the same
normaliser (:func:`crystalbench.normalize.answer_key`: LaTeX read as plain math, accents
folded), so ``$5$``, ``5`` and ``\\boxed{5}`` are the same option text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from crystalbench.normalize import (
    answer_key,
    clean_answer,
    find_choice_letters,
    has_symbolic_markup,
    parse_number,
    read_number,
    symbolic_value,
)
from crystalbench.types import BenchmarkItem

__all__ = [
    "ChoiceResolution",
    "gold_option_index",
    "item_options",
    "letter",
    "parse_embedded_options",
    "resolve_choice",
]

_OPTION_LINE = re.compile(r"^\s*(?:\(\s*([A-Za-z])\s*\)|([A-Za-z])[.):])\s+(\S.*?)\s*$")
_INLINE_MARKER = re.compile(r"(?<!\w)\(\s*([A-Za-z])\s*\)")
_INLINE_TAIL = re.compile(r"[\s,;]*(?:\bor\b)?[\s,;]*$", re.IGNORECASE)


def letter(index: int) -> str:
    """The option letter of a 0-based index: 0 -> "A"."""
    return chr(ord("A") + index)


def _run_from_a(entries: list[tuple[str, str]]) -> list[str]:
    """Texts of the first run of letters a, b, c... (either case) among ``entries``."""
    for start, (first, _) in enumerate(entries):
        if first.upper() != "A":
            continue
        texts: list[str] = []
        for offset, (next_letter, text) in enumerate(entries[start:]):
            if next_letter.upper() != chr(ord("A") + offset):
                break
            texts.append(text)
        if len(texts) >= 2:
            return texts
    return []


def parse_embedded_options(question: str) -> list[str]:
    """Options written inside a question, in order; ``[]`` when there are none.

    Two layouts are understood: one option per line ("A. Left", "B) Right", "(C) Up",
    RealWorldQA style) and inline parenthesised markers after the question or a colon
    ("...closed? (a) Open (b) Closed", MMVP style). Letters must run A, B, C... from A, and
    there must be at least two.

    Examples:
        >>> parse_embedded_options("Which way?\\nA. Left\\nB. Right\\nPlease answer directly.")
        ['Left', 'Right']
        >>> parse_embedded_options("Is the door open or closed? (a) Open (b) Closed")
        ['Open', 'Closed']
        >>> parse_embedded_options("How many cars are there?")
        []
    """
    lines: list[tuple[str, str]] = []
    for line in question.splitlines():
        match = _OPTION_LINE.match(line)
        if match is not None:
            lines.append((match.group(1) or match.group(2), match.group(3)))
        elif line.strip() and lines and lines[-1][0] != "":
            lines.append(("", ""))  # a foreign line ends a run
    found = _run_from_a(lines)
    if found:
        return found
    for line in question.splitlines():
        markers = list(_INLINE_MARKER.finditer(line))
        if not markers or not re.search(r"(?:^|[?:.!])\s*$", line[: markers[0].start()]):
            continue  # inline options follow the question: "...closed? (a) Open (b) Closed"
        entries = []
        for index, marker in enumerate(markers):
            end = markers[index + 1].start() if index + 1 < len(markers) else len(line)
            text = _INLINE_TAIL.sub("", line[marker.end() : end]).strip()
            entries.append((marker.group(1), text))
        found = _run_from_a(entries)
        if found and all(found):
            return found
    return []


def item_options(item: BenchmarkItem) -> list[str]:
    """The item's options: ``item.options``, else those embedded in its question.

    Examples:
        >>> item = BenchmarkItem(id="1", source="mmvp", question="Open? (a) Open (b) Closed",
        ...                      answer="(a)", reference_steps=[])
        >>> item_options(item)
        ['Open', 'Closed']
    """
    if item.options:
        return list(item.options)
    return parse_embedded_options(item.question)


# ---------------------------------------------------------------------------------------------
# Option values
# ---------------------------------------------------------------------------------------------

_MAX_VALUE_CHARS = 80
"""Longest answer or option text read as a math value (longer text is a sentence)."""


class _Value(NamedTuple):
    value: float
    decimals: int
    """Decimal places as written ("1.73" -> 2); a rounded answer matches at that precision."""


def _decimals(text: str) -> int:
    match = re.search(r"\d[.](\d+)|(?<![\d,])\d+,(\d{1,2})(?![\d,])", text)
    if match is None:
        return 0
    return len(match.group(1) or match.group(2))


def _value_of(text: str) -> _Value | None:
    """The value of a whole answer or option ("$\\frac{1}{2}$", "0.5", "\\sqrt{3}", "seven")."""
    cleaned = clean_answer(text)
    if not cleaned or len(cleaned) > _MAX_VALUE_CHARS:
        return None
    number = parse_number(cleaned)
    if number is not None:
        return _Value(number.value, _decimals(cleaned))
    if has_symbolic_markup(cleaned) and re.search(r"\d|\\pi|π", cleaned):
        value = symbolic_value(cleaned, prose=False)
        if value is not None:
            return _Value(value, 0)
    return None


def _options_with_value(found: _Value, values: Sequence[_Value | None]) -> list[int]:
    """Options equal to ``found``; failing that, those that round to it at its precision."""
    exact = [
        index
        for index, option in enumerate(values)
        if option is not None
        and abs(option.value - found.value) <= 1e-9 * max(abs(option.value), 1.0)
    ]
    if exact or found.decimals == 0:
        return exact
    half_unit = 0.5 * 10.0**-found.decimals + 1e-12
    return [
        index
        for index, option in enumerate(values)
        if option is not None and abs(option.value - found.value) <= half_unit
    ]


def gold_option_index(gold: str, options: Sequence[str]) -> int | None:
    """Option index of a gold answer: its letter, its text, or its value; else ``None``.

    Examples:
        >>> options = ["Open", "Closed"]
        >>> gold_option_index("(b)", options), gold_option_index("closed", options)
        (1, 1)
        >>> gold_option_index(r"\\frac{1}{2}", ["$\\\\frac{1}{3}$", "$\\\\frac{1}{2}$"])
        1
        >>> gold_option_index("0.5", ["1/3", "1/2"]), gold_option_index("elephant", ["cat"]) is None
        (1, True)
    """
    letters = find_choice_letters(gold, len(options) or None)
    if letters.how == "whole" and len(letters.letters) == 1:
        return ord(letters.letters[0]) - ord("A")
    target = answer_key(gold)
    if target:
        for index, option in enumerate(options):
            if answer_key(option) == target:
                return index
    value = _value_of(gold)
    if value is not None:
        matches = _options_with_value(value._replace(decimals=0), [_value_of(o) for o in options])
        if len(matches) == 1:
            return matches[0]
    return None


# ---------------------------------------------------------------------------------------------
# Resolving an answer
# ---------------------------------------------------------------------------------------------


class ChoiceResolution(NamedTuple):
    """How an answer resolved against a list of options."""

    option: int | None
    """0-based option index, or ``None`` when the answer names no single option."""
    how: str
    """``letter``, ``text``, ``value``, ``ambiguous`` (several options named) or
    ``unresolved``."""
    detail: str
    """Which pattern decided, for the verdict's ``detail``."""


_NEGATIONS = frozenset(
    {"not", "no", "never", "neither", "nor", "without", "except", "isnt", "arent", "wasnt",
     "werent", "dont", "doesnt", "didnt", "cant", "cannot", "wont", "wouldnt", "shouldnt",
     "couldnt", "hasnt", "havent", "hadnt", "aint"}
)  # fmt: skip
_NEGATING_PAIRS = frozenset({("instead", "of"), ("rather", "than"), ("other", "than")})
_SOFTENERS = frozenset(
    {"really", "quite", "exactly", "actually", "necessarily", "entirely", "completely",
     "fully", "very", "just", "too", "so", "be", "even", "definitely", "certainly"}
)  # fmt: skip


def _negated(before: list[str]) -> bool:
    """True when the words right before an option's text negate it ("is not open")."""
    if not before:
        return False
    if before[-1] in _NEGATIONS:
        return True
    if len(before) >= 2 and (before[-2], before[-1]) in _NEGATING_PAIRS:
        return True
    return len(before) >= 2 and before[-1] in _SOFTENERS and before[-2] in _NEGATIONS


def _options_in_text(text: str, options: Sequence[str]) -> list[int]:
    """Options whose text appears, not negated, as whole words in ``text``.

    An option found only as part of another found option ("red" inside "dark red") is
    dropped. An occurrence right after a negation ("not open", "isn't closed", "not the red
    one", "instead of left"; a softener may stand between: "not really open") does not name
    the option.
    """
    normalised = answer_key(text)
    found: dict[int, str] = {}
    for index, option in enumerate(options):
        phrase = answer_key(option)
        if not phrase:
            continue
        for match in re.finditer(rf"(?<!\S){re.escape(phrase)}(?!\S)", normalised):
            if not _negated(normalised[: match.start()].split()):
                found[index] = phrase
                break
    kept = []
    for index, phrase in found.items():
        inside_other = any(
            other != phrase and re.search(rf"(?<!\S){re.escape(phrase)}(?!\S)", other)
            for other_index, other in found.items()
            if other_index != index
        )
        if not inside_other:
            kept.append(index)
    return kept


_LEADING_MARKER = re.compile(r"\s*(?:\(\s*[A-Za-z]\s*\)|\[\s*[A-Za-z]\s*\]|[A-Za-z][.):](?=\s|$))")


def _committed_value(text: str) -> tuple[_Value | None, str | None]:
    """The number the answer commits to, as an option value, and the hedge it stands in."""
    reading = read_number(text)
    if reading is None:
        return None, None
    return _Value(reading.number.value, _decimals(reading.text)), reading.hedge


def resolve_choice(text: str, options: Sequence[str]) -> ChoiceResolution:
    """Resolve a predicted answer to one option, or say why it cannot be.

    Order (first decisive step wins):

    1. the whole answer is a letter form ("B", "(b)", "option B", "A or B"), or it starts
       with a letter marker ("(a) Left", "B. Right": the marker wins over the text);
    2. the whole answer, cleaned ("The answer is Left.", ``$\\frac{1}{2}$``), equals an
       option's text; else its value equals exactly one option's value ("0.5" for
       ``\\frac{1}{2}``; a rounded decimal matches at its precision: "1.73" for ``\\sqrt{3}``);
    3. an explicit letter pattern: ``\\boxed{B}``, "the answer is B", a leading "B." / "(B)",
       "option B", "(B)" or "**B**" anywhere (see :func:`find_choice_letters`);
    4. exactly one option's text appears in the answer as whole words, not negated ("The door
       is not open" never names "open");
    5. the answer ends with a standalone capital letter ("... so it is B");
    6. several option texts appear: ``ambiguous``;
    7. the number the answer commits to ("so the probability is 0.5") equals exactly one
       option's value; a hedge between values ("0.5 or 0.33") is ``ambiguous``.

    Several letters at the deciding step (a hedge such as "A or B", "A, B, C, D") give
    ``ambiguous``. Letters beyond the last option are ignored.

    Examples:
        >>> resolve_choice("I'd say (B) Right", ["Left", "Right"]).option
        1
        >>> resolve_choice("The left one, clearly.", ["Left", "Right"])
        ChoiceResolution(option=0, how='text', detail='option text in answer')
        >>> resolve_choice("A or B", ["Left", "Right"]).how
        'ambiguous'
        >>> resolve_choice("It is not open.", ["Open", "Closed"]).how
        'unresolved'
        >>> resolve_choice("0.5", ["$\\\\frac{1}{3}$", "$\\\\frac{1}{2}$"])
        ChoiceResolution(option=1, how='value', detail='option value')
    """
    n_options = len(options) or None
    letters = find_choice_letters(text, n_options)

    def from_letters() -> ChoiceResolution:
        if len(letters.letters) > 1:
            named = ", ".join(letters.letters)
            return ChoiceResolution(None, "ambiguous", f"several letters ({named}), {letters.how}")
        return ChoiceResolution(
            ord(letters.letters[0]) - ord("A"), "letter", f"letter, {letters.how}"
        )

    if letters.how == "whole" or (letters.how == "leading" and _LEADING_MARKER.match(text)):
        return from_letters()
    cleaned = answer_key(text)
    if cleaned:
        for index, option in enumerate(options):
            if answer_key(option) == cleaned:
                return ChoiceResolution(index, "text", "option text")
    values: list[_Value | None] | None = None
    whole = _value_of(text)
    if whole is not None:
        values = [_value_of(option) for option in options]
        matches = _options_with_value(whole, values)
        if len(matches) == 1:
            return ChoiceResolution(matches[0], "value", "option value")
    if letters.letters and letters.how != "trailing":
        return from_letters()
    named = _options_in_text(text, options)
    if len(named) == 1:
        return ChoiceResolution(named[0], "text", "option text in answer")
    if letters.letters:
        return from_letters()
    if len(named) > 1:
        return ChoiceResolution(None, "ambiguous", f"{len(named)} option texts in answer")
    committed, hedge = _committed_value(text)
    if committed is not None:
        values = values if values is not None else [_value_of(option) for option in options]
        matches = _options_with_value(committed, values)
        if hedge is not None and matches:
            return ChoiceResolution(None, "ambiguous", f"several values ({hedge})")
        if len(matches) == 1 and hedge is None:
            return ChoiceResolution(matches[0], "value", "option value in answer")
    return ChoiceResolution(None, "unresolved", "no option letter or text found")
