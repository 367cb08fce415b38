"""``crystal infer`` (run a model over the benchmark) and ``crystal run`` (infer, score, report).

Both commands take the same inference flags, declared once in :data:`INFERENCE_FLAGS`;
``run`` adds the scoring and report flags of :data:`RUN_FLAGS`. Each flag sets one field
of the command's config (:class:`~crystalbench.inference.InferenceConfig`,
:class:`~crystalbench.inference.RunConfig`); :func:`crystalbench.cli.binding.configured`
merges them with a ``--config`` file and the documented environment variables. The
commands then call one library function each (:func:`~crystalbench.inference.run_inference`,
:func:`~crystalbench.inference.run_benchmark`) and print what it returns.

The local model's knobs are ``--model-backend``, ``--model-device``, ``--model-dtype`` and
``--model-batch-size``: ``--device`` is where the sentence encoder runs, in every command.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from crystalbench.cli.binding import configured
from crystalbench.cli.common import (
    OverwriteResults,
    Quiet,
    ShowProgress,
    TrackerOption,
    TrackerProject,
    check_tracker,
    console,
    err_console,
    guard_line,
    handle_errors,
    leaderboard_table,
    print_warnings,
    track_folders,
)
from crystalbench.cli.flags import Flag, cache_flags, device_flag, read_ids, split_commas
from crystalbench.cli.score_options import (
    ENCODER_FLAG,
    EXTRACTOR_FLAGS,
    GUARD_FLAG,
    THRESHOLD_FLAG,
    VERIFY_FLAGS,
)
from crystalbench.inference.config import InferenceConfig, RunConfig
from crystalbench.metrics import plural

EXIT_INCOMPLETE = 1
"""Exit code when some selected items still have no answer (error records)."""
EXIT_INTERRUPTED = 130


# --- flag values -> config values ------------------------------------------------------------
def _extra_body(value: str | None) -> dict[str, Any] | None:
    from crystalbench.errors import InputError

    if not value:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", field="extra-body") from None
    if not isinstance(parsed, dict):
        raise InputError("must be a JSON object", field="extra-body")
    return parsed


INFERENCE_FLAGS: tuple[Flag, ...] = (
    Flag(
        "model",
        ("--model", "-m"),
        "Served model name (openai), or hub id / folder (vllm, transformers)",
        metavar="NAME",
        required=True,
    ),
    Flag(
        "benchmark",
        ("--benchmark", "-b"),
        "sample, waybarrios/CRYSTAL, a save_to_disk folder, a .parquet or .jsonl file",
        metavar="BENCHMARK",
    ),
    Flag(
        "backend",
        ("--model-backend",),
        "What runs the model: openai (any OpenAI-compatible endpoint), vllm (offline) or "
        "transformers",
        metavar="[openai|vllm|transformers]",
        param_name="model_backend",
    ),
    Flag(
        "base_urls",
        ("--base-url",),
        "Endpoint ending in /v1; repeat to spread requests over replicas",
        kind=list[str],
        metavar="URL",
        convert=lambda urls: list(urls) or None,
        default_text="$OPENAI_BASE_URL, else the OpenAI API",
        param_name="base_url",
    ),
    Flag(
        "api_key_env",
        ("--api-key-env",),
        "Environment variable holding the API key (never the key itself)",
        metavar="VARIABLE",
    ),
    Flag("concurrency", ("--concurrency",), "Requests in flight per base URL", kind=int),
    Flag(
        "timeout",
        ("--timeout",),
        "Seconds one request may take in all, however slowly the server answers",
        kind=float,
        metavar="SECONDS",
    ),
    Flag(
        "max_attempts",
        ("--max-attempts",),
        "Requests per item on timeouts, 429 and 5xx, with backoff",
        kind=int,
    ),
    Flag(
        "max_retry_after",
        ("--max-retry-after",),
        "Longest Retry-After wait honoured, in seconds",
        kind=float,
        metavar="SECONDS",
    ),
    Flag("generation.temperature", ("--temperature",), "Sampling temperature", kind=float),
    Flag("generation.max_tokens", ("--max-tokens",), "Maximum completion tokens", kind=int),
    Flag(
        "generation.top_p",
        ("--top-p",),
        "Nucleus sampling top_p",
        kind=float,
        default_text="the server's",
    ),
    Flag(
        "generation.seed",
        ("--seed",),
        "Sampling seed sent with every request (recorded in every record)",
        kind=int,
        default_text="the server's",
    ),
    Flag(
        "prompt_file",
        ("--prompt-file",),
        "Prompt template file with {question} and {options}",
        metavar="FILE",
        default_text="built-in infer_v1",
    ),
    Flag(
        "extra_body",
        ("--extra-body",),
        "JSON object added to every request, e.g. '{\"top_k\": 20}'",
        metavar="JSON",
        convert=_extra_body,
        default_text="none",
    ),
    Flag(
        "max_image_side",
        ("--max-image-side",),
        "Longest image side sent; larger images are downscaled first",
        kind=int,
        metavar="PIXELS",
        default_text="$CRYSTALBENCH_IMAGE_MAX_SIDE, else 2048",
    ),
    Flag(
        "image_root",
        ("--image-root",),
        "A folder item images may lie in besides the benchmark file's own folder",
        metavar="FOLDER",
        default_text="none",
    ),
    Flag(
        "sources",
        ("--sources",),
        "Only items of these sources (comma-separated, e.g. mathvision,mmvp)",
        convert=split_commas,
        metavar="NAMES",
        default_text="all",
    ),
    Flag(
        "ids",
        ("--ids",),
        "Only these item ids: comma-separated, or @FILE with one id per line",
        convert=read_ids,
        metavar="IDS|@FILE",
        default_text="all",
    ),
    Flag(
        "limit",
        ("--limit",),
        "Only the first N items (after --sources and --ids)",
        kind=int,
        metavar="N",
        default_text="all",
    ),
    Flag("retry_errors", ("--retry-errors",), "Answer error records again", kind=bool),
    Flag(
        "allow_mixed",
        ("--allow-mixed",),
        "Append to a file holding another model, prompt or settings",
        kind=bool,
    ),
    Flag(
        "preflight",
        ("--preflight/--no-preflight",),
        "Check endpoints, key and model name before starting",
        kind=bool,
    ),
    Flag(
        "batch_size",
        ("--model-batch-size",),
        "Items per generate call of a local model (0: all at once)",
        kind=int,
        metavar="N",
        default_text="vllm 1024, transformers 4",
        param_name="model_batch_size",
    ),
    Flag(
        "device",
        ("--model-device",),
        "Where a transformers model runs: cuda, cuda:1, cpu, mps",
        metavar="DEVICE",
        default_text="cuda if present",
        param_name="model_device",
    ),
    Flag(
        "dtype",
        ("--model-dtype",),
        "Precision of a local model: auto, bfloat16, float16 or float32",
        metavar="[auto|bfloat16|float16|float32]",
        param_name="model_dtype",
    ),
    Flag(
        "tensor_parallel_size",
        ("--tensor-parallel-size",),
        "vllm: GPUs to shard the model over",
        kind=int,
    ),
    Flag(
        "gpu_memory_utilization",
        ("--gpu-memory-utilization",),
        "vllm: share of GPU memory to use",
        kind=float,
    ),
    Flag(
        "max_model_len",
        ("--max-model-len",),
        "vllm: context length cap",
        kind=int,
        metavar="TOKENS",
        default_text="the model's",
    ),
    Flag(
        "trust_remote_code",
        ("--trust-remote-code",),
        "Allow custom model code (local backends)",
        kind=bool,
    ),
    Flag(
        "fsync_interval",
        ("--fsync-interval",),
        "Seconds between fsyncs of the output, 0: every record",
        kind=float,
        metavar="SECONDS",
    ),
    Flag(
        "abort_after",
        ("--abort-after",),
        "Stop when this many items failed and none succeeded, 0: never",
        kind=int,
        metavar="N",
    ),
)
"""Every inference option of ``crystal infer`` and ``crystal run`` (one
:class:`~crystalbench.inference.InferenceConfig` field each), in ``--help`` order."""

RUN_FLAGS: tuple[Flag, ...] = (
    *INFERENCE_FLAGS,
    ENCODER_FLAG,
    THRESHOLD_FLAG,
    GUARD_FLAG,
    *EXTRACTOR_FLAGS,
    *VERIFY_FLAGS,
    device_flag("scoring."),
    *cache_flags("scoring."),
    Flag("report", ("--report/--no-report",), "Write OUT/report.html", kind=bool),
)
"""The options of ``crystal run``: inference, then scoring (``scoring.``) and the report."""


def _reporter(enabled: bool) -> Any:
    from crystalbench.inference.progress import LogProgress, RichProgress

    if not enabled:
        return None
    if sys.stderr.isatty() or os.environ.get("CRYSTALBENCH_PROGRESS") == "1":
        return RichProgress(console=err_console)
    return LogProgress()


def _announce(message: str) -> None:
    console.print(f"[bold]crystal infer[/]: {message}", highlight=False)


def _warn(message: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False)


def summary_table(summary: Any) -> Any:
    """A rich table of an :class:`~crystalbench.inference.InferenceSummary`."""
    from rich.table import Table

    from crystalbench.inference.progress import format_duration

    table = Table(title="Inference summary", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("model", f"{summary.model} ({summary.backend})")
    table.add_row("prompt", f"{summary.prompt_name} ({summary.prompt_hash})")
    table.add_row(
        "items",
        f"{summary.n_selected} selected, {summary.n_already_done} already done, "
        f"{summary.n_run} run now",
    )
    table.add_row("answered", f"{summary.n_ok} ({summary.n_parse_failed} unparseable)")
    errors = ", ".join(f"{k} {v}" for k, v in sorted(summary.errors_by_kind.items()))
    table.add_row("errors", f"{summary.n_errors}" + (f" ({errors})" if errors else ""))
    if summary.n_skipped_errors:
        table.add_row("skipped", f"{summary.n_skipped_errors} error records (use --retry-errors)")
    table.add_row(
        "tokens",
        f"{summary.prompt_tokens:,} prompt, {summary.completion_tokens:,} completion "
        f"({summary.tokens_per_s:,.0f} tok/s)",
    )
    latency = "-" if summary.mean_latency_s is None else f"{summary.mean_latency_s:.2f} s"
    table.add_row(
        "time",
        f"{format_duration(summary.wall_s)} wall, {summary.items_per_s:.2f} items/s, "
        f"mean latency {latency}",
    )
    table.add_row("attempts", str(summary.attempts))
    for endpoint in summary.endpoints:
        table.add_row(
            "endpoint",
            f"{endpoint['base_url']}: {endpoint['sent']} sent, {endpoint['ok']} ok, "
            f"{endpoint['failed']} failed",
        )
    table.add_row(
        "output",
        f"{summary.out} ({plural(summary.n_records, 'record')}, {summary.n_pending} pending)",
    )
    return table


def _print_summary(summary: Any) -> None:
    console.print(summary_table(summary))
    for kind, message in sorted(summary.error_examples.items()):
        err_console.print(f"[red]{escape(kind)}[/]: {escape(message)}", highlight=False)
    if summary.n_pending:
        hint = "--retry-errors" if summary.n_errors or summary.n_skipped_errors else ""
        console.print(
            f"{summary.n_pending} selected items have no answer yet: rerun the same command"
            + (f" with {hint}" if hint else "")
            + " to finish them.",
            highlight=False,
        )


def _interrupted(out: Path) -> typer.Exit:
    err_console.print(
        f"interrupted: every record written so far is in {out}; rerun the same command to resume.",
        highlight=False,
        markup=False,
    )
    return typer.Exit(EXIT_INTERRUPTED)


InferOut = Annotated[
    Path,
    typer.Option("--out", "-o", metavar="FILE", help="Output JSONL (resumed when it exists)"),
]
RunOut = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        metavar="FOLDER",
        help="Folder for predictions.jsonl, inference.json, examples.jsonl, summary.json, "
        "report.html",
    ),
]


@handle_errors
@configured(
    InferenceConfig,
    INFERENCE_FLAGS,
    config_help="YAML, JSON or TOML file with InferenceConfig fields; flags win",
)
def infer(
    out: InferOut, config: InferenceConfig, progress: ShowProgress = True, quiet: Quiet = False
) -> None:
    """Run a model over the benchmark: one JSONL record per item, resumable, concurrent.

    The run's summary and configuration go beside OUT, in NAME.inference.json.

    Exit status: 0 when every selected item has an answer, 1 when some failed (rerun
    with --retry-errors), 2 on bad input, 130 when interrupted.
    """
    from crystalbench.inference import run_inference
    from crystalbench.inference.pipeline import manifest_path

    try:
        done = run_inference(
            config,
            out,
            manifest=manifest_path(out),
            progress=_reporter(progress and not quiet),
            on_start=_announce,
            on_warning=_warn,
        )
    except KeyboardInterrupt:
        raise _interrupted(out) from None
    _print_summary(done.summary)
    if done.summary.n_pending:
        raise typer.Exit(EXIT_INCOMPLETE)


def _print_run(done: Any, config: RunConfig, out: Path) -> None:
    """A finished run on the terminal: its leaderboard row, the encoder's counts, the guard,
    verifier and extraction lines and the files written."""
    title = f"CRYSTAL scores ({config.model})"
    console.print(leaderboard_table([(config.model, done.scores.summary)], title=title))
    stats = done.scores.encode_stats
    console.print(
        f"encoder {config.scoring.encoder}: {plural(stats.encoded, 'step')} encoded, "
        f"{stats.cache_hits} from the cache",
        highlight=False,
    )
    guarded = guard_line(done.scores.summary)
    if guarded is not None:
        console.print(guarded, highlight=False, markup=False)
    from crystalbench.cli.verifier import extraction_line, verifier_line

    for line in (verifier_line(done.scores.summary), extraction_line(done.scores.summary)):
        if line is not None:
            console.print(line, highlight=False, markup=False)
    console.print(f"wrote {', '.join(done.files)} in {out}", highlight=False)


@handle_errors
@configured(
    RunConfig,
    RUN_FLAGS,
    config_help="YAML, JSON or TOML file with InferenceConfig fields and a scoring: section "
    "(ScoreConfig fields); flags win",
)
def run(
    out: RunOut,
    config: RunConfig,
    progress: ShowProgress = True,
    quiet: Quiet = False,
    tracker: TrackerOption = None,
    tracker_project: TrackerProject = None,
    overwrite: OverwriteResults = False,
) -> None:
    """Infer, then score, then report, in one command (predictions resume like `infer`).

    OUT may hold only this run's own results: another run's are refused unless --overwrite."""
    check_tracker(tracker)
    from crystalbench.inference import run_benchmark
    from crystalbench.inference.pipeline import PREDICTIONS_FILE

    try:
        done = run_benchmark(
            config,
            out,
            progress=_reporter(progress and not quiet),
            on_start=_announce,
            on_warning=_warn,
            on_inferred=_print_summary,
            overwrite=overwrite,
        )
    except KeyboardInterrupt:
        raise _interrupted(out / PREDICTIONS_FILE) from None
    _print_run(done, config, out)
    print_warnings(done.scores.summary)
    track_folders([out], tracker, tracker_project, command="crystal run", quiet=quiet)
    if done.inference.n_pending:
        raise typer.Exit(EXIT_INCOMPLETE)
