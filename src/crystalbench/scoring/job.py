"""One ``crystal score`` call as a library function: :func:`score_job`.

A :class:`ScoreJob` says what to score (the benchmark, one or several prediction sets as
the command line names them, the format other harnesses wrote them in) and how
(:class:`~crystalbench.config.scoring.ScoreConfig`). :func:`score_job` resolves the prediction
arguments, reads other harnesses' files, builds the encoder once, and scores through the
public engine: :func:`crystalbench.scoring.evaluation.evaluate` for a single set written into
``out`` itself, :func:`crystalbench.scoring.evaluation_many.evaluate_many` for several sets written
into ``out/NAME``. A set that cannot be scored fails alone (:attr:`ScoreJobResult.failures`);
the caller decides the exit code.

Examples:
    >>> import tempfile
    >>> from crystalbench.data import SAMPLE_DIR
    >>> job = ScoreJob(
    ...     benchmark="sample",
    ...     predictions=[str(SAMPLE_DIR / "predictions")],
    ...     scoring=ScoreConfig(encoder="hash", use_cache=False, limit=10),
    ... )
    >>> done = score_job(job, tempfile.mkdtemp())
    >>> done.single, sorted(done.runs)[:2], done.ok
    (False, ['messy-raw', 'right-answer-weak-reasoning'], True)
    >>> {run.summary.n_items for run in done.runs.values()}
    {10}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.harnesses import PREDICTION_FORMATS

if TYPE_CHECKING:
    from crystalbench.data.loading import Benchmark
    from crystalbench.encoders import Encoder
    from crystalbench.encoders.cache import EncodeStats
    from crystalbench.scoring.evaluation import ProgressHook, RunResult
    from crystalbench.scoring.evaluation_many import FailedSet

__all__ = ["ScoreJob", "ScoreJobResult", "score_job"]

if TYPE_CHECKING:
    InputFormat = str
else:  # the names live in one place: integrations.outputs.PREDICTION_FORMATS
    InputFormat = Literal[PREDICTION_FORMATS]


class ScoreJob(BaseModel):
    """What one ``crystal score`` call scores, against what, and how."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    """``sample``, a hub id, a ``save_to_disk`` folder, a ``.parquet`` or ``.jsonl`` file."""
    predictions: list[str] = Field(min_length=1)
    """Prediction sets as the command line gives them: files, ``NAME=FILE``, folders of
    ``.jsonl`` files, globs (:func:`crystalbench.scoring.evaluation_many.resolve_prediction_args`).
    One plain file (or one folder of ``<id>.json``) is a single set written into ``out``."""
    input_format: InputFormat = "auto"
    """What wrote the prediction files: ``crystal``, ``lmms-eval``, ``vlmevalkit``, or
    ``auto`` (detected per file)."""
    image_root: str | None = None
    """A folder item images may also lie under (besides the benchmark's own folder)."""
    scoring: ScoreConfig = Field(default_factory=ScoreConfig)
    """How every set is scored (recorded in each ``summary.json``)."""


@dataclass
class ScoreJobResult:
    """What :func:`score_job` scored and wrote."""

    benchmark: Benchmark
    """The benchmark, as loaded (before ``sources``, ``ids`` and ``limit``)."""
    out: Path
    """The results folder."""
    single: bool
    """One set, written into :attr:`out` itself; else one folder ``out/NAME`` per set."""
    runs: dict[str, RunResult]
    """The sets scored, by name, in the order given."""
    encode_stats: EncodeStats
    """Counters of the one caching encoder (shared by every set)."""
    failures: list[FailedSet] = field(default_factory=list)
    """The sets that could not be scored (several sets only: a single set raises)."""

    @property
    def ok(self) -> bool:
        """True when every set given was scored."""
        return not self.failures

    def keeps_earlier_results(self, failure: FailedSet) -> bool:
        """Whether a failed set's folder still holds an earlier run's results."""
        from crystalbench.errors import InputError
        from crystalbench.scoring.evaluation_many import check_run_name
        from crystalbench.scoring.results import SUMMARY_FILE

        if failure.name in self.runs:
            return False
        try:
            check_run_name(failure.name)
        except InputError:
            return False
        return (self.out / failure.name / SUMMARY_FILE).is_file()


def score_job(
    job: ScoreJob,
    out: str | Path,
    *,
    benchmark: Benchmark | None = None,
    encoder: Encoder | None = None,
    progress: ProgressHook | None = None,
    overwrite: bool = False,
) -> ScoreJobResult:
    """Score every prediction set of ``job`` into ``out`` with one encoder.

    ``out`` must not hold results of other predictions or another configuration
    (:func:`crystalbench.scoring.results.check_results_folder`): scoring the same sets the
    same way again replaces them; anything else is refused before any scoring, unless
    ``overwrite``.

    Args:
        job: What to score and how.
        out: The results folder: ``out/examples.jsonl`` and ``out/summary.json`` for a
            single set, ``out/NAME/`` for each of several.
        benchmark: An already loaded benchmark instead of ``job.benchmark``.
        encoder: An encoder to use (e.g. one the ``crystal`` entry point started loading
            early); default: built from ``job.scoring`` (and closed at the end).
        progress: ``hook(stage, advance, total)`` for progress bars.
        overwrite: Replace the results ``out`` holds even when they are another run's.

    Returns:
        The :class:`ScoreJobResult`; with several sets, those that failed are in
        ``failures`` and the others are scored and written.

    Raises:
        InputError / UnknownNameError: A bad benchmark, config, or (single set) a bad
            predictions file, naming the file, line and field; ``out`` holds another
            run's results (without ``overwrite``).
    """
    from crystalbench.data import load_benchmark
    from crystalbench.scoring.evaluation_many import single_predictions_path

    built = None
    if encoder is None:
        # First, so that its model loads in the background (ONNX Runtime, export cached)
        # while the benchmark and the predictions are read and parsed.
        from crystalbench.encoders import load_encoder, preload_encoder

        config = job.scoring
        encoder = built = load_encoder(config.encoder, **config.encoder_options())
        preload_encoder(built)
    try:
        bench = benchmark or load_benchmark(job.benchmark, image_root=job.image_root)
        single = single_predictions_path(job.predictions)
        if single is not None:
            return _score_one(job, bench, single, Path(out), encoder, progress, overwrite)
        return _score_many(job, bench, Path(out), encoder, progress, overwrite)
    finally:
        close = getattr(built, "close", None)
        if close is not None:
            close()


def _score_one(
    job: ScoreJob,
    bench: Benchmark,
    path: Path,
    out: Path,
    encoder: Encoder,
    progress: ProgressHook | None,
    overwrite: bool,
) -> ScoreJobResult:
    from crystalbench.data.harnesses import load_predictions_as
    from crystalbench.scoring.evaluation import evaluate
    from crystalbench.scoring.results import check_results_folder, run_identity

    lenient = job.scoring.lenient
    preds = load_predictions_as(path, bench, job.input_format, lenient=lenient)
    identity = run_identity(job.scoring, bench, preds.source)
    check_results_folder(out, identity, overwrite=overwrite)
    run = evaluate(bench, preds, job.scoring, encoder=encoder, progress=progress, out_dir=out)
    name = preds.model or path.stem
    return ScoreJobResult(
        benchmark=bench, out=out, single=True, runs={name: run}, encode_stats=run.encode_stats
    )


def _score_many(
    job: ScoreJob,
    bench: Benchmark,
    out: Path,
    encoder: Encoder,
    progress: ProgressHook | None,
    overwrite: bool,
) -> ScoreJobResult:
    from crystalbench.scoring.evaluation_many import evaluate_many, resolve_prediction_args
    from crystalbench.scoring.results import check_results_folder

    entries, failures = resolve_prediction_args(job.predictions)
    entries, failures = _read_harness_files(job, bench, entries, failures)
    check_results_folder(out, _identities(job, bench, entries), overwrite=overwrite)
    many = evaluate_many(
        bench, entries, job.scoring, encoder=encoder, progress=progress, out_dir=out,
        keep_items=False,
    )  # fmt: skip
    return ScoreJobResult(
        benchmark=bench,
        out=out,
        single=False,
        runs=dict(many.runs),
        encode_stats=many.encode_stats,
        failures=[*failures, *many.failures],
    )


def _identities(
    job: ScoreJob, bench: Benchmark, entries: Sequence[tuple[str, Any]]
) -> dict[str, Any]:
    """The run identity of each set that will get a folder (a bad or repeated name fails
    its set later, and claims no folder)."""
    from crystalbench.errors import InputError
    from crystalbench.scoring.evaluation_many import check_run_name
    from crystalbench.scoring.results import run_identity

    identities: dict[str, Any] = {}
    for name, value in entries:
        try:
            check_run_name(name)
        except InputError:
            continue
        if name.casefold() not in {known.casefold() for known in identities}:
            identities[name] = run_identity(job.scoring, bench, _source(value))
    return identities


def _source(value: Any) -> str | Path | None:
    """The file a set comes from (a path, or a loaded set's ``source``)."""
    if isinstance(value, (str, Path)):
        return value
    return getattr(value, "source", None)


def _read_harness_files(
    job: ScoreJob, bench: Benchmark, entries: Sequence[tuple[str, Any]], failures: list[Any]
) -> tuple[list[tuple[str, Any]], list[Any]]:
    """Read the sets other harnesses wrote (lmms-eval, VLMEvalKit) against the benchmark;
    crystalbench's own files stay paths for :func:`evaluate_many` to read."""
    from crystalbench.data.harnesses import detect_format, load_predictions_as
    from crystalbench.errors import CrystalbenchError
    from crystalbench.scoring.evaluation_many import FailedSet

    kept: list[tuple[str, Any]] = []
    failed = list(failures)
    for name, value in entries:
        if not isinstance(value, (str, Path)):
            kept.append((name, value))
            continue
        path = Path(value)
        fmt = detect_format(path) if job.input_format == "auto" else job.input_format
        if fmt == "crystal":
            kept.append((name, value))
            continue
        try:
            loaded = load_predictions_as(path, bench, fmt, lenient=job.scoring.lenient)
        except CrystalbenchError as error:
            failed.append(FailedSet(name, str(path), error))
            continue
        kept.append((name, loaded))
    return kept, failed
