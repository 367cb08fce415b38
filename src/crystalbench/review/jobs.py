"""What ``crystal review serve``, ``add-user``, ``import`` and ``export`` do, as configs and
one library function each.

Each command's options are one config (:class:`ReviewServeConfig`, :class:`AddUserConfig`,
:class:`ImportConfig`, :class:`ExportConfig`), built by
:func:`crystalbench.config.loader.build_config` from a file, the environment variable
``CRYSTALBENCH_REVIEW_DB`` (the database, every command) and flags. The functions open
(and migrate) the database the config names, do the work, and close it again. This module
imports neither SQLAlchemy nor uvicorn: a config can be built and checked without the
``review`` extra.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "pw").write_text("correct horse battery")
    >>> add_review_user(AddUserConfig(name="ana", role="admin", password_file=str(folder / "pw"),
    ...                               db=str(folder / "review.sqlite")))
    'added admin ana'
    >>> export_review(ExportConfig(kind="audit", db=str(folder / "review.sqlite")),
    ...               folder / "audit.jsonl")
    1
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from crystalbench.config.settings import (
    REVIEW_DB,
    REVIEW_DB_ENV,
    REVIEW_GOLD_EVERY,
    REVIEW_HOLD_MINUTES,
    REVIEW_HOST,
    REVIEW_PORT,
)
from crystalbench.errors import InputError
from crystalbench.review.settings import ReviewSettings
from crystalbench.serving.connections import Port

if TYPE_CHECKING:
    from crystalbench.review.importing import ImportSummary

__all__ = [
    "AddUserConfig",
    "ExportConfig",
    "ImportConfig",
    "ReviewServeConfig",
    "add_review_user",
    "export_review",
    "import_into_review",
    "serve_review",
]


class _OnDatabase(BaseModel):
    """The database every ``crystal review`` command works on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    environment_variables: ClassVar[dict[str, str]] = {"db": REVIEW_DB_ENV}
    """The database may come from ``CRYSTALBENCH_REVIEW_DB`` (a flag wins)."""

    db: str = REVIEW_DB
    """A SQLite file (created if missing) or ``postgresql://user:password@host/name``."""

    @field_validator("db")
    @classmethod
    def _supported(cls, value: str) -> str:
        """Refuse another database (or a SQLite file in a missing folder) while the config is
        built, so that the message names where the value came from."""
        from crystalbench.review.db import database_url

        try:
            database_url(value)
        except InputError as error:
            where = f" ({error.path})" if error.path else ""
            raise ValueError(error.message + where) from None
        return value


class ReviewServeConfig(_OnDatabase):
    """How ``crystal review serve`` runs the app.

    Examples:
        >>> ReviewServeConfig().settings().hold_minutes
        30.0
    """

    host: str = REVIEW_HOST
    """Address to bind; anything but loopback prints a warning (put TLS in front)."""
    port: Port = REVIEW_PORT
    """TCP port (0: any free one)."""
    hold_minutes: float = Field(REVIEW_HOLD_MINUTES, gt=0.0)
    """How long a task handed out stays reserved for its annotator."""
    gold_every: int = Field(REVIEW_GOLD_EVERY, ge=0)
    """Serve one gold task in every N while unseen ones remain (0: never)."""
    secure_cookies: bool = False
    """Mark cookies ``Secure`` (when a TLS proxy is in front)."""
    show_names: bool = False
    """Show annotators' names to adjudicators (blind by default)."""
    durable: bool = False
    """SQLite: ``fsync`` every commit (``synchronous=FULL``), so not even a power cut loses a
    label (an app crash never does)."""
    verbose: bool = False
    """Log every request."""

    def settings(self) -> ReviewSettings:
        """The running app's settings."""
        return ReviewSettings(
            hold_minutes=self.hold_minutes,
            gold_every=self.gold_every,
            secure_cookies=self.secure_cookies,
            show_names_to_adjudicators=self.show_names,
        )


class AddUserConfig(_OnDatabase):
    """Who ``crystal review add-user`` adds (or, with ``update``, changes)."""

    name: str
    """Login name."""
    role: str = "annotator"
    """``annotator``, ``adjudicator`` or ``admin`` (each may do what the one before may)."""
    password_file: str | None = None
    """Read the password from this file's first line (else it is asked at the terminal)."""
    update: bool = False
    """Change the role and password of an existing user (their sessions end)."""


class ImportConfig(_OnDatabase):
    """What ``crystal review import`` imports."""

    source: str
    """A references output folder (or its ``benchmark.jsonl``), or a step-pair file
    (``.jsonl`` or ``.csv``)."""
    benchmark: str | None = None
    """For a pair file: the benchmark holding its items (file, folder or ``sample``)."""
    annotators: int | None = Field(None, ge=1)
    """Annotators per task (``None``: 1 for chains, 2 for pairs)."""
    image_root: str | None = None
    """Another folder the items' images may lie under."""


class ExportConfig(_OnDatabase):
    """What ``crystal review export`` writes."""

    kind: str
    """``chains`` (final verdicts), ``rejected`` (ids to regenerate), ``pairs`` (labels, every
    individual one kept) or ``audit`` (the audit log)."""


def serve_review(
    config: ReviewServeConfig,
    *,
    ready: Callable[[str, int, str], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> None:
    """Run the review app on ``config.db`` until interrupted.

    Args:
        config: How to run it.
        ready: Called with ``(host, port, database)`` once the socket is bound (the
            database as a URL with its password masked).
        on_note: Called with a line worth telling before the app starts (no users yet).

    Raises:
        InputError: The address cannot be bound, or the database is not one.
    """
    from crystalbench.review.app import serve
    from crystalbench.review.db import describe_url, open_database

    database = open_database(config.db, durable=config.durable)
    try:
        if on_note is not None and not _has_users(database):
            on_note("no users yet: add one with `crystal review add-user NAME --role admin`")
        shown = describe_url(database.url)

        def bound(host: str, port: int) -> None:
            if ready is not None:
                ready(host, port, shown)

        serve(
            database,
            host=config.host,
            port=config.port,
            settings=config.settings(),
            verbose=config.verbose,
            ready=bound,
        )
    except OSError as exc:
        raise InputError(
            f"cannot listen on {config.host}:{config.port} ({exc})", field="host"
        ) from None
    finally:
        database.dispose()


def _has_users(database: Any) -> bool:
    from sqlalchemy import func, select

    from crystalbench.review.models import User

    with database.read() as session:
        return bool(session.execute(select(func.count()).select_from(User)).scalar_one())


def add_review_user(config: AddUserConfig, ask_password: Callable[[], str] | None = None) -> str:
    """Add the user ``config`` names (or update them); the password is stored as an argon2
    hash. Returns what was done, e.g. ``added admin ana``.

    Args:
        config: Who to add.
        ask_password: Asks the password when ``config.password_file`` is not given (a
            terminal prompt); ``None``: there is no one to ask.

    Raises:
        InputError: A bad name, role or password, an existing user without ``update``, an
            unreadable password file, or no password at all.
    """
    from crystalbench.review import audit
    from crystalbench.review.auth import add_user, check_name, check_password
    from crystalbench.review.db import open_database

    check_name(config.name)
    if config.password_file is not None:
        path = Path(config.password_file).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the password ({exc})", path=path) from None
        password = lines[0] if lines else ""
    elif ask_password is not None:
        password = ask_password()
    else:
        raise InputError(
            "no terminal to ask the password at: pass --password-file", field="--password-file"
        )
    check_password(password)
    database = open_database(config.db)
    try:
        add_user(
            database,
            config.name,
            config.role,
            password,
            update=config.update,
            actor=audit.cli_actor(),
        )
    finally:
        database.dispose()
    return f"{'updated' if config.update else 'added'} {config.role} {config.name}"


def import_into_review(config: ImportConfig) -> ImportSummary:
    """Import reference chains (to review) or step pairs (to label) into ``config.db``.

    Raises:
        InputError: See :func:`crystalbench.review.importing.import_path`.
    """
    from crystalbench.review.db import open_database
    from crystalbench.review.importing import detect_kind, import_path

    detect_kind(Path(config.source).expanduser())  # a missing source: before any database
    created = _new_sqlite_file(config.db)
    database = None
    try:
        database = open_database(config.db)
        return import_path(
            database,
            config.source,
            benchmark=config.benchmark,
            annotators=config.annotators,
            image_root=config.image_root,
        )
    except BaseException:
        if database is not None:
            database.dispose()
            database = None
        if created is not None:  # a failed import into a new file leaves no database
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{created}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        if database is not None:
            database.dispose()


def _new_sqlite_file(db: str | Path) -> Path | None:
    """The SQLite file ``db`` names when it does not exist yet (``None``: a URL, or a file
    that exists)."""
    text = str(db)
    if "://" in text:
        return None
    path = Path(text).expanduser()
    return None if path.exists() else path


def export_review(config: ExportConfig, out: str | Path) -> int:
    """Export ``config.kind`` from ``config.db`` into ``out``; returns the line count.

    Raises:
        InputError: An unknown kind.
    """
    from crystalbench.review.db import open_database
    from crystalbench.review.exporting import export_file

    database = open_database(config.db)
    try:
        return export_file(database, config.kind, out)
    finally:
        database.dispose()
