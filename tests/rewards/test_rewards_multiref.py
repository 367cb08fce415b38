"""Rewards against several reference chains: off by default, the best F1 when asked."""

from __future__ import annotations

import json

import pytest

from crystalbench.encoders import OneHotEncoder
from crystalbench.rewards import RewardScorer
from crystalbench.rewards.scorer import item_fingerprint
from fakes import CountingEncoder, make_item

TABLE = {name: [1.0 if k == j else 0.0 for j in range(6)] for k, name in enumerate("abcdef")}


def _completion(steps, answer="3"):
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


@pytest.fixture
def item():
    return make_item(1, ["c", "d", "e"], reference_chains=[["a", "b"], ["   "]])


def test_the_primary_chain_only_by_default(item):
    scorer = RewardScorer(OneHotEncoder(TABLE), kind="step_f1")
    (signals,) = scorer.signals([_completion(["a", "b"])], [item])
    assert signals.step_f1 == 0.0
    assert signals.n_ref == 3


def test_the_best_chain_when_asked(item):
    encoder = CountingEncoder(OneHotEncoder(TABLE))
    scorer = RewardScorer(encoder, kind="step_f1", best_reference_chain=True)
    (signals,) = scorer.signals([_completion(["a", "b"])], [item])
    assert signals.step_f1 == 1.0
    assert signals.n_ref == 2  # the winning chain's steps
    assert sorted(encoder.seen) == ["a", "b", "c", "d", "e"]  # each distinct text once
    partial = scorer.signals([_completion(["a", "c", "d"])], [item])[0]
    # primary: 2 of 3 matched both ways (F1 2/3); alternative: 1 of 3 / 1 of 2 (F1 0.4)
    assert partial.step_f1 == pytest.approx(2 / 3)
    assert partial.n_ref == 3


def test_single_chain_items_keep_their_reward_and_fingerprint():
    plain = make_item(1, ["a", "b"])
    on = RewardScorer(OneHotEncoder(TABLE), best_reference_chain=True)
    off = RewardScorer(OneHotEncoder(TABLE))
    batch = [_completion(["a", "f"]), _completion(["b", "a"], answer="4")]
    assert on.rewards(batch, [plain, plain]) == off.rewards(batch, [plain, plain])
    with_copy = plain.model_copy(update={"reference_chains": []})
    assert item_fingerprint(plain) == item_fingerprint(with_copy)
    other = plain.model_copy(update={"reference_chains": [["c"]]})
    assert item_fingerprint(plain) != item_fingerprint(other)
