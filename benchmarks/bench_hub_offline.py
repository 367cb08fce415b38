"""How long a command takes to fail when the model hub cannot be reached.

Points ``HF_ENDPOINT`` (the hub address ``huggingface_hub`` and crystalbench read) at a real
loopback server that misbehaves, with an empty Hugging Face cache and without
``HF_HUB_OFFLINE``, then times each command from spawn to exit:

- ``silent``: a listening socket that accepts connections and never answers (a firewall that
  drops packets, a hung proxy);
- ``refused``: a loopback port nothing listens on (connection refused at once);
- ``offline``: ``HF_HUB_OFFLINE=1`` (no server).

Commands (each a fresh ``crystal`` process, as a user runs it):

- ``encoder``: the README's first scoring command with the default encoder
  (``crystal score -b sample -p ... -o OUT``, encoder ``all-distilroberta-v1``, not cached);
- ``dataset``: ``crystal data stats org/name`` (a hub dataset);

Usage (``--src`` picks the code measured: the checkout's ``src`` by default, or another tree
such as an exported older commit, for before/after)::

    python benchmarks/bench_hub_offline.py                     # every case, this checkout
    python benchmarks/bench_hub_offline.py --src /tmp/base/src --cases encoder:silent
    python benchmarks/bench_hub_offline.py --record benchmarks/results/raw/hub-offline.json

Each command is bounded by ``--timeout`` seconds (default 300); a case that runs out is
recorded as such.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_PREDICTIONS = ROOT / "src/crystalbench/data/sample/predictions/terse-precise.jsonl"
COMMANDS = {
    "encoder": ["score", "-b", "sample", "-p", str(SAMPLE_PREDICTIONS), "-o", "{out}"],
    "dataset": ["data", "stats", "crystalbench-test/no-such-dataset"],
}
SERVERS = ("silent", "refused", "offline")


class SilentServer:
    """Accepts every connection on loopback and never sends a byte."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        for conn in self.held:
            conn.close()
        self.sock.close()


def refused_port() -> int:
    """A loopback port nothing listens on."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def run_case(command: str, server: str, src: Path, timeout: float) -> dict[str, Any]:
    """Spawn one command against one kind of unreachable hub; its time to exit and its error."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
        }
        env.update(
            PYTHONPATH=str(src),
            HF_HOME=str(Path(scratch) / "hf"),
            CRYSTALBENCH_CACHE_DIR=str(Path(scratch) / "cache"),
            NO_COLOR="1",
            COLUMNS="200",
        )
        silent = None
        if server == "silent":
            silent = SilentServer()
            env["HF_ENDPOINT"] = f"http://127.0.0.1:{silent.port}"
        elif server == "refused":
            env["HF_ENDPOINT"] = f"http://127.0.0.1:{refused_port()}"
        else:
            env["HF_HUB_OFFLINE"] = "1"
            env["HF_ENDPOINT"] = f"http://127.0.0.1:{refused_port()}"
        argv = [a.replace("{out}", str(Path(scratch) / "out")) for a in COMMANDS[command]]
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "crystalbench.cli.main", *argv],
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=scratch,
            )
            seconds = time.perf_counter() - start
            code: int | None = done.returncode
            error = next(
                (line for line in done.stderr.splitlines() if line.startswith("error:")),
                done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "",
            )
        except subprocess.TimeoutExpired:
            seconds, code, error = timeout, None, f"still running after {timeout:g} s"
        finally:
            if silent is not None:
                silent.close()
    return {
        "command": command,
        "server": server,
        "argv": ["crystal", *COMMANDS[command]],
        "seconds": round(seconds, 2),
        "exit_code": code,
        "error": error[:400],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the code measured")
    parser.add_argument(
        "--cases",
        nargs="*",
        default=[f"{c}:{s}" for c in COMMANDS for s in SERVERS],
        help="COMMAND:SERVER pairs (encoder|dataset : silent|refused|offline)",
    )
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--record", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    results = []
    for case in args.cases:
        command, _, server = case.partition(":")
        result = run_case(command, server, args.src.resolve(), args.timeout)
        results.append(result)
        print(
            f"{command:8} {server:8} {result['seconds']:7.2f} s  exit {result['exit_code']}  "
            f"{result['error'][:150]}",
            flush=True,
        )
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "src": str(args.src),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
            "results": results,
        }
        args.record.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
