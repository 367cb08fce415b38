"""The fact guard (issue 24, point 3): what it catches, what it keeps, and what it costs.

With the real MiniLM encoder (``minilm-offline``), for cosine at tau alone and for cosine
with ``crystalbench.scoring.filters.guard.FactGuard``:

1. **Pair set** (``benchmarks/data/fact_pairs``, our own, not human-labelled): the share of
   contradictions matched (per kind and overall; target with the guard <= 10 %), the share
   of paraphrases kept (target: >= 95 % of those cosine alone keeps), unrelated pairs
   matched. Reported per split: ``dev`` (the rules were tuned on it), ``heldout`` (written
   with it, not tuned on), ``sample`` (the bundled sample's reference steps copied with one
   fact changed; not tuned on). The issue's table row by row.
2. **Cost** on realistic steps (every prediction step of the bundled sample's five model
   styles against its item's reference steps): microseconds to read a step's facts (once per
   step text), microseconds per checked pair (pairs at or above tau, facts read), and the
   guard's time as a share of ``crystalbench.evaluate`` on the same predictions, cold (no
   embedding cache) and warm (cached embeddings), for the guard read outside the engine
   (every pair at or above tau: an upper bound; the engine reads only the pairs the greedy
   walk reaches, ``bench_guard_cost.py``).
3. **Through the engine** (``crystalbench.evaluate`` with ``ScoreConfig(guard=...)``, each
   guard: ``none``, ``facts``, ``facts-strict``): precision, recall, Match F1, LIS and Ordered
   F1 of the sample's model styles, and the copy attack of the issue: a chain that copies
   every reference step with one number changed, answer right, scored against its
   reference. (The cost inside a 6,372-item run is ``bench_guard_cost.py``'s.)

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_guard.py [--tau 0.35] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench import ScoreConfig, evaluate, load_benchmark, load_predictions
from crystalbench.data import SAMPLE_DIR
from crystalbench.encoders import load_encoder
from crystalbench.parsing.response import parse_prediction
from crystalbench.scoring.filters.guard import FactGuard
from crystalbench.scoring.filters.guard.facts import step_facts

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "benchmarks" / "data" / "fact_pairs"
KINDS = ("number", "negation", "relation", "option", "colour")
ISSUE_TABLE = "issue-table"


def cpu_model() -> str | None:
    """The processor's model name (``/proc/cpuinfo``)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return None
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else None


def load_pairs() -> list[dict[str, Any]]:
    pairs = []
    for path in sorted(PAIRS.glob("*.jsonl")):
        pairs.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return pairs


def embed(encoder: Any, texts: Iterable[str]) -> dict[str, np.ndarray]:
    unique = sorted(set(texts))
    vectors = np.asarray(encoder.encode(unique), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return dict(zip(unique, vectors, strict=True))


def share(hits: int, total: int) -> float | None:
    return round(100.0 * hits / total, 1) if total else None


# --------------------------------------------------------------------------- 1. pair set
def score_pairs(
    pairs: Sequence[dict[str, Any]], vectors: dict[str, np.ndarray], tau: float
) -> list[dict[str, Any]]:
    rows = []
    tau32 = np.float32(tau)
    for pair in pairs:
        cosine = np.float32(vectors[pair["pred"]] @ vectors[pair["ref"]])
        conflict = FactGuard(pair["options"]).check(pair["pred"], pair["ref"])
        rows.append(
            {
                **pair,
                "cosine": float(cosine),
                "cosine_match": bool(cosine >= tau32),
                "vetoed": conflict is not None,
                "veto_reason": conflict.reason if conflict is not None else None,
                "guard_match": bool(cosine >= tau32) and conflict is None,
            }
        )
    return rows


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    contradictions = [r for r in rows if r["label"] == "contradiction"]
    paraphrases = [r for r in rows if r["label"] == "paraphrase"]
    unrelated = [r for r in rows if r["label"] == "unrelated"]
    kept_by_cosine = [r for r in paraphrases if r["cosine_match"]]
    out: dict[str, Any] = {
        "pairs": len(rows),
        "contradictions": len(contradictions),
        "contradictions_matched_cosine_pct": share(
            sum(r["cosine_match"] for r in contradictions), len(contradictions)
        ),
        "contradictions_matched_guard_pct": share(
            sum(r["guard_match"] for r in contradictions), len(contradictions)
        ),
        "by_kind": {},
        "paraphrases": len(paraphrases),
        "paraphrases_kept_cosine_pct": share(len(kept_by_cosine), len(paraphrases)),
        "paraphrases_kept_guard_pct": share(
            sum(r["guard_match"] for r in paraphrases), len(paraphrases)
        ),
        "paraphrases_kept_of_cosine_pct": share(
            sum(r["guard_match"] for r in kept_by_cosine), len(kept_by_cosine)
        ),
        "unrelated": len(unrelated),
        "unrelated_matched_cosine_pct": share(
            sum(r["cosine_match"] for r in unrelated), len(unrelated)
        ),
        "unrelated_matched_guard_pct": share(
            sum(r["guard_match"] for r in unrelated), len(unrelated)
        ),
        "vetoed_paraphrases": [
            {"ref": r["ref"], "pred": r["pred"], "reason": r["veto_reason"]}
            for r in paraphrases
            if r["vetoed"]
        ],
    }
    for kind in KINDS:
        group = [r for r in contradictions if r["kind"] == kind]
        out["by_kind"][kind] = {
            "n": len(group),
            "matched_cosine_pct": share(sum(r["cosine_match"] for r in group), len(group)),
            "matched_guard_pct": share(sum(r["guard_match"] for r in group), len(group)),
        }
    return out


def print_summary(name: str, summary: dict[str, Any]) -> None:
    print(f"\n== {name}: {summary['pairs']} pairs")
    print(f"{'':24s} {'n':>5s} {'cosine':>8s} {'+guard':>8s}")
    for kind, row in summary["by_kind"].items():
        if row["n"]:
            cosine, guarded = row["matched_cosine_pct"], row["matched_guard_pct"]
            print(f"  contradiction/{kind:9s} {row['n']:5d} {cosine:7.1f}% {guarded:7.1f}%")
    s = summary
    print(
        f"  contradictions (all)   {s['contradictions']:5d} "
        f"{s['contradictions_matched_cosine_pct']:7.1f}% "
        f"{s['contradictions_matched_guard_pct']:7.1f}%   (matched)"
    )
    print(
        f"  paraphrases            {s['paraphrases']:5d} {s['paraphrases_kept_cosine_pct']:7.1f}% "
        f"{s['paraphrases_kept_guard_pct']:7.1f}%   "
        f"(kept; {s['paraphrases_kept_of_cosine_pct']}% of cosine's)"
    )
    if s["unrelated"]:
        print(
            f"  unrelated              {s['unrelated']:5d} "
            f"{s['unrelated_matched_cosine_pct']:7.1f}% "
            f"{s['unrelated_matched_guard_pct']:7.1f}%   (matched)"
        )


# --------------------------------------------------------------------------- 2. cost
def sample_work() -> tuple[Any, dict[str, Any], list[tuple[str, list[str], list[str], list[str]]]]:
    """The sample benchmark, its prediction sets, and (set, pred steps, ref steps, options)."""
    bench = load_benchmark("sample")
    sets = {
        p.stem: load_predictions(p)
        for p in sorted((Path(SAMPLE_DIR) / "predictions").glob("*.jsonl"))
    }
    work = []
    for name, preds in sets.items():
        for item in bench.items:
            pred = preds.by_id.get(item.id)
            steps = (
                [s for s in parse_prediction(pred).steps if s.strip()] if pred is not None else []
            )
            work.append((name, steps, list(item.reference_steps), list(item.options)))
    return bench, sets, work


def time_guard(
    work: Sequence[tuple[str, list[str], list[str], list[str]]],
    vectors: dict[str, np.ndarray],
    tau: float,
    repeats: int,
) -> dict[str, Any]:
    """Reading every step (cold facts) and checking every pair at or above tau."""
    texts = sorted({s for _, pred, ref, _ in work for s in (*pred, *ref)})
    similarities = [
        (np.stack([vectors[s] for s in pred]) @ np.stack([vectors[s] for s in ref]).T).astype(
            np.float32
        )
        if pred
        else np.zeros((0, len(ref)), dtype=np.float32)
        for _, pred, ref, _ in work
    ]
    read, check, total = [], [], []
    n_pairs = sum(int((sim >= np.float32(tau)).sum()) for sim in similarities)
    vetoes = 0
    for _ in range(repeats):
        step_facts.cache_clear()
        start = time.perf_counter()
        for text in texts:
            step_facts(text)
        read.append(time.perf_counter() - start)
        start = time.perf_counter()
        vetoes = 0
        for (_, pred, ref, options), sim in zip(work, similarities, strict=True):
            _, found = FactGuard(options).veto_mask(pred, ref, sim, tau)
            vetoes += len(found)
        check.append(time.perf_counter() - start)
        total.append(read[-1] + check[-1])
    return {
        "steps_read": len(texts),
        "pairs_checked": n_pairs,
        "vetoes": vetoes,
        "read_us_per_step": round(1e6 * min(read) / len(texts), 1),
        "check_us_per_pair": round(1e6 * min(check) / max(n_pairs, 1), 1),
        "guard_seconds_best": round(min(total), 4),
        "guard_seconds_median": round(statistics.median(total), 4),
    }


def time_scoring(
    bench: Any, sets: dict[str, Any], encoder: Any, repeats: int, cache_dir: Path
) -> dict[str, float]:
    """``crystalbench.evaluate`` over every set: cold (no cache), then warm (cached embeddings)."""
    cold, warm = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for preds in sets.values():
            evaluate(
                bench,
                preds,
                ScoreConfig(encoder="minilm-offline", use_cache=False),
                encoder=encoder,
            )
        cold.append(time.perf_counter() - start)
    config = ScoreConfig(encoder="minilm-offline", cache_dir=str(cache_dir))
    for preds in sets.values():  # fill the cache
        evaluate(bench, preds, config, encoder=encoder)
    for _ in range(repeats):
        start = time.perf_counter()
        for preds in sets.values():
            evaluate(bench, preds, config, encoder=encoder)
        warm.append(time.perf_counter() - start)
    return {"cold_seconds": round(min(cold), 3), "warm_seconds": round(min(warm), 3)}


# --------------------------------------------------------------------------- 3. the engine
GUARD_KINDS = ("none", "facts", "facts-strict")
ENGINE_METRICS = ("match_f1", "precision", "recall", "lis", "ordered_f1")


def _summary_row(summary: Any) -> dict[str, Any]:
    row: dict[str, Any] = {key: round(getattr(summary, key), 4) for key in ENGINE_METRICS}
    row["vetoed_pairs"] = summary.n_vetoed_pairs
    row["vetoed_items"] = summary.n_vetoed_items
    return row


def engine_sample(bench: Any, sets: dict[str, Any], encoder: Any) -> dict[str, Any]:
    """The sample's model styles scored by the engine under each guard (``evaluate``)."""
    out: dict[str, Any] = {}
    for name, preds in sets.items():
        out[name] = {
            guard: _summary_row(
                evaluate(
                    bench,
                    preds,
                    ScoreConfig(encoder="minilm-offline", use_cache=False, guard=guard),
                    encoder=encoder,
                ).summary
            )
            for guard in GUARD_KINDS
        }
    return out


def copy_attack(bench: Any, encoder: Any, tau: float, seed: int) -> dict[str, Any]:
    """Every reference chain copied with each number-bearing step's first number changed,
    answer right, scored by the engine under each guard (items with a changed step)."""
    import re

    from crystalbench.types import Prediction

    number = re.compile(r"(?<![\w.^/])\d+(?![\w.]*\d)")
    rng = random.Random(seed)
    preds, ids, changed, total = [], [], 0, 0
    for item in bench.items:
        copied = []
        for step in item.reference_steps:
            found = number.search(step)
            if found:
                value = int(found.group(0))
                step = (
                    step[: found.start()] + str(value + rng.choice([1, 2, 3])) + step[found.end() :]
                )
            copied.append(step)
        if copied != list(item.reference_steps):
            ids.append(item.id)
            changed += sum(p != r for p, r in zip(copied, item.reference_steps, strict=True))
            total += len(copied)
            preds.append(Prediction(id=item.id, reasoning_steps=copied, answer=item.answer))
    subset = bench.subset(ids=ids)
    record: dict[str, Any] = {"items": len(ids), "steps_changed": changed, "steps": total}
    for guard in GUARD_KINDS:
        config = ScoreConfig(encoder="minilm-offline", use_cache=False, threshold=tau, guard=guard)
        run = evaluate(subset, preds, config, encoder=encoder)
        record[guard] = {
            **_summary_row(run.summary),
            "vetoed_by_reason": run.summary.vetoed_by_reason,
            "step_vetoes": sum(
                1 for item in run.items for veto in item.vetoed or () if veto.scope == "step"
            ),
        }
    record["correct_share_of_steps"] = round(1 - changed / total, 4)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tau", type=float, default=0.35)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "raw" / "guard.json"
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=Path("/tmp/crystalbench-bench-guard-cache")
    )
    args = parser.parse_args()

    encoder = load_encoder("minilm-offline")
    pairs = load_pairs()
    vectors = embed(encoder, (s for p in pairs for s in (p["ref"], p["pred"])))
    rows = score_pairs(pairs, vectors, args.tau)
    record: dict[str, Any] = {"tau": args.tau, "encoder": encoder.identity, "splits": {}}
    for split in ("dev", "heldout", "sample"):
        summary = summarise([r for r in rows if r["split"] == split])
        record["splits"][split] = summary
        print_summary(split, summary)
    hand = summarise([r for r in rows if r["origin"] in ("hand", ISSUE_TABLE)])
    record["hand_written"] = hand
    print_summary("hand-written (dev + held-out)", hand)
    print("\n== the issue's table")
    record["issue_table"] = []
    for r in rows:
        if r["origin"] == ISSUE_TABLE:
            verdict = "vetoed: " + r["veto_reason"] if r["vetoed"] else "kept"
            record["issue_table"].append(
                {k: r[k] for k in ("ref", "pred", "label", "cosine", "vetoed", "veto_reason")}
            )
            print(f"  {r['cosine']:.3f} {r['label']:13s} {verdict:17s} {r['ref']} | {r['pred']}")

    bench, sets, work = sample_work()
    sample_vectors = embed(encoder, (s for _, pred, ref, _ in work for s in (*pred, *ref)))
    cost = time_guard(work, sample_vectors, args.tau, args.repeats)
    scoring = time_scoring(bench, sets, encoder, args.repeats, args.cache_dir)
    cost.update(scoring)
    cost["share_of_cold_scoring_pct"] = round(
        100 * cost["guard_seconds_best"] / scoring["cold_seconds"], 2
    )
    cost["share_of_warm_rescoring_pct"] = round(
        100 * cost["guard_seconds_best"] / scoring["warm_seconds"], 2
    )
    record["cost"] = cost
    print("\n== cost (bundled sample, 5 prediction sets x 40 items)")
    for key, value in cost.items():
        print(f"  {key}: {value}")
    record["sample_engine"] = engine_sample(bench, sets, encoder)
    print("\n== the sample's model styles through the engine (P, R, Match F1, Ordered F1)")
    for name, by_guard in record["sample_engine"].items():
        cells = "  ".join(
            f"{guard} {row['precision']:.3f}/{row['recall']:.3f}/{row['match_f1']:.3f}/"
            f"{row['ordered_f1']:.3f} ({row['vetoed_pairs']} vetoes)"
            for guard, row in by_guard.items()
        )
        print(f"  {name:28s} {cells}")
    record["copy_attack"] = copy_attack(bench, encoder, args.tau, args.seed)
    print("\n== copy attack (reference wording, one number changed per numeric step)")
    print(f"  {json.dumps(record['copy_attack'])}")

    record.update(
        command=" ".join(["python", "benchmarks/bench_guard.py", *sys.argv[1:]]),
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
        cpus=os.cpu_count(),
        cpu_model=cpu_model(),
        load_average=os.getloadavg(),
        vetoes_by_reason=dict(Counter(r["veto_reason"] for r in rows if r["vetoed"])),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
