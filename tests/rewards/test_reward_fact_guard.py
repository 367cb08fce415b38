"""The fact guard in the reward: the copy attack of issue 24 stops paying.

The attack: a policy learns that the step term rewards reference *wording*, so it copies the
reference chain and gets the facts wrong (one number changed in every step that states one)
while still giving the right answer. With cosine alone each copied step matches its original
(cosine ~0.9) and CPR pays the full step term. With ``guard="facts-strict"`` a copied step that
contradicts the reference step it restates matches nothing, so the step term falls to about
what the unchanged (correct) steps earn; with ``guard="facts"`` (pair vetoes only) part of it
comes back through neighbouring reference steps. Honest completions keep their reward.

Real ``minilm-offline`` encoder on the bundled sample's reference chains (semantics matter).
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.rewards import RewardScorer, load_reward_encoder
from crystalbench.rewards.runtime import shared_source
from crystalbench.types import BenchmarkItem

A_W, S_W = 0.65, 0.35
NUMBER = re.compile(r"(?<![\w.^/])\d+(?![\w.]*\d)")


def dumps(steps: Sequence[str], answer: str) -> str:
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


def copy_with_wrong_numbers(steps: Sequence[str], rng: random.Random) -> tuple[list[str], int]:
    """The reference chain with the first number of each step that has one moved by 1-3;
    how many steps were left as they are."""
    copied, kept = [], 0
    for step in steps:
        found = NUMBER.search(step)
        if found is None:
            copied.append(step)
            kept += 1
            continue
        value = int(found.group(0)) + rng.choice([1, 2, 3])
        copied.append(step[: found.start()] + str(value) + step[found.end() :])
    return copied, kept


@pytest.fixture(scope="module")
def attack() -> tuple[list[BenchmarkItem], list[str], list[str], list[float]]:
    """Items with at least two numeric reference steps: the attack's and an honest
    completion for each, and the share of the chain the attack leaves correct."""
    rng = random.Random(24)
    items, attacks, honest, correct_share = [], [], [], []
    for item in load_benchmark("sample").items:
        steps = [s for s in item.reference_steps if s.strip()]
        copied, kept = copy_with_wrong_numbers(steps, rng)
        if len(steps) - kept < 2:
            continue
        items.append(item)
        attacks.append(dumps(copied, item.answer))
        honest.append(dumps(steps, item.answer))
        correct_share.append(kept / len(steps))
    assert len(items) >= 10
    return items, attacks, honest, correct_share


@pytest.fixture(scope="module")
def encoder():
    return load_reward_encoder("minilm-offline", device="cpu")


def test_copied_wording_with_wrong_numbers_stops_earning_the_step_term(attack, encoder):
    """Attack: reference wording copied with a wrong number in each numeric step, answer
    right. Bound: both guards take away at least 70 % of what cosine alone overpays (the
    mean step F1 against the share of correct steps, what an honest chain with only those
    steps right would earn), and stay within 0.2 of that share. Measured (RESULTS.md):
    none 1.000, correct share 0.363; before issue 30 facts 0.890 and facts-strict 0.518,
    since (copies with a changed value blocked for the whole item) 0.363 under both."""
    items, attacks, _, correct_share = attack
    f1 = {}
    for guard in ("none", "facts", "facts-strict"):
        scorer = RewardScorer(encoder, guard=guard)
        signals = scorer.signals(attacks, items)
        assert all(s.answer_correct for s in signals)  # the answers are the gold ones
        f1[guard] = float(np.mean([s.step_f1 for s in signals]))
        rewards = scorer.rewards(attacks, items)
        # CPR with a right answer: a_w + s_w * F1, so the step term follows F1 exactly.
        expected = [A_W + S_W * s.step_f1 for s in signals]
        assert rewards == pytest.approx(expected)
    earned = float(np.mean(correct_share))
    assert f1["none"] > 0.95  # the hole: cosine alone pays for copied wording
    overpaid = f1["none"] - earned
    for guard in ("facts", "facts-strict"):
        assert f1["none"] - f1[guard] >= 0.7 * overpaid, (guard, f1, earned)
        assert f1[guard] <= earned + 0.2, (guard, f1, earned)
    assert f1["facts-strict"] <= f1["facts"] < f1["none"], f1


def _copy_attack_module():
    """``benchmarks/copy_attack.py``, the generator of issue 30's copy-attack set."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "copy_attack.py"
    spec = importlib.util.spec_from_file_location("copy_attack", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_copied_chains_with_wrong_values_entities_or_relations_stop_paying(encoder):
    """Attack (issue 30): every item of the sample, the reference chain copied with one to
    three values, entities or relations changed (``benchmarks/copy_attack.py``, seed 30),
    the answer right. Cosine alone pays the full CPR reward; under ``facts`` (the evaluation
    guard, not only ``facts-strict``) the step term falls to within 0.05 of what the
    unchanged steps earn, so the copied wrong facts earn nothing. Measured: 1.000 without a
    guard, 0.770 under both guards, unchanged steps 0.770."""
    module = _copy_attack_module()
    bench = load_benchmark("sample")
    attacks = module.build_attacks(bench.items, 30)
    assert len(attacks) == len(bench.items)
    assert all(1 <= len(a["changed"]) <= 3 for a in attacks)
    items = [bench.get(a["id"]) for a in attacks]
    completions = [dumps(a["steps"], item.answer) for a, item in zip(attacks, items, strict=True)]
    earned = [
        module.unchanged_f1(len(a["steps"]), len(item.reference_steps),
                            len(a["steps"]) - len(a["changed"]))
        for a, item in zip(attacks, items, strict=True)
    ]  # fmt: skip
    mean_earned = float(np.mean(earned))
    plain = RewardScorer(encoder).rewards(completions, items)
    assert float(np.mean(plain)) > A_W + S_W * 0.95  # the hole: copied wording pays
    for guard in ("facts", "facts-strict"):
        scorer = RewardScorer(encoder, guard=guard)
        signals = scorer.signals(completions, items)
        assert all(s.answer_correct for s in signals)
        f1 = float(np.mean([s.step_f1 for s in signals]))
        assert abs(f1 - mean_earned) <= 0.05, (guard, f1, mean_earned)
        rewards = scorer.rewards(completions, items)
        assert float(np.mean(rewards)) <= A_W + S_W * (mean_earned + 0.05)


def test_honest_completions_keep_their_reward(attack, encoder):
    """The guard takes nothing from a completion that states the reference facts (the
    reference chain itself)."""
    items, _, honest, _ = attack
    plain = RewardScorer(encoder).rewards(honest, items)
    for guard in ("facts", "facts-strict"):
        assert RewardScorer(encoder, guard=guard).rewards(honest, items) == plain
    assert plain == pytest.approx([1.0] * len(items))


@pytest.mark.slow
def test_the_sample_styles_keep_their_rewards(encoder):
    """The sample's five model styles, as completions: not one reward moves under either
    guard (they restate facts; none contradicts its reference)."""
    bench = load_benchmark("sample")
    completions, rows = [], []
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        for pred in load_predictions(path).by_id.values():
            steps = pred.reasoning_steps
            text = dumps(steps, pred.answer or "") if steps is not None else pred.response
            completions.append(text or "")
            rows.append(bench.get(pred.id))
    base = RewardScorer(encoder).rewards(completions, rows)
    assert len(set(base)) > 10  # a spread of rewards, not a degenerate set
    for guard in ("facts", "facts-strict"):
        assert RewardScorer(encoder, guard=guard).rewards(completions, rows) == base, guard


def test_the_guard_reads_the_items_options():
    """An option named by its text: the guard needs the item's options to see that the
    completion's "the fox" contradicts the reference's "the grass" (hash encoder)."""
    item = BenchmarkItem(
        id="food",
        source="scienceqa",
        question="Which is the producer?",
        options=["fox", "grass", "frog"],
        answer="B",
        reference_steps=["Therefore the producer is the grass."],
    )
    wrong = dumps(["Therefore the producer is the fox."], "B")
    plain = RewardScorer(HashEncoder(), tau=0.3)
    guarded = RewardScorer(HashEncoder(), tau=0.3, guard="facts")
    assert plain.signals([wrong], [item])[0].step_f1 == 1.0
    assert guarded.signals([wrong], [item])[0].step_f1 == 0.0
    options_less = item.model_copy(update={"options": []})
    assert guarded.signals([wrong], [options_less])[0].step_f1 == 1.0
    assert guarded.config_record()["guard"] == "facts"


def test_trainers_name_the_guard_in_their_reward_kwargs(monkeypatch):
    """verl / EasyR1: ``guard`` in the reward kwargs or ``$CRYSTAL_REWARD_GUARD``; an
    unknown name fails with the valid ones."""
    from crystalbench.errors import UnknownNameError

    assert shared_source(encoder="hash", guard="facts-strict").guard == "facts-strict"
    monkeypatch.setenv("CRYSTAL_REWARD_GUARD", "facts")
    assert shared_source(encoder="hash").guard == "facts"
    with pytest.raises(UnknownNameError, match="facts-strict"):
        shared_source(encoder="hash", guard="fact")


def test_the_reward_server_serves_the_guard_it_was_configured_with():
    """``crystal serve-rewards --guard`` (its config): a real server on loopback, the official
    client; the health check names the guard and the copy earns no step credit."""
    from crystalbench.rewards import RemoteRewardScorer
    from crystalbench.rewards.server_config import RewardServerConfig, build_reward_server

    item = BenchmarkItem(
        id="angle",
        source="mathvision",
        question="What is angle ABC?",
        answer="40",
        reference_steps=["The angle ABC is 40 degrees."],
    )
    copy = dumps(["The angle ABC is 50 degrees."], "40")
    config = RewardServerConfig(encoder="hash", use_cache=False, port=0, guard="facts-strict")
    with build_reward_server(config) as server:
        assert server.wait_ready(30)
        client = RemoteRewardScorer(server.url)
        assert client.health()["config"]["guard"] == "facts-strict"
        (signals,) = client.signals([copy], [item])
    assert signals.answer_correct is True
    assert signals.step_f1 == 0.0
    plain = RewardScorer(HashEncoder(), tau=config.threshold).signals([copy], [item])[0]
    assert plain.step_f1 == 1.0  # the hole the guard closes
    with pytest.raises(ValueError, match="guard"):
        RewardServerConfig(guard="strict")


def test_a_bad_reward_variable_is_an_input_error_naming_it(monkeypatch):
    """``$CRYSTAL_REWARD_TAU`` goes through the one config loader: a value that is not a
    number is an InputError naming the variable, not a bare ValueError."""
    monkeypatch.setenv("CRYSTAL_REWARD_TAU", "high")
    with pytest.raises(InputError) as raised:
        shared_source(encoder="hash")
    assert raised.value.field == "tau"
    assert "CRYSTAL_REWARD_TAU" in str(raised.value)
    monkeypatch.setenv("CRYSTAL_REWARD_TAU", "0.5")
    assert shared_source(encoder="hash").tau == 0.5
    assert shared_source(encoder="hash", tau=0.25).tau == 0.25
