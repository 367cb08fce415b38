"""``crystal validate`` (sample-pairs, agreement) and ``crystal ablate``: check the evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from crystalbench.cli.common import console, err_console, handle_errors, progress_hook
from crystalbench.defaults import TAU, VALIDATION_BAND_EDGES
from crystalbench.settings import (
    ABLATION_THRESHOLDS,
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CONFIDENCE,
    VALIDATION_PAIRS_PER_BAND,
    VALIDATION_SEED,
)

validate_app = typer.Typer(
    help="Validate the evaluator against people: draw step pairs, then measure agreement.",
    no_args_is_help=True,
)

_BANDS = ",".join(f"{edge:g}" for edge in VALIDATION_BAND_EDGES)
_THRESHOLDS = ",".join(f"{tau:g}" for tau in ABLATION_THRESHOLDS)


def _store(cache_dir: Path | None, no_cache: bool) -> Any:
    from crystalbench.encoders import EmbeddingStore

    return None if no_cache else EmbeddingStore.default(cache_dir)


@validate_app.command("sample-pairs")
@handle_errors
def sample_pairs(
    results: Annotated[
        list[Path], typer.Argument(help="Results folders of `crystal score` (one per model)")
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="The pairs JSONL; .csv, .blind.csv and .sampling.json are written beside it",
        ),
    ],
    per_band: Annotated[
        int, typer.Option(min=1, help="Pairs drawn per cosine band")
    ] = VALIDATION_PAIRS_PER_BAND,
    bands: Annotated[str, typer.Option(help="Band edges, increasing")] = _BANDS,
    seed: Annotated[int, typer.Option(help="Seed of the draw")] = VALIDATION_SEED,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="Embedding cache the runs were scored with [default: the default one]"),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Encode again instead of reading the cache")
    ] = False,
    device: Annotated[
        str | None, typer.Option(help="Device of an encoder that has to be loaded")
    ] = None,
) -> None:
    """Draw step pairs from scored runs, stratified by cosine band, for people to label.

    Matched pairs and each step's best unmatched candidate, spread over models, sources and
    items. Import the JSONL into the review app (crystal review import), or label
    OUT.blind.csv offline; then run crystal validate agreement.
    """
    from rich.table import Table

    from crystalbench.report import load_runs
    from crystalbench.validation.bands import parse_bands
    from crystalbench.validation.pairs import sample_pairs as draw
    from crystalbench.validation.pairs import write_pairs

    edges = parse_bands(bands)
    runs = load_runs(results)
    sample = draw(
        runs,
        per_band=per_band,
        edges=edges,
        seed=seed,
        store=_store(cache_dir, no_cache),
        device=device,
        cache_dir=cache_dir,
    )
    paths = write_pairs(sample, out)
    table = Table(title=f"Step pairs drawn ({len(sample.pairs)})")
    table.add_column("Band", style="bold")
    table.add_column("Candidates", justify="right")
    table.add_column("Drawn", justify="right")
    for run in runs:
        table.add_column(run.name, justify="right")
    for band in sample.bands:
        table.add_row(
            band.band,
            str(band.available),
            str(band.drawn),
            *(str(band.by_model.get(run.name, 0)) for run in runs),
        )
    console.print(table)
    for band in sample.short_bands:
        err_console.print(
            f"[yellow]note:[/] band {band.band} has {band.available} candidates: "
            f"{band.drawn} drawn of the {per_band} asked",
            highlight=False,
        )
    console.print(
        f"wrote {paths['jsonl']} (review app import), {paths['csv']}, {paths['blind_csv']} "
        f"(offline labelling) and {paths['sampling']}",
        highlight=False,
        markup=False,
    )
    console.print(
        f"next: label them, then crystal validate agreement --pairs {paths['jsonl']} "
        "--labels LABELS --out DIR",
        highlight=False,
        markup=False,
    )


@validate_app.command("agreement")
@handle_errors
def agreement(
    pairs: Annotated[Path, typer.Option(help="The pairs file of sample-pairs (JSONL or .csv)")],
    labels: Annotated[
        Path,
        typer.Option(
            help="The review app's pairs export, or CSV/JSONL rows of pair_id, annotator, "
            "label (match/no_match/unsure)"
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder")],
    threshold: Annotated[
        float, typer.Option("--threshold", "--tau", help="tau of the cosine matcher")
    ] = TAU,
    bands: Annotated[str, typer.Option(help="Band edges, increasing")] = _BANDS,
    decisions: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            help="Another matcher's decisions: CSV/JSONL of pair_id, matcher, decision (repeatable)"
        ),
    ] = None,
    judge_url: Annotated[
        str | None, typer.Option(help="Also score the judge matcher at this endpoint")
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="The judge matcher's model")] = None,
    resamples: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples (0: no kappa intervals)")
    ] = VALIDATION_BOOTSTRAP_RESAMPLES,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals")
    ] = VALIDATION_CONFIDENCE,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap")] = VALIDATION_SEED,
    cache_dir: Annotated[
        Path | None, typer.Option(help="Cache folder of the judge matcher's verdicts")
    ] = None,
) -> None:
    """Agreement of the matcher with people: the paper's Table 3, kappa, the ceiling, tau.

    Writes OUT/agreement.json, OUT/agreement.md (Table 3 layout) and OUT/agreement.html.
    """
    from crystalbench.errors import InputError
    from crystalbench.validation.agreement import compute_agreement, require_agreement_stack
    from crystalbench.validation.bands import parse_bands
    from crystalbench.validation.labels import read_decisions, read_labels
    from crystalbench.validation.pairs import read_pairs
    from crystalbench.validation.render import display_band, write_agreement

    require_agreement_stack()
    edges = parse_bands(bands)
    pair_list = read_pairs(pairs)
    label_set = read_labels(labels)
    matchers: dict[str, tuple[str, Any]] = {}
    for file in decisions or []:
        for name, values in read_decisions(file).items():
            matchers[name] = (f"decisions read from {file}", values)
    if judge_url or judge_model:
        if not (judge_url and judge_model):
            raise InputError("--judge-url and --judge-model go together", field="judge")
        from crystalbench.judges.step_judge import OpenAIStepJudge, judge_pair_decisions

        judge = OpenAIStepJudge(judge_url, judge_model, cache_dir=cache_dir)
        try:
            found = judge_pair_decisions(pair_list, judge)
        finally:
            judge.close()
        identity = judge.identity
        matchers[f"judge:{judge_model}"] = (
            f"the judge matcher ({identity.model} at {identity.base_url}, prompt "
            f"{identity.prompt_name} {(identity.prompt_hash or '')[:12]}): does it name the "
            "pair's predicted step for its reference step",
            found,
        )
    report = compute_agreement(
        pair_list,
        label_set,
        threshold=threshold,
        edges=edges,
        matchers=matchers,
        confidence=confidence,
        n_resamples=resamples,
        seed=seed,
    )
    paths = write_agreement(report, out)
    from rich.table import Table

    table = Table(title=f"Agreement with human judgment ({report.primary})")
    for header in ("Cosine band", "Pairs", "Agreement", "Kappa", "FP", "FN"):
        table.add_column(header, justify="right" if header != "Cosine band" else "left")
    for group in [*report.by_band, report.overall]:
        table.add_row(
            "Overall" if group.band == "all" else display_band(group.band),
            str(group.n),
            "n/a" if group.agreement is None else f"{100 * group.agreement:.1f}%",
            "n/a" if group.cohen_kappa is None else f"{group.cohen_kappa:.3f}",
            str(group.false_positives),
            str(group.false_negatives),
        )
    console.print(table)
    for matcher in report.matchers[1:]:
        o = matcher.overall
        console.print(
            f"{matcher.matcher}: {o.n} pairs, agreement "
            + ("n/a" if o.agreement is None else f"{100 * o.agreement:.1f}%")
            + ", kappa "
            + ("n/a" if o.cohen_kappa is None else f"{o.cohen_kappa:.3f}")
            + (f", {matcher.n_undecided} undecided" if matcher.n_undecided else ""),
            highlight=False,
            markup=False,
        )
    h = report.humans
    alpha = "n/a" if h.krippendorff_alpha is None else f"{h.krippendorff_alpha:.3f}"
    console.print(
        f"people: {len(h.annotators)} annotators, Krippendorff's alpha {alpha}"
        + (f" ({h.note})" if h.note else ""),
        highlight=False,
        markup=False,
    )
    console.print(
        f"wrote {paths['json']}, {paths['md']}, {paths['html']}", highlight=False, markup=False
    )


@handle_errors
def ablate(
    benchmark: Annotated[
        str, typer.Option("--benchmark", "-b", help="sample, a hub name, a folder or a file")
    ],
    predictions: Annotated[
        list[str],
        typer.Option("--predictions", "-p", help="NAME=FILE, a file, a folder or a glob"),
    ],
    encoders: Annotated[
        str,
        typer.Option(
            help="Comma-separated encoders (names, folders, minilm-offline, hash), each "
            "NAME or LABEL=NAME"
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder")],
    thresholds: Annotated[str, typer.Option(help="Comma-separated thresholds")] = _THRESHOLDS,
    default_encoder: Annotated[
        str | None,
        typer.Option(help="Label of the encoder of the reference ranking [default: the first]"),
    ] = None,
    default_threshold: Annotated[
        float | None,
        typer.Option(help="Threshold of the reference ranking [default: 0.35 if in the grid]"),
    ] = None,
    alpha: Annotated[float | None, typer.Option(help="Order weight of Ordered Match F1")] = None,
    order: Annotated[str | None, typer.Option("--order", help="lis or kendall")] = None,
    compat: Annotated[str | None, typer.Option(help="none or crystal-metrics-0.2")] = None,
    sources: Annotated[str | None, typer.Option(help="Comma-separated sources")] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Embedding cache folder")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the cache")] = False,
    device: Annotated[str | None, typer.Option(help="Encoder device")] = None,
    lenient: Annotated[
        bool, typer.Option("--lenient/--strict", help="Skip and count bad records")
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars")] = True,
) -> None:
    """Every model's metrics in every encoder x threshold cell, rankings and heatmaps.

    Each encoder scores every set once (at the lowest threshold); the other thresholds
    reuse those matches. Writes OUT/ablation.{json,md,csv,tex,html} and heatmap SVGs.
    """
    from crystalbench.cli.flags import split_commas
    from crystalbench.config import ScoreConfig, load_config_with_overrides
    from crystalbench.data import load_benchmark
    from crystalbench.scoring_many import resolve_prediction_args
    from crystalbench.validation.ablation import parse_encoders, run_ablation
    from crystalbench.validation.bands import parse_increasing
    from crystalbench.validation.render import write_ablation

    grid = parse_increasing(thresholds, field="--thresholds")
    pairs = parse_encoders(encoders)
    given = {
        "alpha": alpha,
        "order_metric": order,
        "compat": compat,
        "lenient": lenient,
        "cache_dir": str(cache_dir) if cache_dir else None,
        "device": device,
        "use_cache": False if no_cache else None,
        "sources": split_commas(sources),
    }  # part B of issue 23 turns these flags into one config of their own
    overrides = {name: value for name, value in given.items() if value is not None}
    config = load_config_with_overrides(ScoreConfig, None, overrides)
    entries, failures = resolve_prediction_args(predictions)
    bench = load_benchmark(benchmark)
    with progress_hook(progress) as hook:
        report = run_ablation(
            bench,
            [(name, path) for name, path in entries],
            pairs,
            thresholds=grid,
            config=config,
            default_encoder=default_encoder,
            default_threshold=default_threshold,
            progress=hook,
        )
    report = report.model_copy(
        update={"failures": [str(f) for f in failures] + list(report.failures)}
    )
    paths = write_ablation(report, out)
    from rich.table import Table

    table = Table(title=f"Mean Match F1 per encoder ({len(report.models)} models)")
    table.add_column("Encoder", style="bold")
    table.add_column("Mean", justify="right")
    for tau in report.thresholds:
        table.add_column(f"tau {tau:g}", justify="right")
    for encoder in report.encoders:
        per = report.mean_f1_by_threshold[encoder.label]
        table.add_row(
            encoder.label,
            f"{report.mean_f1_by_encoder[encoder.label]:.3f}",
            *(f"{per[f'{t:g}']:.3f}" for t in report.thresholds),
        )
    console.print(table)
    low = "n/a" if report.min_kendall_tau is None else f"{report.min_kendall_tau:.2f}"
    console.print(
        f"ranking: lowest Kendall tau-b {low} against {report.default_encoder} at "
        f"{report.default_threshold:g}; {report.n_cells_same_ranking} of {len(report.cells)} "
        "cells keep the default ranking",
        highlight=False,
        markup=False,
    )
    for failure in report.failures:
        err_console.print(f"[bold red]failed:[/] {failure}", highlight=False)
    console.print(f"wrote {paths['json']}, {paths['html']} and more in {out}", highlight=False)
    if report.failures:
        from crystalbench.cli.common import EXIT_INPUT

        raise typer.Exit(EXIT_INPUT)
