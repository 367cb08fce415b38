"""``crystal data merge``: several item sets -> one, ids kept unique as ``source/upstream-id``."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from pathlib import Path

from crystalbench._version import __version__
from crystalbench.errors import InputError
from crystalbench.sources.itemset import ItemSetWriter, read_item_set
from crystalbench.sources.records import MergeInput, MergeRecord

ProgressHook = Callable[[str, int, int | None], None]


def merged_id(item_id: str, source: str) -> str:
    """An item's id in a merged set: unchanged when it starts with ``source/``, else prefixed.

    Examples:
        >>> merged_id("mmvp/12", "mmvp"), merged_id("12", "mmvp")
        ('mmvp/12', 'mmvp/12')
    """
    return item_id if item_id.startswith(f"{source}/") else f"{source}/{item_id}"


def merge_item_sets(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    overwrite: bool = False,
    progress: ProgressHook | None = None,
) -> MergeRecord:
    """Combine item sets (in the order given) into a new one at ``out``.

    Every id becomes ``source/upstream-id`` (ids built by ``crystal data build`` already are);
    an id found in two inputs is refused, naming both. Images are copied and renamed after the
    ids. ``build.json`` lists each input with its own ``build.json``.

    Raises:
        InputError: No inputs, an input that is not an item set, ``out`` among the inputs,
            or a duplicate id.
    """
    if not paths:
        raise InputError("give at least one item set to merge")
    target = Path(out).expanduser().absolute()
    seen_paths: set[Path] = set()
    for path in paths:
        resolved = Path(path).expanduser().resolve()
        if resolved in seen_paths:
            raise InputError("this item set is given twice", path=path)
        seen_paths.add(resolved)
    sets = [read_item_set(path) for path in paths]
    for item_set in sets:
        if item_set.path.absolute() == target:
            raise InputError("--out must not be one of the item sets merged", path=target)
    total = sum(len(s.items) for s in sets)
    first: dict[str, Path] = {}
    renamed = 0
    inputs: list[MergeInput] = []
    ids: list[str] = []
    with ItemSetWriter(target, overwrite=overwrite) as writer:
        for item_set in sets:
            for item in item_set.items:
                new_id = merged_id(item.id, item.source)
                if new_id in first:
                    where = (
                        "twice in it"
                        if first[new_id] == item_set.path
                        else (f"also in {first[new_id]}")
                    )
                    raise InputError(
                        f"item id {new_id!r} is {where}; each item may appear once",
                        path=item_set.path,
                        field="id",
                    )
                first[new_id] = item_set.path
                renamed += new_id != item.id
                image = Path(item.image) if item.image is not None else None
                writer.add_file(item.model_copy(update={"id": new_id}), image)
                ids.append(new_id)
                if progress is not None:
                    progress("merging item sets", 1, total)
            inputs.append(
                MergeInput(
                    path=str(item_set.path.absolute()),
                    items=len(item_set.items),
                    sources=item_set.sources,
                    build=item_set.record,
                )
            )
        built: list[MergeRecord] = []

        def record(items_sha256: str) -> MergeRecord:
            built.append(
                MergeRecord(
                    crystalbench_version=__version__,
                    created=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                    inputs=inputs,
                    items=len(ids),
                    renamed_ids=renamed,
                    items_sha256=items_sha256,
                )
            )
            return built[-1]

        writer.commit(record, ids, {"source": "merge"})
    return built[0]
