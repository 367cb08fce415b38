"""``crystal demo``: score the bundled sample's prediction sets and print a leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.common import console, handle_errors, leaderboard_table, progress_hook
from crystalbench.defaults import OFFLINE_ENCODER


@handle_errors
def demo(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Where results go (crystal-demo; crystal-demo/construction)"
        ),
    ] = None,
    encoder: Annotated[
        str, typer.Option(help="Encoder (default: the bundled offline MiniLM)")
    ] = OFFLINE_ENCODER,
    progress: Annotated[bool, typer.Option(help="Show progress bars")] = True,
    report: Annotated[bool, typer.Option(help="Write the HTML report")] = True,
    construction: Annotated[
        bool,
        typer.Option(
            "--construction",
            help="Build a benchmark from the sample's source copies instead: data build, "
            "references build against scripted loopback models, review import, infer, score",
        ),
    ] = False,
) -> None:
    """Score the sample benchmark's model styles offline and print the paper's Table 2 columns.

    With --construction, run the whole construction life cycle offline instead, printing each
    command it runs (crystalbench.construction_demo)."""
    if construction:
        from crystalbench.construction_demo import run_construction_demo

        run_construction_demo(
            out or Path("crystal-demo/construction"),
            encoder=encoder,
            echo=lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True),
        )
        return
    out = out or Path("crystal-demo")
    from crystalbench.config import ScoreConfig
    from crystalbench.data import SAMPLE_DIR, load_benchmark
    from crystalbench.encoders import load_encoder
    from crystalbench.predictions import load_predictions
    from crystalbench.scoring import evaluate

    bench = load_benchmark("sample")
    config = ScoreConfig(encoder=encoder)
    shared_encoder = load_encoder(encoder)
    rows = []
    files = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))
    console.print(
        f"[bold]crystalbench demo[/]: {len(files)} model styles on the bundled sample "
        f"({len(bench)} items), encoder [bold]{encoder}[/]"
    )
    with progress_hook(progress) as hook:
        for file in files:
            preds = load_predictions(file)
            run = evaluate(
                bench, preds, config, encoder=shared_encoder, progress=hook, out_dir=out / file.stem
            )
            rows.append((file.stem, run.summary))
    console.print(leaderboard_table(rows, title="CRYSTAL sample leaderboard"))
    report_path = None
    if report:
        from crystalbench.report import build_report

        report_path = build_report(
            [out / file.stem for file in files],
            out / "report.html",
            benchmark=bench,
            title="CRYSTAL sample",
        )
    console.print(
        f"Encoder: {encoder}. These numbers are NOT comparable with the paper's, which uses "
        "all-distilroberta-v1 on the full 6,372-item benchmark; run `crystal score --encoder "
        "all-distilroberta-v1` for paper-comparable numbers."
    )
    console.print(
        "Read it as the paper does: a terse model has precision far above recall; a verbose "
        "one buys recall with precision; scrambled steps keep Match F1 but lose LIS and "
        "Ordered F1; a right answer does not mean sound reasoning (accuracy vs Match F1)."
    )
    console.print(f"Per-item results with matched step pairs: {out}/<style>/examples.jsonl")
    if report_path is not None:
        console.print(f"Diagnostic report (open in a browser): {report_path}")
