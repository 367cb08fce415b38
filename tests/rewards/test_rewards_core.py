"""The pure reward core: the strict format check, the step guards, every reward kind's maths."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crystalbench.encoders import HashEncoder, OneHotEncoder
from crystalbench.errors import UnknownNameError
from crystalbench.rewards import (
    REWARD_KINDS,
    FormatRules,
    RewardSignals,
    RewardWeights,
    check_format,
    cpr_parts,
    cpr_reward,
    make_breakdown,
    reward_components,
    score_completion,
)
from crystalbench.rewards.core import guard_steps, make_signals
from crystalbench.rewards.types import StepGuards
from crystalbench.scoring.matching import MatchRules, cosine_matrix, score_chain
from crystalbench.types import BenchmarkItem

GOOD = '{"reasoning_steps": ["Read the axis.", "Compare the bars."], "answer": "B"}'


def dumps(steps: object, answer: object = "B", **extra: object) -> str:
    return json.dumps({"reasoning_steps": steps, "answer": answer, **extra})


# --------------------------------------------------------------------------- format check

PASSING = [
    ("bare", GOOD),
    ("whitespace", "\n  " + GOOD + "\n\n"),
    ("json fence", "```json\n" + GOOD + "\n```"),
    ("plain fence", "```\n" + GOOD + "\n```  "),
    ("pretty printed", json.dumps(json.loads(GOOD), indent=2)),
    ("unicode", dumps(["Le côté AC mesure 6 cm.", "角度是 90 度"], "10 cm")),
]


@pytest.mark.parametrize(("name", "text"), PASSING, ids=[p[0] for p in PASSING])
def test_format_accepts_exactly_the_contract(name, text):
    check = check_format(text)
    assert check.ok, check.error
    assert check.error is None
    assert check.answer is not None


FAILING = [
    ("none", None, "not_text"),
    ("bytes", b"{}", "not_text"),
    ("empty", "", "no_json"),
    ("prose only", "The answer is B.", "no_json"),
    ("prose before", "Here you go: " + GOOD, "text_outside_json"),
    ("prose after", GOOD + " Hope this helps!", "text_outside_json"),
    ("two objects", GOOD + GOOD, "text_outside_json"),
    ("think block by default", "<think>hmm</think>" + GOOD, "text_outside_json"),
    ("fence with trailing prose", "```json\n" + GOOD + "\n```\nDone.", "bad_code_fence"),
    ("unclosed fence", "```json\n" + GOOD, "bad_code_fence"),
    ("trailing comma", '{"reasoning_steps": ["a",], "answer": "B"}', "invalid_json"),
    ("single quotes", "{'reasoning_steps': ['a'], 'answer': 'B'}", "invalid_json"),
    ("NaN", '{"reasoning_steps": ["a"], "answer": "B", "x": NaN}', "invalid_json"),
    ("truncated", GOOD[:-5], "invalid_json"),
    ("list", '["a"]', "no_json"),
    ("duplicate key", '{"reasoning_steps": ["a"], "answer": "A", "answer": "B"}', "duplicate_key"),
    ("missing answer", '{"reasoning_steps": ["a"]}', "missing_key"),
    ("missing steps", '{"answer": "B"}', "missing_key"),
    ("extra key", dumps(["a"], "B", confidence="high"), "extra_key"),
    ("steps string", dumps("a. b.", "B"), "steps_not_list"),
    ("no steps", dumps([], "B"), "no_steps"),
    ("step number", dumps(["a", 3], "B"), "step_not_string"),
    ("step object", dumps([{"step": "a"}], "B"), "step_not_string"),
    ("blank step", dumps(["a", "   "], "B"), "blank_step"),
    ("answer number", dumps(["a"], 4), "answer_not_string"),
    ("answer list", dumps(["a"], ["A", "B"]), "answer_not_string"),
    ("blank answer", dumps(["a"], " "), "blank_answer"),
    ("lone surrogate", '{"reasoning_steps": ["\\ud800"], "answer": "B"}', "invalid_unicode"),
]


@pytest.mark.parametrize(("name", "text", "error"), FAILING, ids=[f[0] for f in FAILING])
def test_format_rejects_with_a_reason(name, text, error):
    check = check_format(text)
    assert not check.ok
    assert check.error == error
    assert check.steps == ()
    assert check.answer is None


def test_format_strips_steps_and_answer():
    check = check_format(dumps(["  Read the axis.  ", "\tCompare.\n"], "  B "))
    assert check.steps == ("Read the axis.", "Compare.")
    assert check.answer == "B"


def test_think_block_only_when_allowed():
    rules = FormatRules(allow_think=True)
    assert check_format("<think>so B</think>\n" + GOOD, rules).ok
    # The chat template may open the block in the prompt: only the closing tag is generated.
    assert check_format("so it is B</think>" + GOOD, rules).ok
    assert (
        check_format("<think>a</think><think>b</think>" + GOOD, rules).error == "text_outside_json"
    )
    assert check_format("<think>a<think>b</think>" + GOOD, rules).error == "bad_think_block"
    assert check_format("<think>never closed " + GOOD, rules).error == "text_outside_json"
    assert check_format(GOOD, rules).ok


def test_fence_only_when_allowed():
    text = "```json\n" + GOOD + "\n```"
    assert check_format(text, FormatRules(allow_code_fence=False)).error == "text_outside_json"


@pytest.mark.parametrize(
    ("rules", "text", "error"),
    [
        (FormatRules(max_chars=50), GOOD, "too_long"),
        (FormatRules(max_steps=1), GOOD, "too_many_steps"),
        (FormatRules(max_step_chars=10), GOOD, "step_too_long"),
        (FormatRules(max_answer_chars=3), dumps(["a"], "B or C"), "answer_too_long"),
    ],
)
def test_caps_fail_the_format(rules, text, error):
    assert check_format(text, rules).error == error


def test_deep_nesting_never_raises():
    text = '{"reasoning_steps": ' + "[" * 5000 + "]" * 5000 + ', "answer": "B"}'
    assert check_format(text).error == "invalid_json"


# --------------------------------------------------------------------------- reward maths


def test_cpr_golden_values():
    # Written by hand from the paper: a_w = 0.65, s_w = 0.35, lambda = 0.3.
    assert cpr_reward(True, 0.0) == 0.65
    assert cpr_reward(True, 1.0) == 1.0
    assert math.isclose(cpr_reward(True, 0.6), 0.65 + 0.21)
    assert math.isclose(cpr_reward(False, 1.0), 0.105)
    assert math.isclose(cpr_reward(False, 0.5), 0.0525)
    assert cpr_reward(False, 0.0) == 0.0


@given(
    correct=st.booleans(),
    f1=st.floats(0.0, 1.0),
    a_w=st.floats(0.0, 2.0),
    s_w=st.floats(0.0, 2.0),
    lam=st.floats(0.0, 1.0),
)
def test_cpr_parts_add_up_to_cpr(correct, f1, a_w, s_w, lam):
    weights = RewardWeights(cpr_answer=a_w, cpr_step=s_w, cpr_wrong_discount=lam)
    answer, reasoning = cpr_parts(correct, f1, weights)
    assert answer == (a_w if correct else 0.0)
    assert math.isclose(answer + reasoning, cpr_reward(correct, f1, weights), abs_tol=1e-12)
    whole = reward_components("cpr", format_ok=True, correct=correct, f1=f1, weights=weights)
    only_answer = reward_components(
        "cpr_answer", format_ok=True, correct=correct, f1=f1, weights=weights
    )
    only_steps = reward_components(
        "cpr_reasoning", format_ok=True, correct=correct, f1=f1, weights=weights
    )
    assert whole is not None
    assert only_answer is not None
    assert only_steps is not None
    # Exactly equal: what TRL sums with reward_weights=[1, 1] is what CPR is.
    assert sum(whole.values()) == only_answer["answer"] + only_steps["reasoning"]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("format", {"format": 1.0}),
        ("answer", {"answer": 0.0}),
        ("step_f1", {"step_f1": 0.5}),
        ("answer_only", {"format": 2.0, "answer": 0.0}),
        ("curriculum_phase1", {"format": 2.0, "answer": 0.0}),
        ("composite", {"format": 2.0, "answer": 0.0, "step_f1": 0.25}),
        ("cpr", {"answer": 0.0, "reasoning": 0.35 * 0.5 * 0.3}),
        ("cpr_answer", {"answer": 0.0}),
        ("cpr_reasoning", {"reasoning": 0.35 * 0.5 * 0.3}),
    ],
)
def test_components_of_every_kind(kind, expected):
    weights = RewardWeights(format=2.0, answer=3.0, step=0.5)
    got = reward_components(kind, format_ok=True, correct=False, f1=0.5, weights=weights)
    assert got is not None
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert math.isclose(got[key], value), key


def test_composite_weights_are_applied_to_correct_answers():
    weights = RewardWeights(format=0.1, answer=1.0, step=0.5)
    got = reward_components("composite", format_ok=True, correct=True, f1=0.8, weights=weights)
    assert got == {"format": 0.1, "answer": 1.0, "step_f1": 0.4}


def test_unscored_rows_are_none_not_zero():
    assert reward_components("cpr", format_ok=True, correct=None, f1=0.5) is None
    assert reward_components("cpr_answer", format_ok=True, correct=True, f1=None) is None
    assert reward_components("step_f1", format_ok=True, correct=None, f1=None) is None
    assert reward_components("answer", format_ok=True, correct=None, f1=0.5) is None
    # format needs neither an answer nor a reference.
    assert reward_components("format", format_ok=True, correct=None, f1=None) == {"format": 1.0}
    # answer-based kinds don't need reference steps.
    assert reward_components("answer_only", format_ok=True, correct=True, f1=None) == {
        "format": 1.0,
        "answer": 1.0,
    }


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(UnknownNameError, match="cpr"):
        reward_components("cpr2", format_ok=True, correct=True, f1=1.0)


def test_breakdown_total_is_the_sum_of_components():
    signals = RewardSignals(
        format_ok=True,
        answer="B",
        answer_correct=True,
        n_steps=4,
        n_ref=2,
        n_matched=2,
        step_precision=0.5,
        step_recall=1.0,
        step_f1=2 / 3,
    )
    for kind in REWARD_KINDS:
        breakdown = make_breakdown(signals, kind)
        assert breakdown.total == sum(breakdown.components.values())
        assert breakdown.kind == kind
        assert breakdown.step_f1 == signals.step_f1


def test_failed_format_scores_wrong_and_zero_steps():
    signals = make_signals(check_format("B"), has_gold=True, n_ref=5)
    assert signals.answer_correct is False
    assert signals.step_f1 == 0.0
    assert signals.answer_rule == "format_failed"
    for kind in REWARD_KINDS:
        assert make_breakdown(signals, kind).total == 0.0
    no_data = make_signals(check_format("B"), has_gold=False, n_ref=0)
    assert make_breakdown(no_data, "cpr").total is None
    assert make_breakdown(no_data, "format").total == 0.0


# --------------------------------------------------------------------------- step guards


def test_guards_block_repeats_and_question_copies_but_count_them():
    question = "The shaded figure is made by cutting a rectangle. What is the area of the figure?"
    steps = [
        "The shaded figure is made by cutting a rectangle.",  # verbatim question sentence
        "Question: what is the area of the figure?",  # copy with a one-word prefix
        "The area of the shaded figure is 68.",  # recombined words plus a result: allowed
        "The big rectangle is 10 by 8.",
        "the big rectangle is 10 BY 8",  # repeat after case and punctuation folding
        "So the area is 80 - 12 = 68.",
    ]
    guarded = guard_steps(steps, question)
    assert guarded.allowed == (steps[2], steps[3], steps[5])
    assert (guarded.n_steps, guarded.n_repeated, guarded.n_question_copies) == (6, 1, 2)
    off = guard_steps(steps, question, StepGuards(block_repeats=False, block_question_copies=False))
    assert off.allowed == tuple(steps)


def test_guards_leave_the_sample_reference_chains_alone():
    from crystalbench.data import load_benchmark
    from crystalbench.rewards.core import prompt_text

    for item in load_benchmark("sample").items:
        guarded = guard_steps(item.reference_steps, prompt_text(item))
        assert guarded.allowed == tuple(item.reference_steps), item.id


# --------------------------------------------------------------------------- one completion

ITEM = BenchmarkItem(
    id="g1",
    source="plotqa",
    question="Which year has the taller bar?",
    options=["2019", "2020"],
    answer="B",
    reference_steps=["r0", "r1", "r2"],
)


def test_score_completion_golden_with_exact_cosines():
    # Hand-built vectors: p0.r0 = 0.8, p1.r2 = 0.36 (>= tau 0.35), p2 matches nothing.
    table = {
        "r0": [1, 0, 0, 0],
        "r1": [0, 1, 0, 0],
        "r2": [0, 0, 1, 0],
        "p0": [0.8, 0, 0, 0.6],
        "p1": [0, 0, 0.36, math.sqrt(1 - 0.36**2)],
        "p2": [0, 0, 0, 1],
    }
    encoder = OneHotEncoder(table)
    text = dumps(["p0", "p1", "p2"], "(B)")
    breakdown = score_completion(text, ITEM, encoder)
    assert breakdown.n_matched == 2
    assert breakdown.step_precision == 2 / 3
    assert breakdown.step_recall == 2 / 3
    assert math.isclose(breakdown.step_f1 or 0.0, 2 / 3)
    assert breakdown.answer_correct is True
    assert math.isclose(breakdown.total or 0.0, 0.65 + 0.35 * 2 / 3)
    wrong = score_completion(dumps(["p0", "p1", "p2"], "A"), ITEM, encoder, kind="cpr")
    assert math.isclose(wrong.total or 0.0, 0.3 * 0.35 * 2 / 3)
    stricter = score_completion(text, ITEM, encoder, match_rules=MatchRules(tau=0.5))
    assert stricter.n_matched == 1


def test_score_completion_without_guards_equals_evaluation_match_f1():
    from crystalbench.data import load_benchmark

    encoder = HashEncoder()
    guards_off = StepGuards(block_repeats=False, block_question_copies=False)
    for item in load_benchmark("sample").items[:10]:
        steps = [*item.reference_steps[::2], item.question, item.reference_steps[0]]
        ours = score_completion(dumps(steps, item.answer), item, encoder, guards=guards_off)
        vectors = encoder.encode(steps)
        refs = encoder.encode(item.reference_steps)
        evaluation = score_chain(cosine_matrix(vectors, refs))
        assert ours.step_f1 == evaluation.f1
        assert ours.step_precision == evaluation.precision
        assert ours.n_matched == len(evaluation.matches)


def test_score_completion_without_item_scores_only_format():
    breakdown = score_completion(GOOD, None, HashEncoder(), kind="format")
    assert breakdown.total == 1.0
    assert score_completion(GOOD, None, HashEncoder(), kind="cpr").total is None


def test_item_without_reference_steps_leaves_step_kinds_unscored():
    item = ITEM.model_copy(update={"reference_steps": ["  "]})
    assert score_completion(GOOD, item, HashEncoder(), kind="cpr").total is None
    assert score_completion(GOOD, item, HashEncoder(), kind="answer_only").total == 2.0
