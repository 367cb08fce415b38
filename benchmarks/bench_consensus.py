"""Consensus construction: the threshold sweep that picked theta, and speed at CRYSTAL scale.

Two scenarios (each prints a Markdown table and writes JSON under ``benchmarks/results/raw/``)::

    # theta sweep on the bundled sample's chains with minilm-offline: four simulated
    # generators per item (reference wording, the sample's paraphrases, connective-led
    # restatements of a subset, paraphrases of a subset plus filler distractors); each
    # candidate step's true label is the reference step it restates (fillers are their
    # own labels). Pairwise precision / recall / F1 of "same cluster" over pairs of steps
    # from different chains, the adjusted Rand index, and how often the consensus chain
    # has exactly the reference's number of steps.
    python benchmarks/bench_consensus.py sweep

    # speed: 6,372 items x 4 chains x ~12 steps. The encoder (minilm-offline, torch, CPU)
    # is timed on a random subset of the distinct step texts and extrapolated; consensus
    # (everything but encoding: graph, components, medoids, order, provenance records)
    # runs on all items with precomputed embeddings; peak RSS of the process is recorded.
    python benchmarks/bench_consensus.py speed --items 6372 --encode-sample 3000

The load average is recorded with each measurement (the machine is shared).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
RAW = ROOT / "results" / "raw"
# The repository root: the sample's chains come from tools.sample_builder (outside the package).
sys.path.insert(0, str(ROOT.parent))


def load_average() -> float:
    return os.getloadavg()[0]


def simulated_chains(spec, rng: random.Random):
    """Four candidate chains for one sample spec, and the true label of each step."""
    from crystalbench.references import CandidateChain
    from tools.sample_builder.styles import CONNECTIVES, FILLERS, _after_connective

    steps = list(spec.steps)
    n = len(steps)
    chains, labels = [], []
    chains.append([s.text for s in steps])
    labels.append(list(range(n)))
    chains.append([s.para for s in steps])
    labels.append(list(range(n)))
    keep = sorted(rng.sample(range(n), max(1, round(0.8 * n))))
    chains.append([rng.choice(CONNECTIVES) + _after_connective(steps[k].text) for k in keep])
    labels.append(keep)
    keep = sorted(rng.sample(range(n), max(1, round(0.7 * n))))
    texts = [steps[k].para for k in keep]
    marks = list(keep)
    for f, filler in enumerate(rng.sample(FILLERS, 2)):
        at = rng.randrange(len(texts) + 1)
        texts.insert(at, filler)
        marks.insert(at, -1 - f)
    chains.append(texts)
    labels.append(marks)
    models = ["gen-a", "gen-b", "gen-c", "gen-d"]
    candidates = [
        CandidateChain(model=m, seed=i, steps=tuple(c))
        for i, (m, c) in enumerate(zip(models, chains, strict=True))
    ]
    return candidates, labels


def sweep(args: argparse.Namespace) -> dict:
    from sklearn.metrics import adjusted_rand_score

    from crystalbench.encoders import CachingEncoder, load_encoder
    from crystalbench.references import consensus_from_embeddings
    from tools.sample_builder import sample_specs

    encoder = CachingEncoder(load_encoder(args.encoder))
    rng = random.Random(0)
    items = []
    for spec in sample_specs():
        for repeat in range(args.repeats):
            chains, labels = simulated_chains(spec, rng)
            texts = [t for c in chains for t in c.steps]
            vectors = encoder.embed(texts)
            split, start = [], 0
            for c in chains:
                split.append(vectors[start : start + len(c.steps)])
                start += len(c.steps)
            items.append((spec, repeat, chains, labels, split))
    thetas = [round(t, 2) for t in np.arange(args.low, args.high + 1e-9, args.step)]
    rows = []
    for theta in thetas:
        tp = fp = fn = 0
        aris, exact, lengths = [], 0, []
        for spec, _, chains, labels, split in items:
            chain = consensus_from_embeddings(chains, split, theta=theta)
            where = {}
            for cluster, prov in enumerate(chain.provenance):
                for m in prov.members:
                    where[(m.model, m.index)] = cluster
            truth, found, owner = [], [], []
            for c, lab in zip(chains, labels, strict=True):
                for index, label in enumerate(lab):
                    truth.append(label if label >= 0 else f"filler-{c.model}-{label}")
                    found.append(where[(c.model, index)])
                    owner.append(c.model)
            for i in range(len(truth)):
                for j in range(i + 1, len(truth)):
                    if owner[i] == owner[j]:
                        continue
                    same_true, same_found = truth[i] == truth[j], found[i] == found[j]
                    tp += same_true and same_found
                    fp += same_found and not same_true
                    fn += same_true and not same_found
            aris.append(adjusted_rand_score([str(t) for t in truth], found))
            exact += len(chain.steps) == len(spec.steps)
            lengths.append(len(chain.steps) / len(spec.steps))
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append(
            {
                "theta": theta,
                "pair_precision": round(precision, 4),
                "pair_recall": round(recall, 4),
                "pair_f1": round(f1, 4),
                "ari": round(float(np.mean(aris)), 4),
                "exact_length": round(exact / len(items), 4),
                "length_ratio": round(float(np.mean(lengths)), 3),
            }
        )
    # The rule that picked the default: among thetas within 0.002 of the best pairwise F1
    # (the plateau), the one with the best adjusted Rand index.
    top_f1 = max(r["pair_f1"] for r in rows)
    best = max((r for r in rows if r["pair_f1"] >= top_f1 - 0.002), key=lambda r: r["ari"])
    print(f"encoder {args.encoder}; {len(items)} items; load {load_average():.2f}")
    print("| theta | pair P | pair R | pair F1 | ARI | exact length | chain/ref length |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        mark = " **best**" if r is best else ""
        print(
            f"| {r['theta']:.2f}{mark} | {r['pair_precision']:.3f} | {r['pair_recall']:.3f} | "
            f"{r['pair_f1']:.3f} | {r['ari']:.3f} | {r['exact_length']:.3f} | "
            f"{r['length_ratio']:.3f} |"
        )
    return {"scenario": "sweep", "encoder": args.encoder, "rows": rows, "best": best}


def speed(args: argparse.Namespace) -> dict:
    """Consensus time and memory at scale against the encoder's time for the same steps."""
    from crystalbench.encoders import load_encoder
    from crystalbench.references import CandidateChain, consensus_from_embeddings
    from crystalbench.references.consensus import single_blas_thread
    from tools.sample_builder import sample_specs

    # Step-like sentences for the encoder's timing: the sample's reference steps and
    # paraphrases, each made distinct by a number (the cache must not hit).
    sentences = [t for spec in sample_specs() for s in spec.steps for t in (s.text, s.para)]

    rng = np.random.default_rng(0)
    pyrng = random.Random(0)
    dim = 384
    # Synthetic items: ~12 true steps each; each chain restates 8-16 of them with noise
    # (paraphrase-like cosines 0.7-0.95) plus a distractor now and then.
    words = [f"w{i}" for i in range(5000)]
    started = time.perf_counter()
    consensus_s = 0.0
    n_steps = 0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    limits = single_blas_thread() if args.blas_threads == "one" else contextlib.nullcontext()
    limits.__enter__()
    for item in range(args.items):
        n_true = pyrng.randint(8, 16)
        centres = rng.standard_normal((n_true, dim)).astype(np.float32)
        chains, embeddings = [], []
        for c in range(4):
            keep = sorted(pyrng.sample(range(n_true), pyrng.randint(max(1, n_true - 4), n_true)))
            noise = rng.standard_normal((len(keep), dim)).astype(np.float32) * 0.45
            vectors = centres[keep] + noise
            if pyrng.random() < 0.3:
                vectors = np.vstack([vectors, rng.standard_normal((1, dim)).astype(np.float32)])
            steps = tuple(
                " ".join(pyrng.sample(words, 12)) + f" {item}-{c}-{k}" for k in range(len(vectors))
            )
            chains.append(CandidateChain(model=f"m{c}", seed=item * 4 + c, steps=steps))
            embeddings.append(vectors)
            n_steps += len(steps)
        t0 = time.perf_counter()
        consensus_from_embeddings(chains, embeddings, theta=args.theta)
        consensus_s += time.perf_counter() - t0
    limits.__exit__(None, None, None)
    total_s = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load_consensus = load_average()

    encoder = load_encoder(args.encoder)
    texts_sample = [f"{sentences[k % len(sentences)]} ({k})" for k in range(args.encode_sample)]
    encoder.encode(texts_sample[:64])  # warm-up (model load)
    t0 = time.perf_counter()
    encoder.encode(texts_sample)
    encode_s = time.perf_counter() - t0
    per_text = encode_s / len(texts_sample)
    encode_all_s = per_text * n_steps
    share = consensus_s / encode_all_s
    result = {
        "scenario": "speed",
        "items": args.items,
        "steps": n_steps,
        "steps_per_item": n_steps / args.items,
        "consensus_s": round(consensus_s, 2),
        "consensus_ms_per_item": round(1000 * consensus_s / args.items, 3),
        "loop_s": round(total_s, 2),
        "encoder": args.encoder,
        "encode_sample": len(texts_sample),
        "encode_ms_per_step": round(1000 * per_text, 3),
        "encode_all_s_extrapolated": round(encode_all_s, 1),
        "consensus_share_of_encoding": round(share, 4),
        "blas_threads": args.blas_threads,
        "peak_rss_mb": round(peak_mb, 1),
        "rss_before_mb": round(rss_before / 1024, 1),
        "load_consensus": round(load_consensus, 2),
        "load_encode": round(load_average(), 2),
    }
    print(json.dumps(result, indent=2))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="scenario", required=True)
    p = sub.add_parser("sweep")
    p.add_argument("--encoder", default="minilm-offline")
    p.add_argument("--low", type=float, default=0.30)
    p.add_argument("--high", type=float, default=0.90)
    p.add_argument("--step", type=float, default=0.05)
    p.add_argument("--repeats", type=int, default=3, help="simulated chain sets per item")
    s = sub.add_parser("speed")
    s.add_argument("--items", type=int, default=6372)
    s.add_argument("--encode-sample", type=int, default=3000)
    s.add_argument("--encoder", default="minilm-offline")
    s.add_argument("--theta", type=float, default=None)
    s.add_argument(
        "--blas-threads",
        choices=("one", "default"),
        default="one",
        help="one: the consensus loop inside single_blas_thread(), as compute_consensus runs it",
    )
    args = parser.parse_args()
    if getattr(args, "theta", 0) is None:
        from crystalbench.config.settings import REFERENCES_THETA

        args.theta = REFERENCES_THETA
    result = sweep(args) if args.scenario == "sweep" else speed(args)
    result["load_average_end"] = round(load_average(), 2)
    RAW.mkdir(parents=True, exist_ok=True)
    out = RAW / f"references_{args.scenario}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
