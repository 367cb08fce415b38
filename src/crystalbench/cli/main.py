"""The full ``crystal`` app: every command and group of :mod:`crystalbench.cli.commands`.
Heavy imports happen inside commands."""

from __future__ import annotations

from crystalbench.cli.apps import new_app
from crystalbench.cli.commands import COMMANDS, GROUPS, load

app = new_app(
    name="crystal",
    help="crystalbench: score, run, report and train on the CRYSTAL benchmark.",
    no_args_is_help=True,
)


for _name, _target in COMMANDS.items():
    app.command(_name)(load(_target))
for _name, _target in GROUPS.items():
    app.add_typer(load(_target), name=_name)


if __name__ == "__main__":  # pragma: no cover
    app()
