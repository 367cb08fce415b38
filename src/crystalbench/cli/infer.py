"""``crystal infer`` (run a model over the benchmark) and ``crystal run`` (infer, score, report).

Both commands take the same inference flags, declared once in :data:`INFERENCE_FLAGS`.
Each flag sets one :class:`~crystalbench.inference.InferenceConfig` field and defaults
to "not given", so a ``--config`` file can supply the value and an explicit flag still
wins; the real defaults live in ``InferenceConfig`` / ``settings.py``. The commands then
call one library function each (:func:`~crystalbench.inference.run_inference`,
:func:`~crystalbench.inference.run_benchmark`) and print what it returns.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from crystalbench.cli.common import console, err_console, handle_errors, leaderboard_table
from crystalbench.defaults import ENCODER, TAU
from crystalbench.settings import (
    INFER_ABORT_AFTER,
    INFER_API_KEY_ENV,
    INFER_CONCURRENCY,
    INFER_FSYNC_INTERVAL,
    INFER_MAX_ATTEMPTS,
    INFER_MAX_RETRY_AFTER,
    INFER_MAX_TOKENS,
    INFER_TEMPERATURE,
    INFER_TIMEOUT,
)

HUB_BENCHMARK = "waybarrios/CRYSTAL"
EXIT_INCOMPLETE = 1
"""Exit code when some selected items still have no answer (error records)."""
EXIT_INTERRUPTED = 130


# --- flag values -> config values ------------------------------------------------------------
def _split(value: str | None) -> list[str] | None:
    if not value:
        return None
    return [part.strip() for part in value.split(",") if part.strip()] or None


def _ids(value: str | None) -> list[str] | None:
    from crystalbench.errors import InputError

    if value and value.startswith("@"):
        path = Path(value[1:]).expanduser()
        if not path.is_file():
            raise InputError("ids file not found", path=path, field="ids")
        return [line.strip() for line in path.read_text().splitlines() if line.strip()] or None
    return _split(value)


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


def _option(kind: Any, *names: str, help: str) -> Any:
    """``Annotated[Optional[kind], typer.Option(...)]``: a flag whose absence means "not given"."""
    return Annotated[Optional[kind], typer.Option(*names, help=help)]  # noqa: UP045


@dataclass(frozen=True)
class ConfigFlag:
    """One command-line flag that sets one :class:`InferenceConfig` field."""

    param: str
    """Parameter name in the command."""
    field: str
    """The field it sets (dotted for a nested one: ``generation.temperature``)."""
    annotation: Any
    """The typer annotation (type and option)."""
    convert: Callable[[Any], Any] | None = None
    """Turns the flag's text into the field's value (``None``: as typer parsed it)."""


INFERENCE_FLAGS: tuple[ConfigFlag, ...] = (
    ConfigFlag(
        "model",
        "model",
        _option(
            str,
            "--model",
            "-m",
            help="Served model name (openai), or hub id / folder (vllm, transformers)",
        ),
    ),
    ConfigFlag(
        "benchmark",
        "benchmark",
        _option(
            str,
            "--benchmark",
            "-b",
            help=f"{HUB_BENCHMARK} (default), sample, a save_to_disk folder, .parquet, .jsonl",
        ),
    ),
    ConfigFlag(
        "backend",
        "backend",
        _option(
            str,
            "--backend",
            help="openai (default: any OpenAI-compatible endpoint), vllm (offline) or transformers",
        ),
    ),
    ConfigFlag(
        "base_url",
        "base_urls",
        _option(
            list[str],
            "--base-url",
            help="Endpoint ending in /v1; repeat to spread requests over replicas "
            "(default: $OPENAI_BASE_URL or the OpenAI API)",
        ),
        convert=lambda urls: list(urls) or None,
    ),
    ConfigFlag(
        "api_key_env",
        "api_key_env",
        _option(
            str,
            "--api-key-env",
            help=f"Environment variable holding the API key (default {INFER_API_KEY_ENV})",
        ),
    ),
    ConfigFlag(
        "concurrency",
        "concurrency",
        _option(
            int,
            "--concurrency",
            help=f"Requests in flight per base URL (default {INFER_CONCURRENCY})",
        ),
    ),
    ConfigFlag(
        "timeout",
        "timeout",
        _option(
            float,
            "--timeout",
            help="Seconds one request may take in all, however slowly the server answers "
            f"(default {INFER_TIMEOUT:g})",
        ),
    ),
    ConfigFlag(
        "max_attempts",
        "max_attempts",
        _option(
            int,
            "--max-attempts",
            help="Requests per item on timeouts, 429 and 5xx, with backoff "
            f"(default {INFER_MAX_ATTEMPTS})",
        ),
    ),
    ConfigFlag(
        "max_retry_after",
        "max_retry_after",
        _option(
            float,
            "--max-retry-after",
            help="Longest Retry-After wait honoured, in seconds "
            f"(default {INFER_MAX_RETRY_AFTER:g})",
        ),
    ),
    ConfigFlag(
        "temperature",
        "generation.temperature",
        _option(float, "--temperature", help=f"Sampling temperature (default {INFER_TEMPERATURE})"),
    ),
    ConfigFlag(
        "max_tokens",
        "generation.max_tokens",
        _option(
            int, "--max-tokens", help=f"Maximum completion tokens (default {INFER_MAX_TOKENS})"
        ),
    ),
    ConfigFlag(
        "top_p",
        "generation.top_p",
        _option(float, "--top-p", help="Nucleus sampling top_p (default: the server's)"),
    ),
    ConfigFlag(
        "seed",
        "generation.seed",
        _option(int, "--seed", help="Sampling seed (default: the server's)"),
    ),
    ConfigFlag(
        "prompt_file",
        "prompt_file",
        _option(
            str,
            "--prompt-file",
            help="Prompt template file with {question} and {options} (default: built-in infer_v1)",
        ),
    ),
    ConfigFlag(
        "extra_body",
        "extra_body",
        _option(
            str, "--extra-body", help="JSON object added to every request, e.g. '{\"top_k\": 20}'"
        ),
        convert=_extra_body,
    ),
    ConfigFlag(
        "max_image_side",
        "max_image_side",
        _option(
            int,
            "--max-image-side",
            help="Longest image side sent; larger images are downscaled first "
            "[default: $CRYSTALBENCH_IMAGE_MAX_SIDE, else 2048]",
        ),
    ),
    ConfigFlag(
        "image_root",
        "image_root",
        _option(
            str,
            "--image-root",
            help="Folder item images may also lie under (besides the benchmark's own folder)",
        ),
    ),
    ConfigFlag("limit", "limit", _option(int, "--limit", help="Only the first N selected items")),
    ConfigFlag(
        "sources",
        "sources",
        _option(str, "--sources", help="Comma-separated sources, e.g. mathvision,mmvp"),
        convert=_split,
    ),
    ConfigFlag(
        "ids",
        "ids",
        _option(str, "--ids", help="Comma-separated item ids, or @FILE with one id per line"),
        convert=_ids,
    ),
    ConfigFlag(
        "retry_errors",
        "retry_errors",
        _option(bool, "--retry-errors", help="Answer error records again"),
    ),
    ConfigFlag(
        "allow_mixed",
        "allow_mixed",
        _option(
            bool,
            "--allow-mixed",
            help="Append to a file holding another model, prompt or settings",
        ),
    ),
    ConfigFlag(
        "preflight",
        "preflight",
        _option(
            bool,
            "--preflight/--no-preflight",
            help="Check endpoints, key and model name before starting (default: check)",
        ),
    ),
    ConfigFlag(
        "batch_size",
        "batch_size",
        _option(
            int,
            "--batch-size",
            help="Items per generate call (vllm: 1024, 0 = all; transformers: 4)",
        ),
    ),
    ConfigFlag(
        "device",
        "device",
        _option(
            str,
            "--device",
            help="transformers device: cuda, cuda:1, cpu, mps (default: cuda if present)",
        ),
    ),
    ConfigFlag(
        "dtype",
        "dtype",
        _option(
            str,
            "--dtype",
            help="auto (default), bfloat16, float16 or float32 (local backends)",
        ),
    ),
    ConfigFlag(
        "tensor_parallel_size",
        "tensor_parallel_size",
        _option(
            int, "--tensor-parallel-size", help="vllm: GPUs to shard the model over (default 1)"
        ),
    ),
    ConfigFlag(
        "gpu_memory_utilization",
        "gpu_memory_utilization",
        _option(
            float,
            "--gpu-memory-utilization",
            help="vllm: share of GPU memory to use (default 0.9)",
        ),
    ),
    ConfigFlag(
        "max_model_len",
        "max_model_len",
        _option(int, "--max-model-len", help="vllm: context length cap"),
    ),
    ConfigFlag(
        "trust_remote_code",
        "trust_remote_code",
        _option(bool, "--trust-remote-code", help="Allow custom model code (local backends)"),
    ),
    ConfigFlag(
        "fsync_interval",
        "fsync_interval",
        _option(
            float,
            "--fsync-interval",
            help="Seconds between fsyncs of the output, 0: every record "
            f"(default {INFER_FSYNC_INTERVAL:g})",
        ),
    ),
    ConfigFlag(
        "abort_after",
        "abort_after",
        _option(
            int,
            "--abort-after",
            help="Stop when this many items failed and none succeeded, 0: never "
            f"(default {INFER_ABORT_AFTER})",
        ),
    ),
)
"""Every inference flag of ``crystal infer`` and ``crystal run``, in ``--help`` order."""


def with_inference_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command every flag of :data:`INFERENCE_FLAGS`.

    The command declares its own parameters plus ``overrides``; it receives the flags
    that were given as ``{field: value}`` in ``overrides`` (flags left out are absent).
    """
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "overrides"]
    added = [
        inspect.Parameter(
            flag.param, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=flag.annotation
        )
        for flag in INFERENCE_FLAGS
    ]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        overrides: dict[str, Any] = {}
        for flag in INFERENCE_FLAGS:
            value = kwargs.pop(flag.param, None)
            if flag.convert is not None and value is not None:
                value = flag.convert(value)
            if value is not None:
                overrides[flag.field] = value
        return command(**kwargs, overrides=overrides)

    parameters = [*own, *added]
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return wrapper


ConfigFile = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--config", help="YAML or JSON file with InferenceConfig fields; flags override it"
    ),
]
ShowProgress = Annotated[bool, typer.Option(help="Show a progress bar")]


def inference_config(path: Path | None, overrides: dict[str, Any]) -> Any:
    """The :class:`InferenceConfig` of a command: the ``--config`` file, flags on top."""
    from crystalbench.errors import InputError
    from crystalbench.inference import load_inference_config

    if path is None and "model" not in overrides:
        raise InputError("missing: pass --model (or name it in a --config file)", field="model")
    return load_inference_config(path, overrides)


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
    err_console.print(f"[yellow]warning:[/] {message}", highlight=False)


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
        "output", f"{summary.out} ({summary.n_records} records, {summary.n_pending} pending)"
    )
    return table


def _print_summary(summary: Any) -> None:
    console.print(summary_table(summary))
    for kind, message in sorted(summary.error_examples.items()):
        err_console.print(f"[red]{kind}[/]: {message}", highlight=False, markup=True)
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
    )
    return typer.Exit(EXIT_INTERRUPTED)


@handle_errors
@with_inference_flags
def infer(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output JSONL (resumed if it exists)")],
    config: ConfigFile = None,
    progress: ShowProgress = True,
    *,
    overrides: dict[str, Any],
) -> None:
    """Run a model over the benchmark: one JSONL record per item, resumable, concurrent.

    The run's summary and configuration go beside OUT, in NAME.inference.json.

    Exit status: 0 when every selected item has an answer, 1 when some failed (rerun
    with --retry-errors), 2 on bad input, 130 when interrupted.
    """
    from crystalbench.inference import run_inference
    from crystalbench.inference.pipeline import manifest_path

    settings = inference_config(config, overrides)
    try:
        done = run_inference(
            settings,
            out,
            manifest=manifest_path(out),
            progress=_reporter(progress),
            on_start=_announce,
            on_warning=_warn,
        )
    except KeyboardInterrupt:
        raise _interrupted(out) from None
    _print_summary(done.summary)
    if done.summary.n_pending:
        raise typer.Exit(EXIT_INCOMPLETE)


def score_config(path: Path | None, overrides: dict[str, Any]) -> Any:
    """The :class:`ScoreConfig` of ``crystal run``: the ``--score-config`` file, flags on top."""
    from pydantic import ValidationError

    from crystalbench.config import ScoreConfig, load_config
    from crystalbench.errors import InputError

    base: ScoreConfig = load_config(path, ScoreConfig) if path else ScoreConfig()
    try:
        return ScoreConfig.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise InputError(first.get("msg", "invalid value"), field=loc or None) from None


@handle_errors
@with_inference_flags
def run(
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out-dir",
            "-o",
            help="Folder for predictions.jsonl, inference.json, examples.jsonl, summary.json, "
            "report.html",
        ),
    ],
    config: ConfigFile = None,
    score_config_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--score-config", help="YAML file with ScoreConfig fields; the flags below override it"
        ),
    ] = None,
    encoder: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help=f"Sentence encoder: hub name, folder, minilm-offline or hash (default {ENCODER})"
        ),
    ] = None,
    threshold: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option("--threshold", "--tau", help=f"Cosine tau (default {TAU})"),
    ] = None,
    encoder_device: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Encoder device (cuda, cpu, mps)"),
    ] = None,
    cache_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(help="Embedding cache folder"),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the embedding cache")
    ] = False,
    report: Annotated[bool, typer.Option(help="Write OUT_DIR/report.html")] = True,
    progress: ShowProgress = True,
    *,
    overrides: dict[str, Any],
) -> None:
    """Infer, then score, then report, in one command (predictions resume like `infer`)."""
    from crystalbench.inference import run_benchmark
    from crystalbench.inference.pipeline import PREDICTIONS_FILE

    settings = inference_config(config, overrides)
    given: dict[str, Any] = {
        key: value
        for key, value in {
            "encoder": encoder,
            "threshold": threshold,
            "device": encoder_device,
            "cache_dir": str(cache_dir) if cache_dir else None,
        }.items()
        if value is not None
    }
    if no_cache:
        given["use_cache"] = False
    scoring = score_config(score_config_file, given)
    try:
        done = run_benchmark(
            settings,
            scoring,
            out_dir,
            report=report,
            progress=_reporter(progress),
            on_start=_announce,
            on_warning=_warn,
            on_inferred=_print_summary,
        )
    except KeyboardInterrupt:
        raise _interrupted(out_dir / PREDICTIONS_FILE) from None
    model = settings.model
    console.print(
        leaderboard_table([(model, done.scores.summary)], title=f"CRYSTAL scores ({model})")
    )
    stats = done.scores.encode_stats
    console.print(
        f"encoder {scoring.encoder}: {stats.encoded} steps encoded, "
        f"{stats.cache_hits} from the cache",
        highlight=False,
    )
    console.print(f"wrote {', '.join(done.files)} in {out_dir}", highlight=False)
    if done.inference.n_pending:
        raise typer.Exit(EXIT_INCOMPLETE)
