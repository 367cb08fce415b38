"""Scoring a prediction set against a benchmark: parse -> encode -> match -> score -> aggregate.

Scoring never calls the model that produced the predictions. :func:`evaluate` is the
one-set door of the scoring engine (:mod:`crystalbench.scoring`), the same engine
:func:`crystalbench.scoring.evaluation_many.evaluate_many` runs for several sets: each distinct step
string is encoded once per encoder (ever, thanks to the on-disk cache), in large
length-sorted batches; items are processed in chunks so memory stays bounded on huge runs.
Every item gets an :class:`~crystalbench.types.ItemResult` (with its matched pairs) before
anything is averaged. What is averaged, and from which per-item field, is
:mod:`crystalbench.metrics`; how the results folder is written is
:mod:`crystalbench.scoring.results`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.data.predictions import PredictionSet
from crystalbench.encoders import EmbeddingStore, Encoder
from crystalbench.scoring import (
    Aggregator,
    ProgressHook,
    RunResult,
    ScoredSet,
    ScoringEngine,
    as_prediction_set,
    check_ids,
)
from crystalbench.scoring.results import ResultsWriter
from crystalbench.types import Prediction

__all__ = [
    "Aggregator",
    "ProgressHook",
    "RunResult",
    "as_prediction_set",
    "check_ids",
    "evaluate",
]


def evaluate(
    benchmark: Benchmark,
    predictions: PredictionSet | Iterable[Prediction],
    config: ScoreConfig | None = None,
    *,
    encoder: Encoder | None = None,
    judge: Any = None,
    verifier: Any = None,
    store: EmbeddingStore | None = None,
    progress: ProgressHook | None = None,
    out_dir: str | Path | None = None,
    keep_items: bool = True,
) -> RunResult:
    """Score ``predictions`` on ``benchmark`` exactly as the CRYSTAL contract defines.

    Args:
        benchmark: From :func:`crystalbench.data.load_benchmark`.
        predictions: A :class:`PredictionSet` (from :func:`load_predictions`) or predictions.
        config: Scoring configuration; paper defaults when ``None``.
        encoder: Encoder to use instead of building ``config.encoder``.
        judge: Free-form answer judge instead of building ``config.judge``.
        verifier: Step verifier (a :class:`~crystalbench.judges.verifier.StepVerifier`)
            instead of building ``config.verifier``; used only when ``config.verify`` is not
            ``none`` (``ScoreConfig(verify="unmatched", verifier=VerifierConfig(...))``: the
            same options as ``crystal score --verify``).
        store: Embedding cache instead of the default one.
        progress: ``hook(stage, advance, total)`` for progress bars.
        out_dir: When given, ``examples.jsonl`` and ``summary.json`` are written there as
            one pair (:mod:`crystalbench.scoring.results`: a crash leaves the previous pair or the
            new one, never a mix); the returned summary then carries the ``run_id``.
        keep_items: Keep every :class:`ItemResult` in memory (set False for huge runs
            written to ``out_dir``: results then stream to disk).

    Returns:
        A :class:`RunResult` with one :class:`ItemResult` per benchmark item.

    Raises:
        InputError: Prediction ids unknown to the benchmark (unless ``config.lenient``), or
            another run is writing into ``out_dir``.

    Examples:
        >>> from crystalbench.data import load_benchmark
        >>> from crystalbench.config.scoring import ScoreConfig
        >>> bench = load_benchmark("sample")
        >>> item = bench.items[0]
        >>> perfect = [
        ...     Prediction(id=item.id, reasoning_steps=item.reference_steps, answer=item.answer)
        ... ]
        >>> run = evaluate(bench, perfect, ScoreConfig(encoder="hash", use_cache=False))
        >>> run.items[0].f1, run.summary.n_missing == len(bench) - 1
        (1.0, True)
    """
    config = config or ScoreConfig()
    predictions = as_prediction_set(predictions)
    engine = ScoringEngine(
        config, encoder=encoder, judge=judge, verifier=verifier, store=store, progress=progress
    )
    scored = ScoredSet.checked(
        "", benchmark, predictions, lenient=config.lenient, keep_items=keep_items
    )
    if out_dir is not None:
        scored.writer = ResultsWriter(out_dir)
    began = time.perf_counter()
    (run,) = engine.run(engine.subset(benchmark), [scored])
    run.timings = dict(engine.finish_timings(began))
    return run
