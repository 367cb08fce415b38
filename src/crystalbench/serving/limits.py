"""What every request to a crystalbench server must pass before a route sees it.

One middleware, :class:`RequestGuard`, and the checks it is made of, shared by the reward
server (``crystal serve-rewards``, JSON errors) and the review app (``crystal review serve``,
plain-text errors and security headers):

- **headers**: the request line and headers over ``max_header_bytes`` get 431 (h11 bounds only
  headers that arrive in pieces) and the connection is closed;
- **token**: with a bearer token, a request without ``Authorization: Bearer <token>`` gets
  401 (compared in constant time);
- **bodies**: a chunked body gets 411, a malformed ``Content-Length`` 400, one over the limit
  413, all before a byte of the body is read (:func:`check_body_length`); a body that turns
  out longer than it said is cut off with 413 (:func:`bounded_receive`); a body must keep
  arriving at a minimum average rate once a short grace period is over, or the request gets
  408 and its connection is closed (:func:`paced_receive`, the rule both servers apply:
  :data:`~crystalbench.config.settings.SERVING_MIN_BODY_BYTES_PER_S` after
  :data:`~crystalbench.config.settings.SERVING_BODY_GRACE_S`); a whole body late gets 408 too
  (:func:`read_request_body`); the bytes of bodies read at once can be bounded
  (:class:`BodyBudget`);
- **JSON**: :func:`decode_json_body` refuses what :func:`json.loads` lets through (``NaN``,
  overflowing numbers, huge integer literals, repeated keys, deep nesting, lone surrogates).

Nothing here imports Starlette or uvicorn at module level.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from http import HTTPStatus
from typing import Any

__all__ = [
    "CLOSING_STATUSES",
    "STATE_CHANGING",
    "BearerToken",
    "BodyBudget",
    "BodyRefused",
    "BodyTooLarge",
    "BodyTooSlow",
    "HttpError",
    "RequestGuard",
    "bounded_receive",
    "check_body_length",
    "check_request_head",
    "decode_json_body",
    "paced_receive",
    "read_request_body",
    "request_head_bytes",
]

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""Methods whose body the guard checks."""

CLOSING_STATUSES = frozenset(
    {HTTPStatus.REQUEST_ENTITY_TOO_LARGE, HTTPStatus.LENGTH_REQUIRED, HTTPStatus.REQUEST_TIMEOUT}
)
"""Errors a route raises after which the connection is closed (the rest of the body is never
read). The guard's own refusals close it too, except a 401."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")

Headers = list[tuple[bytes, bytes]]


class HttpError(Exception):
    """A request refused with ``status`` and ``message``.

    Examples:
        >>> error = HttpError(HTTPStatus.NOT_FOUND, "no route /x")
        >>> error.status.value, error.message
        (404, 'no route /x')
    """

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class BodyRefused(HttpError):
    """A body refused while it is read (too long, too slow): the connection is closed after
    the refusal, since the rest of the body is never read."""


class BodyTooLarge(BodyRefused):
    """A body longer than the limit (raised by :func:`bounded_receive` while it is read)."""

    def __init__(self, limit: int) -> None:
        super().__init__(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes")


class BodyTooSlow(BodyRefused):
    """A body arriving slower than the minimum rate (raised by :func:`paced_receive`)."""

    def __init__(self, received: int, seconds: float, rate: float, grace_s: float) -> None:
        super().__init__(
            HTTPStatus.REQUEST_TIMEOUT,
            f"body too slow: {received} bytes in {seconds:.1f} s; a body must arrive at "
            f"{rate:g} bytes/s or faster after its first {grace_s:g} s",
        )


# --------------------------------------------------------------------------- the request head


def request_head_bytes(scope: Mapping[str, Any]) -> int:
    """The size of an ASGI request's line and headers (path, query, each ``name: value``).

    Examples:
        >>> request_head_bytes({"raw_path": b"/a", "query_string": b"x=1",
        ...                     "headers": [(b"host", b"h")]})  # 2 + 3 + (4 + 1 + 4)
        14
    """
    size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    return size + sum(len(name) + len(value) + 4 for name, value in scope.get("headers", []))


def check_request_head(scope: Mapping[str, Any], max_header_bytes: int) -> None:
    """431 (:class:`HttpError`) for a request line plus headers over ``max_header_bytes``.

    Examples:
        >>> check_request_head({"raw_path": b"/" * 40, "headers": []}, 16)
        Traceback (most recent call last):
        ...
        crystalbench.serving.limits.HttpError: request line and headers of 40 bytes; at most 16
    """
    size = request_head_bytes(scope)
    if size > max_header_bytes:
        raise HttpError(
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            f"request line and headers of {size} bytes; at most {max_header_bytes}",
        )


class BearerToken:
    """The check of ``Authorization: Bearer <token>`` (always passes without a token).

    Examples:
        >>> token = BearerToken("s3cret")
        >>> token.allows(b"Bearer s3cret"), token.allows(b"bearer s3cret")
        (True, True)
        >>> token.allows(b"Bearer s3cre"), token.allows(b"Basic s3cret"), token.allows(None)
        (False, False, False)
        >>> BearerToken(None).allows(None)
        True
    """

    def __init__(self, token: str | None) -> None:
        self._token = token.encode("utf-8") if token else None

    def allows(self, header: bytes | None) -> bool:
        """Whether an ``Authorization`` header value carries the token (constant time)."""
        if self._token is None:
            return True
        scheme, _, value = (header or b"").partition(b" ")
        given = value.strip() if scheme.lower() == b"bearer" else b""
        return hmac.compare_digest(given, self._token)


# --------------------------------------------------------------------------- bodies


def check_body_length(headers: Mapping[str, str], max_bytes: int, *, required: bool = True) -> int:
    """The ``Content-Length`` of a request, checked before anything is read: chunked -> 411,
    missing -> 411 when ``required`` (else 0), malformed or negative -> 400, over
    ``max_bytes`` -> 413 (:class:`HttpError`). Header names are lower case.

    Examples:
        >>> check_body_length({"content-length": "12"}, 1024)
        12
        >>> check_body_length({}, 1024, required=False)
        0
        >>> check_body_length({"content-length": "2048"}, 1024)
        Traceback (most recent call last):
        ...
        crystalbench.serving.limits.HttpError: body of 2048 bytes; at most 1024
    """
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpError(HTTPStatus.LENGTH_REQUIRED, "chunked bodies are not accepted")
    header = headers.get("content-length")
    if header is None:
        if required:
            raise HttpError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        return 0
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


def bounded_receive(
    receive: Callable[[], Awaitable[Any]], max_bytes: int
) -> Callable[[], Awaitable[Any]]:
    """An ASGI ``receive`` that raises :class:`BodyTooLarge` once more than ``max_bytes`` of
    body have arrived (a body longer than its ``Content-Length`` said)."""
    received = 0

    async def bounded() -> Any:
        nonlocal received
        message = await receive()
        if message.get("type") == "http.request":
            received += len(message.get("body", b""))
            if received > max_bytes:
                raise BodyTooLarge(max_bytes)
        return message

    return bounded


def paced_receive(
    receive: Callable[[], Awaitable[Any]],
    *,
    min_bytes_per_s: float,
    grace_s: float,
    clock: Callable[[], float] | None = None,
) -> Callable[[], Awaitable[Any]]:
    """An ASGI ``receive`` that refuses a body arriving too slowly (:class:`BodyTooSlow`, 408).

    The rule: ``t`` seconds after the body was first awaited, at least
    ``min_bytes_per_s * (t - grace_s)`` bytes must have arrived. Each wait for more body is
    bounded by the moment the bytes already received stop being enough, so a client that
    announces a body and sends nothing is refused after ``grace_s`` seconds, and one that
    trickles it falls behind and is refused when it does; a client that keeps pace is never
    interrupted. Nothing is timed while the application is not reading the body (a request
    waiting its turn is not the client's fault), and messages other than the body
    (``http.disconnect``) pass through.

    Examples:
        >>> import asyncio
        >>> async def silent():
        ...     await asyncio.sleep(10)
        >>> async def main():
        ...     receive = paced_receive(silent, min_bytes_per_s=1000, grace_s=0.05)
        ...     try:
        ...         await receive()
        ...     except BodyTooSlow as error:
        ...         return error.status.value
        >>> asyncio.run(main())
        408
    """
    now = clock or (lambda: asyncio.get_running_loop().time())
    started: float | None = None
    received = 0
    finished = False

    async def paced() -> Any:
        nonlocal started, received, finished
        if finished:
            return await receive()
        if started is None:
            started = now()
        deadline = started + grace_s + received / min_bytes_per_s
        remaining = deadline - now()
        if remaining <= 0:
            raise BodyTooSlow(received, now() - started, min_bytes_per_s, grace_s)
        try:
            message = await asyncio.wait_for(receive(), remaining)
        except asyncio.TimeoutError:
            raise BodyTooSlow(received, now() - started, min_bytes_per_s, grace_s) from None
        if message.get("type") == "http.request":
            received += len(message.get("body", b""))
            finished = not message.get("more_body", False)
        else:
            finished = True
        return message

    return paced


class BodyBudget:
    """Bytes of request bodies being read at once, bounded: each body reserves its
    ``Content-Length`` before it is read and gives it back when done; a body that does not fit
    waits until enough is given back (first come, first served). One body larger than the whole
    budget is let through alone, when nothing else is reserved.

    Examples:
        >>> import asyncio
        >>> async def main():
        ...     budget = BodyBudget(100)
        ...     await budget.reserve(80)
        ...     waiting = asyncio.ensure_future(budget.reserve(40))
        ...     await asyncio.sleep(0)
        ...     first = waiting.done()
        ...     await budget.release(80)
        ...     await waiting
        ...     return first, budget.reserved
        >>> asyncio.run(main())
        (False, 40)
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError(f"a body budget needs at least 1 byte, got {max_bytes}")
        self.max_bytes = max_bytes
        self.reserved = 0
        self._condition: asyncio.Condition | None = None

    def _fits(self, size: int) -> bool:
        return self.reserved + size <= self.max_bytes or self.reserved == 0

    async def reserve(self, size: int) -> None:
        """Wait until ``size`` bytes fit in the budget, then take them."""
        if self._condition is None:  # bound to the running loop on first use
            self._condition = asyncio.Condition()
        async with self._condition:
            await self._condition.wait_for(lambda: self._fits(size))
            self.reserved += size

    async def release(self, size: int) -> None:
        """Give ``size`` bytes back and wake the bodies waiting for room."""
        self.reserved = max(0, self.reserved - size)
        if self._condition is not None:
            async with self._condition:
                self._condition.notify_all()


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


def decode_json_body(
    raw: bytes,
    *,
    max_depth: int,
    max_int_digits: int,
    surrogate_fields: Sequence[str] = (),
) -> dict[str, Any]:
    """Decode a request body into a JSON object, or raise ``ValueError`` saying why not.

    Strict where :func:`json.loads` is lenient: no ``NaN`` / ``Infinity``, no number that
    overflows a float (``1e400``), no integer literal over ``max_int_digits`` digits, no key
    repeated inside one object, no nesting deeper than ``max_depth`` (the body itself is
    level 1), no lone surrogate (``"\\ud800"``) inside the top-level ``surrogate_fields``,
    and UTF-8 only.

    Examples:
        >>> decode_json_body(b'{"a": [1, null]}', max_depth=8, max_int_digits=10)
        {'a': [1, None]}
        >>> decode_json_body(b'{"a": NaN}', max_depth=8, max_int_digits=10)
        Traceback (most recent call last):
        ...
        ValueError: NaN is not allowed in JSON
        >>> decode_json_body(b'{"a": [[[[[[[[1]]]]]]]]}', max_depth=8, max_int_digits=10)
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
    if surrogate_fields and _SURROGATE_ESCAPE.search(raw):
        for name in surrogate_fields:
            _check_strings(body.get(name), name)
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


# --------------------------------------------------------------------------- the middleware


class RequestGuard:
    """ASGI middleware run before any route: the head limit (431), the bearer token (401),
    and, when ``max_body_bytes`` is given, the body limits of state-changing methods (411,
    400, 413) before the body is read and while it is read; when ``min_body_bytes_per_s`` is
    given, the pace of their bodies (408 for a body that falls behind, :func:`paced_receive`).

    Refusals are plain text; :meth:`refusal` is what a product overrides for another format
    (the reward server's JSON), and :meth:`response_headers` adds headers to every response
    (the review app's security headers).

    Args:
        app: The ASGI app behind the guard.
        max_header_bytes: Largest request line plus headers.
        token: Bearer token every request must carry (``None``: no token).
        max_body_bytes: Largest body of a ``POST``/``PUT``/``PATCH``/``DELETE`` (``None``:
            the app checks bodies itself).
        realm: The ``WWW-Authenticate`` realm of a 401.
        min_body_bytes_per_s: Slowest average pace of those bodies once ``body_grace_s`` is
            over (``None``: not checked).
        body_grace_s: Seconds a body may take before the pace applies.
    """

    def __init__(
        self,
        app: Any,
        *,
        max_header_bytes: int,
        token: str | None = None,
        max_body_bytes: int | None = None,
        realm: str = "crystalbench",
        min_body_bytes_per_s: float | None = None,
        body_grace_s: float = 0.0,
    ) -> None:
        if min_body_bytes_per_s is not None and not min_body_bytes_per_s > 0:
            raise ValueError(f"min_body_bytes_per_s must be > 0, got {min_body_bytes_per_s}")
        if not body_grace_s >= 0:
            raise ValueError(f"body_grace_s must be >= 0, got {body_grace_s}")
        self.app = app
        self.max_header_bytes = max_header_bytes
        self.max_body_bytes = max_body_bytes
        self.token = BearerToken(token)
        self.realm = realm
        self.min_body_bytes_per_s = min_body_bytes_per_s
        self.body_grace_s = body_grace_s

    def allows(self, header: bytes | None) -> bool:
        """Whether an ``Authorization`` header value carries the token."""
        return self.token.allows(header)

    def refusal(self, status: HTTPStatus, message: str) -> tuple[bytes, bytes]:
        """The content type and body of a refusal (plain text here)."""
        body = f"{status.value} {status.phrase}: {message}\n".encode()
        return b"text/plain; charset=utf-8", body

    def response_headers(self, scope: Mapping[str, Any], headers: Headers) -> Headers:
        """Headers added to every response (none here); ``headers`` are the response's own."""
        del scope, headers
        return []

    async def refuse(self, scope: Any, send: Any, error: HttpError) -> None:
        """Send ``error`` as the whole response."""
        content_type, body = self.refusal(error.status, error.message)
        headers: Headers = [
            (b"content-type", content_type),
            (b"content-length", str(len(body)).encode()),
        ]
        if error.status != HTTPStatus.UNAUTHORIZED:  # the request's body is never read
            headers.append((b"connection", b"close"))
        if error.status == HTTPStatus.UNAUTHORIZED:
            headers.append((b"www-authenticate", f'Bearer realm="{self.realm}"'.encode()))
        headers += self.response_headers(scope, headers)
        start = {"type": "http.response.start", "status": error.status.value, "headers": headers}
        await send(start)
        await send({"type": "http.response.body", "body": body})

    def check(self, scope: Mapping[str, Any]) -> None:
        """Every check that needs no body: raises the :class:`HttpError` of the first that
        fails."""
        check_request_head(scope, self.max_header_bytes)
        raw = scope.get("headers", [])
        authorization = next((v for n, v in raw if n.lower() == b"authorization"), None)
        if not self.allows(authorization):
            raise HttpError(
                HTTPStatus.UNAUTHORIZED,
                "missing or wrong bearer token (Authorization: Bearer <token>)",
            )
        if self.max_body_bytes is not None and scope.get("method") in STATE_CHANGING:
            headers = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in raw}
            check_body_length(headers, self.max_body_bytes, required=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self.check(scope)
        except HttpError as error:
            await self.refuse(scope, send, error)
            return
        if self.max_body_bytes is not None:
            receive = bounded_receive(receive, self.max_body_bytes)
        if self.min_body_bytes_per_s is not None and scope.get("method") in STATE_CHANGING:
            receive = paced_receive(
                receive, min_bytes_per_s=self.min_body_bytes_per_s, grace_s=self.body_grace_s
            )
        started = False

        async def guarded_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                own = list(message.get("headers", []))
                extra = self.response_headers(scope, own)
                if extra:
                    message = {**message, "headers": [*own, *extra]}
            await send(message)

        try:
            await self.app(scope, receive, guarded_send)
        except BodyRefused as error:
            if started:
                raise
            await self.refuse(scope, send, error)
