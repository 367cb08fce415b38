"""``crystal cache``: where the embedding cache lives, how big it is, and clearing it.

Neither command creates a cache: on a folder without one they say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from crystalbench.cli.apps import new_app
from crystalbench.cli.common import Quiet, console, handle_errors

app = new_app(help="Inspect or clear the on-disk embedding cache.", no_args_is_help=True)

CacheDir = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        metavar="FOLDER",
        help="Embedding cache folder",
        show_default="$CRYSTALBENCH_CACHE_DIR, else ~/.cache/crystalbench",
    ),
]


@app.command("info")
@handle_errors
def info(cache_dir: CacheDir = None) -> None:
    """Show the cache location, size and entries per encoder (read only: creates nothing)."""
    from crystalbench.encoders.cache import inspect_cache

    summary = inspect_cache(cache_dir)
    if not summary.exists:
        console.print(f"no embedding cache at {summary.path}", highlight=False)
        return
    console.print(f"cache file: {summary.path}", highlight=False)
    console.print(f"size: {summary.size_bytes / 1e6:.1f} MB")
    for encoder, count in sorted(summary.entries.items()):
        console.print(f"  {encoder}: {count} embeddings", highlight=False)


@app.command("clear")
@handle_errors
def clear(
    cache_dir: CacheDir = None,
    encoder: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            metavar="IDENTITY",
            help="Only this encoder's embeddings (its identity, as `crystal cache info` lists it)",
            show_default="every encoder",
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Delete cached embeddings (all, or one encoder identity's)."""
    from crystalbench.encoders import EmbeddingStore
    from crystalbench.encoders.cache import inspect_cache

    summary = inspect_cache(cache_dir)
    if not summary.exists:
        console.print(f"no embedding cache at {summary.path}: nothing to clear", highlight=False)
        return
    store = EmbeddingStore.default(cache_dir)
    removed = store.clear(encoder)
    console.print(f"removed {removed} embeddings from {store.path}")
