"""Per-item scoring loop and results files: time per stage on a synthetic workload.

Measures what the per-item records cost: ``evaluate`` with the deterministic hash encoder
and no cache on ``--items`` synthetic items (``workload.py``), writing ``examples.jsonl`` and
``summary.json``, then ``load_run`` reading the folder back. The stages are the scorer's
own timings: ``score`` is the per-item loop (matching + building one ``ItemResult`` each),
``write`` the streaming of records to disk. Each figure is the best of ``--repeats`` runs
after one warm-up (the hash encoder's vectors are memoised by then, so ``embed`` is small).

Usage::

    python benchmarks/bench_item_records.py --items 6000 --repeats 7
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
from crystalbench.config import ScoreConfig  # noqa: E402
from crystalbench.data import load_benchmark  # noqa: E402
from crystalbench.encoders import HashEncoder  # noqa: E402
from crystalbench.predictions import load_predictions  # noqa: E402
from crystalbench.report import load_run  # noqa: E402
from crystalbench.scoring import evaluate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=6000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
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
            started = time.perf_counter()
            loaded = load_run(out)
            load_seconds = time.perf_counter() - started
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
        "load_average": round(os.getloadavg()[0], 2),
        "examples_bytes": size,
        "best_s": {k: round(min(v), 4) for k, v in stages.items()},
        "median_s": {k: round(statistics.median(v), 4) for k, v in stages.items()},
        "match_f1": run.summary.match_f1,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
