"""Reference builds against an instant loopback server: client overhead per generation
request (local engine) and the local Ray engine's overhead against the plain one.

The server is ``tests/servers/openai_server.py --no-decode`` in its own process (FastAPI +
uvicorn, answers at once with a two-step CRYSTAL JSON chain, images not decoded). The item
set is the bundled sample's 40 items repeated (new ids, same images). Four generators, one
round, no validator (the server's answers are not verdicts), the hash encoder (the encoder
is measured by ``bench_consensus.py``), no embedding cache.

- ``client CPU / request``: this process's CPU time (``time.process_time``) spent inside the
  engine's generation passes divided by the requests, i.e. building the prompt and body,
  the HTTP client, parsing and classifying the output and journaling the record; the whole
  build's CPU per request (consensus, outputs, report included) is printed beside it.
- ``--engines local,ray``: wall time of the same build with each engine; the Ray engine
  starts a local instance (``num_cpus=2``) once, outside the timed builds. Each engine
  first runs one untimed warm-up build (imports, TLS contexts, first actor start).

::

    python benchmarks/bench_references_ray.py --items 400 --engines local,ray
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "servers" / "openai_server.py"
GENERATORS = ["gen-a", "gen-b", "gen-c", "gen-d"]


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


def write_items(folder: Path, n_items: int) -> Path:
    from crystalbench.data import load_benchmark

    sample = load_benchmark("sample").items
    (folder / "images").mkdir(parents=True)
    for item in sample:
        shutil.copyfile(item.image, folder / "images" / Path(item.image).name)
    with (folder / "items.jsonl").open("w") as handle:
        for n in range(n_items):
            item = sample[n % len(sample)]
            record = item.model_copy(
                update={
                    "id": f"{item.id}-{n}",
                    "question": f"{item.question} (copy {n})",
                    "reference_steps": [],
                    "image": f"images/{Path(item.image).name}",
                }
            )
            handle.write(record.model_dump_json() + "\n")
    return folder


class TimedEngine:
    """Wraps an engine and sums the CPU and wall time of its passes."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.cpu = 0.0
        self.wall = 0.0
        self.requests = 0

    def run(self, jobs, images, on_result) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        self.inner.run(jobs, images, on_result)
        self.cpu += time.process_time() - cpu
        self.wall += time.perf_counter() - wall
        self.requests += len(jobs)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def close(self) -> None:
        self.inner.close()


def one_build(engine_name: str, url: str, items: Path, out: Path, concurrency: int) -> dict:
    from crystalbench.references import build_references, load_references_config
    from crystalbench.references.engine import LocalEngine

    config = load_references_config(
        overrides={
            "items": str(items),
            "generators": [
                {"name": g, "model": "test-model", "base_urls": [url], "concurrency": concurrency}
                for g in GENERATORS
            ],
            "validate": False,
            "encoder": "hash",
            "use_cache": False,
            "max_rounds": 1,
            "engine": engine_name,
            "ray": {"batch_size": 32, "concurrency": 2},
        }
    )
    if engine_name == "ray":
        from crystalbench.references.ray_engine import RayEngine

        inner = RayEngine(config)
    else:
        inner = LocalEngine(config)
    engine = TimedEngine(inner)
    cpu, wall = time.process_time(), time.perf_counter()
    result = build_references(config, out, engine=engine)
    total_cpu, total_wall = time.process_time() - cpu, time.perf_counter() - wall
    engine.close()
    return {
        "engine": engine_name,
        "items": result.summary["n_items"],
        "accepted": result.summary["n_accepted"],
        "requests": engine.requests,
        "generation_wall_s": round(engine.wall, 3),
        "generation_cpu_ms_per_request": round(1000 * engine.cpu / max(engine.requests, 1), 3),
        "build_wall_s": round(total_wall, 3),
        "build_cpu_ms_per_request": round(1000 * total_cpu / max(engine.requests, 1), 3),
        "requests_per_s": round(engine.requests / engine.wall, 1) if engine.wall else None,
        "load_average": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--engines", default="local,ray")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    process, url = start_server()
    results = []
    started_ray = False
    try:
        with tempfile.TemporaryDirectory() as tmp:
            items = write_items(Path(tmp) / "items", args.items)
            for name in args.engines.split(","):
                if name == "ray" and not started_ray:
                    import ray

                    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
                    started_ray = True
                # warm-up build (imports, TLS contexts, Ray actors' first start): not recorded
                one_build(name, url, items, Path(tmp) / f"{name}-warm", args.concurrency)
                for repeat in range(args.repeats):
                    out = Path(tmp) / f"{name}-{repeat}"
                    row = one_build(name, url, items, out, args.concurrency)
                    results.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        process.kill()
        if started_ray:
            import ray

            ray.shutdown()
    raw = ROOT / "benchmarks" / "results" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "references_ray.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
