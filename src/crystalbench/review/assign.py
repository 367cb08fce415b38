"""Work distribution: who gets which task, holds that time out, labels that are never lost.

Rules (every function takes an open write session, so a route does its label and the next
hand-out in one transaction):

- **Least-annotated first.** A user gets the task of their kind with the fewest labels, then
  the fewest holds, then the earliest in import order, among tasks with a free slot they have
  never been given (``(task, user)`` is unique: nobody sees a task twice).
- **Quota.** A task has ``quota`` slots; a hold or a label takes one. The unique index on
  ``(task, slot)`` over active assignments refuses a second holder of a slot even when
  servers race, and ``n_active`` (kept in the same transaction) makes finding a free task an
  index scan.
- **Holds.** A task handed out is reserved for ``hold_minutes``. A user who asks for work gets
  their own open hold back first (renewed). Holds past their time are expired (their slot
  freed) whenever work is handed out; an expired hold's owner can still submit while a slot
  is free (``task.reclaim``), and otherwise the label is kept in the audit log as
  ``label.late`` and not counted.
- **Gold tasks** (``quota`` ``None``) are served to every annotator once, one in every
  ``gold_every`` tasks while unseen ones remain, and never when no regular work is left.
- **Revisions.** Labelling a task again appends a new annotation that supersedes the old one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import and_, case, exists, func, select, update

from crystalbench.review import audit
from crystalbench.review.labels import Submission
from crystalbench.review.models import (
    ACTIVE_STATUSES,
    Annotation,
    Assignment,
    Item,
    Task,
    User,
    utcnow,
)
from crystalbench.review.settings import ReviewSettings


def _locking(session: Any, query: Any, *, skip_locked: bool = False) -> Any:
    """``query FOR UPDATE`` on PostgreSQL (SQLite writers are serialised already)."""
    if session.get_bind().dialect.name == "postgresql":
        return query.with_for_update(skip_locked=skip_locked)
    return query


def annotation_record(annotation: Annotation) -> dict[str, Any]:
    """An annotation's value as the audit log stores it."""
    record: dict[str, Any] = {"label": annotation.label}
    if annotation.reason is not None:
        record["reason"] = annotation.reason
    if annotation.note is not None:
        record["note"] = annotation.note
    if annotation.step_flags is not None:
        record["step_flags"] = annotation.step_flags
    return record


def expire_holds(session: Any, now: datetime, *, remote: str | None = None) -> int:
    """Expire every hold past its time, freeing its slot; returns how many."""
    stale = (
        session.execute(
            _locking(
                session,
                select(Assignment).where(Assignment.status == "held", Assignment.expires_at < now),
                skip_locked=True,
            )
        )
        .scalars()
        .all()
    )
    for assignment in stale:
        assignment.status = "expired"
        assignment.finished_at = now
        session.execute(
            update(Task).where(Task.id == assignment.task_id).values(n_active=Task.n_active - 1)
        )
        audit.record(
            session,
            "task.expire",
            actor="server",
            task_id=assignment.task_id,
            old={"status": "held", "user_id": assignment.user_id},
            new={"status": "expired"},
            remote=remote,
            at=now,
        )
    return len(stale)


def _free_slot(session: Any, task: Task) -> int | None:
    if task.quota is None:
        return None
    taken = set(
        session.execute(
            select(Assignment.slot).where(
                Assignment.task_id == task.id, Assignment.status.in_(ACTIVE_STATUSES)
            )
        ).scalars()
    )
    return next(slot for slot in range(task.quota + 1) if slot not in taken)


def _hold(
    session: Any,
    task: Task,
    user: User,
    now: datetime,
    settings: ReviewSettings,
    remote: str | None,
) -> Assignment:
    slot = _free_slot(session, task)
    if task.quota is not None and slot is not None and slot >= task.quota:
        raise RuntimeError(f"task {task.id} has no free slot")  # our bug: the query said free
    assignment = Assignment(
        task_id=task.id,
        user_id=user.id,
        kind=task.kind,
        slot=slot,
        status="held",
        created_at=now,
        expires_at=now + timedelta(minutes=settings.hold_minutes),
    )
    session.add(assignment)
    session.execute(update(Task).where(Task.id == task.id).values(n_active=Task.n_active + 1))
    session.flush()
    audit.record(
        session,
        "task.hold",
        user=user,
        task_id=task.id,
        new={"slot": slot, "expires_at": assignment.expires_at.isoformat()},
        remote=remote,
        at=now,
    )
    return assignment


def _not_given_to(user: User) -> Any:
    return ~exists().where(and_(Assignment.task_id == Task.id, Assignment.user_id == user.id))


def next_task(
    session: Any,
    user: User,
    kind: str,
    settings: ReviewSettings,
    *,
    now: datetime | None = None,
    remote: str | None = None,
    expire_stale: bool = True,
) -> Task | None:
    """The task ``user`` should do next (held for them), or ``None`` when none is left.

    ``expire_stale`` first expires every hold past its time (a server does it every few
    seconds rather than on every request).
    """
    now = now or utcnow()
    own = session.execute(
        select(Assignment)
        .where(
            Assignment.user_id == user.id,
            Assignment.kind == kind,
            Assignment.status == "held",
        )
        .order_by(Assignment.id)
        .limit(1)
    ).scalar_one_or_none()
    if own is not None:
        own.expires_at = now + timedelta(minutes=settings.hold_minutes)
        return session.get(Task, own.task_id)

    def first_free() -> Task | None:
        return session.execute(
            _locking(
                session,
                select(Task)
                .where(
                    Task.kind == kind,
                    Task.is_gold.is_(False),
                    Task.n_active < Task.quota,
                    _not_given_to(user),
                )
                .order_by(Task.n_done, Task.n_active, Task.position)
                .limit(1),
                skip_locked=True,
            )
        ).scalar_one_or_none()

    if expire_stale:
        expire_holds(session, now, remote=remote)
    regular = first_free()
    if regular is None and not expire_stale and expire_holds(session, now, remote=remote):
        regular = first_free()
    if regular is None:
        return None
    task: Task = regular
    if settings.gold_every > 0 and _gold_due(session, user, kind, settings.gold_every):
        gold = session.execute(
            select(Task)
            .where(Task.kind == kind, Task.is_gold.is_(True), _not_given_to(user))
            .order_by(Task.position)
            .limit(1)
        ).scalar_one_or_none()
        if gold is not None:
            task = gold
    _hold(session, task, user, now, settings, remote)
    return task


def _gold_due(session: Any, user: User, kind: str, every: int) -> bool:
    given = session.execute(
        select(func.count())
        .select_from(Assignment)
        .where(Assignment.user_id == user.id, Assignment.kind == kind)
    ).scalar_one()
    return bool((given + 1) % every == 0)


@dataclass(frozen=True)
class Outcome:
    """What became of a submitted label."""

    status: Literal["added", "revised", "late"]
    annotation: Annotation | None
    task: Task


class NotVisible(LookupError):
    """The task does not exist or was never given to this user (the app answers 404)."""


def _latest_annotation(session: Any, task_id: int, user_id: int) -> Annotation | None:
    return session.execute(
        select(Annotation)
        .where(Annotation.task_id == task_id, Annotation.user_id == user_id)
        .order_by(Annotation.id.desc())
        .limit(1)
    ).scalar_one_or_none()


def submit_label(
    session: Any,
    user: User,
    task_id: int,
    submission: Submission,
    *,
    now: datetime | None = None,
    remote: str | None = None,
) -> Outcome:
    """Record ``user``'s label on a task they were given.

    Raises:
        NotVisible: The task was never given to ``user``.
    """
    now = now or utcnow()
    assignment = session.execute(
        _locking(
            session,
            select(Assignment).where(Assignment.task_id == task_id, Assignment.user_id == user.id),
        )
    ).scalar_one_or_none()
    if assignment is None:
        raise NotVisible(task_id)
    task: Task = session.execute(
        _locking(session, select(Task).where(Task.id == task_id))
    ).scalar_one()
    previous = (
        _latest_annotation(session, task_id, user.id) if assignment.status == "done" else None
    )
    status: Literal["added", "revised", "late"] = "added"
    if assignment.status == "done":
        status = "revised"
    elif assignment.status in ("expired", "released"):
        if task.quota is not None and task.n_active >= task.quota:
            audit.record(
                session,
                "label.late",
                user=user,
                task_id=task_id,
                old={"status": assignment.status},
                new=_submission_record(submission),
                remote=remote,
                at=now,
            )
            return Outcome("late", None, task)
        slot = _free_slot(session, task)
        audit.record(
            session,
            "task.reclaim",
            user=user,
            task_id=task_id,
            old={"status": assignment.status},
            new={"status": "held", "slot": slot},
            remote=remote,
            at=now,
        )
        assignment.slot = slot
        assignment.status = "held"
        session.execute(update(Task).where(Task.id == task_id).values(n_active=Task.n_active + 1))
    annotation = Annotation(
        task_id=task_id,
        user_id=user.id,
        assignment_id=assignment.id,
        label=submission.label,
        reason=submission.reason,
        note=submission.note,
        step_flags=submission.step_flags,
        duration_ms=submission.duration_ms,
        supersedes_id=previous.id if previous is not None else None,
        created_at=now,
    )
    session.add(annotation)
    if status == "added":
        assignment.status = "done"
        assignment.finished_at = now
        session.execute(update(Task).where(Task.id == task_id).values(n_done=Task.n_done + 1))
    session.flush()
    audit.record(
        session,
        "label.add" if status == "added" else "label.revise",
        user=user,
        task_id=task_id,
        old=annotation_record(previous) if previous is not None else None,
        new=annotation_record(annotation),
        remote=remote,
        at=now,
    )
    return Outcome(status, annotation, task)


def _submission_record(submission: Submission) -> dict[str, Any]:
    record: dict[str, Any] = {"label": submission.label}
    for key in ("reason", "note", "step_flags"):
        value = getattr(submission, key)
        if value is not None:
            record[key] = value
    return record


def skip_task(
    session: Any,
    user: User,
    task_id: int,
    *,
    now: datetime | None = None,
    remote: str | None = None,
) -> Task:
    """Give back a held task unlabelled (its slot goes to someone else).

    Raises:
        NotVisible: The task was never given to ``user``.
    """
    now = now or utcnow()
    assignment = session.execute(
        _locking(
            session,
            select(Assignment).where(Assignment.task_id == task_id, Assignment.user_id == user.id),
        )
    ).scalar_one_or_none()
    if assignment is None:
        raise NotVisible(task_id)
    task: Task = session.get(Task, task_id)
    if assignment.status == "held":
        assignment.status = "released"
        assignment.finished_at = now
        session.execute(update(Task).where(Task.id == task_id).values(n_active=Task.n_active - 1))
        audit.record(
            session,
            "task.skip",
            user=user,
            task_id=task_id,
            old={"status": "held"},
            new={"status": "released"},
            remote=remote,
            at=now,
        )
    return task


@dataclass(frozen=True)
class TaskView:
    """A task with its item and this user's assignment and current label (if any)."""

    task: Task
    item: Item
    assignment: Assignment | None
    current: Annotation | None


def visible_task(session: Any, user: User, task_id: int) -> TaskView:
    """The task as ``user`` may see it: only a task they were given.

    Raises:
        NotVisible: Unknown task, or never given to ``user``.
    """
    row = session.execute(
        select(Task, Item, Assignment)
        .join(Item, Item.id == Task.item_id)
        .join(
            Assignment,
            and_(Assignment.task_id == Task.id, Assignment.user_id == user.id),
        )
        .where(Task.id == task_id)
    ).first()
    if row is None:
        raise NotVisible(task_id)
    task, item, assignment = row
    current = _latest_annotation(session, task_id, user.id) if assignment.status == "done" else None
    return TaskView(task, item, assignment, current)


def any_task(session: Any, task_id: int) -> tuple[Task, Item]:
    """A task and its item whoever asks (adjudicators and admins).

    Raises:
        NotVisible: Unknown task.
    """
    row = session.execute(
        select(Task, Item).join(Item, Item.id == Task.item_id).where(Task.id == task_id)
    ).first()
    if row is None:
        raise NotVisible(task_id)
    return row[0], row[1]


def previous_task_id(session: Any, user: User, kind: str, before: int | None) -> int | None:
    """The task ``user`` labelled last (before assignment ``before``), for "back"."""
    query = select(Assignment.task_id).where(
        Assignment.user_id == user.id, Assignment.kind == kind, Assignment.status == "done"
    )
    if before is not None:
        query = query.where(Assignment.id < before)
    return session.execute(query.order_by(Assignment.id.desc()).limit(1)).scalar_one_or_none()


def user_done(session: Any, user: User, kind: str) -> int:
    """How many tasks of ``kind`` ``user`` has labelled."""
    return int(
        session.execute(
            select(func.count())
            .select_from(Assignment)
            .where(
                Assignment.user_id == user.id,
                Assignment.status == "done",
                Assignment.kind == kind,
            )
        ).scalar_one()
    )


@dataclass(frozen=True)
class QueueProgress:
    """How far one kind of work has come."""

    tasks: int
    complete: int
    labels: int
    wanted: int
    held: int

    @property
    def share(self) -> float:
        """Share of wanted labels given."""
        return self.labels / self.wanted if self.wanted else 0.0


def queue_progress(session: Any, kind: str) -> QueueProgress:
    """Counts of the regular (non-gold) tasks of ``kind``."""
    complete = case((Task.n_done >= Task.quota, 1), else_=0)
    given = case((Task.n_done >= Task.quota, Task.quota), else_=Task.n_done)
    row = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(complete), 0),
            func.coalesce(func.sum(given), 0),
            func.coalesce(func.sum(Task.quota), 0),
            func.coalesce(func.sum(Task.n_active - Task.n_done), 0),
        ).where(Task.kind == kind, Task.is_gold.is_(False))
    ).one()
    return QueueProgress(
        tasks=int(row[0]),
        complete=int(row[1]),
        labels=int(row[2]),
        wanted=int(row[3]),
        held=int(row[4]),
    )
