"""``crystal cache``: where the embedding cache lives, how big it is, and clearing it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crystalbench.cli.common import console, handle_errors

app = typer.Typer(help="Inspect or clear the on-disk embedding cache.", no_args_is_help=True)


@app.command("info")
@handle_errors
def info(
    cache_dir: Annotated[Path | None, typer.Option(help="Cache folder")] = None,
) -> None:
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
    cache_dir: Annotated[Path | None, typer.Option(help="Cache folder")] = None,
    encoder: Annotated[str | None, typer.Option(help="Only this encoder identity")] = None,
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
