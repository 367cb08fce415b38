"""Reward-weight sweep: CPR's answer weight a_w over a grid, judged on the held-out split.

For each ``a_w`` in the grid the base config (strategy ``cpr`` or ``cpr-curriculum``) is
trained with ``a_w`` and ``s_w = 1 - a_w`` (the paper's weights sum to 1: 0.65 + 0.35;
``--keep-step-weight`` keeps the config's ``s_w`` instead), into ``OUTPUT_DIR/aw-0.65/`` and
so on. Every run shares one data preparation, so every run trains on the same items and is
judged on the same validation items (the held-out 15% of the pool; never benchmark items).
After training, the final policy answers the *whole* validation split greedily and is
scored by crystalbench (:mod:`crystalbench.training.evaluation`).

The runs are compared on a weight-free metric (default ``harmonic``: the harmonic mean of
validation accuracy and Match F1), since CPR itself changes with the weights. Results go to
``OUTPUT_DIR/sweep.jsonl`` (one line per run) and ``OUTPUT_DIR/sweep.md`` (a table).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from crystalbench._internal.io import atomic_write_text
from crystalbench.config.loader import comma_list
from crystalbench.config.settings import TRAIN_SWEEP_GRID, TRAIN_SWEEP_METRIC
from crystalbench.defaults import CPR_ANSWER_WEIGHT
from crystalbench.errors import UnknownNameError
from crystalbench.training.config import TrainConfig, TrainingError, require_training_stack
from crystalbench.training.evaluation import VALIDATION_METRICS
from crystalbench.training.preflight import check_environment
from crystalbench.types import Record

__all__ = [
    "SweepConfig",
    "SweepPoint",
    "SweepReport",
    "render_sweep",
    "run_sweep",
    "run_sweep_config",
    "sweep_configs",
]


class SweepPoint(Record):
    """One trained point of the sweep."""

    answer_weight: float
    """a_w."""
    step_weight: float
    """s_w."""
    output_dir: str
    n_items: int
    """Validation items scored."""
    metrics: dict[str, float]
    """Validation metrics of the final policy (see ``evaluation.VALIDATION_METRICS``)."""


class SweepReport(Record):
    """The whole sweep."""

    metric: str
    """Metric the best point is chosen by."""
    points: list[SweepPoint]
    best: float
    """a_w of the best point."""


class SweepConfig(BaseModel):
    """What ``crystal train-sweep`` trains: a base config and the a_w grid."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    train: TrainConfig
    """The base training config (strategy ``cpr`` or ``cpr-curriculum``); each run goes to
    ``train.output_dir/aw-0.65/`` and so on."""
    grid: list[float] = Field(default_factory=lambda: list(TRAIN_SWEEP_GRID), min_length=1)
    """Values of a_w (``0.5,0.6`` on a command line)."""
    metric: str = TRAIN_SWEEP_METRIC
    """Validation metric that picks the best a_w (``harmonic``, ``accuracy``...)."""
    keep_step_weight: bool = False
    """Keep the config's s_w instead of ``1 - a_w``."""

    _split_grid = field_validator("grid", mode="before")(comma_list)

    @field_validator("grid")
    @classmethod
    def _open_unit_interval(cls, values: list[float]) -> list[float]:
        outside = [value for value in values if not 0.0 < value < 1.0]
        if outside:
            raise ValueError(f"a_w must lie in (0, 1), got {outside[0]:g}")
        return values

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        if value not in VALIDATION_METRICS:
            raise ValueError(UnknownNameError("sweep metric", value, VALIDATION_METRICS).message)
        return value


def sweep_configs(
    config: TrainConfig, grid: Sequence[float], *, keep_step_weight: bool = False
) -> list[tuple[float, TrainConfig]]:
    """One config per ``a_w``, each in its own output folder.

    Raises:
        TrainingError: The strategy has no CPR, or a weight is outside (0, 1).

    Examples:
        >>> base = TrainConfig(strategy="cpr", output_dir="sweep", model={"name_or_path": "m"},
        ...                    data={"train": "pool.jsonl"})
        >>> [(a, c.rewards.weights.cpr_step, c.output_dir) for a, c in sweep_configs(base, [0.6])]
        [(0.6, 0.4, 'sweep/aw-0.60')]
    """
    if config.strategy not in ("cpr", "cpr-curriculum"):
        raise TrainingError(f"the a_w sweep needs a CPR strategy, not {config.strategy!r}")
    if not grid:
        raise TrainingError("the a_w grid is empty")
    out = []
    for a_w in grid:
        if not 0.0 < a_w < 1.0:
            raise TrainingError(f"a_w must lie in (0, 1), got {a_w}")
        weights = config.rewards.weights.model_copy(
            update={"cpr_answer": a_w}
            if keep_step_weight
            else {"cpr_answer": a_w, "cpr_step": round(1.0 - a_w, 10)}
        )
        rewards = config.rewards.model_copy(update={"weights": weights})
        folder = str(Path(config.output_dir) / f"aw-{a_w:.2f}")
        out.append((a_w, config.model_copy(update={"rewards": rewards, "output_dir": folder})))
    return out


def run_sweep(
    config: TrainConfig,
    grid: Sequence[float],
    *,
    metric: str = "harmonic",
    keep_step_weight: bool = False,
    model_factory: Callable[[], tuple[Any, Any]] | None = None,
) -> SweepReport:
    """Train one run per ``a_w`` and compare them on the validation split.

    Args:
        config: Base config (``cpr`` or ``cpr-curriculum``).
        grid: Values of ``a_w``.
        metric: Validation metric that picks the best point.
        keep_step_weight: Keep ``s_w`` instead of ``1 - a_w``.
        model_factory: Returns a fresh ``(model, processor)`` per run (``None``: load
            ``config.model`` each time).

    Raises:
        TrainingError: Bad grid or strategy; unknown metric.
        MissingExtraError: The ``train`` extra is not installed.
    """
    from crystalbench.training.runner import prepare_data, run_training

    require_training_stack("crystal train-sweep")
    if metric not in VALIDATION_METRICS:
        raise TrainingError(
            f"unknown sweep metric {metric!r} (valid: {', '.join(VALIDATION_METRICS)})"
        )
    runs = sweep_configs(config, grid, keep_step_weight=keep_step_weight)
    if model_factory is None:
        check_environment(config, what="crystal train-sweep")
    data = prepare_data(config)
    points: list[SweepPoint] = []
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for a_w, run_config in runs:
        model, processor = model_factory() if model_factory is not None else (None, None)
        result = run_training(
            run_config, model=model, processing_class=processor, data=data, keep_trainers=True
        )
        trainer = result.phases[-1].trainer
        if trainer.validation is None:
            raise TrainingError("the sweep needs evaluation.enabled: true")
        trainer.validation.items = list(data.split.validation)
        validation = trainer.run_validation()
        points.append(
            SweepPoint(
                answer_weight=a_w,
                step_weight=run_config.rewards.weights.cpr_step,
                output_dir=run_config.output_dir,
                n_items=validation.n_items,
                metrics=validation.metrics,
            )
        )
        if trainer.accelerator.is_main_process:
            lines = "".join(json.dumps(p.model_dump(mode="json")) + "\n" for p in points)
            atomic_write_text(out / "sweep.jsonl", lines)
        del trainer, result, model
        gc.collect()
        _empty_device_cache()
    # Ties go to the a_w closest to the paper's.
    best = max(points, key=lambda p: (p.metrics[metric], -abs(p.answer_weight - CPR_ANSWER_WEIGHT)))
    report = SweepReport(metric=metric, points=points, best=best.answer_weight)
    from accelerate import PartialState

    if PartialState().is_main_process:
        atomic_write_text(out / "sweep.md", render_sweep(report))
    return report


def run_sweep_config(
    config: SweepConfig, *, model_factory: Callable[[], tuple[Any, Any]] | None = None
) -> SweepReport:
    """:func:`run_sweep` of ``config``'s base config, grid, metric and weights rule.

    Raises:
        TrainingError: Bad grid or strategy.
    """
    return run_sweep(
        config.train,
        config.grid,
        metric=config.metric,
        keep_step_weight=config.keep_step_weight,
        model_factory=model_factory,
    )


def _empty_device_cache() -> None:
    try:
        import torch
    except ImportError:  # pragma: no cover - training always has torch
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def render_sweep(report: SweepReport) -> str:
    """The sweep as a Markdown table (best point marked).

    Examples:
        >>> point = SweepPoint(answer_weight=0.65, step_weight=0.35, output_dir="x",
        ...                    n_items=10, metrics={k: 0.5 for k in VALIDATION_METRICS})
        >>> print(render_sweep(SweepReport(metric="harmonic", points=[point], best=0.65)))
        ... # doctest: +ELLIPSIS
        | a_w | s_w | accuracy | match_f1 | ordered_f1 | format_rate | cpr | harmonic | items |
        |---|---|---|---|---|---|---|---|---|
        | **0.65** | 0.35 | 0.500 | 0.500 | 0.500 | 0.500 | 0.500 | 0.500 | 10 |
        ...
    """
    columns = ("accuracy", "match_f1", "ordered_f1", "format_rate", "cpr", "harmonic")
    lines = [
        "| a_w | s_w | " + " | ".join(columns) + " | items |",
        "|" + "---|" * (len(columns) + 3),
    ]
    for point in report.points:
        a_w = f"{point.answer_weight:.2f}"
        if point.answer_weight == report.best:
            a_w = f"**{a_w}**"
        values = " | ".join(f"{point.metrics.get(c, float('nan')):.3f}" for c in columns)
        lines.append(f"| {a_w} | {point.step_weight:.2f} | {values} | {point.n_items} |")
    lines.append("")
    lines.append(f"Best a_w by validation {report.metric}: {report.best:.2f}.")
    return "\n".join(lines) + "\n"
