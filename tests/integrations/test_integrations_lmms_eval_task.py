"""The CRYSTAL task for lmms-eval: installed by the CLI, its hooks driven as lmms-eval does.

lmms-eval loads ``crystal.yaml``, builds the dataset from ``data_files``, imports the
``utils.py`` beside it, and for each doc calls ``doc_to_visual``, ``doc_to_text``, then
``process_results(doc, [output])``; each metric's aggregation gets the list of that metric's
per-doc values. These tests do exactly that with the installed files (the real lmms-eval
run is ``benchmarks/lmms_eval_task_e2e.py``, in an environment of its own).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.errors import InputError
from crystalbench.inference.prompts import load_prompt
from crystalbench.integrations.lmms_eval.task import install_task
from crystalbench.scoring.evaluation import evaluate
from fakes import HASH_CONFIG


class _TaskLoader(yaml.SafeLoader):
    """Reads lmms-eval's ``!function module.name`` tags as plain strings."""


_TaskLoader.add_constructor("!function", lambda loader, node: f"!function {node.value}")


def _utils(task_dir: Path):
    spec = importlib.util.spec_from_file_location(f"utils_{id(task_dir)}", task_dir / "utils.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    result = CliRunner().invoke(
        app,
        [
            "integrations",
            "lmms-eval",
            "--out",
            str(tmp_path_factory.mktemp("tasks")),
            "-b",
            "sample",
            "--encoder",
            "hash",
        ],
    )
    assert result.exit_code == 0, result.output
    folder = Path(result.output.split("task into ")[1].split()[0])
    assert folder.name == "crystal"
    return folder


def test_the_task_folder_is_what_lmms_eval_reads(installed):
    config = yaml.load((installed / "crystal.yaml").read_text(), Loader=_TaskLoader)
    assert config["task"] == "crystal"
    assert config["output_type"] == "generate_until"
    docs = Path(config["dataset_kwargs"]["data_files"]["test"])
    assert docs.is_absolute()
    assert docs == installed / "crystal_docs.jsonl"
    metrics = [m["metric"] for m in config["metric_list"]]
    assert metrics == [
        "crystal_match_f1",
        "crystal_ordered_f1",
        "crystal_precision",
        "crystal_recall",
        "crystal_accuracy",
    ]
    utils = _utils(installed)
    for hook in [config["process_results"], *(m["aggregation"] for m in config["metric_list"])]:
        assert hasattr(utils, hook.removeprefix("!function utils."))
    bench = load_benchmark("sample")
    rows = [json.loads(line) for line in docs.read_text().splitlines()]
    assert [r["id"] for r in rows] == bench.ids
    assert all(Path(r["image"]).is_file() for r in rows if r["image"])


def test_the_hooks_give_the_numbers_crystal_score_gives(installed):
    bench = load_benchmark("sample")
    preds = load_predictions(SAMPLE_DIR / "predictions" / "messy-raw.jsonl")
    utils = _utils(installed)
    rows = [
        json.loads(line) for line in (installed / "crystal_docs.jsonl").read_text().splitlines()
    ]
    per_metric: dict[str, list] = {}
    prompt = load_prompt()
    for doc in rows:
        if doc["id"] not in preds.by_id:
            continue  # like lmms-eval --limit: only the docs that ran are aggregated
        item = bench.get(doc["id"])
        assert utils.crystal_doc_to_text(doc) == prompt.render(item)
        visuals = utils.crystal_doc_to_visual(doc)
        assert len(visuals) == (1 if item.image else 0)
        if visuals:
            assert visuals[0].mode == "RGB"
        output = preds.by_id[doc["id"]].response
        for metric, value in utils.crystal_process_results(doc, [output]).items():
            per_metric.setdefault(metric, []).append(value)
    ours = evaluate(bench.subset(ids=list(preds.by_id)), preds, HASH_CONFIG).summary
    assert utils.crystal_aggregate_match_f1(per_metric["crystal_match_f1"]) == ours.match_f1
    assert utils.crystal_aggregate_ordered_f1(per_metric["crystal_ordered_f1"]) == ours.ordered_f1
    assert utils.crystal_aggregate_precision(per_metric["crystal_precision"]) == ours.precision
    assert utils.crystal_aggregate_recall(per_metric["crystal_recall"]) == ours.recall
    assert utils.crystal_aggregate_accuracy(per_metric["crystal_accuracy"]) == ours.accuracy
    assert 0 < ours.match_f1 < 1  # a real mix of good and bad outputs


def test_a_doc_from_another_install_is_an_input_error(installed):
    utils = _utils(installed)
    with pytest.raises(InputError, match="not an item of benchmark"):
        utils.crystal_process_results({"id": "nope"}, ["text"])


def test_a_changed_benchmark_must_be_installed_again(tmp_path):
    bench_file = tmp_path / "b.jsonl"
    item = {"id": "1", "source": "plotqa", "question": "How many?", "answer": "3"}
    bench_file.write_text(json.dumps({**item, "reference_steps": ["Count."]}) + "\n")
    task = install_task(tmp_path / "tasks", bench_file, encoder="hash")
    bench_file.write_text(json.dumps({**item, "reference_steps": ["Count the bars."]}) + "\n")
    utils = _utils(task)
    with pytest.raises(InputError, match="install the task again"):
        utils.crystal_process_results({"id": "1"}, ["Answer: 3"])


def test_the_written_files_name_only_live_spellings(installed):
    """Every ``crystal integrations lmms-eval`` command the installed files name uses the
    command's current options (issue 30: crystal.yaml's header said ``--install``)."""
    import re

    import typer

    command = typer.main.get_command(app).commands["integrations"].commands["lmms-eval"]
    live = {
        spelling
        for param in command.params
        if param.param_type_name == "option" and not param.hidden
        for spelling in (*param.opts, *param.secondary_opts)
    }
    named = []
    for path in (installed / "crystal.yaml", installed / "utils.py"):
        for line in re.findall(r"crystal integrations lmms-eval[^`\n]*", path.read_text()):
            named.append(line)
            flags = re.findall(r"(?<!\S)(--?[a-z][\w-]*)", line)
            assert set(flags) <= live, f"{path.name}: {line!r} uses {set(flags) - live}"
    assert named  # the header does name the command
