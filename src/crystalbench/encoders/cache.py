"""On-disk embedding cache (a SQLite file) and the caching, batching encoder front end.

The cache is keyed by ``(encoder identity, sha256(text))`` so re-scoring with another
threshold or alpha never calls the encoder again. SQLite in WAL mode with a busy timeout
lets several runs share one cache file at once: writers serialise, readers never see a
half-written vector, and ``INSERT OR IGNORE`` makes concurrent inserts of the same text
harmless.

Vectors are committed while a run goes on (at least every ``CACHE_COMMIT_SECONDS``, and
whenever a lookup ends, fails or is interrupted), so a run that is killed keeps nearly all
of the encoding it did.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from crystalbench._internal.paths import default_cache_dir
from crystalbench._internal.sqlite import enable_wal
from crystalbench.config.settings import CACHE_COMMIT_SECONDS, ENCODE_CALL_TEXTS
from crystalbench.encoders.base import Encoder

_SQL_CHUNK = 900  # stays below SQLite's smallest host-parameter limit
_MMAP_BYTES = 1 << 30
"""SQLite reads pages of the cache file through a memory map of up to this size (no
``read()`` call and copy per page): bulk reads take about a third less time."""
_SCAN_MIN_KEYS = 2_000
"""From this many keys, a lookup that asks for at least a quarter of the file's rows reads
the table once in file order instead of looking each key up (115,000 vectors: 0.5 s
instead of 1.8 s, ``benchmarks/bench_cache_schema.py``)."""

# An ordinary rowid table: vectors (1.5 KB for 384 dims) are too large for WITHOUT ROWID,
# which pushes every row onto overflow pages.
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    " encoder TEXT NOT NULL, key BLOB NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,"
    " UNIQUE (encoder, key))"
)


_MEMO_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS memo ("
    " namespace TEXT NOT NULL, key TEXT NOT NULL, value REAL, UNIQUE (namespace, key))"
)
"""Values of deterministic functions other than the encoder, by namespace (which names the
function, its recipe and the library versions): e.g. math-verify's reading of a gold
answer, :func:`crystalbench.normalize.symbolic.remembered_values`."""


def text_key(text: str) -> bytes:
    """Cache key of one text: its SHA-256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingStore:
    """Embeddings on disk in one SQLite file, shared safely between processes and threads.

    One store object may be used from several threads (e.g. a reward server's request
    handlers): its connection is opened with ``check_same_thread=False`` and every
    statement runs under a lock.

    Args:
        path: The database file; its folder is created.

    Examples:
        >>> import tempfile
        >>> store = EmbeddingStore(Path(tempfile.mkdtemp()) / "e.sqlite")
        >>> store.put_many("enc", [(text_key("a"), np.ones(2, dtype=np.float32))])
        >>> store.get_many("enc", [text_key("a"), text_key("b")])[text_key("a")].tolist()
        [1.0, 1.0]
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA busy_timeout = 60000")
        enable_wal(self._conn, timeout_s=60.0)
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
        with self._transaction():
            self._conn.execute(_SCHEMA)
            self._conn.execute(_MEMO_SCHEMA)
            self._migrate_v1()

    def _migrate_v1(self) -> None:
        """Move vectors from the first layout (a ``WITHOUT ROWID`` table) into ``vectors``.

        That layout stored each 1.5 KB vector on overflow pages (4.7 KB per entry, 3x slower
        reads); the rowid table takes 2.1 KB (``benchmarks/bench_cache_schema.py``). Runs
        once, inside the opening transaction, so concurrent openers migrate only once.
        """
        old = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'"
        ).fetchone()
        if old is None:
            return
        self._conn.execute(
            "INSERT OR IGNORE INTO vectors (encoder, key, dim, vector)"
            " SELECT encoder, key, dim, vector FROM embeddings"
        )
        self._conn.execute("DROP TABLE embeddings")

    @classmethod
    def default(cls, cache_dir: str | Path | None = None) -> EmbeddingStore:
        """The store in ``cache_dir`` (or :func:`default_cache_dir`)."""
        return cls(cls.default_path(cache_dir))

    @staticmethod
    def default_path(cache_dir: str | Path | None = None) -> Path:
        """Where :meth:`default` keeps its file (nothing is created)."""
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        return folder / CACHE_FILE

    def get_many(self, encoder: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Vectors found for ``keys`` (missing keys are absent from the result).

        Few keys are looked up through the ``(encoder, key)`` index, 900 at a time; many
        keys (a quarter of the file's rows or more) are found by reading the table once in
        file order, which is several times faster than as many index look-ups.
        """
        if self._scans(keys):
            matrix, hits = self._scan_matrix(encoder, keys)
            return {key: matrix[row] for row, key in enumerate(keys) if hits[row]}
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), _SQL_CHUNK):
            chunk = sorted(keys[start : start + _SQL_CHUNK])  # index order: fewer page jumps
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT key, dim, vector FROM vectors WHERE encoder = ? AND key IN ({marks})",
                    [encoder, *chunk],
                ).fetchall()
            for key, dim, blob in rows:
                if len(blob) != 4 * dim:  # a damaged row is treated as a miss
                    continue
                found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _scans(self, keys: Sequence[bytes]) -> bool:
        """Whether to read the table once instead of looking each key up: many keys, and at
        least a quarter of the rows ever stored (the largest rowid: one index step)."""
        if len(keys) < _SCAN_MIN_KEYS:
            return False
        with self._lock:
            row = self._conn.execute("SELECT MAX(rowid) FROM vectors").fetchone()
        return 4 * len(keys) >= int(row[0] or 0)

    def get_matrix(self, encoder: str, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """The vectors of ``keys`` as rows of one float32 matrix, and which rows were found.

        Returns ``(matrix, found)``: ``matrix[k]`` is the vector of ``keys[k]`` where
        ``found[k]`` (other rows are undefined); ``(0, 0)`` when nothing was found. Many keys
        are read in one pass over the table, each vector copied straight into its row;
        rows of another dimension than the first found (a damaged file) count as missing.
        """
        if self._scans(keys):
            return self._scan_matrix(encoder, keys)
        return _matrix_of(self.get_many(encoder, keys), keys)

    def _scan_matrix(self, encoder: str, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`get_matrix` by one pass over the table in rowid order (one read transaction)."""
        found = np.zeros(len(keys), dtype=bool)
        where = {key: row for row, key in enumerate(keys)}
        matrix = np.zeros((0, 0), dtype=np.float32)
        flat: memoryview | None = None
        width = 0
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, dim, vector FROM vectors NOT INDEXED WHERE encoder = ?", [encoder]
            )
            for key, dim, blob in rows:
                slot = where.get(key)
                if slot is None or len(blob) != 4 * dim:  # not asked for, or damaged
                    continue
                if flat is None:
                    matrix = np.empty((len(keys), dim), dtype=np.float32)
                    flat, width = matrix.data.cast("B"), 4 * dim
                elif 4 * dim != width:
                    continue
                flat[slot * width : (slot + 1) * width] = blob
                found[slot] = True
        if len(where) < len(keys):  # a key asked for twice: its other rows get the vector
            for row, key in enumerate(keys):
                first = where[key]
                if first != row and found[first]:
                    matrix[row] = matrix[first]
                    found[row] = True
        return matrix, found

    def put_many(self, encoder: str, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors; existing entries are kept (identical by construction)."""
        if not items:
            return
        rows = [
            (encoder, key, int(vec.shape[0]), np.ascontiguousarray(vec, np.float32).tobytes())
            for key, vec in items
        ]
        with self._lock, self._transaction():
            self._conn.executemany(
                "INSERT OR IGNORE INTO vectors (encoder, key, dim, vector) VALUES (?, ?, ?, ?)",
                rows,
            )

    def get_values(self, namespace: str) -> dict[str, float | None]:
        """Every remembered value of ``namespace`` (``None`` where the function gave none)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, value FROM memo WHERE namespace = ?", [namespace]
            ).fetchall()
        return {str(key): None if value is None else float(value) for key, value in rows}

    def put_values(self, namespace: str, values: dict[str, float | None]) -> None:
        """Remember values of ``namespace``; existing entries are kept (identical by
        construction: the namespace names everything the values depend on)."""
        if not values:
            return
        rows = [(namespace, key, value) for key, value in values.items()]
        with self._lock, self._transaction():
            self._conn.executemany(
                "INSERT OR IGNORE INTO memo (namespace, key, value) VALUES (?, ?, ?)", rows
            )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    def stats(self) -> dict[str, int]:
        """Entry counts per encoder identity and the file size in bytes."""
        with self._lock:
            counts = dict(
                self._conn.execute("SELECT encoder, COUNT(*) FROM vectors GROUP BY encoder")
            )
        size = sum(
            p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file()
        )
        return {**counts, "__bytes__": size}

    def clear(self, encoder: str | None = None) -> int:
        """Delete all entries (or one encoder's); returns how many rows went."""
        with self._lock:
            with self._transaction():
                if encoder is None:
                    self._conn.execute("DELETE FROM memo")
                    cursor = self._conn.execute("DELETE FROM vectors")
                else:
                    cursor = self._conn.execute("DELETE FROM vectors WHERE encoder = ?", [encoder])
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.execute("VACUUM")
            return cursor.rowcount

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


CACHE_FILE = "embeddings.sqlite"
"""The embedding cache's file inside its folder."""


@dataclass(frozen=True)
class CacheSummary:
    """What an embedding cache holds, read without changing (or creating) anything."""

    path: Path
    """The cache file (it need not exist)."""
    exists: bool
    """Whether there is a cache there."""
    size_bytes: int
    """The file's size with its write-ahead log (0 when there is none)."""
    entries: dict[str, int]
    """Cached vectors per encoder identity."""


def inspect_cache(cache_dir: str | Path | None = None) -> CacheSummary:
    """The embedding cache in ``cache_dir`` (or :func:`default_cache_dir`), read only.

    Unlike :meth:`EmbeddingStore.default`, nothing is created: no folder, no file, no schema,
    no migration; a folder without a cache is reported as such.

    Raises:
        InputError: The file is there but is not a readable embedding cache.

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp()) / "new"
        >>> inspect_cache(folder).exists, folder.exists()
        (False, False)
    """
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    path = folder / CACHE_FILE
    if not path.is_file():
        return CacheSummary(path=path, exists=False, size_bytes=0, entries={})
    size = sum(p.stat().st_size for p in folder.glob(CACHE_FILE + "*") if p.is_file())
    # Without a write-ahead log (closed cleanly, nobody writing) the file is read as it is,
    # so SQLite creates no -wal/-shm beside it; with one, read-only mode reads the log too.
    quiet = not (folder / f"{CACHE_FILE}-wal").exists()
    mode = "immutable=1" if quiet else "mode=ro"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=60.0)
    except sqlite3.Error as exc:
        from crystalbench.errors import InputError

        raise InputError(f"cannot open the embedding cache ({exc})", path=path) from None
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        table = "vectors" if "vectors" in tables else "embeddings" if "embeddings" in tables else ""
        counts = (
            dict(conn.execute(f"SELECT encoder, COUNT(*) FROM {table} GROUP BY encoder"))
            if table
            else {}
        )
    except sqlite3.Error as exc:
        from crystalbench.errors import InputError

        raise InputError(f"not a readable embedding cache ({exc})", path=path) from None
    finally:
        conn.close()
    return CacheSummary(path=path, exists=True, size_bytes=size, entries=counts)


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


class VectorStore(Protocol):
    """Where a :class:`CachingEncoder` finds and keeps vectors: an :class:`EmbeddingStore`
    (on disk) or a :class:`MemoryStore` (in memory, optionally in front of one on disk)."""

    def get_many(self, encoder: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Vectors found for ``keys`` (missing keys are absent from the result)."""
        ...

    def get_matrix(self, encoder: str, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """The vectors of ``keys`` as matrix rows, and which rows were found."""
        ...

    def put_many(self, encoder: str, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        """Keep vectors."""
        ...


def _matrix_of(
    found: dict[bytes, np.ndarray], keys: Sequence[bytes]
) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`EmbeddingStore.get_matrix`'s answer built from a ``get_many`` answer."""
    hits = np.zeros(len(keys), dtype=bool)
    if not found:
        return np.zeros((0, 0), dtype=np.float32), hits
    dim = next(iter(found.values())).shape[0]
    matrix = np.empty((len(keys), dim), dtype=np.float32)
    for row, key in enumerate(keys):
        vector = found.get(key)
        if vector is not None and vector.shape[0] == dim:
            matrix[row] = vector
            hits[row] = True
    return matrix, hits


class MemoryStore:
    """Vectors in memory, the least recently used dropped beyond ``size``; optionally in
    front of another store (``backing``, e.g. the on-disk :class:`EmbeddingStore`).

    Reads look in memory, then in ``backing`` (what it holds is kept in memory from then
    on); writes go to both. Safe to share between threads. The reward scorer keeps its
    reference steps here: a GRPO run asks for the same references every step.

    Args:
        size: Vectors kept in memory (``0``: none; every read then goes to ``backing``).
        backing: The store behind this one, or ``None``.

    Examples:
        >>> store = MemoryStore(size=1)
        >>> store.put_many("enc", [(b"a", np.ones(2, dtype=np.float32))])
        >>> store.put_many("enc", [(b"b", np.zeros(2, dtype=np.float32))])
        >>> sorted(store.get_many("enc", [b"a", b"b"])), store.hits
        ([b'b'], 1)
    """

    def __init__(self, size: int = 200_000, backing: VectorStore | None = None) -> None:
        self.size = size
        self.backing = backing
        self.hits = 0
        """Vectors found in memory."""
        self.backing_hits = 0
        """Vectors found in ``backing`` (not in memory)."""
        self._vectors: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, entry: tuple[str, bytes]) -> bool:
        """Whether ``(encoder, key)`` is held in memory (the backing store is not asked)."""
        return entry in self._vectors

    def get_many(self, encoder: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Vectors found for ``keys``: in memory, then in the backing store."""
        found: dict[bytes, np.ndarray] = {}
        asked: list[bytes] = []
        with self._lock:
            for key in keys:
                vector = self._vectors.get((encoder, key))
                if vector is None:
                    asked.append(key)
                else:
                    self._vectors.move_to_end((encoder, key))
                    found[key] = vector
            self.hits += len(found)
        if asked and self.backing is not None:
            behind = self.backing.get_many(encoder, asked)
            if behind:
                self._keep(encoder, list(behind.items()))
                found.update(behind)
                with self._lock:
                    self.backing_hits += len(behind)
        return found

    def get_matrix(self, encoder: str, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """The vectors of ``keys`` as rows of one float32 matrix, and which rows were found."""
        return _matrix_of(self.get_many(encoder, keys), keys)

    def put_many(self, encoder: str, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        """Keep vectors in memory and in the backing store."""
        self._keep(encoder, items)
        if self.backing is not None:
            self.backing.put_many(encoder, items)

    def _keep(self, encoder: str, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        if self.size <= 0:
            return
        with self._lock:
            for key, vector in items:
                self._vectors[(encoder, key)] = vector
                self._vectors.move_to_end((encoder, key))
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)

    def clear(self) -> None:
        """Forget the vectors held in memory (the backing store keeps its own)."""
        with self._lock:
            self._vectors.clear()


@dataclass
class EncodeStats:
    """Counters of one :class:`CachingEncoder`: what was looked up, encoded and how long."""

    requested: int = 0
    """Texts asked for (with repeats)."""
    unique: int = 0
    """Distinct texts asked for."""
    cache_hits: int = 0
    encoded: int = 0
    """Texts sent through the encoder."""
    encode_seconds: float = 0.0
    """Wall time inside the encoder's forward passes."""
    cache_seconds: float = 0.0
    """Wall time reading and writing the cache."""
    commits: int = 0
    """Transactions that wrote computed vectors to the on-disk cache."""
    extra: dict[str, float] = field(default_factory=dict)


class CachingEncoder:
    """Deduplicates texts, reads the cache, encodes the misses in length-sorted batches.

    The misses of one lookup are sorted by length once (shortest first), then handed to the
    encoder a few hundred at a time (the encoder splits them into forward batches);
    computed vectors are committed to the store after the call during which
    ``commit_seconds`` have passed since the last commit, and at the end of the lookup,
    also when it fails or is interrupted.

    Vectors a later lookup will need again can be held in memory (:meth:`hold`, then
    :meth:`release`): a run that embeds its texts chunk by chunk encodes a text shared by
    several chunks once, with or without a store.

    Args:
        encoder: The real encoder.
        store: Embedding cache (on disk, :class:`EmbeddingStore`, or in memory,
            :class:`MemoryStore`), or ``None``: nothing is kept beyond what is held.
        batch_size: Texts handed to the encoder per call; ``None``: ``ENCODE_CALL_TEXTS``,
            or the encoder's forward batch times its workers when that is larger (a GPU's
            batch of 1,024 stays whole).
        progress: Called with the number of texts just encoded (for progress bars).
        commit_seconds: Commit computed vectors at least this often (``0``: after every
            encoder call).
        clock: Monotonic clock used for ``commit_seconds`` (tests pass a fake one).

    Examples:
        >>> from crystalbench.encoders.hashing import HashEncoder
        >>> front = CachingEncoder(HashEncoder(dim=8))
        >>> front.embed(["a b", "c", "a b"]).shape, front.stats.encoded
        ((3, 8), 2)
    """

    def __init__(
        self,
        encoder: Encoder,
        store: VectorStore | None = None,
        *,
        batch_size: int | None = None,
        progress: Callable[[int], None] | None = None,
        commit_seconds: float = CACHE_COMMIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.encoder = encoder
        self.store = store
        self.batch_size = batch_size
        self.progress = progress
        self.commit_seconds = commit_seconds
        self.clock = clock
        self.stats = EncodeStats()
        self._memory: dict[bytes, np.ndarray] = {}

    @property
    def identity(self) -> str:
        """The wrapped encoder's identity."""
        return self.encoder.identity

    def call_texts(self) -> int:
        """Texts per encoder call (see ``batch_size``); asks the encoder only when needed."""
        if self.batch_size:
            return self.batch_size
        forward = int(getattr(self.encoder, "batch_size", 0) or 0)
        workers = int(getattr(self.encoder, "workers", 1) or 1)
        return max(ENCODE_CALL_TEXTS, forward * workers)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` in order, each distinct text encoded at most once ever."""
        self.stats.requested += len(texts)
        unique = list(dict.fromkeys(texts))
        self.stats.unique += len(unique)
        vectors = self.lookup(unique)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        dim = next(iter(vectors.values())).shape[0]
        out = np.empty((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = vectors[text]
        return out

    def lookup_matrix(self, unique: Sequence[str]) -> np.ndarray:
        """The vectors of distinct texts as one ``(len(unique), dim)`` float32 matrix, in
        order: what :meth:`lookup` gives, built without a Python object per vector (cached
        vectors are copied from the file straight into their rows). ``(0, 0)`` for none."""
        if not unique:
            return np.zeros((0, 0), dtype=np.float32)
        identity = self.encoder.identity
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in unique]
        memory = self._memory
        asked = [row for row, key in enumerate(keys) if key not in memory]
        stored = np.zeros((0, 0), dtype=np.float32)
        found = np.zeros(len(asked), dtype=bool)
        if asked and self.store is not None:
            started = time.perf_counter()
            stored, found = self.store.get_matrix(identity, [keys[row] for row in asked])
            self.stats.cache_seconds += time.perf_counter() - started
            self.stats.cache_hits += int(found.sum())
        if len(asked) == len(unique) and found.all():  # all from the file, in order
            return stored
        missing = [row for row, hit in zip(asked, found.tolist(), strict=True) if not hit]
        encoded: dict[str, np.ndarray] = {}
        if missing:
            self._encode_missing(identity, [(unique[r], keys[r]) for r in missing], encoded)
        if stored.size:
            dim = stored.shape[1]
        elif missing:
            dim = encoded[unique[missing[0]]].shape[0]
        else:
            dim = next(memory[key] for key in keys if key in memory).shape[0]
        out = np.empty((len(unique), dim), dtype=np.float32)
        if found.any():
            hits = np.flatnonzero(found)
            out[np.asarray(asked)[hits]] = stored[hits]
        for row, key in enumerate(keys):
            if key in memory:
                out[row] = memory[key]
        for row in missing:
            out[row] = encoded[unique[row]]
        return out

    def lookup(
        self, unique: Sequence[str], *, passing: Sequence[str] = ()
    ) -> dict[str, np.ndarray]:
        """``{text: vector}`` for distinct texts, via memory, the store, then the encoder.

        Args:
            unique: Distinct texts.
            passing: More distinct texts (none of them in ``unique``) that are encoded in the
                same encoder calls as the misses of ``unique``, but neither looked up in nor
                written to the store: texts that rarely come back (a policy's completions),
                which would only fill the cache.

        Examples:
            >>> from crystalbench.encoders.hashing import HashEncoder
            >>> store = MemoryStore()
            >>> front = CachingEncoder(HashEncoder(dim=4), store)
            >>> sorted(front.lookup(["kept"], passing=["once"])), len(store)
            (['kept', 'once'], 1)
        """
        identity = self.encoder.identity
        keys = [text_key(t) for t in unique]
        result: dict[str, np.ndarray] = {}
        wanted: list[tuple[str, bytes]] = []
        for text, key in zip(unique, keys, strict=True):
            hit = self._memory.get(key)
            if hit is not None:
                result[text] = hit
            else:
                wanted.append((text, key))
        if wanted and self.store is not None:
            started = time.perf_counter()
            found = self.store.get_many(identity, [k for _, k in wanted])
            self.stats.cache_seconds += time.perf_counter() - started
            self.stats.cache_hits += len(found)
            still: list[tuple[str, bytes]] = []
            for text, key in wanted:
                vec = found.get(key)
                if vec is None:
                    still.append((text, key))
                else:
                    result[text] = vec
            wanted = still
        transient: set[bytes] = set()
        if passing:
            extra = [(text, text_key(text)) for text in passing]
            transient = {key for _, key in extra}
            wanted.extend(extra)
        if wanted:
            self._encode_missing(identity, wanted, result, transient)
        return result

    def _encode_missing(
        self,
        identity: str,
        wanted: list[tuple[str, bytes]],
        result: dict[str, np.ndarray],
        transient: Collection[bytes] = (),
    ) -> None:
        """Encode ``wanted`` call by call into ``result``, committing as the work goes on
        (all but the ``transient`` keys)."""
        pending: list[tuple[bytes, np.ndarray]] = []
        last_commit = self.clock()
        try:
            for batch in self._length_sorted_batches(wanted, self.call_texts()):
                started = time.perf_counter()
                vectors = self.encoder.encode([t for t, _ in batch])
                self.stats.encode_seconds += time.perf_counter() - started
                self.stats.encoded += len(batch)
                for row, (text, key) in enumerate(batch):
                    vec = vectors[row]
                    result[text] = vec
                    if key not in transient:
                        pending.append((key, vec))
                if self.store is not None and self.clock() - last_commit >= self.commit_seconds:
                    self._commit(identity, pending)
                    pending = []
                    last_commit = self.clock()
                if self.progress is not None:
                    self.progress(len(batch))
        except BaseException:
            # Keep what was computed before the failure (Ctrl-C, an encoder error); a
            # failing commit must not hide the original error.
            if pending and self.store is not None:
                with contextlib.suppress(Exception):
                    self._commit(identity, pending)
            raise
        if pending and self.store is not None:
            self._commit(identity, pending)

    def _commit(self, identity: str, pairs: Sequence[tuple[bytes, np.ndarray]]) -> None:
        assert self.store is not None
        started = time.perf_counter()
        self.store.put_many(identity, pairs)
        self.stats.cache_seconds += time.perf_counter() - started
        self.stats.commits += 1

    def remember(self, texts: Sequence[str]) -> None:
        """Keep these texts' vectors in memory for the rest of the run (e.g. references)."""
        for text, vec in self.lookup(list(dict.fromkeys(texts))).items():
            self._memory[text_key(text)] = vec

    def forget(self) -> None:
        """Drop the in-memory vectors kept by :meth:`remember` and :meth:`hold`."""
        self._memory.clear()

    def hold(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Keep these texts' vectors (rows of ``vectors``, in order) in memory until
        :meth:`release`: later lookups find them there, before the store.

        Examples:
            >>> from crystalbench.encoders.hashing import HashEncoder
            >>> front = CachingEncoder(HashEncoder(dim=4))
            >>> front.hold(["a"], front.lookup_matrix(["a"]))
            >>> _ = front.lookup_matrix(["a"]); front.stats.encoded
            1
            >>> front.release(["a"]); _ = front.lookup_matrix(["a"]); front.stats.encoded
            2
        """
        if not texts:
            return
        rows = np.array(vectors, dtype=np.float32, copy=True)  # not a view of a whole chunk
        for text, row in zip(texts, rows, strict=True):
            self._memory[text_key(text)] = row

    def release(self, texts: Sequence[str]) -> None:
        """Drop what :meth:`hold` kept for these texts."""
        for text in texts:
            self._memory.pop(text_key(text), None)

    @staticmethod
    def _length_sorted_batches(
        wanted: list[tuple[str, bytes]], size: int
    ) -> Iterator[list[tuple[str, bytes]]]:
        # Shortest first: the first vectors (and the first commit, and the progress bar)
        # come quickly; forward batches hold texts of similar length either way.
        ordered = sorted(wanted, key=lambda pair: len(pair[0]))
        for start in range(0, len(ordered), size):
            yield ordered[start : start + size]
