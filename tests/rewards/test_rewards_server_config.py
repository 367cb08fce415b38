"""``crystal serve-rewards`` from one :class:`RewardServerConfig`: a file, the documented
environment variables (the token, the cache folder) and flags, merged by the one loader;
the server a user starts that way enforces what the file says."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from crystalbench.config.loader import Given, build_config
from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.rewards import RemoteRewardScorer, RewardScorer
from crystalbench.rewards.server_config import RewardServerConfig, build_reward_server
from crystalbench.rewards.types import FormatRules

SRC = Path(__file__).resolve().parents[2] / "src"

CONFIG = """\
encoder: hash
use_cache: false
threshold: 0.5
format_rules: {allow_think: true}
limits:
  max_rows: 2
"""


def test_a_file_the_environment_and_flags_make_one_config(tmp_path):
    path = tmp_path / "rewards.yaml"
    path.write_text(CONFIG)
    environ = {"CRYSTALBENCH_REWARD_TOKEN": "s3cret", "CRYSTALBENCH_CACHE_DIR": "/tmp/c"}
    config = build_config(
        RewardServerConfig,
        files=[(path, "")],
        environ=environ,
        flags={"threshold": Given(0.4, "--tau")},
    )
    assert (config.token, config.cache_dir, config.threshold) == ("s3cret", "/tmp/c", 0.4)
    assert config.limits.max_rows == 2
    assert config.format_rules == FormatRules(allow_think=True)
    assert "s3cret" not in repr(config)  # a token never shows in a log line
    path.write_text(CONFIG + "  max_row: 3\n")
    with pytest.raises(InputError) as caught:
        build_config(RewardServerConfig, files=[(path, "")], environ={})
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), 7, "limits.max_row")
    assert "did you mean 'max_rows'" in error.message


def test_the_library_server_scores_as_the_scorer_does():
    items = list(load_benchmark("sample").items)[:2]
    completions = [json.dumps({"reasoning_steps": item.reference_steps, "answer": item.answer})
                   for item in items]  # fmt: skip
    config = RewardServerConfig(encoder="hash", use_cache=False, port=0)
    with build_reward_server(config) as server:
        got = RemoteRewardScorer(server.url).signals(completions, items)
    assert got == RewardScorer(HashEncoder()).signals(completions, items)


def test_a_port_in_use_is_an_input_error():
    with build_reward_server(RewardServerConfig(encoder="hash", use_cache=False, port=0)) as first:
        port = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(InputError, match=f"cannot listen on 127.0.0.1:{port}"):
            build_reward_server(RewardServerConfig(encoder="hash", use_cache=False, port=port))


def _status(url: str, path: str, token: str | None = None, body: object = None) -> int:
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if body is None:
            conn.request("GET", path, headers=headers)
        else:
            headers["Content-Type"] = "application/json"
            conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_the_command_serves_what_its_config_file_and_environment_say(tmp_path):
    """``--config`` sets tau and the row limit, ``$CRYSTALBENCH_REWARD_TOKEN`` the token."""
    path = tmp_path / "rewards.toml"
    path.write_text(
        'encoder = "hash"\nuse_cache = false\nthreshold = 0.5\n[limits]\nmax_rows = 2\n'
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env["CRYSTALBENCH_REWARD_TOKEN"] = "s3cret"
    process = subprocess.Popen(
        [sys.executable, "-m", "crystalbench.cli.main", "serve-rewards", "--config", str(path),
         "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        line = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()  # type: ignore[union-attr]
            if "listening on" in line or process.poll() is not None:
                break
        assert "listening on" in line, process.stderr.read()  # type: ignore[union-attr]
        assert "tau 0.5, bearer token required" in line
        url = line.split("listening on ")[1].split()[0]
        assert _status(url, "/v1/health") == 401
        assert _status(url, "/v1/health", token="s3cret") == 200
        rows = {"completions": ["{}"] * 3, "items": [None] * 3}
        assert _status(url, "/v1/signals", "s3cret", rows) == 413  # max_rows: 2
        rows = {"completions": ["{}"] * 2, "items": [None] * 2}
        assert _status(url, "/v1/signals", "s3cret", rows) == 200
    finally:
        process.terminate()
        process.communicate(timeout=30)
