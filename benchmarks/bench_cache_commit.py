"""Cost of committing vectors to the cache as they are computed (issue 11, point 9).

Before, the caching front end handed the encoder 4,096 texts per call and wrote the cache
once per call, so a run killed after a minute kept nothing. Now it hands over
``ENCODE_CALL_TEXTS`` (256) texts per call and commits at least every
``CACHE_COMMIT_SECONDS`` (1 s). This script encodes the distinct step texts of a workload
(references and one model's predictions) on a cold cache both ways, interleaved round by
round, and reports the wall time of each, the time spent writing the cache, the number of
commits and the overhead of the new way::

    python benchmarks/bench_cache_commit.py --items 6372 --rounds 2      # a full run
    python benchmarks/bench_cache_commit.py --items 40 --rounds 2        # a quick check

The encoder is the default path (``minilm-offline``, ONNX Runtime on CPU; ``--backend
torch`` for the torch path). Encoding dominates and is the same work both ways (the same
texts, the same length-sorted forward batches), so on a busy machine the wall-clock
difference is noise; the time spent committing (``cache_s``) is the real cost and is
reported as a share of the run as well.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from bench_scoring import QUIET, flag, timed  # noqa: E402
from crystalbench.config.settings import CACHE_COMMIT_SECONDS, ENCODE_CALL_TEXTS  # noqa: E402
from crystalbench.encoders import CachingEncoder, EmbeddingStore, load_encoder  # noqa: E402

OLD = {"batch_size": 4096, "commit_seconds": 0.0}
"""The previous behaviour: 4,096 texts per encoder call, one commit per call."""
NEW: dict[str, Any] = {}
"""The shipped defaults (``ENCODE_CALL_TEXTS``, ``CACHE_COMMIT_SECONDS``)."""


def texts_of(items: int) -> list[str]:
    """Distinct reference and first-model predicted steps, in workload order."""
    texts: dict[str, None] = {}
    for item in workload.iter_items(items):
        texts.update(dict.fromkeys(item.reference_steps))
        texts.update(dict.fromkeys(workload.predict(item, 0)["reasoning_steps"]))
    return list(texts)


def one_run(encoder: Any, texts: list[str], folder: Path, options: dict[str, Any]) -> dict:
    store = EmbeddingStore(folder / "embeddings.sqlite")
    front = CachingEncoder(encoder, store, **options)
    with timed() as clock:
        front.lookup(texts)
    store.close()
    stats = front.stats
    return {
        "wall_s": round(clock.wall, 3),
        "cpu_s": round(clock.cpu, 3),
        "encode_s": round(stats.encode_seconds, 3),
        "cache_s": round(stats.cache_seconds, 4),
        "commits": stats.commits,
        "encoded": stats.encoded,
        "others_cpu_share": round(clock.others_share, 3),
        "disturbed": bool(flag(clock)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--encoder", default="minilm-offline")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--wait-quiet", type=float, default=0.0, metavar="SHARE")
    parser.add_argument("--save", type=Path, default=HERE / "results" / "raw")
    args = parser.parse_args(argv)
    QUIET["max_share"] = args.wait_quiet
    texts = texts_of(args.items)
    encoder = load_encoder(args.encoder, backend=args.backend, device="cpu")
    encoder.encode(["A warm-up sentence about a bar chart."])  # load the model, untimed
    print(f"{len(texts)} distinct texts, {encoder.identity}")
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for name in order:
            with tempfile.TemporaryDirectory(prefix="cache-commit-") as scratch:
                result = one_run(encoder, texts, Path(scratch), OLD if name == "old" else NEW)
            runs[name].append(result)
            print(
                f"  round {r + 1} {name}: {result['wall_s']:8.2f} s wall, "
                f"{result['cpu_s']:8.2f} s CPU, cache "
                f"{result['cache_s']:.3f} s in {result['commits']} commits"
                + ("  [disturbed]" if result["disturbed"] else "")
            )
    med = {
        name: {k: statistics.median(run[k] for run in rs) for k in ("wall_s", "cpu_s", "cache_s")}
        for name, rs in runs.items()
    }
    overhead = (med["new"]["wall_s"] - med["old"]["wall_s"]) / med["old"]["wall_s"]
    cpu_overhead = (med["new"]["cpu_s"] - med["old"]["cpu_s"]) / med["old"]["cpu_s"]
    commit_share = (med["new"]["cache_s"] - med["old"]["cache_s"]) / med["new"]["wall_s"]
    record = {
        "command": " ".join(["python", "benchmarks/bench_cache_commit.py", *sys.argv[1:]]),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "items": args.items,
        "texts": len(texts),
        "encoder": encoder.identity,
        "new_defaults": {
            "ENCODE_CALL_TEXTS": ENCODE_CALL_TEXTS,
            "CACHE_COMMIT_SECONDS": CACHE_COMMIT_SECONDS,
        },
        "old": OLD,
        "runs": runs,
        "median": med,
        "wall_overhead": round(overhead, 4),
        "cpu_overhead": round(cpu_overhead, 4),
        "extra_commit_time_share": round(commit_share, 5),
    }
    print(
        f"median wall: old {med['old']['wall_s']:.2f} s, new {med['new']['wall_s']:.2f} s "
        f"({100 * overhead:+.2f} %); CPU {100 * cpu_overhead:+.2f} %; extra time committing: "
        f"{100 * commit_share:.3f} % of the run"
    )
    args.save.mkdir(parents=True, exist_ok=True)
    path = args.save / f"cache-commit-{args.items}.json"
    path.write_text(json.dumps(record, indent=2))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
