"""``crystal serve-rewards``: one reward scorer shared by many trainer ranks over HTTP.

Why a server: every rank of a multi-GPU GRPO run would otherwise load its own encoder (and
must keep it out of ZeRO-3, see :mod:`~crystalbench.rewards.encoder_loading`). One server
holds one encoder and one reference cache, and coalesces the batches that ranks send at the
same training step into a single encoder pass.

Why the standard library (``http.server``) and not FastAPI/uvicorn: the server has three
routes and its cost is the encoder, not HTTP parsing; stdlib needs no extra dependency in a
training image, and reading ``Content-Length`` before the body lets it refuse oversize
requests (413) without reading them. Each connection gets a thread; all scoring happens on
one worker thread that owns the scorer (encoders are not thread-safe), so requests queue
there and are coalesced.

Routes (JSON in and out):

- ``GET /v1/health``: ``{"status": "ok", "config": {...}, "limits": {...}, "version": ...}``
  (503 with ``"status": "loading"`` until the encoder is loaded);
- ``POST /v1/signals``: ``{"completions": [str | null], "items": [item | null]}`` ->
  ``{"signals": [RewardSignals]}``; an item is the ground-truth layout of
  :mod:`crystalbench.rewards.items`;
- ``POST /v1/rewards``: the same plus optional ``"kind"`` -> ``{"rewards": [float | null],
  "breakdowns": [RewardBreakdown]}`` with the server's weights.

Errors: 400 malformed request or item, 404 unknown route, 411 no ``Content-Length``, 413
body over ``max_body_bytes`` or more than ``max_rows`` completions, 500 scoring failure, 504
no result within ``request_timeout_s``.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import Field

from crystalbench._version import __version__
from crystalbench.errors import CrystalbenchError
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.items import completion_text, item_from_fields
from crystalbench.rewards.scorer import RewardScorer
from crystalbench.rewards.types import REWARD_KINDS, RewardSignals
from crystalbench.types import BenchmarkItem, Record

__all__ = ["RewardServer", "ServerLimits"]


class ServerLimits(Record):
    """Bounds on what one request may ask and how batches are coalesced."""

    max_body_bytes: int = Field(32 * 1024 * 1024, ge=1024)
    """Largest request body; larger ones get 413 without being read."""
    max_rows: int = Field(4096, ge=1)
    """Most completions in one request (413 beyond)."""
    max_batch_rows: int = Field(8192, ge=1)
    """Rows coalesced from queued requests into one encoder pass."""
    max_wait_ms: float = Field(5.0, ge=0.0)
    """How long the worker waits for more requests to join a batch."""
    request_timeout_s: float = Field(600.0, gt=0.0)
    """How long a request waits for its result (504 beyond)."""


class _Job:
    def __init__(self, completions: list[Any], items: list[BenchmarkItem | None]) -> None:
        self.completions = completions
        self.items = items
        self.done = threading.Event()
        self.result: list[RewardSignals] | None = None
        self.error: BaseException | None = None


class _HttpError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class RewardServer:
    """The reward server (see module docstring).

    Args:
        scorer: A :class:`RewardScorer`, or a function building one; a function runs on the
            worker thread, so the encoder loads there (and the server answers health checks
            with 503 while it loads).
        host: Interface to bind (``127.0.0.1``: this machine only; ``0.0.0.0``: all).
        port: TCP port; 0 picks a free one (see :attr:`url`).
        limits: Request bounds and batching.
        verbose: Log every request to stderr.

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
        verbose: bool = False,
    ) -> None:
        self.limits = limits or ServerLimits()
        self.verbose = verbose
        self._factory = (
            scorer if callable(scorer) and not isinstance(scorer, RewardScorer) else None
        )
        self.scorer: RewardScorer | None = scorer if isinstance(scorer, RewardScorer) else None
        self._queue: queue.Queue[_Job] = queue.Queue()
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._startup_error: BaseException | None = None
        self.batches = 0
        """Encoder passes run (coalesced batches)."""
        self._http = ThreadingHTTPServer((host, port), _handler_class(self))
        self._http.daemon_threads = True
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        """Base URL clients use, e.g. ``http://127.0.0.1:8765``."""
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> RewardServer:
        """Serve in background threads; returns at once."""
        worker = threading.Thread(target=self._work, name="reward-worker", daemon=True)
        http = threading.Thread(target=self._http.serve_forever, name="reward-http", daemon=True)
        self._threads = [worker, http]
        worker.start()
        http.start()
        return self

    def serve_forever(self, on_ready: Callable[[RewardServer], None] | None = None) -> None:
        """Serve until interrupted (Ctrl-C) or :meth:`close`; ``on_ready`` runs once loaded."""
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

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the scorer is built; re-raises a failure to build it."""
        ready = self._ready.wait(timeout)
        if self._startup_error is not None:
            raise self._startup_error
        return ready

    def close(self) -> None:
        """Stop serving and release the port."""
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

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
            self._run(jobs)

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
                    job.result = self.scorer.signals(job.completions, job.items)
                except BaseException as exc:
                    job.error = exc
                job.done.set()
            return
        start = 0
        for job in jobs:
            job.result = signals[start : start + len(job.completions)]
            start += len(job.completions)
            job.done.set()

    def submit(
        self, completions: list[Any], items: list[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        """Queue a batch for the worker and wait for its signals (used by the handler)."""
        job = _Job(completions, items)
        self._queue.put(job)
        if not job.done.wait(self.limits.request_timeout_s):
            raise _HttpError(HTTPStatus.GATEWAY_TIMEOUT, "no result in time")
        if job.error is not None:
            if isinstance(job.error, CrystalbenchError):
                raise _HttpError(HTTPStatus.BAD_REQUEST, str(job.error))
            raise _HttpError(
                HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(job.error).__name__}: {job.error}"
            )
        assert job.result is not None
        return job.result

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
        }

    def handle(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one POST request body (already size-checked and JSON-decoded)."""
        if path not in ("/v1/signals", "/v1/rewards"):
            raise _HttpError(HTTPStatus.NOT_FOUND, f"no route {path}")
        completions = body.get("completions")
        raw_items = body.get("items")
        if not isinstance(completions, list) or not isinstance(raw_items, list):
            raise _HttpError(HTTPStatus.BAD_REQUEST, "expected lists 'completions' and 'items'")
        if len(completions) != len(raw_items):
            raise _HttpError(
                HTTPStatus.BAD_REQUEST,
                f"{len(completions)} completions for {len(raw_items)} items",
            )
        if len(completions) > self.limits.max_rows:
            raise _HttpError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"{len(completions)} rows; at most {self.limits.max_rows} per request",
            )
        kind = body.get("kind")
        if path == "/v1/rewards" and kind is not None and kind not in REWARD_KINDS:
            raise _HttpError(HTTPStatus.BAD_REQUEST, f"unknown reward kind {kind!r}")
        items: list[BenchmarkItem | None] = []
        for index, raw in enumerate(raw_items):
            if raw is not None and not isinstance(raw, dict):
                raise _HttpError(HTTPStatus.BAD_REQUEST, f"items[{index}] must be an object")
            try:
                items.append(item_from_fields(raw, where=f"items[{index}]") if raw else None)
            except CrystalbenchError as exc:
                raise _HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        texts = [completion_text(c) for c in completions]
        signals = self.submit(texts, items)
        if path == "/v1/signals":
            return {"signals": [s.model_dump(mode="json") for s in signals]}
        assert self.scorer is not None
        chosen = kind or self.scorer.kind
        breakdowns = [make_breakdown(s, chosen, self.scorer.weights) for s in signals]
        return {
            "rewards": [b.total for b in breakdowns],
            "breakdowns": [b.model_dump(mode="json") for b in breakdowns],
        }


def _handler_class(server: RewardServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = f"crystalbench-rewards/{__version__}"

        def log_message(self, format: str, *args: Any) -> None:
            if server.verbose:
                sys.stderr.write(f"{self.address_string()} - {format % args}\n")

        def _send(self, status: HTTPStatus, payload: dict[str, Any], close: bool = False) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/health", "/health"):
                status, payload = server.health()
                self._send(status, payload)
            else:
                self._send(HTTPStatus.NOT_FOUND, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            try:
                body = self._read_body()
                self._send(HTTPStatus.OK, server.handle(self.path, body))
            except _HttpError as exc:
                close = exc.status in (
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    HTTPStatus.LENGTH_REQUIRED,
                )
                self._send(exc.status, {"error": exc.message}, close=close)
            except Exception as exc:  # never let one request kill the handler thread silently
                self._send(
                    HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"}
                )

        def _read_body(self) -> dict[str, Any]:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                raise _HttpError(HTTPStatus.LENGTH_REQUIRED, "chunked bodies are not accepted")
            header = self.headers.get("Content-Length")
            if header is None:
                raise _HttpError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
            try:
                length = int(header)
            except ValueError:
                raise _HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
            if length < 0:
                raise _HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
            if length > server.limits.max_body_bytes:
                raise _HttpError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"body of {length} bytes; at most {server.limits.max_body_bytes}",
                )
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise _HttpError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from None
            if not isinstance(body, dict):
                raise _HttpError(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
            return body

    return Handler
