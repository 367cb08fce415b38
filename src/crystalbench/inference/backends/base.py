"""The interface every inference backend implements, and the errors they raise.

Two shapes, because serving and local generation batch differently:

- :class:`AsyncBackend` answers one request at a time, many in flight (HTTP endpoints);
  the runner owns concurrency, retries and backoff.
- :class:`BatchBackend` answers a list of requests at once (offline vLLM, transformers);
  the runner owns batching and isolates a failing item by splitting its batch.

Backends never write records: they turn a :class:`GenerationRequest` into a
:class:`Completion` or raise :class:`BackendError` saying what went wrong and whether a
retry can help.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from crystalbench.errors import CrystalbenchError
from crystalbench.inference.images import PreparedImage
from crystalbench.inference.records import GenerationSettings


@dataclass
class GenerationRequest:
    """One item to answer: prompt text, optional image, settings."""

    item_id: str
    prompt: str
    image: PreparedImage | None
    settings: GenerationSettings
    image_max_side: int | None = None
    """Send the image downscaled so its longer side is at most this (``None``: as is)."""
    cache: dict[Any, Any] = field(default_factory=dict)
    """Per-request scratch space a backend may use to keep work across retries (for
    example the serialised request body, built once per image size)."""


@dataclass(frozen=True)
class Completion:
    """A backend's answer to one request."""

    text: str
    """The generated text (empty when the model produced nothing)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    """Reasoning returned separately by the server (``reasoning_content``), if any."""
    endpoint: str | None = None
    """Which replica or device answered."""
    latency_s: float | None = None
    """Seconds the request took (per item share of the batch for batch backends)."""


class BackendError(Exception):
    """A request failed; says whether retrying (or downscaling the image) can help.

    Args:
        kind: Short class used in records and summaries (``timeout``, ``rate_limit``...).
        message: Human-readable reason (the server's message when there is one).
        retryable: A later identical request may succeed (timeouts, 429, 5xx...).
        retry_after: Seconds the server asked us to wait (``Retry-After``), if any.
        image_too_large: The server rejected the image's size; a smaller one may pass.
        fatal: Every request will fail the same way (bad key, unknown model): stop the run.
        status: HTTP status, when there is one.
        endpoint: Which replica failed.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        image_too_large: bool = False,
        fatal: bool = False,
        status: int | None = None,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.image_too_large = image_too_large
        self.fatal = fatal
        self.status = status
        self.endpoint = endpoint

    def __str__(self) -> str:
        status = f"HTTP {self.status}: " if self.status is not None else ""
        where = f" ({self.endpoint})" if self.endpoint else ""
        return f"{self.kind}: {status}{self.message}{where}"


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of an exception (the type alone when it has no message), as error
    records write it.

    Examples:
        >>> describe_error(ValueError("bad pixel")), describe_error(MemoryError())
        ('ValueError: bad pixel', 'MemoryError')
    """
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class InferenceAbortedError(CrystalbenchError):
    """The run stopped because every request would fail (bad key, unknown model...)."""


class BackendUnavailableError(CrystalbenchError):
    """A backend's package is missing or its model cannot be loaded."""


@runtime_checkable
class AsyncBackend(Protocol):
    """A backend answering single requests concurrently (an HTTP endpoint)."""

    name: str
    """Backend family written into records (``openai``)."""
    model: str
    """Model name written into records."""

    @property
    def max_in_flight(self) -> int:
        """Requests the backend can usefully have in flight at once."""
        ...

    async def complete(self, request: GenerationRequest) -> Completion:
        """Answer one request or raise :class:`BackendError`."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class BatchBackend(Protocol):
    """A backend answering whole batches (offline vLLM, transformers)."""

    name: str
    model: str
    batch_size: int
    """Requests per call of :meth:`complete_batch`."""

    def complete_batch(self, requests: list[GenerationRequest]) -> list[Completion]:
        """Answer every request, in order; raise (anything) if the batch failed."""
        ...

    def close(self) -> None:
        """Free the model."""
        ...
