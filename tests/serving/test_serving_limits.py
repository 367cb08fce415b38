"""crystalbench.serving: the request guard both servers use, over a real loopback server, and
the check that the reward server and the review app both run it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from crystalbench.serving.connections import bind_socket, guarded_protocol
from crystalbench.serving.limits import BodyTooLarge, RequestGuard


async def echo(scope: Any, receive: Any, send: Any) -> None:
    """A bare ASGI app: reads the whole body and answers its length."""
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(size).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Marked(RequestGuard):
    def response_headers(self, scope: Any, headers: Any) -> list[tuple[bytes, bytes]]:
        return [(b"x-guarded", b"1")]


@contextmanager
def _serving(app: Any, **timeouts: float) -> Iterator[tuple[str, int]]:
    """``app`` on uvicorn, on a free loopback port, in a background thread."""
    import uvicorn

    sock = bind_socket("127.0.0.1", 0, backlog=64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        http=guarded_protocol(**timeouts),
        lifespan="off",
        log_level="error",
        h11_max_incomplete_event_size=2048,
    )
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    yield "127.0.0.1", port
    runner.should_exit = True
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    app = Marked(echo, max_header_bytes=2048, token="s3cret", max_body_bytes=100)
    with _serving(app, idle_timeout_s=1.0, header_timeout_s=0.5) as address:
        yield address


def exchange(address: tuple[str, int], raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw`` and read the reply until the server closes or the body is complete."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        pairs = [line.split(": ", 1) for line in lines[1:]]
        headers = {name.lower(): value for name, value in pairs}
        while len(body) < int(headers.get("content-length", "0")):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body


AUTH = b"Authorization: Bearer s3cret\r\n"


def request(method: str, headers: bytes = AUTH, body: bytes = b"", path: str = "/") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: t\r\n".encode() + headers + b"\r\n" + body


@pytest.mark.parametrize(
    ("raw", "status", "text"),
    [
        (request("GET"), 200, "0"),
        (request("POST", AUTH + b"Content-Length: 5\r\n", b"hello"), 200, "5"),
        (request("GET", b""), 401, "missing or wrong bearer token"),
        (request("GET", b"Authorization: Bearer nope\r\n"), 401, "missing or wrong bearer token"),
        (request("GET", path="/" + "a" * 3000), 431, "request line and headers of"),
        (request("POST", AUTH + b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n"), 411, "chunked"),
        (request("POST", AUTH + b"Content-Length: 500\r\n", b"x" * 500), 413, "body of 500 bytes"),
    ],
)
def test_the_guard_over_a_real_connection(server, raw, status, text):
    code, headers, body = exchange(server, raw)
    assert code == status
    assert text in body.decode()
    assert headers["x-guarded"] == "1"  # the product's headers, on refusals too
    if status == 401:
        assert headers["www-authenticate"] == 'Bearer realm="crystalbench"'
    elif status != 200:
        assert headers["connection"] == "close"


def test_a_connection_that_sends_nothing_is_closed(server):
    with socket.create_connection(server, timeout=10) as sock:
        started = time.monotonic()
        assert sock.recv(1) == b""  # closed by the idle timer, not by our timeout
        assert time.monotonic() - started < 5


def test_both_servers_run_the_shared_guard(tmp_path):
    """The reward server's app and the review app are this guard, each with its own format:
    the same oversize request gets the same status and message from both."""
    pytest.importorskip("sqlalchemy")
    from crystalbench.review.app import create_app
    from crystalbench.review.db import Database
    from crystalbench.rewards.server_http import build_app

    async def health() -> Any:
        raise AssertionError("never reached")

    rewards = build_app(
        health=lambda: (200, {}),
        post=health,
        post_routes=("/v1/rewards",),
        health_routes=("/v1/health",),
        token=None,
        max_header_bytes=1024,
    )
    review = create_app(Database(f"sqlite:///{tmp_path / 'r.sqlite'}"))
    assert isinstance(rewards, RequestGuard)
    assert isinstance(review, RequestGuard)
    review.max_header_bytes = 1024
    scope = {"type": "http", "method": "GET", "raw_path": b"/" * 2000, "headers": []}
    replies = {}
    for name, app in (("rewards", rewards), ("review", review)):
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
            sent.append(message)

        import asyncio

        asyncio.run(app(scope, None, send))
        replies[name] = (sent[0]["status"], sent[1]["body"])
    assert replies["rewards"][0] == replies["review"][0] == 431
    message = "request line and headers of 2000 bytes; at most 1024"
    assert json.loads(replies["rewards"][1]) == {"error": message}
    assert message in replies["review"][1].decode()


def test_body_too_large_is_an_http_error():
    error = BodyTooLarge(10)
    assert (error.status.value, error.message) == (413, "body over 10 bytes")


# --------------------------------------------------------------------------- the pace of bodies


@pytest.fixture(scope="module")
def paced() -> Iterator[tuple[str, int]]:
    """The guard with the body-rate rule: 2,000 bytes/s after a 0.5 s grace."""
    app = RequestGuard(
        echo, max_header_bytes=2048, max_body_bytes=10**6, min_body_bytes_per_s=2000,
        body_grace_s=0.5,
    )  # fmt: skip
    with _serving(app, idle_timeout_s=5.0, header_timeout_s=2.0) as address:
        yield address


def _send_body(address: tuple[str, int], size: int, chunks: list[tuple[float, int]]) -> tuple:
    """Announce ``size`` bytes, send ``(pause, n)`` chunks; the reply, and when it came."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(request("POST", f"Content-Length: {size}\r\n".encode()))
        started = time.monotonic()
        try:
            for pause, count in chunks:
                time.sleep(pause)
                sock.sendall(b"x" * count)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data and data.split(b"\r\n\r\n", 1)[1]:
                break
        return data, time.monotonic() - started


def test_a_body_that_never_comes_is_refused_after_the_grace_period(paced):
    reply, seconds = _send_body(paced, 5000, [])
    assert reply.startswith(b"HTTP/1.1 408"), reply
    assert b"body too slow: 0 bytes" in reply
    assert b"connection: close" in reply.lower()
    assert 0.4 < seconds < 3.0


def test_a_trickled_body_falls_behind_and_is_refused(paced):
    """10 bytes every 0.1 s is 100 bytes/s: behind the 2,000 bytes/s schedule within a second."""
    reply, seconds = _send_body(paced, 5000, [(0.1, 10)] * 40)
    assert reply.startswith(b"HTTP/1.1 408"), reply
    assert b"body too slow" in reply
    assert seconds < 2.5


def test_a_body_that_keeps_pace_is_read_whole(paced):
    """3,000 bytes over 1.3 s, the first after 0.4 s: slower than the link, never behind the
    2,000 bytes/s schedule (each 333-byte chunk buys 0.17 s and comes 0.15 s later)."""
    reply, _ = _send_body(paced, 3000, [(0.4, 1000)] + [(0.15, 333)] * 6 + [(0.0, 2)])
    assert reply.startswith(b"HTTP/1.1 200"), reply
    assert reply.endswith(b"3000")


def test_the_pace_rule_needs_a_positive_rate():
    with pytest.raises(ValueError, match="min_body_bytes_per_s"):
        RequestGuard(echo, max_header_bytes=1024, min_body_bytes_per_s=0)


def test_both_servers_enforce_the_body_pace(tmp_path):
    """The reward server and the review app run the rule with the documented settings."""
    pytest.importorskip("sqlalchemy")
    from crystalbench.config.settings import SERVING_BODY_GRACE_S, SERVING_MIN_BODY_BYTES_PER_S
    from crystalbench.encoders import HashEncoder
    from crystalbench.review.app import create_app
    from crystalbench.review.db import Database
    from crystalbench.rewards import RewardScorer
    from crystalbench.rewards.server import RewardServer

    review = create_app(Database(f"sqlite:///{tmp_path / 'r.sqlite'}"))
    with RewardServer(RewardScorer(HashEncoder()), port=0) as server:
        rewards = server._uvicorn.config.app
    for app in (review, rewards):
        assert app.min_body_bytes_per_s == SERVING_MIN_BODY_BYTES_PER_S
        assert app.body_grace_s == SERVING_BODY_GRACE_S


@pytest.mark.parametrize(
    "argv",
    [
        ["serve-rewards", "--encoder", "hash", "--port", "99999"],
        ["references", "demo-server", "--port", "-1"],
    ],
)
def test_a_port_out_of_range_is_a_clear_error_not_a_traceback(argv):
    """``--port 99999`` ended in an ``OverflowError`` traceback from the socket module."""
    from typer.testing import CliRunner

    from crystalbench.cli.main import app

    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert "is not a TCP port: give 1-65535, or 0 for a free one" in result.output
    assert "Traceback" not in result.output
