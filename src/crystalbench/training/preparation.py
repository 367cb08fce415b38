"""Stage 1 of a run: the pool, its leakage check and the validation split.

:func:`prepare_data` loads the pool, proves it does not leak into the benchmark
(:func:`crystalbench.training.leakage.check_leakage`; refuse, drop or ignore as configured)
and splits off the validation items. Torch-free.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from crystalbench.data import Benchmark, load_benchmark
from crystalbench.errors import BenchmarkUnavailableError
from crystalbench.training.config import LeakageError, TrainConfig, TrainingError
from crystalbench.training.data import TrainingSplit, load_pool, split_validation
from crystalbench.training.leakage import LeakageReport, ProgressHook, check_leakage

__all__ = ["ProgressHook", "TrainingData", "prepare_data"]

# The logger keeps the name it had before the runner was split, so log filters keep working.
logger = logging.getLogger("crystalbench.training.runner")


@dataclass
class TrainingData:
    """The pool, its split and the leakage report a run trains on."""

    pool: Benchmark
    """Training pool after the leakage policy (image access for training rows)."""
    split: TrainingSplit
    """Training and validation items."""
    validation_images: Benchmark
    """Where validation images come from (the pool, or the separate validation set)."""
    leakage: LeakageReport | None
    """Leakage report (``None`` when the check was skipped)."""
    dropped: list[str] = dataclasses.field(default_factory=list)
    """Ids dropped as leaked (``on_leak: drop``)."""

    def record(self) -> dict[str, Any]:
        """Data provenance for ``crystal_train_run.json``."""
        report = self.leakage
        return {
            "pool": self.pool.name,
            "pool_fingerprint": self.pool.fingerprint,
            "n_train": len(self.split.train),
            "n_validation": len(self.split.validation),
            "validation_ids": [item.id for item in self.split.validation],
            "leakage": None
            if report is None
            else {
                "benchmark": report.benchmark,
                "benchmark_fingerprint": report.benchmark_fingerprint,
                "n_leaks": len(report.leaks),
                "n_image_only": report.n_image_only,
                "n_question_only": report.n_question_only,
                "dropped": self.dropped,
            },
        }


def prepare_data(config: TrainConfig, *, progress: ProgressHook | None = None) -> TrainingData:
    """Load the pool, run the leakage check, apply the leak policy and split validation.

    Raises:
        LeakageError: A training (or validation) item is a benchmark item and
            ``data.leakage.on_leak`` is ``refuse``.
        InputError / BenchmarkUnavailableError: The pool or the benchmark cannot be loaded.
    """
    spec = config.data
    with _named("data.train", spec.train):
        pool = load_pool(spec.train, split=spec.split, sources=spec.sources, limit=spec.limit)
    validation_set = None
    if spec.validation:
        with _named("data.validation", spec.validation):
            validation_set = load_pool(spec.validation)
    report: LeakageReport | None = None
    dropped: list[str] = []
    if spec.leakage.benchmark is not None:
        with _named("data.leakage.benchmark", spec.leakage.benchmark):
            benchmark = load_benchmark(spec.leakage.benchmark)
        checked = pool
        if validation_set is not None:
            checked = Benchmark(
                name=f"{pool.name}+{validation_set.name}",
                items=[*pool.items, *validation_set.items],
                image_loader=_combined_loader(pool, validation_set),
            )
        report = check_leakage(
            checked, benchmark, max_hamming=spec.leakage.max_hamming, progress=progress
        )
        if not report.clean:
            summary = (
                f"{len(report.leaks)} training item(s) duplicate benchmark items of "
                f"{report.benchmark} (e.g. {report.leaks[0].train_id} = "
                f"{report.leaks[0].benchmark_id}, {report.leaks[0].reason})"
            )
            if spec.leakage.on_leak == "refuse":
                raise LeakageError(
                    summary + ". Remove them (crystal data check-leakage lists them all), or set "
                    "data.leakage.on_leak to 'drop' or 'ignore'"
                )
            leaked = report.leaked_ids
            if spec.leakage.on_leak == "drop":
                dropped = sorted(leaked)
                pool = Benchmark(
                    name=pool.name,
                    items=[item for item in pool.items if item.id not in leaked],
                    image_loader=pool.image_loader,
                )
                if validation_set is not None:
                    validation_set = Benchmark(
                        name=validation_set.name,
                        items=[i for i in validation_set.items if i.id not in leaked],
                        image_loader=validation_set.image_loader,
                    )
                logger.warning("%s; dropped them", summary)
            else:
                logger.warning("%s; training on them anyway (on_leak: ignore)", summary)
    if validation_set is not None:
        split = TrainingSplit(train=list(pool.items), validation=list(validation_set.items))
        images = validation_set
    else:
        split = split_validation(
            pool.items,
            spec.validation_fraction,
            spec.validation_seed if spec.validation_seed is not None else config.seed,
        )
        images = pool
    if not split.train:
        raise TrainingError("no training items left")
    return TrainingData(
        pool=pool, split=split, validation_images=images, leakage=report, dropped=dropped
    )


@contextmanager
def _named(field: str, value: str) -> Iterator[None]:
    """A pool or benchmark the hub cannot give: one line naming the config field to change
    (the loaders' own advice names ``--benchmark``, an option ``crystal train`` does not
    have)."""
    try:
        yield
    except BenchmarkUnavailableError as exc:
        reason = str(exc).splitlines()[0]
        raise TrainingError(
            f"{field} {value!r}: {reason}. Set {field} to a local copy (a folder, .parquet or "
            f".jsonl file: --set {field}=PATH)"
            + (
                ", or to null with data.leakage.on_leak: ignore to train without the check"
                if field == "data.leakage.benchmark"
                else ""
            )
        ) from None


def _combined_loader(first: Benchmark, second: Benchmark) -> Callable[[Any], bytes | None]:
    ids = {item.id for item in second.items}

    def loader(item: Any) -> bytes | None:
        return second.image_bytes(item) if item.id in ids else first.image_bytes(item)

    return loader
