"""The resumable inference runner: select items, ask the backend, write one record each.

:func:`infer` (or :func:`ainfer` inside an event loop) does, in order:

1. open the output file, repair a torn last line, read what is already there;
2. refuse to mix configurations (another model, prompt or sampling settings) unless
   asked to (:func:`.resume.configuration_conflicts`);
3. skip items with a finished record; with ``retry_errors``, drop their error records
   first (one atomic rewrite) so the file never holds two records for an id
   (:func:`.resume.plan_resume`);
4. answer the rest (:class:`.engine.InferenceEngine`): concurrently with retries for
   :class:`AsyncBackend` (HTTP), in batches that split to isolate a failing item for
   :class:`BatchBackend` (local);
5. append each record as soon as it exists, then rewrite the file once, in benchmark
   order, when the run ends, and sum it up (:class:`.summary.InferenceSummary`).

Only the backend's fatal errors (bad key, unknown model) and a run whose first items
all fail stop the run; anything else becomes an error record and the run goes on.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from crystalbench.config.settings import INFER_ABORT_AFTER
from crystalbench.data.loading import Benchmark
from crystalbench.errors import InputError
from crystalbench.inference.backends.base import AsyncBackend, BatchBackend
from crystalbench.inference.config import InferenceConfig
from crystalbench.inference.engine import InferenceEngine
from crystalbench.inference.prompts import PromptTemplate, load_prompt
from crystalbench.inference.records import LoadedRecords, ResultsFile
from crystalbench.inference.resume import configuration_conflicts, plan_resume
from crystalbench.inference.retry import RetryPolicy
from crystalbench.inference.summary import (
    InferenceSummary,
    ProgressReporter,
    RunStats,
    summarize,
)

DEFAULT_ABORT_AFTER = INFER_ABORT_AFTER
"""Stop when this many items failed and none succeeded (a misconfigured run)."""

__all__ = [
    "DEFAULT_ABORT_AFTER",
    "InferenceSummary",
    "ProgressReporter",
    "RunStats",
    "ainfer",
    "infer",
]

T = TypeVar("T")


async def ainfer(
    benchmark: Benchmark,
    backend: AsyncBackend | BatchBackend,
    out: str | Path,
    config: InferenceConfig | None = None,
    *,
    prompt: PromptTemplate | None = None,
    retry: RetryPolicy | None = None,
    progress: ProgressReporter | None = None,
    order: Sequence[str] | None = None,
    seed: int | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> InferenceSummary:
    """Answer every selected item of ``benchmark`` into ``out`` (see the module docstring).

    Args:
        benchmark: The items to answer (already subset: ``config``'s ``sources``, ``ids``
            and ``limit`` are applied by :func:`crystalbench.inference.run_inference`).
        backend: An :class:`AsyncBackend` (closed at the end) or a :class:`BatchBackend`.
        out: The JSONL output file; an existing one is resumed.
        config: Every option of the run (sampling settings, retries, ``retry_errors``,
            ``allow_mixed``, ``max_image_side``, ``preflight``, ``abort_after``,
            ``fsync_interval``), recorded in the summary. ``None``: the defaults of
            :class:`InferenceConfig` for ``backend``'s model, not recorded.
        prompt: A prompt template instead of ``config.prompt_file`` (default ``infer_v1``).
        retry: A retry policy instead of ``config.retry_policy()`` (e.g. a faster backoff).
        progress: Progress reporter.
        order: Id order of the final file (default: ``benchmark``'s order); pass the full
            benchmark's ids when ``benchmark`` is a subset.
        seed: Seed of the backoff jitter.
        on_warning: Called with each warning as it happens (also kept in the summary).

    Returns:
        The run's :class:`InferenceSummary`.

    Raises:
        InputError: The output file is malformed, locked by another run, or holds another
            configuration (without ``allow_mixed``), or the prompt file is bad.
        InferenceAbortedError: A fatal backend error (bad key, unknown model) or a run
            whose first ``abort_after`` items all failed. Records written so far stay.
    """
    recorded = config
    config = config if config is not None else InferenceConfig(model=backend.model)
    prompt = prompt or load_prompt(config.prompt_file)
    settings = config.generation
    retry = retry or config.retry_policy()
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        if on_warning is not None:
            on_warning(message)

    results = ResultsFile(out, fsync_interval=config.fsync_interval)
    engine = InferenceEngine(
        benchmark,
        backend,
        results,
        prompt=prompt,
        settings=settings,
        retry=retry,
        progress=progress,
        image_max_side=config.max_image_side,
        abort_after=config.abort_after,
        rng=random.Random(seed),
    )
    is_async = isinstance(backend, AsyncBackend)
    results.lock()
    try:
        loaded = results.load()
        if loaded.torn is not None:
            warn(loaded.torn.describe(results.path))
        conflicts = configuration_conflicts(loaded, backend.model, prompt, settings)
        if conflicts and not config.allow_mixed:
            raise InputError(
                "the file already holds records of another configuration: "
                + "; ".join(conflicts)
                + ". Use another --out, or --allow-mixed to add to it anyway",
                path=results.path,
            )
        plan = plan_resume(loaded, benchmark.items, retry_errors=config.retry_errors)
        if is_async and config.preflight and plan.pending and hasattr(backend, "preflight"):
            try:  # before touching the file: a wrong URL, key or name changes nothing
                for message in await backend.preflight():
                    warn(message)
            except BaseException:
                await backend.aclose()  # type: ignore[union-attr]
                raise
        if plan.needs_rewrite:
            results.rewrite(plan.kept.values())  # never two records for one id, even mid-run
        engine.records = dict(plan.kept)
        engine.stats = RunStats(total=len(plan.pending))
        if progress is not None:
            progress.start(len(plan.pending), engine.stats)
        results.open()
        try:
            if plan.pending:
                if is_async:
                    await engine.run_async(plan.pending)
                else:
                    # Local generation blocks; keep the event loop free for the caller.
                    await asyncio.to_thread(engine.run_batches, plan.pending)
        finally:
            results.close()
            if progress is not None:
                progress.stop()
            if is_async:
                await backend.aclose()  # type: ignore[union-attr]
            ids_order = list(order) if order is not None else benchmark.ids
            results.compact(LoadedRecords(by_id=engine.records), ids_order)
    finally:
        results.unlock()
    records = engine.records
    return summarize(
        engine.stats,
        out=str(results.path),
        model=backend.model,
        backend=backend.name,
        prompt_name=prompt.name,
        prompt_hash=prompt.hash,
        generation=settings,
        n_selected=plan.n_selected,
        n_already_done=plan.n_already_done,
        n_skipped_errors=plan.n_skipped_errors,
        n_retried_errors=len(plan.retried),
        n_records=len(records),
        n_pending=sum(
            1 for item in benchmark.items if item.id not in records or not records[item.id].ok
        ),
        torn_line=loaded.torn.describe(results.path) if loaded.torn else None,
        n_duplicates_removed=loaded.duplicates,
        endpoints=backend.replica_stats() if hasattr(backend, "replica_stats") else [],
        warnings=warnings,
        config=recorded,
    )


def infer(
    benchmark: Benchmark,
    backend: AsyncBackend | BatchBackend,
    out: str | Path,
    config: InferenceConfig | None = None,
    *,
    prompt: PromptTemplate | None = None,
    retry: RetryPolicy | None = None,
    progress: ProgressReporter | None = None,
    order: Sequence[str] | None = None,
    seed: int | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> InferenceSummary:
    """Synchronous :func:`ainfer` (runs in a helper thread when a loop is already running).

    Takes the same arguments as :func:`ainfer`.

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
        >>> config = InferenceConfig(model="scripted", retry_errors=True, abort_after=0)
        >>> infer(bench, backend, out, config).config.retry_errors
        True
    """
    return run_sync(
        ainfer(
            benchmark,
            backend,
            out,
            config,
            prompt=prompt,
            retry=retry,
            progress=progress,
            order=order,
            seed=seed,
            on_warning=on_warning,
        )
    )


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from synchronous code.

    Uses :func:`asyncio.run`, or a helper thread with its own loop when the caller is
    already inside a running event loop (a notebook).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="crystalbench-infer")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
