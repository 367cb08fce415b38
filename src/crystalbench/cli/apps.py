"""The typer settings every ``crystal`` app shares (the full app and the one-command apps of
:mod:`crystalbench.cli.entry`): the command class that gives ``--help`` readable types and
records the spellings a user typed, and the app that uses it for every command."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

SPELLINGS_META = "crystal.spellings"
"""``ctx.meta`` key: ``{parameter: (the spelling the user typed, its value as typed)}``."""

_TYPE_NAMES = {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN"}


class CrystalCommand(TyperCommand):
    """A typer command whose ``--help`` shows readable types, and which records the
    spelling of each option as typed (messages name the flag the user wrote)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflow(self.help)
        for param in self.params:
            readable_type(param)

    def get_help_option(self, ctx: Any) -> Any:
        """``--help``, a flag without a type column."""
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Record the spellings as typed, then parse as usual."""
        ctx.meta[SPELLINGS_META] = self._spellings(args)
        return super().parse_args(ctx, args)

    def _spellings(self, args: list[str]) -> dict[str, tuple[str, str]]:
        """``{parameter: (spelling, value as typed)}`` (messages name the flag as typed)."""
        by_spelling = {
            spelling: param
            for param in self.params
            if param.param_type_name == "option"
            for spelling in (*param.opts, *param.secondary_opts)
        }
        typed: dict[str, tuple[str, str]] = {}
        for index, arg in enumerate(args):
            if arg == "--":
                break
            spelling, eq, text = arg.partition("=")
            param = by_spelling.get(spelling)
            if param is None:
                continue
            if not eq:
                takes = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
                text = args[index + 1] if takes and index + 1 < len(args) else ""
            before = typed.get(param.name)
            if param.multiple and before is not None:
                text = f"{before[1]} {spelling} {text}"
            typed[param.name] = (spelling, text)
        return typed


def reflow(text: str | None) -> str | None:
    """A docstring as ``--help`` should show it: the hard line breaks inside a paragraph
    joined, so that the terminal wraps whole sentences (typer keeps them, and a page then
    breaks lines mid-sentence). A paragraph with a list item, an indented line or a
    ``\\b`` marker keeps its lines.

    Examples:
        >>> reflow("Score it.\\n\\nWith --construction, run the\\nlife cycle instead.")
        'Score it.\\n\\nWith --construction, run the life cycle instead.'
        >>> reflow("Steps:\\n- one\\n- two")
        'Steps:\\n- one\\n- two'
    """
    if not text:
        return text
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for paragraph in paragraphs:
        lines = paragraph.split("\n")
        keep = paragraph.startswith("\b") or any(
            line.startswith((" ", "\t", "- ", "* ", "|", "\f")) for line in lines[1:]
        )
        out.append(paragraph if keep else " ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def readable_type(param: Any) -> None:
    """Give ``param`` a readable type in ``--help``: ``FLOAT``, ``PATH``, ``[lis|kendall]``,
    never ``<list[str]>`` (a metavar the command set is kept)."""
    option = param.param_type_name == "option"
    if option and (getattr(param, "is_flag", False) or getattr(param, "count", False)):
        param.metavar = ""  # a flag takes no value: no type column
        return
    if option and param.metavar is not None:
        return
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:  # a typer built on click's own types: their names are readable
        label = str(getattr(param.type, "name", "text")).upper()
    elif descriptor.is_choice:
        label = "[" + "|".join(str(choice) for choice in descriptor.choices or ()) + "]"
    elif descriptor.is_path:
        label = "PATH"
    else:
        annotation = descriptor.annotation
        if descriptor.is_list:
            annotation = getattr(annotation, "__args__", (str,))[0]
        label = _TYPE_NAMES.get(annotation, "TEXT")
    if option:
        param.metavar = label
    elif descriptor is not None:  # an argument's metavar names it; its type column is this
        param.display_type_rich = lambda ctx: label


class CrystalGroup(TyperGroup):
    """A typer group whose ``--help`` has no type column and whole sentences (like
    :class:`CrystalCommand`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflow(self.help)

    def get_help_option(self, ctx: Any) -> Any:
        """``--help``, a flag without a type column."""
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option


class CrystalTyper(typer.Typer):
    """``typer.Typer`` whose commands are :class:`CrystalCommand`."""

    def command(self, name: str | None = None, **settings: Any) -> Any:
        """Register a command, as ``typer.Typer.command`` does."""
        settings.setdefault("cls", CrystalCommand)
        return super().command(name, **settings)


def new_app(**settings: Any) -> Any:
    """A :class:`CrystalTyper` without shell-completion commands and with plain tracebacks
    (errors a user can mend are printed by :func:`crystalbench.cli.common.handle_errors`),
    plus ``settings``."""
    settings.setdefault("cls", CrystalGroup)
    return CrystalTyper(add_completion=False, pretty_exceptions_enable=False, **settings)
