"""``crystal serve-rewards``: one reward scorer shared by many trainer ranks over HTTP.

Why a server: every rank of a multi-GPU GRPO run would otherwise load its own encoder (and
must keep it out of ZeRO-3, see :mod:`~crystalbench.rewards.encoder_loading`). One server
holds one encoder and one reference cache, and coalesces the batches that ranks send at the
same training step into a single encoder pass.

It is a Starlette app served by uvicorn (``pip install 'crystalbench[serve]'``; the HTTP
layer is :mod:`crystalbench.rewards.server_http`, its guards and connection handling
:mod:`crystalbench.serving`'s, shared with the review app). Every bound is explicit
(:class:`ServerLimits`, defaults in :mod:`crystalbench.defaults`):

- connections: a listen backlog of 2,048; beyond ``max_connections`` open connections new
  requests get 503 at once (uvicorn's ``limit_concurrency``; the client retries 503);
- slow or silent clients: a connection idle for ``idle_timeout_s`` (before its first request
  or between requests) is closed, request headers must arrive within ``header_timeout_s``,
  a body must keep arriving at ``min_body_bytes_per_s`` on average once its first
  ``body_grace_s`` seconds are over and be whole within ``body_timeout_s`` (408 and the
  connection closed otherwise: :func:`crystalbench.serving.limits.paced_receive`, the rule
  the review app applies too), headers are capped at ``max_header_bytes`` (431);
- work: a request is read first, holding no scoring slot (bodies being read reserve their
  ``Content-Length`` from ``max_buffered_body_bytes``, which bounds their memory), then at
  most ``max_active_requests`` requests are decoded and scored at once (the others wait
  their turn, up to ``request_timeout_s``), so clients that announce a body and send it
  slowly or never cannot delay anyone else's request; bodies are decoded and replies
  encoded on ``decode_workers`` threads, never on the event loop; all scoring happens on one
  worker thread that owns the scorer (encoders are not thread-safe), where queued requests
  are coalesced into one encoder pass;
- bodies: a ``Content-Length`` over ``max_body_bytes`` gets 413 without the body being read,
  more than ``max_rows`` completions get 413; bodies that are not UTF-8, not JSON, nested
  deeper than ``max_json_depth``, with integer literals over ``max_int_digits`` digits,
  ``NaN`` / ``Infinity`` / overflowing numbers, a key repeated in one object, or values of
  the wrong type get 400 with a JSON error, never 500.

With a bearer token (``token=``, ``--token`` or ``CRYSTALBENCH_REWARD_TOKEN``) every request
must carry ``Authorization: Bearer <token>`` (compared in constant time; 401 otherwise).
The server binds to loopback by default and warns when it listens beyond it without a
token. Client disconnects are not logged (no tracebacks); ``verbose`` adds an access log.

Routes (JSON in and out):

- ``GET /v1/health``: ``{"status": "ok", "config": {...}, "limits": {...}, "version": ...}``
  (503 with ``"status": "loading"`` until the encoder is loaded);
- ``POST /v1/signals``: ``{"completions": [str | null], "items": [item | null]}`` ->
  ``{"signals": [RewardSignals]}``; an item is the ground-truth layout of
  :mod:`crystalbench.rewards.items`;
- ``POST /v1/rewards``: the same plus optional ``"kind"`` -> ``{"rewards": [float | null],
  "breakdowns": [RewardBreakdown]}`` with the server's weights.

Errors (``{"error": message}``): 400 malformed request or item, 401 missing or wrong token,
404 unknown route, 405 wrong method, 408 body too slow, 411 no ``Content-Length`` (or a
chunked body), 413 body over ``max_body_bytes`` or more than ``max_rows`` completions, 431
headers too large, 500 scoring failure, 503 loading or busy, 504 no result within
``request_timeout_s``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from http import HTTPStatus
from typing import Any

from pydantic import Field

from crystalbench._version import __version__
from crystalbench.config.settings import (
    REWARD_SERVER_BACKLOG,
    REWARD_SERVER_BODY_TIMEOUT_S,
    REWARD_SERVER_DECODE_WORKERS,
    REWARD_SERVER_HEADER_TIMEOUT_S,
    REWARD_SERVER_IDLE_TIMEOUT_S,
    REWARD_SERVER_MAX_ACTIVE_REQUESTS,
    REWARD_SERVER_MAX_BATCH_ROWS,
    REWARD_SERVER_MAX_BODY_BYTES,
    REWARD_SERVER_MAX_BUFFERED_BODY_BYTES,
    REWARD_SERVER_MAX_CONNECTIONS,
    REWARD_SERVER_MAX_HEADER_BYTES,
    REWARD_SERVER_MAX_INT_DIGITS,
    REWARD_SERVER_MAX_JSON_DEPTH,
    REWARD_SERVER_MAX_ROWS,
    REWARD_SERVER_MAX_WAIT_MS,
    REWARD_SERVER_REQUEST_TIMEOUT_S,
    REWARD_SERVER_SHUTDOWN_TIMEOUT_S,
    SERVING_BODY_GRACE_S,
    SERVING_MIN_BODY_BYTES_PER_S,
)
from crystalbench.errors import CrystalbenchError
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.items import completion_text, item_from_fields
from crystalbench.rewards.scorer import RewardScorer
from crystalbench.rewards.server_http import (
    build_app,
    configure_logging,
    decode_request_body,
    require_server_stack,
)
from crystalbench.rewards.types import REWARD_KINDS, RewardSignals
from crystalbench.serving.connections import bind_socket, guarded_protocol, is_loopback
from crystalbench.serving.limits import (
    BodyBudget,
    HttpError,
    check_body_length,
    read_request_body,
)
from crystalbench.types import BenchmarkItem, Record

__all__ = ["RewardServer", "ServerLimits", "configure_logging", "is_loopback"]

logger = logging.getLogger("crystalbench.rewards.server")

_POST_ROUTES = ("/v1/signals", "/v1/rewards")
_HEALTH_ROUTES = ("/v1/health", "/health")


class ServerLimits(Record):
    """Bounds on what one request may ask, how batches are coalesced, and on connections."""

    max_body_bytes: int = Field(REWARD_SERVER_MAX_BODY_BYTES, ge=1024)
    """Largest request body; larger ones get 413 without being read."""
    max_rows: int = Field(REWARD_SERVER_MAX_ROWS, ge=1)
    """Most completions in one request (413 beyond)."""
    max_batch_rows: int = Field(REWARD_SERVER_MAX_BATCH_ROWS, ge=1)
    """Rows coalesced from queued requests into one encoder pass."""
    max_wait_ms: float = Field(REWARD_SERVER_MAX_WAIT_MS, ge=0.0)
    """How long the worker waits for more requests to join a batch."""
    request_timeout_s: float = Field(REWARD_SERVER_REQUEST_TIMEOUT_S, gt=0.0)
    """How long a request waits for its turn (503 beyond) and its result (504 beyond)."""
    max_connections: int = Field(REWARD_SERVER_MAX_CONNECTIONS, ge=1)
    """Open connections beyond which new requests get 503 at once."""
    max_active_requests: int = Field(REWARD_SERVER_MAX_ACTIVE_REQUESTS, ge=1)
    """Requests decoded and scored at once (taken once the body has arrived); the others wait
    their turn."""
    max_buffered_body_bytes: int = Field(REWARD_SERVER_MAX_BUFFERED_BODY_BYTES, ge=1024)
    """Bytes of bodies read at once over all connections (each reserves its
    ``Content-Length``; one that does not fit waits, up to ``request_timeout_s``)."""
    decode_workers: int = Field(REWARD_SERVER_DECODE_WORKERS, ge=1)
    """Threads that decode request bodies and encode replies."""
    idle_timeout_s: float = Field(REWARD_SERVER_IDLE_TIMEOUT_S, gt=0.0)
    """A connection silent this long (before or between requests) is closed."""
    header_timeout_s: float = Field(REWARD_SERVER_HEADER_TIMEOUT_S, gt=0.0)
    """Seconds from a request's first byte to the end of its headers (closed beyond)."""
    body_timeout_s: float = Field(REWARD_SERVER_BODY_TIMEOUT_S, gt=0.0)
    """Seconds for the whole body to arrive after the headers (408 beyond)."""
    min_body_bytes_per_s: float = Field(SERVING_MIN_BODY_BYTES_PER_S, gt=0.0)
    """Slowest average pace of a body once ``body_grace_s`` is over (408 beyond)."""
    body_grace_s: float = Field(SERVING_BODY_GRACE_S, ge=0.0)
    """Seconds a body may take before ``min_body_bytes_per_s`` applies."""
    max_header_bytes: int = Field(REWARD_SERVER_MAX_HEADER_BYTES, ge=1024)
    """Largest request line plus headers (431 beyond; 400 when they arrive in pieces)."""
    max_json_depth: int = Field(REWARD_SERVER_MAX_JSON_DEPTH, ge=8)
    """Deepest nesting of arrays and objects in a body (400 beyond)."""
    max_int_digits: int = Field(REWARD_SERVER_MAX_INT_DIGITS, ge=1)
    """Longest integer literal in a body, in digits (400 beyond)."""


class _Job:
    __slots__ = ("completions", "future", "items")

    def __init__(self, completions: list[Any], items: list[BenchmarkItem | None]) -> None:
        self.completions = completions
        self.items = items
        self.future: Future[list[RewardSignals]] = Future()


class _Prepared:
    """A validated scoring request: what to score, and how to reply."""

    __slots__ = ("items", "kind", "path", "texts")

    def __init__(
        self, path: str, texts: list[Any], items: list[BenchmarkItem | None], kind: str | None
    ) -> None:
        self.path = path
        self.texts = texts
        self.items = items
        self.kind = kind


# --------------------------------------------------------------------------- the server


class RewardServer:
    """The reward server (see module docstring).

    Args:
        scorer: A :class:`RewardScorer`, or a function building one; a function runs on the
            worker thread, so the encoder loads there (and the server answers health checks
            with 503 while it loads).
        host: Interface to bind (``127.0.0.1``: this machine only; ``0.0.0.0``: all).
        port: TCP port; 0 picks a free one (see :attr:`url`).
        limits: Request, connection and batching bounds.
        token: Bearer token every request must carry; ``None``: no authentication (warned
            about when ``host`` is not loopback).
        verbose: Log every request (uvicorn's access log) at INFO.

    Raises:
        OSError: The address cannot be bound (in use, not an interface of this machine).

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> with RewardServer(RewardScorer(HashEncoder()), port=0) as server:
        ...     server.url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(
        self,
        scorer: RewardScorer | Callable[[], RewardScorer],
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        limits: ServerLimits | None = None,
        token: str | None = None,
        verbose: bool = False,
    ) -> None:
        require_server_stack()
        import uvicorn

        self.limits = limits or ServerLimits()
        self.verbose = verbose
        self.host = host
        self._token = token or None
        self._factory = (
            scorer if callable(scorer) and not isinstance(scorer, RewardScorer) else None
        )
        self.scorer: RewardScorer | None = scorer if isinstance(scorer, RewardScorer) else None
        self._queue: queue.Queue[_Job] = queue.Queue()
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._closed = False
        self._startup_error: BaseException | None = None
        self.batches = 0
        """Encoder passes run (coalesced batches)."""
        self._decoders = ThreadPoolExecutor(
            self.limits.decode_workers, thread_name_prefix="reward-decode"
        )
        self._active: asyncio.Semaphore | None = None
        self._bodies = BodyBudget(self.limits.max_buffered_body_bytes)
        self._socket = bind_socket(host, port, REWARD_SERVER_BACKLOG)
        app = build_app(
            health=self.health,
            post=self._respond_post,
            post_routes=_POST_ROUTES,
            health_routes=_HEALTH_ROUTES,
            token=self._token,
            max_header_bytes=self.limits.max_header_bytes,
            min_body_bytes_per_s=self.limits.min_body_bytes_per_s,
            body_grace_s=self.limits.body_grace_s,
        )
        self._uvicorn = uvicorn.Server(
            uvicorn.Config(
                app,
                http=guarded_protocol(
                    idle_timeout_s=self.limits.idle_timeout_s,
                    header_timeout_s=self.limits.header_timeout_s,
                ),
                lifespan="off",
                log_config=None,
                log_level=logging.INFO if verbose else logging.WARNING,
                access_log=verbose,
                limit_concurrency=self.limits.max_connections,
                backlog=REWARD_SERVER_BACKLOG,
                timeout_keep_alive=max(1, math.ceil(self.limits.idle_timeout_s)),
                timeout_graceful_shutdown=math.ceil(REWARD_SERVER_SHUTDOWN_TIMEOUT_S),
                h11_max_incomplete_event_size=self.limits.max_header_bytes,
                server_header=False,
            )
        )
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        """Base URL clients use, e.g. ``http://127.0.0.1:8765``."""
        host, port = self._socket.getsockname()[:2]
        if ":" in str(host):
            host = f"[{host}]"
        return f"http://{host!s}:{port}"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> RewardServer:
        """Serve in background threads; returns at once (the socket is already listening)."""
        if self._token is None and not is_loopback(self.host):
            logger.warning(
                "the reward server listens on %s without a token: anyone who can reach this "
                "machine can use it; set --token or CRYSTALBENCH_REWARD_TOKEN",
                self.host,
            )
        worker = threading.Thread(target=self._work, name="reward-worker", daemon=True)
        http = threading.Thread(target=self._serve_http, name="reward-http", daemon=True)
        self._threads = [worker, http]
        worker.start()
        http.start()
        return self

    def _serve_http(self) -> None:
        asyncio.run(self._uvicorn.serve(sockets=[self._socket]))

    def serve_forever(self, on_ready: Callable[[RewardServer], None] | None = None) -> None:
        """Serve until interrupted (Ctrl-C, SIGTERM) or :meth:`close`; ``on_ready`` runs once
        the scorer is loaded. Open requests get a few seconds to finish on the way out."""
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, lambda *_: self._stopping.set())
        self.start()
        try:
            while not self._ready.wait(0.2):
                pass
            if self._startup_error is not None:
                raise self._startup_error
            if on_ready is not None:
                on_ready(self)
            while not self._stopping.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the scorer is built; re-raises a failure to build it."""
        ready = self._ready.wait(timeout)
        if self._startup_error is not None:
            raise self._startup_error
        return ready

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        self._uvicorn.should_exit = True
        for thread in self._threads:
            thread.join(timeout=REWARD_SERVER_SHUTDOWN_TIMEOUT_S + 5)
        self._socket.close()
        self._decoders.shutdown(wait=False, cancel_futures=True)
        while True:  # nothing is left waiting on a job the worker will never run
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(RuntimeError("the reward server is shutting down"))

    def __enter__(self) -> RewardServer:
        self.start()
        self.wait_ready()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ worker
    def _work(self) -> None:
        try:
            if self.scorer is None:
                assert self._factory is not None
                self.scorer = self._factory()
        except BaseException as exc:  # reported by wait_ready / serve_forever / health
            self._startup_error = exc
            self._ready.set()
            return
        self._ready.set()
        while not self._stopping.is_set():
            try:
                job = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            jobs = [job]
            rows = len(job.completions)
            deadline = time.monotonic() + self.limits.max_wait_ms / 1000.0
            while rows < self.limits.max_batch_rows:
                remaining = deadline - time.monotonic()
                try:
                    more = (
                        self._queue.get(timeout=remaining)
                        if remaining > 0
                        else self._queue.get_nowait()
                    )
                except queue.Empty:
                    break
                jobs.append(more)
                rows += len(more.completions)
            # Requests that timed out meanwhile were cancelled: they cost nothing.
            live = [j for j in jobs if j.future.set_running_or_notify_cancel()]
            if live:
                self._run(live)

    def _run(self, jobs: Sequence[_Job]) -> None:
        assert self.scorer is not None
        self.batches += 1
        try:
            signals = self.scorer.signals(
                [c for job in jobs for c in job.completions],
                [i for job in jobs for i in job.items],
            )
        except BaseException:
            # One request's bad data must not fail the others coalesced with it.
            for job in jobs:
                try:
                    job.future.set_result(self.scorer.signals(job.completions, job.items))
                except BaseException as exc:
                    job.future.set_exception(exc)
            return
        start = 0
        for job in jobs:
            job.future.set_result(signals[start : start + len(job.completions)])
            start += len(job.completions)

    def _enqueue(self, completions: list[Any], items: list[BenchmarkItem | None]) -> _Job:
        if self._startup_error is not None:  # a request while loading waits for the encoder
            raise HttpError(HTTPStatus.INTERNAL_SERVER_ERROR, "the scorer failed to load")
        job = _Job(completions, items)
        self._queue.put(job)
        return job

    def submit(
        self, completions: list[Any], items: list[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        """Queue a batch for the worker and wait for its signals."""
        job = self._enqueue(completions, items)
        try:
            return job.future.result(self.limits.request_timeout_s)
        except FutureTimeout:
            job.future.cancel()
            raise HttpError(HTTPStatus.GATEWAY_TIMEOUT, "no result in time") from None
        except BaseException as exc:
            raise _scoring_error(exc) from None

    async def _submit_async(
        self, completions: list[Any], items: list[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        job = self._enqueue(completions, items)
        try:
            return await asyncio.wait_for(
                asyncio.wrap_future(job.future), self.limits.request_timeout_s
            )
        except asyncio.TimeoutError:
            raise HttpError(HTTPStatus.GATEWAY_TIMEOUT, "no result in time") from None
        except asyncio.CancelledError:
            job.future.cancel()
            raise
        except Exception as exc:
            raise _scoring_error(exc) from None

    # ------------------------------------------------------------------ requests
    def health(self) -> tuple[HTTPStatus, dict[str, Any]]:
        """Status code and body of ``GET /v1/health``."""
        if self._startup_error is not None:
            return HTTPStatus.INTERNAL_SERVER_ERROR, {
                "status": "failed",
                "error": f"{type(self._startup_error).__name__}: {self._startup_error}",
            }
        if not self._ready.is_set() or self.scorer is None:
            return HTTPStatus.SERVICE_UNAVAILABLE, {"status": "loading"}
        return HTTPStatus.OK, {
            "status": "ok",
            "version": __version__,
            "config": self.scorer.config_record(),
            "limits": self.limits.model_dump(),
            "batches": self.batches,
            "auth": "bearer" if self._token else "none",
        }

    def handle(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one POST request body (already size-checked and JSON-decoded)."""
        prepared = self._prepare(path, body)
        return self._reply(prepared, self.submit(prepared.texts, prepared.items))

    def _prepare(self, path: str, body: dict[str, Any]) -> _Prepared:
        if path not in _POST_ROUTES:
            raise HttpError(HTTPStatus.NOT_FOUND, f"no route {path}")
        completions = body.get("completions")
        raw_items = body.get("items")
        if not isinstance(completions, list) or not isinstance(raw_items, list):
            raise HttpError(HTTPStatus.BAD_REQUEST, "expected lists 'completions' and 'items'")
        if len(completions) != len(raw_items):
            raise HttpError(
                HTTPStatus.BAD_REQUEST,
                f"{len(completions)} completions for {len(raw_items)} items",
            )
        if len(completions) > self.limits.max_rows:
            raise HttpError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"{len(completions)} rows; at most {self.limits.max_rows} per request",
            )
        kind = body.get("kind")
        if path == "/v1/rewards" and kind is not None and kind not in REWARD_KINDS:
            raise HttpError(HTTPStatus.BAD_REQUEST, f"unknown reward kind {kind!r}")
        items: list[BenchmarkItem | None] = []
        for index, raw in enumerate(raw_items):
            if raw is not None and not isinstance(raw, dict):
                raise HttpError(HTTPStatus.BAD_REQUEST, f"items[{index}] must be an object")
            try:
                items.append(item_from_fields(raw, where=f"items[{index}]") if raw else None)
            except CrystalbenchError as exc:
                raise HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        texts = [completion_text(c) for c in completions]
        return _Prepared(path, texts, items, kind)

    def _reply(self, prepared: _Prepared, signals: list[RewardSignals]) -> dict[str, Any]:
        if prepared.path == "/v1/signals":
            return {"signals": [s.model_dump(mode="json") for s in signals]}
        assert self.scorer is not None
        chosen = prepared.kind or self.scorer.kind
        breakdowns = [make_breakdown(s, chosen, self.scorer.weights) for s in signals]
        return {
            "rewards": [b.total for b in breakdowns],
            "breakdowns": [b.model_dump(mode="json") for b in breakdowns],
        }

    def _decode(self, path: str, raw: bytes) -> _Prepared:
        try:
            body = decode_request_body(
                raw,
                max_depth=self.limits.max_json_depth,
                max_int_digits=self.limits.max_int_digits,
            )
        except ValueError as exc:
            raise HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        return self._prepare(path, body)

    def _encode_reply(self, prepared: _Prepared, signals: list[RewardSignals]) -> bytes:
        return json.dumps(self._reply(prepared, signals), allow_nan=False).encode("utf-8")

    async def _respond_post(self, request: Any) -> Any:
        """One POST, from a Starlette request to a response: the body within its limits (read
        before a scoring slot is taken, its bytes reserved from the body budget), then
        decoding and validation on a decode thread and scoring on the worker, in a slot."""
        from starlette.requests import ClientDisconnect
        from starlette.responses import Response

        length = check_body_length(request.headers, self.limits.max_body_bytes)
        try:
            await asyncio.wait_for(self._bodies.reserve(length), self.limits.request_timeout_s)
        except asyncio.TimeoutError:
            raise HttpError(HTTPStatus.SERVICE_UNAVAILABLE, "the server is busy") from None
        try:
            try:
                raw = await read_request_body(request, self.limits.body_timeout_s)
            except ClientDisconnect:  # nobody is left to read a reply
                return Response(status_code=HTTPStatus.BAD_REQUEST)
            if self._active is None:  # bound to the server's event loop on first use
                self._active = asyncio.Semaphore(self.limits.max_active_requests)
            try:
                await asyncio.wait_for(self._active.acquire(), self.limits.request_timeout_s)
            except asyncio.TimeoutError:
                raise HttpError(HTTPStatus.SERVICE_UNAVAILABLE, "the server is busy") from None
            try:
                loop = asyncio.get_running_loop()
                path = request.url.path
                prepared = await loop.run_in_executor(self._decoders, self._decode, path, raw)
                signals = await self._submit_async(prepared.texts, prepared.items)
                content = await loop.run_in_executor(
                    self._decoders, self._encode_reply, prepared, signals
                )
            finally:
                self._active.release()
        finally:
            await self._bodies.release(length)
        return Response(content, media_type="application/json")


def _scoring_error(exc: BaseException) -> HttpError:
    if isinstance(exc, HttpError):
        return exc
    if isinstance(exc, CrystalbenchError):
        return HttpError(HTTPStatus.BAD_REQUEST, str(exc))
    logger.error("scoring failed: %s: %s", type(exc).__name__, exc, exc_info=exc)
    return HttpError(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")
