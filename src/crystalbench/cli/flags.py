"""Command-line flags declared as data: each one sets one field of a command's config.

A :class:`Flag` names a config field (dotted for a nested one: ``scoring.threshold``), its
spellings and its help; :func:`crystalbench.cli.binding.configured` turns a command's flags
into typer options whose defaults are the config's own, and builds the config from the
ones the user gave (:func:`crystalbench.config.loader.build_config`). The declarations
import neither typer nor pydantic, so the ``crystal`` entry point can read a command line
with them before anything heavy is imported (:func:`given_texts`).

Examples:
    >>> tau = Flag("scoring.threshold", ("--threshold", "--tau"), "Cosine threshold", kind=float)
    >>> tau.param, tau.spellings
    ('threshold', ('--threshold', '--tau'))
    >>> given_texts(["-b", "sample", "--tau=0.4"], [tau])
    {'scoring.threshold': ('--tau', '0.4')}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Flag",
    "cache_flags",
    "device_flag",
    "given_texts",
    "read_ids",
    "split_commas",
]


@dataclass(frozen=True)
class Flag:
    """One command-line option (or argument) that sets one config field."""

    field: str
    """The field it sets, dotted for a nested one (``scoring.threshold``)."""
    names: tuple[str, ...]
    """Its spellings, canonical first (``("--threshold", "--tau")``); a boolean flag gives
    its pair as one name (``"--cache/--no-cache"``); an argument gives its metavar."""
    help: str
    """What it does (``--help`` adds the default)."""
    kind: Any = str
    """The type typer parses (``str``, ``int``, ``float``, ``bool``, a ``Literal``,
    ``list[str]`` for a repeatable option)."""
    metavar: str | None = None
    """How its value reads in ``--help`` (``FILE``, ``NAME=FILE``); default: from ``kind``."""
    convert: Callable[[Any], Any] | None = None
    """Turns the parsed value into the field's value (``None``: as parsed)."""
    default_text: str | None = None
    """What ``--help`` says the default is when the field's default is ``None`` (or is not
    what the user sees, e.g. ``"$CRYSTALBENCH_CACHE_DIR or ~/.cache/crystalbench"``)."""
    argument: bool = False
    """A positional argument instead of an option."""
    required: bool = False
    """Must be given (on the command line or in ``--config``)."""
    param_name: str | None = None
    """The command parameter's name (default: the field's last part)."""

    @property
    def param(self) -> str:
        """The command parameter's name."""
        return self.param_name or self.field.rsplit(".", 1)[-1]

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every spelling that sets the field to a given value (both halves of a pair)."""
        out: list[str] = []
        for name in self.names:
            out.extend(part for part in name.split("/") if part)
        return tuple(out)

    @property
    def on_off(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """``(on spellings, off spellings)`` of a boolean pair, else ``None``."""
        if self.kind is not bool:
            return None
        on: list[str] = []
        off: list[str] = []
        for name in self.names:
            first, _, second = name.partition("/")
            on.append(first)
            if second:
                off.append(second)
        return tuple(on), tuple(off)

    def from_text(self, text: str) -> Any:
        """The field's value from the text a user typed (no typer: the entry point's
        quick look at a command line).

        Raises:
            ValueError: The text is not a value of this flag's kind.
        """
        value: Any = text
        if self.kind in (int, float):
            value = self.kind(text)
        return self.convert(value) if self.convert is not None else value


CACHE_DIR_DEFAULT = "$CRYSTALBENCH_CACHE_DIR, else ~/.cache/crystalbench"
"""What ``--help`` says ``--cache-dir`` defaults to."""


def cache_flags(at: str = "", what: str = "embedding cache") -> tuple[Flag, Flag]:
    """``--cache/--no-cache`` and ``--cache-dir`` (the grammar's), setting ``use_cache`` and
    ``cache_dir`` of the config part at ``at`` (``"scoring."``; ``""``: the config itself).

    Examples:
        >>> [flag.field for flag in cache_flags("scoring.")]
        ['scoring.use_cache', 'scoring.cache_dir']
    """
    return (
        Flag(
            f"{at}use_cache",
            ("--cache/--no-cache",),
            f"Read and write the on-disk {what}",
            kind=bool,
            param_name="cache",
        ),
        Flag(
            f"{at}cache_dir",
            ("--cache-dir",),
            "Cache folder (also $CRYSTALBENCH_CACHE_DIR)",
            metavar="FOLDER",
            default_text=CACHE_DIR_DEFAULT,
        ),
    )


def device_flag(at: str = "", what: str = "the sentence encoder") -> Flag:
    """``--device`` (the grammar's: where the sentence encoder runs), setting ``device`` of
    the config part at ``at``."""
    return Flag(
        f"{at}device",
        ("--device",),
        f"Where {what} runs: cuda, cuda:1, cpu, mps",
        metavar="DEVICE",
        default_text="a GPU if visible, else cpu",
    )


def split_commas(value: str | Sequence[str] | None) -> list[str] | None:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (``None`` when nothing is left).

    Examples:
        >>> split_commas("mathvision, plotqa,")
        ['mathvision', 'plotqa']
        >>> split_commas(["cuda:0,cuda:1", "cuda:2"])
        ['cuda:0', 'cuda:1', 'cuda:2']
        >>> split_commas("") is None
        True
    """
    if not value:
        return None
    texts = [value] if isinstance(value, str) else list(value)
    parts = [part.strip() for text in texts for part in text.split(",")]
    return [part for part in parts if part] or None


def read_ids(value: str | None) -> list[str] | None:
    """Item ids from ``--ids``: comma-separated, or ``@FILE`` with one id per line.

    Raises:
        InputError: ``@FILE`` names no file.

    Examples:
        >>> read_ids("mmvp-01, plotqa-02")
        ['mmvp-01', 'plotqa-02']
    """
    if value and value.startswith("@"):
        from crystalbench.errors import InputError

        path = Path(value[1:]).expanduser()
        if not path.is_file():
            raise InputError("ids file not found", path=path, field="ids")
        from crystalbench._internal.io import read_text_file

        text = read_text_file(path, what="ids file")
        return [line.strip() for line in text.splitlines() if line.strip()] or None
    return split_commas(value)


def given_texts(args: Sequence[str], flags: Sequence[Flag]) -> dict[str, tuple[str, str]] | None:
    """``{field: (spelling, text)}`` of the ``flags`` given in ``args`` (the last one wins,
    as when typer parses them); ``None`` when one of them lacks its value.

    A quick look at a command line without typer (the ``crystal`` entry point). Boolean
    pairs give ``"true"`` or ``"false"``.

    Examples:
        >>> cache = Flag("use_cache", ("--cache/--no-cache",), "Cache", kind=bool)
        >>> given_texts(["--no-cache"], [cache])
        {'use_cache': ('--no-cache', 'false')}
    """
    by_spelling: dict[str, tuple[Flag, str | None]] = {}
    for flag in flags:
        pair = flag.on_off
        if pair is not None:
            by_spelling.update({s: (flag, "true") for s in pair[0]})
            by_spelling.update({s: (flag, "false") for s in pair[1]})
            continue
        for spelling in flag.spellings:
            by_spelling[spelling] = (flag, None)
    found: dict[str, tuple[str, str]] = {}
    for index, arg in enumerate(args):
        if arg == "--":
            break
        spelling, eq, value = arg.partition("=")
        if spelling not in by_spelling:
            continue
        flag, fixed = by_spelling[spelling]
        if fixed is not None:
            found[flag.field] = (spelling, fixed)
            continue
        if not eq:
            if index + 1 >= len(args):
                return None
            value = args[index + 1]
        found[flag.field] = (spelling, value)
    return found
