"""The seed table of a sweep: mean and standard deviation of every validation metric per
configuration, and which differences between configurations exceed two standard deviations.

Seed-to-seed spread of a small benchmark is often 5 to 15 points, so a gain from one seed says
little. :func:`build_seed_table` groups the sweep's runs by configuration (everything but the
seed) and reports, for every validation metric, the mean over seeds and the sample standard
deviation (``n - 1``; none with one seed). Each pair of configurations is compared on every
metric: the difference of the means, and whether it exceeds twice the larger of the two
configurations' standard deviations (the conservative reading of "more than two standard
deviations of seed noise"); with fewer than two seeds on either side the verdict is ``None``.
That rule is a screen, not a test: with two or three seeds it says where a difference is
plainly larger than the spread, nothing finer.

Pure and torch-free: the sweep (:mod:`crystalbench.training.sweep`) calls it on its points and
writes ``seeds.json``, ``seeds.csv`` and ``seeds.md`` with :func:`write_seed_table`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_text
from crystalbench.types import Record

__all__ = [
    "SEED_TABLE_STEM",
    "Comparison",
    "MetricSpread",
    "SeedRow",
    "SeedRun",
    "SeedTable",
    "build_seed_table",
    "render_seed_csv",
    "render_seed_markdown",
    "write_seed_table",
]

SEED_TABLE_STEM = "seeds"
"""``seeds.json``, ``seeds.csv`` and ``seeds.md`` in the sweep folder."""

_KEY_METRICS = ("accuracy", "match_f1", "harmonic")
"""Compared in the Markdown table beside the sweep's metric and every held-out grader (the
JSON holds every metric's comparisons)."""


class SeedRun(Record):
    """One trained run: its configuration, seed and validation metrics."""

    configuration: str
    """Label of everything but the seed (``aw-0.65``, ``random``, ``cpr_aw-0.65_pcgrad-off``)."""
    settings: dict[str, Any]
    """The configuration's settings (strategy, a_w, PCGrad...)."""
    seed: int
    metrics: dict[str, float]
    """Validation metrics of the run's final policy."""


class MetricSpread(Record):
    """One metric over the seeds of one configuration."""

    mean: float
    std: float | None
    """Sample standard deviation (``n - 1``); ``None`` with one seed."""
    n: int
    """Seeds that recorded a finite value of the metric."""


class SeedRow(Record):
    """One configuration over its seeds."""

    configuration: str
    settings: dict[str, Any]
    seeds: list[int]
    metrics: dict[str, MetricSpread]


class Comparison(Record):
    """Two configurations on one metric."""

    metric: str
    first: str
    """A configuration."""
    second: str
    """Another, later in the sweep's order."""
    difference: float
    """``mean(first) - mean(second)``."""
    threshold: float | None
    """Twice the larger standard deviation of the two (``None``: a side has one seed)."""
    exceeds: bool | None
    """``|difference| > threshold``; ``None`` when there is no threshold."""


class SeedTable(Record):
    """The whole seed table of a sweep."""

    metric: str
    """The sweep's metric (the one the best configuration is chosen by)."""
    rows: list[SeedRow]
    comparisons: list[Comparison]
    rule: str = (
        "a difference exceeds 2 sd when |mean(first) - mean(second)| > 2 * max(sd(first), "
        "sd(second)), sd the sample standard deviation over seeds"
    )


def _spread(values: Sequence[float]) -> MetricSpread | None:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    std = statistics.stdev(finite) if len(finite) > 1 else None
    return MetricSpread(mean=math.fsum(finite) / len(finite), std=std, n=len(finite))


def build_seed_table(runs: Sequence[SeedRun], *, metric: str) -> SeedTable:
    """Group ``runs`` by configuration (first-seen order) and compare every pair.

    Examples:
        >>> runs = [SeedRun(configuration=c, settings={}, seed=s, metrics={"accuracy": v})
        ...         for c, s, v in [("a", 1, 0.5), ("a", 2, 0.7), ("b", 1, 0.1), ("b", 2, 0.2)]]
        >>> table = build_seed_table(runs, metric="accuracy")
        >>> row = table.rows[0].metrics["accuracy"]
        >>> round(row.mean, 3), round(row.std, 4), row.n
        (0.6, 0.1414, 2)
        >>> (c,) = table.comparisons
        >>> round(c.difference, 3), round(c.threshold, 4), c.exceeds
        (0.45, 0.2828, True)
    """
    order: list[str] = []
    grouped: dict[str, list[SeedRun]] = {}
    for run in runs:
        if run.configuration not in grouped:
            order.append(run.configuration)
            grouped[run.configuration] = []
        grouped[run.configuration].append(run)
    rows = []
    for name in order:
        members = grouped[name]
        names = sorted({key for run in members for key in run.metrics})
        rows.append(
            SeedRow(
                configuration=name,
                settings=members[0].settings,
                seeds=[run.seed for run in members],
                metrics={
                    key: spread
                    for key in names
                    if (
                        spread := _spread(
                            [run.metrics[key] for run in members if key in run.metrics]
                        )
                    )
                    is not None
                },
            )
        )
    comparisons = []
    for index, first in enumerate(rows):
        for second in rows[index + 1 :]:
            for key in sorted(set(first.metrics) & set(second.metrics)):
                a, b = first.metrics[key], second.metrics[key]
                difference = a.mean - b.mean
                threshold = (
                    2.0 * max(a.std, b.std) if a.std is not None and b.std is not None else None
                )
                comparisons.append(
                    Comparison(
                        metric=key,
                        first=first.configuration,
                        second=second.configuration,
                        difference=difference,
                        threshold=threshold,
                        exceeds=abs(difference) > threshold if threshold is not None else None,
                    )
                )
    return SeedTable(metric=metric, rows=rows, comparisons=comparisons)


def _metric_names(table: SeedTable) -> list[str]:
    return sorted({key for row in table.rows for key in row.metrics})


def _settings_names(table: SeedTable) -> list[str]:
    names: list[str] = []
    for row in table.rows:
        names += [key for key in row.settings if key not in names]
    return names


def render_seed_csv(table: SeedTable) -> str:
    """One row per configuration: its settings, seeds, then ``METRIC_mean`` and
    ``METRIC_std`` for every metric (empty where undefined)."""
    metrics = _metric_names(table)
    settings = _settings_names(table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = ["configuration", *settings, "n_seeds", "seeds"]
    header += [f"{m}_{part}" for m in metrics for part in ("mean", "std")]
    writer.writerow(header)
    for row in table.rows:
        cells: list[Any] = [row.configuration, *(row.settings.get(s, "") for s in settings)]
        cells += [len(row.seeds), " ".join(str(seed) for seed in row.seeds)]
        for m in metrics:
            spread = row.metrics.get(m)
            cells.append("" if spread is None else spread.mean)
            cells.append("" if spread is None or spread.std is None else spread.std)
        writer.writerow(cells)
    return out.getvalue()


def _cell(spread: MetricSpread | None) -> str:
    if spread is None:
        return "-"
    if spread.std is None:
        return f"{spread.mean:.3f}"
    return f"{spread.mean:.3f} ± {spread.std:.3f}"


def render_seed_markdown(table: SeedTable) -> str:
    """The seed table and the comparisons of the key metrics, as Markdown.

    Examples:
        >>> runs = [SeedRun(configuration="a", settings={}, seed=s, metrics={"harmonic": v})
        ...         for s, v in [(1, 0.5), (2, 0.7)]]
        >>> print(render_seed_markdown(build_seed_table(runs, metric="harmonic")).splitlines()[4])
        | a | 1 2 | 0.600 ± 0.141 |
    """
    metrics = _metric_names(table)
    shown = [m for m in (table.metric, *_KEY_METRICS) if m in metrics]
    shown = list(dict.fromkeys(shown + [m for m in metrics if m.startswith("heldout/")]))
    rest = [m for m in metrics if m not in shown]
    columns = shown + rest
    lines = [
        "# Seed table",
        "",
        "| configuration | seeds | " + " | ".join(columns) + " |",
        "|" + "---|" * (len(columns) + 2),
    ]
    for row in table.rows:
        cells = " | ".join(_cell(row.metrics.get(m)) for m in columns)
        lines.append(f"| {row.configuration} | {' '.join(map(str, row.seeds))} | {cells} |")
    lines += ["", "Mean ± sample standard deviation over seeds (one seed: the mean alone)."]
    compared = [c for c in table.comparisons if c.metric in shown]
    if compared:
        lines += [
            "",
            "## Comparisons",
            "",
            "| metric | first | second | difference | 2 sd | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for c in compared:
            threshold = "-" if c.threshold is None else f"{c.threshold:.3f}"
            verdict = {True: "exceeds 2 sd", False: "within 2 sd", None: "n/a (one seed)"}[
                c.exceeds
            ]
            lines.append(
                f"| {c.metric} | {c.first} | {c.second} | {c.difference:+.3f} | {threshold} | "
                f"{verdict} |"
            )
        lines += ["", f"Rule: {table.rule}. Every metric's comparisons: seeds.json."]
    return "\n".join(lines) + "\n"


def write_seed_table(folder: str | Path, table: SeedTable) -> list[Path]:
    """Write ``seeds.json``, ``seeds.csv`` and ``seeds.md`` into ``folder``."""
    folder = Path(folder)
    paths = [folder / f"{SEED_TABLE_STEM}.{suffix}" for suffix in ("json", "csv", "md")]
    atomic_write_text(paths[0], json.dumps(table.model_dump(mode="json"), indent=2) + "\n")
    atomic_write_text(paths[1], render_seed_csv(table))
    atomic_write_text(paths[2], render_seed_markdown(table))
    return paths
