"""Phase-1 checkpoints: selection on validation records, and the rotation that keeps the best."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from crystalbench.errors import UnknownNameError
from crystalbench.training.checkpoints import checkpoint_keeper, select_best_checkpoint
from crystalbench.training.config import TrainingError


def _phase_dir(tmp_path, records, checkpoints):
    for step in checkpoints:
        (tmp_path / f"checkpoint-{step}").mkdir()
    (tmp_path / "validation.jsonl").write_text(
        "".join(json.dumps({"step": s, "n_items": 10, "metrics": m}) + "\n" for s, m in records),
        encoding="utf-8",
    )
    return tmp_path


def test_best_checkpoint_is_chosen_on_validation(tmp_path):
    run = _phase_dir(
        tmp_path,
        [
            (100, {"accuracy": 0.40, "format_rate": 0.90}),
            (200, {"accuracy": 0.55, "format_rate": 0.80}),
            (300, {"accuracy": 0.55, "format_rate": 0.95}),  # tie on accuracy, better format
            (350, {"accuracy": 0.70, "format_rate": 1.00}),  # best, but never saved
            (400, {"accuracy": 0.30, "format_rate": 1.00}),
        ],
        checkpoints=[100, 200, 300, 400],
    )
    choice = select_best_checkpoint(run, "accuracy")
    assert (choice.step, choice.value) == (300, 0.55)
    assert choice.path == str(run / "checkpoint-300")
    assert choice.candidates == [(100, 0.40), (200, 0.55), (300, 0.55), (400, 0.30)]
    assert select_best_checkpoint(run, "format_rate").step == 400


def test_equal_scores_go_to_the_earlier_checkpoint(tmp_path):
    run = _phase_dir(tmp_path, [(1, {"accuracy": 0.5}), (2, {"accuracy": 0.5})], [1, 2])
    assert select_best_checkpoint(run).step == 1


def test_no_validated_checkpoint_is_an_error(tmp_path):
    run = _phase_dir(tmp_path, [(5, {"accuracy": 0.5})], [10])
    with pytest.raises(TrainingError, match="no validated checkpoint"):
        select_best_checkpoint(run)
    with pytest.raises(UnknownNameError):
        select_best_checkpoint(run, "loss")


def test_rotation_keeps_the_last_checkpoints_and_the_best_validated_one(tmp_path):
    pytest.importorskip("transformers")
    run = _phase_dir(
        tmp_path,
        [(10, {"accuracy": 0.9}), (20, {"accuracy": 0.2}), (30, {"accuracy": 0.3})],
        checkpoints=[10, 20, 30, 40],
    )
    keeper = checkpoint_keeper("accuracy", keep_last=2)
    args = SimpleNamespace(output_dir=str(run))
    keeper.on_save(args, SimpleNamespace(is_world_process_zero=False), None)
    assert sorted(p.name for p in run.glob("checkpoint-*")) == [
        "checkpoint-10",
        "checkpoint-20",
        "checkpoint-30",
        "checkpoint-40",
    ]
    keeper.on_save(args, SimpleNamespace(is_world_process_zero=True), None)
    assert sorted(p.name for p in run.glob("checkpoint-*")) == [
        "checkpoint-10",
        "checkpoint-30",
        "checkpoint-40",
    ]


def test_rotation_deletes_nothing_before_a_checkpoint_is_validated(tmp_path):
    pytest.importorskip("transformers")
    run = _phase_dir(tmp_path, [(5, {"accuracy": 0.5})], checkpoints=[10, 20, 30])
    keeper = checkpoint_keeper("accuracy", keep_last=1)
    keeper.on_save(
        SimpleNamespace(output_dir=str(run)), SimpleNamespace(is_world_process_zero=True), None
    )
    assert len(list(run.glob("checkpoint-*"))) == 3
