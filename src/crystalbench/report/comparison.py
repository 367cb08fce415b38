"""Paired comparison of two results folders on the same items (``crystal compare``).

Items are matched by id. Runs on different item sets are intersected with a loud
warning giving the counts; the statistics come from
:func:`crystalbench.statistics.intervals.compare_paired`
(paired bootstrap interval and p-value, sign-flip permutation p-value), overall and per
source dataset.
"""

from __future__ import annotations

from collections.abc import Sequence

from crystalbench.errors import InputError
from crystalbench.report.loading import RunData, align_runs, warn
from crystalbench.statistics.intervals import (
    DEFAULT_CONFIDENCE,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    PairedComparison,
    compare_paired,
)
from crystalbench.types import Record

COMPARED_METRICS: tuple[str, ...] = (
    "match_f1",
    "accuracy",
    "precision",
    "recall",
    "lis",
    "ordered_f1",
)
"""Metrics tested by default (Match F1 and accuracy first: the two the paper argues over)."""

GROUP_METRICS: tuple[str, ...] = ("match_f1", "accuracy")
"""Metrics also tested within each source dataset."""

PROVENANCE_KEYS: tuple[tuple[str, str], ...] = (
    ("encoder", "encoder"),
    ("threshold", "tau"),
    ("alpha", "alpha"),
    ("order_metric", "order metric"),
    ("compat", "compat mode"),
    ("answer_rules", "answer rules"),
    ("guard", "fact guard"),
    ("answer_extraction", "answer extraction"),
    ("benchmark_fingerprint", "benchmark fingerprint"),
)
"""Config keys that must agree for a like-for-like comparison, with their labels."""

CONFIG_DEFAULTS: dict[str, str] = {"guard": "none", "answer_extraction": "rules"}
"""What a key means when a results file lacks it (written before the option existed)."""


def config_value(run: RunData, key: str) -> object:
    """``run``'s recorded value of a scoring setting (its default when not recorded)."""
    value = run.config.get(key)
    return CONFIG_DEFAULTS.get(key) if value is None else value


class RunComparison(Record):
    """Run B against run A (the baseline): counts, warnings and the paired statistics."""

    name_a: str
    """Baseline run."""
    name_b: str
    """Compared run."""
    n_common: int
    """Items present in both runs (the ones tested)."""
    n_only_a: int
    """Items only in A (left out)."""
    n_only_b: int
    """Items only in B (left out)."""
    differences: list[str]
    """Scoring settings that differ between the two runs (not like-for-like when non-empty)."""
    warnings: list[str]
    """Everything a reader must know before trusting the numbers."""
    stats: PairedComparison
    """Paired tests of ``B - A`` per metric, overall and by source."""


def config_differences(a: RunData, b: RunData) -> list[str]:
    """Scoring settings that differ between two runs, as ``"label: A vs B"`` strings."""
    out = []
    for key, label in PROVENANCE_KEYS:
        left, right = config_value(a, key), config_value(b, key)
        if left != right:
            out.append(f"{label}: {left!r} vs {right!r}")
    return out


def compare_runs(
    a: RunData,
    b: RunData,
    *,
    metrics: Sequence[str] = COMPARED_METRICS,
    group_metrics: Sequence[str] = GROUP_METRICS,
    n_resamples: int = DEFAULT_RESAMPLES,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    require_same_items: bool = False,
) -> RunComparison:
    """Paired tests of run B against run A on the items they share.

    Args:
        a: Baseline run.
        b: Compared run; every delta is ``B - A``.
        metrics: Summary metrics to test (``match_f1``, ``accuracy``, ...).
        group_metrics: Metrics also tested per source (those of them in ``metrics``).
        n_resamples: Bootstrap resamples.
        n_permutations: Random sign patterns when a permutation test is not exact.
        confidence: Confidence level of the intervals.
        seed: Seed of every test.
        require_same_items: Raise instead of intersecting when the item sets differ.

    Returns:
        A :class:`RunComparison`; its ``warnings`` are also emitted as
        :class:`~crystalbench.report.loading.ReportWarning`.

    Raises:
        InputError: No item in common, or the sets differ and ``require_same_items``.
    """
    alignment = align_runs(a, b)
    warnings_: list[str] = []
    if not alignment.common:
        raise InputError(
            f"{a.name} and {b.name} share no item id (e.g. {a.ids[:2]} vs {b.ids[:2]}); "
            "were they scored on the same benchmark?"
        )
    if not alignment.identical:
        message = (
            f"{a.name} and {b.name} were scored on different items: comparing only the "
            f"{len(alignment.common)} they share ({len(alignment.only_a)} only in {a.name}, "
            f"{len(alignment.only_b)} only in {b.name})"
        )
        if require_same_items:
            raise InputError(message)
        warnings_.append(message)
    differences = config_differences(a, b)
    if differences:
        warnings_.append(
            f"{a.name} and {b.name} were scored with different settings ("
            + "; ".join(differences)
            + "): the difference mixes models and scoring"
        )
    positions_a = [a.position(i) for i in alignment.common]
    positions_b = [b.position(i) for i in alignment.common]
    pos_a = [p for p in positions_a if p is not None]
    pos_b = [p for p in positions_b if p is not None]
    sources_a = a.labels("source", pos_a)
    sources_b = b.labels("source", pos_b)
    mismatched = sum(1 for x, y in zip(sources_a, sources_b, strict=True) if x != y)
    if mismatched:
        warnings_.append(
            f"{mismatched} shared items carry a different source in the two runs; "
            f"per-source deltas use {a.name}'s labels"
        )
    stats = compare_paired(
        {metric: a.values(metric, pos_a) for metric in metrics},
        {metric: b.values(metric, pos_b) for metric in metrics},
        groups=sources_a,
        group_metrics=[m for m in group_metrics if m in metrics],
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        seed=seed,
    )
    for message in warnings_:
        warn(message)
    return RunComparison(
        name_a=a.name,
        name_b=b.name,
        n_common=len(alignment.common),
        n_only_a=len(alignment.only_a),
        n_only_b=len(alignment.only_b),
        differences=differences,
        warnings=warnings_,
        stats=stats,
    )
