"""``crystal validate``: check the evaluator against people (sample-pairs, agreement),
against other encoders and thresholds (ablate) and against other graders (panel).

Thin shells over :mod:`crystalbench.validation.jobs`: each command's options are one config
(:class:`~crystalbench.validation.jobs.SamplePairsConfig`, ``AgreementConfig``,
``AblationConfig``, ``PanelConfig``), one library call does the work, and this module prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from crystalbench.cli.apps import new_app
from crystalbench.cli.binding import configured
from crystalbench.cli.common import (
    EXIT_INPUT,
    Quiet,
    ShowProgress,
    console,
    err_console,
    handle_errors,
    progress_hook,
)
from crystalbench.cli.flags import Flag, cache_flags, device_flag
from crystalbench.cli.score_options import SCORE_FLAGS
from crystalbench.config.judging import VerifierValidationConfig
from crystalbench.metrics import plural
from crystalbench.validation.jobs import (
    AblationConfig,
    AgreementConfig,
    PanelConfig,
    SamplePairsConfig,
)

validate_app = new_app(
    help="Validate the evaluator: draw step pairs for people, measure agreement, ablate "
    "encoders and thresholds, and score runs under a panel of graders.",
    no_args_is_help=True,
)

_BANDS = Flag("bands", ("--bands",), "Cosine band edges, increasing", metavar="EDGES")
_SEED = Flag("seed", ("--seed",), "Seed of every random choice (recorded)", kind=int)
_CACHE, _CACHE_DIR = cache_flags(what="cache (embeddings; the judge matcher's verdicts)")
_DEVICE = device_flag(what="an encoder that has to be loaded")

SAMPLE_PAIRS_FLAGS: tuple[Flag, ...] = (
    Flag(
        "results",
        ("RESULTS",),
        "Results folders of `crystal score` (one per model)",
        kind=list[str],
        argument=True,
        required=True,
    ),
    Flag("per_band", ("--per-band",), "Pairs drawn per cosine band", kind=int, metavar="N"),
    _BANDS,
    _SEED,
    _CACHE,
    _CACHE_DIR,
    _DEVICE,
)
"""The options of ``crystal validate sample-pairs`` (one :class:`SamplePairsConfig` field
each)."""

AGREEMENT_FLAGS: tuple[Flag, ...] = (
    Flag(
        "pairs",
        ("--pairs",),
        "The pairs file of sample-pairs (JSONL or .csv)",
        metavar="FILE",
        required=True,
    ),
    Flag(
        "labels",
        ("--labels",),
        "The review app's pairs export, or CSV/JSONL rows of pair_id, annotator, label "
        "(match/no_match/unsure)",
        metavar="FILE",
        required=True,
    ),
    Flag(
        "threshold",
        ("--threshold", "--tau"),
        "Cosine threshold tau of the cosine matcher",
        kind=float,
    ),
    _BANDS,
    Flag(
        "decisions",
        ("--decisions",),
        "Another matcher's decisions: CSV/JSONL of pair_id, matcher, decision (repeatable)",
        kind=list[str],
        metavar="FILE",
        convert=lambda files: list(files) or None,
        default_text="none",
    ),
    Flag(
        "matcher_judge.url",
        ("--matcher-url",),
        "Also score the judge matcher: its OpenAI-compatible base URL (with --matcher-model)",
        metavar="URL",
        param_name="matcher_url",
        default_text="no judge matcher",
    ),
    Flag(
        "matcher_judge.model",
        ("--matcher-model",),
        "Model name of the judge matcher (with --matcher-url)",
        metavar="NAME",
        param_name="matcher_model",
        default_text="none",
    ),
    Flag(
        "guard",
        ("--guard",),
        "Also score cosine at tau with the fact guard (facts: a pair whose steps state "
        "incompatible facts does not match), or not (none)",
    ),
    Flag("resamples", ("--resamples",), "Bootstrap resamples (0: no kappa intervals)", kind=int),
    Flag("confidence", ("--confidence",), "Confidence level of the intervals", kind=float),
    _SEED,
    _CACHE,
    _CACHE_DIR,
)
"""The options of ``crystal validate agreement`` (one :class:`AgreementConfig` field each)."""

_ABLATION_SCORING = (
    "scoring.alpha",
    "scoring.order_metric",
    "scoring.compat",
    "scoring.answer_rules",
    "scoring.sources",
    "scoring.ids",
    "scoring.limit",
    "scoring.lenient",
    "scoring.use_cache",
    "scoring.cache_dir",
    "scoring.device",
    "scoring.backend",
    "scoring.batch_size",
    "scoring.dtype",
)

ABLATE_FLAGS: tuple[Flag, ...] = (
    *(flag for flag in SCORE_FLAGS if flag.field in ("benchmark", "predictions")),
    Flag(
        "encoders",
        ("--encoders",),
        "Comma-separated encoders (names, folders, minilm-offline, hash), each NAME or LABEL=NAME",
        metavar="ENCODERS",
        required=True,
    ),
    Flag("thresholds", ("--thresholds",), "Comma-separated thresholds", metavar="TAUS"),
    Flag(
        "guards",
        ("--guards",),
        "Comma-separated fact guards to ablate (none,facts,facts-strict): one row per encoder "
        "and guard",
        metavar="GUARDS",
        default_text="none",
    ),
    Flag(
        "default_encoder",
        ("--default-encoder",),
        "Label of the encoder of the reference ranking",
        metavar="LABEL",
        default_text="the first",
    ),
    Flag(
        "default_threshold",
        ("--default-threshold",),
        "Threshold of the reference ranking",
        kind=float,
        default_text="0.35 if in the grid, else the first",
    ),
    *(flag for flag in SCORE_FLAGS if flag.field in _ABLATION_SCORING),
)
"""The options of ``crystal validate ablate`` (one :class:`AblationConfig` field each; the
scoring choices are ``crystal score``'s own flags)."""

Out = Annotated[Path, typer.Option("--out", "-o", metavar="FOLDER", help="Output folder")]


@validate_app.command("sample-pairs")
@handle_errors
@configured(SamplePairsConfig, SAMPLE_PAIRS_FLAGS)
def sample_pairs(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="The pairs JSONL; .csv, .blind.csv and .sampling.json are written beside it",
        ),
    ],
    config: SamplePairsConfig,
    quiet: Quiet = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite/--no-overwrite",
            help="Replace an earlier draw at --out (refused without it: labels may refer to "
            "its pair ids)",
        ),
    ] = False,
) -> None:
    """Draw step pairs from scored runs, stratified by cosine band, for people to label.

    Matched pairs and each step's best unmatched candidate, spread over models, sources and
    items. Import the JSONL into the review app (crystal review import), or label
    OUT.blind.csv offline; then run crystal validate agreement.
    """
    from crystalbench.validation.jobs import draw_pairs

    done = draw_pairs(config, out, overwrite=overwrite)
    _print_draw(done, config.per_band)
    paths = done.paths
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


def _print_draw(done: Any, per_band: int) -> None:
    from rich.table import Table

    table = Table(title=f"Step pairs drawn ({len(done.sample.pairs)})")
    for header in ("Band", "Candidates", "Drawn", *done.models):
        table.add_column(header, justify="left" if header == "Band" else "right")
    for band in done.sample.bands:
        counts = (str(band.by_model.get(name, 0)) for name in done.models)
        table.add_row(band.band, str(band.available), str(band.drawn), *counts)
    console.print(table)
    for band in done.sample.short_bands:
        err_console.print(
            f"[yellow]note:[/] band {escape(band.band)} has {band.available:d} candidates: "
            f"{band.drawn:d} drawn of the {per_band:d} asked",
            highlight=False,
        )


@validate_app.command("agreement")
@handle_errors
@configured(AgreementConfig, AGREEMENT_FLAGS)
def agreement(out: Out, config: AgreementConfig, quiet: Quiet = False) -> None:
    """Agreement of the matcher with people: the paper's Table 3, kappa, the ceiling, tau.

    Writes OUT/agreement.json, OUT/agreement.md (Table 3 layout) and OUT/agreement.html.
    """
    from crystalbench.validation.jobs import measure_agreement

    done = measure_agreement(config, out)
    _print_agreement(done.report)
    paths = done.paths
    console.print(
        f"wrote {paths['json']}, {paths['md']}, {paths['html']}", highlight=False, markup=False
    )


def _rate(value: float | None, digits: int = 3, percent: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if percent else f"{value:.{digits}f}"


def _print_agreement(report: Any) -> None:
    from rich.table import Table

    from crystalbench.validation.render import display_band

    table = Table(title=f"Agreement with human judgment ({report.primary})")
    for header in ("Cosine band", "Pairs", "Agreement", "Kappa", "FP", "FN"):
        table.add_column(header, justify="right" if header != "Cosine band" else "left")
    for group in [*report.by_band, report.overall]:
        table.add_row(
            "Overall" if group.band == "all" else display_band(group.band),
            str(group.n),
            _rate(group.agreement, percent=True),
            _rate(group.cohen_kappa),
            str(group.false_positives),
            str(group.false_negatives),
        )
    console.print(table)
    for matcher in report.matchers[1:]:
        o = matcher.overall
        console.print(
            f"{matcher.matcher}: {plural(o.n, 'pair')}, "
            f"agreement {_rate(o.agreement, percent=True)}, "
            f"kappa {_rate(o.cohen_kappa)}"
            + (f", {matcher.n_undecided} undecided" if matcher.n_undecided else ""),
            highlight=False,
            markup=False,
        )
    h = report.humans
    console.print(
        f"people: {len(h.annotators)} annotators, Krippendorff's alpha "
        f"{_rate(h.krippendorff_alpha)}" + (f" ({h.note})" if h.note else ""),
        highlight=False,
        markup=False,
    )


@validate_app.command("ablate")
@handle_errors
@configured(AblationConfig, ABLATE_FLAGS)
def ablate(
    out: Out, config: AblationConfig, progress: ShowProgress = True, quiet: Quiet = False
) -> None:
    """Every model's metrics in every encoder x threshold cell, rankings and heatmaps.

    Each encoder scores every set once (at the lowest threshold); the other thresholds
    reuse those matches. Writes OUT/ablation.{json,md,csv,tex,html} and heatmap SVGs.
    A set that cannot be scored fails alone: exit code 2 once the others are written.
    """
    from crystalbench.validation.jobs import ablate as run

    with progress_hook(progress and not quiet) as hook:
        done = run(config, out, progress=hook)
    _print_ablation(done.report)
    for failure in done.failures:
        err_console.print(f"[bold red]failed:[/] {escape(str(failure))}", highlight=False)
    console.print(
        f"wrote {done.paths['json']}, {done.paths['html']} and more in {out}", highlight=False
    )
    if done.failures:
        raise typer.Exit(EXIT_INPUT)


def _print_ablation(report: Any) -> None:
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


PANEL_FLAGS: tuple[Flag, ...] = (
    *(flag for flag in SCORE_FLAGS if flag.field in ("benchmark", "predictions")),
    Flag(
        "graders",
        ("--grader",),
        "A grader: [LABEL=]ENCODER[+facts|+facts-strict|+judge][@TAU], e.g. mpnet-offline, "
        "minilm-offline+facts, strict=hash@0.6 (repeatable, or comma-separated); tau "
        "defaults to crystal-metrics' threshold of the encoder's model, else 0.35",
        kind=list[str],
        metavar="GRADER",
        required=True,
    ),
    Flag(
        "metric",
        ("--metric",),
        "Metric of the rankings, tau-b and gains (match_f1, ordered_f1, accuracy...)",
        metavar="METRIC",
    ),
    Flag(
        "ensemble",
        ("--ensemble/--no-ensemble",),
        "Add the conservative ensemble min (per item, the lowest value of any grader)",
        kind=bool,
    ),
    Flag(
        "baseline",
        ("--baseline",),
        "The paired run before training (a set's name; with --treated)",
        metavar="NAME",
        default_text="no paired gains",
    ),
    Flag(
        "treated",
        ("--treated",),
        "The paired run after training (a set's name; with --baseline)",
        metavar="NAME",
        default_text="none",
    ),
    Flag(
        "training_grader",
        ("--training-grader",),
        "Label of the grader the training reward used; the others are held out",
        metavar="LABEL",
        default_text="the first",
    ),
    Flag("resamples", ("--resamples",), "Bootstrap resamples (0: no tau-b intervals)", kind=int),
    Flag("confidence", ("--confidence",), "Confidence level of the intervals", kind=float),
    _SEED,
    *(
        flag
        for flag in SCORE_FLAGS
        if flag.field
        in (*_ABLATION_SCORING, "scoring.matcher_judge.url", "scoring.matcher_judge.model")
    ),
)
"""The options of ``crystal validate panel`` (one :class:`PanelConfig` field each; the
scoring choices are ``crystal score``'s own flags, the judge matcher's endpoint for
``+judge`` graders among them)."""


@validate_app.command("panel")
@handle_errors
@configured(PanelConfig, PANEL_FLAGS)
def panel(
    out: Out, config: PanelConfig, progress: ShowProgress = True, quiet: Quiet = False
) -> None:
    """Score the same prediction sets under several graders and compare them.

    Every model's metrics per grader, the rankings, Kendall's tau-b between the graders'
    rankings (with a bootstrap interval over items), the conservative ensemble min, and for
    --baseline A --treated B the gain under every grader with a paired bootstrap interval
    and the share of the training grader's gain that the held-out graders confirm. Writes
    OUT/panel.json and OUT/panel.md. A set that cannot be scored fails alone: exit code 2
    once the others are written.
    """
    from crystalbench.validation.jobs import panel as run

    with progress_hook(progress and not quiet) as hook:
        done = run(config, out, progress=hook)
    if not quiet:
        _print_panel(done.report)
        console.print(f"wrote {done.paths['json']} and {done.paths['md']}", highlight=False)
    for failure in done.failures:
        err_console.print(f"[bold red]failed:[/] {escape(str(failure))}", highlight=False)
    if done.failures:
        raise typer.Exit(EXIT_INPUT)


def _print_panel(report: Any) -> None:
    from rich.table import Table

    from crystalbench.metrics import metric
    from crystalbench.validation.render import (
        panel_agreement_rows,
        panel_gain_rows,
        panel_metric_rows,
    )

    tables = [
        (f"{metric(report.metric).header} per grader (rank), {report.n_items} items",
         panel_metric_rows(report)),
        ("Kendall's tau-b between the graders' rankings", panel_agreement_rows(report)),
    ]  # fmt: skip
    if report.paired is not None:
        tables.append(
            (f"Gain of {report.paired.treated} over {report.paired.baseline}",
             panel_gain_rows(report))
        )  # fmt: skip
    for title, (header, rows) in tables:
        table = Table(title=title)
        for k, name in enumerate(header):
            table.add_column(name, justify="left" if k == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)


VERIFIER_FLAGS: tuple[Flag, ...] = (
    Flag(
        "labels",
        ("--labels",),
        "Human step labels in VisualProcessBench's test.jsonl layout (image, question, "
        "answer, response.steps, response.process_correctness, policy_model, data_source)",
        metavar="FILE",
        required=True,
    ),
    Flag(
        "images",
        ("--image-root",),
        "Folder the relative image paths are under (paths leaving it are refused)",
        param_name="image_root",
        metavar="FOLDER",
        default_text="the labels file's folder",
    ),
    Flag(
        "verifier.url",
        ("--verifier-url",),
        "OpenAI-compatible base URL of the step verifier",
        metavar="URL",
        param_name="verifier_url",
        required=True,
    ),
    Flag(
        "verifier.model",
        ("--verifier-model",),
        "Model name of the step verifier; repeat it for several judges (the majority decides)",
        kind=list[str],
        metavar="NAME",
        param_name="verifier_model",
        required=True,
    ),
    Flag(
        "threshold",
        ("--p-threshold",),
        "A fixed threshold on p_correct (every solution is then test)",
        kind=float,
        default_text="fitted on the dev split",
    ),
    Flag(
        "dev_every",
        ("--dev-every",),
        "Every K-th solution (the first, 1 + K, ...) is the dev split the threshold is fitted on",
        kind=int,
        metavar="K",
    ),
    Flag("resamples", ("--resamples",), "Bootstrap resamples (0: no interval)", kind=int),
    Flag("confidence", ("--confidence",), "Confidence level of the interval", kind=float),
    _SEED,
    _CACHE,
    _CACHE_DIR,
)
"""The options of ``crystal validate verifier`` (one
:class:`~crystalbench.config.judging.VerifierValidationConfig` field each)."""


@validate_app.command("verifier")
@handle_errors
@configured(VerifierValidationConfig, VERIFIER_FLAGS)
def verifier(out: Out, config: VerifierValidationConfig, quiet: Quiet = False) -> None:
    """A step verifier against human step labels: VisualProcessBench's macro-F1.

    Writes OUT/verifier.json: macro_f1, f1_correct, f1_wrong (neutral steps excluded, on the
    test split), the threshold fitted on the dev split, by_source, the label confusion.
    """
    from crystalbench._internal.io import atomic_write_json
    from crystalbench.validation.verifier import validate_verifier

    report = validate_verifier(config)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "verifier.json"
    atomic_write_json(path, report)
    interval = report["interval"]
    console.print(
        f"macro-F1 {report['macro_f1']:.3f}"
        + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")
        + f" (F1 correct {report['f1_correct']:.3f}, F1 wrong {report['f1_wrong']:.3f}) on "
        f"{report['n_steps']} test steps at threshold {report['threshold']:.3f} "
        f"({report['threshold_fitted_on']}); {report['n_unverified']} unverified",
        highlight=False,
        markup=False,
    )
    for source, figures in report["by_source"].items():
        console.print(
            f"  {source}: macro-F1 {figures['macro_f1']:.3f} "
            f"({plural(figures['n_steps'], 'step')})",
            highlight=False,
            markup=False,
        )
    console.print(f"wrote {path}", highlight=False, markup=False)
