"""From a :class:`~crystalbench.training.config.TrainConfig` to a trained policy.

:func:`run_training` is what ``crystal train --config FILE`` calls. A run goes through these
stages, each in its own module, each importing only the ones before it:

1. :mod:`~crystalbench.training.preparation`: :func:`prepare_data` loads the pool, proves it
   does not leak into the benchmark (:func:`crystalbench.training.leakage.check_leakage`;
   refuse, drop or ignore as configured) and splits off the validation items;
2. :mod:`~crystalbench.training.building`: for each phase
   (:func:`crystalbench.training.config.phase_plans`), :func:`build_trainer` builds the reward
   functions, the ``GRPOConfig`` (:func:`grpo_arguments`), the TRL dataset, the curriculum
   schedule and a :class:`~crystalbench.training.trainer.CrystalGRPOTrainer`;
3. :mod:`~crystalbench.training.phases`: :func:`train_phase` trains it and saves the model;
4. :mod:`~crystalbench.training.strategies`: which phases the strategy runs;
   ``cpr-curriculum`` chains two through
   :func:`~crystalbench.training.strategies.run_curriculum` (checkpoint selection in
   :mod:`~crystalbench.training.checkpoints`).

Every phase folder holds ``crystal_train_config.yaml`` and ``crystal_train_run.json``
(:mod:`crystalbench.training.run_files`); both are copied into every ``checkpoint-N`` folder
as it is saved.

The stage functions are re-exported here, so ``from crystalbench.training.runner import
build_trainer, prepare_data`` keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_json
from crystalbench.training.arguments import grpo_arguments
from crystalbench.training.building import build_trainer, load_processor
from crystalbench.training.config import TrainConfig, require_training_stack
from crystalbench.training.phases import PhaseResult, release, train_phase
from crystalbench.training.preflight import check_environment, check_model_reachable
from crystalbench.training.preparation import ProgressHook, TrainingData, prepare_data
from crystalbench.training.strategies import CurriculumResult, check_phase_selection, run_strategy

__all__ = [
    "PhaseResult",
    "TrainingData",
    "TrainingResult",
    "build_trainer",
    "grpo_arguments",
    "load_processor",
    "prepare_data",
    "release",
    "run_training",
    "train_phase",
]


@dataclass
class TrainingResult:
    """What :func:`run_training` did."""

    output_dir: str
    phases: list[PhaseResult]
    data: TrainingData
    handover: CurriculumResult | None = None
    """The curriculum hand-over (``cpr-curriculum`` only)."""


def run_training(
    config: TrainConfig,
    *,
    model: Any = None,
    processing_class: Any = None,
    data: TrainingData | None = None,
    progress: ProgressHook | None = None,
    callbacks: list[Any] | None = None,
    keep_trainers: bool = False,
    phases: str = "all",
) -> TrainingResult:
    """Train ``config`` end to end (see the module docstring).

    Args:
        config: The run.
        model: Policy object for the first phase (``None``: load ``config.model``).
        processing_class: Processor (``None``: load ``config.model``'s).
        data: Prepared data (``None``: :func:`prepare_data`).
        progress: Progress hook for the leakage check.
        callbacks: Extra ``TrainerCallback`` objects for every phase.
        keep_trainers: Keep each phase's trainer in the result (tests, notebooks).
        phases: ``cpr-curriculum`` only: ``all``, ``phase1`` or ``phase2`` (see
            :func:`~crystalbench.training.strategies.run_curriculum`).

    Raises:
        MissingExtraError: The ``train`` extra is not installed.
    """
    require_training_stack()
    check_phase_selection(config, phases)
    check_environment(config, check_model=False)
    data = data or prepare_data(config, progress=progress)
    if model is None and phases != "phase2":  # phase 2 alone loads its phase-1 checkpoint
        check_model_reachable(config)
    out = Path(config.output_dir)
    existed = out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        if data.leakage is not None:
            atomic_write_json(out / "leakage.json", data.leakage.model_dump(mode="json"))
        done, handover = run_strategy(
            config,
            data,
            model=model,
            processing_class=processing_class,
            callbacks=callbacks,
            keep_trainers=keep_trainers,
            phases=phases,
        )
    except BaseException:
        if not existed:
            remove_failed_start(out)
        raise
    return TrainingResult(str(out), done, data, handover=handover)


def remove_failed_start(folder: Path) -> bool:
    """Remove a run folder a failed start created, when it holds nothing trained.

    A folder with a checkpoint or saved weights anywhere in it is kept (a run that failed
    after it trained keeps what it made); otherwise it holds only what the start wrote (the
    dataset cache, run files, the leakage report) and goes. Returns whether it was removed.
    """
    import shutil

    if not folder.is_dir():
        return False
    for path in folder.rglob("*"):
        if path.name.startswith("checkpoint-") or path.suffix in (".safetensors", ".bin"):
            return False
    shutil.rmtree(folder, ignore_errors=True)
    return True
