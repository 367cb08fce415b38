"""Speed of the batched CRYSTAL reward against crystal-metrics, one completion at a time.

Workload (the issue's): 1,024 completions against 12-step references, shaped like a GRPO
generation batch: 128 items x 8 completions each. Reference chains and completions are
synthetic CRYSTAL-style chart/geometry steps (12-30 words); every completion step is a
distinct string (sampled completions differ in wording and read-off values), which is the
worst case for deduplication. Both sides use the same SentenceTransformer object.

- baseline: ``crystal_metrics.rewards.semantic_reasoning_reward([completion],
  reference_steps=[refs], threshold=0.35, model=<the same model>)`` called once per
  completion (its documented use as a TRL reward over a batch of one), which embeds the
  completion's steps and its reference steps on every call;
- ours: ``RewardScorer.signals(completions, items)`` (format, answers and step F1), one call
  per timed slice, with a cold reference cache (first time these items are seen) and a warm
  one (``scorer.warm(train_items)`` at start-up, the steady state of training).

The machine is shared, so the three paths are timed in interleaved rounds (default 8 rounds
of 128 completions = 16 items x 8, the order rotating each round), in wall-clock and in
process CPU time; ``--rounds 1`` times each path once on all 1,024 completions.

The script also checks that both compute the same step F1 (our scorer in
crystal-metrics-compatible matching, guards off).

Usage::

    .venv/bin/python benchmarks/bench_rewards.py                # full run (~3 min on 2 cores)
    .venv/bin/python benchmarks/bench_rewards.py --items 16 --rounds 2   # quick look
    .venv/bin/python benchmarks/bench_rewards.py --backend onnx  # ours through ONNX Runtime
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time

ENTITIES = ["Norway", "Chile", "Kenya", "Japan", "Peru", "Spain", "Egypt", "Canada", "Brazil"]
METRICS = [
    ("rainfall", "mm"),
    ("exports", "billion dollars"),
    ("population growth", "percent"),
    ("car sales", "thousand units"),
]

REFERENCE_TEMPLATES = [
    "The image is a bar chart of {metric} for {n} countries between {y0} and {y1}.",
    "The question asks which country had the highest {metric} in {y}.",
    "The vertical axis shows {metric} in {unit}, with grid lines every {step} {unit}.",
    "In {y}, the bar for {a} reaches about {va} {unit}.",
    "In {y}, the bar for {b} reaches about {vb} {unit}.",
    "In {y}, the bar for {c} is the shortest, at roughly {vc} {unit}.",
    "Comparing {a} and {b}, the {a} bar is {d_ab} {unit} taller.",
    "The remaining countries all stay below {low} {unit} in {y}.",
    "The legend confirms that the darker bars belong to {y}.",
    "So the largest {metric} value in {y} belongs to {a}.",
    "Option {letter} names {a}, which matches this reading.",
    "Therefore the answer is {letter}.",
]

PARAPHRASES = [
    "Looking at the chart, it plots {metric} for {n} countries from {y0} to {y1}.",
    "We need to find the country with the greatest {metric} during {y}.",
    "The y-axis measures {metric} ({unit}) and is marked in steps of {step}.",
    "For {y}, {a}'s bar appears to be around {va} {unit} high.",
    "{b}'s bar in {y} is close to {vb} {unit}.",
    "The smallest bar in {y} is {c}, near {vc} {unit}.",
    "{a} exceeds {b} by roughly {d_ab} {unit} in that year.",
    "No other country goes above {low} {unit} in {y}.",
    "According to the legend, the dark bars show the {y} values.",
    "Hence {a} has the maximum {metric} in {y}.",
    "This corresponds to option {letter}, {a}.",
    "The final answer is {letter}.",
]

DISTRACTORS = [
    "The title of the chart is printed in bold at the top of the figure.",
    "Each country appears twice because two years are compared side by side.",
    "The bars are ordered alphabetically from left to right along the axis.",
    "There is a small footnote about the data source below the horizontal axis.",
    "Averaging all bars gives a value of about {avg} {unit} for {y}.",
    "The difference between the two years is largest for {c}.",
]


def make_item(index: int, rng: random.Random) -> dict[str, object]:
    a, b, c = rng.sample(ENTITIES, 3)
    metric, unit = rng.choice(METRICS)
    y0 = rng.randrange(1990, 2010)
    values = {
        "a": a,
        "b": b,
        "c": c,
        "metric": metric,
        "unit": unit,
        "n": rng.randrange(5, 9),
        "y0": y0,
        "y1": y0 + rng.randrange(5, 12),
        "y": y0 + rng.randrange(1, 5),
        "step": rng.choice([5, 10, 20, 50]),
        "va": rng.randrange(300, 400),
        "vb": rng.randrange(200, 299),
        "vc": rng.randrange(20, 90),
        "low": rng.randrange(150, 199),
        "letter": "ABCD"[index % 4],
        "avg": rng.randrange(100, 200),
        "id": index,
    }
    values["d_ab"] = int(values["va"]) - int(values["vb"])  # type: ignore[call-overload]
    refs = [t.format(**values) for t in REFERENCE_TEMPLATES]
    options = [a, b, c, rng.choice([e for e in ENTITIES if e not in (a, b, c)])]
    letter = str(values["letter"])
    options[ord(letter) - 65], options[0] = options[0], options[ord(letter) - 65]
    return {"values": values, "refs": refs, "options": options, "answer": letter}


CONNECTORS = ["", "First, ", "Next, ", "Now, ", "Then, ", "Also, ", "Here, ", "Note that "]
CLAUSES = [
    "",
    " as shown in the figure",
    " according to the chart",
    " judging by the bars",
    " from the plot",
    " when read carefully",
    " at a glance",
    " in this image",
]


def make_completion(item: dict[str, object], k: int, rng: random.Random, seen: set[str]) -> str:
    values = dict(item["values"])  # type: ignore[call-overload]
    # Each sampled completion reads slightly different numbers and words its steps its own
    # way: every step string of the batch is distinct (``seen``), the worst case for caching.
    for key in ("va", "vb", "vc", "low", "avg"):
        values[key] = int(values[key]) + rng.randrange(-9, 10)
    steps = []
    for j in range(12):
        roll = rng.random()
        if roll < 0.55:
            template = PARAPHRASES[j]
        elif roll < 0.8:
            template = REFERENCE_TEMPLATES[j]
        else:
            template = rng.choice(DISTRACTORS)
        body = template.format(**values)
        for attempt in range(200):
            connector = rng.choice(CONNECTORS)
            clause = rng.choice(CLAUSES)
            step = connector + (body[0].lower() if connector else body[0]) + body[1:-1] + clause
            step += body[-1] if attempt < 100 else f", in reading {k}{body[-1]}"
            if step not in seen:
                break
        seen.add(step)
        steps.append(step)
    answer = str(item["answer"]) if rng.random() < 0.6 else rng.choice("ABCD")
    return json.dumps({"reasoning_steps": steps, "answer": answer})


def build(n_items: int, per_item: int, seed: int = 0) -> tuple[list[str], list[object]]:
    from crystalbench.types import BenchmarkItem

    rng = random.Random(seed)
    completions: list[str] = []
    items: list[object] = []
    seen: set[str] = set()
    for index in range(n_items):
        raw = make_item(index, rng)
        item = BenchmarkItem(
            id=str(index),
            source="synthetic",
            question="Which country had the highest value in the chart?",
            options=raw["options"],  # type: ignore[arg-type]
            answer=str(raw["answer"]),
            reference_steps=raw["refs"],  # type: ignore[arg-type]
        )
        for k in range(per_item):
            completions.append(make_completion(raw, k, rng, seen))
            items.append(item)
    return completions, items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=128, help="distinct items (x8 completions)")
    parser.add_argument("--per-item", type=int, default=8, help="completions per item")
    parser.add_argument("--encoder", default="minilm-offline")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument(
        "--backend",
        default="torch",
        choices=("torch", "onnx", "onnx-int8"),
        help="how *our* scorer runs the encoder; crystal-metrics always gets the torch model "
        "(onnx: the same weights through ONNX Runtime, vectors within ~1e-6; onnx-int8: "
        "quantised, step F1 no longer identical)",
    )
    parser.add_argument(
        "--rounds", type=int, default=8, help="interleaved timing rounds (1: one call each)"
    )
    args = parser.parse_args()

    from crystal_metrics.rewards import semantic_reasoning_reward

    from crystalbench.rewards import RewardScorer, load_reward_encoder
    from crystalbench.rewards.types import StepGuards

    completions, items = build(args.items, args.per_item)
    torch_encoder = load_reward_encoder(args.encoder, device=args.device)
    model = torch_encoder.model  # type: ignore[attr-defined]
    encoder = torch_encoder
    if args.backend != "torch":
        from crystalbench.encoders import load_encoder
        from crystalbench.rewards.encoder_loading import CPU_BATCH_SIZE

        encoder = load_encoder(args.encoder, backend=args.backend, batch_size=CPU_BATCH_SIZE)
    n = len(completions)
    n_steps = sum(len(json.loads(c)["reasoning_steps"]) for c in completions)
    unique_steps = len({s for c in completions for s in json.loads(c)["reasoning_steps"]})
    unique_refs = len({s for i in items for s in i.reference_steps})  # type: ignore[attr-defined]
    print(
        f"# {n} completions, {n_steps} steps ({unique_steps} distinct), "
        f"{len(set(map(id, items)))} items, {unique_refs} distinct reference steps"
    )
    print(
        f"# encoder {encoder.identity}, device {args.device}, "
        f"batch size {getattr(encoder, 'batch_size', '?')}, torch threads "
        f"{__import__('torch').get_num_threads()}, cpus {os.cpu_count()}, "
        f"load {os.getloadavg()[0]:.2f}, {platform.processor() or platform.machine()}"
    )
    model.encode(["warm up the model"] * 8, show_progress_bar=False)
    encoder.encode(["warm up the model"] * 8)
    # One-time costs (lazy imports of the answer checker, math-verify) stay out of the timings.
    warm_completions, warm_items = build(2, 2, seed=99)
    RewardScorer(encoder).signals(warm_completions, warm_items)

    # The machine is shared: the paths are timed in interleaved rounds (each round one slice
    # of whole item groups, the order rotating), wall clock and process CPU time, so that load
    # drift hits all paths alike. CPU time is the steadier figure on a busy machine.
    paths = ["ours, cold references", "ours, warm references", "crystal-metrics, one at a time"]
    if args.skip_baseline:
        paths = paths[:2]
    wall = dict.fromkeys(paths, 0.0)
    cpu = dict.fromkeys(paths, 0.0)
    ours: list[object] = []
    baseline: list[float] = []
    encoded_cold = 0
    per_round = len(completions) // args.rounds
    for index in range(args.rounds):
        chunk = slice(
            index * per_round,
            len(completions) if index == args.rounds - 1 else (index + 1) * per_round,
        )
        batch, rows = completions[chunk], items[chunk]
        order = paths[index % len(paths) :] + paths[: index % len(paths)]
        for path in order:
            scorer = RewardScorer(encoder)
            if path == "ours, warm references":
                scorer.warm(rows)  # type: ignore[arg-type]
            started, started_cpu = time.perf_counter(), time.process_time()
            if path == "crystal-metrics, one at a time":
                for completion, item in zip(batch, rows, strict=True):
                    refs = item.reference_steps  # type: ignore[attr-defined]
                    baseline.extend(
                        semantic_reasoning_reward(
                            [completion], reference_steps=[refs], threshold=0.35, model=model
                        )
                    )
            else:
                signals = scorer.signals(batch, rows)
            wall[path] += time.perf_counter() - started
            cpu[path] += time.process_time() - started_cpu
            if path == "ours, cold references":
                ours.extend(signals)
                encoded_cold += scorer.stats.steps_encoded + scorer.stats.references_encoded

    compat = RewardScorer(
        encoder,
        compat="crystal-metrics-0.2",
        guards=StepGuards(block_repeats=False, block_question_copies=False),
    )
    compat_f1 = [s.step_f1 for s in compat.signals(completions, items)]

    print()
    print(f"{args.rounds} interleaved rounds of {per_round} completions")
    print()
    print("| path | wall s | CPU s | completions/s (wall) | speed-up (wall) | speed-up (CPU) |")
    print("|---|---:|---:|---:|---:|---:|")
    base = "crystal-metrics, one at a time"
    for path in paths:
        wall_up = f"{wall[base] / wall[path]:.1f}x" if base in wall else "-"
        cpu_up = f"{cpu[base] / cpu[path]:.1f}x" if base in cpu else "-"
        print(
            f"| {path} | {wall[path]:.1f} | {cpu[path]:.1f} | {n / wall[path]:.1f} "
            f"| {wall_up} | {cpu_up} |"
        )
    print()
    refs_total = sum(len(i.reference_steps) for i in items)  # type: ignore[attr-defined]
    print(
        f"texts encoded by ours (cold): {encoded_cold}; by crystal-metrics: {n_steps + refs_total}"
    )
    if baseline:
        diffs = [abs(a - b) for a, b in zip(baseline, compat_f1, strict=True)]  # type: ignore[operator]
        print(
            f"step F1 parity with crystal-metrics (compat rules, guards off): "
            f"max |diff| {max(diffs):.2e}, mean F1 {statistics.fmean(baseline):.3f}"
        )
    print(
        f"mean step F1 (paper rules, guards on): "
        f"{statistics.fmean(s.step_f1 or 0.0 for s in ours):.3f}"  # type: ignore[attr-defined]
    )
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
