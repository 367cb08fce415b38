"""The reward speed benchmark on a GPU: batched scorer vs crystal-metrics one at a time.

Same workload as ``bench_rewards.py`` (1,024 completions = 128 items x 8, 12-step
references, every completion step distinct), run with the encoder on ``cuda``. It needs the
project's ``.venv`` with a CUDA build of torch, ``crystal-metrics==0.2.0`` and the offline
MiniLM package; it downloads nothing. It was written for a lent GPU machine and has not been
run in this repository's CI (no GPU there); its numbers, when produced, belong in
``benchmarks/results/rewards.md``.

Usage::

    .venv/bin/python benchmarks/gpu_rewards.py                     # float32, minilm-offline
    .venv/bin/python benchmarks/gpu_rewards.py --dtype float16     # half precision too

With ``$OUT`` set, the figures are also written to ``$OUT/gpu_rewards-<dtype>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_rewards import build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=128)
    parser.add_argument("--per-item", type=int, default=8)
    parser.add_argument("--encoder", default="minilm-offline")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of our call")
    parser.add_argument("--device", default="cuda:0", help="cpu only to dry-run the script")
    parser.add_argument(
        "--backend",
        default="torch",
        help="our encoder's backend (torch: the baseline shares its model; auto, onnx, ...)",
    )
    args = parser.parse_args()

    import torch
    from crystal_metrics.rewards import semantic_reasoning_reward

    from crystalbench.rewards import RewardScorer, load_reward_encoder

    device = args.device
    cuda = device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        raise SystemExit("no CUDA device visible; run bench_rewards.py on CPU instead")
    completions, items = build(args.items, args.per_item)
    encoder = load_reward_encoder(
        args.encoder, device=device, dtype=args.dtype, backend=args.backend
    )
    model = encoder.model  # type: ignore[attr-defined]
    name = torch.cuda.get_device_name(0) if cuda else "cpu (dry run)"
    print(f"# {name}, torch {torch.__version__}, {encoder.identity}")
    batch_size = getattr(encoder, "batch_size", "?")
    print(f"# {len(completions)} completions, batch size {batch_size}")
    warm_c, warm_i = build(4, 2, seed=99)
    RewardScorer(encoder).signals(warm_c, warm_i)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def timed(fn: object) -> float:
        sync()
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        sync()
        return time.perf_counter() - started

    def ours(warm_references: bool) -> float:
        scorer = RewardScorer(encoder)  # fresh memo each time
        if warm_references:
            scorer.warm(items)  # type: ignore[arg-type]
        return timed(lambda: scorer.signals(completions, items))

    cold = min(ours(False) for _ in range(args.repeats))
    warm = min(ours(True) for _ in range(args.repeats))

    def baseline() -> None:
        for completion, item in zip(completions, items, strict=True):
            refs = item.reference_steps  # type: ignore[attr-defined]
            semantic_reasoning_reward(
                [completion], reference_steps=[refs], threshold=0.35, model=model
            )

    base = timed(baseline)
    n = len(completions)
    paths = {
        "ours, cold references": cold,
        "ours, warm references": warm,
        "crystal-metrics, one at a time": base,
    }
    print("| path | seconds | completions/s | speed-up |")
    print("|---|---:|---:|---:|")
    for label, seconds in paths.items():
        rate = n / seconds
        print(f"| {label} ({args.dtype}) | {seconds:.3f} | {rate:.0f} | {base / seconds:.1f}x |")
    out = os.environ.get("OUT")
    if out:
        report = {
            "device": name,
            "torch": torch.__version__,
            "encoder": encoder.identity,
            "dtype": args.dtype,
            "batch_size": batch_size,
            "completions": n,
            "items": args.items,
            "per_item": args.per_item,
            "repeats": args.repeats,
            "seconds": paths,
            "speed_up": {label: base / seconds for label, seconds in paths.items()},
        }
        path = os.path.join(out, f"gpu_rewards-{args.dtype}.json")
        os.makedirs(out, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()
