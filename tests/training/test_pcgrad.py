"""PCGrad: the projection maths, the advantage split, and the gradient surgery on a real model.

Golden values are worked out by hand in the comments; the tiny-model tests build a step in
which the answer and reasoning gradients provably conflict (a lucky guess against a
well-reasoned wrong answer) and check that PCGrad changes the update, and that without a
conflict the update is exactly TRL's CPR gradient.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.training.pcgrad import (
    group_normalise,
    pcgrad,
    pcgrad_pair,
    projection_weights,
    split_advantages,
)

T = torch.tensor


# ------------------------------------------------------------------ projection maths


def test_no_conflict_update_is_the_plain_sum():
    # g_a . g_r = 3 + 2 = 5 >= 0: no projection.
    update, info = pcgrad_pair(T([1.0, 2.0]), T([3.0, 1.0]))
    assert update.tolist() == [4.0, 3.0]
    assert not info.conflict
    assert (info.weight_answer, info.weight_reasoning) == (1.0, 1.0)


def test_orthogonal_gradients_are_not_projected():
    update, info = pcgrad_pair(T([1.0, 0.0]), T([0.0, 5.0]))
    assert update.tolist() == [1.0, 5.0]
    assert not info.conflict
    assert info.cosine == 0.0


def test_projection_matches_yu_et_al_by_hand():
    # g_a = (2, 1, 0), g_r = (-1, 0, 1): d = -2, |g_a|^2 = 5, |g_r|^2 = 2.
    # g_a' = g_a - (d / |g_r|^2) g_r = (2, 1, 0) + (-1, 0, 1) = (1, 1, 1)
    # g_r' = g_r - (d / |g_a|^2) g_a = (-1, 0, 1) + 0.4 (2, 1, 0) = (-0.2, 0.4, 1)
    # update = (0.8, 1.4, 2.0); weights 1 - d/|g_a|^2 = 1.4 and 1 - d/|g_r|^2 = 2.
    update, info = pcgrad_pair(T([2.0, 1.0, 0.0]), T([-1.0, 0.0, 1.0]))
    assert update.tolist() == pytest.approx([0.8, 1.4, 2.0])
    assert info.conflict
    assert info.dot == -2.0
    assert info.weight_answer == pytest.approx(1.4)
    assert info.weight_reasoning == pytest.approx(2.0)
    assert info.cosine == pytest.approx(-2.0 / math.sqrt(10.0))


def test_projected_gradients_no_longer_conflict():
    g_a, g_r = T([1.0, 0.0]), T([-1.0, 1.0])
    # By hand: g_a' = (0.5, 0.5), g_r' = (0, 1), g_a' . g_r' = 0.5 >= 0.
    _, (p_a, p_r) = pcgrad([g_a, g_r])
    assert p_a.tolist() == [0.5, 0.5]
    assert p_r.tolist() == [0.0, 1.0]
    assert float(p_a @ p_r) == 0.5
    assert float(p_a @ g_r) == 0.0  # each is projected onto the other's normal plane


def test_three_objectives_follow_algorithm_1_by_hand():
    # g1 = (1, 0), g2 = (0, 1), g3 = (-1, -1), visiting the others in index order:
    # g1: g2 no conflict; g3: g1 - (-1/2) g3 = (0.5, -0.5)
    # g2: g1 no conflict; g3: g2 - (-1/2) g3 = (-0.5, 0.5)
    # g3: g1: g3 - (-1/1) g1 = (0, -1); then g2: (0, -1) - (-1/1) g2 = (0, 0)
    update, projected = pcgrad([T([1.0, 0.0]), T([0.0, 1.0]), T([-1.0, -1.0])])
    assert [p.tolist() for p in projected] == [[0.5, -0.5], [-0.5, 0.5], [0.0, 0.0]]
    assert update.tolist() == [0.0, 0.0]


def test_zero_gradient_is_never_projected_on():
    info = projection_weights(0.0, 0.0, 4.0)
    assert not info.conflict
    assert info.cosine == 0.0


vectors = st.lists(st.floats(-10, 10, allow_nan=False, width=32), min_size=3, max_size=3)


@settings(max_examples=200, deadline=None)
@given(vectors, vectors)
def test_properties_of_the_two_objective_update(a, r):
    g_a, g_r = T(a, dtype=torch.float64), T(r, dtype=torch.float64)
    update, info = pcgrad_pair(g_a, g_r)
    _, (p_a, p_r) = pcgrad([g_a, g_r])
    _, (q_r, q_a) = pcgrad([g_r, g_a])
    # Same update whichever order the objectives are visited in.
    assert torch.allclose(update, p_a + p_r, atol=1e-9)
    assert torch.allclose(p_a + p_r, q_a + q_r, atol=1e-9)
    scale = 1e-9 * (1 + float(g_a.norm() * g_r.norm()))
    assert float(p_a @ p_r) >= -scale  # projected gradients never conflict
    if float(g_a @ g_r) >= 0:
        assert torch.equal(update, g_a + g_r)
    else:  # a conflict is projected unless one gradient is (numerically) zero
        assert info.conflict or min(float(g_a @ g_a), float(g_r @ g_r)) <= 1e-20


# ------------------------------------------------------------------ advantage split


def test_split_advantages_by_hand_without_scaling():
    # One group of 4: R_ans = a_w c = (0.65, 0.65, 0, 0); R_rsn = (0.35, 0, 0.105, 0).
    # Group means 0.325 and 0.11375; scale_rewards="none" subtracts them only.
    rewards = T([[0.65, 0.35], [0.65, 0.0], [0.0, 0.105], [0.0, 0.0]])
    parts = split_advantages(
        rewards, torch.ones(2), ["answer", "reasoning"], num_generations=4, scale_rewards="none"
    )
    assert parts["answer"].tolist() == pytest.approx([0.325, 0.325, -0.325, -0.325])
    assert parts["reasoning"].tolist() == pytest.approx([0.23625, -0.11375, -0.00875, -0.11375])


def test_split_advantages_share_the_group_std_by_hand():
    # Group (0.825, 0.105): mean 0.465, sample std 0.72 / sqrt(2); answer parts (0.65, 0),
    # reasoning parts (0.175, 0.105) -> deviations +-0.325 and +-0.035 over the same std.
    rewards = T([[0.65, 0.175], [0.0, 0.105]])
    parts = split_advantages(rewards, torch.ones(2), ["answer", "reasoning"], num_generations=2)
    denominator = 0.72 / math.sqrt(2) + 1e-4
    assert parts["answer"].tolist() == pytest.approx(
        [0.325 / denominator, -0.325 / denominator], rel=1e-5
    )
    assert parts["reasoning"].tolist() == pytest.approx(
        [0.035 / denominator, -0.035 / denominator], rel=1e-5
    )


def _trl_advantages(rewards, weights, groups, scale, aggregation):
    """TRL's formula (grpo_trainer.py, _generate_and_score_completions), written out again."""
    from trl.trainer.utils import nanstd

    unscorable = torch.isnan(rewards).all(dim=1)
    if aggregation == "sum_then_normalize":
        total = (rewards * weights.unsqueeze(0)).nansum(dim=1)
        total[unscorable] = torch.nan
        mean = torch.nanmean(total.view(-1, groups), dim=1).repeat_interleave(groups)
        if scale == "batch":
            std = nanstd(total).expand_as(total)
        else:
            std = nanstd(total.view(-1, groups), dim=1).repeat_interleave(groups)
        advantages = total - mean
        if scale != "none":
            advantages = advantages / (std + 1e-4)
    else:
        grouped = rewards.view(-1, groups, rewards.shape[1])
        mean_k = torch.nanmean(grouped, dim=1, keepdim=True)
        std_k = nanstd(grouped, dim=1, keepdim=True)
        normalised = ((grouped - mean_k) / (std_k + 1e-4)).view(-1, rewards.shape[1])
        total = (normalised * weights.unsqueeze(0)).nansum(dim=1)
        total[unscorable] = torch.nan
        advantages = (total - torch.nanmean(total)) / (nanstd(total) + 1e-4)
    return torch.nan_to_num(advantages, nan=0.0)


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
@pytest.mark.parametrize("aggregation", ["sum_then_normalize", "normalize_then_sum"])
def test_answer_and_reasoning_advantages_sum_to_trl_advantage(scale, aggregation):
    generator = torch.Generator().manual_seed(3)
    # Composite-like: format, answer (answer objective), step F1 (reasoning objective).
    rewards = torch.rand(12, 3, generator=generator)
    rewards[5] = torch.nan  # a row no reward function could score
    rewards[7, 2] = torch.nan  # one function returned None for this row
    weights = T([0.5, 1.0, 2.0])
    parts = split_advantages(
        rewards,
        weights,
        ["answer", "answer", "reasoning"],
        num_generations=4,
        scale_rewards=scale,
        aggregation=aggregation,
    )
    expected = _trl_advantages(rewards, weights, 4, scale, aggregation)
    assert torch.allclose(parts["answer"] + parts["reasoning"], expected, atol=1e-5)
    assert parts["answer"][5] == 0
    assert parts["reasoning"][5] == 0


def test_group_normalise_matches_trl_single_reward():
    rewards = T([1.0, 0.0, 2.0, 2.0])
    # First group: mean 0.5, sample std sqrt(0.5); second group: std 0 -> advantages 0.
    expected = 0.5 / (math.sqrt(0.5) + 1e-4)
    assert group_normalise(rewards, 2).tolist() == pytest.approx([expected, -expected, 0.0, 0.0])


def test_split_rejects_bad_shapes():
    with pytest.raises(ValueError, match="multiple of num_generations"):
        split_advantages(
            torch.zeros(3, 2), torch.ones(2), ["answer", "reasoning"], num_generations=2
        )
    with pytest.raises(ValueError, match="unknown scale_rewards"):
        split_advantages(
            torch.zeros(2, 2),
            torch.ones(2),
            ["answer", "reasoning"],
            num_generations=2,
            scale_rewards="x",
        )


# ------------------------------------------------------------------ on the tiny model


@pytest.fixture(scope="module")
def tiny_trainer(tmp_path_factory):
    """A CPR + PCGrad trainer on the tiny VLM (built, not trained)."""
    from crystalbench.training.config import phase_plans
    from crystalbench.training.runner import build_trainer, prepare_data
    from tiny_vlm_training import tiny_config, training_model, write_pool

    tmp = tmp_path_factory.mktemp("pcgrad")
    pool = write_pool(tmp / "pool", 6)
    model, processor, banned = training_model(seed=1)
    config = tiny_config(
        tmp / "run", pool, "cpr", banned, pcgrad={"enabled": True}, evaluation={"enabled": False}
    )
    data = prepare_data(config)
    trainer = build_trainer(
        config, phase_plans(config)[0], data, model=model, processing_class=processor
    )
    trainer.current_gradient_accumulation_steps = 1
    trainer.model.train()
    return trainer


def _crafted_inputs(trainer, first: str, second: str, rewards_per_func):
    """One group of two single-token completions of the same prompt, with their rewards."""
    from tiny_vlm_training import COMPLETIONS

    tokenizer = trainer.processing_class.tokenizer
    prompt = tokenizer("What is 2 + 2?", return_tensors="pt")["input_ids"][0]
    ids = [tokenizer.convert_tokens_to_ids(COMPLETIONS[name]) for name in (first, second)]
    rewards = T(rewards_per_func)
    parts = split_advantages(rewards, torch.ones(2), ["answer", "reasoning"], num_generations=2)
    total = group_normalise(rewards.sum(dim=1), 2)
    return {
        "prompt_ids": prompt.repeat(2, 1),
        "prompt_mask": torch.ones(2, prompt.numel(), dtype=torch.long),
        "completion_ids": T([[ids[0]], [ids[1]]]),
        "completion_mask": torch.ones(2, 1, dtype=torch.long),
        "advantages": total,
        "advantages_answer": parts["answer"],
        "advantages_reasoning": parts["reasoning"],
        "num_items_in_batch": T(2.0),
    }


def _flat_grads(params) -> torch.Tensor:
    return torch.cat(
        [(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in params]
    )


def _flat(buffers, params) -> torch.Tensor:
    return torch.cat(
        [
            (b if b is not None else torch.zeros_like(p)).reshape(-1)
            for b, p in zip(buffers, params, strict=True)
        ]
    )


def _pcgrad_step(trainer, inputs, forward: str):
    from crystalbench.training.pcgrad import GradientSurgeon

    trainer.pcgrad_config = trainer.pcgrad_config.model_copy(update={"forward": forward})
    model = trainer.model
    model.zero_grad(set_to_none=True)
    surgeon = GradientSurgeon(trainer.accelerator, model)
    trainer._surgeon = surgeon
    trainer._objective_backward(model, inputs)
    g_a = _flat(surgeon._buffers["answer"], surgeon.params).clone()
    g_r = _flat(surgeon._buffers["reasoning"], surgeon.params).clone()
    info = surgeon.apply()
    update = _flat_grads(surgeon.params)
    model.zero_grad(set_to_none=True)
    return g_a, g_r, update, info, surgeon.params


def _cpr_gradient(trainer, inputs, params):
    model = trainer.model
    model.zero_grad(set_to_none=True)
    trainer._compute_loss(model, dict(inputs)).backward()
    gradient = _flat_grads(params)
    model.zero_grad(set_to_none=True)
    return gradient


@pytest.mark.slow
@pytest.mark.parametrize("forward", ["shared", "separate"])
def test_pcgrad_changes_the_update_when_gradients_conflict(tiny_trainer, forward):
    """A lucky guess (right answer, no matched step) against a diligent wrong answer
    (reference steps, wrong answer): the answer objective pushes towards the first, the
    reasoning objective towards the second, so their gradients point in opposite ways."""
    # CPR parts: lucky (a_w, 0) = (0.65, 0); diligent (0, lambda s_w F1) = (0, 0.105).
    inputs = _crafted_inputs(tiny_trainer, "lucky", "diligent", [[0.65, 0.0], [0.0, 0.105]])
    g_a, g_r, update, info, params = _pcgrad_step(tiny_trainer, inputs, forward)
    assert info.conflict
    assert float(g_a @ g_r) < 0
    assert info.cosine < -0.5
    plain = g_a + g_r
    assert float((update - plain).norm()) > 1e-3 * float(plain.norm())
    expected, _ = pcgrad_pair(g_a, g_r)
    assert torch.allclose(update, expected, rtol=1e-4, atol=1e-7)
    d = float(g_a.double() @ g_r.double())
    p_a = g_a.double() - d / float(g_r.double() @ g_r.double()) * g_r.double()
    p_r = g_r.double() - d / float(g_a.double() @ g_a.double()) * g_a.double()
    assert float(p_a @ p_r) >= 0
    # The two objective gradients add up to TRL's CPR gradient (loss linear in A on policy).
    assert torch.allclose(plain, _cpr_gradient(tiny_trainer, inputs, params), rtol=1e-4, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("beta", [0.0, 0.1])
def test_without_conflict_pcgrad_update_equals_trl_cpr_gradient(tiny_trainer, beta):
    """A perfect completion against a diligent wrong one: both objectives prefer the first."""
    # CPR parts: perfect (0.65, 0.35); diligent (0, 0.105).
    inputs = _crafted_inputs(tiny_trainer, "perfect", "diligent", [[0.65, 0.35], [0.0, 0.105]])
    saved = tiny_trainer.beta
    tiny_trainer.beta = beta
    try:
        if beta:
            # A fixed reference that differs from the policy: the KL term has a gradient and
            # is back-propagated once, outside the projection.
            with torch.no_grad():
                logps, _, _ = tiny_trainer._get_per_token_logps_and_entropies(
                    tiny_trainer.model,
                    torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1),
                    torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1),
                    1,
                )
            inputs["ref_per_token_logps"] = logps - 0.3
        g_a, g_r, update, info, params = _pcgrad_step(tiny_trainer, inputs, "shared")
        assert not info.conflict
        assert float(g_a @ g_r) > 0
        assert torch.allclose(
            update, _cpr_gradient(tiny_trainer, inputs, params), rtol=1e-4, atol=1e-7
        )
    finally:
        tiny_trainer.beta = saved
