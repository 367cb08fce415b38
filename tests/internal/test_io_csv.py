"""crystalbench._internal.io.read_csv: the one CSV reader of label and pair files, and its
refusals."""

from __future__ import annotations

import pytest

from crystalbench._internal.io import InputLimits, read_csv
from crystalbench.errors import InputError
from crystalbench.review.importing import read_pair_rows
from crystalbench.validation.labels import read_labels
from crystalbench.validation.pairs import read_pairs


def write(tmp_path, text: str | bytes, name: str = "rows.csv"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_rows_with_line_numbers_a_byte_order_mark_and_a_quoted_newline(tmp_path):
    path = write(tmp_path, '\ufeffpair_id,note\r\np1,"two\nlines"\r\np2,\r\np3\r\n')
    assert read_csv(path, ["pair_id"]) == [
        (3, {"pair_id": "p1", "note": "two\nlines"}),
        (4, {"pair_id": "p2", "note": ""}),
        (5, {"pair_id": "p3"}),  # a short row lacks the missing columns
    ]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("pair_id,label\np1,match\n", 1, r"CSV header lacks annotator \(it has pair_id, label\)"),
        ("pair_id,annotator,label,label\np1,a,match,no\n", 1, "names label more than once"),
        ("pair_id,annotator,label\np1,a,match,extra\n", 2, "more cells than header columns"),
        ('pair_id,annotator,label\np1,a,"match\np2,b,match\n', 2, "malformed CSV"),
        ('pair_id,annotator,label\np1,a,"match"x\n', 2, "malformed CSV"),
        ("pair_id,annotator,label\n", None, "file holds no records"),
        (b"pair_id,annotator,label\np1,\xff,match\n", 2, "not UTF-8"),
    ],
)
def test_refusals_name_the_file_and_the_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as caught:
        read_csv(path, ["pair_id", "annotator", "label"])
    assert caught.value.path == str(path)
    assert caught.value.line == line


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    path = write(tmp_path, "pair_id\n" + "p\n" * 600)
    limits = InputLimits(max_file_bytes=1024)
    with pytest.raises(InputError, match="over the limit of 1,024"):
        read_csv(path, ["pair_id"], limits=limits)
    with pytest.raises(InputError, match="file not found"):
        read_csv(tmp_path / "missing.csv")


def test_review_and_validation_read_a_pairs_csv_through_the_same_reader(tmp_path):
    """The review app's import and validation's pair reader see the same rows and refuse the
    same broken file with the same message."""
    header = "pair_id,item_id,model,pred_step,ref_step,cosine,band\n"
    good = write(tmp_path, header + 'p1,i1,m,The bar is red.,It is red.,0.61,"[0.50,0.70)"\n')
    assert [line for line, _ in read_pair_rows(good)] == [2]
    assert [p.pair_id for p in read_pairs(good)] == ["p1"]
    broken = write(tmp_path, header + "p1,i1,m,a,b,0.5,x,y\n", "broken.csv")
    messages = set()
    for reader in (read_pair_rows, read_pairs):
        with pytest.raises(InputError, match="more cells") as caught:
            reader(broken)
        messages.add(str(caught.value))
    assert len(messages) == 1
    labels = write(tmp_path, "pair_id,annotator\np1,ann\n", "labels.csv")
    with pytest.raises(InputError, match="CSV header lacks label"):
        read_labels(labels)
