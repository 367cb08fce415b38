"""Text normalisation for exact comparison, and the cleaning around an answer.

:func:`normalize_text` is the general-purpose key (also used outside answers, e.g. for
leakage checks); :func:`answer_key` is the key answers are compared with: the same, plus
LaTeX read as plain math, accents folded, and a one-letter answer ("A", "Vitamin A") kept
rather than dropped as an article.
"""

from __future__ import annotations

import re
import unicodedata

from crystalbench.normalize.extraction import extract_boxed
from crystalbench.normalize.latex import LATEX_TEXT, plain_math
from crystalbench.parsing.answer import ANSWER_LEAD_IN as _ANSWER_LEAD_IN

__all__ = ["answer_key", "clean_answer", "fold_accents", "normalize_text"]

_ARTICLES = frozenset({"a", "an", "the"})
QUOTES = str.maketrans({"‘": "'", "’": "'", "`": "'", "“": '"', "”": '"', "\u00a0": " "})
_MARKDOWN = re.compile(r"\*\*|__|~~|`")


def _words(text: str) -> list[str]:
    """Case-folded words with punctuation turned into spaces (see :func:`normalize_text`)."""
    text = unicodedata.normalize("NFKC", str(text)).translate(QUOTES).casefold()
    text = text.replace("'", "")
    kept = []
    for position, char in enumerate(text):
        if unicodedata.category(char).startswith("P") and not _keeps_punctuation(text, position):
            kept.append(" ")
        else:
            kept.append(char)
    return "".join(kept).split()


def normalize_text(text: str) -> str:
    """Normalise text for exact comparison: case, punctuation, articles and whitespace.

    Unicode is NFKC-folded and case-folded; apostrophes vanish ("don't" -> "dont"); other
    punctuation becomes a space, except a decimal point between digits and a minus sign in
    front of a number; the articles "a", "an", "the" are dropped; runs of whitespace become
    one space.

    Examples:
        >>> normalize_text("  The Federated States of Micronesia. ")
        'federated states of micronesia'
        >>> normalize_text("It's 3.5 m -- not 35!")
        'its 3.5 m not 35'
        >>> normalize_text("(2, -3)")
        '2 -3'
    """
    return " ".join(word for word in _words(text) if word not in _ARTICLES)


def _keeps_punctuation(text: str, position: int) -> bool:
    """A decimal point between digits, or a minus sign starting a number, survives."""
    before = text[position - 1] if position > 0 else ""
    after = text[position + 1] if position + 1 < len(text) else ""
    if text[position] == ".":
        return before.isdigit() and after.isdigit()
    if text[position] == "-":
        return after.isdigit() and not (before.isalnum() or before in "._-")
    return False


def clean_answer(text: str) -> str:
    """Strip presentation around an answer: markdown, ``$``, ``\\boxed{}``, "The answer is".

    The result is still raw text (use :func:`normalize_text` to compare it). A trailing
    full stop is removed.

    Examples:
        >>> clean_answer("**The answer is: Paris.**")
        'Paris'
        >>> clean_answer(r"Final answer: $\\boxed{\\text{blue}}$")
        'blue'
    """
    text = unicodedata.normalize("NFKC", str(text)).translate(QUOTES)
    text = _MARKDOWN.sub("", text).strip()
    boxed = extract_boxed(text)
    if boxed is not None:
        text = boxed
    text = LATEX_TEXT.sub(r"\1", text).replace("$", "")
    for _ in range(2):  # "Answer: the answer is X"
        text = _ANSWER_LEAD_IN.sub("", text, count=1)
    return text.strip().rstrip(".").strip()


def fold_accents(text: str) -> str:
    """Drop accents on Latin letters: "São Paulo" -> "Sao Paulo", "Zürich" -> "Zurich".

    Marks on other scripts are kept (Japanese "が" is not "か").

    Examples:
        >>> fold_accents("São Paulo, Zürich, Québec"), fold_accents("がか")
        ('Sao Paulo, Zurich, Quebec', 'がか')
    """
    kept: list[str] = []
    latin_base = False
    for char in unicodedata.normalize("NFD", str(text)):
        if unicodedata.combining(char):
            if not latin_base:  # marks on other scripts carry meaning (か vs が)
                kept.append(char)
            continue
        latin_base = ord(char) < 0x250 or 0x1E00 <= ord(char) <= 0x1EFF
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def answer_key(text: str) -> str:
    """The key answers and options are compared by.

    :func:`clean_answer`, then LaTeX read as plain math (``$\\frac{1}{2}$`` -> ``1/2``,
    ``\\sqrt{3}`` -> ``√3``, see :func:`~crystalbench.normalize.latex.plain_math`), accents
    folded, then :func:`normalize_text` except that "a" is dropped only where it stands
    before another word: an answer that is the letter "A", or ends with it ("Vitamin A",
    "Plan A"), keeps it.

    Examples:
        >>> answer_key("São Paulo") == answer_key("Sao Paulo")
        True
        >>> answer_key("A"), answer_key("Vitamin A"), answer_key("A red umbrella.")
        ('a', 'vitamin a', 'red umbrella')
        >>> answer_key(r"$\\frac{1}{2}$") == answer_key("1/2")
        True
    """
    words = _words(fold_accents(plain_math(clean_answer(text))))
    kept = []
    for index, word in enumerate(words):
        if word in ("an", "the") or (word == "a" and index + 1 < len(words)):
            continue
        kept.append(word)
    return " ".join(kept)
