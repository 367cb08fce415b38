"""The reference build: rounds of generation, consensus and validation, resumable.

:func:`build_references` takes an item set and a :class:`ReferencesConfig` and fills an
output folder ``DIR``. Each item goes through rounds; a round is

1. **generation**: every generator writes ``samples`` candidate chains, each request with
   its own seed (:func:`~crystalbench.references.generation.derive_seed`). An unusable
   output (garbage, empty, truncated, wrong schema) or a failed request is recorded and
   asked again with the next attempt and a new seed, up to ``output_attempts``;
2. **consensus** of the valid chains (at least ``min_chains``;
   :func:`~crystalbench.references.consensus.consensus_from_embeddings`), keeping the
   previous round's order stable in later rounds;
3. **validation**: the validator's verdict on the consensus chain (an unparsable reply
   is asked again, up to ``output_attempts``; after that the chain counts as rejected,
   never as accepted).

An accepted item is done. A rejected item (or one whose round failed: too few valid
chains) starts the next round with fresh seeds, up to ``max_rounds``; items still rejected
then are reported in ``rejected.jsonl`` and ``summary.json``. Nothing is dropped silently.

Every request's outcome is journaled as it arrives (:mod:`crystalbench.references.records`),
and the state of each item is derived from the journals alone, so a killed build rerun with
the same command resumes where it stopped, never repeating a recorded request.
:func:`regenerate_references` sends chosen items back for new rounds (for instance those
rejected in human review). At the end :func:`~crystalbench.references.output.write_outputs`
writes ``benchmark.jsonl`` (loadable by ``crystal score``), ``summary.json`` and the HTML
construction report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crystalbench.config.settings import REFERENCES_CONSENSUS_CHUNK
from crystalbench.data.loading import Benchmark
from crystalbench.references.config import ReferencesConfig
from crystalbench.references.consensus import CandidateChain, ConsensusChain
from crystalbench.references.consensus_run import ConsensusTask, compute_consensus, open_encoder
from crystalbench.references.engine import Engine, Job, JobResult
from crystalbench.references.generation import (
    ReferencePrompt,
    classify_output,
    derive_seed,
    load_reference_prompt,
)
from crystalbench.references.records import (
    CandidateRecord,
    ConsensusRecord,
    Journal,
    RegenerationRecord,
    VerdictRecord,
    candidate_key,
    round_key,
    verdict_key,
)
from crystalbench.references.validator import chain_hash, parse_verdict
from crystalbench.types import BenchmarkItem

CANDIDATES_FILE = "candidates.jsonl"
CONSENSUS_FILE = "consensus.jsonl"
VERDICTS_FILE = "verdicts.jsonl"
REGENERATIONS_FILE = "regenerations.jsonl"
CONFIG_FILE = "config.json"
"""Files of an output folder (the journals and the stored configuration)."""

Events = Callable[[str], None]


@dataclass
class RoundOutcome:
    """What happened to an item in one round."""

    round: int
    status: str
    """``accepted``, ``rejected`` (by the validator), ``validator_error``,
    ``too_few_chains``, ``empty`` or ``accepted_unvalidated`` (no validator)."""
    reasons: list[str] = field(default_factory=list)
    chain: ConsensusChain | None = None
    verdict: VerdictRecord | None = None


@dataclass
class ItemPlan:
    """An item's state derived from the journals."""

    item_id: str
    stage: str
    """``generate``, ``consensus``, ``validate``, ``accepted`` or ``rejected``."""
    round: int
    first_round: int
    """First round of the item's current cycle (after its last regeneration request)."""
    jobs: list[Job] = field(default_factory=list)
    task: ConsensusTask | None = None
    history: list[RoundOutcome] = field(default_factory=list)

    @property
    def final(self) -> bool:
        return self.stage in ("accepted", "rejected")

    @property
    def outcome(self) -> RoundOutcome | None:
        return self.history[-1] if self.history else None


@dataclass
class Journals:
    """The four journals of an output folder."""

    candidates: Journal[CandidateRecord]
    consensus: Journal[ConsensusRecord]
    verdicts: Journal[VerdictRecord]
    regenerations: Journal[RegenerationRecord]

    @classmethod
    def open(cls, out: Path, fsync_interval: float) -> Journals:
        return cls(
            Journal(out / CANDIDATES_FILE, CandidateRecord, fsync_interval),
            Journal(out / CONSENSUS_FILE, ConsensusRecord, fsync_interval),
            Journal(out / VERDICTS_FILE, VerdictRecord, fsync_interval),
            Journal(out / REGENERATIONS_FILE, RegenerationRecord, fsync_interval),
        )

    def close(self) -> None:
        for journal in (self.candidates, self.consensus, self.verdicts, self.regenerations):
            journal.close()

    def torn(self) -> list[str]:
        out = []
        for journal in (self.candidates, self.consensus, self.verdicts, self.regenerations):
            if journal.torn is not None:
                out.append(journal.torn.describe(journal.path))
        return out


@dataclass
class BuildResult:
    """What a build (or a regeneration) left in its folder."""

    out: Path
    plans: dict[str, ItemPlan]
    summary: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> list[str]:
        return [i for i, p in self.plans.items() if p.stage == "accepted"]

    @property
    def rejected(self) -> list[str]:
        return [i for i, p in self.plans.items() if p.stage == "rejected"]


class Builder:
    """One build's state: configuration, items, journals, prompts, engine, encoder."""

    def __init__(
        self,
        config: ReferencesConfig,
        out: Path,
        benchmark: Benchmark,
        journals: Journals,
        engine: Engine,
        encoder: Any,
        on_event: Events | None,
    ) -> None:
        self.config = config
        self.out = out
        self.benchmark = benchmark
        self.items: dict[str, BenchmarkItem] = {item.id: item for item in benchmark.items}
        self.journals = journals
        self.engine = engine
        self._encoder = encoder
        self.on_event = on_event or (lambda _message: None)
        self.generate_prompt: ReferencePrompt = load_reference_prompt(config.generate_prompt)
        self.validate_prompt: ReferencePrompt = load_reference_prompt(config.validate_prompt)
        self.counts: dict[str, int] = {}

    # ------------------------------------------------------------------ encoder
    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = open_encoder(self.config)
        return self._encoder

    # ------------------------------------------------------------------ state
    def plan(self, item_id: str) -> ItemPlan:
        """Derive an item's state and its next work from the journals."""
        config = self.config
        regenerations = [
            r.after_round
            for r in self.journals.regenerations.records.values()
            if r.item_id == item_id
        ]
        first = max(regenerations, default=0) + 1
        last = first + config.max_rounds - 1
        item = self.items[item_id]
        history = self._earlier_history(item_id, first)
        round_ = first
        while True:
            plan = ItemPlan(item_id, "generate", round_, first, history=history)
            jobs = self._generation_jobs(item, round_)
            if jobs:
                plan.jobs = jobs
                return plan
            consensus = self.journals.consensus.get(round_key(item_id, round_))
            if consensus is None:
                plan.stage = "consensus"
                plan.task = self._consensus_task(item_id, round_)
                return plan
            outcome = RoundOutcome(round_, consensus.failure or "", chain=consensus.chain)
            if consensus.chain is not None:
                if not config.validating:
                    outcome.status = "accepted_unvalidated"
                else:
                    verdict, job = self._verdict(item, round_, consensus.chain)
                    if job is not None:
                        plan.stage = "validate"
                        plan.jobs = [job]
                        return plan
                    assert verdict is not None
                    outcome.verdict = verdict
                    if verdict.status == "ok":
                        outcome.status = "accepted" if verdict.accept else "rejected"
                        outcome.reasons = list(verdict.reasons)
                    else:
                        outcome.status = "validator_error"
                        outcome.reasons = [verdict.error or "the validator's reply held no verdict"]
            else:
                outcome.reasons = [_failure_reason(consensus)]
            history = [*history, outcome]
            plan.history = history
            if outcome.status in ("accepted", "accepted_unvalidated"):
                plan.stage = "accepted"
                return plan
            if round_ >= last:
                plan.stage = "rejected"
                return plan
            round_ += 1

    def _earlier_history(self, item_id: str, first: int) -> list[RoundOutcome]:
        """Rounds of earlier cycles (before the last regeneration), for the report."""
        out = []
        for round_ in range(1, first):
            consensus = self.journals.consensus.get(round_key(item_id, round_))
            if consensus is None:
                continue
            status = consensus.failure or "superseded"
            out.append(RoundOutcome(round_, status, chain=consensus.chain))
        return out

    def _generation_jobs(self, item: BenchmarkItem, round_: int) -> list[Job]:
        config = self.config
        jobs = []
        for generator in config.generators:
            settings = config.settings_for(generator)
            for sample in range(config.samples):
                attempt = 0
                while True:
                    record = self.journals.candidates.get(
                        candidate_key(item.id, generator.name, round_, sample, attempt)
                    )
                    if record is None or record.status == "ok":
                        break
                    attempt += 1
                if record is not None or attempt >= config.output_attempts:
                    continue  # a usable chain, or attempts used up
                seed = derive_seed(
                    config.seed, "generate", item.id, generator.name, round_, sample, attempt
                )
                jobs.append(
                    Job(
                        key=candidate_key(item.id, generator.name, round_, sample, attempt),
                        item_id=item.id,
                        model=generator.name,
                        prompt=self.generate_prompt.render(item),
                        settings=settings.model_copy(update={"seed": seed}),
                        image_path=item.image,
                    )
                )
        return jobs

    def _consensus_task(self, item_id: str, round_: int) -> ConsensusTask:
        chains, keys = [], []
        for generator in self.config.generators:
            for sample in range(self.config.samples):
                for attempt in range(self.config.output_attempts):
                    record = self.journals.candidates.get(
                        candidate_key(item_id, generator.name, round_, sample, attempt)
                    )
                    if record is not None and record.status == "ok":
                        chains.append(
                            CandidateChain(
                                model=record.model,
                                seed=record.seed,
                                steps=tuple(record.steps),
                                sample=record.sample,
                                key=record.key,
                            )
                        )
                        keys.append(record.key)
                        break
        previous = None
        for earlier in range(round_ - 1, 0, -1):
            before = self.journals.consensus.get(round_key(item_id, earlier))
            if before is not None and before.chain is not None and before.chain.steps:
                previous = list(before.chain.steps)
                break
        return ConsensusTask(item_id, round_, chains, previous, keys)

    def _verdict(
        self, item: BenchmarkItem, round_: int, chain: ConsensusChain
    ) -> tuple[VerdictRecord | None, Job | None]:
        config = self.config
        assert config.validator is not None
        last: VerdictRecord | None = None
        attempt = 0
        while True:
            record = self.journals.verdicts.get(verdict_key(item.id, round_, attempt))
            if record is None:
                break
            last = record
            if record.status == "ok":
                return record, None
            attempt += 1
        if attempt >= config.output_attempts:
            return last, None
        seed = derive_seed(
            config.seed, "validate", item.id, config.validator.name, round_, 0, attempt
        )
        job = Job(
            key=verdict_key(item.id, round_, attempt),
            item_id=item.id,
            model=config.validator.name,
            prompt=self.validate_prompt.render(item, chain=list(chain.steps)),
            settings=config.validation.model_copy(update={"seed": seed}),
            image_path=item.image,
        )
        return None, job

    # ------------------------------------------------------------------ work
    def image(self, item_id: str) -> bytes | None:
        """The item's image bytes, read through the benchmark's loader (which refuses files
        outside the allowed folders); the engine decodes and checks them once, for every
        request of the item (``Benchmark.image_bytes`` would decode them a second time)."""
        item = self.items[item_id]
        loader = self.benchmark.image_loader
        if loader is None:
            return None
        return loader(item) or None

    def record_candidate(self, result: JobResult) -> None:
        item_id, model, round_text, sample_text, attempt_text = result.key.rsplit("|", 4)
        endpoint = next(g for g in self.config.generators if g.name == model)
        settings = self.config.settings_for(endpoint)
        round_, sample, attempt = int(round_text[1:]), int(sample_text[1:]), int(attempt_text[1:])
        seed = derive_seed(self.config.seed, "generate", item_id, model, round_, sample, attempt)
        common: dict[str, Any] = {
            "key": result.key,
            "item_id": item_id,
            "model": model,
            "served_model": endpoint.served,
            "round": round_,
            "sample": sample,
            "attempt": attempt,
            "seed": seed,
            **result.usage,
            "http_attempts": result.http_attempts,
            "endpoint": result.endpoint,
            "prompt_name": self.generate_prompt.name,
            "prompt_hash": self.generate_prompt.hash,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "max_tokens": settings.max_tokens,
            "engine": self.engine.name,
        }
        if not result.ok:
            record = CandidateRecord(
                status="error", error=result.error, error_kind=result.error_kind, **common
            )
        else:
            status, parsed = classify_output(result.text, result.finish_reason)
            record = CandidateRecord(
                status=status,
                steps=list(parsed.steps),
                answer=parsed.answer,
                parse_status=parsed.status,
                response=result.text,
                **common,
            )
        self.journals.candidates.append(record)
        self._count(f"candidates_{record.status}")

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def record_verdict(self, result: JobResult) -> None:
        item_id, round_text, attempt_text = result.key.rsplit("|", 2)
        round_, attempt = int(round_text[1:]), int(attempt_text[1:])
        assert self.config.validator is not None
        consensus = self.journals.consensus.get(round_key(item_id, round_))
        steps = list(consensus.chain.steps) if consensus and consensus.chain else []
        common: dict[str, Any] = {
            "key": result.key,
            "item_id": item_id,
            "round": round_,
            "attempt": attempt,
            "seed": derive_seed(
                self.config.seed,
                "validate",
                item_id,
                self.config.validator.name,
                round_,
                0,
                attempt,
            ),
            "model": self.config.validator.name,
            "chain_hash": chain_hash(steps),
            **result.usage,
            "prompt_name": self.validate_prompt.name,
            "prompt_hash": self.validate_prompt.hash,
        }
        if not result.ok:
            record = VerdictRecord(
                status="error", error=result.error, error_kind=result.error_kind, **common
            )
        else:
            verdict = parse_verdict(result.text)
            record = VerdictRecord(
                status=verdict.status,
                accept=verdict.accept,
                first_error_step=verdict.first_error_step,
                reasons=verdict.reasons,
                response=result.text,
                **{name: verdict.criteria.get(name) for name in _CRITERIA},
                **common,
            )
        self.journals.verdicts.append(record)
        self._count(f"verdicts_{record.status}")

    def run_consensus(self, tasks: Sequence[ConsensusTask]) -> None:
        ready = [t for t in tasks if len(t.chains) >= self.config.min_chains]
        for task in tasks:
            if len(task.chains) < self.config.min_chains:
                self._write_consensus(task, None, "too_few_chains")
        if not ready:
            return
        mapper = getattr(self.engine, "consensus_map", None)
        # Locally, chunks bound the embeddings held at once and journal progress as it is
        # made; a Ray map streams batches through its actors in one job.
        size = len(ready) if mapper is not None else REFERENCES_CONSENSUS_CHUNK
        for start in range(0, len(ready), size):
            chunk = ready[start : start + size]
            if mapper is not None:
                chains = mapper(chunk, self.config)
            else:
                chains = compute_consensus(chunk, self.encoder, self.config)
            for task, chain in zip(chunk, chains, strict=True):
                self._write_consensus(task, chain, None if chain.steps else "empty")

    def _write_consensus(
        self, task: ConsensusTask, chain: ConsensusChain | None, failure: str | None
    ) -> None:
        identity = getattr(self._encoder, "identity", None) or self.config.encoder
        self.journals.consensus.append(
            ConsensusRecord(
                key=round_key(task.item_id, task.round),
                item_id=task.item_id,
                round=task.round,
                chain=chain,
                failure=failure,
                candidate_keys=task.candidate_keys,
                encoder=identity,
            )
        )

    def run(self) -> dict[str, ItemPlan]:
        """Work until every item is accepted or rejected; returns the final plans."""
        passes = 0
        while True:
            passes += 1
            plans = {item_id: self.plan(item_id) for item_id in self.items}
            generate = [job for p in plans.values() if p.stage == "generate" for job in p.jobs]
            if generate:
                rounds = sorted({p.round for p in plans.values() if p.stage == "generate"})
                self.on_event(
                    f"generation: {len(generate)} requests (round {', '.join(map(str, rounds))})"
                )
                self.engine.run(generate, self.image, self.record_candidate)
                continue
            tasks = [p.task for p in plans.values() if p.stage == "consensus" and p.task]
            if tasks:
                self.on_event(f"consensus: {len(tasks)} items")
                self.run_consensus(tasks)
                continue
            validate = [job for p in plans.values() if p.stage == "validate" for job in p.jobs]
            if validate:
                self.on_event(f"validation: {len(validate)} requests")
                self.engine.run(validate, self.image, self.record_verdict)
                continue
            return plans


_CRITERIA = ("logical_validity", "sequence_coherence", "visual_grounding", "answer_consistency")


def _failure_reason(record: ConsensusRecord) -> str:
    if record.failure == "too_few_chains":
        return f"too few valid candidate chains ({len(record.candidate_keys)})"
    if record.failure == "empty":
        return "every cluster was under the minimum support"
    return record.failure or "no consensus"
