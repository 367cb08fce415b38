"""LaTeX and Unicode spellings of numbers, rewritten into plain ASCII before reading.

The bottom layer of :mod:`crystalbench.normalize`: :func:`prepare_math` turns ``\\frac{3}{4}``
into ``3/4``, ``45^\\circ`` into ``45°``, ``½`` into ``1/2`` and so on, for the number
readers; :func:`plain_math` goes further for text comparison (``\\sqrt{3}`` -> ``√3``, braces
dropped), so that an option written ``$\\frac{1}{2}$`` and an answer written ``1/2`` compare
equal as text.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["has_symbolic_markup", "plain_math", "prepare_math"]

LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}")
_NUMERIC_FRAC = re.compile(
    r"(?P<sign>-)?\\frac\s*\{\s*(?P<a>[-+]?\s*[\d.,]+)\s*\}\s*\{\s*(?P<b>[-+]?\s*[\d.,]+)\s*\}"
)
_SHORT_FRAC = re.compile(r"\\frac\s*(\d)(\d)")
_SCIENTIFIC = re.compile(
    r"(?P<mantissa>(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+))"
    r"\s*(?:\\times|×|x|\*|\\cdot|·)\s*10\s*\^\s*\{?\s*(?P<exp>[-+]?\d+)\s*\}?"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|°")
_DASH_BETWEEN_NUMBERS = re.compile(r"(?<=\d)(\s*)[–—](\s*)(?=\d)")
"""An en or em dash between two numbers is a range dash ("25–30"), kept as ``–``."""


def _vulgar_fractions(text: str) -> str:
    """``½`` -> `` 1/2`` before NFKC, which would glue ``1½`` into ``11⁄2``."""
    if text.isascii():
        return text
    out = []
    for char in text:
        if unicodedata.category(char) == "No" and "⁄" in unicodedata.normalize("NFKC", char):
            numerator, _, denominator = unicodedata.normalize("NFKC", char).partition("⁄")
            out.append(f" {numerator}/{denominator}")
        else:
            out.append(char)
    return "".join(out)


def prepare_math(text: str) -> str:
    """Rewrite the LaTeX and Unicode spellings of plain numbers into ASCII ones.

    The number, clock, range and ratio readers all start here, several times per answer,
    so results are cached (the function is pure).

    Examples:
        >>> prepare_math(r"$-\\frac{3}{4}$ and 45^\\circ").split()
        ['-3/4', 'and', '45°']
        >>> prepare_math("1½ cups, 25–30 m, 1{,}234")
        '1 1/2 cups, 25–30 m, 1,234'
    """
    return _prepare_math(str(text))


@functools.lru_cache(maxsize=1 << 14)
def _prepare_math(text: str) -> str:
    text = unicodedata.normalize("NFKC", _vulgar_fractions(text))
    text = _DASH_BETWEEN_NUMBERS.sub("\\1\ue000\\2", text)  # a range dash survives as "–"
    for dash in ("−", "–", "—"):
        text = text.replace(dash, "-")
    text = text.replace("\ue000", "–").replace("⁄", "/").replace("∶", ":")
    text = text.replace("\u2009", " ").replace("\u00a0", " ")
    text = LATEX_TEXT.sub(r" \1", text)
    text = text.replace("\\%", "%").replace("\\$", "$").replace("{,}", ",")
    text = re.sub(r"(?<=[-+])\$", "", text).replace("$", " ")
    for command in ("\\left", "\\right", "\\,", "\\;", "\\!", "\\ ", "\\displaystyle"):
        text = text.replace(command, " " if command in ("\\,", "\\;", "\\ ") else "")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = _SHORT_FRAC.sub(r"\\frac{\1}{\2}", text)

    def frac(match: re.Match[str]) -> str:
        a = match["a"].replace(" ", "")
        b = match["b"].replace(" ", "")
        sign = "-" if match["sign"] else ""
        if a.startswith("-") and sign:
            a, sign = a[1:], ""
        return f" {sign}{a}/{b}"

    text = _NUMERIC_FRAC.sub(frac, text)
    text = _DEGREES.sub("°", text)
    return _SCIENTIFIC.sub(lambda m: f"{m['mantissa']}e{m['exp']}", text)


_SYMBOLIC_MARKUP = re.compile(
    r"\\(?:sqrt|pi|frac|cdot|times|log|ln|sin|cos|tan|exp)|√|π|(?<=[\d})])\s*\^"
    r"|\bsqrt\s*\(|\bpi\b"
)


def has_symbolic_markup(text: str) -> bool:
    """True when ``text`` holds math that the number reader cannot read (radicals, pi...).

    Examples:
        >>> has_symbolic_markup(r"2\\sqrt{3}"), has_symbolic_markup(r"\\frac{3}{4}")
        (True, False)
    """
    return bool(_SYMBOLIC_MARKUP.search(prepare_math(text).replace("°", "")))


_ANY_FRAC = re.compile(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\s*(?:\{([^{}]*)\}|(\d+|[A-Za-z]))")
_SYMBOLS = {"\\pi": "π", "\\cdot": "·", "\\times": "×", "\\div": "÷", "\\pm": "±"}


def plain_math(text: str) -> str:
    """LaTeX math as plain text, for comparing options and answers as text.

    ``$`` and spacing commands go, ``\\frac{a}{b}`` becomes ``a/b``, ``\\sqrt{3}`` becomes
    ``√3``, ``\\pi`` becomes ``π``, degrees become ``°``, the remaining braces go and
    whitespace is collapsed.

    Examples:
        >>> plain_math(r"$\\frac{1}{2}$"), plain_math(r"\\sqrt{3}"), plain_math(r"$2\\pi r$")
        ('1/2', '√3', '2π r')
    """
    text = prepare_math(text)
    for command, symbol in _SYMBOLS.items():
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, text)
    text = _SQRT.sub(lambda m: "√" + (m[1] if m[1] is not None else m[2]), text)
    for _ in range(3):  # nested fractions, innermost first
        text = _ANY_FRAC.sub(r"(\1)/(\2)", text)
    text = re.sub(r"\(([\w√.]+)\)/\(([\w√.]+)\)", r"\1/\2", text)
    return " ".join(text.replace("{", "").replace("}", "").split())
