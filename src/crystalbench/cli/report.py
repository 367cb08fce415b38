"""``crystal report``, ``crystal leaderboard`` and ``crystal compare``: read results folders.

Thin shells over :mod:`crystalbench.report`: parse options, load, delegate, print.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from crystalbench.cli.common import console, err_console, handle_errors
from crystalbench.metrics import LEADERBOARD_KEYS

if TYPE_CHECKING:
    from crystalbench.report import RunComparison, RunData

ResultsArg = Annotated[
    list[Path],
    typer.Argument(
        metavar="RESULTS",
        help="Results folders written by `crystal score` (examples.jsonl + summary.json); "
        "other paths a glob matches are skipped with a note",
    ),
]
NamesOpt = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option("--name", help="Display name of each folder, in order (repeat the option)"),
]
ResamplesOpt = Annotated[
    int, typer.Option("--resamples", min=1, help="Bootstrap resamples for the confidence intervals")
]
SeedOpt = Annotated[int, typer.Option(help="Seed of every resampling (results are reproducible)")]
ConfidenceOpt = Annotated[
    float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals")
]


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
                    err_console.print(f"[bold yellow]warning:[/] {message}", highlight=False)


def _load_selected(results: list[Path], names: list[str] | None) -> list[RunData]:
    """Load the results folders among ``results``; print a note for each path skipped.

    Raises:
        InputError: None of the paths is a results folder (the CLI exits 2).
    """
    from crystalbench.report import load_runs, select_results

    selection = select_results(results, names=names)
    for note in selection.skipped:
        err_console.print(f"[dim]note:[/] {note}", highlight=False)
    return load_runs(selection.paths, names=selection.names)


@handle_errors
def report(
    results: ResultsArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write")] = Path(
        "report.html"
    ),
    benchmark: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--benchmark",
            "-b",
            help="Benchmark the runs were scored on (sample, hub id, folder, .parquet, .jsonl): "
            "adds questions, options and image thumbnails",
        ),
    ] = None,
    baseline: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Run the others are compared against: index, name or folder"),
    ] = None,
    name: NamesOpt = None,
    title: Annotated[Optional[str], typer.Option(help="Page title")] = None,  # noqa: UP045
    resamples: ResamplesOpt = 1000,
    permutations: Annotated[
        int, typer.Option(min=1, help="Random sign patterns of the permutation tests")
    ] = 10000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    weak_f1: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="'Right answer, weak reasoning': F1 below this")
    ] = 0.3,
    sound_f1: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="'Sound reasoning, wrong answer': F1 from this")
    ] = 0.7,
    images: Annotated[
        bool, typer.Option("--images/--no-images", help="Embed item images (needs --benchmark)")
    ] = True,
    image_size: Annotated[
        int, typer.Option(min=32, max=2048, help="Longest side of embedded thumbnails (pixels)")
    ] = 384,
    image_root: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(help="Folder item images may lie in besides the benchmark file's folder"),
    ] = None,
) -> None:
    """Write one self-contained HTML report (no network needed to view it) for RESULTS..."""
    from crystalbench.cli.common import leaderboard_table
    from crystalbench.report import build_report

    with _printed_warnings():
        runs = _load_selected(results, name)
        bench = None
        if benchmark is not None:
            from crystalbench.data import load_benchmark

            bench = load_benchmark(benchmark, image_root=image_root)
        path = build_report(
            runs,
            out,
            benchmark=bench,
            baseline=baseline,
            title=title,
            n_resamples=resamples,
            n_permutations=permutations,
            confidence=confidence,
            seed=seed,
            weak_f1=weak_f1,
            sound_f1=sound_f1,
            embed_images=images,
            image_max_side=image_size,
        )
    rows = [(run.name, run.summary) for run in runs]
    console.print(leaderboard_table(rows, title="CRYSTAL leaderboard (intervals in the report)"))
    size = path.stat().st_size
    console.print(f"wrote [bold]{path}[/] ({size / 1e6:.1f} MB): open it in any browser")


@handle_errors
def leaderboard(
    results: ResultsArg,
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv or tex")] = "md",
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--out", "-o", help="Write to this file instead of printing"),
    ] = None,
    name: NamesOpt = None,
    sort: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help=f"Sort by a metric: {', '.join(LEADERBOARD_KEYS)} (highest first)"),
    ] = None,
    intervals: Annotated[
        bool, typer.Option("--ci/--no-ci", help="Show bootstrap intervals (md, tex)")
    ] = True,
    resamples: ResamplesOpt = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
) -> None:
    """Print the paper's Table 2 for RESULTS... as Markdown, CSV or LaTeX, with bootstrap CIs."""
    from crystalbench.errors import UnknownNameError
    from crystalbench.io import atomic_write_text
    from crystalbench.report import FORMATS, METRIC_KEYS, leaderboard_rows, render

    if fmt not in FORMATS:
        raise UnknownNameError("leaderboard format", fmt, FORMATS)
    if sort is not None and sort not in METRIC_KEYS:
        raise UnknownNameError("metric", sort, METRIC_KEYS)
    with _printed_warnings():
        runs = _load_selected(results, name)
        rows = leaderboard_rows(
            runs, n_resamples=resamples, confidence=confidence, seed=seed, sort_by=sort
        )
    text = render(rows, fmt, intervals=intervals)
    if out is not None:
        atomic_write_text(out, text)
        err_console.print(f"wrote {out}")
    else:
        typer.echo(text, nl=False)


@handle_errors
def compare(
    run_a: Annotated[Path, typer.Argument(metavar="A", help="Baseline results folder")],
    run_b: Annotated[
        Path, typer.Argument(metavar="B", help="Compared results folder; deltas are B - A")
    ],
    resamples: ResamplesOpt = 1000,
    permutations: Annotated[
        int, typer.Option(min=1, help="Random sign patterns when a test is not exact")
    ] = 10000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    strict: Annotated[
        bool,
        typer.Option(help="Fail when the runs hold different items instead of intersecting them"),
    ] = False,
    name: NamesOpt = None,
    json_out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--json", help="Also write the full comparison as JSON here"),
    ] = None,
) -> None:
    """Paired bootstrap and permutation tests of B against A on the same items, per source too."""
    from crystalbench.errors import InputError
    from crystalbench.io import atomic_write_json
    from crystalbench.report import compare_runs, load_runs, select_results

    selection = select_results([run_a, run_b], names=name)
    if selection.skipped:  # a comparison needs both: say which one is not a results folder
        raise InputError("compare needs two results folders; " + "; ".join(selection.skipped))
    with _printed_warnings():
        runs = load_runs(selection.paths, names=selection.names)
        comparison = compare_runs(
            runs[0],
            runs[1],
            n_resamples=resamples,
            n_permutations=permutations,
            confidence=confidence,
            seed=seed,
            require_same_items=strict,
        )
    _print_comparison(comparison)
    if json_out is not None:
        atomic_write_json(json_out, comparison.model_dump(mode="json"))
        err_console.print(f"wrote {json_out}")


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
            f"[bold yellow]warning:[/] only {comparison.n_common} shared items were compared "
            f"({comparison.n_only_a} only in {comparison.name_a}, {comparison.n_only_b} only in "
            f"{comparison.name_b})",
            highlight=False,
        )
