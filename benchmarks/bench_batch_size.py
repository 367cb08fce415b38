"""Encoder throughput against batch size on this machine (sentences per second).

Encodes the distinct reference and predicted steps of the first ``--items`` workload items
(length-sorted, as crystalbench does) with each batch size, ``--rounds`` times in turn, and
prints the best rate per size: the figure behind ``defaults.ENCODE_BATCH_SIZE``.

    python benchmarks/bench_batch_size.py                      # torch, minilm-offline
    python benchmarks/bench_batch_size.py --backend onnx --sizes 32,64,128,256
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from crystalbench.encoders import load_encoder  # noqa: E402


def workload_texts(n_items: int) -> list[str]:
    """Distinct reference and first-set predicted steps of ``n_items`` items, by length."""
    texts: set[str] = set()
    for item in workload.iter_items(n_items):
        texts.update(item.reference_steps)
        texts.update(workload.predict(item, 0)["reasoning_steps"])
    return sorted(texts, key=len)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=120)
    parser.add_argument("--sizes", default="16,32,64,128,256")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--backend", default="torch", choices=("torch", "onnx", "onnx-int8"))
    parser.add_argument("--encoder", default="minilm-offline")
    args = parser.parse_args(argv)
    texts = workload_texts(args.items)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{len(texts)} distinct texts, {args.encoder} ({args.backend}), rounds {args.rounds}")
    encoder = load_encoder(args.encoder, backend=args.backend, device="cpu")
    encoder.encode(texts[:64])  # load the model outside the timings
    best: dict[int, float] = {}
    for round_ in range(args.rounds):
        for size in sizes:
            encoder.batch_size = size  # type: ignore[attr-defined]
            began = time.perf_counter()
            encoder.encode(texts)
            rate = len(texts) / (time.perf_counter() - began)
            best[size] = max(best.get(size, 0.0), rate)
            print(f"round {round_ + 1} batch {size:5d}: {rate:7.1f} texts/s", flush=True)
    print("\nbest of rounds:")
    for size in sizes:
        print(f"  batch {size:5d}: {best[size]:7.1f} texts/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
