"""Scoring several prediction sets in one run: one encoder, shared embeddings, a folder each.

A leaderboard of twenty models scored by twenty ``crystal score`` processes loads the
encoder twenty times and encodes the reference steps twenty times. :func:`evaluate_many`
loads it once and scores every set in the same pass over the benchmark, through the same
engine as :func:`~crystalbench.scoring.evaluation.evaluate`
(:class:`crystalbench.scoring.ScoringEngine`:
one encoder, each distinct step text embedded once for all sets and all chunks; see
:mod:`crystalbench.scoring.engine`), so every per-item record and every summary number equals
that of a separate run. What this module adds is the sets themselves:

1. every set is loaded and checked first; a bad one (malformed, unknown ids without
   ``lenient``, not found, a name used twice or one that is no folder name) fails alone,
   recorded in :attr:`MultiRunResult.failures`, and the others go on;
2. each set gets its own results folder ``out_dir/NAME`` (``examples.jsonl`` and
   ``summary.json``, written as one pair by :mod:`crystalbench.scoring.results`), ready for
   ``crystal leaderboard out_dir/*`` and ``crystal report out_dir/*``.

Memory: the parsed predictions of all sets are held for the run; embeddings are held one
chunk at a time (``chunk_items`` items in all, split between the sets) plus the texts that
recur across chunks.

:func:`resolve_prediction_args` turns the command line's ``--predictions`` values
(``NAME=FILE``, files, folders of ``.jsonl`` files, globs) into named files.
"""

from __future__ import annotations

import glob
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crystalbench.config.scoring import ScoreConfig
from crystalbench.config.settings import SCORE_CHUNK_ITEMS
from crystalbench.data.loading import Benchmark
from crystalbench.data.predictions import PredictionSet, load_predictions
from crystalbench.encoders import EmbeddingStore, Encoder
from crystalbench.encoders.cache import EncodeStats
from crystalbench.errors import CrystalbenchError, InputError
from crystalbench.scoring import (
    ProgressHook,
    RunResult,
    ScoredSet,
    ScoringEngine,
    as_prediction_set,
)
from crystalbench.scoring.results import ResultsWriter
from crystalbench.types import Prediction

__all__ = [
    "FailedSet",
    "MultiRunResult",
    "PredictionsInput",
    "check_run_name",
    "evaluate_many",
    "resolve_prediction_args",
    "single_predictions_path",
]

RUN_NAME_MAX_BYTES = 255
"""Longest run name, in UTF-8 bytes: the longest file name most file systems allow."""

_GLOB_CHARACTERS = frozenset("*?[")

PredictionsInput = PredictionSet | Iterable[Prediction] | str | Path
"""One prediction set: loaded, in memory, or a file or folder to load."""


@dataclass(frozen=True)
class FailedSet:
    """A prediction set that could not be scored, and why.

    Attributes:
        name: Its name (as given, or the file's stem).
        source: Where it came from: the file, or the argument that could not be read.
        error: The error, naming the file, the line and the field where it can.
    """

    name: str
    source: str
    error: CrystalbenchError

    def __str__(self) -> str:
        return f"{self.name}: {self.error}"


@dataclass
class MultiRunResult:
    """What :func:`evaluate_many` returns.

    Attributes:
        runs: One :class:`~crystalbench.scoring.evaluation.RunResult` per set scored, by name, in
            the
            order given. Their ``encode_stats`` and ``timings`` are this run's shared ones.
        failures: The sets that failed, in the order given.
        encode_stats: Counters of the one caching encoder shared by every set.
        timings: Seconds per stage (``load``, ``parse``, ``embed``, ``answers``, ``score``,
            ``write``, ``total``, ``encode_forward``) over all sets.
    """

    runs: dict[str, RunResult]
    failures: list[FailedSet] = field(default_factory=list)
    encode_stats: EncodeStats = field(default_factory=EncodeStats)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every set given was scored."""
        return not self.failures


def check_run_name(name: str) -> str:
    """Return ``name`` if it can be a results folder's name; raise saying why not.

    A name becomes the folder ``out_dir/NAME``, so it must be one plain path component:
    not empty, not ``.`` or ``..``, not starting with ``.`` (a hidden folder that
    ``crystal leaderboard out/*`` would miss), without ``/``, ``\\``, control characters or
    surrounding spaces, and at most :data:`RUN_NAME_MAX_BYTES` bytes in UTF-8.

    Raises:
        InputError: The name is refused (``field`` is ``name``).

    Examples:
        >>> check_run_name("qwen2.5-vl-7b")
        'qwen2.5-vl-7b'
        >>> check_run_name("../x")
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field name: refused name '../x': it holds '/' (names become folders under the output folder; use e.g. letters, digits, '-', '_', '.')
    """  # noqa: E501
    why = _name_problem(name)
    if why is not None:
        raise InputError(
            f"refused name {name!r}: {why} (names become folders under the output folder; "
            "use e.g. letters, digits, '-', '_', '.')",
            field="name",
        )
    return name


def _name_problem(name: str) -> str | None:
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return "it is a relative folder, not a name"
    for separator in ("/", "\\"):
        if separator in name:
            return f"it holds {separator!r}"
    if name.startswith("."):
        return "it starts with '.' (a hidden folder)"
    if name != name.strip():
        return "it starts or ends with a space"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "it holds a control character"
    if len(name.encode("utf-8")) > RUN_NAME_MAX_BYTES:
        return f"it is longer than {RUN_NAME_MAX_BYTES} bytes"
    return None


def _jsonl_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file())


def _folder_name(path: Path) -> str:
    return path.resolve().name if path.name in ("", ".", "..") else path.name


def _expand(path: Path) -> list[tuple[str, Path]]:
    """A file (named by its stem), or a folder: its ``.jsonl`` files, else one set."""
    if path.is_dir():
        files = _jsonl_files(path)
        if files:
            return [(file.stem, file) for file in files]
        return [(_folder_name(path), path)]
    return [(path.stem, path)]


def resolve_prediction_args(
    values: Sequence[str],
) -> tuple[list[tuple[str, Path]], list[FailedSet]]:
    """Named prediction files from ``--predictions`` values, and the values that fail.

    Each value is one of:

    - ``NAME=FILE``: the set in ``FILE`` (a file, or a folder of ``<id>.json``) named
      ``NAME``. A value that is an existing path is a path, even when it holds ``=``;
    - a file: named by its stem (``preds/qwen.jsonl`` is ``qwen``);
    - a folder holding ``.jsonl`` files: each of them, named by its stem (other files in
      it are left alone: pass ``.json`` files by name or by a glob). A folder without
      ``.jsonl`` files is one set of ``<id>.json`` records, named by the folder;
    - a glob (``'preds/*.jsonl'``, quoted so that the shell leaves it alone): each match,
      sorted, as above.

    Names are checked (:func:`check_run_name`) and deduplicated by :func:`evaluate_many`.

    Returns:
        ``(entries, failures)``: ``(name, path)`` pairs in order, and the values that name
        nothing usable (``NAME=`` without a name or a file, a glob matching nothing, a
        named folder holding several prediction files).

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> for stem in ("b", "a"):
        ...     _ = (folder / f"{stem}.jsonl").write_text("{}")
        >>> entries, failures = resolve_prediction_args(
        ...     [str(folder), f"best={folder / 'a.jsonl'}", str(folder / "*.txt")]
        ... )
        >>> [name for name, _ in entries], [f.error.message for f in failures]
        (['a', 'b', 'best'], ['no file matches this pattern'])
    """
    entries: list[tuple[str, Path]] = []
    failures: list[FailedSet] = []
    for value in values:
        path = Path(value)
        if path.exists():
            entries.extend(_expand(path))
        elif "=" in value:
            name, _, file = value.partition("=")
            problem = None
            if not name or not file:
                problem = f"expected NAME=FILE with both parts, got {value!r}"
            elif Path(file).is_dir() and _jsonl_files(Path(file)):
                count = len(_jsonl_files(Path(file)))
                problem = (
                    f"{name}={file} names one prediction set, but {file} holds {count} "
                    ".jsonl prediction files: name each file (NAME=FILE) or pass the "
                    "folder alone"
                )
            if problem is not None:
                error = InputError(problem, field="predictions")
                failures.append(FailedSet(name or value, value, error))
            else:
                entries.append((name, Path(file)))
        elif _GLOB_CHARACTERS & set(value):
            matches = sorted(glob.glob(value, recursive=True))
            if not matches:
                error = InputError("no file matches this pattern", path=value, field="predictions")
                failures.append(FailedSet(value, value, error))
            for match in matches:
                entries.extend(_expand(Path(match)))
        else:
            entries.append((path.stem, path))  # not found: loading says so, for this set alone
    return entries, failures


def single_predictions_path(values: Sequence[str]) -> Path | None:
    """The one prediction set of a single-run ``crystal score``, or ``None`` for several.

    A single run (``OUT/examples.jsonl``, ``OUT/summary.json``) is one value that is not
    ``NAME=FILE``, not a glob and not a folder of ``.jsonl`` files. Anything else scores
    each set into ``OUT/NAME/``.

    Examples:
        >>> single_predictions_path(["preds.jsonl"])
        PosixPath('preds.jsonl')
        >>> single_predictions_path(["a=preds.jsonl"]) is None
        True
    """
    if len(values) != 1:
        return None
    value = values[0]
    path = Path(value)
    if path.exists():
        return None if path.is_dir() and _jsonl_files(path) else path
    if "=" in value or _GLOB_CHARACTERS & set(value):
        return None
    return path


def _source_of(value: PredictionsInput) -> str:
    if isinstance(value, (str, Path)):
        return str(value)
    if isinstance(value, PredictionSet):
        return value.source
    return "<memory>"


def _open_writer(folder: Path) -> ResultsWriter:
    """The results writer of one set's folder; a folder that cannot be one fails this set."""
    if folder.exists() and not folder.is_dir():
        raise InputError("exists and is not a folder", path=folder)
    try:
        return ResultsWriter(folder)
    except OSError as exc:
        raise InputError(f"cannot write results: {exc.strerror or exc}", path=folder) from None


def _entries(
    predictions: Mapping[str, PredictionsInput] | Sequence[tuple[str, PredictionsInput]],
) -> list[tuple[str, PredictionsInput]]:
    if isinstance(predictions, Mapping):
        return list(predictions.items())
    return list(predictions)


def evaluate_many(
    benchmark: Benchmark,
    predictions: Mapping[str, PredictionsInput] | Sequence[tuple[str, PredictionsInput]],
    config: ScoreConfig | None = None,
    *,
    encoder: Encoder | None = None,
    judge: object = None,
    verifier: object = None,
    store: EmbeddingStore | None = None,
    progress: ProgressHook | None = None,
    out_dir: str | Path | None = None,
    keep_items: bool = True,
    chunk_items: int = SCORE_CHUNK_ITEMS,
) -> MultiRunResult:
    """Score several prediction sets on ``benchmark`` in one pass, with one encoder.

    Every set is scored exactly as :func:`~crystalbench.scoring.evaluation.evaluate` would score it
    alone (same per-item records, same summary and config record, with its own
    ``predictions`` and ``model``), but the encoder is built once and each distinct step
    text, reference or predicted, is embedded once for all sets (see the module docstring).

    Args:
        benchmark: From :func:`crystalbench.data.load_benchmark`.
        predictions: ``{name: set}`` or ``(name, set)`` pairs (pairs may repeat a name: the
            later ones then fail). A set is a :class:`PredictionSet`, predictions, or a file
            or folder loaded with :func:`~crystalbench.data.predictions.load_predictions`
            (``lenient`` from ``config``).
        config: Scoring configuration; paper defaults when ``None``.
        encoder: Encoder to use instead of building ``config.encoder``.
        judge: Free-form answer judge instead of building ``config.judge``.
        verifier: Step verifier (a :class:`~crystalbench.judges.verifier.StepVerifier`)
            instead of building ``config.verifier``; used only when ``config.verify`` is not
            ``none`` (``ScoreConfig(verify="unmatched", verifier=VerifierConfig(...))``: the
            same options as ``crystal score --verify``).
        store: Embedding cache instead of the default one.
        progress: ``hook(stage, advance, total)``; stages ``parse``, ``encode`` and
            ``score``, each across all sets.
        out_dir: When given, set ``NAME`` is written to ``out_dir/NAME`` (as
            :func:`~crystalbench.scoring.evaluation.evaluate` writes ``out_dir``); names must then
            be
            folder names (:func:`check_run_name`), distinct even ignoring case.
        keep_items: Keep every :class:`ItemResult` in memory (set False for big runs
            written to ``out_dir``).
        chunk_items: Items (of all sets together) embedded and scored per chunk.

    Returns:
        A :class:`MultiRunResult`: the runs by name, and the sets that failed. A set fails
        alone, before anything is scored, when it cannot be loaded, holds ids unknown to
        the benchmark (unless ``config.lenient``), repeats a name, has a name that is no
        folder name, or its folder cannot be written (e.g. another run is writing there).

    Raises:
        CrystalbenchError: What stops every set alike (a bad config, an encoder that
            cannot be loaded). Folders of sets not yet committed keep their previous pair.

    Examples:
        >>> import tempfile
        >>> from crystalbench.data import load_benchmark
        >>> bench = load_benchmark("sample")
        >>> item = bench.items[0]
        >>> perfect = [Prediction(id=item.id, reasoning_steps=item.reference_steps)]
        >>> empty = [Prediction(id=item.id, reasoning_steps=["Nothing to see."])]
        >>> many = evaluate_many(
        ...     bench,
        ...     {"perfect": perfect, "empty": empty, "typo": "no-such-file.jsonl"},
        ...     ScoreConfig(encoder="hash", use_cache=False),
        ...     out_dir=tempfile.mkdtemp(),
        ... )
        >>> {name: run.items[0].f1 for name, run in many.runs.items()}
        {'perfect': 1.0, 'empty': 0.0}
        >>> [str(failure).partition(" not found")[0] for failure in many.failures]
        ['typo: no-such-file.jsonl: predictions']
    """
    config = config or ScoreConfig()
    began = time.perf_counter()
    engine = ScoringEngine(
        config, encoder=encoder, judge=judge, verifier=verifier, store=store, progress=progress
    )
    out = Path(out_dir) if out_dir is not None else None
    failures: list[FailedSet] = []
    sets: list[ScoredSet] = []
    try:
        _load(benchmark, _entries(predictions), config, out, keep_items, sets, failures)
        engine.timings["load"] = time.perf_counter() - began
        results = engine.run(engine.subset(benchmark), sets, chunk_items=chunk_items)
    finally:
        # A no-op after the commit; otherwise keeps the previous pair. Last opened first,
        # so the folders a failed or interrupted run made (OUT among them) all go.
        for one in reversed(sets):
            if one.writer is not None:
                one.writer.abort()
    engine.finish_timings(began)
    runs = {one.name: run for one, run in zip(sets, results, strict=True)}
    return MultiRunResult(
        runs=runs,
        failures=failures,
        encode_stats=engine.encoder_cache.stats,
        timings=engine.timings,
    )


def _load(
    benchmark: Benchmark,
    entries: list[tuple[str, PredictionsInput]],
    config: ScoreConfig,
    out: Path | None,
    keep_items: bool,
    sets: list[ScoredSet],
    failures: list[FailedSet],
) -> None:
    """Load and check every set; each one that fails goes to ``failures``, alone.

    The first use of a name (ignoring case: folders of ``A`` and ``a`` are one folder on
    some file systems) claims it, even when that set then fails.
    """
    claimed: dict[str, str] = {}
    for name, value in entries:
        source = _source_of(value)
        try:
            where = source if isinstance(value, (str, Path)) else None
            if out is not None:
                try:
                    check_run_name(name)
                except InputError as exc:
                    hint = ""
                    if "/" in name or "\\" in name:
                        hint = f" (if {name}={source} is one file, it was not found)"
                    raise InputError(exc.message + hint, path=where, field="name") from None
            first = claimed.get(name.casefold())
            if first is not None:
                raise InputError(
                    f"duplicate name {name!r}, already given to {first}: give each set its "
                    "own name (NAME=FILE)",
                    path=where,
                    field="name",
                )
            claimed[name.casefold()] = source
            if isinstance(value, (str, Path)):
                loaded = load_predictions(value, lenient=config.lenient)
            else:
                loaded = as_prediction_set(value)
            scored = ScoredSet.checked(
                name, benchmark, loaded, lenient=config.lenient, keep_items=keep_items
            )
            scored.writer = _open_writer(out / name) if out is not None else None
        except CrystalbenchError as error:
            failures.append(FailedSet(name, source, error))
            continue
        sets.append(scored)
