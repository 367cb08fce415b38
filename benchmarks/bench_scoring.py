"""Side-by-side scoring benchmark: crystalbench against crystal-metrics 0.2.0.

One process, one machine, one ``SentenceTransformer`` object shared by both tools, on the
synthetic CRYSTAL-scale workload of ``workload.py``. crystal-metrics runs its own
``MLLMReasoningEvaluator.evaluate_dataset(..., alpha=0.3, order_metric="lis")`` (threshold
0.35); crystalbench runs ``evaluate`` in compat mode ``crystal-metrics-0.2`` (strict ``>``,
its tie order) with the same threshold, alpha and order metric.

Scenarios (each prints a report and writes JSON under ``benchmarks/results/raw/``)::

    # one prediction set on a cold cache, five sets (leaderboard run), warm re-scoring with
    # another tau and alpha, and per-item agreement (identical and natural embeddings)
    python benchmarks/bench_scoring.py leaderboard --items 6372 --sets 5

    # 100,000 items with the hash encoder: peak memory and time at several sizes
    python benchmarks/bench_scoring.py scale --sizes 12500,25000,50000,100000

    # fast paths: ONNX Runtime fp32 / int8 and multi-process encoding, against torch
    python benchmarks/bench_scoring.py backends --items 6372 --sets 5

Agreement is checked twice. First with *identical embeddings*: every distinct step text
is embedded once and both tools read the same float32 vectors, so any difference is a
difference in matching or scoring; every per-item precision, recall, F1, LIS and ordered
F1 must agree within 1e-9. Then with each tool's *natural* encoding (crystal-metrics
encodes each item's steps separately, crystalbench in large length-sorted batches):
batching changes float rounding by about 1e-7, so a cosine that close to tau can fall on
the other side; every such item is listed with the cosine's distance to tau on both sides.

Timings: wall and CPU seconds of each tool from loading its input files to per-item
results (crystalbench also writes ``examples.jsonl`` and ``summary.json``); model loading
is excluded for both. crystalbench's time is split into the encoder's ``encode`` calls
(tokenisation + forward + pooling), the forward passes alone (timed by a wrapper around
the shared model's ``forward``), and everything else. The load average is recorded with
every measurement: figures taken with a 1-minute load above 1.0 are flagged.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from crystalbench.config.scoring import ScoreConfig  # noqa: E402
from crystalbench.data import load_benchmark  # noqa: E402
from crystalbench.data.predictions import load_predictions  # noqa: E402
from crystalbench.defaults import COMPAT_CRYSTAL_METRICS  # noqa: E402
from crystalbench.encoders import EmbeddingStore, l2_normalise, load_encoder  # noqa: E402
from crystalbench.scoring.evaluation import RunResult, evaluate  # noqa: E402

TAU = 0.35
ALPHA = 0.3
RESCORE_TAU = 0.40
RESCORE_ALPHA = 0.5
METRICS = (  # (crystalbench ItemResult field, crystal-metrics column)
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "match_f1"),
    ("lis", "lis_ratio"),
    ("ordered_f1", "ordered_match_f1"),
    ("kendall", "kendall_tau"),
)
TOLERANCE = 1e-9
RESULTS = HERE / "results" / "raw"
WORKDIR = HERE / "workdir"


# --------------------------------------------------------------------------- plumbing
def workdir(items: int) -> Path:
    """Folder of the workload files (``w<items>-v2``: the workload's version in the name)."""
    return WORKDIR / f"w{items}-{workload.WORKLOAD_VERSION}"


def load_average() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (all processes)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


QUIET = {"max_share": 0.0, "max_wait_s": 1200.0}
"""``--wait-quiet``: before each timed run, wait until other processes use less than
``max_share`` of the machine's CPUs (0 disables waiting)."""


def wait_for_quiet() -> float:
    """Wait (up to ``QUIET['max_wait_s']``) until other processes leave the CPUs alone.

    Returns the share of the machine other processes used in the last 5-second window.
    """
    cpus = os.cpu_count() or 1
    deadline = time.monotonic() + QUIET["max_wait_s"]
    quiet_windows = 0
    share = 0.0
    while True:
        busy, own = busy_cpu_seconds(), own_cpu_seconds()
        time.sleep(5.0)
        share = max(0.0, (busy_cpu_seconds() - busy) - (own_cpu_seconds() - own)) / (5.0 * cpus)
        quiet_windows = quiet_windows + 1 if share <= QUIET["max_share"] else 0
        if quiet_windows >= 2 or time.monotonic() > deadline or QUIET["max_share"] <= 0:
            return round(share, 3)


@dataclass
class Timed:
    """Wall and CPU seconds of one block, the load average, and other processes' CPU use."""

    wall: float = 0.0
    cpu: float = 0.0
    load_before: float = 0.0
    load_after: float = 0.0
    others_share: float = 0.0
    """Share of the machine's CPU capacity used by *other* processes during the block."""
    others_before: float = 0.0
    """The same share over the 5 seconds before the block (when waiting for quiet)."""

    def record(self) -> dict[str, float]:
        return {
            "wall_s": round(self.wall, 3),
            "cpu_s": round(self.cpu, 3),
            "load_before": self.load_before,
            "load_after": self.load_after,
            "others_cpu_share": round(self.others_share, 3),
        }


_DEPTH = [0]


@contextlib.contextmanager
def timed() -> Iterator[Timed]:
    """Time a block (wall, process CPU, and how busy other processes kept the CPUs).

    Only the outermost of nested blocks waits for a quiet machine.
    """
    outermost = _DEPTH[0] == 0
    before = wait_for_quiet() if QUIET["max_share"] > 0 and outermost else 0.0
    out = Timed(load_before=load_average(), others_before=before)
    busy, own = busy_cpu_seconds(), own_cpu_seconds()
    wall, cpu = time.perf_counter(), time.process_time()
    _DEPTH[0] += 1
    try:
        yield out
    finally:
        _DEPTH[0] -= 1
        out.wall = time.perf_counter() - wall
        out.cpu = time.process_time() - cpu
        out.load_after = load_average()
        others = (busy_cpu_seconds() - busy) - (own_cpu_seconds() - own)
        out.others_share = max(0.0, others) / (out.wall * (os.cpu_count() or 1))


class ForwardTimer:
    """Accumulates the wall time of a torch module's ``forward`` calls."""

    def __init__(self, module: Any) -> None:
        self.seconds = 0.0
        self.calls = 0
        inner = module.forward

        def forward(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        module.forward = forward

    def reset(self) -> tuple[float, int]:
        seconds, calls = self.seconds, self.calls
        self.seconds, self.calls = 0.0, 0
        return seconds, calls


def environment() -> dict[str, Any]:
    """Machine and library versions written next to every result."""
    import torch

    versions = {}
    for name in ("numpy", "torch", "sentence_transformers", "onnxruntime", "crystalbench"):
        try:
            module = __import__(name)
            versions[name] = getattr(module, "__version__", "?")
        except ImportError:
            versions[name] = None
    try:
        from importlib.metadata import version

        versions["crystal_metrics"] = version("crystal-metrics")
    except Exception:
        versions["crystal_metrics"] = None
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "python": platform.python_version(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "versions": versions,
    }


def save(name: str, record: dict[str, Any]) -> Path:
    """Write a scenario's JSON record under ``benchmarks/results/raw``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {
        "command": " ".join(["python", "benchmarks/bench_scoring.py", *sys.argv[1:]]),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        **record,
    }
    path.write_text(json.dumps(record, indent=2))
    print(f"\nwrote {path.relative_to(HERE.parent)}")
    return path


def flag(clock: Timed | float) -> str:
    """A warning when other processes used the CPUs during a measurement."""
    if isinstance(clock, Timed):
        if clock.others_share > 0.1:
            return (
                f"  [disturbed: other processes used {100 * clock.others_share:.0f}% of the CPUs]"
            )
        return ""
    return "" if clock < 1.0 else "  [busy machine: load > 1.0]"


# --------------------------------------------------------------------------- the two tools
def shared_model() -> tuple[Any, Any, ForwardTimer]:
    """crystalbench's minilm-offline encoder, its loaded model, and a forward timer."""
    encoder = load_encoder("minilm-offline", device="cpu")
    model = encoder.model  # type: ignore[attr-defined]
    timer = ForwardTimer(model)
    model.encode(["warm-up sentence one.", "and another, slightly longer warm-up sentence"])
    timer.reset()
    return encoder, model, timer


def crystal_metrics_evaluator(model: Any, tau: float = TAU) -> Any:
    """crystal-metrics' evaluator around *our* model object (its own copy is dropped)."""
    from crystal_metrics.reasoning import MLLMReasoningEvaluator

    from crystalbench.encoders.sentence import offline_model_path

    with contextlib.redirect_stdout(io.StringIO()):
        evaluator = MLLMReasoningEvaluator(
            model_name=str(offline_model_path()), similarity_threshold=tau, device="cpu"
        )
    evaluator.model = model
    return evaluator


def run_crystal_metrics(
    evaluator: Any, files: workload.WorkloadFiles, k: int, *, tau: float, alpha: float
) -> tuple[dict[str, dict[str, float]], Timed]:
    """Time crystal-metrics on prediction set ``k``: JSON loading + ``evaluate_dataset``."""
    assert files.cm_references is not None
    evaluator.similarity_threshold = tau
    with timed() as clock:
        references = json.loads(files.cm_references.read_text(encoding="utf-8"))
        predictions = json.loads(files.cm_predictions[k].read_text(encoding="utf-8"))
        with contextlib.redirect_stdout(io.StringIO()):
            frame = evaluator.evaluate_dataset(
                predictions, references, alpha=alpha, order_metric="lis"
            )
    rows = {
        str(row["sample_idx"]): {column: float(row[column]) for _, column in METRICS}
        for row in frame.to_dict("records")
    }
    return rows, clock


def cb_config(cache_dir: Path | None, *, tau: float = TAU, alpha: float = ALPHA) -> ScoreConfig:
    return ScoreConfig(
        encoder="minilm-offline",
        threshold=tau,
        alpha=alpha,
        order_metric="lis",
        compat=COMPAT_CRYSTAL_METRICS,
        cache_dir=str(cache_dir) if cache_dir is not None else None,
        use_cache=cache_dir is not None,
    )


def run_crystalbench(
    encoder: Any,
    files: workload.WorkloadFiles,
    k: int,
    cache_dir: Path | None,
    out_dir: Path,
    *,
    tau: float = TAU,
    alpha: float = ALPHA,
) -> tuple[RunResult, Timed]:
    """Time crystalbench on prediction set ``k``: file loading + ``evaluate`` + writing."""
    config = cb_config(cache_dir, tau=tau, alpha=alpha)
    with timed() as clock:
        bench = load_benchmark(files.benchmark)
        predictions = load_predictions(files.predictions[k])
        store = EmbeddingStore.default(cache_dir) if cache_dir is not None else None
        run = evaluate(bench, predictions, config, encoder=encoder, store=store, out_dir=out_dir)
        if store is not None:
            store.close()
    return run, clock


def cb_rows(run: RunResult) -> dict[str, dict[str, float]]:
    """Per-item numbers of a crystalbench run, in crystal-metrics' conventions."""
    rows = {}
    for item in run.items:
        values = {column: float(getattr(item, field_)) for field_, column in METRICS}
        values["kendall_tau"] = 2.0 * item.kendall - 1.0  # crystal-metrics reports raw tau
        rows[item.id] = values
    return rows


def compare(
    ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]
) -> dict[str, Any]:
    """Per-item agreement on every metric: counts within 1e-9, exact, and the worst gap."""
    common = sorted(set(ours) & set(theirs))
    report: dict[str, Any] = {
        "items_compared": len(common),
        "only_crystalbench": len(set(ours) - set(theirs)),
        "only_crystal_metrics": len(set(theirs) - set(ours)),
        "metrics": {},
    }
    disagreeing: set[str] = set()
    for _, column in METRICS:
        gaps = np.array([abs(ours[i][column] - theirs[i][column]) for i in common])
        bad = [i for i, gap in zip(common, gaps, strict=True) if gap > TOLERANCE]
        disagreeing.update(bad)
        report["metrics"][column] = {
            "within_1e-9": int((gaps <= TOLERANCE).sum()),
            "exact": int((gaps == 0).sum()),
            "max_abs_diff": float(gaps.max()) if gaps.size else 0.0,
        }
    report["items_all_within_1e-9"] = len(common) - len(disagreeing)
    report["disagreeing_ids"] = sorted(disagreeing)
    return report


# --------------------------------------------------------------------------- identical inputs
class TableModel:
    """Stands in for a SentenceTransformer: ``encode`` reads fixed float32 vectors."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


class TableEncoder:
    """A crystalbench encoder over the same fixed vectors (normalised like crystal-metrics)."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table
        digest = hashlib.sha256()
        for text in sorted(table)[:1000]:
            digest.update(text.encode())
        self.identity = f"table:{len(table)}:{digest.hexdigest()[:12]}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return l2_normalise(np.stack([self.table[t] for t in texts]))


def identical_inputs_agreement(
    files: workload.WorkloadFiles, table: dict[str, np.ndarray], sets: int, scratch: Path
) -> list[dict[str, Any]]:
    """Both tools read the same vectors: any difference is in matching or scoring."""
    evaluator = crystal_metrics_evaluator(TableModel(table))
    encoder = TableEncoder(table)
    reports = []
    for tau, alpha in ((TAU, ALPHA), (RESCORE_TAU, RESCORE_ALPHA)):
        for k in range(sets):
            theirs, cm_clock = run_crystal_metrics(evaluator, files, k, tau=tau, alpha=alpha)
            run, cb_clock = run_crystalbench(
                encoder, files, k, None, scratch / f"same-{k}", tau=tau, alpha=alpha
            )
            agreement = compare(cb_rows(run), theirs)
            agreement.update(
                set=workload.profile(k).name,
                tau=tau,
                alpha=alpha,
                match_f1=run.summary.match_f1,
                crystal_metrics_s=round(cm_clock.wall, 2),
                crystalbench_s=round(cb_clock.wall, 2),
            )
            reports.append(agreement)
            print(
                f"  identical embeddings  tau={tau} alpha={alpha} {agreement['set']:>20}: "
                f"{agreement['items_all_within_1e-9']}/{agreement['items_compared']} items "
                f"agree on all metrics within 1e-9; max diffs "
                + ", ".join(f"{c}={m['max_abs_diff']:.1e}" for c, m in agreement["metrics"].items())
            )
    return reports


def explain_disagreements(
    ids: Sequence[str],
    files: workload.WorkloadFiles,
    k: int,
    model: Any,
    cb_vectors: Callable[[Sequence[str]], np.ndarray],
    tau: float,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """For items whose natural-encoding results differ: the cosines that straddle tau."""
    if not ids:
        return []
    items = {it.id: it for it in load_benchmark(files.benchmark).items if it.id in set(ids)}
    preds = load_predictions(files.predictions[k]).by_id
    out = []
    for item_id in list(ids)[:limit]:
        ref = items[item_id].reference_steps
        pred = preds[item_id].reasoning_steps or []
        # crystal-metrics: each item's steps encoded on their own, normalised, np.dot.
        raw_p, raw_r = model.encode(pred), model.encode(ref)
        s_cm = np.dot(
            raw_p / np.linalg.norm(raw_p, axis=1, keepdims=True),
            (raw_r / np.linalg.norm(raw_r, axis=1, keepdims=True)).T,
        )
        s_cb = cb_vectors(pred) @ cb_vectors(ref).T
        straddle = np.argwhere((s_cm > np.float32(tau)) != (s_cb > np.float32(tau)))
        out.append(
            {
                "id": item_id,
                "max_cosine_gap": float(np.abs(s_cm - s_cb).max()),
                "pairs_across_tau": [
                    {
                        "pred": int(i),
                        "ref": int(j),
                        "crystal_metrics_minus_tau": float(s_cm[i, j] - tau),
                        "crystalbench_minus_tau": float(s_cb[i, j] - tau),
                    }
                    for i, j in straddle
                ],
            }
        )
    return out


# --------------------------------------------------------------------------- scenarios
def leaderboard(args: argparse.Namespace) -> dict[str, Any]:
    """One set cold, K sets (leaderboard), warm re-scoring, and agreement."""
    files = workload.write_workload(workdir(args.items), args.items, args.sets)
    stats = workload.describe(args.items, args.sets)
    print(
        f"workload: {args.items} items, reference steps {stats['ref_steps']}, "
        f"{stats['texts_total_all_sets']} step texts over {args.sets} sets "
        f"({stats['unique_all_sets']} distinct)"
    )
    encoder, model, forward = shared_model()
    evaluator = crystal_metrics_evaluator(model)
    scratch = Path(tempfile.mkdtemp(prefix="bench-scoring-"))
    cache = scratch / "cache"
    record: dict[str, Any] = {
        "scenario": "leaderboard",
        "items": args.items,
        "sets": args.sets,
        "workload": stats,
        "environment": environment(),
    }
    print(f"load average at start: {load_average()}{flag(load_average())}")

    # Each crystal-metrics set, then crystalbench's leaderboard run on a cold cache.
    cm_runs, cm_rows_by_set = [], []
    for k in range(args.sets):
        forward.reset()
        rows, clock = run_crystal_metrics(evaluator, files, k, tau=TAU, alpha=ALPHA)
        fwd, calls = forward.reset()
        cm_rows_by_set.append(rows)
        cm_runs.append(
            {"set": workload.profile(k).name, **clock.record(), "forward_s": round(fwd, 2)}
        )
        print(
            f"crystal-metrics  set {k} {workload.profile(k).name:>20}: {clock.wall:8.1f} s wall "
            f"({fwd:.1f} s forward in {calls} calls){flag(clock)}"
        )
    cb_runs, cb_results = [], []
    for k in range(args.sets):
        forward.reset()
        run, clock = run_crystalbench(encoder, files, k, cache, scratch / f"out-{k}")
        fwd, calls = forward.reset()
        cb_results.append(run)
        encode_s = run.timings.get("encode_forward", 0.0)
        cb_runs.append(
            {
                "set": workload.profile(k).name,
                **clock.record(),
                "forward_s": round(fwd, 2),
                "encode_s": round(encode_s, 2),
                "timings": {key: round(v, 3) for key, v in run.timings.items()},
                "encoded": run.encode_stats.encoded,
                "cache_hits": run.encode_stats.cache_hits,
                "cache_s": round(run.encode_stats.cache_seconds, 2),
                "match_f1": run.summary.match_f1,
            }
        )
        print(
            f"crystalbench     set {k} {workload.profile(k).name:>20}: {clock.wall:8.1f} s wall "
            f"({encode_s:.1f} s in encode, {fwd:.1f} s forward in {calls} calls; "
            f"{run.encode_stats.encoded} texts encoded, {run.encode_stats.cache_hits} from "
            f"cache){flag(clock)}"
        )

    def split(runs: list[dict[str, Any]]) -> dict[str, float]:
        wall = sum(r["wall_s"] for r in runs)
        encode_s = sum(r["encode_s"] for r in runs)
        fwd = sum(r["forward_s"] for r in runs)
        return {
            "wall_s": round(wall, 2),
            "cpu_s": round(sum(r["cpu_s"] for r in runs), 2),
            "encode_s": round(encode_s, 2),
            "forward_s": round(fwd, 2),
            "outside_encode_share": round((wall - encode_s) / wall, 4),
            "outside_forward_share": round((wall - fwd) / wall, 4),
        }

    one_cm, one_cb = cm_runs[0]["wall_s"], cb_runs[0]["wall_s"]
    all_cm = sum(r["wall_s"] for r in cm_runs)
    record["crystal_metrics"] = cm_runs
    record["crystalbench"] = cb_runs
    record["one_set_cold"] = {
        "crystal_metrics_s": one_cm,
        "crystalbench_s": one_cb,
        "speedup": round(one_cm / one_cb, 2),
        "cpu_speedup": round(cm_runs[0]["cpu_s"] / cb_runs[0]["cpu_s"], 2),
        "crystalbench_split": split(cb_runs[:1]),
    }
    record["all_sets_cold"] = {
        "crystal_metrics_s": round(all_cm, 2),
        "crystalbench_s": split(cb_runs)["wall_s"],
        "speedup": round(all_cm / split(cb_runs)["wall_s"], 2),
        "cpu_speedup": round(
            sum(r["cpu_s"] for r in cm_runs) / sum(r["cpu_s"] for r in cb_runs), 2
        ),
        "crystalbench_split": split(cb_runs),
    }

    # Re-scoring with another tau and alpha: the cache is warm now.
    forward.reset()
    warm, warm_clock = run_crystalbench(
        encoder, files, 0, cache, scratch / "rescore", tau=RESCORE_TAU, alpha=RESCORE_ALPHA
    )
    warm_forward, _ = forward.reset()
    cli = cli_rescore(files, cache, scratch / "rescore-cli")
    if args.cm_rescore == "measure":
        cm_rescore_rows, cm_rescore_clock = run_crystal_metrics(
            evaluator, files, 0, tau=RESCORE_TAU, alpha=RESCORE_ALPHA
        )
        cm_rescore_s = cm_rescore_clock.wall
        cm_rescore_record: dict[str, Any] = cm_rescore_clock.record()
    else:
        cm_rescore_rows, cm_rescore_s = None, one_cm
        cm_rescore_record = {"wall_s": one_cm, "reused_from": "one_set_cold"}
    record["rescore_warm"] = {
        "tau": RESCORE_TAU,
        "alpha": RESCORE_ALPHA,
        "crystal_metrics": cm_rescore_record,
        "crystalbench_in_process": {
            **warm_clock.record(),
            "timings": {key: round(v, 3) for key, v in warm.timings.items()},
            "encoded": warm.encode_stats.encoded,
            "cache_hits": warm.encode_stats.cache_hits,
            "forward_s": round(warm_forward, 3),
        },
        "crystalbench_cli": cli,
        "speedup_in_process": round(cm_rescore_s / warm_clock.wall, 1),
        "speedup_cli": round(cm_rescore_s / cli["wall_s"], 1),
    }
    print(
        f"re-score tau={RESCORE_TAU} alpha={RESCORE_ALPHA} on a warm cache: crystalbench "
        f"{warm_clock.wall:.2f} s in process, {cli['wall_s']:.2f} s as a fresh `crystal score` "
        f"process; crystal-metrics {cm_rescore_s:.1f} s{flag(warm_clock)}"
    )

    # Agreement, first with each tool's natural encoding, then with identical vectors.
    store = EmbeddingStore.default(cache)
    from crystalbench.encoders import CachingEncoder

    front = CachingEncoder(encoder, store)
    natural = []
    pairs = [(k, TAU, cb_results[k], cm_rows_by_set[k]) for k in range(args.sets)]
    if cm_rescore_rows is not None:
        pairs.append((0, RESCORE_TAU, warm, cm_rescore_rows))
    for k, tau, run, theirs in pairs:
        agreement = compare(cb_rows(run), theirs)
        agreement["set"] = workload.profile(k).name
        agreement["tau"] = tau
        agreement["explained"] = explain_disagreements(
            agreement["disagreeing_ids"], files, k, model, front.embed, tau
        )
        natural.append(agreement)
        print(
            f"  natural encodings     tau={tau} {agreement['set']:>20}: "
            f"{agreement['items_all_within_1e-9']}/{agreement['items_compared']} items agree "
            "on all metrics within 1e-9"
        )
        for case in agreement["explained"][:5]:
            print(f"      {case['id']}: max cosine gap {case['max_cosine_gap']:.1e}; ", end="")
            print(
                ", ".join(
                    f"pair ({p['pred']},{p['ref']}) cm {p['crystal_metrics_minus_tau']:+.2e} "
                    f"cb {p['crystalbench_minus_tau']:+.2e} from tau"
                    for p in case["pairs_across_tau"]
                )
                or "no pair crosses tau (a near-tie changed the greedy order)"
            )
    record["agreement_natural"] = natural
    texts = sorted(
        {s for it in load_benchmark(files.benchmark).items for s in it.reference_steps}
        | {
            s
            for k in range(args.sets)
            for p in load_predictions(files.predictions[k])
            for s in (p.reasoning_steps or [])
        }
    )
    table = dict(zip(texts, front.embed(texts), strict=True))
    store.close()
    record["agreement_identical"] = identical_inputs_agreement(files, table, args.sets, scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    summarise_leaderboard(record)
    return record


def cli_rescore(files: workload.WorkloadFiles, cache: Path, out: Path) -> dict[str, Any]:
    """``crystal score`` with another tau and alpha in a fresh process (warm cache)."""
    crystal = Path(sys.executable).with_name("crystal")
    command = [
        str(crystal),
        "score",
        "-b",
        str(files.benchmark),
        "-p",
        str(files.predictions[0]),
        "-o",
        str(out),
        "--encoder",
        "minilm-offline",
        "--tau",
        str(RESCORE_TAU),
        "--alpha",
        str(RESCORE_ALPHA),
        "--compat",
        COMPAT_CRYSTAL_METRICS,
        "--cache-dir",
        str(cache),
        "--no-progress",
    ]
    with timed() as clock:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"crystal score failed: {done.stderr[-2000:]}")
    return {**clock.record(), "command": "crystal " + " ".join(command[1:])}


def summarise_leaderboard(record: dict[str, Any]) -> None:
    one, every, warm = record["one_set_cold"], record["all_sets_cold"], record["rescore_warm"]
    print("\n== summary ==")
    print(
        f"one set, cold cache : crystal-metrics {one['crystal_metrics_s']:.1f} s, crystalbench "
        f"{one['crystalbench_s']:.1f} s -> {one['speedup']:.2f}x (CPU time {one['cpu_speedup']}x)"
    )
    print(
        f"{record['sets']} sets (leaderboard): crystal-metrics {every['crystal_metrics_s']:.1f} s, "
        f"crystalbench {every['crystalbench_s']:.1f} s -> {every['speedup']:.2f}x "
        f"(CPU time {every['cpu_speedup']}x)"
    )
    print(
        f"warm re-score       : {warm['speedup_in_process']}x in process, "
        f"{warm['speedup_cli']}x as a fresh CLI process"
    )
    for label, part in (("one set", one), ("all sets", every)):
        s = part["crystalbench_split"]
        print(
            f"crystalbench split ({label}): {s['encode_s']:.1f} s in encode "
            f"({s['forward_s']:.1f} s forward) of {s['wall_s']:.1f} s; outside encode "
            f"{100 * s['outside_encode_share']:.1f}%, outside forward "
            f"{100 * s['outside_forward_share']:.1f}%"
        )
    same = record["agreement_identical"]
    ok = sum(a["items_all_within_1e-9"] for a in same)
    total = sum(a["items_compared"] for a in same)
    print(f"identical embeddings: {ok}/{total} item-runs agree on every metric within 1e-9")
    nat = record["agreement_natural"]
    ok = sum(a["items_all_within_1e-9"] for a in nat)
    total = sum(a["items_compared"] for a in nat)
    print(f"natural encodings   : {ok}/{total} item-runs agree on every metric within 1e-9")


# --------------------------------------------------------------------------- scale
def scale(args: argparse.Namespace) -> dict[str, Any]:
    """Time and peak memory of hash-encoder runs at several sizes, each in a fresh process."""
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = []
    for size in sizes:
        files = workload.write_workload(
            WORKDIR / f"scale{size}", size, 1, crystal_metrics_format=False
        )
        command = [sys.executable, __file__, "scale-child", "--items", str(size)]
        if args.cache:
            command.append("--cache")
        if args.tracemalloc:
            command.append("--tracemalloc")
        with timed() as clock:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        child = json.loads(done.stdout.strip().splitlines()[-1])
        child["process"] = clock.record()
        child["benchmark_bytes"] = files.benchmark.stat().st_size
        runs.append(child)
        print(
            f"{size:>7} items: evaluate {child['evaluate_s']:7.1f} s "
            f"({1e6 * child['evaluate_s'] / size:6.0f} us/item), load files "
            f"{child['load_s']:5.1f} s, peak RSS {child['peak_rss_mb']:7.0f} MB "
            f"(after loading inputs {child['rss_after_load_mb']:.0f} MB){flag(clock)}"
        )
    per_item = [r["evaluate_s"] / r["items"] for r in runs]
    record = {
        "scenario": "scale",
        "encoder": "hash",
        "cache": bool(args.cache),
        "runs": runs,
        "per_item_us": [round(1e6 * p, 1) for p in per_item],
        "per_item_spread": round(max(per_item) / min(per_item), 3),
        "environment": environment(),
    }
    print(
        f"time per item across sizes: {', '.join(f'{1e6 * p:.0f}' for p in per_item)} us "
        f"(max/min {record['per_item_spread']})"
    )
    return record


def scale_child(args: argparse.Namespace) -> None:
    """One scale measurement (run by :func:`scale` in a fresh interpreter)."""
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    root = WORKDIR / f"scale{args.items}"
    scratch = Path(tempfile.mkdtemp(prefix="bench-scale-"))

    def rss_mb() -> float:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    started = time.perf_counter()
    bench = load_benchmark(root / "benchmark.jsonl")
    predictions = load_predictions(root / "predictions" / f"{workload.profile(0).name}.jsonl")
    load_s = time.perf_counter() - started
    rss_after_load = rss_mb()
    config = ScoreConfig(
        encoder="hash",
        compat=COMPAT_CRYSTAL_METRICS,
        cache_dir=str(scratch / "cache"),
        use_cache=args.cache,
    )
    started = time.perf_counter()
    run = evaluate(bench, predictions, config, out_dir=scratch / "out", keep_items=False)
    evaluate_s = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "items": args.items,
        "load_s": round(load_s, 2),
        "evaluate_s": round(evaluate_s, 2),
        "timings": {k: round(v, 2) for k, v in run.timings.items()},
        "encoded": run.encode_stats.encoded,
        "rss_after_load_mb": round(rss_after_load, 1),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "examples_bytes": (scratch / "out" / "examples.jsonl").stat().st_size,
        "match_f1": run.summary.match_f1,
    }
    if args.tracemalloc:
        import tracemalloc

        result["tracemalloc_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


# --------------------------------------------------------------------------- backends
def backends(args: argparse.Namespace) -> dict[str, Any]:
    """ONNX fp32 / int8 and multi-process encoding against torch: speed and agreement."""
    files = workload.write_workload(workdir(args.items), args.items, args.sets)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    scratch = Path(tempfile.mkdtemp(prefix="bench-backends-"))
    exports = Path(args.export_cache) if args.export_cache else scratch / "exports"
    reference: dict[str, Any] | None = None
    row_reference: str | None = None
    rows: dict[str, list[dict[str, dict[str, float]]]] = {}
    report = []
    if args.reference_json:
        # crystalbench's torch runs of a leaderboard measurement on the same workload.
        earlier = json.loads(Path(args.reference_json).read_text())
        if (earlier["items"], earlier["sets"]) != (args.items, args.sets):
            raise SystemExit("--reference-json was measured on another workload size")
        cb_runs = earlier["crystalbench"]
        encoded = sum(r["encoded"] for r in cb_runs)
        reference = {
            "variant": "torch (leaderboard run)",
            "identity": "st:all-MiniLM-L6-v2 (see the leaderboard record)",
            "wall_s": round(sum(r["wall_s"] for r in cb_runs), 2),
            "encoded": encoded,
            "texts_per_s": round(encoded / sum(r["encode_s"] for r in cb_runs), 1),
            "runs": cb_runs,
            "from": args.reference_json,
        }
        report.append(reference)
        print(
            f"{reference['variant']:>14}: {reference['wall_s']:7.1f} s for {args.sets} sets "
            f"({reference['texts_per_s']} texts/s in encode), from {args.reference_json}"
        )
    for variant in variants:
        parsed = re.fullmatch(r"(.+?)(?:x(\d+))?", variant)
        assert parsed is not None
        backend, n_workers = parsed.group(1), int(parsed.group(2) or 1)
        encoder = load_encoder(
            "minilm-offline", backend=backend, workers=n_workers, cache_dir=exports, device="cpu"
        )
        warm = getattr(encoder, "start", None)
        with timed() as setup:
            if warm is not None:
                warm()
            encoder.encode(["warm-up sentence one.", "and another, slightly longer one"])
        cache = scratch / f"cache-{variant}"
        runs, set_rows = [], []
        with timed() as total:
            for k in range(args.sets):
                run, clock = run_crystalbench(encoder, files, k, cache, scratch / f"o-{variant}")
                set_rows.append(cb_rows(run))
                runs.append(
                    {
                        "set": workload.profile(k).name,
                        **clock.record(),
                        "encode_s": round(run.timings.get("encode_forward", 0.0), 2),
                        "encoded": run.encode_stats.encoded,
                        "match_f1": run.summary.match_f1,
                        "ordered_f1": run.summary.ordered_f1,
                    }
                )
        close = getattr(encoder, "close", None)
        if close is not None:
            close()
        rows[variant] = set_rows
        encoded = sum(r["encoded"] for r in runs)
        encode_s = sum(r["encode_s"] for r in runs)
        entry: dict[str, Any] = {
            "variant": variant,
            "identity": encoder.identity,
            "setup_s": round(setup.wall, 2),
            **total.record(),
            "encoded": encoded,
            "texts_per_s": round(encoded / encode_s, 1) if encode_s else None,
            "runs": runs,
        }
        if reference is None:
            reference = entry
        else:
            deltas = [
                abs(r["match_f1"] - b["match_f1"])
                for r, b in zip(runs, reference["runs"], strict=True)
            ]
            entry["vs"] = reference["variant"]
            entry["max_abs_delta_match_f1"] = max(deltas)
            entry["delta_match_f1_by_set"] = [round(d, 5) for d in deltas]
            entry["speedup_wall"] = round(reference["wall_s"] / entry["wall_s"], 2)
        if row_reference is None:
            row_reference = variant
        else:
            base_rows = rows[row_reference]
            entry["items_vs"] = row_reference
            entry["items_same_f1"] = [
                sum(
                    1
                    for i in base_rows[k]
                    if abs(base_rows[k][i]["match_f1"] - set_rows[k][i]["match_f1"]) <= TOLERANCE
                )
                for k in range(args.sets)
            ]
            entry["max_abs_delta_item_f1"] = max(
                abs(base_rows[k][i]["match_f1"] - set_rows[k][i]["match_f1"])
                for k in range(args.sets)
                for i in base_rows[k]
            )
        report.append(entry)
        print(
            f"{variant:>14}: {entry['wall_s']:7.1f} s for {args.sets} sets "
            f"({entry['texts_per_s']} texts/s in encode; setup {entry['setup_s']} s)"
            + (
                f"; |delta Match F1| <= {entry['max_abs_delta_match_f1']:.5f} vs {entry['vs']}"
                if "vs" in entry
                else ""
            )
            + (
                f"; items with the same F1 as {entry['items_vs']}: "
                f"{sum(entry['items_same_f1'])}/{args.items * args.sets}"
                if "items_vs" in entry
                else ""
            )
            + flag(total)
        )
    shutil.rmtree(scratch, ignore_errors=True)
    return {
        "scenario": "backends",
        "items": args.items,
        "sets": args.sets,
        "variants": report,
        "environment": environment(),
    }


# --------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lb = sub.add_parser("leaderboard", help="one set cold, K sets, warm re-score, agreement")
    lb.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    lb.add_argument("--sets", type=int, default=5)
    lb.add_argument(
        "--cm-rescore",
        choices=("measure", "reuse"),
        default="measure",
        help="time crystal-metrics again at the new tau (default) or reuse its set-0 time",
    )
    sc = sub.add_parser("scale", help="hash encoder at several sizes: time and peak memory")
    sc.add_argument("--sizes", default="12500,25000,50000,100000")
    sc.add_argument("--cache", action="store_true", help="also read/write the embedding cache")
    sc.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations")
    child = sub.add_parser("scale-child")
    child.add_argument("--items", type=int, required=True)
    child.add_argument("--cache", action="store_true")
    child.add_argument("--tracemalloc", action="store_true")
    be = sub.add_parser("backends", help="ONNX fp32/int8 and worker processes against torch")
    be.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    be.add_argument("--sets", type=int, default=5)
    be.add_argument(
        "--variants",
        default="torch,onnx,onnx-int8,torchx2,onnxx2",
        help="comma-separated backend[xWORKERS]; the first is the reference",
    )
    be.add_argument("--export-cache", help="keep ONNX exports in this folder")
    be.add_argument(
        "--reference-json",
        help="a leaderboard record (results/raw/leaderboard-*.json) whose crystalbench torch "
        "runs serve as the reference instead of running torch again",
    )
    for command in (lb, sc, be):
        command.add_argument(
            "--wait-quiet",
            type=float,
            default=0.0,
            metavar="SHARE",
            help="before each timed run, wait until other processes use less than this share "
            "of the CPUs (e.g. 0.1; default 0: do not wait)",
        )
    args = parser.parse_args(argv)
    QUIET["max_share"] = getattr(args, "wait_quiet", 0.0)
    if args.command == "scale-child":
        scale_child(args)
        return 0
    # Records name the workload version: the ones without it (leaderboard-300x5.json,
    # backends-300x2.json, scale.json...) were measured on the removed first generator, v1.
    suffix = f"-{workload.WORKLOAD_VERSION}"
    if args.command == "leaderboard":
        save(f"leaderboard-{args.items}x{args.sets}{suffix}", leaderboard(args))
    elif args.command == "scale":
        save(f"scale{suffix}", scale(args))
    else:
        save(f"backends-{args.items}x{args.sets}{suffix}", backends(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
