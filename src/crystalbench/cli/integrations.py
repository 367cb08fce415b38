"""``crystal integrations``: crystalbench inside other harnesses (the lmms-eval task)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.common import console, handle_errors
from crystalbench.defaults import ENCODER

integrations_app = typer.Typer(
    help="Use crystalbench inside other evaluation harnesses.",
    no_args_is_help=True,
    add_completion=False,
)


@integrations_app.command("lmms-eval")
@handle_errors
def lmms_eval(
    install: Annotated[
        Path,
        typer.Option(
            "--install",
            help="Folder to write the task into (as DIR/crystal); run lmms-eval with "
            "--include_path DIR --tasks crystal",
        ),
    ],
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark",
            "-b",
            help="sample, waybarrios/CRYSTAL, a save_to_disk folder, a .parquet or .jsonl file",
        ),
    ],
    encoder: Annotated[str, typer.Option(help="Sentence encoder the task scores with")] = ENCODER,
    prompt: Annotated[
        str | None, typer.Option(help="Prompt template file [default: infer_v1]")
    ] = None,
    image_root: Annotated[
        Path | None,
        typer.Option(help="Folder item images may lie in besides the benchmark file's folder"),
    ] = None,
) -> None:
    """Install the CRYSTAL task for lmms-eval: crystal.yaml, utils.py and the docs."""
    from crystalbench.integrations.lmms_eval.task import install_task

    target = install_task(install, benchmark, encoder=encoder, prompt=prompt, image_root=image_root)
    console.print(f"wrote the CRYSTAL task into [bold]{target}[/]", highlight=False)
    console.print(
        f"next: lmms-eval --include_path {install} --tasks crystal --log_samples ...",
        highlight=False,
        markup=False,
    )
