"""``crystal score``: score saved predictions against a benchmark.

The options are :data:`~crystalbench.cli.score_options.SCORE_FLAGS` (one
:class:`~crystalbench.scoring.job.ScoreJob`); the work is
:func:`crystalbench.scoring.job.score_job`; this module prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from crystalbench.cli.binding import configured
from crystalbench.cli.common import (
    EXIT_INPUT,
    OverwriteResults,
    Quiet,
    ShowProgress,
    TrackerOption,
    TrackerProject,
    breakdown_table,
    check_tracker,
    console,
    counts_line,
    err_console,
    guard_line,
    handle_errors,
    leaderboard_table,
    print_warnings,
    progress_hook,
    track_folders,
)
from crystalbench.cli.score_options import SCORE_CONFIG_AT, SCORE_FLAGS
from crystalbench.scoring.job import ScoreJob

Out = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        metavar="FOLDER",
        help="Folder for examples.jsonl and summary.json; with several sets, OUT/NAME/ each",
    ),
]
MorePredictions = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Argument(
        metavar="PREDICTIONS",
        help="More prediction files (what an unquoted shell glob after -p expands to)",
        show_default=False,
    ),
]


@handle_errors
@configured(
    ScoreJob,
    SCORE_FLAGS,
    into="job",
    config_at=SCORE_CONFIG_AT,
    config_help="YAML, JSON or TOML file with ScoreConfig fields (threshold, encoder...); "
    "flags win",
)
def score(
    out: Out,
    job: ScoreJob,
    more: MorePredictions = None,
    progress: ShowProgress = True,
    quiet: Quiet = False,
    tracker: TrackerOption = None,
    tracker_project: TrackerProject = None,
    overwrite: OverwriteResults = False,
) -> None:
    """Score a model's predictions: writes OUT/examples.jsonl and OUT/summary.json.

    Several sets (-p A=a.jsonl -p B=b.jsonl, a folder, a glob): one encoder, OUT/NAME/ each.

    OUT may hold only these predictions' results, scored the same way: anything else is
    refused unless --overwrite.

    A bad set fails alone: exit code 2 once the others are scored and written.
    """
    from crystalbench.cli.entry import taken_encoder
    from crystalbench.scoring.job import score_job

    check_tracker(tracker)
    if more:
        job = job.model_copy(update={"predictions": [*job.predictions, *more]})
    try:
        with progress_hook(progress and not quiet) as hook:
            done = score_job(
                job, out, encoder=taken_encoder(job.scoring), progress=hook, overwrite=overwrite
            )
    except KeyboardInterrupt:
        raise interrupted(out, job) from None
    if done.single:
        print_single(done)
    else:
        print_many(done)
    folders = [done.out] if done.single else [done.out / name for name in done.runs]
    track_folders(folders, tracker, tracker_project, command="crystal score", quiet=quiet)
    if done.failures:
        raise typer.Exit(EXIT_INPUT)


EXIT_INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT, as a shell reports it)."""


def interrupted(out: Path, job: ScoreJob) -> typer.Exit:
    """Say what Ctrl-C kept and how to go on (one line on stderr); exit 130, no traceback.

    Results are written once scoring ends, so the folder holds what it held before; the
    embedding cache keeps the vectors encoded so far (each encoder call is committed).
    """
    scoring = job.scoring
    if scoring.use_cache:
        from crystalbench.encoders.cache import EmbeddingStore

        where = EmbeddingStore.default_path(scoring.cache_dir)
        kept = (
            f"the step vectors encoded so far are kept in the embedding cache ({where}), "
            "so rerunning the same command goes on from there"
        )
    else:
        kept = "nothing was kept (--no-cache): rerunning the same command starts again"
    err_console.print(
        f"interrupted: no results were written to {out} (what it held before is untouched); "
        f"{kept}.",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return typer.Exit(EXIT_INTERRUPTED)


def print_single(done: Any) -> None:
    """Scores, breakdowns and counts of a single set."""
    ((name, run),) = done.runs.items()
    summary = run.summary
    console.print(
        leaderboard_table([(name, summary)], title=f"CRYSTAL scores ({done.benchmark.name})")
    )
    console.print(breakdown_table(summary, "by_source", "By source"))
    console.print(breakdown_table(summary, "by_difficulty", "By difficulty"))
    skipped = summary.n_invalid_records + summary.n_unknown_ids
    console.print(counts_line(summary) + (f" | skipped records {skipped}" if skipped else ""))
    console.print(
        f"encoder {summary.config['encoder']} ({done.encode_stats.encoded} encoded, "
        f"{done.encode_stats.cache_hits} from cache) | wrote {done.out}/examples.jsonl, "
        f"{done.out}/summary.json"
    )
    _matcher_line(summary.config)
    _print_guard_lines([(None, summary)])
    _verifier_line(summary)
    _extraction_line(summary)
    print_warnings(summary)


def print_many(done: Any) -> None:
    """The leaderboard of several sets, then the sets that failed (on stderr)."""
    from crystalbench.scoring.results import EXAMPLES_FILE, SUMMARY_FILE

    out = done.out
    if done.runs:
        rows = [(name, run.summary) for name, run in done.runs.items()]
        console.print(leaderboard_table(rows, title=f"CRYSTAL leaderboard ({done.benchmark.name})"))
        for name, run in done.runs.items():
            skipped = run.summary.n_invalid_records + run.summary.n_unknown_ids
            if skipped:
                console.print(f"{name}: skipped records {skipped}", highlight=False, markup=False)
        stats = done.encode_stats
        first = next(iter(done.runs.values())).summary.config
        console.print(
            f"encoder {first['encoder']} ({stats.encoded} encoded, {stats.cache_hits} from "
            f"cache) | wrote {len(done.runs)} results folders {out}/NAME/ "
            f"({EXAMPLES_FILE}, {SUMMARY_FILE})",
            highlight=False,
            markup=False,
        )
        _matcher_line(first)
        _print_guard_lines([(name, run.summary) for name, run in done.runs.items()])
        for name, run in done.runs.items():
            _verifier_line(run.summary, name)
            _extraction_line(run.summary, name)
        for name, run in done.runs.items():
            print_warnings(run.summary, name)
        console.print(
            f"next: crystal leaderboard {out}/*  |  crystal report {out}/*",
            highlight=False,
            markup=False,
        )
    if done.failures:
        total = len(done.runs) + len(done.failures)
        err_console.print(
            f"[bold red]error:[/] {len(done.failures)} of {total:d} prediction sets failed"
            + (" (the others were scored):" if done.runs else ":"),
            highlight=False,
        )
        for failure in done.failures:
            note = (
                " (its folder keeps an earlier run's results)"
                if done.keeps_earlier_results(failure)
                else ""
            )
            err_console.print(f"  {failure}{note}", highlight=False, markup=False, soft_wrap=True)


def _matcher_line(config: dict[str, Any]) -> None:
    """With the judge matcher: its requests, cache hits and failures (never silent)."""
    info = config.get("matcher_identity")
    if not info:
        return
    failed = info.get("failed_reference_steps", 0)
    console.print(
        f"judge matcher {info.get('model')} at {info.get('base_url')}: "
        f"{info.get('requests', 0)} requests, {info.get('cache_hits', 0)} from cache, "
        f"{failed} reference steps without a verdict (no candidate)"
        + (f"; first error: {info.get('first_error')}" if failed else ""),
        highlight=False,
        markup=False,
    )


def _verifier_line(summary: Any, name: str | None = None) -> None:
    """With a step verifier: its figures, calls, cache hits, tokens and unverified steps."""
    from crystalbench.cli.verifier import verifier_line

    line = verifier_line(summary, name)
    if line is not None:
        console.print(line, highlight=False, markup=False)


def _extraction_line(summary: Any, name: str | None = None) -> None:
    """With an answer extractor: items asked, answers read, failed calls, cache hits."""
    from crystalbench.cli.verifier import extraction_line

    line = extraction_line(summary, name)
    if line is not None:
        console.print(line, highlight=False, markup=False)


def _print_guard_lines(runs: list[tuple[str | None, Any]]) -> None:
    """With a fact guard: what it vetoed, per set (never silent)."""
    for name, summary in runs:
        line = guard_line(summary, name)
        if line is not None:
            console.print(line, highlight=False, markup=False)
