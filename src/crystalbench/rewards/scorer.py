"""The batched reward scorer: many completions, one encoder pass, cached references.

Configure once (encoder, tau, reward kind, weights, format rules), then call with a batch.
One call:

1. reads every completion with the strict format check (no encoder work for failures);
2. checks every answer (paper rules; judge calls, if any, go out concurrently);
3. embeds, in **one** encoder call, every distinct predicted step of the batch together with
   the reference steps not yet in memory, through evaluation's
   :class:`~crystalbench.encoders.CachingEncoder`. Reference embeddings stay in memory
   across calls (a :class:`~crystalbench.encoders.cache.MemoryStore`, least recently used
   dropped first: GRPO repeats each prompt ``num_generations`` times and revisits items
   every epoch) and, with an :class:`~crystalbench.encoders.EmbeddingStore`, on disk across
   runs; completion steps pass through (they rarely come back);
4. matches each completion's steps against its reference with the evaluation engine's
   per-item step (:class:`~crystalbench.scoring.ItemScorer`: its candidates, then greedy
   one-to-one matching), so a candidate filter of evaluation applies to rewards alike: with
   ``guard="facts"`` or ``"facts-strict"`` the fact guard keeps steps that state
   incompatible facts from matching (a completion that copies reference wording with wrong
   numbers earns no step credit for those steps; ``facts-strict`` is the one to train with,
   ``docs/rewards.md``). Only the counting is the reward's own: steps blocked by the step
   guards count in precision, and with several chains the best is the one with the highest
   F1 (ties: the lower index).

Results are memoised per (completion, item), so the several reward functions a trainer
calls on the same batch (format, answer part, step part...) share one encoder pass.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench.answers import score_answers
from crystalbench.defaults import GUARD, REWARDS_BEST_REFERENCE_CHAIN, TAU, CompatMode, GuardKind
from crystalbench.encoders.base import Encoder
from crystalbench.encoders.cache import CachingEncoder, EmbeddingStore, MemoryStore, text_key
from crystalbench.judges.base import Judge
from crystalbench.rewards.core import (
    FormatCheck,
    GuardedSteps,
    StepScores,
    check_format,
    guard_steps,
    make_breakdown,
    make_signals,
    prompt_text,
    reference_steps,
)
from crystalbench.rewards.items import completion_text
from crystalbench.rewards.types import (
    REWARD_KINDS,
    FormatRules,
    RewardBreakdown,
    RewardKind,
    RewardSignals,
    RewardWeights,
    StepGuards,
)
from crystalbench.scoring.compat import match_rules
from crystalbench.scoring.items import CandidateFilter, ChainContext, ItemScorer
from crystalbench.scoring.matching import precision_recall_f1
from crystalbench.types import AnswerVerdict, BenchmarkItem

__all__ = ["RewardScorer", "ScorerStats", "item_fingerprint"]


@dataclass
class ScorerStats:
    """Running counters of one :class:`RewardScorer` (for logs and the speed benchmark)."""

    calls: int = 0
    """Batches scored."""
    completions: int = 0
    """Completions asked for (with repeats)."""
    memo_hits: int = 0
    """Completions answered from the memo of earlier calls."""
    format_failures: int = 0
    """Completions that failed the format check (never encoded)."""
    steps_encoded: int = 0
    """Distinct predicted-step texts sent to the encoder."""
    references_encoded: int = 0
    """Distinct reference-step texts sent to the encoder."""
    reference_memory_hits: int = 0
    """Reference texts found in the in-memory cache."""
    reference_store_hits: int = 0
    """Reference texts found in the on-disk store."""
    encode_seconds: float = 0.0
    """Wall time inside encoder calls."""
    seconds: float = 0.0
    """Wall time of whole calls."""


def item_fingerprint(item: BenchmarkItem) -> str:
    """Hash of everything about an item that can change its reward.

    Examples:
        >>> a = BenchmarkItem(id="1", source="x", question="?", answer="B", reference_steps=["s"])
        >>> item_fingerprint(a) == item_fingerprint(a.model_copy(update={"id": "2"}))
        True
        >>> item_fingerprint(a) == item_fingerprint(a.model_copy(update={"answer": "C"}))
        False
    """
    fields: list[Any] = [
        item.question,
        item.options,
        item.answer,
        item.answer_type,
        item.reference_steps,
    ]
    if item.reference_chains:  # only then, so single-chain fingerprints stay as they were
        fields.append(item.reference_chains)
    payload = json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class _LRU:
    """A small least-recently-used map."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        if self.size <= 0:
            return
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)

    def __len__(self) -> int:
        return len(self.data)

    def clear(self) -> None:
        self.data.clear()


class RewardScorer:
    """Scores batches of completions against their items (see module docstring).

    Args:
        encoder: Sentence encoder; use the one evaluation uses (same model, same tau), loaded
            on the right device (see
            :func:`~crystalbench.rewards.encoder_loading.load_reward_encoder`).
        kind: Reward kind that :meth:`__call__` and :meth:`rewards` total.
        weights: Weights and CPR constants (paper defaults).
        tau: Step-matching threshold (paper 0.35).
        compat: ``None`` (paper matching rules) or ``"crystal-metrics-0.2"``.
        format_rules: Format tolerances and caps.
        guards: Step guards against repeats and question copies (both on by default;
            ``StepGuards(block_repeats=False, block_question_copies=False)`` gives exactly
            evaluation's Match F1).
        judge: Judge for free-form answers; exact match only when ``None``.
        store: On-disk embedding store for reference steps (never for completions, which
            rarely repeat): an :class:`~crystalbench.encoders.EmbeddingStore` (safe to share
            between threads), or the path of its SQLite file, opened once per calling
            thread; ``None`` keeps references in memory only.
        reference_cache_size: Reference embeddings kept in memory (LRU).
        memo_size: (completion, item) results kept for repeated calls on the same batch.
        best_reference_chain: Score the steps against every reference chain of an item
            (``reference_steps`` and ``reference_chains``) and keep the best by F1 (ties: the
            lower index), as evaluation does; off by default (the primary chain only).
        guard: The fact guard of step matching, as evaluation's ``--guard``: ``none`` (the
            paper), ``facts`` (a pair whose steps state incompatible facts does not match)
            or ``facts-strict`` (besides, a step that contradicts the reference step it
            restates matches nothing: the one to train with). Not the step ``guards``
            above, which block repeats and question copies.
        verifier: A step verifier (:class:`~crystalbench.judges.verifier.StepVerifier`,
            e.g. :func:`crystalbench.judges.panel.build_verifier`), asked about each passing
            completion's unmatched steps when ``weights.verified_precision`` is above 0: the
            signals get ``verified_precision`` and the reward its weighted term. Off by
            default (no verifier, or weight 0: no call, every number as before).

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> item = BenchmarkItem(id="1", source="x", question="?", options=["a", "b"],
        ...                      answer="B", reference_steps=["Look at bar b.", "b is taller."])
        >>> scorer = RewardScorer(HashEncoder())
        >>> good = '{"reasoning_steps": ["Look at bar b.", "b is taller."], "answer": "B"}'
        >>> scorer.rewards([good, "B"], [item, item])
        [1.0, 0.0]
    """

    def __init__(
        self,
        encoder: Encoder,
        *,
        kind: RewardKind = "cpr",
        weights: RewardWeights | None = None,
        tau: float = TAU,
        compat: CompatMode | None = None,
        format_rules: FormatRules | None = None,
        guards: StepGuards | None = None,
        judge: Judge | None = None,
        store: EmbeddingStore | str | Path | None = None,
        reference_cache_size: int = 200_000,
        memo_size: int = 16_384,
        best_reference_chain: bool = REWARDS_BEST_REFERENCE_CHAIN,
        guard: GuardKind | str = GUARD,
        verifier: Any = None,
    ) -> None:
        if kind not in REWARD_KINDS:
            from crystalbench.errors import UnknownNameError

            raise UnknownNameError("reward kind", kind, REWARD_KINDS)
        self.encoder = encoder
        self.kind: RewardKind = kind
        self.weights = weights or RewardWeights()
        self.tau = tau
        self.compat = compat
        self.match_rules = match_rules(compat, tau=tau)
        self.format_rules = format_rules or FormatRules()
        self.guards = guards or StepGuards()
        self.judge = judge
        self.best_reference_chain = best_reference_chain
        self._store = store
        self._thread_stores = threading.local()
        self.stats = ScorerStats()
        self._references = MemoryStore(reference_cache_size)
        # One encoder call per batch (the encoder splits it into forward batches).
        self._encoder_cache = CachingEncoder(encoder, self._references, batch_size=sys.maxsize)
        filters: list[CandidateFilter] = []
        if guard != "none":
            from crystalbench.scoring.filters.guard.candidates import GuardFilter

            filters.append(GuardFilter(guard))  # decisions kept in memory (bounded)
        self.guard = str(guard)
        self._steps = ItemScorer(self.match_rules, filters=filters)
        self._memo = _LRU(memo_size)
        self._lock = threading.Lock()
        self.verifier = verifier if self.weights.verified_precision > 0.0 else None

    @property
    def store(self) -> EmbeddingStore | None:
        """The reference store for the calling thread (``None`` without one)."""
        if self._store is None or isinstance(self._store, EmbeddingStore):
            return self._store
        store = getattr(self._thread_stores, "store", None)
        if store is None:
            store = EmbeddingStore(self._store)
            self._thread_stores.store = store
        return store

    # ------------------------------------------------------------------ provenance
    def config_record(self) -> dict[str, Any]:
        """Everything that decides the signals and rewards, for logs and results files."""
        return {
            "encoder_identity": self.encoder.identity,
            "tau": self.tau,
            "compat": self.compat or "none",
            "kind": self.kind,
            "weights": self.weights.model_dump(),
            "format_rules": self.format_rules.model_dump(),
            "guards": self.guards.model_dump(),
            "guard": self.guard,
            "judge_identity": _judge_identity(self.judge),
            **(
                {"verifier_identity": self.verifier.identity()} if self.verifier is not None else {}
            ),
        }

    # ------------------------------------------------------------------ scoring
    def __call__(
        self, completions: Sequence[Any], items: Sequence[BenchmarkItem | None]
    ) -> list[RewardBreakdown]:
        """Breakdowns of the configured kind, one per completion."""
        return self.breakdowns(completions, items)

    def breakdowns(
        self,
        completions: Sequence[Any],
        items: Sequence[BenchmarkItem | None],
        kind: RewardKind | None = None,
    ) -> list[RewardBreakdown]:
        """Breakdowns of ``kind`` (default: the configured kind), one per completion."""
        chosen = kind or self.kind
        return [make_breakdown(s, chosen, self.weights) for s in self.signals(completions, items)]

    def rewards(
        self,
        completions: Sequence[Any],
        items: Sequence[BenchmarkItem | None],
        kind: RewardKind | None = None,
    ) -> list[float | None]:
        """Totals of ``kind`` (default: the configured kind); ``None`` for unscored rows."""
        return [b.total for b in self.breakdowns(completions, items, kind)]

    def signals(
        self, completions: Sequence[Any], items: Sequence[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        """Kind-independent signals, one per completion, with one encoder pass.

        Args:
            completions: Completion texts, or conversational message lists.
            items: The item of each completion (``None``: nothing to score against).

        Raises:
            ValueError: ``completions`` and ``items`` differ in length.
            InputError: An item's gold answer cannot be read as its type (our bad data).
        """
        if len(completions) != len(items):
            raise ValueError(f"{len(completions)} completions for {len(items)} items")
        with self._lock:
            started = time.perf_counter()
            try:
                return self._signals(completions, items)
            finally:
                self.stats.calls += 1
                self.stats.seconds += time.perf_counter() - started

    def _signals(
        self, completions: Sequence[Any], items: Sequence[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        n = len(completions)
        self.stats.completions += n
        texts = [completion_text(c) for c in completions]
        fingerprints: dict[int, str] = {}
        keys: list[tuple[str, str]] = []
        results: list[RewardSignals | None] = [None] * n
        for row, (text, item) in enumerate(zip(texts, items, strict=True)):
            if item is None:
                fp = "-"
            else:
                fp = fingerprints.get(id(item)) or item_fingerprint(item)
                fingerprints[id(item)] = fp
            key = (_text_digest(text), fp)
            keys.append(key)
            cached = self._memo.get(key)
            if cached is not None:
                results[row] = cached
                self.stats.memo_hits += 1

        todo = [row for row in range(n) if results[row] is None]
        checks: dict[int, FormatCheck] = {}
        refs: dict[int, list[list[str]]] = {}
        for row in todo:
            checks[row] = check_format(texts[row], self.format_rules)
            item = items[row]
            refs[row] = self._reference_chains(item) if item is not None else []
            if not checks[row].ok:
                self.stats.format_failures += 1

        answer_rows = [row for row in todo if checks[row].ok and items[row] is not None]
        verdicts: dict[int, AnswerVerdict] = {}
        if answer_rows:
            found = score_answers(
                [checks[row].answer for row in answer_rows],
                [items[row] for row in answer_rows],  # type: ignore[misc]
                judge=self.judge,
            )
            verdicts = dict(zip(answer_rows, found, strict=True))

        step_rows = [row for row in todo if checks[row].ok and refs[row]]
        guarded: dict[int, GuardedSteps] = {}
        prompts: dict[int, str] = {}
        for row in step_rows:
            item = items[row]
            assert item is not None
            prompt = prompts.get(id(item))
            if prompt is None:
                prompt = prompts[id(item)] = prompt_text(item)
            guarded[row] = guard_steps(checks[row].steps, prompt, self.guards)
        matched_steps: list[set[int]] = []
        step_scores = self._score_steps(
            [guarded[row] for row in step_rows],
            [refs[row] for row in step_rows],
            [items[row] for row in step_rows],
            matched_steps,
        )
        scores = {row: score for row, (score, _) in zip(step_rows, step_scores, strict=True)}
        best_refs = {row: n for row, (_, n) in zip(step_rows, step_scores, strict=True)}
        verified: dict[int, tuple[float | None, int]] = {}
        if self.verifier is not None and step_rows:
            verified = self._verify(
                step_rows, [guarded[row] for row in step_rows], matched_steps, items
            )

        for row in todo:
            signals = make_signals(
                checks[row],
                has_gold=items[row] is not None,
                n_ref=best_refs.get(row, len(refs[row][0]) if refs[row] else 0),
                verdict=verdicts.get(row),
                steps=scores.get(row),
                guarded=guarded.get(row),
            )
            if row in verified:
                precision, unverified = verified[row]
                signals = signals.model_copy(
                    update={"verified_precision": precision, "n_unverified": unverified}
                )
            results[row] = signals
            self._memo.put(keys[row], signals)
        return [r for r in results if r is not None]

    def _reference_chains(self, item: BenchmarkItem) -> list[list[str]]:
        """The chains a completion is scored against: the primary one (empty when it has no
        step), then, with ``best_reference_chain``, the alternatives that have steps."""
        chains = [reference_steps(item)]
        if self.best_reference_chain:
            for chain in item.reference_chains:
                steps = [step for step in chain if step.strip()]
                if steps:
                    chains.append(steps)
        return chains if chains[0] or len(chains) > 1 else []

    def _score_steps(
        self,
        predicted: Sequence[GuardedSteps],
        references: Sequence[Sequence[Sequence[str]]],
        items: Sequence[BenchmarkItem | None],
        matched_steps: list[set[int]] | None = None,
    ) -> list[tuple[StepScores, int]]:
        """Each completion's best step scores over its chains, with that chain's length
        (and, into ``matched_steps``, the indices of ``allowed`` steps its best chain
        matched)."""
        if not predicted:
            return []
        vectors = self._embed(
            list(dict.fromkeys(s for guarded in predicted for s in guarded.allowed)),
            list(dict.fromkeys(s for chains in references for steps in chains for s in steps)),
        )
        dim = next(iter(vectors.values())).shape[0]
        steps = self._steps
        out = []
        for guarded, chains, item in zip(predicted, references, items, strict=True):
            pred = (
                np.stack([vectors[s] for s in guarded.allowed])
                if guarded.allowed
                else np.zeros((0, dim), dtype=np.float32)
            )
            best: tuple[StepScores, int] | None = None
            best_pairs: set[int] = set()
            for ref in chains:
                if not ref:
                    continue
                ref_vectors = np.stack([vectors[s] for s in ref])
                context = ChainContext(item, steps.rules)  # the fact guard reads its options
                pairs = steps.matches(
                    steps.candidates(pred, ref_vectors, guarded.allowed, ref, context)
                )
                matched = len(pairs)
                score = StepScores(
                    matched, *precision_recall_f1(matched, guarded.n_steps, len(ref))
                )
                if best is None or score.f1 > best[0].f1:  # a tie keeps the lower index
                    best = (score, len(ref))
                    best_pairs = {i for i, _, _ in pairs}
            assert best is not None  # step rows have a chain with steps
            out.append(best)
            if matched_steps is not None:
                matched_steps.append(best_pairs)
        return out

    def _verify(
        self,
        rows: Sequence[int],
        guarded: Sequence[GuardedSteps],
        matched: Sequence[set[int]],
        items: Sequence[BenchmarkItem | None],
    ) -> dict[int, tuple[float | None, int]]:
        """``row -> (verified_precision, unverified steps)``: the verifier on every
        unmatched allowed step of the batch, in one call (filler labelled without one)."""
        from crystalbench.judges.verifier import StepCheck
        from crystalbench.scoring.verify import is_filler, item_question

        asks: list[tuple[int, StepCheck]] = []
        for position, (row, steps, found) in enumerate(zip(rows, guarded, matched, strict=True)):
            item = items[row]
            assert item is not None
            for k, step in enumerate(steps.allowed):
                if k in found or is_filler(step):
                    continue
                check = StepCheck(
                    item_question(item), step, tuple(steps.allowed[:k]), image=item.image
                )
                asks.append((position, check))
        assert self.verifier is not None
        answers = self.verifier.verify_many([check for _, check in asks]) if asks else []
        supported = [0] * len(rows)
        unverified = [0] * len(rows)
        for (position, _), verdict in zip(asks, answers, strict=True):
            if verdict.label is None:
                unverified[position] += 1
            elif verdict.label == "supported":
                supported[position] += 1
        out: dict[int, tuple[float | None, int]] = {}
        for position, row in enumerate(rows):
            counted = guarded[position].n_steps - unverified[position]
            good = len(matched[position]) + supported[position]
            out[row] = (good / counted if counted else None, unverified[position])
        return out

    def _embed(self, predicted: list[str], references: list[str]) -> dict[str, np.ndarray]:
        """Vectors of distinct texts: references via memory, then the store, then the encoder
        (and kept); predicted steps that are no reference encoded in the same call."""
        memory = self._references
        memory.backing = self.store  # the calling thread's store
        stats, cached = self.stats, self._encoder_cache.stats
        before = (memory.hits, memory.backing_hits, cached.encoded, cached.encode_seconds)
        known = set(references)
        passing = [text for text in predicted if text not in known]
        vectors = self._encoder_cache.lookup(references, passing=passing)
        stats.reference_memory_hits += memory.hits - before[0]
        stats.reference_store_hits += memory.backing_hits - before[1]
        stats.steps_encoded += len(passing)
        stats.references_encoded += cached.encoded - before[2] - len(passing)
        stats.encode_seconds += cached.encode_seconds - before[3]
        return vectors

    def warm(self, items: Iterable[BenchmarkItem], chunk: int = 8192) -> int:
        """Embed the reference steps of ``items`` ahead of training; returns how many were new.

        Call it once at start-up with the training set: every later batch then encodes only
        completion steps. With a store, the work is done once per encoder, ever.
        """
        with self._lock:
            texts = dict.fromkeys(
                s for item in items for chain in self._reference_chains(item) for s in chain
            )
            identity = self.encoder.identity
            pending = [t for t in texts if (identity, text_key(t)) not in self._references]
            before = self.stats.references_encoded
            for start in range(0, len(pending), chunk):
                self._embed([], pending[start : start + chunk])
            return self.stats.references_encoded - before

    def clear(self) -> None:
        """Forget memoised results and in-memory reference embeddings."""
        with self._lock:
            self._memo.clear()
            self._references.clear()


def _text_digest(text: str | None) -> str:
    if text is None:
        return "<none>"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _judge_identity(judge: Judge | None) -> Any:
    if judge is None:
        return None
    identity: Any = getattr(judge, "identity", None)
    if hasattr(identity, "model_dump"):
        return identity.model_dump()
    return str(identity) if identity is not None else type(judge).__name__
