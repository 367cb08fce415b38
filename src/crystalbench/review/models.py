"""The review app's tables (SQLAlchemy 2 declarative models).

The schema itself is created by the Alembic migrations in ``review/migrations``; a test checks
that these models and the migrations agree. Three tables are append-only and guarded by
database triggers (an ``UPDATE`` or ``DELETE`` fails): ``review_annotations`` (every label an
annotator gave; a revision is a new row pointing at the one it supersedes),
``review_adjudications`` and ``review_audit``. Assignments (holds) are the only rows whose state
changes, and every change is written to the audit log.

Time stamps are UTC; :class:`UtcDateTime` stores them without an offset (SQLite has no time
zones) and hands them back aware.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

ROLES: tuple[str, ...] = ("annotator", "adjudicator", "admin")
"""User roles, each allowed what the one before it is (an admin also adjudicates)."""

TASK_KINDS: tuple[str, ...] = ("chain", "pair")
"""Reference-chain review and step-pair labelling."""

ASSIGNMENT_STATUSES: tuple[str, ...] = ("held", "done", "released", "expired")
"""``held``: reserved for the annotator until ``expires_at``; ``done``: labelled;
``released``: skipped; ``expired``: the hold ran out and the slot was given to someone else."""

ACTIVE_STATUSES: tuple[str, ...] = ("held", "done")
"""Assignments that take one of a task's slots."""


def utcnow() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(timezone.utc)


class UtcDateTime(TypeDecorator[datetime]):
    """A UTC time stamp stored without offset and read back aware."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # pragma: no cover - SQLite hands back datetimes
            value = datetime.fromisoformat(value)
        return value.replace(tzinfo=timezone.utc)


class Base(DeclarativeBase):
    """Declarative base of the review tables."""


class User(Base):
    """A person who labels, adjudicates or administers."""

    __tablename__ = "review_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class LoginSession(Base):
    """A logged-in browser: the cookie holds a random token, the table only its SHA-256."""

    __tablename__ = "review_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("review_users.id"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)


class ImportBatch(Base):
    """One ``crystal review import``: what was read, and the folders images may come from."""

    __tablename__ = "review_imports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    source: Mapped[str] = mapped_column(Text)
    benchmark: Mapped[str] = mapped_column(Text)
    image_roots: Mapped[list[str]] = mapped_column(JSON)
    actor: Mapped[str] = mapped_column(String(128))
    n_tasks: Mapped[int] = mapped_column(Integer)
    n_unchanged: Mapped[int] = mapped_column(Integer)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class Item(Base):
    """A benchmark item as shown to reviewers (the image stays a file under an import root)."""

    __tablename__ = "review_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    import_id: Mapped[int] = mapped_column(ForeignKey("review_imports.id"))
    item_key: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(64))
    question: Mapped[str] = mapped_column(Text)
    options: Mapped[list[str]] = mapped_column(JSON)
    answer: Mapped[str] = mapped_column(Text)
    image_root: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Index into the import's ``image_roots``."""
    image: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The image path relative to that root."""


class Task(Base):
    """One unit of work: a chain to review or a step pair to label.

    ``payload`` is what annotators see; ``hidden`` (model names, cosine, band, provenance
    details) is kept for exports and never rendered on an annotator's page.
    """

    __tablename__ = "review_tasks"
    __table_args__ = (
        UniqueConstraint("kind", "external_id", "version", name="uq_review_tasks_version"),
        Index("ix_review_tasks_queue", "kind", "is_gold", "n_done", "n_active", "position"),
        Index("ix_review_tasks_external", "kind", "external_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    import_id: Mapped[int] = mapped_column(ForeignKey("review_imports.id"))
    item_id: Mapped[int] = mapped_column(ForeignKey("review_items.id"))
    external_id: Mapped[str] = mapped_column(String(255))
    """The pair id, or the item id of a chain."""
    version: Mapped[str] = mapped_column(String(64))
    """Digest of the content: a regenerated chain of the same item is a new task."""
    position: Mapped[int] = mapped_column(Integer)
    quota: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Annotators wanted; ``None`` for a gold task (served to everyone once)."""
    is_gold: Mapped[bool] = mapped_column(Boolean, default=False)
    gold_label: Mapped[str | None] = mapped_column(String(16), nullable=True)
    n_active: Mapped[int] = mapped_column(Integer, default=0)
    """Assignments holding a slot (held or done); kept in step with ``review_assignments``."""
    n_done: Mapped[int] = mapped_column(Integer, default=0)
    """Assignments labelled."""
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    hidden: Mapped[dict[str, Any]] = mapped_column(JSON, deferred=True)
    """Loaded only when asked for (exports), never with a task page."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class Assignment(Base):
    """A task handed to one annotator; ``slot`` is which of the task's places it takes.

    The unique index on (task, slot) over active assignments is what keeps a task within
    its quota even when two servers race; (task, user) is unique so nobody gets a task twice.
    """

    __tablename__ = "review_assignments"
    __table_args__ = (
        UniqueConstraint("task_id", "user_id", name="uq_review_assignments_task_user"),
        Index(
            "uq_review_assignments_slot",
            "task_id",
            "slot",
            unique=True,
            sqlite_where=text("status IN ('held', 'done')"),
            postgresql_where=text("status IN ('held', 'done')"),
        ),
        Index("ix_review_assignments_user", "user_id", "kind", "status"),
        Index("ix_review_assignments_expiry", "status", "expires_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("review_users.id"))
    kind: Mapped[str] = mapped_column(String(8))
    slot: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class Annotation(Base):
    """One label as given (append-only): a pair label, or a chain verdict with step flags."""

    __tablename__ = "review_annotations"
    __table_args__ = (
        Index("ix_review_annotations_task", "task_id"),
        Index("ix_review_annotations_user", "user_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("review_users.id"))
    assignment_id: Mapped[int] = mapped_column(ForeignKey("review_assignments.id"))
    label: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    step_flags: Mapped[list[list[str]] | None] = mapped_column(JSON, nullable=True)
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Time the page was open before the label, as the browser measured it."""
    supersedes_id: Mapped[int | None] = mapped_column(
        ForeignKey("review_annotations.id"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class Adjudication(Base):
    """An adjudicator's final decision on a task (append-only; the latest one counts)."""

    __tablename__ = "review_adjudications"
    __table_args__ = (Index("ix_review_adjudications_task", "task_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("review_users.id"))
    label: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(32))
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    overrides_majority: Mapped[bool] = mapped_column(Boolean)
    supersedes_id: Mapped[int | None] = mapped_column(
        ForeignKey("review_adjudications.id"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class AuditEntry(Base):
    """One action (append-only): who, when, which task, the old and the new value."""

    __tablename__ = "review_audit"
    __table_args__ = (Index("ix_review_audit_task", "task_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("review_users.id"), nullable=True)
    actor: Mapped[str] = mapped_column(String(128))
    action: Mapped[str] = mapped_column(String(32))
    task_id: Mapped[int | None] = mapped_column(ForeignKey("review_tasks.id"), nullable=True)
    old_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    new_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    remote: Mapped[str | None] = mapped_column(String(64), nullable=True)


APPEND_ONLY_TABLES: tuple[str, ...] = (
    "review_annotations",
    "review_adjudications",
    "review_audit",
)
"""Tables whose rows are never updated or deleted (database triggers refuse it)."""
