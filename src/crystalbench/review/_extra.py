"""The ``review`` extra's check, run by importing this module.

Every module of :mod:`crystalbench.review` that needs a package of the extra imports this
module first (before its own imports, behind an ``isort: split``), so that importing any of
them without the extra raises :class:`~crystalbench._internal.extras.MissingExtraError` naming
``pip install 'crystalbench[review]'`` instead of a bare ``ImportError``. The package itself
and :mod:`~crystalbench.review.jobs` (the commands' configs) import without the extra: the
``crystal review`` help pages and config checks work on a core install.
"""

from crystalbench._internal.extras import require

require(
    "sqlalchemy",
    "alembic",
    "argon2",
    "starlette",
    "jinja2",
    "uvicorn",
    "statsmodels",
    "krippendorff",
    what="the review app (crystal review)",
    extra="review",
    load=False,
)
