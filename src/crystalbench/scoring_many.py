"""Scoring several prediction sets in one run: one encoder, shared embeddings, a folder each.

A leaderboard of twenty models scored by twenty ``crystal score`` processes loads the
encoder twenty times and encodes the reference steps twenty times. :func:`evaluate_many`
loads it once and scores every set in the same pass over the benchmark:

1. every set is loaded and checked first; a bad one (malformed, unknown ids without
   ``lenient``, not found, a name used twice or one that is no folder name) fails alone,
   recorded in :attr:`MultiRunResult.failures`, and the others go on;
2. every set's predictions are parsed;
3. the benchmark is walked in chunks; each chunk's step texts, of every set together
   (references once, then each distinct predicted step once), go through one
   :class:`~crystalbench.encoders.CachingEncoder` lookup: the cache first, then the
   encoder for the misses. A text that recurs in a later chunk is kept in memory until
   its last chunk, so the encoder sees each distinct text once in the whole run, with or
   without the on-disk cache;
4. each set's items are scored exactly as :func:`~crystalbench.scoring.evaluate` scores
   them (the same :class:`~crystalbench.scoring.Scorer`), so every per-item record and
   every summary number equals that of a separate run;
5. each set gets its own results folder ``out_dir/NAME`` (``examples.jsonl`` and
   ``summary.json``, written as one pair by :mod:`crystalbench.results`), ready for
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
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crystalbench.config import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.encoders import EmbeddingStore, Encoder
from crystalbench.encoders.cache import EncodeStats
from crystalbench.errors import CrystalbenchError, InputError
from crystalbench.predictions import PredictionSet, load_predictions
from crystalbench.results import ResultsWriter
from crystalbench.scoring import (
    Aggregator,
    ProgressHook,
    RunResult,
    Scorer,
    Work,
    _stack_rows,
    _step_texts,
    as_prediction_set,
    check_ids,
    run_summary,
)
from crystalbench.settings import SCORE_CHUNK_ITEMS
from crystalbench.types import ItemResult, Prediction

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
        runs: One :class:`~crystalbench.scoring.RunResult` per set scored, by name, in the
            order given. Their ``encode_stats`` and ``timings`` are this run's shared ones.
        failures: The sets that failed, in the order given.
        encode_stats: Counters of the one encoder front end shared by every set.
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


@dataclass
class _Set:
    """One prediction set being scored."""

    name: str
    predictions: PredictionSet
    known: dict[str, Prediction]
    unknown: list[str]
    writer: ResultsWriter | None
    aggregator: Aggregator = field(default_factory=Aggregator)
    items: list[ItemResult] = field(default_factory=list)
    work: list[Work] = field(default_factory=list)
    steps: list[tuple[list[str], int]] = field(default_factory=list)


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
    store: EmbeddingStore | None = None,
    progress: ProgressHook | None = None,
    out_dir: str | Path | None = None,
    keep_items: bool = True,
    chunk_items: int = SCORE_CHUNK_ITEMS,
) -> MultiRunResult:
    """Score several prediction sets on ``benchmark`` in one pass, with one encoder.

    Every set is scored exactly as :func:`~crystalbench.scoring.evaluate` would score it
    alone (same per-item records, same summary and config record, with its own
    ``predictions`` and ``model``), but the encoder is built once and each distinct step
    text, reference or predicted, is embedded once for all sets (see the module docstring).

    Args:
        benchmark: From :func:`crystalbench.data.load_benchmark`.
        predictions: ``{name: set}`` or ``(name, set)`` pairs (pairs may repeat a name: the
            later ones then fail). A set is a :class:`PredictionSet`, predictions, or a file
            or folder loaded with :func:`~crystalbench.predictions.load_predictions`
            (``lenient`` from ``config``).
        config: Scoring configuration; paper defaults when ``None``.
        encoder: Encoder to use instead of building ``config.encoder``.
        judge: Free-form answer judge instead of building ``config.judge``.
        store: Embedding cache instead of the default one.
        progress: ``hook(stage, advance, total)``; stages ``parse``, ``encode`` and
            ``score``, each across all sets.
        out_dir: When given, set ``NAME`` is written to ``out_dir/NAME`` (as
            :func:`~crystalbench.scoring.evaluate` writes ``out_dir``); names must then be
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
        >>> [str(failure) for failure in many.failures]
        ['typo: no-such-file.jsonl: predictions not found']
    """
    config = config or ScoreConfig()
    began = time.perf_counter()
    scorer = Scorer(config, encoder=encoder, judge=judge, store=store, progress=progress)
    subset = config.select(benchmark)
    out = Path(out_dir) if out_dir is not None else None
    failures: list[FailedSet] = []
    sets: list[_Set] = []
    try:
        _load(benchmark, _entries(predictions), config, out, sets, failures)
        scorer.timings["load"] = time.perf_counter() - began
        _score_all(scorer, subset, sets, progress, keep_items, chunk_items)
        runs: dict[str, RunResult] = {}
        for one in sets:
            summary = run_summary(scorer, one.aggregator, subset, one.predictions, one.unknown)
            if one.writer is not None:
                started = time.perf_counter()
                summary = one.writer.commit(summary)
                scorer.timings["write"] = (
                    scorer.timings.get("write", 0.0) + time.perf_counter() - started
                )
            runs[one.name] = RunResult(
                items=one.items,
                summary=summary,
                encode_stats=scorer.front.stats,
                timings=scorer.timings,
            )
    finally:
        for one in sets:
            if one.writer is not None:
                one.writer.abort()  # a no-op after the commit; otherwise keeps the previous pair
    scorer.timings["total"] = time.perf_counter() - began
    scorer.timings["encode_forward"] = scorer.front.stats.encode_seconds
    return MultiRunResult(
        runs=runs, failures=failures, encode_stats=scorer.front.stats, timings=scorer.timings
    )


def _load(
    benchmark: Benchmark,
    entries: list[tuple[str, PredictionsInput]],
    config: ScoreConfig,
    out: Path | None,
    sets: list[_Set],
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
            known, unknown = check_ids(benchmark, loaded, config.lenient)
            writer = _open_writer(out / name) if out is not None else None
        except CrystalbenchError as error:
            failures.append(FailedSet(name, source, error))
            continue
        sets.append(_Set(name, loaded, known, unknown, writer))


def _score_all(
    scorer: Scorer,
    subset: Benchmark,
    sets: list[_Set],
    progress: ProgressHook | None,
    keep_items: bool,
    chunk_items: int,
) -> None:
    """Parse every set, then embed and score chunk by chunk, all sets together."""
    items = subset.items
    total = len(items) * len(sets)
    for one in sets:
        began = time.perf_counter()
        one.work, one.steps = scorer._prepare(items, one.known)
        scorer._tick("parse", began)
        if progress:
            progress("parse", len(items), total)
    per_chunk = max(1, chunk_items // max(1, len(sets)))
    bounds = [(lo, min(lo + per_chunk, len(items))) for lo in range(0, len(items), per_chunk)]

    def chunk_texts(lo: int, hi: int) -> list[str]:
        texts: list[str] = []
        for one in sets:
            texts.extend(_step_texts(one.work[lo:hi], one.steps[lo:hi], scorer._reference_chains))
        return list(dict.fromkeys(texts))

    keep_after, drop_after = _recurring_texts(bounds, chunk_texts)
    kept: dict[str, np.ndarray] = {}  # texts a later chunk needs again: their vectors
    for index, (lo, hi) in enumerate(bounds):
        began = time.perf_counter()
        unique = chunk_texts(lo, hi)
        found = scorer.front.lookup([t for t in unique if t not in kept])
        for text in keep_after.pop(index, ()):
            kept[text] = found[text]
        matrix = _stack_rows([found[t] if t in found else kept[t] for t in unique])
        del found
        rows = {text: k for k, text in enumerate(unique)}
        for text in drop_after.pop(index, ()):
            del kept[text]
        scorer._tick("embed", began)
        for one in sets:
            work, steps = one.work[lo:hi], one.steps[lo:hi]
            began = time.perf_counter()
            verdicts = scorer._verdicts(work)
            scorer._tick("answers", began)
            if scorer.matcher is not None:
                scorer.matcher.prepare(work, steps, scorer._tick)
            scored = written = 0.0
            for (item, parsed), (pred_steps, blank), verdict in zip(
                work, steps, verdicts, strict=True
            ):
                started = time.perf_counter()
                result = scorer._score(item, parsed, pred_steps, blank, matrix, rows, verdict)
                middle = time.perf_counter()
                one.aggregator.add(result)
                if keep_items:
                    one.items.append(result)
                if one.writer is not None:
                    one.writer.write(result)
                scored += middle - started
                written += time.perf_counter() - middle
                if progress:
                    progress("score", 1, total)
            scorer.timings["score"] = scorer.timings.get("score", 0.0) + scored
            scorer.timings["write"] = scorer.timings.get("write", 0.0) + written


def _recurring_texts(
    bounds: Sequence[tuple[int, int]], chunk_texts: Callable[[int, int], list[str]]
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """The texts needed in more than one chunk: ``(keep_after, drop_after)``.

    ``keep_after[c]`` lists the texts first embedded in chunk ``c`` that a later chunk
    needs again; ``drop_after[c]`` those whose last chunk is ``c``. Only these stay in
    memory between chunks.
    """
    keep_after: dict[int, list[str]] = defaultdict(list)
    drop_after: dict[int, list[str]] = defaultdict(list)
    if len(bounds) < 2:
        return keep_after, drop_after
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, (lo, hi) in enumerate(bounds):
        for text in chunk_texts(lo, hi):
            if text in first:
                last[text] = index
            else:
                first[text] = index
    for text, end in last.items():
        keep_after[first[text]].append(text)
        drop_after[end].append(text)
    return keep_after, drop_after
