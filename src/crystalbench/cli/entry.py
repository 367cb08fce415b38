"""The ``crystal`` console script: each command starts without building the others.

Building the full :data:`crystalbench.cli.main.app` imports every command module, their
config models, and has typer convert the parameters of every command. ``crystal NAME ...``
builds a one-command app from the very same function (or the very same group, for
``crystal data ...``), so options, help, errors and exit codes are the same, and only
that command's modules are imported. ``crystal``, ``crystal --help`` and an unknown name
go through the full app.

``crystal score`` goes further: the sentence encoder starts loading on a background thread
before typer is even imported (:func:`start_encoder`), from a quick look at the command
line with the flags :mod:`crystalbench.cli.score_options` declares.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crystalbench.cli.commands import COMMANDS, GROUPS, load


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``crystal`` with ``argv`` (default: ``sys.argv[1:]``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    name = args[0] if args else None
    if name in COMMANDS or name in GROUPS:
        early = start_encoder(args[1:]) if name == "score" else None
        try:
            fast_app(name)(args[1:], prog_name=f"crystal {name}")
        finally:
            if early is not None:
                from crystalbench.encoders import early_encoder

                early_encoder(early[0])  # not taken (the flags named another): drop it
                early[1].close()
        return
    from crystalbench.cli.main import app

    app(args, prog_name="crystal")


def encoder_fields() -> frozenset[str]:
    """The :class:`~crystalbench.config.scoring.ScoreConfig` fields that decide which encoder
    ``crystal score`` builds: ``encoder`` and every keyword of
    :func:`crystalbench.encoders.load_encoder` (derived, so a new encoder option is never
    missed; :meth:`ScoreConfig.encoder_options` passes exactly those).

    Examples:
        >>> {"encoder", "device", "cache_dir", "workers"} <= encoder_fields()
        True
    """
    from crystalbench.encoders import load_encoder

    keywords = inspect.signature(load_encoder).parameters
    return frozenset({"encoder", *(name for name in keywords if name != "name")})


def encoder_key(name: str, options: Mapping[str, Any]) -> tuple[object, ...]:
    """The key an early encoder is kept under: ``name`` and every
    :func:`~crystalbench.encoders.load_encoder` keyword, defaults filled in, as text, with
    the cache folder resolved (``None`` is ``$CRYSTALBENCH_CACHE_DIR`` or the default).

    Examples:
        >>> encoder_key("hash", {"workers": 2}) == encoder_key("hash", {"workers": "2"})
        True
        >>> encoder_key("hash", {}) == encoder_key("hash", {"dtype": "float32"})
        True
    """
    from crystalbench._internal.paths import default_cache_dir
    from crystalbench.encoders import load_encoder

    bound = inspect.signature(load_encoder).bind(name, **options)
    bound.apply_defaults()
    values = dict(bound.arguments)
    folder = values.get("cache_dir")
    values["cache_dir"] = Path(folder).expanduser() if folder else default_cache_dir()

    def text(value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, (list, tuple)):
            return ",".join(map(str, value))
        return str(value)

    return ("score", *sorted((key, text(value)) for key, value in values.items()))


def score_encoder_hint(args: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """``(encoder name, load_encoder keywords)`` that ``crystal score ARGS`` asks for, read
    from the flags that set :func:`encoder_fields` (declared once, in
    :data:`~crystalbench.cli.score_options.SCORE_FLAGS`); ``None`` when a ``--config``
    file may change the encoder, or a value is missing or malformed.

    A hint only: ``crystal score`` parses its arguments itself and uses the encoder started
    from the hint only when its own config gives the same :func:`encoder_key`.

    Examples:
        >>> score_encoder_hint(["-b", "B", "-p", "P", "-o", "O", "--encoder=hash"])
        ('hash', {})
        >>> score_encoder_hint(["--encoder", "minilm-offline", "--workers", "2", "--tau", "0.4"])
        ('minilm-offline', {'workers': 2})
        >>> score_encoder_hint(["-b", "B", "--config", "c.yaml"]) is None
        True
    """
    from crystalbench.cli.flags import given_texts
    from crystalbench.cli.score_options import SCORE_CONFIG_AT, SCORE_FLAGS
    from crystalbench.defaults import ENCODER

    wanted = {f"{SCORE_CONFIG_AT}.{name}" for name in encoder_fields()}
    flags = [flag for flag in SCORE_FLAGS if flag.field in wanted]
    head = list(args[: args.index("--")] if "--" in args else args)
    if any(arg.partition("=")[0] == "--config" for arg in head):
        return None
    found = given_texts(args, flags)
    if found is None:
        return None
    by_field = {flag.field: flag for flag in flags}
    options: dict[str, Any] = {}
    try:
        for field, (_, text) in found.items():
            options[field.removeprefix(SCORE_CONFIG_AT + ".")] = by_field[field].from_text(text)
    except (ValueError, TypeError):  # the command will say what is wrong
        return None
    name = options.pop("encoder", None) or ENCODER
    return name, options


def start_encoder(args: Sequence[str]) -> tuple[tuple[object, ...], Any] | None:
    """Build the encoder ``crystal score ARGS`` will use and start loading its model in
    the background before typer and the scoring code are even imported (ONNX Runtime with
    a cached export: the session loads beside that work). Returns ``(key, encoder)``, the
    encoder being kept under ``key`` for the command to take (:func:`taken_encoder`), or
    ``None`` when nothing started."""
    hint = score_encoder_hint(args)
    if hint is None:
        return None
    from crystalbench.encoders import keep_early_encoder, load_encoder, preload_encoder

    name, options = hint
    try:
        encoder = load_encoder(name, **options)
        if not preload_encoder(encoder):
            return None
        key = encoder_key(name, options)
    except Exception:  # only a head start: the command builds the encoder again from its
        return None  # own parsed flags and reports any error in its own words
    keep_early_encoder(key, encoder)
    return key, encoder


def taken_encoder(config: Any) -> Any:
    """The encoder the entry point started for this
    :class:`~crystalbench.config.scoring.ScoreConfig`
    (``None`` when it started none, or one for other values); taken once."""
    from crystalbench.encoders import early_encoder

    return early_encoder(encoder_key(config.encoder, config.encoder_options()))


def fast_app(name: str) -> Any:
    """A typer app holding only ``crystal NAME``: the group itself, or a one-command app of
    the top-level command; ``crystal NAME ARGS`` runs it as ``fast_app(NAME)(ARGS)``."""
    if name in GROUPS:
        return load(GROUPS[name])
    from crystalbench.cli.apps import new_app

    app = new_app()
    app.command(name)(load(COMMANDS[name]))  # the command class and old spellings of main's
    return app


if __name__ == "__main__":  # pragma: no cover
    main()
