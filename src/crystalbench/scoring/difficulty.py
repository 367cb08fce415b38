"""Difficulty tiers (easy / medium / hard).

The tier comes from the data when present. Otherwise it is derived from three signals
the paper names (reference step count, question length, linguistic markers) by a points
rule whose cut-offs are configurable:

- reference steps: +1 at ``step_cuts[0]`` or more, +2 at ``step_cuts[1]`` or more;
- question length: +1 above ``question_words`` words;
- markers: +1 when at least ``markers_needed`` distinct reasoning markers appear
  (conditionals, comparisons, negation, quantities: see ``MARKERS``);
- tier: ``hard`` at ``tier_cuts[1]`` points or more, ``medium`` at ``tier_cuts[0]``, else ``easy``.
"""

from __future__ import annotations

import re

from crystalbench.config.scoring import DifficultyConfig
from crystalbench.types import BenchmarkItem, Difficulty

MARKERS: tuple[str, ...] = (
    "if",
    "unless",
    "compare",
    "difference",
    "ratio",
    "percent",
    "percentage",
    "total",
    "sum",
    "average",
    "how many",
    "not",
    "except",
    "least",
    "most",
    "between",
    "both",
    "each",
    "probability",
    "angle",
    "area",
    "perimeter",
    "volume",
    "greater",
    "smaller",
    "larger",
    "fewer",
    "more than",
    "less than",
    "after",
    "before",
    "remaining",
)
_MARKER_PATTERNS = [(m, re.compile(rf"\b{re.escape(m)}\b")) for m in MARKERS]


def difficulty_points(item: BenchmarkItem, config: DifficultyConfig | None = None) -> int:
    """Points of the derived rule for one item.

    Examples:
        >>> item = BenchmarkItem(id="1", source="s", question="What is the area if x = 2?",
        ...                      answer="4", reference_steps=["a"] * 10)
        >>> difficulty_points(item)
        2
    """
    config = config or DifficultyConfig()
    n_steps = len(item.reference_steps)
    points = 2 if n_steps >= config.step_cuts[1] else 1 if n_steps >= config.step_cuts[0] else 0
    if len(item.question.split()) > config.question_words:
        points += 1
    text = item.question.lower()
    # a marker that is not a substring cannot match with word boundaries: skip its regex
    found = sum(
        1 for marker, pattern in _MARKER_PATTERNS if marker in text and pattern.search(text)
    )
    if found >= config.markers_needed:
        points += 1
    return points


def assign_difficulty(item: BenchmarkItem, config: DifficultyConfig | None = None) -> Difficulty:
    """The item's tier: from the data when set, else from :func:`difficulty_points`.

    Examples:
        >>> assign_difficulty(BenchmarkItem(id="1", source="s", question="Color?", answer="red",
        ...                                 reference_steps=["a", "b", "c"]))
        'easy'
    """
    if item.difficulty is not None:
        return item.difficulty
    config = config or DifficultyConfig()
    points = difficulty_points(item, config)
    if points >= config.tier_cuts[1]:
        return "hard"
    if points >= config.tier_cuts[0]:
        return "medium"
    return "easy"
