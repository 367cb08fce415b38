"""Time crystal-metrics 0.2.0 against its drop-in, ``crystalbench.compat.crystal_metrics``.

Workload: the bundled sample's five prediction sets (200 predictions, 198 of them for items
of the sample), each scored with ``MLLMReasoningEvaluator.evaluate_dataset(predictions,
references, alpha=0.3, order_metric="lis")``, as a crystal-metrics user scores a leaderboard.
The encoder is the offline MiniLM (all-MiniLM-L6-v2) on the CPU for every path:

- ``crystal-metrics``: its own evaluator, ``SentenceTransformer`` loaded from the bundled
  folder (two encoder calls per sample);
- ``drop-in, same model``: the drop-in given crystal-metrics' very ``SentenceTransformer``
  object (``encoder=theirs.model``, no disk cache): the same forward passes, batched;
- ``drop-in, default, cold``: ``MLLMReasoningEvaluator("minilm-offline")``, crystalbench's
  default path (ONNX Runtime on a CPU; the export is made before timing) with an empty
  embedding cache;
- ``drop-in, default, warm``: the same again on the now filled cache (a re-score).

Model loading is timed apart and excluded. The paths run in interleaved rounds (the machine
is shared) and every round checks that each drop-in path gives crystal-metrics' step numbers
(P, R, F1, Kendall, LIS, Ordered F1 per sample; the mean and max cosine within 1e-6).

Usage::

    python benchmarks/bench_crystal_metrics_dropin.py --rounds 3 \\
        --record benchmarks/results/raw/crystal-metrics-dropin-sample.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "compat"))

from cm_sample import references, sample_sets


def cpu_model() -> str:
    """The processor's name as ``lscpu`` gives it."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor()
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def score_all(evaluator: Any) -> tuple[float, float, dict[str, list[dict[str, Any]]]]:
    refs = references()
    started, cpu = time.perf_counter(), time.process_time()
    rows = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for sample in sample_sets():
            frame = evaluator.evaluate_dataset(
                sample.predictions, refs, alpha=0.3, order_metric="lis"
            )
            rows[sample.name] = frame.sort_values("sample_idx").to_dict("records")
    return time.perf_counter() - started, time.process_time() - cpu, rows


def same_numbers(ours: dict[str, list[dict[str, Any]]], theirs: dict[str, Any]) -> int:
    """Item-runs whose step numbers differ (the cosine summaries may differ by 1e-6)."""
    differ = 0
    for name, rows in theirs.items():
        for a, b in zip(rows, ours[name], strict=True):
            for key, value in a.items():
                if key in ("avg_similarity", "max_similarity"):
                    if abs(float(value) - float(b[key])) > 1e-6:
                        differ += 1
                        break
                elif value != b[key]:
                    differ += 1
                    break
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--record", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import crystal_metrics

    import crystalbench.compat.crystal_metrics as dropin
    from crystalbench.encoders import EmbeddingStore
    from crystalbench.encoders.sentence import offline_model_path

    started = time.perf_counter()
    theirs = crystal_metrics.MLLMReasoningEvaluator(
        str(offline_model_path()), similarity_threshold=0.35, device="cpu"
    )
    load_theirs = time.perf_counter() - started
    export_dir = tempfile.mkdtemp(prefix="cm-dropin-onnx-")
    warmup = dropin.MLLMReasoningEvaluator("minilm-offline", device="cpu", cache_dir=export_dir)
    started = time.perf_counter()
    warmup._compute_embeddings(["warm-up"])  # makes the ONNX export, loads the session
    load_ours = time.perf_counter() - started
    onnx = warmup.model

    timings: dict[str, list[tuple[float, float]]] = {}
    differ: dict[str, int] = {}
    items = 0
    for round_index in range(args.rounds):
        load = os.getloadavg()[0]
        wall, cpu, expected = score_all(theirs)
        timings.setdefault("crystal-metrics", []).append((wall, cpu))
        items = sum(len(rows) for rows in expected.values())
        same_model = dropin.MLLMReasoningEvaluator(
            "minilm-offline", device="cpu", encoder=theirs.model, use_cache=False
        )
        for name, evaluator in (
            ("drop-in, same model", same_model),
            ("drop-in, default, cold", None),
            ("drop-in, default, warm", None),
        ):
            if evaluator is None:  # the loaded ONNX encoder, on the export folder's cache
                if name.endswith("cold"):
                    EmbeddingStore.default(export_dir).clear(onnx.identity)
                evaluator = dropin.MLLMReasoningEvaluator(
                    "minilm-offline", device="cpu", encoder=onnx, cache_dir=export_dir
                )
            wall, cpu, rows = score_all(evaluator)
            timings.setdefault(name, []).append((wall, cpu))
            differ[name] = differ.get(name, 0) + same_numbers(rows, expected)
        print(
            f"round {round_index + 1}: load {load:.1f} -> {os.getloadavg()[0]:.1f}; "
            + "; ".join(
                f"{k} {v[-1][0]:.1f} s wall / {v[-1][1]:.1f} s CPU" for k, v in timings.items()
            ),
            flush=True,
        )

    base_wall = statistics.median(w for w, _ in timings["crystal-metrics"])
    base_cpu = statistics.median(c for _, c in timings["crystal-metrics"])
    summary = {
        name: {
            "wall_s_median": statistics.median(w for w, _ in runs),
            "cpu_s_median": statistics.median(c for _, c in runs),
            "speedup_wall": base_wall / statistics.median(w for w, _ in runs),
            "speedup_cpu": base_cpu / statistics.median(c for _, c in runs),
            "rounds": runs,
            "item_runs_differing": differ.get(name, 0),
        }
        for name, runs in timings.items()
    }
    record = {
        "workload": f"bundled sample, 5 prediction sets, {items} item-runs per round, "
        "evaluate_dataset(alpha=0.3, order_metric='lis'), all-MiniLM-L6-v2 on CPU",
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "model_load_s": {
            "crystal-metrics": load_theirs,
            "drop-in (first use: ONNX export and session)": load_ours,
        },
        "paths": summary,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    print(json.dumps({k: v for k, v in record.items() if k != "paths"}, indent=1))
    for name, values in summary.items():
        print(
            f"{name:26s} wall {values['wall_s_median']:7.1f} s ({values['speedup_wall']:.2f}x)  "
            f"CPU {values['cpu_s_median']:7.1f} s ({values['speedup_cpu']:.2f}x)  "
            f"item-runs differing {values['item_runs_differing']}"
        )
    if args.record:
        args.record.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
