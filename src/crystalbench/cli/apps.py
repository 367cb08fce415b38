"""The typer settings every ``crystal`` app shares (the full app and the one-command apps of
:mod:`crystalbench.cli.entry`)."""

from __future__ import annotations

from typing import Any


def new_app(**settings: Any) -> Any:
    """A ``typer.Typer`` without shell-completion commands and with plain tracebacks (errors
    a user can mend are printed by :func:`crystalbench.cli.common.handle_errors`), plus
    ``settings``."""
    import typer

    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, **settings)
