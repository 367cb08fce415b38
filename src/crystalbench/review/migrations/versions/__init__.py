"""Alembic revisions of the review database, oldest first."""
