"""Commands whose options are one pydantic config: :func:`configured`.

A command declares its config model and its :class:`~crystalbench.cli.flags.Flag` list;
:func:`configured` gives it one typer option per flag (default: the config's own default,
shown by ``--help``), and a ``--config FILE`` option; when it
runs, the flags the user typed, the file and the environment variables the model
documents are merged by :func:`crystalbench.config.loader.build_config`, and the command
receives the validated config. A bad value is an ``InputError`` naming the field and the
flag as typed (``--tau 7``), the variable, or the file and line.

::

    @handle_errors
    @configured(LeaderboardConfig, LEADERBOARD_FLAGS)
    def leaderboard(config: LeaderboardConfig, quiet: Quiet = False) -> None:
        ...
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from pydantic import BaseModel

from crystalbench.cli.apps import SPELLINGS_META
from crystalbench.cli.flags import Flag

__all__ = ["CONFIG_PARAM", "SET_PARAM", "configured", "field_default", "field_info"]

CONFIG_PARAM = "config_file"
"""The parameter of the ``--config FILE`` option."""
SET_PARAM = "set_values"
"""The parameter of the ``--set KEY=VALUE`` option."""
_CONTEXT_PARAM = "_crystal_context"


def configured(
    model: type[BaseModel],
    flags: Sequence[Flag],
    *,
    into: str = "config",
    config_at: str | None = "",
    config_help: str | None = None,
    config_file: Callable[[str], Path] | None = None,
    config_required: bool = False,
    set_option: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make a typer command take ``model`` built from ``flags``, ``--config`` and the
    environment.

    Args:
        model: The config model.
        flags: The options (and arguments) that set its fields.
        into: The command parameter that receives the config.
        config_at: Where a ``--config`` file's fields go in ``model`` (``""``: the whole
            model; ``"scoring"``: its ``scoring`` part); ``None``: no ``--config``.
        config_help: ``--help`` text of ``--config``.
        config_file: Turns the text given to ``--config`` into the file to read (e.g.
            ``recipe:NAME`` into a bundled file); default: the text is the path.
        config_required: ``--config`` must be given (the file holds required fields).
        set_option: Add ``--set KEY=VALUE`` (repeatable): any field of the ``--config``
            part of the model, dotted, with a YAML value; the other flags win over it.

    The command's own parameters before ``into`` are listed first in ``--help``, then the
    flags, then ``--config``, then the parameters after ``into``.
    """

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        own = list(signature.parameters.values())
        at = next(i for i, p in enumerate(own) if p.name == into)
        before = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own[:at]]
        after = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own[at + 1 :]]
        added = [_parameter(model, flag, config_at) for flag in flags]
        if config_at is not None:
            added.append(_config_parameter(model, config_help, config_file, config_required))
        if set_option:
            added.append(_set_parameter())
        context = inspect.Parameter(
            _CONTEXT_PARAM, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
        )
        hints = {flag.field: "/".join(flag.spellings[:1]) for flag in flags}

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            from crystalbench.config.loader import build_config

            ctx = kwargs.pop(_CONTEXT_PARAM)
            path = kwargs.pop(CONFIG_PARAM, None)
            if path is not None and config_file is not None:
                path = config_file(path)
            given = _set_values(kwargs.pop(SET_PARAM, None), config_at or "")
            given.update(_given(ctx, flags, kwargs))
            files: list[tuple[Path, str]] = []
            if path is not None:
                files.append((path, config_at or ""))
            config = build_config(model, files=files, flags=given, hints=hints)
            return command(**{into: config}, **kwargs)

        parameters = [*before, *added, *after, context]
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters, return_annotation=signature.return_annotation
        )
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper

    return decorate


def _given(ctx: Any, flags: Sequence[Flag], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``{field: Given}`` of the flags the user gave (popped from ``kwargs``)."""
    from crystalbench.config.loader import Given

    typed: dict[str, tuple[str, str]] = ctx.meta.get(SPELLINGS_META, {})
    given: dict[str, Given] = {}
    for flag in flags:
        value = kwargs.pop(flag.param)
        source = ctx.get_parameter_source(flag.param)
        if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT", "PROMPT"):
            continue
        spelling, shown = typed.get(flag.param) or (flag.spellings[0], None)
        if flag.convert is not None and value is not None:
            value = flag.convert(value)
        given[flag.field] = Given(value, spelling, text=shown)
    return given


# --------------------------------------------------------------------------- parameters
def field_info(model: type[BaseModel], dotted: str) -> Any:
    """The pydantic ``FieldInfo`` of a (dotted) field of ``model``.

    Examples:
        >>> from crystalbench.scoring.job import ScoreJob
        >>> field_info(ScoreJob, "scoring.threshold").default
        0.35
    """
    *parents, leaf = dotted.split(".")
    current: Any = model
    for parent in parents:
        current = _model_of(current.model_fields[parent].annotation)
    return current.model_fields[leaf]


def field_default(model: type[BaseModel], dotted: str) -> Any:
    """The default of a (dotted) field of ``model`` (``...`` when it is required)."""
    info = field_info(model, dotted)
    if info.is_required():
        return ...
    return info.get_default(call_default_factory=True)


def _model_of(annotation: Any) -> Any:
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    raise TypeError(f"{annotation!r} is no pydantic model")


def _literal_choices(annotation: Any) -> tuple[Any, ...] | None:
    """The values of a ``Literal`` (inside ``Optional`` too), else ``None``."""
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    for argument in typing.get_args(annotation):
        found = _literal_choices(argument)
        if found:
            return found
    return None


def _core_types(annotation: Any) -> set[Any]:
    args = typing.get_args(annotation)
    if not args or typing.get_origin(annotation) in (list, dict, typing.Literal):
        return {typing.get_origin(annotation) or annotation}
    return {t for arg in args for t in _core_types(arg)} - {type(None)}


def _parameter(model: type[BaseModel], flag: Flag, config_at: str | None) -> inspect.Parameter:
    """The typer parameter of one flag."""
    info = field_info(model, flag.field)
    default = field_default(model, flag.field)
    cores = _core_types(info.annotation)
    if flag.convert is None and flag.kind in (str,) and cores & {int, float}:
        raise TypeError(f"flag {flag.names[0]}: field {flag.field} is a number; give kind=")
    metavar = flag.metavar
    choices = _literal_choices(info.annotation)
    if metavar is None and choices and flag.kind is str:
        metavar = "[" + "|".join(map(str, choices)) + "]"
    from_file = config_at is not None and (config_at == "" or flag.field.startswith(config_at))
    required = flag.required and not from_file
    shown: bool | str = True
    help_text = flag.help
    if flag.required and not required:
        help_text += " (required: here or in --config)"
    if default is ... or default is None or flag.convert is not None:
        default = ... if required else None
        shown = False if flag.required else (flag.default_text or _missing_default(flag))
    elif isinstance(default, list):  # the field takes the text (a validator splits it)
        shown = flag.default_text or ",".join(map(str, default)) or _missing_default(flag)
        default = None
    elif flag.default_text is not None:
        shown = flag.default_text
    kind: Any = flag.kind if default is not None and default is not ... else Optional[flag.kind]  # noqa: UP045
    if flag.argument:
        info_object = typer.Argument(
            metavar=flag.names[0], help=help_text, show_default=shown, show_choices=True
        )
    else:
        info_object = typer.Option(*flag.names, help=help_text, metavar=metavar, show_default=shown)
    annotation = Annotated[kind, info_object]
    return inspect.Parameter(
        flag.param,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=annotation,
    )


def _missing_default(flag: Flag) -> str:
    raise TypeError(
        f"flag {flag.names[0]} ({flag.field}) has no default to show: give default_text="
    )


def _config_parameter(
    model: type[BaseModel],
    help_text: str | None,
    resolve: Callable[[str], Path] | None,
    required: bool,
) -> inspect.Parameter:
    text = help_text or f"YAML, JSON or TOML file with {model.__name__} fields; flags win"
    option = typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help=text,
        show_default=False if required else "none",
    )
    kind: Any = str if resolve is not None else Path
    return inspect.Parameter(
        CONFIG_PARAM,
        inspect.Parameter.KEYWORD_ONLY,
        default=... if required else None,
        annotation=Annotated[kind if required else Optional[kind], option],  # noqa: UP045
    )


def _set_parameter() -> inspect.Parameter:
    option = typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set any field of the config file, dotted, to a YAML value (e.g. "
        "grpo.max_steps=20); repeatable; the other flags win",
        show_default="none",
    )
    return inspect.Parameter(
        SET_PARAM,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[Optional[list[str]], option],  # noqa: UP045
    )


def _set_values(pairs: Sequence[str] | None, at: str) -> dict[str, Any]:
    """``{field: Given}`` of ``--set KEY=VALUE`` options (fields under ``at``).

    Examples:
        >>> found = _set_values(["grpo.max_steps=20", "seed=7"], "train")
        >>> {name: given.value for name, given in found.items()}
        {'train.grpo.max_steps': 20, 'train.seed': 7}
    """
    import yaml

    from crystalbench.config.loader import Given
    from crystalbench.errors import InputError

    found: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise InputError(f"expects KEY=VALUE, got {pair!r}", field="--set")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise InputError(f"{text!r} is not a YAML value", field=f"--set {key}") from None
        found[f"{at}.{key}" if at else key] = Given(value, "--set", text=pair)
    return found
