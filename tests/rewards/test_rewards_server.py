"""The reward server on loopback: same numbers as in process, concurrent clients, hard limits."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pytest

from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.rewards import RemoteRewardScorer, RewardScorer, trl_reward_funcs
from crystalbench.rewards.items import ground_truth_json
from crystalbench.rewards.server import RewardServer, ServerLimits
from crystalbench.types import BenchmarkItem


def dumps(steps, answer):
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


@pytest.fixture(scope="module")
def items() -> list[BenchmarkItem]:
    return list(load_benchmark("sample").items)


def batch_for(items, variant):
    completions, rows = [], []
    for item in items:
        refs = item.reference_steps
        completions += [
            dumps(refs[variant % 2 :: 2], item.answer),
            dumps([*refs[:2], f"Variant {variant} remark."], "Z"),
            f"Just prose, variant {variant}.",
        ]
        rows += [item] * 3
    return completions, rows


def post(url: str, path: str, body: bytes, headers: dict[str, str] | None = None):
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request(
            "POST", path, body=body, headers=headers or {"Content-Type": "application/json"}
        )
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


# --------------------------------------------------------------------------- in process


@pytest.fixture
def server():
    limits = ServerLimits(max_body_bytes=64 * 1024, max_rows=200, max_wait_ms=50)
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=limits) as running:
        yield running


def test_health_reports_config_and_limits(server):
    client = RemoteRewardScorer(server.url)
    health = client.health()
    assert health["status"] == "ok"
    assert health["config"]["encoder_identity"] == HashEncoder().identity
    assert health["config"]["tau"] == 0.35
    assert health["limits"]["max_rows"] == 200


def test_remote_equals_in_process(server, items):
    completions, rows = batch_for(items, 0)
    remote = RemoteRewardScorer(server.url, max_rows_per_request=50).signals(completions, rows)
    local = RewardScorer(HashEncoder()).signals(completions, rows)
    assert remote == local
    # Through the TRL adapter too.
    funcs = trl_reward_funcs(RemoteRewardScorer(server.url), ["cpr_answer", "cpr_reasoning"])
    columns = {
        name: [getattr(r, name) for r in rows]
        for name in ("answer", "reference_steps", "options", "question")
    }
    answer_part = funcs[0](prompts=["p"] * len(rows), completions=completions, **columns)
    step_part = funcs[1](prompts=["p"] * len(rows), completions=completions, **columns)
    local_cpr = RewardScorer(HashEncoder()).rewards(completions, rows, "cpr")
    for a, s, c in zip(answer_part, step_part, local_cpr, strict=True):
        assert a is not None
        assert s is not None
        assert c is not None
        assert a + s == pytest.approx(c, abs=1e-12)


def test_verl_and_easyr1_through_the_server(server, items, monkeypatch):
    from crystalbench.rewards import easyr1, shared_source, verl

    chosen = items[:5]
    solutions = [dumps(i.reference_steps[::2], i.answer) for i in chosen]
    truths = [ground_truth_json(i) for i in chosen]
    local = verl.compute_score_batch(["c"] * 5, solutions, truths, None, encoder="hash")
    remote = verl.compute_score_batch(["c"] * 5, solutions, truths, None, server_url=server.url)
    assert remote == local
    monkeypatch.setenv("CRYSTAL_REWARD_SERVER", server.url)
    assert isinstance(shared_source(), RemoteRewardScorer)
    inputs = [
        {"response": s, "response_length": 1, "ground_truth": t}
        for s, t in zip(solutions, truths, strict=True)
    ]
    assert [r["overall"] for r in easyr1.compute_score(inputs)] == [r["score"] for r in local]


def test_concurrent_requests_are_coalesced(items):
    limits = ServerLimits(max_wait_ms=300)
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=limits) as server:
        _check_coalescing(server, items)


def _check_coalescing(server, items):
    batches = [batch_for(items[i * 5 : i * 5 + 5], i) for i in range(8)]
    expected = [RewardScorer(HashEncoder()).signals(c, r) for c, r in batches]
    clients = [RemoteRewardScorer(server.url) for _ in batches]
    for client in clients:
        client.health()
    barrier = threading.Barrier(len(batches))

    def send(index: int):
        barrier.wait()
        return clients[index].signals(*batches[index])

    with ThreadPoolExecutor(len(batches)) as pool:
        results = list(pool.map(send, range(len(batches))))
    assert results == expected
    assert server.batches < len(batches)  # some requests shared an encoder pass


def test_limits_and_bad_requests(server, items):
    item = ground_truth_json(items[0])
    ok_row = {"completions": ["x"], "items": [json.loads(item)]}
    assert post(server.url, "/v1/signals", json.dumps(ok_row).encode())[0] == 200
    too_big = json.dumps({"completions": ["y" * 70_000], "items": [None]}).encode()
    status, body = post(server.url, "/v1/signals", too_big)
    assert status == 413
    assert "at most 65536" in body["error"]
    too_many = json.dumps({"completions": ["x"] * 201, "items": [None] * 201}).encode()
    assert post(server.url, "/v1/signals", too_many)[0] == 413
    assert post(server.url, "/v1/nope", b"{}")[0] == 404
    assert post(server.url, "/v1/signals", b"not json")[0] == 400
    mismatch = json.dumps({"completions": ["x", "y"], "items": [None]}).encode()
    assert post(server.url, "/v1/signals", mismatch)[0] == 400
    bad_item = json.dumps({"completions": ["x"], "items": [{"answer": "B", "options": 3}]})
    status, body = post(server.url, "/v1/signals", bad_item.encode())
    assert status == 400
    assert "options" in body["error"]
    bad_gold = json.dumps(
        {"completions": [dumps(["a"], "1")], "items": [{"answer": "B", "answer_type": "numeric"}]}
    )
    status, body = post(server.url, "/v1/signals", bad_gold.encode())
    assert status == 400
    assert "not a number" in body["error"]
    # The server is still healthy afterwards.
    assert post(server.url, "/v1/signals", json.dumps(ok_row).encode())[0] == 200


def test_rewards_route_totals_with_server_weights(server, items):
    item = items[0]
    body = {
        "completions": [dumps(item.reference_steps, item.answer), "x"],
        "items": [json.loads(ground_truth_json(item)), None],
        "kind": "cpr",
    }
    status, reply = post(server.url, "/v1/rewards", json.dumps(body).encode())
    assert status == 200
    assert reply["rewards"] == [1.0, None]
    assert reply["breakdowns"][0]["components"] == {"answer": 0.65, "reasoning": 0.35}


def test_client_splits_and_caps_to_fit_the_server(server, items):
    item = items[0]
    huge = dumps(item.reference_steps, item.answer) + " " * 5_000_000  # over max_chars anyway
    normal = dumps(item.reference_steps, item.answer)
    client = RemoteRewardScorer(server.url)
    signals = client.signals([huge, normal] * 30, [item] * 60)
    assert [s.format_error for s in signals[:2]] == ["too_long", None]
    giant_item = item.model_copy(update={"reference_steps": ["r" * 70_000]})
    with pytest.raises(InputError, match="body limit"):
        client.signals(["x"], [giant_item])


def test_client_reports_an_unreachable_server():
    from crystalbench.rewards import RewardServerError

    client = RemoteRewardScorer("http://127.0.0.1:9", retries=1, backoff=0.01, timeout=2)
    with pytest.raises(RewardServerError, match="unreachable"):
        client.health()


# --------------------------------------------------------------------------- the CLI


@pytest.fixture(scope="module")
def cli_server():
    """`crystal serve-rewards` in a subprocess on a free loopback port."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "crystalbench.cli.main",
            "serve-rewards",
            "--encoder",
            "hash",
            "--port",
            "0",
            "--no-cache",
            "--max-body-mb",
            "0.0625",
            "--max-rows",
            "300",
            "--max-wait-ms",
            "20",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            line = process.stdout.readline()  # type: ignore[union-attr]
            if "listening on" in line or process.poll() is not None:
                break
        assert "listening on" in line, process.stderr.read()  # type: ignore[union-attr]
        yield line.split("listening on ")[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_cli_server_serves_two_concurrent_clients(cli_server, items):
    first = batch_for(items[:20], 1)
    second = batch_for(items[20:], 2)
    expected = [RewardScorer(HashEncoder()).signals(*b) for b in (first, second)]

    def run(batch):
        return RemoteRewardScorer(cli_server, max_rows_per_request=40).signals(*batch)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run, [first, second]))
    assert results == expected


def test_cli_server_rejects_oversize_requests(cli_server):
    big = json.dumps({"completions": ["z" * 80_000], "items": [None]}).encode()
    assert post(cli_server, "/v1/signals", big)[0] == 413
    rows = json.dumps({"completions": ["x"] * 301, "items": [None] * 301}).encode()
    assert post(cli_server, "/v1/signals", rows)[0] == 413
    status, _ = post(cli_server, "/v1/signals", b"", headers={"Transfer-Encoding": "chunked"})
    assert status == 411
