"""Loopback load test of ``crystal review serve``: annotators labelling pairs at once.

Builds a benchmark folder (``--items`` items with small PNG images) and ``--tasks`` step
pairs, imports them into a fresh SQLite database with ``--quota`` annotators per pair, adds
``--annotators`` users, and starts ``crystal review serve`` in a subprocess on a free
loopback port. Then every simulated annotator, one asyncio task each with its own HTTP
connection and cookies, logs in and labels until the queue has nothing left for them:

    GET  /tasks/<id>          "fetch a task" (the page, rendered; timed)
    (think --think-ms, +-50 %, seeded)
    POST /tasks/<id>/label    "submit a label" (stores it, hands out the next task, answers
                              303 to it; timed)

Afterwards the database is checked: no task holds more active assignments than its quota,
every task has exactly ``--quota`` labels from distinct annotators, and the labels stored are
exactly the submissions the server acknowledged (no label lost, none counted twice).

Prints the latency percentiles of both operations, throughput, the load average before and
after (the machine may be shared), and exits 1 when a check fails or a p95 is over
``--target-ms``. Bounded: ``--deadline`` seconds for the whole run, 60 s per request.

Usage::

    .venv/bin/python benchmarks/bench_review.py                       # 20 x 10,000, quota 2
    .venv/bin/python benchmarks/bench_review.py --tasks 1000 --think-ms 0
    .venv/bin/python benchmarks/bench_review.py --think-ms 1500 --labels-per-annotator 100 --control
    .venv/bin/python benchmarks/bench_review.py --json benchmarks/results/raw/review.json
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

CSRF = re.compile(r'name="csrf_token" value="([^"]*)"')
PASSWORD = "load-test-password"


def build_inputs(root: Path, n_items: int, n_tasks: int) -> tuple[Path, Path]:
    """A benchmark folder of ``n_items`` items and a pair file of ``n_tasks`` pairs."""
    from PIL import Image

    images = root / "bench" / "images"
    images.mkdir(parents=True)
    rows = []
    for i in range(n_items):
        buffer = io.BytesIO()
        Image.new("RGB", (320, 240), (i * 7 % 255, 120, 200)).save(buffer, "PNG")
        (images / f"item-{i}.png").write_bytes(buffer.getvalue())
        rows.append(
            {
                "id": f"item-{i}",
                "source": "plotqa",
                "question": f"What is the value of the tallest bar in chart {i}?",
                "options": [],
                "answer": str(i),
                "reference_steps": [f"Bar {i} is the tallest.", f"Its value is {i}."],
                "image": f"images/item-{i}.png",
            }
        )
    bench = root / "bench" / "benchmark.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = root / "pairs.jsonl"
    with pairs.open("w") as handle:
        for t in range(n_tasks):
            item = t % n_items
            handle.write(
                json.dumps(
                    {
                        "pair_id": f"pair-{t}",
                        "item_id": f"item-{item}",
                        "model": f"model-{t % 4}",
                        "pred_step": f"The bar number {item} looks like the highest one ({t}).",
                        "ref_step": f"Bar {item} is the tallest.",
                        "cosine": (t * 0.0137) % 1.0,
                        "band": "[0.35,0.50)",
                    }
                )
                + "\n"
            )
    return bench.parent, pairs


def prepare(root: Path, args: argparse.Namespace) -> Path:
    """The database with the pairs imported and the users added."""
    from crystalbench.review.auth import add_user
    from crystalbench.review.db import Database
    from crystalbench.review.importing import import_path

    bench, pairs = build_inputs(root, args.items, args.tasks)
    db_path = root / "review.sqlite"
    db = Database(f"sqlite:///{db_path}")
    started = time.perf_counter()
    import_path(db, pairs, benchmark=bench, annotators=args.quota, actor="bench")
    print(f"imported {args.tasks:,} pairs in {time.perf_counter() - started:.1f} s", flush=True)
    for k in range(args.annotators):
        add_user(db, f"annotator{k:02d}", "annotator", PASSWORD, actor="bench")
    db.dispose()
    return db_path


def start_server(db_path: Path) -> tuple[subprocess.Popen[str], str]:
    """``crystal review serve`` on a free loopback port; returns the process and its URL."""
    command = [
        sys.executable,
        "-m",
        "crystalbench.cli.main",
        "review",
        "serve",
        "--db",
        str(db_path),
        "--port",
        "0",
        "--gold-every",
        "0",
    ]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        found = re.search(r"review app on (http://\S+)", line)
        if found:
            import threading

            def pump():
                for line in process.stderr:
                    sys.stderr.write("server: " + line)

            threading.Thread(target=pump, daemon=True).start()
            return process, found.group(1)
    process.kill()
    raise RuntimeError("the review server did not start")


async def log_in(client: Any, name: str) -> str:
    """Log ``name`` in; returns the session's CSRF token."""
    form = await client.get("/login")
    token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
    login = await client.post(
        "/login", data={"name": name, "password": PASSWORD, "csrf_token": token}
    )
    assert login.status_code == 303, login.text
    home = await client.get("/")
    return CSRF.search(home.text).group(1)  # type: ignore[union-attr]


async def annotator(
    name: str,
    client: Any,
    csrf: str,
    args: argparse.Namespace,
    seed: int,
    deadline: float,
    stats: dict[str, Any],
) -> None:
    rng = random.Random(seed)
    response = await client.post("/work/pair", data={"csrf_token": csrf})
    location = response.headers["location"]
    done = 0
    while location.startswith("/tasks/") and time.monotonic() < deadline:
        if args.labels_per_annotator and done >= args.labels_per_annotator:
            stats["capped"] += 1  # stops here; the task handed out stays held
            return
        if args.control:
            started = time.perf_counter()
            await client.get("/healthz")
            stats["health"].append(time.perf_counter() - started)
        started = time.perf_counter()
        page = await client.get(location)
        stats["fetch"].append(time.perf_counter() - started)
        if page.status_code != 200:
            stats["errors"].append(f"GET {location}: {page.status_code}")
            return
        if args.think_ms > 0:
            await asyncio.sleep(args.think_ms / 1000 * rng.uniform(0.5, 1.5))
        label = rng.choice(("match", "no_match", "match", "unsure"))
        started = time.perf_counter()
        response = await client.post(
            f"{location}/label", data={"csrf_token": csrf, "label": label, "duration_ms": "900"}
        )
        stats["submit"].append(time.perf_counter() - started)
        if response.status_code != 303:
            stats["errors"].append(f"POST {location}/label: {response.status_code}")
            return
        stats["acknowledged"].append((int(location.rsplit("/", 1)[1]), name, label))
        done += 1
        location = response.headers["location"]
    stats["finished"] += location.endswith("/done")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {}

    def at(q: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "n": len(ordered),
        "p50_ms": round(at(0.50), 2),
        "p95_ms": round(at(0.95), 2),
        "p99_ms": round(at(0.99), 2),
        "max_ms": round(1000 * ordered[-1], 2),
        "mean_ms": round(1000 * statistics.fmean(ordered), 2),
    }


def check_database(
    db_path: Path, args: argparse.Namespace, acknowledged: list[tuple[int, str, str]]
) -> dict[str, Any]:
    """The invariants: quotas, one label per (task, annotator), nothing lost or extra."""
    from sqlalchemy import select

    from crystalbench.review.db import Database
    from crystalbench.review.models import Annotation, Assignment, Task, User

    db = Database(f"sqlite:///{db_path}")
    with db.read() as session:
        names = dict(session.execute(select(User.id, User.name)).all())
        quotas = dict(session.execute(select(Task.id, Task.quota)).all())
        active = Counter(
            session.execute(
                select(Assignment.task_id).where(Assignment.status.in_(("held", "done")))
            ).scalars()
        )
        stored = [
            (task, names[user], label)
            for task, user, label in session.execute(
                select(Annotation.task_id, Annotation.user_id, Annotation.label)
            ).all()
        ]
    db.dispose()
    per_task = Counter(task for task, _, _ in stored)
    return {
        "tasks": len(quotas),
        "over_quota": sum(1 for task, n in active.items() if n > quotas[task]),
        "labels_stored": len(stored),
        "labels_acknowledged": len(acknowledged),
        "lost": len(Counter(acknowledged) - Counter(stored)),
        "unacknowledged": len(Counter(stored) - Counter(acknowledged)),
        "duplicate_task_annotator": len(stored) - len({(t, n) for t, n, _ in stored}),
        "tasks_short_of_quota": sum(1 for task, q in quotas.items() if per_task[task] < q),
    }


async def run_load(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """Log every annotator in (argon2 is slow on purpose, so logins come first and are not
    timed), then let them all label at once."""
    import httpx

    stats: dict[str, Any] = {
        "fetch": [],
        "submit": [],
        "health": [],
        "errors": [],
        "acknowledged": [],
        "finished": 0,
        "capped": 0,
    }
    names = [f"annotator{k:02d}" for k in range(args.annotators)]
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=url, timeout=60, limits=limits) for _ in names]
    try:
        started = time.perf_counter()
        tokens = await asyncio.gather(*(log_in(c, n) for c, n in zip(clients, names, strict=False)))
        stats["login_s"] = time.perf_counter() - started
        deadline = time.monotonic() + args.deadline
        started = time.perf_counter()
        await asyncio.gather(
            *(
                annotator(name, client, token, args, args.seed + k, deadline, stats)
                for k, (name, client, token) in enumerate(zip(names, clients, tokens, strict=False))
            )
        )
        stats["wall_s"] = time.perf_counter() - started
    finally:
        for client in clients:
            await client.aclose()
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--quota", type=int, default=2, help="annotators per pair")
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument(
        "--think-ms", type=float, default=200.0, help="mean pause between fetch and submit"
    )
    parser.add_argument(
        "--target-ms", type=float, default=50.0, help="p95 target of both operations"
    )
    parser.add_argument(
        "--labels-per-annotator",
        type=int,
        default=0,
        help="stop each annotator after this many labels (0: label until the queue is empty); "
        "with a cap, tasks short of their quota are expected and not a failure",
    )
    parser.add_argument("--deadline", type=float, default=1800.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--control",
        action="store_true",
        help="also time a GET /healthz before each task: the floor this machine sets for "
        "any request at this concurrency",
    )
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-review-") as folder:
        db_path = prepare(Path(folder), args)
        process, url = start_server(db_path)
        try:
            cpu_before = cpu_seconds(process.pid)
            stats = asyncio.run(run_load(url, args))
            server_cpu = cpu_seconds(process.pid) - cpu_before
        finally:
            process.terminate()
            process.wait(timeout=30)
        load_after = os.getloadavg()
        checks = check_database(db_path, args, stats["acknowledged"])
    fetch, submit = percentiles(stats["fetch"]), percentiles(stats["submit"])
    result = {
        "command": "benchmarks/bench_review.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "tasks": args.tasks,
        "annotators": args.annotators,
        "quota": args.quota,
        "think_ms": args.think_ms,
        "fetch": fetch,
        "submit": submit,
        "health_check": percentiles(stats["health"]),
        "wall_s": round(stats["wall_s"], 1),
        "labels_per_s": round(len(stats["submit"]) / stats["wall_s"], 1),
        "server_cpu_s": round(server_cpu, 1),
        "server_cpu_ms_per_label": round(1000 * server_cpu / max(1, len(stats["submit"])), 2),
        "annotators_finished": stats["finished"],
        "annotators_capped": stats["capped"],
        "errors": stats["errors"][:20],
        "checks": checks,
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in load_after],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    failed = [
        name
        for name, bad in (
            ("errors", bool(stats["errors"])),
            ("over quota", checks["over_quota"] > 0),
            ("lost labels", checks["lost"] > 0 or checks["unacknowledged"] > 0),
            ("duplicates", checks["duplicate_task_annotator"] > 0),
            ("unfinished", not args.labels_per_annotator and checks["tasks_short_of_quota"] > 0),
            ("fetch p95", fetch.get("p95_ms", 1e9) > args.target_ms),
            ("submit p95", submit.get("p95_ms", 1e9) > args.target_ms),
        )
        if bad
    ]
    print("FAILED: " + ", ".join(failed) if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
