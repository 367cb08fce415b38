"""Does the default fast path (ONNX Runtime fp32) give the torch path's numbers? (issue 18.2)

Encodes every distinct step text of a workload once with each path (``--backend torch``
and the default ``auto``, which runs ONNX Runtime on CPU), compares the vectors (largest
component difference; the target is 1e-5), then scores every prediction set with each
path's vectors through ``crystalbench.scoring.evaluation.evaluate``, in paper and compat mode, and
compares every per-item metric (precision, recall, Match F1, LIS, Kendall, Ordered F1, the
matched pairs). Items that differ are listed with the cosines that explain them: a pair on
the other side of tau, or two candidate pairs whose order flips (a near-tie)::

    python benchmarks/bench_fast_path.py --items 300 --sets 5
    python benchmarks/bench_fast_path.py --items 6372 --sets 5     # the full check

Each path encodes with its own batching (the default call and batch sizes), as a run does.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from crystalbench.config.scoring import ScoreConfig  # noqa: E402
from crystalbench.data import load_benchmark  # noqa: E402
from crystalbench.data.predictions import load_predictions  # noqa: E402
from crystalbench.encoders import CachingEncoder, load_encoder  # noqa: E402
from crystalbench.scoring.evaluation import evaluate  # noqa: E402

METRICS = ("precision", "recall", "f1", "lis", "kendall", "ordered_f1")


class Table:
    """An encoder that returns one path's precomputed vectors (identity names the path)."""

    def __init__(self, identity: str, table: dict[str, np.ndarray]) -> None:
        self.identity = f"table:{identity}"
        self.table = table

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


def encode_all(
    backend: str,
    encoder_name: str,
    texts: list[str],
    call_texts: int | None = None,
    keep: Path | None = None,
) -> tuple[str, dict, float]:
    """Every text's vector on one path (kept in ``keep`` and read back when it is there)."""
    if keep is not None and keep.is_file():
        saved = np.load(keep)
        return str(saved["identity"]), dict(zip(texts, saved["vectors"], strict=True)), 0.0
    identity, vectors, seconds = _encode(backend, encoder_name, texts, call_texts)
    if keep is not None:
        keep.parent.mkdir(parents=True, exist_ok=True)
        np.savez(keep, identity=identity, vectors=np.stack([vectors[t] for t in texts]))
    return identity, vectors, seconds


def _encode(
    backend: str, encoder_name: str, texts: list[str], call_texts: int | None
) -> tuple[str, dict, float]:
    encoder = load_encoder(encoder_name, backend=backend, device="cpu")
    front = CachingEncoder(encoder, batch_size=call_texts)  # no disk cache
    started = time.perf_counter()
    vectors = front.lookup(texts)
    return encoder.identity, vectors, time.perf_counter() - started


def explain(a: Any, b: Any, tau: float, va: dict, vb: dict) -> dict[str, Any]:
    """Why one item differs: a pair on the other side of tau, or a near-tie between the
    competing pairs (``tie_gap``: the smallest cosine gap between two of them, per path)."""
    pairs_a = {(i, j) for i, j, _ in a.matches}
    pairs_b = {(i, j) for i, j, _ in b.matches}
    involved = sorted(pairs_a ^ pairs_b)

    def cos(table: dict, pair: tuple[int, int]) -> float:
        return float(table[a.pred_steps[pair[0]]] @ table[a.ref_steps[pair[1]]])

    def tie_gap(table: dict) -> float | None:
        values = sorted(cos(table, pair) for pair in involved)
        gaps = [y - x for x, y in itertools.pairwise(values)]
        return float(min(gaps)) if gaps else None

    return {
        "id": a.id,
        "metrics": {
            m: [getattr(a, m), getattr(b, m)] for m in METRICS if getattr(a, m) != getattr(b, m)
        },
        "only_first": sorted(pairs_a - pairs_b),
        "only_second": sorted(pairs_b - pairs_a),
        "crosses_tau": any((cos(va, p) >= tau) != (cos(vb, p) >= tau) for p in involved),
        "tie_gap": [tie_gap(va), tie_gap(vb)],
    }


def compare_runs(
    bench: Any, sets: list, name: str, first: tuple[str, dict], second: tuple[str, dict]
) -> dict[str, Any]:
    """Score every set with two vector tables; every per-item difference, explained."""
    out: dict[str, Any] = {}
    for compat in ("none", "crystal-metrics-0.2"):
        config = ScoreConfig(encoder=name, use_cache=False, compat=compat)
        differing: list[dict[str, Any]] = []
        compared = 0
        for preds in sets:
            x = evaluate(bench, preds, config, encoder=Table(*first))
            y = evaluate(bench, preds, config, encoder=Table(*second))
            for p, q in zip(x.items, y.items, strict=True):
                compared += 1
                same = [getattr(p, m) for m in METRICS] == [getattr(q, m) for m in METRICS]
                if not same or sorted(m[:2] for m in p.matches) != sorted(m[:2] for m in q.matches):
                    differing.append(
                        {"set": preds.model, **explain(p, q, config.threshold, first[1], second[1])}
                    )
        out[compat] = {
            "item_runs": compared,
            "identical": compared - len(differing),
            "f1_differs": sum(1 for d in differing if "f1" in d["metrics"]),
            "differing": differing,
        }
        print(
            f"  {compat:>20}: {compared - len(differing)} / {compared} item-runs identical"
            + "".join(
                f"\n    {d['set']} {d['id']}: {sorted(d['metrics'])}, tie gap "
                f"{d['tie_gap']}, crosses tau {d['crosses_tau']}"
                for d in differing[:30]
            )
        )
    return out


def patch_float64_cosines() -> None:
    """Experiment: score with cosines accumulated in float64 (see ``--cosine``)."""
    import crystalbench.scoring.evaluation

    def cosine_matrix(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
        if pred.ndim != 2 or ref.ndim != 2 or not pred.shape[0] or not ref.shape[0]:
            return np.zeros((pred.shape[0] if pred.ndim == 2 else 0, len(ref)), np.float32)
        return (pred.astype(np.float64) @ ref.astype(np.float64).T).astype(np.float32)

    crystalbench.scoring.evaluation.cosine_matrix = cosine_matrix  # type: ignore[assignment]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--sets", type=int, default=5)
    parser.add_argument("--encoder", default="minilm-offline")
    parser.add_argument("--save", type=Path, default=HERE / "results" / "raw")
    parser.add_argument(
        "--control", action="store_true", help="also compare torch with torch batched differently"
    )
    parser.add_argument(
        "--keep-vectors", action="store_true", help="save each path's vectors and reuse them"
    )
    parser.add_argument(
        "--cosine",
        choices=("shipped", "float64"),
        default="shipped",
        help="experiment: compute the cosine matrix in float64 (then float32), so that "
        "identical steps get bit-identical cosines and tie exactly",
    )
    args = parser.parse_args(argv)
    root = HERE / "workdir" / "fast-path" / f"w{args.items}x{args.sets}-{workload.WORKLOAD_VERSION}"
    files = workload.write_workload(root, args.items, args.sets, crystal_metrics_format=False)
    bench = load_benchmark(files.benchmark)
    sets = [load_predictions(p) for p in files.predictions]
    texts = list(
        dict.fromkeys(
            [s for item in bench.items for s in item.reference_steps if s.strip()]
            + [s for ps in sets for p in ps for s in (p.reasoning_steps or []) if s.strip()]
        )
    )
    print(f"{len(texts)} distinct texts, {args.items} items x {args.sets} sets")
    digest = hashlib.sha256("".join(texts).encode()).hexdigest()[:12]
    keep = (lambda tag: root / f"vectors-{tag}-{digest}.npz") if args.keep_vectors else None
    torch_id, torch_vec, torch_s = encode_all(
        "torch", args.encoder, texts, keep=keep("torch") if keep else None
    )
    fast_id, fast_vec, fast_s = encode_all(
        "auto", args.encoder, texts, keep=keep("auto") if keep else None
    )
    print(f"torch {torch_id}: {torch_s:.1f} s; default path {fast_id}: {fast_s:.1f} s")
    a = np.stack([torch_vec[t] for t in texts])
    b = np.stack([fast_vec[t] for t in texts])
    component_gap = float(np.abs(a - b).max())
    cosine_gap = float(np.abs(np.sum(a * b, axis=1) - 1.0).max())
    print(f"largest vector component difference {component_gap:.2e} (target 1e-5)")
    report: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/bench_fast_path.py", *sys.argv[1:]]),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "items": args.items,
        "sets": args.sets,
        "workload": workload.WORKLOAD_VERSION,
        "texts": len(texts),
        "torch_identity": torch_id,
        "fast_identity": fast_id,
        "encode_s": {"torch": round(torch_s, 2), "fast": round(fast_s, 2)},
        "max_component_difference": component_gap,
        "max_self_cosine_gap": cosine_gap,
        "within_1e-5": component_gap < 1e-5,
        "cosine": args.cosine,
        "modes": {},
    }
    if args.cosine == "float64":
        patch_float64_cosines()
    print("torch path against the default path:")
    report["modes"] = compare_runs(
        bench, sets, args.encoder, (f"torch:{digest}", torch_vec), (f"fast:{digest}", fast_vec)
    )
    if args.control:
        # The same torch model with another call size (other batch compositions): the
        # near-ties it flips are flipped by batching alone, with no ONNX involved.
        _, other_vec, _ = encode_all(
            "torch", args.encoder, texts, 4096, keep=keep("torch4096") if keep else None
        )
        print("control, torch against torch with 4,096-text calls:")
        report["control_torch_batching"] = compare_runs(
            bench, sets, args.encoder, (f"torch:{digest}", torch_vec), (f"t4k:{digest}", other_vec)
        )
    args.save.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.cosine == "shipped" else f"-cosine-{args.cosine}"
    path = args.save / f"fast-path-{args.items}x{args.sets}{suffix}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
