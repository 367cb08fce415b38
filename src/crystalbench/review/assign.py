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

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from sqlalchemy import Table, and_, bindparam, case, exists, func, insert, select, update

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

# The hot paths (a label and the next hand-out) run as Core statements on the tables: the
# ORM's unit of work costs more than the statements themselves.
TASKS = cast(Table, Task.__table__)
ASSIGNMENTS = cast(Table, Assignment.__table__)
ANNOTATIONS = cast(Table, Annotation.__table__)


_COUNT = {
    column: update(TASKS)
    .where(TASKS.c.id == bindparam("task_id_"))
    .values({column: TASKS.c[column] + bindparam("delta_")})
    for column in ("n_active", "n_done")
}
_SET_ASSIGNMENT: dict[tuple[str, ...], Any] = {
    fields: update(ASSIGNMENTS)
    .where(ASSIGNMENTS.c.id == bindparam("assignment_id_"))
    .values({field: bindparam(f"{field}_") for field in fields})
    for fields in (
        ("status", "finished_at"),
        ("slot", "status"),
        ("expires_at",),
    )
}
_INSERT_ASSIGNMENT = insert(ASSIGNMENTS)
_INSERT_ANNOTATION = insert(ANNOTATIONS)
_TAKEN_SLOTS = select(ASSIGNMENTS.c.slot).where(
    ASSIGNMENTS.c.task_id == bindparam("task_id_"), ASSIGNMENTS.c.status.in_(ACTIVE_STATUSES)
)


def _set_assignment(session: Any, assignment_id: int, **values: Any) -> None:
    statement = _SET_ASSIGNMENT[tuple(values)]
    session.execute(
        statement,
        {"assignment_id_": assignment_id, **{f"{k}_": v for k, v in values.items()}},
    )


@dataclass(frozen=True)
class TaskRef:
    """What the work-distribution functions hand back about a task."""

    id: int
    kind: str
    quota: int | None
    is_gold: bool


def _locking(session: Any, query: Any, *, skip_locked: bool = False) -> Any:
    """``query FOR UPDATE`` on PostgreSQL (SQLite writers are serialised already)."""
    if session.get_bind().dialect.name == "postgresql":
        return query.with_for_update(skip_locked=skip_locked)
    return query


def annotation_record(annotation: Any) -> dict[str, Any]:
    """An annotation's value (a row or a :class:`Submission`) as the audit log stores it."""
    record: dict[str, Any] = {"label": annotation.label}
    for key in ("reason", "note", "step_flags"):
        value = getattr(annotation, key)
        if value is not None:
            record[key] = value
    return record


def _count(session: Any, task_id: int, column: str, delta: int) -> None:
    session.execute(_COUNT[column], {"task_id_": task_id, "delta_": delta})


def expire_holds(session: Any, now: datetime, *, remote: str | None = None) -> int:
    """Expire every hold past its time, freeing its slot; returns how many."""
    stale = session.execute(
        _locking(
            session,
            select(ASSIGNMENTS.c.id, ASSIGNMENTS.c.task_id, ASSIGNMENTS.c.user_id).where(
                ASSIGNMENTS.c.status == "held", ASSIGNMENTS.c.expires_at < now
            ),
            skip_locked=True,
        )
    ).all()
    for assignment_id, task_id, user_id in stale:
        _set_assignment(session, assignment_id, status="expired", finished_at=now)
        _count(session, task_id, "n_active", -1)
        audit.record(
            session,
            "task.expire",
            actor="server",
            task_id=task_id,
            old={"status": "held", "user_id": user_id},
            new={"status": "expired"},
            remote=remote,
            at=now,
        )
    return len(stale)


def _free_slot(session: Any, task: TaskRef) -> int | None:
    if task.quota is None:
        return None
    taken = set(session.execute(_TAKEN_SLOTS, {"task_id_": task.id}).scalars())
    return next(slot for slot in range(task.quota + 1) if slot not in taken)


def _hold(
    session: Any,
    task: TaskRef,
    user: User,
    now: datetime,
    settings: ReviewSettings,
    remote: str | None,
) -> None:
    slot = _free_slot(session, task)
    if task.quota is not None and slot is not None and slot >= task.quota:
        raise RuntimeError(f"task {task.id} has no free slot")  # our bug: the query said free
    expires = now + timedelta(minutes=settings.hold_minutes)
    session.execute(
        _INSERT_ASSIGNMENT,
        {
            "task_id": task.id,
            "user_id": user.id,
            "kind": task.kind,
            "slot": slot,
            "status": "held",
            "created_at": now,
            "expires_at": expires,
            "finished_at": None,
        },
    )
    _count(session, task.id, "n_active", 1)
    audit.record(
        session,
        "task.hold",
        user=user,
        task_id=task.id,
        new={"slot": slot, "expires_at": expires.isoformat()},
        remote=remote,
        at=now,
    )


_REF_COLUMNS = (TASKS.c.id, TASKS.c.kind, TASKS.c.quota, TASKS.c.is_gold)
_NOT_GIVEN = ~exists().where(
    and_(ASSIGNMENTS.c.task_id == TASKS.c.id, ASSIGNMENTS.c.user_id == bindparam("user_id_"))
)
_OWN_HOLD = (
    select(ASSIGNMENTS.c.id, *_REF_COLUMNS)
    .join(TASKS, TASKS.c.id == ASSIGNMENTS.c.task_id)
    .where(
        ASSIGNMENTS.c.user_id == bindparam("user_id_"),
        ASSIGNMENTS.c.kind == bindparam("kind_"),
        ASSIGNMENTS.c.status == "held",
    )
    .order_by(ASSIGNMENTS.c.id)
    .limit(1)
)
_FIRST_FREE = (
    select(*_REF_COLUMNS)
    .where(
        TASKS.c.kind == bindparam("kind_"),
        TASKS.c.is_gold.is_(False),
        TASKS.c.n_active < TASKS.c.quota,
        _NOT_GIVEN,
    )
    .order_by(TASKS.c.n_done, TASKS.c.n_active, TASKS.c.position)
    .limit(1)
)
_FIRST_FREE_LOCKED = _FIRST_FREE.with_for_update(skip_locked=True)
_FIRST_GOLD = (
    select(*_REF_COLUMNS)
    .where(TASKS.c.kind == bindparam("kind_"), TASKS.c.is_gold.is_(True), _NOT_GIVEN)
    .order_by(TASKS.c.position)
    .limit(1)
)
_ASSIGNMENT_OF = select(ASSIGNMENTS.c.id, ASSIGNMENTS.c.status).where(
    ASSIGNMENTS.c.task_id == bindparam("task_id_"), ASSIGNMENTS.c.user_id == bindparam("user_id_")
)
_ASSIGNMENT_OF_LOCKED = _ASSIGNMENT_OF.with_for_update()
_TASK_REF = select(*_REF_COLUMNS, TASKS.c.n_active).where(TASKS.c.id == bindparam("task_id_"))
_TASK_REF_LOCKED = _TASK_REF.with_for_update()


def _postgres(session: Any) -> bool:
    return bool(session.get_bind().dialect.name == "postgresql")


def _ref(row: Any) -> TaskRef:
    return TaskRef(int(row[0]), str(row[1]), row[2], bool(row[3]))


def next_task(
    session: Any,
    user: User,
    kind: str,
    settings: ReviewSettings,
    *,
    now: datetime | None = None,
    remote: str | None = None,
    expire_stale: bool = True,
) -> TaskRef | None:
    """The task ``user`` should do next (held for them), or ``None`` when none is left.

    ``expire_stale`` first expires every hold past its time (a server does it every few
    seconds rather than on every request).
    """
    now = now or utcnow()
    keys = {"user_id_": user.id, "kind_": kind}
    own = session.execute(_OWN_HOLD, keys).first()
    if own is not None:
        _set_assignment(session, own[0], expires_at=now + timedelta(minutes=settings.hold_minutes))
        return _ref(own[1:])

    statement = _FIRST_FREE_LOCKED if _postgres(session) else _FIRST_FREE

    def first_free() -> TaskRef | None:
        row = session.execute(statement, keys).first()
        return None if row is None else _ref(row)

    if expire_stale:
        expire_holds(session, now, remote=remote)
    task = first_free()
    if task is None and not expire_stale and expire_holds(session, now, remote=remote):
        task = first_free()
    if task is None:
        return None
    if settings.gold_every > 0 and _gold_due(session, user, kind, settings.gold_every):
        gold = session.execute(_FIRST_GOLD, keys).first()
        if gold is not None:
            task = _ref(gold)
    _hold(session, task, user, now, settings, remote)
    return task


def _gold_due(session: Any, user: User, kind: str, every: int) -> bool:
    given = session.execute(
        select(func.count())
        .select_from(ASSIGNMENTS)
        .where(ASSIGNMENTS.c.user_id == user.id, ASSIGNMENTS.c.kind == kind)
    ).scalar_one()
    return bool((given + 1) % every == 0)


@dataclass(frozen=True)
class Outcome:
    """What became of a submitted label."""

    status: Literal["added", "revised", "late"]
    annotation_id: int | None
    task: TaskRef


class NotVisible(LookupError):
    """The task does not exist or was never given to this user (the app answers 404)."""


def _latest_annotation(session: Any, task_id: int, user_id: int) -> Annotation | None:
    return session.execute(
        select(Annotation)
        .where(Annotation.task_id == task_id, Annotation.user_id == user_id)
        .order_by(Annotation.id.desc())
        .limit(1)
    ).scalar_one_or_none()


def _assignment_of(session: Any, task_id: int, user: User) -> Any:
    """``(assignment id, status)`` of ``user`` on the task (locked on PostgreSQL).

    Raises:
        NotVisible: The task was never given to ``user``.
    """
    statement = _ASSIGNMENT_OF_LOCKED if _postgres(session) else _ASSIGNMENT_OF
    row = session.execute(statement, {"task_id_": task_id, "user_id_": user.id}).first()
    if row is None:
        raise NotVisible(task_id)
    return row


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
    assignment_id, status_now = _assignment_of(session, task_id, user)
    row = session.execute(
        _TASK_REF_LOCKED if _postgres(session) else _TASK_REF, {"task_id_": task_id}
    ).one()
    task, n_active = _ref(row[:4]), int(row[4])
    previous = _latest_annotation(session, task_id, user.id) if status_now == "done" else None
    status: Literal["added", "revised", "late"] = "revised" if status_now == "done" else "added"
    if status_now in ("expired", "released"):
        if task.quota is not None and n_active >= task.quota:
            audit.record(
                session,
                "label.late",
                user=user,
                task_id=task_id,
                old={"status": status_now},
                new=annotation_record(submission),
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
            old={"status": status_now},
            new={"status": "held", "slot": slot},
            remote=remote,
            at=now,
        )
        _set_assignment(session, assignment_id, slot=slot, status="held")
        _count(session, task_id, "n_active", 1)
    inserted = session.execute(
        _INSERT_ANNOTATION,
        {
            "task_id": task_id,
            "user_id": user.id,
            "assignment_id": assignment_id,
            "label": submission.label,
            "reason": submission.reason,
            "note": submission.note,
            "step_flags": submission.step_flags,
            "duration_ms": submission.duration_ms,
            "supersedes_id": previous.id if previous is not None else None,
            "created_at": now,
        },
    )
    annotation_id = int(inserted.inserted_primary_key[0])
    if status == "added":
        _set_assignment(session, assignment_id, status="done", finished_at=now)
        _count(session, task_id, "n_done", 1)
    audit.record(
        session,
        "label.add" if status == "added" else "label.revise",
        user=user,
        task_id=task_id,
        old=annotation_record(previous) if previous is not None else None,
        new=annotation_record(submission),
        remote=remote,
        at=now,
    )
    return Outcome(status, annotation_id, task)


def skip_task(
    session: Any,
    user: User,
    task_id: int,
    *,
    now: datetime | None = None,
    remote: str | None = None,
) -> TaskRef:
    """Give back a held task unlabelled (its slot goes to someone else).

    Raises:
        NotVisible: The task was never given to ``user``.
    """
    now = now or utcnow()
    assignment = _assignment_of(session, task_id, user)
    task = _ref(session.execute(_TASK_REF, {"task_id_": task_id}).one()[:4])
    if assignment[1] == "held":
        _set_assignment(session, assignment[0], status="released", finished_at=now)
        _count(session, task_id, "n_active", -1)
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


_VISIBLE = (
    select(Task, Item, Assignment)
    .join(Item, Item.id == Task.item_id)
    .join(
        Assignment,
        and_(Assignment.task_id == Task.id, Assignment.user_id == bindparam("user_id_")),
    )
    .where(Task.id == bindparam("task_id_"))
)
_PREVIOUS = (
    select(ASSIGNMENTS.c.task_id)
    .where(
        ASSIGNMENTS.c.user_id == bindparam("user_id_"),
        ASSIGNMENTS.c.kind == bindparam("kind_"),
        ASSIGNMENTS.c.status == "done",
        ASSIGNMENTS.c.id < bindparam("before_"),
    )
    .order_by(ASSIGNMENTS.c.id.desc())
    .limit(1)
)
_DONE = (
    select(func.count())
    .select_from(ASSIGNMENTS)
    .where(
        ASSIGNMENTS.c.user_id == bindparam("user_id_"),
        ASSIGNMENTS.c.kind == bindparam("kind_"),
        ASSIGNMENTS.c.status == "done",
    )
)


def visible_task(session: Any, user: User, task_id: int) -> TaskView:
    """The task as ``user`` may see it: only a task they were given.

    Raises:
        NotVisible: Unknown task, or never given to ``user``.
    """
    row = session.execute(_VISIBLE, {"user_id_": user.id, "task_id_": task_id}).first()
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
    keys = {"user_id_": user.id, "kind_": kind, "before_": before if before is not None else 2**62}
    found = session.execute(_PREVIOUS, keys).scalar_one_or_none()
    return None if found is None else int(found)


def user_done(session: Any, user: User, kind: str) -> int:
    """How many tasks of ``kind`` ``user`` has labelled."""
    return int(session.execute(_DONE, {"user_id_": user.id, "kind_": kind}).scalar_one())


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
