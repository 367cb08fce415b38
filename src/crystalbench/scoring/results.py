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
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

from crystalbench._internal.io import atomic_write_json, read_json_file
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


def _sync_folder(folder: Path) -> None:
    """Make the renames in ``folder`` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
        _sync_folder(folder)
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
                _sync_folder(folder)
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
        >>> sorted(p.name for p in folder.iterdir())
        ['.crystalbench.lock']
    """

    def __init__(self, folder: str | Path, *, run_id: str | None = None) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id = run_id or new_run_id()
        self.pending = pending_examples(self.folder, self.run_id)
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
            self._handle: IO[bytes] | None = self.pending.open("xb")
        except BaseException:
            self._release()
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
            os.replace(self.pending, self.folder / EXAMPLES_FILE)
            _sync_folder(self.folder)
        except BaseException:
            self._release()
            raise
        self._release()
        return written

    def abort(self) -> None:
        """Discard the new examples; the folder keeps its previous pair."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self.pending.unlink(missing_ok=True)
        self._release()

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
