"""The review database: migrations from an empty database, models that match them, and the
append-only tables that refuse UPDATE and DELETE (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import DBAPIError

from crystalbench.errors import InputError
from crystalbench.review import audit
from crystalbench.review.db import (
    Database,
    current_revision,
    database_url,
    describe_url,
    downgrade,
    migrate,
)
from crystalbench.review.models import APPEND_ONLY_TABLES, AuditEntry, Base

TABLES = {
    "review_users",
    "review_sessions",
    "review_imports",
    "review_items",
    "review_tasks",
    "review_assignments",
    "review_annotations",
    "review_adjudications",
    "review_audit",
}


def test_an_empty_database_is_migrated_to_the_newest_revision(db_url):
    empty = Database(db_url, migrate_schema=False)
    assert current_revision(empty) is None
    assert TABLES.isdisjoint(inspect(empty.engine).get_table_names())
    migrate(empty)
    assert current_revision(empty) == "0001"
    assert set(inspect(empty.engine).get_table_names()) >= TABLES
    migrate(empty)  # a second run changes nothing
    assert current_revision(empty) == "0001"
    empty.dispose()


def test_the_models_and_the_migrations_agree(db):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with db.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []


def test_downgrade_removes_everything_and_upgrade_restores_it(db):
    downgrade(db)
    assert current_revision(db) is None
    assert TABLES.isdisjoint(inspect(db.engine).get_table_names())
    migrate(db)
    assert set(inspect(db.engine).get_table_names()) >= TABLES
    with db.write() as session:
        audit.record(session, "import", actor="test", new={"n": 1})
    with db.read() as session:
        assert session.execute(select(AuditEntry.action)).scalars().all() == ["import"]


def _fill(db, tmp_path):
    """One pair labelled by two annotators and adjudicated: a row in every append-only table."""
    from review_support import make_users, pair_rows, users_by_name, write_pairs, write_references

    from crystalbench.review.assign import next_task, submit_label
    from crystalbench.review.importing import import_path
    from crystalbench.review.labels import Submission
    from crystalbench.review.models import Adjudication, utcnow
    from crystalbench.review.settings import ReviewSettings

    bench = write_references(tmp_path / "refs", 1)
    pairs = write_pairs(tmp_path / "pairs.jsonl", pair_rows(1, 1))
    import_path(db, pairs, benchmark=bench, actor="test")
    make_users(db, ["ann", "bob"])
    users = users_by_name(db)
    for name, label in (("ann", "match"), ("bob", "no_match")):
        with db.write() as session:
            task = next_task(session, users[name], "pair", ReviewSettings())
            submit_label(session, users[name], task.id, Submission(label=label))
    with db.write() as session:
        session.add(
            Adjudication(
                task_id=task.id,
                user_id=users["ann"].id,
                label="match",
                reason="edge_case",
                note=None,
                overrides_majority=False,
                created_at=utcnow(),
            )
        )


@pytest.mark.parametrize("table", APPEND_ONLY_TABLES)
def test_append_only_tables_refuse_update_and_delete(db, tmp_path, table):
    _fill(db, tmp_path)
    column = {"review_annotations": "label", "review_adjudications": "label"}.get(table, "actor")
    with db.read() as session:
        before = session.execute(text(f"SELECT * FROM {table} ORDER BY id")).all()
    assert before
    for statement in (f"UPDATE {table} SET {column} = 'forged'", f"DELETE FROM {table}"):
        with pytest.raises(DBAPIError, match="append-only"), db.write() as session:
            session.execute(text(statement))
    with db.read() as session:
        assert session.execute(text(f"SELECT * FROM {table} ORDER BY id")).all() == before


def test_truncating_the_audit_log_is_refused_on_postgresql(db):
    if db.dialect != "postgresql":
        pytest.skip("TRUNCATE exists on PostgreSQL only")
    with db.write() as session:
        audit.record(session, "import", actor="test")
    with pytest.raises(DBAPIError, match="append-only"), db.write() as session:
        session.execute(text("TRUNCATE review_audit"))


def test_database_urls(tmp_path):
    assert database_url(tmp_path / "r.sqlite") == f"sqlite:///{(tmp_path / 'r.sqlite').resolve()}"
    assert database_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    with pytest.raises(InputError, match="folder of the database file"):
        database_url(tmp_path / "missing" / "r.sqlite")
    with pytest.raises(InputError, match="unsupported database 'mysql'"):
        database_url("mysql://u@h/d")
    assert "hunter2" not in describe_url("postgresql+psycopg://u:hunter2@h/d")


def test_an_unreachable_postgresql_is_a_clear_error():
    from crystalbench.review.db import DatabaseError

    with pytest.raises(
        DatabaseError, match=r"cannot open or migrate .*u:\*\*\*@127.0.0.1:1/"
    ) as info:
        Database("postgresql+psycopg://u:hunter2@127.0.0.1:1/nothing?connect_timeout=2")
    assert "hunter2" not in str(info.value)
