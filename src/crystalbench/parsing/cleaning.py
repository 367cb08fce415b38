"""Cleaning steps and answers: labels, list markers, emphasis, filler.

Reference steps carry no "Step N:", list markers or markdown, so every parsing path (JSON
too) strips them here. All patterns are linear-time.
"""

from __future__ import annotations

import re

__all__ = ["SIGN_OFFS", "SURROGATE", "clean_step", "has_alnum", "is_filler", "plain"]

_LEAD_MARKER = re.compile(
    r"(?:#{1,6}[ \t]+|>[ \t]*|[-*+•·▪‣◦●][ \t]+|\(?\d{1,2}[.)][ \t]+|\(\d{1,2}\)[ \t]*"
    r"|step[ \t]*\d{1,3}[ \t]*(?:\([^()\n]{0,60}\)[ \t]*)?(?:[:.)\-–—]+[ \t]*|(?=\s)|$))",
    re.IGNORECASE,
)
_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_UNDERSCORE_ITALIC = re.compile(r"(?<![\w\\])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?!\w)")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
SURROGATE = re.compile("[\ud800-\udfff]")
_MARKUP_CHARS = frozenset("#>-+*•·▪‣◦●(0123456789sS")
# "Explanation: ...", "**Reasoning:** ...": a label before a step's text, not part of it.
_STEP_LABEL = re.compile(
    r"(?:explanation|reasoning|reason|solution|rationale|justification|analysis)[ \t]*[:：][ \t]*",
    re.IGNORECASE,
)
_LABEL_INITIALS = frozenset("ERSJAersja")


def clean_step(step: str) -> str:
    """Strip a step and remove labels ("Step 2:", "Explanation:", "Reasoning:", "Solution:"),
    list markers and markdown emphasis.

    Examples:
        >>> clean_step("**Step 2:** The *left* bar is taller.")
        'The left bar is taller.'
        >>> clean_step("Explanation: The red car is ahead.")
        'The red car is ahead.'
    """
    step = step.strip()
    if not step:
        return ""
    if "**" in step or "__" in step:
        step = step.replace("**", "").replace("__", "").strip()
    if "*" in step:
        step = _ITALIC.sub(r"\1", step)
    if "_" in step:
        step = _UNDERSCORE_ITALIC.sub(r"\1", step)
    if "`" in step:
        step = _INLINE_CODE.sub(r"\1", step).replace("```", "")
    for _ in range(4):
        if not step or step[0] not in _MARKUP_CHARS:
            break
        m = _LEAD_MARKER.match(step)
        if m is None or m.end() == 0:
            break
        step = step[m.end() :].lstrip()
    if step[:1] in _LABEL_INITIALS:
        label = _STEP_LABEL.match(step)
        if label is not None:
            step = step[label.end() :]
    if SURROGATE.search(step):
        step = SURROGATE.sub("\ufffd", step)
    return step.strip()


_PLEASANTRY = re.compile(
    r"(?:sure|certainly|of course|okay|ok|alright|absolutely|great|hmm+)\b[\s,.!]*", re.IGNORECASE
)
_INTRO = re.compile(
    r"(?:let'?s|let me|let us|i will|i'll|we will|we'll|i need to|we need to)[ \t]+"
    r"(?:now[ \t]+|first[ \t]+|carefully[ \t]+)?"
    r"(?:solve|analy[sz]e|think|break|work|go|start|begin|reason|tackle|approach|figure|see)\b"
    r"|here(?:'s| is| are)\b",
    re.IGNORECASE,
)
_STEP_BY_STEP = re.compile(r"step[- ]by[- ]step", re.IGNORECASE)
SIGN_OFFS: tuple[str, ...] = (
    "i hope this helps",
    "i hope that helps",
    "hope this helps",
    "hope that helps",
    "i hope this answers your question",
    "i hope this is helpful",
    "i hope this explanation helps",
    "let me know if you have any",
    "let me know if you need",
    "let me know if there is anything",
    "let me know if you would like",
    "please let me know if",
    "feel free to ask",
    "feel free to let me know",
    "if you have any other questions",
    "if you have any more questions",
    "if you have any further questions",
    "if you have any questions",
    "is there anything else",
    "happy to help",
    "glad i could help",
    "good luck",
    "thank you for your question",
    "thanks for asking",
    "i'm sorry, but i cannot",
    "i am sorry, but i cannot",
    "希望这对你有帮助",
    "希望对你有帮助",
    "如果你有其他问题",
    "如有其他问题",
)
"""Chat sign-offs and pleasantries that are never reasoning, on every path but JSON lists:
a prose step that opens with one of these (case-insensitive, curly apostrophes read as
straight) is dropped (:func:`is_filler`)."""
_SIGN_OFF = re.compile(
    r"(?:(?:again|also|and|so|well)[ \t]*,?[ \t]+)?(?:"
    + "|".join(re.escape(p) for p in SIGN_OFFS)
    + ")",
    re.IGNORECASE,
)


def is_filler(step: str) -> bool:
    """Intro lines, pleasantries and sign-offs that carry no reasoning ("Sure! Let's
    think.", "I hope this helps!", "Let me know if you have any other questions.": the
    documented list :data:`SIGN_OFFS`)."""
    if step.endswith(":"):
        return True
    if _SIGN_OFF.match(step.replace("’", "'")) is not None:
        return True
    m = _PLEASANTRY.match(step)
    rest = step[m.end() :] if m else step
    if not rest:
        return True
    words = rest.count(" ") + 1
    if _STEP_BY_STEP.search(rest):  # "Let's analyze the image step by step."
        return words <= 16
    return words <= 8 and _INTRO.match(rest) is not None


def has_alnum(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


_PLAIN_PREFIX = re.compile(r"[ \t>#]*(?:[-*+•][ \t]+)?")


def plain(line: str) -> str:
    """A line without emphasis markers and leading ``#``, ``>`` or bullet."""
    if "**" in line or "__" in line:
        line = line.replace("**", "").replace("__", "")
    m = _PLAIN_PREFIX.match(line)
    return line[m.end() :].strip() if m else line.strip()
