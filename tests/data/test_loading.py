"""Benchmark loading (JSONL, Parquet, save_to_disk, hub errors) and prediction files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from crystalbench.data.loading import hub_row_to_item, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.errors import BenchmarkUnavailableError, InputError, UnknownNameError
from fakes import write_jsonl


def _png(color=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buffer, format="PNG")
    return buffer.getvalue()


def _item(i: int, **extra):
    return {
        "id": f"q{i}",
        "source": "plotqa" if i % 2 else "mmvp",
        "question": f"Question {i}?",
        "answer": "3",
        "reference_steps": ["first step", "second step"],
        **extra,
    }


# ----------------------------------------------------------------------------- JSONL benchmark


def test_jsonl_benchmark_resolves_relative_images(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(_png())
    path = write_jsonl(tmp_path / "b.jsonl", [_item(0, image="img/a.png"), _item(1)])
    bench = load_benchmark(path)
    assert bench.ids == ["q0", "q1"]
    assert Path(bench.items[0].image).is_absolute()
    assert bench.image_bytes(bench.items[0]) == _png()
    assert bench.image_bytes(bench.items[1]) is None


def test_jsonl_benchmark_errors_name_file_line_field(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [_item(0), {**_item(1), "reference_steps": "oops"}])
    with pytest.raises(InputError) as info:
        load_benchmark(path)
    assert str(info.value).startswith(f"{path}:2: field reference_steps:")


def test_jsonl_benchmark_unknown_field_lists_valid_ones(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [{**_item(0), "refernce_steps": []}])
    with pytest.raises(InputError, match=r"b\.jsonl:1: field refernce_steps: unknown field"):
        load_benchmark(path)


def test_jsonl_benchmark_duplicate_ids(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [_item(0), _item(0)])
    with pytest.raises(
        InputError, match=r":2: field id: duplicate item id 'q0' \(first on line 1\)"
    ):
        load_benchmark(path)


def test_jsonl_benchmark_malformed_line(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps(_item(0)) + "\n{not json\n")
    with pytest.raises(InputError, match=r"b\.jsonl:2: malformed JSON"):
        load_benchmark(path)


def test_empty_benchmark_file(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text("\n\n")
    with pytest.raises(InputError, match="holds no records"):
        load_benchmark(path)


def test_empty_reference_chain_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [{**_item(0), "reference_steps": []}])
    with pytest.raises(InputError, match="reference_steps is empty"):
        load_benchmark(path)


def test_missing_benchmark_path():
    with pytest.raises(InputError, match="no such file or folder"):
        load_benchmark("no/such/thing.jsonl")


def test_subset_by_source_and_unknown_source(tmp_path):
    bench = load_benchmark(write_jsonl(tmp_path / "b.jsonl", [_item(i) for i in range(6)]))
    assert [i.id for i in bench.subset(sources=["plotqa"])] == ["q1", "q3", "q5"]
    assert len(bench.subset(limit=2)) == 2
    with pytest.raises(UnknownNameError, match="did you mean 'plotqa'"):
        bench.subset(sources=["plotq"])


def test_fingerprint_changes_with_content(tmp_path):
    a = load_benchmark(write_jsonl(tmp_path / "a.jsonl", [_item(0), _item(1)]))
    b = load_benchmark(write_jsonl(tmp_path / "b.jsonl", [_item(0), {**_item(1), "answer": "4"}]))
    c = load_benchmark(write_jsonl(tmp_path / "c.jsonl", [_item(0), _item(1)]))
    assert a.fingerprint == c.fingerprint
    assert a.fingerprint != b.fingerprint


# ----------------------------------------------------------------------------- hub formats

HUB_ROWS = [
    {
        "question": "Which option?",
        "answer": "the Federated States of Micronesia",
        "reference_steps": [
            "Look at the map.",
            "Select option C from the provided list of choices.",
        ],
        "choices": ["Palau", "Nauru", "the Federated States of Micronesia"],
        "options": [],
        "source": "scienceqa",
    },
    {
        "question": "How many bars?",
        "answer": "4",
        "reference_steps": ["Count the bars.", "There are four bars."],
        "choices": [],
        "options": [],
        "source": "plotqa",
    },
]


def _hub_dataset():
    datasets = pytest.importorskip("datasets")
    rows = [
        dict(r, image=Image.open(io.BytesIO(_png((i * 80, 0, 0))))) for i, r in enumerate(HUB_ROWS)
    ]
    features = datasets.Features(
        {
            "image": datasets.Image(),
            "question": datasets.Value("string"),
            "answer": datasets.Value("string"),
            "reference_steps": datasets.Sequence(datasets.Value("string")),
            "choices": datasets.Sequence(datasets.Value("string")),
            "options": datasets.Sequence(datasets.Value("string")),
            "source": datasets.Value("string"),
        }
    )
    return datasets.Dataset.from_list(rows, features=features)


def test_save_to_disk_folder(tmp_path):
    ds = _hub_dataset()
    ds.save_to_disk(str(tmp_path / "crystal"))
    bench = load_benchmark(tmp_path / "crystal")
    assert bench.ids == ["0", "1"]
    assert bench.items[0].options == HUB_ROWS[0]["choices"]
    assert bench.items[1].source == "plotqa"
    image = Image.open(io.BytesIO(bench.image_bytes(bench.items[1])))
    assert image.getpixel((0, 0))[0] == 80


def test_parquet_file(tmp_path):
    ds = _hub_dataset()
    ds.to_parquet(str(tmp_path / "crystal.parquet"))
    bench = load_benchmark(tmp_path / "crystal.parquet")
    assert bench.ids == ["0", "1"]
    assert bench.items[0].reference_steps[-1].startswith("Select option C")
    assert bench.image_bytes(bench.items[0])


def test_hub_snapshot_folder_loads_its_split(tmp_path):
    """A `huggingface-cli download --local-dir` snapshot: the split's Parquet files, found by
    the same reader `crystal data build --from` uses."""
    ds = _hub_dataset()
    (tmp_path / "snap" / "data").mkdir(parents=True)
    ds.to_parquet(str(tmp_path / "snap" / "data" / "test-00000-of-00001-0a1b2c.parquet"))
    ds.select([0]).to_parquet(str(tmp_path / "snap" / "data" / "train-00000-of-00001.parquet"))
    bench = load_benchmark(tmp_path / "snap")
    assert bench.ids == ["0", "1"]
    assert bench.image_bytes(bench.items[1])
    assert load_benchmark(tmp_path / "snap", split="train").ids == ["0"]
    with pytest.raises(InputError, match=r"no Parquet file for split 'dev'; splits found: test"):
        load_benchmark(tmp_path / "snap", split="dev")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no Parquet files in this folder"):
        load_benchmark(tmp_path / "empty")


def test_save_to_disk_dataset_dict_picks_the_split_or_names_the_ones_it_has(tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = _hub_dataset()
    datasets.DatasetDict({"validation": ds.select([1]), "test": ds}).save_to_disk(
        str(tmp_path / "dict")
    )
    assert load_benchmark(tmp_path / "dict").ids == ["0", "1"]
    assert load_benchmark(tmp_path / "dict", split="validation").items[0].source == "plotqa"
    datasets.DatasetDict({"train": ds}).save_to_disk(str(tmp_path / "train-only"))
    with pytest.raises(
        InputError, match="no split 'test' in this save_to_disk folder; splits: train"
    ):
        load_benchmark(tmp_path / "train-only")


def test_a_broken_parquet_file_is_an_input_error(tmp_path):
    pytest.importorskip("datasets")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet benchmark"):
        load_benchmark(tmp_path / "broken.parquet")


def test_hub_row_requires_reference_steps():
    with pytest.raises(InputError, match="reference_steps"):
        hub_row_to_item({"question": "q", "answer": "a", "reference_steps": []}, 3)


def test_hub_unreachable_explains_local_copy(monkeypatch, tmp_path):
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "ds"))
    with pytest.raises(BenchmarkUnavailableError) as info:
        load_benchmark("waybarrios/CRYSTAL")
    message = str(info.value)
    assert "waybarrios/CRYSTAL" in message
    assert "save_to_disk" in message
    assert "--benchmark" in message
    assert "huggingface-cli download waybarrios/CRYSTAL --repo-type dataset" in message
    assert "the hub could not be reached" in message


# ----------------------------------------------------------------------------- predictions


def test_predictions_jsonl_forms(tmp_path):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"id": "q0", "reasoning_steps": ["a", "b"], "answer": "3"},
            {"id": "q1", "response": "Step 1: look. Answer: 4", "model": "m"},
            {"id": 2, "steps": ["x"], "answer": 5, "latency": 0.3},
        ],
    )
    preds = load_predictions(path)
    assert preds.by_id["q0"].reasoning_steps == ["a", "b"]
    assert preds.by_id["q1"].response.startswith("Step 1")
    assert preds.by_id["2"].reasoning_steps == ["x"]
    assert preds.by_id["2"].answer == "5"
    assert preds.where["q1"] == (str(path), 2)


def test_predictions_folder_of_id_json(tmp_path):
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "0.json").write_text(json.dumps({"reasoning_steps": ["s"], "answer": "A"}))
    (folder / "1.json").write_text(json.dumps({"reasoning_steps": [], "answer": "B"}))
    preds = load_predictions(folder)
    assert set(preds.by_id) == {"0", "1"}


def test_predictions_json_object_keyed_by_id(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"0": {"reasoning_steps": ["s"], "answer": "A"}, "1": "raw text"}))
    preds = load_predictions(path)
    assert preds.by_id["1"].response == "raw text"


@pytest.mark.parametrize(
    ("rows", "pattern"),
    [
        (
            [{"id": "q0", "reasoning_steps": "ok"}, {"id": "q0"}],
            r"p\.jsonl:2: field id: duplicate id 'q0'",
        ),
        ([{"reasoning_steps": ["a"]}], r"p\.jsonl:1: field id: missing 'id'"),
        (
            [{"id": "q0", "reasoning_steps": [1, 2]}],
            r"p\.jsonl:1: field reasoning_steps: element 0 is int",
        ),
        (
            [{"id": "q0", "reasoning_steps": {"a": 1}}],
            r"p\.jsonl:1: field reasoning_steps: must be a list",
        ),
        ([{"id": "q0", "answer": ["A"]}], r"p\.jsonl:1: field answer: must be a string"),
        ([{"id": "q0", "response": 3}], r"p\.jsonl:1: field response: must be a string"),
        ([{"id": {"x": 1}}], r"p\.jsonl:1: field id: id must be a string or integer"),
    ],
)
def test_prediction_errors(tmp_path, rows, pattern):
    path = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(InputError, match=pattern):
        load_predictions(path)


def test_lenient_skips_and_records(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"id": "q0", "answer": "1"})
        + "\n{bad\n"
        + json.dumps({"id": "q0"})
        + "\n"
        + json.dumps({"id": "q1", "answer": "2"})
        + "\n"
    )
    preds = load_predictions(path, lenient=True)
    assert set(preds.by_id) == {"q0", "q1"}
    assert len(preds.problems) == 2
    assert "p.jsonl:2" in preds.problems[0]
    assert "duplicate id" in preds.problems[1]


def test_empty_predictions_file(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("")
    with pytest.raises(InputError, match="holds no records"):
        load_predictions(path)
    path2 = tmp_path / "p.json"
    path2.write_text("{}")
    with pytest.raises(InputError, match="holds no records"):
        load_predictions(path2)


def test_inference_error_record_has_no_content(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": "q0", "response": None, "error": "timeout"}])
    pred = load_predictions(path).by_id["q0"]
    assert (pred.reasoning_steps, pred.answer, pred.response) == (None, None, None)


@pytest.mark.parametrize(
    ("exc", "gated"),
    [
        (ConnectionError("http://127.0.0.1:40123/ did not answer within 3 s"), False),
        (ConnectionError("http://127.0.0.1:51403/ could not be reached"), False),
        (OSError("403 Client Error: Forbidden for url: https://huggingface.co/api"), True),
        (OSError("Dataset 'org/x' is a gated dataset on the Hub."), True),
        (OSError("401 Client Error: Unauthorized for url"), True),
        (OSError("Temporary failure in name resolution"), False),
    ],
)
def test_a_refused_access_is_told_apart_from_an_unreachable_hub(exc, gated):
    """An address that happens to contain 401 or 403 (a loopback port) is not a refusal."""
    from crystalbench.data.hub import hub_unavailable

    message = str(hub_unavailable("org/x", "test", exc=exc))
    assert ("access is not granted" in message) is gated
    assert ("the hub could not be reached" in message) is not gated
