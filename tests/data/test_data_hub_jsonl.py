"""A JSONL export of the hub dataset loads exactly as the Parquet and hub paths do.

Hub rows carry both ``choices`` and ``options`` (either may be empty) and no ``id``; one
function (``hub_row_to_item``) turns them into items on every path, so the same rows give
the same items whether they come as JSONL or as Parquet.
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from crystalbench.data.loading import load_benchmark
from crystalbench.errors import InputError
from fakes import write_jsonl

HUB_ROWS = [
    {
        "question": "Which country is highlighted?",
        "answer": "the Federated States of Micronesia",
        "reference_steps": [
            "Look at the highlighted islands in the western Pacific.",
            "Select option C from the provided list of choices.",
        ],
        "choices": ["Palau", "Nauru", "the Federated States of Micronesia"],
        "options": [],
        "source": "ScienceQA",
        "subject": "social science",
    },
    {
        "question": "How many bars are taller than 40?",
        "answer": "3",
        "reference_steps": ["Read each bar's height.", "Three bars pass 40."],
        "choices": [],
        "options": [],
        "source": "PlotQA",
        "subject": None,
    },
    {
        "question": "Is the door open or closed?",
        "answer": "B",
        "reference_steps": ["The door's edge touches the frame.", "So it is closed."],
        "choices": [],
        "options": ["open", "closed"],
        "source": "MMVP",
        "subject": "vision",
    },
]


def _png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (12, 9), (shade, 90, 200 - shade)).save(buffer, format="PNG")
    return buffer.getvalue()


def _parquet(tmp_path):
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {
            "image": datasets.Image(),
            "question": datasets.Value("string"),
            "answer": datasets.Value("string"),
            "reference_steps": datasets.Sequence(datasets.Value("string")),
            "choices": datasets.Sequence(datasets.Value("string")),
            "options": datasets.Sequence(datasets.Value("string")),
            "source": datasets.Value("string"),
            "subject": datasets.Value("string"),
        }
    )
    rows = [
        {**row, "image": {"bytes": _png(i * 60), "path": None}} for i, row in enumerate(HUB_ROWS)
    ]
    path = tmp_path / "crystal.parquet"
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))
    return path


def _jsonl(tmp_path, image_as="path"):
    (tmp_path / "images").mkdir(exist_ok=True)
    rows = []
    for i, row in enumerate(HUB_ROWS):
        data = _png(i * 60)
        if image_as == "path":
            (tmp_path / "images" / f"{i}.png").write_bytes(data)
            image = f"images/{i}.png"
        else:
            image = {"bytes": base64.b64encode(data).decode("ascii"), "path": None}
        rows.append({**row, "image": image})
    return write_jsonl(tmp_path / "crystal.jsonl", rows)


def _fields(bench):
    return [
        (
            item.id,
            item.source,
            item.question,
            item.options,
            item.answer,
            item.answer_type,
            item.reference_steps,
            item.difficulty,
            item.metadata,
        )
        for item in bench.items
    ]


@pytest.mark.parametrize("image_as", ["path", "bytes"])
def test_hub_rows_as_jsonl_and_as_parquet_give_identical_items(tmp_path, image_as):
    from_parquet = load_benchmark(_parquet(tmp_path))
    from_jsonl = load_benchmark(_jsonl(tmp_path, image_as))
    assert _fields(from_jsonl) == _fields(from_parquet)
    assert from_jsonl.fingerprint == from_parquet.fingerprint
    for a, b in zip(from_jsonl.items, from_parquet.items, strict=True):
        assert from_jsonl.image_bytes(a) == from_parquet.image_bytes(b)
    first = from_jsonl.items[0]
    assert first.id == "0"
    assert first.options == HUB_ROWS[0]["choices"]
    assert first.source == "scienceqa"
    assert first.metadata == {"subject": "social science"}
    assert from_jsonl.items[1].options == []
    assert from_jsonl.items[2].options == ["open", "closed"]


def test_native_records_with_choices_only_still_load(tmp_path):
    path = write_jsonl(
        tmp_path / "b.jsonl",
        [
            {
                "id": "door-1",
                "source": "mmvp",
                "question": "Is the door open?",
                "choices": ["yes", "no"],
                "answer": "no",
                "reference_steps": ["The door touches its frame."],
                "metadata": {"split": "dev"},
            }
        ],
    )
    item = load_benchmark(path).items[0]
    assert (item.id, item.options, item.metadata) == ("door-1", ["yes", "no"], {"split": "dev"})


def test_hub_jsonl_errors_name_line_and_field(tmp_path):
    rows = [HUB_ROWS[0], {**HUB_ROWS[1], "reference_steps": []}]
    path = write_jsonl(tmp_path / "b.jsonl", rows)
    with pytest.raises(InputError, match=r"b\.jsonl:2: field reference_steps: reference_steps"):
        load_benchmark(path)
    path = write_jsonl(tmp_path / "c.jsonl", [{**HUB_ROWS[0], "question": ["Q?"]}])
    with pytest.raises(InputError, match=r"c\.jsonl:1: field question: must be text, got array"):
        load_benchmark(path)
    path = write_jsonl(tmp_path / "d.jsonl", [{**HUB_ROWS[0], "image": {"bytes": "%%%"}}])
    with pytest.raises(InputError, match=r"d\.jsonl:1: field image\.bytes: not valid base64"):
        load_benchmark(path)
    path = write_jsonl(tmp_path / "e.jsonl", [{**HUB_ROWS[0], "id": [1, 2]}])
    with pytest.raises(InputError, match=r"e\.jsonl:1: field id: id must be a string or integer"):
        load_benchmark(path)


def test_hub_jsonl_with_its_own_ids_and_blank_lines(tmp_path):
    rows = [json.dumps({**row, "id": f"crystal-{i}"}) for i, row in enumerate(HUB_ROWS)]
    path = tmp_path / "b.jsonl"
    path.write_text(rows[0] + "\n\n" + rows[1] + "\n" + rows[2] + "\n")
    assert load_benchmark(path).ids == ["crystal-0", "crystal-1", "crystal-2"]
    path.write_text("\n".join(json.dumps(row) for row in HUB_ROWS) + "\n")
    assert load_benchmark(path).ids == ["0", "1", "2"]  # row positions, as on the hub
