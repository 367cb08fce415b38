"""Phase-1 checkpoints: which one phase 2 starts from, and which ones rotation keeps.

Torch-free (the keeper callback imports transformers when it is built). Phase 1 is validated
with crystalbench scoring each time it saves (``validation.jsonl``, written by
:class:`~crystalbench.training.trainer.CrystalGRPOTrainer`); :func:`select_best_checkpoint`
picks the phase-1 checkpoint with the best validation score (never a benchmark test item:
validation is held out of the training pool) for the hand-over
(:func:`crystalbench.training.strategies.run_curriculum`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from crystalbench._internal.io import read_jsonl
from crystalbench.errors import UnknownNameError
from crystalbench.training.config import TrainingError
from crystalbench.types import Record

__all__ = ["SELECTION_METRICS", "CheckpointChoice", "checkpoint_keeper", "select_best_checkpoint"]

SELECTION_METRICS = ("accuracy", "format_rate", "cpr", "match_f1", "harmonic")
"""Validation metrics a phase-1 checkpoint can be selected on."""


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
    if metric not in SELECTION_METRICS:
        raise UnknownNameError("selection metric", metric, SELECTION_METRICS)
    run_dir = Path(run_dir)
    records: dict[int, dict[str, float]] = {}
    log = run_dir / "validation.jsonl"
    if log.is_file():
        for _, row in read_jsonl(log):
            records[int(row["step"])] = {k: float(v) for k, v in row["metrics"].items()}
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
        return (values[metric], values.get("format_rate", 0.0), -step)

    best = max(steps, key=key)
    return CheckpointChoice(
        path=str(checkpoints[best]),
        step=best,
        metric=metric,
        value=records[best][metric],
        metrics=records[best],
        candidates=[(step, records[step][metric]) for step in steps],
    )


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
