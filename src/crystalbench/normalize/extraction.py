"""Where an answer's committed part is: ``\\boxed{}``, "the answer is", the last ``=``.

These four names (:func:`extract_boxed`, :func:`answer_tail`, :func:`committed_segment` and
the ``_ANSWER_PHRASE`` / ``_ANSWER_LEAD_IN`` patterns) are moved here verbatim from the former
``normalize.py``; the answer-extraction work makes them delegate to the one shared extractor.
Everything else in :mod:`crystalbench.normalize` calls them and never re-implements them.
"""

from __future__ import annotations

import re

__all__ = ["answer_tail", "committed_segment", "extract_boxed"]

_ANSWER_LEAD_IN = re.compile(
    r"^\s*(?:so\s*,?\s*|thus\s*,?\s*|therefore\s*,?\s*|hence\s*,?\s*)?"
    r"(?:the\s+|my\s+)?(?:final\s+|correct\s+|best\s+)?answer\s*"
    r"(?:is|would\s+be|should\s+be|will\s+be|must\s+be|[:=\-])\s*:?\s*",
    re.IGNORECASE,
)


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced.

    Examples:
        >>> extract_boxed(r"so x = \\boxed{\\frac{3}{4}} and done")
        '\\\\frac{3}{4}'
        >>> extract_boxed("no box here") is None
        True
    """
    found: str | None = None
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, start = 1, match.end()
        for position in range(start, len(text)):
            if text[position] == "{":
                depth += 1
            elif text[position] == "}":
                depth -= 1
                if depth == 0:
                    found = text[start:position]
                    break
    return found.strip() if found is not None else None


_ANSWER_PHRASE = re.compile(
    r"\b(?:final\s+answer\s*(?:is|would\s+be|should\s+be|will\s+be|:|=)?"
    r"|answer\s*(?:is|was|would\s+be|should\s+be|will\s+be|must\s+be|equals|:|=)"
    r"|result\s+is)\s*:?",
    re.IGNORECASE,
)
_EQUALS = re.compile(r"=|≈|\\approx|≃")


def answer_tail(text: str) -> str | None:
    """Text after the last answer phrase ("the answer is", "Answer:", "final answer"...).

    Examples:
        >>> answer_tail("We add 3 and 4. The answer is 7 apples.")
        '7 apples.'
        >>> answer_tail("To answer this, count the apples.") is None
        True
    """
    matches = list(_ANSWER_PHRASE.finditer(text))
    if not matches:
        return None
    return text[matches[-1].end() :].strip()


def committed_segment(text: str) -> str:
    """The part of an answer the model commits to.

    The content of the last ``\\boxed{}``, else the text after the last answer phrase, else
    the text after the last ``=`` (or ``≈``), else the whole text.

    Examples:
        >>> committed_segment(r"x = 2 so \\boxed{2\\sqrt{3}}")
        '2\\\\sqrt{3}'
        >>> committed_segment("area = 1/2 * 6 = 3")
        '3'
    """
    boxed = extract_boxed(text)
    if boxed is not None:
        return boxed
    tail = answer_tail(text)
    if tail is not None:
        return tail
    parts = _EQUALS.split(text)
    if len(parts) > 1 and parts[-1].strip():
        return parts[-1].strip()
    return text.strip()
