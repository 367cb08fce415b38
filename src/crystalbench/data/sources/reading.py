"""Reading a source's rows from the hub or from a local copy in its published layout.

Table layouts shared by most sources:

- **hub**: ``datasets.load_dataset(repo, config, split=..., revision=...)``; unreachable or
  gated hubs raise :class:`~crystalbench.errors.BenchmarkUnavailableError` saying how to use a
  local copy instead;
- **Parquet**: one ``.parquet`` file, or a folder (a hub snapshot) whose files are named
  ``SPLIT-00000-of-0000N[-hash].parquet``, ``SPLIT.parquet`` or ``SPLIT/NNNN.parquet``,
  read with pyarrow without decoding images;
- **save_to_disk**: a folder written by ``Dataset.save_to_disk`` or
  ``DatasetDict.save_to_disk`` (then ``--split`` picks the split).

Sources with their own layouts (MMVP's CSV, PlotQA's and TextVQA's JSON) read them in their
adapter modules and reuse :class:`RecordRows`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from crystalbench.data.sources.rows import BUILD_BATCH_ROWS, RowRef, UpstreamRow
from crystalbench.errors import BenchmarkUnavailableError, InputError

HUB_ID_PATTERN = re.compile(r"[\w.-]+/[\w.-]+")
"""What a hub id looks like (``owner/name``)."""

_SHARD = re.compile(r"^(?P<split>.+?)-\d+-of-\d+(?:-[0-9a-fA-F]+)?$")


def datasets_module(what: str) -> Any:
    """The ``datasets`` package, or a clear error naming the extra that installs it."""
    try:
        import datasets
    except ImportError as exc:
        raise BenchmarkUnavailableError(
            f"{what} needs the 'datasets' package: pip install 'crystalbench[hub]'"
        ) from exc
    return datasets


def pyarrow_parquet(what: str) -> Any:
    """``pyarrow.parquet``, or a clear error naming the extra that installs it."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise BenchmarkUnavailableError(
            f"{what} needs the 'pyarrow' package: pip install 'crystalbench[hub]'"
        ) from exc
    return pq


# ---------------------------------------------------------------------------------------------
# Row sources
# ---------------------------------------------------------------------------------------------


class ParquetRows:
    """Rows of Parquet files, in file order, read in batches with pyarrow.

    Image structs stay encoded (``{"bytes": ..., "path": ...}``); a text-only pass does not
    read the image columns at all.
    """

    kind = "parquet"

    def __init__(self, files: Sequence[Path], image_columns: Sequence[str]) -> None:
        self._pq = pyarrow_parquet("reading Parquet files")
        self.paths = [Path(f) for f in files]
        self.files = [str(f) for f in self.paths]
        self.image_columns = tuple(image_columns)
        self._rows: list[int] = []
        names: list[str] | None = None
        for path in self.paths:
            try:
                handle = self._pq.ParquetFile(path)
            except Exception as exc:  # pyarrow raises ArrowInvalid, OSError...
                raise InputError(f"not a readable Parquet file ({exc})", path=path) from None
            file_names = list(handle.schema_arrow.names)
            if names is None:
                names = file_names
            elif set(file_names) != set(names):
                raise InputError(
                    f"columns {sorted(file_names)} differ from the first file's {sorted(names)}",
                    path=path,
                )
            self._rows.append(handle.metadata.num_rows)
        self.columns: list[str] = names or []

    def count(self) -> int | None:
        """Rows over all files, from the Parquet metadata."""
        return sum(self._rows)

    def rows(self, *, with_images: bool) -> Iterator[UpstreamRow]:
        """Every row; image columns only when ``with_images``."""
        wanted = [c for c in self.columns if with_images or c not in self.image_columns]
        index = 0
        for path in self.paths:
            handle = self._pq.ParquetFile(path)
            in_file = 0
            try:
                batches = handle.iter_batches(batch_size=BUILD_BATCH_ROWS, columns=wanted)
                for batch in batches:
                    for record in batch.to_pylist():
                        yield UpstreamRow(RowRef(str(path), in_file), record, index)
                        in_file += 1
                        index += 1
            except InputError:
                raise
            except Exception as exc:  # a truncated or corrupt file fails mid-read
                raise InputError(
                    f"cannot read Parquet after row {in_file} ({type(exc).__name__}: {exc})",
                    path=path,
                ) from None


class DatasetRows:
    """Rows of a ``datasets.Dataset`` (a ``save_to_disk`` folder or a hub download)."""

    def __init__(
        self,
        dataset: Any,
        *,
        name: str,
        kind: str,
        image_columns: Sequence[str],
        files: Sequence[str] | None = None,
    ) -> None:
        datasets = datasets_module("reading a datasets folder")
        for column in image_columns:
            if column in dataset.column_names and isinstance(
                dataset.features[column], datasets.Image
            ):
                dataset = dataset.cast_column(column, datasets.Image(decode=False))
        self.dataset = dataset
        self.name = name
        self.kind = kind
        self.files = list(files) if files is not None else [name]
        self.image_columns = tuple(image_columns)
        self.columns: list[str] = list(dataset.column_names)

    def count(self) -> int | None:
        """Rows in the dataset."""
        return len(self.dataset)

    def rows(self, *, with_images: bool) -> Iterator[UpstreamRow]:
        """Every row; image columns only when ``with_images``."""
        wanted = [c for c in self.columns if with_images or c not in self.image_columns]
        if not wanted:
            return
        table = (
            self.dataset
            if len(wanted) == len(self.columns)
            else self.dataset.select_columns(wanted)
        )
        index = 0
        for batch in table.iter(batch_size=BUILD_BATCH_ROWS):
            size = len(batch[wanted[0]])
            for position in range(size):
                record = {column: batch[column][position] for column in wanted}
                yield UpstreamRow(RowRef(self.name, index), record, index)
                index += 1


class RecordRows:
    """Rows already in memory (read from CSV or JSON), wrapped one by one as they are read.

    Args:
        kind: Layout (``csv``, ``json``).
        files: Files the records come from.
        records: The records, in order.
        ref: Where record ``i`` lives (file and row or line).
    """

    def __init__(
        self,
        kind: str,
        files: Sequence[str],
        records: Sequence[Mapping[str, Any]],
        ref: Callable[[int], RowRef],
    ) -> None:
        self.kind = kind
        self.files = list(files)
        self.records = records
        self.ref = ref
        self.columns: list[str] = list(records[0]) if records else []

    def count(self) -> int | None:
        """Rows read."""
        return len(self.records)

    def rows(self, *, with_images: bool) -> Iterator[UpstreamRow]:
        """Every row (images are read by the adapter from the copy's folder)."""
        del with_images
        for index, record in enumerate(self.records):
            yield UpstreamRow(self.ref(index), record, index)


# ---------------------------------------------------------------------------------------------
# Opening a local table copy
# ---------------------------------------------------------------------------------------------


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


def find_split_files(root: Path, split: str, config: str | None) -> list[Path]:
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
        f"split {split!r} is in several folders ({folders}); pass the one you mean with --from",
        path=root,
    )


def is_save_to_disk(path: Path) -> bool:
    """True for a folder written by ``save_to_disk`` (a ``Dataset`` or a ``DatasetDict``)."""
    return path.is_dir() and (
        (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()
    )


def open_saved(path: Path, split: str, image_columns: Sequence[str]) -> DatasetRows:
    """Rows of a ``save_to_disk`` folder (``split`` picks one of a ``DatasetDict``)."""
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
        return DatasetRows(
            loaded[split], name=str(path / split), kind="save_to_disk", image_columns=image_columns
        )
    return DatasetRows(loaded, name=str(path), kind="save_to_disk", image_columns=image_columns)


def open_table_copy(
    path: Path, split: str, *, image_columns: Sequence[str], config: str | None = None
) -> ParquetRows | DatasetRows:
    """Rows of a local copy in a table layout (a Parquet file or folder, or ``save_to_disk``).

    Raises:
        InputError: The path is none of these layouts, or the split is missing.
    """
    if path.is_file():
        if path.suffix != ".parquet":
            raise InputError(
                "expected a .parquet file, a hub snapshot folder or a save_to_disk folder",
                path=path,
            )
        return ParquetRows([path], image_columns)
    if is_save_to_disk(path):
        return open_saved(path, split, image_columns)
    return ParquetRows(find_split_files(path, split, config), image_columns)


# ---------------------------------------------------------------------------------------------
# The hub
# ---------------------------------------------------------------------------------------------


def open_hub(
    hub_id: str,
    split: str,
    *,
    config: str | None,
    revision: str | None,
    image_columns: Sequence[str],
) -> DatasetRows:
    """Rows of a hub dataset, loaded with ``datasets.load_dataset``.

    Raises:
        BenchmarkUnavailableError: No network, hub unreachable, or access not granted; the
            message explains how to pass a local copy instead.
    """
    datasets = datasets_module(f"the hub dataset {hub_id}")
    try:
        loaded = datasets.load_dataset(hub_id, config, split=split, revision=revision)
    except Exception as exc:  # hub failures arrive as many exception types
        raise hub_unavailable(hub_id, split, config, revision, exc) from exc
    name = f"{hub_id}" + (f" ({config})" if config else "") + f" split {split}"
    return DatasetRows(loaded, name=name, kind="hub", image_columns=image_columns, files=[hub_id])


def hub_unavailable(
    hub_id: str, split: str, config: str | None, revision: str | None, exc: BaseException
) -> BenchmarkUnavailableError:
    """The error for a hub dataset that cannot be loaded, in the benchmark loader's words."""
    text = f"{type(exc).__name__}: {exc}"
    gated = any(word in text.lower() for word in ("gated", "401", "403", "access", "auth"))
    reason = (
        "access is not granted (request access on its hub page, then `huggingface-cli login`)"
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
        "with --from: a snapshot of the files (`huggingface-cli download "
        f"{hub_id} --repo-type dataset --local-dir DIR`), or a folder saved with "
        f"`datasets.load_dataset({hub_id!r}{config_arg}, split={split!r})"
        ".save_to_disk(DIR)` (--from DIR)."
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
