"""PlotQA: qa_pairs JSON + png folder, a seeded stratified sample, numeric answers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from source_fixtures import plotqa_pairs, write_plotqa

from crystalbench.errors import InputError
from crystalbench.sources import (
    BuildSpec,
    build_item_set,
    read_item_set,
    stratified_sample,
)


def build(location: Path, out: Path, **options):
    record = build_item_set(BuildSpec(source="plotqa", location=str(location), **options), out)
    return record, read_item_set(out).items


def test_stratified_sample_allocates_proportionally():
    strata = {
        "a": [str(i) for i in range(60)],
        "b": [f"b{i}" for i in range(30)],
        "c": ["c0"] * 0 + ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10"],
    }
    drawn, counts = stratified_sample(strata, 10, seed=3)
    assert counts == {"a": [60, 6], "b": [30, 3], "c": [10, 1]}
    assert len(drawn) == len(set(drawn)) == 10
    again, _ = stratified_sample(strata, 10, seed=3)
    assert again == drawn
    other, _ = stratified_sample(strata, 10, seed=4)
    assert other != drawn
    # the draw depends on ids, not on their order
    shuffled = {key: list(reversed(members)) for key, members in strata.items()}
    assert sorted(stratified_sample(shuffled, 10, seed=3)[0]) == sorted(drawn)
    with pytest.raises(InputError, match="exceeds the 100 rows"):
        stratified_sample(strata, 101, seed=0)


def test_largest_remainders_round_the_allocation():
    _, counts = stratified_sample({"x": ["1", "2"], "y": ["3", "4"], "z": ["5", "6"]}, 4, seed=0)
    assert sorted(n for _, n in counts.values()) == [1, 1, 2]
    assert counts["x"] == [2, 2]  # equal remainders: ties go by stratum name


def test_a_selection_is_required(tmp_path):
    with pytest.raises(InputError, match="pass --sample N"):
        build(write_plotqa(tmp_path / "PlotQA"), tmp_path / "set")


def test_sample_build(tmp_path):
    record, items = build(write_plotqa(tmp_path / "PlotQA"), tmp_path / "set", sample=8, seed=1)
    assert len(items) == 8
    assert record.sample is not None
    assert record.sample.size == 8
    assert record.sample.seed == 1
    strata = record.sample.strata
    assert sum(drawn for _, drawn in strata.values()) == 8
    assert sum(available for available, _ in strata.values()) == 24
    drawn = Counter(f"{i.metadata['template']}|{i.metadata['plot_type']}" for i in items)
    assert {key: n for key, (_, n) in strata.items() if n} == dict(drawn)
    assert record.manifest is not None
    assert record.manifest.origin == "sample"
    assert record.counts.rows == 24
    assert record.counts.selected == 8
    assert record.upstream.files[0].endswith("test/qa_pairs_V1.json")


def test_manifest_of_a_sample_rebuilds_it(tmp_path):
    root = write_plotqa(tmp_path / "PlotQA")
    build(root, tmp_path / "first", sample=5, seed=7)
    record, _ = build(root, tmp_path / "again", manifest=str(tmp_path / "first" / "manifest.json"))
    assert (tmp_path / "first/items.jsonl").read_bytes() == (
        tmp_path / "again/items.jsonl"
    ).read_bytes()
    assert record.manifest is not None
    assert record.manifest.origin == "file"


def test_answer_types(tmp_path):
    root = write_plotqa(tmp_path / "PlotQA", plotqa_pairs(1))
    manifest = tmp_path / "all.txt"
    manifest.write_text("\n".join(f"test-{i}" for i in range(4)))
    _, items = build(root, tmp_path / "set", manifest=str(manifest))
    by_template = {i.metadata["template"]: i for i in items}
    maximum = by_template["min_max"]
    assert (maximum.answer, maximum.answer_type) == ("82.0172", "numeric")
    assert maximum.metadata["answer_json_type"] == "number"
    assert maximum.metadata["answer_bbox"] == {"x": 10.0, "y": 20.5, "w": 4.0, "h": 30.0}
    assert (by_template["compound"].answer, by_template["compound"].answer_type) == ("5", "numeric")
    assert (by_template["comparison"].answer, by_template["comparison"].answer_type) == (
        "No",
        "yes_no",
    )
    year = by_template["data_retrieval"]
    assert (year.answer, year.answer_type) == ("2004", "free_form")
    assert year.metadata["answer_json_type"] == "string"
    assert year.metadata["image_index"] == 0
    assert Path(year.image).read_bytes() == (root / "test" / "png" / "0.png").read_bytes()


def test_bare_list_file_given_directly(tmp_path):
    root = write_plotqa(tmp_path / "PlotQA", wrapped=False, name="qa_pairs_V2.json")
    record, items = build(root / "test" / "qa_pairs_V2.json", tmp_path / "set", sample=3)
    assert len(items) == 3
    assert record.upstream.kind == "json"


def test_layout_errors(tmp_path):
    root = write_plotqa(tmp_path / "PlotQA")
    (root / "test" / "qa_pairs_V2.json").write_text("[]")
    with pytest.raises(InputError, match="several QA files"):
        build(root, tmp_path / "a", sample=1)
    (root / "test" / "qa_pairs_V2.json").unlink()
    with pytest.raises(InputError, match=r"no qa_pairs\*.json file for split 'val'"):
        build(root, tmp_path / "b", sample=1, split="val")


def test_malformed_pairs(tmp_path):
    pairs = plotqa_pairs(1)
    pairs[2] = dict(pairs[2], answer=None)
    root = write_plotqa(tmp_path / "PlotQA", pairs)
    manifest = tmp_path / "m.txt"
    manifest.write_text("test-2\n")
    with pytest.raises(
        InputError, match=r"qa_pairs_V1.json row 2: field answer: expected a number or text"
    ):
        build(root, tmp_path / "a", manifest=str(manifest))
    pairs = plotqa_pairs(1)
    pairs[1] = dict(pairs[1], image_index=7)
    root = write_plotqa(tmp_path / "P2", pairs)
    (root / "test" / "png" / "7.png").unlink()
    manifest.write_text("test-1\n")
    with pytest.raises(InputError, match=r"row 1: field image_index: image 'png/7.png' not found"):
        build(root, tmp_path / "b", manifest=str(manifest))
    (tmp_path / "P3" / "test" / "png").mkdir(parents=True)
    (tmp_path / "P3" / "test" / "qa_pairs.json").write_text('{"qa_pairs": [1]}')
    with pytest.raises(InputError, match="QA pair 0 is int, expected an object"):
        build(tmp_path / "P3", tmp_path / "c", sample=1)
    (tmp_path / "P3" / "test" / "qa_pairs.json").write_text('{"qa_pairs": [')
    with pytest.raises(InputError, match="malformed JSON"):
        build(tmp_path / "P3", tmp_path / "d", sample=1)
