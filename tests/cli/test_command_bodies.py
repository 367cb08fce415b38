"""A command parses, builds its config, calls one library function and prints: its body
stays short (issue 23: about 30 lines at most), the work lives in the library."""

from __future__ import annotations

import ast
import inspect
import textwrap

import typer

from crystalbench.cli.main import app

MAX_BODY_LINES = 30


def body_lines(function) -> int:
    """Lines of ``function``'s body, its docstring left out."""
    source = textwrap.dedent(inspect.getsource(function))
    (node,) = ast.parse(source).body
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return sum(statement.end_lineno - statement.lineno + 1 for statement in body)


def test_every_command_body_is_short():
    def walk(command, path=()):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield " ".join(path), command

    long = {}
    for name, command in walk(typer.main.get_command(app)):
        lines = body_lines(inspect.unwrap(command.callback))
        if lines > MAX_BODY_LINES:
            long[name] = lines
    assert long == {}


def test_the_measure_counts_statements_not_the_docstring():
    def command(x: int) -> int:
        """A docstring
        of three
        lines."""
        y = x + 1
        return y

    assert body_lines(command) == 2
