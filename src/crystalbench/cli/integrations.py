"""``crystal integrations``: crystalbench inside other harnesses (the lmms-eval task)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from crystalbench.cli.apps import new_app
from crystalbench.cli.common import Quiet, console, handle_errors
from crystalbench.defaults import ENCODER

integrations_app = new_app(
    help="Use crystalbench inside other evaluation harnesses.", no_args_is_help=True
)


@integrations_app.callback()
def integrations() -> None:
    """Use crystalbench inside other evaluation harnesses."""
    # A group of one command needs a callback: without one, typer runs that command as the
    # app itself, and the console script's `crystal integrations lmms-eval` (which builds
    # this group alone, crystalbench.cli.entry.fast_app) would reject "lmms-eval".


@integrations_app.command("lmms-eval")
@handle_errors
def lmms_eval(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            metavar="FOLDER",
            help="Folder to write the task into (as FOLDER/crystal); run lmms-eval with "
            "--include_path FOLDER --tasks crystal",
        ),
    ],
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark",
            "-b",
            metavar="BENCHMARK",
            help="sample, waybarrios/CRYSTAL, a save_to_disk folder, a .parquet or .jsonl file",
        ),
    ],
    encoder: Annotated[
        str, typer.Option(metavar="NAME", help="Sentence encoder the task scores with")
    ] = ENCODER,
    prompt_file: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--prompt-file",
            metavar="FILE",
            help="Prompt template file with {question} and {options}",
            show_default="built-in infer_v1",
        ),
    ] = None,
    image_root: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            metavar="FOLDER",
            help="A folder item images may lie in besides the benchmark file's own folder",
            show_default="none",
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Install the CRYSTAL task for lmms-eval: crystal.yaml, utils.py and the docs."""
    from crystalbench.integrations.lmms_eval.task import install_task

    target = install_task(
        out, benchmark, encoder=encoder, prompt=prompt_file, image_root=image_root
    )
    console.print(f"wrote the CRYSTAL task into [bold]{target}[/]", highlight=False)
    console.print(
        f"next: lmms-eval --include_path {out} --tasks crystal --log_samples ...",
        highlight=False,
        markup=False,
    )
