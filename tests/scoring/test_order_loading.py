"""``reference_precedence`` in benchmark files: JSONL items, hub-shaped rows (JSONL, Parquet,
``save_to_disk``), the fingerprint, and bad precedences refused by ``crystal score`` with exit
code 2 naming the file, the line and the field."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.errors import InputError
from crystalbench.types import BenchmarkItem
from fakes import make_item, write_jsonl

runner = CliRunner()

STEPS = ["The bar for May is 40.", "The bar for June is 55.", "June minus May is 15."]
BAD = {
    "cycle": (
        [[0, 1], [1, 2], [2, 0]],
        "field reference_precedence: Value error, the pairs form a cycle 0 -> 1 -> 2 -> 0",
    ),
    "outside": (
        [[0, 2], [1, 3]],
        "field reference_precedence: Value error, pair 1 [1, 3]: step 3 is outside the chain "
        "(steps 0..2)",
    ),
    "backward": (
        [[2, 1]],
        "field reference_precedence: Value error, pair 0 [2, 1]: step 2 must come before step 1",
    ),
    "self": ([[1, 1]], "field reference_precedence: Value error, pair 0 [1, 1]: a step cannot"),
    "not a pair": ([[0, 1, 2]], "field reference_precedence.0: Tuple should have at most 2"),
}


def native(i: int, precedence: Any = None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"q{i}",
        "source": "plotqa",
        "question": f"Question {i}?",
        "answer": "15",
        "reference_steps": STEPS,
    }
    if precedence is not None:
        row["reference_precedence"] = precedence
    return row


def hub_row(precedence: Any = None, *, column: bool = True) -> dict[str, Any]:
    row: dict[str, Any] = {
        "question": "How much higher is June?",
        "answer": "15",
        "reference_steps": STEPS,
        "choices": [],
        "options": [],
        "source": "plotqa",
        "level": 3,
    }
    if column:
        row["reference_precedence"] = precedence
    return row


def score(benchmark: Path, tmp_path: Path):
    preds = write_jsonl(tmp_path / "preds.jsonl", [{"id": "q0", "reasoning_steps": STEPS}])
    args = ["score", "-b", str(benchmark), "-p", str(preds), "-o", str(tmp_path / "out")]
    return runner.invoke(app, [*args, "--encoder", "hash", "--no-cache", "--no-progress"])


# ----------------------------------------------------------------------------- JSONL items


def test_an_item_keeps_its_precedence_and_writes_it_only_when_it_has_one(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [native(0, [[1, 2], [0, 2], [1, 2]]), native(1)])
    first, second = load_benchmark(path).items
    assert first.reference_precedence == [(0, 2), (1, 2)]  # sorted, each pair once
    assert json.loads(first.model_dump_json())["reference_precedence"] == [[0, 2], [1, 2]]
    assert second.reference_precedence is None
    assert "reference_precedence" not in second.model_dump()
    assert BenchmarkItem.model_validate_json(first.model_dump_json()) == first
    empty = make_item(steps=STEPS, reference_precedence=[])
    assert empty.reference_precedence == []  # every step interchangeable: written, not absent
    assert json.loads(empty.model_dump_json())["reference_precedence"] == []


@pytest.mark.parametrize("case", sorted(BAD))
def test_crystal_score_refuses_a_bad_precedence_with_file_line_and_field(tmp_path, case):
    precedence, message = BAD[case]
    path = write_jsonl(tmp_path / "bench.jsonl", [native(0), native(1, precedence)])
    result = score(path, tmp_path)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"bench.jsonl:2: {message}" in text
    assert "Traceback" not in result.output


def test_fingerprints_without_a_precedence_are_unchanged(tmp_path):
    """The fingerprint formula of items without the field is the one results already carry."""
    bench = load_benchmark("sample")
    digest = hashlib.sha256()
    for item in bench.items:
        fields = [item.id, item.source, item.question, item.options, item.answer,
                  item.answer_type, item.reference_steps]  # fmt: skip
        digest.update(json.dumps(fields, ensure_ascii=False).encode() + b"\n")
    assert bench.fingerprint == digest.hexdigest()[:16]
    a = load_benchmark(write_jsonl(tmp_path / "a.jsonl", [native(0)]))
    b = load_benchmark(write_jsonl(tmp_path / "b.jsonl", [native(0, [[0, 2], [1, 2]])]))
    c = load_benchmark(write_jsonl(tmp_path / "c.jsonl", [native(0, [[0, 1], [1, 2]])]))
    chain = load_benchmark(write_jsonl(tmp_path / "d.jsonl", [native(0, [])]))
    assert len({a.fingerprint, b.fingerprint, c.fingerprint, chain.fingerprint}) == 4


# ----------------------------------------------------------------------------- hub-shaped rows


def test_hub_rows_in_jsonl_read_the_column_not_the_metadata(tmp_path):
    rows = [
        hub_row([[0, 2], [1, 2]]),
        hub_row("[[0, 2], [1, 2]]"),  # JSON text, as a string column holds it
        hub_row(None),
        hub_row(column=False),
    ]
    items = load_benchmark(write_jsonl(tmp_path / "hub.jsonl", rows)).items
    assert [i.reference_precedence for i in items] == [[(0, 2), (1, 2)]] * 2 + [None, None]
    assert all(i.metadata == {"level": 3} for i in items)


def test_a_bad_precedence_in_a_hub_row_names_the_line(tmp_path):
    path = write_jsonl(tmp_path / "hub.jsonl", [hub_row(None), hub_row([[0, 1], [1, 0]])])
    with pytest.raises(InputError) as caught:
        load_benchmark(path)
    assert "hub.jsonl:2: field reference_precedence: Value error, the pairs form a cycle" in str(
        caught.value
    )
    path = write_jsonl(tmp_path / "text.jsonl", [hub_row("[[0, 1]")])
    with pytest.raises(InputError, match=r"text\.jsonl:1: field reference_precedence: must be"):
        load_benchmark(path)


def _dataset(precedences: list[Any]):
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {
            "question": datasets.Value("string"),
            "answer": datasets.Value("string"),
            "reference_steps": datasets.List(datasets.Value("string")),
            "choices": datasets.List(datasets.Value("string")),
            "options": datasets.List(datasets.Value("string")),
            "source": datasets.Value("string"),
            "level": datasets.Value("int64"),
            "reference_precedence": datasets.List(datasets.List(datasets.Value("int64"))),
        }
    )
    return datasets.Dataset.from_list([hub_row(p) for p in precedences], features=features)


@pytest.mark.parametrize("form", ["parquet", "save_to_disk"])
def test_parquet_and_save_to_disk_read_the_column(tmp_path, form):
    dataset = _dataset([[[0, 2], [1, 2]], None, []])
    if form == "parquet":
        dataset.to_parquet(str(tmp_path / "crystal.parquet"))
        path = tmp_path / "crystal.parquet"
    else:
        dataset.save_to_disk(str(tmp_path / "crystal"))
        path = tmp_path / "crystal"
    items = load_benchmark(path).items
    assert [i.reference_precedence for i in items] == [[(0, 2), (1, 2)], None, []]
    assert all(i.metadata == {"level": 3} for i in items)


@pytest.mark.parametrize("form", ["parquet", "save_to_disk"])
def test_crystal_score_refuses_a_bad_precedence_in_a_dataset(tmp_path, form):
    dataset = _dataset([None, [[0, 2], [2, 5]]])
    if form == "parquet":
        path = tmp_path / "crystal.parquet"
        dataset.to_parquet(str(path))
    else:
        path = tmp_path / "crystal"
        dataset.save_to_disk(str(path))
    result = score(path, tmp_path)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"{path}:1: field reference_precedence: Value error, pair 1 [2, 5]" in text
