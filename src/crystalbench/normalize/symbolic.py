"""Symbolic values and equivalence through math-verify (radicals, pi, tuples, expressions)."""

from __future__ import annotations

import contextlib
import functools
import math
import re
import threading
from collections.abc import Iterator
from typing import Any, Protocol

from crystalbench.normalize.extraction import committed_segment
from crystalbench.normalize.text import clean_answer

__all__ = ["math_equivalent", "remembered_values", "symbolic_value"]

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
    key = f"{int(prose)}:{text}"
    if key in _REMEMBERED:
        return _REMEMBERED[key]
    value = _cached_value(text, prose)
    if _ATTACHED:
        with _LOCK:
            _FRESH[key] = value
    return value


class ValueStore(Protocol):
    """Where values are remembered between runs (the embedding cache,
    :class:`crystalbench.encoders.cache.EmbeddingStore`)."""

    @property
    def path(self) -> Any:
        """The file the values live in."""
        ...

    def get_values(self, namespace: str) -> dict[str, float | None]:
        """Every value remembered under ``namespace``."""
        ...

    def put_values(self, namespace: str, values: dict[str, float | None]) -> None:
        """Remember ``values`` under ``namespace``."""
        ...


_LOCK = threading.Lock()
_REMEMBERED: dict[str, float | None] = {}
_FRESH: dict[str, float | None] = {}
_LOADED: set[tuple[str, str]] = set()
_ATTACHED = 0


def symbolic_namespace() -> str:
    """What remembered values depend on: this module's code (a digest of its source, so
    any change to how values are read makes new ones) and the versions of math-verify, its
    LaTeX parser and sympy (from the installed metadata; nothing is imported)."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    from crystalbench._version import __version__

    try:
        code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    except OSError:  # pragma: no cover - installed without sources
        code = f"crystalbench={__version__}"
    parts = [f"symbolic:{code}"]
    for package in ("math-verify", "latex2sympy2_extended", "sympy"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=none")
    return ";".join(parts)


@contextlib.contextmanager
def remembered_values(store: ValueStore | None) -> Iterator[None]:
    """Reuse (and keep) :func:`symbolic_value` results in ``store`` while inside.

    Parsing a LaTeX gold through math-verify takes about 15 ms, and importing math-verify
    (sympy, its ANTLR parser) 0.7 s; a re-score of the same benchmark asks for the same
    values again. Inside this block, values remembered under :func:`symbolic_namespace`
    are answered from memory, and values computed anew are written to ``store`` when the
    block ends (also when it fails). Without a store this does nothing.
    """
    global _ATTACHED
    if store is None:
        yield
        return
    namespace = symbolic_namespace()
    loaded = (str(store.path), namespace)
    if loaded not in _LOADED:
        values = store.get_values(namespace)
        with _LOCK:
            _REMEMBERED.update(values)
            _LOADED.add(loaded)
    with _LOCK:
        _ATTACHED += 1
    try:
        yield
    finally:
        with _LOCK:
            _ATTACHED -= 1
            fresh = dict(_FRESH)
            _FRESH.clear()
        if fresh:
            store.put_values(namespace, fresh)
            with _LOCK:
                _REMEMBERED.update(fresh)


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
