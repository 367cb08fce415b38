"""``crystal demo``: score the bundled sample's prediction sets and print a leaderboard; with
``--construction``, run the construction life cycle offline instead."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.common import (
    OverwriteResults,
    Quiet,
    ShowProgress,
    console,
    handle_errors,
    leaderboard_table,
    progress_hook,
)
from crystalbench.defaults import OFFLINE_ENCODER


@handle_errors
def demo(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FOLDER",
            help="Where results go [default: crystal-demo; crystal-demo/construction]",
        ),
    ] = None,
    encoder: Annotated[
        str, typer.Option(metavar="NAME", help="Sentence encoder (the bundled offline MiniLM)")
    ] = OFFLINE_ENCODER,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write OUT/report.html")
    ] = True,
    construction: Annotated[
        bool,
        typer.Option(
            "--construction",
            help="Build a benchmark from the sample's source copies instead: data build, "
            "references build against scripted loopback models, review import, infer, score",
        ),
    ] = False,
    progress: ShowProgress = True,
    quiet: Quiet = False,
    overwrite: OverwriteResults = False,
) -> None:
    """Score the sample benchmark's model styles offline and print the paper's Table 2 columns.

    With --construction, run the whole construction life cycle offline instead, printing each
    command it runs (crystalbench.demo.construction)."""
    if construction:
        from crystalbench.demo.construction import run_construction_demo

        run_construction_demo(
            out or Path("crystal-demo/construction"),
            encoder=encoder,
            echo=lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True),
        )
        return
    _score_demo(out or Path("crystal-demo"), encoder, report, progress and not quiet, overwrite)


def _score_demo(out: Path, encoder: str, report: bool, progress: bool, overwrite: bool) -> None:
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data import SAMPLE_DIR, load_benchmark
    from crystalbench.scoring.job import ScoreJob, score_job

    bench = load_benchmark("sample")
    sets = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))
    job = ScoreJob(
        benchmark="sample",
        predictions=[f"{path.stem}={path}" for path in sets],
        scoring=ScoreConfig(encoder=encoder),
    )
    console.print(
        f"[bold]crystalbench demo[/]: {len(sets)} model styles on the bundled sample "
        f"({len(bench)} items), encoder [bold]{encoder}[/]"
    )
    with progress_hook(progress) as hook:
        done = score_job(job, out, benchmark=bench, progress=hook, overwrite=overwrite)
    rows = [(name, run.summary) for name, run in done.runs.items()]
    console.print(leaderboard_table(rows, title="CRYSTAL sample leaderboard"))
    path = None
    if report:
        from crystalbench.report import build_report

        folders = [out / name for name in done.runs]
        path = build_report(
            folders, out / "report.html", benchmark=done.benchmark, title="CRYSTAL sample"
        )
    _print_notes(encoder, out, path)


def _print_notes(encoder: str, out: Path, report: Path | None) -> None:
    console.print(
        f"Encoder: {encoder}. These numbers are NOT comparable with the paper's, which uses "
        "all-distilroberta-v1 on the full 6,372-item benchmark; run `crystal score --encoder "
        "all-distilroberta-v1` for paper-comparable numbers.\n"
        "Read it as the paper does: a terse model has precision far above recall; a verbose "
        "one buys recall with precision; scrambled steps keep Match F1 but lose LIS and "
        "Ordered F1; a right answer does not mean sound reasoning (accuracy vs Match F1).\n"
        f"Per-item results with matched step pairs: {out}/<style>/examples.jsonl",
        highlight=False,
    )
    if report is not None:
        console.print(f"Diagnostic report (open in a browser): {report}", highlight=False)
