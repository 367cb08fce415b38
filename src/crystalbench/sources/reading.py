"""Reading a source's rows from the hub or from a local copy in its published layout.

Table layouts shared by most sources (the hub, Parquet files and snapshot folders,
``save_to_disk`` folders) are opened by :mod:`crystalbench.data.hub`, the module the
benchmark loader uses too; here they become row sources that stream
:class:`~crystalbench.sources.rows.UpstreamRow` records in batches, Parquet read with
pyarrow without decoding images.

Sources with their own layouts (MMVP's CSV, PlotQA's and TextVQA's JSON) read them in their
adapter modules and reuse :class:`RecordRows`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from crystalbench.data.hub import (
    HUB_ID_PATTERN,
    detect_local_revision,
    find_split_files,
    is_save_to_disk,
    load_hub,
    load_saved,
    pyarrow_parquet,
    undecoded_images,
)
from crystalbench.errors import InputError
from crystalbench.sources.rows import BUILD_BATCH_ROWS, RowRef, UpstreamRow

__all__ = [
    "HUB_ID_PATTERN",
    "DatasetRows",
    "ParquetRows",
    "RecordRows",
    "detect_local_revision",
    "open_hub",
    "open_saved",
    "open_table_copy",
]

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
        self.dataset = undecoded_images(dataset, image_columns)
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


def open_saved(path: Path, split: str, image_columns: Sequence[str]) -> DatasetRows:
    """Rows of a ``save_to_disk`` folder (``split`` picks one of a ``DatasetDict``)."""
    dataset, name = load_saved(path, split)
    return DatasetRows(dataset, name=name, kind="save_to_disk", image_columns=image_columns)


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
    loaded = load_hub(hub_id, split, config=config, revision=revision)
    name = f"{hub_id}" + (f" ({config})" if config else "") + f" split {split}"
    return DatasetRows(loaded, name=name, kind="hub", image_columns=image_columns, files=[hub_id])


def json_rows(
    json_file: Path, entries: Sequence[Any], images: Path, what: str = "entry"
) -> RecordRows:
    """The entries of a JSON list file as rows (records ``row N`` of ``json_file``); the
    images live in ``images``.

    Raises:
        InputError: An entry is not an object (names the file and row; ``what``: what an
            entry is called in the message).
    """
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InputError(
                f"{what} {position} is {type(entry).__name__}, expected an object",
                path=f"{json_file} row {position}",
            )
    where = str(json_file)
    return RecordRows("json", [where, str(images)], entries, lambda i: RowRef(where, i))
