"""The prediction sets of a run: checked against the benchmark, then filled item by item.

A :class:`ScoredSet` is one set being scored: its predictions (those whose ids the benchmark
knows), the messages of what was skipped, where its records go (a
:class:`~crystalbench.scoring.results.ResultsWriter`, item by item as they come) and its running
aggregates. The engine (:meth:`~crystalbench.scoring.engine.ScoringEngine.run`) fills any
number of them in one pass over the benchmark.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from crystalbench.data.loading import Benchmark
from crystalbench.data.predictions import PredictionSet
from crystalbench.errors import InputError
from crystalbench.scoring.aggregate import Aggregator
from crystalbench.scoring.results import ResultsWriter
from crystalbench.types import ItemResult, Prediction

__all__ = ["ScoredSet", "as_prediction_set", "check_ids"]


def check_ids(
    benchmark: Benchmark, predictions: PredictionSet, lenient: bool
) -> tuple[dict[str, Prediction], list[str]]:
    """Split predictions into known ids and problems; unknown ids raise unless lenient.

    Returns:
        ``(known, problems)``: the predictions by id whose item the benchmark has, and one
        message (file, line, field) per unknown id skipped under ``lenient``.

    Raises:
        InputError: An id the benchmark does not know, without ``lenient``.
    """
    problems: list[str] = []
    known: dict[str, Prediction] = {}
    for pid, pred in predictions.by_id.items():
        if benchmark.get(pid) is not None:
            known[pid] = pred
            continue
        path, line = predictions.where.get(pid, (predictions.source, None))
        error = InputError(
            f"unknown item id {pid!r}; benchmark {benchmark.name} has ids like "
            f"{', '.join(repr(i) for i in benchmark.ids[:3])}",
            path=path,
            line=line,
            field="id",
        )
        if not lenient:
            raise error
        problems.append(str(error))
    return known, problems


def as_prediction_set(predictions: PredictionSet | Iterable[Prediction]) -> PredictionSet:
    """``predictions`` as a :class:`PredictionSet` (in-memory ones get source ``<memory>``).

    Raises:
        InputError: Two predictions share an id.

    Examples:
        >>> as_prediction_set([Prediction(id="1", answer="B")]).source
        '<memory>'
    """
    if isinstance(predictions, PredictionSet):
        return predictions
    by_id: dict[str, Prediction] = {}
    for pred in predictions:
        if pred.id in by_id:
            raise InputError(f"duplicate prediction id {pred.id!r}", field="id")
        by_id[pred.id] = pred
    return PredictionSet(source="<memory>", by_id=by_id)


@dataclass
class ScoredSet:
    """One prediction set of a run, and what scoring it has produced so far.

    Attributes:
        name: Its name (the results folder's, for several sets).
        predictions: The set as loaded.
        known: Its predictions whose ids the benchmark has, by id.
        unknown: Messages of the unknown ids skipped (``lenient``).
        writer: Where its records are written as they come; ``None``: not written.
        keep_items: Keep every record in :attr:`items` (off for huge runs on disk).
        aggregator: Its running macro-averages.
        items: Its records, in benchmark order (with ``keep_items``).
    """

    name: str
    predictions: PredictionSet
    known: dict[str, Prediction]
    unknown: list[str] = field(default_factory=list)
    writer: ResultsWriter | None = None
    keep_items: bool = True
    aggregator: Aggregator = field(default_factory=Aggregator)
    items: list[ItemResult] = field(default_factory=list)

    @classmethod
    def checked(
        cls,
        name: str,
        benchmark: Benchmark,
        predictions: PredictionSet | Iterable[Prediction],
        *,
        lenient: bool = False,
        writer: ResultsWriter | None = None,
        keep_items: bool = True,
    ) -> ScoredSet:
        """The set ``predictions`` checked against ``benchmark`` (:func:`check_ids`).

        Raises:
            InputError: Duplicate ids, or unknown ids without ``lenient``.
        """
        loaded = as_prediction_set(predictions)
        known, unknown = check_ids(benchmark, loaded, lenient)
        return cls(name, loaded, known, unknown, writer, keep_items)

    def add(self, result: ItemResult) -> None:
        """Take one record: aggregated, kept (with ``keep_items``) and written."""
        self.aggregator.add(result)
        if self.keep_items:
            self.items.append(result)
        if self.writer is not None:
            self.writer.write(result)

    @property
    def problems(self) -> list[str]:
        """Every record skipped: malformed records (``lenient``), then unknown ids."""
        return [*self.predictions.problems, *self.unknown]
