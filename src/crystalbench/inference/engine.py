"""The engine of one run: ask the backend for each pending item, write one record each.

Two paths, one per backend shape (see :mod:`.backends.base`):

- :meth:`InferenceEngine.run_async` for an :class:`AsyncBackend` (HTTP): many items in
  flight, each retried with backoff (honouring ``Retry-After``) and re-sent with a
  smaller image when the server says it is too large;
- :meth:`InferenceEngine.run_batches` for a :class:`BatchBackend` (local): batches that
  split in halves to isolate a failing item.

Every record goes to the output file as soon as it exists. Only the backend's fatal
errors (bad key, unknown model) and a run whose first items all fail stop the run
(:class:`InferenceAbortedError`); anything else becomes an error record.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

from crystalbench.data.loading import Benchmark
from crystalbench.inference.backends.base import (
    AsyncBackend,
    BackendError,
    BatchBackend,
    Completion,
    GenerationRequest,
    InferenceAbortedError,
    describe_error,
)
from crystalbench.inference.images import prepare_image
from crystalbench.inference.prompts import PromptTemplate
from crystalbench.inference.records import (
    GenerationSettings,
    InferenceRecord,
    ResultsFile,
    utc_now,
)
from crystalbench.inference.retry import RetryPolicy, complete_with_retries
from crystalbench.inference.summary import ProgressReporter, RunStats
from crystalbench.parsing import parse_response
from crystalbench.types import BenchmarkItem


class InferenceEngine:
    """One run's state: backend, output file, counters.

    Args:
        benchmark: Gives each item's image bytes.
        backend: The backend to ask.
        results: The output file, open for appending while the engine runs.
        prompt: Template rendered for each item.
        settings: Sampling settings sent with every request.
        retry: Retry policy of the async path.
        progress: Progress reporter (``None``: silent).
        image_max_side: Downscale every image to this longer side before sending.
        abort_after: Stop when this many items failed and none succeeded (0: never).
        rng: Random generator of the backoff jitter.
    """

    def __init__(
        self,
        benchmark: Benchmark,
        backend: AsyncBackend | BatchBackend,
        results: ResultsFile,
        *,
        prompt: PromptTemplate,
        settings: GenerationSettings,
        retry: RetryPolicy,
        progress: ProgressReporter | None,
        image_max_side: int | None,
        abort_after: int,
        rng: random.Random,
    ) -> None:
        self.benchmark = benchmark
        self.backend = backend
        self.results = results
        self.prompt = prompt
        self.settings = settings
        self.retry = retry
        self.progress = progress
        self.image_max_side = image_max_side
        self.abort_after = abort_after
        self.rng = rng
        self.stats = RunStats()
        self.records: dict[str, InferenceRecord] = {}
        self.stopping = False
        """Set on a fatal error: workers take no new item."""

    # ------------------------------------------------------------------ records
    def request(self, item: BenchmarkItem) -> GenerationRequest:
        """Render the prompt and load the image (raises on an unreadable image)."""
        return GenerationRequest(
            item_id=item.id,
            prompt=self.prompt.render(item),
            image=prepare_image(self.benchmark.image_bytes(item), self.image_max_side),
            settings=self.settings,
            image_max_side=self.image_max_side,
        )

    def _base(self) -> dict[str, Any]:
        return {
            "model": self.backend.model,
            "backend": self.backend.name,
            "prompt_name": self.prompt.name,
            "prompt_hash": self.prompt.hash,
            "generation": self.settings,
            "created_at": utc_now(),
        }

    def success(
        self,
        item: BenchmarkItem,
        completion: Completion,
        *,
        attempts: int,
        started: float,
        request: GenerationRequest,
    ) -> InferenceRecord:
        """The record of an answered item (the response parsed once, for the record)."""
        parsed = parse_response(completion.text)
        downscaled = request.image_max_side
        image = request.image
        if image is not None and downscaled is not None and max(image.size) <= downscaled:
            downscaled = None
        return InferenceRecord(
            id=item.id,
            response=completion.text,
            reasoning=completion.reasoning,
            steps=parsed.steps,
            answer=parsed.answer,
            parse_status=parsed.status,
            finish_reason=completion.finish_reason,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            latency_s=_rounded(completion.latency_s),
            total_s=_rounded(time.perf_counter() - started),
            attempts=attempts,
            image_max_side=downscaled,
            endpoint=completion.endpoint,
            **self._base(),
        )

    def failure(
        self,
        item: BenchmarkItem,
        kind: str,
        message: str,
        *,
        attempts: int,
        started: float,
        endpoint: str | None = None,
        image_max_side: int | None = None,
    ) -> InferenceRecord:
        """The error record of an item that failed after its attempts."""
        return InferenceRecord(
            id=item.id,
            error=message,
            error_kind=kind,
            attempts=attempts,
            total_s=_rounded(time.perf_counter() - started),
            endpoint=endpoint,
            image_max_side=image_max_side,
            **self._base(),
        )

    def write(self, record: InferenceRecord, request: GenerationRequest | None) -> None:
        """Append a record, count it, and stop a run whose first items all failed."""
        self.results.append(record)
        self.records[record.id] = record
        if request is not None and request.image is not None:
            self.stats.image_encodes += request.image.encodes
        self.stats.add(record)
        if self.progress is not None:
            self.progress.advance(record, self.stats)
        if self.abort_after and self.stats.ok == 0 and self.stats.errors == self.abort_after:
            kind, count = self.stats.errors_by_kind.most_common(1)[0]
            self.stopping = True
            raise InferenceAbortedError(
                f"stopping: the first {self.stats.errors} items all failed ({count} x {kind}: "
                f"{self.stats.error_examples.get(kind, '')}). Fix the cause, then rerun with "
                "--retry-errors"
            )

    # ------------------------------------------------------------------ async path
    async def answer(self, item: BenchmarkItem) -> tuple[InferenceRecord, GenerationRequest | None]:
        """Answer one item with retries; never raises except for fatal backend errors."""
        backend = cast(AsyncBackend, self.backend)
        started = time.perf_counter()
        try:
            request = self.request(item)
        except Exception as exc:  # a missing or undecodable image fails this item only
            return self.failure(
                item, "image", describe_error(exc), attempts=0, started=started
            ), None
        outcome = await complete_with_retries(backend, request, self.retry, self.rng)
        error = outcome.error
        if isinstance(error, BackendError):
            if error.fatal:
                self.stopping = True
                raise InferenceAbortedError(f"stopping: {error}") from error
            record = self.failure(
                item,
                error.kind,
                str(error),
                attempts=outcome.attempts,
                started=started,
                endpoint=error.endpoint,
                image_max_side=request.image_max_side,
            )
        elif error is not None:
            record = self.failure(
                item,
                "unexpected",
                describe_error(error),
                attempts=outcome.attempts,
                started=started,
            )
        else:
            assert outcome.completion is not None
            record = self.success(
                item,
                outcome.completion,
                attempts=outcome.attempts,
                started=started,
                request=request,
            )
        return record, request

    async def run_async(self, items: Sequence[BenchmarkItem]) -> None:
        """Answer ``items`` concurrently (the async path)."""
        backend = self.backend
        assert isinstance(backend, AsyncBackend)
        queue: asyncio.Queue[BenchmarkItem] = asyncio.Queue()
        for item in items:
            queue.put_nowait(item)
        # More workers than request slots, so items waiting out a backoff never idle a slot.
        n_workers = max(1, min(len(items), 2 * backend.max_in_flight))

        async def worker() -> None:
            while not self.stopping:
                try:
                    item = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                record, request = await self.answer(item)
                self.write(record, request)

        tasks = [asyncio.create_task(worker()) for _ in range(n_workers)]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ batch path
    def _complete_isolating(
        self, requests: list[GenerationRequest]
    ) -> list[Completion | BackendError]:
        """Answer a batch; when it fails, split it in halves to find the failing items."""
        backend = self.backend
        assert isinstance(backend, BatchBackend)
        started = time.perf_counter()
        try:
            completions = backend.complete_batch(requests)
        except BackendError as error:
            if error.fatal:
                raise InferenceAbortedError(f"stopping: {error}") from error
            if len(requests) == 1:
                return [error]
        except Exception as exc:  # CUDA OOM, a prompt too long for the model...
            if len(requests) == 1:
                return [BackendError("generation", describe_error(exc))]
        else:
            if len(completions) != len(requests):
                raise RuntimeError(
                    f"{type(backend).__name__} returned {len(completions)} completions "
                    f"for {len(requests)} requests"
                )
            share = (time.perf_counter() - started) / len(requests)
            return [
                c if c.latency_s is not None else replace(c, latency_s=share) for c in completions
            ]
        middle = len(requests) // 2
        return self._complete_isolating(requests[:middle]) + self._complete_isolating(
            requests[middle:]
        )

    def run_batches(self, items: Sequence[BenchmarkItem]) -> None:
        """Answer ``items`` in batches (the local path; blocks)."""
        backend = self.backend
        assert isinstance(backend, BatchBackend)
        size = backend.batch_size if backend.batch_size > 0 else max(1, len(items))
        for start in range(0, len(items), size):
            chunk = items[start : start + size]
            began = time.perf_counter()
            ready: list[tuple[BenchmarkItem, GenerationRequest]] = []
            for item in chunk:
                try:
                    ready.append((item, self.request(item)))
                except Exception as exc:
                    record = self.failure(
                        item, "image", describe_error(exc), attempts=0, started=began
                    )
                    self.write(record, None)
            if not ready:
                continue
            outcomes = self._complete_isolating([request for _, request in ready])
            for (item, request), outcome in zip(ready, outcomes, strict=True):
                if isinstance(outcome, BackendError):
                    record = self.failure(
                        item,
                        outcome.kind,
                        str(outcome),
                        attempts=1,
                        started=began,
                        endpoint=outcome.endpoint,
                    )
                else:
                    record = self.success(item, outcome, attempts=1, started=began, request=request)
                self.write(record, request)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
