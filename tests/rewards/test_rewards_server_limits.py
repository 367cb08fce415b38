"""The reward server under hostile or careless clients, on a real loopback uvicorn server.

Each test names what the old hand-written ``http.server`` loop got wrong: connection resets
at 20 concurrent clients (listen backlog 5), one thread held per silent connection, 500 for
over-deep JSON or over-long integers, tracebacks in the log when a client disconnects, and no
way to require a token.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.rewards import RemoteRewardScorer, RewardScorer
from crystalbench.rewards.items import ground_truth_json
from crystalbench.rewards.server import RewardServer, ServerLimits, is_loopback
from crystalbench.types import BenchmarkItem

FAST = ServerLimits(
    max_body_bytes=256 * 1024,
    max_rows=300,
    max_wait_ms=2,
    idle_timeout_s=0.5,
    header_timeout_s=0.6,
    body_timeout_s=0.6,
)


@pytest.fixture(scope="module")
def items() -> list[BenchmarkItem]:
    return list(load_benchmark("sample").items)


@pytest.fixture(scope="module")
def server():
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=FAST) as running:
        yield running


def address(url: str) -> tuple[str, int]:
    parsed = urlparse(url)
    assert parsed.hostname is not None
    assert parsed.port is not None
    return parsed.hostname, parsed.port


def reply_body(raw: bytes) -> dict:
    """A JSON reply, or ``{"text": ...}`` for uvicorn's own plain-text replies (503)."""
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {"text": raw.decode()}


def post(url: str, body: bytes, headers: dict[str, str] | None = None, path: str = "/v1/signals"):
    conn = http.client.HTTPConnection(*address(url), timeout=30)
    try:
        conn.request("POST", path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, reply_body(response.read()), dict(response.getheaders())
    finally:
        conn.close()


def read_reply(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    sock.settimeout(5)
    reply = b""
    while chunk := sock.recv(4096):
        reply += chunk
    return reply


def get(url: str, path: str = "/v1/health", headers: dict[str, str] | None = None):
    conn = http.client.HTTPConnection(*address(url), timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def dumps(steps, answer) -> str:
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


def rows_for(item: BenchmarkItem, variant: int) -> tuple[list[str], list[BenchmarkItem]]:
    refs = item.reference_steps
    return (
        [
            dumps(refs[variant % 2 :: 2], item.answer),
            dumps([*refs[:1], f"Remark {variant}."], "Z"),
            f"Prose {variant}.",
        ],
        [item] * 3,
    )


def wait_closed(sock: socket.socket, within: float) -> float:
    """Seconds until the server closes ``sock`` (recv returns b"" or the peer resets)."""
    start = time.monotonic()
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - start


# --------------------------------------------------------------------------- connections


def test_fifty_clients_at_once_get_their_own_numbers(server, items):
    """50 connections opened at the same instant (the old backlog of 5 reset some of them);
    each reply equals the in-process reward of its own rows."""
    jobs = [rows_for(items[i % len(items)], i) for i in range(50)]
    local = RewardScorer(HashEncoder())
    expected = [local.signals(*job) for job in jobs]
    for rounds in range(2):
        barrier = threading.Barrier(len(jobs))

        def send(index: int, barrier: threading.Barrier = barrier):
            completions, rows = jobs[index]
            body = json.dumps(
                {
                    "completions": completions,
                    "items": [json.loads(ground_truth_json(r)) for r in rows],
                }
            ).encode()
            conn = http.client.HTTPConnection(*address(server.url), timeout=30)
            barrier.wait()
            try:
                conn.request("POST", "/v1/signals", body=body)
                response = conn.getresponse()
                return response.status, json.loads(response.read())
            finally:
                conn.close()

        with ThreadPoolExecutor(len(jobs)) as pool:
            replies = list(pool.map(send, range(len(jobs))))
        assert [status for status, _ in replies] == [200] * len(jobs), rounds
        got = [reply["signals"] for _, reply in replies]
        assert got == [[s.model_dump(mode="json") for s in e] for e in expected]


def test_silent_connections_are_closed_and_hold_nothing(items):
    """Connections that never send a byte are closed after the idle timeout, and while they
    are open a real client is still served (the old server held a thread for each)."""
    limits = FAST.model_copy(update={"max_connections": 40, "idle_timeout_s": 0.8})
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=limits) as server:
        silent = [socket.create_connection(address(server.url)) for _ in range(30)]
        try:
            completions, rows = rows_for(items[0], 0)
            served = RemoteRewardScorer(server.url, retries=0).signals(completions, rows)
            assert served == RewardScorer(HashEncoder()).signals(completions, rows)
            waited = [wait_closed(sock, within=5.0) for sock in silent]
        finally:
            for sock in silent:
                sock.close()
        assert max(waited) < 4.0, waited


def test_when_connections_run_out_clients_get_503_and_retry(items):
    limits = FAST.model_copy(update={"max_connections": 3, "idle_timeout_s": 0.7})
    with RewardServer(RewardScorer(HashEncoder()), port=0, limits=limits) as server:
        health = RemoteRewardScorer(server.url).health()  # read while connections are free
        silent = [socket.create_connection(address(server.url)) for _ in range(3)]
        try:
            time.sleep(0.1)
            status, body, _ = post(server.url, b'{"completions": [], "items": []}')
            assert status == 503, body
            client = RemoteRewardScorer(server.url, retries=6, backoff=0.3)
            client._health = health
            completions, rows = rows_for(items[1], 1)
            assert client.signals(completions, rows) == RewardScorer(HashEncoder()).signals(
                completions, rows
            )
        finally:
            for sock in silent:
                sock.close()


def test_trickled_headers_are_cut_off(server):
    sock = socket.create_connection(address(server.url))
    request = b"POST /v1/signals HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 400
    start = time.monotonic()
    closed = False
    try:
        for byte in request:
            sock.send(bytes([byte]))
            time.sleep(0.01)
            if time.monotonic() - start > 3.0:
                break
    except (BrokenPipeError, ConnectionResetError):
        closed = True
    finally:
        elapsed = time.monotonic() - start
    if not closed:
        elapsed += wait_closed(sock, within=3.0)
    sock.close()
    assert elapsed < 3.0  # the header timeout is 0.6 s; sending all of it takes over 4 s


def test_a_body_that_never_arrives_gets_408(server):
    sock = socket.create_connection(address(server.url))
    sock.sendall(b"POST /v1/signals HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{")
    reply = read_reply(sock)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 408")
    assert b"body not received within 0.6 s" in reply


def test_oversize_content_length_is_refused_before_the_body_is_sent(server):
    """413 comes back while the client has sent only its headers."""
    sock = socket.create_connection(address(server.url))
    sock.sendall(b"POST /v1/signals HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n")
    reply = read_reply(sock)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 413")
    assert b"at most 262144" in reply


def test_huge_headers_are_refused(server):
    status, body = get(server.url, headers={"X-Big": "b" * 20_000})
    assert status == 431
    assert "at most 16384" in body["error"]


# --------------------------------------------------------------------------- bad JSON


BAD_BODIES = {
    "malformed": b'{"completions": ["x"], "items": [null]',
    "not UTF-8": b'{"completions": ["\xff\xfe"], "items": [null]}',
    "arrays too deep": b'{"completions": ' + b"[" * 40 + b"]" * 40 + b', "items": []}',
    "objects too deep": b'{"completions": [], "items": [], "x": '
    + b'{"a": ' * 40
    + b"1"
    + b"}" * 40
    + b"}",
    "deeper than Python's recursion limit": b"[" * 100_000 + b"]" * 100_000,
    "over-long integer": b'{"completions": [], "items": [], "seed": ' + b"7" * 5000 + b"}",
    "NaN": b'{"completions": [], "items": [], "x": NaN}',
    "Infinity": b'{"completions": [], "items": [], "x": -Infinity}',
    "overflowing float": b'{"completions": [1e400], "items": [null]}',
    "repeated key": b'{"completions": ["a"], "items": [null], "items": [null]}',
    "not an object": b'["completions", "items"]',
    "a bare string": b'"hello"',
    "completions not a list": b'{"completions": "x", "items": [null]}',
    "items not a list": b'{"completions": ["x"], "items": {"answer": "B"}}',
    "item not an object": b'{"completions": ["x"], "items": ["B"]}',
    "item field of the wrong type": b'{"completions": ["x"], "items": [{"answer": ["B"]}]}',
    "steps of the wrong type": b'{"completions": ["x"], "items": '
    b'[{"answer": "B", "reference_steps": [1, 2]}]}',
    "lone surrogate in an item": b'{"completions": ["x"], "items": [{"answer": "\\ud83d"}]}',
    "lengths differ": b'{"completions": ["x", "y"], "items": [null]}',
    "empty body": b"",
}


@pytest.mark.parametrize("kind", list(BAD_BODIES))
def test_bad_json_of_every_kind_is_a_400_with_a_json_error(server, kind):
    status, body, headers = post(server.url, BAD_BODIES[kind])
    assert status == 400, (kind, body)
    assert headers["content-type"] == "application/json"
    assert isinstance(body["error"], str)
    assert body["error"]


def test_bad_kind_on_the_rewards_route(server):
    for kind in (["cpr"], "cpx", 3):
        raw = json.dumps({"completions": ["x"], "items": [None], "kind": kind}).encode()
        status, body, _ = post(server.url, raw, path="/v1/rewards")
        assert status == 400, kind
        assert "kind" in body["error"]


def test_errors_name_what_is_wrong(server):
    assert "nested deeper than 32" in post(server.url, BAD_BODIES["arrays too deep"])[1]["error"]
    assert "5000 digits" in post(server.url, BAD_BODIES["over-long integer"])[1]["error"]
    assert "'items' repeated" in post(server.url, BAD_BODIES["repeated key"])[1]["error"]
    assert "not UTF-8 (byte 18)" in post(server.url, BAD_BODIES["not UTF-8"])[1]["error"]


def test_a_lone_surrogate_in_a_completion_is_model_output_not_a_400(server):
    raw = b'{"completions": ["{\\"reasoning_steps\\": [\\"a\\ud800\\"], \\"answer\\": \\"1\\"}"],'
    raw += b' "items": [{"answer": "1"}]}'
    status, body, _ = post(server.url, raw)
    assert status == 200
    assert body["signals"][0]["format_error"] == "invalid_unicode"


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = st.sampled_from(
    ["answer", "reference_steps", "options", "question", "answer_type", "id", "source", "x"]
)
ITEMS = st.one_of(
    st.none(), JSON_VALUES, st.dictionaries(FIELDS, JSON_VALUES | st.lists(st.text(), max_size=3))
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    completions=st.one_of(JSON_VALUES, st.lists(JSON_VALUES | st.text(), max_size=4)),
    raw_items=st.one_of(JSON_VALUES, st.lists(ITEMS, max_size=4)),
    kind=st.one_of(st.none(), st.sampled_from(["cpr", "format", "step_f1"]), JSON_VALUES),
    path=st.sampled_from(["/v1/signals", "/v1/rewards"]),
)
def test_random_requests_never_get_a_500(server, completions, raw_items, kind, path):
    body = {"completions": completions, "items": raw_items}
    if kind is not None:
        body["kind"] = kind
    status, reply, _ = post(server.url, json.dumps(body).encode(), path=path)
    assert status in (200, 400, 413), reply
    if status != 200:
        assert reply["error"]


# --------------------------------------------------------------------------- the token


@pytest.fixture(scope="module")
def guarded():
    with RewardServer(
        RewardScorer(HashEncoder()), port=0, limits=FAST, token="s3cret-token"
    ) as running:
        yield running


def test_token_is_required_on_every_route(guarded):
    ok = b'{"completions": ["x"], "items": [null]}'
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        status, body, reply_headers = post(guarded.url, ok, headers)
        assert status == 401, headers
        assert "bearer token" in body["error"]
        assert reply_headers["www-authenticate"].startswith("Bearer")
        assert get(guarded.url, headers=headers)[0] == 401
    good = {"Authorization": "Bearer s3cret-token"}
    assert post(guarded.url, ok, good)[0] == 200
    assert post(guarded.url, ok, {"Authorization": "bearer s3cret-token"})[0] == 200
    status, health = get(guarded.url, headers=good)
    assert status == 200
    assert health["auth"] == "bearer"


def test_client_sends_the_token_from_its_argument_or_the_environment(guarded, items, monkeypatch):
    completions, rows = rows_for(items[2], 2)
    expected = RewardScorer(HashEncoder()).signals(completions, rows)
    assert RemoteRewardScorer(guarded.url, token="s3cret-token").signals(completions, rows) == (
        expected
    )
    monkeypatch.setenv("CRYSTALBENCH_REWARD_TOKEN", "s3cret-token")
    assert RemoteRewardScorer(guarded.url).signals(completions, rows) == expected
    monkeypatch.delenv("CRYSTALBENCH_REWARD_TOKEN")
    with pytest.raises(InputError, match=r"401.*CRYSTALBENCH_REWARD_TOKEN"):
        RemoteRewardScorer(guarded.url, retries=0).health()


def test_listening_beyond_loopback_without_a_token_warns(caplog):
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert not is_loopback("0.0.0.0")
    with caplog.at_level(logging.WARNING, logger="crystalbench.rewards.server"):
        server = RewardServer(RewardScorer(HashEncoder()), host="0.0.0.0", port=0, limits=FAST)
        server.start()
        server.close()
    assert any("without a token" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with (
        caplog.at_level(logging.WARNING, logger="crystalbench.rewards.server"),
        RewardServer(RewardScorer(HashEncoder()), port=0, limits=FAST),
    ):
        pass
    assert not any("without a token" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------- quiet logs


def disconnect_rudely(url: str) -> None:
    """Every way a trainer rank can vanish mid-request."""
    host_port = address(url)
    body = json.dumps({"completions": ["x"] * 200, "items": [None] * 200}).encode()
    head = b"POST /v1/signals HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
    # 1. half a body, then a clean close
    sock = socket.create_connection(host_port)
    sock.sendall(head + body[:100])
    sock.close()
    # 2. a whole request, closed before the reply
    sock = socket.create_connection(host_port)
    sock.sendall(head + body)
    sock.close()
    # 3. a whole request, then a reset (SO_LINGER 0)
    sock = socket.create_connection(host_port)
    sock.sendall(head + body)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    # 4. half the headers, then a reset
    sock = socket.create_connection(host_port)
    sock.sendall(head[:20])
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    time.sleep(0.5)


def test_client_disconnects_leave_no_traceback_in_the_log(server, caplog, capfd):
    with caplog.at_level(logging.DEBUG):
        disconnect_rudely(server.url)
        assert post(server.url, b'{"completions": ["x"], "items": [null]}')[0] == 200
    noisy = [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert not noisy, [r.getMessage() for r in noisy]
    assert "Traceback" not in capfd.readouterr().err


def test_cli_server_log_stays_clean(items):
    """``crystal serve-rewards`` as a user runs it: rude clients, then Ctrl-C-free shutdown
    by SIGTERM; stderr holds the loading line and nothing else."""
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
            "--idle-timeout",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()  # type: ignore[union-attr]
            if "listening on" in line or process.poll() is not None:
                break
        assert "listening on" in line
        url = line.split("listening on ")[1].split()[0]
        disconnect_rudely(url)
        completions, rows = rows_for(items[3], 3)
        assert RemoteRewardScorer(url).signals(completions, rows) == RewardScorer(
            HashEncoder()
        ).signals(completions, rows)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "Traceback" not in stderr
    assert [line for line in stderr.splitlines() if line.strip()] == ["loading encoder hash ..."]
