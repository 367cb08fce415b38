"""Real GRPO steps on CPU with a tiny random Qwen2.5-VL-style model (offline), every strategy.

The tiny model can only emit a few whole completions (see ``tests/tiny_vlm_training.py``), so
rewards vary within each group and the parameters must move. Each test runs two optimizer
steps; the curriculum test runs both phases and checks the hand-over.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
import yaml
from typer.testing import CliRunner

from crystalbench.training.config import LeakageError, TrainingError

pytestmark = pytest.mark.slow

FAST = {"num_generations": 4, "per_device_train_batch_size": 8}


@pytest.fixture
def pool(tmp_path):
    from tiny_vlm_training import write_pool

    return write_pool(tmp_path / "pool", 12)


def snapshot(model) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def unchanged(model, before) -> list[str]:
    return [name for name, p in model.named_parameters() if torch.equal(before[name], p.detach())]


def run(tmp_path, pool, strategy, **sections):
    from crystalbench.training.runner import run_training
    from tiny_vlm_training import tiny_config, training_model

    model, processor, banned = training_model(seed=0)
    grpo = {**FAST, **sections.pop("grpo", {})}
    extra = sections.pop("run", {})
    config = tiny_config(tmp_path / "run", pool, strategy, banned, grpo=grpo, **sections)
    before = snapshot(model)
    result = run_training(
        config, model=model, processing_class=processor, keep_trainers=True, **extra
    )
    return config, model, before, result


def logged(trainer, key) -> list[float]:
    return [entry[key] for entry in trainer.state.log_history if key in entry]


@pytest.mark.parametrize(
    ("strategy", "pcgrad", "functions"),
    [
        ("answer-only", False, ["crystal_format", "crystal_answer"]),
        ("composite", False, ["crystal_format", "crystal_answer", "crystal_step_f1"]),
        ("cpr", False, ["crystal_cpr_answer", "crystal_cpr_reasoning"]),
        ("cpr", True, ["crystal_cpr_answer", "crystal_cpr_reasoning"]),
    ],
    ids=["answer-only", "composite", "cpr", "cpr+pcgrad"],
)
def test_two_grpo_steps_move_every_parameter(tmp_path, pool, strategy, pcgrad, functions):
    config, model, before, result = run(tmp_path, pool, strategy, pcgrad={"enabled": pcgrad})
    (phase,) = result.phases
    trainer = phase.trainer
    assert phase.global_step == 2
    assert unchanged(model, before) == []
    assert trainer.reward_func_names == functions
    for key in ("crystal/format_rate", "crystal/accuracy", "crystal/step_f1", "crystal/cpr"):
        assert len(logged(trainer, key)) == 2, key
    assert any(value > 0 for value in logged(trainer, "crystal/format_rate"))
    out = Path(config.output_dir)
    # Validation with crystalbench scoring ran at each step and was logged and recorded.
    assert len(logged(trainer, "eval_accuracy")) == 2
    lines = (out / "validation.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2]
    # The resolved config travels with the run and with every checkpoint.
    for folder in (out, out / "checkpoint-1", out / "checkpoint-2"):
        saved = yaml.safe_load((folder / "crystal_train_config.yaml").read_text())
        assert saved["strategy"] == strategy
        run_record = json.loads((folder / "crystal_train_run.json").read_text())
        assert [t["kind"] for t in run_record["reward_terms"]] == [
            f.removeprefix("crystal_") for f in functions
        ]
        assert run_record["data"]["leakage"]["n_leaks"] == 0
    if pcgrad:
        assert len(trainer.projection_history) == 2
        for key in ("pcgrad/cosine", "pcgrad/conflict", "pcgrad/conflict_rate", "pcgrad/dot"):
            assert len(logged(trainer, key)) == 2, key
        assert all(-1.0 <= c <= 1.0 for c in logged(trainer, "pcgrad/cosine"))
        # On a fresh batch, the two advantages add up to TRL's (checked inside the trainer
        # too: it raises otherwise).
        batch = [trainer.train_dataset[i] for i in (0, 0, 0, 0, 1, 1, 1, 1)]
        trainer.model.train()
        output = trainer._generate_and_score_completions(batch)
        total = output["advantages_answer"] + output["advantages_reasoning"]
        assert torch.allclose(total, output["advantages"], atol=1e-5)
    else:
        assert trainer.projection_history == []


def test_cpr_curriculum_hands_over_the_best_phase1_checkpoint(tmp_path, pool):
    from transformers import Qwen2_5_VLForConditionalGeneration, TrainerCallback

    seen: list[dict] = []

    class Recorder(TrainerCallback):
        def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
            seen.append(
                {
                    "output_dir": args.output_dir,
                    "optimizer_state": len(optimizer.state),
                    "lr": optimizer.param_groups[0]["lr"],
                    "weights": {n: p.detach().clone() for n, p in model.named_parameters()},
                }
            )

    config, _, _, result = run(
        tmp_path,
        pool,
        "cpr-curriculum",
        run={"callbacks": [Recorder()]},
        curriculum={"pacing": "one_pass", "tie_break": "id"},
    )
    first, second = result.phases
    assert (first.global_step, second.global_step) == (2, 2)
    choice = result.handover.handover
    out = Path(config.output_dir)
    assert Path(choice.path).parent == out / "phase1"
    assert json.loads((out / "handover.json").read_text())["handover"]["path"] == choice.path
    # Selected on the validation split: the chosen step has the best recorded accuracy.
    records = [
        json.loads(x) for x in (out / "phase1" / "validation.jsonl").read_text().splitlines()
    ]
    best = max(r["metrics"]["accuracy"] for r in records)
    assert choice.value == best
    assert {r["step"] for r in records} == {1, 2}

    begin1, begin2 = seen
    assert begin1["output_dir"].endswith("phase1")
    assert begin2["output_dir"].endswith("phase2")
    # Phase 2 starts from the selected checkpoint's weights...
    saved = dict(Qwen2_5_VLForConditionalGeneration.from_pretrained(choice.path).named_parameters())
    assert begin2["weights"].keys() == saved.keys()
    for name, value in begin2["weights"].items():
        assert torch.equal(value, saved[name].detach()), name
    final1 = dict(
        Qwen2_5_VLForConditionalGeneration.from_pretrained(out / "phase1").named_parameters()
    )
    assert any(
        not torch.equal(begin1["weights"][n], final1[n].detach()) for n in final1
    )  # phase 1 trained
    # ...with a fresh optimizer at a lower learning rate.
    assert begin2["optimizer_state"] == 0
    assert (begin1["lr"], begin2["lr"]) == (0.05, 0.025)
    steps = {s["step"].item() for s in second.trainer.optimizer.state.values()}
    assert steps == {2.0}  # two phase-2 steps, not 2 + 2
    # Rewards: format + answer in phase 1, full CPR in phase 2.
    assert first.trainer.reward_func_names == ["crystal_format", "crystal_answer"]
    assert second.trainer.reward_func_names == ["crystal_cpr_answer", "crystal_cpr_reasoning"]
    # Phase 2 draws prompts from fewer to more reference steps; phase 1 is shuffled.
    assert first.trainer.curriculum_schedule is None
    assert first.trainer.args.shuffle_dataset
    drawn = list(dict.fromkeys(second.trainer._get_train_sampler()))
    counts = [second.trainer.train_dataset[i]["n_reference_steps"] for i in drawn]
    assert counts == sorted(counts)
    assert len(set(counts)) > 1


def test_training_refuses_to_start_on_a_leak(tmp_path, pool):
    from crystalbench.data import load_benchmark
    from crystalbench.training.runner import prepare_data, run_training
    from tiny_vlm_training import tiny_config

    leaked = load_benchmark("sample").get("realworldqa-05")
    rows = pool.read_text().splitlines()
    # The planted copy's image lives inside the pool folder, as a user's would.
    shutil.copy(leaked.image, pool.parent / "planted.png")
    rows.append(
        json.dumps({**leaked.model_dump(mode="json"), "id": "planted", "image": "planted.png"})
    )
    pool.write_text("\n".join(rows) + "\n")
    config = tiny_config(tmp_path / "run", pool, "cpr", [])
    with pytest.raises(LeakageError, match="planted = realworldqa-05"):
        run_training(config)
    assert not (tmp_path / "run").exists()  # nothing was built or written
    dropping = config.model_copy(
        update={
            "data": config.data.model_copy(
                update={"leakage": config.data.leakage.model_copy(update={"on_leak": "drop"})}
            )
        }
    )
    data = prepare_data(dropping)
    assert data.dropped == ["planted"]
    assert "planted" not in {i.id for i in data.split.train + data.split.validation}


def test_pcgrad_with_a_kl_term_from_a_saved_model(tmp_path, pool):
    from crystalbench.training.runner import run_training
    from tiny_vlm_training import tiny_config, training_model

    model, processor, banned = training_model(seed=2)
    model.save_pretrained(tmp_path / "policy")
    saved = snapshot(model)
    config = tiny_config(
        tmp_path / "run",
        pool,
        "cpr",
        banned,
        grpo={**FAST, "beta": 0.05},
        pcgrad={"enabled": True},
        evaluation={"enabled": False},
    )
    result = run_training(
        config, model=str(tmp_path / "policy"), processing_class=processor, keep_trainers=True
    )
    trainer = result.phases[0].trainer
    assert trainer.ref_model is not None
    assert len(logged(trainer, "kl")) == 2
    assert unchanged(trainer.model, saved) == []


def test_reward_weight_sweep_on_the_validation_split(tmp_path, pool):
    from crystalbench.training.sweep import run_sweep
    from tiny_vlm_training import tiny_config, training_model

    _model, _processor, banned = training_model()
    config = tiny_config(tmp_path / "sweep", pool, "cpr", banned, grpo={**FAST, "max_steps": 1})

    def fresh():
        m, p, _ = training_model()
        return m, p

    report = run_sweep(config, [0.6, 0.7], metric="harmonic", model_factory=fresh)
    assert [p.answer_weight for p in report.points] == [0.6, 0.7]
    assert [p.step_weight for p in report.points] == [0.4, 0.3]
    assert all(p.n_items == 2 for p in report.points)  # the whole held-out split
    assert report.best in (0.6, 0.7)
    out = Path(config.output_dir)
    saved = yaml.safe_load((out / "aw-0.60" / "crystal_train_config.yaml").read_text())
    assert saved["rewards"]["weights"]["cpr_answer"] == 0.6
    assert len((out / "sweep.jsonl").read_text().splitlines()) == 2
    assert "Best a_w by validation harmonic" in (out / "sweep.md").read_text()
    with pytest.raises(TrainingError, match="CPR strategy"):
        run_sweep(config.model_copy(update={"strategy": "composite"}), [0.5])


def test_cli_dry_run_prints_the_phases(tmp_path):
    from crystalbench.cli.main import app

    result = CliRunner().invoke(
        app,
        [
            "train",
            "--config",
            "recipe:qwen2_5_vl_3b_cpr_curriculum",
            "--dry-run",
            "--set",
            "grpo.learning_rate=4e-6",
            "-o",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "phase1" in result.output
    assert "phase2" in result.output
    assert "4e-06" in result.output
    assert "2e-06" in result.output
    bad = CliRunner().invoke(
        app, ["train", "--config", "recipe:qwen2_5_vl_3b_cpr", "--set", "grpo.nope=1"]
    )
    assert bad.exit_code == 2


def test_separate_phase2_launch_hands_over_from_the_phase1_folder(tmp_path, pool):
    """``crystal train --phase phase2`` after a phase-1 launch: selection reads the folder."""
    from crystalbench.training.runner import run_training
    from tiny_vlm_training import tiny_config, training_model

    model, processor, banned = training_model(seed=3)
    config = tiny_config(tmp_path / "run", pool, "cpr-curriculum", banned, grpo=FAST)
    phase1 = Path(config.output_dir) / "phase1"
    for step, accuracy in ((3, 0.75), (5, 0.5)):
        model.save_pretrained(phase1 / f"checkpoint-{step}")
        with (phase1 / "validation.jsonl").open("a") as log:
            log.write(json.dumps({"step": step, "metrics": {"accuracy": accuracy}}) + "\n")
    result = run_training(config, processing_class=processor, phases="phase2", keep_trainers=True)
    (second,) = result.phases
    assert result.handover.handover.step == 3
    assert second.name == "phase2"
    assert second.global_step == 2
    assert second.trainer.args.learning_rate == 0.025
    with pytest.raises(TrainingError, match="needs strategy cpr-curriculum"):
        run_training(config.model_copy(update={"strategy": "cpr"}), phases="phase1")
