"""Loopback load test of ``crystal serve-rewards``: no resets, no wrong numbers.

Starts ``crystal serve-rewards`` in a subprocess on a free loopback port (or, with
``--in-process``, a :class:`~crystalbench.rewards.server.RewardServer` in this process),
then sends ``--requests`` POST /v1/signals requests from ``--connections`` client threads at
once. Each request carries ``--rows`` completions of the bundled sample's items (right
chains, partial chains, wrong answers, prose, over-long text), every request different.
Before the load, every request's signals are computed in process with the same encoder;
each reply must equal them (exact for the hash encoder; floats within ``--tolerance`` for a
real encoder, whose coalesced batches pad differently).

One unmeasured request warms the server first (lazy imports). Prints throughput (requests and
rows per second, and the in-process rate on the same rows for scale), latency percentiles,
and the counts that
must be zero: connection errors (resets, refusals, timeouts), non-200 replies, mismatching
replies. Exits 1 when any of them is not zero. Bounded: a fixed number of requests, each
with a 60 s timeout, and ``--deadline`` seconds for the whole run.

Usage::

    .venv/bin/python benchmarks/bench_reward_server.py                      # 2,000 x 50, hash
    .venv/bin/python benchmarks/bench_reward_server.py --fresh-connections  # one per request
    .venv/bin/python benchmarks/bench_reward_server.py --encoder minilm-offline --requests 400
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlparse

ITEM_FIELDS = {"id", "source", "question", "options", "answer", "answer_type", "reference_steps"}


def build_requests(n_requests: int, rows: int, seed: int) -> list[tuple[list[str], list[Any]]]:
    """``n_requests`` distinct batches of ``rows`` (completion, item) pairs."""
    from crystalbench.data import load_benchmark

    items = list(load_benchmark("sample").items)
    rng = random.Random(seed)
    out = []
    for r in range(n_requests):
        completions, chosen = [], []
        for _ in range(rows):
            item = rng.choice(items)
            refs = list(item.reference_steps)
            style = rng.randrange(6)
            if style == 0:  # the reference chain, right answer
                text = json.dumps({"reasoning_steps": refs, "answer": item.answer})
            elif style == 1:  # every other step, right answer
                text = json.dumps({"reasoning_steps": refs[r % 2 :: 2], "answer": item.answer})
            elif style == 2:  # a partial chain with a remark, wrong answer
                steps = [*refs[: rng.randint(1, max(1, len(refs)))], f"Remark {r}."]
                text = json.dumps({"reasoning_steps": steps, "answer": "Z"})
            elif style == 3:  # shuffled steps
                steps = refs[:]
                rng.shuffle(steps)
                text = json.dumps({"reasoning_steps": steps, "answer": item.answer})
            elif style == 4:  # prose, fails the format check
                text = f"I think the answer is {item.answer} (request {r})."
            else:  # over max_chars
                text = json.dumps({"reasoning_steps": refs, "answer": item.answer}) + " " * 20_000
            completions.append(text)
            chosen.append(item)
        out.append((completions, chosen))
    return out


def expected_signals(
    encoder: str, batches: list[tuple[list[str], list[Any]]]
) -> tuple[list[list[dict]], float]:
    """Every batch's signals in process, and the warm in-process rate (rows per second of a
    second pass over up to 200 batches with a fresh scorer, so reference embeddings are not
    cached but imports and models are warm)."""
    from crystalbench.rewards import RewardScorer, load_reward_encoder

    model = load_reward_encoder(encoder, device="cpu")
    scorer = RewardScorer(model)
    expected = [[s.model_dump(mode="json") for s in scorer.signals(c, i)] for c, i in batches]
    sample = batches[:200]
    fresh = RewardScorer(model)
    started = time.perf_counter()
    for completions, items in sample:
        fresh.signals(completions, items)
    rate = sum(len(c) for c, _ in sample) / (time.perf_counter() - started)
    return expected, rate


def same(got: list[dict], want: list[dict], tolerance: float) -> bool:
    if len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        if a.keys() != b.keys():
            return False
        for key, value in a.items():
            other = b[key]
            if isinstance(value, float) and isinstance(other, float):
                if not math.isclose(value, other, rel_tol=0.0, abs_tol=tolerance):
                    return False
            elif value != other:
                return False
    return True


def start_cli_server(encoder: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "crystalbench.cli.main",
            "serve-rewards",
            "--encoder",
            encoder,
            "--port",
            "0",
            "--no-cache",
            "--device",
            "cpu",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = process.stdout.readline()  # type: ignore[union-attr]
        if "listening on" in line:
            return process, line.split("listening on ")[1].split()[0]
        if process.poll() is not None:
            break
    process.kill()
    raise SystemExit(f"the server did not start: {process.stderr.read()}")  # type: ignore[union-attr]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rows", type=int, default=8, help="completions per request")
    parser.add_argument("--encoder", default="hash", help="hash or minilm-offline")
    parser.add_argument("--tolerance", type=float, default=None)
    parser.add_argument(
        "--fresh-connections",
        action="store_true",
        help="open a new connection for every request (as RemoteRewardScorer)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="serve from this process instead of a `crystal serve-rewards` child",
    )
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds for the load")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tolerance = (
        args.tolerance if args.tolerance is not None else (0.0 if args.encoder == "hash" else 1e-6)
    )

    batches = build_requests(args.requests, args.rows, args.seed)
    warm_completions, warm_items = build_requests(1, 400, 1)[0]
    warm_rows = list(
        {i.id: (c, i) for c, i in zip(warm_completions, warm_items, strict=True)}.values()
    )
    started = time.perf_counter()
    expected, in_process_rate = expected_signals(args.encoder, batches)
    print(f"expected signals computed in process: {time.perf_counter() - started:.1f} s")
    bodies = [
        json.dumps(
            {
                "completions": completions,
                "items": [i.model_dump(include=ITEM_FIELDS) for i in items],
            }
        ).encode()
        for completions, items in batches
    ]

    process = None
    server = None
    if args.in_process:
        from crystalbench.rewards import RewardScorer, load_reward_encoder
        from crystalbench.rewards.server import RewardServer

        server = RewardServer(RewardScorer(load_reward_encoder(args.encoder, device="cpu")), port=0)
        server.start()
        server.wait_ready()
        url = server.url
    else:
        process, url = start_cli_server(args.encoder)
    parsed = urlparse(url)
    host, port = parsed.hostname, parsed.port
    assert host is not None
    assert port is not None

    # Warm-up, not counted: one row per item of the sample, so that the server's lazy
    # imports (sympy, math-verify) load and its per-process caches of gold answers fill, as
    # in the in-process baseline and in a training run, where the same items come back.
    warm_up = json.dumps(
        {
            "completions": [c for c, _ in warm_rows],
            "items": [i.model_dump(include=ITEM_FIELDS) for _, i in warm_rows],
        }
    ).encode()
    warm = http.client.HTTPConnection(host, port, timeout=300)
    warm.request("POST", "/v1/signals", body=warm_up, headers={"Content-Type": "application/json"})
    assert warm.getresponse().status == 200
    warm.close()

    lock = threading.Lock()
    latencies: list[float] = []
    errors: dict[str, int] = {}
    statuses: dict[int, int] = {}
    wrong = 0
    next_index = 0
    stop_at = time.monotonic() + args.deadline

    def take() -> int | None:
        nonlocal next_index
        with lock:
            if next_index >= len(bodies) or time.monotonic() > stop_at:
                return None
            next_index += 1
            return next_index - 1

    def client() -> None:
        nonlocal wrong
        conn: http.client.HTTPConnection | None = None
        while (index := take()) is not None:
            if conn is None or args.fresh_connections:
                if conn is not None:
                    conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=60)
            begin = time.perf_counter()
            try:
                conn.request(
                    "POST",
                    "/v1/signals",
                    body=bodies[index],
                    headers={"Content-Type": "application/json"},
                )
                response = conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                conn.close()
                conn = None
                continue
            elapsed = time.perf_counter() - begin
            ok = response.status == 200 and same(
                json.loads(raw)["signals"], expected[index], tolerance
            )
            with lock:
                latencies.append(elapsed)
                statuses[response.status] = statuses.get(response.status, 0) + 1
                wrong += response.status == 200 and not ok
            if response.getheader("connection", "").lower() == "close":
                conn.close()
                conn = None
        if conn is not None:
            conn.close()

    barrier_start = time.perf_counter()
    with ThreadPoolExecutor(args.connections) as pool:
        for future in [pool.submit(client) for _ in range(args.connections)]:
            future.result()
    wall = time.perf_counter() - barrier_start

    batches_run = None
    if server is not None:
        batches_run = server.batches
        server.close()
    if process is not None:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
        traceback_in_log = "Traceback" in stderr
        log_lines = [line for line in stderr.splitlines() if line.strip()]
    else:
        traceback_in_log = False
        log_lines = []

    done = sum(statuses.values())
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else [0.0] * 99
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, encoder {args.encoder}, "
        f"{'in-process server' if args.in_process else 'crystal serve-rewards subprocess'}"
    )
    mode = "fresh connections per request" if args.fresh_connections else "keep-alive connections"
    print(f"requests {done}/{len(bodies)} over {args.connections} {mode}, {args.rows} rows each")
    print(f"wall {wall:.2f} s: {done / wall:.1f} requests/s, {done * args.rows / wall:.0f} rows/s")
    print(
        "in-process scoring, one request at a time (no coalescing), warm: "
        f"{in_process_rate:.0f} rows/s"
    )
    print(
        f"latency ms: p50 {1000 * quantiles[49]:.1f}, p90 {1000 * quantiles[89]:.1f}, "
        f"p99 {1000 * quantiles[98]:.1f}, max {1000 * max(latencies or [0.0]):.1f}"
    )
    if batches_run is not None:
        print(f"encoder passes (coalesced batches): {batches_run}")
    print(f"statuses: {dict(sorted(statuses.items()))}")
    print(f"connection errors (resets, refusals, timeouts): {sum(errors.values())} {errors or ''}")
    print(f"wrong replies (differ from the in-process reward): {wrong}")
    print(f"traceback in the server's log: {traceback_in_log}; its log lines: {len(log_lines)}")
    for line in log_lines[:5]:
        print(f"  | {line}")
    failed = (
        bool(errors) or wrong or done != len(bodies) or set(statuses) != {200} or traceback_in_log
    )
    print("FAIL" if failed else "OK: no resets, no wrong numbers")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
