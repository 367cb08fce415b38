"""Inference deadlines against a real loopback server: a total per-request deadline, and a
cap on ``Retry-After`` waits.

The server (tests/servers/openai_server.py) can drip an answer one byte every half second:
each read then finishes well inside the HTTP client's per-read timeout, so only a total
deadline stops such a request. It notes when it sees the client hang up.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from crystalbench.data import load_benchmark
from crystalbench.inference import InferenceConfig, RetryPolicy, infer, run_inference
from crystalbench.inference.backends.base import BackendError
from crystalbench.inference.backends.openai_compat import OpenAIChatBackend, Replica, ReplicaPool
from servers.openai_server import LoopbackServer

MODEL = "test-model"


@pytest.fixture(scope="module")
def server():
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def state(server):
    server.state.configure({})
    return server.state


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("sample")


def record_of(path, item_id):
    return next(r for r in map(json.loads, path.read_text().splitlines()) if r["id"] == item_id)


def wait_for_entry(state, key, field, within=2.0):
    """The server's log entry for ``key`` once it holds ``field`` (the server notes a hang-up
    at its next byte, up to half a second later)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        entries = [e for e in state.log if e["key"] == key and field in e]
        if entries:
            return entries[0]
        time.sleep(0.05)
    return None


def test_a_dripping_server_cannot_hold_a_request_past_the_timeout(server, state, bench, tmp_path):
    item = bench.items[0]
    state.faults[item.question] = [{"drip": 0.5, "bytes": 20}]  # 10 s for the whole answer
    out = tmp_path / "p.jsonl"
    chat = OpenAIChatBackend(MODEL, [server.base_url], timeout=2.0)
    started = time.monotonic()
    no_preflight = InferenceConfig(model=MODEL, preflight=False)
    summary = infer(
        bench.subset(ids=[item.id]), chat, out, no_preflight, retry=RetryPolicy(max_attempts=1)
    )
    elapsed = time.monotonic() - started
    record = record_of(out, item.id)
    assert record["error_kind"] == "timeout"
    assert "within 2 s" in record["error"]
    assert 2.0 <= record["total_s"] < 2.6
    assert elapsed < 3.0
    assert summary.errors_by_kind == {"timeout": 1}
    # The client hung up: the server saw the connection close, and never sent the answer.
    (entry,) = [e for e in state.log if e["key"] == item.question]
    closed = wait_for_entry(state, item.question, "disconnected")
    assert closed is not None, entry
    assert closed["disconnected"] - closed["t"] < 3.0
    assert "completed" not in closed


def test_a_request_cut_at_the_deadline_is_retried(server, state, bench, tmp_path):
    item = bench.items[1]
    state.faults[item.question] = [{"drip": 0.5, "bytes": 20}]  # then a normal answer
    out = tmp_path / "p.jsonl"
    chat = OpenAIChatBackend(MODEL, [server.base_url], timeout=1.0)
    infer(
        bench.subset(ids=[item.id]),
        chat,
        out,
        InferenceConfig(model=MODEL, preflight=False),
        retry=RetryPolicy(base_delay=0.01, max_delay=0.02),
    )
    record = record_of(out, item.id)
    assert record["error"] is None
    assert record["attempts"] == 2
    assert 1.0 <= record["total_s"] < 2.0
    assert record["answer"] == "A"


def test_a_slow_answer_that_ends_within_the_timeout_is_kept(server, state, bench, tmp_path):
    item = bench.items[2]
    state.faults[item.question] = [{"drip": 0.1, "bytes": 5}]
    out = tmp_path / "p.jsonl"
    chat = OpenAIChatBackend(MODEL, [server.base_url], timeout=2.0)
    infer(bench.subset(ids=[item.id]), chat, out, retry=RetryPolicy(max_attempts=1))
    record = record_of(out, item.id)
    assert record["error"] is None
    assert record["attempts"] == 1
    assert record["latency_s"] >= 0.5
    assert record["parse_status"] == "json"
    assert wait_for_entry(state, item.question, "completed") is not None


def test_retry_after_waits_are_capped_by_the_config(server, state, bench, tmp_path):
    state.configure({"retry_after": "30"})  # each prompt's first request: 429, wait 30 s
    item = bench.items[3]
    config = InferenceConfig(
        model=MODEL,
        benchmark="sample",
        ids=[item.id],
        base_urls=[server.base_url],
        max_retry_after=0.5,
    )
    started = time.monotonic()
    done = run_inference(config, tmp_path / "p.jsonl", benchmark=bench)
    elapsed = time.monotonic() - started
    assert done.summary.n_ok == 1
    first, second = state.log
    assert first["status"] == 429
    assert second["status"] == 200
    assert 0.5 <= second["t"] - first["t"] < 2.0  # neither the item nor the replica waits 30 s
    assert elapsed < 5.0
    assert done.summary.config is not None
    assert done.summary.config.max_retry_after == 0.5


def test_the_replica_pool_caps_a_long_retry_after():
    async def scenario():
        pool = ReplicaPool([Replica(base_url="r0", client=None, limit=2)], max_retry_after=0.2)
        (replica,) = pool.replicas
        replica.in_flight += 1
        await pool.release(
            replica, BackendError("rate_limit", "429", retryable=True, retry_after=3600.0)
        )
        started = time.monotonic()
        await asyncio.wait_for(pool.acquire(), 2.0)
        return time.monotonic() - started

    assert 0.15 <= asyncio.run(scenario()) < 1.0


def test_the_default_retry_after_cap_is_the_documented_one():
    from crystalbench.config.settings import INFER_MAX_RETRY_AFTER

    assert RetryPolicy().delay(1, retry_after=86400.0) == INFER_MAX_RETRY_AFTER == 600.0
    assert InferenceConfig(model="m").retry_policy().max_retry_after == INFER_MAX_RETRY_AFTER
    assert RetryPolicy(max_retry_after=2.0).delay(1, retry_after=5.0) == 2.0
    assert RetryPolicy(max_retry_after=2.0).delay(1, retry_after=1.5) == 1.5
