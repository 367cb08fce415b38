"""Alembic revisions of the review database, oldest first."""

__all__: list[str] = []
