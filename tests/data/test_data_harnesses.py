"""Reading lmms-eval ``--log_samples`` JSONL and VLMEvalKit prediction files.

The fixtures hold the same six sample outputs (``messy-raw``) in each harness's format, as
the harness writes them: scoring any of them must give exactly what our own JSONL gives.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.integrations import (
    detect_format,
    load_predictions_as,
    read_lmms_eval_samples,
    read_vlmevalkit,
)
from crystalbench.scoring.evaluation import evaluate
from fakes import HASH_CONFIG, write_jsonl

FIXTURES = Path(__file__).parent / "harness_fixtures"
LMMS = FIXTURES / "samples_crystal.jsonl"
POSITIONAL = FIXTURES / "samples_positional.jsonl"
TSV = FIXTURES / "Qwen2-VL-7B_CRYSTAL.tsv"
CSV = FIXTURES / "Qwen2-VL-7B_CRYSTAL.csv"
OURS = FIXTURES / "same_outputs.jsonl"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("sample")


def _xlsx(tmp_path: Path, rows: list[list[object]]) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    path = tmp_path / "Model_CRYSTAL.xlsx"
    book.save(path)
    return path


def _tsv_rows() -> list[list[str]]:
    with TSV.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle, delimiter="\t"))


def test_formats_are_detected(tmp_path):
    assert detect_format(LMMS) == "lmms-eval"
    assert detect_format(POSITIONAL) == "lmms-eval"
    assert detect_format(TSV) == "vlmevalkit"
    assert detect_format(CSV) == "vlmevalkit"
    assert detect_format(tmp_path / "m.xlsx") == "vlmevalkit"
    assert detect_format(OURS) == "crystal"
    # Our own records with a doc_id field stay ours: they have an id.
    ours = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "doc_id": 1, "resps": [["x"]]}])
    assert detect_format(ours) == "crystal"


def test_every_format_scores_exactly_as_our_jsonl(bench, tmp_path):
    ours = evaluate(bench, load_predictions(OURS), HASH_CONFIG).summary
    xlsx = _xlsx(tmp_path, _tsv_rows())
    for path in (LMMS, TSV, CSV, xlsx):
        preds = load_predictions_as(path, bench)
        assert sorted(preds.by_id) == sorted(load_predictions(OURS).by_id), path
        summary = evaluate(bench, preds, HASH_CONFIG).summary
        for key in ("match_f1", "precision", "recall", "accuracy", "ordered_f1", "n_missing"):
            assert getattr(summary, key) == getattr(ours, key), (path, key)


def test_lmms_eval_ids_come_from_doc_id_or_from_the_position(bench):
    by_doc = read_lmms_eval_samples(LMMS, bench)
    assert by_doc.where["mathvision-02"] == (str(LMMS), 2)
    positional = read_lmms_eval_samples(POSITIONAL, bench)
    # Line 5 logs doc 0 again under another filter, with the same generation: one prediction.
    assert sorted(positional.by_id) == [item.id for item in bench.items[:4]]
    assert positional.by_id[bench.items[0].id].response.startswith("Let's solve")  # resps, raw


def _lmms_line(**changes):
    record = json.loads(LMMS.read_text(encoding="utf-8").splitlines()[0])
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"doc": {"id": "no-such-item"}}, "doc.id", "'no-such-item' is not in benchmark"),
        ({"doc": {"question": "q"}, "doc_id": 4000}, "doc_id", "not a position in benchmark"),
        ({"doc": {}, "doc_id": "7"}, "doc_id", "expected an integer position"),
        ({"resps": [[-1.5, True]], "filtered_resps": None}, "resps", "loglikelihood"),
        ({"resps": None, "filtered_resps": None}, "resps", "no model output"),
        ({"resps": []}, "resps", "non-empty list"),
    ],
)
def test_lmms_eval_errors_name_file_line_and_field(bench, tmp_path, changes, field, words):
    good = _lmms_line()
    path = write_jsonl(tmp_path / "samples_x.jsonl", [good, _lmms_line(**changes)])
    with pytest.raises(InputError) as info:
        read_lmms_eval_samples(path, bench)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)
    assert words in str(info.value)


def test_lmms_eval_same_doc_with_another_output_is_a_duplicate(bench, tmp_path):
    other = _lmms_line(resps=[["another text"]])
    path = write_jsonl(tmp_path / "samples_x.jsonl", [_lmms_line(), other])
    with pytest.raises(InputError, match="logged before with another output"):
        read_lmms_eval_samples(path, bench)
    lenient = read_lmms_eval_samples(path, bench, lenient=True)
    assert len(lenient.by_id) == 1
    assert len(lenient.problems) == 1


def test_vlmevalkit_integer_indexes_and_empty_predictions(tmp_path):
    from fakes import make_benchmark, make_item

    numbered = make_benchmark([make_item(i, ["Read the bar."]) for i in range(3)])
    # pandas writes integer columns of a frame with blanks as floats: 1.0 is item "1".
    path = _xlsx(
        tmp_path,
        [["index", "question", "prediction"], [0, "q", "Answer: 3"], [1.0, "q", None]],
    )
    preds = read_vlmevalkit(path, numbered)
    assert preds.by_id["0"].response == "Answer: 3"
    assert preds.by_id["1"].response == ""  # an empty output, scored as such
    assert preds.where["1"] == (str(path), 3)


@pytest.mark.parametrize(
    ("rows", "line", "field", "words"),
    [
        ([["index", "answer"], ["mathvision-01", "10"]], 1, "prediction", "missing column"),
        ([["index", "prediction"], ["nope", "x"]], 2, "index", "'nope' is not an item id"),
        ([["index", "prediction"], ["", "x"]], 2, "index", "blank index"),
        (
            [["index", "prediction"], ["mathvision-01", "x"], ["mathvision-01", "y"]],
            3,
            "index",
            "duplicate index",
        ),
    ],
)
def test_vlmevalkit_errors_name_file_row_and_field(bench, tmp_path, rows, line, field, words):
    for suffix in (".tsv", ".xlsx"):
        if suffix == ".xlsx":
            path = _xlsx(tmp_path, rows)
        else:
            path = tmp_path / f"m{suffix}"
            with path.open("w", newline="", encoding="utf-8") as handle:
                csv.writer(handle, delimiter="\t").writerows(rows)
        with pytest.raises(InputError) as info:
            read_vlmevalkit(path, bench)
        assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)
        assert words in str(info.value)


def test_a_damaged_workbook_and_bad_utf8_are_input_errors(bench, tmp_path):
    broken = tmp_path / "m.xlsx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match=r"not a readable \.xlsx"):
        read_vlmevalkit(broken, bench)
    latin = tmp_path / "m.tsv"
    latin.write_bytes(b"index\tprediction\nmathvision-01\tcaf\xe9\n")
    with pytest.raises(InputError) as info:
        read_vlmevalkit(latin, bench)
    assert info.value.line == 2


def test_unknown_format_names_the_valid_ones(bench):
    with pytest.raises(UnknownNameError, match="lmms-eval"):
        load_predictions_as(OURS, bench, "lmms_eval2")


def test_cli_scores_other_harness_files(tmp_path):
    runner = CliRunner()
    base = ["score", "-b", "sample", "--encoder", "hash", "--no-cache", "--no-progress"]
    result = runner.invoke(app, [*base, "-p", str(LMMS), "-o", str(tmp_path / "lmms")])
    assert result.exit_code == 0, result.output
    ours = runner.invoke(app, [*base, "-p", str(OURS), "-o", str(tmp_path / "ours")])
    assert ours.exit_code == 0, ours.output
    a = json.loads((tmp_path / "lmms" / "summary.json").read_text())
    b = json.loads((tmp_path / "ours" / "summary.json").read_text())
    assert (a["match_f1"], a["accuracy"]) == (b["match_f1"], b["accuracy"])
    # Named explicitly, and several sets at once (each read in its own format).
    named = runner.invoke(
        app, [*base, "--input-format", "vlmevalkit", "-p", str(TSV), "-o", str(tmp_path / "tsv")]
    )
    assert named.exit_code == 0, named.output
    many = runner.invoke(
        app,
        [*base, "-p", f"l={LMMS}", "-p", f"v={CSV}", "-p", f"o={OURS}", "-o", str(tmp_path / "m")],
    )
    assert many.exit_code == 0, many.output
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["l", "o", "v"]


def test_cli_exit_2_with_the_line_when_ids_do_not_map(tmp_path):
    bad = write_jsonl(tmp_path / "samples_x.jsonl", [_lmms_line(doc={"id": "zzz"})])
    result = CliRunner().invoke(
        app,
        [
            "score",
            "-b",
            "sample",
            "--encoder",
            "hash",
            "--no-cache",
            "-p",
            str(bad),
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2
    assert f"{bad}:1" in result.output
    assert "doc.id" in result.output
    wrong = CliRunner().invoke(
        app,
        [
            "score",
            "-b",
            "sample",
            "--encoder",
            "hash",
            "--input-format",
            "vlm",
            "-p",
            str(TSV),
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert wrong.exit_code == 2
    assert "vlmevalkit" in wrong.output
