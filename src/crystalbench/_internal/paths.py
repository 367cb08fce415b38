"""Where files are: the cache folder nobody named, and local paths told apart from hub ids.

A bottom-layer module (it imports only :mod:`crystalbench.config.settings` and
:mod:`crystalbench.errors`), so the encoders, the judges, the loaders, the reward server and the
CLI all find the same folder, and read an argument the same way, without importing each other:

- :func:`default_cache_dir`: embedding caches, judge caches and ONNX exports;
- :func:`local_path`: an argument that may be a local file or folder or a hub id
  (``--benchmark``, ``--from``, ``--items``, ``--encoder``). One that exists is a local path;
  one that *looks like* a local path and does not exist is refused as "no such file or folder"
  before any hub lookup (a mistyped ``src/MMVPX`` is not sent to the hub as ``owner/name``);
  anything else is left to the caller as a hub id or a name.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from crystalbench.config.settings import CACHE_DIR_ENV
from crystalbench.errors import InputError

__all__ = [
    "LOCAL_SUFFIXES",
    "close_names",
    "default_cache_dir",
    "local_path",
    "local_path_reason",
    "outermost_missing",
    "remove_empty_folders",
]

LOCAL_SUFFIXES: tuple[str, ...] = (
    ".jsonl",
    ".json",
    ".parquet",
    ".csv",
    ".tsv",
    ".arrow",
    ".txt",
    ".yaml",
    ".yml",
    ".toml",
    ".xlsx",
    ".onnx",
    ".safetensors",
)
"""File extensions that make an argument a local file (hub ids do not end in them)."""


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


def local_path_reason(text: str) -> str | None:
    """Why ``text`` reads as a local path rather than a hub id or a name, or ``None``.

    A local path starts with ``./``, ``../``, ``/`` or ``~`` (on Windows also ``.\\``, a
    drive letter or a backslash anywhere), ends in a data file's extension
    (:data:`LOCAL_SUFFIXES`), or sits in a folder that exists here (``src/MMVPX`` in a
    checkout, where ``src`` is a folder). A hub id (``owner/name``) whose ``owner`` is not a
    folder here is none of these.

    Examples:
        >>> local_path_reason("./runs/a.jsonl")
        "it starts with './'"
        >>> local_path_reason("preds.parquet")
        "it ends in '.parquet'"
        >>> local_path_reason("waybarrios/CRYSTAL") is None
        True
    """
    if not text:
        return None
    for prefix in ("./", "../", "/", "~", ".\\", "..\\"):
        if text.startswith(prefix):
            return f"it starts with {prefix!r}"
    if text in (".", ".."):
        return "it names a folder"
    if len(text) > 2 and text[1] == ":" and text[0].isalpha() and text[2] in "\\/":
        return "it starts with a drive letter"
    if "\\" in text:
        return "it holds a backslash"
    suffix = Path(text).suffix.lower()
    if suffix in LOCAL_SUFFIXES:
        return f"it ends in {suffix!r}"
    parent = Path(text).parent
    if str(parent) not in ("", ".") and parent.is_dir():
        return f"the folder {str(parent)!r} exists here"
    return None


def local_path(
    spec: str | Path, *, option: str | None = None, what: str | None = None
) -> Path | None:
    """The existing local file or folder ``spec`` names, ``None`` when it is not a local path.

    Args:
        spec: What the user passed (``~`` is expanded).
        option: The command-line option it came with (``--from``), named in the error.
        what: What it should have been (``benchmark``), named in the error.

    Returns:
        The path when it exists; ``None`` when ``spec`` does not look like a local path (the
        caller may read it as a hub id or a name).

    Raises:
        InputError: ``spec`` looks like a local path (:func:`local_path_reason`) and nothing
            is there: "no such file or folder", with the reason it reads as a path and, when
            its folder exists, the closest names in that folder.

    Examples:
        >>> local_path("waybarrios/CRYSTAL") is None
        True
        >>> local_path("./no-such-folder/preds.jsonl")
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: ./no-such-folder/preds.jsonl: no such file or folder \
(read as a local path: it starts with './'; a hub id looks like owner/name)
    """
    text = str(spec)
    path = Path(text).expanduser()
    if text and path.exists():
        return path
    reason = local_path_reason(text)
    if reason is None:
        return None
    close = close_names(path)
    hint = f"; did you mean {', '.join(repr(str(name)) for name in close)}?" if close else ""
    raise InputError(
        (f"{what} not found: " if what else "")
        + f"no such file or folder (read as a local path: {reason}; a hub id looks like "
        f"owner/name){hint}",
        path=text,
        field=option,
    )


def close_names(path: Path, extra: list[Path] | tuple[Path, ...] = ()) -> list[Path]:
    """The paths closest to a missing ``path``: names in its folder (when it exists) and
    ``extra`` candidates, by :func:`difflib.get_close_matches` on the names.

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "terse-precise.jsonl").write_text("")
        >>> [p.name for p in close_names(folder / "terse-precis.jsonl")]
        ['terse-precise.jsonl']
    """
    candidates: dict[str, Path] = {}
    parent = path.parent
    if path.name and parent.is_dir():
        try:
            for entry in sorted(parent.iterdir()):
                candidates.setdefault(entry.name, parent / entry.name)
        except OSError:
            pass
    for other in extra:
        candidates.setdefault(other.name, other)
    # A shared extension (.jsonl) makes any two names look alike: compare what precedes it.
    suffix = path.suffix

    def bare(name: str) -> str:
        return name[: -len(suffix)] if suffix and name.endswith(suffix) else name

    by_bare: dict[str, Path] = {}
    for name, candidate in candidates.items():
        by_bare.setdefault(bare(name), candidate)
    close = difflib.get_close_matches(bare(path.name), list(by_bare), n=3, cutoff=0.7)
    return [by_bare[name] for name in close]


def outermost_missing(folder: Path) -> Path | None:
    """The outermost of ``folder`` and its parents that does not exist yet (``None``: it
    exists): what ``folder.mkdir(parents=True)`` creates, and a failed start removes
    (:func:`remove_empty_folders`)."""
    missing = None
    for path in (folder, *folder.parents):
        if path.exists():
            break
        missing = path
    return missing


def remove_empty_folders(folder: Path, up_to: Path) -> None:
    """Remove ``folder`` and its parents up to ``up_to`` included, while they are empty."""
    for path in (folder, *folder.parents):
        try:
            path.rmdir()
        except OSError:
            return
        if path == up_to:
            return
