"""Work distribution on a real database: least-annotated first, quotas, holds that time out,
nobody getting a task twice, gold tasks, revisions, and concurrent annotators."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest
from review_support import make_users, pair_rows, users_by_name, write_pairs, write_references
from sqlalchemy import func, select

from crystalbench.review.assign import (
    NotVisible,
    expire_holds,
    next_task,
    queue_progress,
    skip_task,
    submit_label,
    visible_task,
)
from crystalbench.review.importing import import_path
from crystalbench.review.labels import Submission
from crystalbench.review.models import Annotation, Assignment, AuditEntry, Task, utcnow
from crystalbench.review.settings import ReviewSettings

NO_GOLD = ReviewSettings(gold_every=0)


def _import_pairs(db, tmp_path, n_pairs, *, annotators=2, gold=None):
    bench = write_references(tmp_path / "refs", 3)
    pairs = write_pairs(tmp_path / "pairs.jsonl", pair_rows(n_pairs, 3, gold=gold))
    return import_path(db, pairs, benchmark=bench, annotators=annotators, actor="test")


def _positions(db):
    with db.read() as session:
        return dict(session.execute(select(Task.id, Task.external_id)).all())


def _take(db, user, settings=NO_GOLD, now=None):
    with db.write() as session:
        task = next_task(session, user, "pair", settings, now=now)
        return None if task is None else task.id


def _label(db, user, task_id, label="match", now=None):
    with db.write() as session:
        return submit_label(session, user, task_id, Submission(label=label), now=now).status


def test_least_annotated_tasks_come_first(db, tmp_path):
    _import_pairs(db, tmp_path, 4)
    make_users(db, ["a", "b", "c", "d", "e", "f"])
    users = users_by_name(db)
    names = _positions(db)
    given = {name: _take(db, users[name]) for name in "abcd"}
    assert [names[given[n]] for n in "abcd"] == ["pair-0", "pair-1", "pair-2", "pair-3"]
    assert names[_take(db, users["e"])] == "pair-0"  # all held once: import order
    _label(db, users["b"], given["b"])
    # pair-1 now has a label and pair-0 is full: f gets an unlabelled task with a free slot
    assert names[_take(db, users["f"])] == "pair-2"


def test_quota_is_never_exceeded_and_nobody_gets_a_task_twice(db, tmp_path):
    _import_pairs(db, tmp_path, 3, annotators=2)
    make_users(db, [f"u{i}" for i in range(5)])
    users = users_by_name(db)
    for _round in range(3):
        for name in sorted(users):
            task = _take(db, users[name])
            if task is not None:
                assert _label(db, users[name], task) == "added"
    with db.read() as session:
        rows = session.execute(
            select(Assignment.task_id, Assignment.user_id, Assignment.status)
        ).all()
        tasks = session.execute(select(Task.id, Task.n_done, Task.n_active)).all()
    per_task = Counter(task for task, _user, _status in rows)
    assert sorted(per_task.values()) == [2, 2, 2]
    assert len({(task, user) for task, user, _ in rows}) == len(rows)
    assert all(n_done == 2 and n_active == 2 for _id, n_done, n_active in tasks)
    assert all(_take(db, user) is None for user in users.values())


def test_asking_again_returns_your_own_held_task(db, tmp_path):
    _import_pairs(db, tmp_path, 3)
    make_users(db, ["a"])
    user = users_by_name(db)["a"]
    first = _take(db, user)
    assert _take(db, user) == first
    with db.read() as session:
        assert session.execute(select(func.count()).select_from(Assignment)).scalar_one() == 1


def test_an_abandoned_hold_comes_back_and_a_late_label_is_kept_but_not_counted(db, tmp_path):
    _import_pairs(db, tmp_path, 1, annotators=1)
    make_users(db, ["slow", "quick"])
    users = users_by_name(db)
    now = utcnow()
    task = _take(db, users["slow"], now=now)
    assert _take(db, users["quick"], now=now + timedelta(minutes=5)) is None  # still held
    later = now + timedelta(minutes=NO_GOLD.hold_minutes + 1)
    assert _take(db, users["quick"], now=later) == task
    assert _label(db, users["quick"], task, "no_match", now=later) == "added"
    assert _label(db, users["slow"], task, "match", now=later) == "late"
    with db.read() as session:
        labels = session.execute(select(Annotation.label)).scalars().all()
        late = session.execute(
            select(AuditEntry).where(AuditEntry.action == "label.late")
        ).scalar_one()
        expired = session.execute(
            select(AuditEntry).where(AuditEntry.action == "task.expire")
        ).scalar_one()
        n_done = session.get(Task, task).n_done
    assert labels == ["no_match"]
    assert late.new_value == {"label": "match"}
    assert late.actor == "slow"
    assert expired.old_value["status"] == "held"
    assert n_done == 1


def test_an_expired_hold_whose_place_is_still_free_is_reclaimed(db, tmp_path):
    _import_pairs(db, tmp_path, 1, annotators=1)
    make_users(db, ["slow"])
    users = users_by_name(db)
    now = utcnow()
    task = _take(db, users["slow"], now=now)
    later = now + timedelta(minutes=NO_GOLD.hold_minutes + 1)
    with db.write() as session:
        assert expire_holds(session, later) == 1
        assert session.get(Task, task).n_active == 0
    assert _label(db, users["slow"], task, now=later) == "added"
    with db.read() as session:
        actions = session.execute(select(AuditEntry.action).order_by(AuditEntry.id)).scalars().all()
        assert session.get(Task, task).n_active == 1
    assert actions[-2:] == ["task.reclaim", "label.add"]


def test_a_skipped_task_goes_to_someone_else_and_never_back(db, tmp_path):
    _import_pairs(db, tmp_path, 2, annotators=1)
    make_users(db, ["a", "b"])
    users = users_by_name(db)
    task = _take(db, users["a"])
    with db.write() as session:
        skip_task(session, users["a"], task)
    assert _take(db, users["b"]) == task
    second = _take(db, users["a"])
    assert second is not None
    assert second != task


def test_a_revision_appends_and_supersedes(db, tmp_path):
    _import_pairs(db, tmp_path, 1)
    make_users(db, ["a"])
    user = users_by_name(db)["a"]
    task = _take(db, user)
    assert _label(db, user, task, "match") == "added"
    assert _label(db, user, task, "no_match") == "revised"
    with db.read() as session:
        rows = session.execute(select(Annotation).order_by(Annotation.id)).scalars().all()
        revise = session.execute(
            select(AuditEntry).where(AuditEntry.action == "label.revise")
        ).scalar_one()
        view = visible_task(session, user, task)
        n_done = session.get(Task, task).n_done
    assert [r.label for r in rows] == ["match", "no_match"]
    assert rows[1].supersedes_id == rows[0].id
    assert (revise.old_value, revise.new_value) == ({"label": "match"}, {"label": "no_match"})
    assert view.current.label == "no_match"
    assert n_done == 1


def test_a_task_not_given_to_you_is_not_visible(db, tmp_path):
    _import_pairs(db, tmp_path, 2)
    make_users(db, ["a", "b"])
    users = users_by_name(db)
    task = _take(db, users["a"])
    with db.read() as session, pytest.raises(NotVisible):
        visible_task(session, users["b"], task)
    with db.write() as session, pytest.raises(NotVisible):
        submit_label(session, users["b"], task, Submission(label="match"))


def test_gold_tasks_are_interleaved_for_every_annotator(db, tmp_path):
    _import_pairs(db, tmp_path, 8, gold={6: "match", 7: "no_match"})
    make_users(db, ["a", "b"])
    users = users_by_name(db)
    names = _positions(db)
    settings = ReviewSettings(gold_every=3)
    order = {}
    for name in "ab":
        served = []
        while (task := _take(db, users[name], settings)) is not None:
            served.append(names[task])
            _label(db, users[name], task)
        order[name] = served
    for served in order.values():
        assert served[2] == "pair-6"
        assert served[5] == "pair-7"
        assert len(served) == 8  # 6 regular tasks with 2 places each, both gold tasks
    with db.read() as session:
        progress = queue_progress(session, "pair")
    assert (progress.tasks, progress.labels, progress.wanted) == (6, 12, 12)


def test_gold_is_not_served_when_no_regular_work_is_left(db, tmp_path):
    _import_pairs(db, tmp_path, 3, annotators=1, gold={2: "match"})
    make_users(db, ["a", "b"])
    users = users_by_name(db)
    settings = ReviewSettings(gold_every=1)
    assert _positions(db)[_take(db, users["a"], settings)] == "pair-2"  # gold, work remains
    for name in "ab":
        while (task := _take(db, users[name], settings)) is not None:
            _label(db, users[name], task)
    assert _take(db, users["b"], settings) is None


def test_concurrent_annotators_never_exceed_a_quota_or_lose_a_label(db, tmp_path):
    _import_pairs(db, tmp_path, 24, annotators=2)
    names = [f"c{i}" for i in range(6)]
    make_users(db, names)
    users = users_by_name(db)
    acknowledged: list[tuple[int, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        try:
            while (task := _take(db, users[name])) is not None:
                if _label(db, users[name], task) == "added":
                    with lock:
                        acknowledged.append((task, name))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    with db.read() as session:
        stored = session.execute(select(Annotation.task_id, Annotation.user_id)).all()
        active = Counter(
            session.execute(
                select(Assignment.task_id).where(Assignment.status.in_(("held", "done")))
            ).scalars()
        )
    assert len(acknowledged) == len(stored) == 48
    assert set(active.values()) == {2}
    assert len(set(stored)) == 48
