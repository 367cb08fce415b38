"""``crystal data``: item sets from source datasets, merging, statistics, the leakage check.

Thin shells over :mod:`crystalbench.data.sources` and :mod:`crystalbench.training.leakage`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.common import console, err_console, handle_errors, progress_hook

data_app = typer.Typer(
    help="Training-data utilities (leakage check).",
    no_args_is_help=True,
    add_completion=False,
)

EXIT_LEAK = 1
"""Exit code of ``check-leakage`` when a training item is a benchmark item."""


@data_app.command("check-leakage")
@handle_errors
def check_leakage_command(
    train: Annotated[str, typer.Argument(help="Training pool (JSONL, save_to_disk, Parquet, hub)")],
    benchmark: Annotated[
        str, typer.Argument(help="Benchmark it must not contain (e.g. waybarrios/CRYSTAL)")
    ],
    split: Annotated[str, typer.Option(help="Hub split of the training pool")] = "train",
    max_hamming: Annotated[
        int, typer.Option(help="dHash bits that may differ for two images to count as one")
    ] = 4,
    out: Annotated[Path | None, typer.Option(help="Write the full report as JSON here")] = None,
    show: Annotated[int, typer.Option(help="Leaks to list (0: all)")] = 20,
) -> None:
    """Prove no training item (image hash + normalised question) is a benchmark item.

    Exits 1 when a training item leaks, 0 when the pool is clean, 2 on bad input.
    """
    from rich.table import Table

    from crystalbench.data import load_benchmark
    from crystalbench.training.leakage import check_leakage

    pool = load_benchmark(train, split=split)
    bench = load_benchmark(benchmark)
    with progress_hook() as hook:
        report = check_leakage(pool, bench, max_hamming=max_hamming, progress=hook)
    if out is not None:
        from crystalbench.io import atomic_write_text

        atomic_write_text(out, json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    console.print(
        f"{report.n_train} training items checked against {report.n_benchmark} benchmark items "
        f"({report.benchmark}, fingerprint {report.benchmark_fingerprint})"
    )
    console.print(
        f"leaks: {len(report.leaks)}   same image, other question: {report.n_image_only}   "
        f"same question, other image: {report.n_question_only}"
    )
    if report.leaks:
        table = Table(title="leaked training items")
        for column in ("train id", "benchmark id", "reason", "dHash distance"):
            table.add_column(column)
        listed = report.leaks if show == 0 else report.leaks[:show]
        for match in listed:
            distance = "" if match.image_distance is None else str(match.image_distance)
            table.add_row(match.train_id, match.benchmark_id, match.reason, distance)
        console.print(table)
        err_console.print(
            f"[bold red]{len(report.leaks)} training item(s) leak into the benchmark[/]"
        )
        raise typer.Exit(EXIT_LEAK)
    console.print("[bold green]clean[/]: no training item is a benchmark item")
