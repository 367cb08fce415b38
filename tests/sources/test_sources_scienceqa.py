"""ScienceQA-IMG: image rows only, index -> letter, hint as context, taxonomy in metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    SCIENCEQA_COLUMNS,
    save_to_disk,
    scienceqa_rows,
    write_scienceqa,
)

from crystalbench.errors import InputError
from crystalbench.sources import BuildSpec, build_item_set, read_item_set


def build(location: Path, out: Path, **options):
    record = build_item_set(
        BuildSpec(source="scienceqa-img", location=str(location), **options), out
    )
    return record, read_item_set(out).items


def test_test_split_conventions(tmp_path):
    record, items = build(write_scienceqa(tmp_path / "sqa"), tmp_path / "set")
    assert [i.id for i in items] == ["scienceqa/test-0", "scienceqa/test-1", "scienceqa/test-2"]
    assert {i.source for i in items} == {"scienceqa"}
    first, second, third = items
    assert first.options == ["Palau", "the Federated States of Micronesia", "Tonga"]
    assert (first.answer, first.answer_type) == ("B", "multiple_choice")
    assert first.metadata["answer_text"] == "the Federated States of Micronesia"
    assert first.metadata["answer_index"] == 1
    assert first.question == "Which country is highlighted?"
    assert "hint" not in first.metadata
    assert second.question == (
        "Context: Sea otters have webbed feet. Their feet are adapted for swimming.\n"
        "Which animal's feet are also adapted for swimming?"
    )
    assert second.metadata["original_question"] == (
        "Which animal's feet are also adapted for swimming?"
    )
    assert second.metadata["hint"].startswith("Sea otters")
    assert (second.metadata["subject"], second.metadata["grade"], second.metadata["topic"]) == (
        "natural science",
        "grade3",
        "biology",
    )
    assert third.answer == "D"
    assert "lecture" not in third.metadata  # empty upstream
    assert record.upstream.files[0].endswith("ScienceQA-IMG/test-00000-of-00001.parquet")
    assert record.conventions["hint_in_question"] == 1


def test_train_split_for_the_training_pool(tmp_path):
    _, items = build(write_scienceqa(tmp_path / "sqa"), tmp_path / "pool", split="train")
    assert [i.id for i in items] == ["scienceqa/train-0", "scienceqa/train-1", "scienceqa/train-2"]
    assert items[0].metadata["upstream_split"] == "train"


def test_full_config_skips_text_only_rows_with_the_reason(tmp_path):
    root = write_scienceqa(tmp_path / "sqa")
    record, items = build(root, tmp_path / "set", hub_config="ScienceQA-FULL")
    assert record.upstream.files[0].endswith("ScienceQA-FULL/test-00000-of-00001.parquet")
    assert len(items) == 3
    assert record.counts.skipped == 1
    assert record.counts.skipped_by_reason == {"no image": 1}
    [skipped] = record.skipped
    assert (skipped.upstream_id, skipped.reason) == ("test-1", "no image")
    assert skipped.where.endswith("test-00000-of-00001.parquet row 1")
    assert [i.id for i in items] == ["scienceqa/test-0", "scienceqa/test-2", "scienceqa/test-3"]


def test_two_configurations_without_a_choice_are_ambiguous(tmp_path):
    root = write_scienceqa(tmp_path / "sqa")
    with pytest.raises(InputError, match="in several folders"):
        build(root, tmp_path / "set", hub_config="ScienceQA-OTHER")


def test_save_to_disk_dataset_dict(tmp_path):
    saved = save_to_disk(
        tmp_path / "saved",
        {"train": scienceqa_rows("train"), "test": scienceqa_rows("test", with_text_only=True)},
        SCIENCEQA_COLUMNS,
    )
    record, items = build(saved, tmp_path / "set")
    assert record.upstream.kind == "save_to_disk"
    assert len(items) == 3
    assert record.counts.skipped == 1


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"answer": 4}, "answer", "answer index 4 is outside the 4 choices"),
        ({"answer": -1}, "answer", "outside"),
        ({"choices": ["only one"], "answer": 0}, "choices", "at least 2 choices"),
        ({"question": ""}, "question", "empty value"),
    ],
)
def test_malformed_rows(tmp_path, change, field, message):
    rows = scienceqa_rows("test")
    rows[2] = {**rows[2], **change}
    root = write_scienceqa(tmp_path / "sqa", {"test": rows})
    with pytest.raises(InputError) as info:
        build(root, tmp_path / "set")
    assert f"test-00000-of-00001.parquet row 2: field {field}: " in str(info.value)
    assert message in str(info.value)
