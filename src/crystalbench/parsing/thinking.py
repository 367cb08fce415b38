"""Think blocks: where reasoning models put their reasoning, and the self-talk inside them.

``<think>`` / ``<thinking>`` / ``<reasoning>`` / ``◁think▷`` blocks, an unclosed opening tag
(cut off by the token limit) and a closing tag with no opening tag (DeepSeek-R1's chat
template opens the block, the output only closes it) are split from the text around them.
``<reasoning>`` is a section, not a think block, in LLaVA-CoT outputs (which also carry
``<SUMMARY>``, ``<CAPTION>`` or ``<CONCLUSION>``).

When steps come from a think block, self-checks are not steps (:func:`drop_self_checks`).
Every pattern here is linear-time.
"""

from __future__ import annotations

import re

from crystalbench.parsing.sentences import split_sentences

__all__ = ["SPECIAL_TOKEN", "drop_self_checks", "split_thinking"]

# Chat-template debris: <|im_end|>, <|endoftext|>, <｜end▁of▁sentence｜>, </s>, <end_of_turn>.
SPECIAL_TOKEN = re.compile(
    r"<\|[^<>|\n]{1,40}\|>|<｜[^<>｜\n]{1,40}｜>|</?s>|<(?:start|end)_of_turn>(?:model\b)?"
)


def _think_tags(names: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return (
        re.compile(rf"<[ \t]*(?:{names})[ \t]*>|◁think▷", re.IGNORECASE),
        re.compile(rf"<[ \t]*/[ \t]*(?:{names})[ \t]*>|◁/think▷", re.IGNORECASE),
    )


_THINK_TAGS = _think_tags(r"think(?:ing)?|reasoning")
_THINK_TAGS_LLAVA_COT = _think_tags(r"think(?:ing)?")
_LLAVA_COT_STAGE = re.compile(r"<[ \t]*/?[ \t]*(?:summary|caption|conclusion)[ \t]*>", re.I)


def split_thinking(text: str) -> tuple[str, str | None]:
    """(text outside think blocks, joined think contents or None).

    Examples:
        >>> split_thinking("<think>Count: 3.</think><answer>3</answer>")
        ('<answer>3</answer>', 'Count: 3.')
        >>> split_thinking("The bars are 3 and 5.\\n</think>\\nThe answer is 5.")
        ('\\nThe answer is 5.', 'The bars are 3 and 5.')
        >>> split_thinking("<reasoning>The dial reads 40")
        ('', 'The dial reads 40')
    """
    lower = text.lower()
    if "think" not in lower and "reasoning" not in lower:
        return text, None
    think_open, think_close = _THINK_TAGS
    if "reasoning" in lower and _LLAVA_COT_STAGE.search(text):
        think_open, think_close = _THINK_TAGS_LLAVA_COT
    thoughts: list[str] = []
    body: list[str] = []
    pos = 0
    first_close = think_close.search(text)
    if first_close is not None and think_open.search(text, 0, first_close.start()) is None:
        # DeepSeek-R1: the chat template opened the block, the output only closes it.
        thoughts.append(text[: first_close.start()])
        pos = first_close.end()
    while True:
        opening = think_open.search(text, pos)
        if opening is None:
            body.append(text[pos:])
            break
        body.append(text[pos : opening.start()])
        closing = think_close.search(text, opening.end())
        if closing is None:  # cut off while thinking
            thoughts.append(text[opening.end() :])
            break
        thoughts.append(text[opening.end() : closing.start()])
        pos = closing.end()
    remaining = think_close.sub("\n", "".join(body))
    joined = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return remaining, (joined or None)


# MARK: self-checks

# Hesitations that open a thought ("Wait,", "Hmm,", "But wait,", "Oh wait,", "Okay,"); a word
# that can also be content ("Wait time is 5 min") counts only with punctuation after it.
_HESITATION = re.compile(
    r"(?:(?:but|and|so|oh|ah)[ \t]*,?[ \t]+)?"
    r"(?:(?:wait(?:[ \t]+a[ \t]+(?:second|sec|moment|minute))?|hold[ \t]+on|oops|uh|um|ah|oh"
    r"|okay|ok|alright)[ \t]*(?:[,.!…:;]+|[—–-]+|$)|hm+\b[ \t]*[,.!…:;]*)[ \t]*",
    re.IGNORECASE,
)
# "Let me double-check.", "Actually, let me re-read the question.", "I should verify this."
_SELF_CHECK = re.compile(
    r"(?:(?:but|so|and|now|actually|also|first|then|ok|okay)[ \t]*,?[ \t]+){0,2}"
    r"(?:let[ \t]+me|let'?s|let[ \t]+us|i[ \t]+(?:should|need[ \t]+to|have[ \t]+to|must|will"
    r"|want[ \t]+to)|i'll|we[ \t]+should|maybe[ \t]+i[ \t]+should)"
    r"(?:[ \t]+(?:just|quickly|carefully|again|also|now|first))?"
    r"(?:[ \t]+(?:double[- ]?check|check|verify|re-?check|re-?read|re-?examine|reconsider"
    r"|confirm|make[ \t]+sure|look|think|re-?think|re-?count|re-?calculate|re-?compute"
    r"|re-?evaluate|go[ \t]+back|review|recap|see|be[ \t]+careful)\b|[ \t]*[.…]*$)",
    re.IGNORECASE,
)
# "Is that right?", "Did I miss anything?", "Or is it?"
_SELF_QUESTION = re.compile(
    r"(?:or[ \t]+)?(?:is|was|does|did|am|are|could|can|should|would|right|really|correct)\b",
    re.IGNORECASE,
)
# "Yes.", "Right.", "Correct!": the model agreeing with itself.
_AFFIRMATION = re.compile(
    r"(?:yes|yeah|yep|yup|right|correct|exactly|indeed|true|no|nope|nah|good|perfect|great)"
    r"[ \t]*[.!]*",
    re.IGNORECASE,
)
_STATES_SOMETHING = re.compile(r"[\d=<>≈]|:[ \t]*\S")
_MAX_SELF_CHECK_WORDS = 14
_MAX_SELF_QUESTION_WORDS = 8


def drop_self_checks(steps: list[str]) -> list[str]:
    """Steps read from a think block, without the model's self-talk.

    - A leading hesitation ("Wait,", "Hmm,", "But wait,", "Oh wait,", "Okay,") is removed and
      what follows is kept when it states something ("Wait, the bar for B is taller." gives
      "The bar for B is taller.").
    - A step that is nothing but self-talk is dropped: a self-check ("Let me double-check.",
      "Hmm, let me verify", "Actually, let me re-read the question.", a cut-off "But wait,
      let me"), a short question to itself ("Is that right?", "Is the top layer 3?") or a
      lone affirmation ("Yes.", "Right."). A self-check that carries content (a number, an
      equation, a colon followed by text: "Let me check: 3 + 4 = 7.") is kept.
    - Each sentence of a step is judged on its own, so self-talk glued onto a step by a
      continuation line goes while the rest of the step stays.

    Examples:
        >>> drop_self_checks(["The dial reads 40.", "Wait, let me double-check.", "Hmm."])
        ['The dial reads 40.']
        >>> drop_self_checks(["Wait, the bar for B is taller.", "Is that right?"])
        ['The bar for B is taller.']
        >>> drop_self_checks(["There are 3. Let me double-check."])
        ['There are 3.']
    """
    kept: list[str] = []
    for step in steps:
        # Self-talk may sit inside a step ("There are 3. Let me double-check." when a
        # continuation line joined a "Step N" block): judge each sentence on its own.
        sentences = [_without_self_talk(s) for s in split_sentences(step)]
        text = " ".join(s for s in sentences if s)
        if text:
            kept.append(text)
    return kept


def _without_self_talk(sentence: str) -> str:
    """The sentence without a leading hesitation, or ``""`` when it is only self-talk."""
    text = sentence
    for _ in range(3):  # "Hmm, wait, okay, ..."
        m = _HESITATION.match(text)
        if m is None or m.end() == 0:
            break
        text = text[m.end() :]
    text = text.strip()
    if not any(ch.isalnum() for ch in text) or _is_self_check(text):
        return ""
    if text != sentence and text[0].islower():
        text = text[0].upper() + text[1:]
    return text


def _is_self_check(text: str) -> bool:
    if _AFFIRMATION.fullmatch(text):
        return True
    words = text.count(" ") + 1
    if text.endswith("?") and words <= _MAX_SELF_QUESTION_WORDS:
        return _SELF_QUESTION.match(text) is not None  # "Is the top layer 3?"
    if _STATES_SOMETHING.search(text):
        return False
    return words <= _MAX_SELF_CHECK_WORDS and _SELF_CHECK.match(text) is not None
