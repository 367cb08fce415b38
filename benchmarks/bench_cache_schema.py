"""Embedding-cache write/read speed and size: the shipped SQLite layout against the first one.

The first ``EmbeddingStore`` kept vectors in a ``WITHOUT ROWID`` table keyed by
``(encoder, key)``. SQLite advises against ``WITHOUT ROWID`` for rows larger than about a
twentieth of a page; a 384-dim float32 vector is 1.5 KB, so every row spilled to overflow
pages. The shipped layout stores the same columns in an ordinary rowid table with a
``UNIQUE (encoder, key)`` index (same ``INSERT OR IGNORE`` semantics, same concurrency);
this script is the measurement that decided it (old caches are migrated on open).

    python benchmarks/bench_cache_schema.py --vectors 100000 --dim 384

Writes go through ``put_many`` in batches of 4096 (as a cold scoring run does), reads
through ``get_many`` of every key in random order (as a warm re-scoring run does).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from crystalbench.encoders.cache import EmbeddingStore

FIRST_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS embeddings ("
    " encoder TEXT NOT NULL, key BLOB NOT NULL, dim INTEGER NOT NULL,"
    " vector BLOB NOT NULL, PRIMARY KEY (encoder, key)) WITHOUT ROWID"
)


class FirstLayoutStore(EmbeddingStore):
    """``EmbeddingStore`` with the first layout (only the schema and table name differ)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
        self._conn.execute("PRAGMA busy_timeout = 60000")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute(FIRST_SCHEMA)

    def get_many(self, encoder: str, keys):  # type: ignore[no-untyped-def]
        found = {}
        for start in range(0, len(keys), 900):
            chunk = list(keys[start : start + 900])
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, dim, vector FROM embeddings WHERE encoder = ? AND key IN ({marks})",
                [encoder, *chunk],
            )
            for key, dim, blob in rows:
                if len(blob) == 4 * dim:
                    found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, encoder: str, items) -> None:  # type: ignore[no-untyped-def]
        rows = [(encoder, k, int(v.shape[0]), np.ascontiguousarray(v).tobytes()) for k, v in items]
        self._conn.execute("BEGIN IMMEDIATE")
        self._conn.executemany(
            "INSERT OR IGNORE INTO embeddings (encoder, key, dim, vector) VALUES (?, ?, ?, ?)", rows
        )
        self._conn.execute("COMMIT")


def measure(store_class: type[EmbeddingStore], n: int, dim: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="cache-schema-"))
    store = store_class(folder / "e.sqlite")
    rng = np.random.default_rng(0)
    keys = [hashlib.sha256(str(i).encode()).digest() for i in range(n)]
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    started = time.perf_counter()
    for s in range(0, n, 4096):
        store.put_many("enc", list(zip(keys[s : s + 4096], vectors[s : s + 4096], strict=True)))
    write = time.perf_counter() - started
    store.close()
    size = sum(p.stat().st_size for p in folder.glob("e.sqlite*"))
    store = store_class(folder / "e.sqlite")
    order = list(keys)
    random.Random(0).shuffle(order)
    started = time.perf_counter()
    found = store.get_many("enc", order)
    read = time.perf_counter() - started
    assert len(found) == n
    assert np.array_equal(found[keys[7]], vectors[7])
    store.close()
    for p in folder.glob("e.sqlite*"):
        os.unlink(p)
    folder.rmdir()
    return {"write_s": write, "read_s": read, "mb": size / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    print(f"{args.vectors} vectors of {args.dim} float32; load {os.getloadavg()[0]:.2f}")
    for label, cls in (
        ("first (WITHOUT ROWID)", FirstLayoutStore),
        ("shipped (rowid)", EmbeddingStore),
    ):
        r = measure(cls, args.vectors, args.dim)
        print(
            f"{label:>24}: write {r['write_s']:6.2f} s, read {r['read_s']:6.2f} s, "
            f"file {r['mb']:6.0f} MB ({1e3 * r['mb'] / args.vectors:.2f} KB per vector)"
        )


if __name__ == "__main__":
    main()
