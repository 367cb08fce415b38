"""Any OpenAI-compatible chat endpoint: vLLM, SGLang, LMDeploy, Ollama, OpenAI and other APIs.

Requests go through the official ``openai`` ``AsyncOpenAI`` client with its own retries
disabled (``max_retries=0``): the runner retries, with backoff that honours
``Retry-After``, and downscales images a server rejects as too large. Several base URLs
form a :class:`ReplicaPool`: each request goes to the least-loaded healthy replica, each
replica has its own in-flight limit, and a replica that fails (connection refused,
repeated 5xx, 429) cools down while the others take the load.

The request body is serialised once per item and image size and sent as raw bytes
(``client.post(..., content=...)``), which skips the SDK's per-call parameter
transformation: the client side then costs well under a millisecond per request.

**Deadlines.** The HTTP client's read timeout applies to each chunk it waits for, so a
server that sends a byte now and then would hold a request forever. Every request (and
the preflight) therefore also runs under one total deadline (``timeout``): when it
passes, the request is cancelled, its connection closed, and the attempt fails as a
retryable ``timeout``. ``Retry-After`` waits are cut to ``max_retry_after`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
import sys
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from crystalbench._internal.openai_client import (
    async_openai_client,
    default_base_url,
    require_openai,
)
from crystalbench.config.settings import (
    INFER_CONCURRENCY,
    INFER_CONNECT_TIMEOUT,
    INFER_MAX_RETRY_AFTER,
    INFER_PREFLIGHT_TIMEOUT,
    INFER_REPLICA_MAX_COOLDOWN,
    INFER_TIMEOUT,
)
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.inference.backends.base import (
    BackendError,
    BackendUnavailableError,
    Completion,
    GenerationRequest,
)
from crystalbench.inference.retry import parse_retry_after

DEFAULT_CONCURRENCY = INFER_CONCURRENCY
"""Requests in flight per base URL."""

DEFAULT_TIMEOUT = INFER_TIMEOUT
"""Seconds one request may take in all (long generations on a busy server take minutes)."""

TOO_LARGE_PATTERN = re.compile(
    r"too (large|big|long)|exceed|max(imum)?[ _](image|side|size|dimension|pixels|resolution)"
    r"|max_pixels|image size|resolution|dimension|entity too large|context length|too many tokens",
    re.IGNORECASE,
)
"""Messages of 400/413 answers that mean "send a smaller image"."""

IMAGE_PLACEHOLDER = "\u0000crystalbench-image\u0000"
"""Stands for the image URL while the body is serialised (a NUL never occurs in prompts)."""
_PLACEHOLDER_JSON = json.dumps(IMAGE_PLACEHOLDER).encode()

MAX_TOKENS_PARAMETER = re.compile(r"max_tokens.*max_completion_tokens", re.IGNORECASE | re.DOTALL)
"""Newer OpenAI models reject ``max_tokens`` and ask for ``max_completion_tokens``."""


@dataclass
class Replica:
    """One base URL with its client, load and health."""

    base_url: str
    client: Any
    limit: int
    in_flight: int = 0
    blocked_until: float = 0.0
    """Event-loop time before which the server asked us not to send (429)."""
    sick_until: float = 0.0
    """Event-loop time before which the replica is avoided (connection errors, repeated 5xx)."""
    failures: int = 0
    """Consecutive failures (reset by a success)."""
    sent: int = 0
    succeeded: int = 0
    failed: int = 0


@dataclass
class ReplicaPool:
    """Spreads requests over replicas by load and avoids the ones that fail.

    - A 429 **blocks** its replica for its ``Retry-After`` (1 s without one, at most
      :attr:`max_cooldown` and :attr:`max_retry_after`): the server asked for quiet, so
      nothing is sent there.
    - Connection failures (0.5 s, doubling per consecutive failure) and three or more
      consecutive timeouts or 5xx make a replica **sick** for a while (at most
      :attr:`max_cooldown`): requests go to healthy replicas, waiting for a free slot
      there, and only use sick replicas when no replica is healthy (so a lone replica is
      never left idle; the per-item backoff paces it).
    - Among the eligible replicas, the least loaded (in-flight / limit) gets the request.
    """

    replicas: list[Replica]
    max_cooldown: float = INFER_REPLICA_MAX_COOLDOWN
    """Longest time a replica is blocked or avoided."""
    max_retry_after: float = INFER_MAX_RETRY_AFTER
    """Longest ``Retry-After`` honoured (the runner's cap on waits, applied here too)."""
    _condition: asyncio.Condition | None = field(default=None, repr=False)

    @property
    def condition(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition

    @property
    def capacity(self) -> int:
        return sum(r.limit for r in self.replicas)

    def _pick(self, now: float) -> Replica | None:
        open_replicas = [r for r in self.replicas if r.blocked_until <= now]
        healthy = [r for r in open_replicas if r.sick_until <= now]
        candidates = [r for r in (healthy or open_replicas) if r.in_flight < r.limit]
        if not candidates:
            return None
        return min(candidates, key=lambda r: (r.in_flight / r.limit, r.sent))

    def _next_change(self, now: float) -> float | None:
        times = [t - now for r in self.replicas for t in (r.blocked_until, r.sick_until) if t > now]
        return min(times) if times else None

    async def acquire(self) -> Replica:
        """Wait for a slot on the least-loaded eligible replica and take it."""
        loop = asyncio.get_running_loop()
        async with self.condition:
            while True:
                now = loop.time()
                replica = self._pick(now)
                if replica is not None:
                    replica.in_flight += 1
                    replica.sent += 1
                    return replica
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.condition.wait(), self._next_change(now))

    async def release(self, replica: Replica, error: BackendError | None) -> None:
        """Give the slot back and update the replica's health."""
        loop = asyncio.get_running_loop()
        async with self.condition:
            replica.in_flight -= 1
            now = loop.time()
            if error is None:
                replica.failures = 0
                replica.sick_until = 0.0
                replica.succeeded += 1
            elif error.retryable:
                replica.failed += 1
                replica.failures += 1
                if error.kind == "rate_limit":
                    wait = error.retry_after if error.retry_after is not None else 1.0
                    until = now + min(wait, self.max_cooldown, self.max_retry_after)
                    replica.blocked_until = max(replica.blocked_until, until)
                else:
                    sick = 0.0
                    if error.kind == "connection":
                        sick = 0.5 * 2 ** min(replica.failures - 1, 10)
                    elif replica.failures >= 3:
                        sick = 0.5 * 2 ** min(replica.failures - 3, 10)
                    if sick > 0:
                        until = now + min(sick, self.max_cooldown)
                        replica.sick_until = max(replica.sick_until, until)
            self.condition.notify_all()


async def within(awaitable: Awaitable[Any], seconds: float) -> Any:
    """Await ``awaitable``, cancelling it when ``seconds`` have passed.

    Raises:
        asyncio.TimeoutError: The deadline passed (the awaitable was cancelled).

    Examples:
        >>> asyncio.run(within(asyncio.sleep(0, result="done"), 1.0))
        'done'
        >>> try:
        ...     asyncio.run(within(asyncio.sleep(5), 0.01))
        ... except asyncio.TimeoutError:
        ...     print("cut")
        cut
    """
    if sys.version_info >= (3, 11):  # no extra task per request
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)


def error_message(body: object, fallback: str) -> str:
    """The human message inside an error body (OpenAI and vLLM layouts).

    Examples:
        >>> error_message({"message": "Image too large"}, "x")
        'Image too large'
        >>> error_message({"error": {"message": "bad key"}}, "x"), error_message(None, "fallback")
        ('bad key', 'fallback')
    """
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
        if isinstance(inner, str):
            return inner
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


def _about_image_size(message: str) -> bool:
    """True when a 400/413 message says the input (image) is too big.

    A complaint about the completion budget alone (``max_tokens is too large``) is not:
    a smaller image would not help.

    Examples:
        >>> _about_image_size("Image size 4000x3000 exceeds the limit")
        True
        >>> _about_image_size("max_tokens is too large: 100000. This model supports at most 16384")
        False
        >>> _about_image_size("max_tokens is too large: 4096. This model's maximum context "
        ...                   "length is 8192 tokens and your request has 5000 input tokens")
        True
    """
    if not TOO_LARGE_PATTERN.search(message):
        return False
    lowered = message.lower()
    budget_only = re.search(r"max_(completion_)?tokens|completion tokens", lowered)
    return not budget_only or "context length" in lowered


def classify_status(
    status: int,
    message: str,
    headers: Mapping[str, str],
    *,
    has_image: bool,
    endpoint: str | None = None,
) -> BackendError:
    """Turn an HTTP error answer into a :class:`BackendError` (what to do next).

    Examples:
        >>> e = classify_status(429, "slow down", {"Retry-After": "2"}, has_image=True)
        >>> e.kind, e.retryable, e.retry_after
        ('rate_limit', True, 2.0)
        >>> classify_status(400, "Image too large: 3000x2000", {}, has_image=True).image_too_large
        True
        >>> classify_status(400, "Image too large", {}, has_image=False).kind
        'bad_request'
        >>> e = classify_status(503, "overloaded", {}, has_image=False)
        >>> e.kind, e.retryable
        ('server_error', True)
        >>> classify_status(401, "bad key", {}, has_image=False).fatal
        True
    """
    retry_after = parse_retry_after(headers)
    common: dict[str, Any] = {"status": status, "endpoint": endpoint, "retry_after": retry_after}
    if status in (400, 413, 422) and has_image and _about_image_size(message):
        return BackendError("image_too_large", message, image_too_large=True, **common)
    if status == 400 and MAX_TOKENS_PARAMETER.search(message):
        return BackendError("max_tokens_parameter", message, **common)
    if status in (401, 403):
        return BackendError("auth", message, fatal=True, **common)
    if status == 404:
        return BackendError("not_found", message, fatal=True, **common)
    if status == 408:
        return BackendError("timeout", message, retryable=True, **common)
    if status == 409:
        return BackendError("conflict", message, retryable=True, **common)
    if status == 429:
        if "insufficient_quota" in message or "exceeded your current quota" in message:
            return BackendError("quota", message, fatal=True, **common)
        return BackendError("rate_limit", message, retryable=True, **common)
    if status >= 500:
        return BackendError("server_error", message, retryable=True, **common)
    return BackendError("bad_request", message, **common)


def parse_completion(raw: bytes, endpoint: str | None = None) -> Completion:
    """Read a chat-completion body; raise ``bad_response`` when it is not one.

    Examples:
        >>> body = b'{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],'
        >>> body += b' "usage": {"prompt_tokens": 5, "completion_tokens": 1}}'
        >>> c = parse_completion(body)
        >>> c.text, c.prompt_tokens, c.completion_tokens, c.finish_reason
        ('hi', 5, 1, 'stop')
        >>> try:
        ...     parse_completion(b"<html>oops</html>")
        ... except BackendError as error:
        ...     print(error.kind, error.retryable)
        bad_response True
    """
    try:
        data = json.loads(raw)
    except ValueError:
        preview = raw[:120].decode("utf-8", errors="replace")
        raise BackendError(
            "bad_response", f"body is not JSON: {preview!r}", retryable=True, endpoint=endpoint
        ) from None
    if not isinstance(data, dict):
        raise BackendError(
            "bad_response", "body is not a JSON object", retryable=True, endpoint=endpoint
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if data.get("error") is not None:
            message = error_message(data, "error without a message")
            raise BackendError("server_error", message, retryable=True, endpoint=endpoint)
        raise BackendError(
            "bad_response", "no choices in the completion", retryable=True, endpoint=endpoint
        )
    choice: dict[str, Any] = choices[0]
    reply: Any = choice.get("message")
    if not isinstance(reply, dict):
        reply = {}
    content: Any = reply.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    reasoning = reply.get("reasoning_content") or reply.get("reasoning")
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    return Completion(
        text=content if isinstance(content, str) else "",
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason"),
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        endpoint=endpoint,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class OpenAIChatBackend:
    """Chat completions against one or several OpenAI-compatible base URLs.

    Args:
        model: Served model name (``--served-model-name`` for vLLM).
        base_urls: Base URLs ending in ``/v1``; empty means ``$OPENAI_BASE_URL`` or the
            OpenAI API.
        api_key: API key; default ``$OPENAI_API_KEY``, or ``EMPTY`` for local servers
            (:func:`crystalbench._internal.openai_client.resolve_api_key`).
        concurrency: Requests in flight per base URL.
        timeout: Seconds one request may take in all, from sending it to the last byte
            of the answer (connecting: at most 10 s of it).
        max_retry_after: Longest ``Retry-After`` a replica is kept idle for (pass the
            same cap as the runner's :class:`~crystalbench.inference.RetryPolicy`).
        extra_body: Extra JSON fields sent with every request (``top_k``,
            ``repetition_penalty``, ``chat_template_kwargs``...).
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        base_urls: Sequence[str] = (),
        *,
        api_key: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        max_retry_after: float = INFER_MAX_RETRY_AFTER,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        openai = require_openai("the openai backend")
        if concurrency < 1:
            raise InputError("must be at least 1", field="concurrency")
        if not timeout > 0:
            raise InputError("must be more than 0 seconds", field="timeout")
        urls = [u.rstrip("/") for u in base_urls] or [default_base_url() or ""]
        if len(set(urls)) != len(urls):
            raise InputError("the same --base-url is given twice", field="base_url")
        self.model = model
        self.extra_body = dict(extra_body or {})
        self.timeout = timeout
        self.token_parameter = "max_tokens"
        replicas = []
        for url in urls:
            client = async_openai_client(
                url or None,
                api_key=api_key,
                timeout=timeout,
                connect_timeout=INFER_CONNECT_TIMEOUT,
                max_connections=max(concurrency * 2, 100),
                max_keepalive_connections=max(concurrency, 100),
                max_retries=0,  # the runner retries, honouring Retry-After
            )
            replicas.append(
                Replica(base_url=str(client.base_url).rstrip("/"), client=client, limit=concurrency)
            )
        self.pool = ReplicaPool(replicas, max_retry_after=max_retry_after)
        self._raw_content = "content" in inspect.signature(replicas[0].client.post).parameters
        self._openai = openai

    @property
    def max_in_flight(self) -> int:
        return self.pool.capacity

    @property
    def endpoints(self) -> list[str]:
        return [r.base_url for r in self.pool.replicas]

    # ------------------------------------------------------------------ requests
    def payload(
        self, request: GenerationRequest, *, image_url: str | None = None
    ) -> dict[str, Any]:
        """The JSON body of one request (image first, then the prompt).

        ``image_url`` replaces the image's data URL (the serialiser splices the real one
        in afterwards, see :meth:`body`).
        """
        content: list[dict[str, Any]] = []
        if request.image is not None:
            url = (
                image_url
                if image_url is not None
                else request.image.data_url(request.image_max_side)
            )
            content.append({"type": "image_url", "image_url": {"url": url}})
        content.append({"type": "text", "text": request.prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            **request.settings.sampling(self.token_parameter),
        }
        body.update(self.extra_body)
        return body

    def body(self, request: GenerationRequest) -> bytes:
        """The serialised request body.

        Base64 never needs JSON escaping, so the body is serialised with a placeholder
        and the image's data URL bytes are spliced in: the (large) image string is not
        scanned and copied by the JSON encoder.
        """
        if request.image is None:
            return json.dumps(self.payload(request), ensure_ascii=False).encode()
        encoded = json.dumps(
            self.payload(request, image_url=IMAGE_PLACEHOLDER), ensure_ascii=False
        ).encode()
        head, found, tail = encoded.partition(_PLACEHOLDER_JSON)
        if not found:  # pragma: no cover - the placeholder always survives json.dumps
            return json.dumps(self.payload(request), ensure_ascii=False).encode()
        url = request.image.data_url_bytes(request.image_max_side)
        return b"".join((head, b'"', url, b'"', tail))

    def _encoded(self, request: GenerationRequest) -> bytes | dict[str, Any]:
        key = ("openai-body", request.image_max_side, self.token_parameter)
        cached = request.cache.get(key)
        if cached is None:
            cached = self.body(request) if self._raw_content else self.payload(request)
            request.cache.clear()  # keep only the body of the current image size
            request.cache[key] = cached
        return cached

    async def complete(self, request: GenerationRequest) -> Completion:
        """Send one request to the least-loaded healthy replica."""
        openai = self._openai
        body = self._encoded(request)
        replica = await self.pool.acquire()
        started = time.perf_counter()
        error: BackendError | None = None
        try:
            if self._raw_content:
                sending = replica.client.post(
                    "/chat/completions",
                    cast_to=bytes,
                    content=body,
                    options={"headers": {"Content-Type": "application/json"}},
                )
            else:  # older SDKs: the body is serialised by the client
                sending = replica.client.post("/chat/completions", cast_to=bytes, body=body)
            # The whole request runs under one deadline: httpx's read timeout is per
            # chunk, so a server dripping bytes would otherwise hold it forever.
            # Cancelling the request closes its connection (httpcore never reuses a
            # connection whose answer was not read to the end).
            raw = await within(sending, self.timeout)
            completion = parse_completion(raw, endpoint=replica.base_url)
        except BackendError as exc:
            error = exc
        except openai.APIStatusError as exc:
            message = error_message(exc.body, exc.message)
            error = classify_status(
                exc.status_code,
                message,
                exc.response.headers,
                has_image=request.image is not None,
                endpoint=replica.base_url,
            )
        except (openai.APITimeoutError, asyncio.TimeoutError):
            error = BackendError(
                "timeout",
                f"no answer within {self.timeout:g} s",
                retryable=True,
                endpoint=replica.base_url,
            )
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            error = BackendError(
                "connection",
                f"{type(cause).__name__}: {cause}",
                retryable=True,
                endpoint=replica.base_url,
            )
        finally:
            await self.pool.release(replica, error)
        if error is not None:
            if error.kind == "max_tokens_parameter" and self.token_parameter == "max_tokens":
                self.token_parameter = "max_completion_tokens"
                return await self.complete(request)
            raise error
        return replace(
            completion, endpoint=replica.base_url, latency_s=time.perf_counter() - started
        )

    # ------------------------------------------------------------------ preflight
    async def preflight(self, timeout: float = INFER_PREFLIGHT_TIMEOUT) -> list[str]:
        """Check every replica before the run; returns warnings.

        Raises:
            BackendUnavailableError: No replica can be reached.
            InferenceAbortedError: A replica refuses the API key.
            UnknownNameError: Every reachable replica lists its models and none is ``model``.
        """
        from crystalbench.inference.backends.base import InferenceAbortedError

        openai = self._openai
        warnings: list[str] = []
        reachable = 0
        listed: dict[str, list[str]] = {}
        for replica in self.pool.replicas:
            try:
                raw = await within(
                    replica.client.get("/models", cast_to=bytes, options={"timeout": timeout}),
                    timeout,
                )
            except asyncio.TimeoutError:
                warnings.append(f"{replica.base_url} did not answer /models within {timeout:g} s")
                replica.sick_until = asyncio.get_running_loop().time() + 5.0
                continue
            except openai.APIStatusError as exc:
                reachable += 1
                if exc.status_code in (401, 403):
                    raise InferenceAbortedError(
                        f"{replica.base_url} refused the API key (HTTP {exc.status_code}): "
                        f"{error_message(exc.body, exc.message)}"
                    ) from None
                continue  # no model listing on this server; the run will tell
            except openai.APIConnectionError as exc:
                warnings.append(f"{replica.base_url} is unreachable ({exc.__cause__ or exc})")
                replica.sick_until = asyncio.get_running_loop().time() + 5.0
                continue
            reachable += 1
            try:
                data = json.loads(raw).get("data", [])
                listed[replica.base_url] = [str(m["id"]) for m in data if "id" in m]
            except (ValueError, AttributeError, TypeError, KeyError):
                continue
        if reachable == 0:
            raise BackendUnavailableError(
                "cannot reach any endpoint: "
                + "; ".join(warnings)
                + " (is the server running, and does the base URL end in /v1?)"
            )
        served = sorted({m for models in listed.values() for m in models})
        if listed and served and all(self.model not in models for models in listed.values()):
            raise UnknownNameError("served model", self.model, served)
        for url, models in listed.items():
            if models and self.model not in models:
                warnings.append(f"{url} does not serve {self.model!r} (it serves {models[:5]})")
        return warnings

    def replica_stats(self) -> list[dict[str, Any]]:
        """Per-replica counters for the closing summary."""
        return [
            {"base_url": r.base_url, "sent": r.sent, "ok": r.succeeded, "failed": r.failed}
            for r in self.pool.replicas
        ]

    async def aclose(self) -> None:
        for replica in self.pool.replicas:
            await replica.client.close()
