"""Entry point of the ``crystal`` command. Heavy imports happen inside commands."""

from __future__ import annotations

import typer

from crystalbench._version import __version__
from crystalbench.cli import cache, demo, score
from crystalbench.cli import report as report_cli

app = typer.Typer(
    name="crystal",
    help="crystalbench: score, run, report and train on the CRYSTAL benchmark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("score")(score.score)
app.command("demo")(demo.demo)
app.command("report")(report_cli.report)
app.command("leaderboard")(report_cli.leaderboard)
app.command("compare")(report_cli.compare)
app.add_typer(cache.app, name="cache")


@app.command("version")
def version() -> None:
    """Print the crystalbench version."""
    typer.echo(__version__)


if __name__ == "__main__":  # pragma: no cover
    app()
