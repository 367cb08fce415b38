"""Reasoning inside think blocks: where the steps come from, self-checks, and parity with the
JSON schema (issue 11, point 1). Outputs are written in the styles of VLM-R1, EasyR1, the
authors' GRPO code (``<think>...</think><answer>...</answer>``) and DeepSeek-R1."""

from __future__ import annotations

import json

import pytest

from crystalbench.parsing import parse_prediction, parse_response
from crystalbench.parsing.thinking import drop_self_checks, split_thinking
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item

STEPS = [
    "The chart shows the number of visitors for four museums.",
    "The bar for the Science Museum reaches 120.",
    "The bar for the Art Museum reaches 95.",
    "So the Science Museum has 25 more visitors than the Art Museum.",
]
JSON_OUTPUT = json.dumps({"reasoning_steps": STEPS, "answer": "25"})

# The same chain written the ways reasoning models and GRPO-trained models write it.
R1_STYLE_OUTPUTS = {
    "vlm-r1 think + answer tag": "<think>" + " ".join(STEPS) + "</think> <answer>25</answer>",
    "easyr1 think + boxed": "<think>\n"
    + "\n".join(STEPS)
    + "\n</think>\nThe answer is \\boxed{25}",
    "grpo think with step labels": "<think>\n"
    + "\n".join(f"Step {i}: {s}" for i, s in enumerate(STEPS, 1))
    + "\n</think>\n<answer>25</answer>",
    "r1 bare closing tag": " ".join(STEPS) + "\n</think>\n\n**Final Answer:** 25",
    "reasoning tag": "<reasoning>\n" + "\n".join(STEPS) + "\n</reasoning>\n<answer>\n25\n</answer>",
    "thinking tag": "<thinking>" + " ".join(STEPS) + "</thinking>\n\\boxed{25}",
    "kimi markers": "◁think▷" + " ".join(STEPS) + "◁/think▷Answer: 25",
    "self-checks in between": "<think>"
    + " ".join(
        [
            STEPS[0],
            "Let me double-check.",
            STEPS[1],
            "Hmm, let me verify.",
            STEPS[2],
            "Wait, is that right?",
            "Yes.",
            STEPS[3],
        ]
    )
    + "</think><answer>25</answer>",
    "cut off after the chain": "<think>" + " ".join(STEPS) + " But wait, let me",
}


@pytest.mark.parametrize("name", sorted(R1_STYLE_OUTPUTS))
def test_r1_style_output_gives_the_json_steps(name: str) -> None:
    json_parsed = parse_response(JSON_OUTPUT)
    parsed = parse_response(R1_STYLE_OUTPUTS[name])
    assert parsed.steps == json_parsed.steps == STEPS
    assert parsed.status.startswith("thinking_")
    assert parsed.thinking is not None
    if name != "cut off after the chain":
        assert parsed.answer == json_parsed.answer == "25"
    else:
        assert parsed.answer is None


def test_r1_style_output_scores_exactly_as_the_json_output() -> None:
    """Same steps, same answer: every metric of the item is identical."""
    item = make_item("museum", STEPS, answer="25")
    bench = make_benchmark([item])
    json_run = evaluate(bench, [Prediction(id="museum", response=JSON_OUTPUT)], HASH_CONFIG)
    expected = json_run.items[0]
    assert expected.f1 == 1.0
    for name, text in R1_STYLE_OUTPUTS.items():
        if name == "cut off after the chain":
            continue
        run = evaluate(bench, [Prediction(id="museum", response=text)], HASH_CONFIG)
        got = run.items[0]
        assert got.pred_steps == expected.pred_steps, name
        assert (got.f1, got.precision, got.recall, got.ordered_f1) == (
            expected.f1,
            expected.precision,
            expected.recall,
            expected.ordered_f1,
        ), name
        assert got.answer_correct is True, name
        assert got.parse_status.startswith("thinking_"), name


def test_answer_only_final_part_used_to_score_zero_steps() -> None:
    """The regression of issue 11: "...</think><answer>B</answer>" had zero steps."""
    parsed = parse_response("<think>Step 1: The sign is red.\nStep 2: It is octagonal.</think>B")
    assert (parsed.steps, parsed.answer, parsed.status) == (
        ["The sign is red.", "It is octagonal."],
        "B",
        "thinking_markup",
    )


def test_final_part_with_its_own_steps_keeps_the_think_block_aside() -> None:
    for final in (
        '{"reasoning_steps": ["The sign is red.", "It is octagonal."], "answer": "B"}',
        "- The sign is red.\n- It is octagonal.\n\nAnswer: B",
        "Step 1: The sign is red.\nStep 2: It is octagonal.\nAnswer: B",
        "The sign is red. It is octagonal. So the answer is B.",
    ):
        parsed = parse_response("<think>Draft: maybe a yield sign? Wait, no.</think>\n" + final)
        assert parsed.steps[:2] == ["The sign is red.", "It is octagonal."], final
        assert not parsed.status.startswith("thinking_"), final
        assert parsed.thinking == "Draft: maybe a yield sign? Wait, no."
        assert parsed.answer == "B"


def test_final_step_that_only_restates_the_box_is_not_a_step_of_its_own() -> None:
    parsed = parse_response(
        "<think>The angle at A is 100°. The base angles are equal, so each is 40°.</think>\n"
        "The base angle is $\\boxed{40^\\circ}$."
    )
    assert parsed.steps == ["The angle at A is 100°.", "The base angles are equal, so each is 40°."]
    assert parsed.status == "thinking_sentences"
    assert parsed.answer == "40^\\circ"


def test_final_box_steps_are_kept_when_the_think_block_has_none() -> None:
    parsed = parse_response("<think>Hmm.</think>\nThe base angle is $\\boxed{40^\\circ}$.")
    assert parsed.steps == ["The base angle is $\\boxed{40^\\circ}$."]
    assert parsed.status == "sentences"


def test_answer_from_the_think_block_when_the_final_part_has_none() -> None:
    parsed = parse_response("<think>The needle points at 40. So the answer is 40.</think>\n")
    assert parsed.answer == "40"
    assert parsed.status == "thinking_sentences"


def test_a_think_block_that_is_only_an_answer_is_the_reply() -> None:
    assert (
        parse_response("<think>B</think>").answer,
        parse_response("<think>B</think>").status,
    ) == (
        "B",
        "answer_only",
    )


def test_empty_think_block_and_unparseable_tail() -> None:
    assert parse_response("<think>  </think>").status == "empty"
    parsed = parse_response("<think>~~~</think> ***")
    assert (parsed.steps, parsed.answer, parsed.status) == ([], None, "unparseable")


def test_llava_cot_reasoning_stage_is_a_section_not_a_think_block() -> None:
    text = (
        "<SUMMARY>I will read the dial.</SUMMARY>\n"
        "<REASONING>The needle points at 40.</REASONING>\n<CONCLUSION>40</CONCLUSION>"
    )
    parsed = parse_response(text)
    assert parsed.steps == ["I will read the dial.", "The needle points at 40."]
    assert parsed.thinking is None
    assert parsed.status == "sentences"


def test_stored_answer_next_to_a_think_response() -> None:
    pred = Prediction(
        id="1", response="<think>The bar is 45. It is the tallest.</think>", answer="45"
    )
    parsed = parse_prediction(pred)
    assert (parsed.steps, parsed.answer, parsed.status) == (
        ["The bar is 45.", "It is the tallest."],
        "45",
        "thinking_sentences",
    )


@pytest.mark.parametrize(
    ("text", "body", "thinking"),
    [
        ("<think>a</think>b", "b", "a"),
        ("<THINK>a</THINK>b", "b", "a"),
        ("<thinking>a</thinking>b", "b", "a"),
        ("<reasoning>a</reasoning>b", "b", "a"),
        ("◁think▷a◁/think▷b", "b", "a"),
        ("a</think>b", "b", "a"),
        ("x<think>a", "x", "a"),
        ("<think>a</think>m<think>c</think>b", "mb", "a\n\nc"),
        ("plain text", "plain text", None),
        ("my reasoning is sound", "my reasoning is sound", None),
    ],
)
def test_split_thinking(text: str, body: str, thinking: str | None) -> None:
    assert split_thinking(text) == (body, thinking)


@pytest.mark.parametrize(
    ("step", "kept"),
    [
        ("Let me double-check.", None),
        ("Let me double check the numbers.", None),
        ("Hmm, let me verify", None),
        ("Actually, let me re-read the question.", None),
        ("But wait, let me", None),
        ("Wait.", None),
        ("Hmm...", None),
        ("Wait, is that right?", None),
        ("Did I miss anything?", None),
        ("Yes.", None),
        ("Right!", None),
        ("Let's check again.", None),
        ("I should verify this.", None),
        ("Okay, let me look at the chart.", None),
        ("Wait, the bar for B is taller than A.", "The bar for B is taller than A."),
        ("Hmm, the dial reads 40.", "The dial reads 40."),
        ("Oh wait, the axis starts at 10.", "The axis starts at 10."),
        ("But wait, the legend swaps the colours.", "The legend swaps the colours."),
        ("Let me check: 3 + 4 = 7.", "Let me check: 3 + 4 = 7."),
        (
            "Let me count the cubes again: 6 at the bottom.",
            "Let me count the cubes again: 6 at the bottom.",
        ),
        ("Wait time at the stop is 5 minutes.", "Wait time at the stop is 5 minutes."),
        ("I can see three red bars.", "I can see three red bars."),
        ("So the answer is B.", "So the answer is B."),
        (
            "Is the red bar taller than the blue bar in the second chart?",
            "Is the red bar taller than the blue bar in the second chart?",
        ),
    ],
)
def test_drop_self_checks(step: str, kept: str | None) -> None:
    assert drop_self_checks([step]) == ([] if kept is None else [kept])


def test_self_checks_are_kept_outside_think_blocks() -> None:
    """Outside a think block the sentence rules are unchanged (the step is the model's)."""
    parsed = parse_response("The bar is 45. Let me double-check. It is the tallest.")
    assert "Let me double-check." in parsed.steps


def test_self_talk_glued_onto_a_step_by_a_continuation_line_is_dropped():
    """A cut-off block where "Let me double-check." follows "Step 2" on its own line: the
    markup path joins it to step 2; the self-check goes, the step's content stays."""
    text = "<think>Step 1: Count the cats.\nStep 2: There are 3.\nLet me double-check."
    parsed = parse_response(text)
    assert parsed.status == "thinking_markup"
    assert parsed.steps == ["Count the cats.", "There are 3."]
