"""Option letters an answer names ("B", "(b)", "option C", ``\\boxed{D}``), by explicit tiers."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from crystalbench.normalize.extraction import extract_boxed
from crystalbench.normalize.text import QUOTES as _QUOTES

__all__ = ["ChoiceLetters", "find_choice_letters"]


class ChoiceLetters(NamedTuple):
    """Choice letters read from an answer by the first pattern tier that found any."""

    letters: tuple[str, ...]
    """Distinct upper-case letters in order of appearance; more than one means a hedge."""
    how: str
    """The tier that found them: ``whole``, ``boxed``, ``answer_phrase``, ``leading``,
    ``option_word``, ``parenthesised``, ``trailing`` (``none`` when nothing was found)."""


# "A" and "I" are English words: standing before a lower-case word that is not a connector
# they are an article or a pronoun ("A cat is...", "I think..."), not an option letter.
_CONNECTORS = frozenset(
    {"is", "was", "because", "since", "as", "which", "seems", "looks", "appears", "would",
     "should", "must", "matches", "fits", "corresponds", "for", "with", "in", "and", "or"}
)  # fmt: skip
_ENGLISH_LETTER_WORDS = frozenset({"A", "I", "a", "i"})
_LETTER_JOIN = r"\s*(?:,|/|&|\bor\b|\band\b|\bor\s+maybe\b)\s*"
_LETTER_TOKEN = r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|\b([A-Za-z])\b)"
_WHOLE = re.compile(
    r"(?:(?:(?:the|my)\s+)?(?:final\s+|correct\s+|best\s+)?"
    r"(?:answer|option|choice|letter)\s*(?:is\s*)?[:\-=]?\s*)?"
    rf"(?P<letters>{_LETTER_TOKEN}[.):]?(?:{_LETTER_JOIN}{_LETTER_TOKEN}[.):]?)*)",
    re.IGNORECASE,
)
_ANSWER_LETTER = re.compile(
    r"(?:\banswer\s*(?:is|would\s+be|should\s+be|will\s+be|must\s+be|=|:)\s*:?"
    r"|\b(?:correct|right|best)\s+(?:option|choice|answer|letter)\s*(?:is|=|:)\s*:?"
    r"|\bfinal\s+answer\s*:?\s*(?:is\s*)?"
    r"|\b(?:i\s+)?(?:choose|chose|select|pick|go\s+with)\s+)"
    r"\s*(?:(?:option|choice|letter)\s+)?\**"
    r"(?P<letters>(?:\(\s*[A-Za-z]\s*\)|\[\s*[A-Za-z]\s*\]|[A-Za-z])(?![\w'])"
    r"(?:(?:\s*(?:,|/|&|\bor\b|\band\b)\s*)(?:\(\s*[A-Za-z]\s*\)|[A-Za-z])(?![\w']))*)",
    re.IGNORECASE,
)
_OPTION_WORD = re.compile(r"\b(?:option|choice|letter)\s+\(?([A-Za-z])\)?(?![\w'])", re.IGNORECASE)
_PARENTHESISED = re.compile(r"(?<!\w)\(\s*([A-Za-z])\s*\)|\*\*\s*([A-Za-z])\s*\*\*")
_LEADING = re.compile(
    r"\s*(?:\(\s*(?P<p>[A-Za-z])\s*\)|\[\s*(?P<b>[A-Za-z])\s*\]"
    r"|(?P<d>[A-Za-z])[.):](?=\s|$)|(?P<u>[A-Z])(?=[\s,;!?]|$))"
)
_TRAILING = re.compile(rf"(?<![\w'])([A-Z](?:{_LETTER_JOIN}[A-Z])*)(?![\w'])\W*$")


def _letters_in(fragment: str) -> list[str]:
    found = re.findall(r"(?<![\w'])([A-Za-z])(?![\w'])", fragment)
    return [letter.upper() for letter in found]


def _reads_as_word(text: str, end: int, letter: str) -> bool:
    """True when ``letter`` (ending at ``end``) is the article "a" or the pronoun "I"."""
    if letter not in _ENGLISH_LETTER_WORDS:
        return False
    following = re.match(r"\s+([A-Za-z']+)", text[end:])
    if following is None:
        return False
    word = following.group(1)
    return word[0].islower() and word.lower() not in _CONNECTORS


def _in_range(letters: list[str], n_options: int | None) -> list[str]:
    valid = []
    for letter in letters:
        index = ord(letter) - ord("A")
        if (n_options is None or index < n_options) and letter not in valid:
            valid.append(letter)
    return valid


def find_choice_letters(text: str, n_options: int | None = None) -> ChoiceLetters:
    """Option letters an answer names, by the most explicit pattern that names any.

    Tiers, first hit wins (letters outside ``A..`` ``n_options`` are ignored):

    1. ``whole``: the entire answer is a letter form or a list of them: "B", "(b)", "B)",
       "B.", "[B]", "option B", "Answer: B", "A or B", "A, B, C, D".
    2. ``boxed``: the same inside the last ``\\boxed{}``.
    3. ``answer_phrase``: "the answer is (B)", "correct option is B", "I choose B",
       "final answer: B". The last phrase wins; a list after it is a hedge.
    4. ``leading``: the answer starts with "(B)", "B.", "B)", "B:" or a capital letter
       followed by a space or punctuation ("B because...").
    5. ``option_word``: "option B", "choice C" anywhere.
    6. ``parenthesised``: "(B)" or "**B**" anywhere.
    7. ``trailing``: the answer ends with a standalone capital letter ("... so it's B.").

    A letter inside a word never counts ("blue" is not B). A bare "A" or "I" followed by a
    lower-case word that is not a connector ("A cat is...", "I think...") is read as an
    English word, not an option; "A is correct" and "A because..." are still letters.

    Examples:
        >>> find_choice_letters("The answer is (B) because it is blue.", 4)
        ChoiceLetters(letters=('B',), how='answer_phrase')
        >>> find_choice_letters("blue", 4).letters, find_choice_letters("A cat sits.", 4).letters
        ((), ())
        >>> find_choice_letters("A or B", 4)
        ChoiceLetters(letters=('A', 'B'), how='whole')
        >>> find_choice_letters(r"\\boxed{C}", 5).letters
        ('C',)
    """
    text = unicodedata.normalize("NFKC", str(text)).translate(_QUOTES)
    text = text.replace("$", "").strip()
    stripped = text.strip(" \t\r\n*_`'\"").rstrip(".!")

    whole = _WHOLE.fullmatch(stripped)
    if whole is not None:
        letters = _in_range(_letters_in(whole["letters"]), n_options)
        if letters:
            return ChoiceLetters(tuple(letters), "whole")

    boxed = extract_boxed(text)
    if boxed is not None:
        inner = _WHOLE.fullmatch(boxed.replace("\\text", "").strip(" {}*.").strip())
        if inner is not None:
            letters = _in_range(_letters_in(inner["letters"]), n_options)
            if letters:
                return ChoiceLetters(tuple(letters), "boxed")

    phrase_hits = []
    for match in _ANSWER_LETTER.finditer(text):
        letters = _letters_in(match["letters"])
        if len(letters) == 1 and _reads_as_word(text, match.end("letters"), match["letters"]):
            continue
        letters = _in_range(letters, n_options)
        if letters:
            phrase_hits.append(letters)
    if phrase_hits:
        return ChoiceLetters(tuple(phrase_hits[-1]), "answer_phrase")

    leading = _LEADING.match(text)
    if leading is not None:
        letter = leading["p"] or leading["b"] or leading["d"] or leading["u"]
        if not (leading["u"] and _reads_as_word(text, leading.end(), letter)):
            rest = re.match(
                rf"(?:{_LETTER_JOIN}{_LETTER_TOKEN}|\s*\(\s*[A-Za-z]\s*\))+", text[leading.end() :]
            )
            listed = [letter.upper()] + (_letters_in(rest.group(0)) if rest else [])
            letters = _in_range(listed, n_options)
            if letters:
                return ChoiceLetters(tuple(letters), "leading")

    for pattern, how in ((_OPTION_WORD, "option_word"), (_PARENTHESISED, "parenthesised")):
        found = [
            next(group for group in match.groups() if group).upper()
            for match in pattern.finditer(text)
        ]
        letters = _in_range(found, n_options)
        if letters:
            return ChoiceLetters(tuple(letters), how)

    trailing = _TRAILING.search(text)
    if trailing is not None and not re.search(r"\bnot\s*$", text[: trailing.start()]):
        letters = _in_range(_letters_in(trailing.group(1)), n_options)
        if letters:
            return ChoiceLetters(tuple(letters), "trailing")
    return ChoiceLetters((), "none")
