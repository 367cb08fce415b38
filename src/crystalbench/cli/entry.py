"""The ``crystal`` console script: ``crystal score`` starts without building the other commands.

Building the full :data:`crystalbench.cli.main.app` imports every command module and has
typer convert the parameters of all 29 commands, about 0.4 s before any work starts. The
commands listed in :data:`FAST_COMMANDS` are the ones a user runs over and over from a
shell loop; for them this entry point builds a one-command app from the very same
function, so options, help, errors and exit codes are the same. Everything else (and
``crystal``, ``crystal --help``) goes through the full app.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FAST_COMMANDS = ("score",)
"""Top-level commands started on their own (no sub-apps among them)."""


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``crystal`` with ``argv`` (default: ``sys.argv[1:]``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in FAST_COMMANDS:
        early = start_encoder(args[1:]) if args[0] == "score" else None
        try:
            fast_app(args[0])(args[1:], prog_name=f"crystal {args[0]}")
        finally:
            if early is not None:
                from crystalbench.encoders import early_encoder

                early_encoder(early[0])  # not taken (the flags named another): drop it
                early[1].close()  # a no-op when the command took it (and closed it)
        return
    from crystalbench.cli.main import app

    app(args, prog_name="crystal")


_SCORE_ENCODER_FLAGS = ("--encoder", "--cache-dir", "--device")
_SCORE_OTHER_ENCODER_FLAGS = (
    "--config",
    "--backend",
    "--workers",
    "--devices",
    "--batch-size",
    "--dtype",
)


def score_encoder_hint(args: Sequence[str]) -> tuple[str | None, str | None, str | None] | None:
    """``(--encoder, --device, --cache-dir)`` of ``crystal score ARGS`` (``None``: not given)
    when no other flag can change the encoder, else ``None``.

    A hint only: ``crystal score`` parses its arguments itself and uses the encoder started
    from the hint only when its own values are the same (see :func:`start_encoder`).

    Examples:
        >>> score_encoder_hint(["-b", "B", "-p", "P", "-o", "O", "--encoder=hash"])
        ('hash', None, None)
        >>> score_encoder_hint(["-b", "B", "--config", "c.yaml"]) is None
        True
    """
    found: dict[str, str] = {}
    for index, arg in enumerate(args):
        if arg == "--":
            break
        flag, eq, value = arg.partition("=")
        if flag in _SCORE_OTHER_ENCODER_FLAGS:
            return None
        if flag in _SCORE_ENCODER_FLAGS:
            if not eq:
                if index + 1 >= len(args):
                    return None
                value = args[index + 1]
            found[flag] = value
    folder = found.get("--cache-dir")
    return found.get("--encoder"), found.get("--device"), str(Path(folder)) if folder else None


def start_encoder(args: Sequence[str]) -> tuple[tuple[object, ...], Any] | None:
    """Build the encoder ``crystal score ARGS`` will use and start loading its model in
    the background before typer and the scoring code are even imported (ONNX Runtime with
    a cached export: the session loads beside that work). Returns ``(key, encoder)``, the
    encoder being kept under ``key`` for the command to take
    (:func:`crystalbench.encoders.early_encoder`), or ``None`` when nothing started."""
    hint = score_encoder_hint(args)
    if hint is None:
        return None
    from crystalbench.defaults import ENCODER
    from crystalbench.encoders import keep_early_encoder, load_encoder, preload_encoder

    name, device, folder = hint
    try:
        encoder = load_encoder(name or ENCODER, device=device, cache_dir=folder)
        if not preload_encoder(encoder):
            return None
    except Exception:  # only a head start: the command builds the encoder again from its
        return None  # own parsed flags and reports any error in its own words
    key = ("score", name or ENCODER, device, folder)
    keep_early_encoder(key, encoder)
    return key, encoder


def fast_app(name: str) -> Any:
    """A ``typer.Typer`` holding only the top-level command ``name`` (see
    :data:`FAST_COMMANDS`); ``crystal NAME ARGS`` runs it as ``fast_app(NAME)(ARGS)``."""
    if name == "score":
        from crystalbench.cli.score import score as command
    else:  # pragma: no cover - FAST_COMMANDS and this table change together
        raise KeyError(name)
    from crystalbench.cli.apps import new_app

    app = new_app()
    app.command(name)(command)
    return app


if __name__ == "__main__":  # pragma: no cover
    main()
