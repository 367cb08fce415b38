"""Held-out graders in verl and EasyR1 (issue 32.3): extra keys of each result dict, scored
beside the reward and never added to it."""

from __future__ import annotations

import json

import pytest

from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.rewards import RewardScorer, easyr1, ground_truth_json, make_breakdown, verl
from crystalbench.rewards.runtime import heldout_graders

HELDOUT = [
    {"name": "f1_strict", "kind": "step_f1", "encoder": "hash", "tau": 0.9},
    {"name": "accuracy", "kind": "answer"},
]


def dumps(steps, answer):
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


@pytest.fixture(scope="module")
def batch():
    items = list(load_benchmark("sample").items)[:6]
    # Reworded steps: close enough for the reward's tau, not for the strict grader's.
    solutions = [
        dumps(
            [f"{step} as the figure shows" for step in item.reference_steps[: 1 + index % 3]],
            item.answer if index % 2 else "nope",
        )
        for index, item in enumerate(items)
    ]
    return items, solutions


def test_verl_heldout_keys_are_logged_and_leave_the_score_alone(batch):
    items, solutions = batch
    truths = [ground_truth_json(item) for item in items]
    plain = verl.compute_score_batch(["c"] * 6, solutions, truths, [None] * 6, encoder="hash")
    graded = verl.compute_score_batch(
        ["c"] * 6, solutions, truths, [None] * 6, encoder="hash", heldout=HELDOUT
    )
    strict = RewardScorer(HashEncoder(), tau=0.9).signals(solutions, items)
    for row, base, signals in zip(graded, plain, strict, strict=True):
        assert {k: v for k, v in row.items() if not k.startswith("heldout_")} == base
        assert row["heldout_accuracy"] == base["answer_correct"]
        assert row["heldout_f1_strict"] == make_breakdown(signals, "step_f1").total
    # The stricter threshold is a different grader: it must disagree somewhere.
    assert [r["heldout_f1_strict"] for r in graded] != [r["step_f1"] for r in graded]
    single = verl.compute_score("c", solutions[0], truths[0], None, encoder="hash", heldout=HELDOUT)
    assert single == graded[0]


def test_easyr1_heldout_keys_beside_overall(batch):
    items, solutions = batch
    inputs = [
        {"response": s, "response_length": 1, "ground_truth": ground_truth_json(i)}
        for s, i in zip(solutions, items, strict=True)
    ]
    plain = easyr1.compute_score(inputs, encoder="hash")
    graded = easyr1.compute_score(inputs, encoder="hash", heldout={"accuracy": "answer"})
    for row, base in zip(graded, plain, strict=True):
        assert row["overall"] == base["overall"]
        assert row["heldout_accuracy"] == base["accuracy"]
        assert set(row) == {*base, "heldout_accuracy"}


def test_heldout_specs_and_their_errors():
    as_json = heldout_graders(json.dumps(HELDOUT))
    assert [(g.name, g.kind, g.encoder, g.tau) for g in as_json] == [
        ("f1_strict", "step_f1", "hash", 0.9),
        ("accuracy", "answer", None, None),
    ]
    assert heldout_graders(None) == []
    with pytest.raises(InputError, match=r"field heldout\.0\.kind"):
        heldout_graders([{"name": "x", "kind": "nope"}])
    with pytest.raises(InputError, match="unique"):
        heldout_graders([{"name": "x"}, {"name": "x"}])
    with pytest.raises(InputError, match="field heldout: expected a list"):
        heldout_graders(3)
    with pytest.raises(InputError, match="field heldout: not JSON"):
        heldout_graders("[{")


def test_a_heldout_step_grader_needs_reference_steps():
    with pytest.raises(InputError, match="held-out grader 'f1'"):
        verl.compute_score(
            "c",
            dumps(["a"], "4"),
            "4",
            None,
            encoder="hash",
            kind="answer",
            heldout=[{"name": "f1"}],
        )
