"""Post-hoc checkpoint selection for verl, EasyR1 and TRL runs (issue 32.3): their
validation logs in, ``best.json`` and a ``best`` link out, exactly like ``crystal train``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.errors import InputError
from crystalbench.training.selection import (
    SelectConfig,
    read_metrics_log,
    resolve_metric,
    select_from_log,
)

runner = CliRunner()


def verl_run(tmp_path, values, *, saved=(2, 4, 6)):
    """A verl-shaped run: its file logger's JSONL and ``global_step_N/actor`` folders."""
    run = tmp_path / "checkpoints" / "crystal" / "exp"
    for step in saved:
        (run / f"global_step_{step}" / "actor").mkdir(parents=True)
    (run / "latest_checkpointed_iteration.txt").write_text(str(max(saved)))
    lines = []
    for step, (f1, acc) in values.items():
        data = {"actor/lr": 1e-6, "critic/score/mean": 0.9 + step / 100}
        if f1 is not None:
            data |= {
                "val-aux/crystal/heldout_f1_minilm/mean@1": f1,
                "val-core/crystal/acc/mean@1": acc,
                "val-aux/crystal/reward/mean@1": 0.99,
            }
        lines.append(json.dumps({"step": step, "data": data}))
    log = tmp_path / "metrics.jsonl"
    log.write_text("\n".join(lines) + "\n")
    return run, log


def test_verl_run_selects_on_the_named_heldout_grader(tmp_path):
    # step 0 (before training) has no checkpoint; step 3 was validated but not saved.
    values = {0: (0.1, 0.1), 2: (0.4, 0.6), 3: (0.9, 0.9), 4: (0.5, 0.2), 5: (None, None)}
    values |= {6: (0.5, 0.3)}
    run, log = verl_run(tmp_path, values)
    result = runner.invoke(
        app, ["train-select", str(run), "--metric", "heldout_f1_minilm", "--metrics", str(log)]
    )
    assert result.exit_code == 0, result.output
    best = json.loads((run / "best.json").read_text())
    key = "val-aux/crystal/heldout_f1_minilm/mean@1"
    assert best["metric"] == key
    assert best["step"] == 4  # 0.5 ties with step 6: the earlier step wins
    assert best["value"] == 0.5
    assert best["split"] == "validation"
    assert best["metrics_file"] == str(log)
    assert best["candidates"] == [[2, 0.4], [4, 0.5], [6, 0.5]]
    assert "actor/lr" not in best["metrics"]  # training keys are not validation metrics
    assert (run / "best").resolve() == (run / "global_step_4").resolve()
    assert "step 4" in result.output
    # Another metric, lower is better: the choice and the link move.
    again = select_from_log(
        SelectConfig(run_dir=str(run), metric="acc", metrics_file=str(log), lower_is_better=True)
    )
    assert (again.step, again.metric) == (4, "val-core/crystal/acc/mean@1")
    assert (run / "best").resolve() == (run / "global_step_4").resolve()
    top = select_from_log(SelectConfig(run_dir=str(run), metric="acc", metrics_file=str(log)))
    assert top.step == 2
    assert (run / "best").resolve() == (run / "global_step_2").resolve()


def test_easyr1_log_and_a_csv_export(tmp_path):
    run = tmp_path / "easyr1"
    for step in (5, 10):
        (run / f"global_step_{step}").mkdir(parents=True)
    rows = [
        {"config": {"trainer": {"val_freq": 5}}},
        {"step": 5, "val": {"reward_score": 0.7, "heldout_accuracy_reward": 0.30}},
        {"step": 10, "val": {"reward_score": 0.8, "heldout_accuracy_reward": 0.25}},
        {"step": 10, "reward": {"overall": 0.9}},
    ]
    (run / "experiment_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    choice = select_from_log(SelectConfig(run_dir=str(run), metric="heldout_accuracy"))
    assert (choice.metric, choice.step, choice.value) == ("val/heldout_accuracy_reward", 5, 0.3)
    by_score = select_from_log(SelectConfig(run_dir=str(run), metric="val/reward_score"))
    assert by_score.step == 10
    csv = tmp_path / "export.csv"
    csv.write_text("step,val/accuracy_reward,train/loss\n5,0.2,1.0\n10,,0.9\n10,0.6,\n")
    values, _ = read_metrics_log(csv)
    assert values == {
        5: {"val/accuracy_reward": 0.2, "train/loss": 1.0},
        10: {"train/loss": 0.9, "val/accuracy_reward": 0.6},
    }
    assert (
        select_from_log(
            SelectConfig(run_dir=str(run), metric="accuracy", metrics_file=str(csv))
        ).step
        == 10
    )


def test_our_own_validation_log_reselects_by_another_metric(tmp_path):
    run = tmp_path / "run"
    for step in (2, 4):
        (run / f"checkpoint-{step}").mkdir(parents=True)
    records = [
        {"step": 2, "n_items": 8, "metrics": {"harmonic": 0.5, "heldout/accuracy": 0.2}},
        {"step": 4, "n_items": 8, "metrics": {"harmonic": 0.4, "heldout/accuracy": 0.6}},
    ]
    (run / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    choice = select_from_log(SelectConfig(run_dir=str(run), metric="heldout/accuracy"))
    assert choice.step == 4
    assert (run / "best").resolve() == (run / "checkpoint-4").resolve()


def test_metric_names_resolve_to_one_key_or_fail_naming_them():
    keys = [
        "val-aux/a/heldout_f1/mean@4",
        "val-aux/a/heldout_f1/std@4",
        "val-aux/b/heldout_f1/mean@4",
        "val-core/a/acc/mean@4",
    ]
    assert resolve_metric("a/heldout_f1", keys) == "val-aux/a/heldout_f1/mean@4"
    with pytest.raises(InputError, match="several validation keys"):
        resolve_metric("heldout_f1", keys)  # two data sources: say which
    with pytest.raises(Exception, match="validation metric"):
        resolve_metric("heldout_f2", keys)


def one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_bad_input_is_one_line_naming_the_field(tmp_path):
    values = {2: (0.4, 0.6), 4: (0.5, 0.2)}
    run, log = verl_run(tmp_path, values, saved=(2, 4))
    select = ["train-select", str(run), "--metrics", str(log)]
    one_line_error(runner.invoke(app, [*select, "--metric", "nope"]), "field metric", "nope")
    one_line_error(runner.invoke(app, [*select, "--metric", "actor/lr"]), "field metric")
    one_line_error(
        runner.invoke(app, ["train-select", str(run), "--metric", "acc"]),
        "field metrics_file",
        "--metrics FILE",
    )
    one_line_error(
        runner.invoke(app, ["train-select", str(tmp_path / "none"), "--metric", "acc"]),
        "field run_dir",
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"step": 1, "data": {}}\n{"data": {"val/x": 1}}\n')
    one_line_error(
        runner.invoke(app, ["train-select", str(run), "--metric", "x", "--metrics", str(bad)]),
        "bad.jsonl:2",
        "field step",
    )
    unsaved, unsaved_log = verl_run(tmp_path / "u", values, saved=(3,))
    one_line_error(
        runner.invoke(
            app, ["train-select", str(unsaved), "--metric", "acc", "--metrics", str(unsaved_log)]
        ),
        "both validated and saved",
        "save_freq",
    )
