"""A normal request's latency while silent uploads hold connections to the reward server.

Starts a :class:`~crystalbench.rewards.server.RewardServer` (hash encoder, the shipped
limits) on loopback, times ``--requests`` normal POST /v1/signals requests alone, then opens
``--silent`` connections that each send a POST's headers announcing ``--announce`` bytes and
nothing more, and times the same requests again (each bounded by ``--timeout`` seconds).

Usage (``--src`` picks the code measured, for before/after)::

    python benchmarks/bench_slow_uploads.py
    python benchmarks/bench_slow_uploads.py --src /tmp/base/src --timeout 90
    python benchmarks/bench_slow_uploads.py --record benchmarks/results/raw/slow-uploads.json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--silent", type=int, default=100)
    parser.add_argument("--announce", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--record", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    from crystalbench.data import load_benchmark
    from crystalbench.encoders import HashEncoder
    from crystalbench.rewards import RewardScorer
    from crystalbench.rewards.items import ground_truth_json
    from crystalbench.rewards.server import RewardServer, ServerLimits

    item = load_benchmark("sample").items[0]
    completion = json.dumps({"reasoning_steps": item.reference_steps, "answer": item.answer})
    body = json.dumps(
        {"completions": [completion], "items": [json.loads(ground_truth_json(item))]}
    ).encode()

    def timed(port: int) -> float | str:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=args.timeout)
        started = time.perf_counter()
        try:
            conn.request("POST", "/v1/signals", body=body)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                return f"HTTP {response.status}"
            return round((time.perf_counter() - started) * 1000, 1)
        except OSError as exc:
            return f"{type(exc).__name__} after {time.perf_counter() - started:.1f} s"
        finally:
            conn.close()

    record: dict[str, Any] = {"src": str(args.src), "python": platform.python_version()}
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=ServerLimits()) as server:
        port = int(server.url.rsplit(":", 1)[1])
        timed(port)  # warm-up
        record["alone_ms"] = [timed(port) for _ in range(args.requests)]
        head = (
            f"POST /v1/signals HTTP/1.1\r\nHost: x\r\nContent-Length: {args.announce}\r\n\r\n"
        ).encode()
        silent = []
        for _ in range(args.silent):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(head)
            silent.append(sock)
        time.sleep(0.5)
        record["with_silent_ms"] = [timed(port) for _ in range(args.requests)]
        for sock in silent:
            sock.close()
    record["load_average"] = os.getloadavg()
    print(json.dumps(record))
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
