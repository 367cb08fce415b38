"""The human review app: reference-chain review and step-pair labelling.

A small self-hosted web app (Starlette, server-rendered Jinja2 templates, a little plain
JavaScript) over a real database (SQLite by default, PostgreSQL by URL; SQLAlchemy 2 with
Alembic migrations). Several annotators per task, least-annotated first with holds that time
out, gold tasks, agreement (percent, Cohen's kappa, Krippendorff's alpha), adjudication by
lowest agreement, and an append-only audit log. Commands: ``crystal review serve``,
``add-user``, ``import``, ``export`` (see ``docs/review.md``).

Modules: :mod:`~crystalbench.review.db` (opening, migrations), ``models`` (tables),
``auth`` (passwords, sessions, CSRF, rate limit), ``assign`` (work distribution), ``labels``
(vocabularies, final decisions), ``agreement``, ``importing``, ``exporting``, ``audit``,
``web`` / ``routes`` / ``routes_admin`` / ``app`` (the HTTP side). Nothing here is imported by
``import crystalbench``; the ``review`` extra installs what it needs.

The app is used through ``crystal review ...``; no Python name of this package is public.

Importing a module of this package that needs the ``review`` extra first checks that it is
installed (:mod:`~crystalbench.review._extra`;
:class:`~crystalbench._internal.extras.MissingExtraError`
otherwise, naming it), so every command of ``crystal review`` says what to install before it
does anything. The package itself, :mod:`~crystalbench.review.jobs` (the commands' configs)
and :mod:`~crystalbench.review.settings` import without the extra: ``crystal review --help``
and config checks work on a core install.
"""

__all__: list[str] = []
