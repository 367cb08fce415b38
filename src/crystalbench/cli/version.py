"""``crystal version``."""

from __future__ import annotations

import typer

from crystalbench._version import __version__


def version() -> None:
    """Print the crystalbench version."""
    typer.echo(__version__)
