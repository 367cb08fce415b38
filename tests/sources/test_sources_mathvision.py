"""MathVision: options, letter golds, free-form types, metadata, both image forms."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    MATHVISION_COLUMNS,
    mathvision_rows,
    save_to_disk,
    write_mathvision,
)

from crystalbench.errors import InputError
from crystalbench.sources import BuildSpec, build_item_set, read_item_set


def items_of(location: Path, out: Path, **options):
    build_item_set(BuildSpec(source="mathvision", location=str(location), **options), out)
    return {item.id: item for item in read_item_set(out).items}


def test_conventions(tmp_path):
    items = items_of(write_mathvision(tmp_path / "mv"), tmp_path / "set")
    choice = items["mathvision/1"]
    assert choice.options == ["A", "B", "C", "D", "E"]
    assert (choice.answer, choice.answer_type) == ("C", "multiple_choice")
    assert choice.metadata["answer_text"] == "C"
    assert choice.metadata["level"] == 2
    assert choice.metadata["subject"] == "metric geometry - area"
    assert "<image1>" in choice.question
    count = items["mathvision/2"]
    assert (count.options, count.answer, count.answer_type) == ([], "12", "numeric")
    assert count.metadata["solution"].startswith("Count them")
    assert count.metadata["answer_type_from"] == "gold"
    assert (items["mathvision/5"].answer, items["mathvision/5"].answer_type) == (
        "2\\sqrt{2}",
        "numeric",
    )
    assert (items["mathvision/7"].answer, items["mathvision/7"].answer_type) == (
        "(1,2)",
        "free_form",
    )
    net = items["mathvision/9"]
    assert (net.answer, net.metadata["answer_text"]) == ("E", "5")
    assert net.metadata["upstream_image"] == "images/9.png"
    assert "solution" not in net.metadata  # empty upstream solution


def test_gold_letter_forms_are_normalised(tmp_path):
    rows = [dict(mathvision_rows()[0], answer="(b)")]
    items = items_of(write_mathvision(tmp_path / "mv", rows), tmp_path / "set")
    assert items["mathvision/1"].answer == "B"
    assert items["mathvision/1"].metadata["answer_text"] == "B"


def test_save_to_disk_copy_gives_the_same_items(tmp_path):
    parquet_items = items_of(write_mathvision(tmp_path / "mv"), tmp_path / "a")
    saved = save_to_disk(
        tmp_path / "saved",
        {"test": mathvision_rows()[:4], "testmini": mathvision_rows()[:1]},
        MATHVISION_COLUMNS,
    )
    saved_items = items_of(saved, tmp_path / "b")
    assert list(saved_items) == list(parquet_items)[:4]
    for key, item in saved_items.items():
        other = parquet_items[key]
        assert item.model_dump(exclude={"image"}) == other.model_dump(exclude={"image"})
        assert Path(item.image).read_bytes() == Path(other.image).read_bytes()
    with pytest.raises(InputError, match=r"no split 'validation'.*splits: test, testmini"):
        items_of(saved, tmp_path / "c", split="validation")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"answer": "F"}, "answer", "letter A-E, got 'F'"),
        ({"answer": "3"}, "answer", "letter A-E"),
        ({"options": ["x", ""]}, "options", "option B is empty"),
        ({"answer": "  "}, "answer", "empty value"),
        ({"decoded_image": None, "image": None}, "decoded_image", "no image"),
        ({"id": None}, "id", "expected an id"),
    ],
)
def test_malformed_rows(tmp_path, change, field, message):
    rows = mathvision_rows()[:2]
    rows[1] = {**rows[1], "options": ["p", "q", "r", "s", "t"], "answer": "B", **change}
    root = write_mathvision(tmp_path / "mv", rows)
    with pytest.raises(InputError) as info:
        items_of(root, tmp_path / "set")
    assert f"row 1: field {field}: " in str(info.value)
    assert message in str(info.value)
