"""``crystal report``, ``crystal leaderboard`` and ``crystal compare``: read results folders.

Thin shells over :mod:`crystalbench.report.jobs`: each command's options are one config
(:class:`~crystalbench.report.jobs.ReportConfig`, ``LeaderboardConfig``,
``CompareConfig``), one library call does the work, and this module prints.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape

from crystalbench.cli.binding import configured
from crystalbench.cli.common import (
    Quiet,
    TrackerOption,
    TrackerProject,
    check_tracker,
    console,
    err_console,
    handle_errors,
    leaderboard_table,
    track_folders,
)
from crystalbench.cli.flags import Flag
from crystalbench.metrics import LEADERBOARD_KEYS
from crystalbench.report.jobs import CompareConfig, LeaderboardConfig, ReportConfig

if TYPE_CHECKING:
    from crystalbench.report import RunComparison


def _results_flag(help_text: str) -> Flag:
    return Flag("results", ("RESULTS",), help_text, kind=list[str], argument=True, required=True)


_RESULTS_HELP = (
    "Results folders written by `crystal score` (examples.jsonl + summary.json); other "
    "paths a glob matches are skipped with a note"
)
_NAMES = Flag(
    "names",
    ("--name",),
    "Display name of each results folder, in order (repeat the option)",
    kind=list[str],
    metavar="NAME",
    default_text="the model, else the folder",
    param_name="name",
)
_RESAMPLING = (
    Flag("resamples", ("--resamples",), "Bootstrap resamples of every interval", kind=int),
    Flag("confidence", ("--confidence",), "Confidence level of the intervals", kind=float),
    Flag(
        "seed",
        ("--seed",),
        "Seed of every resampling (the same seed gives the same numbers)",
        kind=int,
    ),
)

REPORT_FLAGS: tuple[Flag, ...] = (
    _results_flag(_RESULTS_HELP),
    Flag(
        "benchmark",
        ("--benchmark", "-b"),
        "Benchmark the runs were scored on (sample, hub id, folder, .parquet, .jsonl): "
        "adds questions, options and image thumbnails",
        metavar="BENCHMARK",
        default_text="none",
    ),
    Flag(
        "baseline",
        ("--baseline",),
        "Run the others are compared against: index, name or folder",
        metavar="RUN",
        default_text="the first",
    ),
    _NAMES,
    Flag("title", ("--title",), "Page title", metavar="TEXT", default_text="CRYSTAL report"),
    *_RESAMPLING,
    Flag(
        "permutations",
        ("--permutations",),
        "Random sign patterns of the permutation tests",
        kind=int,
    ),
    Flag(
        "weak_f1",
        ("--weak-f1",),
        "'Right answer, weak reasoning': Match F1 below this",
        kind=float,
    ),
    Flag(
        "sound_f1",
        ("--sound-f1",),
        "'Sound reasoning, wrong answer': Match F1 from this",
        kind=float,
    ),
    Flag("images", ("--images/--no-images",), "Embed item images (needs --benchmark)", kind=bool),
    Flag(
        "image_size",
        ("--image-size",),
        "Longest side of embedded thumbnails",
        kind=int,
        metavar="PIXELS",
    ),
    Flag(
        "image_root",
        ("--image-root",),
        "A folder item images may lie in besides the benchmark file's own folder",
        metavar="FOLDER",
        default_text="none",
    ),
)
"""The options of ``crystal report`` (one :class:`ReportConfig` field each)."""

LEADERBOARD_FLAGS: tuple[Flag, ...] = (
    _results_flag(_RESULTS_HELP),
    Flag(
        "output_format",
        ("--output-format", "-f"),
        "Table format: GitHub Markdown, CSV or booktabs LaTeX",
    ),
    _NAMES,
    Flag(
        "sort",
        ("--sort",),
        f"Sort by a metric, highest first: {', '.join(LEADERBOARD_KEYS)}",
        metavar="METRIC",
        default_text="the order given",
    ),
    Flag(
        "intervals",
        ("--ci/--no-ci",),
        "Show bootstrap intervals (md, tex)",
        kind=bool,
        param_name="ci",
    ),
    *_RESAMPLING,
)
"""The options of ``crystal leaderboard`` (one :class:`LeaderboardConfig` field each)."""

COMPARE_FLAGS: tuple[Flag, ...] = (
    _results_flag("A then B: the baseline results folder and the compared one (deltas are B - A)"),
    *_RESAMPLING,
    Flag(
        "permutations",
        ("--permutations",),
        "Random sign patterns when a permutation test is not exact",
        kind=int,
    ),
    Flag(
        "same_items",
        ("--same-items",),
        "Fail when the runs hold different items instead of comparing the items they share",
        kind=bool,
    ),
    _NAMES,
)
"""The options of ``crystal compare`` (one :class:`CompareConfig` field each)."""


@contextmanager
def _printed_warnings() -> Iterator[None]:
    """Show report warnings as loud one-line messages on stderr (not Python warning spam)."""
    from crystalbench.report import ReportWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            yield
        finally:
            seen: set[str] = set()
            for record in caught:
                message = str(record.message)
                if issubclass(record.category, ReportWarning) and message not in seen:
                    seen.add(message)
                    err_console.print(
                        f"[bold yellow]warning:[/] {escape(message)}", highlight=False
                    )


def _notes(skipped: list[str]) -> None:
    for note in skipped:
        err_console.print(f"[dim]note:[/] {escape(note)}", highlight=False)


@handle_errors
@configured(ReportConfig, REPORT_FLAGS)
def report(
    config: ReportConfig,
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="FILE", help="HTML file to write")
    ] = Path("report.html"),
    quiet: Quiet = False,
) -> None:
    """Write one self-contained HTML report (no network needed to view it) for RESULTS..."""
    from crystalbench.report.jobs import write_report

    with _printed_warnings():
        done = write_report(config, out)
    _notes(done.skipped)
    rows = [(run.name, run.summary) for run in done.runs]
    console.print(leaderboard_table(rows, title="CRYSTAL leaderboard (intervals in the report)"))
    size = done.path.stat().st_size
    console.print(
        f"wrote [bold]{escape(str(done.path))}[/] ({size / 1e6:.1f} MB): open it in any browser"
    )


@handle_errors
@configured(LeaderboardConfig, LEADERBOARD_FLAGS)
def leaderboard(
    config: LeaderboardConfig,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Write to this file instead of printing",
            show_default="print",
        ),
    ] = None,
    quiet: Quiet = False,
    tracker: TrackerOption = None,
    tracker_project: TrackerProject = None,
) -> None:
    """Print the paper's Table 2 for RESULTS... as Markdown, CSV or LaTeX, with bootstrap CIs."""
    from crystalbench.report.jobs import write_leaderboard

    check_tracker(tracker)
    with _printed_warnings():
        done = write_leaderboard(config, out)
    _notes(done.skipped)
    if out is not None:
        err_console.print(f"wrote {escape(str(out))}", highlight=False)
    elif not quiet:
        typer.echo(done.text, nl=False)
    track_folders(
        done.runs,
        tracker,
        tracker_project,
        command="crystal leaderboard",
        group="leaderboard " + datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        quiet=quiet,
        to_stderr=True,  # stdout may be the table, piped
    )


@handle_errors
@configured(CompareConfig, COMPARE_FLAGS)
def compare(
    config: CompareConfig,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Also write the full comparison as JSON here",
            show_default="none",
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Paired bootstrap and permutation tests of B against A on the same items, per source too."""
    from crystalbench.report.jobs import compare_results

    with _printed_warnings():
        comparison = compare_results(config, out)
    _print_comparison(comparison)
    if out is not None:
        err_console.print(f"wrote {escape(str(out))}", highlight=False)


# --------------------------------------------------------------------------- printing


def _signed(value: float, kind: str) -> str:
    from crystalbench.metrics import format_value as format_number

    text = format_number(abs(value), kind)
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _print_comparison(comparison: RunComparison) -> None:
    from rich.table import Table

    from crystalbench.metrics import METRIC
    from crystalbench.metrics import format_value as format_number

    stats = comparison.stats
    level = next(iter(stats.metrics.values())).confidence if stats.metrics else 0.95
    table = Table(
        title=f"{comparison.name_b} vs {comparison.name_a} (Δ = B − A), "
        f"{comparison.n_common} paired items"
    )
    for header in (
        "Metric",
        comparison.name_a,
        comparison.name_b,
        "Δ",
        f"{100 * level:g}% CI",
        "p bootstrap",
        "p permutation",
        "differing",
    ):
        table.add_column(header, justify="left" if header == "Metric" else "right")
    for metric, test in stats.metrics.items():
        declared = METRIC.get(metric)
        label, kind = (declared.header, declared.number_format) if declared else (metric, "f3")
        significant = test.low > 0 or test.high < 0
        style = ("green" if test.delta > 0 else "red") if significant else ""
        delta = _signed(test.delta, kind)
        table.add_row(
            label,
            format_number(test.mean_a, kind),
            format_number(test.mean_b, kind),
            f"[{style}]{delta}[/]" if style else delta,
            f"[{format_number(test.low, kind)}, {format_number(test.high, kind)}]",
            _p(test.p_bootstrap),
            _p(test.p_permutation) + (" (exact)" if test.permutation_exact else ""),
            str(test.n_differing),
        )
    console.print(table)
    if stats.by_group:
        groups = Table(title="By source (Δ = B − A; p: permutation)")
        for header in ("Source", "Items", "Δ Match F1", "CI", "p", "Δ Accuracy (pts)", "CI", "p"):
            groups.add_column(header, justify="left" if header == "Source" else "right")
        for group, tests in stats.by_group.items():
            f1 = tests.get("match_f1")
            acc = tests.get("accuracy")
            cells: list[str] = [group, str(next(iter(tests.values())).n)]
            for group_test, kind in ((f1, "f3"), (acc, "pct")):
                if group_test is None:
                    cells += ["—", "—", "—"]
                    continue
                cells += [
                    _signed(group_test.delta, kind),
                    f"[{format_number(group_test.low, kind)}, "
                    f"{format_number(group_test.high, kind)}]",
                    _p(group_test.p_permutation),
                ]
            groups.add_row(*cells)
        console.print(groups)
    console.print(
        "[dim]Paired bootstrap over items (interval and p) and sign-flip permutation test "
        "(exact when few items differ); two-sided, not adjusted for multiple comparisons.[/]"
    )
    if comparison.n_only_a or comparison.n_only_b:
        err_console.print(
            f"[bold yellow]warning:[/] only {comparison.n_common:d} shared items were compared "
            f"({comparison.n_only_a:d} only in {escape(comparison.name_a)}, "
            f"{comparison.n_only_b:d} only in {escape(comparison.name_b)})",
            highlight=False,
        )
