"""Where an answer's committed part is: ``\\boxed{}``, "the answer is", the last ``=``.

Boxes and answer phrases are read by the one answer extractor,
:mod:`crystalbench.parsing.answer`, which the parser uses too (so both agree on every box,
escaped braces included: ``\\boxed{a\\}b}`` holds ``a\\}b``). This module adds only what
answer *comparison* needs on top: :func:`committed_segment`, the last ``=`` as a last resort.
Everything else in :mod:`crystalbench.normalize` calls these names and never re-implements them.
"""

from __future__ import annotations

import re

from crystalbench.parsing.answer import answer_tail, extract_boxed

__all__ = ["answer_tail", "committed_segment", "extract_boxed"]

_EQUALS = re.compile(r"=|≈|\\approx|≃")


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
