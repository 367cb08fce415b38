"""Copies with a slot changed: a predicted step that is a reference step with a value, a name or
a relation word replaced.

The pair rules veto one pair at a time, and greedy matching then goes on to the next best
pair: a step that copies "The bar for Chile shows a value of 12,450." with 11,450 is vetoed
against it and goes on to match "The bar for Peru shows a value of 8,120." or "The highest
bar is Chile with 12,450 arrivals.". Read as text, though, the step is plainly the Chile step
with its value changed: it states a wrong fact, and a wrong fact should match nothing. Under
both guards such a step is blocked for the whole item
(:func:`copied_with_a_wrong_fact`; the engine's
:class:`~crystalbench.scoring.filters.guard.candidates.GuardFilter` and the plain definition
:func:`crystalbench.scoring.filters.guard.veto_copied_steps` use it).

A predicted step is a **copy** of a reference step (:func:`copy_of`) when their words are the
same and in the same order, and either

- only values differ (any number of them: "The difference is 11,450 - 3,900 = 7,550." is
  "The difference is 12,450 - 3,200 = 9,250." with its three values changed), or
- one stretch of one or two words differs, with no value in it ("Peru" for "Chile",
  "lowest" for "highest", "left" for "right"), and at least three words around it are the
  same.

The copy states a wrong fact when the guard's rules find a clash between it and the step it
copies. It is not blocked when it is also a copy, with values only, of a reference step it
agrees with ("Row 2 has 3 cells." copies both "Row 1 has 2 cells." and "Row 2 has 3 cells.";
"The value is 12450." copies "The value is 12,450."): a correct restatement of another
reference step.

Pure: no I/O, no model; the word reading is cached by text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["copied_with_a_wrong_fact", "copy_of", "same_words"]

_TOKEN = re.compile(
    r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|[-+]?\d+(?:\.\d+)?%?|[^\W\d_]+(?:'[^\W\d_]+)?|[^\w\s]"
)
_VALUE = "\x00#"
"""What a value is read as in a step's words (its written form is kept beside)."""
_MAX_SLOT = 2
"""Words a changed slot may span ("South Africa" for "Chile")."""
_MIN_KEPT = 3
"""Words a one-slot copy keeps around the slot."""


@functools.lru_cache(maxsize=1 << 16)
def _words(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The step's words, lower-cased, values as one mark; and the values as written."""
    words: list[str] = []
    values: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        token = match.group(0)
        if token[-1].isdigit() or token.endswith("%"):
            words.append(_VALUE)
            values.append(token.replace(",", ""))
        else:
            words.append(token)
    while words and words[-1] in (".", "!", ";"):
        words.pop()
    return tuple(words), tuple(values)


def same_words(pred_step: str, ref_step: str) -> bool:
    """The two steps have the same words in the same order, values aside.

    Examples:
        >>> same_words("The value is 12450.", "The value is 12,450.")
        True
        >>> same_words("The bar for Peru shows 8,120.", "The bar for Chile shows 8,120.")
        False
    """
    return _words(pred_step)[0] == _words(ref_step)[0]


def copy_of(pred_step: str, ref_step: str) -> bool:
    """``pred_step`` is ``ref_step`` with its values, or one slot of one or two words,
    changed (see the module docstring).

    Examples:
        >>> copy_of("The difference is 11,450 - 3,900 = 7,550.",
        ...         "The difference is 12,450 - 3,200 = 9,250.")
        True
        >>> copy_of("The bar for Peru shows a value of 12,450.",
        ...         "The bar for Chile shows a value of 12,450.")
        True
        >>> copy_of("The bar for Chile shows a value of 12,450.",
        ...         "The bar for Chile shows a value of 12,450.")
        False
        >>> copy_of("Row 2 contains 3 cells.", "Row 1 has 2 cells.")
        False
        >>> copy_of("The highest bar is Chile.", "The bar for Chile is the highest one.")
        False
    """
    (a, a_values), (b, b_values) = _words(pred_step), _words(ref_step)
    if a == b:
        return a_values != b_values
    if abs(len(a) - len(b)) > _MAX_SLOT - 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    slot_a, slot_b = a[start : len(a) - end], b[start : len(b) - end]
    if not slot_a or not slot_b or len(slot_a) > _MAX_SLOT or len(slot_b) > _MAX_SLOT:
        return False
    if _VALUE in slot_a or _VALUE in slot_b:
        return False  # a value and a word changed: two slots
    if any(not word[0].isalpha() for word in (*slot_a, *slot_b)):
        return False  # punctuation: another sentence shape
    if a_values != b_values:
        return False  # a word and a value changed: two slots
    return start + end >= _MIN_KEPT


Decide = Callable[[str, str], Any]
"""The guard's verdict on a pair ``(pred_step, ref_step)``: a conflict, or None."""


def copied_with_a_wrong_fact(
    pred_steps: Sequence[str], ref_steps: Sequence[str], decide: Decide
) -> dict[int, tuple[int, Any]]:
    """The predicted steps that copy a reference step with a changed slot stating a wrong
    fact: ``{pred index: (ref index, conflict)}`` (the first such reference step).

    Args:
        pred_steps: The predicted steps.
        ref_steps: The reference steps of one chain.
        decide: The guard's verdict on one pair (a conflict or None); asked only about
            copies.

    Examples:
        >>> from crystalbench.scoring.filters.guard import FactGuard
        >>> refs = ["The bar for Chile shows a value of 12,450.",
        ...         "The bar for Peru shows a value of 8,120."]
        >>> preds = ["The bar for Chile shows a value of 11,450.",
        ...          "The bar for Peru shows a value of 8120."]
        >>> found = copied_with_a_wrong_fact(preds, refs, FactGuard().check)
        >>> {i: (j, conflict.reason) for i, (j, conflict) in found.items()}
        {0: (0, 'number')}
    """
    blocked: dict[int, tuple[int, Any]] = {}
    ref_words = [_words(step)[0] for step in ref_steps]
    for i, pred_step in enumerate(pred_steps):
        if pred_step in ref_steps:
            continue
        words = _words(pred_step)[0]
        found: tuple[int, Any] | None = None
        agrees = False
        for j, ref_step in enumerate(ref_steps):
            if not copy_of(pred_step, ref_step):
                if ref_words[j] == words:  # the same values written otherwise
                    agrees = True
                    break
                continue
            conflict = decide(pred_step, ref_step)
            if conflict is None:
                if ref_words[j] == words:
                    agrees = True
                    break
            elif found is None:
                found = (j, conflict)
        if found is not None and not agrees:
            blocked[i] = found
    return blocked
