"""Think blocks: where reasoning models put their draft reasoning.

``<think>`` / ``<thinking>`` / ``◁think▷`` blocks, an unclosed opening tag (cut off by the
token limit) and a closing tag with no opening tag (DeepSeek-R1's chat template opens the
block, the output only closes it) are split from the text around them.
"""

from __future__ import annotations

import re

__all__ = ["SPECIAL_TOKEN", "split_thinking"]

# Chat-template debris: <|im_end|>, <|endoftext|>, <｜end▁of▁sentence｜>, </s>, <end_of_turn>.
SPECIAL_TOKEN = re.compile(
    r"<\|[^<>|\n]{1,40}\|>|<｜[^<>｜\n]{1,40}｜>|</?s>|<(?:start|end)_of_turn>(?:model\b)?"
)
_THINK_OPEN = re.compile(r"<[ \t]*think(?:ing)?[ \t]*>|◁think▷", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"<[ \t]*/[ \t]*think(?:ing)?[ \t]*>|◁/think▷", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str | None]:
    """(text outside think blocks, joined think contents or None)."""
    if "think" not in text.lower():
        return text, None
    thoughts: list[str] = []
    body: list[str] = []
    pos = 0
    first_close = _THINK_CLOSE.search(text)
    if first_close is not None and _THINK_OPEN.search(text, 0, first_close.start()) is None:
        # DeepSeek-R1: the chat template opened the block, the output only closes it.
        thoughts.append(text[: first_close.start()])
        pos = first_close.end()
    while True:
        opening = _THINK_OPEN.search(text, pos)
        if opening is None:
            body.append(text[pos:])
            break
        body.append(text[pos : opening.start()])
        closing = _THINK_CLOSE.search(text, opening.end())
        if closing is None:  # cut off while thinking
            thoughts.append(text[opening.end() :])
            break
        thoughts.append(text[opening.end() : closing.start()])
        pos = closing.end()
    remaining = _THINK_CLOSE.sub("\n", "".join(body))
    joined = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return remaining, (joined or None)
