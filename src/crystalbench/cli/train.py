"""``crystal train``, ``crystal train-sweep``, ``crystal train-select`` and
``crystal train-recipes``.

Thin shells over :mod:`crystalbench.training`: ``train`` builds one
:class:`~crystalbench.training.config.TrainConfig` (``--config FILE`` or ``recipe:NAME``,
``--set KEY=VALUE``, ``--out``, ``--seed``), ``train-sweep`` one
:class:`~crystalbench.training.sweep.SweepConfig` (the same, under ``train``, plus the
grid and the other axes), ``train-select`` one
:class:`~crystalbench.training.selection.SelectConfig` (post-hoc selection of a verl, EasyR1
or TRL run's checkpoint on its validation log); torch, TRL and transformers are imported
only inside the commands that train.
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
from crystalbench.training.selection import SelectConfig
from crystalbench.training.sweep import SweepConfig


def _train_flags(at: str = "") -> tuple[Flag, ...]:
    return (
        Flag(
            f"{at}output_dir",
            ("--out", "-o"),
            "Run folder: checkpoints, logs, the resolved config",
            metavar="FOLDER",
            default_text="the config's output_dir",
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


def _count_or_list(text: str) -> str | int:
    """``--seeds``: ``3`` is a count, ``1,2,3`` a list (split by the config)."""
    stripped = text.strip()
    return int(stripped) if stripped.lstrip("-").isdigit() else stripped


_CONFIG_HELP = "Training YAML, or recipe:NAME for a bundled one (crystal train-recipes)"

SWEEP_FLAGS: tuple[Flag, ...] = (
    Flag("grid", ("--grid",), "Comma-separated values of a_w (s_w = 1 - a_w)", metavar="VALUES"),
    Flag(
        "metric",
        ("--metric",),
        "Validation metric that picks the best configuration (mean over seeds), or heldout/NAME",
        metavar="METRIC",
    ),
    Flag(
        "strategies",
        ("--strategies",),
        "Strategies compared, comma-separated (cpr,random,format-only)",
        metavar="NAMES",
        default_text="the config's strategy",
    ),
    Flag(
        "seeds",
        ("--seeds",),
        "Seeds per configuration: a count (3: the config's seed and the next two) or a list",
        metavar="N|SEEDS",
        convert=_count_or_list,
        default_text="the config's seed alone",
    ),
    Flag(
        "pcgrad",
        ("--pcgrad",),
        "PCGrad ablation axis: on,off",
        metavar="on,off",
        default_text="the config's",
    ),
    Flag(
        "curriculum",
        ("--curriculum",),
        "Curriculum ablation axis (cpr-curriculum): on,off",
        metavar="on,off",
        default_text="the config's",
    ),
    Flag(
        "phase2_learning_rates",
        ("--phase2-lr",),
        "Phase-2 learning rates (cpr-curriculum), comma-separated",
        metavar="RATES",
        default_text="the config's",
        param_name="phase2_lr",
    ),
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


def _print_sweep_plan(config: SweepConfig) -> None:
    from rich.table import Table

    from crystalbench.training.sweep import plan_sweep

    runs = plan_sweep(config)
    table = Table(title=f"crystal train-sweep: {len(runs)} run(s) -> {config.train.output_dir}")
    for column in ("configuration", "seed", "strategy", "a_w", "s_w", "pcgrad", "curriculum"):
        table.add_column(column)
    table.add_column("phase-2 lr")
    table.add_column("folder")
    for run in runs:
        settings = run.settings
        table.add_row(
            run.configuration,
            str(run.seed),
            settings.strategy,
            f"{settings.answer_weight:g}",
            f"{settings.step_weight:g}",
            _on_off(settings.pcgrad),
            "-" if settings.curriculum is None else _on_off(settings.curriculum),
            "-" if settings.phase2_learning_rate is None else f"{settings.phase2_learning_rate:g}",
            run.config.output_dir,
        )
    console.print(table)


def _on_off(value: bool) -> str:
    return "on" if value else "off"


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
def train_sweep(
    config: SweepConfig,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the config, print the runs, stop")
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Train a grid of runs (a_w, strategies, seeds, PCGrad, curriculum, phase-2 learning
    rate), judged on the held-out validation split, with a seed table (mean, sd, 2-sd
    comparisons)."""
    from pathlib import Path

    from crystalbench.training.sweep import render_sweep, run_sweep_config

    if dry_run:
        _print_sweep_plan(config)
        return

    result = run_sweep_config(config)
    if quiet:
        return
    console.print(render_sweep(result))
    out = Path(config.train.output_dir)
    console.print(f"results: {out / 'sweep.jsonl'}; seed table: {out / 'seeds.md'}")


SELECT_FLAGS: tuple[Flag, ...] = (
    Flag(
        "run_dir",
        ("RUN_DIR",),
        "The run's checkpoint folder (global_step_N or checkpoint-N folders); best.json and "
        "the best link are written there",
        argument=True,
        required=True,
    ),
    Flag(
        "metric",
        ("--metric",),
        "Validation key, or a part of one naming a single key (heldout_f1_minilm)",
        metavar="METRIC",
        required=True,
    ),
    Flag(
        "metrics_file",
        ("--metrics",),
        "The metrics log: JSONL (verl's file logger, EasyR1's, validation.jsonl) or CSV with "
        "a step column",
        metavar="FILE",
        default_text="validation.jsonl, metrics.jsonl, experiment_log.jsonl or metrics.csv in "
        "RUN_DIR",
    ),
    Flag(
        "lower_is_better",
        ("--lower-is-better/--higher-is-better",),
        "Pick the lowest value of the metric",
        kind=bool,
    ),
)
"""The options of ``crystal train-select`` (one :class:`SelectConfig` field each)."""


@handle_errors
@configured(SelectConfig, SELECT_FLAGS, config_at=None)
def train_select(config: SelectConfig, quiet: Quiet = False) -> None:
    """Select a finished run's best checkpoint on its validation log (verl, EasyR1, TRL).

    verl and EasyR1 validate but keep no best checkpoint; this writes best.json and a
    best link like crystal train does. Validate on the validation split, never the test
    split.
    """
    from crystalbench.training.selection import select_from_log

    choice = select_from_log(config)
    if quiet:
        return
    console.print(
        f"best by validation {escape(choice.metric)}: step {choice.step} "
        f"({choice.value:.4f}) -> {escape(choice.path)}",
        highlight=False,
    )
    console.print(
        "candidates: " + ", ".join(f"{step}: {value:.4f}" for step, value in choice.candidates),
        highlight=False,
    )
