"""Yes/no answers, read from whole words; the committed word wins over idioms."""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from crystalbench.normalize.extraction import committed_segment
from crystalbench.normalize.text import QUOTES

__all__ = ["YesNo", "parse_yes_no"]

YesNo = Literal["yes", "no"]

_YES_WORDS = frozenset({"yes", "yeah", "yep", "true", "correct", "affirmative"})
_NO_WORDS = frozenset({"no", "nope", "false", "incorrect", "not", "negative", "cannot"})
_ABSTAIN = re.compile(
    r"\b(?:do\s*n[o']?t|does\s*n[o']?t|can\s*n?[o']?t|cannot)\s+(?:know|tell|say|determine|be\s+sure)"
    r"|\bnot\s+(?:sure|certain|clear|possible\s+to\s+(?:tell|determine|say))"
    r"|\b(?:unsure|unknown|unclear|uncertain|impossible\s+to\s+(?:tell|determine|say))\b"
    r"|\bno\s+way\s+to\s+(?:tell|know)|\bno\s+idea\b",
    re.IGNORECASE,
)
_IDIOMS = re.compile(
    r"\b(?:no\s+doubt|without\s+(?:a\s+|any\s+)?doubt|no\s+wonder"
    r"|no\s+question(?=\s*(?:[,.;:!]|about\b|that\b|$))"
    r"|not\s+only|no\s+matter|not\s+to\s+mention|no\s+offen[cs]e)\b",
    re.IGNORECASE,
)
"""Phrases whose "no"/"not" answers nothing ("No doubt, yes."); they are read past."""


def _yes_no_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", str(text)).translate(QUOTES).casefold()
    return re.findall(r"[a-z]+(?:'[a-z]+)?", text)


def _polarity(token: str) -> YesNo | None:
    if token in _YES_WORDS:
        return "yes"
    if token in _NO_WORDS or token.endswith("n't"):
        return "no"
    return None


def parse_yes_no(text: str) -> YesNo | None:
    """Read a yes/no answer from whole words; ``None`` when absent, hedged or abstaining.

    Rules, in order:

    1. An abstention ("I don't know", "not sure", "cannot tell", "unclear", "no idea") is
       no answer: ``None``. It is never "no".
    2. Idioms whose "no"/"not" answers nothing ("no doubt", "without a doubt", "not only",
       "no wonder", "no matter", "no question") are read past.
    3. The first word of the committed part (``\\boxed{}`` or after "the answer is"), else
       of the whole text, decides when it is a yes word (yes, true, correct...) or a no word
       (no, false, incorrect, not, any "n't" contraction): "Yes, no other object is red" is
       yes; "No doubt, yes" is yes.
    4. Otherwise every yes/no word in the text counts ("not true" counts once, as no); all
       of one polarity decides; a mix is ``None``.

    Words are whole words, so "incorrect" is never "correct", "know" is never "no" and
    "notable" is never "not".

    Examples:
        >>> parse_yes_no("Yes, it is."), parse_yes_no("incorrect"), parse_yes_no("It is not true.")
        ('yes', 'no', 'no')
        >>> parse_yes_no("I don't know") is None, parse_yes_no("I know it") is None
        (True, True)
        >>> parse_yes_no("Looking closely, the answer is no.")
        'no'
        >>> parse_yes_no("No doubt, yes."), parse_yes_no("Yes, no other object is red.")
        ('yes', 'yes')
    """
    text = unicodedata.normalize("NFKC", str(text)).translate(QUOTES)
    if _ABSTAIN.search(text):
        return None
    text = _IDIOMS.sub(" ", text)
    segment = committed_segment(text)
    for part in (segment, text):
        tokens = _yes_no_tokens(part)
        if tokens:
            first = _polarity(tokens[0])
            if first is not None:
                return first
    tokens = _yes_no_tokens(text)
    hits: set[str] = set()
    skip = False
    for index, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        polarity = _polarity(token)
        if polarity == "no" and index + 1 < len(tokens) and tokens[index + 1] in _YES_WORDS:
            skip = True  # "not true", "isn't correct": one "no"
        if polarity is not None:
            hits.add(polarity)
    if len(hits) == 1:
        return "yes" if "yes" in hits else "no"
    return None
