"""CPR-Curriculum: easy-to-hard ordering, a sampler for TRL, and the phase hand-over.

**Order.** Phase 2 sees items from fewer to more reference steps
(:func:`reference_step_count`). Items with the same count are ordered by a seeded hash of
their id (``tie_break="hash"``, which mixes sources deterministically) or by the id itself
(``tie_break="id"``). Two pacings:

- ``one_pass``: the whole pool once per epoch in that order (:func:`curriculum_order`);
- ``staged``: the ordered pool is cut into ``stages`` buckets by step count (equal counts
  never straddle two buckets); stage ``k`` is a seeded shuffle of buckets ``1..k``, so the
  pool widens towards longer chains and shorter ones are revisited ("baby steps",
  :func:`staged_schedule`).

**Sampler.** ``GRPOTrainer`` draws prompts through a sampler with a fixed contract (TRL's
``RepeatSampler``): each index is yielded ``num_generations`` times in a row, prompts come in
chunks of ``generation_batch_size // num_generations`` (an incomplete last chunk is dropped)
and each chunk is repeated ``num_iterations * steps_per_generation`` times.
:class:`CurriculumSampler` keeps that contract over a precomputed schedule, so every rank
draws the same prompts in the same order.

**Hand-over** (:func:`run_curriculum`). Phase 1 trains with format + answer rewards and is
validated with crystalbench scoring each time it saves; the phase-1 checkpoint with the best
validation score (never a benchmark test item: validation is held out of the training pool)
is loaded as *weights only* into phase 2, which trains with full CPR at a lower learning
rate with a fresh optimizer and scheduler (a new trainer, not ``resume_from_checkpoint``),
on the ordered pool.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torch.utils.data import Sampler

from crystalbench.errors import UnknownNameError
from crystalbench.io import atomic_write_json, read_jsonl
from crystalbench.training.config import TrainConfig, TrainingError, phase_plans
from crystalbench.training.data import reference_step_count
from crystalbench.types import BenchmarkItem, Record

if TYPE_CHECKING:
    from crystalbench.training.runner import PhaseResult, TrainingData

__all__ = [
    "CheckpointChoice",
    "CurriculumResult",
    "CurriculumSampler",
    "curriculum_order",
    "curriculum_schedule",
    "run_curriculum",
    "select_best_checkpoint",
    "stage_buckets",
    "staged_schedule",
]

SELECTION_METRICS = ("accuracy", "format_rate", "cpr", "match_f1", "harmonic")


def _tie_key(item: BenchmarkItem, tie_break: str, seed: int) -> str:
    if tie_break == "id":
        return item.id
    if tie_break == "hash":
        return hashlib.sha256(f"{seed}:{item.id}".encode()).hexdigest()
    raise UnknownNameError("tie break", tie_break, ("hash", "id"))


def curriculum_order(
    items: Sequence[BenchmarkItem], *, tie_break: str = "hash", seed: int = 0
) -> list[int]:
    """Indices of ``items`` from fewer to more reference steps (deterministic tie-break).

    Examples:
        >>> def item(i, n):
        ...     return BenchmarkItem(id=str(i), source="x", question="?", answer="a",
        ...                          reference_steps=["s"] * n)
        >>> items = [item(0, 3), item(1, 1), item(2, 2), item(3, 1)]
        >>> curriculum_order(items, tie_break="id")
        [1, 3, 2, 0]
    """
    keyed = [
        (reference_step_count(item), _tie_key(item, tie_break, seed), index)
        for index, item in enumerate(items)
    ]
    return [index for _, _, index in sorted(keyed)]


def stage_buckets(
    items: Sequence[BenchmarkItem], stages: int, order: Sequence[int]
) -> list[list[int]]:
    """Cut an easy-to-hard ``order`` into at most ``stages`` buckets of similar size.

    Each bucket takes its share of the items still unassigned (``remaining / stages left``),
    and its end moves forward to the next change of step count, so items with equal step
    counts share a bucket (there are fewer buckets when there are fewer distinct counts).

    Examples:
        >>> def item(n):
        ...     return BenchmarkItem(id=str(n), source="x", question="?", answer="a",
        ...                          reference_steps=["s"] * n)
        >>> items = [item(n) for n in (1, 1, 1, 2, 3, 4)]
        >>> stage_buckets(items, 2, range(6))
        [[0, 1, 2], [3, 4, 5]]
        >>> stage_buckets(items, 3, range(6))
        [[0, 1, 2], [3, 4], [5]]
    """
    order = list(order)
    counts = [reference_step_count(items[i]) for i in order]
    n = len(order)
    buckets: list[list[int]] = []
    start = 0
    for k in range(1, stages + 1):
        end = n if k == stages else start + max(1, round((n - start) / (stages - k + 1)))
        while 0 < end < n and counts[end] == counts[end - 1]:
            end += 1
        if end > start:
            buckets.append(order[start:end])
            start = end
        if start >= n:
            break
    return buckets


def staged_schedule(
    items: Sequence[BenchmarkItem], stages: int, *, tie_break: str = "hash", seed: int = 0
) -> list[int]:
    """Baby-steps schedule: stage ``k`` is a seeded shuffle of buckets ``1..k``.

    Examples:
        >>> def item(i, n):
        ...     return BenchmarkItem(id=str(i), source="x", question="?", answer="a",
        ...                          reference_steps=["s"] * n)
        >>> items = [item(i, n) for i, n in enumerate((5, 1, 3, 1))]
        >>> schedule = staged_schedule(items, 2, tie_break="id")
        >>> sorted(schedule[:2]), sorted(schedule[2:])
        ([1, 3], [0, 1, 2, 3])
    """
    buckets = stage_buckets(items, stages, curriculum_order(items, tie_break=tie_break, seed=seed))
    schedule: list[int] = []
    pool: list[int] = []
    for k, bucket in enumerate(buckets):
        pool = pool + bucket
        stage = list(pool)
        random.Random(f"crystal-curriculum:{seed}:{k}").shuffle(stage)
        schedule.extend(stage)
    return schedule


def curriculum_schedule(
    items: Sequence[BenchmarkItem],
    pacing: str,
    *,
    stages: int = 3,
    tie_break: str = "hash",
    seed: int = 0,
) -> list[int]:
    """The index schedule of one epoch for a pacing (``one_pass`` or ``staged``).

    Raises:
        UnknownNameError: Unknown pacing.
    """
    if pacing == "one_pass":
        return curriculum_order(items, tie_break=tie_break, seed=seed)
    if pacing == "staged":
        return staged_schedule(items, stages, tie_break=tie_break, seed=seed)
    raise UnknownNameError("curriculum pacing", pacing, ("one_pass", "staged"))


class CurriculumSampler(Sampler[int]):
    """TRL's ``RepeatSampler`` contract over a fixed schedule of dataset indices.

    Args:
        schedule: Dataset indices in the order prompts should be drawn (may repeat).
        mini_repeat_count: Consecutive repeats of each index (``num_generations``).
        batch_size: Prompts per chunk (``generation_batch_size // num_generations``).
        repeat_count: Repeats of each chunk (``num_iterations * steps_per_generation``).

    Examples:
        >>> list(CurriculumSampler([2, 0, 1], mini_repeat_count=2, batch_size=1, repeat_count=2))
        [2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1]
        >>> list(CurriculumSampler([2, 0, 1], mini_repeat_count=1, batch_size=2))  # 1 dropped
        [2, 0]
    """

    def __init__(
        self,
        schedule: Sequence[int],
        mini_repeat_count: int,
        batch_size: int = 1,
        repeat_count: int = 1,
    ) -> None:
        if mini_repeat_count < 1 or batch_size < 1 or repeat_count < 1:
            raise ValueError("repeat counts and batch size must be positive")
        self.schedule = list(schedule)
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count

    def __iter__(self) -> Iterator[int]:
        full = len(self.schedule) // self.batch_size * self.batch_size
        for start in range(0, full, self.batch_size):
            chunk = self.schedule[start : start + self.batch_size]
            for _ in range(self.repeat_count):
                for index in chunk:
                    for _ in range(self.mini_repeat_count):
                        yield index

    def __len__(self) -> int:
        return (
            len(self.schedule)
            // self.batch_size
            * self.batch_size
            * self.mini_repeat_count
            * self.repeat_count
        )


# ---------------------------------------------------------------------------------------------
# Checkpoint selection and hand-over
# ---------------------------------------------------------------------------------------------


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
            :func:`crystalbench.training.runner.prepare_data`).
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
    from crystalbench.training.runner import release, train_phase

    if config.strategy != "cpr-curriculum":
        raise TrainingError(
            f"run_curriculum needs strategy cpr-curriculum, not {config.strategy!r}"
        )
    if phases not in ("all", "phase1", "phase2"):
        raise UnknownNameError("curriculum phase", phases, ("all", "phase1", "phase2"))
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
    from accelerate import PartialState

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
