"""``crystal references``: build reference chains by multi-model consensus, regenerate items.

Thin shells over :mod:`crystalbench.references.jobs`: the options of ``build`` are one
:class:`~crystalbench.references.jobs.ReferencesBuild` (a
:class:`~crystalbench.references.ReferencesConfig`, the ``--config`` file, under
``references``, plus the endpoints given as ``NAME=URL``), those of ``regenerate`` one
:class:`~crystalbench.references.jobs.ReferencesRegenerate`; one library call does the
work, and this module prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from crystalbench.cli.apps import new_app
from crystalbench.cli.binding import configured
from crystalbench.cli.common import Quiet, ShowProgress, console, err_console, handle_errors
from crystalbench.cli.flags import Flag, cache_flags, device_flag, read_ids
from crystalbench.references.jobs import ReferencesBuild, ReferencesRegenerate

references_app = new_app(
    help="Build reference chains by multi-model consensus with a validator gate.",
    no_args_is_help=True,
)

_GENERATOR = Flag(
    "generators",
    ("--generator", "-g"),
    "NAME=BASE_URL of a generator (repeat per model; NAME=URL1,URL2 or a repeated NAME for "
    "replicas); a NAME the config lists keeps its other settings",
    kind=list[str],
    metavar="NAME=URL",
    convert=lambda specs: list(specs) or None,
    default_text="the config's, else the paper's four models",
    param_name="generator",
)
_VALIDATOR = Flag(
    "validator",
    ("--validator",),
    "NAME=BASE_URL of the validator",
    metavar="NAME=URL",
    default_text="the config's, else the paper's",
)
_CONCURRENCY = Flag(
    "concurrency",
    ("--concurrency",),
    "Requests in flight per base URL, for every model",
    kind=int,
    metavar="N",
    default_text="each model's own, else 8",
)
_ITEMS_HELP = "Item set (`crystal data build` output) or any benchmark spec"
_PREFLIGHT_HELP = "Check every endpoint before the first request"

BUILD_FLAGS: tuple[Flag, ...] = (
    Flag("references.items", ("--items",), _ITEMS_HELP, metavar="ITEMS", default_text="none"),
    Flag(
        "references.ids",
        ("--ids",),
        "Only these item ids: comma-separated, or @FILE with one id per line",
        convert=read_ids,
        metavar="IDS|@FILE",
        default_text="all",
    ),
    Flag(
        "references.limit",
        ("--limit",),
        "Only the first N items",
        kind=int,
        metavar="N",
        default_text="all",
    ),
    _GENERATOR,
    _VALIDATOR,
    Flag(
        "references.validate_chains",
        ("--no-validator",),
        "Accept every consensus chain (no validator gate)",
        kind=bool,
        convert=lambda off: not off,
        default_text="the gate runs",
        param_name="no_validator",
    ),
    Flag(
        "references.encoder",
        ("--encoder",),
        "Sentence encoder of the candidate steps (clustering)",
        metavar="NAME",
    ),
    device_flag("references."),
    *cache_flags("references."),
    Flag("references.theta", ("--theta",), "Link steps at cosine >= theta", kind=float),
    Flag(
        "references.min_support",
        ("--min-support",),
        "Keep clusters with members from this many chains",
        kind=int,
    ),
    Flag(
        "references.max_rounds",
        ("--max-rounds",),
        "Rounds before an item still rejected is reported",
        kind=int,
    ),
    Flag(
        "references.samples",
        ("--samples",),
        "Chains per generator, item and round",
        kind=int,
    ),
    Flag(
        "references.alternatives",
        ("--alternatives",),
        "Keep this many distinct candidate chains as alternative references",
        kind=int,
    ),
    Flag(
        "references.precedence",
        ("--precedence/--no-precedence",),
        "Infer reference_precedence: steps the chains state in either order become interchangeable",
        kind=bool,
    ),
    Flag(
        "references.precedence_share",
        ("--precedence-share",),
        "Share of the chains holding two steps that must agree on their order for an edge, "
        "in (0.5, 1]",
        kind=float,
    ),
    Flag(
        "references.precedence_min_chains",
        ("--precedence-min-chains",),
        "Chains that must hold two steps for an edge between them",
        kind=int,
    ),
    Flag(
        "references.seed",
        ("--seed",),
        "Base of every request's seed (recorded in config.json)",
        kind=int,
    ),
    _CONCURRENCY,
    Flag("references.engine", ("--engine",), "local (asyncio here) or ray (Ray Data)"),
    Flag(
        "references.ray.address",
        ("--ray-address",),
        "Ray cluster address (--engine ray)",
        metavar="ADDRESS",
        default_text="start or join a local instance",
    ),
    Flag("references.preflight", ("--preflight/--no-preflight",), _PREFLIGHT_HELP, kind=bool),
)
"""The options of ``crystal references build`` (one :class:`ReferencesBuild` field each)."""

REGENERATE_FLAGS: tuple[Flag, ...] = (
    Flag(
        "ids",
        ("--ids",),
        "Items to send back: comma-separated, or @FILE / FILE with one id per line or JSONL "
        "with id / item_id (the review app's rejected export)",
        metavar="IDS|@FILE",
        required=True,
    ),
    Flag(
        "items",
        ("--items",),
        "The item set, if it moved since the build",
        metavar="ITEMS",
        default_text="the build's",
    ),
    _GENERATOR,
    _VALIDATOR,
    _CONCURRENCY,
    Flag("engine", ("--engine",), "local or ray", default_text="the build's"),
    Flag(
        "max_rounds",
        ("--max-rounds",),
        "New rounds per item",
        kind=int,
        default_text="the build's max_rounds",
    ),
    Flag(
        "preflight",
        ("--preflight/--no-preflight",),
        _PREFLIGHT_HELP,
        kind=bool,
        default_text="the build's",
    ),
)
"""The options of ``crystal references regenerate`` (one :class:`ReferencesRegenerate` field
each)."""

BuildOut = Annotated[
    Path,
    typer.Option("--out", "-o", metavar="FOLDER", help="Output folder (resumed if it exists)"),
]


def _events(progress: bool) -> Any:
    """One line per stage on stderr, or ``None`` (``--no-progress``, ``--quiet``)."""
    return (lambda line: err_console.print(line, highlight=False)) if progress else None


def _print_result(result: Any) -> None:
    summary = result.summary
    for warning in result.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(str(warning))}", highlight=False)
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
@configured(
    ReferencesBuild,
    BUILD_FLAGS,
    config_at="references",
    config_help="YAML, JSON or TOML file with ReferencesConfig fields (models, prompts, "
    "thresholds...); flags win",
)
def build(
    out: BuildOut, config: ReferencesBuild, progress: ShowProgress = True, quiet: Quiet = False
) -> None:
    """Build reference chains for an item set: generate, cluster, order, validate, repeat."""
    from crystalbench.references.jobs import build_from_job

    _print_result(build_from_job(config, out, on_event=_events(progress and not quiet)))


@references_app.command("regenerate")
@handle_errors
@configured(ReferencesRegenerate, REGENERATE_FLAGS)
def regenerate(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="FOLDER", help="The build's folder")],
    config: ReferencesRegenerate,
    progress: ShowProgress = True,
    quiet: Quiet = False,
) -> None:
    """Send items back for new rounds with fresh seeds (e.g. those rejected in review)."""
    from crystalbench.references.jobs import regenerate_from_job

    result, count = regenerate_from_job(config, out, on_event=_events(progress and not quiet))
    console.print(f"sent back {count} item(s)", highlight=False)
    _print_result(result)


@references_app.command("demo-server")
@handle_errors
def demo_server(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: a free one)")] = 8431,
    quiet: Quiet = False,
) -> None:
    """Serve scripted generators, a validator and model styles from the bundled sample
    (OpenAI-compatible, loopback only), to try `references build` and `infer` without a GPU."""
    from crystalbench.demo.server import DemoServer, served_models

    server = DemoServer(port)
    console.print(f"demo server at {server.url} serving {', '.join(served_models())}")
    console.print(
        f"try: crystal references build --items ITEMS -o OUT --encoder minilm-offline "
        f"-g gen-literal={server.url} -g gen-grounded={server.url} "
        f"-g gen-terse={server.url} -g gen-digressive={server.url} "
        f"--validator validator={server.url}",
        highlight=False,
        soft_wrap=True,
    )
    server.serve_forever()
