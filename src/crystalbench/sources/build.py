"""``crystal data build``: one source's split -> an item set, with its provenance.

The build reads the rows in two passes when a ``--manifest`` or ``--sample`` selects them:
first the text columns only, to find the selected upstream ids (and, for a sample, their
strata), then every column of the selected rows, converting each with the source's adapter.
Without a selection it reads once. Everything is written through
:class:`~crystalbench.sources.itemset.ItemSetWriter`, so the item set appears complete or
not at all.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from crystalbench._internal.paths import local_path
from crystalbench._version import __version__
from crystalbench.errors import InputError
from crystalbench.sources.base import (
    MAX_SKIPPED_LISTED,
    AdapterOptions,
    Draft,
    SourceAdapter,
)
from crystalbench.sources.itemset import ItemSetWriter, file_sha256, item_id, read_manifest
from crystalbench.sources.reading import (
    HUB_ID_PATTERN,
    detect_local_revision,
    open_hub,
)
from crystalbench.sources.records import (
    BuildCounts,
    BuildRecord,
    BuildSpec,
    ManifestInfo,
    SampleInfo,
    SkippedRow,
    UpstreamInfo,
)
from crystalbench.sources.registry import get_adapter, source_adapters
from crystalbench.sources.rows import RowSource
from crystalbench.types import BenchmarkItem

ProgressHook = Callable[[str, int, int | None], None]

_PROGRESS_EVERY = 32


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def resolve_spec(spec: BuildSpec, adapter: SourceAdapter) -> BuildSpec:
    """``spec`` with the adapter's defaults filled in and its options checked.

    Raises:
        InputError: Contradictory or out-of-range options, or a source that needs a
            selection (PlotQA) built without one.
    """
    location = spec.location or adapter.hub_id
    if not location:
        raise InputError(
            f"{adapter.title} has no canonical hub copy: pass its local copy with --from "
            f"({adapter.layouts})",
            field="--from",
        )
    split = spec.split or adapter.default_split
    if spec.limit is not None and spec.limit < 1:
        raise InputError("--limit must be at least 1", field="--limit")
    if spec.sample is not None and spec.sample < 1:
        raise InputError("--sample must be at least 1", field="--sample")
    if spec.sample is not None and spec.manifest is not None:
        raise InputError("give --manifest or --sample, not both", field="--sample")
    if adapter.needs_selection and spec.sample is None and spec.manifest is None:
        raise InputError(
            f"{adapter.title} is too large to take whole: pass --sample N (a seeded sample "
            "stratified by question template and plot type; CRYSTAL used about 250) or "
            "--manifest FILE",
            field="--sample",
        )
    return spec.model_copy(update={"location": location, "split": split})


def open_rows(spec: BuildSpec, adapter: SourceAdapter) -> tuple[RowSource, UpstreamInfo]:
    """Open the rows ``spec`` names (hub or local copy) and describe where they come from.

    Raises:
        InputError: The local copy is missing (a location that looks like a local path and
            does not exist is refused before any hub lookup), in no layout the source
            publishes, or at another revision than ``--revision``.
        BenchmarkUnavailableError: The hub cannot be reached.
    """
    assert spec.location is not None
    assert spec.split is not None
    text = spec.location
    found = local_path(text, option="--from")
    if found is not None:
        path = found.absolute()
        adapter.root = path if path.is_dir() else path.parent
        detected = detect_local_revision(adapter.root)
        if spec.revision and detected and not detected.startswith(spec.revision):
            raise InputError(
                f"this local copy was downloaded at revision {detected}, not {spec.revision}",
                path=path,
                field="--revision",
            )
        rows = adapter.open_local(path, spec.split)
        info = UpstreamInfo(
            kind=rows.kind,
            location=str(path),
            files=rows.files,
            split=spec.split,
            revision=spec.revision,
            detected_revision=detected,
        )
        return rows, info
    if HUB_ID_PATTERN.fullmatch(text):
        config = adapter.hub_config(text)
        rows = open_hub(
            text,
            spec.split,
            config=config,
            revision=spec.revision,
            image_columns=adapter.image_columns,
        )
        info = UpstreamInfo(
            kind="hub",
            location=text,
            files=rows.files,
            hub_id=text,
            config=config,
            split=spec.split,
            revision=spec.revision,
        )
        return rows, info
    raise InputError(
        "not found: neither an existing file or folder nor a hub id like "
        f"{adapter.hub_id or 'owner/name'}",
        path=text,
        field="--from",
    )


def _rank(seed: int, stratum: str, upstream: str) -> str:
    return hashlib.sha256(f"{seed}\0{stratum}\0{upstream}".encode()).hexdigest()


def stratified_sample(
    strata: dict[str, list[str]], size: int, seed: int
) -> tuple[list[str], dict[str, list[int]]]:
    """A seeded sample of ``size`` upstream ids, allocated to strata proportionally.

    Each stratum gets ``size * n_s / N`` rows, rounded down, and the rows left over go to the
    strata with the largest remainders (ties by stratum name). Within a stratum the rows with
    the smallest ``sha256(seed, stratum, id)`` are taken, so the draw depends only on the seed
    and the ids, not on row order, platform or Python version.

    Returns:
        The drawn ids (sorted within each stratum by rank) and, per stratum,
        ``[available, drawn]``.

    Raises:
        InputError: ``size`` exceeds the rows available.

    Examples:
        >>> ids, counts = stratified_sample({"a": ["1", "2", "3"], "b": ["4"]}, 2, seed=0)
        >>> counts
        {'a': [3, 2], 'b': [1, 0]}
    """
    total = sum(len(members) for members in strata.values())
    if size > total:
        raise InputError(f"--sample {size} exceeds the {total} rows available", field="--sample")
    exact = {key: size * len(members) / total for key, members in strata.items()}
    quota = {key: int(value) for key, value in exact.items()}
    left = size - sum(quota.values())
    for key in sorted(strata, key=lambda k: (-(exact[k] - quota[k]), k))[:left]:
        quota[key] += 1
    drawn: list[str] = []
    counts: dict[str, list[int]] = {}
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda upstream: _rank(seed, key, upstream))
        drawn.extend(members[: quota[key]])
        counts[key] = [len(members), quota[key]]
    return drawn, counts


def _select(
    rows: RowSource,
    adapter: SourceAdapter,
    spec: BuildSpec,
    progress: ProgressHook | None,
) -> tuple[set[int], ManifestInfo, SampleInfo | None, int]:
    """First pass: the row indices a manifest or a sample selects."""
    assert spec.split is not None
    index_of: dict[str, int] = {}
    strata: dict[str, list[str]] = {}
    total = rows.count()
    seen = 0
    for row in rows.rows(with_images=False):
        upstream = adapter.upstream_id(row, spec.split)
        if upstream in index_of:
            raise row.ref.error(f"upstream id {upstream!r} appears twice", "id")
        index_of[upstream] = row.index
        if spec.sample is not None:
            strata.setdefault(adapter.stratum(row), []).append(upstream)
        seen += 1
        if progress is not None and seen % _PROGRESS_EVERY == 0:
            progress(f"reading {adapter.name} ids", _PROGRESS_EVERY, total)
    if progress is not None:
        progress(f"reading {adapter.name} ids", seen % _PROGRESS_EVERY, total)
    sample: SampleInfo | None = None
    if spec.manifest is not None:
        ids = read_manifest(spec.manifest, adapter.source, adapter.name)
        missing = [i for i in ids if i not in index_of]
        if missing:
            shown = ", ".join(repr(i) for i in missing[:5])
            raise InputError(
                f"{len(missing)} of its {len(ids)} ids are not in split {spec.split!r} of "
                f"{spec.location} (first: {shown}); is the manifest for another split or "
                "revision?",
                path=spec.manifest,
            )
        manifest = ManifestInfo(
            origin="file",
            file=str(Path(spec.manifest).absolute()),
            sha256=file_sha256(Path(spec.manifest)),
            ids=ids,
        )
    else:
        assert spec.sample is not None
        ids, counts = stratified_sample(strata, spec.sample, spec.seed)
        manifest = ManifestInfo(origin="sample", ids=ids)
        sample = SampleInfo(size=spec.sample, seed=spec.seed, strata=counts)
    return {index_of[i] for i in ids}, manifest, sample, seen


def _make_item(adapter: SourceAdapter, upstream: str, split: str, draft: Draft) -> BenchmarkItem:
    metadata: dict[str, Any] = {
        "upstream_id": upstream,
        "upstream_split": split,
        "license": adapter.license,
        **draft.metadata,
    }
    return BenchmarkItem(
        id=item_id(adapter.source, upstream),
        source=adapter.source,
        question=draft.question,
        options=list(draft.options),
        answer=draft.answer,
        answer_type=draft.answer_type,
        reference_steps=[],
        metadata=metadata,
    )


def build_item_set(
    spec: BuildSpec,
    out: str | Path,
    *,
    overwrite: bool = False,
    progress: ProgressHook | None = None,
) -> BuildRecord:
    """Build the item set ``spec`` describes into ``out``.

    Args:
        spec: Source, location, split, manifest or sample, limit, revision, switches.
        out: The item set's folder (created; an existing item set needs ``overwrite``).
        overwrite: Replace an existing item set at ``out`` (only once the new one is complete).
        progress: ``hook(stage, advance, total)`` for progress bars.

    Returns:
        The record written to ``out/build.json``.

    Raises:
        InputError: Bad options, a malformed row (naming the file and the row; skipped and
            listed instead under ``spec.lenient``), or manifest ids missing upstream.
        BenchmarkUnavailableError: The hub cannot be reached.

    Examples:
        >>> from crystalbench.sources import BuildSpec
        >>> build_item_set(BuildSpec(source="plotqa"), "/tmp/never")
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field --from: PlotQA has no canonical hub copy: ...
    """
    adapter = get_adapter(
        spec.source, AdapterOptions(corrections=spec.corrections, hub_config=spec.hub_config)
    )
    spec = resolve_spec(spec, adapter)
    assert spec.split is not None
    rows, upstream_info = open_rows(spec, adapter)
    adapter.check_columns(rows, set(rows.columns), ", ".join(rows.files[:3]))
    manifest: ManifestInfo | None = None
    sample: SampleInfo | None = None
    wanted: set[int] | None = None
    if spec.manifest is not None or spec.sample is not None:
        wanted, manifest, sample, _ = _select(rows, adapter, spec, progress)
    total_rows = rows.count()
    stage_total = len(wanted) if wanted is not None else total_rows
    stage = f"building {adapter.name}"

    skipped: list[SkippedRow] = []
    malformed: list[SkippedRow] = []
    skip_reasons: Counter[str] = Counter()
    n_skipped = n_malformed = n_rows = 0
    items: list[BenchmarkItem] = []
    taken: list[str] = []
    pending = 0
    remaining = len(wanted) if wanted is not None else None
    with ItemSetWriter(out, overwrite=overwrite) as writer:
        for row in rows.rows(with_images=True):
            if remaining == 0:
                break  # every selected row is done: the rest of the split need not be read
            n_rows += 1
            if wanted is not None and row.index not in wanted:
                continue
            if remaining is not None:
                remaining -= 1
            pending += 1
            if progress is not None and pending == _PROGRESS_EVERY:
                progress(stage, pending, stage_total)
                pending = 0
            upstream: str | None = None
            try:
                upstream = adapter.upstream_id(row, spec.split)
                result = adapter.convert(row, spec.split)
                if isinstance(result, Draft):
                    item = writer.add(
                        _make_item(adapter, upstream, spec.split, result),
                        result.image,
                        ref=row.ref,
                        image_field=result.image_field,
                    )
            except InputError as exc:
                if not spec.lenient:
                    raise
                n_malformed += 1
                if len(malformed) < MAX_SKIPPED_LISTED:
                    reason = exc.message if exc.field is None else f"{exc.field}: {exc.message}"
                    malformed.append(
                        SkippedRow(where=str(row.ref), upstream_id=upstream, reason=reason)
                    )
                continue
            if not isinstance(result, Draft):
                n_skipped += 1
                skip_reasons[result.reason] += 1
                if len(skipped) < MAX_SKIPPED_LISTED:
                    skipped.append(
                        SkippedRow(where=str(row.ref), upstream_id=upstream, reason=result.reason)
                    )
                continue
            items.append(item)
            taken.append(upstream)
            if spec.limit is not None and len(items) >= spec.limit:
                break
        if progress is not None:
            progress(stage, pending, stage_total)
        if not items:
            raise InputError(
                f"no items: {n_rows} row(s) read, {n_skipped} skipped by the source's "
                f"conventions, {n_malformed} malformed",
                path=upstream_info.location,
            )
        adapter.finish(items)
        counts = BuildCounts(
            rows=total_rows if total_rows is not None else n_rows,
            selected=len(wanted) if wanted is not None else (total_rows or n_rows),
            items=len(items),
            skipped=n_skipped,
            malformed=n_malformed,
            skipped_by_reason=dict(skip_reasons),
            by_answer_type=dict(Counter(str(item.answer_type) for item in items)),
        )
        notes = list(adapter.notes)
        if spec.limit is not None and len(items) >= spec.limit:
            notes.append(f"stopped at --limit {spec.limit}")
        if upstream_info.kind == "hub" and not spec.revision:
            notes.append("hub revision not pinned (--revision): the default branch was read")

        def record(items_sha256: str) -> BuildRecord:
            return BuildRecord(
                crystalbench_version=__version__,
                created=_now(),
                source=adapter.source,
                adapter=adapter.name,
                title=adapter.title,
                license=adapter.license,
                spec=spec,
                upstream=upstream_info,
                manifest=manifest,
                sample=sample,
                counts=counts,
                skipped=skipped,
                malformed=malformed,
                conventions=dict(adapter.counters),
                notes=notes,
                items_sha256=items_sha256,
            )

        built: list[BuildRecord] = []

        def keep(items_sha256: str) -> BuildRecord:
            built.append(record(items_sha256))
            return built[-1]

        writer.commit(
            keep,
            taken,
            {"source": adapter.name, "item_source": adapter.source, "split": spec.split},
        )
    return built[0]


def describe_sources(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One row per source adapter (name, item source, hub id, splits, layouts, licence)."""
    adapters = source_adapters()
    rows: list[dict[str, Any]] = []
    for name in names or adapters:
        cls = adapters[name]
        rows.append(
            {
                "name": cls.name,
                "source": cls.source,
                "title": cls.title,
                "hub_id": cls.hub_id,
                "default_split": cls.default_split,
                "splits": list(cls.splits),
                "layouts": cls.layouts,
                "license": cls.license,
            }
        )
    return rows
