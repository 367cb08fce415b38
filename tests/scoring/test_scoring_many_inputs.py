"""How ``--predictions`` values become named sets: NAME=FILE, files, folders, globs, names."""

from __future__ import annotations

from pathlib import Path

import pytest

from crystalbench.errors import InputError
from crystalbench.scoring.evaluation_many import (
    RUN_NAME_MAX_BYTES,
    check_run_name,
    resolve_prediction_args,
    single_predictions_path,
)
from fakes import write_jsonl


@pytest.fixture
def preds(tmp_path: Path) -> Path:
    """``preds/`` with two JSONL sets, an inference manifest and a README."""
    folder = tmp_path / "preds"
    for stem in ("qwen", "llava"):
        write_jsonl(folder / f"{stem}.jsonl", [{"id": "mmvp-01", "answer": "(a)"}])
    (folder / "qwen.inference.json").write_text("{}")
    (folder / "README.md").write_text("notes")
    return folder


def names(entries):
    return [(name, path.name) for name, path in entries]


def test_files_are_named_by_stem_and_named_files_by_their_name(preds):
    entries, failures = resolve_prediction_args(
        [str(preds / "qwen.jsonl"), f"best={preds / 'llava.jsonl'}", "x=missing.jsonl"]
    )
    assert failures == []
    assert names(entries) == [
        ("qwen", "qwen.jsonl"),
        ("best", "llava.jsonl"),
        ("x", "missing.jsonl"),
    ]


def test_a_folder_of_jsonl_files_is_one_set_per_file(preds):
    entries, failures = resolve_prediction_args([str(preds)])
    assert failures == []
    assert names(entries) == [("llava", "llava.jsonl"), ("qwen", "qwen.jsonl")]


def test_a_folder_of_id_json_files_is_one_set_named_by_the_folder(tmp_path, monkeypatch):
    folder = tmp_path / "gpt4o"
    folder.mkdir()
    (folder / "mmvp-01.json").write_text('{"answer": "(a)"}')
    entries, _ = resolve_prediction_args([str(folder), str(folder) + "/"])
    assert names(entries) == [("gpt4o", "gpt4o"), ("gpt4o", "gpt4o")]
    monkeypatch.chdir(folder)
    assert [name for name, _ in resolve_prediction_args(["."])[0]] == ["gpt4o"]


def test_a_glob_takes_every_match_in_order(preds):
    entries, failures = resolve_prediction_args([str(preds / "*.jsonl"), str(preds / "q*.json")])
    assert failures == []
    assert names(entries) == [
        ("llava", "llava.jsonl"),
        ("qwen", "qwen.jsonl"),
        ("qwen.inference", "qwen.inference.json"),
    ]


def test_a_path_holding_an_equals_sign_is_a_path(tmp_path):
    path = write_jsonl(tmp_path / "lr=0.1.jsonl", [{"id": "1"}])
    entries, failures = resolve_prediction_args([str(path)])
    assert (names(entries), failures) == ([("lr=0.1", "lr=0.1.jsonl")], [])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("=a.jsonl", "expected NAME=FILE with both parts, got '=a.jsonl'"),
        ("a=", "expected NAME=FILE with both parts, got 'a='"),
        ("nothing/*.jsonl", "nothing/*.jsonl: field predictions: no file matches this pattern"),
    ],
)
def test_values_that_name_nothing_fail_alone(preds, value, message):
    entries, failures = resolve_prediction_args([value, str(preds / "qwen.jsonl")])
    assert names(entries) == [("qwen", "qwen.jsonl")]
    assert len(failures) == 1
    assert failures[0].source == value
    assert message in str(failures[0].error)


def test_a_name_cannot_take_a_folder_of_several_files(preds):
    _, failures = resolve_prediction_args([f"all={preds}"])
    assert "holds 2 .jsonl prediction files: name each file" in str(failures[0].error)
    assert failures[0].name == "all"


@pytest.mark.parametrize(
    ("values", "single"),
    [
        (["preds.jsonl"], True),  # not found: the single run says so, as always
        (["preds/qwen.jsonl"], True),
        (["gpt4o-folder"], True),
        (["preds"], False),  # a folder holding .jsonl files
        (["a=preds/qwen.jsonl"], False),
        (["preds/*.jsonl"], False),
        (["preds/qwen.jsonl", "preds/llava.jsonl"], False),
    ],
)
def test_which_values_make_a_single_run(preds, monkeypatch, values, single):
    monkeypatch.chdir(preds.parent)
    (preds.parent / "gpt4o-folder").mkdir()
    (preds.parent / "gpt4o-folder" / "mmvp-01.json").write_text("{}")
    found = single_predictions_path(values)
    assert (found is not None) is single
    if single:
        assert found == Path(values[0])


@pytest.mark.parametrize(
    "name", ["qwen2.5-vl-7b", "llama3:8b", "GPT 4o", "model_v1+ft", "x=y", "é" * 127]
)
def test_folder_names_are_accepted(name):
    assert check_run_name(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "it is empty"),
        (".", "it is a relative folder"),
        ("..", "it is a relative folder"),
        ("../x", "it holds '/'"),
        ("a/b", "it holds '/'"),
        ("a\\b", "it holds '\\\\'"),
        (".hidden", "it starts with '.'"),
        (" padded", "starts or ends with a space"),
        ("tab\there", "control character"),
        ("x" * (RUN_NAME_MAX_BYTES + 1), f"longer than {RUN_NAME_MAX_BYTES} bytes"),
    ],
)
def test_path_like_names_are_refused_saying_why(name, why):
    with pytest.raises(InputError, match="refused name") as caught:
        check_run_name(name)
    assert why in str(caught.value)
    assert caught.value.field == "name"
