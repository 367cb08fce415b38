"""Stage 3 of a run: train one phase, save its final model, free the accelerator.

:func:`train_phase` builds the phase's trainer
(:func:`crystalbench.training.building.build_trainer`), trains it and saves the final model and
processor in the phase folder. Which phases a
strategy runs, and how they hand over, is :mod:`crystalbench.training.strategies`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crystalbench.training.building import build_trainer
from crystalbench.training.checkpoints import (
    CheckpointChoice,
    phase_selection_metric,
    select_best_checkpoint,
    write_best,
)
from crystalbench.training.config import PhasePlan, TrainConfig, TrainingError
from crystalbench.training.preparation import TrainingData

__all__ = ["PhaseResult", "release", "train_phase"]


@dataclass
class PhaseResult:
    """One trained phase."""

    name: str
    output_dir: str
    """Phase folder; the final model is saved there."""
    global_step: int
    log_history: list[dict[str, Any]]
    processing_class: Any
    is_main_process: bool
    trainer: Any = None
    """The trainer (kept for inspection with ``keep_trainer``; ``None`` otherwise)."""
    best: CheckpointChoice | None = None
    """The checkpoint selected on validation (``best.json``), when the phase selects one."""


def train_phase(
    config: TrainConfig,
    plan: PhasePlan,
    data: TrainingData,
    *,
    model: Any = None,
    processing_class: Any = None,
    keep_trainer: bool = False,
    callbacks: list[Any] | None = None,
) -> PhaseResult:
    """Build the trainer of one phase, train it, and save the final model in the phase folder."""
    trainer = build_trainer(
        config, plan, data, model=model, processing_class=processing_class, callbacks=callbacks
    )
    trainer.train()
    if config.grpo.save:
        trainer.save_model(plan.output_dir)
        if trainer.accelerator.is_main_process:
            trainer.processing_class.save_pretrained(plan.output_dir)
    best = None
    if trainer.accelerator.is_main_process:
        best = _record_selection(config, plan)
        if config.evaluation.enabled:
            from crystalbench.training.overoptimization import write_overoptimization_report

            write_overoptimization_report(plan.output_dir)
    result = PhaseResult(
        name=plan.name,
        output_dir=plan.output_dir,
        global_step=trainer.state.global_step,
        log_history=list(trainer.state.log_history),
        processing_class=trainer.processing_class,
        is_main_process=trainer.accelerator.is_main_process,
        trainer=trainer if keep_trainer else None,
        best=best,
    )
    return result


def _record_selection(config: TrainConfig, plan: PhasePlan) -> CheckpointChoice | None:
    """The phase's ``best`` checkpoint by its selection metric, recorded in its folder."""
    metric = phase_selection_metric(config, plan)
    if metric is None:
        return None
    try:
        choice = select_best_checkpoint(plan.output_dir, metric)
    except TrainingError:
        return None  # no checkpoint was validated (a run shorter than eval_steps)
    write_best(plan.output_dir, choice)
    return choice


def release() -> None:
    """Free what a finished phase left on the accelerator (before the next phase starts)."""
    import gc

    gc.collect()
    try:
        import torch
    except ImportError:  # pragma: no cover - training always has torch
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
