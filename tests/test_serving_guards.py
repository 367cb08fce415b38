"""crystalbench.serving: the request guard both servers use, over a real loopback server, and
the check that the reward server and the review app both run it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from crystalbench.serving.connections import bind_socket, guarded_protocol
from crystalbench.serving.guards import BodyTooLarge, RequestGuard


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


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    import uvicorn

    app = Marked(echo, max_header_bytes=2048, token="s3cret", max_body_bytes=100)
    sock = bind_socket("127.0.0.1", 0, backlog=64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        http=guarded_protocol(idle_timeout_s=1.0, header_timeout_s=0.5),
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
