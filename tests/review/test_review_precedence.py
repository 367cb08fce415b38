"""Chain tasks of items with a ``reference_precedence``: reviewers see which steps may come
in either order; chains without one import exactly as before."""

from __future__ import annotations

from review_support import chain_record, write_references
from sqlalchemy import select

from crystalbench.review.importing import import_path
from crystalbench.review.models import Task


def _payloads(db):
    with db.read() as session:
        tasks = session.execute(select(Task).order_by(Task.position)).scalars().all()
        return [(t.external_id, t.payload, t.version) for t in tasks]


def test_interchangeable_steps_reach_the_chain_task(db, tmp_path):
    steps = ["The bar for May is 40.", "The bar for June is 55.", "June minus May is 15.",
             "So the answer is 15."]  # fmt: skip
    records = [chain_record(0, steps=steps), chain_record(1)]
    records[0]["reference_precedence"] = [[0, 2], [1, 2], [2, 3]]
    import_path(db, write_references(tmp_path / "refs", records=records), actor="test")
    (first, partial, _), (second, plain, plain_version) = _payloads(db)
    assert (first, second) == ("item-0", "item-1")
    assert partial["interchangeable"] == [[0, 1]]
    assert [s["free_with"] for s in partial["steps"]] == [[1], [0], [], []]
    assert "interchangeable" not in plain
    assert all("free_with" not in s for s in plain["steps"])

    # Importing the chain without a precedence again changes nothing (same version).
    other = write_references(tmp_path / "again", records=[chain_record(1)])
    import_path(db, other, actor="test")
    assert len(_payloads(db)) == 2  # unchanged, not a new task
    assert _payloads(db)[1][2] == plain_version


def test_a_precedence_added_later_is_a_new_task(db, tmp_path):
    import_path(db, write_references(tmp_path / "a", records=[chain_record(0)]), actor="test")
    record = chain_record(0)
    record["reference_precedence"] = [[0, 2], [1, 2]]
    import_path(db, write_references(tmp_path / "b", records=[record]), actor="test")
    (_, before, _), (_, after, _) = _payloads(db)
    assert "interchangeable" not in before
    assert after["interchangeable"] == [[0, 1]]
