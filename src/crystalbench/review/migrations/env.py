"""Alembic environment of the review database.

:func:`crystalbench.review.db.migrate` hands Alembic an open connection in
``config.attributes["connection"]``; run from the ``alembic`` command line instead, the URL
comes from ``sqlalchemy.url``. Imported outside Alembic (a doctest collector walking the
package, say) this module does nothing.
"""

from __future__ import annotations

from typing import Any

from alembic import context

from crystalbench.review.models import Base


def _run(connection: Any) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations() -> None:
    """Upgrade or downgrade the database Alembic was pointed at."""
    config = getattr(context, "config", None)
    if config is None:  # not run by Alembic
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from sqlalchemy import engine_from_config, pool

    engine = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as opened:
        _run(opened)


run_migrations()
