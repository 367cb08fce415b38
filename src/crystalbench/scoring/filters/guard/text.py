"""Reading a step into tokens: words (stemmed), numbers, symbols and clause breaks.

The step is first rewritten by :mod:`crystalbench.normalize` (LaTeX and Unicode numbers,
number words, mixed numbers), so the guard reads numbers exactly as answers are read. Token
offsets refer to that rewritten text; :class:`OffsetMap` carries them back to the step as
written, for the spans a veto reports.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

from crystalbench.normalize.latex import prepare_math
from crystalbench.normalize.numbers import ParsedNumber, Token, find_numbers, numeric_text
from crystalbench.scoring.filters.guard.lexicon import SYNONYMS

__all__ = ["OffsetMap", "TextToken", "prepare_step", "stem", "tokenize"]

TokenKind = Literal["word", "number", "symbol", "break"]

_IRREGULAR = {
    "children": "child",
    "men": "man",
    "women": "woman",
    "people": "person",
    "mice": "mouse",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "leaves": "leaf",
    "halves": "half",
    "wolves": "wolf",
    "shelves": "shelf",
    "knives": "knife",
    "lives": "life",
    "is": "be",
    "are": "be",
    "was": "be",
    "were": "be",
    "has": "have",
    "had": "have",
    "does": "do",
    "did": "do",
    "gave": "give",
    "given": "give",
    "shown": "show",
    "seen": "see",
    "saw": "see",
    "found": "find",
    "got": "get",
    "made": "make",
    "drawn": "draw",
    "drew": "draw",
    "taken": "take",
    "took": "take",
    "grew": "grow",
    "grown": "grow",
    "fell": "fall",
    "fallen": "fall",
    "rose": "rise",
    "risen": "rise",
    "ate": "eat",
    "eaten": "eat",
    "held": "hold",
    "kept": "keep",
    "went": "go",
    "gone": "go",
    "lost": "lose",
    "left": "left",
    "built": "build",
    "bought": "buy",
    "sold": "sell",
    "read": "read",
    "led": "lead",
    "met": "meet",
    "won": "win",
    "lay": "lie",
    "lying": "lie",
    "dying": "die",
    "shut": "shut",
    "put": "put",
    "cut": "cut",
    "set": "set",
    "hit": "hit",
}
_DOUBLED = re.compile(r"([bdfgklmnprtz])\1$")


@functools.lru_cache(maxsize=1 << 15)
def stem(word: str) -> str:
    """A light, deterministic stem: plural, ``-ed``, ``-ing`` and a final ``e`` go.

    Only used to compare words of two steps, so it need not be a real word; it must give
    one form and its inflections the same key. Synonyms of :data:`~.lexicon.SYNONYMS` map
    to one key.

    Examples:
        >>> [stem(w) for w in ["apples", "Shaded", "shade", "labelled", "receives", "mice"]]
        ['appl', 'shad', 'shad', 'label', 'receiv', 'mous']
        >>> stem("sum"), stem("running"), stem("cells"), stem("glass")
        ('total', 'run', 'cell', 'glass')
    """
    word = word.lower()
    base = _IRREGULAR.get(word, word)
    if len(base) > 3 and word not in _IRREGULAR:
        if base.endswith("ies") and len(base) > 4:
            base = base[:-3] + "y"
        elif base.endswith(("sses", "shes", "ches", "xes", "zes")):
            base = base[:-2]
        elif base.endswith("s") and not base.endswith(("ss", "us", "is", "ous")):
            base = base[:-1]
        if base.endswith("ied") and len(base) > 4:
            base = base[:-3] + "y"
        elif base.endswith("ing") and len(base) > 5:
            base = _DOUBLED.sub(r"\1", base[:-3])
        elif base.endswith("ed") and len(base) > 4:
            base = _DOUBLED.sub(r"\1", base[:-2])
    for spelling in (word, base):
        if spelling in SYNONYMS:
            return SYNONYMS[spelling]
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    return base


class TextToken(NamedTuple):
    """One token of a prepared step (a named tuple: steps have many, and they are made
    fast)."""

    kind: TokenKind
    start: int
    """Offset in the prepared text."""
    end: int
    text: str
    """As written in the prepared text (a contraction's ``n't`` reads ``not``)."""
    low: str
    """``text`` in lower case."""
    key: str
    """Lower-cased stem for words (see :func:`stem`), the symbol itself, else ``""``."""
    capital: bool = False
    """The word starts with a capital letter."""
    sentence_start: bool = False
    """The word is the first of a sentence (its capital says nothing)."""
    number: ParsedNumber | None = None
    """The value of a number token."""


_WORD = r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ0-9]*(?:['’][A-Za-z]+)?"
_SCAN = re.compile(
    rf"(?P<word>{_WORD})|(?P<symbol>[=<>≠≤≥+×÷^√π~≈*/∠△°%-])|(?P<brk>[.,;:!?()\[\]{{}}\"“”])"
)
_CONTRACTION = re.compile(r"(?i)^(?P<base>[a-z]+)n['’]t$")
_CONTRACTION_BASES = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
_SENTENCE_END = frozenset(".!?:")
_NUMBER_WORD_HINT = re.compile(
    r"(?i)\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety|hundred|thousand|million|billion|minus|negative)"
)
"""A cheap test for the rewrite of :func:`~crystalbench.normalize.numbers.numeric_text`:
without any of these (nor a ``/``), it would return its text unchanged."""


def prepare_step(text: str) -> str:
    """The step as the number readers see it (see :mod:`crystalbench.normalize.numbers`).

    Examples:
        >>> prepare_step(r"The angle is $45^\\circ$; there are sixteen cells.")
        'The angle is  45°; there are 16 cells.'
    """
    prepared = prepare_math(text)
    if "/" in prepared or _NUMBER_WORD_HINT.search(prepared):
        return numeric_text(prepared)
    return prepared  # numeric_text would change nothing: no number word, no fraction


def _word_tokens(match: re.Match[str], sentence_start: bool) -> list[TextToken]:
    raw = match.group(0)
    start, end = match.span()
    capital = raw[:1].isupper()
    contraction = _CONTRACTION.match(raw)
    if contraction is not None:  # "isn't" -> "is" + "not"; "can't" -> "can" + "not"
        base = contraction["base"].lower()
        base = _CONTRACTION_BASES.get(base, base)
        cut = end - 3
        return [
            TextToken("word", start, cut, raw[:-3], base, stem(base), capital, sentence_start),
            TextToken("word", cut, end, "not", "not", "not"),
        ]
    if raw.lower() == "cannot":
        return [
            TextToken("word", start, start + 3, raw[:3], "can", "can", capital, sentence_start),
            TextToken("word", start + 3, end, "not", "not", "not"),
        ]
    word = re.sub(r"['’][A-Za-z]+$", "", raw) if ("'" in raw or "’" in raw) else raw  # "Monday's"
    low = word.lower()
    return [
        TextToken("word", start, start + len(word), word, low, stem(low), capital, sentence_start)
    ]


def _number_token(number: Token[ParsedNumber]) -> TextToken:
    return TextToken(
        "number", number.start, number.end, number.text, number.text, "", number=number.value
    )


def tokenize(
    prepared: str, numbers: Sequence[Token[ParsedNumber]] | None = None
) -> list[TextToken]:
    """Tokens of a prepared step (see :func:`prepare_step`), in order.

    Numbers come from :func:`crystalbench.normalize.numbers.find_numbers`; text inside a
    number ("1.2e3") is not read as words.

    Examples:
        >>> [(t.kind, t.key) for t in tokenize("The door isn't open: 3 cm.")]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('word', 'the'), ('word', 'door'), ('word', 'be'), ('word', 'not'), ('word', 'open'),
         ('break', ''), ('number', ''), ('word', 'cm'), ('break', '')]
    """
    found = list(find_numbers(prepared)) if numbers is None else list(numbers)
    tokens: list[TextToken] = []
    next_number = 0
    sentence_start = True
    position = 0
    for match in _SCAN.finditer(prepared):
        while next_number < len(found) and found[next_number].start <= match.start():
            number = found[next_number]
            if number.end > position:
                tokens.append(_number_token(number))
                position = number.end
                sentence_start = False
            next_number += 1
        if match.start() < position:  # inside a number ("1.2e3")
            continue
        if match["word"] is not None:
            tokens.extend(_word_tokens(match, sentence_start))
            sentence_start = False
        elif match["symbol"] is not None:
            symbol = match.group(0)
            tokens.append(TextToken("symbol", *match.span(), symbol, symbol, symbol))
        else:
            tokens.append(TextToken("break", *match.span(), match.group(0), match.group(0), ""))
            sentence_start = match.group(0) in _SENTENCE_END
        position = match.end()
    for number in found[next_number:]:
        tokens.append(_number_token(number))
    for index in range(1, len(tokens) - 1):  # "10 x 8": a multiplication sign
        token = tokens[index]
        between_numbers = tokens[index - 1].kind == "number" == tokens[index + 1].kind
        if token.kind == "word" and token.text in ("x", "X") and between_numbers:
            tokens[index] = TextToken("symbol", token.start, token.end, "×", "×", "×")
    return tokens


class OffsetMap:
    """Carries offsets in the prepared text back to the step as written.

    Examples:
        >>> original = "There are sixteen cells."
        >>> prepared = prepare_step(original)
        >>> start = prepared.index("16")
        >>> OffsetMap(original, prepared).span(start, start + 2)
        (10, 17)
    """

    def __init__(self, original: str, prepared: str) -> None:
        self.original = original
        self.prepared = prepared
        self._opcodes: Sequence[tuple[str, int, int, int, int]] | None = None

    def _ops(self) -> Sequence[tuple[str, int, int, int, int]]:
        if self._opcodes is None:
            matcher = difflib.SequenceMatcher(None, self.prepared, self.original, autojunk=False)
            self._opcodes = matcher.get_opcodes()
        return self._opcodes

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``(start, end)`` of the prepared span ``[start, end)``."""
        if self.original == self.prepared:
            return start, end
        ops = self._ops()
        new_start = new_end = None
        for tag, a1, a2, b1, b2 in ops:
            if new_start is None and a1 <= start < a2:
                new_start = b1 + (start - a1) if tag == "equal" else b1
            if a1 < end <= a2:
                new_end = b1 + (end - a1) if tag == "equal" else b2
                break
        first = 0 if new_start is None else new_start
        last = len(self.original) if new_end is None else new_end
        # leading or trailing blanks of a rewritten span ("  45° ") are not part of it
        while first < last and self.original[first].isspace():
            first += 1
        while last > first and self.original[last - 1].isspace():
            last -= 1
        return first, max(first, last)
