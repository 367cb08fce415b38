"""The HTTP layer of the reward server: its JSON errors, the ASGI app and its logging.

:mod:`crystalbench.rewards.server` owns the scorer, the worker and the limits; the guards
every request passes (header limit, bearer token, body limits and timeouts, strict JSON) and
the connection handling are :mod:`crystalbench.serving`'s, shared with the review app. This
module knows nothing about rewards beyond the field whose strings are checked for lone
surrogates. Starlette and uvicorn (the ``serve`` extra) are imported only inside the
functions that build the server, so importing this module is cheap.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from crystalbench.config.settings import (
    REWARD_SERVER_MAX_INT_DIGITS,
    REWARD_SERVER_MAX_JSON_DEPTH,
)
from crystalbench.serving.connections import require_server_stack as _require_stack
from crystalbench.serving.limits import (
    CLOSING_STATUSES,
    HttpError,
    decode_json_body,
)
from crystalbench.serving.limits import RequestGuard as _RequestGuard

__all__ = [
    "JsonRequestGuard",
    "build_app",
    "configure_logging",
    "decode_request_body",
    "json_error",
    "require_server_stack",
]

logger = logging.getLogger("crystalbench.rewards.server")


def require_server_stack() -> None:
    """Raise a clear error when the ``serve`` extra (uvicorn, Starlette) is missing."""
    _require_stack("the reward server", "serve")


def decode_request_body(
    raw: bytes,
    *,
    max_depth: int = REWARD_SERVER_MAX_JSON_DEPTH,
    max_int_digits: int = REWARD_SERVER_MAX_INT_DIGITS,
) -> dict[str, Any]:
    """A reward request's body (:func:`crystalbench.serving.limits.decode_json_body`), with
    lone surrogates refused inside ``items``; a lone surrogate in a completion is model
    output: it fails the format check as ``invalid_unicode`` instead.

    Examples:
        >>> decode_request_body(b'{"completions": ["x"], "items": [null]}')
        {'completions': ['x'], 'items': [None]}
        >>> decode_request_body(b'{"completions": ["\\\\ud800"], "items": []}')["items"]
        []
        >>> decode_request_body(b'{"completions": [], "items": [{"a": "\\\\ud800"}]}')
        Traceback (most recent call last):
        ...
        ValueError: items hold a lone surrogate in '\\ud800'
    """
    return decode_json_body(
        raw, max_depth=max_depth, max_int_digits=max_int_digits, surrogate_fields=("items",)
    )


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
    min_body_bytes_per_s: float | None = None,
    body_grace_s: float = 0.0,
) -> Any:
    """The ASGI app: ``GET`` health routes, ``POST`` scoring routes, JSON errors everywhere
    (404, 405, and every :class:`HttpError` ``post`` raises), behind :class:`JsonRequestGuard`
    (header limit, bearer token, and the pace of request bodies when
    ``min_body_bytes_per_s`` is given)."""
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
    return JsonRequestGuard(
        app,
        token=token,
        max_header_bytes=max_header_bytes,
        realm="crystalbench-rewards",
        min_body_bytes_per_s=min_body_bytes_per_s,
        body_grace_s=body_grace_s,
    )


class JsonRequestGuard(_RequestGuard):
    """:class:`crystalbench.serving.limits.RequestGuard` answering ``{"error": message}``."""

    def refusal(self, status: HTTPStatus, message: str) -> tuple[bytes, bytes]:
        """A JSON refusal, as Starlette's ``JSONResponse`` renders it."""
        body = json.dumps({"error": message}, ensure_ascii=False, separators=(",", ":"))
        return b"application/json", body.encode("utf-8")


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
