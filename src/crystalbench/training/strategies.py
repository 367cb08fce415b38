"""Which phases a strategy runs, and the CPR-Curriculum hand-over between them.

Every strategy but ``cpr-curriculum`` trains one phase
(:func:`crystalbench.training.config.phase_plans`). ``cpr-curriculum`` chains two
(:func:`run_curriculum`): phase 1 trains with format + answer rewards and is validated with
crystalbench scoring each time it saves; the phase-1 checkpoint with the best validation score
(:func:`crystalbench.training.checkpoints.select_best_checkpoint`) is loaded as *weights only*
into phase 2, which trains with full CPR at a lower learning rate with a fresh optimizer and
scheduler (a new trainer, not ``resume_from_checkpoint``), on the curriculum order
(:mod:`crystalbench.training.curriculum`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_json
from crystalbench.errors import UnknownNameError
from crystalbench.training.checkpoints import CheckpointChoice, select_best_checkpoint
from crystalbench.training.config import TrainConfig, TrainingError, phase_plans
from crystalbench.training.phases import PhaseResult, release, train_phase
from crystalbench.training.preparation import TrainingData
from crystalbench.types import Record

__all__ = [
    "CURRICULUM_PHASES",
    "CurriculumResult",
    "check_phase_selection",
    "read_handover",
    "run_curriculum",
    "run_strategy",
]

CURRICULUM_PHASES = ("all", "phase1", "phase2")
"""What ``crystal train --phase`` may select (``cpr-curriculum`` only; others run ``all``)."""


def check_phase_selection(config: TrainConfig, phases: str) -> None:
    """Refuse a phase selection the strategy cannot run (before any data is loaded).

    Raises:
        TrainingError: ``phases`` is not ``all`` and the strategy is not ``cpr-curriculum``.
    """
    if phases != "all" and config.strategy != "cpr-curriculum":
        raise TrainingError(f"--phase {phases} needs strategy cpr-curriculum")


def run_strategy(
    config: TrainConfig,
    data: TrainingData,
    *,
    model: Any = None,
    processing_class: Any = None,
    callbacks: list[Any] | None = None,
    keep_trainers: bool = False,
    phases: str = "all",
) -> tuple[list[PhaseResult], CurriculumResult | None]:
    """Run the phases of ``config.strategy`` on prepared data.

    Returns:
        The phases that ran, in order, and the curriculum hand-over (``cpr-curriculum`` only,
        ``None`` when only phase 1 ran).
    """
    check_phase_selection(config, phases)
    if config.strategy == "cpr-curriculum":
        summary, first, second = run_curriculum(
            config,
            data,
            model=model,
            processing_class=processing_class,
            callbacks=callbacks,
            keep_trainers=keep_trainers,
            phases=phases,
        )
        return [phase for phase in (first, second) if phase is not None], summary
    (plan,) = phase_plans(config)
    result = train_phase(
        config,
        plan,
        data,
        model=model,
        processing_class=processing_class,
        keep_trainer=keep_trainers,
        callbacks=callbacks,
    )
    return [result], None


class CurriculumResult(Record):
    """What :func:`run_curriculum` did."""

    phase1_dir: str
    phase2_dir: str
    handover: CheckpointChoice
    phase1_learning_rate: float
    phase2_learning_rate: float


def run_curriculum(
    config: TrainConfig,
    data: TrainingData,
    *,
    model: Any = None,
    processing_class: Any = None,
    callbacks: list[Any] | None = None,
    keep_trainers: bool = False,
    phases: str = "all",
) -> tuple[CurriculumResult | None, PhaseResult | None, PhaseResult | None]:
    """Phase 1 (format + answer), checkpoint selection on validation, phase 2 (full CPR).

    Args:
        config: A ``cpr-curriculum`` config.
        data: Prepared pool, split and leakage report (see
            :func:`crystalbench.training.preparation.prepare_data`).
        model: Policy for phase 1 (a model object; ``None`` loads ``config.model``).
            Phase 2 always loads the selected checkpoint from disk.
        processing_class: Processor for both phases (``None`` loads ``config.model``'s).
        callbacks: Extra ``TrainerCallback`` objects for both phases.
        keep_trainers: Keep the trainers in the phase results.
        phases: ``all``, ``phase1`` (stop after phase 1) or ``phase2`` (hand over from a
            finished ``OUTPUT_DIR/phase1`` and train phase 2). Separate launches release
            everything phase 1 held, vLLM engines included.

    Returns:
        ``(summary, phase1, phase2)`` (``None`` for what did not run); the summary is also
        written to ``OUTPUT_DIR/handover.json``.
    """
    if config.strategy != "cpr-curriculum":
        raise TrainingError(
            f"run_curriculum needs strategy cpr-curriculum, not {config.strategy!r}"
        )
    if phases not in CURRICULUM_PHASES:
        raise UnknownNameError("curriculum phase", phases, CURRICULUM_PHASES)
    plan1, plan2 = phase_plans(config)
    first = None
    if phases in ("all", "phase1"):
        first = train_phase(
            config,
            plan1,
            data,
            model=model,
            processing_class=processing_class,
            callbacks=callbacks,
            keep_trainer=keep_trainers,
        )
        processing_class = first.processing_class
        if phases == "phase1":
            return None, first, None
        if not keep_trainers:
            release()
    choice = select_best_checkpoint(plan1.output_dir, config.curriculum.selection_metric)
    summary = CurriculumResult(
        phase1_dir=plan1.output_dir,
        phase2_dir=plan2.output_dir,
        handover=choice,
        phase1_learning_rate=plan1.learning_rate,
        phase2_learning_rate=plan2.learning_rate,
    )
    from accelerate import PartialState  # imports torch: only once training runs

    if PartialState().is_main_process:
        atomic_write_json(
            Path(config.output_dir) / "handover.json", summary.model_dump(mode="json")
        )
    # Weights only: a new trainer (fresh optimizer and scheduler at the phase-2 learning
    # rate), never resume_from_checkpoint, which would restore phase 1's optimizer and step.
    second = train_phase(
        config,
        plan2,
        data,
        model=choice.path,
        processing_class=processing_class,
        callbacks=callbacks,
        keep_trainer=keep_trainers,
    )
    return summary, first, second


def read_handover(output_dir: str | Path) -> CurriculumResult:
    """The ``handover.json`` of a finished curriculum run."""
    return CurriculumResult.model_validate(
        json.loads((Path(output_dir) / "handover.json").read_text(encoding="utf-8"))
    )
