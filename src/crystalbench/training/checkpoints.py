"""Phase-1 checkpoints: which one phase 2 starts from, and which ones rotation keeps.

Torch-free (the keeper callback imports transformers when it is built). Phase 1 is validated
with crystalbench scoring each time it saves (``validation.jsonl``, written by
:class:`~crystalbench.training.trainer.CrystalGRPOTrainer`); :func:`select_best_checkpoint`
picks the phase-1 checkpoint with the best validation score (never a benchmark test item:
validation is held out of the training pool) for the hand-over
(:func:`crystalbench.training.strategies.run_curriculum`).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_text, read_jsonl
from crystalbench.errors import UnknownNameError
from crystalbench.training.config import PhasePlan, TrainConfig, TrainingError
from crystalbench.types import Record

__all__ = [
    "BEST_FILE",
    "BEST_LINK",
    "SELECTION_METRICS",
    "CheckpointChoice",
    "checkpoint_keeper",
    "phase_selection_metric",
    "select_best_checkpoint",
    "write_best",
]

SELECTION_METRICS = ("accuracy", "format_rate", "cpr", "match_f1", "harmonic")
"""Validation metrics a phase-1 checkpoint can be selected on (``curriculum.selection_metric``;
``evaluation.selection_metric`` takes any recorded metric, held-out graders included)."""

BEST_FILE = "best.json"
"""The selected checkpoint of a phase folder (:class:`CheckpointChoice`)."""
BEST_LINK = "best"
"""A link to the selected ``checkpoint-N`` folder (a one-line text file where links fail)."""


class CheckpointChoice(Record):
    """The phase-1 checkpoint phase 2 starts from, and why."""

    path: str
    """Checkpoint folder (``.../phase1/checkpoint-N``)."""
    step: int
    """Global step of the checkpoint."""
    metric: str
    """Selection metric."""
    value: float
    """Its validation value."""
    metrics: dict[str, float]
    """All validation metrics at that step."""
    candidates: list[tuple[int, float]]
    """Every ``(step, value)`` considered, in step order."""


_CHECKPOINT = re.compile(r"checkpoint-(\d+)$")


def select_best_checkpoint(run_dir: str | Path, metric: str = "accuracy") -> CheckpointChoice:
    """The saved checkpoint with the best validation ``metric`` in a phase folder.

    Reads ``validation.jsonl`` (one record per evaluation: ``{"step": N, "metrics": {...}}``,
    written by the trainer) and the ``checkpoint-N`` folders; only checkpoints validated at
    their own step are candidates. Highest ``metric`` wins; ties go to the higher format
    rate, then to the earlier step.

    Raises:
        UnknownNameError: Unknown metric.
        TrainingError: No validated checkpoint in ``run_dir``.
    """
    run_dir = Path(run_dir)
    records: dict[int, dict[str, float]] = {}
    log = run_dir / "validation.jsonl"
    if log.is_file():
        for _, row in read_jsonl(log):
            records[int(row["step"])] = {k: float(v) for k, v in row["metrics"].items()}
    recorded = {name for values in records.values() for name in values}
    if records and metric not in recorded:
        raise UnknownNameError("selection metric", metric, recorded)
    if not records and metric not in SELECTION_METRICS and "/" not in metric:
        raise UnknownNameError("selection metric", metric, SELECTION_METRICS)
    checkpoints = (
        {
            int(m.group(1)): path
            for path in run_dir.iterdir()
            if path.is_dir() and (m := _CHECKPOINT.search(path.name))
        }
        if run_dir.is_dir()
        else {}
    )
    steps = sorted(step for step in checkpoints if step in records and metric in records[step])
    if not steps:
        raise TrainingError(
            f"no validated checkpoint in {run_dir}: checkpoints at steps "
            f"{sorted(checkpoints)}, validation at steps {sorted(records)}"
        )

    def key(step: int) -> tuple[float, float, int]:
        values = records[step]
        value = values[metric]
        return (value if value == value else float("-inf"), values.get("format_rate", 0.0), -step)

    best = max(steps, key=key)
    return CheckpointChoice(
        path=str(checkpoints[best]),
        step=best,
        metric=metric,
        value=records[best][metric],
        metrics=records[best],
        candidates=[(step, records[step][metric]) for step in steps],
    )


def phase_selection_metric(config: TrainConfig, plan: PhasePlan) -> str | None:
    """The validation metric a phase selects its checkpoint by, or ``None``.

    Phase 1 of ``cpr-curriculum`` hands over by ``curriculum.selection_metric``; every other
    phase marks its ``best`` checkpoint by ``evaluation.selection_metric``. Nothing is selected
    without validation or saved checkpoints.
    """
    if not (config.evaluation.enabled and config.grpo.save):
        return None
    if plan.name == "phase1":
        return config.curriculum.selection_metric
    return config.evaluation.selection_metric


def write_best(
    run_dir: str | Path, choice: CheckpointChoice, *, extra: dict[str, Any] | None = None
) -> Path:
    """Record ``choice`` in ``run_dir``: :data:`BEST_FILE` and the :data:`BEST_LINK` link.

    Args:
        run_dir: The phase (or run) folder.
        choice: The selected checkpoint.
        extra: More fields for ``best.json`` (the post-hoc selector's metrics log and key).

    Returns:
        The ``best.json`` path.
    """
    run_dir = Path(run_dir)
    path = run_dir / BEST_FILE
    record = {**choice.model_dump(mode="json"), "split": "validation", **(extra or {})}
    atomic_write_text(path, json.dumps(record, indent=2) + "\n")
    link = run_dir / BEST_LINK
    if link.is_symlink() or link.is_file():
        link.unlink()
    target = Path(choice.path)
    try:
        link.symlink_to(target.name if target.parent == run_dir else target.resolve())
    except OSError:  # no links on this file system: say where it is instead
        atomic_write_text(link, str(target) + "\n")
    return path


def checkpoint_keeper(metric: str, keep_last: int) -> Any:
    """A ``TrainerCallback``: phase-1 rotation that never deletes the best validated checkpoint.

    On every save it keeps the last ``keep_last`` ``checkpoint-N`` folders plus the best one by
    :func:`select_best_checkpoint` on ``metric`` (nothing is deleted before a checkpoint has
    been validated).
    """
    from transformers import TrainerCallback

    class CheckpointKeeper(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            run_dir = Path(args.output_dir)
            folders = sorted(
                (p for p in run_dir.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()),
                key=lambda p: int(p.name.split("-")[-1]),
            )
            try:
                best = Path(select_best_checkpoint(run_dir, metric).path)
            except TrainingError:
                return
            keep = {best, *folders[-keep_last:]}
            for folder in folders:
                if folder not in keep:
                    shutil.rmtree(folder, ignore_errors=True)

    return CheckpointKeeper()
