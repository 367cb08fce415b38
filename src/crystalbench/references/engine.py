"""Engines that answer generation and validation requests: the shared request shapes and
the local (asyncio) engine.

A pipeline pass hands an engine a list of :class:`Job` (one request each: item, model,
rendered prompt, sampling settings with the request's seed) and a callback; the engine
calls the callback with one :class:`JobResult` per job as soon as it exists, so the
pipeline can journal it at once. Engines never raise on a failed request: it becomes a
result with ``error_kind`` (retried by the pipeline with the next attempt). Only a
backend's *fatal* errors (bad key, unknown model) stop the run
(:class:`~crystalbench.inference.InferenceAbortedError`).

:class:`LocalEngine` runs the requests in this process through the inference backends
(:class:`~crystalbench.inference.backends.openai_compat.OpenAIChatBackend`: replicas,
per-URL concurrency, total deadlines), with the inference runner's retry rules: retryable
errors (timeouts, connection errors, 408/409/429/5xx) back off and retry (honouring
``Retry-After``), a too-large image is re-sent smaller. Each item's image is prepared once
and shared by every job of the item, then dropped when the item's last job is done.
The Ray engine (:mod:`crystalbench.references.ray_engine`) takes the same jobs.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from crystalbench._internal.openai_client import api_key_from_env
from crystalbench.errors import InputError
from crystalbench.inference.backends.base import (
    AsyncBackend,
    BackendError,
    GenerationRequest,
    InferenceAbortedError,
    describe_error,
)
from crystalbench.inference.images import PreparedImage, prepare_image
from crystalbench.inference.records import GenerationSettings
from crystalbench.inference.retry import RetryPolicy, complete_with_retries
from crystalbench.references.config import ModelEndpoint, ReferencesConfig


@dataclass(frozen=True)
class Job:
    """One request for an engine."""

    key: str
    """Journal key of the record this request produces."""
    item_id: str
    model: str
    """Endpoint name (a generator's or the validator's)."""
    prompt: str
    settings: GenerationSettings
    """Sampling settings, the request's seed included."""
    image_path: str | None = None
    """The item's image file (read by remote workers; the local engine uses the benchmark)."""


@dataclass(frozen=True)
class JobResult:
    """What one request gave."""

    key: str
    text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    endpoint: str | None = None
    error: str | None = None
    error_kind: str | None = None
    fatal: bool = False
    """The backend said every request will fail this way (bad key, unknown model)."""
    http_attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @property
    def usage(self) -> dict[str, Any]:
        """What the backend reported (finish reason, tokens, latency), as record fields."""
        return {
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
        }


ImageSource = Callable[[str], bytes | None]
"""Item id -> the item's image bytes (``None``: no image); raises on a bad image."""


class Engine(Protocol):
    """What the pipeline needs from an engine."""

    name: str

    def run(
        self, jobs: Sequence[Job], images: ImageSource, on_result: Callable[[JobResult], None]
    ) -> None:
        """Answer every job, calling ``on_result`` once per job."""
        ...

    def close(self) -> None:
        """Release clients and workers."""
        ...


def endpoint_api_key(endpoint: ModelEndpoint) -> str | None:
    """The API key from the endpoint's variable (``OPENAI_API_KEY`` may be unset).

    Raises:
        InputError: Another variable is named and not set.
    """
    return api_key_from_env(endpoint.api_key_env, what=f"model {endpoint.name}")


def check_endpoint_urls(config: ReferencesConfig) -> None:
    """Refuse a configuration whose models the HTTP engines cannot reach: every generator
    (and the validator, when it runs) needs a base URL. All of them are named at once.

    Raises:
        InputError: Models without a base URL, with the flag that gives each one.

    Examples:
        >>> from crystalbench.references.config import load_references_config
        >>> config = load_references_config(overrides={
        ...     "generators": [{"name": "qwen"}, {"name": "gemma", "base_urls": ["http://h/v1"]}],
        ...     "validate": False})
        >>> check_endpoint_urls(config)
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field base_urls: generator 'qwen' has no base URL: \
pass --generator 'qwen=http://HOST:PORT/v1' (or set its base_urls in the config file)
    """
    flags = [
        f"generator {g.name!r} has no base URL: pass --generator '{g.name}=http://HOST:PORT/v1'"
        for g in config.generators
        if not g.base_urls
    ]
    validator = config.validator
    if config.validating and validator is not None and not validator.base_urls:
        flags.append(
            f"the validator {validator.name!r} has no base URL: pass --validator "
            f"'{validator.name}=http://HOST:PORT/v1' (or --no-validator to accept every "
            "consensus chain)"
        )
    if flags:
        raise InputError(
            "; ".join(flags) + " (or set its base_urls in the config file)", field="base_urls"
        )


def build_endpoint_backend(endpoint: ModelEndpoint, config: ReferencesConfig) -> AsyncBackend:
    """The OpenAI-compatible backend of one endpoint.

    Raises:
        InputError: The endpoint has no base URL, or its key variable is unset.
    """
    from crystalbench.inference.backends.openai_compat import OpenAIChatBackend

    if not endpoint.base_urls:
        raise InputError(
            f"model {endpoint.name!r} has no base URL: pass --generator/--validator "
            f"'{endpoint.name}=http://HOST:PORT/v1' or set base_urls in the config",
            field="base_urls",
        )
    return OpenAIChatBackend(
        endpoint.served,
        endpoint.base_urls,
        api_key=endpoint_api_key(endpoint),
        concurrency=endpoint.concurrency,
        timeout=config.timeout,
        max_retry_after=config.max_retry_after,
        extra_body=endpoint.extra_body,
    )


async def answer_job(
    backend: AsyncBackend,
    job: Job,
    image: PreparedImage | None,
    retry: RetryPolicy,
    rng: random.Random,
    image_max_side: int | None,
) -> JobResult:
    """One request with the inference runner's retry rules; never raises except on a
    fatal backend error (returned as ``fatal``)."""
    request = GenerationRequest(
        item_id=job.key,
        prompt=job.prompt,
        image=image,
        settings=job.settings,
        image_max_side=image_max_side,
    )
    outcome = await complete_with_retries(backend, request, retry, rng)
    error, completion = outcome.error, outcome.completion
    if isinstance(error, BackendError):
        return JobResult(
            key=job.key,
            error=str(error),
            error_kind=error.kind,
            fatal=error.fatal,
            endpoint=None if error.fatal else error.endpoint,
            http_attempts=outcome.attempts,
        )
    if error is not None or completion is None:
        return JobResult(
            key=job.key,
            error=describe_error(error) if error is not None else "no completion",
            error_kind="unexpected",
            http_attempts=outcome.attempts,
        )
    return JobResult(
        key=job.key,
        text=completion.text,
        finish_reason=completion.finish_reason,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        latency_s=None if completion.latency_s is None else round(completion.latency_s, 4),
        endpoint=completion.endpoint,
        http_attempts=outcome.attempts,
    )


class LocalEngine:
    """Requests from this process, many in flight (see the module docstring).

    Args:
        config: Gives the endpoints, timeouts, retries and image size.
        backends: Backends by endpoint name instead of building them (tests, benchmarks).
        retry: Retry policy instead of the configuration's (tests use short waits).
        seed: Seed of the backoff jitter.
    """

    name = "local"

    def __init__(
        self,
        config: ReferencesConfig,
        *,
        backends: Mapping[str, AsyncBackend] | None = None,
        retry: RetryPolicy | None = None,
        seed: int = 0,
    ) -> None:
        self.config = config
        self.retry = retry or config.retry_policy()
        self.rng = random.Random(seed)
        self._given = dict(backends or {})
        self._backends: dict[str, AsyncBackend] = {}
        self._loop = asyncio.new_event_loop()
        endpoints = list(config.generators)
        if config.validating and config.validator is not None:
            endpoints.append(config.validator)
        self.endpoints = {e.name: e for e in endpoints}

    def backend(self, name: str) -> AsyncBackend:
        """The backend of one endpoint (built on first use)."""
        if name not in self._backends:
            given = self._given.get(name)
            self._backends[name] = (
                given
                if given is not None
                else build_endpoint_backend(self.endpoints[name], self.config)
            )
        return self._backends[name]

    def preflight(self) -> list[str]:
        """Check every endpoint before the first request; returns warnings.

        Raises:
            BackendUnavailableError / InferenceAbortedError / UnknownNameError: An endpoint
                is unreachable, refuses the key or does not serve the model.
        """

        async def check() -> list[str]:
            warnings: list[str] = []
            for name in self.endpoints:
                backend = self.backend(name)
                if hasattr(backend, "preflight"):
                    warnings.extend(f"{name}: {w}" for w in await backend.preflight())
            return warnings

        return self._loop.run_until_complete(check())

    def run(
        self, jobs: Sequence[Job], images: ImageSource, on_result: Callable[[JobResult], None]
    ) -> None:
        """Answer ``jobs`` (grouped per model, items in the given order)."""
        if jobs:
            self._loop.run_until_complete(self._run(jobs, images, on_result))

    async def _run(
        self, jobs: Sequence[Job], images: ImageSource, on_result: Callable[[JobResult], None]
    ) -> None:
        queues: dict[str, asyncio.Queue[Job]] = defaultdict(asyncio.Queue)
        remaining: dict[str, int] = defaultdict(int)
        for job in jobs:
            queues[job.model].put_nowait(job)
            remaining[job.item_id] += 1
        prepared: dict[str, PreparedImage | Exception | None] = {}
        aborted: list[JobResult] = []

        def image_for(item_id: str) -> PreparedImage | None:
            if item_id not in prepared:
                try:
                    prepared[item_id] = prepare_image(images(item_id), self.config.max_image_side)
                except Exception as exc:  # a bad image fails this item's jobs only
                    prepared[item_id] = exc
            value = prepared[item_id]
            if isinstance(value, Exception):
                raise value
            return value

        def done(job: Job, result: JobResult) -> None:
            remaining[job.item_id] -= 1
            if remaining[job.item_id] == 0:
                prepared.pop(job.item_id, None)
            on_result(result)
            if result.fatal:
                aborted.append(result)

        async def worker(model: str, queue: asyncio.Queue[Job]) -> None:
            backend = self.backend(model)
            while not aborted:
                try:
                    job = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                started = time.perf_counter()
                try:
                    image = image_for(job.item_id)
                except Exception as exc:
                    message = describe_error(exc)
                    done(
                        job,
                        JobResult(key=job.key, error=message, error_kind="image", http_attempts=0),
                    )
                    continue
                result = await answer_job(
                    backend, job, image, self.retry, self.rng, self.config.max_image_side
                )
                if result.latency_s is None and result.ok:
                    result = JobResult(
                        **{**result.__dict__, "latency_s": time.perf_counter() - started}
                    )
                done(job, result)

        tasks: list[asyncio.Future[None]] = []
        for model, queue in queues.items():
            backend = self.backend(model)
            n_workers = max(1, min(queue.qsize(), 2 * backend.max_in_flight))
            tasks.extend(asyncio.ensure_future(worker(model, queue)) for _ in range(n_workers))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if aborted:
            first = aborted[0]
            raise InferenceAbortedError(
                f"stopping: {first.error}. Every request to this model would fail the same way; "
                "fix the endpoint, key or model name, then rerun the same command to resume"
            )

    def close(self) -> None:
        """Close every backend and the event loop."""

        async def shut() -> None:
            for backend in self._backends.values():
                await backend.aclose()

        if not self._loop.is_closed():
            try:
                self._loop.run_until_complete(shut())
            finally:
                self._loop.close()
        self._backends.clear()
