"""The typer settings every ``crystal`` app shares (the full app and the one-command apps of
:mod:`crystalbench.cli.entry`): the command class that gives ``--help`` readable types and
keeps deprecated spellings working, and the app that uses it for every command."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

DEPRECATED_ALIASES = "deprecated_aliases"
"""Attribute of a command function: ``{old spelling: current spelling}`` (set by
:func:`crystalbench.cli.binding.configured` and :func:`deprecated`)."""

HIDDEN_COMMAND = "hidden_command"
"""Attribute of a command function: register it hidden (an old name, :func:`deprecated_command`)."""

SPELLINGS_META = "crystal.spellings"
"""``ctx.meta`` key: ``{parameter: (the spelling the user typed, its value as typed)}``."""

_TYPE_NAMES = {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN"}


class CrystalCommand(TyperCommand):
    """A typer command whose ``--help`` shows readable types, and which accepts the old
    spellings in :attr:`aliases` (each use prints one ``warning: ... is deprecated`` line
    on stderr). Old spellings never appear in ``--help``."""

    aliases: Mapping[str, str] = {}
    """``{old spelling: current spelling}`` of this command."""

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
        """Rewrite old spellings to current ones (with a notice), then parse as usual."""
        if self.aliases:
            from crystalbench.cli.flags import rewrite_aliases

            args = rewrite_aliases(args, self.aliases, self._takes_value, _warn_deprecated)
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

    def _takes_value(self, spelling: str) -> bool:
        for param in self.params:
            if param.param_type_name == "option" and spelling in param.opts:
                return not (getattr(param, "is_flag", False) or getattr(param, "count", False))
        return False


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


def _warn_deprecated(message: str) -> None:
    typer.echo(f"warning: {message}", err=True)


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


def command_class(aliases: Mapping[str, str]) -> type[CrystalCommand]:
    """:class:`CrystalCommand` with these deprecated spellings."""
    if not aliases:
        return CrystalCommand
    return type("CrystalCommandWithAliases", (CrystalCommand,), {"aliases": dict(aliases)})


def deprecated(**old_to_new: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare old spellings of a command's options (keyword: the old spelling with ``-``
    as ``_``, leading dashes dropped; value: the current spelling)::

        @deprecated(out_dir="--out")   # --out-dir X works, with a notice, as --out X
    """

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        aliases = dict(getattr(function, DEPRECATED_ALIASES, {}))
        aliases.update({"--" + old.replace("_", "-"): new for old, new in old_to_new.items()})
        setattr(function, DEPRECATED_ALIASES, aliases)
        return function

    return mark


def deprecated_command(old: str, new: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An old name of a command: the same command, hidden from ``--help``, that prints
    one ``warning: OLD is deprecated; use NEW`` line on stderr before it runs::

        ablate_alias = deprecated_command("crystal ablate", "crystal validate ablate")(ablate)
    """

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            _warn_deprecated(f"{old} is deprecated; use {new}")
            return function(*args, **kwargs)

        setattr(wrapper, HIDDEN_COMMAND, True)
        return wrapper

    return wrap


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
    """``typer.Typer`` whose commands are :class:`CrystalCommand` (with the function's
    deprecated spellings)."""

    def command(self, name: str | None = None, **settings: Any) -> Any:
        """Register a command, as ``typer.Typer.command`` does."""
        register = super().command

        def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
            cls = settings.pop("cls", None) or command_class(
                getattr(function, DEPRECATED_ALIASES, {})
            )
            settings.setdefault("hidden", getattr(function, HIDDEN_COMMAND, False))
            return register(name, cls=cls, **settings)(function)

        return decorator


def new_app(**settings: Any) -> Any:
    """A :class:`CrystalTyper` without shell-completion commands and with plain tracebacks
    (errors a user can mend are printed by :func:`crystalbench.cli.common.handle_errors`),
    plus ``settings``."""
    settings.setdefault("cls", CrystalGroup)
    return CrystalTyper(add_completion=False, pretty_exceptions_enable=False, **settings)
