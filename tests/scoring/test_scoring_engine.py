"""The scoring engine's public parts: the per-item stages, candidate filters, the pass over
several sets, and the caching front end's memory (held texts, passing texts, MemoryStore)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import crystalbench
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import CachingEncoder, EmbeddingStore, HashEncoder, OneHotEncoder
from crystalbench.encoders.cache import MemoryStore, text_key
from crystalbench.scoring import (
    CandidateFilter,
    ChainContext,
    ItemScorer,
    PreparedItem,
    ScoringEngine,
    StepVectors,
    recurring_texts,
)
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.evaluation_many import evaluate_many
from crystalbench.scoring.matching import MatchRules
from crystalbench.types import AnswerVerdict, Prediction
from fakes import HASH_CONFIG, CountingEncoder, make_benchmark, make_item

TABLE = {
    "bar a is 40": [1.0, 0.0, 0.0],
    "bar a is 50": [0.95, 0.3122, 0.0],
    "bar a reads 40": [0.9, 0.0, 0.4359],
}


class Veto:
    """A candidate filter that vetoes pairs whose texts hold different numbers, and counts
    what it saw (the shape of a fact guard, for the plug-in point)."""

    name = "veto"

    def __init__(self) -> None:
        self.prepared: list[list[str]] = []
        self.items: list[str | None] = []
        self.finished = 0
        self.vetoed = 0

    def prepare(self, batch: Sequence[PreparedItem]) -> None:
        self.prepared.append([ready.item.id for ready in batch])

    def candidates(
        self,
        similarity: np.ndarray,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        context: ChainContext,
    ) -> np.ndarray:
        self.items.append(context.item.id if context.item is not None else None)
        out = similarity.copy()
        for i, pred in enumerate(pred_steps):
            for j, ref in enumerate(ref_steps):
                numbers = {w for w in pred.split() if w.isdigit()}
                if numbers != {w for w in ref.split() if w.isdigit()}:
                    out[i, j] = np.nan
                    self.vetoed += 1
        return out

    def finish(self) -> None:
        self.finished += 1

    def record(self) -> dict[str, Any]:
        return {"veto": {"vetoed": self.vetoed}}


def test_a_vetoed_pair_is_no_candidate_and_matching_moves_on():
    """The closest predicted step states another number: vetoed, the next best matches."""
    veto = Veto()
    assert isinstance(veto, CandidateFilter)
    item = make_item("v", ["bar a is 40"], answer="40")
    preds = {"v": Prediction(id="v", reasoning_steps=["bar a is 50", "bar a reads 40"])}
    engine = ScoringEngine(HASH_CONFIG, encoder=OneHotEncoder(TABLE))
    plain = engine.item_scorer()
    guarded = ItemScorer(engine.rules, filters=[veto])
    out = dict(engine.iter_scored([item], [preds, preds], [plain, guarded]))
    assert [(i, j) for i, j, _ in out[0].matches] == [(0, 0)]  # cosine 0.95 wins
    assert [(i, j) for i, j, _ in out[1].matches] == [(1, 0)]  # 0.9, once 0.95 is vetoed
    assert (out[1].precision, out[1].recall) == (0.5, 1.0)
    assert veto.prepared == [["v"]]
    assert veto.items == ["v"]  # the filter reads the item it filters (its options)
    assert veto.finished == 1  # told once the set is scored
    assert veto.vetoed == 1
    assert engine.config_record(make_benchmark([item]), None, guarded)["veto"] == {"vetoed": 1}
    assert "veto" in engine.timings


def test_the_stages_compose_into_the_record():
    scorer = ItemScorer(MatchRules(tau=0.5), alpha=0.0)
    item = make_item("s", ["bar a is 40", "  "], reference_chains=[["bar a reads 40"]])
    ready = scorer.prepare(item, Prediction(id="s", reasoning_steps=["bar a is 50", " "]))
    assert ready.pred_steps == ["bar a is 50"]
    assert ready.pred_blank == 1
    assert [chain.steps for chain in ready.chains] == [["bar a is 40"], ["bar a reads 40"]]
    assert ready.texts() == ["bar a is 40", "bar a reads 40", "bar a is 50"]
    encoder = OneHotEncoder(TABLE)
    vectors = StepVectors(ready.texts(), encoder.encode(ready.texts()))
    verdict = AnswerVerdict(correct=None, rule="missing", answer_type="numeric")
    result = scorer.score(ready, vectors, verdict)
    assert (result.ref_chain, result.n_ref_chains, result.n_blank_dropped) == (0, 2, 2)
    similarity = scorer.candidates(
        vectors.of(ready.pred_steps), vectors.of(ready.chains[0].steps), ready.pred_steps, []
    )
    assert scorer.chain_fields(similarity, ready.chains[0])["f1"] == result.f1 == 1.0
    compat = ItemScorer(compat="crystal-metrics-0.2")
    assert len(compat.reference_chains(item)) == 1
    assert compat.prepare(item, Prediction(id="s", reasoning_steps=[" "])).pred_steps == [" "]


def test_the_engine_is_public_and_iter_results_equals_evaluate():
    bench = load_benchmark("sample")
    preds = load_predictions(SAMPLE_DIR / "predictions" / "messy-raw.jsonl")
    assert crystalbench.ScoringEngine is ScoringEngine
    engine = ScoringEngine(HASH_CONFIG)
    streamed = list(engine.iter_results(bench.items, preds.by_id, chunk_items=7))
    assert streamed == evaluate(bench, preds, HASH_CONFIG).items


def test_one_set_reports_every_stage_and_progress(tmp_path):
    bench = load_benchmark("sample")
    preds = load_predictions(SAMPLE_DIR / "predictions" / "terse-precise.jsonl")
    seen: dict[str, int] = {}

    def hook(stage: str, n: int, total: int | None) -> None:
        seen[stage] = seen.get(stage, 0) + n

    run = evaluate(bench, preds, HASH_CONFIG, progress=hook, out_dir=tmp_path)
    assert set(run.timings) >= {
        "parse",
        "embed",
        "answers",
        "score",
        "write",
        "total",
        "encode_forward",
    }
    assert seen["parse"] == seen["score"] == len(bench)
    assert seen["encode"] == run.encode_stats.encoded  # no cache: every distinct text encoded


def test_the_encoding_bar_has_a_total_and_reaches_it_with_a_warm_cache(tmp_path):
    """Issue 30: the bar showed ``1536/?``. Its total is the run's distinct step texts, and it
    advances by the texts encoded and by those found in the cache."""
    bench = load_benchmark("sample")
    preds = load_predictions(SAMPLE_DIR / "predictions" / "terse-precise.jsonl")
    config = HASH_CONFIG.model_copy(update={"use_cache": True, "cache_dir": str(tmp_path / "c")})
    for attempt in ("cold", "warm"):
        calls: list[tuple[int, int | None]] = []

        def hook(stage: str, n: int, total: int | None, calls=calls) -> None:
            if stage == "encode":
                calls.append((n, total))

        run = evaluate(bench, preds, config, progress=hook, out_dir=tmp_path / attempt)
        (total,) = {t for _, t in calls}
        assert total is not None
        assert sum(n for n, _ in calls) == total
        if attempt == "cold":  # every distinct text encoded once
            assert run.encode_stats.encoded == total
        else:  # every one found in the cache
            assert run.encode_stats.encoded == 0
            assert run.encode_stats.cache_hits == total


def test_a_text_every_chunk_needs_is_encoded_once_even_for_one_set():
    common = "Read the value of the tallest bar."
    items = [make_item(i, [common, f"Add {i} and 2."]) for i in range(1, 9)]
    preds = [Prediction(id=i.id, reasoning_steps=[common]) for i in items]
    encoder = CountingEncoder()
    engine = ScoringEngine(HASH_CONFIG, encoder=encoder)
    results = list(
        engine.iter_results(items, {p.id: p for p in preds}, chunk_items=3)
    )  # three chunks
    assert encoder.seen.count(common) == 1
    assert len(encoder.seen) == len(set(encoder.seen))
    assert [r.f1 for r in results] == [pytest.approx(2 / 3)] * 8


def test_recurring_texts_keep_and_drop():
    keep, drop = recurring_texts([["a", "b"], ["b", "c"], ["d"], ["a"]])
    assert {k: sorted(v) for k, v in keep.items()} == {0: ["a", "b"]}
    assert dict(drop) == {1: ["b"], 3: ["a"]}
    assert recurring_texts([["a", "a"]]) == ({}, {})


def test_several_sets_share_one_engine_but_each_has_its_own_filters():
    engine = ScoringEngine(HASH_CONFIG)
    first, second = engine.item_scorer(), engine.item_scorer()
    assert first is not second
    assert first.rules == second.rules == engine.rules
    many = evaluate_many(
        load_benchmark("sample"),
        {p.stem: p for p in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[:2]},
        HASH_CONFIG,
    )
    assert {run.encode_stats is many.encode_stats for run in many.runs.values()} == {True}


# ----------------------------------------------------------------------------- the front end


def test_held_texts_are_found_in_memory_until_released():
    encoder = CountingEncoder(HashEncoder(dim=8))
    front = CachingEncoder(encoder)
    first = front.lookup_matrix(["a", "b"])
    front.hold(["b"], first[1:])
    again = front.lookup_matrix(["b", "c"])
    assert np.array_equal(again[0], first[1])
    assert encoder.seen == ["a", "b", "c"]
    front.release(["b"])
    front.lookup_matrix(["b"])
    assert encoder.seen.count("b") == 2


def test_passing_texts_share_the_encoder_call_but_never_reach_the_store(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    encoder = CountingEncoder(HashEncoder(dim=8))
    front = CachingEncoder(encoder, store)
    vectors = front.lookup(["reference"], passing=["completion"])
    assert sorted(vectors) == ["completion", "reference"]
    assert len(encoder.calls) == 1
    identity = encoder.identity
    assert list(store.get_many(identity, [text_key("reference"), text_key("completion")])) == [
        text_key("reference")
    ]


def test_memory_store_drops_the_least_recently_used_and_reads_through_its_backing(tmp_path):
    disk = EmbeddingStore(tmp_path / "e.sqlite")
    vector = np.ones(2, dtype=np.float32)
    disk.put_many("enc", [(b"d", vector)])
    memory = MemoryStore(size=2, backing=disk)
    memory.put_many("enc", [(b"a", vector), (b"b", vector)])
    assert sorted(disk.get_many("enc", [b"a", b"b"])) == [b"a", b"b"]  # written through
    memory.get_many("enc", [b"a"])  # a is now the most recent
    found = memory.get_many("enc", [b"d"])  # from the disk, then kept: b goes
    assert list(found) == [b"d"]
    assert (memory.hits, memory.backing_hits) == (1, 1)
    assert ("enc", b"b") not in memory
    assert ("enc", b"a") in memory
    matrix, hits = memory.get_matrix("enc", [b"a", b"x"])
    assert hits.tolist() == [True, False]
    assert matrix.shape == (2, 2)
    nothing = MemoryStore(size=0)
    nothing.put_many("enc", [(b"a", vector)])
    assert len(nothing) == 0


def test_score_config_encoder_options_reach_the_engine(monkeypatch):
    seen: dict[str, Any] = {}

    def fake_load(name: str, **options: Any) -> HashEncoder:
        seen.update(options, name=name)
        return HashEncoder()

    monkeypatch.setattr("crystalbench.scoring.engine.load_encoder", fake_load)
    config = ScoreConfig(encoder="hash", use_cache=False, batch_size=16, device="cpu")
    ScoringEngine(config)
    assert seen == {"name": "hash", **config.encoder_options()}
