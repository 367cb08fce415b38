"""Opening the review database: a SQLite file by default, PostgreSQL by URL; migrations.

``--db review.sqlite`` (any path) opens a SQLite file in WAL mode with foreign keys on
(``synchronous=NORMAL``, or ``FULL`` with ``durable``);
``--db postgresql://user:password@host/name`` opens PostgreSQL through psycopg 3. Every
opening runs the Alembic migrations up to the newest revision first (an empty database gets
the whole schema), so ``crystal review add-user`` then ``crystal review serve`` is all a fresh
machine needs.

Writes go through :meth:`Database.write`: on SQLite it takes a process-wide lock and starts
the transaction with ``BEGIN IMMEDIATE`` (the write lock is taken at once, so two
transactions never both read and then both try to write); PostgreSQL relies on its row locks
(``SELECT ... FOR UPDATE SKIP LOCKED`` where tasks are handed out) and on the unique indexes,
which refuse a second assignment of the same slot whoever races.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from crystalbench._internal.extras import require
from crystalbench._internal.sqlite import enable_wal
from crystalbench.config.settings import REVIEW_SQLITE_SYNCHRONOUS
from crystalbench.errors import CrystalbenchError, InputError

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
"""Alembic's script folder (``env.py``, ``versions/``)."""

_IMMEDIATE: contextvars.ContextVar[bool] = contextvars.ContextVar("review_immediate", default=False)


class DatabaseError(CrystalbenchError):
    """The review database cannot be opened or migrated."""


def database_url(db: str | Path) -> str:
    """The SQLAlchemy URL for ``--db``: a path becomes a SQLite file, ``postgresql://``
    selects psycopg 3.

    Raises:
        InputError: A URL of another database, or a SQLite path whose folder is missing.

    Examples:
        >>> database_url("postgresql://me@db.example/review")
        'postgresql+psycopg://me@db.example/review'
        >>> database_url("sqlite:///:memory:")
        'sqlite:///:memory:'
        >>> database_url("mysql://x/y")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field --db: unsupported database 'mysql'...
    """
    text = str(db)
    if "://" not in text:
        path = Path(text).expanduser()
        if not path.parent.is_dir():
            raise InputError("the folder of the database file does not exist", path=path)
        return f"sqlite:///{path.resolve()}"
    scheme, _, rest = text.partition("://")
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return f"postgresql+psycopg://{rest}"
    if scheme == "sqlite":
        return text
    raise InputError(
        f"unsupported database {scheme!r}: give a SQLite file path or a postgresql:// URL",
        field="--db",
    )


def describe_url(url: str) -> str:
    """The URL with its password masked, for messages.

    Examples:
        >>> describe_url("postgresql+psycopg://me:secret@db/review")
        'postgresql+psycopg://me:***@db/review'
    """
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


class Database:
    """An engine, a session factory and the write discipline of one review database.

    Args:
        url: A SQLAlchemy URL (see :func:`database_url`).
        migrate_schema: Run the migrations up to the newest revision when opening.
        durable: SQLite only: fsync the log on every commit (``synchronous=FULL``), so not
            even a power cut loses a committed label. By default (``NORMAL`` in WAL mode) a
            crash of the app or a kill loses nothing and the file never corrupts; a power
            cut or a kernel crash may lose the last commits before the next checkpoint.

    Raises:
        DatabaseError: The database cannot be reached or migrated.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate_schema: bool = True,
        durable: bool = False,
    ) -> None:
        from sqlalchemy import create_engine, event
        from sqlalchemy.orm import sessionmaker

        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        engine_args: dict[str, Any] = {"future": True}
        if self.is_sqlite:
            engine_args["connect_args"] = {"check_same_thread": False, "timeout": 30}
        else:
            engine_args.update(pool_size=10, max_overflow=20, pool_pre_ping=True)
        self.engine = create_engine(url, **engine_args)
        if self.is_sqlite:
            memory = ":memory:" in url or url.rstrip("/") == "sqlite:"
            synchronous = "FULL" if durable else REVIEW_SQLITE_SYNCHRONOUS

            @event.listens_for(self.engine, "connect")
            def _on_connect(dbapi_connection: Any, _record: Any) -> None:
                # Take transactions out of pysqlite's hands so BEGIN is ours to choose.
                dbapi_connection.isolation_level = None
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA busy_timeout=30000")
                if not memory:
                    # Another worker may be converting the same new file: wait, don't fail.
                    enable_wal(dbapi_connection, timeout_s=30.0)
                cursor.execute(f"PRAGMA synchronous={synchronous}")
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

            @event.listens_for(self.engine, "begin")
            def _on_begin(connection: Any) -> None:
                connection.exec_driver_sql("BEGIN IMMEDIATE" if _IMMEDIATE.get() else "BEGIN")

        self._lock: threading.Lock | None = threading.Lock() if self.is_sqlite else None
        self.sessions = sessionmaker(self.engine, expire_on_commit=False, future=True)
        if migrate_schema:
            migrate(self)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return str(self.engine.dialect.name)

    @contextmanager
    def read(self) -> Iterator[Any]:
        """A session for reading (committed on exit, so nothing is left open)."""
        with self.sessions() as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A session whose transaction may write; committed on exit, rolled back on error."""
        guard = self._lock if self._lock is not None else nullcontext()
        with guard:
            token = _IMMEDIATE.set(True)
            try:
                with self.sessions() as session, session.begin():
                    yield session
            finally:
                _IMMEDIATE.reset(token)

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def alembic_config(db: Database, connection: Any | None = None) -> Any:
    """An Alembic ``Config`` for ``db`` (no ``alembic.ini`` needed)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", db.url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def migrate(db: Database, revision: str = "head") -> None:
    """Upgrade ``db`` to ``revision`` (default: the newest), creating the schema if empty.

    Raises:
        DatabaseError: The database cannot be reached, or a migration failed.
    """
    from alembic import command
    from sqlalchemy.exc import SQLAlchemyError

    guard = db._lock if db._lock is not None else nullcontext()
    try:
        with guard, db.engine.connect() as connection:
            command.upgrade(alembic_config(db, connection), revision)
            connection.commit()
    except SQLAlchemyError as exc:
        raise DatabaseError(
            f"cannot open or migrate the review database {describe_url(db.url)}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        ) from None


def downgrade(db: Database, revision: str = "base") -> None:
    """Downgrade ``db`` to ``revision`` (default: empty). Used by the migration tests."""
    from alembic import command

    with db.engine.connect() as connection:
        command.downgrade(alembic_config(db, connection), revision)
        connection.commit()


def current_revision(db: Database) -> str | None:
    """The revision the database is at, or ``None`` when it has no schema yet."""
    from alembic.runtime.migration import MigrationContext

    with db.engine.connect() as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
        connection.rollback()
    return revision


def open_database(
    db: str | Path, *, migrate_schema: bool = True, durable: bool = False
) -> Database:
    """Open (and migrate) the database named by ``--db``.

    Raises:
        InputError: ``db`` names no supported database.
        DatabaseError: It cannot be reached or migrated.
        MissingExtraError: A PostgreSQL URL without psycopg (the ``review`` extra).
    """
    url = database_url(db)
    if url.startswith("postgresql"):
        require("psycopg", what="a PostgreSQL review database", extra="review", load=False)
    return Database(url, migrate_schema=migrate_schema, durable=durable)
