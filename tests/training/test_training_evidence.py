"""The training-evidence kit (issue 32.3) on the tiny model: held-out graders, validation
selection, controls, and the over-optimization report."""

from __future__ import annotations

import json

import pytest

from crystalbench.rewards.types import RewardWeights
from crystalbench.training.config import phase_plans, reward_terms


def test_control_strategies_are_first_class():
    w = RewardWeights(format=0.5)
    assert [(t.kind, t.weight) for t in reward_terms("format-only", w)] == [("format", 0.5)]
    assert [t.kind for t in reward_terms("random", w)] == ["random"]


def test_random_reward_is_seeded_and_on_cprs_scale():
    from crystalbench.training.controls import RandomReward

    draws = RandomReward(7, 1.0)(prompts=["p"] * 200, completions=[str(i) for i in range(200)])
    assert all(0.0 <= d <= 1.0 for d in draws)
    assert 0.3 < sum(draws) / len(draws) < 0.7
    again = RandomReward(7, 1.0)(prompts=["p"] * 200, completions=[str(i) for i in range(200)])
    assert draws == again
    assert RandomReward(8, 1.0)(prompts=["p"], completions=["0"]) != draws[:1]


def test_gao_fit_recovers_a_known_rl_curve_and_its_peak():
    from crystalbench.training.overoptimization import fit_gao_curve

    d = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0]
    fit = fit_gao_curve(d, [x * (0.6 - 0.2 * x) for x in d], grader="heldout/f1")
    assert fit.alpha == pytest.approx(0.6, abs=1e-6)
    assert fit.beta == pytest.approx(0.2, abs=1e-6)
    assert fit.peak_sqrt_kl == pytest.approx(1.5, abs=1e-6)
    short = fit_gao_curve([0.0, 1.0], [0.0, 0.1], grader="g")
    assert short.alpha is None
    assert "at least 3" in short.note


def test_curriculum_off_shuffles_phase2():
    from crystalbench.training.config import load_train_config

    config = load_train_config("recipe:qwen2_5_vl_3b_cpr_curriculum", {"curriculum.enabled": False})
    assert [p.ordered for p in phase_plans(config)] == [False, False]


@pytest.mark.slow
def test_tiny_run_logs_heldout_graders_selects_on_validation_and_reports(tmp_path):
    """Numbers meaningless, plumbing real: a held-out grader, selection, the report."""
    from crystalbench.training.config import load_train_config
    from crystalbench.training.runner import run_training

    out = tmp_path / "run"
    config = load_train_config("recipe:tiny-cpu", {"output_dir": str(out), "grpo.max_steps": 4})
    result = run_training(config, keep_trainers=True)
    (phase,) = result.phases
    trainer = phase.trainer
    # Held-out graders are TRL reward functions of weight 0: logged, never trained on.
    assert trainer.reward_func_names[-2:] == ["heldout_f1_hash_strict", "heldout_accuracy"]
    assert trainer.reward_weights.tolist()[-2:] == [0.0, 0.0]
    logged = [e for e in trainer.state.log_history if "rewards/heldout_accuracy/mean" in e]
    assert len(logged) == 4
    records = [json.loads(x) for x in (out / "validation.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [0, 2, 4]
    for record in records:
        assert {"proxy", "heldout/f1_hash_strict", "heldout/accuracy", "sqrt_kl"} <= set(
            record["metrics"]
        )
    assert records[0]["metrics"]["sqrt_kl"] < 1e-3  # the initial policy (float noise only)
    assert records[-1]["metrics"]["sqrt_kl"] > 0.0  # the policy moved from its start
    # The best checkpoint is chosen on the validation split by the named metric.
    best = json.loads((out / "best.json").read_text())
    assert best["metric"] == "harmonic"
    assert best["split"] == "validation"
    validated = {r["step"]: r["metrics"]["harmonic"] for r in records if r["step"] > 0}
    assert best["value"] == max(validated.values())
    assert (out / "best").resolve() == (out / f"checkpoint-{best['step']}").resolve()
    # The over-optimization report: a row per validated step, the fit, the plot.
    report = json.loads((out / "overoptimization.json").read_text())
    assert [row["step"] for row in report["rows"]] == [0, 2, 4]
    assert report["graders"] == ["heldout/accuracy", "heldout/f1_hash_strict"]
    assert {fit["grader"] for fit in report["fits"]} == {"proxy", *report["graders"]}
    assert "mean" in report["peak_step"]
    assert (out / "overoptimization.svg").read_text().startswith("<svg")
    assert "sqrt(KL)" in (out / "overoptimization.md").read_text()
