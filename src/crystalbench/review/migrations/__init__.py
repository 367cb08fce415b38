"""Alembic migrations of the review database (run by :func:`crystalbench.review.db.migrate`)."""

__all__: list[str] = []
