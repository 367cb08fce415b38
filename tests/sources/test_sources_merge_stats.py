"""Merging item sets (ids unique as source/upstream-id) and their statistics."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import draw_image, write_mathvision, write_mmvp_original

from crystalbench.data import load_benchmark
from crystalbench.errors import InputError
from crystalbench.scoring.difficulty import assign_difficulty
from crystalbench.sources import (
    BuildSpec,
    build_item_set,
    merge_item_sets,
    read_item_set,
    summarize_items,
)
from crystalbench.sources.summary import step_histogram
from crystalbench.types import BenchmarkItem


@pytest.fixture
def two_sets(tmp_path: Path) -> tuple[Path, Path]:
    math = tmp_path / "math"
    mmvp = tmp_path / "mmvp"
    build_item_set(
        BuildSpec(source="mathvision", location=str(write_mathvision(tmp_path / "mv"))), math
    )
    build_item_set(
        BuildSpec(source="mmvp", location=str(write_mmvp_original(tmp_path / "MMVP"))), mmvp
    )
    return math, mmvp


def test_merge_keeps_ids_and_copies_images(two_sets, tmp_path):
    math, mmvp = two_sets
    record = merge_item_sets([math, mmvp], tmp_path / "all")
    merged = read_item_set(tmp_path / "all")
    assert [i.id for i in merged.items] == [i.id for i in read_item_set(math).items] + [
        i.id for i in read_item_set(mmvp).items
    ]
    assert record.items == 9
    assert record.renamed_ids == 0
    assert [entry.items for entry in record.inputs] == [5, 4]
    assert record.inputs[1].build is not None
    assert record.inputs[1].build["source"] == "mmvp"
    originals = {i.id: i for i in read_item_set(math).items + read_item_set(mmvp).items}
    for item in merged.items:
        assert Path(item.image).parent == (tmp_path / "all" / "images").absolute()
        assert Path(item.image).read_bytes() == Path(originals[item.id].image).read_bytes()
        assert item.model_dump(exclude={"image"}) == originals[item.id].model_dump(
            exclude={"image"}
        )
    build = json.loads((tmp_path / "all" / "build.json").read_text())
    assert build["kind"] == "merge"


def test_merge_refuses_an_id_twice(two_sets, tmp_path):
    math, _ = two_sets
    copy = tmp_path / "copy"
    shutil.copytree(math, copy)
    with pytest.raises(
        InputError, match=r"copy: field id: item id 'mathvision/1' is also in .*math"
    ):
        merge_item_sets([math, copy], tmp_path / "twice")
    assert not (tmp_path / "twice").exists()
    with pytest.raises(InputError, match="given twice"):
        merge_item_sets([math, math], tmp_path / "twice")
    with pytest.raises(InputError, match="must not be one of the item sets"):
        merge_item_sets([math], math, overwrite=True)


def test_merge_prefixes_bare_ids(tmp_path):
    """Two hand-written sets use the bare id 17 for different sources: merged, both stay."""
    items = [
        BenchmarkItem(
            id="17",
            source="plotqa",
            question="Max?",
            answer="3",
            answer_type="numeric",
            reference_steps=[],
            image="images/q.png",
        ),
        BenchmarkItem(
            id="17",
            source="mmvp",
            question="Open?",
            answer="A",
            options=["Open", "Closed"],
            answer_type="multiple_choice",
            reference_steps=[],
        ),
    ]
    folders = []
    for number, item in enumerate(items):
        folder = tmp_path / f"legacy{number}"
        (folder / "images").mkdir(parents=True)
        (folder / "images" / "q.png").write_bytes(draw_image(4))
        (folder / "items.jsonl").write_text(item.model_dump_json() + "\n")
        folders.append(folder)
    record = merge_item_sets(folders, tmp_path / "out")
    assert [i.id for i in read_item_set(tmp_path / "out").items] == ["plotqa/17", "mmvp/17"]
    assert record.renamed_ids == 2


def test_stats_of_an_item_set(two_sets):
    math, mmvp = two_sets
    items = read_item_set(math).items + read_item_set(mmvp).items
    stats = summarize_items(items, "both")
    assert stats.by_source == {"mathvision": 5, "mmvp": 4}
    assert stats.by_answer_type == {"multiple_choice": 6, "numeric": 2, "free_form": 1}
    assert stats.by_options == {"0": 3, "2": 4, "5": 2}
    assert stats.by_source_answer_type["mmvp"] == {"multiple_choice": 4}
    assert stats.answer_type_inferred == 0
    assert stats.steps is None
    assert stats.with_references == 0
    assert stats.by_difficulty == {}


def test_stats_of_a_benchmark_with_references():
    items = load_benchmark("sample").items
    stats = summarize_items(items, "sample")
    counts = [len(i.reference_steps) for i in items]
    assert stats.steps is not None
    assert (stats.steps.min, stats.steps.max) == (min(counts), max(counts))
    assert stats.steps.mean == pytest.approx(sum(counts) / len(counts))
    assert sum(n for _, _, n in stats.steps.histogram) == len(items)
    assert stats.steps.histogram[0][0] == min(counts)
    assert stats.steps.histogram[-1][1] >= max(counts)
    tiers = {}
    for item in items:
        tiers[assign_difficulty(item)] = tiers.get(assign_difficulty(item), 0) + 1
    assert stats.by_difficulty == {t: tiers[t] for t in ("easy", "medium", "hard") if t in tiers}
    assert sum(stats.by_source.values()) == len(items) == 40


def test_step_histogram_bins():
    assert step_histogram(list(range(3, 43)), bins=10) == [
        (lo, lo + 3, 4) for lo in range(3, 43, 4)
    ]
    assert step_histogram([7]) == [(7, 7, 1)]
    assert step_histogram([]) == []
