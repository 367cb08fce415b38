"""``crystal train``, ``crystal train-sweep`` and ``crystal train-recipes``.

Thin shells over :mod:`crystalbench.training`; torch, TRL and transformers are imported only
inside the commands that train.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from crystalbench.cli.common import console, err_console, handle_errors, progress_hook
from crystalbench.errors import InputError

SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override a config value: dotted.key=value (YAML value), e.g. grpo.max_steps=20",
    ),
]


def _overrides(pairs: list[str] | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set expects key=value, got {pair!r}", field="--set")
        found[key.strip()] = yaml.safe_load(value)
    return found


def _print_plan(config: Any) -> None:
    from rich.table import Table

    from crystalbench.training.config import phase_plans

    table = Table(title=f"crystal train: {config.strategy} -> {config.output_dir}")
    for column in ("phase", "rewards (weight, objective)", "lr", "steps", "order", "pcgrad"):
        table.add_column(column)
    for plan in phase_plans(config):
        terms = ", ".join(f"{t.kind} x{t.weight:g} ({t.objective})" for t in plan.terms)
        steps = str(plan.max_steps) if plan.max_steps > 0 else f"{plan.num_train_epochs:g} epoch(s)"
        order = config.curriculum.pacing if plan.ordered else "shuffled"
        table.add_row(plan.name, terms, f"{plan.learning_rate:g}", steps, order, str(plan.pcgrad))
    console.print(table)


@handle_errors
def train(
    config: Annotated[
        str, typer.Option("--config", "-c", help="Training YAML, or recipe:NAME for a bundled one")
    ],
    set_values: SetOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate the config, print the phases, stop")
    ] = False,
    output_dir: Annotated[
        str | None, typer.Option("--output-dir", "-o", help="Override output_dir")
    ] = None,
    phase: Annotated[
        str,
        typer.Option(
            help="cpr-curriculum: all, phase1, or phase2 (hands over from OUTPUT_DIR/phase1; "
            "run phases as separate launches to release vLLM engines in between)"
        ),
    ] = "all",
) -> None:
    """Train a policy with GRPO: answer-only, composite, cpr or cpr-curriculum.

    On several GPUs, launch through accelerate with a bundled accelerate config (paths from
    `crystal train-recipes`); docs/training.md has the commands.
    """
    from crystalbench.training.config import load_train_config

    overrides = _overrides(set_values)
    if output_dir is not None:
        overrides["output_dir"] = output_dir
    loaded = load_train_config(config, overrides)
    _print_plan(loaded)
    if dry_run:
        return
    from crystalbench.training.runner import run_training

    with progress_hook() as hook:
        result = run_training(loaded, progress=hook, phases=phase)
    if result.data.leakage is not None:
        err_console.print(
            f"leakage check against {result.data.leakage.benchmark}: "
            f"{len(result.data.leakage.leaks)} leak(s), {len(result.data.dropped)} dropped"
        )
    for trained in result.phases:
        console.print(f"{trained.name}: {trained.global_step} steps, model in {trained.output_dir}")
    if result.handover is not None:
        choice = result.handover.handover
        console.print(
            f"phase 2 started from {choice.path} (validation {choice.metric} {choice.value:.4f})"
        )


@handle_errors
def train_recipes(
    path: Annotated[
        str | None,
        typer.Option("--path", help="Print only the absolute path of this bundled file"),
    ] = None,
) -> None:
    """List the bundled training recipes (--config recipe:NAME) and launcher configs."""
    from crystalbench.training.config import RECIPES_DIR

    if path is not None:
        target = (RECIPES_DIR / path).resolve()
        if not target.is_file() or RECIPES_DIR.resolve() not in target.parents:
            known = sorted(
                str(p.relative_to(RECIPES_DIR)) for p in RECIPES_DIR.rglob("*") if p.is_file()
            )
            from crystalbench.errors import UnknownNameError

            raise UnknownNameError("bundled recipe file", path, known)
        typer.echo(str(target))
        return
    console.print("training recipes (crystal train --config recipe:NAME):")
    for recipe in sorted(RECIPES_DIR.glob("*.yaml")):
        console.print(f"  recipe:{recipe.stem:40s} {recipe}", highlight=False)
    console.print("launcher configs (accelerate --config_file, grpo.deepspeed):")
    for launcher in sorted((RECIPES_DIR / "launch").glob("*")):
        console.print(f"  launch/{launcher.name:40s} {launcher}", highlight=False)


@handle_errors
def train_sweep(
    config: Annotated[
        str, typer.Option("--config", "-c", help="Base training YAML (cpr or cpr-curriculum)")
    ],
    grid: Annotated[
        str, typer.Option(help="Comma-separated values of a_w (s_w = 1 - a_w)")
    ] = "0.5,0.55,0.6,0.65,0.7,0.75,0.8",
    metric: Annotated[
        str,
        typer.Option(help="Validation metric that picks the best a_w (harmonic, accuracy...)"),
    ] = "harmonic",
    keep_step_weight: Annotated[
        bool, typer.Option("--keep-step-weight", help="Keep the config's s_w instead of 1 - a_w")
    ] = False,
    set_values: SetOption = None,
    output_dir: Annotated[
        str | None, typer.Option("--output-dir", "-o", help="Override output_dir")
    ] = None,
) -> None:
    """Sweep CPR's answer weight a_w, judged on the held-out 15% validation split."""
    from crystalbench.training.config import load_train_config

    try:
        values = [float(v) for v in grid.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--grid must be comma-separated numbers, got {grid!r}") from None
    overrides = _overrides(set_values)
    if output_dir is not None:
        overrides["output_dir"] = output_dir
    loaded = load_train_config(config, overrides)
    from crystalbench.training.sweep import run_sweep

    report = run_sweep(loaded, values, metric=metric, keep_step_weight=keep_step_weight)
    from crystalbench.training.sweep import render_sweep

    console.print(render_sweep(report))
    console.print(f"results: {Path(loaded.output_dir) / 'sweep.jsonl'}")
