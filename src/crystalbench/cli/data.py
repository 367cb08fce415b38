"""``crystal data``: item sets from source datasets, merging, statistics, the leakage check,
and the bundled sample's prediction sets.

Thin shells over :mod:`crystalbench.sources`, :mod:`crystalbench.training.leakage` and
:mod:`crystalbench.data.sample_copy`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from crystalbench.cli.apps import new_app
from crystalbench.cli.binding import configured
from crystalbench.cli.common import Quiet, console, err_console, handle_errors, progress_hook
from crystalbench.cli.flags import Flag
from crystalbench.data.loading import HUB_SPLIT
from crystalbench.metrics import plural
from crystalbench.sources.records import BuildSpec

data_app = new_app(
    help="Item sets from source datasets (build, merge, stats, sources), the leakage check, "
    "and the sample's prediction sets to try (sample).",
    no_args_is_help=True,
)

EXIT_LEAK = 1
"""Exit code of ``check-leakage`` when a training item is a benchmark item."""

if TYPE_CHECKING:
    from crystalbench.sources import BuildRecord, ItemSetStats

SOURCE_HELP = "mathvision, scienceqa-img, realworldqa, mmvp, plotqa or textvqa"

BUILD_FLAGS: tuple[Flag, ...] = (
    Flag("source", ("SOURCE",), SOURCE_HELP, argument=True, required=True),
    Flag(
        "location",
        ("--from",),
        "Hub id or a local copy in the source's published layout (see `crystal data sources`)",
        metavar="LOCATION",
        default_text="the source's hub id",
        param_name="location",
    ),
    Flag(
        "split",
        ("--split",),
        "Upstream split",
        metavar="SPLIT",
        default_text="the source's",
    ),
    Flag(
        "manifest",
        ("--manifest",),
        "Take exactly these upstream ids (JSON list, DIR/manifest.json, or one id per line)",
        metavar="FILE",
        default_text="none",
    ),
    Flag(
        "sample",
        ("--sample",),
        "Take a seeded sample of N rows stratified by the source's strata (PlotQA: question "
        "template x plot type)",
        kind=int,
        metavar="N",
        default_text="every row",
    ),
    Flag("seed", ("--seed",), "Seed of --sample (recorded in build.json)", kind=int),
    Flag(
        "limit",
        ("--limit",),
        "Only the first N items",
        kind=int,
        metavar="N",
        default_text="all",
    ),
    Flag(
        "revision",
        ("--revision",),
        "Hub revision to load (or that a local snapshot must be at)",
        metavar="REVISION",
        default_text="the default branch",
    ),
    Flag(
        "hub_config",
        ("--hub-config",),
        "Hub configuration, overriding the source's default",
        metavar="NAME",
        default_text="the source's",
    ),
    Flag(
        "corrections",
        ("--corrections/--no-corrections",),
        "MMVP: apply the packaged ground-truth corrections (each with its source)",
        kind=bool,
    ),
    Flag(
        "lenient",
        ("--lenient/--strict",),
        "Skip malformed rows (listed in build.json) instead of stopping",
        kind=bool,
    ),
)
"""The options of ``crystal data build`` (one :class:`BuildSpec` field each)."""

ItemSetOut = Annotated[
    Path, typer.Option("--out", "-o", metavar="FOLDER", help="Item set folder to write")
]
Overwrite = Annotated[
    bool,
    typer.Option(
        "--overwrite/--no-overwrite",
        help="Replace an existing item set at --out (once the new one is done)",
    ),
]
JsonOut = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--out", "-o", metavar="FILE", help="Also write it as JSON here", show_default="none"
    ),
]


@data_app.command("build")
@handle_errors
@configured(BuildSpec, BUILD_FLAGS, config_help="YAML, JSON or TOML file with BuildSpec fields")
def build_command(
    out: ItemSetOut, config: BuildSpec, overwrite: Overwrite = False, quiet: Quiet = False
) -> None:
    """Turn one split of a source dataset into an item set (DIR/items.jsonl, DIR/images/).

    Items have empty reference_steps: the input of reference construction and crystal infer.
    DIR/build.json records location, revision, manifest, counts and every skipped row.
    DIR/manifest.json lists the upstream ids taken (reuse it with --manifest).
    """
    from crystalbench.sources import build_item_set

    with progress_hook(not quiet) as hook:
        record = build_item_set(config, out, overwrite=overwrite, progress=hook)
    _print_build(record, out)


def _print_build(record: BuildRecord, out: Path) -> None:
    counts = record.counts
    upstream = record.upstream
    console.print(
        f"{record.title} {upstream.split} from {upstream.location} ({upstream.kind}"
        + (f", revision {upstream.revision}" if upstream.revision else "")
        + ")",
        highlight=False,
    )
    selected = "" if counts.selected == counts.rows else f", {counts.selected} selected"
    console.print(
        f"rows: {counts.rows}{selected}; items written: {counts.items}; "
        f"skipped: {counts.skipped}; malformed (skipped, --lenient): {counts.malformed}",
        highlight=False,
    )
    for reason, number in counts.skipped_by_reason.items():
        console.print(f"  skipped ({reason}): {number}", highlight=False)
    types = ", ".join(f"{k} {v}" for k, v in counts.by_answer_type.items())
    console.print(f"answer types: {types}", highlight=False)
    for note in record.notes:
        console.print(f"note: {note}", highlight=False)
    if counts.malformed:
        err_console.print(
            f"[yellow]{counts.malformed:d} malformed row(s) skipped[/]: see build.json"
        )
    console.print(f"item set: {out} (items.jsonl, images/, build.json, manifest.json)")


@data_app.command("merge")
@handle_errors
def merge_command(
    inputs: Annotated[
        list[Path], typer.Argument(metavar="ITEM_SETS", help="Item set folders, in order")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="FOLDER", help="Merged item set folder to write")
    ],
    overwrite: Overwrite = False,
    quiet: Quiet = False,
) -> None:
    """Combine item sets into one; ids stay unique as source/upstream-id."""
    from crystalbench.sources import merge_item_sets

    with progress_hook(not quiet) as hook:
        record = merge_item_sets(inputs, out, overwrite=overwrite, progress=hook)
    for entry in record.inputs:
        console.print(
            f"{entry.path}: {plural(entry.items, 'item')} ({', '.join(entry.sources)})",
            highlight=False,
        )
    renamed = (
        f" ({record.renamed_ids} ids gained their source/ prefix)" if record.renamed_ids else ""
    )
    console.print(f"merged: {plural(record.items, 'item')} in {out}{renamed}", highlight=False)


@data_app.command("sample")
@handle_errors
def sample_command(
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="FOLDER", help="Folder to write the prediction files into"
        ),
    ] = Path("runs"),
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite/--no-overwrite",
            help="Replace files of the same names that are not the sample's",
        ),
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Write the bundled sample's five prediction sets (OUT/terse-precise.jsonl, ...) to try
    `crystal score -b sample` on.

    Each file holds one model style's predictions for the 40 items of `--benchmark sample`.
    """
    from crystalbench.data.sample_copy import copy_sample_predictions

    written = copy_sample_predictions(out, overwrite=overwrite)
    if quiet:
        return
    for path in written:
        console.print(str(path), highlight=False, markup=False)
    first = next(path for path in written if path.stem == "terse-precise")
    console.print(
        f"next: crystal score -b sample -p {first.as_posix()} -o results/my-model "
        "--encoder minilm-offline",
        highlight=False,
        markup=False,
    )


@data_app.command("stats")
@handle_errors
def stats_command(
    benchmark: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--benchmark",
            "-b",
            metavar="BENCHMARK",
            help="An item set folder, or any benchmark (sample, hub id, JSONL, ...) (required)",
            show_default=False,
        ),
    ] = None,
    split: Annotated[
        str, typer.Option(metavar="SPLIT", help="Hub split of a hub benchmark")
    ] = HUB_SPLIT,
    out: JsonOut = None,
) -> None:
    """Counts by source, answer type and options; steps per item and difficulty tiers."""
    from crystalbench.sources import load_items, summarize_items

    spec = _benchmark_given(benchmark)
    stats = summarize_items(load_items(spec, split=split).items, spec)
    if out is not None:
        from crystalbench._internal.io import atomic_write_json

        atomic_write_json(out, stats.model_dump(mode="json"))
    _print_stats(stats)


def _benchmark_given(option: str | None) -> str:
    """``-b/--benchmark`` (required)."""
    from crystalbench.errors import InputError

    if option is None:
        raise InputError("missing: give -b/--benchmark", field="benchmark")
    return option


def _print_stats(stats: ItemSetStats) -> None:
    from rich.table import Table

    console.print(f"{stats.name}: {plural(stats.items, 'item')}", highlight=False)
    types = sorted({t for by in stats.by_source_answer_type.values() for t in by})
    table = Table(title="items by source and answer type")
    table.add_column("source", style="bold")
    for answer_type in types:
        table.add_column(answer_type, justify="right")
    table.add_column("total", justify="right")
    for source, total in stats.by_source.items():
        by = stats.by_source_answer_type.get(source, {})
        table.add_row(source, *(str(by.get(t, 0)) for t in types), str(total))
    table.add_row("all", *(str(stats.by_answer_type.get(t, 0)) for t in types), str(stats.items))
    console.print(table)
    if stats.answer_type_inferred:
        console.print(
            f"({stats.answer_type_inferred} item{'s' * (stats.answer_type_inferred != 1)} "
            f"{'has' if stats.answer_type_inferred == 1 else 'have'} no answer_type in the data; "
            "counted under "
            "the inferred one)"
        )
    options = ", ".join(
        f"{'open' if k == '0' else k + ' options'}: {v}" for k, v in stats.by_options.items()
    )
    console.print(f"options: {options}", highlight=False)
    if stats.steps is None:
        console.print(
            "reference steps: none yet (an item set; build references with "
            "`crystal references build`)"
        )
        return
    steps = stats.steps
    console.print(
        f"reference steps per item ({plural(steps.items, 'item')} with references, "
        f"{stats.without_references} without): mean {steps.mean:.2f}, min {steps.min}, "
        f"max {steps.max}",
        highlight=False,
    )
    widest = max(count for _, _, count in steps.histogram) or 1
    for low, high, count in steps.histogram:
        label = f"{low}" if low == high else f"{low}-{high}"
        bar = "#" * round(40 * count / widest)
        console.print(f"  {label:>7} {count:>6} {bar}", highlight=False)
    tiers = ", ".join(
        f"{tier} {count} ({100 * count / steps.items:.1f}%)"
        for tier, count in stats.by_difficulty.items()
    )
    console.print(f"difficulty: {tiers}", highlight=False)


@data_app.command("sources")
@handle_errors
def sources_command() -> None:
    """List the source adapters: hub ids, splits, local layouts, licences."""
    from rich.table import Table

    from crystalbench.sources import describe_sources

    table = Table(title="crystal data build SOURCE")
    for column in (
        "source",
        "items as",
        "hub id (default --from)",
        "splits",
        "local layouts",
        "licence",
    ):
        table.add_column(column)
    for row in describe_sources():
        splits = ", ".join(
            f"[bold]{s}[/]" if s == row["default_split"] else s for s in row["splits"]
        )
        table.add_row(
            row["name"],
            row["source"],
            row["hub_id"] or "(none: --from required)",
            splits,
            row["layouts"],
            row["license"],
        )
    console.print(table)


@data_app.command("check-leakage")
@handle_errors
def check_leakage_command(
    train: Annotated[
        str,
        typer.Argument(
            metavar="TRAIN", help="Training pool (item set, JSONL, save_to_disk, Parquet, hub)"
        ),
    ],
    benchmark: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--benchmark",
            "-b",
            metavar="BENCHMARK",
            help="Benchmark it must not contain, e.g. waybarrios/CRYSTAL (required)",
            show_default=False,
        ),
    ] = None,
    split: Annotated[
        str, typer.Option(metavar="SPLIT", help="Hub split of the training pool")
    ] = "train",
    max_hamming: Annotated[
        int,
        typer.Option(min=0, help="dHash bits that may differ for two images to count as one"),
    ] = 4,
    out: JsonOut = None,
    show: Annotated[int, typer.Option(min=0, metavar="N", help="Leaks to list (0: all)")] = 20,
    quiet: Quiet = False,
) -> None:
    """Prove no training item (image hash + normalised question) is a benchmark item.

    Exits 1 when a training item leaks, 0 when the pool is clean, 2 on bad input.
    """
    from crystalbench.sources import load_items
    from crystalbench.training.leakage import check_leakage

    pool = load_items(train, split=split)
    bench = load_items(_benchmark_given(benchmark))
    with progress_hook() as hook:
        report = check_leakage(pool, bench, max_hamming=max_hamming, progress=hook)
    if out is not None:
        from crystalbench._internal.io import atomic_write_text

        atomic_write_text(out, json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    _print_leakage(report, show)
    if report.leaks:
        raise typer.Exit(EXIT_LEAK)


def _print_leakage(report: Any, show: int) -> None:
    from rich.table import Table

    console.print(
        f"{report.n_train} training items checked against {report.n_benchmark} benchmark items "
        f"({report.benchmark}, fingerprint {report.benchmark_fingerprint})"
    )
    console.print(
        f"leaks: {len(report.leaks)}   same image, other question: {report.n_image_only}   "
        f"same question, other image: {report.n_question_only}"
    )
    if not report.leaks:
        console.print("[bold green]clean[/]: no training item is a benchmark item")
        return
    table = Table(title="leaked training items")
    for column in ("train id", "benchmark id", "reason", "dHash distance"):
        table.add_column(column)
    listed = report.leaks if show == 0 else report.leaks[:show]
    for match in listed:
        distance = "" if match.image_distance is None else str(match.image_distance)
        table.add_row(match.train_id, match.benchmark_id, match.reason, distance)
    console.print(table)
    err_console.print(f"[bold red]{len(report.leaks)} training item(s) leak into the benchmark[/]")
