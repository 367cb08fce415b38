"""Source adapters: CRYSTAL's source datasets turned into item sets.

``crystal data build SOURCE --from LOCATION --out DIR`` reads one split of a source
(MathVision, ScienceQA-IMG, RealWorldQA, MMVP, PlotQA, TextVQA) from the hub or from a local
copy in that source's published layout, resolves its conventions (options, gold letters,
answer types, context, corrections) and writes an *item set*: ``DIR/items.jsonl`` in the
benchmark JSONL format with empty ``reference_steps``, ``DIR/images/``, ``DIR/build.json``
(provenance) and ``DIR/manifest.json`` (the upstream ids taken). Item sets are the input of
reference construction and of ``crystal infer``.

Examples:
    >>> from crystalbench.sources import source_adapters
    >>> sorted(source_adapters())[:3]
    ['mathvision', 'mmvp', 'plotqa']
"""

from __future__ import annotations

from crystalbench.sources.base import AdapterOptions, Draft, Skip, SourceAdapter, register
from crystalbench.sources.build import build_item_set, describe_sources, stratified_sample
from crystalbench.sources.itemset import (
    ItemSet,
    ItemSetWriter,
    is_item_set,
    item_set_benchmark,
    load_items,
    read_item_set,
    read_manifest,
)
from crystalbench.sources.merge import merge_item_sets
from crystalbench.sources.records import (
    BuildRecord,
    BuildSpec,
    ItemSetStats,
    MergeRecord,
)
from crystalbench.sources.registry import (
    EXAMPLES_DIR,
    example_copy,
    get_adapter,
    source_adapters,
)
from crystalbench.sources.rows import RowRef, UpstreamRow
from crystalbench.sources.summary import summarize_items

__all__ = [
    "EXAMPLES_DIR",
    "AdapterOptions",
    "BuildRecord",
    "BuildSpec",
    "Draft",
    "ItemSet",
    "ItemSetStats",
    "ItemSetWriter",
    "MergeRecord",
    "RowRef",
    "Skip",
    "SourceAdapter",
    "UpstreamRow",
    "build_item_set",
    "describe_sources",
    "example_copy",
    "get_adapter",
    "is_item_set",
    "item_set_benchmark",
    "load_items",
    "merge_item_sets",
    "read_item_set",
    "read_manifest",
    "register",
    "source_adapters",
    "stratified_sample",
    "summarize_items",
]
