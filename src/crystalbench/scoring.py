"""Scoring a prediction set against a benchmark: parse -> encode -> match -> score -> aggregate.

Scoring never calls the model that produced the predictions. Each distinct step string
is encoded once per encoder (ever, thanks to the on-disk cache), in large
length-sorted batches; items are processed in chunks so memory stays bounded on huge
runs. Every item gets an :class:`~crystalbench.types.ItemResult` (with its matched
pairs) before anything is averaged. What is averaged, and from which per-item field, is
:mod:`crystalbench.metrics`; how the results folder is written is :mod:`crystalbench.results`.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench._version import __version__
from crystalbench.answers import score_answers
from crystalbench.compat.matching import (
    given_steps,
    keeps_blank_steps,
    match_rules,
    scores_alternative_chains,
)
from crystalbench.config import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.difficulty import assign_difficulty
from crystalbench.encoders import (
    CachingEncoder,
    EmbeddingStore,
    Encoder,
    load_encoder,
    preload_encoder,
)
from crystalbench.encoders.cache import EncodeStats
from crystalbench.errors import InputError
from crystalbench.matching import chain_fields, check_order_metric, cosine_matrix
from crystalbench.metrics import METRICS
from crystalbench.normalize.symbolic import remembered_values
from crystalbench.pairs import PairedAnswer, item_pair, summarize_pairs
from crystalbench.parsing import parse_prediction
from crystalbench.predictions import PredictionSet
from crystalbench.results import ResultsWriter
from crystalbench.settings import SCHEMA_VERSION, SCORE_CHUNK_ITEMS
from crystalbench.types import (
    DIFFICULTIES,
    AnswerVerdict,
    BenchmarkItem,
    ItemResult,
    MetricSummary,
    ParsedResponse,
    Prediction,
    RunSummary,
)

MAX_PROBLEMS_KEPT = 100

Work = tuple[BenchmarkItem, ParsedResponse | None]
"""One item and its parsed prediction (``None`` when the prediction is missing)."""

ProgressHook = Callable[[str, int, int | None], None]
"""``hook(stage, advance, total)``: stage is ``"encode"`` or ``"score"``."""


@dataclass
class RunResult:
    """What :func:`evaluate` returns: per-item results, the summary and encoder counters."""

    items: list[ItemResult]
    summary: RunSummary
    encode_stats: EncodeStats = field(default_factory=EncodeStats)
    timings: dict[str, float] = field(default_factory=dict)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``examples.jsonl`` and ``summary.json`` into ``out_dir``, as one pair.

        A crash at any moment leaves the folder's previous pair or this one, never a mix
        (see :mod:`crystalbench.results`). ``summary`` then carries the ``run_id`` and
        ``examples_sha256`` written with it.
        """
        out = Path(out_dir)
        with ResultsWriter(out, run_id=self.summary.run_id) as writer:
            for item in self.items:
                writer.write(item)
            self.summary = writer.commit(self.summary)
        return out


class Aggregator:
    """Accumulates the per-item numbers needed for macro-averages, overall and per group.

    Which per-item field each summary metric averages comes from
    :data:`crystalbench.metrics.METRICS`. Items split into scored (at least one step), no
    steps (parsed, but no step: an answer alone), missing and parse failed.
    """

    def __init__(self) -> None:
        self._fields = [(m.key, m.item_field, m.average == "share_true") for m in METRICS]
        self.values: dict[str, list[float]] = {m.key: [] for m in METRICS}
        self.missing: list[bool] = []
        self.parse_failed: list[bool] = []
        self.no_steps: list[bool] = []
        self.unscored: list[bool] = []
        self.multi_chain: list[bool] = []
        self.alt_chain_won: list[bool] = []
        self.paired: list[PairedAnswer] = []
        self.source: list[str] = []
        self.difficulty: list[str] = []

    def add(self, result: ItemResult) -> None:
        """Record one item's numbers."""
        for key, name, share_true in self._fields:
            value = getattr(result, name)
            self.values[key].append((value is True) if share_true else value)
        self.missing.append(result.missing)
        self.parse_failed.append(result.parse_failed)
        self.no_steps.append(result.no_steps)
        self.unscored.append(result.answer_correct is None and not result.missing)
        self.multi_chain.append(result.n_ref_chains > 1)
        self.alt_chain_won.append(result.ref_chain > 0)
        if result.pair is not None:
            self.paired.append((result.pair, result.pair_size, result.answer_correct is True))
        self.source.append(result.source)
        self.difficulty.append(result.difficulty)

    def _summary(self, mask: np.ndarray) -> MetricSummary:
        n = int(mask.sum())

        def count(flags: list[bool]) -> int:
            return int(np.asarray(flags, dtype=bool)[mask].sum())

        means = {
            key: float(np.asarray(values, dtype=np.float64)[mask].mean()) if n else 0.0
            for key, values in self.values.items()
        }
        missing, failed, no_steps = (
            count(self.missing),
            count(self.parse_failed),
            count(self.no_steps),
        )
        return MetricSummary(
            n_items=n,
            n_scored=n - missing - failed - no_steps,
            n_no_steps=no_steps,
            n_missing=missing,
            n_parse_failed=failed,
            n_judge_unscored=count(self.unscored),
            **means,
            n_multi_chain=count(self.multi_chain),
            n_alt_chain_won=count(self.alt_chain_won),
        )

    def summary(
        self,
        config: dict[str, Any],
        *,
        problems: Sequence[str] = (),
        n_unknown_ids: int = 0,
        n_invalid_records: int = 0,
    ) -> RunSummary:
        """The run summary: overall, by source (sorted) and by difficulty (easy -> hard)."""
        everything = np.ones(len(self.source), dtype=bool)
        overall = self._summary(everything)
        sources = np.asarray(self.source)
        tiers = np.asarray(self.difficulty)
        by_source = {s: self._summary(sources == s) for s in sorted(set(self.source))}
        by_difficulty = {
            d: self._summary(tiers == d) for d in DIFFICULTIES if d in set(self.difficulty)
        }
        return RunSummary(
            **overall.model_dump(),
            by_source=by_source,
            by_difficulty=by_difficulty,
            pairs=summarize_pairs(self.paired),
            n_unknown_ids=n_unknown_ids,
            n_invalid_records=n_invalid_records,
            problems=list(problems)[:MAX_PROBLEMS_KEPT],
            config=config,
        )


def _non_blank(steps: Sequence[str]) -> tuple[list[str], int]:
    kept = [s for s in steps if s.strip()]
    return kept, len(steps) - len(kept)


class Scorer:
    """Scores predictions against a benchmark with one configuration.

    Configure once, then call :meth:`iter_results` / :func:`evaluate` with data.

    Args:
        config: Scoring configuration (paper defaults).
        encoder: The sentence encoder; built from ``config.encoder`` when ``None``.
        judge: Judge for free-form answers; built from ``config.judge`` when ``None``.
        store: Embedding cache; the default store when ``config.use_cache``.
        progress: Optional progress hook.
        step_judge: The judge matcher's :class:`~crystalbench.judges.step_judge.StepJudge` when
            ``config.matcher == "judge"``; built from ``config.matcher_judge`` when ``None``.
    """

    def __init__(
        self,
        config: ScoreConfig | None = None,
        *,
        encoder: Encoder | None = None,
        judge: Any = None,
        store: EmbeddingStore | None = None,
        progress: ProgressHook | None = None,
        step_judge: Any = None,
    ) -> None:
        self.config = config or ScoreConfig()
        self.encoder = encoder or load_encoder(self.config.encoder, **self.config.encoder_options())
        preload_encoder(self.encoder)  # loads beside the parsing below; a no-op when loaded
        if store is None and self.config.use_cache:
            store = EmbeddingStore.default(self.config.cache_dir)
        self.store = store
        self.progress = progress
        self.front = CachingEncoder(
            self.encoder,
            store,
            progress=(lambda n: progress("encode", n, None)) if progress else None,
        )
        if judge is None and self.config.judge is not None:
            from crystalbench.judges import OpenAIJudge

            judge = OpenAIJudge.from_config(self.config.judge, cache_dir=self.config.cache_dir)
        self.judge = judge
        self.rules = match_rules(self.config.compat, tau=self.config.threshold)
        self.matcher: Any = None  # the judge matcher; None: the paper's cosine threshold
        if self.config.matcher == "judge":
            from crystalbench.judges.step_judge import JudgeMatcher

            self.matcher = JudgeMatcher.from_config(self.config, step_judge)
            self.rules = self.matcher.rules(self.rules)
        self.keep_blank_steps = keeps_blank_steps(self.config.compat)
        self.alternative_chains = scores_alternative_chains(self.config.compat)
        check_order_metric(self.config.order_metric)
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ helpers
    def _tick(self, name: str, started: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - started

    def config_record(
        self, benchmark: Benchmark, predictions: PredictionSet | None
    ) -> dict[str, Any]:
        """The provenance block written into ``summary.json``."""
        record = self.config.record()
        record.update(
            {
                "schema_version": SCHEMA_VERSION,
                "package_version": __version__,
                "encoder_identity": self.encoder.identity,
                "benchmark": benchmark.name,
                "benchmark_fingerprint": benchmark.fingerprint,
                "benchmark_items": len(benchmark),
                "predictions": predictions.source if predictions is not None else None,
                "model": predictions.model if predictions is not None else None,
                "judge": _judge_record(self.judge),
                **({"matcher_identity": self.matcher.info()} if self.matcher else {}),
                "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            }
        )
        return record

    def _verdicts(self, work: Sequence[Work]) -> list[AnswerVerdict]:
        """Answer verdicts for a chunk; judge calls (if any) go out together, concurrently."""
        compat = None if self.config.answer_rules == "paper" else self.config.answer_rules
        answers = [parsed.answer if parsed is not None else None for _, parsed in work]
        workers = self.config.judge.concurrency if self.config.judge is not None else 8
        with remembered_values(self.store):  # math-verify's readings, kept in the cache
            return score_answers(
                answers,
                [item for item, _ in work],
                judge=self.judge,
                compat=compat,
                max_workers=workers,
            )

    # ------------------------------------------------------------------ scoring
    def _predicted_steps(
        self, pred: Prediction | None, parsed: ParsedResponse | None
    ) -> tuple[list[str], int]:
        """The predicted steps to score and how many blank ones were dropped.

        Paper mode scores the parsed steps; blank ones are dropped and counted (the parser
        already dropped those of a structured prediction, counted here from the record).
        Compat mode scores a structured prediction's steps exactly as given, blank ones
        included, as crystal-metrics 0.2.0 does (:mod:`crystalbench.compat.matching`).
        """
        if parsed is None:
            return [], 0
        given = pred.reasoning_steps if pred is not None else None
        if given is not None and self.keep_blank_steps:
            return given_steps(given), 0
        steps, blank = _non_blank(parsed.steps)
        if given:
            blank += sum(1 for s in given if not s.strip())
        return steps, blank

    def _score(
        self,
        item: BenchmarkItem,
        parsed: ParsedResponse | None,
        pred_steps: list[str],
        pred_blank: int,
        matrix: np.ndarray,
        rows: dict[str, int],
        verdict: AnswerVerdict,
    ) -> ItemResult:
        """Score one item; its step vectors are rows of ``matrix`` (``rows`` maps text -> row)."""
        pred = matrix[[rows[s] for s in pred_steps]]
        chains = self._reference_chains(item)
        best: tuple[int, list[str], int, dict[str, Any]] | None = None
        for index, steps in enumerate(chains):
            ref_steps, ref_blank = _non_blank(steps)
            ref = matrix[[rows[s] for s in ref_steps]]
            similarity = cosine_matrix(pred, ref, self.rules)
            if self.matcher is not None:
                similarity = self.matcher.candidates(similarity, pred_steps, ref_steps)
            chain = chain_fields(
                similarity,
                rules=self.rules,
                alpha=self.config.alpha,
                order_metric=self.config.order_metric,
            )
            # Strictly better only: a tie keeps the lower index (the primary first).
            if best is None or (chain["f1"], chain["ordered_f1"]) > (
                best[3]["f1"],
                best[3]["ordered_f1"],
            ):
                best = (index, ref_steps, ref_blank, chain)
        assert best is not None  # there is always the primary chain
        index, ref_steps, ref_blank, chain = best
        pair, pair_size = item_pair(item)
        return ItemResult(
            id=item.id,
            source=item.source,
            difficulty=assign_difficulty(item, self.config.difficulty),
            missing=parsed is None,
            parse_status="missing" if parsed is None else parsed.status,
            n_blank_dropped=ref_blank + pred_blank,
            **chain,
            answer_correct=verdict.correct,
            answer_rule=verdict.rule,
            answer_type=verdict.answer_type,
            pred_answer=parsed.answer if parsed is not None else None,
            gold_answer=item.answer,
            pred_steps=pred_steps,
            ref_steps=ref_steps,
            ref_chain=index,
            n_ref_chains=len(chains),
            pair=pair,
            pair_size=pair_size,
        )

    def _reference_chains(self, item: BenchmarkItem) -> list[list[str]]:
        """The chains an item is scored against: all of them, or the primary in compat mode."""
        if not self.alternative_chains or not item.reference_chains:
            return [item.reference_steps]
        return item.all_reference_chains

    def _prepare(
        self, items: Sequence[BenchmarkItem], predictions: dict[str, Prediction]
    ) -> tuple[list[Work], list[tuple[list[str], int]]]:
        """Parse each item's prediction (``None`` when missing) and pick the steps to score.

        Returns ``(work, steps)``: ``(item, parsed)`` and ``(predicted steps, blank dropped)``
        per item, in the order of ``items``.
        """
        work: list[Work] = []
        steps: list[tuple[list[str], int]] = []
        for item in items:
            pred = predictions.get(item.id)
            parsed = None
            if pred is not None and not _is_empty_prediction(pred):
                parsed = parse_prediction(pred)
            work.append((item, parsed))
            steps.append(self._predicted_steps(pred, parsed))
        return work, steps

    def iter_results(
        self,
        items: Sequence[BenchmarkItem],
        predictions: dict[str, Prediction],
        *,
        chunk_items: int = SCORE_CHUNK_ITEMS,
    ) -> Iterator[ItemResult]:
        """Yield one :class:`ItemResult` per item, in benchmark order, chunk by chunk.

        Each chunk's distinct step texts are embedded at once (cache first, then the
        encoder in length-sorted batches) into one matrix; items then index its rows.
        """
        for start in range(0, len(items), chunk_items):
            chunk = items[start : start + chunk_items]
            began = time.perf_counter()
            work, steps = self._prepare(chunk, predictions)
            self._tick("parse", began)
            texts = _step_texts(work, steps, self._reference_chains)
            began = time.perf_counter()
            unique = list(dict.fromkeys(texts))
            matrix = self.front.lookup_matrix(unique)
            rows = {text: k for k, text in enumerate(unique)}
            self._tick("embed", began)
            began = time.perf_counter()
            verdicts = self._verdicts(work)
            self._tick("answers", began)
            if self.matcher is not None:
                self.matcher.prepare(work, steps, self._tick, self._reference_chains)
            scored = 0.0
            for (item, parsed), (pred_steps, blank), verdict in zip(
                work, steps, verdicts, strict=True
            ):
                began = time.perf_counter()
                result = self._score(item, parsed, pred_steps, blank, matrix, rows, verdict)
                scored += time.perf_counter() - began
                if self.progress:
                    self.progress("score", 1, len(items))
                yield result
            self.timings["score"] = self.timings.get("score", 0.0) + scored


def _step_texts(
    work: Sequence[Work],
    steps: Sequence[tuple[list[str], int]],
    chains: Callable[[BenchmarkItem], list[list[str]]],
) -> list[str]:
    """Every step text the items need embedded: non-blank references (of every chain the
    item is scored against), then predicted steps. The caller encodes each distinct one once."""
    texts: list[str] = []
    for (item, _), (pred_steps, _) in zip(work, steps, strict=True):
        for chain in chains(item):
            texts.extend(s for s in chain if s.strip())
        texts.extend(pred_steps)
    return texts


def _stack_rows(vectors: list[np.ndarray]) -> np.ndarray:
    """One ``(n, dim)`` float32 matrix from row vectors (``(0, 0)`` when there are none)."""
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack(vectors).astype(np.float32, copy=False)


def _judge_record(judge: Any) -> dict[str, Any] | None:
    """Model, URL and prompt hash of the judge, for provenance."""
    if judge is None:
        return None
    identity = getattr(judge, "identity", None)
    dump = getattr(identity, "model_dump", None)
    if dump is not None:
        return dict(dump(mode="json"))
    return {"identity": str(identity)}


def _is_empty_prediction(pred: Prediction) -> bool:
    """A record that carries nothing at all (e.g. an inference error): treated as missing."""
    return pred.reasoning_steps is None and pred.answer is None and pred.response is None


def check_ids(
    benchmark: Benchmark, predictions: PredictionSet, lenient: bool
) -> tuple[dict[str, Prediction], list[str]]:
    """Split predictions into known ids and problems; unknown ids raise unless lenient."""
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
    """
    if isinstance(predictions, PredictionSet):
        return predictions
    by_id: dict[str, Prediction] = {}
    for pred in predictions:
        if pred.id in by_id:
            raise InputError(f"duplicate prediction id {pred.id!r}", field="id")
        by_id[pred.id] = pred
    return PredictionSet(source="<memory>", by_id=by_id)


def run_summary(
    scorer: Scorer,
    aggregator: Aggregator,
    subset: Benchmark,
    predictions: PredictionSet,
    unknown: Sequence[str],
) -> RunSummary:
    """The summary of one prediction set: its aggregates, provenance and skipped records.

    ``unknown`` holds the messages of the unknown ids skipped under ``lenient``.
    """
    return aggregator.summary(
        scorer.config_record(subset, predictions),
        problems=[*predictions.problems, *unknown],
        n_unknown_ids=len(unknown),
        n_invalid_records=len(predictions.problems),
    )


def evaluate(
    benchmark: Benchmark,
    predictions: PredictionSet | Iterable[Prediction],
    config: ScoreConfig | None = None,
    *,
    encoder: Encoder | None = None,
    judge: Any = None,
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
        store: Embedding cache instead of the default one.
        progress: ``hook(stage, advance, total)`` for progress bars.
        out_dir: When given, ``examples.jsonl`` and ``summary.json`` are written there as
            one pair (:mod:`crystalbench.results`: a crash leaves the previous pair or the
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
        >>> from crystalbench.config import ScoreConfig
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
    scorer = Scorer(config, encoder=encoder, judge=judge, store=store, progress=progress)
    subset = config.select(benchmark)
    known, problems = check_ids(benchmark, predictions, config.lenient)
    aggregator = Aggregator()
    results: list[ItemResult] = []
    writer = ResultsWriter(out_dir) if out_dir is not None else None
    began = time.perf_counter()
    try:
        written = 0.0
        for result in scorer.iter_results(subset.items, known):
            started = time.perf_counter()
            aggregator.add(result)
            if keep_items:
                results.append(result)
            if writer is not None:
                writer.write(result)
            written += time.perf_counter() - started
        summary = run_summary(scorer, aggregator, subset, predictions, problems)
        if writer is not None:
            started = time.perf_counter()
            summary = writer.commit(summary)
            written += time.perf_counter() - started
        scorer.timings["write"] = written
    finally:
        if writer is not None:
            writer.abort()  # a no-op after the commit; otherwise keeps the previous pair
    timings = dict(
        scorer.timings,
        total=time.perf_counter() - began,
        encode_forward=scorer.front.stats.encode_seconds,
    )
    return RunResult(
        items=results, summary=summary, encode_stats=scorer.front.stats, timings=timings
    )
