"""``crystal references``: build reference chains by multi-model consensus, regenerate items.

Thin shells over :func:`crystalbench.references.build_references` and
:func:`crystalbench.references.regenerate_references`: flags become
:class:`~crystalbench.references.ReferencesConfig` fields (a flag left out lets ``--config``
decide; the defaults live in the config and ``settings.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from crystalbench.cli.common import console, err_console, handle_errors
from crystalbench.settings import (
    REFERENCES_PRECEDENCE,
    REFERENCES_PRECEDENCE_MIN_CHAINS,
    REFERENCES_PRECEDENCE_SHARE,
)

references_app = typer.Typer(
    help="Build reference chains by multi-model consensus with a validator gate.",
    no_args_is_help=True,
    add_completion=False,
)


def _endpoint_overrides(
    config_path: Path | None,
    generators: list[str] | None,
    validator: str | None,
    concurrency: int | None,
) -> dict[str, Any]:
    from crystalbench.references.config import endpoints_from_flags, load_references_config

    base = load_references_config(config_path) if config_path else None
    overrides: dict[str, Any] = {}
    existing = list(base.generators) if base else []
    if generators:
        overrides["generators"] = endpoints_from_flags(generators, existing)
    if validator:
        known = [base.validator] if base and base.validator else []
        overrides["validator"] = endpoints_from_flags([validator], known, what="--validator")[0]
    if concurrency is not None:
        gens = overrides.get("generators") or [g.model_dump() for g in existing] or None
        if gens is None:
            from crystalbench.references.config import ReferencesConfig

            gens = [g.model_dump() for g in ReferencesConfig().generators]
        overrides["generators"] = [{**g, "concurrency": concurrency} for g in gens]
        val = overrides.get("validator") or (
            base.validator.model_dump() if base and base.validator else None
        )
        if val is not None:
            overrides["validator"] = {**val, "concurrency": concurrency}
    return overrides


def _print_result(result: Any) -> None:
    summary = result.summary
    for warning in result.warnings:
        err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    steps = summary.get("steps_per_item", {})
    mean = "-" if steps.get("mean") is None else f"{steps['mean']:.1f}"
    share = summary.get("share_another_round")
    console.print(
        f"items {summary['n_items']} | accepted {summary['n_accepted']} | "
        f"rejected {summary['n_rejected']} | needed another round {summary['n_regenerated']}"
        + (f" ({100 * share:.1f}%)" if share is not None else "")
        + f" | steps per item {mean} ({steps.get('min', '-')}-{steps.get('max', '-')})",
        highlight=False,
    )
    out = result.out
    console.print(
        f"wrote {out / 'benchmark.jsonl'}, {out / 'summary.json'}, {out / 'report.html'}",
        highlight=False,
    )
    if summary["n_rejected"]:
        console.print(
            f"{summary['n_rejected']} item(s) still rejected: see {out / 'rejected.jsonl'}",
            highlight=False,
        )


@references_app.command("build")
@handle_errors
def build(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (resumed if it exists)")],
    items: Annotated[
        str | None, typer.Option(help="Item set (`crystal data build` output) or benchmark spec")
    ] = None,
    generator: Annotated[
        list[str] | None,
        typer.Option(
            "--generator",
            "-g",
            help="NAME=BASE_URL of a generator (repeat per model; NAME=URL1,URL2 or a "
            "repeated NAME for replicas)",
        ),
    ] = None,
    validator: Annotated[str | None, typer.Option(help="NAME=BASE_URL of the validator")] = None,
    no_validator: Annotated[
        bool, typer.Option("--no-validator", help="Accept every consensus chain (no gate)")
    ] = False,
    encoder: Annotated[str | None, typer.Option(help="Step encoder for clustering")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="YAML/JSON ReferencesConfig file")
    ] = None,
    engine: Annotated[str | None, typer.Option(help="local or ray")] = None,
    theta: Annotated[float | None, typer.Option(help="Link steps at cosine >= theta")] = None,
    min_support: Annotated[
        int | None, typer.Option(help="Keep clusters with this many chains")
    ] = None,
    max_rounds: Annotated[
        int | None, typer.Option(help="Rounds before an item is reported")
    ] = None,
    samples: Annotated[
        int | None, typer.Option(help="Chains per generator, item and round")
    ] = None,
    alternatives: Annotated[
        int | None,
        typer.Option(help="Keep this many distinct candidate chains as alternative references"),
    ] = None,
    precedence: Annotated[
        bool | None,
        typer.Option(
            "--precedence/--no-precedence",
            help="Infer reference_precedence: steps the chains state in either order become "
            f"interchangeable [default: {'on' if REFERENCES_PRECEDENCE else 'off'}]",
            show_default=False,
        ),
    ] = None,
    precedence_share: Annotated[
        float | None,
        typer.Option(
            help="Share of the chains holding two steps that must agree on their order for "
            f"an edge, in (0.5, 1] [default: {REFERENCES_PRECEDENCE_SHARE}]",
            show_default=False,
        ),
    ] = None,
    precedence_min_chains: Annotated[
        int | None,
        typer.Option(
            help="Chains that must hold two steps for an edge between them "
            f"[default: {REFERENCES_PRECEDENCE_MIN_CHAINS}]",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Base seed of every request's seed")] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Requests in flight per base URL (every model)")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N items")] = None,
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster address (--engine ray)")
    ] = None,
    preflight: Annotated[
        bool, typer.Option("--preflight/--no-preflight", help="Check endpoints first")
    ] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines")] = False,
) -> None:
    """Build reference chains for an item set: generate, cluster, order, validate, repeat."""
    from crystalbench.references import build_references, load_references_config

    overrides: dict[str, Any] = _endpoint_overrides(config, generator, validator, concurrency)
    flags = {
        "items": items,
        "encoder": encoder,
        "engine": engine,
        "theta": theta,
        "min_support": min_support,
        "max_rounds": max_rounds,
        "samples": samples,
        "alternatives": alternatives,
        "precedence": precedence,
        "precedence_share": precedence_share,
        "precedence_min_chains": precedence_min_chains,
        "seed": seed,
        "limit": limit,
        "ray.address": ray_address,
    }
    overrides.update({k: v for k, v in flags.items() if v is not None})
    if no_validator:
        overrides["validate"] = False
    if not preflight:
        overrides["preflight"] = False
    settings = load_references_config(config, overrides)
    events = None if quiet else (lambda line: err_console.print(line, highlight=False))
    result = build_references(settings, out, on_event=events)
    _print_result(result)


@references_app.command("regenerate")
@handle_errors
def regenerate(
    ids: Annotated[
        Path,
        typer.Option(
            "--ids", help="Item ids to send back: one per line, or JSONL with id / item_id"
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The build's output folder")],
    items: Annotated[
        str | None, typer.Option(help="The item set, if it moved since the build")
    ] = None,
    generator: Annotated[
        list[str] | None, typer.Option("--generator", "-g", help="NAME=BASE_URL (new URLs)")
    ] = None,
    validator: Annotated[str | None, typer.Option(help="NAME=BASE_URL (new URL)")] = None,
    engine: Annotated[str | None, typer.Option(help="local or ray")] = None,
    max_rounds: Annotated[int | None, typer.Option(help="New rounds per item")] = None,
    preflight: Annotated[
        bool, typer.Option("--preflight/--no-preflight", help="Check endpoints first")
    ] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines")] = False,
) -> None:
    """Send items back for new rounds with fresh seeds (e.g. those rejected in review)."""
    import json

    from crystalbench.references import read_ids_file, regenerate_references
    from crystalbench.references.config import ModelEndpoint, endpoints_from_flags

    stored = (
        json.loads((out / "config.json").read_text()) if (out / "config.json").is_file() else {}
    )
    saved = stored.get("config", {})
    overrides: dict[str, Any] = {}
    if generator:
        existing = [ModelEndpoint.model_validate(g) for g in saved.get("generators", [])]
        overrides["generators"] = endpoints_from_flags(generator, existing)
    if validator:
        known = [ModelEndpoint.model_validate(saved["validator"])] if saved.get("validator") else []
        overrides["validator"] = endpoints_from_flags([validator], known, what="--validator")[0]
    for name, value in {"items": items, "engine": engine, "max_rounds": max_rounds}.items():
        if value is not None:
            overrides[name] = value
    if not preflight:
        overrides["preflight"] = False
    wanted = read_ids_file(ids)
    events = None if quiet else (lambda line: err_console.print(line, highlight=False))
    result = regenerate_references(
        out, wanted, overrides=overrides, source=str(ids), on_event=events
    )
    console.print(f"sent back {len(dict.fromkeys(wanted))} item(s)", highlight=False)
    _print_result(result)
