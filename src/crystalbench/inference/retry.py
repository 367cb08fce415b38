"""Retry timing: exponential backoff with jitter, ``Retry-After`` parsing, downscale steps;
and the one retry loop every HTTP request of a run goes through (:func:`complete_with_retries`,
used by the inference engine and by the references' engines).

The timing rules are pure functions of their inputs (and a random generator), so the
runner's waiting behaviour is tested without sleeping.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

from crystalbench.config.settings import (
    INFER_BACKOFF_BASE,
    INFER_BACKOFF_MAX,
    INFER_MAX_ATTEMPTS,
    INFER_MAX_RETRY_AFTER,
)
from crystalbench.inference.backends.base import (
    AsyncBackend,
    BackendError,
    Completion,
    GenerationRequest,
)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a failed request.

    Examples:
        >>> policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
        >>> rng = random.Random(0)
        >>> waits = [policy.delay(n, None, rng) for n in (1, 2, 3, 4, 5)]
        >>> [ceiling / 2 <= wait <= ceiling for wait, ceiling in zip(waits, (1, 2, 4, 8, 8))]
        [True, True, True, True, True]
        >>> policy.delay(1, retry_after=3.0, rng=rng)
        3.0
    """

    max_attempts: int = INFER_MAX_ATTEMPTS
    """Requests per item for retryable failures (the first one included)."""
    base_delay: float = INFER_BACKOFF_BASE
    """Backoff before the second attempt is drawn around this many seconds."""
    max_delay: float = INFER_BACKOFF_MAX
    """Backoff never exceeds this (before jitter)."""
    max_retry_after: float = INFER_MAX_RETRY_AFTER
    """Longest ``Retry-After`` honoured; longer requests are capped to this."""
    downscale_sides: tuple[int, ...] = (1024, 512)
    """Longer-side limits tried, in order, when a server rejects an image as too large."""

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        A server's ``Retry-After`` wins (capped at :attr:`max_retry_after`); otherwise
        ``min(max_delay, base_delay * 2**(attempt-1))`` with "equal jitter": half of it
        fixed, half uniformly random, so retries never bunch up and never go to zero.
        """
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** max(0, attempt - 1))
        draw = (rng or random).random()
        return ceiling / 2 + draw * ceiling / 2

    def next_side(self, current: int | None, image_side: int) -> int | None:
        """The next downscale limit below both ``current`` and the image's longer side.

        Examples:
            >>> policy = RetryPolicy()
            >>> policy.next_side(None, 3000), policy.next_side(1024, 3000)
            (1024, 512)
            >>> policy.next_side(512, 3000) is None
            True
            >>> policy.next_side(None, 800)
            512
        """
        limit = min(current if current is not None else math.inf, image_side)
        for side in self.downscale_sides:
            if side < limit:
                return side
        return None


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date).

    Header names are matched case-insensitively; unparseable values give ``None``.

    Examples:
        >>> parse_retry_after({"Retry-After": "2"}), parse_retry_after({"retry-after": "0.5"})
        (2.0, 0.5)
        >>> parse_retry_after({"retry-after-ms": "250"})
        0.25
        >>> parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
        10.0
        >>> parse_retry_after({"Retry-After": "soon"}) is None, parse_retry_after({}) is None
        (True, True)
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        parsed = email.utils.parsedate_tz(raw)
        if parsed is None:
            return None
        moment = email.utils.mktime_tz(parsed)
        return max(0.0, moment - (time.time() if now is None else now))
    return value if math.isfinite(value) and value >= 0 else None


@dataclass(frozen=True)
class Attempts:
    """How one request ended after its retries: a completion, or the error that ended it."""

    completion: Completion | None
    """The answer (``None`` when the request failed)."""
    error: Exception | None
    """A :class:`~crystalbench.inference.backends.base.BackendError` that retrying cannot
    help (``fatal`` ones included, never retried), or any other exception the backend raised
    (a bug: it fails this request, not the run)."""
    attempts: int
    """Requests made (1 when the first one answered)."""


async def complete_with_retries(
    backend: AsyncBackend, request: GenerationRequest, policy: RetryPolicy, rng: random.Random
) -> Attempts:
    """Ask ``backend`` until it answers or retrying cannot help; never raises.

    Retryable errors (timeouts, connection errors, 408/409/429/5xx) back off
    (:meth:`RetryPolicy.delay`, honouring ``Retry-After``) up to
    :attr:`RetryPolicy.max_attempts`; an image the server rejects as too large is re-sent at
    the next smaller side (:meth:`RetryPolicy.next_side`, which sets
    ``request.image_max_side``) until none is left. A fatal error ends it at once.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            completion = await backend.complete(request)
        except BackendError as error:
            if not error.fatal:
                if error.image_too_large and request.image is not None:
                    side = policy.next_side(
                        request.image_max_side, max(request.image.variant_size(None))
                    )
                    if side is not None:
                        request.image_max_side = side
                        continue
                elif error.retryable and attempt < policy.max_attempts:
                    await asyncio.sleep(policy.delay(attempt, error.retry_after, rng))
                    continue
            return Attempts(None, error, attempt)
        except Exception as exc:  # a backend bug fails this request, not the run
            return Attempts(None, exc, attempt)
        return Attempts(completion, None, attempt)
