"""Sentence splitting: the parser's last resort, and the abbreviation rules answers reuse.

A sentence ends at ``.``, ``!`` or ``?`` (plus closing quotes or brackets) followed by a space,
unless the next word starts in lower case or the period ends an abbreviation, an initial, an
acronym or a list number. Every pattern here is linear-time.
"""

from __future__ import annotations

import re

__all__ = ["SENTENCE_END", "ends_abbreviation", "split_sentences"]

SENTENCE_END = re.compile(r"[。！？]+|[.!?]+[\"'”’)\]]*(?=\s|$)")
_ALWAYS_ABBREVIATIONS = frozenset(
    (
        "e.g",
        "i.e",
        "fig",
        "figs",
        "eq",
        "eqs",
        "vs",
        "cf",
        "al",
        "approx",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "jr",
        "sr",
        "st",
        "inc",
        "ltd",
        "co",
        "corp",
        "mt",
        "resp",
        "esp",
        "ca",
        "viz",
    )
)
_NUMBER_ABBREVIATIONS = frozenset(("no", "nos", "p", "pp", "vol", "sec", "ch", "tab", "ref", "art"))
_ENUMERATION = re.compile(r"\(?(?:\d{1,3}|[ivxIVX]{1,4}|[A-Za-z])\)?")
_ACRONYM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences: the parser's last resort.

    Line breaks always end a sentence. Inside a line a sentence ends at ``.``, ``!`` or ``?``
    (plus closing quotes or brackets) followed by a space, unless the next word starts in
    lower case, or the period ends an abbreviation ("e.g.", "i.e.", "Fig.", "Eq.", "vs.",
    "Dr.", "No. 3"...), an initial ("J. K. Rowling"), an acronym ("U.S.") or a list number
    ("1. First..."). Decimals never split ("3.5" has no space after its point). Chinese and
    Japanese full stops end a sentence without a space.

    Args:
        text: Any text.

    Returns:
        The sentences, stripped, blank ones dropped.

    Examples:
        >>> split_sentences("The ratio is 3.5, e.g. for Fig. 2. Next, compare! Done")
        ['The ratio is 3.5, e.g. for Fig. 2.', 'Next, compare!', 'Done']
        >>> split_sentences("J. K. Rowling wrote it. 1. First item")
        ['J. K. Rowling wrote it.', '1. First item']
    """
    out: list[str] = []
    for line in text.splitlines():
        start = 0
        for m in SENTENCE_END.finditer(line):
            if m.start() < start or not _is_sentence_boundary(line, start, m):
                continue
            piece = line[start : m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out


def ends_abbreviation(line: str, start: int, period: int) -> bool:
    """True when the ``.`` at ``line[period]`` ends an abbreviation or an acronym.

    "Dr.", "e.g.", "Fig.", "U.S." always do; "No.", "p.", "Vol."... only before a number.
    ``start`` is where the current sentence (or answer) began: the word is never read from
    before it.

    Examples:
        >>> ends_abbreviation("Dr. Smith", 0, 2), ends_abbreviation("No. 5", 0, 2)
        (True, True)
        >>> ends_abbreviation("No. The bar", 0, 2), ends_abbreviation("B. The bar", 0, 1)
        (False, False)
    """
    token = _token_before(line, start, period)
    return _is_abbreviation(token, _next_char(line, period + 1))


def _token_before(line: str, start: int, end: int) -> str:
    space = line.rfind(" ", start, end)
    return line[max(space + 1, start) : end].lstrip("([\"'“‘")


def _next_char(line: str, after: int) -> str:
    while after < len(line) and line[after].isspace():
        after += 1
    return line[after] if after < len(line) else ""


def _is_abbreviation(token: str, following: str) -> bool:
    lower = token.lower()
    if lower in _ALWAYS_ABBREVIATIONS or (lower in _NUMBER_ABBREVIATIONS and following.isdigit()):
        return True
    return _ACRONYM.fullmatch(token) is not None


def _is_sentence_boundary(line: str, start: int, m: re.Match[str]) -> bool:
    punct = m.group()
    if punct[0] in "。！？":
        return True
    following = _next_char(line, m.end())
    if not following:
        return True
    if following.islower():
        return False
    if punct[0] != "." or len(punct.rstrip("\"'”’)]")) > 1:
        return True
    space = line.rfind(" ", start, m.start())
    token = _token_before(line, start, m.start())
    if _is_abbreviation(token, following):
        return False
    before = line[start : max(space + 1, start)].strip()
    if not before and _ENUMERATION.fullmatch(token):
        return False  # "1. First...", "a. ..." at the start of a sentence
    if len(token) == 1 and token.isupper():
        previous = before.rsplit(" ", 1)[-1] if before else ""
        following_word = line[m.end() :].split(None, 1)[0] if line[m.end() :].split() else ""
        if previous and following_word.strip(",.;:") == previous:
            return True  # "both Set A and Set B. Set A alternates": a label, then its noun
        if not previous or previous[:1].isupper():
            return False  # "J. K. Rowling", "George W. Bush"
    return True
