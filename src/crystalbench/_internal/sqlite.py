"""Switching a SQLite database to write-ahead logging when other processes may be writing.

Our SQLite files (the embedding cache, the judge's verdict cache, the review database) are
shared by processes that start at the same moment: ``crystal score`` runs side by side, a
reward server's workers, the review app's workers. SQLite answers ``PRAGMA journal_mode = WAL``
with "database is locked" *at once*, without calling the busy handler, whenever another
connection holds a write transaction on a database still in rollback-journal mode: the change
needs a lock that the other writer holds, and waiting while holding the shared lock could
deadlock. Two processes creating the same new file hit exactly this. :func:`enable_wal`
retries with a short back-off until its time-out instead of failing the run.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["enable_wal", "is_busy"]

_BUSY_CODES = (5, 6)
"""SQLite's primary result codes ``SQLITE_BUSY`` and ``SQLITE_LOCKED``."""


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether ``exc`` is SQLite's ``SQLITE_BUSY`` / ``SQLITE_LOCKED`` (another connection's lock).

    Examples:
        >>> is_busy(sqlite3.OperationalError("database is locked"))
        True
        >>> is_busy(sqlite3.OperationalError("no such table: t"))
        False
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def enable_wal(connection: sqlite3.Connection, *, timeout_s: float = 60.0) -> str:
    """Put ``connection``'s database in WAL mode, waiting up to ``timeout_s`` for other writers.

    Returns the journal mode SQLite reports afterwards: ``"wal"``, or the mode it kept where
    WAL is not possible (``"memory"`` for an in-memory database). Errors other than a lock,
    and a lock still held after ``timeout_s``, are raised unchanged.

    Examples:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.sqlite"
        >>> enable_wal(sqlite3.connect(path))
        'wal'
        >>> enable_wal(sqlite3.connect(":memory:"))
        'memory'
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            row = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
            continue
        return str(row[0]).lower()
