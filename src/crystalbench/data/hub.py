"""Reading hub-style tables: the hub itself, ``save_to_disk`` folders and Parquet files.

The one module that opens them, for the benchmark loader (:mod:`crystalbench.data.loading`,
``--benchmark``) and for the source adapters of ``crystal data build``
(:mod:`crystalbench.sources.reading`, ``--from``), so both accept the same layouts and
refuse them with the same messages:

- **hub**: ``datasets.load_dataset(repo, config, split=..., revision=...)``; an unreachable or
  gated hub raises :class:`~crystalbench.errors.BenchmarkUnavailableError` saying how to use a
  local copy instead (:func:`hub_unavailable`);
- **Parquet**: one ``.parquet`` file, or a folder (a hub snapshot) whose files are named
  ``SPLIT-00000-of-0000N[-hash].parquet``, ``SPLIT.parquet`` or ``SPLIT/NNNN.parquet``
  (:func:`find_split_files`);
- **save_to_disk**: a folder written by ``Dataset.save_to_disk`` or
  ``DatasetDict.save_to_disk``, where the split picks one of a ``DatasetDict``
  (:func:`load_saved`).

Images stay encoded (:func:`undecoded_images`): nothing decodes a picture before a caller asks
for it. ``datasets`` and ``pyarrow`` (the ``hub`` extra) are imported only inside these
functions, with an error naming the extra when they are missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crystalbench._internal.extras import require
from crystalbench.errors import BenchmarkUnavailableError, InputError

__all__ = [
    "HUB_ID_PATTERN",
    "datasets_module",
    "detect_local_revision",
    "find_split_files",
    "hub_unavailable",
    "is_save_to_disk",
    "load_hub",
    "load_saved",
    "pyarrow_parquet",
    "split_of_file",
    "undecoded_images",
]

HUB_ID_PATTERN = re.compile(r"[\w.-]+/[\w.-]+")
"""What a hub id looks like (``owner/name``)."""

_SHARD = re.compile(r"^(?P<split>.+?)-\d+-of-\d+(?:-[0-9a-fA-F]+)?$")


def datasets_module(what: str) -> Any:
    """The ``datasets`` package, or a clear error naming the extra that installs it."""
    return require("datasets", what=what, extra="hub")


def pyarrow_parquet(what: str) -> Any:
    """``pyarrow.parquet``, or a clear error naming the extra that installs it."""
    return require("pyarrow.parquet", what=what, extra="hub")


def undecoded_images(dataset: Any, columns: Sequence[str]) -> Any:
    """``dataset`` with its image ``columns`` read as stored (``{"bytes", "path"}`` structs,
    ``datasets.Image(decode=False)``); other columns and other datasets are left as they are."""
    datasets = datasets_module("reading images of a dataset")
    for column in columns:
        feature = dataset.features.get(column) if column in dataset.column_names else None
        if isinstance(feature, datasets.Image) and feature.decode:
            dataset = dataset.cast_column(column, datasets.Image(decode=False))
    return dataset


# --------------------------------------------------------------------------- the hub


def load_hub(
    hub_id: str,
    split: str,
    *,
    config: str | None = None,
    revision: str | None = None,
    option: str = "--from",
    alternatives: str = "",
) -> Any:
    """A hub dataset's split, loaded with ``datasets.load_dataset``.

    Args:
        hub_id: ``owner/name``.
        split: The split.
        config: The dataset's configuration, when it has several.
        revision: A commit, branch or tag.
        option: The command-line option a local copy is passed with (for the message).
        alternatives: More ways to pass a local copy, appended to the message.

    Raises:
        BenchmarkUnavailableError: No network, hub unreachable, or access not granted; the
            message explains how to pass a local copy instead. An unreachable hub is found
            out in seconds (:func:`crystalbench._internal.hub_probe.hub_unreachable_reason`), before
            ``datasets`` would spend minutes retrying; in offline mode (``HF_HUB_OFFLINE=1``)
            ``datasets`` is asked for the copy it cached.
    """
    import importlib.util

    from crystalbench._internal.hub_probe import hub_unreachable_reason, offline_mode

    if importlib.util.find_spec("datasets") is None:
        datasets_module(f"the hub dataset {hub_id}")  # raises, naming the extra
    reason = hub_unreachable_reason()
    if reason is not None and offline_mode() is None:
        raise hub_unavailable(
            hub_id,
            split,
            config=config,
            revision=revision,
            exc=ConnectionError(reason),
            option=option,
            alternatives=(alternatives + " " if alternatives else "")
            + "A copy an earlier download left in the datasets cache loads with "
            "HF_HUB_OFFLINE=1.",
        )
    datasets = datasets_module(f"the hub dataset {hub_id}")
    try:
        return datasets.load_dataset(hub_id, config, split=split, revision=revision)
    except Exception as exc:  # hub failures arrive as many exception types
        raise hub_unavailable(
            hub_id,
            split,
            config=config,
            revision=revision,
            exc=exc,
            option=option,
            alternatives=alternatives,
        ) from exc


# What the hub's libraries say when access is refused. Matched as words: a bare "401" would
# also match an address (a loopback port such as 40123 once made a silent hub read as gated).
_GATED = re.compile(
    r"\bgated\b|\b40[13]\s+(?:client\s+error|unauthorized|forbidden)\b|\bunauthorized\b"
    r"|\bforbidden\b|\baccess to (?:dataset|model|this resource)\b|\bis restricted\b"
    r"|\bauthentication\b",
    re.IGNORECASE,
)


def hub_unavailable(
    hub_id: str,
    split: str,
    *,
    config: str | None = None,
    revision: str | None = None,
    exc: BaseException,
    option: str = "--from",
    alternatives: str = "",
) -> BenchmarkUnavailableError:
    """The error for a hub dataset that cannot be loaded: why, and how to use a local copy.

    Examples:
        >>> error = hub_unavailable("org/data", "test", exc=OSError("offline"))
        >>> str(error).splitlines()[0]
        "cannot load org/data split 'test': the hub could not be reached (no network, \
HF_HUB_OFFLINE=1, or the hub is down). Details: OSError: offline"
    """
    text = f"{type(exc).__name__}: {exc}"
    gated = not isinstance(exc, ConnectionError) and _GATED.search(text) is not None
    reason = (
        "access is not granted (the dataset is gated: request access on its hub page, then "
        "`huggingface-cli login`)"
        if gated
        else "the hub could not be reached (no network, HF_HUB_OFFLINE=1, or the hub is down)"
    )
    what = hub_id + (f" config {config!r}" if config else "") + f" split {split!r}"
    if revision:
        what += f" revision {revision!r}"
    config_arg = f", {config!r}" if config else ""
    return BenchmarkUnavailableError(
        f"cannot load {what}: {reason}. Details: {text}\n"
        "To use a local copy, fetch it where the hub is reachable, then pass its folder "
        f"with {option}: a snapshot of the files (`huggingface-cli download {hub_id} "
        "--repo-type dataset --local-dir DIR`), or a folder saved with "
        f"`datasets.load_dataset({hub_id!r}{config_arg}, split={split!r})"
        f".save_to_disk(DIR)` ({option} DIR)." + (f" {alternatives}" if alternatives else "")
    )


def detect_local_revision(root: Path) -> str | None:
    """The hub commit a ``huggingface-cli download --local-dir`` snapshot was taken at.

    ``huggingface_hub`` writes one ``.cache/huggingface/download/**/*.metadata`` file per
    downloaded file whose first line is the commit hash. Returns it when every file agrees.

    Examples:
        >>> detect_local_revision(Path("/nonexistent")) is None
        True
    """
    folder = root / ".cache" / "huggingface" / "download"
    if not folder.is_dir():
        return None
    commits: set[str] = set()
    for meta in folder.rglob("*.metadata"):
        try:
            first = meta.read_text(encoding="utf-8").splitlines()[0].strip()
        except (OSError, UnicodeDecodeError, IndexError):
            continue
        if re.fullmatch(r"[0-9a-f]{40}", first):
            commits.add(first)
    return commits.pop() if len(commits) == 1 else None


# --------------------------------------------------------------------------- local copies


def is_save_to_disk(path: Path) -> bool:
    """True for a folder written by ``save_to_disk`` (a ``Dataset`` or a ``DatasetDict``)."""
    return path.is_dir() and (
        (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()
    )


def load_saved(path: Path, split: str) -> tuple[Any, str]:
    """A ``save_to_disk`` folder's dataset and its name (``split`` picks one of a
    ``DatasetDict``; a lone ``Dataset`` is taken as it is).

    Raises:
        InputError: The folder cannot be read, or a ``DatasetDict`` lacks ``split`` (the
            splits it has are listed).
    """
    datasets = datasets_module("a save_to_disk folder")
    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as exc:  # FileNotFoundError, JSON errors, Arrow errors
        raise InputError(f"not a readable save_to_disk folder ({exc})", path=path) from None
    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise InputError(
                f"no split {split!r} in this save_to_disk folder; splits: {', '.join(loaded)}",
                path=path,
            )
        return loaded[split], str(path / split)
    return loaded, str(path)


def split_of_file(path: Path) -> str:
    """The split a Parquet file holds, from the hub's naming conventions.

    Examples:
        >>> split_of_file(Path("data/test-00000-of-00001-3d8f6e2a.parquet"))
        'test'
        >>> split_of_file(Path("default/train/0003.parquet")), split_of_file(Path("mini.parquet"))
        ('train', 'mini')
    """
    stem = path.stem
    match = _SHARD.match(stem)
    if match is not None:
        return match.group("split")
    if stem.isdigit():
        return path.parent.name
    return stem


def find_split_files(
    root: Path, split: str, config: str | None, *, option: str = "--from"
) -> list[Path]:
    """The Parquet files of ``split`` under a snapshot folder.

    When the split appears in several folders (one per configuration, as in
    ``lmms-lab/ScienceQA``), the folder named after ``config`` is taken; otherwise the
    choice is refused as ambiguous.

    Raises:
        InputError: No file holds the split (the splits found are listed), or it is ambiguous.
    """
    found = [
        p
        for p in sorted(root.rglob("*.parquet"))
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]
    if not found:
        raise InputError(
            "no Parquet files in this folder (and not a save_to_disk folder)", path=root
        )
    matches = [p for p in found if split_of_file(p) == split]
    if not matches:
        splits = sorted({split_of_file(p) for p in found})
        raise InputError(
            f"no Parquet file for split {split!r}; splits found: {', '.join(splits)}", path=root
        )
    groups: dict[Path, list[Path]] = {}
    for path in matches:
        groups.setdefault(path.parent, []).append(path)
    if len(groups) == 1:
        return matches
    if config is not None:
        chosen = [g for g in groups if config in g.relative_to(root).parts]
        if len(chosen) == 1:
            return groups[chosen[0]]
    folders = ", ".join(str(g.relative_to(root)) for g in groups)
    raise InputError(
        f"split {split!r} is in several folders ({folders}); pass the one you mean with {option}",
        path=root,
    )
