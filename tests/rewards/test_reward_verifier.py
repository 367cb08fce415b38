"""The step verifier as an optional term of the reward scorer: off by default (no call, every
number and dump as before), and with a weight the completion's verified precision is added,
computed by hand below."""

from __future__ import annotations

import json

import pytest

from crystalbench.encoders import HashEncoder
from crystalbench.judges.verifier import ScriptedVerifier
from crystalbench.rewards.scorer import RewardScorer
from crystalbench.rewards.types import RewardWeights
from crystalbench.types import BenchmarkItem

ITEM = BenchmarkItem(
    id="1", source="x", question="Which bar is taller?", options=["a", "b"], answer="B",
    reference_steps=["Look at bar b.", "The bar b is taller."],
)  # fmt: skip
STEPS = [
    "Look at bar b.",
    "The sky is green today.",
    "Bar a reaches 3 units.",
    "I hope this helps!",
]
COMPLETION = json.dumps({"reasoning_steps": STEPS, "answer": "B"})
SCRIPT = {"The sky is green today.": "wrong_perception", "Bar a reaches 3 units.": "supported"}


def test_off_by_default_nothing_changes():
    plain = RewardScorer(HashEncoder())
    verifier = ScriptedVerifier(SCRIPT)
    unweighted = RewardScorer(HashEncoder(), verifier=verifier)  # weight 0: the term is off
    a = plain([COMPLETION], [ITEM])[0]
    b = unweighted([COMPLETION], [ITEM])[0]
    assert a.model_dump_json() == b.model_dump_json()
    assert "verified_precision" not in json.loads(a.model_dump_json())
    assert "verified_precision" not in plain.config_record()["weights"]
    assert verifier.checks == []  # never asked
    assert a.verified_precision is None


def test_the_weighted_term_by_hand():
    plain = RewardScorer(HashEncoder())([COMPLETION], [ITEM])[0]
    verifier = ScriptedVerifier(SCRIPT)
    scorer = RewardScorer(
        HashEncoder(), weights=RewardWeights(verified_precision=0.5), verifier=verifier
    )
    found = scorer([COMPLETION], [ITEM])[0]
    assert found.n_matched == plain.n_matched == 1
    # Asked: the two unmatched steps with a claim (the filler is labelled without a call).
    assert [check.step for check in verifier.checks] == STEPS[1:3]
    # 4 steps: 1 matched + 1 supported = 2 / 4.
    assert found.verified_precision == pytest.approx(0.5)
    assert found.components["verified_precision"] == pytest.approx(0.25)
    assert found.total == pytest.approx(plain.total + 0.25)
    assert {k: v for k, v in found.components.items() if k != "verified_precision"} == (
        plain.components
    )
    assert scorer.config_record()["weights"]["verified_precision"] == 0.5
    assert scorer.config_record()["verifier_identity"]["kind"] == "scripted"


def test_failed_verdicts_leave_the_denominator():
    verifier = ScriptedVerifier({"Bar a reaches 3 units.": "supported"})  # the sky fails
    scorer = RewardScorer(
        HashEncoder(), weights=RewardWeights(verified_precision=1.0), verifier=verifier
    )
    found = scorer([COMPLETION], [ITEM])[0]
    assert found.n_unverified == 1
    assert found.verified_precision == pytest.approx(2 / 3)  # (1 + 1) / (4 - 1)
