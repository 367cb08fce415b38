"""Shared pieces of the CLI: error handling, progress bars, summary tables."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from crystalbench.errors import CrystalbenchError

# Piped or captured output gets a wide fixed width so tables are never truncated.
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INPUT = 2
"""Exit code for bad input (files, names, configs)."""


ShowProgress = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Progress bars (on a terminal)")
]
"""The ``--progress/--no-progress`` option (one meaning everywhere)."""
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors")]
"""The ``-q/--quiet`` option: no progress bars, no tables, no notes; errors still print."""

TrackerOption = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--tracker",
        metavar="mlflow|wandb",
        help="Also log the results to an experiment tracker: configuration, summary, "
        "breakdowns and the per-item table (MLflow honours MLFLOW_TRACKING_URI; W&B honours "
        "WANDB_MODE=offline)",
        show_default="none",
    ),
]
"""The ``--tracker`` option of ``crystal score``, ``run`` and ``leaderboard``."""
TrackerProject = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--tracker-project",
        metavar="NAME",
        help="The MLflow experiment or W&B project to log to",
        show_default="crystalbench",
    ),
]
"""The ``--tracker-project`` option beside ``--tracker``."""
OverwriteResults = Annotated[
    bool,
    typer.Option(
        "--overwrite/--no-overwrite",
        help="Replace results of other predictions or another configuration at --out "
        "(refused without it)",
    ),
]
"""The ``--overwrite`` option of the commands that write results folders."""


def check_tracker(tracker: str | None) -> None:
    """Refuse a bad ``--tracker`` before the command does any work."""
    if tracker is not None:
        from crystalbench.report.tracking import check_tracker as check

        check(tracker)


def track_folders(
    folders: Sequence[Any],
    tracker: str | None,
    project: str | None,
    *,
    command: str,
    group: str | None = None,
    quiet: bool = False,
    to_stderr: bool = False,
) -> None:
    """Log results folders (paths, or runs already loaded) to ``tracker`` (nothing without
    one) and say where each went."""
    if tracker is None:
        return
    from crystalbench.report.loading import RunData, load_run
    from crystalbench.report.tracking import track_runs

    runs = [f if isinstance(f, RunData) else load_run(f) for f in folders]
    tracked = track_runs(runs, tracker, project=project, command=command, group=group)
    if quiet:
        return
    for entry in tracked:
        what = "already in" if entry.already_logged else "logged to"
        (err_console if to_stderr else console).print(
            f"{entry.name}: {what} {entry.tracker} run {entry.run_id} ({entry.location})",
            highlight=False,
            markup=False,
        )


PORT_RANGE = {"min": 0, "max": 65535}
"""What ``--port`` takes, in every command that listens (``typer.Option(**PORT_RANGE)``):
``--port 99999`` is a usage error (exit 2), not a traceback from ``bind``."""


def handle_errors(func: F) -> F:
    """Turn our own errors into a one-line message and exit code 2 (no traceback).

    A command called with ``quiet=True`` (the ``--quiet`` option) prints nothing on stdout
    while it runs.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        quiet = console.quiet
        console.quiet = quiet or bool(kwargs.get("quiet"))
        try:
            return func(*args, **kwargs)
        except CrystalbenchError as exc:
            # The message is text, not markup: "pip install 'crystalbench[embed]'" stays whole;
            # and it is not wrapped, so a command in it can be copied in one piece.
            err_console.print(
                f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
            )
            raise typer.Exit(EXIT_INPUT) from None
        finally:
            console.quiet = quiet

    return wrapper  # type: ignore[return-value]


@contextmanager
def progress_hook(enabled: bool = True) -> Iterator[Callable[[str, int, int | None], None] | None]:
    """A ``hook(stage, advance, total)`` drawing rich progress bars, or ``None`` if disabled."""
    if not enabled or (not sys.stderr.isatty() and not _force_progress()):
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )
    tasks: dict[str, Any] = {}

    def hook(stage: str, advance: int, total: int | None) -> None:
        if stage not in tasks:
            labels = {"parse": "parsing", "encode": "embedding steps", "score": "scoring items"}
            label = labels.get(stage, stage)
            tasks[stage] = progress.add_task(label, total=total, rate="")
        task = tasks[stage]
        if total is not None:
            progress.update(task, total=total)
        progress.advance(task, advance)
        elapsed = progress.tasks[task].elapsed or 0.0
        done = progress.tasks[task].completed
        if elapsed > 0:
            progress.update(task, rate=f"{done / elapsed:,.0f}/s")

    with progress:
        yield hook


def _force_progress() -> bool:
    import os

    return os.environ.get("CRYSTALBENCH_PROGRESS") == "1"


def leaderboard_table(rows: Sequence[tuple[str, Any]], title: str | None = None) -> Table:
    """A rich table with the paper's Table 2 columns and the item counts.

    ``rows`` are ``(name, summary)``; columns come from :mod:`crystalbench.metrics`.
    """
    from crystalbench.metrics import LEADERBOARD, PAIR_METRICS, TABLE_COUNTS, format_value

    # Which fact guard each run used, only when one did (the paper's table otherwise).
    guards = [getattr(summary, "config", {}).get("guard", "none") for _, summary in rows]
    guarded = any(guard != "none" for guard in guards)
    from crystalbench.scoring.verify import verifier_label

    # The step verifier's figures, only when a run was verified (not in the paper).
    verifiers = [verifier_label(getattr(summary, "verification", None)) for _, summary in rows]
    checked = any(label != "none" for label in verifiers)
    notes = []
    if len(set(guards)) > 1:
        notes.append("Runs with different fact guards are not comparable.")
    if checked and len(set(verifiers)) > 1:
        notes.append("Runs with different verifiers are not comparable on the verifier's columns.")
    caption = " ".join(notes) or None
    table = Table(title=title, show_lines=False, caption=caption)
    table.add_column("Model", style="bold")
    if guarded:
        table.add_column("Guard")
    for column in LEADERBOARD:
        table.add_column(column.header, justify="right")
    if checked:
        for header in ("Verified prec.", "Halluc. rate", "Unverified"):
            table.add_column(header, justify="right")
    for count in TABLE_COUNTS:
        table.add_column(count.header, justify="right")
    # Pair accuracy (MMVP) only when a run has paired items; "-" for a run without.
    paired = any(getattr(summary, "pairs", None) is not None for _, summary in rows)
    if paired:
        for pair_column in PAIR_METRICS:
            table.add_column(pair_column.header, justify="right")
        table.add_column("Pairs incomplete", justify="right")
    for name, summary in rows:
        cells = [format_value(getattr(summary, c.key), c.number_format) for c in LEADERBOARD]
        counts = [str(getattr(summary, count.key)) for count in TABLE_COUNTS]
        pairs = getattr(summary, "pairs", None)
        extra: list[str] = []
        if paired and pairs is None:
            extra = ["-"] * (len(PAIR_METRICS) + 1)
        elif pairs is not None:
            extra = [
                *(format_value(getattr(pairs, c.key), c.number_format) for c in PAIR_METRICS),
                str(pairs.n_pairs_incomplete),
            ]
        guard = [getattr(summary, "config", {}).get("guard", "none")] if guarded else []
        verified = getattr(summary, "verification", None) if checked else None
        if checked:
            cells += (
                ["-", "-", "-"]
                if verified is None
                else [
                    *(
                        "-" if value is None else f"{value:.3f}"
                        for value in (verified.verified_precision, verified.hallucination_rate)
                    ),
                    str(verified.n_unverified),
                ]
            )
        table.add_row(name, *guard, *cells, *counts, *extra)
    return table


def breakdown_table(summary: Any, attribute: str, title: str) -> Table:
    """Per-source or per-difficulty table of one summary."""
    from crystalbench.metrics import LEADERBOARD, TABLE_COUNTS, format_value

    table = Table(title=title)
    table.add_column(attribute.replace("by_", "").capitalize(), style="bold")
    for column in LEADERBOARD:
        table.add_column(column.header, justify="right")
    for count in TABLE_COUNTS:
        table.add_column(count.header, justify="right")
    for key, group in getattr(summary, attribute).items():
        cells = [format_value(getattr(group, c.key), c.number_format) for c in LEADERBOARD]
        counts = [str(getattr(group, count.key)) for count in TABLE_COUNTS]
        table.add_row(key, *cells, *counts)
    return table


def guard_line(summary: Any, name: str | None = None) -> str | None:
    """What the fact guard did in a run, on one line; ``None`` without a guard.

    Examples:
        >>> from types import SimpleNamespace as S
        >>> run = S(config={"guard": "facts"}, n_vetoed_pairs=3, n_vetoed_items=2,
        ...         vetoed_by_reason={"number": 2, "negation": 0, "option": 1})
        >>> guard_line(run)
        'guard facts: 3 pairs vetoed in 2 items (number 2, option 1)'
        >>> guard_line(S(config={"guard": "none"})) is None
        True
    """
    kind = summary.config.get("guard", "none")
    if kind == "none":
        return None
    reasons = ", ".join(f"{k} {v}" for k, v in summary.vetoed_by_reason.items() if v)
    pairs, items = summary.n_vetoed_pairs, summary.n_vetoed_items
    return (
        (f"{name}: " if name else "")
        + f"guard {kind}: {pairs} pair{'s' * (pairs != 1)} vetoed in {items} "
        + f"item{'s' * (items != 1)}"
        + (f" ({reasons})" if reasons else "")
    )


def print_warnings(summary: Any, name: str | None = None) -> None:
    """A run's warnings (``summary.warnings``: most items without a prediction...), one
    ``warning:`` line each on stderr; printed under ``--quiet`` too (the numbers mislead)."""
    prefix = f"{name}: " if name else ""
    for warning in getattr(summary, "warnings", None) or ():
        err_console.print(
            "[bold yellow]warning:[/] " + escape(prefix + warning),
            highlight=False,
            soft_wrap=True,
        )


def counts_line(summary: Any) -> str:
    """Every item count of a summary on one line, e.g. ``items 40 | scored 36 | ...``."""
    from crystalbench.metrics import COUNTS

    return " | ".join(
        f"{count.header.lower()} {getattr(summary, count.key, 0)}"
        for count in COUNTS
        if not count.optional or getattr(summary, count.key, None)
    )
