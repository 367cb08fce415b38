"""The results folder: ``examples.jsonl`` and ``summary.json``, written and read as one pair.

A scoring run writes both files; a crash at any moment must leave either the previous pair
or the new one, never the new examples beside the old summary. Renaming two files is not
atomic, so the summary is the commit point and says which examples belong to it:

1. the writer locks the folder (``.crystalbench.lock``, an advisory ``flock``: a second run
   into the same folder fails at once instead of interleaving) and removes what killed runs
   left there (temporary files, pending examples no summary refers to);
2. it streams the per-item records into ``.examples.jsonl.<run_id>.pending`` and syncs it;
3. it replaces ``summary.json`` atomically; the new summary records ``run_id`` and the
   ``examples_sha256`` of the pending file: **the commit point**;
4. it renames the pending file to ``examples.jsonl``.

A crash before step 3 leaves the previous pair untouched (the next run deletes the pending
file). A crash between steps 3 and 4 leaves the new summary and its complete examples in the
pending file: every reader (:func:`examples_for`) takes that file, and moves it into place
when no run holds the lock. A reader whose ``examples.jsonl`` does not hash to the summary's
``examples_sha256`` (edited by hand, or written by another tool) is told so. Results written
before this protocol carry no ``run_id`` and are read as they are.

Every file gets the user's umask (``0o666`` less the umask), as any file the user creates.

**A folder holds one run.** Before a run writes, :func:`check_results_folder` compares what
the folder holds (its ``summary.json``: which predictions, their SHA-256, the benchmark, the
scoring configuration; :class:`RunIdentity`) with the new run, and refuses, naming what is
there and ``--overwrite``, when the new results would replace another input's or another
configuration's, or mix a one-set folder (``OUT/summary.json``) with a folder of sets
(``OUT/NAME/summary.json``). The same input scored the same way again may replace its own
results. A writer that fails before its commit leaves nothing behind in a folder that held no
results: no lock file, no empty folder it created.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from crystalbench._internal.io import atomic_write_json, read_json_file, sync_folder
from crystalbench._internal.paths import outermost_missing, remove_empty_folders
from crystalbench.errors import InputError
from crystalbench.types import ItemResult, RunSummary

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; folders are then neither locked nor cleaned
    fcntl = None  # type: ignore[assignment]

EXAMPLES_FILE = "examples.jsonl"
"""One :class:`~crystalbench.types.ItemResult` per line."""

SUMMARY_FILE = "summary.json"
"""The :class:`~crystalbench.types.RunSummary`."""

LOCK_FILE = ".crystalbench.lock"
"""Held (``flock``) by the run writing into the folder."""

_PENDING_PREFIX = f".{EXAMPLES_FILE}."
_PENDING_SUFFIX = ".pending"
_TEMPORARY = (f".{EXAMPLES_FILE}.*.tmp", f".{SUMMARY_FILE}.*.tmp")
"""Names of the temporary files :mod:`crystalbench._internal.io` creates for these two files."""


def new_run_id() -> str:
    """A fresh random run id (32 hex digits)."""
    return uuid.uuid4().hex


def pending_examples(folder: Path, run_id: str) -> Path:
    """Where run ``run_id`` streams its examples before the commit.

    Examples:
        >>> pending_examples(Path("out"), "ab12").name
        '.examples.jsonl.ab12.pending'
    """
    return folder / f"{_PENDING_PREFIX}{run_id}{_PENDING_SUFFIX}"


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _try_lock(folder: Path) -> IO[bytes] | None:
    """The folder's lock, taken without waiting: an open locked handle, or ``None`` when
    another process holds it. Without ``fcntl`` (Windows) nothing is locked.

    Raises:
        OSError: The lock file cannot be opened (e.g. a read-only folder).
    """
    handle = (folder / LOCK_FILE).open("a+b")
    if fcntl is None:
        return handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def _unlock(handle: IO[bytes]) -> None:
    """Release a lock from :func:`_try_lock` (closing the file releases the ``flock``)."""
    handle.close()


def _committed_run_id(folder: Path) -> str | None:
    """The ``run_id`` recorded in the folder's ``summary.json`` (``None`` if unreadable)."""
    try:
        data = read_json_file(folder / SUMMARY_FILE, whole=False)
    except (OSError, InputError):
        return None
    run_id = data.get("run_id") if isinstance(data, dict) else None
    return run_id if isinstance(run_id, str) else None


def _finish_or_clean(folder: Path) -> list[str]:
    """Under the lock: complete an interrupted commit and delete what killed runs left.

    Returns the names removed or moved (for tests and logs).
    """
    done: list[str] = []
    committed = _committed_run_id(folder)
    for path in sorted(folder.glob(f"{_PENDING_PREFIX}*{_PENDING_SUFFIX}")):
        run_id = path.name[len(_PENDING_PREFIX) : -len(_PENDING_SUFFIX)]
        if committed is not None and run_id == committed:
            os.replace(path, folder / EXAMPLES_FILE)  # the commit happened: finish it
            done.append(f"{path.name} -> {EXAMPLES_FILE}")
        else:
            path.unlink(missing_ok=True)
            done.append(path.name)
    for pattern in _TEMPORARY:
        for path in sorted(folder.glob(pattern)):
            path.unlink(missing_ok=True)
            done.append(path.name)
    if done:
        sync_folder(folder)
    return done


def _finish_commit(folder: Path, run_id: str) -> None:
    """Move a committed run's pending examples into place, unless a run holds the lock or
    the folder is read-only (the reader then reads the pending file)."""
    try:
        lock = _try_lock(folder)
    except OSError:
        return
    if lock is None:
        return
    try:
        pending = pending_examples(folder, run_id)
        if pending.is_file() and _committed_run_id(folder) == run_id:
            with contextlib.suppress(OSError):
                os.replace(pending, folder / EXAMPLES_FILE)
                sync_folder(folder)
    finally:
        _unlock(lock)


class ResultsWriter:
    """Writes one run's ``examples.jsonl`` and ``summary.json`` into a folder, as a pair.

    Stream items with :meth:`write`, then :meth:`commit` the summary; leaving the ``with``
    block on an exception (or calling :meth:`abort`) discards the new examples and leaves the
    folder's previous pair as it was.

    Args:
        folder: The results folder (created if needed).
        run_id: Id of the run (default: a new random one).

    Raises:
        InputError: Another run is writing into the same folder.

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> with ResultsWriter(folder, run_id="r1") as writer:
        ...     pass  # writer.write(item) for each item, then writer.commit(summary)
        >>> sorted(p.name for p in folder.iterdir())  # no commit: left as it was found
        []
    """

    def __init__(self, folder: str | Path, *, run_id: str | None = None) -> None:
        self.folder = Path(folder)
        self._created = outermost_missing(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id = run_id or new_run_id()
        self.pending = pending_examples(self.folder, self.run_id)
        self._committed = False
        self._handle: IO[bytes] | None = None
        self._lock = _try_lock(self.folder)
        if self._lock is None:
            raise InputError(
                "another run is writing results into this folder (wait for it to finish, "
                "or choose another output folder)",
                path=self.folder,
            )
        try:
            # Only a real lock proves that no other run owns the leftovers.
            self.cleaned = _finish_or_clean(self.folder) if fcntl is not None else []
            self._handle = self.pending.open("xb")
        except BaseException:
            self._leave_nothing()
            raise
        self._digest = hashlib.sha256()
        self.count = 0

    def write(self, item: ItemResult) -> None:
        """Append one item as a JSON line."""
        if self._handle is None:
            raise RuntimeError("the results writer is closed")
        line = (item.model_dump_json() + "\n").encode("utf-8")
        self._handle.write(line)
        self._digest.update(line)
        self.count += 1

    def commit(self, summary: RunSummary) -> RunSummary:
        """Write ``summary.json`` (the commit point), then move the examples into place.

        Returns:
            The summary as written: ``run_id`` and ``examples_sha256`` filled in.
        """
        if self._handle is None:
            raise RuntimeError("the results writer is closed")
        handle, self._handle = self._handle, None
        try:
            handle.flush()
            os.fsync(handle.fileno())
        finally:
            handle.close()
        try:
            written = summary.model_copy(
                update={"run_id": self.run_id, "examples_sha256": self._digest.hexdigest()}
            )
            atomic_write_json(self.folder / SUMMARY_FILE, written.model_dump(mode="json"))
            self._committed = True
            os.replace(self.pending, self.folder / EXAMPLES_FILE)
            sync_folder(self.folder)
        except BaseException:
            if self._committed:
                self._release()
            else:
                self.pending.unlink(missing_ok=True)
                self._leave_nothing()
            raise
        self._release()
        return written

    def abort(self) -> None:
        """Discard the new examples; the folder keeps its previous pair (a folder that held
        none is left as it was found: no lock file, and gone when this writer made it)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self.pending.unlink(missing_ok=True)
        if self._committed or self._lock is None:
            self._release()
            return
        self._leave_nothing()

    def _leave_nothing(self) -> None:
        """Before a commit: release the lock; where the folder holds no results, remove the
        lock file and the empty folders this writer created."""
        if self._lock is not None and not (self.folder / SUMMARY_FILE).exists():
            with contextlib.suppress(OSError):
                (self.folder / LOCK_FILE).unlink()
        self._release()
        if self._created is not None:
            remove_empty_folders(self.folder, self._created)

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            _unlock(lock)

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.abort()


@dataclass(frozen=True)
class ExamplesFile:
    """Which file holds a summary's examples, as a reader found it.

    Attributes:
        path: The file to read.
        problem: Why the pair may not belong together (``None`` when it does or cannot be
            checked, as in results written before run ids).
    """

    path: Path
    problem: str | None = None


def examples_for(folder: Path, summary: RunSummary) -> ExamplesFile:
    """The examples file that belongs to ``summary`` (read protocol of this module).

    A summary whose commit was interrupted (its pending file still exists) gets that file,
    moved into place as ``examples.jsonl`` when no run holds the folder's lock. A summary
    whose ``examples_sha256`` the file does not match gets a ``problem``.
    """
    examples = folder / EXAMPLES_FILE
    if summary.run_id is None:
        return ExamplesFile(examples)
    pending = pending_examples(folder, summary.run_id)
    if pending.is_file():
        _finish_commit(folder, summary.run_id)
        if pending.is_file():
            return ExamplesFile(pending)
    if summary.examples_sha256 is None or not examples.is_file():
        return ExamplesFile(examples)
    if file_sha256(examples) != summary.examples_sha256:
        return ExamplesFile(
            examples,
            f"{examples} is not the file written with {SUMMARY_FILE} (run {summary.run_id}): "
            "it was edited or replaced since; the numbers shown come from it",
        )
    return ExamplesFile(examples)


# ------------------------------------------------------------------ one run per folder

OPERATIONAL_FIELDS = frozenset(
    {"cache_dir", "use_cache", "device", "backend", "workers", "devices", "batch_size", "dtype"}
    | {"lenient"}
)
"""Fields of :class:`~crystalbench.config.scoring.ScoreConfig` that say how a run goes, not
what it computes: two runs that differ only in them hold the same results."""


@dataclass(frozen=True)
class RunIdentity:
    """What a results folder's numbers depend on: which predictions, on which benchmark,
    scored how (read from a new run's inputs by :func:`run_identity`, or from a written
    ``summary.json`` by :func:`summary_identity`).

    Attributes:
        predictions: The predictions' path as the run named it.
        predictions_sha256: SHA-256 of the predictions' bytes (``None``: unknown, as in
            results written before it was recorded, or predictions held in memory).
        benchmark: The benchmark's name.
        benchmark_fingerprint: Its fingerprint (items and references).
        scoring: The scoring configuration, without :data:`OPERATIONAL_FIELDS`.
    """

    predictions: str | None
    predictions_sha256: str | None
    benchmark: str | None
    benchmark_fingerprint: str | None
    scoring: Mapping[str, Any] = field(default_factory=dict)

    def differences(self, there: RunIdentity, *, resumed: bool = False) -> list[str]:
        """How results of ``self`` differ from the results ``there`` holds, in words
        (empty: the same run). ``resumed``: the predictions file is resumed in place
        (``crystal run``), so a changed hash of the same path, or another selection of
        the same benchmark, is the same input.

        Examples:
            >>> a = RunIdentity("a.jsonl", "1" * 64, "sample", "f", {"threshold": 0.35})
            >>> b = RunIdentity("b.jsonl", "2" * 64, "sample", "f", {"threshold": 0.4})
            >>> for line in b.differences(a):
            ...     print(line)
            predictions b.jsonl here, a.jsonl (sha256 11111111...) there
            threshold 0.4 here, 0.35 there
        """
        found: list[str] = []
        if not _same_path(self.predictions, there.predictions):
            if not _same_hash(self, there):  # a copy of the same file is the same input
                found.append(
                    f"predictions {self.predictions} here, {there.predictions} (sha256 "
                    f"{_short(there.predictions_sha256)}) there"
                )
        elif not resumed and _differ(self.predictions_sha256, there.predictions_sha256):
            found.append(
                f"predictions {self.predictions} changed since those results were written "
                f"(sha256 {_short(self.predictions_sha256)} here, "
                f"{_short(there.predictions_sha256)} there)"
            )
        mine_bench: tuple[str | None, ...] = (self.benchmark, self.benchmark_fingerprint)
        their_bench: tuple[str | None, ...] = (there.benchmark, there.benchmark_fingerprint)
        if resumed:  # the selection may grow between resumed runs
            mine_bench, their_bench = mine_bench[:1], their_bench[:1]
        if mine_bench != their_bench:
            found.append(
                f"benchmark {self.benchmark} ({self.benchmark_fingerprint}) here, "
                f"{there.benchmark} ({there.benchmark_fingerprint}) there"
            )
        for name in sorted(set(self.scoring) | set(there.scoring)):
            mine, theirs = self.scoring.get(name), there.scoring.get(name)
            if mine != theirs:
                found.append(f"{name} {_shown(mine)} here, {_shown(theirs)} there")
        return found


def _short(digest: str | None) -> str:
    return f"{digest[:8]}..." if digest else "unknown"


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)


def _same_path(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a == b
    try:
        return a == b or Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _same_hash(a: RunIdentity, b: RunIdentity) -> bool:
    """Whether both hashes are known and equal."""
    return a.predictions_sha256 is not None and a.predictions_sha256 == b.predictions_sha256


def _differ(a: str | None, b: str | None) -> bool:
    """Whether two hashes are both known and differ."""
    return a is not None and b is not None and a != b


def predictions_sha256(source: str | Path | None) -> str | None:
    """SHA-256 of a predictions file, or of a folder's ``.json`` files (names and bytes,
    sorted); ``None`` for anything else (predictions held in memory).

    Examples:
        >>> predictions_sha256("<memory>") is None
        True
    """
    if source is None:
        return None
    path = Path(source)
    try:
        if path.is_file():
            return file_sha256(path)
        if path.is_dir():
            digest = hashlib.sha256()
            for member in sorted(path.glob("*.json")):
                digest.update(member.name.encode() + b"\0" + file_sha256(member).encode())
            return digest.hexdigest()
    except OSError:
        return None
    return None


def _scoring_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    from crystalbench.config.scoring import ScoreConfig

    defaults = ScoreConfig().record()
    names = [name for name in ScoreConfig.model_fields if name not in OPERATIONAL_FIELDS]
    return {name: record.get(name, defaults.get(name)) for name in names}


def run_identity(config: Any, benchmark: Any, predictions: str | Path | None) -> RunIdentity:
    """The identity of a run about to score ``predictions`` (a path) on ``benchmark``
    with ``config`` (a :class:`~crystalbench.config.scoring.ScoreConfig`).

    Raises:
        InputError / UnknownNameError: ``config`` selects sources or ids ``benchmark``
            lacks (as scoring would).
    """
    scored = benchmark  # what the engine scores, and fingerprints in the summary
    if config.sources is not None or config.ids is not None or config.limit is not None:
        scored = benchmark.subset(sources=config.sources, ids=config.ids, limit=config.limit)
    return RunIdentity(
        predictions=str(predictions) if predictions is not None else None,
        predictions_sha256=predictions_sha256(predictions),
        benchmark=scored.name,
        benchmark_fingerprint=scored.fingerprint,
        scoring=_scoring_fields(config.record()),
    )


def summary_identity(summary: Mapping[str, Any]) -> RunIdentity:
    """The identity of the run that wrote ``summary`` (a ``summary.json``, as JSON)."""
    config = summary.get("config")
    config = config if isinstance(config, Mapping) else {}
    return RunIdentity(
        predictions=_text(config.get("predictions")),
        predictions_sha256=_text(config.get("predictions_sha256")),
        benchmark=_text(config.get("benchmark")),
        benchmark_fingerprint=_text(config.get("benchmark_fingerprint")),
        scoring=_scoring_fields(config),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _read_identity(folder: Path) -> RunIdentity | str:
    """The identity of the results in ``folder``, or why it cannot be read."""
    try:
        data = read_json_file(folder / SUMMARY_FILE, whole=False)
    except (OSError, InputError) as error:
        return f"its {SUMMARY_FILE} cannot be read ({error})"
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        return f"its {SUMMARY_FILE} is not a crystalbench summary"
    return summary_identity(data)


def results_conflict(
    folder: str | Path, identity: RunIdentity, *, resumed: bool = False
) -> str | None:
    """Why writing the results of ``identity`` into ``folder`` would lose other results, in
    one sentence; ``None`` when the folder holds none, or the same run's.

    Args:
        folder: A results folder (``examples.jsonl``, ``summary.json``).
        identity: The new run's (:func:`run_identity`).
        resumed: The predictions file is resumed in place (``crystal run``): see
            :meth:`RunIdentity.differences`.

    Examples:
        >>> import tempfile
        >>> results_conflict(Path(tempfile.mkdtemp()), RunIdentity("a.jsonl", None, "s", "f"))
    """
    folder = Path(folder)
    if not (folder / SUMMARY_FILE).is_file():
        return None
    there = _read_identity(folder)
    if isinstance(there, str):
        return f"{folder} already holds results: {there}"
    found = identity.differences(there, resumed=resumed)
    if not found:
        return None
    return f"{folder} already holds results of another run ({'; '.join(found)})"


def _set_folders(out: Path) -> list[Path]:
    """The results folders ``out/NAME/`` of a folder of sets."""
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if p.is_dir() and (p / SUMMARY_FILE).is_file())


def check_results_folder(
    out: str | Path,
    identities: Mapping[str, RunIdentity] | RunIdentity,
    *,
    overwrite: bool = False,
    resumed: bool = False,
) -> list[Path]:
    """Refuse to write over another run's results (see the module docstring).

    Args:
        out: The output folder.
        identities: One :class:`RunIdentity` (one set, written into ``out``), or one per
            set name (several sets, written into ``out/NAME``).
        overwrite: Replace whatever results are there instead (``--overwrite``): the new
            run's own folders are replaced when it commits; the results of the other runs
            it would be mixed with are removed now.
        resumed: See :func:`results_conflict`.

    Returns:
        The results folders removed (with ``overwrite``).

    Raises:
        InputError: ``out`` holds results the new ones would replace or mix with, naming
            what is there and ``--overwrite``.
    """
    out = Path(out)
    if not out.is_dir():
        return []
    problems: list[tuple[str, list[Path]]] = []
    if isinstance(identities, RunIdentity):
        problem = results_conflict(out, identities, resumed=resumed)
        if problem is not None:
            problems.append((problem, [out]))
        sets = [p for p in _set_folders(out) if p != out]
        if sets:
            names = ", ".join(f"{p.name}/" for p in sets[:3]) + (", ..." if len(sets) > 3 else "")
            problems.append(
                (
                    f"{out} holds the results of {len(sets)} sets ({names}); one set written "
                    "into it would mix with them",
                    sets,
                )
            )
    else:
        if (out / SUMMARY_FILE).is_file():
            problems.append(
                (
                    f"{out} holds the results of one set ({out / SUMMARY_FILE}); several sets "
                    "written into it (OUT/NAME/) would mix with them",
                    [out],
                )
            )
        problems.extend((problem, [path]) for problem, path in _set_conflicts(out, identities))
    if not problems:
        return []
    if not overwrite:
        more = len(problems) - 1
        raise InputError(
            problems[0][0]
            + (f" (and {more} more folder{'s' if more > 1 else ''})" if more > 0 else "")
            + ": choose another output folder, or pass --overwrite to replace them"
        )
    # The new run's own folders are replaced by its commit (a set that fails keeps them);
    # only the folders it would be mixed with go now.
    own = {out} if isinstance(identities, RunIdentity) else {out / name for name in identities}
    removed = sorted({path for _, paths in problems for path in paths} - own)
    for path in removed:
        remove_results(path)
    return removed


def _set_conflicts(out: Path, identities: Mapping[str, RunIdentity]) -> list[tuple[str, Path]]:
    """Per set: its folder holds another run's results; other sets' folders in ``out``
    hold results of another benchmark or configuration (a board mixing them)."""
    problems: list[tuple[str, Path]] = []
    for name, identity in identities.items():
        problem = results_conflict(out / name, identity)
        if problem is not None:
            problems.append((problem, out / name))
    if not identities:
        return problems
    model = next(iter(identities.values()))
    given = {name.casefold() for name in identities}
    for folder in _set_folders(out):
        if folder.name.casefold() in given:
            continue
        there = _read_identity(folder)
        if isinstance(there, str):
            continue  # not a crystalbench results folder: nothing it would be mixed with
        found = RunIdentity(
            there.predictions,
            there.predictions_sha256,
            model.benchmark,
            model.benchmark_fingerprint,
            model.scoring,
        ).differences(there)
        if found:
            problems.append(
                (
                    f"{folder} holds results of another benchmark or configuration "
                    f"({'; '.join(found)}); the new sets would mix with them in {out}",
                    folder,
                )
            )
    return problems


def remove_results(folder: str | Path) -> None:
    """Remove a results folder's files (the pair, pending and temporary files, the lock);
    the folder itself too when nothing else is left in it."""
    folder = Path(folder)
    names = [EXAMPLES_FILE, SUMMARY_FILE]
    for pattern in (f"{_PENDING_PREFIX}*{_PENDING_SUFFIX}", *_TEMPORARY):
        names.extend(p.name for p in folder.glob(pattern))
    for name in names:
        (folder / name).unlink(missing_ok=True)
    if not any(p.name != LOCK_FILE for p in folder.iterdir()):
        (folder / LOCK_FILE).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()
