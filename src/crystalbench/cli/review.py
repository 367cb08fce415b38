"""``crystal review``: the human review app (serve, add-user, import, export).

Thin shells over :mod:`crystalbench.review`; every command opens (and migrates) the database
named by ``--db`` (a SQLite file, default ``review.sqlite``, or a ``postgresql://`` URL).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.common import PORT_RANGE, console, err_console, handle_errors
from crystalbench.errors import InputError
from crystalbench.settings import (
    REVIEW_DB,
    REVIEW_GOLD_EVERY,
    REVIEW_HOLD_MINUTES,
    REVIEW_HOST,
    REVIEW_PORT,
)

review_app = typer.Typer(
    help="The human review app: chain review and step-pair labelling, with several "
    "annotators, adjudication and an audit log.",
    no_args_is_help=True,
    add_completion=False,
)

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        help="SQLite file (created if missing) or postgresql://user:password@host/name",
        envvar="CRYSTALBENCH_REVIEW_DB",
    ),
]


@review_app.command("serve")
@handle_errors
def serve_command(
    db: DbOption = REVIEW_DB,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but loopback prints a warning")
    ] = REVIEW_HOST,
    port: Annotated[int, typer.Option(help="Port (0: any free one)", **PORT_RANGE)] = REVIEW_PORT,
    hold_minutes: Annotated[
        float, typer.Option(help="How long a task handed out stays reserved")
    ] = REVIEW_HOLD_MINUTES,
    gold_every: Annotated[
        int, typer.Option(help="Serve one gold task in every N while unseen ones remain (0: off)")
    ] = REVIEW_GOLD_EVERY,
    secure_cookies: Annotated[
        bool, typer.Option(help="Mark cookies Secure (when a TLS proxy is in front)")
    ] = False,
    show_names: Annotated[
        bool, typer.Option(help="Show annotators' names to adjudicators (blind by default)")
    ] = False,
    durable: Annotated[
        bool,
        typer.Option(
            help="SQLite: fsync every commit (synchronous=FULL), so not even a power cut "
            "loses a label (an app crash never does)"
        ),
    ] = False,
    verbose: Annotated[bool, typer.Option(help="Log every request")] = False,
) -> None:
    """Run the review app (http://127.0.0.1:8420 by default) until Ctrl-C."""
    from crystalbench.review.app import serve
    from crystalbench.review.db import describe_url, open_database
    from crystalbench.review.settings import ReviewSettings

    if hold_minutes <= 0:
        raise InputError("must be positive", field="--hold-minutes")
    if gold_every < 0:
        raise InputError("must be 0 or more", field="--gold-every")
    database = open_database(db, durable=durable)
    settings = ReviewSettings(
        hold_minutes=hold_minutes,
        gold_every=gold_every,
        secure_cookies=secure_cookies,
        show_names_to_adjudicators=show_names,
    )
    _warn_without_users(database)

    def ready(bound_host: str, bound_port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        err_console.print(
            f"review app on http://{shown}:{bound_port}  (database {describe_url(database.url)}; "
            "Ctrl-C stops it)",
            highlight=False,
        )

    try:
        serve(database, host=host, port=port, settings=settings, verbose=verbose, ready=ready)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port} ({exc})", field="--host") from None
    finally:
        database.dispose()


def _warn_without_users(database: object) -> None:
    from sqlalchemy import func, select

    from crystalbench.review.models import User

    with database.read() as session:  # type: ignore[attr-defined]
        count = session.execute(select(func.count()).select_from(User)).scalar_one()
    if not count:
        err_console.print(
            "no users yet: add one with `crystal review add-user NAME --role admin`",
            highlight=False,
        )


@review_app.command("add-user")
@handle_errors
def add_user_command(
    name: Annotated[str, typer.Argument(help="Login name")],
    role: Annotated[str, typer.Option(help="annotator, adjudicator or admin")] = "annotator",
    password_file: Annotated[
        Path | None,
        typer.Option(help="Read the password from this file's first line (else asked)"),
    ] = None,
    update: Annotated[
        bool, typer.Option(help="Change the role and password of an existing user")
    ] = False,
    db: DbOption = REVIEW_DB,
) -> None:
    """Add a user (annotator, adjudicator or admin); the password is stored as an argon2 hash."""
    from crystalbench.review import audit
    from crystalbench.review.auth import add_user, check_name, check_password
    from crystalbench.review.db import open_database

    check_name(name)
    if password_file is not None:
        try:
            lines = password_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the password ({exc})", path=password_file) from None
        password = lines[0] if lines else ""
    elif sys.stdin.isatty():
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        raise InputError(
            "no terminal to ask the password at: pass --password-file", field="--password-file"
        )
    check_password(password)
    database = open_database(db)
    try:
        add_user(database, name, role, password, update=update, actor=audit.cli_actor())
    finally:
        database.dispose()
    console.print(f"{'updated' if update else 'added'} {role} {name}", highlight=False)


@review_app.command("import")
@handle_errors
def import_command(
    source: Annotated[
        Path,
        typer.Argument(
            help="A references output folder (or its benchmark.jsonl), "
            "or a step-pair file (.jsonl or .csv)"
        ),
    ],
    db: DbOption = REVIEW_DB,
    benchmark: Annotated[
        str | None,
        typer.Option(
            help="For a pair file: the benchmark (file, folder or 'sample') holding the items"
        ),
    ] = None,
    annotators: Annotated[
        int | None,
        typer.Option(help="Annotators per task (default 1 for chains, 2 for pairs)"),
    ] = None,
    image_root: Annotated[
        Path | None, typer.Option(help="Another folder the items' images may lie under")
    ] = None,
) -> None:
    """Import reference chains (to review) or step pairs (to label)."""
    from crystalbench.review.db import open_database
    from crystalbench.review.importing import import_path

    database = open_database(db)
    try:
        summary = import_path(
            database, source, benchmark=benchmark, annotators=annotators, image_root=image_root
        )
    finally:
        database.dispose()
    what = "chains" if summary.kind == "chain" else "pairs"
    console.print(
        f"imported {summary.added} {what} ({summary.gold} gold) from {summary.source}; "
        f"{summary.unchanged} already there",
        highlight=False,
    )


@review_app.command("export")
@handle_errors
def export_command(
    kind: Annotated[str, typer.Option(help="chains, rejected, pairs or audit")],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write")],
    db: DbOption = REVIEW_DB,
) -> None:
    """Export final verdicts and labels (every individual label kept) or the audit log."""
    from crystalbench.review.db import open_database
    from crystalbench.review.exporting import export_file

    database = open_database(db)
    try:
        count = export_file(database, kind, out)
    finally:
        database.dispose()
    console.print(f"wrote {count} lines to {out}", highlight=False)
