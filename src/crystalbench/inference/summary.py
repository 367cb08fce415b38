"""What a run did: live counters for progress bars and the closing :class:`InferenceSummary`.

The engine (:mod:`.engine`) counts into a :class:`RunStats` as records are written; the
runner (:mod:`.runner`) turns the counters into an :class:`InferenceSummary` when the run
ends. Nothing here talks to a backend or touches a file.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import Field

from crystalbench.inference.config import InferenceConfig
from crystalbench.inference.records import GenerationSettings, InferenceRecord
from crystalbench.types import PARSE_FAILED_STATUSES, Record


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
    config: InferenceConfig | None = None
    """The configuration of the run, when it was started from one
    (:func:`crystalbench.inference.run_inference`, ``crystal infer``, ``crystal run``)."""


def summarize(stats: RunStats, **fields: Any) -> InferenceSummary:
    """The :class:`InferenceSummary` of a finished run: counters plus the given fields."""
    wall = stats.elapsed
    return InferenceSummary(
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
        **fields,
    )
