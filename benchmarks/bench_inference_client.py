"""Throughput of the inference client against servers that answer instantly.

Starts ``tests/servers/openai_server.py --no-decode`` in separate processes (one per
replica), then runs the real ``crystalbench.inference.infer`` with the
``OpenAIChatBackend`` over ``--items`` requests built from the bundled sample's images
(ids repeated with a suffix), writing a real output file. Reports requests per second
and the CPU seconds each side spent per request (client: this process; server: the
server processes, read from /proc), so a client-side bottleneck shows even when both
share the same cores.

Usage::

    .venv/bin/python benchmarks/bench_inference_client.py --items 2000 --concurrency 32
    .venv/bin/python benchmarks/bench_inference_client.py --items 2000 --replicas 2 --image-kb 200
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "servers" / "openai_server.py"


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--no-decode"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return process, f"http://127.0.0.1:{int(line.split()[1])}/v1"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def benchmark_items(n_items: int, image_kb: int | None, workdir: Path):  # type: ignore[no-untyped-def]
    from crystalbench.data import load_benchmark
    from crystalbench.data.loading import Benchmark

    sample = load_benchmark("sample")
    big: bytes | None = None
    if image_kb:
        import numpy as np
        from PIL import Image

        side = 64
        while True:  # noise PNGs barely compress: grow until the file has the wanted size
            pixels = np.random.default_rng(0).integers(0, 256, (side, side, 3), dtype=np.uint8)
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, "PNG")
            if buffer.tell() >= image_kb * 1024:
                big = buffer.getvalue()
                break
            side = int(side * 1.2) + 1
    items = []
    for index in range(n_items):
        base = sample.items[index % len(sample.items)]
        items.append(base.model_copy(update={"id": f"{base.id}-{index}"}))

    def loader(item):  # type: ignore[no-untyped-def]
        return big if big is not None else Path(item.image).read_bytes()

    return Benchmark(name="bench", items=items, image_loader=loader)


def run_once(urls: list[str], bench, concurrency: int, out: Path) -> tuple[float, float, int]:  # type: ignore[no-untyped-def]
    from crystalbench.inference import InferenceConfig, infer
    from crystalbench.inference.backends.openai_compat import OpenAIChatBackend

    backend = OpenAIChatBackend("test-model", urls, concurrency=concurrency, timeout=60)
    cpu_before = time.process_time()
    summary = infer(bench, backend, out, InferenceConfig(model=backend.model, fsync_interval=1.0))
    cpu = time.process_time() - cpu_before
    assert summary.n_ok == len(bench), summary.errors_by_kind
    return summary.wall_s, cpu, summary.image_encodes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32, help="per replica")
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--image-kb",
        type=int,
        default=None,
        help="send one synthetic image of about this size instead of the sample's",
    )
    args = parser.parse_args()

    servers = [start_server() for _ in range(args.replicas)]
    try:
        urls = [url for _, url in servers]
        with tempfile.TemporaryDirectory() as tmp:
            bench = benchmark_items(args.items, args.image_kb, Path(tmp))
            sizes = sorted({len(bench.image_bytes(item) or b"") for item in bench.items[:40]})
            print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
            print(
                f"{args.items} requests, concurrency {args.concurrency} x {args.replicas} "
                f"replica(s), image bytes {sizes[0]}-{sizes[-1]}"
            )
            warm = benchmark_items(min(200, args.items), args.image_kb, Path(tmp))
            run_once(urls, warm, args.concurrency, Path(tmp) / "warmup.jsonl")
            results = []
            for attempt in range(args.repeat):
                server_before = sum(cpu_seconds(p.pid) for p, _ in servers)
                wall, client_cpu, encodes = run_once(
                    urls, bench, args.concurrency, Path(tmp) / f"run{attempt}.jsonl"
                )
                server_cpu = sum(cpu_seconds(p.pid) for p, _ in servers) - server_before
                rate = args.items / wall
                results.append(rate)
                print(
                    f"run {attempt + 1}: {rate:7.1f} req/s | client CPU "
                    f"{1000 * client_cpu / args.items:.2f} ms/req (alone: "
                    f"{args.items / client_cpu:.0f} req/s) | server CPU "
                    f"{1000 * server_cpu / args.items:.2f} ms/req | encodes {encodes}"
                )
            results.sort()
            print(f"median {results[len(results) // 2]:.1f} req/s, best {results[-1]:.1f} req/s")
            print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
