"""The outputs of a reference build: the benchmark, the rejected items, the summary, the report.

- ``DIR/benchmark.jsonl`` and ``DIR/images/``: one :class:`~crystalbench.types.BenchmarkItem`
  per accepted item, in item-set order, with ``reference_steps`` and, in ``metadata``:
  ``reference_provenance`` (one entry per step: ``support``, ``n_chains``, ``models``,
  ``medoid``, ``members``, ``mean_position``, ``cohesion``, ``previous_index``),
  ``reference_round`` and ``reference_build`` (encoder, theta, order rule, verdict).
  With ``precedence`` on, also ``reference_precedence`` (inferred from the candidate chains:
  :mod:`crystalbench.references.precedence`), each step's edges with their votes in its
  provenance (``precedes``: ``[{"step", "agree", "both"}]``) and the inference's settings,
  ``against_chain`` and ``contested`` orders in ``reference_build["precedence"]``.
  ``crystal score --benchmark DIR`` loads it.
- ``DIR/rejected.jsonl``: every item still rejected, with its rounds and reasons.
- ``DIR/summary.json``: counts per gate and round, steps per item, the support histogram,
  each generator's contribution, the validator's counts, and the configuration.
- ``DIR/report.html``: the construction report (:mod:`crystalbench.references.report`).

Every file is written atomically (temporary file and rename).
"""

from __future__ import annotations

import datetime as _dt
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crystalbench._internal.io import AtomicJsonlWriter, atomic_write_json
from crystalbench._version import __version__
from crystalbench.precedence import Precedence
from crystalbench.references.alternatives import pick_alternatives
from crystalbench.references.precedence import (
    InferredPrecedence,
    PrecedenceVotes,
    infer_precedence,
    step_sequences,
)
from crystalbench.sources.itemset import image_extension, safe_name
from crystalbench.types import BenchmarkItem

if TYPE_CHECKING:
    from crystalbench.references.consensus import ConsensusChain
    from crystalbench.references.pipeline import Builder, ItemPlan

BENCHMARK_FILE = "benchmark.jsonl"
REJECTED_FILE = "rejected.jsonl"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
IMAGES_DIR = "images"

PAPER = {"share_another_round": 0.05, "steps_mean": 11.6, "steps_min": 3, "steps_max": 42}
"""What the paper reports, shown beside the build's numbers."""


def _write_image(out: Path, item: BenchmarkItem, data: bytes) -> str:
    name = f"{safe_name(item.id)}.{image_extension(data)}"
    target = out / IMAGES_DIR / name
    if not (target.is_file() and target.read_bytes() == data):
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{name}.tmp")
        temporary.write_bytes(data)
        temporary.replace(target)
    return f"{IMAGES_DIR}/{name}"


def inferred_precedence(builder: Builder, chain: ConsensusChain) -> InferredPrecedence | None:
    """The precedence of an accepted chain, inferred from its candidate chains (``None``
    when the build does not infer one)."""
    config = builder.config
    if not config.precedence:
        return None
    return infer_precedence(
        step_sequences(chain),
        len(chain.steps),
        share=config.precedence_share,
        min_chains=config.precedence_min_chains,
    )


def _votes(votes: list[PrecedenceVotes]) -> list[dict[str, int]]:
    return [v.model_dump() for v in votes]


def accepted_item(builder: Builder, plan: ItemPlan) -> BenchmarkItem:
    """The benchmark record of an accepted item (image path still the input's)."""
    outcome = plan.outcome
    assert outcome is not None
    assert outcome.chain is not None
    chain = outcome.chain
    item = builder.items[plan.item_id]
    verdict = outcome.verdict
    inferred = inferred_precedence(builder, chain)
    provenance = [p.model_dump(mode="json") for p in chain.provenance]
    if inferred is not None:
        for step, entry in enumerate(provenance):
            entry["precedes"] = [
                {"step": e.after, "agree": e.agree, "both": e.both}
                for e in inferred.edges_from(step)
            ]
    metadata = {
        **item.metadata,
        "reference_provenance": provenance,
        "reference_round": outcome.round,
        "reference_build": {
            "encoder": builder.config.encoder,
            "theta": chain.theta,
            "min_support": chain.min_support,
            "order_rule": chain.order_rule,
            "edit_distance": chain.edit_distance,
            "n_chains": chain.n_chains,
            "n_clusters": chain.n_clusters,
            "validator": builder.config.validator.name
            if builder.config.validating and builder.config.validator
            else None,
            "verdict_key": verdict.key if verdict is not None else None,
        },
    }
    if inferred is not None:
        metadata["reference_build"]["precedence"] = {
            "share": inferred.share,
            "min_chains": inferred.min_chains,
            "n_chains": inferred.n_chains,
            "against_chain": _votes(inferred.against_chain),
            "contested": _votes(inferred.contested),
        }
    update: dict[str, Any] = {
        "reference_steps": list(chain.steps),
        # The input's precedence (if any) indexed the old steps: never carried over.
        "reference_precedence": inferred.pairs if inferred is not None else None,
        "metadata": metadata,
    }
    if builder.config.alternatives:
        steps_of = {
            r.key: r.steps
            for r in builder.journals.candidates.records.values()
            if r.item_id == plan.item_id and r.round == outcome.round and r.status == "ok"
        }
        picked = pick_alternatives(chain, steps_of, builder.config.alternatives)
        update["reference_chains"] = [list(a.steps) for a in picked]
        metadata["reference_alternatives"] = [
            {
                "key": a.key,
                "model": a.model,
                "seed": a.seed,
                "clusters": list(a.clusters),
                "similarity": round(a.similarity, 6),
            }
            for a in picked
        ]
    return item.model_copy(update=update)


def write_outputs(
    builder: Builder, plans: dict[str, ItemPlan], *, warnings: list[str]
) -> dict[str, Any]:
    """Write the benchmark, rejected items, summary and report; returns the summary."""
    out = builder.out
    with AtomicJsonlWriter(out / BENCHMARK_FILE) as writer:
        for item_id, plan in plans.items():
            if plan.stage != "accepted":
                continue
            record = accepted_item(builder, plan)
            data = builder.benchmark.image_bytes(builder.items[item_id])
            image = _write_image(out, record, data) if data else None
            writer.write(record.model_copy(update={"image": image}))
    with AtomicJsonlWriter(out / REJECTED_FILE) as writer:
        for plan in plans.values():
            if plan.stage == "rejected":
                writer.write(rejected_entry(plan))
    summary = summarise(builder, plans, warnings=warnings)
    atomic_write_json(out / SUMMARY_FILE, summary)
    from crystalbench.references.report import write_report

    write_report(out / REPORT_FILE, summary, item_views(builder, plans))
    return summary


def rejected_entry(plan: ItemPlan) -> dict[str, Any]:
    """One line of ``rejected.jsonl``."""
    last = plan.outcome
    return {
        "id": plan.item_id,
        "round": plan.round,
        "status": last.status if last else None,
        "reasons": last.reasons if last else [],
        "steps": list(last.chain.steps) if last and last.chain else [],
        "rounds": [
            {"round": o.round, "status": o.status, "reasons": o.reasons} for o in plan.history
        ],
    }


def _stats(values: list[int]) -> dict[str, float | int | None]:
    if not values:
        return {"mean": None, "median": None, "min": None, "max": None}
    return {
        "mean": round(statistics.fmean(values), 3),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def summarise(
    builder: Builder, plans: dict[str, ItemPlan], *, warnings: list[str]
) -> dict[str, Any]:
    """The ``summary.json`` of a build (pure bookkeeping over plans and journals)."""
    config = builder.config
    journals = builder.journals
    accepted = [p for p in plans.values() if p.stage == "accepted"]
    rejected = [p for p in plans.values() if p.stage == "rejected"]
    per_round_items: dict[int, set[str]] = defaultdict(set)
    for record in journals.candidates.records.values():
        if record.item_id in plans:
            per_round_items[record.round].add(record.item_id)
    accepted_by_round = Counter(p.outcome.round for p in accepted if p.outcome)
    gates: Counter[str] = Counter()
    for plan in plans.values():
        for outcome in plan.history:
            gates[outcome.status] += 1
    sent_back = {r.item_id for r in journals.regenerations.records.values() if r.item_id in plans}
    another = [p for p in plans.values() if p.final and p.round > 1]
    lengths = [len(p.outcome.chain.steps) for p in accepted if p.outcome and p.outcome.chain]
    support: Counter[int] = Counter()
    medoids: Counter[str] = Counter()
    members: Counter[str] = Counter()
    full_support = 0
    n_steps = 0
    for plan in accepted:
        assert plan.outcome is not None
        assert plan.outcome.chain is not None
        for step in plan.outcome.chain.provenance:
            support[step.support] += 1
            medoids[step.medoid.model] += 1
            n_steps += 1
            full_support += step.support == step.n_chains
            for member in step.members:
                members[member.model] += 1
    generators: dict[str, dict[str, Any]] = {}
    for endpoint in config.generators:
        records = [
            r
            for r in journals.candidates.records.values()
            if r.model == endpoint.name and r.item_id in plans
        ]
        statuses = Counter(r.status for r in records)
        latencies = [r.latency_s for r in records if r.latency_s is not None]
        generators[endpoint.name] = {
            "model": endpoint.served,
            "requests": len(records),
            "by_status": dict(sorted(statuses.items())),
            "errors_by_kind": dict(
                sorted(Counter(r.error_kind for r in records if r.error_kind).items())
            ),
            "chains_in_consensus": sum(
                1
                for rec in journals.consensus.records.values()
                if rec.item_id in plans
                for key in rec.candidate_keys
                if key.rsplit("|", 4)[1] == endpoint.name
            ),
            "medoid_steps": medoids.get(endpoint.name, 0),
            "member_steps": members.get(endpoint.name, 0),
            "medoid_share": round(medoids.get(endpoint.name, 0) / n_steps, 4) if n_steps else None,
            "mean_latency_s": round(statistics.fmean(latencies), 4) if latencies else None,
            "prompt_tokens": sum(r.prompt_tokens or 0 for r in records),
            "completion_tokens": sum(r.completion_tokens or 0 for r in records),
        }
    verdicts = [v for v in journals.verdicts.records.values() if v.item_id in plans]
    validator = None
    if config.validating and config.validator is not None:
        validator = {
            "name": config.validator.name,
            "model": config.validator.served,
            "requests": len(verdicts),
            "by_status": dict(sorted(Counter(v.status for v in verdicts).items())),
            "accepted": sum(1 for v in verdicts if v.status == "ok" and v.accept),
            "rejected": sum(1 for v in verdicts if v.status == "ok" and v.accept is False),
            "criteria_failed": {
                name: sum(1 for v in verdicts if getattr(v, name) is False)
                for name in (
                    "logical_validity",
                    "sequence_coherence",
                    "visual_grounding",
                    "answer_consistency",
                )
            },
        }
    n_items = len(plans)
    extensions: dict[str, Any] = {}
    if config.precedence:
        extensions["precedence"] = _precedence_summary(builder, accepted)
    return {
        "schema_version": "references-1",
        "crystalbench_version": __version__,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "n_items": n_items,
        "n_accepted": len(accepted),
        "n_rejected": len(rejected),
        "n_pending": n_items - len(accepted) - len(rejected),
        "n_regenerated": len(another),
        "n_sent_back": len(sent_back),
        "share_another_round": round(len(another) / n_items, 4) if n_items else None,
        "rounds": {str(r): len(per_round_items[r]) for r in sorted(per_round_items)},
        "accepted_by_round": {str(r): accepted_by_round[r] for r in sorted(accepted_by_round)},
        "gates": dict(sorted(gates.items())),
        "steps_per_item": _stats(lengths),
        "steps_histogram": {str(k): v for k, v in sorted(Counter(lengths).items())},
        "support_histogram": {str(k): v for k, v in sorted(support.items())},
        "share_full_support": round(full_support / n_steps, 4) if n_steps else None,
        "generators": generators,
        "validator": validator,
        "rejected": [rejected_entry(p) for p in rejected],
        "paper": PAPER,
        "engine": builder.engine.name,
        "encoder": getattr(builder._encoder, "identity", None) or config.encoder,
        "warnings": warnings,
        **extensions,
        "config": config.record(),
    }


def _precedence_summary(builder: Builder, accepted: list[ItemPlan]) -> dict[str, Any]:
    """How much order the inferred precedences left free, over the accepted items."""
    items_free = pairs_free = edges = against = contested = 0
    for plan in accepted:
        assert plan.outcome is not None
        assert plan.outcome.chain is not None
        chain = plan.outcome.chain
        inferred = inferred_precedence(builder, chain)
        assert inferred is not None
        free = len(Precedence.from_pairs(inferred.pairs, len(chain.steps)).interchangeable())
        items_free += free > 0
        pairs_free += free
        edges += len(inferred.pairs)
        against += len(inferred.against_chain)
        contested += len(inferred.contested)
    return {
        "share": builder.config.precedence_share,
        "min_chains": builder.config.precedence_min_chains,
        "n_items_with_interchangeable_steps": items_free,
        "n_interchangeable_pairs": pairs_free,
        "n_edges": edges,
        "n_against_chain": against,
        "n_contested": contested,
    }


def item_views(builder: Builder, plans: dict[str, ItemPlan]) -> list[dict[str, Any]]:
    """Per-item detail for the report: candidates, clusters and chain of the last round.

    Rejected and regenerated items come first; at most
    :data:`~crystalbench.config.settings.REFERENCES_REPORT_MAX_ITEMS` items.
    """
    from crystalbench.config.settings import REFERENCES_REPORT_MAX_ITEMS

    by_item: dict[str, list[Any]] = defaultdict(list)
    for record in builder.journals.candidates.records.values():
        by_item[record.item_id].append(record)
    ordered = sorted(
        plans.values(),
        key=lambda p: (p.stage != "rejected", p.round == 1, list(plans).index(p.item_id)),
    )
    views = []
    for plan in ordered[:REFERENCES_REPORT_MAX_ITEMS]:
        item = builder.items[plan.item_id]
        last = plan.outcome
        round_ = last.round if last else plan.round
        candidates = [
            {
                "model": r.model,
                "sample": r.sample,
                "attempt": r.attempt,
                "seed": r.seed,
                "status": r.status,
                "error": r.error,
                "steps": r.steps,
            }
            for r in sorted(by_item[plan.item_id], key=lambda r: (r.model, r.sample, r.attempt))
            if r.round == round_
        ]
        views.append(
            {
                "id": plan.item_id,
                "question": item.question,
                "options": item.options,
                "answer": item.answer,
                "stage": plan.stage,
                "round": round_,
                "history": [
                    {"round": o.round, "status": o.status, "reasons": o.reasons}
                    for o in plan.history
                ],
                "candidates": candidates,
                "chain": last.chain.model_dump(mode="json") if last and last.chain else None,
                "verdict": last.verdict.model_dump(mode="json") if last and last.verdict else None,
                "precedence": precedence_view(builder, last.chain) if last and last.chain else None,
            }
        )
    return views


def precedence_view(builder: Builder, chain: ConsensusChain) -> dict[str, Any] | None:
    """What the report shows of an item's inferred precedence (``None`` without
    ``--precedence``): per consensus step (0-based), the steps that must come right before it
    (the transitive reduction, with their votes) and the steps it may swap with."""
    inferred = inferred_precedence(builder, chain)
    if inferred is None:
        return None
    n_steps = len(chain.steps)
    before: list[list[dict[str, int]]] = [[] for _ in range(n_steps)]
    for edge in inferred.edges:
        before[edge.after].append({"step": edge.before, "agree": edge.agree, "both": edge.both})
    either: list[list[int]] = [[] for _ in range(n_steps)]
    for a, b in Precedence.from_pairs(inferred.pairs, n_steps).interchangeable():
        either[a].append(b)
        either[b].append(a)
    return {
        "pairs": [list(pair) for pair in inferred.pairs],
        "before": before,
        "either": either,
        "share": inferred.share,
        "n_chains": inferred.n_chains,
    }
