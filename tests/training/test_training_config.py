"""Training configs: loading, validation, recipes, phase plans and their GRPOConfig."""

from __future__ import annotations

import pytest
import yaml

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.rewards.types import RewardWeights
from crystalbench.training.config import (
    RECIPES_DIR,
    TrainConfig,
    dump_config,
    load_train_config,
    phase_plans,
    reward_terms,
)


def minimal(**extra):
    data = {
        "strategy": "cpr",
        "output_dir": "runs/x",
        "model": {"name_or_path": "Qwen/Qwen2.5-VL-3B-Instruct"},
        "data": {"train": "pool.jsonl"},
    }
    data.update(extra)
    return data


def write(tmp_path, data):
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_strategies_map_to_the_paper_rewards():
    w = RewardWeights(format=0.5, answer=2.0, step=3.0)
    table = {
        "answer-only": [("format", 0.5, "answer"), ("answer", 2.0, "answer")],
        "composite": [
            ("format", 0.5, "answer"),
            ("answer", 2.0, "answer"),
            ("step_f1", 3.0, "reasoning"),
        ],
        "cpr": [("cpr_answer", 1.0, "answer"), ("cpr_reasoning", 1.0, "reasoning")],
    }
    for strategy, expected in table.items():
        assert [(t.kind, t.weight, t.objective) for t in reward_terms(strategy, w)] == expected
    assert [t.kind for t in reward_terms("cpr-curriculum", w, "phase1")] == ["format", "answer"]
    assert [t.kind for t in reward_terms("cpr-curriculum", w, "phase2")] == [
        "cpr_answer",
        "cpr_reasoning",
    ]
    with pytest.raises(UnknownNameError, match="did you mean 'cpr'"):
        reward_terms("cpr2", w)


def test_curriculum_phases_lower_the_learning_rate_and_order_phase_two(tmp_path):
    config = TrainConfig.model_validate(
        minimal(
            strategy="cpr-curriculum",
            output_dir=str(tmp_path),
            grpo={"learning_rate": 2e-6, "eval_steps": 50, "save_steps": 200},
            curriculum={"phase1": {"max_steps": 300}, "phase2": {"learning_rate": 5e-7}},
            pcgrad={"enabled": True},
        )
    )
    first, second = phase_plans(config)
    assert (first.name, first.learning_rate, first.max_steps, first.ordered) == (
        "phase1",
        2e-6,
        300,
        False,
    )
    assert first.save_steps == 50  # every phase-1 checkpoint has a validation score
    assert first.pcgrad is False  # phase 1 has a single objective
    assert (second.name, second.learning_rate, second.ordered, second.pcgrad) == (
        "phase2",
        5e-7,
        True,
        True,
    )
    assert first.output_dir == str(tmp_path / "phase1")
    assert second.output_dir == str(tmp_path / "phase2")


def test_phase_two_must_learn_slower():
    with pytest.raises(ValueError, match="lower learning rate"):
        TrainConfig.model_validate(
            minimal(strategy="cpr-curriculum", curriculum={"phase2": {"learning_rate_factor": 1.0}})
        )


def test_pcgrad_needs_two_objectives():
    with pytest.raises(ValueError, match="pcgrad needs a reward term in each objective"):
        TrainConfig.model_validate(minimal(strategy="answer-only", pcgrad={"enabled": True}))


def test_skipping_the_leakage_check_must_be_explicit():
    with pytest.raises(ValueError, match="on_leak to 'ignore'"):
        TrainConfig.model_validate(
            minimal(data={"train": "p.jsonl", "leakage": {"benchmark": None}})
        )
    config = TrainConfig.model_validate(
        minimal(data={"train": "p.jsonl", "leakage": {"benchmark": None, "on_leak": "ignore"}})
    )
    assert config.data.leakage.benchmark is None


def test_unknown_option_names_the_field(tmp_path):
    expected = (
        r"train\.yaml:4: field grpo\.learning_rat: unknown field; did you mean 'learning_rate'"
    )
    with pytest.raises(InputError, match=expected):
        load_train_config(write(tmp_path, minimal(grpo={"learning_rat": 1e-6})))


def test_overrides_and_round_trip(tmp_path):
    config = load_train_config(
        write(tmp_path, minimal()), {"grpo.max_steps": 7, "pcgrad.enabled": True, "seed": 3}
    )
    assert (config.grpo.max_steps, config.pcgrad.enabled, config.seed) == (7, True, 3)
    again = load_train_config(write(tmp_path, yaml.safe_load(dump_config(config))))
    assert again == config
    assert again.digest() == config.digest()


def test_missing_file_and_unknown_recipe(tmp_path):
    with pytest.raises(InputError, match="config file not found"):
        load_train_config(tmp_path / "nope.yaml")
    with pytest.raises(UnknownNameError, match="qwen2_5_vl_3b_cpr_curriculum"):
        load_train_config("recipe:qwen2_5_vl_3b_cpr_curriculm")


GPU_RECIPES = sorted(p for p in RECIPES_DIR.glob("*.yaml") if p.stem != "tiny-cpu")


@pytest.mark.parametrize("path", GPU_RECIPES, ids=lambda p: p.stem)
def test_bundled_recipes_use_the_paper_weights_on_four_gpus(path):
    config = load_train_config(f"recipe:{path.stem}")
    w = config.rewards.weights
    assert (w.cpr_answer, w.cpr_step, w.cpr_wrong_discount) == (0.65, 0.35, 0.3)
    assert (w.format, w.answer) == (1.0, 1.0)
    assert config.grpo.use_vllm
    assert config.data.validation_fraction == 0.15
    assert config.data.leakage.on_leak == "refuse"
    launcher = yaml.safe_load((RECIPES_DIR / "launch" / "accelerate_zero3_4gpu.yaml").read_text())
    assert (launcher["num_processes"], launcher["deepspeed_config"]["zero_stage"]) == (4, 3)


def test_recipes_cover_both_models():
    names = {
        load_train_config(f"recipe:{p.stem}").model.name_or_path for p in RECIPES_DIR.glob("*.yaml")
    }
    models = {"Qwen/Qwen2.5-VL-3B-Instruct", "OpenGVLab/InternVL3_5-4B-HF", "tiny:qwen2.5-vl"}
    assert names == models


def test_grpo_arguments_carry_the_plan(tmp_path):
    from crystalbench.training.runner import grpo_arguments

    config = TrainConfig.model_validate(
        minimal(
            strategy="composite",
            output_dir=str(tmp_path),
            rewards={"weights": {"format": 0.2, "answer": 1.0, "step": 0.8}},
            grpo={"extra": {"top_k": 5}},
            report_to=["tensorboard"],
        )
    )
    args = grpo_arguments(config, phase_plans(config)[0])
    assert args["reward_weights"] == [0.2, 1.0, 0.8]
    assert args["report_to"] == ["tensorboard"]
    assert args["top_k"] == 5
    assert args["shuffle_dataset"] is True
    assert args["remove_unused_columns"] is False

    bad = config.model_copy(update={"grpo": config.grpo.model_copy(update={"extra": {"topk": 5}})})
    with pytest.raises(UnknownNameError, match="top_k"):
        grpo_arguments(bad, phase_plans(bad)[0])
    clash = config.model_copy(
        update={"grpo": config.grpo.model_copy(update={"extra": {"beta": 0.1}})}
    )
    with pytest.raises(InputError, match="set by crystalbench"):
        grpo_arguments(clash, phase_plans(clash)[0])


def test_grpo_arguments_build_a_real_grpo_config(tmp_path):
    from trl import GRPOConfig

    from crystalbench.training.runner import grpo_arguments

    config = load_train_config(
        "recipe:qwen2_5_vl_3b_cpr_curriculum",
        {
            "output_dir": str(tmp_path),
            "grpo.use_vllm": False,
            "grpo.bf16": False,
            "grpo.use_cpu": True,
        },
    )
    first, second = phase_plans(config)
    phase1 = GRPOConfig(**grpo_arguments(config, first))
    phase2 = GRPOConfig(**grpo_arguments(config, second))
    assert phase1.save_only_model
    assert not phase2.save_only_model
    assert phase2.learning_rate == phase1.learning_rate / 2
    assert phase1.shuffle_dataset
    assert not phase2.shuffle_dataset
    assert phase2.reward_weights == [1.0, 1.0, 0.0, 0.0]  # two held-out graders at weight 0
    assert phase1.save_steps == phase1.eval_steps == 100
