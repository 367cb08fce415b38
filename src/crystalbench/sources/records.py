"""Records of item-set builds: what was asked, where it came from, what was taken and why not.

``DIR/build.json`` holds a :class:`BuildRecord` (``crystal data build``) or a
:class:`MergeRecord` (``crystal data merge``); ``crystal data stats`` computes an
:class:`ItemSetStats`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from crystalbench.types import Record

ITEM_SET_SCHEMA: Literal["1"] = "1"
"""Version of ``build.json`` and the item-set layout."""


class BuildSpec(Record):
    """What ``crystal data build`` was asked to do (every option, as resolved)."""

    source: str
    """Adapter name (``mathvision``, ``scienceqa-img``...)."""
    location: str | None = None
    """``--from``: a hub id or a local path, as given; ``None``: the canonical hub id."""
    split: str | None = None
    """Upstream split read; ``None``: the source's default split."""
    manifest: str | None = None
    """``--manifest``: file listing the upstream ids to take."""
    sample: int | None = None
    """``--sample``: size of a seeded sample stratified by the adapter's strata."""
    seed: int = 0
    """``--seed`` of the sample."""
    limit: int | None = None
    """``--limit``: stop after this many items."""
    revision: str | None = None
    """``--revision``: hub revision to load, or the revision a local copy must be at."""
    hub_config: str | None = None
    """``--hub-config``: hub configuration overriding the adapter's default."""
    corrections: bool = True
    """Apply packaged ground-truth corrections (MMVP); ``--no-corrections`` turns them off."""
    lenient: bool = False
    """``--lenient``: skip malformed rows (listed in ``build.json``) instead of stopping."""


class UpstreamInfo(Record):
    """Where the rows came from."""

    kind: str
    """Layout read: ``hub``, ``parquet``, ``save_to_disk``, ``csv``, ``json``."""
    location: str
    """The hub id, or the local path resolved to an absolute one."""
    files: list[str]
    """Files read (the hub id for a hub load)."""
    hub_id: str | None = None
    config: str | None = None
    split: str
    revision: str | None = None
    """Revision asked for (``None``: the hub's default branch, not pinned)."""
    detected_revision: str | None = None
    """Commit recorded by ``huggingface-cli download`` in a local snapshot, when found."""


class ManifestInfo(Record):
    """The manifest a build used (``--manifest`` or a drawn ``--sample``)."""

    origin: Literal["file", "sample"]
    file: str | None = None
    """The manifest file, when one was given."""
    sha256: str | None = None
    """SHA-256 of the manifest file."""
    ids: list[str]
    """Upstream ids it lists, in its order."""


class SampleInfo(Record):
    """How a seeded stratified ``--sample`` was drawn."""

    size: int
    seed: int
    allocation: Literal["proportional"] = "proportional"
    """Each stratum gets its share of ``size`` (largest remainders round it)."""
    strata: dict[str, list[int]]
    """Stratum -> ``[rows available, rows drawn]``."""


class SkippedRow(Record):
    """A row that did not become an item, and why."""

    where: str
    """File and row."""
    upstream_id: str | None = None
    reason: str


class BuildCounts(Record):
    """Counts of one build."""

    rows: int
    """Rows in the upstream split."""
    selected: int
    """Rows the manifest or sample selected (``rows`` without either)."""
    items: int
    """Items written."""
    skipped: int
    """Rows left out by a source convention (``skipped_by_reason``)."""
    malformed: int = 0
    """Malformed rows skipped under ``--lenient``."""
    skipped_by_reason: dict[str, int] = Field(default_factory=dict)
    by_answer_type: dict[str, int] = Field(default_factory=dict)


class BuildRecord(Record):
    """``DIR/build.json`` of ``crystal data build``."""

    schema_version: Literal["1"] = ITEM_SET_SCHEMA
    kind: Literal["build"] = "build"
    crystalbench_version: str
    created: str
    """UTC time the build finished (ISO 8601)."""
    source: str
    """``BenchmarkItem.source`` of the items."""
    adapter: str
    title: str
    license: str
    spec: BuildSpec
    upstream: UpstreamInfo
    manifest: ManifestInfo | None = None
    sample: SampleInfo | None = None
    counts: BuildCounts
    skipped: list[SkippedRow] = Field(default_factory=list)
    """Rows skipped by a convention (the first ``MAX_SKIPPED_LISTED``; all are counted)."""
    malformed: list[SkippedRow] = Field(default_factory=list)
    """Malformed rows skipped under ``--lenient`` (the first ``MAX_SKIPPED_LISTED``)."""
    conventions: dict[str, int] = Field(default_factory=dict)
    """How often each convention fired (``corrections_applied``, ``hint_in_question``...)."""
    notes: list[str] = Field(default_factory=list)
    """Conventions and observations worth reading (corrections, incomplete MMVP pairs...)."""
    items_sha256: str
    """SHA-256 of ``items.jsonl``."""


class MergeInput(Record):
    """One item set a merge read."""

    path: str
    items: int
    sources: list[str]
    build: dict[str, Any] | None = None
    """Its ``build.json`` (``None`` when it had none)."""


class MergeRecord(Record):
    """``DIR/build.json`` of ``crystal data merge``."""

    schema_version: Literal["1"] = ITEM_SET_SCHEMA
    kind: Literal["merge"] = "merge"
    crystalbench_version: str
    created: str
    inputs: list[MergeInput]
    items: int
    renamed_ids: int
    """Items whose id gained the ``source/`` prefix to stay unique."""
    items_sha256: str


class StepStats(Record):
    """Reference steps per item, over items that have references."""

    items: int
    mean: float
    min: int
    max: int
    histogram: list[tuple[int, int, int]]
    """``[low, high, count]`` bins of steps per item, ``low <= steps <= high``."""


class ItemSetStats(Record):
    """What ``crystal data stats`` reports."""

    name: str
    items: int
    by_source: dict[str, int]
    by_answer_type: dict[str, int]
    answer_type_inferred: int
    """Items whose answer type was not in the data (counted under their inferred type)."""
    by_options: dict[str, int]
    """Number of options -> items (``0``: open questions)."""
    with_references: int
    without_references: int
    steps: StepStats | None = None
    """``None`` when no item has references (an item set before ``crystal references``)."""
    by_difficulty: dict[str, int] = Field(default_factory=dict)
    """Difficulty tiers of the items that have references."""
    by_source_answer_type: dict[str, dict[str, int]] = Field(default_factory=dict)
