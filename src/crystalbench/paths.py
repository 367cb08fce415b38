"""Where crystalbench keeps files nobody named: the cache folder.

A bottom-layer module (it imports only :mod:`crystalbench.settings`), so the encoders, the
judges, the reward server and the CLI all find the same folder without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from crystalbench.settings import CACHE_DIR_ENV

__all__ = ["default_cache_dir"]


def default_cache_dir() -> Path:
    """``$CRYSTALBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/crystalbench``, else ``~/.cache/...``.

    Embedding caches, judge caches and ONNX exports live under it.

    Examples:
        >>> isinstance(default_cache_dir(), Path)
        True
    """
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "crystalbench"
