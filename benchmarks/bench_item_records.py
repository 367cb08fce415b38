"""Per-item scoring loop and results files: time per stage on a synthetic workload.

Measures what the per-item records cost: ``evaluate`` with the deterministic hash encoder
and no cache on ``--items`` synthetic items (``workload.py``), writing ``examples.jsonl`` and
``summary.json``, then ``load_run`` reading the folder back. The stages are the scorer's
own timings: ``score`` is the per-item loop (matching + building one ``ItemResult`` each),
``write`` the streaming of records to disk (and, since results are written as a pair, the
summary's commit). Each figure is the best of ``--repeats`` runs after one warm-up.

With ``--cpu`` every stage is timed in CPU seconds of the scoring thread instead of wall
seconds (the scorer's clock is swapped for :func:`time.thread_time`): on a shared, loaded
machine that is what stays comparable between two versions of the code.

``--loop`` times only the per-item hot path, many times over: with every item's parse,
step vectors and answer verdict prepared once, one pass calls the scorer's per-item step
(matching and building the :class:`~crystalbench.types.ItemResult`) and the aggregator for
each item; the best of ``--repeats`` passes is reported. This is the part the per-item
records change, without the encoder and answer stages around it.

Usage::

    python benchmarks/bench_item_records.py --items 6000 --repeats 7 --cpu
    python benchmarks/bench_item_records.py --items 6000 --repeats 15 --loop
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from crystalbench.config.scoring import ScoreConfig  # noqa: E402
from crystalbench.data import load_benchmark  # noqa: E402
from crystalbench.data.predictions import load_predictions  # noqa: E402
from crystalbench.encoders import HashEncoder  # noqa: E402
from crystalbench.report import load_run  # noqa: E402
from crystalbench.scoring.evaluation import evaluate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=6000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--cpu", action="store_true", help="time stages in thread CPU seconds")
    parser.add_argument("--loop", action="store_true", help="time the per-item loop alone")
    args = parser.parse_args()
    if args.loop:
        return time_loop(args)
    clock = time.thread_time if args.cpu else time.perf_counter
    if args.cpu:
        import types

        import crystalbench.scoring.evaluation

        crystalbench.scoring.evaluation.time = types.SimpleNamespace(perf_counter=clock)  # type: ignore[attr-defined]
    root = args.workdir or Path(tempfile.gettempdir()) / f"crystal-bench-items-{args.items}"
    files = workload.write_workload(root, args.items, 1, crystal_metrics_format=False)
    bench = load_benchmark(str(files.benchmark))
    preds = load_predictions(files.predictions[0])
    encoder = HashEncoder()
    config = ScoreConfig(encoder="hash", use_cache=False)
    stages: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats + 1):
            out = Path(tmp) / "run"
            run = evaluate(bench, preds, config, encoder=encoder, out_dir=out)
            started = clock()
            loaded = load_run(out)
            load_seconds = clock() - started
            assert len(loaded.items) == len(bench)
            if repeat == 0:
                continue  # warm-up
            for name in ("parse", "embed", "answers", "score", "write", "total"):
                stages.setdefault(name, []).append(run.timings.get(name, 0.0))
            stages.setdefault("load_run", []).append(load_seconds)
        size = (Path(tmp) / "run" / "examples.jsonl").stat().st_size
    report = {
        "items": args.items,
        "repeats": args.repeats,
        "clock": "thread CPU seconds" if args.cpu else "wall seconds",
        "load_average": round(os.getloadavg()[0], 2),
        "examples_bytes": size,
        "best_s": {k: round(min(v), 4) for k, v in stages.items()},
        "median_s": {k: round(statistics.median(v), 4) for k, v in stages.items()},
        "match_f1": run.summary.match_f1,
    }
    print(json.dumps(report, indent=2))
    return 0


def time_loop(args: argparse.Namespace) -> int:
    """Best-of-N thread CPU seconds of the per-item loop (``--loop``)."""
    from crystalbench.scoring import Aggregator, ScoringEngine, StepVectors

    root = args.workdir or Path(tempfile.gettempdir()) / f"crystal-bench-items-{args.items}"
    files = workload.write_workload(root, args.items, 1, crystal_metrics_format=False)
    bench = load_benchmark(str(files.benchmark))
    preds = load_predictions(files.predictions[0]).by_id
    engine = ScoringEngine(ScoreConfig(encoder="hash", use_cache=False), encoder=HashEncoder())
    scorer = engine.item_scorer()
    ready = [scorer.prepare(item, preds.get(item.id)) for item in bench.items]
    texts = list(dict.fromkeys(t for one in ready for t in one.texts()))
    vectors = StepVectors(texts, engine.front.lookup_matrix(texts))
    verdicts = engine.verdicts(ready)
    calls = list(zip(ready, verdicts, strict=True))
    passes = []
    for _ in range(args.repeats):
        aggregator = Aggregator()
        started = time.thread_time()
        for one, verdict in calls:
            aggregator.add(scorer.score(one, vectors, verdict))
        passes.append(time.thread_time() - started)
    report = {
        "items": args.items,
        "passes": args.repeats,
        "clock": "thread CPU seconds",
        "load_average": round(os.getloadavg()[0], 2),
        "best_s": round(min(passes), 4),
        "median_s": round(statistics.median(passes), 4),
        "per_item_us": round(1e6 * min(passes) / args.items, 1),
        "match_f1": aggregator.summary({}).match_f1,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
