"""``crystal data``: item sets from source datasets, merging, statistics, the leakage check.

Thin shells over :mod:`crystalbench.data.sources` and :mod:`crystalbench.training.leakage`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from crystalbench.cli.common import console, err_console, handle_errors, progress_hook

data_app = typer.Typer(
    help="Item sets from source datasets (build, merge, stats, sources) and the leakage check.",
    no_args_is_help=True,
    add_completion=False,
)

EXIT_LEAK = 1
"""Exit code of ``check-leakage`` when a training item is a benchmark item."""

if TYPE_CHECKING:
    from crystalbench.data.sources import BuildRecord, ItemSetStats

SOURCE_HELP = "mathvision, scienceqa-img, realworldqa, mmvp, plotqa or textvqa"


@data_app.command("build")
@handle_errors
def build_command(
    source: Annotated[str, typer.Argument(help=SOURCE_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Item set folder to write")],
    location: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="Hub id (default: the source's canonical one) or a local copy in the "
            "source's published layout (see `crystal data sources`)",
        ),
    ] = None,
    split: Annotated[
        str | None, typer.Option(help="Upstream split (default: the source's)")
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            help="Take exactly these upstream ids (JSON list, DIR/manifest.json, or "
            "one id per line)"
        ),
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(
            help="Take a seeded sample of N rows stratified by the source's strata "
            "(PlotQA: question template x plot type)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of --sample")] = 0,
    limit: Annotated[int | None, typer.Option(help="Stop after N items")] = None,
    revision: Annotated[
        str | None,
        typer.Option(help="Hub revision to load (or that a local snapshot must be at)"),
    ] = None,
    hub_config: Annotated[
        str | None, typer.Option(help="Hub configuration, overriding the source's default")
    ] = None,
    corrections: Annotated[
        bool,
        typer.Option(
            "--corrections/--no-corrections",
            help="MMVP: apply the packaged ground-truth corrections (each with its source)",
        ),
    ] = True,
    lenient: Annotated[
        bool,
        typer.Option(help="Skip malformed rows (listed in build.json) instead of stopping"),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option(help="Replace an existing item set at --out (once the new one is done)")
    ] = False,
) -> None:
    """Turn one split of a source dataset into an item set (DIR/items.jsonl, DIR/images/).

    Items have empty reference_steps: the input of reference construction and crystal infer.
    DIR/build.json records location, revision, manifest, counts and every skipped row.
    DIR/manifest.json lists the upstream ids taken (reuse it with --manifest).
    """
    from crystalbench.data.sources import BuildSpec, build_item_set

    spec = BuildSpec(
        source=source,
        location=location,
        split=split,
        manifest=str(manifest) if manifest is not None else None,
        sample=sample,
        seed=seed,
        limit=limit,
        revision=revision,
        hub_config=hub_config,
        corrections=corrections,
        lenient=lenient,
    )
    with progress_hook() as hook:
        record = build_item_set(spec, out, overwrite=overwrite, progress=hook)
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
        err_console.print(f"[yellow]{counts.malformed} malformed row(s) skipped[/]: see build.json")
    console.print(f"item set: {out} (items.jsonl, images/, build.json, manifest.json)")


@data_app.command("merge")
@handle_errors
def merge_command(
    inputs: Annotated[list[Path], typer.Argument(help="Item set folders, in order")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Merged item set folder to write")],
    overwrite: Annotated[
        bool, typer.Option(help="Replace an existing item set at --out (once the new one is done)")
    ] = False,
) -> None:
    """Combine item sets into one; ids stay unique as source/upstream-id."""
    from crystalbench.data.sources import merge_item_sets

    with progress_hook() as hook:
        record = merge_item_sets(inputs, out, overwrite=overwrite, progress=hook)
    for entry in record.inputs:
        console.print(
            f"{entry.path}: {entry.items} items ({', '.join(entry.sources)})", highlight=False
        )
    renamed = (
        f" ({record.renamed_ids} ids gained their source/ prefix)" if record.renamed_ids else ""
    )
    console.print(f"merged: {record.items} items in {out}{renamed}", highlight=False)


@data_app.command("stats")
@handle_errors
def stats_command(
    spec: Annotated[
        str,
        typer.Argument(help="An item set folder, or any benchmark (sample, hub id, JSONL, ...)"),
    ],
    split: Annotated[str, typer.Option(help="Hub split of a hub benchmark")] = "test",
    out: Annotated[Path | None, typer.Option(help="Write the statistics as JSON here")] = None,
) -> None:
    """Counts by source, answer type and options; steps per item and difficulty tiers."""
    from crystalbench.data.sources import is_item_set, read_item_set, summarize_items

    if is_item_set(spec):
        items = read_item_set(spec).items
    else:
        from crystalbench.data import load_benchmark

        items = load_benchmark(spec, split=split).items
    stats = summarize_items(items, spec)
    if out is not None:
        from crystalbench.io import atomic_write_json

        atomic_write_json(out, stats.model_dump(mode="json"))
    _print_stats(stats)


def _print_stats(stats: ItemSetStats) -> None:
    from rich.table import Table

    console.print(f"{stats.name}: {stats.items} items", highlight=False)
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
            f"({stats.answer_type_inferred} items have no answer_type in the data; counted under "
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
        f"reference steps per item ({steps.items} items with references, "
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

    from crystalbench.data.sources import describe_sources

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
        str, typer.Argument(help="Training pool (item set, JSONL, save_to_disk, Parquet, hub)")
    ],
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
    from crystalbench.data.sources import is_item_set, item_set_benchmark
    from crystalbench.training.leakage import check_leakage

    # An item set (crystal data build) has no references yet; read it as one.
    pool = item_set_benchmark(train) if is_item_set(train) else load_benchmark(train, split=split)
    bench = item_set_benchmark(benchmark) if is_item_set(benchmark) else load_benchmark(benchmark)
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
