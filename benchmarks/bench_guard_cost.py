"""The fact guard's cost on a 6,372-item scoring run (issue 24, point 3: at most 5 %).

Every measured run is a fresh process that scores one prediction set of the CRYSTAL-scale
workload (``benchmarks/workload.py``, v2: 6,372 items, mean 11.6 reference steps) through
:func:`crystalbench.scoring.job.score_job`, the function behind ``crystal score``, and
reports its wall time and the engine's own stage timings (``timings["guard"]``: the guard's
checks, its start-up read of remembered decisions and its final write). Conditions, per
encoder:

- **cold**: a fresh cache (no vectors, no remembered decisions): ``--guard none`` against
  ``--guard facts`` and ``facts-strict``. With MiniLM this is the run the issue's 5 % is
  about (the guard's seconds against the whole run's); with the hash encoder (encoding
  nearly free) it shows the guard against the non-encoder work alone;
- **first guarded re-score**: vectors cached, decisions not (a user turns the guard on
  for a set scored before): every reached pair is read once;
- **warm re-score**: vectors and decisions cached, another tau (0.40) and alpha (0.5), as
  ``bench_cli.py warm`` does: ``none`` against the guards, rounds interleaved.

Usage (from the repository root; ``PY`` the project's interpreter)::

    HF_HUB_OFFLINE=1 $PY benchmarks/bench_guard_cost.py --encoders hash,minilm-offline \\
        --rounds 3 --wait-quiet 0.2          # ~25 min on 2 cores, most of it MiniLM's cold runs

Writes ``benchmarks/results/raw/guard-cost-<items>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from bench_cli import child_env, compile_sources, cpu_model  # noqa: E402
from bench_scoring import QUIET, flag, timed  # noqa: E402

WORKDIR = HERE / "workdir" / "guard-cost"
RESULTS = HERE / "results" / "raw"
GUARDS = ("none", "facts", "facts-strict")
RESCORE = {"threshold": 0.40, "alpha": 0.5}


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One scoring run in this process (the child side): wall time, stage timings, counts."""
    began = time.perf_counter()
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.scoring.job import ScoreJob, score_job

    job = ScoreJob(
        benchmark=spec["benchmark"],
        predictions=[spec["predictions"]],
        scoring=ScoreConfig(**spec["scoring"]),
    )
    done = score_job(job, spec["out"])
    wall = time.perf_counter() - began
    ((_, run),) = done.runs.items()
    summary = run.summary
    return {
        "wall_s": round(wall, 3),
        "timings": {k: round(v, 4) for k, v in run.timings.items()},
        "encoded": done.encode_stats.encoded,
        "match_f1": summary.match_f1,
        "n_vetoed_pairs": summary.n_vetoed_pairs,
        "n_vetoed_items": summary.n_vetoed_items,
        "vetoed_by_reason": summary.vetoed_by_reason,
    }


def measure(spec: dict[str, Any], label: str) -> dict[str, Any]:
    """Run :func:`child` in a fresh process (timed from outside too)."""
    env = child_env(None)
    with timed() as clock:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        process = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{label} failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    guard = out["timings"].get("guard", 0.0)
    out.update(
        label=label,
        process_s=round(process, 3),
        guard_s=round(guard, 4),
        guard_share_pct=round(100 * guard / out["wall_s"], 2),
        others_cpu_share=round(clock.others_share, 3),
        load_average=[clock.load_before, clock.load_after],
    )
    print(
        f"  {label:<44} {out['wall_s']:8.2f} s | guard {guard:6.2f} s "
        f"({out['guard_share_pct']:5.2f} %) | vetoes {out['n_vetoed_pairs']}{flag(clock)}",
        flush=True,
    )
    return out


def run_encoder(encoder: str, files: Any, rounds: int) -> dict[str, Any]:
    base = WORKDIR / encoder
    preds = str(files.predictions[0])

    def spec(cache: Path, guard: str, rescore: bool) -> dict[str, Any]:
        scoring = {"encoder": encoder, "cache_dir": str(cache), "guard": guard}
        if rescore:
            scoring.update(RESCORE)
        return {
            "benchmark": str(files.benchmark),
            "predictions": preds,
            "scoring": scoring,
            "out": str(base / "out" / guard),
        }

    record: dict[str, Any] = {"encoder": encoder, "cold": {}, "first_guarded_rescore": {}}
    print(f"== {encoder}: cold runs (fresh cache each)")
    caches = {}
    for guard in GUARDS:
        cache = base / f"cache-{guard}"
        shutil.rmtree(cache, ignore_errors=True)
        record["cold"][guard] = measure(spec(cache, guard, False), f"cold, guard {guard}")
        caches[guard] = cache
    print(f"== {encoder}: first guarded re-score (vectors cached, no decisions)")
    for guard in GUARDS[1:]:
        cache = base / f"cache-first-{guard}"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(caches["none"], cache)  # the unguarded run's vectors only
        record["first_guarded_rescore"][guard] = measure(
            spec(cache, guard, True), f"first guarded re-score, {guard}"
        )
    print(f"== {encoder}: warm re-scores (vectors and decisions cached), interleaved")
    warm: dict[str, list[dict[str, Any]]] = {guard: [] for guard in GUARDS}
    for r in range(rounds):
        for guard in GUARDS:
            warm[guard].append(
                measure(spec(caches[guard], guard, True), f"warm re-score {r + 1}, {guard}")
            )
    record["warm"] = warm
    record["warm_median_s"] = {
        guard: round(statistics.median(x["wall_s"] for x in runs), 3)
        for guard, runs in warm.items()
    }
    record["warm_guard_median_s"] = {
        guard: round(statistics.median(x["guard_s"] for x in runs), 4)
        for guard, runs in warm.items()
    }
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    parser.add_argument("--encoders", default="hash,minilm-offline")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--wait-quiet", type=float, default=0.0, metavar="SHARE")
    parser.add_argument("--save", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    QUIET["max_share"] = args.wait_quiet
    compile_sources()
    files = workload.write_workload(
        WORKDIR / f"w{args.items}-{workload.WORKLOAD_VERSION}", args.items, 1
    )
    record: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/bench_guard_cost.py", *sys.argv[1:]]),
        "items": args.items,
        "workload": workload.WORKLOAD_VERSION,
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "encoders": {},
    }
    for encoder in args.encoders.split(","):
        record["encoders"][encoder] = run_encoder(encoder.strip(), files, args.rounds)
    record["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    args.save.mkdir(parents=True, exist_ok=True)
    path = args.save / f"guard-cost-{args.items}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
