"""The numbers behind the HTML report that the leaderboard does not already give.

Breakdowns by source and difficulty (macro means with bootstrap intervals and the item
counts), the failure lists, the answer-against-reasoning quadrants, and the distributions
the plots draw (Match F1 by reference length, LIS ratios, steps per item). Everything here
is computed from the per-item records of loaded runs, through
:mod:`crystalbench.statistics.intervals`;
:mod:`crystalbench.report.html` only renders the results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from crystalbench.metrics import LEADERBOARD_KEYS
from crystalbench.report.loading import RunData
from crystalbench.statistics.intervals import (
    Bin,
    Interval,
    binned_means,
    bootstrap_cis,
    histogram_shares,
    length_bins,
)
from crystalbench.types import DIFFICULTIES

WEAK_REASONING_F1 = 0.3
""""Right answer, weak reasoning": a correct answer with Match F1 below this."""

SOUND_REASONING_F1 = 0.7
""""Sound reasoning, wrong answer": a wrong answer with Match F1 at or above this."""

REFERENCE_LENGTH_EDGES: tuple[int, ...] = (1, 6, 9, 12, 16, 21)
"""Bins of the F1-by-reference-length plot: 1-5, 6-8, 9-11, 12-15, 16-20, 21+ steps
(CRYSTAL chains run from 3 to 42 steps, mean 11.6)."""

LIS_EDGES: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
"""Bins of the LIS-ratio histogram (0.0-0.1, ..., 0.9-1.0)."""

MAX_STEP_BIN = 30
"""Predicted-steps histogram: one bin per count 0..29, then 30+."""

STEP_EDGES: tuple[float, ...] = (*(float(i) for i in range(MAX_STEP_BIN + 1)), float(10**9))
"""Edges of the steps-per-item histograms."""

STEP_LABELS: tuple[str, ...] = (*(str(i) for i in range(MAX_STEP_BIN)), f"{MAX_STEP_BIN}+")
"""Labels of the steps-per-item bins."""

FAILURE_LISTS: tuple[str, ...] = (
    "weak_reasoning",
    "sound_wrong",
    "no_steps",
    "parse_failed",
    "missing",
    "out_of_order",
)
"""The failure lists :func:`failure_lists` returns, by key."""


@dataclass(frozen=True)
class GroupStats:
    """One source dataset or difficulty tier of a run.

    Attributes:
        n: Items in the group.
        n_missing: Items with no prediction.
        n_parse_failed: Items whose output could not be parsed.
        n_no_steps: Items that parsed but gave no step.
        metrics: Table 2 metric key -> macro mean with its bootstrap interval.
    """

    n: int
    n_missing: int
    n_parse_failed: int
    n_no_steps: int
    metrics: dict[str, Interval]


def group_order(labels: Sequence[str], attribute: str) -> list[str]:
    """Groups in display order: tiers easy -> hard (then any other), sources sorted.

    Examples:
        >>> group_order(["hard", "easy", "hard"], "difficulty")
        ['easy', 'hard']
        >>> group_order(["plotqa", "mmvp"], "source")
        ['mmvp', 'plotqa']
    """
    present = set(labels)
    if attribute != "difficulty":
        return sorted(present)
    order = [tier for tier in DIFFICULTIES if tier in present]
    return order + sorted(present.difference(order))


def group_breakdown(
    run: RunData, attribute: str, *, n_resamples: int, confidence: float, seed: int
) -> dict[str, GroupStats]:
    """Table 2 metrics with intervals, and the counts, for each source or difficulty tier.

    Args:
        run: A loaded run.
        attribute: ``"source"`` or ``"difficulty"``.
        n_resamples: Bootstrap resamples per group.
        confidence: Confidence level of the intervals.
        seed: Seed of the resampling (the same for every group).
    """
    labels = run.labels(attribute)
    all_values = {key: run.values(key) for key in LEADERBOARD_KEYS}
    label_array = np.asarray(labels, dtype=object)
    out: dict[str, GroupStats] = {}
    for group in group_order(labels, attribute):
        mask = label_array == group
        intervals = bootstrap_cis(
            {key: values[mask] for key, values in all_values.items()},
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        members = [run.items[p] for p in np.flatnonzero(mask)]
        out[group] = GroupStats(
            n=int(mask.sum()),
            n_missing=sum(1 for it in members if it.missing),
            n_parse_failed=sum(1 for it in members if it.parse_failed),
            n_no_steps=sum(1 for it in members if it.no_steps),
            metrics=intervals,
        )
    return out


def failure_lists(
    run: RunData, weak_f1: float = WEAK_REASONING_F1, sound_f1: float = SOUND_REASONING_F1
) -> dict[str, list[int]]:
    """Positions (into the run's items) of each failure list, most telling first.

    - ``weak_reasoning``: correct answer, Match F1 below ``weak_f1`` (lowest F1 first);
    - ``sound_wrong``: wrong answer, Match F1 at or above ``sound_f1`` (highest first);
    - ``no_steps``: parsed, but no step (an answer alone);
    - ``parse_failed``, ``missing``: in file order;
    - ``out_of_order``: items with matched pairs off the LIS (lowest LIS first).
    """
    items = run.items
    weak = [k for k, it in enumerate(items) if it.answer_correct is True and it.f1 < weak_f1]
    sound = [
        k
        for k, it in enumerate(items)
        if it.answer_correct is False and not it.missing and it.f1 >= sound_f1
    ]
    weak.sort(key=lambda k: (items[k].f1, items[k].id))
    sound.sort(key=lambda k: (-items[k].f1, items[k].id))
    return {
        "weak_reasoning": weak,
        "sound_wrong": sound,
        "no_steps": [k for k, it in enumerate(items) if it.no_steps],
        "parse_failed": [k for k, it in enumerate(items) if it.parse_failed],
        "missing": [k for k, it in enumerate(items) if it.missing],
        "out_of_order": sorted(
            (k for k, it in enumerate(items) if it.out_of_order),
            key=lambda k: (items[k].lis, items[k].id),
        ),
    }


def quadrants(
    run: RunData, weak_f1: float = WEAK_REASONING_F1, sound_f1: float = SOUND_REASONING_F1
) -> dict[str, int]:
    """Answer correctness against reasoning quality (Match F1 bands), counted.

    Examples:
        >>> from types import SimpleNamespace as NS
        >>> run = NS(items=[NS(answer_correct=True, missing=False, f1=0.1)])
        >>> quadrants(run)["right_weak"]
        1
    """
    counts = {
        "right_sound": 0,
        "right_middle": 0,
        "right_weak": 0,
        "wrong_sound": 0,
        "wrong_middle": 0,
        "wrong_weak": 0,
        "unscored": 0,
    }
    for it in run.items:
        if it.answer_correct is None and not it.missing:
            counts["unscored"] += 1
            continue
        answer = "right" if it.answer_correct is True else "wrong"
        band = "sound" if it.f1 >= sound_f1 else "weak" if it.f1 < weak_f1 else "middle"
        counts[f"{answer}_{band}"] += 1
    return counts


@dataclass(frozen=True)
class Histogram:
    """Shares of items per bin.

    Attributes:
        n: Items counted.
        shares: Share of the items in each bin (all 0 with no item).
        mean: Mean of the values (``None`` with no item, or when not asked for).
    """

    n: int
    shares: list[float]
    mean: float | None = None


@dataclass(frozen=True)
class Distributions:
    """What the plots of one run show.

    Attributes:
        f1_by_length: Mean Match F1 (and its standard error) per reference-length bin.
        lis: LIS ratios of the items with at least two matches.
        steps: Predicted steps per item.
    """

    f1_by_length: list[Bin]
    lis: Histogram
    steps: Histogram


def reference_length_bins() -> list[tuple[float, float, str]]:
    """The bins of the F1-by-reference-length plot (see :data:`REFERENCE_LENGTH_EDGES`)."""
    return length_bins(list(REFERENCE_LENGTH_EDGES))


def distributions(run: RunData) -> Distributions:
    """Match F1 by reference length, the LIS histogram and the steps histogram of a run."""
    f1 = run.values("match_f1")
    n_ref = np.array([it.n_ref for it in run.items], dtype=np.float64)
    ordered = np.array([it.lis for it in run.items if len(it.matches) >= 2], dtype=np.float64)
    m = np.array([it.n_pred for it in run.items], dtype=np.float64)
    return Distributions(
        f1_by_length=binned_means(n_ref, f1, reference_length_bins()),
        lis=Histogram(n=int(ordered.size), shares=histogram_shares(ordered, LIS_EDGES)),
        steps=Histogram(
            n=int(m.size),
            shares=histogram_shares(m, STEP_EDGES),
            mean=float(m.mean()) if m.size else None,
        ),
    )


def reference_steps_histogram(runs: Sequence[RunData]) -> Histogram:
    """Reference chain lengths of every item of the runs (each item once: its first run's)."""
    seen: dict[str, int] = {}
    for run in runs:
        for it in run.items:
            seen.setdefault(it.id, it.n_ref)
    lengths = np.array(list(seen.values()), dtype=np.float64)
    return Histogram(
        n=int(lengths.size),
        shares=histogram_shares(lengths, STEP_EDGES),
        mean=float(lengths.mean()) if lengths.size else None,
    )
