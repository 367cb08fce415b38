"""Entry point of the ``crystal`` command. Heavy imports happen inside commands."""

from __future__ import annotations

import typer

from crystalbench._version import __version__
from crystalbench.cli import cache, demo, score
from crystalbench.cli import data as data_cli
from crystalbench.cli import infer as infer_cli
from crystalbench.cli import integrations as integrations_cli
from crystalbench.cli import references as references_cli
from crystalbench.cli import report as report_cli
from crystalbench.cli import review as review_cli
from crystalbench.cli import rewards as rewards_cli
from crystalbench.cli import train as train_cli
from crystalbench.cli import validate as validate_cli
from crystalbench.cli.apps import new_app

app = new_app(
    name="crystal",
    help="crystalbench: score, run, report and train on the CRYSTAL benchmark.",
    no_args_is_help=True,
)
app.command("score")(score.score)
app.command("demo")(demo.demo)
app.command("infer")(infer_cli.infer)
app.command("run")(infer_cli.run)
app.command("report")(report_cli.report)
app.command("leaderboard")(report_cli.leaderboard)
app.command("compare")(report_cli.compare)
app.command("serve-rewards")(rewards_cli.serve_rewards)
app.command("train")(train_cli.train)
app.command("train-sweep")(train_cli.train_sweep)
app.command("train-recipes")(train_cli.train_recipes)
app.add_typer(cache.app, name="cache")
app.add_typer(data_cli.data_app, name="data")
app.add_typer(references_cli.references_app, name="references")
app.add_typer(review_cli.review_app, name="review")
app.add_typer(integrations_cli.integrations_app, name="integrations")
app.add_typer(validate_cli.validate_app, name="validate")
app.command("ablate")(validate_cli.ablate)


@app.command("version")
def version() -> None:
    """Print the crystalbench version."""
    typer.echo(__version__)


if __name__ == "__main__":  # pragma: no cover
    app()
