"""Symbolic values and equivalence through math-verify (radicals, pi, tuples, expressions)."""

from __future__ import annotations

import functools
import math
import re
import threading
from typing import Any

from crystalbench.normalize.extraction import committed_segment
from crystalbench.normalize.text import clean_answer

__all__ = ["math_equivalent", "symbolic_value"]

_MAX_SYMBOLIC_CHARS = 400


def _as_latex(text: str, *, prose: bool = True) -> str:
    text = text.strip()
    text = text.replace("√", "\\sqrt").replace("π", "\\pi")
    text = re.sub(r"\bsqrt\s*\(([^()]*)\)", r"\\sqrt{\1}", text)
    text = re.sub(r"(?<!\\)\bpi\b", r"\\pi", text)
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        if not prose:
            return f"${text}$"
        # prose around bare math ("The side is 2\\sqrt{3} cm") would read as a product of
        # symbols: drop words of two or more letters that are not LaTeX commands
        text = re.sub(r"(?<![\\A-Za-z])[A-Za-z]{2,}\b", " ", text).strip(" .,;:")
        text = f"${text}$"
    return text


def _math_verify_parse(text: str, *, prose: bool = True) -> list[object]:
    """math-verify's ``parse`` with its signal timeout only where signals work."""
    from math_verify import parse

    in_main = threading.current_thread() is threading.main_thread()
    return list(parse(_as_latex(text, prose=prose), parsing_timeout=5 if in_main else None))


def symbolic_value(text: str, *, prose: bool = True) -> float | None:
    """Real value of a math expression (LaTeX, radicals, pi) via math-verify, else ``None``.

    With ``prose`` (for model answers), words of two or more letters around bare math are
    dropped first ("The side is 2\\sqrt{3} cm"); without it (for golds) any word makes the
    text a non-number ("Route 66"). Expressions with free variables, sets, intervals or
    complex values give ``None``.
    math-verify's signal-based timeout only works in the main thread; elsewhere it runs
    without one (inputs are capped at a few hundred characters). Results are cached.

    Examples:
        >>> round(symbolic_value(r"2\\sqrt{3}"), 4), round(symbolic_value(r"\\frac{\\pi}{2}"), 4)
        (3.4641, 1.5708)
        >>> symbolic_value("x + 1") is None, symbolic_value("Route 66", prose=False) is None
        (True, True)
    """
    text = str(text)
    if not text.strip() or len(text) > _MAX_SYMBOLIC_CHARS:
        return None
    return _cached_value(text, prose)


@functools.lru_cache(maxsize=4096)
def _cached_value(text: str, prose: bool) -> float | None:
    try:
        parsed = _math_verify_parse(text, prose=prose)
        if not parsed:
            return None
        expression: Any = parsed[0]
        if getattr(expression, "free_symbols", None):
            return None
        value = complex(expression.evalf())
    except Exception:  # math-verify and sympy raise many kinds of errors on odd input
        return None
    if abs(value.imag) > 1e-12 or not math.isfinite(value.real):
        return None
    return float(value.real)


def math_equivalent(answer: str, gold: str) -> bool:
    """True when math-verify finds ``answer`` equal to ``gold`` (tuples, sets, expressions).

    Only for golds written in LaTeX (they hold a backslash or ``$``); the answer's committed
    part (see :func:`committed_segment`) is compared. Any failure means "not equivalent".

    Examples:
        >>> math_equivalent("The answer is (2, 3)", r"$(2,3)$")
        True
        >>> math_equivalent("(3, 2)", r"$(2,3)$")
        False
    """
    gold, answer = str(gold), str(answer)
    if ("\\" not in gold and "$" not in gold) or len(answer) > _MAX_SYMBOLIC_CHARS:
        return False
    try:
        from math_verify import verify

        gold_parsed = _math_verify_parse(clean_answer(gold), prose=False)
        answer_parsed = _math_verify_parse(committed_segment(answer))
        if not gold_parsed or not answer_parsed:
            return False
        in_main = threading.current_thread() is threading.main_thread()
        return bool(verify(gold_parsed, answer_parsed, timeout_seconds=5 if in_main else None))
    except Exception:  # math-verify may choke on odd input: no equivalence then
        return False
