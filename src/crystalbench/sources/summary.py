"""``crystal data stats``: counts by source, answer type and options; steps and tiers."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from crystalbench.sources.base import STATS_HISTOGRAM_BINS
from crystalbench.sources.records import ItemSetStats, StepStats
from crystalbench.types import BenchmarkItem


def step_histogram(
    counts: Sequence[int], bins: int = STATS_HISTOGRAM_BINS
) -> list[tuple[int, int, int]]:
    """``[low, high, items]`` bins of equal integer width covering ``min..max`` steps.

    Examples:
        >>> step_histogram([3, 4, 10, 42], bins=10)[:2]
        [(3, 6, 2), (7, 10, 1)]
        >>> step_histogram([5, 5])
        [(5, 5, 2)]
    """
    if not counts:
        return []
    low, high = min(counts), max(counts)
    width = max(1, math.ceil((high - low + 1) / max(1, bins)))
    out: list[tuple[int, int, int]] = []
    start = low
    while start <= high:
        end = start + width - 1
        out.append((start, end, sum(1 for c in counts if start <= c <= end)))
        start = end + 1
    return out


def summarize_items(
    items: Sequence[BenchmarkItem], name: str, *, bins: int = STATS_HISTOGRAM_BINS
) -> ItemSetStats:
    """Counts of an item set or a benchmark.

    Answer types missing from the data are counted under the type crystalbench infers (and
    counted in ``answer_type_inferred``). Steps per item and difficulty tiers cover the items
    that have reference steps.

    Examples:
        >>> item = BenchmarkItem(id="mmvp/1", source="mmvp", question="Open?", answer="A",
        ...                      options=["Open", "Closed"], answer_type="multiple_choice",
        ...                      reference_steps=[])
        >>> stats = summarize_items([item], "demo")
        >>> stats.by_options, stats.steps is None
        ({'2': 1}, True)
    """
    from crystalbench.answers import infer_answer_type
    from crystalbench.scoring.difficulty import assign_difficulty

    by_source: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    by_options: Counter[int] = Counter()
    nested: dict[str, Counter[str]] = {}
    inferred = 0
    steps: list[int] = []
    tiers: Counter[str] = Counter()
    for item in items:
        by_source[item.source] += 1
        answer_type = item.answer_type
        if answer_type is None:
            answer_type = infer_answer_type(item)
            inferred += 1
        by_type[answer_type] += 1
        nested.setdefault(item.source, Counter())[answer_type] += 1
        by_options[len(item.options)] += 1
        if item.reference_steps:
            steps.append(len(item.reference_steps))
            tiers[assign_difficulty(item)] += 1
    step_stats = None
    if steps:
        step_stats = StepStats(
            items=len(steps),
            mean=sum(steps) / len(steps),
            min=min(steps),
            max=max(steps),
            histogram=step_histogram(steps, bins),
        )
    order = ("easy", "medium", "hard")
    return ItemSetStats(
        name=name,
        items=len(items),
        by_source=dict(by_source.most_common()),
        by_answer_type=dict(by_type.most_common()),
        answer_type_inferred=inferred,
        by_options={str(k): by_options[k] for k in sorted(by_options)},
        with_references=len(steps),
        without_references=len(items) - len(steps),
        steps=step_stats,
        by_difficulty={tier: tiers[tier] for tier in order if tiers[tier]},
        by_source_answer_type={s: dict(c.most_common()) for s, c in nested.items()},
    )
