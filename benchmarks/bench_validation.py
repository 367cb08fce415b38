"""Evaluator validation (issue 16): what pair sampling, the thresholds and the ablation cost.

Three measurements on the synthetic CRYSTAL-scale workload (``workload.py``):

``export``
    What exporting the near misses from scoring would cost, against recomputing them when
    sampling. "Inline" is a faithful copy of the scorer's per-item step that also computes
    each step's best unmatched candidate (:func:`crystalbench.validation.best_unmatched`)
    and stores it in a ``candidates`` field of the per-item record; it is timed against the
    shipped step (thread CPU seconds, best of ``--repeats``), with the size of
    ``examples.jsonl`` and the time to read it back. "Recompute" is what ships:
    ``sample_pairs`` on the scored folders, reading vectors from the warm cache.
``thresholds``
    ``run_ablation`` with one encoder on a warm cache: one threshold against five (the
    issue's target: five cost at most 1.3x one).
``full``
    The paper's ablation size: 4 encoders x 5 thresholds x 5 models, each encoder cold (a
    fresh cache), at ``--items`` (6,372 by default), against **four cold scoring passes**
    (each encoder scoring the five sets once, at one threshold, on its own empty cache: what
    one cold encoding costs). ``--encoder-set hash``: four hash encoders of 64 to 512
    dimensions; ``--encoder-set real``: ``minilm-offline``, the hash encoder and two
    sentence-transformers models with random weights built here (BERT-style, MiniLM's
    tokenizer; no hub is reachable). Also reported: the encoders' forward seconds, and what
    twenty separate scoring passes would cost instead.

Every figure comes with the load average (the machine is shared). Usage::

    python benchmarks/bench_validation.py export --items 6000
    python benchmarks/bench_validation.py thresholds --items 6372 --sets 5 --encoder hash
    python benchmarks/bench_validation.py full --items 6372 --sets 5 --encoder-set hash
    python benchmarks/bench_validation.py full --items 1000 --sets 5 --encoder-set real
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from crystalbench.config.scoring import ScoreConfig  # noqa: E402
from crystalbench.config.settings import ABLATION_THRESHOLDS  # noqa: E402
from crystalbench.data import load_benchmark  # noqa: E402
from crystalbench.data.predictions import load_predictions  # noqa: E402


def load() -> float:
    return round(os.getloadavg()[0], 2)


def files_for(args: argparse.Namespace, sets: int) -> Any:
    root = args.workdir / f"w{args.items}x{sets}"
    return workload.write_workload(root, args.items, sets, crystal_metrics_format=False)


# --------------------------------------------------------------------------- export


def _inline_classes() -> tuple[Any, Any]:
    """A per-item record with a ``candidates`` field and an item scorer that fills it."""
    from pydantic import Field

    from crystalbench.scoring import ItemScorer
    from crystalbench.types import ItemResult
    from crystalbench.validation import best_unmatched

    class ItemWithCandidates(ItemResult):
        candidates: list[tuple[int, int, float]] = Field(default_factory=list)

    class InlineScorer(ItemScorer):
        """The shipped per-item step, keeping each chain's candidates for the record."""

        def chain_fields(self, similarity, chain):  # type: ignore[no-untyped-def]
            self.similarities.append(similarity)
            return super().chain_fields(similarity, chain)

        def score(self, prepared, vectors, verdict):  # type: ignore[no-untyped-def]
            self.similarities: list[Any] = []
            result = super().score(prepared, vectors, verdict)
            similarity = self.similarities[result.ref_chain]
            return ItemWithCandidates(
                **dict(result), candidates=best_unmatched(similarity, result.matches)
            )

    return ItemWithCandidates, InlineScorer


def export(args: argparse.Namespace) -> dict[str, Any]:
    from crystalbench._internal.io import read_jsonl
    from crystalbench.encoders import EmbeddingStore, HashEncoder
    from crystalbench.report import load_run
    from crystalbench.scoring import ScoringEngine, StepVectors
    from crystalbench.scoring.evaluation import evaluate
    from crystalbench.types import ItemResult
    from crystalbench.validation import sample_pairs

    item_class, inline_scorer = _inline_classes()
    files = files_for(args, 1)
    bench = load_benchmark(str(files.benchmark))
    preds = load_predictions(files.predictions[0])
    config = ScoreConfig(encoder="hash", use_cache=False)
    results: dict[str, Any] = {"items": args.items, "load_average_start": load()}
    prepared = {}
    for name in ("shipped", "inline"):
        engine = ScoringEngine(config, encoder=HashEncoder())
        shipped = engine.item_scorer()
        scorer = shipped if name == "shipped" else inline_scorer(engine.rules)
        ready = [scorer.prepare(item, preds.by_id.get(item.id)) for item in bench.items]
        texts = list(dict.fromkeys(t for one in ready for t in one.texts()))
        vectors = StepVectors(texts, engine.front.lookup_matrix(texts))
        verdicts = engine.verdicts(ready)
        calls = [(one, vectors, verdict) for one, verdict in zip(ready, verdicts, strict=True)]
        prepared[name] = (scorer, calls)
    loops: dict[str, list[float]] = {"shipped": [], "inline": []}
    records: dict[str, list[Any]] = {}
    for _ in range(args.repeats):
        for name, (scorer, calls) in prepared.items():
            started = time.thread_time()
            out = [scorer.score(*call) for call in calls]
            loops[name].append(time.thread_time() - started)
            records[name] = out
    with tempfile.TemporaryDirectory() as tmp:
        for name, out in records.items():
            path = Path(tmp) / f"{name}.jsonl"
            started = time.thread_time()
            path.write_text("".join(r.model_dump_json() + "\n" for r in out))
            write = time.thread_time() - started
            cls = item_class if name == "inline" else ItemResult
            reads = []
            for _ in range(3):
                started = time.thread_time()
                for _, record in read_jsonl(path):
                    cls.model_validate(record)
                reads.append(time.thread_time() - started)
            results[name] = {
                "loop_best_s": round(min(loops[name]), 4),
                "loop_median_s": round(statistics.median(loops[name]), 4),
                "per_item_us": round(1e6 * min(loops[name]) / args.items, 1),
                "write_s": round(write, 4),
                "read_best_s": round(min(reads), 4),
                "examples_bytes": path.stat().st_size,
            }
        # what ships: score normally (cache on), then sample pairs from the warm cache
        store = EmbeddingStore(Path(tmp) / "cache" / "embeddings.sqlite")
        evaluate(bench, preds, ScoreConfig(encoder="hash"), store=store, out_dir=Path(tmp) / "run")
        run = load_run(Path(tmp) / "run")
        started = time.perf_counter()
        cpu = time.thread_time()
        sample = sample_pairs([run], per_band=20, store=store)
        results["recompute_at_sampling"] = {
            "sample_pairs_wall_s": round(time.perf_counter() - started, 3),
            "sample_pairs_cpu_s": round(time.thread_time() - cpu, 3),
            "candidates": sample.n_candidates,
            "pairs": len(sample.pairs),
        }
    shipped, inline = results["shipped"], results["inline"]
    results["inline_vs_shipped"] = {
        "loop": round(inline["loop_best_s"] / shipped["loop_best_s"], 3),
        "bytes": round(inline["examples_bytes"] / shipped["examples_bytes"], 3),
        "read": round(inline["read_best_s"] / shipped["read_best_s"], 3),
    }
    results["load_average_end"] = load()
    return results


# --------------------------------------------------------------------------- thresholds


def thresholds(args: argparse.Namespace) -> dict[str, Any]:
    from crystalbench.encoders import EmbeddingStore, load_encoder
    from crystalbench.validation import run_ablation

    files = files_for(args, args.sets)
    bench = load_benchmark(str(files.benchmark))
    sets = [(p.stem, load_predictions(p)) for p in files.predictions]
    store = EmbeddingStore(args.workdir / "cache-thresholds" / "embeddings.sqlite")
    encoder = load_encoder(args.encoder)
    config = ScoreConfig(encoder=args.encoder)
    encoders = [(args.encoder, args.encoder)]
    objects = {args.encoder: encoder}
    warm = run_ablation(
        bench,
        sets,
        encoders,
        thresholds=(0.35,),
        config=config,
        encoder_objects=objects,
        store=store,
    )  # fills the cache
    timings: dict[str, list[float]] = {"one": [], "five": []}
    cpu: dict[str, list[float]] = {"one": [], "five": []}
    derive: list[float] = []
    loads: list[float] = []
    for _ in range(args.repeats):
        for name, grid in (("one", (0.35,)), ("five", ABLATION_THRESHOLDS)):
            loads.append(load())
            started, cpu_started = time.perf_counter(), time.process_time()
            report = run_ablation(
                bench,
                sets,
                encoders,
                thresholds=grid,
                config=config,
                encoder_objects=objects,
                store=store,
            )
            timings[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - cpu_started)
            assert report.encoders[0].encoded == 0, "the cache was not warm"
            if name == "five":
                derive.append(report.encoders[0].derive_seconds)

    def summary(values: list[float]) -> dict[str, float]:
        return {"best": round(min(values), 3), "median": round(statistics.median(values), 3)}

    return {
        "items": args.items,
        "sets": args.sets,
        "encoder": args.encoder,
        "repeats": args.repeats,
        "warm_up_encoded": warm.encoders[0].encoded,
        "wall_s": {name: summary(values) for name, values in timings.items()},
        "cpu_s": {name: summary(values) for name, values in cpu.items()},
        "ratio_cpu_best": round(min(cpu["five"]) / min(cpu["one"]), 3),
        "ratio_cpu_median": round(
            statistics.median(cpu["five"]) / statistics.median(cpu["one"]), 3
        ),
        "ratio_wall_best": round(min(timings["five"]) / min(timings["one"]), 3),
        "four_more_thresholds_derive_s": summary(derive),
        "load_average": {"min": min(loads), "max": max(loads)},
    }


# --------------------------------------------------------------------------- full


def random_sentence_model(folder: Path, *, hidden: int, layers: int, seed: int) -> Path:
    """A BERT-style sentence-transformers model with random weights and MiniLM's tokenizer."""
    if (folder / "modules.json").is_file():
        return folder
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    from crystalbench.encoders.sentence import offline_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(offline_model_path()))
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=hidden * 4,
        max_position_embeddings=512,
    )
    raw = folder.with_name(folder.name + "-raw")
    BertModel(config).save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    transformer = models.Transformer(str(raw), max_seq_length=128)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), "mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder))
    return folder


def _encoder_set(args: argparse.Namespace) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The four encoders: ``hash`` (hash encoders of 64, 128, 256 and 512 dimensions: four
    distinct identities, so four caches, at almost no forward cost) or ``real``
    (``minilm-offline`` on the default path, the hash encoder and two random-weight BERTs)."""
    if args.encoder_set == "hash":
        from crystalbench.encoders import HashEncoder

        dims = (64, 128, 256, 512)
        return [(f"hash{d}", "hash") for d in dims], {f"hash{d}": HashEncoder(d) for d in dims}
    models = args.workdir / "models"
    return [
        ("minilm", "minilm-offline"),
        ("hash", "hash"),
        (
            "random-bert-256x4",
            str(random_sentence_model(models / "rand-256x4", hidden=256, layers=4, seed=1)),
        ),
        (
            "random-bert-128x2",
            str(random_sentence_model(models / "rand-128x2", hidden=128, layers=2, seed=2)),
        ),
    ], {}


def full(args: argparse.Namespace) -> dict[str, Any]:
    """The 4 x 5 x 5 ablation on a cold cache, against one cold scoring pass per encoder.

    "One cold encoding" of an encoder is what scoring the five sets with it once costs on an
    empty cache (``run_ablation`` with one threshold: one ``evaluate_many`` pass, each distinct
    text encoded once). The target: the ablation costs about the sum of the four.
    """
    from crystalbench.encoders import EmbeddingStore
    from crystalbench.validation import run_ablation, write_ablation

    files = files_for(args, args.sets)
    bench = load_benchmark(str(files.benchmark))
    sets = [(p.stem, load_predictions(p)) for p in files.predictions]
    encoders, objects = _encoder_set(args)
    stamp = int(time.time())
    config = ScoreConfig(encoder="hash")

    def cold(grid: Any, chosen: list[tuple[str, str]], tag: str) -> tuple[Any, float, float]:
        store = EmbeddingStore(args.workdir / f"cache-{tag}-{stamp}" / "embeddings.sqlite")
        began, cpu_began = time.perf_counter(), time.process_time()
        report = run_ablation(
            bench,
            sets,
            chosen,
            thresholds=grid,
            config=config,
            store=store,
            encoder_objects={label: objects[label] for label, _ in chosen if label in objects},
        )
        return report, time.perf_counter() - began, time.process_time() - cpu_began

    loads = [load()]
    single: dict[str, dict[str, float]] = {}
    if args.reference_first:
        for label, name in encoders:
            ref, wall, cpu = cold((0.35,), [(label, name)], f"one-{label}")
            single[label] = {"wall_s": wall, "cpu_s": cpu, "encoded": ref.encoders[0].encoded}
            loads.append(load())
    report, total, total_cpu = cold(ABLATION_THRESHOLDS, encoders, "full")
    loads.append(load())
    if not args.reference_first:
        for label, name in encoders:
            ref, wall, cpu = cold((0.35,), [(label, name)], f"one-{label}")
            single[label] = {"wall_s": wall, "cpu_s": cpu, "encoded": ref.encoders[0].encoded}
            loads.append(load())
    write_ablation(report, args.workdir / f"ablation-full-{args.encoder_set}")
    forward = sum(e.encode_seconds for e in report.encoders)
    scoring = sum(e.score_seconds for e in report.encoders)
    derive = sum(e.derive_seconds for e in report.encoders)
    four_wall = sum(v["wall_s"] for v in single.values())
    four_cpu = sum(v["cpu_s"] for v in single.values())
    # one warm single-threshold pass per encoder: what each of the 16 other cells would cost
    # if every cell were scored separately (thresholds not reused)
    warm: dict[str, float] = {}
    store = EmbeddingStore(args.workdir / f"cache-full-{stamp}" / "embeddings.sqlite")
    for label, name in encoders:
        began = time.perf_counter()
        again = run_ablation(
            bench,
            sets,
            [(label, name)],
            thresholds=(0.35,),
            config=config,
            store=store,
            encoder_objects={label: objects[label]} if label in objects else None,
        )
        warm[label] = time.perf_counter() - began
        assert again.encoders[0].encoded == 0
    loads.append(load())
    separate = scoring + sum(4 * warm[label] for label, _ in encoders)
    return {
        "items": args.items,
        "sets": args.sets,
        "encoder_set": args.encoder_set,
        "cells": len(report.cells),
        "ablation_wall_s": round(total, 1),
        "ablation_cpu_s": round(total_cpu, 1),
        "four_cold_passes_wall_s": round(four_wall, 1),
        "four_cold_passes_cpu_s": round(four_cpu, 1),
        "ratio_wall": round(total / four_wall, 3),
        "ratio_cpu": round(total_cpu / four_cpu, 3),
        "cold_pass_by_encoder": {
            k: {n: round(x, 2) if isinstance(x, float) else x for n, x in v.items()}
            for k, v in single.items()
        },
        "reference_first": args.reference_first,
        "forward_s": round(forward, 1),
        "scoring_passes_s": round(scoring, 1),
        "derive_thresholds_s": round(derive, 2),
        "outside_forward_share": round((total - forward) / total, 4),
        "encoders": [e.model_dump() for e in report.encoders],
        "warm_pass_s": {k: round(v, 1) for k, v in warm.items()},
        "twenty_separate_passes_estimate_s": round(separate, 1),
        "mean_f1_by_encoder": report.mean_f1_by_encoder,
        "min_kendall_tau": report.min_kendall_tau,
        "load_average": {"min": min(loads), "max": max(loads), "all": loads},
        "torch_threads": _torch_threads(),
    }


def _torch_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("what", choices=("export", "thresholds", "full"))
    parser.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    parser.add_argument("--sets", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--encoder", default="hash")
    parser.add_argument(
        "--encoder-set",
        choices=("hash", "real"),
        default="hash",
        help="full: four hash encoders (64-512 dims) or minilm-offline, hash and two random BERTs",
    )
    parser.add_argument(
        "--reference-first",
        action="store_true",
        help="full: time the four cold single-threshold passes before the ablation",
    )
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "crystal-bench-validation"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    result = {"export": export, "thresholds": thresholds, "full": full}[args.what](args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
