"""``crystal infer`` (run a model over the benchmark) and ``crystal run`` (infer, score, report)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from crystalbench.cli.common import console, err_console, handle_errors, leaderboard_table
from crystalbench.defaults import ENCODER, TAU

HUB_BENCHMARK = "waybarrios/CRYSTAL"
EXIT_INCOMPLETE = 1
"""Exit code when some selected items still have no answer (error records)."""
EXIT_INTERRUPTED = 130

# --- options shared by `infer` and `run` ----------------------------------------------------
Model = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="Served model name (openai), or hub id / folder (vllm, transformers)"
    ),
]
BenchmarkSpec = Annotated[
    str,
    typer.Option(
        "--benchmark",
        "-b",
        help="waybarrios/CRYSTAL, sample, a save_to_disk folder, .parquet, .jsonl",
    ),
]
Backend = Annotated[
    str,
    typer.Option(help="openai (any OpenAI-compatible endpoint), vllm (offline) or transformers"),
]
BaseUrl = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option(
        "--base-url",
        help="Endpoint ending in /v1; repeat to spread requests over replicas "
        "(default: $OPENAI_BASE_URL or the OpenAI API)",
    ),
]
ApiKeyEnv = Annotated[str, typer.Option(help="Environment variable holding the API key")]
Concurrency = Annotated[int, typer.Option(min=1, help="Requests in flight per base URL")]
Timeout = Annotated[float, typer.Option(min=0.1, help="Seconds per request")]
MaxAttempts = Annotated[
    int, typer.Option(min=1, help="Requests per item on timeouts, 429 and 5xx (with backoff)")
]
Temperature = Annotated[float, typer.Option(min=0.0, help="Sampling temperature")]
MaxTokens = Annotated[int, typer.Option(min=1, help="Maximum completion tokens")]
TopP = Annotated[Optional[float], typer.Option(help="Nucleus sampling top_p")]  # noqa: UP045
Seed = Annotated[Optional[int], typer.Option(help="Sampling seed")]  # noqa: UP045
PromptFile = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--prompt-file",
        help="Prompt template file with {question} and {options} (default: built-in infer_v1)",
    ),
]
ExtraBody = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(help="JSON object added to every request, e.g. '{\"top_k\": 20}'"),
]
MaxImageSide = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(min=28, help="Downscale images to this longer side before sending"),
]
Limit = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(min=1, help="Only the first N selected items"),
]
Sources = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(help="Comma-separated sources, e.g. mathvision,mmvp"),
]
Ids = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(help="Comma-separated item ids, or @FILE with one id per line"),
]
RetryErrors = Annotated[bool, typer.Option("--retry-errors", help="Answer error records again")]
AllowMixed = Annotated[
    bool,
    typer.Option(
        "--allow-mixed", help="Append to a file holding another model, prompt or settings"
    ),
]
Preflight = Annotated[
    bool, typer.Option(help="Check endpoints, key and model name before starting")
]
BatchSize = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(min=0, help="Items per generate call (vllm: 1024, 0 = all; transformers: 4)"),
]
Device = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(help="transformers device: cuda, cuda:1, cpu, mps (default: cuda if present)"),
]
Dtype = Annotated[str, typer.Option(help="auto, bfloat16, float16 or float32 (local backends)")]
TensorParallel = Annotated[int, typer.Option(min=1, help="vllm: GPUs to shard the model over")]
GpuMemory = Annotated[float, typer.Option(help="vllm: share of GPU memory to use")]
MaxModelLen = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(help="vllm: context length cap"),
]
TrustRemoteCode = Annotated[
    bool, typer.Option("--trust-remote-code", help="Allow custom model code (local backends)")
]
FsyncInterval = Annotated[
    float, typer.Option(min=0.0, help="Seconds between fsyncs of the output (0: every record)")
]
ShowProgress = Annotated[bool, typer.Option(help="Show a progress bar")]


@dataclass
class InferOptions:
    """Every ``crystal infer`` option, as one value handed to :func:`run_inference`."""

    model: str
    out: Path
    benchmark: str = HUB_BENCHMARK
    backend: str = "openai"
    base_url: list[str] | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 32
    timeout: float = 300.0
    max_attempts: int = 6
    temperature: float = 0.1
    max_tokens: int = 4096
    top_p: float | None = None
    seed: int | None = None
    prompt_file: str | None = None
    extra_body: str | None = None
    max_image_side: int | None = None
    limit: int | None = None
    sources: str | None = None
    ids: str | None = None
    retry_errors: bool = False
    allow_mixed: bool = False
    preflight: bool = True
    batch_size: int | None = None
    device: str | None = None
    dtype: str = "auto"
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    trust_remote_code: bool = False
    fsync_interval: float = 1.0
    progress: bool = True


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


def _reporter(enabled: bool) -> Any:
    from crystalbench.inference.progress import LogProgress, RichProgress

    if not enabled:
        return None
    if sys.stderr.isatty() or os.environ.get("CRYSTALBENCH_PROGRESS") == "1":
        return RichProgress(console=err_console)
    return LogProgress()


def run_inference(options: InferOptions) -> tuple[Any, Any]:
    """Load the benchmark, build the backend, run :func:`crystalbench.inference.infer`.

    Returns:
        ``(summary, selected benchmark)``.
    """
    from crystalbench.data import load_benchmark
    from crystalbench.inference import GenerationSettings, RetryPolicy, infer, load_prompt
    from crystalbench.inference.backends import build_backend

    settings = GenerationSettings(
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        top_p=options.top_p,
        seed=options.seed,
    )
    prompt = load_prompt(options.prompt_file)
    extra = _extra_body(options.extra_body)
    full = load_benchmark(options.benchmark)
    selected = full.subset(
        sources=_split(options.sources), ids=_ids(options.ids), limit=options.limit
    )
    api_key = os.environ.get(options.api_key_env) if options.api_key_env else None
    if api_key is None and options.api_key_env not in ("", "OPENAI_API_KEY"):
        from crystalbench.errors import InputError

        raise InputError(
            f"environment variable {options.api_key_env} is not set", field="api-key-env"
        )
    backend = build_backend(
        options.backend,
        options.model,
        base_urls=options.base_url,
        api_key=api_key,
        concurrency=options.concurrency,
        timeout=options.timeout,
        extra_body=extra,
        batch_size=options.batch_size,
        device=options.device,
        dtype=options.dtype,
        tensor_parallel_size=options.tensor_parallel_size,
        gpu_memory_utilization=options.gpu_memory_utilization,
        max_model_len=options.max_model_len,
        trust_remote_code=options.trust_remote_code,
    )
    where = ", ".join(getattr(backend, "endpoints", [])) or options.backend
    console.print(
        f"[bold]crystal infer[/]: {options.model} via {where} on {len(selected)} items of "
        f"{full.name} -> {options.out}",
        highlight=False,
    )
    summary = infer(
        selected,
        backend,
        options.out,
        prompt=prompt,
        settings=settings,
        retry=RetryPolicy(max_attempts=options.max_attempts),
        retry_errors=options.retry_errors,
        allow_mixed=options.allow_mixed,
        progress=_reporter(options.progress),
        order=full.ids,
        image_max_side=options.max_image_side,
        preflight=options.preflight,
        fsync_interval=options.fsync_interval,
        on_warning=lambda message: err_console.print(
            f"[yellow]warning:[/] {message}", highlight=False
        ),
    )
    return summary, selected


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
def infer(
    model: Model,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output JSONL (resumed if it exists)")],
    benchmark: BenchmarkSpec = HUB_BENCHMARK,
    backend: Backend = "openai",
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    concurrency: Concurrency = 32,
    timeout: Timeout = 300.0,
    max_attempts: MaxAttempts = 6,
    temperature: Temperature = 0.1,
    max_tokens: MaxTokens = 4096,
    top_p: TopP = None,
    seed: Seed = None,
    prompt_file: PromptFile = None,
    extra_body: ExtraBody = None,
    max_image_side: MaxImageSide = None,
    limit: Limit = None,
    sources: Sources = None,
    ids: Ids = None,
    retry_errors: RetryErrors = False,
    allow_mixed: AllowMixed = False,
    preflight: Preflight = True,
    batch_size: BatchSize = None,
    device: Device = None,
    dtype: Dtype = "auto",
    tensor_parallel_size: TensorParallel = 1,
    gpu_memory_utilization: GpuMemory = 0.9,
    max_model_len: MaxModelLen = None,
    trust_remote_code: TrustRemoteCode = False,
    fsync_interval: FsyncInterval = 1.0,
    progress: ShowProgress = True,
) -> None:
    """Run a model over the benchmark: one JSONL record per item, resumable, concurrent.

    Exit status: 0 when every selected item has an answer, 1 when some failed (rerun
    with --retry-errors), 2 on bad input, 130 when interrupted.
    """
    options = InferOptions(**locals())
    try:
        summary, _ = run_inference(options)
    except KeyboardInterrupt:
        raise _interrupted(out) from None
    _print_summary(summary)
    if summary.n_pending:
        raise typer.Exit(EXIT_INCOMPLETE)


def score_inference_output(
    predictions_path: Path,
    selected: Any,
    out_dir: Path,
    config: Any,
) -> Any:
    """Score an inference output on the items that were selected for it."""
    from crystalbench.predictions import PredictionSet, load_predictions
    from crystalbench.scoring import evaluate

    loaded = load_predictions(predictions_path)
    wanted = set(selected.ids)
    subset = PredictionSet(
        source=loaded.source,
        by_id={i: p for i, p in loaded.by_id.items() if i in wanted},
        where={i: w for i, w in loaded.where.items() if i in wanted},
        problems=loaded.problems,
        model=loaded.model,
    )
    return evaluate(selected, subset, config, out_dir=out_dir)


def build_run_report(out_dir: Path, benchmark: Any) -> Path | None:
    """The HTML report of ``out_dir`` when :mod:`crystalbench.report` is available."""
    try:
        from crystalbench.report import build_report
    except ImportError:
        return None
    path = out_dir / "report.html"
    try:
        return Path(build_report([out_dir], path, benchmark=benchmark))
    except TypeError:  # an older build_report without the benchmark argument
        return Path(build_report([out_dir], path))


@handle_errors
def run(
    model: Model,
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out-dir",
            "-o",
            help="Folder for predictions.jsonl, examples.jsonl, summary.json, report.html",
        ),
    ],
    benchmark: BenchmarkSpec = HUB_BENCHMARK,
    backend: Backend = "openai",
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    concurrency: Concurrency = 32,
    timeout: Timeout = 300.0,
    max_attempts: MaxAttempts = 6,
    temperature: Temperature = 0.1,
    max_tokens: MaxTokens = 4096,
    top_p: TopP = None,
    seed: Seed = None,
    prompt_file: PromptFile = None,
    extra_body: ExtraBody = None,
    max_image_side: MaxImageSide = None,
    limit: Limit = None,
    sources: Sources = None,
    ids: Ids = None,
    retry_errors: RetryErrors = False,
    allow_mixed: AllowMixed = False,
    preflight: Preflight = True,
    batch_size: BatchSize = None,
    device: Device = None,
    dtype: Dtype = "auto",
    tensor_parallel_size: TensorParallel = 1,
    gpu_memory_utilization: GpuMemory = 0.9,
    max_model_len: MaxModelLen = None,
    trust_remote_code: TrustRemoteCode = False,
    fsync_interval: FsyncInterval = 1.0,
    progress: ShowProgress = True,
    encoder: Annotated[
        str, typer.Option(help="Sentence encoder: hub name, folder, minilm-offline or hash")
    ] = ENCODER,
    threshold: Annotated[float, typer.Option("--threshold", "--tau", help="Cosine tau")] = TAU,
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
) -> None:
    """Infer, then score, then report, in one command (predictions resume like `infer`)."""
    from crystalbench.config import ScoreConfig
    from crystalbench.io import atomic_write_json

    out_dir.mkdir(parents=True, exist_ok=True)
    predictions = out_dir / "predictions.jsonl"
    options = InferOptions(
        model=model, out=predictions, benchmark=benchmark, backend=backend, base_url=base_url,
        api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
        max_attempts=max_attempts, temperature=temperature, max_tokens=max_tokens, top_p=top_p,
        seed=seed, prompt_file=prompt_file, extra_body=extra_body,
        max_image_side=max_image_side, limit=limit, sources=sources, ids=ids,
        retry_errors=retry_errors, allow_mixed=allow_mixed, preflight=preflight,
        batch_size=batch_size, device=device, dtype=dtype,
        tensor_parallel_size=tensor_parallel_size,
        gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len,
        trust_remote_code=trust_remote_code, fsync_interval=fsync_interval, progress=progress,
    )  # fmt: skip
    try:
        summary, selected = run_inference(options)
    except KeyboardInterrupt:
        raise _interrupted(predictions) from None
    _print_summary(summary)
    atomic_write_json(out_dir / "inference.json", summary.model_dump(mode="json"))
    config = ScoreConfig(
        encoder=encoder,
        threshold=threshold,
        device=encoder_device,
        cache_dir=str(cache_dir) if cache_dir else None,
        use_cache=not no_cache,
    )
    result = score_inference_output(predictions, selected, out_dir, config)
    console.print(leaderboard_table([(model, result.summary)], title=f"CRYSTAL scores ({model})"))
    console.print(
        f"encoder {config.encoder}: {result.encode_stats.encoded} steps encoded, "
        f"{result.encode_stats.cache_hits} from the cache",
        highlight=False,
    )
    report_path = build_run_report(out_dir, selected) if report else None
    written = ["predictions.jsonl", "inference.json", "examples.jsonl", "summary.json"]
    if report_path is not None:
        written.append(report_path.name)
    elif report:
        console.print("(crystalbench.report is not available: no HTML report)")
    console.print(f"wrote {', '.join(written)} in {out_dir}", highlight=False)
    if summary.n_pending:
        raise typer.Exit(EXIT_INCOMPLETE)
