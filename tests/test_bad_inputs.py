"""Every bad input is a clear error naming file, line (or key) and field, never a traceback.

Each case is a predictions or benchmark file a user could really hand us: an export from
another tool with Latin-1 bytes, a script that wrote ``NaN`` for a missing number, a JSON
escape of half an emoji, a merged object with a repeated key... Strict loading raises an
``InputError`` with the exact place; ``lenient`` skips the record and counts it; ``crystal
score`` exits 2 with the message and no traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench._internal.io import InputLimits, read_jsonl
from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.errors import InputError
from fakes import write_jsonl

GOOD_FIRST = json.dumps({"id": "q0", "reasoning_steps": ["Count the bars."], "answer": "4"})
GOOD_LAST = json.dumps({"id": "q2", "response": "Step 1: The bar is red.\nAnswer: B"})

# (bad line 2 of a predictions JSONL file, what the message says after "p.jsonl:2: ")
BAD_PREDICTION_LINES = {
    "latin-1 bytes": (
        '{"id": "q1", "answer": "Cura\xe7ao"}'.encode("latin-1"),
        "not UTF-8 text (byte 0xe7 at column 29)",
    ),
    "lone surrogate": (
        '{"id": "q1", "answer": "\\ud83d"}',
        "field answer: string holds a lone UTF-16 surrogate",
    ),
    "lone surrogate in a step": (
        '{"id": "q1", "reasoning_steps": ["ok", "half \\udc00 emoji"], "answer": "B"}',
        "field reasoning_steps[1]: string holds a lone UTF-16 surrogate",
    ),
    "deep nesting": (
        '{"id": "q1", "answer": "B", "trace": ' + "[" * 80 + "]" * 80 + "}",
        "JSON nested deeper than 64 levels",
    ),
    "nesting past the recursion limit": ("[" * 50_000, "JSON nested deeper than 64 levels"),
    "NaN answer": ('{"id": "q1", "answer": NaN}', "field answer: NaN is not a number"),
    "Infinity answer": (
        '{"id": "q1", "answer": -Infinity}',
        "field answer: -Infinity is not a number",
    ),
    "overflowing answer": ('{"id": "q1", "answer": 1e400}', "field answer: number 1e400 is out"),
    "overflow in another field": (
        '{"id": "q1", "answer": "B", "usage": {"latency_s": 2.5e999}}',
        "field usage.latency_s: number 2.5e999 is out of range",
    ),
    "5000-digit id": ('{"id": ' + "7" * 5000 + "}", "field id: number 777777777777...(5000"),
    "repeated key": (
        '{"id": "q1", "answer": "A", "reasoning_steps": ["s"], "answer": "C"}',
        "key 'answer' appears more than once in one object",
    ),
    "repeated nested key": (
        '{"id": "q1", "answer": "A", "usage": {"tokens": 3, "tokens": 4}}',
        "field usage: key 'tokens' appears more than once",
    ),
    "id is a list": ('{"id": ["q1"], "answer": "B"}', "field id: id must be a string or integer"),
    "id is an object": (
        '{"id": {"n": 1}, "answer": "B"}',
        "field id: id must be a string or integer, got object",
    ),
}


def _write_lines(path: Path, lines: list[str | bytes]) -> Path:
    data = b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case", sorted(BAD_PREDICTION_LINES))
def test_bad_prediction_line_names_file_line_and_field(tmp_path, case):
    bad, expected = BAD_PREDICTION_LINES[case]
    path = _write_lines(tmp_path / "p.jsonl", [GOOD_FIRST, bad, GOOD_LAST])
    with pytest.raises(InputError) as info:
        load_predictions(path)
    assert str(info.value).startswith(f"{path}:2: {expected}")


@pytest.mark.parametrize("case", sorted(BAD_PREDICTION_LINES))
def test_lenient_skips_and_counts_each_bad_line(tmp_path, case):
    bad, expected = BAD_PREDICTION_LINES[case]
    path = _write_lines(tmp_path / "p.jsonl", [GOOD_FIRST, bad, GOOD_LAST])
    preds = load_predictions(path, lenient=True)
    assert sorted(preds.by_id) == ["q0", "q2"]
    assert len(preds.problems) == 1
    assert preds.problems[0].startswith(f"{path}:2: {expected}")


def test_line_over_the_size_limit_is_skipped_unread(tmp_path, monkeypatch):
    long_line = json.dumps({"id": "q1", "response": "Step 1: " + "look closer. " * 40})
    path = _write_lines(tmp_path / "p.jsonl", [GOOD_FIRST, long_line, GOOD_LAST])
    limits = InputLimits(max_line_bytes=200)
    with pytest.raises(InputError, match=r"p\.jsonl:2: line is over the limit of 200 bytes"):
        load_predictions(path, limits=limits)
    assert sorted(load_predictions(path, lenient=True, limits=limits).by_id) == ["q0", "q2"]
    monkeypatch.setenv("CRYSTALBENCH_MAX_LINE_BYTES", "200")
    with pytest.raises(InputError, match=r"\$CRYSTALBENCH_MAX_LINE_BYTES"):
        load_predictions(path)
    monkeypatch.setenv("CRYSTALBENCH_MAX_LINE_BYTES", "1000")
    assert len(load_predictions(path)) == 3


def test_response_over_the_size_limit(tmp_path, monkeypatch):
    response = "Step 1: The chart has four bars.\n" * 4 + "Answer: 4"
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": "q1", "response": response}])
    monkeypatch.setenv("CRYSTALBENCH_MAX_RESPONSE_CHARS", "100")
    with pytest.raises(InputError) as info:
        load_predictions(path)
    assert str(info.value).startswith(
        f"{path}:1: field response: {len(response)} characters, over the limit of 100"
    )
    steps = ["Count the bars, one by one, from left to right."] * 3
    total = sum(len(step) for step in steps)
    path = write_jsonl(tmp_path / "s.jsonl", [{"id": "q1", "reasoning_steps": steps}])
    with pytest.raises(InputError, match=rf"s\.jsonl:1: field reasoning_steps: {total} characters"):
        load_predictions(path)
    assert load_predictions(path, limits=InputLimits(max_response_chars=total)).by_id["q1"]


def test_a_bad_environment_limit_is_an_input_error(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": "q1", "answer": "B"}])
    monkeypatch.setenv("CRYSTALBENCH_MAX_JSON_DEPTH", "deep")
    with pytest.raises(
        InputError, match=r"field \$CRYSTALBENCH_MAX_JSON_DEPTH: must be a positive"
    ):
        load_predictions(path)


def test_a_leading_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD_FIRST.encode() + b"\n")
    assert list(load_predictions(path).by_id) == ["q0"]


# ----------------------------------------------------------------------------- .json files


def test_json_keyed_by_id_names_the_key_of_a_non_object(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"q0": {"reasoning_steps": ["s"], "answer": "A"}, "q1": 5, "q2": "raw"}')
    with pytest.raises(InputError) as info:
        load_predictions(path)
    assert str(info.value) == (
        f"{path}: key 'q1': expected an object or a response string, got number"
    )
    preds = load_predictions(path, lenient=True)
    assert sorted(preds.by_id) == ["q0", "q2"]
    assert preds.problems == [str(info.value)]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('{"answer": NaN}', "key 'q1': field answer: NaN is not a number"),
        ('{"answer": "A", "answer": "B"}', "key 'q1': key 'answer' appears more than once"),
        ('{"answer": "\\udfff"}', "key 'q1': field answer: string holds a lone UTF-16"),
        ('{"id": [1], "answer": "B"}', "key 'q1': field id: id must be a string or integer"),
        ('{"answer": 1e999}', "key 'q1': field answer: number 1e999 is out of range"),
    ],
)
def test_json_keyed_by_id_bad_record(tmp_path, record, expected):
    path = tmp_path / "p.json"
    path.write_text('{"q0": {"answer": "A"}, "q1": ' + record + "}")
    with pytest.raises(InputError) as info:
        load_predictions(path)
    assert str(info.value).startswith(f"{path}: {expected}")
    preds = load_predictions(path, lenient=True)
    assert list(preds.by_id) == ["q0"]
    assert len(preds.problems) == 1


def test_json_keyed_by_id_repeated_id(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"q0": {"answer": "A"}, "q1": {"answer": "B"}, "q0": {"answer": "C"}}')
    with pytest.raises(InputError, match=r"p\.json: key 'q0': field id: duplicate id"):
        load_predictions(path)
    preds = load_predictions(path, lenient=True)
    assert preds.by_id["q0"].answer == "A"  # the first value is kept, the repeat counted
    assert len(preds.problems) == 1


def test_json_list_bad_entry(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('[{"id": "q0", "answer": "A"}, {"id": "q1", "answer": Infinity}]')
    with pytest.raises(InputError, match=r"p\.json:2: field answer: Infinity is not a number"):
        load_predictions(path)
    assert list(load_predictions(path, lenient=True).by_id) == ["q0"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'{"q0": {"answer": "S\xe3o Paulo"}}', ":1: not UTF-8 text (byte 0xe3 at column 21)"),
        (
            b'{"q0":\n {"answer": "A"},\n "q1": {"answer": "\xff"}}',
            ":3: not UTF-8 text (byte 0xff at column 20)",
        ),
        (b'{"q0":\n {"answer": "A"},\n "q1": {"answer": "B"\n}', ":4: malformed JSON"),
        (b"[" * 50_000, ": JSON nested deeper than 64 levels"),
        (b"42", ": expected a JSON object keyed by id or a list of records, got number"),
    ],
)
def test_json_document_errors_refuse_the_file(tmp_path, text, expected):
    path = tmp_path / "p.json"
    path.write_bytes(text)
    for lenient in (False, True):
        with pytest.raises(InputError) as info:
            load_predictions(path, lenient=lenient)
        assert str(info.value).startswith(f"{path}{expected}")


def test_json_file_over_the_document_limit(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({f"q{i}": {"answer": "A"} for i in range(50)}))
    with pytest.raises(
        InputError,
        match=r"p\.json: file is [\d,]+ bytes, over the limit of 100 "
        r"\(raise it with \$CRYSTALBENCH_MAX_FILE_BYTES\)",
    ):
        load_predictions(path, limits=InputLimits(max_file_bytes=100))


def test_json_file_holding_json_lines_reports_lines_and_honours_lenient(tmp_path):
    path = _write_lines(tmp_path / "p.json", [GOOD_FIRST, '{"id": "q1", "answer": NaN}', GOOD_LAST])
    with pytest.raises(InputError, match=r"p\.json:2: field answer: NaN is not a number"):
        load_predictions(path)
    preds = load_predictions(path, lenient=True)
    assert sorted(preds.by_id) == ["q0", "q2"]
    assert len(preds.problems) == 1


def test_folder_of_id_json_files(tmp_path):
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "0.json").write_text(json.dumps({"reasoning_steps": ["s"], "answer": "A"}))
    (folder / "1.json").write_bytes(b'{"reasoning_steps": ["\xb0C"], "answer": "B"}')
    (folder / "2.json").write_text('{"reasoning_steps": ["s"], "answer": NaN}')
    (folder / "3.json").write_text('["not", "an", "object"]')
    (folder / "4.json").write_text('{"answer": "A", "answer": "B"}')
    with pytest.raises(InputError) as info:
        load_predictions(folder)
    assert str(info.value).startswith(f"{folder / '1.json'}:1: not UTF-8 text")
    preds = load_predictions(folder, lenient=True)
    assert list(preds.by_id) == ["0"]
    problems = sorted(preds.problems)
    assert problems[0].startswith(f"{folder / '1.json'}:1: not UTF-8")
    assert problems[1].startswith(f"{folder / '2.json'}: field answer: NaN is not a number")
    assert problems[2].startswith(f"{folder / '3.json'}: expected a JSON object, got array")
    assert problems[3].startswith(f"{folder / '4.json'}: key 'answer' appears more than once")


def test_one_id_json_file_over_the_record_limit(tmp_path):
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "0.json").write_text(json.dumps({"response": "Step 1: look. " * 30}))
    with pytest.raises(
        InputError,
        match=r"0\.json: file is [\d,]+ bytes, over the limit of 64 "
        r"\(raise it with \$CRYSTALBENCH_MAX_LINE_BYTES\)",
    ):
        load_predictions(folder, limits=InputLimits(max_line_bytes=64))


# ----------------------------------------------------------------------------- benchmarks

GOOD_ITEM = {
    "id": "q0",
    "source": "plotqa",
    "question": "How many bars are there?",
    "answer": "4",
    "reference_steps": ["Count the bars.", "There are four bars."],
}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            json.dumps({**GOOD_ITEM, "id": "q1", "question": "Cafe?"})
            .replace("Cafe", "Caf\xe9")
            .encode("latin-1"),
            "not UTF-8 text (byte 0xe9",
        ),
        (json.dumps({**GOOD_ITEM, "id": "q1"})[:-1] + ', "answer": "5"}', "key 'answer' appears"),
        (json.dumps({**GOOD_ITEM, "id": ["q1"]}), "field id: id must be a string or integer"),
        (json.dumps({**GOOD_ITEM, "id": {"row": 1}}), "field id: id must be a string or integer"),
        (json.dumps({**GOOD_ITEM, "id": True}), "field id: id must be a string or integer"),
        (
            json.dumps({**GOOD_ITEM, "id": "q1", "answer": float("nan")}),
            "field answer: NaN is not a number",
        ),
        (
            json.dumps({**GOOD_ITEM, "id": "q1", "metadata": {"year": float("inf")}}),
            "field metadata.year: Infinity is not a number",
        ),
        (
            json.dumps({**GOOD_ITEM, "id": "q1", "question": "\\ud800"}).replace("\\\\", "\\"),
            "field question: string holds a lone UTF-16 surrogate",
        ),
        (
            json.dumps({**GOOD_ITEM, "id": "q1", "metadata": {"a": [[[[[[[[[[[[]]]]]]]]]]]]}}),
            "JSON nested deeper than 8 levels",
        ),
    ],
)
def test_bad_benchmark_line(tmp_path, line, expected):
    path = _write_lines(tmp_path / "b.jsonl", [json.dumps(GOOD_ITEM), line])
    with pytest.raises(InputError) as info:
        load_benchmark(path, limits=InputLimits(max_json_depth=8))
    assert str(info.value).startswith(f"{path}:2: {expected}")


def test_benchmark_line_over_the_size_limit(tmp_path, monkeypatch):
    item = {**GOOD_ITEM, "id": "q1", "question": "Which bar is tallest? " * 20}
    path = write_jsonl(tmp_path / "b.jsonl", [GOOD_ITEM, item])
    monkeypatch.setenv("CRYSTALBENCH_MAX_LINE_BYTES", "300")
    with pytest.raises(InputError, match=r"b\.jsonl:2: line is over the limit of 300 bytes"):
        load_benchmark(path)


def test_read_jsonl_of_our_own_results_refuses_nan(tmp_path):
    """Other readers (results folders, training logs) share the same reader."""
    path = _write_lines(tmp_path / "examples.jsonl", ['{"id": "1", "f1": NaN}'])
    with pytest.raises(InputError, match=r"examples\.jsonl:1: field f1: NaN"):
        list(read_jsonl(path))


# ----------------------------------------------------------------------------- the CLI

runner = CliRunner()


def _score(preds: Path, out: Path, *extra: str, benchmark: str = "sample") -> list[str]:
    return [
        "score",
        "--benchmark",
        benchmark,
        "--predictions",
        str(preds),
        "--out",
        str(out),
        "--encoder",
        "hash",
        "--no-progress",
        "--no-cache",
        *extra,
    ]


SAMPLE_FIRST = json.dumps({"id": "mathvision-01", "reasoning_steps": ["Look."], "answer": "A"})
SAMPLE_LAST = json.dumps({"id": "mathvision-02", "response": "Step 1: Look.\nAnswer: B"})


@pytest.mark.parametrize("case", sorted(BAD_PREDICTION_LINES))
def test_crystal_score_exits_2_with_the_message(tmp_path, case):
    bad, expected = BAD_PREDICTION_LINES[case]
    preds = _write_lines(tmp_path / "p.jsonl", [SAMPLE_FIRST, bad, SAMPLE_LAST])
    result = runner.invoke(app, _score(preds, tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert f"p.jsonl:2: {expected}" in result.output.replace("\n", "")
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "summary.json").exists()


def test_crystal_score_lenient_counts_the_bad_lines(tmp_path):
    lines = [SAMPLE_FIRST, *(bad for bad, _ in BAD_PREDICTION_LINES.values()), SAMPLE_LAST]
    preds = _write_lines(tmp_path / "p.jsonl", lines)
    result = runner.invoke(app, [*_score(preds, tmp_path / "out"), "--lenient"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_invalid_records"] == len(BAD_PREDICTION_LINES)


def test_crystal_score_on_a_bad_benchmark_exits_2(tmp_path):
    bench = _write_lines(
        tmp_path / "b.jsonl", [json.dumps(GOOD_ITEM), json.dumps({**GOOD_ITEM, "id": [1]})]
    )
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "q0", "answer": "4"}])
    result = runner.invoke(app, _score(preds, tmp_path / "out", benchmark=str(bench)))
    assert result.exit_code == 2, result.output
    assert "b.jsonl:2: field id: id must be a string or integer, got array" in (
        result.output.replace("\n", "")
    )


def test_crystal_score_in_a_real_process_prints_no_traceback(tmp_path):
    preds = _write_lines(tmp_path / "p.jsonl", [SAMPLE_FIRST, "[" * 100_000])
    code = "from crystalbench.cli.main import app; app()"
    done = subprocess.run(
        [sys.executable, "-c", code, *_score(preds, tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "p.jsonl:2: JSON nested deeper than 64 levels" in done.stderr.replace("\n", "")
    assert "Traceback" not in done.stderr + done.stdout


def test_sample_predictions_still_load_unchanged():
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        preds = load_predictions(path)
        assert len(preds) == len(lines)
        assert list(preds.by_id) == [str(json.loads(line)["id"]) for line in lines]
        assert not preds.problems
