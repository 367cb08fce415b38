"""TextVQA: majority of ten human answers as gold, all kept; both published layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    TEXTVQA_COLUMNS,
    textvqa_rows,
    textvqa_table_rows,
    write_parquet,
    write_textvqa_release,
)

from crystalbench.errors import InputError
from crystalbench.sources import BuildSpec, build_item_set, read_item_set
from crystalbench.sources.textvqa import majority_answer


def build(location: Path, out: Path, **options):
    record = build_item_set(BuildSpec(source="textvqa", location=str(location), **options), out)
    return record, {item.id: item for item in read_item_set(out).items}


def test_majority_answer():
    assert majority_answer(["The Beatles", "beatles", "the beatles!", "abba"]) == (
        "The Beatles",
        3,
        [],
    )
    assert majority_answer(["b", "a", "a", "b", "c"]) == ("b", 2, ["a"])
    assert majority_answer(["", "  "]) == ("", 0, [])


def test_release_layout(tmp_path):
    root = write_textvqa_release(tmp_path / "TextVQA")
    record, items = build(root, tmp_path / "pool")
    assert list(items) == ["textvqa/34602", "textvqa/34603", "textvqa/34604"]
    soda = items["textvqa/34602"]
    assert (soda.answer, soda.answer_type) == ("coca cola", "free_form")
    assert soda.metadata["answers"] == textvqa_rows()[0]["answers"]
    assert soda.metadata["answer_votes"] == 7  # "Coca Cola", "coca-cola", "Coca-Cola" count too
    assert soda.metadata["image_id"] == "0054c91397f2fe05"
    jersey = items["textvqa/34603"]
    assert (jersey.answer, jersey.answer_type) == ("23", "free_form")  # never numeric
    sign = items["textvqa/34604"]
    assert sign.answer == "stop"
    assert sign.metadata["answer_ties"] == ["yield"]
    assert record.conventions["majority_ties"] == 1
    assert (
        Path(soda.image).read_bytes()
        == (root / "train_images" / "0054c91397f2fe05.jpg").read_bytes()
    )
    assert record.upstream.kind == "json"


def test_validation_split_reads_the_val_file(tmp_path):
    root = write_textvqa_release(tmp_path / "TextVQA", split="val")
    _, items = build(root, tmp_path / "val", split="validation")
    assert len(items) == 3


def test_parquet_layout_matches_the_release(tmp_path):
    release = write_textvqa_release(tmp_path / "TextVQA")
    _, from_json = build(release, tmp_path / "a")
    table = write_parquet(
        tmp_path / "hub" / "data" / "train-00000-of-00020.parquet",
        textvqa_table_rows(),
        TEXTVQA_COLUMNS,
    )
    _, from_parquet = build(table.parent.parent, tmp_path / "b")
    assert list(from_parquet) == list(from_json)
    for key, item in from_parquet.items():
        assert item.answer == from_json[key].answer
        assert item.metadata["answers"] == from_json[key].metadata["answers"]
        assert item.metadata["ocr_tokens"] == ["STOP", "23"]


def test_rows_without_answers_are_skipped(tmp_path):
    rows = textvqa_rows()
    rows[1] = dict(rows[1], answers=[])
    record, items = build(write_textvqa_release(tmp_path / "TextVQA", rows), tmp_path / "set")
    assert "textvqa/34603" not in items
    assert record.counts.skipped_by_reason == {"no answers": 1}
    test_rows = [dict(row, answers=[]) for row in textvqa_rows()]
    root = write_textvqa_release(tmp_path / "Test", test_rows, split="test")
    with pytest.raises(InputError, match=r"no items: 3 row\(s\) read, 3 skipped"):
        build(root, tmp_path / "test", split="test")


def test_image_id_cannot_name_a_path(tmp_path):
    rows = textvqa_rows()
    root = write_textvqa_release(tmp_path / "TextVQA", rows)
    rows[0] = dict(rows[0], image_id="../../secret")
    write_textvqa_release(tmp_path / "Bad", rows)
    (tmp_path / "Bad" / "TextVQA_0.5.1_train.json").replace(root / "TextVQA_0.5.1_train.json")
    with pytest.raises(
        InputError, match=r"row 0: field image_id: unusable image_id '../../secret'"
    ):
        build(root, tmp_path / "set")
