"""The one answer extractor: ``\\boxed{}``, answer tags, "Answer:" and "Final answer".

Both the parser (which looks for the answer a whole model output commits to) and
:mod:`crystalbench.normalize` (which reads an answer string when judging it) take their
``\\boxed{}`` reader, answer phrases and answer lead-ins from here, so the two can never
disagree on what a box holds or where an answer begins.

- :func:`boxed_spans` / :func:`extract_boxed`: boxes are matched with an explicit stack;
  escaped braces ``\\{`` and ``\\}`` never open or close one (``\\boxed{a\\}b}`` holds
  ``a\\}b``), a LaTeX line break ``\\\\`` is not an escape, an unclosed box holds nothing.
- :data:`ANSWER_PHRASE` finds "the answer is" / "answer:" inside reasoning text (the parser);
  :data:`ANSWER_TAIL_PHRASE` also accepts "answer was", "answer equals", "answer =",
  "result is" and a bare "final answer", because it only ever reads text that already is an
  answer (:func:`answer_tail`); :data:`ANSWER_LEAD_IN` strips such a phrase from the start of
  an answer ("So the final answer is: 3").
- :data:`ANSWER_LINE` recognises a whole "Answer: ..." / "**Final Answer**" line.
- the rule set that picks the answer a whole text commits to is in
  :mod:`crystalbench.parsing.answer_rules`.

This module imports nothing above the parsing layer (no :mod:`crystalbench.normalize`, no
:mod:`crystalbench.answers`); every pattern is linear-time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from crystalbench.parsing.cleaning import SURROGATE, clean_step, has_alnum, is_filler, plain
from crystalbench.parsing.sentences import SENTENCE_END, ends_abbreviation

__all__ = [
    "ANSWER_LEAD_IN",
    "ANSWER_LINE",
    "ANSWER_PHRASE",
    "ANSWER_TAIL_PHRASE",
    "AnswerLine",
    "BoxedSpan",
    "answer_tail",
    "bare_answer",
    "boxed_spans",
    "cut_answer",
    "extract_boxed",
    "is_answer_statement",
    "strip_tags",
    "tag_blocks",
    "tidy_answer",
]

# MARK: boxes


class BoxedSpan(NamedTuple):
    """Where one closed ``\\boxed{...}`` sits in a text."""

    start: int
    """Offset of the backslash of ``\\boxed``."""
    content_start: int
    """Offset just after the opening brace."""
    content_end: int
    """Offset of the closing brace."""

    def content(self, text: str) -> str:
        return text[self.content_start : self.content_end]


_WRAPPERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("`", "`"))
# A LaTeX line break "\\" (unless it is a JSON-escaped "\\boxed"), a box opening, an escaped
# brace, a plain brace. Escaped braces and line breaks are skipped; plain braces nest.
_BOXED_TOKEN = re.compile(r"\\\\(?!boxed|fbox)|\\(?:boxed|fbox)\s*\{|\\[{}]|[{}]")


def boxed_spans(text: str) -> list[BoxedSpan]:
    """Every closed ``\\boxed{...}`` / ``\\fbox{...}`` in ``text``, ordered by position.

    Examples:
        >>> t = r"x = \\boxed{a\\}b} and \\boxed{\\frac{1}{2}}"
        >>> [s.content(t) for s in boxed_spans(t)]
        ['a\\\\}b', '\\\\frac{1}{2}']
    """
    if "\\boxed" not in text and "\\fbox" not in text:
        return []
    found: list[BoxedSpan] = []
    stack: list[tuple[int, int]] = []  # (command start or -1 for a plain brace, content start)
    for m in _BOXED_TOKEN.finditer(text):
        token = m.group()
        if len(token) == 2 and token[0] == "\\":
            continue  # "\{", "\}" or "\\"
        if token == "}":
            if stack:
                start, content_start = stack.pop()
                if start >= 0:
                    found.append(BoxedSpan(start, content_start, m.start()))
        else:
            stack.append((m.start() if token != "{" else -1, m.end()))
    found.sort()
    return found


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced, stripped.

    Escaped braces ``\\{`` / ``\\}`` inside the box are content, never its end.

    Examples:
        >>> extract_boxed(r"so x = \\boxed{\\frac{3}{4}} and done")
        '\\\\frac{3}{4}'
        >>> extract_boxed(r"\\boxed{a\\}b}")
        'a\\\\}b'
        >>> extract_boxed("no box here") is None
        True
    """
    spans = boxed_spans(text)
    return spans[-1].content(text).strip() if spans else None


def is_boxed_only(text: str) -> bool:
    """True when ``text`` is one ``\\boxed{}`` and nothing else but math delimiters, bold and
    a final full stop (``$\\boxed{\\text{Left}}$.``)."""
    core = text.strip().replace("**", "").strip()
    for _ in range(2):
        for left, right in _WRAPPERS:
            if core.startswith(left) and core.rstrip(".").endswith(right):
                core = core.rstrip(".")[len(left) : -len(right)].strip()
    if not core.startswith(("\\boxed", "\\fbox")):
        return False
    spans = boxed_spans(core)
    return (
        bool(spans) and spans[0].start == 0 and core[spans[0].content_end + 1 :].strip(" .") == ""
    )


# MARK: tags

# <answer> (GLM-4.1V, R1-style prompts) and LLaVA-CoT's <CONCLUSION> hold the answer.
_ANSWER_TAGS = tuple(
    (
        re.compile(rf"<[ \t]*{name}[ \t]*>", re.IGNORECASE),
        re.compile(rf"<[ \t]*/[ \t]*{name}[ \t]*>", re.IGNORECASE),
    )
    for name in ("answer", "conclusion")
)
# Section tags (LLaVA-CoT's <SUMMARY>, <CAPTION>, <REASONING>; <step>...) become line breaks.
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_-]{0,30}[ \t]*/?>")


def tag_blocks(text: str) -> list[tuple[int, int, int, int]]:
    """``(block_start, content_start, content_end, block_end)`` of answer-holding tags."""
    blocks: list[tuple[int, int, int, int]] = []
    for opening_tag, closing_tag in _ANSWER_TAGS:
        pos = 0
        while True:
            opening = opening_tag.search(text, pos)
            if opening is None:
                break
            closing = closing_tag.search(text, opening.end())
            if closing is None:  # cut off inside the block
                blocks.append((opening.start(), opening.end(), len(text), len(text)))
                break
            blocks.append((opening.start(), opening.end(), closing.start(), closing.end()))
            pos = closing.end()
    return blocks


def strip_tags(text: str) -> str:
    """Text without answer blocks, every other tag replaced by a line break."""
    blocks = sorted(tag_blocks(text))
    if blocks:
        kept: list[str] = []
        pos = 0
        for start, _, _, end in blocks:
            if start >= pos:
                kept.append(text[pos:start])
                pos = end
        kept.append(text[pos:])
        text = "\n".join(kept)
    return _TAG.sub("\n", text)


# MARK: phrases

ANSWER_PHRASE = re.compile(
    r"\banswer(?:[ \t]+(?:is|would[ \t]+be|should[ \t]+be|will[ \t]+be)|[ \t]*[:：])"
    r"[ \t]*(?:[:：][ \t]*)?(?=\S)",
    re.IGNORECASE,
)
"""A commitment inside reasoning text: "the answer is", "answer:" (the parser)."""

ANSWER_TAIL_PHRASE = re.compile(
    r"\b(?:final\s+answer\s*(?:is|would\s+be|should\s+be|will\s+be|:|=)?"
    r"|answer\s*(?:is|was|would\s+be|should\s+be|will\s+be|must\s+be|equals|:|=)"
    r"|result\s+is)\s*:?",
    re.IGNORECASE,
)
"""An answer phrase inside an answer string (:func:`answer_tail`): broader than
:data:`ANSWER_PHRASE`, since the text is already the answer ("The result is 7")."""

ANSWER_LEAD_IN = re.compile(
    r"^\s*(?:so\s*,?\s*|thus\s*,?\s*|therefore\s*,?\s*|hence\s*,?\s*)?"
    r"(?:the\s+|my\s+)?(?:final\s+|correct\s+|best\s+)?answer\s*"
    r"(?:is|would\s+be|should\s+be|will\s+be|must\s+be|[:=\-])\s*:?\s*",
    re.IGNORECASE,
)
"""An answer phrase at the very start of an answer ("So the final answer is: 3")."""

_ANSWER_WORD = r"(?:(?:the|my|our)[ \t]+)?(?:final[ \t]+|correct[ \t]+|short[ \t]+)?answer"
ANSWER_LINE = re.compile(
    _ANSWER_WORD
    + r"(?:[ \t]*(?:is[ \t]*)?[:：=][ \t]*|[ \t]*[-–—][ \t]+|[ \t]+is[ \t]+)(?P<rest>.*)$|"
    + _ANSWER_WORD
    + r"[ \t]*(?:[:：][ \t]*)?$",
    re.IGNORECASE,
)
"""A whole answer line, matched on its :func:`~crystalbench.parsing.cleaning.plain` text:
"Answer: B", "Final answer - 3", "The answer is 7" (``rest`` holds the value), or a
"Final Answer" heading with the value on a following line (``rest`` is ``None``)."""


def answer_tail(text: str) -> str | None:
    """Text after the last answer phrase ("the answer is", "Answer:", "final answer"...).

    Examples:
        >>> answer_tail("We add 3 and 4. The answer is 7 apples.")
        '7 apples.'
        >>> answer_tail("To answer this, count the apples.") is None
        True
    """
    matches = list(ANSWER_TAIL_PHRASE.finditer(text))
    if not matches:
        return None
    return text[matches[-1].end() :].strip()


# MARK: committing to an answer

# Where a committed answer stops: end of sentence, or the start of a justification.
_ANSWER_STOP = re.compile(
    r"[.!?](?=\s|$)|[。；！？]|;|,?[ \t]+(?:because|since)\b|,[ \t]*(?:as|which|so|given)\b"
    r"|[，,][ \t]*(?:因为|由于)",
    re.IGNORECASE,
)
_MAX_ANSWER_CHARS = 300


def cut_answer(value: str) -> str:
    """Where an answer read from a line ends: at the end of its first sentence, or where a
    justification starts. A period that ends an abbreviation or an acronym (the sentence
    splitter's rules: "Dr.", "St.", "No. 5", "U.S.") does not end the answer.

    Examples:
        >>> cut_answer("B. The red car is first"), cut_answer("3, because 1 + 2 = 3")
        ('B', '3')
        >>> cut_answer("Dr. Smith. He signed the letter."), cut_answer("No. 5 is red.")
        ('Dr. Smith', 'No. 5 is red')
    """
    for stop in _ANSWER_STOP.finditer(value):
        if stop.group() == "." and ends_abbreviation(value, 0, stop.start()):
            continue
        return value[: stop.start()] if stop.start() > 0 else value
    return value


_TEXT_COMMAND = re.compile(
    r"\\(?:text|textbf|textit|textrm|textsf|mathrm|mathbf|mathit|operatorname)[ \t]*\{([^{}]*)\}"
)


def tidy_answer(answer: str, *, trim_period: bool) -> str | None:
    """Strip emphasis, math delimiters, ``\\boxed{}`` and a whole-answer ``\\text{}`` from an
    answer; ``None`` if blank.

    Examples:
        >>> tidy_answer(r"**$\\boxed{\\text{Left}}$**", trim_period=True)
        'Left'
        >>> tidy_answer(r"$\\frac{1}{2}$.", trim_period=True)
        '\\\\frac{1}{2}'
    """
    answer = answer.strip()
    if "**" in answer or "__" in answer:
        answer = answer.replace("**", "").replace("__", "").strip()
    spans = boxed_spans(answer)
    if spans:
        answer = spans[-1].content(answer).strip()
    for _ in range(3):
        for left, right in _WRAPPERS:
            if len(answer) > len(left) + len(right) and answer.startswith(left):
                if answer.endswith(right):
                    answer = answer[len(left) : -len(right)].strip()
                elif answer.endswith(right + "."):
                    answer = answer[len(left) : -len(right) - 1].strip()
    if trim_period and len(answer) > 1 and answer.endswith(".") and not answer.endswith(".."):
        answer = answer[:-1].rstrip()
    if answer.startswith("\\"):
        text_command = _TEXT_COMMAND.fullmatch(answer)
        if text_command is not None:  # "\\boxed{\\text{Left}}" answers "Left"
            answer = text_command.group(1).strip()
    if SURROGATE.search(answer):
        answer = SURROGATE.sub("\ufffd", answer)
    return answer or None


class AnswerLine(Protocol):
    """What :func:`find_answer` reads of a scanned line (see ``parsing.lines.Line``)."""

    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def indent(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def answer_at(self) -> int: ...


def is_answer_statement(sentence: str) -> bool:
    """ "The answer is B." / "Final answer: 3" on its own: the answer, not a step."""
    plain_text = plain(sentence)
    return "nswer" in plain_text[:24] and ANSWER_LINE.match(plain_text) is not None


_BARE_ANSWER = re.compile(
    r"\([A-Ha-h]\)(?:[ \t]+.{1,60})?|[A-Ha-h][.):](?:[ \t]+.{1,60})?|[A-Ha-h]"
    r"|[-+]?\$?\d[\d,]*(?:\.\d+)?[ \t]*%?|yes|no|true|false",
    re.IGNORECASE,
)
_SHORT_REPLY_WORDS = 5


def bare_answer(lines: Sequence[AnswerLine]) -> str | None:
    """A one-line reply that is just an answer: "B", "(B) cat", "42", "Yes", or any reply of
    at most five words ("Red", "The left one.") that is not a question or filler."""
    content = [line for line in lines if line.kind not in ("blank", "fence", "rule")]
    if len(content) != 1 or content[0].kind not in ("text", "title", "item"):
        return None
    text = tidy_answer(clean_step(content[0].text), trim_period=True)
    if text is None or not has_alnum(text):
        return None
    if _BARE_ANSWER.fullmatch(text):
        return text
    short = text.count(" ") < _SHORT_REPLY_WORDS and not text.endswith(("?", ":"))
    if short and not is_filler(text) and not SENTENCE_END.search(text):
        return text
    return None
