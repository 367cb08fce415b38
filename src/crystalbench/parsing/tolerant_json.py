"""A forgiving reader for the JSON-like objects models write.

:class:`TolerantReader` accepts what :mod:`json` rejects: single, smart and missing quotes,
trailing and missing commas, comments, Python literals, raw newlines in strings, unescaped
inner quotes and LaTeX written with single backslashes (``"\\frac"`` stays LaTeX, not a form
feed). Where the text ends inside a structure it keeps the complete values read so far. It
reads forward only (no backtracking), so its cost is linear in what it reads.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "LATEX_ESCAPE",
    "EndOfText",
    "ParseError",
    "RawNumber",
    "TolerantReader",
    "has_latex_escape",
]


class RawNumber(str):
    """A JSON number kept as its source text ("3.50" stays "3.50")."""


class ParseError(Exception):
    """The tolerant reader met something that is not JSON-like."""


class EndOfText(Exception):
    """The text ended inside a string, number or literal."""


# LaTeX commands whose first letter is also a JSON escape (\f -> form feed, \t -> tab...):
# "\frac" in a JSON string is almost always LaTeX written with one backslash.
_LATEX_WORDS = frozenset(
    (
        "bar",
        "beta",
        "bf",
        "big",
        "bigg",
        "bigl",
        "bigr",
        "bigcup",
        "bigcap",
        "binom",
        "bmod",
        "bot",
        "boxed",
        "breve",
        "bullet",
        "backslash",
        "because",
        "begin",
        "frac",
        "forall",
        "flat",
        "frown",
        "ne",
        "neq",
        "nabla",
        "nu",
        "not",
        "neg",
        "newline",
        "ni",
        "notin",
        "nmid",
        "nleq",
        "ngeq",
        "nexists",
        "natural",
        "rangle",
        "rceil",
        "rfloor",
        "rho",
        "right",
        "rightarrow",
        "rightleftharpoons",
        "rm",
        "rvert",
        "rbrace",
        "rbrack",
        "root",
        "tan",
        "tanh",
        "tau",
        "text",
        "textbf",
        "textit",
        "textrm",
        "texttt",
        "textdegree",
        "textstyle",
        "tfrac",
        "tbinom",
        "theta",
        "therefore",
        "tilde",
        "times",
        "to",
        "top",
        "triangle",
    )
)
LATEX_ESCAPE = re.compile(r"\\[bfnrt][a-z]")
_BACKSLASH_RUN = re.compile(r"\\(\\|[bfnrt][A-Za-z]*)")
_LETTERS = re.compile(r"[A-Za-z]+")


def has_latex_escape(span: str) -> bool:
    for m in _BACKSLASH_RUN.finditer(span):
        word = m.group(1)
        if word != "\\" and word in _LATEX_WORDS:
            return True
    return False


_QUOTE_CLOSERS = {'"': '"', "'": "'", "“": '”"“', "”": '”"', "‘": "’'", "’": "’'"}
_STRING_STOP = {q: re.compile("[\\\\" + re.escape(c) + "]") for q, c in _QUOTE_CLOSERS.items()}
_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "'": "'",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SPACES = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?=[ \t\r\n]*(?:[,\]}]|$))")
_BARE_VALUE = re.compile(r"[^,\]}\n\"]{1,400}")
_BARE_KEY = re.compile(r"[A-Za-z_][\w\-]*(?: [\w\-]+){0,6}")
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "none": None,
    "undefined": None,
}
_MAX_DEPTH = 64


class TolerantReader:
    """A forgiving reader for JSON-like objects.

    Accepts single, smart and missing quotes (bare keys and values), trailing and missing
    commas, comments, Python literals, raw newlines in strings and unescaped inner quotes (a
    quote closes a string only when a delimiter follows it). Where the text ends inside a
    structure, it keeps the complete values read so far and sets ``truncated``.
    """

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.n = len(text)
        self.pos = pos
        self.truncated = False

    def read_object(self) -> dict[str, Any]:
        return self._object(0)

    def read_array(self) -> list[Any]:
        return self._array(0)

    def _skip_space(self) -> None:
        text = self.text
        while True:
            m = _SPACES.match(text, self.pos)
            self.pos = m.end() if m else self.pos
            if text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = self.n if newline < 0 else newline
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                self.pos = self.n if close < 0 else close + 2
            else:
                return

    def _value(self, depth: int) -> Any:
        self._skip_space()
        if self.pos >= self.n:
            raise EndOfText
        char = self.text[self.pos]
        if char == "{":
            return self._object(depth + 1)
        if char == "[":
            return self._array(depth + 1)
        if char in _QUOTE_CLOSERS:
            return self._string(char, key=False)
        m = _NUMBER.match(self.text, self.pos)
        if m:
            if m.end() >= self.n:
                raise EndOfText  # "42" at the very end may be the start of "420"
            self.pos = m.end()
            return RawNumber(m.group())
        m = _BARE_VALUE.match(self.text, self.pos)
        if m is None:
            raise ParseError
        if m.end() >= self.n:
            raise EndOfText
        self.pos = m.end()
        word = m.group().strip()
        return _LITERALS.get(word.lower(), word)

    def _object(self, depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise ParseError
        self.pos += 1  # "{"
        out: dict[str, Any] = {}
        while True:
            self._skip_space()
            if self.pos >= self.n:
                self.truncated = True
                return out
            char = self.text[self.pos]
            if char == "}":
                self.pos += 1
                return out
            if char == ",":
                self.pos += 1
                continue
            try:
                key = self._key()
                self._skip_space()
                if self.pos >= self.n:
                    raise EndOfText
                if self.text[self.pos] not in ":=":
                    raise ParseError
                self.pos += 1
                value = self._value(depth)
            except EndOfText:
                self.pos = self.n
                self.truncated = True
                return out
            out[key] = value
            if self.truncated:
                return out

    def _array(self, depth: int) -> list[Any]:
        if depth > _MAX_DEPTH:
            raise ParseError
        self.pos += 1  # "["
        out: list[Any] = []
        while True:
            self._skip_space()
            if self.pos >= self.n:
                self.truncated = True
                return out
            char = self.text[self.pos]
            if char == "]":
                self.pos += 1
                return out
            if char == "}":  # "[... }": the list was never closed; let the object close
                return out
            if char == ",":
                self.pos += 1
                continue
            try:
                value = self._value(depth)
            except EndOfText:
                self.pos = self.n
                self.truncated = True
                return out
            out.append(value)
            if self.truncated:
                return out

    def _key(self) -> str:
        char = self.text[self.pos]
        if char in _QUOTE_CLOSERS:
            return self._string(char, key=True)
        m = _BARE_KEY.match(self.text, self.pos)
        if m is None:
            raise ParseError
        self.pos = m.end()
        return m.group()

    def _string(self, quote: str, *, key: bool) -> str:
        text, n = self.text, self.n
        stop = _STRING_STOP[quote]
        parts: list[str] = []
        pos = self.pos + 1
        while True:
            m = stop.search(text, pos)
            if m is None:
                self.pos = n
                raise EndOfText
            i = m.start()
            parts.append(text[pos:i])
            if text[i] == "\\":
                pos = self._escape(i, parts)
                continue
            # A quote closes the string only when a delimiter follows; otherwise it is an
            # unescaped quote inside the text ('It's', "the "A" label").
            j = _SPACES.match(text, i + 1)
            after = j.end() if j else i + 1
            if after >= n:
                self.pos = after
                return "".join(parts)
            nxt = text[after]
            if (
                (key and nxt in ":=")
                or (not key and nxt in ",}]")
                or (not key and nxt in _QUOTE_CLOSERS and "\n" in text[i + 1 : after])
            ):
                self.pos = i + 1
                return "".join(parts)
            parts.append(text[i])
            pos = i + 1

    def _escape(self, i: int, parts: list[str]) -> int:
        """Decode the escape at ``text[i] == "\\"``; return where reading resumes."""
        text = self.text
        if i + 1 >= self.n:
            self.pos = self.n
            raise EndOfText
        nxt = text[i + 1]
        if nxt in "bfnrt":
            word = _LETTERS.match(text, i + 1)
            if word is not None and word.group() in _LATEX_WORDS:
                parts.append("\\")  # keep "\frac" as LaTeX; the letters follow as text
                return i + 1
        if nxt == "u":
            hex4 = _HEX4.fullmatch(text, i + 2, i + 6)
            if hex4 is None:
                parts.append("\\")  # "\underline"
                return i + 1
            code = int(hex4.group(), 16)
            if 0xD800 <= code < 0xDC00 and text.startswith("\\u", i + 6):
                low = _HEX4.fullmatch(text, i + 8, i + 12)
                if low is not None and 0xDC00 <= int(low.group(), 16) < 0xE000:
                    pair = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
                    parts.append(chr(pair))
                    return i + 12
            parts.append(chr(code))
            return i + 6
        if nxt in _ESCAPES:
            parts.append(_ESCAPES[nxt])
            return i + 2
        parts.append("\\")  # unknown escape such as "\(" or "\sqrt": keep it literally
        return i + 1
