"""``--tracker mlflow`` / ``--tracker wandb``: results folders logged to a real MLflow file
store and to Weights & Biases in its offline mode, read back from what each wrote to disk."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR
from crystalbench.report.loading import load_run
from crystalbench.report.tracking import ITEM_COLUMNS, config_params, item_rows, run_metrics

runner = CliRunner()
SAMPLE_FILES = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))


@pytest.fixture(autouse=True)
def private_cache(cache_dir):
    return cache_dir


def score(out: Path, *extra: str, files: tuple[Path, ...] = (SAMPLE_FILES[0],)):
    args = ["score", "-b", "sample", "-o", str(out), "--encoder", "hash", "--no-progress"]
    for path in files:
        args += ["-p", str(path)]
    return runner.invoke(app, [*args, *extra])


# ----------------------------------------------------------------------------- MLflow


@pytest.fixture
def mlflow_store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed")
    store = tmp_path / "mlruns"
    # MLflow 3 keeps its file store in maintenance mode behind this switch; the file store is
    # what `mlflow ui` reads from a folder, and what MLFLOW_TRACKING_URI=file:... names.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store.as_uri())
    return store


def mlflow_runs(store: Path, experiment: str = "crystalbench"):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store.as_uri())
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment!r} in {store}"
    return client, client.search_runs([found.experiment_id])


def test_score_logs_config_summary_breakdowns_and_items_to_mlflow(tmp_path, mlflow_store):
    out = tmp_path / "res"
    result = score(out, "--tracker", "mlflow")
    assert result.exit_code == 0, result.output
    assert "logged to mlflow run" in result.output
    run = load_run(out)
    client, runs = mlflow_runs(mlflow_store)
    assert len(runs) == 1
    logged = runs[0]
    expected_params = config_params(run.summary.config)
    assert logged.data.params == expected_params
    assert logged.data.params["encoder"] == "hash"
    expected = run_metrics(run.summary)
    assert logged.data.metrics == pytest.approx(expected)
    assert logged.data.metrics["match_f1"] == pytest.approx(run.summary.match_f1)
    source, part = next(iter(run.summary.by_source.items()))
    assert logged.data.metrics[f"by_source/{source}/recall"] == pytest.approx(part.recall)
    assert logged.data.tags["crystalbench.run_id"] == run.summary.run_id
    assert logged.data.tags["crystalbench.command"] == "crystal score"
    folder = Path(client.download_artifacts(logged.info.run_id, ""))
    assert (folder / "results" / "examples.jsonl").read_bytes() == (
        out / "examples.jsonl"
    ).read_bytes()
    table = json.loads((folder / "items.json").read_text())
    assert table["columns"] == list(ITEM_COLUMNS)
    assert [row[0] for row in table["data"]] == [item.id for item in run.items]
    assert len(table["data"]) == run.summary.n_items


def test_a_folder_already_logged_is_not_logged_twice(tmp_path, mlflow_store):
    out = tmp_path / "res"
    assert score(out, "--tracker", "mlflow").exit_code == 0
    again = runner.invoke(app, ["leaderboard", str(out), "--tracker", "mlflow", "-q"])
    assert again.exit_code == 0, again.output
    _, runs = mlflow_runs(mlflow_store)
    assert len(runs) == 1
    shown = runner.invoke(
        app, ["leaderboard", str(out), "--tracker", "mlflow", "-o", str(tmp_path / "lb.md")]
    )
    assert "already in mlflow run" in shown.output


def test_several_sets_are_one_mlflow_run_each_in_the_named_experiment(tmp_path, mlflow_store):
    out = tmp_path / "board"
    files = (SAMPLE_FILES[0], SAMPLE_FILES[1])
    result = score(out, "--tracker", "mlflow", "--tracker-project", "cb-test", files=files)
    assert result.exit_code == 0, result.output
    _, runs = mlflow_runs(mlflow_store, "cb-test")
    assert sorted(r.info.run_name for r in runs) == sorted(p.stem for p in files)
    by_name = {r.info.run_name: r for r in runs}
    for path in files:
        summary = load_run(out / path.stem).summary
        assert by_name[path.stem].data.metrics["accuracy"] == pytest.approx(summary.accuracy)


# ----------------------------------------------------------------------------- W&B offline


def read_wandb_records(path: Path) -> list:
    """The records of an offline ``.wandb`` file: a LevelDB-style log (a 7-byte file header,
    then 32 KiB blocks of chunks, each with a CRC, a length and a type) of protobuf records."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", "not a W&B transaction log"
    block = 32768
    position, pending, records = 7, b"", []
    while position + 7 <= len(data):
        left_in_block = block - position % block
        if left_in_block < 7:  # the block's tail is padding
            position += left_in_block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        chunk = data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind == 0 and length == 0:
            break
        pending += chunk
        if kind in (1, 4):  # a full record, or the last chunk of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def test_score_logs_to_wandb_offline(tmp_path, monkeypatch):
    pytest.importorskip("wandb", reason="the 'wandb' extra is not installed")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    out = tmp_path / "res"
    result = score(out, "--tracker", "wandb")
    assert result.exit_code == 0, result.output
    assert "logged to wandb run" in result.output
    (log,) = (tmp_path / "wandb").glob("offline-run-*/run-*.wandb")
    records = read_wandb_records(log)
    config: dict = {}
    for record in records:  # the run's first config, then any later updates
        kind = record.WhichOneof("record_type")
        if kind not in ("run", "config"):
            continue
        for item in record.run.config.update if kind == "run" else record.config.update:
            *parents, last = [item.key] if item.key else list(item.nested_key)
            place = config
            for parent in parents:
                place = place.setdefault(parent, {})
            place[last] = json.loads(item.value_json)
    run = load_run(out)
    config.pop("_wandb", None)
    assert config == json.loads(json.dumps(run.summary.config)), sorted(config)
    assert config["encoder"] == "hash"
    summary: dict = {}
    for record in records:
        if record.WhichOneof("record_type") == "summary":
            for item in record.summary.update:
                summary[item.key] = json.loads(item.value_json)
    assert summary["match_f1"] == pytest.approx(run.summary.match_f1)
    assert summary["crystalbench.run_id"] == run.summary.run_id
    source, part = next(iter(run.summary.by_source.items()))
    assert summary[f"by_source/{source}/precision"] == pytest.approx(part.precision)
    history_keys = {
        item.key or ".".join(item.nested_key)
        for record in records
        if record.WhichOneof("record_type") == "history"
        for item in record.history.item
    }
    assert "items._type" in history_keys
    tables = list(log.parent.glob("files/media/table/items_*.table.json"))
    assert len(tables) == 1
    table = json.loads(tables[0].read_text())
    assert table["columns"] == list(ITEM_COLUMNS)
    assert len(table["data"]) == len(item_rows(run)) == run.summary.n_items


# ----------------------------------------------------------------------------- mistakes


def test_an_unknown_tracker_is_refused_before_any_work(tmp_path):
    out = tmp_path / "res"
    result = score(out, "--tracker", "mlfow")
    assert result.exit_code == 2
    assert "did you mean 'mlflow'" in result.output
    assert not out.exists()


def test_a_missing_tracker_package_names_its_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb now fails
    import crystalbench._internal.extras as extras

    monkeypatch.setattr(extras, "installed", lambda module: module != "wandb")
    out = tmp_path / "res"
    result = score(out, "--tracker", "wandb")
    assert result.exit_code == 2
    assert "pip install 'crystalbench[wandb]'" in result.output
    assert not out.exists()


def test_metrics_cover_every_breakdown_and_count(tmp_path):
    out = tmp_path / "res"
    assert score(out).exit_code == 0
    summary = load_run(out).summary
    metrics = run_metrics(summary)
    for breakdown in ("by_source", "by_difficulty"):
        for name, part in getattr(summary, breakdown).items():
            assert metrics[f"{breakdown}/{name}/n_items"] == part.n_items
            assert metrics[f"{breakdown}/{name}/ordered_f1"] == pytest.approx(part.ordered_f1)
    assert metrics["n_missing"] == summary.n_missing
    if summary.pairs is not None:
        assert metrics["pairs/pair_accuracy"] == pytest.approx(summary.pairs.pair_accuracy)
