"""The resumable inference runner: select items, ask the backend, write one record each.

:func:`infer` (or :func:`ainfer` inside an event loop) does, in order:

1. open the output file, repair a torn last line, read what is already there;
2. refuse to mix configurations (another model, prompt or sampling settings) unless
   asked to;
3. skip items with a finished record; with ``retry_errors``, drop their error records
   first (one atomic rewrite) so the file never holds two records for an id;
4. answer the rest: concurrently with retries for :class:`AsyncBackend` (HTTP), in
   batches that split to isolate a failing item for :class:`BatchBackend` (local);
5. append each record as soon as it exists, then rewrite the file once, in benchmark
   order, when the run ends.

Only the backend's fatal errors (bad key, unknown model) and a run whose first items
all fail stop the run; anything else becomes an error record and the run goes on.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from pydantic import Field

from crystalbench.data.loading import Benchmark
from crystalbench.errors import InputError
from crystalbench.inference.backends.base import (
    AsyncBackend,
    BackendError,
    BatchBackend,
    Completion,
    GenerationRequest,
    InferenceAbortedError,
)
from crystalbench.inference.images import PreparedImage
from crystalbench.inference.prompts import PromptTemplate, load_prompt
from crystalbench.inference.records import (
    GenerationSettings,
    InferenceRecord,
    LoadedRecords,
    ResultsFile,
    describe_records,
    utc_now,
)
from crystalbench.inference.retry import RetryPolicy
from crystalbench.types import PARSE_FAILED_STATUSES, BenchmarkItem, Record

DEFAULT_ABORT_AFTER = 25
"""Stop when this many items failed and none succeeded (a misconfigured run)."""


@dataclass
class RunStats:
    """Live counters of a run (read by progress bars)."""

    total: int = 0
    """Items to answer in this run."""
    done: int = 0
    ok: int = 0
    errors: int = 0
    errors_by_kind: Counter[str] = field(default_factory=Counter)
    error_examples: dict[str, str] = field(default_factory=dict)
    """First message seen per error kind."""
    parse_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_sum: float = 0.0
    attempts: int = 0
    image_encodes: int = 0
    started: float = field(default_factory=time.perf_counter)

    def add(self, record: InferenceRecord) -> None:
        """Count one written record."""
        self.done += 1
        self.attempts += record.attempts
        if record.ok:
            self.ok += 1
            self.prompt_tokens += record.prompt_tokens or 0
            self.completion_tokens += record.completion_tokens or 0
            self.latency_sum += record.latency_s or 0.0
            if record.parse_status in PARSE_FAILED_STATUSES:
                self.parse_failed += 1
        else:
            self.errors += 1
            kind = record.error_kind or "error"
            self.errors_by_kind[kind] += 1
            self.error_examples.setdefault(kind, record.error or "")

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started


class ProgressReporter(Protocol):
    """Receives the run's progress (see :class:`crystalbench.inference.progress.RichProgress`)."""

    def start(self, total: int, stats: RunStats) -> None:
        """The run begins with ``total`` items to answer."""
        ...

    def advance(self, record: InferenceRecord, stats: RunStats) -> None:
        """One record was written."""
        ...

    def stop(self) -> None:
        """The run ended (normally or not)."""
        ...


class InferenceSummary(Record):
    """What one ``crystal infer`` run did."""

    out: str
    """The output file."""
    model: str
    backend: str
    prompt_name: str
    prompt_hash: str
    generation: GenerationSettings
    n_selected: int
    """Items selected (after ``--sources``, ``--ids``, ``--limit``)."""
    n_already_done: int
    """Selected items skipped because the file already held their answer."""
    n_skipped_errors: int
    """Selected items skipped because they hold an error record (no ``--retry-errors``)."""
    n_retried_errors: int
    """Error records removed to be retried in this run."""
    n_run: int
    """Items answered (or failed) in this run."""
    n_ok: int
    n_errors: int
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    error_examples: dict[str, str] = Field(default_factory=dict)
    """First message per error kind."""
    n_parse_failed: int = 0
    """Answers the parser could not read (``empty`` / ``unparseable``)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    image_encodes: int = 0
    """Base64 encodings of images (one per item, plus one per downscaled size)."""
    wall_s: float = 0.0
    mean_latency_s: float | None = None
    """Mean seconds per successful request (of its last attempt)."""
    items_per_s: float = 0.0
    tokens_per_s: float = 0.0
    """Completion tokens per second of wall time."""
    n_records: int = 0
    """Records in the file after the run (one per id)."""
    n_pending: int = 0
    """Selected items still without a successful record."""
    torn_line: str | None = None
    """Description of the torn last line repaired when opening, if any."""
    n_duplicates_removed: int = 0
    """Superseded records dropped while compacting (only after outside edits)."""
    endpoints: list[dict[str, Any]] = Field(default_factory=list)
    """Per-replica request counts (HTTP backends)."""
    warnings: list[str] = Field(default_factory=list)


def _configuration_conflicts(
    loaded: LoadedRecords, model: str, prompt: PromptTemplate, settings: GenerationSettings
) -> list[str]:
    found = describe_records(loaded.by_id.values())
    problems = []
    if any(m != model for m in found["models"]):
        problems.append(f"models {found['models']} (this run: {model!r})")
    if any(h != prompt.hash for h in found["prompt_hashes"]):
        problems.append(f"prompt hashes {found['prompt_hashes']} (this run: {prompt.hash})")
    wanted = settings.model_dump_json()
    if any(g != wanted for g in found["generation"]):
        problems.append(f"generation settings {found['generation']} (this run: {wanted})")
    return problems


class _Run:
    """One run's state: backend, output file, counters."""

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
        data = self.benchmark.image_bytes(item)
        image = PreparedImage(data) if data else None
        if image is not None:
            image.size  # noqa: B018 - decode the header now: a broken image fails here
        return GenerationRequest(
            item_id=item.id,
            prompt=self.prompt.render(item),
            image=image,
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
        from crystalbench.parsing import parse_response

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
            return self.failure(item, "image", _describe(exc), attempts=0, started=started), None
        attempt = 0
        while True:
            attempt += 1
            try:
                completion = await backend.complete(request)
            except BackendError as error:
                if error.fatal:
                    self.stopping = True
                    raise InferenceAbortedError(f"stopping: {error}") from error
                if error.image_too_large and request.image is not None:
                    side = self.retry.next_side(request.image_max_side, max(request.image.size))
                    if side is not None:
                        request.image_max_side = side
                        continue
                elif error.retryable and attempt < self.retry.max_attempts:
                    await asyncio.sleep(self.retry.delay(attempt, error.retry_after, self.rng))
                    continue
                record = self.failure(
                    item,
                    error.kind,
                    str(error),
                    attempts=attempt,
                    started=started,
                    endpoint=error.endpoint,
                    image_max_side=request.image_max_side,
                )
                return record, request
            except Exception as exc:  # a backend bug fails this item, not the run
                record = self.failure(
                    item, "unexpected", _describe(exc), attempts=attempt, started=started
                )
                return record, request
            record = self.success(
                item, completion, attempts=attempt, started=started, request=request
            )
            return record, request

    async def run_async(self, items: Sequence[BenchmarkItem]) -> None:
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
                return [BackendError("generation", _describe(exc))]
        else:
            if len(completions) != len(requests):
                raise RuntimeError(
                    f"{type(backend).__name__} returned {len(completions)} completions "
                    f"for {len(requests)} requests"
                )
            share = (time.perf_counter() - started) / len(requests)
            return [c if c.latency_s is not None else _with_latency(c, share) for c in completions]
        middle = len(requests) // 2
        return self._complete_isolating(requests[:middle]) + self._complete_isolating(
            requests[middle:]
        )

    def run_batches(self, items: Sequence[BenchmarkItem]) -> None:
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
                    record = self.failure(item, "image", _describe(exc), attempts=0, started=began)
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


def _with_latency(completion: Completion, seconds: float) -> Completion:
    return Completion(
        text=completion.text,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        finish_reason=completion.finish_reason,
        reasoning=completion.reasoning,
        endpoint=completion.endpoint,
        latency_s=seconds,
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def ainfer(
    benchmark: Benchmark,
    backend: AsyncBackend | BatchBackend,
    out: str | Path,
    *,
    prompt: PromptTemplate | None = None,
    settings: GenerationSettings | None = None,
    retry: RetryPolicy | None = None,
    retry_errors: bool = False,
    allow_mixed: bool = False,
    progress: ProgressReporter | None = None,
    order: Sequence[str] | None = None,
    image_max_side: int | None = None,
    preflight: bool = True,
    abort_after: int = DEFAULT_ABORT_AFTER,
    fsync_interval: float = 1.0,
    seed: int | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> InferenceSummary:
    """Answer every selected item of ``benchmark`` into ``out`` (see the module docstring).

    Args:
        benchmark: The items to answer (already subset with ``--sources/--ids/--limit``).
        backend: An :class:`AsyncBackend` (closed at the end) or a :class:`BatchBackend`.
        out: The JSONL output file; an existing one is resumed.
        prompt: Prompt template (default ``infer_v1``).
        settings: Sampling settings (default: temperature 0.1, 4096 tokens).
        retry: Retry policy for HTTP backends.
        retry_errors: Answer again the items whose record is an error.
        allow_mixed: Append even if the file holds another model, prompt or settings.
        progress: Progress reporter.
        order: Id order of the final file (default: ``benchmark``'s order); pass the full
            benchmark's ids when ``benchmark`` is a subset.
        image_max_side: Downscale every image to this longer side before sending.
        preflight: Ask HTTP endpoints for their model list first (fails fast on a wrong
            URL, key or model name).
        abort_after: Stop when this many items failed and none succeeded (0: never).
        fsync_interval: Seconds between ``fsync`` calls (0: after every record).
        seed: Seed of the backoff jitter.
        on_warning: Called with each warning as it happens (also kept in the summary).

    Returns:
        The run's :class:`InferenceSummary`.

    Raises:
        InputError: The output file is malformed, locked by another run, or holds another
            configuration (without ``allow_mixed``).
        InferenceAbortedError: A fatal backend error (bad key, unknown model) or a run
            whose first ``abort_after`` items all failed. Records written so far stay.
    """
    prompt = prompt or load_prompt()
    settings = settings or GenerationSettings()
    retry = retry or RetryPolicy()
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        if on_warning is not None:
            on_warning(message)

    results = ResultsFile(out, fsync_interval=fsync_interval)
    run = _Run(
        benchmark,
        backend,
        results,
        prompt=prompt,
        settings=settings,
        retry=retry,
        progress=progress,
        image_max_side=image_max_side,
        abort_after=abort_after,
        rng=random.Random(seed),
    )
    is_async = isinstance(backend, AsyncBackend)
    results.lock()
    try:
        loaded = results.load()
        if loaded.torn is not None:
            warn(loaded.torn.describe(results.path))
        conflicts = _configuration_conflicts(loaded, backend.model, prompt, settings)
        if conflicts and not allow_mixed:
            raise InputError(
                "the file already holds records of another configuration: "
                + "; ".join(conflicts)
                + ". Use another --out, or --allow-mixed to add to it anyway",
                path=results.path,
            )
        done = loaded.done_ids
        failed = loaded.error_ids
        selected = benchmark.items
        pending = [
            item
            for item in selected
            if item.id not in done and (retry_errors or item.id not in failed)
        ]
        if is_async and preflight and pending and hasattr(backend, "preflight"):
            try:  # before touching the file: a wrong URL, key or name changes nothing
                for message in await backend.preflight():
                    warn(message)
            except BaseException:
                await backend.aclose()  # type: ignore[union-attr]
                raise
        retried = {item.id for item in pending if item.id in failed}
        kept = {i: r for i, r in loaded.by_id.items() if i not in retried}
        if retried or loaded.duplicates:
            results.rewrite(kept.values())  # never two records for one id, even mid-run
        run.records = dict(kept)
        summary_base = {
            "n_selected": len(selected),
            "n_already_done": sum(1 for item in selected if item.id in done),
            "n_skipped_errors": 0 if retry_errors else sum(1 for i in selected if i.id in failed),
            "n_retried_errors": len(retried),
        }
        run.stats = RunStats(total=len(pending))
        if progress is not None:
            progress.start(len(pending), run.stats)
        results.open()
        try:
            if pending:
                if is_async:
                    await run.run_async(pending)
                else:
                    # Local generation blocks; keep the event loop free for the caller.
                    await asyncio.to_thread(run.run_batches, pending)
        finally:
            results.close()
            if progress is not None:
                progress.stop()
            if is_async:
                await backend.aclose()  # type: ignore[union-attr]
            ids_order = list(order) if order is not None else benchmark.ids
            final = LoadedRecords(by_id=run.records)
            results.compact(final, ids_order)
    finally:
        results.unlock()
    stats = run.stats
    wall = stats.elapsed
    return InferenceSummary(
        out=str(results.path),
        model=backend.model,
        backend=backend.name,
        prompt_name=prompt.name,
        prompt_hash=prompt.hash,
        generation=settings,
        n_run=stats.done,
        n_ok=stats.ok,
        n_errors=stats.errors,
        errors_by_kind=dict(stats.errors_by_kind),
        error_examples=dict(stats.error_examples),
        n_parse_failed=stats.parse_failed,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        attempts=stats.attempts,
        image_encodes=stats.image_encodes,
        wall_s=round(wall, 3),
        mean_latency_s=round(stats.latency_sum / stats.ok, 4) if stats.ok else None,
        items_per_s=round(stats.done / wall, 2) if wall > 0 else 0.0,
        tokens_per_s=round(stats.completion_tokens / wall, 2) if wall > 0 else 0.0,
        n_records=len(run.records),
        n_pending=sum(
            1
            for item in benchmark.items
            if item.id not in run.records or not run.records[item.id].ok
        ),
        torn_line=loaded.torn.describe(results.path) if loaded.torn else None,
        n_duplicates_removed=loaded.duplicates,
        endpoints=backend.replica_stats() if hasattr(backend, "replica_stats") else [],
        warnings=warnings,
        **summary_base,
    )


def infer(
    benchmark: Benchmark, backend: AsyncBackend | BatchBackend, out: str | Path, **options: Any
) -> InferenceSummary:
    """Synchronous :func:`ainfer` (runs in a helper thread when a loop is already running).

    Examples:
        >>> import tempfile
        >>> from crystalbench.data import load_benchmark
        >>> from crystalbench.inference.backends.scripted import ScriptedBackend
        >>> bench = load_benchmark("sample").subset(limit=2)
        >>> out = Path(tempfile.mkdtemp()) / "preds.jsonl"
        >>> backend = ScriptedBackend({"*": '{"reasoning_steps": ["A red bar."], "answer": "B"}'})
        >>> summary = infer(bench, backend, out)
        >>> summary.n_ok, summary.n_errors, len(out.read_text().splitlines())
        (2, 0, 2)
        >>> infer(bench, ScriptedBackend({}), out).n_already_done  # resumed: nothing to do
        2
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(ainfer(benchmark, backend, out, **options))
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(ainfer(benchmark, backend, out, **options))
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="crystalbench-infer")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    summary: InferenceSummary = outcome["value"]
    return summary
