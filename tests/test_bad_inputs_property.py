"""Property: every loader of a user's file returns a result or raises our own error.

Random bytes, random JSON (NaN, huge numbers, lone surrogates, deep nesting, repeated keys)
and valid records with one field replaced by random JSON are fed to every loader: the
predictions reader (JSONL, ``.json``, a folder of ``<id>.json``), the JSONL benchmark, the
config file, the results-folder reader and the ``crystal infer`` records file. Anything but
a result or a :class:`~crystalbench.errors.CrystalbenchError` fails the property.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crystalbench.config.scoring import load_config
from crystalbench.data import load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.errors import CrystalbenchError
from crystalbench.inference.records import ResultsFile
from crystalbench.report.loading import load_run

# ----------------------------------------------------------------------------- strategies

_text = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()), max_size=12
)  # surrogates included: json.dumps writes them as "\udxxx" escapes
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _text
)
json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=12,
)
_oddities = st.sampled_from(
    [
        "[" * 3000 + "]" * 3000,
        "[" * 5000,
        "1" * 5000,
        "1e400",
        "-1e400",
        "NaN",
        "Infinity",
        '"\\ud800"',
        '{"a": 1, "a": 2}',
    ]
)


def _dump(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any]) -> str:
    """``valid`` with one field replaced (or added) by random JSON or an oddity."""
    key = draw(st.sampled_from([*valid, "extra"]))
    text = _dump({**valid, key: "__HOLE__"})
    replacement = draw(json_values.map(_dump) | _oddities)
    return text.replace('"__HOLE__"', replacement, 1)


def documents(valid: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """Whole files: random bytes, random JSON, or a few lines of (mutated) records."""
    line = mutated(valid) | json_values.map(_dump) | _oddities | st.just(_dump(valid))
    lines = st.lists(line, min_size=1, max_size=4).map(lambda ls: "\n".join(ls).encode())
    corrupted = st.tuples(lines, st.binary(min_size=1, max_size=4), st.integers(0, 200)).map(
        lambda t: t[0][: t[2]] + t[1] + t[0][t[2] :]
    )
    return st.binary(max_size=200) | lines | corrupted


PREDICTION = {"id": "mathvision-01", "reasoning_steps": ["Look at the chart."], "answer": "B"}
ITEM = {
    "id": "q0",
    "source": "plotqa",
    "question": "How many bars are there?",
    "options": [],
    "answer": "4",
    "reference_steps": ["Count the bars.", "There are four bars."],
}
HUB_ROW = {
    "question": "Which option?",
    "answer": "Nauru",
    "reference_steps": ["Look at the map."],
    "choices": ["Palau", "Nauru"],
    "options": [],
    "source": "scienceqa",
}
CONFIG = {"encoder": "hash", "threshold": 0.4, "alpha": 0.3, "difficulty": {"step_cuts": [9, 16]}}
INFER_RECORD = {
    "id": "q0",
    "model": "m",
    "backend": "openai",
    "response": "Step 1: Look.\nAnswer: B",
    "prompt_name": "infer_v1",
    "prompt_hash": "abc123",
    "generation": {"temperature": 0.1, "max_tokens": 64},
    "created_at": "2026-01-01T00:00:00Z",
}


def _results_folder() -> tuple[dict[str, Any], dict[str, Any]]:
    """A real summary.json and one examples.jsonl record of ``crystal score``."""
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data.predictions import load_predictions as load
    from crystalbench.scoring.evaluation import evaluate

    folder = Path(tempfile.mkdtemp())
    try:
        bench = load_benchmark("sample").subset(limit=1)
        preds_file = folder / "p.jsonl"
        preds_file.write_text(json.dumps({**PREDICTION, "id": bench.ids[0]}) + "\n")
        config = ScoreConfig(encoder="hash", use_cache=False)
        evaluate(bench, load(preds_file), config, out_dir=folder / "run")
        summary = json.loads((folder / "run" / "summary.json").read_text())
        example = json.loads((folder / "run" / "examples.jsonl").read_text().splitlines()[0])
    finally:
        shutil.rmtree(folder)
    return summary, example


# ----------------------------------------------------------------------------- loaders


def _in_tmp(run: Callable[[Path], Any]) -> Any:
    folder = Path(tempfile.mkdtemp())
    try:
        return run(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _predictions_jsonl(data: bytes) -> Any:
    return _in_tmp(lambda d: load_predictions(_write(d, "p.jsonl", data)))


def _predictions_jsonl_lenient(data: bytes) -> Any:
    return _in_tmp(lambda d: load_predictions(_write(d, "p.jsonl", data), lenient=True))


def _predictions_json(data: bytes) -> Any:
    return _in_tmp(lambda d: load_predictions(_write(d, "p.json", data)))


def _predictions_json_lenient(data: bytes) -> Any:
    return _in_tmp(lambda d: load_predictions(_write(d, "p.json", data), lenient=True))


def _predictions_folder(data: bytes) -> Any:
    return _in_tmp(lambda d: load_predictions(_write(d, "preds/q0.json", data).parent))


def _benchmark_jsonl(data: bytes) -> Any:
    return _in_tmp(lambda d: load_benchmark(_write(d, "b.jsonl", data)))


def _config_yaml(data: bytes) -> Any:
    return _in_tmp(lambda d: load_config(_write(d, "c.yaml", data)))


def _config_json(data: bytes) -> Any:
    return _in_tmp(lambda d: load_config(_write(d, "c.json", data)))


def _results_examples(data: bytes, summary: dict[str, Any]) -> Any:
    def run(folder: Path) -> Any:
        _write(folder, "run/summary.json", json.dumps(summary).encode())
        with warnings.catch_warnings():  # a summary disagreeing with its items only warns
            warnings.simplefilter("ignore")
            return load_run(_write(folder, "run/examples.jsonl", data).parent)

    return _in_tmp(run)


def _results_summary(data: bytes, example: dict[str, Any]) -> Any:
    def run(folder: Path) -> Any:
        _write(folder, "run/examples.jsonl", (json.dumps(example) + "\n").encode())
        return load_run(_write(folder, "run/summary.json", data).parent)

    return _in_tmp(run)


def _infer_records(data: bytes) -> Any:
    return _in_tmp(lambda d: ResultsFile(_write(d, "p.jsonl", data)).load())


def _holds(loader: Callable[[bytes], Any], data: bytes) -> None:
    with contextlib.suppress(CrystalbenchError):  # a result, or our own error: both fine
        loader(data)


PROPERTY = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize(
    ("loader", "valid"),
    [
        (_predictions_jsonl, PREDICTION),
        (_predictions_jsonl_lenient, PREDICTION),
        (_predictions_json, PREDICTION),
        (_predictions_json_lenient, PREDICTION),
        (_predictions_folder, PREDICTION),
        (_benchmark_jsonl, ITEM),
        (_benchmark_jsonl, HUB_ROW),
        (_config_yaml, CONFIG),
        (_config_json, CONFIG),
    ],
    ids=[
        "predictions-jsonl",
        "predictions-jsonl-lenient",
        "predictions-json",
        "predictions-json-lenient",
        "predictions-folder",
        "benchmark-jsonl",
        "benchmark-hub-jsonl",
        "config-yaml",
        "config-json",
    ],
)
@given(data=st.data())
@PROPERTY
def test_loader_returns_or_raises_our_error(loader, valid, data):
    _holds(loader, data.draw(documents(valid)))


@pytest.fixture(scope="module")
def results_records():
    return _results_folder()


@given(data=st.data())
@PROPERTY
def test_results_examples_reader_returns_or_raises_our_error(results_records, data):
    summary, example = results_records
    _holds(lambda b: _results_examples(b, summary), data.draw(documents(example)))


@given(data=st.data())
@PROPERTY
def test_results_summary_reader_returns_or_raises_our_error(results_records, data):
    summary, example = results_records
    _holds(lambda b: _results_summary(b, example), data.draw(documents(summary)))


@given(data=st.data())
@PROPERTY
def test_infer_records_reader_returns_or_raises_our_error(data):
    _holds(_infer_records, data.draw(documents(INFER_RECORD)))


# ----------------------------------------------------------------------------- exact probes


@pytest.mark.parametrize(
    "data",
    [b"\xff\n", b"[" * 100_000 + b"\n", b'{"id": ' + b"1" * 5000 + b"}\n"],
    ids=["not-utf8", "deep", "long-int"],
)
def test_owned_loaders_on_the_probes(data):
    for loader in (_predictions_jsonl, _predictions_json, _benchmark_jsonl, _config_yaml):
        with pytest.raises(CrystalbenchError):
            loader(data)
