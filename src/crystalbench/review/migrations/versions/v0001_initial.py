"""The review database: users, sessions, imports, items, tasks, assignments, labels,
adjudications and the audit log, with triggers that keep the last three append-only.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

APPEND_ONLY = ("review_annotations", "review_adjudications", "review_audit")


def upgrade() -> None:
    """Create every table, index and trigger."""
    op.create_table(
        "review_users",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "review_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("review_users.id"), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "review_imports",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("benchmark", sa.Text(), nullable=False),
        sa.Column("image_roots", sa.JSON(), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("n_tasks", sa.Integer(), nullable=False),
        sa.Column("n_unchanged", sa.Integer(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "review_items",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("import_id", sa.Integer(), sa.ForeignKey("review_imports.id"), nullable=False),
        sa.Column("item_key", sa.String(255), nullable=False),
        sa.Column("source", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("image_root", sa.Integer(), nullable=True),
        sa.Column("image", sa.Text(), nullable=True),
    )
    op.create_table(
        "review_tasks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("import_id", sa.Integer(), sa.ForeignKey("review_imports.id"), nullable=False),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("review_items.id"), nullable=False),
        sa.Column("external_id", sa.String(255), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("quota", sa.Integer(), nullable=True),
        sa.Column("is_gold", sa.Boolean(), nullable=False),
        sa.Column("gold_label", sa.String(16), nullable=True),
        sa.Column("n_active", sa.Integer(), nullable=False),
        sa.Column("n_done", sa.Integer(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("hidden", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("kind", "external_id", "version", name="uq_review_tasks_version"),
    )
    op.create_index(
        "ix_review_tasks_queue",
        "review_tasks",
        ["kind", "is_gold", "n_done", "n_active", "position"],
    )
    op.create_index("ix_review_tasks_external", "review_tasks", ["kind", "external_id"])
    op.create_table(
        "review_assignments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("task_id", sa.Integer(), sa.ForeignKey("review_tasks.id"), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("review_users.id"), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.UniqueConstraint("task_id", "user_id", name="uq_review_assignments_task_user"),
    )
    op.create_index(
        "uq_review_assignments_slot",
        "review_assignments",
        ["task_id", "slot"],
        unique=True,
        sqlite_where=sa.text("status IN ('held', 'done')"),
        postgresql_where=sa.text("status IN ('held', 'done')"),
    )
    op.create_index(
        "ix_review_assignments_user", "review_assignments", ["user_id", "kind", "status"]
    )
    op.create_index("ix_review_assignments_expiry", "review_assignments", ["status", "expires_at"])
    op.create_table(
        "review_annotations",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("task_id", sa.Integer(), sa.ForeignKey("review_tasks.id"), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("review_users.id"), nullable=False),
        sa.Column(
            "assignment_id",
            sa.Integer(),
            sa.ForeignKey("review_assignments.id"),
            nullable=False,
        ),
        sa.Column("label", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("step_flags", sa.JSON(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column(
            "supersedes_id",
            sa.Integer(),
            sa.ForeignKey("review_annotations.id"),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_review_annotations_task", "review_annotations", ["task_id"])
    op.create_index("ix_review_annotations_user", "review_annotations", ["user_id"])
    op.create_table(
        "review_adjudications",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("task_id", sa.Integer(), sa.ForeignKey("review_tasks.id"), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("review_users.id"), nullable=False),
        sa.Column("label", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("overrides_majority", sa.Boolean(), nullable=False),
        sa.Column(
            "supersedes_id",
            sa.Integer(),
            sa.ForeignKey("review_adjudications.id"),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_review_adjudications_task", "review_adjudications", ["task_id"])
    op.create_table(
        "review_audit",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("review_users.id"), nullable=True),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("task_id", sa.Integer(), sa.ForeignKey("review_tasks.id"), nullable=True),
        sa.Column("old_value", sa.JSON(), nullable=True),
        sa.Column("new_value", sa.JSON(), nullable=True),
        sa.Column("remote", sa.String(64), nullable=True),
    )
    op.create_index("ix_review_audit_task", "review_audit", ["task_id"])
    _create_append_only_triggers()


def downgrade() -> None:
    """Drop everything :func:`upgrade` created."""
    _drop_append_only_triggers()
    for table in (
        "review_audit",
        "review_adjudications",
        "review_annotations",
        "review_assignments",
        "review_tasks",
        "review_items",
        "review_imports",
        "review_sessions",
        "review_users",
    ):
        op.drop_table(table)


def _create_append_only_triggers() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for table in APPEND_ONLY:
            for event in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
                )
    elif dialect == "postgresql":
        op.execute(
            "CREATE FUNCTION review_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
        )
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION review_append_only()"
            )
            op.execute(
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION review_append_only()"
            )
    else:  # pragma: no cover - the CLI refuses other databases
        raise NotImplementedError(f"append-only triggers for {dialect}")


def _drop_append_only_triggers() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for table in APPEND_ONLY:
            for event in ("update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{event}")
    elif dialect == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
        op.execute("DROP FUNCTION IF EXISTS review_append_only()")
