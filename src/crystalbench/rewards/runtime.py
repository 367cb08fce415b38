"""One reward scorer per process for trainers that import a bare ``compute_score`` function.

verl and EasyR1 load a reward *function* from a file path, so the scorer it needs (encoder,
tau, caches) must be built on first use and kept for the life of the process. Settings come
from the function's keyword arguments (``reward_kwargs`` / ``reward_function_kwargs`` in the
trainer config), else from environment variables, else the paper defaults:

==========================  ==================================  =========================
keyword                     environment variable                default
==========================  ==================================  =========================
``server_url``              ``CRYSTAL_REWARD_SERVER``           none: score in process
``encoder``                 ``CRYSTAL_REWARD_ENCODER``          ``all-distilroberta-v1``
``tau``                     ``CRYSTAL_REWARD_TAU``              0.35
``device``                  ``CRYSTAL_REWARD_DEVICE``           ``cuda:$LOCAL_RANK`` / cpu
``allow_think``             ``CRYSTAL_REWARD_ALLOW_THINK``      false
``cache_dir``               ``CRYSTALBENCH_CACHE_DIR``          ``~/.cache/crystalbench``
(reference embeddings on    ``CRYSTAL_REWARD_DISK_CACHE=0``     on
disk)                       turns it off
==========================  ==================================  =========================

With a server URL, every rank sends its batches to one ``crystal serve-rewards`` process
and no encoder is loaded in the trainer at all.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from crystalbench.defaults import ENCODER, TAU
from crystalbench.rewards.trl import SignalSource
from crystalbench.rewards.types import FormatRules

__all__ = ["shared_source"]

_SOURCES: dict[tuple[Any, ...], SignalSource] = {}
_LOCK = threading.Lock()

_TRUE = ("1", "true", "yes", "on")


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def shared_source(
    *,
    server_url: str | None = None,
    encoder: str | None = None,
    tau: float | None = None,
    device: str | None = None,
    allow_think: bool | str | None = None,
    cache_dir: str | None = None,
) -> SignalSource:
    """The process-wide scorer (or reward-server client) for these settings.

    Examples:
        >>> shared_source(encoder="hash") is shared_source(encoder="hash")
        True
    """
    url = server_url or os.environ.get("CRYSTAL_REWARD_SERVER") or None
    think = _flag(
        allow_think if allow_think is not None else os.environ.get("CRYSTAL_REWARD_ALLOW_THINK")
    )
    if url:
        key: tuple[Any, ...] = ("remote", url)
    else:
        name = encoder or os.environ.get("CRYSTAL_REWARD_ENCODER") or ENCODER
        threshold = tau if tau is not None else float(os.environ.get("CRYSTAL_REWARD_TAU", TAU))
        where = device or os.environ.get("CRYSTAL_REWARD_DEVICE") or None
        key = ("local", name, threshold, where, think, cache_dir)
    with _LOCK:
        source = _SOURCES.get(key)
        if source is None:
            source = _build(key)
            _SOURCES[key] = source
        return source


def _build(key: tuple[Any, ...]) -> SignalSource:
    if key[0] == "remote":  # format rules, tau and encoder are the server's
        from crystalbench.rewards.client import RemoteRewardScorer

        return RemoteRewardScorer(key[1])
    _, name, threshold, where, think, cache_dir = key
    from crystalbench.rewards.encoder_loading import load_reward_encoder
    from crystalbench.rewards.scorer import RewardScorer

    store = None
    if name != "hash" and os.environ.get("CRYSTAL_REWARD_DISK_CACHE", "1") not in ("0", "false"):
        from crystalbench.encoders import default_cache_dir

        store = (Path(cache_dir) if cache_dir else default_cache_dir()) / "embeddings.sqlite"
    encoder = load_reward_encoder(name, device=where)
    return RewardScorer(
        encoder, tau=threshold, format_rules=FormatRules(allow_think=think), store=store
    )
