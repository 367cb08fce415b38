"""Progress reporters for the runner: a rich bar on a terminal, periodic lines in logs."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from crystalbench.inference.records import InferenceRecord
from crystalbench.inference.summary import RunStats


def format_duration(seconds: float | None) -> str:
    """``1h02m``, ``3m05s``, ``12s`` or ``0.4s``; ``-`` when unknown.

    Examples:
        >>> format_duration(3725), format_duration(185), format_duration(12.4)
        ('1h02m', '3m05s', '12s')
        >>> format_duration(0.42), format_duration(None)
        ('0.4s', '-')
    """
    if seconds is None or seconds != seconds or seconds < 0:
        return "-"
    if seconds < 10:
        return f"{seconds:.1f}s"
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def rates(stats: RunStats) -> tuple[float, float, float | None]:
    """``(items/s, completion tokens/s, ETA seconds)`` of a run so far."""
    elapsed = stats.elapsed
    if elapsed <= 0 or stats.done == 0:
        return 0.0, 0.0, None
    items_per_s = stats.done / elapsed
    tokens_per_s = stats.completion_tokens / elapsed
    remaining = max(0, stats.total - stats.done)
    return items_per_s, tokens_per_s, remaining / items_per_s


class RichProgress:
    """A rich progress bar: done/total, items/s, tokens/s, errors, elapsed and ETA."""

    def __init__(
        self, console: Any = None, description: str = "inference", refresh_interval: float = 0.2
    ) -> None:
        self.console = console
        self.description = description
        self.refresh_interval = refresh_interval
        self._progress: Any = None
        self._task: Any = None
        self._last = 0.0

    def start(self, total: int, stats: RunStats) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[speed]}"),
            TextColumn("[red]{task.fields[errors]}"),
            TextColumn("{task.fields[times]}"),
            console=self.console,
            transient=False,
        )
        self._task = self._progress.add_task(
            self.description, total=total, speed="", errors="", times=""
        )
        self._progress.start()

    def advance(self, record: InferenceRecord, stats: RunStats) -> None:
        now = time.monotonic()
        if self._progress is None:
            return
        if now - self._last < self.refresh_interval and stats.done < stats.total:
            self._progress.update(self._task, completed=stats.done)
            return
        self._last = now
        items_per_s, tokens_per_s, eta = rates(stats)
        self._progress.update(
            self._task,
            completed=stats.done,
            speed=f"{items_per_s:,.1f} it/s {tokens_per_s:,.0f} tok/s",
            errors=f"{stats.errors} errors" if stats.errors else "",
            times=f"{format_duration(stats.elapsed)} < ETA {format_duration(eta)}",
        )

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class LogProgress:
    """One line every ``interval`` seconds (for logs of batch jobs without a terminal)."""

    def __init__(self, stream: TextIO | None = None, interval: float = 30.0) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval
        self._last = 0.0

    def start(self, total: int, stats: RunStats) -> None:
        self._last = time.monotonic()
        print(f"inference: {total} items to answer", file=self.stream, flush=True)

    def advance(self, record: InferenceRecord, stats: RunStats) -> None:
        now = time.monotonic()
        if now - self._last < self.interval and stats.done < stats.total:
            return
        self._last = now
        items_per_s, tokens_per_s, eta = rates(stats)
        print(
            f"inference: {stats.done}/{stats.total} items, {items_per_s:.2f} it/s, "
            f"{tokens_per_s:.0f} tok/s, {stats.errors} errors, ETA {format_duration(eta)}",
            file=self.stream,
            flush=True,
        )

    def stop(self) -> None:
        return None
