"""Helpers shared by the fact-pair generator's banks (see ``generate.py``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

Pair = dict[str, Any]
Template = Callable[[random.Random], Iterator[Pair]]

_SMALL = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def words(n: int) -> str:
    """0..99 in words ("twenty-one")."""
    if n < 20:
        return _SMALL[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens - 2] + (f"-{_SMALL[unit]}" if unit else "")


def pair(
    label: str, kind: str, source: str, ref: str, pred: str, options: list[str] | None = None
) -> Pair:
    return {
        "label": label,
        "kind": kind,
        "source": source,
        "ref": ref,
        "pred": pred,
        "options": options or [],
    }


def other(rng: random.Random, value: int, low: int, high: int) -> int:
    """A different value in ``[low, high]``."""
    choices = [v for v in range(low, high + 1) if v != value]
    return rng.choice(choices)


def labels(rng: random.Random, n: int) -> str:
    return "".join(rng.sample("ABCDEFGHKLMNPQRS", n))


COLOURS = ["red", "blue", "green", "yellow", "orange", "purple", "black", "white", "brown", "pink"]
COLOUR_SYNONYMS = {"red": "crimson", "blue": "navy", "gray": "grey", "purple": "violet"}
