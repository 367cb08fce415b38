"""Clients that announce a body and send it slowly, or never, on a real loopback reward server.

Before: a request took one of the 64 scoring slots before its body was read, so 100
connections announcing a 1 MB body and sending nothing held every slot for the 60 s body
timeout, and a normal request waited past 10 s. Now a body is read before a slot is taken,
must keep arriving at the documented minimum rate (``SERVING_MIN_BODY_BYTES_PER_S`` after
``SERVING_BODY_GRACE_S``), and the bytes being read are bounded by a budget, not by slots.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from urllib.parse import urlparse

import pytest

from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.rewards import RewardScorer
from crystalbench.rewards.items import ground_truth_json
from crystalbench.rewards.server import RewardServer, ServerLimits

pytest.importorskip("uvicorn")


def _address(url: str) -> tuple[str, int]:
    parsed = urlparse(url)
    assert parsed.hostname is not None
    assert parsed.port is not None
    return parsed.hostname, parsed.port


def _body() -> bytes:
    item = load_benchmark("sample").items[0]
    completion = json.dumps({"reasoning_steps": item.reference_steps, "answer": item.answer})
    return json.dumps(
        {"completions": [completion], "items": [json.loads(ground_truth_json(item))]}
    ).encode()


def _silent_uploads(url: str, count: int, size: int) -> list[socket.socket]:
    """``count`` connections that send a POST's headers announcing ``size`` bytes, then nothing."""
    head = (
        f"POST /v1/signals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    ).encode()
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(_address(url), timeout=30)
        sock.sendall(head)
        sockets.append(sock)
    return sockets


def _timed_post(url: str, body: bytes, timeout: float) -> tuple[int, float, dict]:
    conn = http.client.HTTPConnection(*_address(url), timeout=timeout)
    started = time.monotonic()
    try:
        conn.request("POST", "/v1/signals", body=body)
        response = conn.getresponse()
        payload = json.loads(response.read())
        return response.status, time.monotonic() - started, payload
    finally:
        conn.close()


def test_a_hundred_silent_uploads_do_not_delay_a_normal_request():
    """The issue's case with the shipped limits: 100 x 1 MB announced, nothing sent."""
    body = _body()
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=ServerLimits()) as server:
        status, _, _ = _timed_post(server.url, body, timeout=30)  # warm up (lazy imports)
        assert status == 200
        silent = _silent_uploads(server.url, 100, 1_000_000)
        try:
            time.sleep(0.5)  # every silent request is inside the server, waiting for its body
            latencies = []
            for _ in range(3):
                status, seconds, payload = _timed_post(server.url, body, timeout=8)
                assert status == 200, payload
                latencies.append(seconds)
        finally:
            for sock in silent:
                sock.close()
    # Before, the request waited for a slot until a silent one timed out (60 s).
    assert max(latencies) < 2.0, latencies


def test_silent_uploads_are_refused_once_their_grace_is_over():
    limits = ServerLimits(body_grace_s=0.5, min_body_bytes_per_s=16 * 1024)
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=limits) as server:
        silent = _silent_uploads(server.url, 5, 1_000_000)
        started = time.monotonic()
        replies = []
        for sock in silent:
            data = b""
            while b"\r\n\r\n" not in data or not data.endswith(b"}"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
            replies.append((data, time.monotonic() - started))
            sock.close()
    for data, seconds in replies:
        assert data.startswith(b"HTTP/1.1 408"), data
        assert b"body too slow: 0 bytes" in data
        assert seconds < 5.0  # not the 60 s body timeout


def test_the_body_budget_makes_a_request_wait_without_holding_a_slot():
    """With room for two 1 MB bodies, two silent uploads fill the budget: a third request waits
    until the rate rule drops them, then is served; meanwhile no scoring slot is held."""
    limits = ServerLimits(
        max_buffered_body_bytes=2_000_000, body_grace_s=1.0, max_active_requests=1
    )
    body = _body()
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=limits) as server:
        assert _timed_post(server.url, body, timeout=30)[0] == 200
        silent = _silent_uploads(server.url, 2, 1_000_000)
        try:
            time.sleep(0.2)
            status, seconds, payload = _timed_post(server.url, body, timeout=10)
        finally:
            for sock in silent:
                sock.close()
    assert status == 200, payload
    assert 0.5 < seconds < 5.0, seconds  # waited for the budget, about the grace period
