"""The answer rule set: which answer a model output commits to, and which rule took it.

Every rule has a name (:data:`ANSWER_RULES`, documented one by one there and in
``docs/parsing.md``); :func:`find_answer_rule` gathers the candidates of all of them and
keeps the value that starts last in the text (the model's last commitment). The rule's name
goes into :attr:`~crystalbench.types.ParsedResponse.extraction` and from there into every
item's record (``answer_extraction``); ``None`` means that no rule committed (an answer
stated only in a sentence, "So the perimeter is 6 yards."), which is where a model-based
extractor may take over.

The pieces the rules read (boxes, answer tags, "Answer:" lines, phrases, where an answer
stops) are in :mod:`crystalbench.parsing.answer`. Every pattern here is linear-time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

from crystalbench.parsing.answer import (
    ANSWER_PHRASE,
    AnswerLine,
    boxed_spans,
    cut_answer,
    tag_blocks,
    tidy_answer,
)
from crystalbench.parsing.cleaning import has_alnum, plain
from crystalbench.parsing.sentences import split_sentences

_MAX_ANSWER_CHARS = 300
"""Longest stretch of a line read as one answer value."""

__all__ = [
    "ANSWER_RULES",
    "OPTION_PHRASE",
    "ZH_ANSWER_PHRASE",
    "Extraction",
    "closing_number",
    "ends_with_answer_phrase",
    "find_answer",
    "find_answer_rule",
    "last_line_answer",
    "line_rule",
    "prompt_phrase_pattern",
]

# MARK: the rule set

ANSWER_RULES: dict[str, str] = {
    "json": "the answer key of the response's JSON object",
    "given": "the answer the predictions file states next to the response",
    "answer_tag": "an <answer> or <CONCLUSION> block",
    "boxed": "a \\boxed{} or \\fbox{}",
    "answer_line": 'a line that opens with an answer label: "Answer: B", "The answer is 7"',
    "answer_heading": (
        'an answer label alone on its line ("### Final Answer:", "**Answer:**"), the value '
        "on the next non-blank line (bold or not)"
    ),
    "answer_phrase": '"the answer is B" inside a sentence (also when the reasoning follows it)',
    "answer_next_line": (
        'an answer phrase that ends its line ("Therefore, the correct answer is:"), the value '
        "on the next non-blank line or display-math block"
    ),
    "option_phrase": (
        '"the correct option is (B)", "the best choice is:" + the value on the next line'
    ),
    "answer_phrase_zh": "a Chinese answer phrase: 答案是 C, 正确答案为 (C), 答案：C, 故选 C",
    "prompt_phrase": (
        "the answer phrase the benchmark's prompt asks for (declared by the item: "
        'MathVista\'s "Final value: 4", "the final value is:" + the next line)'
    ),
    "last_line": (
        "a bare value (an option letter, a number, yes/no) alone on the last line after "
        "the reasoning, when no phrase committed"
    ),
    "closing_number": (
        'the closing sentence states one number as what was asked: "So, the perimeter of '
        'the square is 16 meters." (the last sentence of the reply, "... is/are/equals N '
        '[unit]."), when no phrase committed'
    ),
    "bare_reply": 'a reply that is only an answer: "B", "(B) cat", "42", "The left one."',
}
"""Every rule that can take an answer, by name: the value of
:attr:`~crystalbench.types.ParsedResponse.extraction` (``None``: no rule committed, the case
a model-based extractor may take up). Where several rules fire, the value that starts last
in the text wins (the last commitment); at one position, the earlier rule of this list."""


class Extraction(NamedTuple):
    """What :func:`find_answer_rule` committed to: the answer and the rule that took it."""

    answer: str | None
    """The answer, tidied; ``None`` when no rule committed."""
    rule: str | None
    """A key of :data:`ANSWER_RULES`; ``None`` when no rule committed."""


OPTION_PHRASE = re.compile(
    r"\b(?:(?:correct|right|best|final|most[ \t]+(?:appropriate|likely|suitable)|appropriate)"
    r"[ \t]+(?:option|choice)|answer[ \t]+(?:choice|option))"
    r"(?:[ \t]+(?:is|would[ \t]+be|should[ \t]+be|will[ \t]+be|must[ \t]+be)[ \t]*[:：]?"
    r"|[ \t]*[:：])[ \t]*",
    re.IGNORECASE,
)
"""An option commitment: "the correct option is", "the best choice is:", "answer choice:"."""

ZH_ANSWER_PHRASE = re.compile(
    r"答案(?:应该?|应当)?(?:是|为|选)[ \t]*[:：]?[ \t]*|答案[ \t]*[:：][ \t]*"
    r"|选项(?:是|为)[ \t]*[:：]?[ \t]*(?=[(（]?[A-Ha-hＡ-Ｈ])"
    r"|(?:故|所以|因此|应|我们)选(?:择)?[ \t]*[:：]?[ \t]*(?=[(（]?[A-Ha-hＡ-Ｈ])"
)
"""A Chinese answer phrase: 答案是, 正确答案为, 答案：, 故选 / 应选 before an option letter."""

# An answer phrase that ends its line: what follows on the next line is the value.
_PHRASE_END_TRAIL = re.compile(r"[ \t:：*_]*(?:\\\[|\$\$|\\\(|\$)?[ \t]*$")
_ENGLISH_PHRASE_AT_END = re.compile(
    r"\b(?:answer(?:[ \t]+(?:choice|option))?|(?:correct|right|best|final|appropriate|likely"
    r"|suitable)[ \t]+(?:option|choice))"
    r"(?:[ \t]+(?:is|would[ \t]+be|should[ \t]+be|will[ \t]+be|must[ \t]+be)[ \t]*[:：]?"
    r"|[ \t]*[:：])[ \t]*(?:\*\*|__)?[ \t]*(?:\\\[|\$\$)?[ \t]*$",
    re.IGNORECASE,
)
# "the most accurate answer based on the food web is:": the answer word, then its verb.
_LONG_PHRASE_AT_END = re.compile(
    r"\b(?:answer|option|choice)\b[^.!?\n:]{1,80}?[ \t]+(?:is|would[ \t]+be|will[ \t]+be)"
    r"[ \t]*[:：][ \t]*(?:\*\*|__)?[ \t]*(?:\\\[|\$\$)?[ \t]*$",
    re.IGNORECASE,
)
_LONG_PHRASE_LINE = re.compile(
    r"\b(?:answer|option|choice)\b[^.!?\n:]{1,80}?[ \t]+(?:is|would[ \t]+be|will[ \t]+be)"
    r"[ \t]*[:：][ \t]*(?:\*\*|__)?[ \t]*(?=\n)",
    re.IGNORECASE,
)
_DISPLAY_OPEN = ("\\[", "$$")
_DISPLAY_CLOSE = {"\\[": "\\]", "$$": "$$"}
_MAX_VALUE_LINES = 8


@functools.lru_cache(maxsize=64)
def prompt_phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """The pattern of a benchmark's declared answer phrases ("final value"): the phrase,
    then ``:`` / ``=`` or "is" (optionally with a colon); ``None`` for no phrases.

    Examples:
        >>> m = prompt_phrase_pattern(("final value",)).search("So the final value is: 4")
        >>> m.group()
        'final value is: '
        >>> prompt_phrase_pattern(("final value",)).search("The final value for x is 2") is None
        True
    """
    words = [r"[ \t]+".join(re.escape(w) for w in p.split()) for p in phrases if p.strip()]
    if not words:
        return None
    return re.compile(
        r"(?<!\w)(?:" + "|".join(words) + r")"
        r"(?:[ \t]*(?:\*\*|__)?[ \t]*[:：=]|[ \t]+(?:is|would[ \t]+be|will[ \t]+be)\b[ \t]*[:：]?)"
        r"[ \t]*(?:\*\*|__)?[ \t]*",
        re.IGNORECASE,
    )


def ends_with_answer_phrase(line: str, prompt: re.Pattern[str] | None = None) -> bool:
    """True when ``line`` ends with an answer phrase and no value ("Therefore, the correct
    answer is:", "So the final value is:" for a declared phrase, "正确答案是：").

    Examples:
        >>> ends_with_answer_phrase("Therefore, the correct answer is:")
        True
        >>> ends_with_answer_phrase("The answer is B.")
        False
    """
    text = line.rstrip()
    if not text:
        return False
    english = "nswer" in text or "ption" in text or "hoice" in text
    if english and (
        _ENGLISH_PHRASE_AT_END.search(text) is not None
        or _LONG_PHRASE_AT_END.search(text) is not None
    ):
        return True
    for pattern in (ZH_ANSWER_PHRASE, prompt):
        if pattern is None:
            continue
        for m in pattern.finditer(text):
            if _PHRASE_END_TRAIL.fullmatch(text, m.end()):
                return True
    return False


def _value_after(text: str, line_end: int) -> tuple[int, str] | None:
    """The value on the line(s) after ``line_end``: the next non-blank line, or a whole
    display-math block (``\\[ ... \\]``, ``$$ ... $$``) that opens there."""
    pos = line_end + 1
    lines_seen = 0
    while pos < len(text) and lines_seen < _MAX_VALUE_LINES:
        nl = text.find("\n", pos)
        nl = len(text) if nl < 0 else nl
        line = text[pos:nl]
        lines_seen += 1
        if line.strip():
            stripped = line.strip()
            if stripped in _DISPLAY_OPEN:
                close = text.find(_DISPLAY_CLOSE[stripped], nl)
                if close < 0:
                    return None
                return nl + 1, text[nl + 1 : close].strip()
            return pos + len(line) - len(line.lstrip()), stripped
        pos = nl + 1
    return None


def _phrase_value(text: str, end: int) -> tuple[int, str, bool] | None:
    """The value after a phrase ending at ``end``: the rest of its line, else the next
    line's (``True`` in the third place)."""
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    segment = text[end : min(line_end, end + _MAX_ANSWER_CHARS)]
    if _PHRASE_END_TRAIL.fullmatch(segment):
        following = _value_after(text, line_end)
        if following is None:
            return None
        return following[0], following[1], True
    return end, segment, False


def find_answer(
    text: str, lines: Sequence[AnswerLine], prompt: re.Pattern[str] | None = None
) -> str | None:
    """The last answer the text commits to (:func:`find_answer_rule` without the rule)."""
    return find_answer_rule(text, lines, prompt).answer


def find_answer_rule(
    text: str, lines: Sequence[AnswerLine], prompt: re.Pattern[str] | None = None
) -> Extraction:
    r"""The last answer the text commits to, and the rule of :data:`ANSWER_RULES` that took it.

    Candidates: every ``\\boxed{}``, ``<answer>`` / ``<CONCLUSION>`` block, "Answer:" line,
    line under a "Final Answer" heading, "the answer is ..." phrase (its value on the same
    line or on the next), option phrase, Chinese answer phrase and the benchmark's declared
    phrase (``prompt``, :func:`prompt_phrase_pattern`); the one whose value starts last and
    is not blank wins. With none, a bare value alone on the last line (``last_line``).

    Examples:
        >>> find_answer_rule("So, the correct answer is:\n\n(B) No", [])
        Extraction(answer='(B) No', rule='answer_next_line')
        >>> find_answer_rule("正确答案是 (C) 145°。", [])
        Extraction(answer='(C) 145°', rule='answer_phrase_zh')
    """
    candidates: list[tuple[int, str, str]] = [
        (span.content_start, span.content(text), "boxed") for span in boxed_spans(text)
    ]
    if "<" in text:
        for _, content_start, content_end, _ in tag_blocks(text):
            candidates.append((content_start, text[content_start:content_end], "answer_tag"))
    for index, line in enumerate(lines):
        if line.kind == "answer" and line.answer is not None:
            candidates.append((line.answer_at, cut_answer(line.answer), line_rule(line)))
        elif line.kind == "answer_head":
            for following in lines[index + 1 : index + 4]:
                if following.kind == "blank":
                    continue
                if following.kind in ("text", "item", "title"):
                    where = following.offset + following.indent
                    value = cut_answer(following.text.strip().replace("**", "").strip())
                    candidates.append((where, value, "answer_heading"))
                break
    if "nswer" in text or "NSWER" in text:
        for m in ANSWER_PHRASE.finditer(text):
            found = _phrase_value(text, m.end())
            if found is not None:
                where, value, next_line = found
                rule = "answer_next_line" if next_line else "answer_phrase"
                candidates.append((where, cut_answer(value), rule))
    if "nswer" in text or "ption" in text or "hoice" in text:
        for m in _LONG_PHRASE_LINE.finditer(text):
            after_phrase = _value_after(text, m.end())
            if after_phrase is not None:
                where, value = after_phrase
                candidates.append((where, cut_answer(value), "answer_next_line"))
    if "ption" in text or "hoice" in text:
        for m in OPTION_PHRASE.finditer(text):
            found = _phrase_value(text, m.end())
            if found is not None:
                candidates.append((found[0], cut_answer(found[1]), "option_phrase"))
    if "答案" in text or "选" in text:
        for m in ZH_ANSWER_PHRASE.finditer(text):
            found = _phrase_value(text, m.end())
            if found is not None:
                candidates.append((found[0], cut_answer(found[1]), "answer_phrase_zh"))
    if prompt is not None:
        for m in prompt.finditer(text):
            found = _phrase_value(text, m.end())
            if found is not None:
                candidates.append((found[0], cut_answer(found[1]), "prompt_phrase"))
    for _, value, rule in sorted(candidates, key=lambda c: c[0], reverse=True):
        cleaned = tidy_answer(value, trim_period=True)
        if cleaned is not None and has_alnum(cleaned):
            return Extraction(cleaned, rule)
    last = last_line_answer(lines)
    if last is not None:
        return Extraction(last, "last_line")
    closing = closing_number(lines)
    if closing is not None:
        return Extraction(closing, "closing_number")
    return Extraction(None, None)


def line_rule(line: AnswerLine) -> str:
    """The rule of an ``answer`` line: ``boxed`` for a line that is only a box, else
    ``answer_line`` (or the rule the line carries: ``prompt_phrase``)."""
    rule = getattr(line, "rule", None)
    if rule:
        return str(rule)
    return "boxed" if "\\boxed" in line.text or "\\fbox" in line.text else "answer_line"


_LAST_LINE_VALUE = re.compile(
    r"\(?[A-Ha-h]\)?|\([A-Ha-h]\)[ \t]+.{1,60}|[A-H][.)][ \t]+.{1,60}"
    r"|[-+]?\$?\d[\d,]*(?:\.\d+)?[ \t]*(?:%|°)?|yes|no|true|false",
    re.IGNORECASE,
)


_CLOSING_NUMBER = re.compile(
    r"(?:(?:so|thus|therefore|hence|finally|in conclusion)[ \t]*,?[ \t]+)?[^.!?;:\n]{3,160}?"
    r"[ \t]+(?:is|are|was|equals|=|comes[ \t]+to|amounts[ \t]+to)[ \t]+"
    r"(?:(?:approximately|about|around|roughly|exactly|only|just)[ \t]+)?"
    r"(?P<value>[-+−]?\$?\d[\d,]*(?:\.\d+)?(?:[ \t]*(?:%|°))?)"
    r"(?:[ \t]*[A-Za-z$][A-Za-z.$ \t-]{0,40}?)?[ \t]*[.!]?[ \t]*",
    re.IGNORECASE,
)
_CLOSING_TAIL_WORDS = re.compile(
    r"\b(?:and|or|but|than|times|plus|minus|from|to|of|per|each|which|if|because|since)\b",
    re.IGNORECASE,
)


_CLOSING_VERB = re.compile(r"\b(?:is|are|was|equals)\b|=", re.IGNORECASE)


def closing_number(lines: Sequence[AnswerLine]) -> str | None:
    """The number the closing sentence states as the result ("So, the perimeter of the
    square is 16 meters." gives "16"): the last sentence of the last content line, of the
    shape "<what> is/are/equals [about] N [unit].", with nothing after the unit. A sentence
    that goes on ("... is 16 and ...", "... is 5 times ...") commits to nothing."""
    content = [line for line in lines if line.kind not in ("blank", "fence", "rule")]
    if not content or content[-1].kind not in ("text", "item"):
        return None
    sentences = split_sentences(plain(content[-1].text))
    if not sentences:
        return None
    last = sentences[-1].replace("**", "").strip()
    m = _CLOSING_NUMBER.fullmatch(last)
    if m is None or _CLOSING_TAIL_WORDS.search(last, m.end("value")):
        return None
    if len(_CLOSING_VERB.findall(last, 0, m.start("value"))) > 1:
        return None  # "The total is 5 and the rest is 4.": two statements, no commitment
    return m.group("value").replace("−", "-").replace("$", "").replace(" ", "")


def last_line_answer(lines: Sequence[AnswerLine]) -> str | None:
    """A bare value alone on the last line after reasoning ("...so we count them.\n\n3"):
    an option ("B", "(B)", "(B) No"), a number or yes/no; ``None`` when the reply has no
    other content line."""
    content = [line for line in lines if line.kind not in ("blank", "fence", "rule")]
    if len(content) < 2 or content[-1].kind != "text":
        return None
    value = tidy_answer(plain(content[-1].text), trim_period=True)
    if value is None or not _LAST_LINE_VALUE.fullmatch(value):
        return None
    return value
