"""RealWorldQA: options and the instruction taken out of the question text."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    MC_INSTRUCTION,
    OPEN_INSTRUCTION,
    draw_image,
    image_struct,
    realworldqa_rows,
    write_realworldqa,
)

from crystalbench.errors import InputError
from crystalbench.sources import BuildSpec, build_item_set, read_item_set
from crystalbench.sources.realworldqa import split_question


def build(location: Path, out: Path, **options):
    record = build_item_set(BuildSpec(source="realworldqa", location=str(location), **options), out)
    return record, read_item_set(out).items


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"Which way?\nA. Left\nB. Right\n{MC_INSTRUCTION}",
            ("Which way?", ["Left", "Right"], MC_INSTRUCTION),
        ),
        (
            f"How many cars are parked? {OPEN_INSTRUCTION}",
            ("How many cars are parked?", [], OPEN_INSTRUCTION),
        ),
        ("Which one?\nA) red\nB) green\nC) blue", ("Which one?", ["red", "green", "blue"], "")),
        # a lone "A." line is prose; letters must run from A
        ("Sign reads:\nA. Main St\nWhat is it?", ("Sign reads:\nA. Main St\nWhat is it?", [], "")),
        ("Q?\nB. x\nC. y", ("Q?\nB. x\nC. y", [], "")),
    ],
)
def test_split_question(text, expected):
    assert split_question(text) == expected


def test_build_across_two_shards(tmp_path):
    record, items = build(write_realworldqa(tmp_path / "rwq"), tmp_path / "set")
    assert len(record.upstream.files) == 2
    assert [i.id for i in items] == [f"realworldqa/test-{n}" for n in range(4)]
    road, lights, car, larger = items
    assert road.question == "In which direction is the road curving?"
    assert road.options == ["Left", "Right", "Straight"]
    assert (road.answer, road.answer_type) == ("B", "multiple_choice")
    assert road.metadata["answer_text"] == "Right"
    assert road.metadata["original_question"] == realworldqa_rows()[0]["question"]
    assert road.metadata["instruction"] == MC_INSTRUCTION
    assert (lights.question, lights.options) == ("How many traffic lights are visible?", [])
    assert (lights.answer, lights.answer_type) == ("3", "numeric")
    assert lights.metadata["instruction"] == OPEN_INSTRUCTION
    assert (car.answer, car.answer_type) == ("Yes", "yes_no")
    assert (larger.answer, larger.options) == ("A", ["The truck", "The bicycle"])
    assert record.conventions == {"instruction_removed": 4, "multiple_choice": 2, "open": 2}


def test_gold_written_as_option_text_becomes_its_letter(tmp_path):
    rows = [
        {
            "image": image_struct(draw_image(9)),
            "question": f"Which is nearer?\nA. The lamp\nB. The bench\n{MC_INSTRUCTION}",
            "answer": "the bench",
        }
    ]
    record, [item] = build(write_realworldqa(tmp_path / "rwq", rows), tmp_path / "set")
    assert item.answer == "B"
    assert item.metadata["gold_as_written"] == "the bench"
    assert record.conventions["gold_text_to_letter"] == 1


def test_gold_outside_the_options_names_the_shard_and_row(tmp_path):
    rows = realworldqa_rows()
    rows[3] = dict(rows[3], answer="D")
    with pytest.raises(InputError) as info:
        build(write_realworldqa(tmp_path / "rwq", rows), tmp_path / "set")
    message = str(info.value)
    assert "test-00001-of-00002-4a5b6c7d.parquet row 1: field answer:" in message
    assert "options A-B but the answer 'D' names none of them" in message


def test_missing_image_is_malformed(tmp_path):
    rows = realworldqa_rows()
    rows[0] = dict(rows[0], image=None)
    with pytest.raises(InputError, match="row 0: field image: no image"):
        build(write_realworldqa(tmp_path / "rwq", rows), tmp_path / "set")
