"""Opening our SQLite files while another connection is writing: the switch to WAL waits.

SQLite refuses ``PRAGMA journal_mode = WAL`` at once ("database is locked", no busy handler)
while another connection holds a write transaction on a rollback-journal database: the race
two ``crystal score`` processes creating one new cache file can lose. Each test holds such a
transaction on a second connection and releases it from a timer thread.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from crystalbench._internal.sqlite import enable_wal, is_busy
from crystalbench.encoders.cache import EmbeddingStore, text_key
from crystalbench.judges.base import JudgeVerdict
from crystalbench.judges.openai_judge import VerdictCache
from crystalbench.review.db import Database, database_url


class _Writer:
    """A connection holding a write transaction on a rollback-journal database."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        assert self.conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        self.conn.execute("CREATE TABLE IF NOT EXISTS other (x)")
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO other VALUES (1)")

    def release_after(self, seconds: float) -> threading.Timer:
        timer = threading.Timer(seconds, self.conn.execute, ["COMMIT"])
        timer.start()
        return timer


def _held(tmp_path: Path, name: str) -> tuple[Path, _Writer]:
    path = tmp_path / name
    return path, _Writer(path)


def test_the_plain_pragma_fails_at_once_while_another_connection_writes(tmp_path):
    """The scenario is real: without waiting, SQLite refuses immediately despite busy_timeout."""
    path, writer = _held(tmp_path, "plain.sqlite")
    conn = sqlite3.connect(path, timeout=30.0)
    conn.execute("PRAGMA busy_timeout = 30000")
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("PRAGMA journal_mode = WAL")
    assert time.monotonic() - started < 5.0  # not the busy handler's 30 s
    assert is_busy(caught.value)
    writer.conn.execute("COMMIT")


def test_enable_wal_waits_for_the_writer_then_switches(tmp_path):
    path, writer = _held(tmp_path, "wait.sqlite")
    timer = writer.release_after(0.4)
    conn = sqlite3.connect(path)
    started = time.monotonic()
    assert enable_wal(conn, timeout_s=30.0) == "wal"
    assert time.monotonic() - started >= 0.3
    timer.join()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_enable_wal_gives_up_after_its_timeout(tmp_path):
    path, writer = _held(tmp_path, "never.sqlite")
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError):
        enable_wal(sqlite3.connect(path), timeout_s=0.3)
    assert 0.1 <= time.monotonic() - started < 5.0
    writer.conn.execute("COMMIT")


def test_enable_wal_raises_other_errors_at_once(tmp_path):
    path = tmp_path / "not-a-database.sqlite"
    path.write_bytes(b"this is not SQLite" * 100)
    started = time.monotonic()
    with pytest.raises(sqlite3.DatabaseError) as caught:
        enable_wal(sqlite3.connect(path), timeout_s=30.0)
    assert not (isinstance(caught.value, sqlite3.OperationalError) and is_busy(caught.value))
    assert time.monotonic() - started < 5.0


def test_the_embedding_cache_opens_while_another_process_writes_its_new_file(tmp_path):
    path, writer = _held(tmp_path, "embeddings.sqlite")
    timer = writer.release_after(0.3)
    store = EmbeddingStore(path)
    timer.join()
    store.put_many("enc", [(text_key("a"), np.ones(3, dtype=np.float32))])
    assert store.get_many("enc", [text_key("a")])[text_key("a")].tolist() == [1.0, 1.0, 1.0]
    store.close()


def test_the_verdict_cache_opens_while_another_process_writes_its_new_file(tmp_path):
    path, writer = _held(tmp_path, "judge.sqlite")
    timer = writer.release_after(0.3)
    cache = VerdictCache(path)
    timer.join()
    cache.put("k", JudgeVerdict(correct=True, reason="same"))
    assert cache.get("k").correct


def test_the_review_database_opens_while_another_worker_writes_its_new_file(tmp_path):
    path, writer = _held(tmp_path, "review.sqlite")
    timer = writer.release_after(0.3)
    database = Database(database_url(path))
    timer.join()
    with database.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    database.engine.dispose()
