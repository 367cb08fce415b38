"""Tests for :mod:`crystalbench.parsing`: golden model outputs, properties, adversarial input.

Golden cases live in ``tests/parsing/cases.yaml`` (hand-written expectations, in the styles
of Qwen2.5-VL, InternVL, LLaVA, GPT-4o, Gemini, DeepSeek-R1-style reasoners and MiniCPM).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crystalbench.parsing import parse_prediction, parse_response, response, split_sentences
from crystalbench.types import ParsedResponse, ParseStatus, Prediction

CASES_PATH = Path(__file__).parent / "cases.yaml"
# Every status a text can get (``structured`` needs a prediction with steps, not text).
TEXT_STATUSES = set(get_args(ParseStatus)) - {"structured"}
STEP_STATUSES = TEXT_STATUSES - {"answer_only", "empty", "unparseable"}


def _load_cases() -> list[dict[str, Any]]:
    cases = yaml.safe_load(CASES_PATH.read_text(encoding="utf-8"))
    assert isinstance(cases, list)
    for case in cases:
        # YAML must not have typed any expectation: answers like "3" or "yes" stay strings.
        assert isinstance(case["text"], str), case["id"]
        assert case["answer"] is None or isinstance(case["answer"], str), case["id"]
        assert all(isinstance(s, str) for s in case["steps"]), case["id"]
        assert case["status"] in TEXT_STATUSES, case["id"]
    return cases


CASES = _load_cases()


def test_golden_file_is_broad() -> None:
    """The golden set covers many cases, every text status and several model families."""
    assert len(CASES) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {c["status"] for c in CASES} == TEXT_STATUSES
    families = {c["family"] for c in CASES}
    for family in ("Qwen2.5-VL", "InternVL", "LLaVA", "GPT-4o", "Gemini", "DeepSeek-R1", "MiniCPM"):
        assert family in families


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_golden_case(case: dict[str, Any]) -> None:
    parsed = parse_response(case["text"])
    assert parsed.steps == case["steps"]
    assert parsed.answer == case["answer"]
    assert parsed.status == case["status"]
    assert parsed.raw == case["text"]
    if "thinking" in case:
        assert parsed.thinking == case["thinking"]


# MARK: specific behaviours


def test_none_is_empty_with_blank_raw() -> None:
    parsed = parse_response(None)
    assert parsed == ParsedResponse(steps=[], answer=None, status="empty", raw="")
    assert parsed.failed


def test_statuses_mark_failure() -> None:
    assert parse_response("%%%").failed
    assert not parse_response("B").failed


def test_think_content_is_not_scored_when_json_follows() -> None:
    text = '<think>Step 1: secret draft.\nStep 2: more.</think>{"reasoning_steps": ["Real."]}'
    parsed = parse_response(text)
    assert parsed.steps == ["Real."]
    assert parsed.thinking == "Step 1: secret draft.\nStep 2: more."
    assert all("secret" not in s for s in parsed.steps)


def test_think_then_unparseable_body_falls_back_to_thinking() -> None:
    parsed = parse_response("<think>The dial reads 40. So 40.</think>\n~~~ ***")
    assert parsed.steps == ["The dial reads 40.", "So 40."]
    assert parsed.status == "thinking_sentences"


def test_several_think_blocks_are_joined() -> None:
    parsed = parse_response("<think>a</think>The box on the left is red.<thinking>b</thinking>")
    assert parsed.thinking == "a\n\nb"
    assert parsed.steps == ["The box on the left is red."]


def test_prefers_last_complete_json_over_truncated_one() -> None:
    text = (
        '{"reasoning_steps": ["First full chain."], "answer": "A"}\n'
        '{"reasoning_steps": ["Second chain, cut'
    )
    parsed = parse_response(text)
    assert (parsed.steps, parsed.answer, parsed.status) == (["First full chain."], "A", "json")


def test_truncated_json_keeps_steps_when_nothing_complete() -> None:
    parsed = parse_response('{"reasoning_steps": ["One.", "Two.", "Thr')
    assert (parsed.steps, parsed.status) == (["One.", "Two."], "json_truncated")


def test_json_without_answer_takes_answer_from_prose() -> None:
    parsed = parse_response('{"reasoning_steps": ["The dial reads 40."]}\nFinal answer: 40')
    assert parsed.steps == ["The dial reads 40."]
    assert parsed.answer == "40"
    assert parsed.status == "json_repaired"


def test_empty_steps_list_with_answer_is_answer_only() -> None:
    parsed = parse_response('{"reasoning_steps": [], "answer": "D"}')
    assert (parsed.steps, parsed.answer, parsed.status) == ([], "D", "answer_only")


def test_json_comments_are_skipped() -> None:
    parsed = parse_response(
        '{\n  // the chain\n  "reasoning_steps": ["a b"], /* x */ "answer": "c"\n}'
    )
    assert (parsed.steps, parsed.answer, parsed.status) == (["a b"], "c", "json_repaired")


def test_unicode_escapes_and_surrogate_pairs() -> None:
    text = '{"reasoning_steps": ["caf\\u00e9 \\ud83d\\ude00"], "answer": "\\u03c0"}'
    parsed = parse_response(text)
    assert parsed.steps == ["café 😀"]
    assert parsed.answer == "π"
    # The same text with a repair needed (trailing comma) goes through the tolerant reader.
    repaired = parse_response(text.replace('"]', '",]'))
    assert repaired.steps == ["café 😀"]
    assert repaired.status == "json_repaired"


def test_lone_surrogate_in_json_is_replaced() -> None:
    parsed = parse_response('{"reasoning_steps": ["x \\ud800 y"], "answer": "z"}')
    assert parsed.steps == ["x \ufffd y"]


def test_boxed_braces_balanced_and_escaped_braces_ignored() -> None:
    parsed = parse_response("So $\\boxed{\\{1, 2\\} \\cup \\{3\\}}$ is the set.")
    assert parsed.answer == "\\{1, 2\\} \\cup \\{3\\}"


def test_answer_tag_unclosed_at_the_end() -> None:
    parsed = parse_response("The cube has 6 faces.\n<answer>6")
    assert (parsed.steps, parsed.answer) == (["The cube has 6 faces."], "6")


def test_final_answer_heading_then_blank_line() -> None:
    parsed = parse_response("1. Two cats.\n2. One dog.\n\n**Final Answer**\n\n3")
    assert (parsed.steps, parsed.answer, parsed.status) == (
        ["Two cats.", "One dog."],
        "3",
        "markup",
    )


def test_answer_line_never_becomes_a_step() -> None:
    for text in (
        "Step 1: look.\nStep 2: think.\nAnswer: B",
        "- look.\n- think.\n**Answer:** B",
        "We look. We think.\nFinal answer: B",
    ):
        parsed = parse_response(text)
        assert parsed.answer == "B", text
        assert all("B" not in step for step in parsed.steps), text


def test_list_items_keep_duplicates() -> None:
    parsed = parse_response("1. Same.\n2. Same.\n3. Same.")
    assert parsed.steps == ["Same.", "Same.", "Same."]


def test_headings_dropped_and_emphasis_stripped() -> None:
    parsed = parse_response("# Analysis\n\n- The *left* bar is __taller__.\n- Its `value` is 9.")
    assert parsed.steps == ["The left bar is taller.", "Its value is 9."]


def test_multiplication_stars_survive_cleaning() -> None:
    parsed = parse_response("1. Compute 2*3*4 = 24.\n2. Then 3 * 4 * 5 = 60.")
    assert parsed.steps == ["Compute 2*3*4 = 24.", "Then 3 * 4 * 5 = 60."]


def test_bytes_input_does_not_raise() -> None:
    parsed = parse_response(b"\xff\xfeStep 1: x.\nStep 2: y.")  # type: ignore[arg-type]
    assert parsed.status == "markup"


def test_internal_errors_become_unparseable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net: a parser bug yields a failed parse, never an exception."""

    def broken(_: str) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(response, "_parse_text", broken)
    parsed = parse_response("Step 1: fine.")
    assert (parsed.status, parsed.steps, parsed.raw) == ("unparseable", [], "Step 1: fine.")


# MARK: parse_prediction


def test_prediction_with_steps_is_structured() -> None:
    pred = Prediction(
        id="7", reasoning_steps=["  a  ", " ", "", "b", "b"], answer="C", response="x"
    )
    parsed = parse_prediction(pred)
    assert parsed == ParsedResponse(
        steps=["a", "b", "b"], answer="C", status="structured", raw="x", extraction="given"
    )


def test_prediction_with_empty_step_list_is_still_structured() -> None:
    parsed = parse_prediction(Prediction(id="7", reasoning_steps=[], answer=None))
    assert (parsed.steps, parsed.answer, parsed.status, parsed.raw) == ([], None, "structured", "")


def test_prediction_with_only_answer() -> None:
    parsed = parse_prediction(Prediction(id="7", answer="42"))
    assert (parsed.steps, parsed.answer, parsed.status, parsed.raw) == ([], "42", "answer_only", "")


def test_prediction_with_nothing_is_empty() -> None:
    assert parse_prediction(Prediction(id="7")).status == "empty"
    assert parse_prediction(Prediction(id="7", answer="  ")).status == "empty"


def test_prediction_parses_response() -> None:
    text = '{"reasoning_steps": ["The bar is red."], "answer": "red"}'
    assert parse_prediction(Prediction(id="7", response=text)) == parse_response(text)


def test_prediction_stored_answer_overrides_parsed_one() -> None:
    parsed = parse_prediction(Prediction(id="7", response="Step 1: x.\nAnswer: A", answer="B"))
    assert (parsed.steps, parsed.answer, parsed.status) == (["x."], "B", "markup")
    garbage = parse_prediction(Prediction(id="7", response="@@@", answer="B"))
    assert (garbage.steps, garbage.answer, garbage.status) == ([], "B", "answer_only")


# MARK: split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        (
            "The value is 3.5 and 1,000.25 here. Next.",
            ["The value is 3.5 and 1,000.25 here.", "Next."],
        ),
        ("See Fig. 3 and Eq. 2 for details. Done.", ["See Fig. 3 and Eq. 2 for details.", "Done."]),
        (
            "Use tools, e.g. rulers, i.e. straight. Then measure.",
            ["Use tools, e.g. rulers, i.e. straight.", "Then measure."],
        ),
        ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
        ("J. K. Rowling wrote it. It sold well.", ["J. K. Rowling wrote it.", "It sold well."]),
        ("Item No. 5 is red. Item 6 is blue.", ["Item No. 5 is red.", "Item 6 is blue."]),
        ("He lives in the U.S. Today he works.", ["He lives in the U.S. Today he works."]),
        ('She said "stop." Then she left.', ['She said "stop."', "Then she left."]),
        ("The bar (see above.) Next one.", ["The bar (see above.)", "Next one."]),
        ("Wait... let me check. Okay.", ["Wait... let me check.", "Okay."]),
        ("1. First point. 2. Second point.", ["1. First point.", "2. Second point."]),
        ("Line one\nline two", ["Line one", "line two"]),
        ("图中有三只猫。每只猫是黑色的。", ["图中有三只猫。", "每只猫是黑色的。"]),
        ("x = 3.14159.", ["x = 3.14159."]),
        ("", []),
        ("   \n  ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


# MARK: properties

FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "“",
    "”",
    ",",
    ":",
    "\\",
    "\\frac{",
    "\\boxed{",
    "\\u12",
    '"reasoning_steps"',
    '"answer"',
    "reasoning_steps",
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<reasoning>",
    "</reasoning>",
    "◁think▷",
    "```json\n",
    "```",
    "\n",
    "\n\n",
    "Step 1:",
    "**Step 2:**",
    "1. ",
    "- ",
    "* ",
    "• ",
    "### ",
    "Answer:",
    "Final answer: ",
    "Explanation: ",
    "Wait, ",
    "Let me double-check. ",
    "| ",
    " |",
    "|---|",
    "\\{",
    "\\}",
    "\\text{",
    "Dr. ",
    "The answer is ",
    "**",
    "*",
    "_",
    "e.g. ",
    "3.5",
    ". ",
    "True",
    "None",
    "<|im_end|>",
    "\x00",
    "\ud800",
    " ",
    "\t",
]
markup_soup = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=60
).map("".join)
binaryish = st.binary(max_size=400).map(lambda b: b.decode("latin-1"))
any_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=200),
    markup_soup,
    binaryish,
)


def _check_invariants(text: str, parsed: ParsedResponse) -> None:
    assert parsed.raw == text
    assert parsed.status in TEXT_STATUSES
    assert all(s and s == s.strip() for s in parsed.steps)
    assert parsed.answer is None or parsed.answer.strip()
    if parsed.status in ("empty", "unparseable"):
        assert parsed.steps == []
        assert parsed.answer is None
    if parsed.status == "answer_only":
        assert parsed.steps == []
        assert parsed.answer is not None
    if parsed.status in STEP_STATUSES:
        assert parsed.steps
    if not parsed.steps and parsed.answer is None:
        assert parsed.failed


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_property_never_raises_and_invariants_hold(text: str) -> None:
    # The unguarded parser: a bug must show up here, not hide behind the safety net.
    response._parse_text(text)
    _check_invariants(text, parse_response(text))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8), st.integers(500, 4000))
def test_property_huge_repeated_input(pieces: list[str], repeat: int) -> None:
    text = "".join(pieces) * repeat
    response._parse_text(text)
    _check_invariants(text, parse_response(text))


@settings(max_examples=50)
@given(any_text)
def test_property_deterministic(text: str) -> None:
    assert parse_response(text) == parse_response(text)


# Strings the parser must hand back unchanged: no surrounding space, no markdown characters,
# no list marker or "Step N" label at the start, no blank; letters, digits, punctuation,
# backslashes, quotes and non-ASCII letters inside.
_SAFE = re.compile(r"[A-Za-zéπ中][A-Za-z0-9éπ中 ,.;:?!()'\"=+/%\\-]{0,50}")
safe_step = st.from_regex(_SAFE, fullmatch=True).filter(
    lambda s: s == s.strip() and not re.match(r"(?i)step\s*\d", s)
)
safe_answer = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,:;()'=+/%-]{0,20}", fullmatch=True).filter(
    lambda s: s == s.strip()
)


@settings(max_examples=200)
@given(
    st.lists(safe_step, min_size=1, max_size=12),
    safe_answer,
    st.sampled_from(["plain", "indent", "fence", "prose", "ascii"]),
)
def test_property_json_round_trip(steps: list[str], answer: str, wrapping: str) -> None:
    payload = {"reasoning_steps": steps, "answer": answer}
    if wrapping == "indent":
        text = json.dumps(payload, indent=2, ensure_ascii=False)
    elif wrapping == "fence":
        text = "```json\n" + json.dumps(payload, ensure_ascii=False) + "\n```"
    elif wrapping == "prose":
        text = "Here you go:\n" + json.dumps(payload, ensure_ascii=False) + "\nThanks."
    elif wrapping == "ascii":
        text = json.dumps(payload)
    else:
        text = json.dumps(payload, ensure_ascii=False)
    parsed = parse_response(text)
    assert parsed.steps == steps
    assert parsed.answer == answer
    assert parsed.status == "json"


@settings(max_examples=100)
@given(st.lists(safe_step, min_size=1, max_size=12), safe_answer)
def test_property_python_literal_round_trip(steps: list[str], answer: str) -> None:
    """repr() of the dict (single quotes, escaped where needed) reads back the same."""
    text = repr({"reasoning_steps": steps, "answer": answer})
    parsed = parse_response(text)
    assert parsed.steps == steps
    assert parsed.answer == answer


@settings(max_examples=100)
@given(st.lists(safe_step, min_size=2, max_size=12), st.integers(0, 11))
def test_property_truncation_keeps_complete_prefix(steps: list[str], cut_in: int) -> None:
    """Cut inside step k: exactly the steps before k survive."""
    k = cut_in % len(steps)
    text = json.dumps({"reasoning_steps": steps, "answer": "A"}, ensure_ascii=False)
    marker = json.dumps(steps[k], ensure_ascii=False)
    # Locate step k as a list element; each earlier element is followed by ", ".
    prefix = '{"reasoning_steps": [' + "".join(
        json.dumps(s, ensure_ascii=False) + ", " for s in steps[:k]
    )
    assert text.startswith(prefix + marker)
    cut = prefix + marker[: max(1, len(marker) // 2)]
    parsed = parse_response(cut)
    if k == 0:
        assert parsed.steps == []
        assert parsed.failed
    else:
        assert parsed.steps == steps[:k]
        assert parsed.status == "json_truncated"
        assert parsed.answer is None


@settings(max_examples=100)
@given(st.lists(safe_step, min_size=1, max_size=10))
def test_property_step_labels_round_trip(steps: list[str]) -> None:
    """'Step N: text' lines give back the texts, in order."""
    text = "\n".join(f"Step {i}: {s}" for i, s in enumerate(steps, 1))
    parsed = parse_response(text)
    assert parsed.steps == steps
    assert parsed.status == "markup"


# MARK: adversarial input

ADVERSARIAL = {
    "open-braces": "{" * 200_000,
    "open-strings": '{"a": "' * 30_000,
    "nested-objects": '{"a":' * 40_000,
    "nested-lists": '{"reasoning_steps":' + "[" * 100_000,
    "answer-keys": '{"answer": ' * 20_000,
    "quote-soup": '{"reasoning_steps": ["' + 'a" b ' * 40_000,
    "apostrophes": "{'reasoning_steps': ['" + "it's " * 40_000,
    "latex-escapes": '{"reasoning_steps": ["' + "\\frac" * 40_000,
    "think-tags": "<think>" * 28_000,
    "close-tags": "</think>" * 25_000,
    "answer-tags": "<answer>" * 25_000,
    "boxed": "\\boxed{" * 28_000,
    "bold-unclosed": "**a " * 50_000,
    "italic-unclosed": "*a " * 66_000,
    "answer-colons": "answer: " * 25_000,
    "answer-phrases": "the answer is " * 15_000,
    "dots": ". " * 100_000,
    "step-labels": "Step 1: x " * 20_000,
    "list-lines": "1. a\n" * 40_000,
    "spaces-after-hash": "#" + " " * 200_000 + "x",
    "spaces-after-answer": "answer" + " " * 200_000 + "x",
    "spaces-after-bold": "**x**" + " " * 200_000 + "y",
    "digits-in-json": '{"answer": ' + "1" * 200_000 + "x",
    "smart-quotes": "“" * 200_000,
    "one-long-word": "a" * 200_000 + ". B",
    "reasoning-tags": "<reasoning>" * 20_000,
    "think-then-self-checks": "<think>" + "Wait, let me double-check. " * 20_000,
    "hesitations": "<think>" + "Hmm, wait, okay, " * 30_000,
    "let-me-runs": "<think>" + "but so let me " * 30_000,
    "pipes": "|" * 200_000,
    "table-rows": "| 1 | a |\n" * 40_000,
    "table-separators": "|---|---|\n" * 40_000,
    "escaped-braces-in-box": "\\boxed{" + "\\{" * 60_000,
    "line-breaks-in-box": "\\boxed{" + "\\\\" * 60_000,
    "labels": "Explanation: " * 20_000,
    "abbreviations-after-answer": "Answer: " + "Dr. " * 50_000,
    "boxed-lines": "\\boxed{\\text{x}}\n" * 30_000,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_completes(name: str) -> None:
    """Inputs built against regex backtracking and quadratic scans (no timing asserts:
    pytest-timeout catches a hang)."""
    text = ADVERSARIAL[name]
    response._parse_text(text)
    _check_invariants(text, parse_response(text))
