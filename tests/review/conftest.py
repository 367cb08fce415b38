"""Fixtures of the review app's tests: a database on SQLite always, and on PostgreSQL too when
``CRYSTALBENCH_TEST_POSTGRES_URL`` names one (``.ci/run`` starts Debian's postgresql and sets
it). Each PostgreSQL test gets a schema of its own, dropped afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("alembic")
pytest.importorskip("argon2")

POSTGRES_ENV = "CRYSTALBENCH_TEST_POSTGRES_URL"


def _postgres_schema_url(base: str) -> tuple[str, str, Any]:
    from sqlalchemy import create_engine, text

    from crystalbench.review.db import database_url

    url = database_url(base)
    schema = f"review_test_{uuid.uuid4().hex[:12]}"
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}", schema, engine


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database URL with nothing in it yet."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'review.sqlite'}"
        return
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"PostgreSQL: set {POSTGRES_ENV} (.ci/run does)")
    url, schema, engine = _postgres_schema_url(base)
    yield url
    from sqlalchemy import text

    with engine.begin() as connection:
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


@pytest.fixture
def db(db_url: str) -> Iterator[Any]:
    """An open, migrated review database."""
    from crystalbench.review.db import Database

    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Any]:
    """A migrated SQLite review database (for tests that need only one backend)."""
    from crystalbench.review.db import Database

    database = Database(f"sqlite:///{tmp_path / 'review.sqlite'}")
    yield database
    database.dispose()
