"""Inference output: one JSONL record per item, in a file that survives kills and restarts.

The output file is an append-only log of :class:`InferenceRecord` lines.

- **Appends** write each whole line with one ``os.write`` on an ``O_APPEND`` descriptor,
  so a record is in the operating system as soon as :meth:`ResultsFile.append` returns
  (a process crash, ``kill -9`` or an out-of-memory kill loses nothing already
  appended). ``fsync`` runs at most every ``fsync_interval`` seconds and when the file is
  closed: a power cut or kernel crash can lose the records of the last interval, never
  more, and leaves at most a torn last line.
- **A torn last line** (a write cut short: the file does not end with a newline) is
  detected when the file is opened, truncated away and reported
  (:class:`TornLine`). Any other malformed line is an error naming the line: it was not
  written by us and we do not guess.
- **Reading** keeps the latest record per id, so a log that somehow holds an id twice
  still means one answer per item; :meth:`ResultsFile.compact` rewrites the file
  atomically (temporary file + rename) with one record per id, in benchmark order.
- **Retrying errors** first rewrites the file without the error records to retry, then
  appends the new attempts: the file never holds two records for one id.
- One writer at a time: a lock file beside the output (``.NAME.lock``, ``flock``) stops
  a second ``crystal infer`` from appending to the same file.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from crystalbench._internal.io import AppendLog, AtomicJsonlWriter, MalformedJsonError, read_jsonl
from crystalbench._internal.paths import outermost_missing, remove_empty_folders
from crystalbench.config.settings import INFER_MAX_TOKENS, INFER_TEMPERATURE
from crystalbench.errors import InputError
from crystalbench.types import ParseStatus, Record

RECORD_SCHEMA = "infer-1"
"""Version of the inference record layout."""

DEFAULT_TEMPERATURE = INFER_TEMPERATURE
DEFAULT_MAX_TOKENS = INFER_MAX_TOKENS


class GenerationSettings(Record):
    """Sampling settings sent with every request and stored in every record.

    Examples:
        >>> GenerationSettings().temperature, GenerationSettings().max_tokens
        (0.1, 4096)
    """

    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0.0)
    """Sampling temperature (0 is greedy)."""
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, ge=1)
    """Maximum completion tokens."""
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    """Nucleus sampling mass; ``None`` leaves the server's default."""
    seed: int | None = None
    """Sampling seed; ``None`` leaves the server's default (vLLM honours it per request)."""

    def sampling(self, max_tokens_key: str = "max_tokens") -> dict[str, Any]:
        """The sampling parameters of a request body or ``vllm.SamplingParams``: the unset
        ones left out, so the server's defaults hold.

        Examples:
            >>> GenerationSettings(temperature=0.7, seed=5).sampling("max_completion_tokens")
            {'temperature': 0.7, 'max_completion_tokens': 4096, 'seed': 5}
        """
        params: dict[str, Any] = {"temperature": self.temperature, max_tokens_key: self.max_tokens}
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.seed is not None:
            params["seed"] = self.seed
        return params


class InferenceRecord(Record):
    """One line of a ``crystal infer`` output file: one model answer (or failure) per item."""

    id: str
    """Benchmark item id."""
    model: str
    """Model name as served (or the local path)."""
    backend: str
    """``openai`` (any OpenAI-compatible endpoint), ``vllm`` (offline) or ``transformers``."""
    response: str | None = None
    """Raw model text; ``None`` only for error records."""
    reasoning: str | None = None
    """Reasoning the server returned separately (``reasoning_content``); never scored."""
    steps: list[str] | None = None
    """Steps parsed from ``response`` when the record was written (scoring re-parses)."""
    answer: str | None = None
    """Answer parsed from ``response`` when the record was written."""
    parse_status: ParseStatus | None = None
    """Parser path taken on ``response``; ``None`` for error records."""
    finish_reason: str | None = None
    """``stop``, ``length`` (cut at ``max_tokens``)... as the backend reported it."""
    prompt_tokens: int | None = None
    """Prompt tokens (image tokens included) as the backend counted them."""
    completion_tokens: int | None = None
    """Generated tokens as the backend counted them."""
    latency_s: float | None = None
    """Seconds of the attempt that produced this record."""
    total_s: float | None = None
    """Seconds from the first attempt to this record (retries and waits included)."""
    attempts: int = 1
    """Requests made for this item (1 when the first one succeeded)."""
    error: str | None = None
    """Why the item failed after all retries; ``None`` on success."""
    error_kind: str | None = None
    """Short failure class: ``timeout``, ``connection``, ``rate_limit``, ``server_error``,
    ``bad_response``, ``image_too_large``, ``bad_request``, ``image``, ``generation``..."""
    image_max_side: int | None = None
    """Longer side the image was downscaled to after a too-large rejection."""
    endpoint: str | None = None
    """Base URL (or device) that produced the answer."""
    prompt_name: str
    """Prompt template name (``infer_v1`` or a file name)."""
    prompt_hash: str
    """SHA-256 prefix of the prompt template text."""
    generation: GenerationSettings
    """Sampling settings of the request."""
    created_at: str
    """UTC time the record was written (ISO 8601)."""
    schema_version: str = RECORD_SCHEMA
    """Record layout version."""

    @property
    def ok(self) -> bool:
        """True for a model answer, False for an error record."""
        return self.error is None


def utc_now() -> str:
    """Current UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class TornLine:
    """A partial last line found (and removed) when an output file was opened."""

    offset: int
    """Byte offset where the torn line started (the file's new length)."""
    length: int
    """Bytes removed."""
    preview: str
    """The first characters of what was removed."""

    def describe(self, path: str | Path) -> str:
        """One line for the console."""
        return (
            f"{path}: removed a torn last line ({self.length} bytes at offset {self.offset}) "
            f"left by an interrupted run: {self.preview!r}"
        )


@dataclass
class LoadedRecords:
    """What an output file held: the latest record per id, in first-seen order."""

    by_id: dict[str, InferenceRecord] = field(default_factory=dict)
    lines: int = 0
    """Record lines read."""
    duplicates: int = 0
    """Lines superseded by a later record for the same id."""
    torn: TornLine | None = None
    """The torn last line removed while opening, if any."""

    @property
    def done_ids(self) -> set[str]:
        """Ids with a successful record."""
        return {i for i, r in self.by_id.items() if r.ok}

    @property
    def error_ids(self) -> set[str]:
        """Ids whose latest record is an error."""
        return {i for i, r in self.by_id.items() if not r.ok}


class FileLockedError(InputError):
    """Another process is writing to the same output file."""


class ResultsFile:
    """The resumable, append-only JSONL output of one inference run.

    Args:
        path: The ``.jsonl`` output file (created on first append).
        fsync_interval: Seconds between ``fsync`` calls while appending (0: after every
            record). Appends always reach the operating system at once.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "preds.jsonl"
        >>> results = ResultsFile(path)
        >>> record = InferenceRecord(id="1", model="m", backend="openai", response="{}",
        ...     prompt_name="p", prompt_hash="h", generation=GenerationSettings(),
        ...     created_at="2026-01-01T00:00:00+00:00")
        >>> with results.writing():
        ...     results.append(record)
        >>> _ = path.open("a").write('{"id": "2", "mod')  # a write cut by kill -9
        >>> loaded = results.load()
        >>> sorted(loaded.by_id), loaded.torn.length
        (['1'], 16)
    """

    def __init__(self, path: str | Path, *, fsync_interval: float = 1.0) -> None:
        self.path = Path(path)
        self.fsync_interval = fsync_interval
        self._log = AppendLog(self.path, fsync_interval=fsync_interval)
        self._lock_fd: int | None = None
        self._created: Path | None = None
        self.appended = 0

    # ------------------------------------------------------------------ reading
    def repair(self) -> TornLine | None:
        """Truncate a torn last line (no final newline); returns what was removed."""
        if not self.path.is_file():
            return None
        size = self.path.stat().st_size
        if size == 0:
            return None
        with self.path.open("rb") as handle:
            handle.seek(size - 1)
            if handle.read(1) == b"\n":
                return None
            # Walk back to the last newline; a torn line is never huge, but be safe.
            step = 1 << 16
            position = size
            start = 0
            while position > 0:
                low = max(0, position - step)
                handle.seek(low)
                chunk = handle.read(position - low)
                cut = chunk.rfind(b"\n")
                if cut >= 0:
                    start = low + cut + 1
                    break
                position = low
            handle.seek(start)
            removed = handle.read(size - start)
        with self.path.open("r+b") as handle:
            handle.truncate(start)
            handle.flush()
            os.fsync(handle.fileno())
        preview = removed[:80].decode("utf-8", errors="replace")
        return TornLine(offset=start, length=len(removed), preview=preview)

    def load(self) -> LoadedRecords:
        """Repair a torn tail, then read every record (the latest per id wins).

        Raises:
            InputError: A complete line is not a valid record (names the line and field).
        """
        loaded = LoadedRecords(torn=self.repair())
        if not self.path.is_file():
            return loaded
        lines = read_jsonl(self.path, allow_empty=True)
        while True:
            try:
                number, value = next(lines)
            except StopIteration:
                break
            except MalformedJsonError as exc:
                raise InputError(
                    f"{exc.message}; this line was not written by crystal infer: fix or remove it",
                    path=exc.path,
                    line=exc.line,
                ) from None
            try:
                record = InferenceRecord.model_validate(value)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first.get("loc", ())) or None
                raise InputError(
                    f"not a crystal infer record: {first.get('msg', 'invalid')}",
                    path=self.path,
                    line=number,
                    field=loc,
                ) from None
            loaded.lines += 1
            if record.id in loaded.by_id:
                loaded.duplicates += 1
                del loaded.by_id[record.id]  # keep dict order = order of latest record
            loaded.by_id[record.id] = record
        return loaded

    # ------------------------------------------------------------------ rewriting
    def rewrite(self, records: Iterable[InferenceRecord]) -> int:
        """Replace the file's content atomically; returns the number of records written."""
        self._require_closed()
        with AtomicJsonlWriter(self.path) as writer:
            for record in records:
                writer.write(record)
        return writer.count

    def compact(self, loaded: LoadedRecords, order: Sequence[str] = ()) -> int:
        """Rewrite with one record per id: ids in ``order`` first, then the rest as read."""
        rank = {item_id: index for index, item_id in enumerate(order)}
        known = sorted((i for i in loaded.by_id if i in rank), key=rank.__getitem__)
        rest = [i for i in loaded.by_id if i not in rank]
        return self.rewrite(loaded.by_id[i] for i in (*known, *rest))

    # ------------------------------------------------------------------ appending
    def lock(self) -> None:
        """Take the writer lock (``.NAME.lock`` beside the file).

        Raises:
            FileLockedError: Another process holds it.
        """
        if self._lock_fd is not None:
            return
        self._created = outermost_missing(self.path.parent)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.parent / f".{self.path.name}.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory lock
            self._lock_fd = fd
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise FileLockedError(
                "another crystal infer is writing to this file (wait for it, or use another --out)",
                path=self.path,
            ) from None
        self._lock_fd = fd

    def unlock(self) -> None:
        """Release the writer lock.

        The (empty, hidden) lock file stays: removing it would let two later writers
        lock two different files of the same name. Only a run that wrote nothing (a failed
        start: the output file does not exist) leaves nothing behind: no lock file, and no
        folder it created.
        """
        if self._lock_fd is None:
            return
        wrote_nothing = not self.path.exists()
        if wrote_nothing:
            with contextlib.suppress(OSError):
                (self.path.parent / f".{self.path.name}.lock").unlink()
        os.close(self._lock_fd)
        self._lock_fd = None
        if wrote_nothing and self._created is not None:
            remove_empty_folders(self.path.parent, self._created)

    def open(self) -> None:
        """Open for appending (after :meth:`load`, which repairs a torn tail)."""
        self._log.open()

    def append(self, record: InferenceRecord) -> None:
        """Append one record as one complete line (one ``write`` call when possible)."""
        self._log.write_line(record.model_dump_json())
        self.appended += 1

    def close(self) -> None:
        """``fsync`` and close the append descriptor."""
        self._log.close()

    def writing(self) -> _Writing:
        """Context manager: lock, open for appending, then close and unlock."""
        return _Writing(self)

    def _require_closed(self) -> None:
        if self._log.is_open:
            raise RuntimeError("close the append descriptor before rewriting the file")


class _Writing:
    def __init__(self, results: ResultsFile) -> None:
        self.results = results

    def __enter__(self) -> ResultsFile:
        self.results.lock()
        try:
            self.results.open()
        except BaseException:
            self.results.unlock()
            raise
        return self.results

    def __exit__(self, *_: Any) -> None:
        try:
            self.results.close()
        finally:
            self.results.unlock()


def describe_records(records: Iterable[InferenceRecord]) -> dict[str, Any]:
    """Models, prompt hashes and generation settings found among ``records``."""
    models: set[str] = set()
    prompts: set[str] = set()
    settings: set[str] = set()
    for record in records:
        models.add(record.model)
        prompts.add(record.prompt_hash)
        settings.add(record.generation.model_dump_json())
    return {
        "models": sorted(models),
        "prompt_hashes": sorted(prompts),
        "generation": sorted(settings),
    }
