"""The append-only audit log: one row per action, written in the same transaction as the
action itself (so an action and its record succeed or fail together).

Actions: ``user.add``, ``user.update``, ``login``, ``login.failed``, ``login.refused``,
``logout``, ``import``, ``export``, ``task.hold``, ``task.skip``, ``task.expire``,
``task.reclaim``, ``label.add``, ``label.revise``, ``label.late`` (a label given after the
hold ran out and the slot went to someone else: kept here, not counted), ``adjudicate``.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import getpass
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from crystalbench.review.models import AuditEntry, User, utcnow

AUDIT_ACTIONS: tuple[str, ...] = (
    "user.add",
    "user.update",
    "login",
    "login.failed",
    "login.refused",
    "logout",
    "import",
    "export",
    "task.hold",
    "task.skip",
    "task.expire",
    "task.reclaim",
    "label.add",
    "label.revise",
    "label.late",
    "adjudicate",
)


def cli_actor() -> str:
    """Who runs a command at the terminal: ``cli:<login name>``."""
    try:
        name = getpass.getuser()
    except Exception:  # no login name in some containers
        name = "unknown"
    return f"cli:{name}"


def record(
    session: Any,
    action: str,
    *,
    user: User | None = None,
    actor: str | None = None,
    task_id: int | None = None,
    old: Any = None,
    new: Any = None,
    remote: str | None = None,
    at: datetime | None = None,
) -> None:
    """Add one audit row in ``session``'s transaction (committed with the action).

    Args:
        session: The open write session of the action.
        action: One of :data:`AUDIT_ACTIONS`.
        user: The logged-in user, when there is one.
        actor: Who acted, when no user did (``cli:<name>``, a login name that failed).
        task_id: The task acted on.
        old: The value before (JSON-able), ``None`` for a creation.
        new: The value after (JSON-able).
        remote: The client address.
        at: When (default now).
    """
    if action not in AUDIT_ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    session.execute(
        _insert_statement(),
        {
            "at": at or utcnow(),
            "user_id": user.id if user is not None else None,
            "actor": (user.name if user is not None else (actor or "unknown"))[:128],
            "action": action,
            "task_id": task_id,
            "old_value": old,
            "new_value": new,
            "remote": (remote or None) and remote[:64],
        },
    )


_INSERT: Any = None


def _insert_statement() -> Any:
    """The audit INSERT, built once (statement construction costs more than running it)."""
    global _INSERT
    if _INSERT is None:
        from sqlalchemy import insert

        _INSERT = insert(AuditEntry.__table__)  # type: ignore[arg-type]
    return _INSERT


def audit_rows(
    session: Any, *, before: int | None = None, limit: int | None = None
) -> Iterator[dict[str, Any]]:
    """Audit entries as plain records, oldest first (newest first with ``before``/``limit``)."""
    from sqlalchemy import select

    query = select(AuditEntry)
    if before is not None or limit is not None:
        if before is not None:
            query = query.where(AuditEntry.id < before)
        query = query.order_by(AuditEntry.id.desc())
        if limit is not None:
            query = query.limit(limit)
    else:
        query = query.order_by(AuditEntry.id)
    for entry in session.execute(query).scalars():
        yield audit_record(entry)


def audit_record(entry: AuditEntry) -> dict[str, Any]:
    """One audit entry as a JSON-able record."""
    return {
        "id": entry.id,
        "at": entry.at.isoformat(),
        "user_id": entry.user_id,
        "actor": entry.actor,
        "action": entry.action,
        "task_id": entry.task_id,
        "old": entry.old_value,
        "new": entry.new_value,
        "remote": entry.remote,
    }
