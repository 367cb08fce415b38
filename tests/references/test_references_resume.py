"""``kill -9`` in the middle of a build, then the same command again: nothing lost or repeated.

The build runs as ``crystal references build`` in a subprocess against a loopback server in
this process (slowed down so the kill lands during generation); a second, uninterrupted
build of the same items (in this process) is the reference the resumed one must equal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml
from references_helpers import config_data
from scripted_models import GENERATORS, ScriptedModels

from crystalbench.references import build_references, load_references_config

SRC = Path(__file__).resolve().parents[2] / "src"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def command(config: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "crystalbench.cli.main", "references", "build",
            "--config", str(config), "--out", str(out), "--quiet"]  # fmt: skip


def environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env["CRYSTALBENCH_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def test_kill_minus_nine_then_resume_loses_and_repeats_nothing(
    server, item_set, sample_items, tmp_path
):
    server.state.script = ScriptedModels(sample_items)
    server.state.delay = 0.05
    data = config_data(server, item_set, limit=16, max_rounds=1)
    for endpoint in [*data["generators"], data["validator"]]:
        endpoint["concurrency"] = 1
    config = tmp_path / "refs.yaml"
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "killed"
    env = environment(tmp_path)

    process = subprocess.Popen(command(config, out), env=env)
    candidates = out / "candidates.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if candidates.is_file() and len(candidates.read_text().splitlines()) >= 20:
            break
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    time.sleep(0.5)  # requests the server was still answering at the kill are logged by now
    written = len(rows(candidates))
    assert 20 <= written < 16 * 4, "the kill should land during generation"
    sent_before = sum(1 for e in server.state.log if e["model"] in GENERATORS)

    finished = subprocess.run(command(config, out), env=env, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    records = rows(candidates)
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == 16 * 4
    sent_after = sum(1 for e in server.state.log if e["model"] in GENERATORS)
    # Requests journaled before the kill are never asked again; at most the ones in
    # flight at the kill (one per generator) are asked twice.
    assert sent_after - sent_before == 16 * 4 - written
    assert sent_after <= 16 * 4 + len(GENERATORS)

    clean = tmp_path / "clean"
    server.state.delay = 0.0
    build_references(load_references_config(config), clean, on_event=None)
    resumed = {r["id"]: r for r in rows(out / "benchmark.jsonl")}
    reference = {r["id"]: r for r in rows(clean / "benchmark.jsonl")}
    assert list(resumed) == list(reference)
    assert len(resumed) == 16
    for item_id, record in reference.items():
        assert resumed[item_id]["reference_steps"] == record["reference_steps"]
        assert resumed[item_id]["metadata"] == record["metadata"]
