"""The scoring engine: any number of prediction sets against one benchmark, in one pass.

One model's run is the case of one set. The engine is configured once (a
:class:`~crystalbench.config.scoring.ScoreConfig`: encoder, cache, judges, matcher, rules); a run
then goes:

1. every set's predictions are parsed (:meth:`ItemScorer.prepare
   <crystalbench.scoring.items.ItemScorer.prepare>`; the reference chains of an item are
   prepared once for all sets);
2. the benchmark is walked in chunks (``chunk_items`` items of all sets together). Each
   chunk's step texts, of every set (references once, then each distinct predicted step
   once), go through one :class:`~crystalbench.encoders.CachingEncoder` lookup into one
   matrix: the cache first, then the encoder for the misses, in length-sorted batches. A
   text that a later chunk needs again is held in memory until its last chunk, so the
   encoder sees each distinct text once in the whole run, with or without the on-disk
   cache;
   with an answer extractor (``config.extractor``), the items no answer rule committed on
   are then asked of the model, set by set (:mod:`crystalbench.scoring.extract`);
3. per chunk and set: the answers are checked (judge calls, if any, go out together),
   each candidate filter prepares the chunk (the judge matcher asks its questions), then
   every item is scored by the set's :class:`~crystalbench.scoring.items.ItemScorer`;
4. each record goes to its set (:class:`~crystalbench.scoring.sets.ScoredSet`): aggregated,
   kept, and written to its results folder as it comes; each set's summary is then
   committed with its records as one pair (:mod:`crystalbench.scoring.results`).

Every set is scored exactly as it would be alone: same records, same summary.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crystalbench._version import __version__
from crystalbench.answers import score_answers
from crystalbench.config.scoring import ScoreConfig
from crystalbench.config.settings import SCHEMA_VERSION, SCORE_CHUNK_ITEMS
from crystalbench.data.loading import Benchmark
from crystalbench.data.predictions import PredictionSet
from crystalbench.encoders import (
    CachingEncoder,
    EmbeddingStore,
    Encoder,
    load_encoder,
    preload_encoder,
)
from crystalbench.encoders.cache import EncodeStats
from crystalbench.normalize.symbolic import remembered_values
from crystalbench.scoring.compat import match_rules
from crystalbench.scoring.items import (
    CandidateFilter,
    ItemScorer,
    PreparedItem,
    ReferenceChain,
    StepVectors,
)
from crystalbench.scoring.results import ResultsWriter, predictions_sha256
from crystalbench.scoring.sets import ScoredSet
from crystalbench.types import (
    AnswerVerdict,
    BenchmarkItem,
    ItemResult,
    ParsedResponse,
    Prediction,
    RunSummary,
)

__all__ = ["ProgressHook", "RunResult", "ScoringEngine", "recurring_texts"]

ProgressHook = Callable[[str, int, int | None], None]
"""``hook(stage, advance, total)``: stage is ``"parse"``, ``"encode"`` or ``"score"``."""


@dataclass
class RunResult:
    """One prediction set's run: per-item results, the summary and the encoder counters."""

    items: list[ItemResult]
    summary: RunSummary
    encode_stats: EncodeStats = field(default_factory=EncodeStats)
    timings: dict[str, float] = field(default_factory=dict)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``examples.jsonl`` and ``summary.json`` into ``out_dir``, as one pair.

        A crash at any moment leaves the folder's previous pair or this one, never a mix
        (see :mod:`crystalbench.scoring.results`). ``summary`` then carries the ``run_id`` and
        ``examples_sha256`` written with it.
        """
        out = Path(out_dir)
        with ResultsWriter(out, run_id=self.summary.run_id) as writer:
            for item in self.items:
                writer.write(item)
            self.summary = writer.commit(self.summary)
        return out


class ScoringEngine:
    """Scores prediction sets against a benchmark with one configuration.

    Configure once, then :meth:`run` sets (or :meth:`iter_results` for one set's records
    as they come).

    Args:
        config: Scoring configuration (paper defaults).
        encoder: The sentence encoder; built from ``config.encoder`` and
            ``config.encoder_options()`` when ``None``.
        judge: Judge for free-form answers; built from ``config.judge`` when ``None``.
        store: Embedding cache; the default store when ``config.use_cache``.
        progress: Optional progress hook (stages ``parse``, ``encode``, ``score``).
        step_judge: The judge matcher's :class:`~crystalbench.judges.step_judge.StepJudge`
            when ``config.matcher == "judge"``; built from ``config.matcher_judge`` when
            ``None``.
        verifier: The step verifier's model when ``config.verify`` is not ``none``
            (:mod:`crystalbench.scoring.verify`); built from ``config.verifier`` when ``None``.
        extractor: The answer extractor
            (:class:`~crystalbench.judges.extractor.AnswerExtractor`) asked where no answer
            rule committed (:mod:`crystalbench.scoring.extract`); built from
            ``config.extractor`` when ``None``. ``None`` with no ``config.extractor``: rules
            only (the default).

    Examples:
        >>> from crystalbench.data import load_benchmark
        >>> bench = load_benchmark("sample")
        >>> item = bench.items[0]
        >>> engine = ScoringEngine(ScoreConfig(encoder="hash", use_cache=False))
        >>> perfect = {item.id: Prediction(id=item.id, reasoning_steps=item.reference_steps)}
        >>> [r.f1 for r in engine.iter_results([item], perfect)]
        [1.0]
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
        verifier: Any = None,
        extractor: Any = None,
    ) -> None:
        self.config = config = config or ScoreConfig()
        self.encoder = encoder or load_encoder(config.encoder, **config.encoder_options())
        preload_encoder(self.encoder)  # loads beside the parsing below; a no-op when loaded
        if store is None and config.use_cache:
            store = EmbeddingStore.default(config.cache_dir)
        self.store = store
        self.progress = progress
        self._encode_total: int | None = None
        """Step texts the current :meth:`iter_scored` looks up, chunk by chunk: the total
        of the ``encode`` progress bar (each is encoded, or found in memory or the cache)."""
        self.encoder_cache = CachingEncoder(
            self.encoder, store, progress=self._encoded if progress else None
        )
        if judge is None and config.judge is not None:
            from crystalbench.judges import OpenAIJudge

            judge = OpenAIJudge.from_config(config.judge, cache_dir=config.cache_dir)
        self.judge = judge
        self.rules = match_rules(config.compat, tau=config.threshold)
        self.step_judge: Any = None  # the judge matcher's judge; None: the paper's cosine
        if config.matcher == "judge":
            from crystalbench.judges.step_judge import JudgeMatcher, OpenAIStepJudge

            if step_judge is None:
                assert config.matcher_judge is not None  # the config checks it
                step_judge = OpenAIStepJudge.from_config(
                    config.matcher_judge, cache_dir=config.cache_dir, use_cache=config.use_cache
                )
            self.step_judge = step_judge
            self.rules = JudgeMatcher.rules(self.rules)
        self.verification: Any = None  # the step verifier, a post-matching step; None: the paper
        if config.verify != "none":
            from crystalbench.scoring.verify import Verification

            self.verification = Verification.from_config(config, verifier)
        self.extraction: Any = None  # the model-based answer extractor; None: rules only
        if extractor is not None or config.extractor is not None:
            from crystalbench.scoring.extract import Extraction

            self.extraction = Extraction.from_config(config, extractor)
        self.scorer = self.item_scorer()
        """The item scorer of :meth:`iter_results` (and the default of the records)."""
        self.timings: dict[str, float] = {}

    def _encoded(self, count: int) -> None:
        """The encoder's progress: ``count`` texts just encoded, out of the run's total."""
        if self.progress is not None:
            self.progress("encode", count, self._encode_total)

    # ------------------------------------------------------------------ building blocks
    def item_scorer(self) -> ItemScorer:
        """A new per-item scorer with this configuration, and candidate filters of its own
        (one per prediction set: a filter counts what it did for its set)."""
        return ItemScorer(
            self.rules,
            alpha=self.config.alpha,
            order_metric=self.config.order_metric,
            difficulty=self.config.difficulty,
            compat=self.config.compat,
            filters=self.candidate_filters(),
        )

    def candidate_filters(self) -> list[CandidateFilter]:
        """New candidate filters for one prediction set: the judge matcher, when used, then
        the fact guard, when used (it reads the pairs the judge left)."""
        filters: list[CandidateFilter] = []
        if self.step_judge is not None:
            from crystalbench.judges.step_judge import JudgeMatcher

            filters.append(JudgeMatcher(self.step_judge))
        if self.config.guard != "none":
            from crystalbench.scoring.filters.guard.candidates import GuardFilter

            filters.append(GuardFilter(self.config.guard, store=self.store))
        return filters

    def subset(self, benchmark: Benchmark) -> Benchmark:
        """The items of ``benchmark`` this configuration scores (``config.sources``,
        ``config.ids``, ``config.limit``; ``benchmark`` itself when none is set).

        Raises:
            InputError / UnknownNameError: An unknown source or id (naming the valid ones).

        Examples:
            >>> from crystalbench.data import load_benchmark
            >>> bench = load_benchmark("sample")
            >>> engine = ScoringEngine(ScoreConfig(encoder="hash", sources=["mmvp"], limit=3))
            >>> len(engine.subset(bench))
            3
        """
        config = self.config
        if config.sources is None and config.ids is None and config.limit is None:
            return benchmark
        return benchmark.subset(sources=config.sources, ids=config.ids, limit=config.limit)

    def tick(self, name: str, started: float) -> None:
        """Add the seconds since ``started`` (``time.perf_counter``) to stage ``name``."""
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - started

    def verdicts(self, batch: Sequence[PreparedItem]) -> list[AnswerVerdict]:
        """Answer verdicts for a chunk; judge calls (if any) go out together, concurrently."""
        config = self.config
        compat = None if config.answer_rules == "paper" else config.answer_rules
        answers = [_answer_for_rules(p.parsed, compat) for p in batch]
        workers = config.judge.concurrency if config.judge is not None else 8
        with remembered_values(self.store):  # math-verify's readings, kept in the cache
            return score_answers(
                answers,
                [p.item for p in batch],
                judge=self.judge,
                compat=compat,
                max_workers=workers,
            )

    def config_record(
        self,
        benchmark: Benchmark,
        predictions: PredictionSet | None,
        scorer: ItemScorer | None = None,
    ) -> dict[str, Any]:
        """The provenance block written into ``summary.json`` (``scorer``: the set's, whose
        candidate filters add what decided their choices)."""
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
                "predictions_sha256": (
                    predictions_sha256(predictions.source) if predictions is not None else None
                ),
                "model": predictions.model if predictions is not None else None,
                "judge": _judge_record(self.judge),
                "answer_extraction": "rules" if self.extraction is None else "rules+model",
            }
        )
        for candidate_filter in (scorer or self.scorer).filters:
            record.update(candidate_filter.record())
        record["created_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return record

    def summary(self, benchmark: Benchmark, scored: ScoredSet, scorer: ItemScorer) -> RunSummary:
        """The summary of one set: its aggregates, provenance and skipped records."""
        summary = scored.aggregator.summary(
            self.config_record(benchmark, scored.predictions, scorer),
            problems=scored.problems,
            n_unknown_ids=len(scored.unknown),
            n_invalid_records=len(scored.predictions.problems),
        )
        if self.verification is not None:
            verified = self.verification.for_set(scorer).summary()
            summary = summary.model_copy(update={"verification": verified})
        if self.extraction is not None:
            extracted = self.extraction.for_set(scorer).summary()
            summary = summary.model_copy(update={"extraction": extracted})
        return summary

    # ------------------------------------------------------------------ the pass
    def iter_scored(
        self,
        items: Sequence[BenchmarkItem],
        predictions: Sequence[Mapping[str, Prediction]],
        scorers: Sequence[ItemScorer] | None = None,
        *,
        chunk_items: int = SCORE_CHUNK_ITEMS,
    ) -> Iterator[tuple[int, ItemResult]]:
        """Score every prediction set on ``items`` in one pass (see the module docstring).

        Args:
            items: The benchmark items, in order.
            predictions: Per set, its predictions by item id (an absent id is missing).
            scorers: Per set, its item scorer (default: a new one each).
            chunk_items: Items (of all sets together) embedded and scored per chunk.

        Yields:
            ``(set index, record)``: per chunk, each set's records in benchmark order.
        """
        if scorers is None:
            scorers = [self.item_scorer() for _ in predictions]
        progress = self.progress
        total = len(items) * len(predictions)
        # Prepared once for all sets with the same chain key.
        chains: dict[tuple[bool, bool], list[tuple[ReferenceChain, ...]]] = {}
        prepared: list[list[PreparedItem]] = []
        for preds, scorer in zip(predictions, scorers, strict=True):
            began = time.perf_counter()
            if scorer.chain_key not in chains:
                chains[scorer.chain_key] = [scorer.reference_chains(i) for i in items]
            prepared.append(
                [
                    scorer.prepare(item, preds.get(item.id), chain)
                    for item, chain in zip(items, chains[scorer.chain_key], strict=True)
                ]
            )
            self.tick("parse", began)
            if progress:
                progress("parse", len(items), total)
        if self.extraction is not None:  # the model reads what no answer rule committed on
            self.extraction.plan(prepared)
            for index, scorer in enumerate(scorers):
                began = time.perf_counter()
                prepared[index] = self.extraction.for_set(scorer).apply(prepared[index])
                self.tick("extract", began)
        if self.verification is not None:
            self.verification.plan(prepared)  # the most it may cost, before any call
        per_chunk = max(1, chunk_items // max(1, len(predictions)))
        bounds = [(lo, min(lo + per_chunk, len(items))) for lo in range(0, len(items), per_chunk)]
        began = time.perf_counter()
        texts = [_chunk_texts(batches[lo:hi] for batches in prepared) for lo, hi in bounds]
        keep_after, drop_after = recurring_texts(texts)
        self._encode_total = sum(len(chunk) for chunk in texts)
        self.tick("embed", began)
        try:
            yield from self._score_chunks(
                prepared, scorers, bounds, texts, keep_after, drop_after, total
            )
        finally:
            for scorer in scorers:
                for candidate_filter in scorer.filters:
                    began = time.perf_counter()
                    candidate_filter.finish()
                    self.tick(candidate_filter.name, began)

    def _score_chunks(
        self,
        prepared: list[list[PreparedItem]],
        scorers: Sequence[ItemScorer],
        bounds: list[tuple[int, int]],
        texts: list[list[str]],
        keep_after: dict[int, list[str]],
        drop_after: dict[int, list[str]],
        total: int,
    ) -> Iterator[tuple[int, ItemResult]]:
        """The chunks of :meth:`iter_scored`, embedded then scored, set by set."""
        progress = self.progress
        for index, (lo, hi) in enumerate(bounds):
            began = time.perf_counter()
            unique, texts[index] = texts[index], []  # this chunk's list is not needed again
            encoded = self.encoder_cache.stats.encoded
            vectors = StepVectors(unique, self.encoder_cache.lookup_matrix(unique))
            if progress:  # the texts found in memory or the cache, after those encoded
                found = len(unique) - (self.encoder_cache.stats.encoded - encoded)
                progress("encode", found, self._encode_total)
            held = keep_after.pop(index, [])
            if held:
                self.encoder_cache.hold(held, vectors.of(held))
            self.encoder_cache.release(drop_after.pop(index, []))
            self.tick("embed", began)
            for set_index, scorer in enumerate(scorers):
                batch = prepared[set_index][lo:hi]
                began = time.perf_counter()
                verdicts = self.verdicts(batch)
                self.tick("answers", began)
                for candidate_filter in scorer.filters:
                    began = time.perf_counter()
                    candidate_filter.prepare(batch)
                    self.tick(candidate_filter.name, began)
                scored = 0.0
                filtering = dict(scorer.filter_seconds)
                results = []
                for ready, verdict in zip(batch, verdicts, strict=True):
                    began = time.perf_counter()
                    results.append(scorer.score(ready, vectors, verdict))
                    scored += time.perf_counter() - began
                    if progress:
                        progress("score", 1, total)
                if self.verification is not None:  # after matching: the unmatched are known
                    began = time.perf_counter()
                    step = self.verification.for_set(scorer)
                    results = step.apply([ready.item for ready in batch], results)
                    self.tick("verify", began)
                for result in results:
                    yield set_index, result
                # The filters' candidates() time is theirs, not the scoring's.
                for name, seconds in scorer.filter_seconds.items():
                    spent = seconds - filtering.get(name, 0.0)
                    scored -= spent
                    self.timings[name] = self.timings.get(name, 0.0) + spent
                self.timings["score"] = self.timings.get("score", 0.0) + scored

    def iter_results(
        self,
        items: Sequence[BenchmarkItem],
        predictions: Mapping[str, Prediction],
        *,
        chunk_items: int = SCORE_CHUNK_ITEMS,
    ) -> Iterator[ItemResult]:
        """Yield one :class:`ItemResult` per item, in benchmark order, for one set (scored
        by :attr:`scorer`)."""
        for _, result in self.iter_scored(
            items, [predictions], [self.scorer], chunk_items=chunk_items
        ):
            yield result

    def run(
        self,
        benchmark: Benchmark,
        sets: Sequence[ScoredSet],
        *,
        chunk_items: int = SCORE_CHUNK_ITEMS,
    ) -> list[RunResult]:
        """Score every set on ``benchmark`` (already :meth:`subset`), in one pass.

        Each record goes to its set as it comes (:meth:`ScoredSet.add`: aggregated, kept,
        written); each set's summary is then committed with its records. Timings are this
        engine's (``parse``, ``embed``, ``answers``, ``score``, ``write``, and the candidate
        filters'), over all sets.

        Returns:
            One :class:`RunResult` per set, in order.
        """
        scorers = [self.item_scorer() for _ in sets]
        self.timings.setdefault("write", 0.0)
        try:
            for set_index, result in self.iter_scored(
                benchmark.items, [one.known for one in sets], scorers, chunk_items=chunk_items
            ):
                began = time.perf_counter()
                sets[set_index].add(result)
                self.tick("write", began)
            runs = []
            for one, scorer in zip(sets, scorers, strict=True):
                summary = self.summary(benchmark, one, scorer)
                if one.writer is not None:
                    began = time.perf_counter()
                    summary = one.writer.commit(summary)
                    self.tick("write", began)
                runs.append(RunResult(one.items, summary, self.encoder_cache.stats, self.timings))
            if self.verification is not None:
                self.verification.report_dry_run()
            if self.extraction is not None:
                self.extraction.report_dry_run()
        finally:
            # Last opened first: the first writer may have made OUT itself, and removes it
            # only once the later sets' folders inside it are gone (Ctrl-C leaves nothing).
            for one in reversed(sets):
                if one.writer is not None:
                    one.writer.abort()  # a no-op after the commit; else keeps the previous pair
        return runs

    def finish_timings(self, began: float) -> dict[str, float]:
        """Add ``total`` (since ``began``) and ``encode_forward`` to the timings."""
        self.timings["total"] = time.perf_counter() - began
        self.timings["encode_forward"] = self.encoder_cache.stats.encode_seconds
        return self.timings


def _chunk_texts(batches: Iterator[list[PreparedItem]]) -> list[str]:
    """The distinct step texts of one chunk, of every set: the items' texts in order."""
    texts: list[str] = []
    for batch in batches:
        for ready in batch:
            texts.extend(ready.texts())
    return list(dict.fromkeys(texts))


def recurring_texts(
    chunks: Sequence[Sequence[str]],
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """The texts needed in more than one chunk: ``(keep_after, drop_after)``.

    ``keep_after[c]`` lists the texts first embedded in chunk ``c`` that a later chunk
    needs again; ``drop_after[c]`` those whose last chunk is ``c``. Only these stay in
    memory between chunks.

    Examples:
        >>> keep, drop = recurring_texts([["a", "b"], ["c"], ["a", "c"]])
        >>> dict(keep), dict(drop)
        ({0: ['a'], 1: ['c']}, {2: ['a', 'c']})
    """
    keep_after: dict[int, list[str]] = defaultdict(list)
    drop_after: dict[int, list[str]] = defaultdict(list)
    if len(chunks) < 2:
        return keep_after, drop_after
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, texts in enumerate(chunks):
        for text in texts:
            if text in first:
                last[text] = index
            else:
                first[text] = index
    for text, end in last.items():
        keep_after[first[text]].append(text)
        drop_after[end].append(text)
    return keep_after, drop_after


def _judge_record(judge: Any) -> dict[str, Any] | None:
    """Model, URL and prompt hash of the judge, for provenance."""
    if judge is None:
        return None
    identity = getattr(judge, "identity", None)
    dump = getattr(identity, "model_dump", None)
    if dump is not None:
        return dict(dump(mode="json"))
    return {"identity": str(identity)}


def _answer_for_rules(parsed: ParsedResponse | None, compat: str | None) -> str | None:
    """The answer the rules judge: the parsed one (``None`` when missing or absent).

    crystal-metrics 0.2.0 reads a structured record's blank or absent answer as ``""``
    (which its substring fallback then credits: ``compat_blank``), so its answer rules see
    ``""`` there; the paper's rules see ``None`` (missing), and so does every prediction
    that is missing, failed to parse or is raw text, as crystal-metrics' own CLI would.
    """
    if parsed is None:
        return None
    if compat is not None and parsed.status == "structured" and not (parsed.answer or "").strip():
        return ""
    return parsed.answer
