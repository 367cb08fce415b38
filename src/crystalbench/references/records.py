"""What a reference build writes as it goes: candidates, consensus chains, verdicts.

Each file in the output folder is an append-only journal of one record type, keyed so that
a record is never written twice:

- ``candidates.jsonl``: :class:`CandidateRecord`, one per generation request
  (key ``item|model|r<round>|s<sample>|a<attempt>``);
- ``consensus.jsonl``: :class:`ConsensusRecord`, one per item and round (``item|r<round>``);
- ``verdicts.jsonl``: :class:`VerdictRecord`, one per validator request
  (``item|r<round>|a<attempt>``);
- ``regenerations.jsonl``: :class:`RegenerationRecord`, one per item sent back.

:class:`Journal` appends each record as one ``os.write`` of a whole line on an
``O_APPEND`` descriptor (a ``kill -9`` loses nothing already appended), ``fsync``\\ s every
``fsync_interval`` seconds and on close, and on opening removes a torn last line (a write
cut short) and reports it. A complete line that is not a valid record is an error naming
the file and line. One build at a time: :func:`lock_folder` takes ``DIR/.references.lock``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field, ValidationError

from crystalbench._internal.io import AppendLog, MalformedJsonError, read_jsonl
from crystalbench.errors import InputError
from crystalbench.inference.records import ResultsFile, TornLine, utc_now
from crystalbench.references.consensus import ConsensusChain
from crystalbench.types import Record

SCHEMA = "references-1"
"""Layout version of every journal record."""

CandidateStatus = Literal["ok", "empty", "garbage", "truncated", "wrong_schema", "error"]
"""What a generation request gave: a usable chain, or why not."""

BAD_OUTPUT_KINDS: tuple[str, ...] = ("empty", "garbage", "truncated", "wrong_schema", "error")
"""Candidate statuses that are retried with the next attempt (and a new seed)."""


def candidate_key(item_id: str, model: str, round_: int, sample: int, attempt: int) -> str:
    """The key of one generation request.

    Examples:
        >>> candidate_key("plotqa/7", "qwen", 2, 0, 1)
        'plotqa/7|qwen|r2|s0|a1'
    """
    return f"{item_id}|{model}|r{round_}|s{sample}|a{attempt}"


def round_key(item_id: str, round_: int) -> str:
    """The key of one item's round (consensus records).

    Examples:
        >>> round_key("plotqa/7", 1)
        'plotqa/7|r1'
    """
    return f"{item_id}|r{round_}"


def verdict_key(item_id: str, round_: int, attempt: int) -> str:
    """The key of one validator request.

    Examples:
        >>> verdict_key("plotqa/7", 1, 0)
        'plotqa/7|r1|a0'
    """
    return f"{item_id}|r{round_}|a{attempt}"


class CandidateRecord(Record):
    """One generation request and what it gave (``candidates.jsonl``)."""

    key: str
    """``item|model|r<round>|s<sample>|a<attempt>``."""
    item_id: str
    model: str
    """Generator name (as configured)."""
    served_model: str
    """Model name sent to the server."""
    round: int
    """1-based round."""
    sample: int
    """Sample number within model and round."""
    attempt: int
    """0-based attempt of this slot (a new seed each)."""
    seed: int
    """The request's seed."""
    status: CandidateStatus
    """``ok`` or why the output is unusable (``error``: the request itself failed)."""
    steps: list[str] = Field(default_factory=list)
    """Parsed steps (``ok`` records; partial ones are kept for inspection)."""
    answer: str | None = None
    """Answer the generator wrote."""
    parse_status: str | None = None
    """Which parser path read the output."""
    response: str | None = None
    """Raw model text."""
    error: str | None = None
    """Why the request failed (``status`` ``error``)."""
    error_kind: str | None = None
    """``timeout``, ``connection``, ``server_error``, ``image``..."""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    """Seconds of the HTTP attempt that answered."""
    http_attempts: int = 1
    """HTTP requests made (retries of timeouts, 429, 5xx included)."""
    endpoint: str | None = None
    prompt_name: str
    prompt_hash: str
    temperature: float
    top_p: float | None = None
    max_tokens: int
    engine: str = "local"
    created_at: str = Field(default_factory=utc_now)
    schema_version: str = SCHEMA


class ConsensusRecord(Record):
    """The consensus of one item's round, or why there is none (``consensus.jsonl``)."""

    key: str
    """``item|r<round>``."""
    item_id: str
    round: int
    chain: ConsensusChain | None = None
    """The consensus chain (``None`` when the round failed before consensus)."""
    failure: str | None = None
    """``too_few_chains`` (fewer valid chains than ``min_chains``) or ``empty``
    (every cluster under ``min_support``)."""
    candidate_keys: list[str] = Field(default_factory=list)
    """The ``ok`` candidates the consensus was built from."""
    encoder: str
    """Encoder identity."""
    created_at: str = Field(default_factory=utc_now)
    schema_version: str = SCHEMA


class VerdictRecord(Record):
    """One validator request and its verdict (``verdicts.jsonl``)."""

    key: str
    """``item|r<round>|a<attempt>``."""
    item_id: str
    round: int
    attempt: int
    seed: int
    model: str
    status: Literal["ok", "unparsed", "error"]
    """``ok``: a verdict was read; ``unparsed``: the reply held none; ``error``: the
    request failed."""
    accept: bool | None = None
    logical_validity: bool | None = None
    sequence_coherence: bool | None = None
    visual_grounding: bool | None = None
    answer_consistency: bool | None = None
    first_error_step: int | None = None
    """1-based number of the first wrong step (``None``: none named)."""
    reasons: list[str] = Field(default_factory=list)
    chain_hash: str
    """SHA-256 prefix of the chain judged."""
    response: str | None = None
    error: str | None = None
    error_kind: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    prompt_name: str
    prompt_hash: str
    created_at: str = Field(default_factory=utc_now)
    schema_version: str = SCHEMA


class RegenerationRecord(Record):
    """An item sent back for new rounds (``regenerations.jsonl``)."""

    key: str
    """``item|after-r<round>``."""
    item_id: str
    after_round: int
    """The item's last round when it was sent back; new rounds start after it."""
    source: str | None = None
    """The ids file that asked for it."""
    created_at: str = Field(default_factory=utc_now)
    schema_version: str = SCHEMA


R = TypeVar("R", CandidateRecord, ConsensusRecord, VerdictRecord, RegenerationRecord)


@dataclass
class Journal(Generic[R]):
    """An append-only, resumable JSONL file of one record type, keyed by ``record.key``.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "regen.jsonl"
        >>> journal = Journal(path, RegenerationRecord)
        >>> journal.append(RegenerationRecord(key="a|after-r1", item_id="a", after_round=1))
        >>> journal.close()
        >>> _ = path.open("a").write('{"key": "b|aft')      # a write cut by kill -9
        >>> again = Journal(path, RegenerationRecord)
        >>> sorted(again.records), again.torn.length
        (['a|after-r1'], 14)
    """

    path: Path
    record_type: type[R]
    fsync_interval: float = 1.0
    records: dict[str, R] = field(default_factory=dict)
    torn: TornLine | None = None
    duplicates: int = 0
    _log: AppendLog | None = None

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self._log = AppendLog(self.path, fsync_interval=self.fsync_interval)
        self.torn = ResultsFile(self.path).repair()
        if self.path.is_file():
            for record in self._read():
                if record.key in self.records:
                    self.duplicates += 1
                self.records[record.key] = record

    def _read(self) -> Iterator[R]:
        lines = read_jsonl(self.path, allow_empty=True)
        while True:
            try:
                number, value = next(lines)
            except StopIteration:
                return
            except MalformedJsonError as exc:
                raise InputError(
                    f"{exc.message}; this line was not written by crystal references",
                    path=exc.path,
                    line=exc.line,
                ) from None
            try:
                yield self.record_type.model_validate(value)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first.get("loc", ())) or None
                raise InputError(
                    f"not a {self.record_type.__name__}: {first.get('msg', 'invalid')}",
                    path=self.path,
                    line=number,
                    field=loc,
                ) from None

    def __contains__(self, key: str) -> bool:
        return key in self.records

    def get(self, key: str) -> R | None:
        return self.records.get(key)

    def append(self, record: R) -> None:
        """Append one record as one whole line (refusing a key already written)."""
        if record.key in self.records:
            raise RuntimeError(f"{self.path.name}: record {record.key!r} is already written")
        assert self._log is not None
        self._log.write_line(record.model_dump_json())
        self.records[record.key] = record

    def close(self) -> None:
        """``fsync`` and close the append descriptor."""
        if self._log is not None:
            self._log.close()


class FolderLockedError(InputError):
    """Another build is writing to the same output folder."""


@dataclass
class FolderLock:
    """``DIR/.references.lock`` held with ``flock`` for the length of a build."""

    path: Path
    _fd: int | None = None

    def acquire(self) -> FolderLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory lock
            self._fd = fd
            return self
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise FolderLockedError(
                "another crystal references command is writing to this folder "
                "(wait for it, or use another --out)",
                path=self.path.parent,
            ) from None
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *_: Any) -> None:
        self.release()


def lock_folder(out: str | Path) -> FolderLock:
    """The lock of an output folder (use as a context manager)."""
    return FolderLock(Path(out) / ".references.lock")
