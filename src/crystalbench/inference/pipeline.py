"""Runs described by an :class:`InferenceConfig`: infer (``crystal infer``), or infer, score
and report (``crystal run``).

- :func:`run_inference` loads and selects the benchmark, builds the backend and runs
  :func:`~crystalbench.inference.infer`, recording the configuration in the summary
  (and in a manifest file when asked);
- :func:`run_benchmark` does that into a results folder, then scores the selected items
  (:func:`crystalbench.scoring.evaluation.evaluate`) and writes the HTML report
  (:func:`crystalbench.report.build_report`).

The CLI commands only turn flags into an :class:`InferenceConfig` and print what these
return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from crystalbench._internal.io import atomic_write_json
from crystalbench._internal.openai_client import api_key_from_env
from crystalbench._internal.paths import outermost_missing, remove_empty_folders
from crystalbench.data.loading import Benchmark, load_benchmark
from crystalbench.inference.backends import AsyncBackend, BatchBackend, build_backend
from crystalbench.inference.config import InferenceConfig, RunConfig
from crystalbench.inference.prompts import load_prompt
from crystalbench.inference.runner import infer
from crystalbench.inference.summary import InferenceSummary, ProgressReporter

if TYPE_CHECKING:
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.scoring.evaluation import RunResult

PREDICTIONS_FILE = "predictions.jsonl"
"""The inference output inside a :func:`run_benchmark` folder."""
INFERENCE_FILE = "inference.json"
"""The inference summary (with its configuration) inside a :func:`run_benchmark` folder."""
REPORT_FILE = "report.html"
"""The HTML report inside a :func:`run_benchmark` folder."""


def manifest_path(out: str | Path) -> Path:
    """Where ``crystal infer`` writes the summary of a run beside its output file.

    Examples:
        >>> manifest_path("runs/qwen7b.jsonl").as_posix()
        'runs/qwen7b.inference.json'
    """
    return Path(out).with_suffix(".inference.json")


def select_items(
    config: InferenceConfig, benchmark: Benchmark | None = None
) -> tuple[Benchmark, Benchmark]:
    """The full benchmark and the items ``config`` selects from it.

    Args:
        config: Gives the benchmark spec and the selection (sources, ids, limit).
        benchmark: An already loaded benchmark to use instead of ``config.benchmark``.

    Returns:
        ``(full, selected)``.

    Raises:
        InputError / UnknownNameError: An unknown source or id (naming the valid ones).
    """
    if benchmark is None:
        # An item set (no references yet) is a fine thing to run a model on.
        benchmark = load_benchmark(
            config.benchmark, image_root=config.image_root, require_references=False
        )
    selected = benchmark.subset(sources=config.sources, ids=config.ids, limit=config.limit)
    return benchmark, selected


def backend_from_config(config: InferenceConfig) -> AsyncBackend | BatchBackend:
    """Build the backend ``config`` names, with the API key read from its variable.

    Raises:
        InputError: ``api_key_env`` names a variable that is not set (the default
            ``OPENAI_API_KEY`` may be unset: local servers need no key).
        UnknownNameError / BackendUnavailableError: From :func:`build_backend`.
    """
    api_key = api_key_from_env(config.api_key_env)
    return build_backend(
        config.backend,
        config.model,
        base_urls=config.base_urls,
        api_key=api_key,
        concurrency=config.concurrency,
        timeout=config.timeout,
        max_retry_after=config.max_retry_after,
        extra_body=config.extra_body,
        batch_size=config.batch_size,
        device=config.device,
        dtype=config.dtype,
        tensor_parallel_size=config.tensor_parallel_size,
        gpu_memory_utilization=config.gpu_memory_utilization,
        max_model_len=config.max_model_len,
        trust_remote_code=config.trust_remote_code,
    )


@dataclass(frozen=True)
class InferenceRun:
    """What :func:`run_inference` did."""

    summary: InferenceSummary
    """The run's summary (its :attr:`~InferenceSummary.config` is the configuration)."""
    benchmark: Benchmark
    """The full benchmark."""
    selected: Benchmark
    """The items the configuration selected."""


def run_inference(
    config: InferenceConfig,
    out: str | Path,
    *,
    benchmark: Benchmark | None = None,
    backend: AsyncBackend | BatchBackend | None = None,
    manifest: str | Path | None = None,
    progress: ProgressReporter | None = None,
    on_start: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> InferenceRun:
    """Answer the items ``config`` selects into ``out`` (resumed when it exists).

    Args:
        config: The run's configuration.
        out: The JSONL output file.
        benchmark: An already loaded benchmark instead of ``config.benchmark``.
        backend: A backend instead of the one ``config`` describes (a fake, in tests).
        manifest: Also write the summary, configuration included, to this JSON file.
        progress: Progress reporter.
        on_start: Called once with a line saying what runs where, before the first request.
        on_warning: Called with each warning as it happens.

    Returns:
        The :class:`InferenceRun`.

    Raises:
        InputError: A bad prompt file, selection, API key variable or output file.
        InferenceAbortedError: A fatal backend error, or every first item failed.

    Examples:
        >>> import tempfile
        >>> from crystalbench.inference.backends.scripted import ScriptedBackend
        >>> config = InferenceConfig(model="scripted", benchmark="sample", limit=3)
        >>> out = Path(tempfile.mkdtemp()) / "preds.jsonl"
        >>> answer = '{"reasoning_steps": ["A red bar."], "answer": "B"}'
        >>> done = run_inference(config, out, backend=ScriptedBackend({"*": answer}))
        >>> done.summary.n_ok, len(done.selected), done.summary.config.limit
        (3, 3, 3)
    """
    prompt = load_prompt(config.prompt_file)  # a bad prompt file fails before anything else
    full, selected = select_items(config, benchmark)
    if backend is None:
        backend = backend_from_config(config)
    if on_start is not None:
        where = ", ".join(getattr(backend, "endpoints", [])) or config.backend
        on_start(f"{config.model} via {where} on {len(selected)} items of {full.name} -> {out}")
    summary = infer(
        selected,
        backend,
        out,
        config,
        prompt=prompt,
        progress=progress,
        order=full.ids,
        on_warning=on_warning,
    )
    if manifest is not None:
        atomic_write_json(Path(manifest), summary.model_dump(mode="json"))
    return InferenceRun(summary=summary, benchmark=full, selected=selected)


@dataclass(frozen=True)
class BenchmarkRun:
    """What :func:`run_benchmark` did and wrote."""

    inference: InferenceSummary
    """The inference summary (also in ``inference.json``)."""
    selected: Benchmark
    """The items that were answered and scored."""
    scores: RunResult
    """The scores (also in ``examples.jsonl`` and ``summary.json``)."""
    report: Path | None
    """The HTML report, when one was written."""
    files: list[str] = field(default_factory=list)
    """Names of the files written in the results folder."""


def run_benchmark(
    config: RunConfig,
    out_dir: str | Path,
    *,
    benchmark: Benchmark | None = None,
    backend: AsyncBackend | BatchBackend | None = None,
    progress: ProgressReporter | None = None,
    on_start: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_inferred: Callable[[InferenceSummary], None] | None = None,
    overwrite: bool = False,
) -> BenchmarkRun:
    """Infer, score and report into one results folder (what ``crystal run`` does).

    The folder may hold this run's own earlier results (resumed); results of other
    predictions or another scoring configuration are refused before any request is sent
    (:func:`crystalbench.scoring.results.check_results_folder`), unless ``overwrite``. A run
    that fails before it wrote anything leaves no folder behind.

    Writes ``predictions.jsonl`` (resumed like :func:`run_inference`), ``inference.json``
    (the inference summary with its ``config``), ``examples.jsonl`` and ``summary.json``
    (the scores of the selected items, as ``crystal score`` writes them, with
    ``config.scoring``) and, with ``config.report``, ``report.html``.

    Args:
        config: The inference configuration, with ``scoring`` and ``report``.
        out_dir: The results folder (created when missing).
        benchmark: An already loaded benchmark instead of ``config.benchmark``.
        backend: A backend instead of the one ``config`` describes.
        progress: Progress reporter of the inference.
        on_start: See :func:`run_inference`.
        on_warning: Called with each inference warning.
        on_inferred: Called with the inference summary before scoring starts.
        overwrite: Replace another run's results in the folder.

    Returns:
        The :class:`BenchmarkRun`. Items still without an answer count as missing in the
        scores (``inference.n_pending`` says how many).

    Examples:
        >>> import tempfile
        >>> from crystalbench.inference.backends.scripted import ScriptedBackend
        >>> config = RunConfig(model="scripted", benchmark="sample", limit=2,
        ...                    scoring={"encoder": "hash", "use_cache": False})
        >>> answer = '{"reasoning_steps": ["A red bar."], "answer": "B"}'
        >>> folder = Path(tempfile.mkdtemp())
        >>> done = run_benchmark(config, folder, backend=ScriptedBackend({"*": answer}))
        >>> done.scores.summary.n_items, done.report.name
        (2, 'report.html')
        >>> done.files[:2]
        ['predictions.jsonl', 'inference.json']
    """
    from crystalbench.report import build_report

    if benchmark is None:  # scoring follows: refuse an item set before any request is sent
        benchmark = load_benchmark(config.benchmark, image_root=config.image_root)
    from crystalbench.scoring.results import check_results_folder, run_identity

    folder = Path(out_dir)
    identity = run_identity(config.scoring, benchmark, folder / PREDICTIONS_FILE)
    check_results_folder(folder, identity, overwrite=overwrite, resumed=True)
    created = outermost_missing(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        inferred = run_inference(
            config.inference(),
            folder / PREDICTIONS_FILE,
            benchmark=benchmark,
            backend=backend,
            manifest=folder / INFERENCE_FILE,
            progress=progress,
            on_start=on_start,
            on_warning=on_warning,
        )
    except BaseException:
        if created is not None:  # only while empty: nothing was written
            remove_empty_folders(folder, created)
        raise
    if on_inferred is not None:
        on_inferred(inferred.summary)
    scores = score_selected(folder / PREDICTIONS_FILE, inferred.selected, folder, config.scoring)
    files = [PREDICTIONS_FILE, INFERENCE_FILE, "examples.jsonl", "summary.json"]
    report_path = None
    if config.report:
        report_path = Path(
            build_report([folder], folder / REPORT_FILE, benchmark=inferred.selected)
        )
        files.append(report_path.name)
    return BenchmarkRun(
        inference=inferred.summary,
        selected=inferred.selected,
        scores=scores,
        report=report_path,
        files=files,
    )


def score_selected(
    predictions_path: str | Path, selected: Benchmark, out_dir: str | Path, config: ScoreConfig
) -> RunResult:
    """Score an inference output on the items that were selected for it.

    Records of other items in the file (from an earlier, larger selection) are left out,
    so the scores describe exactly ``selected``.
    """
    from crystalbench.data.predictions import PredictionSet, load_predictions
    from crystalbench.scoring.evaluation import evaluate

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
