"""``crystal train``, ``crystal train-sweep`` and ``crystal train-recipes``.

Thin shells over :mod:`crystalbench.training`: ``train`` builds one
:class:`~crystalbench.training.config.TrainConfig` (``--config FILE`` or ``recipe:NAME``,
``--set KEY=VALUE``, ``--out``, ``--seed``), ``train-sweep`` one
:class:`~crystalbench.training.sweep.SweepConfig` (the same, under ``train``, plus the
grid); torch, TRL and transformers are imported only inside the commands that train.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

import typer
from rich.markup import escape

from crystalbench.cli.binding import configured
from crystalbench.cli.common import Quiet, console, err_console, handle_errors, progress_hook
from crystalbench.cli.flags import Flag
from crystalbench.metrics import plural
from crystalbench.training.config import TrainConfig, resolve_recipe_path
from crystalbench.training.sweep import SweepConfig


def _train_flags(at: str = "") -> tuple[Flag, ...]:
    return (
        Flag(
            f"{at}output_dir",
            ("--out", "-o"),
            "Run folder: checkpoints, logs, the resolved config",
            metavar="FOLDER",
            default_text="the config's output_dir",
            deprecated=("--output-dir",),
            param_name="out",
        ),
        Flag(
            f"{at}seed",
            ("--seed",),
            "Seed of sampling, shuffling, the validation split and the curriculum",
            kind=int,
            default_text="the config's seed, else 42",
        ),
    )


_CONFIG_HELP = "Training YAML, or recipe:NAME for a bundled one (crystal train-recipes)"

SWEEP_FLAGS: tuple[Flag, ...] = (
    Flag("grid", ("--grid",), "Comma-separated values of a_w (s_w = 1 - a_w)", metavar="VALUES"),
    Flag("metric", ("--metric",), "Validation metric that picks the best a_w", metavar="METRIC"),
    Flag(
        "keep_step_weight",
        ("--keep-step-weight/--no-keep-step-weight",),
        "Keep the config's s_w instead of 1 - a_w",
        kind=bool,
    ),
    *_train_flags("train."),
)
"""The options of ``crystal train-sweep`` (one :class:`SweepConfig` field each)."""


def _print_plan(config: TrainConfig) -> None:
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


def _print_training(result: Any) -> None:
    if result.data.leakage is not None:
        err_console.print(
            f"leakage check against {escape(str(result.data.leakage.benchmark))}: "
            f"{len(result.data.leakage.leaks)} leak(s), {len(result.data.dropped)} dropped"
        )
    for trained in result.phases:
        console.print(
            f"{trained.name}: {plural(trained.global_step, 'step')}, model in {trained.output_dir}"
        )
    if result.handover is not None:
        choice = result.handover.handover
        console.print(
            f"phase 2 started from {choice.path} (validation {choice.metric} {choice.value:.4f})"
        )


@handle_errors
@configured(
    TrainConfig,
    _train_flags(),
    config_help=_CONFIG_HELP,
    config_file=lambda text: resolve_recipe_path(text),
    config_required=True,
    set_option=True,
)
def train(
    config: TrainConfig,
    phase: Annotated[
        Literal["all", "phase1", "phase2"],
        typer.Option(
            help="cpr-curriculum: all, phase1, or phase2 (hands over from OUT/phase1; run "
            "phases as separate launches to release vLLM engines in between)"
        ),
    ] = "all",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the config, print the phases, stop")
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Train a policy with GRPO: answer-only, composite, cpr or cpr-curriculum.

    On several GPUs, launch through accelerate with a bundled accelerate config (paths from
    `crystal train-recipes`); docs/training.md has the commands.
    """
    _print_plan(config)
    if dry_run:
        return
    from crystalbench.training.runner import run_training

    with progress_hook(not quiet) as hook:
        _print_training(run_training(config, progress=hook, phases=phase))


@handle_errors
def train_recipes(
    path: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--path",
            metavar="FILE",
            help="Print only the absolute path of this bundled file (e.g. launch/ds_zero3.json)",
            show_default="list them all",
        ),
    ] = None,
) -> None:
    """List the bundled training recipes (--config recipe:NAME) and launcher configs."""
    from crystalbench.training.config import bundled_file, bundled_recipes

    if path is not None:
        typer.echo(str(bundled_file(path)))
        return
    recipes, launchers = bundled_recipes()
    console.print("training recipes (crystal train --config recipe:NAME):")
    for recipe in recipes:
        console.print(f"  recipe:{recipe.stem:40s} {recipe}", highlight=False)
    console.print("launcher configs (accelerate --config_file, grpo.deepspeed):")
    for launcher in launchers:
        console.print(f"  launch/{launcher.name:40s} {launcher}", highlight=False)


@handle_errors
@configured(
    SweepConfig,
    SWEEP_FLAGS,
    config_at="train",
    config_help="Base training YAML (cpr or cpr-curriculum), or recipe:NAME",
    config_file=lambda text: resolve_recipe_path(text),
    config_required=True,
    set_option=True,
)
def train_sweep(config: SweepConfig, quiet: Quiet = False) -> None:
    """Sweep CPR's answer weight a_w, judged on the held-out 15% validation split."""
    from pathlib import Path

    from crystalbench.training.sweep import render_sweep, run_sweep_config

    console.print(render_sweep(run_sweep_config(config)))
    console.print(f"results: {Path(config.train.output_dir) / 'sweep.jsonl'}")
