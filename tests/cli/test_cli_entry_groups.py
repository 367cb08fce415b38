"""The console script builds each group alone (``crystalbench.cli.entry.fast_app``): every
command of every group must be reachable that way, as ``crystal GROUP COMMAND``."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from crystalbench.cli.commands import GROUPS, load
from crystalbench.cli.entry import fast_app


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_command_of_a_group_runs_through_the_console_script(group):
    """A group of one command once lost its name there (typer ran the command as the app:
    ``crystal integrations lmms-eval`` failed with "unexpected extra argument")."""
    app = fast_app(group)
    names = [info.name for info in load(GROUPS[group]).registered_commands if not info.hidden]
    assert names
    for name in names:
        result = CliRunner().invoke(app, [name, "--help"], prog_name=f"crystal {group}")
        assert result.exit_code == 0, (group, name, result.output)
        assert f"crystal {group} {name}" in result.output


def test_the_integrations_group_lists_lmms_eval():
    result = CliRunner().invoke(fast_app("integrations"), ["--help"])
    assert result.exit_code == 0
    assert "lmms-eval" in result.output
    assert isinstance(load(GROUPS["integrations"]), typer.Typer)
