"""The HTTP layer of the reward server: strict request bodies, the ASGI app, bearer tokens,
and the connection timeouts uvicorn lacks.

:mod:`crystalbench.rewards.server` owns the scorer, the worker and the limits; this module
knows nothing about rewards. Starlette, uvicorn and h11 (the ``serve`` extra) are imported
only inside the functions that build the server, so importing this module is cheap.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import math
import re
import socket
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from crystalbench.errors import CrystalbenchError
from crystalbench.settings import (
    REWARD_SERVER_BACKLOG,
    REWARD_SERVER_MAX_INT_DIGITS,
    REWARD_SERVER_MAX_JSON_DEPTH,
)

__all__ = [
    "HttpError",
    "RequestGuard",
    "bind_socket",
    "build_app",
    "check_body_length",
    "configure_logging",
    "decode_request_body",
    "guarded_protocol",
    "is_loopback",
    "read_request_body",
    "require_server_stack",
]

logger = logging.getLogger("crystalbench.rewards.server")

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")

CLOSING_STATUSES = frozenset(
    {HTTPStatus.REQUEST_ENTITY_TOO_LARGE, HTTPStatus.LENGTH_REQUIRED, HTTPStatus.REQUEST_TIMEOUT}
)
"""Errors after which the connection is closed (the rest of the body is never read)."""


class HttpError(Exception):
    """A request refused with ``status`` and a JSON ``{"error": message}`` body."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def require_server_stack() -> None:
    """Raise a clear error when the ``serve`` extra (uvicorn, Starlette) is missing."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise CrystalbenchError(
            "the reward server needs uvicorn and Starlette: pip install 'crystalbench[serve]'"
        ) from exc


# --------------------------------------------------------------------------- addresses


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine.

    Examples:
        >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost")
        (True, True, True)
        >>> is_loopback("0.0.0.0"), is_loopback("10.0.0.5"), is_loopback("")
        (False, False, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port), backlog 2,048.

    Raises:
        OSError: The address is in use or not an interface of this machine.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(REWARD_SERVER_BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


# --------------------------------------------------------------------------- request bodies


def check_body_length(headers: Any, max_bytes: int) -> int:
    """The ``Content-Length`` of a request, checked before anything is read: missing or
    chunked -> 411, malformed -> 400, over ``max_bytes`` -> 413 (:class:`HttpError`).

    Examples:
        >>> check_body_length({"content-length": "12"}, 1024)
        12
        >>> check_body_length({"content-length": "2048"}, 1024)
        Traceback (most recent call last):
        ...
        crystalbench.rewards.server_http.HttpError: body of 2048 bytes; at most 1024
    """
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpError(HTTPStatus.LENGTH_REQUIRED, "chunked bodies are not accepted")
    header = headers.get("content-length")
    if header is None:
        raise HttpError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
    try:
        length = int(header)
    except ValueError:
        raise HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
    if length < 0:
        raise HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
    if length > max_bytes:
        raise HttpError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body of {length} bytes; at most {max_bytes}"
        )
    return length


async def read_request_body(request: Any, timeout_s: float) -> bytes:
    """The body of a Starlette ``request``, which must arrive within ``timeout_s`` (408).

    A client that disconnects meanwhile raises Starlette's ``ClientDisconnect``.
    """

    async def read() -> bytes:
        return b"".join([chunk async for chunk in request.stream()])

    try:
        return await asyncio.wait_for(read(), timeout_s)
    except asyncio.TimeoutError:
        raise HttpError(
            HTTPStatus.REQUEST_TIMEOUT, f"body not received within {timeout_s:g} s"
        ) from None


def decode_request_body(
    raw: bytes,
    *,
    max_depth: int = REWARD_SERVER_MAX_JSON_DEPTH,
    max_int_digits: int = REWARD_SERVER_MAX_INT_DIGITS,
) -> dict[str, Any]:
    """Decode a request body into a JSON object, or raise ``ValueError`` saying why not.

    Strict where :func:`json.loads` is lenient: no ``NaN`` / ``Infinity``, no number that
    overflows a float (``1e400``), no integer literal over ``max_int_digits`` digits, no key
    repeated inside one object, no nesting deeper than ``max_depth`` (the body itself is
    level 1), no lone surrogate (``"\\ud800"``) inside ``items``, and UTF-8 only. A lone
    surrogate in a completion is model output: it fails the format check as
    ``invalid_unicode`` instead.

    Examples:
        >>> decode_request_body(b'{"completions": ["x"], "items": [null]}')
        {'completions': ['x'], 'items': [None]}
        >>> decode_request_body(b'{"a": NaN}')
        Traceback (most recent call last):
        ...
        ValueError: NaN is not allowed in JSON
        >>> decode_request_body(b'{"a": [[[[[[[[1]]]]]]]]}', max_depth=8)
        Traceback (most recent call last):
        ...
        ValueError: JSON nested deeper than 8 levels
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"body is not UTF-8 (byte {exc.start})") from None

    def parse_int(literal: str) -> int:
        digits = len(literal.lstrip("-"))
        if digits > max_int_digits:
            raise ValueError(f"integer of {digits} digits; at most {max_int_digits}")
        return int(literal)

    def parse_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise ValueError(f"number {literal[:40]} overflows a float")
        return value

    def parse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not allowed in JSON")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    raise ValueError(f"key {key!r} repeated in one object")
                seen.add(key)
        return out

    try:
        body = json.loads(
            text,
            parse_int=parse_int,
            parse_float=parse_float,
            parse_constant=parse_constant,
            object_pairs_hook=pairs,
        )
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"body is not JSON: {exc}") from None
    _check_depth(body, max_depth)
    if not isinstance(body, dict):
        raise ValueError("body must be a JSON object")
    if _SURROGATE_ESCAPE.search(raw):
        _check_strings(body.get("items"), "items")
    return body


def _check_depth(value: Any, max_depth: int) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise ValueError(f"JSON nested deeper than {max_depth} levels")
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))


def _check_strings(value: Any, where: str) -> None:
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"{where} hold a lone surrogate in {node[:40]!r}") from None
        elif isinstance(node, dict):
            stack.extend(node.values())
            stack.extend(node.keys())
        elif isinstance(node, list):
            stack.extend(node)


# --------------------------------------------------------------------------- the ASGI app


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    """A Starlette ``{"error": message}`` response."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status, headers=headers)


def build_app(
    *,
    health: Callable[[], tuple[HTTPStatus, dict[str, Any]]],
    post: Callable[[Any], Awaitable[Any]],
    post_routes: tuple[str, ...],
    health_routes: tuple[str, ...],
    token: str | None,
    max_header_bytes: int,
) -> Any:
    """The ASGI app: ``GET`` health routes, ``POST`` scoring routes, JSON errors everywhere
    (404, 405, and every :class:`HttpError` ``post`` raises), behind :class:`RequestGuard`."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def health_route(request: Any) -> Any:
        status, payload = health()
        return JSONResponse(payload, status_code=status)

    async def post_route(request: Any) -> Any:
        try:
            return await post(request)
        except HttpError as exc:
            headers = {"Connection": "close"} if exc.status in CLOSING_STATUSES else None
            return json_error(exc.status, exc.message, headers)
        except Exception as exc:  # our bug: say so once, never as uvicorn's bare 500
            logger.error("request failed: %s: %s", type(exc).__name__, exc, exc_info=exc)
            return json_error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")

    async def http_error(request: Any, exc: Exception) -> Any:
        assert isinstance(exc, HTTPException)
        if exc.status_code == HTTPStatus.NOT_FOUND:
            return json_error(exc.status_code, f"no route {request.url.path}")
        if exc.status_code == HTTPStatus.METHOD_NOT_ALLOWED:
            return json_error(
                exc.status_code,
                f"{request.method} not allowed on {request.url.path}",
                dict(exc.headers or {}),
            )
        return json_error(exc.status_code, str(exc.detail))

    routes = [Route(path, health_route, methods=["GET"]) for path in health_routes]
    routes += [Route(path + "/", health_route, methods=["GET"]) for path in health_routes]
    routes += [Route(path, post_route, methods=["POST"]) for path in post_routes]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.router.redirect_slashes = False
    return RequestGuard(app, token=token, max_header_bytes=max_header_bytes)


class RequestGuard:
    """ASGI middleware run before any route: 431 for headers over ``max_header_bytes`` (h11
    bounds only headers that arrive in pieces), then 401 for a request without
    ``Authorization: Bearer <token>`` when there is a token (compared in constant time).
    """

    def __init__(self, app: Any, *, token: str | None, max_header_bytes: int) -> None:
        self.app = app
        self._token = token.encode("utf-8") if token else None
        self.max_header_bytes = max_header_bytes

    def allows(self, header: bytes | None) -> bool:
        """Whether an ``Authorization`` header value carries the token (always without one).

        Examples:
            >>> guard = RequestGuard(None, token="s3cret", max_header_bytes=16384)
            >>> guard.allows(b"Bearer s3cret"), guard.allows(b"bearer s3cret")
            (True, True)
            >>> guard.allows(b"Bearer s3cre"), guard.allows(b"Basic s3cret"), guard.allows(None)
            (False, False, False)
        """
        if self._token is None:
            return True
        scheme, _, value = (header or b"").partition(b" ")
        given = value.strip() if scheme.lower() == b"bearer" else b""
        return hmac.compare_digest(given, self._token)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = scope.get("headers", [])
            size = len(scope.get("raw_path") or b"") + sum(len(n) + len(v) + 4 for n, v in headers)
            if size > self.max_header_bytes:
                response = json_error(
                    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                    f"request line and headers of {size} bytes; at most {self.max_header_bytes}",
                    {"Connection": "close"},
                )
                await response(scope, receive, send)
                return
            authorization = next((v for n, v in headers if n == b"authorization"), None)
            if not self.allows(authorization):
                response = json_error(
                    HTTPStatus.UNAUTHORIZED,
                    "missing or wrong bearer token (Authorization: Bearer <token>)",
                    {"WWW-Authenticate": 'Bearer realm="crystalbench-rewards"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


# --------------------------------------------------------------------------- connections


def guarded_protocol(*, idle_timeout_s: float, header_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol plus the timeouts it lacks for connections that never finish a
    request.

    uvicorn arms its keep-alive timer only after a response, so a connection that never
    sends anything, or trickles its headers a byte at a time, would stay open for ever (and
    count against ``limit_concurrency``). Here a new connection gets the idle timer at once,
    and a request's headers must be complete ``header_timeout_s`` after its first byte.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.timeout_keep_alive = idle_timeout_s  # type: ignore[assignment]
            self._header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
            if waiting and self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout_s, self._too_slow)
            elif not waiting:
                self._cancel_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


def configure_logging(verbose: bool = False) -> None:
    """One-line log records on stderr for the server and uvicorn (used by the CLI): warnings
    only, or every request with ``verbose``."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S")
    )
    for name in ("uvicorn", "crystalbench.rewards"):
        target = logging.getLogger(name)
        target.handlers = [handler]
        target.propagate = False
        target.setLevel(logging.INFO if verbose else logging.WARNING)
    # math-verify warns once that its signal timeout is off in threads; scoring runs on the
    # worker thread by design and bounds its inputs instead (crystalbench.normalize).
    logging.getLogger("math_verify").setLevel(logging.ERROR)
