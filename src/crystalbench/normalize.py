"""Answer normalisation: the one place that turns answer text into comparable values.

Everything that reads a model's (or a gold) answer goes through here: text normalisation for
exact matching, ``\\boxed{}`` and answer lead-in handling, number extraction, symbolic values
through math-verify, yes/no reading and choice-letter reading. :mod:`crystalbench.answers`
holds the rules that decide correctness with these values; parsing, rewards and reports reuse
the same functions instead of carrying their own regexes.

Nothing here raises on model output: a text that holds no number, no letter or no yes/no
gives ``None`` (or an empty result).
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from typing import Any, Literal, NamedTuple

# The one answer extractor (boxes, answer phrases, lead-ins) is shared with the parser.
from crystalbench.parsing.answer import ANSWER_LEAD_IN as _ANSWER_LEAD_IN
from crystalbench.parsing.answer import answer_tail, extract_boxed

__all__ = [
    "ChoiceLetters",
    "ParsedNumber",
    "YesNo",
    "answer_tail",
    "clean_answer",
    "committed_segment",
    "extract_boxed",
    "extract_number",
    "find_choice_letters",
    "has_symbolic_markup",
    "math_equivalent",
    "normalize_text",
    "numbers_close",
    "parse_number",
    "parse_yes_no",
    "symbolic_value",
]

YesNo = Literal["yes", "no"]

# ---------------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------------

_ARTICLES = frozenset({"a", "an", "the"})
_QUOTES = str.maketrans({"‘": "'", "’": "'", "`": "'", "“": '"', "”": '"', "\u00a0": " "})
_MARKDOWN = re.compile(r"\*\*|__|~~|`")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}")


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
    text = unicodedata.normalize("NFKC", str(text)).translate(_QUOTES).casefold()
    text = text.replace("'", "")
    kept = []
    for position, char in enumerate(text):
        if unicodedata.category(char).startswith("P") and not _keeps_punctuation(text, position):
            kept.append(" ")
        else:
            kept.append(char)
    words = [word for word in "".join(kept).split() if word not in _ARTICLES]
    return " ".join(words)


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
    text = unicodedata.normalize("NFKC", str(text)).translate(_QUOTES)
    text = _MARKDOWN.sub("", text).strip()
    boxed = extract_boxed(text)
    if boxed is not None:
        text = boxed
    text = _LATEX_TEXT.sub(r"\1", text).replace("$", "")
    for _ in range(2):  # "Answer: the answer is X"
        text = _ANSWER_LEAD_IN.sub("", text, count=1)
    return text.strip().rstrip(".").strip()


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------


class ParsedNumber(NamedTuple):
    """A number read from text."""

    value: float
    """The value (a percentage keeps its face value: "50%" is 50.0)."""
    percent: bool
    """True when the number carried a percent sign."""


_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(
    rf"(?<![\w.])(?P<sign>[-+])?(?:[$€£¥]\s?)?(?P<num>{_NUM})"
    rf"(?:\s*/\s*(?P<den_sign>[-+])?(?P<den>{_NUM}))?(?P<percent>\s*%)?"
)
_UNIT_WORDS = r"(?:\s*[A-Za-zµΩ°][\w/^²³·.\-]*){0,3}"
_STRICT_NUMBER = re.compile(
    rf"\s*(?:[$€£¥]\s*)?(?P<sign>[-+])?\s*(?:[$€£¥]\s*)?(?P<num>{_NUM})"
    rf"(?:\s*/\s*(?P<den_sign>[-+])?(?P<den>{_NUM}))?"
    rf"\s*(?P<percent>%)?\s*°?{_UNIT_WORDS}\s*\.?\s*"
)
_NUMERIC_FRAC = re.compile(
    r"(?P<sign>-)?\\frac\s*\{\s*(?P<a>[-+]?\s*[\d.,]+)\s*\}\s*\{\s*(?P<b>[-+]?\s*[\d.,]+)\s*\}"
)
_SHORT_FRAC = re.compile(r"\\frac\s*(\d)(\d)")
_SCIENTIFIC = re.compile(
    rf"(?P<mantissa>{_NUM})\s*(?:\\times|×|x|\*|\\cdot|·)\s*10\s*\^\s*\{{?\s*(?P<exp>[-+]?\d+)\s*\}}?"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|°")
_EQUALS = re.compile(r"=|≈|\\approx|≃")


def _prepare_math(text: str) -> str:
    """Rewrite the LaTeX and Unicode spellings of plain numbers into ASCII ones."""
    text = unicodedata.normalize("NFKC", str(text))
    text = text.replace("−", "-").replace("–", "-").replace("\u2009", " ").replace("\u00a0", " ")
    text = _LATEX_TEXT.sub(r" \1", text)
    text = text.replace("\\%", "%").replace("\\$", "$")
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


def _to_float(number: str) -> float:
    return float(number.replace(",", ""))


def _number_from_match(match: re.Match[str]) -> ParsedNumber | None:
    value = _to_float(match["num"])
    if match["den"] is not None:
        denominator = _to_float(match["den"])
        if denominator == 0:
            return None
        value /= denominator
        if match["den_sign"] == "-":
            value = -value
    if match["sign"] == "-":
        value = -value
    if not math.isfinite(value):
        return None
    return ParsedNumber(value, match["percent"] is not None)


def parse_number(text: str) -> ParsedNumber | None:
    """Read ``text`` as one number, or ``None`` when it is anything else.

    Accepts signs, thousands separators, decimals, fractions (``3/4``, ``\\frac{3}{4}``,
    ``\\dfrac``), percent, degrees, scientific notation (``1.2e3``, ``1.2 \\times 10^{3}``),
    a currency sign and up to three trailing unit words. Text with two numbers, or with
    words before the number, is not a number.

    Examples:
        >>> parse_number("1,234.5")
        ParsedNumber(value=1234.5, percent=False)
        >>> parse_number(r"\\frac{3}{4}").value, parse_number("-$3.50").value
        (0.75, -3.5)
        >>> parse_number("45^\\\\circ").value, parse_number("12 cm").value
        (45.0, 12.0)
        >>> parse_number("25%")
        ParsedNumber(value=25.0, percent=True)
        >>> parse_number("1.2 × 10^3").value
        1200.0
        >>> parse_number("2 dogs and 3 cats") is None, parse_number("2\\\\sqrt{3}") is None
        (True, True)
    """
    if has_symbolic_markup(text):
        return None
    prepared = _prepare_math(text).strip()
    match = _STRICT_NUMBER.fullmatch(prepared)
    if match is None:
        return None
    return _number_from_match(match)


def _numbers_in(text: str) -> list[ParsedNumber]:
    found = []
    for match in _NUMBER.finditer(text):
        number = _number_from_match(match)
        if number is not None:
            found.append(number)
    return found


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


def extract_number(text: str) -> ParsedNumber | None:
    """The number a model's answer commits to.

    In order: inside the last ``\\boxed{}`` (that box decides); the first number after the
    last answer phrase ("the answer is", "Answer:"; that phrase decides); the first number
    after the last ``=``; else the *last* number in the text (so "In 2019 the value was 45"
    reads 45, not 2019).

    Examples:
        >>> extract_number("In 2019 the value was 45").value
        45.0
        >>> extract_number("The answer is 1,234 people, up from 1,000.").value
        1234.0
        >>> extract_number(r"3 + 4 = \\boxed{7}").value
        7.0
        >>> extract_number("3 apples and 4 pears: the answer is seven.") is None
        True
        >>> extract_number("x = -3/4 m").value
        -0.75
    """
    prepared = _prepare_math(text)
    boxed = extract_boxed(str(text))
    if boxed is not None:
        return extract_number(boxed)
    tail = answer_tail(prepared)
    if tail is not None:
        numbers = _numbers_in(tail)
        return numbers[0] if numbers else None
    parts = _EQUALS.split(prepared)
    if len(parts) > 1:
        numbers = _numbers_in(parts[-1])
        if numbers:
            return numbers[0]
    numbers = _numbers_in(prepared)
    return numbers[-1] if numbers else None


def numbers_close(predicted: float, gold: float, *, abs_tol: float, rel_tol: float) -> bool:
    """True iff ``|p - g| <= abs_tol`` or ``|p - g| / max(|g|, 1e-9) <= rel_tol``.

    Examples:
        >>> numbers_close(10.9, 10.0, abs_tol=0.05, rel_tol=0.10)
        True
        >>> numbers_close(11.1, 10.0, abs_tol=0.05, rel_tol=0.10)
        False
    """
    difference = abs(predicted - gold)
    # a tiny epsilon keeps values that sit on the boundary (0.1 + 0.05 ...) inside it
    return difference <= abs_tol + 1e-12 or difference / max(abs(gold), 1e-9) <= rel_tol + 1e-12


# ---------------------------------------------------------------------------------------------
# Symbolic values (math-verify)
# ---------------------------------------------------------------------------------------------

_SYMBOLIC_MARKUP = re.compile(
    r"\\(?:sqrt|pi|frac|cdot|times|log|ln|sin|cos|tan|exp)|√|π|(?<=[\d})])\s*\^"
    r"|\bsqrt\s*\(|\bpi\b"
)
_MAX_SYMBOLIC_CHARS = 400


def has_symbolic_markup(text: str) -> bool:
    """True when ``text`` holds math that :func:`parse_number` cannot read (radicals, pi...).

    Examples:
        >>> has_symbolic_markup(r"2\\sqrt{3}"), has_symbolic_markup(r"\\frac{3}{4}")
        (True, False)
    """
    return bool(_SYMBOLIC_MARKUP.search(_prepare_math(text).replace("°", "")))


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
    without one (inputs are capped at a few hundred characters).

    Examples:
        >>> round(symbolic_value(r"2\\sqrt{3}"), 4), round(symbolic_value(r"\\frac{\\pi}{2}"), 4)
        (3.4641, 1.5708)
        >>> symbolic_value("x + 1") is None, symbolic_value("Route 66", prose=False) is None
        (True, True)
    """
    text = str(text)
    if not text.strip() or len(text) > _MAX_SYMBOLIC_CHARS:
        return None
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


# ---------------------------------------------------------------------------------------------
# Yes / no
# ---------------------------------------------------------------------------------------------

_YES_WORDS = frozenset({"yes", "yeah", "yep", "true", "correct", "affirmative"})
_NO_WORDS = frozenset({"no", "nope", "false", "incorrect", "not", "negative", "cannot"})
_ABSTAIN = re.compile(
    r"\b(?:do\s*n[o']?t|does\s*n[o']?t|can\s*n?[o']?t|cannot)\s+(?:know|tell|say|determine|be\s+sure)"
    r"|\bnot\s+(?:sure|certain|clear|possible\s+to\s+(?:tell|determine|say))"
    r"|\b(?:unsure|unknown|unclear|uncertain|impossible\s+to\s+(?:tell|determine|say))\b"
    r"|\bno\s+way\s+to\s+(?:tell|know)",
    re.IGNORECASE,
)


def _yes_no_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", str(text)).translate(_QUOTES).casefold()
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

    1. An abstention ("I don't know", "not sure", "cannot tell", "unclear") is no answer:
       ``None``. It is never "no".
    2. The first word of the committed part (``\\boxed{}`` or after "the answer is"), else
       of the whole text, decides when it is a yes word (yes, true, correct...) or a no word
       (no, false, incorrect, not, any "n't" contraction).
    3. Otherwise every yes/no word in the text counts ("not true" counts once, as no); all
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
    """
    text = unicodedata.normalize("NFKC", str(text)).translate(_QUOTES)
    if _ABSTAIN.search(text):
        return None
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


# ---------------------------------------------------------------------------------------------
# Choice letters
# ---------------------------------------------------------------------------------------------


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
