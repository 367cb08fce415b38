"""``crystal review``: the human review app (serve, add-user, import, export).

Thin shells over :mod:`crystalbench.review.jobs`: each command's options are one config
(:class:`~crystalbench.review.jobs.ReviewServeConfig`, ``AddUserConfig``, ``ImportConfig``,
``ExportConfig``), one library call does the work, and this module prints. Every command
opens (and migrates) the database named by ``--db`` (a SQLite file, default
``review.sqlite``, or a ``postgresql://`` URL; also ``$CRYSTALBENCH_REVIEW_DB``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.apps import new_app
from crystalbench.cli.binding import configured
from crystalbench.cli.common import Quiet, console, err_console, handle_errors
from crystalbench.cli.flags import Flag
from crystalbench.config.settings import REVIEW_DB_ENV
from crystalbench.review.jobs import AddUserConfig, ExportConfig, ImportConfig, ReviewServeConfig

review_app = new_app(
    help="The human review app: chain review and step-pair labelling, with several "
    "annotators, adjudication and an audit log.",
    no_args_is_help=True,
)

_DB = Flag(
    "db",
    ("--db",),
    f"SQLite file (created if missing) or postgresql://user:password@host/name (also "
    f"${REVIEW_DB_ENV})",
    metavar="DATABASE",
)

SERVE_FLAGS: tuple[Flag, ...] = (
    _DB,
    Flag("host", ("--host",), "Address to bind; anything but loopback prints a warning"),
    Flag("port", ("--port",), "TCP port (0: any free one)", kind=int),
    Flag(
        "hold_minutes",
        ("--hold-minutes",),
        "How long a task handed out stays reserved",
        kind=float,
        metavar="MINUTES",
    ),
    Flag(
        "gold_every",
        ("--gold-every",),
        "Serve one gold task in every N while unseen ones remain (0: off)",
        kind=int,
        metavar="N",
    ),
    Flag(
        "secure_cookies",
        ("--secure-cookies/--no-secure-cookies",),
        "Mark cookies Secure (when a TLS proxy is in front)",
        kind=bool,
    ),
    Flag(
        "show_names",
        ("--show-names/--no-show-names",),
        "Show annotators' names to adjudicators (blind by default)",
        kind=bool,
    ),
    Flag(
        "durable",
        ("--durable/--no-durable",),
        "SQLite: fsync every commit, so not even a power cut loses a label",
        kind=bool,
    ),
    Flag("verbose", ("--verbose/--no-verbose",), "Log every request", kind=bool),
)
"""The options of ``crystal review serve`` (one :class:`ReviewServeConfig` field each)."""

ADD_USER_FLAGS: tuple[Flag, ...] = (
    Flag("name", ("NAME",), "Login name", argument=True, required=True),
    Flag(
        "role",
        ("--role",),
        "annotator, adjudicator or admin",
        metavar="[annotator|adjudicator|admin]",
    ),
    Flag(
        "password_file",
        ("--password-file",),
        "Read the password from this file's first line",
        metavar="FILE",
        default_text="asked at the terminal",
    ),
    Flag(
        "update",
        ("--update/--no-update",),
        "Change the role and password of an existing user",
        kind=bool,
    ),
    _DB,
)
"""The options of ``crystal review add-user`` (one :class:`AddUserConfig` field each)."""

IMPORT_FLAGS: tuple[Flag, ...] = (
    Flag(
        "source",
        ("SOURCE",),
        "A references output folder (or its benchmark.jsonl), or a step-pair file (.jsonl or .csv)",
        argument=True,
        required=True,
    ),
    _DB,
    Flag(
        "benchmark",
        ("--benchmark", "-b"),
        "For a pair file: the benchmark holding the items (sample, a folder or a file)",
        metavar="BENCHMARK",
        default_text="none",
    ),
    Flag(
        "annotators",
        ("--annotators",),
        "Annotators per task",
        kind=int,
        metavar="N",
        default_text="1 for chains, 2 for pairs",
    ),
    Flag(
        "image_root",
        ("--image-root",),
        "A folder item images may lie in besides the benchmark's own folder",
        metavar="FOLDER",
        default_text="none",
    ),
)
"""The options of ``crystal review import`` (one :class:`ImportConfig` field each)."""

EXPORT_FLAGS: tuple[Flag, ...] = (
    Flag(
        "kind",
        ("--kind",),
        "What to export: chains, rejected, pairs or audit",
        metavar="[chains|rejected|pairs|audit]",
        required=True,
    ),
    _DB,
)
"""The options of ``crystal review export`` (one :class:`ExportConfig` field each)."""


@review_app.command("serve")
@handle_errors
@configured(ReviewServeConfig, SERVE_FLAGS)
def serve_command(config: ReviewServeConfig, quiet: Quiet = False) -> None:
    """Run the review app (http://127.0.0.1:8420 by default) until Ctrl-C."""
    from crystalbench.review.jobs import serve_review

    def ready(host: str, port: int, database: str) -> None:
        shown = f"[{host}]" if ":" in host else host
        err_console.print(
            f"review app on http://{shown}:{port}  (database {database}; Ctrl-C stops it)",
            highlight=False,
            markup=False,
        )

    serve_review(config, ready=ready, on_note=lambda line: err_console.print(line, highlight=False))


@review_app.command("add-user")
@handle_errors
@configured(AddUserConfig, ADD_USER_FLAGS)
def add_user_command(config: AddUserConfig, quiet: Quiet = False) -> None:
    """Add a user (annotator, adjudicator or admin); the password is stored as an argon2 hash."""
    from crystalbench.review.jobs import add_review_user

    def ask() -> str:
        return str(typer.prompt("Password", hide_input=True, confirmation_prompt=True))

    done = add_review_user(config, ask if sys.stdin.isatty() else None)
    console.print(done, highlight=False)


@review_app.command("import")
@handle_errors
@configured(ImportConfig, IMPORT_FLAGS)
def import_command(config: ImportConfig, quiet: Quiet = False) -> None:
    """Import reference chains (to review) or step pairs (to label)."""
    from crystalbench.review.jobs import import_into_review

    summary = import_into_review(config)
    what = "chains" if summary.kind == "chain" else "pairs"
    console.print(
        f"imported {summary.added} {what} ({summary.gold} gold) from {summary.source}; "
        f"{summary.unchanged} already there",
        highlight=False,
    )


@review_app.command("export")
@handle_errors
@configured(ExportConfig, EXPORT_FLAGS)
def export_command(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="FILE", help="File to write")],
    config: ExportConfig,
    quiet: Quiet = False,
) -> None:
    """Export final verdicts and labels (every individual label kept) or the audit log."""
    from crystalbench.review.jobs import export_review

    count = export_review(config, out)
    console.print(f"wrote {count} lines to {out}", highlight=False)
