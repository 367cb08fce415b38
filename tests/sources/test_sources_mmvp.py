"""MMVP: CSV + image folder, options string, (a) -> A, pairs, corrections with sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")

from source_fixtures import (
    draw_image,
    mmvp_rows,
    write_mmvp_lmms,
    write_mmvp_original,
)

from crystalbench.errors import InputError
from crystalbench.sources import BuildSpec, build_item_set, read_item_set
from crystalbench.sources.mmvp import (
    gold_letter,
    packaged_corrections,
    parse_options,
)

WITH_CORRECTED = (1, 2, 99, 100, 279, 280)


def build(location: Path, out: Path, **options):
    record = build_item_set(BuildSpec(source="mmvp", location=str(location), **options), out)
    return record, {item.id: item for item in read_item_set(out).items}


def test_parse_options_and_gold():
    assert parse_options("(a) Open (b) Closed") == ["Open", "Closed"]
    assert parse_options("(a) The left one (with stripes) (b) The right one") == [
        "The left one (with stripes)",
        "The right one",
    ]
    assert parse_options("(a) Yes (c) No") == []
    assert parse_options("Yes or no") == []
    assert gold_letter(" (a) ") == "A"
    assert gold_letter("(z)") == "Z"
    assert gold_letter("ab") is None


def test_original_csv_layout(tmp_path):
    root = write_mmvp_original(tmp_path / "MMVP")
    record, items = build(root, tmp_path / "set")
    assert list(items) == ["mmvp/1", "mmvp/2", "mmvp/3", "mmvp/4"]
    first = items["mmvp/1"]
    assert first.question == "Are the butterfly's wings closer to being open or closed?"
    assert first.options == ["Open", "Closed"]
    assert (first.answer, first.answer_type) == ("A", "multiple_choice")
    assert items["mmvp/2"].answer == "B"
    assert first.metadata["pair"] == 0
    assert first.metadata["pair_items"] == ["mmvp/1", "mmvp/2"]
    assert items["mmvp/3"].metadata["pair_items"] == ["mmvp/3", "mmvp/4"]
    assert first.metadata["index_base"] == 1
    assert Path(first.image).read_bytes() == (root / "MMVP Images" / "1.jpg").read_bytes()
    assert record.upstream.kind == "csv"
    assert record.conventions["pairs_incomplete"] == 0
    assert record.conventions["pairs_complete"] == 2


def test_corrections_are_applied_with_their_sources(tmp_path):
    root = write_mmvp_original(tmp_path / "MMVP", mmvp_rows(WITH_CORRECTED))
    record, items = build(root, tmp_path / "set")
    # published labels: odd Index (a), even Index (b); the four corrections flip them
    assert [items[f"mmvp/{i}"].answer for i in WITH_CORRECTED] == ["A", "B", "B", "A", "B", "A"]
    corrected = items["mmvp/279"]
    assert corrected.metadata["gold_before_correction"] == "A"
    assert "https://github.com/tsb0601/MMVP/issues/14" in corrected.metadata["correction_sources"]
    assert "gold_before_correction" not in items["mmvp/1"].metadata
    assert record.conventions["corrections_applied"] == 4
    assert any("Index 99" in note and "issues/30" in note for note in record.notes)


def test_corrections_can_be_switched_off(tmp_path):
    root = write_mmvp_original(tmp_path / "MMVP", mmvp_rows(WITH_CORRECTED))
    record, items = build(root, tmp_path / "set", corrections=False)
    assert [items[f"mmvp/{i}"].answer for i in WITH_CORRECTED] == ["A", "B", "A", "B", "A", "B"]
    assert "corrections_applied" not in record.conventions
    assert record.spec.corrections is False
    assert "MMVP ground-truth corrections not applied (--no-corrections)" in record.notes


def test_corrected_upstream_labels_are_left_alone(tmp_path):
    rows = mmvp_rows(WITH_CORRECTED)
    for row in rows:  # lmms-lab-eval/MMVP ships the four labels fixed
        if row["Index"] in (99, 100, 279, 280):
            row["Correct Answer"] = "(b)" if row["Correct Answer"] == "(a)" else "(a)"
    record, items = build(write_mmvp_lmms(tmp_path / "lmms", rows), tmp_path / "set")
    assert [items[f"mmvp/{i}"].answer for i in WITH_CORRECTED] == ["A", "B", "B", "A", "B", "A"]
    assert record.conventions["corrections_already_upstream"] == 4
    assert "corrections_applied" not in record.conventions
    assert record.upstream.kind == "parquet"


def test_packaged_corrections_file_names_a_source_for_each():
    corrections = packaged_corrections()
    assert sorted(corrections) == [99, 100, 279, 280]
    for index, correction in corrections.items():
        assert correction.sources
        assert all(s.startswith("https://github.com/") for s in correction.sources)
        assert {correction.old, correction.new} == {"(a)", "(b)"}
        partner = index + 1 if index % 2 else index - 1
        assert corrections[partner].old == correction.new  # pairs keep opposite answers


def test_incomplete_pair_is_noted(tmp_path):
    root = write_mmvp_original(tmp_path / "MMVP", mmvp_rows((1, 2, 3, 4)))
    manifest = tmp_path / "crystal-mmvp.json"
    manifest.write_text(json.dumps({"source": "mmvp", "ids": ["1", "2", "4"]}))
    record, items = build(root, tmp_path / "set", manifest=str(manifest))
    assert list(items) == ["mmvp/1", "mmvp/2", "mmvp/4"]
    assert record.conventions["pairs_incomplete"] == 1
    assert "pair 1 is incomplete: only mmvp/4 is in the set" in " ".join(record.notes)


def test_csv_header_typo_is_read_as_index(tmp_path):
    root = write_mmvp_original(
        tmp_path / "MMVP", header=("lndex", "Question", "Options", "Correct Answer")
    )
    record, items = build(root / "Questions.csv", tmp_path / "set")
    assert list(items) == ["mmvp/1", "mmvp/2", "mmvp/3", "mmvp/4"]
    assert "Questions.csv column 'lndex' read as 'Index'" in record.notes


def test_malformed_csv_row_names_the_line(tmp_path):
    rows = mmvp_rows()
    rows[2] = dict(rows[2], Options="Left or right")
    root = write_mmvp_original(tmp_path / "MMVP", rows)
    with pytest.raises(InputError) as info:
        build(root, tmp_path / "set")
    assert "Questions.csv:4: field Options: expected options like '(a) Open (b) Closed'" in str(
        info.value
    )


def test_bad_gold_and_missing_image(tmp_path):
    rows = mmvp_rows()
    rows[1] = dict(rows[1], **{"Correct Answer": "(c)"})
    with pytest.raises(
        InputError, match=r"Questions.csv:3: field Correct Answer: expected one of \(a\), \(b\)"
    ):
        build(write_mmvp_original(tmp_path / "a", rows), tmp_path / "set-a")
    root = write_mmvp_original(tmp_path / "b")
    (root / "MMVP Images" / "3.jpg").unlink()
    with pytest.raises(
        InputError, match=r"Questions.csv:4: field Index: image 'MMVP Images/3.jpg' not found"
    ):
        build(root, tmp_path / "set-b")
    (root / "MMVP Images" / "3.png").write_bytes(draw_image(3))
    _, items = build(root, tmp_path / "set-c")
    assert items["mmvp/3"].image.endswith("mmvp-3.png")


def test_quoted_question_with_comma_and_ragged_row(tmp_path):
    root = tmp_path / "MMVP"
    write_mmvp_original(root)
    csv_file = root / "Questions.csv"
    lines = csv_file.read_text().splitlines()
    lines[1] = '1,"Is it open, or closed?",(a) Open (b) Closed,(a)'
    csv_file.write_text("\n".join(lines) + "\n")
    _, items = build(root, tmp_path / "ok")
    assert items["mmvp/1"].question == "Is it open, or closed?"
    lines[2] = "2,too few fields"
    csv_file.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"Questions\.csv:3: 2 fields, the header has 4"):
        build(root, tmp_path / "bad")
