"""The answer rule set of issue 29: at least ten golden cases per rule, our own variants of
the shapes real models write (other lead-ins, headings, emphasis, punctuation, full-width
characters, Chinese), each checking the answer and the rule that took it."""

from __future__ import annotations

import pytest

from crystalbench.parsing import ANSWER_RULES, extract_answer, parse_response

FV = ("final value",)

CASES: list[tuple[str, str, str | None, tuple[str, ...]]] = [
    # rule, text, expected answer, declared phrases
    (
        "answer_next_line",
        "Count the bars.\nTherefore, the correct answer is:\n(B) No",
        "(B) No",
        (),
    ),
    ("answer_next_line", "Bars.\n\nSo the answer is:\n\n(A) Yes", "(A) Yes", ()),
    ("answer_next_line", "Bars.\nThus, the final answer is:\n7", "7", ()),
    ("answer_next_line", "Bars.\nHence the answer is：\nC", "C", ()),
    ("answer_next_line", "Bars.\nSo, the answer is: **\n\n(D) A red cube", "(D) A red cube", ()),
    ("answer_next_line", "Bars.\nMy answer would be:\n\n  (C)  ", "(C)", ()),
    ("answer_next_line", "Bars.\nThe most likely answer given the chart is:\n(B) 10", "(B) 10", ()),
    ("answer_next_line", "Bars.\nSo, the answer is:\n\n3 apples", "3 apples", ()),
    ("answer_next_line", "Bars.\nIn short the answer is:\nno", "no", ()),
    ("answer_next_line", "Bars.\nThus the ANSWER IS:\n\n(E) none", "(E) none", ()),
    ("answer_heading", "Bars.\n\n### Final Answer:\n**C. None of the choices provided**", "C", ()),
    ("answer_heading", "Bars.\n\n## Final Answer\n\n**B**", "B", ()),
    ("answer_heading", "Bars.\n**Answer:**\nA", "A", ()),
    ("answer_heading", "Bars.\n**Final answer:**\n\n42", "42", ()),
    ("answer_heading", "Bars.\n# Answer\n(D) blue", "(D) blue", ()),
    ("answer_heading", "Bars.\nFinal Answer:\n__7__", "7", ()),
    ("answer_heading", "Bars.\n### Answer:\n\nYes", "Yes", ()),
    ("answer_heading", "Bars.\n**Correct answer**\nB. The left one", "B", ()),
    ("answer_heading", "Bars.\n#### Final Answer\n12 cm", "12 cm", ()),
    ("answer_heading", "Bars.\nAnswer:\n\n**(A)**", "(A)", ()),
    ("prompt_phrase", "The sum is 4.\n\nFinal value: 4", "4", FV),
    ("prompt_phrase", "The sum is 0.\nThe final value is:\n\n0", "0", FV),
    ("prompt_phrase", "Sum.\n**Final value:** 2.5", "2.5", FV),
    ("prompt_phrase", "Sum.\nFinal Value = 12", "12", FV),
    ("prompt_phrase", "Sum.\nSo the final value is 1.2.", "1.2", FV),
    ("prompt_phrase", "Sum.\nFINAL VALUE： 7", "7", FV),
    ("prompt_phrase", "Sum.\nThe final value would be:\n-3", "-3", FV),
    ("prompt_phrase", "Sum.\nSo the final value is:\n\n100", "100", FV),
    ("prompt_phrase", "Sum.\nThus, the final value is: 9 cm.", "9 cm", FV),
    ("prompt_phrase", "Sum.\n- Final value: 0.8", "0.8", FV),
    ("answer_phrase_zh", "计算得到145°。\n因此，正确答案是 (C) 145°。", "(C) 145°", ()),
    ("answer_phrase_zh", "答案是：C", "C", ()),
    ("answer_phrase_zh", "所以答案为B。", "B", ()),
    ("answer_phrase_zh", "最终答案：42", "42", ()),
    ("answer_phrase_zh", "故选D。", "D", ()),
    ("answer_phrase_zh", "因此选项是A。", "A", ()),
    ("answer_phrase_zh", "答案应该是 (B)，因为它最高。", "(B)", ()),
    ("answer_phrase_zh", "所以我们选择（Ｃ）。", "（Ｃ）", ()),
    ("answer_phrase_zh", "正确答案为：\n(A) 是", "(A) 是", ()),
    ("answer_phrase_zh", "答案是 7 个。", "7 个", ()),
    ("option_phrase", "Bars.\nThe correct option is:\n(B) 10", "(B) 10", ()),
    ("option_phrase", "Bars.\nSo, the correct option is:\n\n(A)", "(A)", ()),
    ("option_phrase", "Bars. The best choice is C.", "C", ()),
    ("option_phrase", "Bars. The right option is (D).", "(D)", ()),
    ("option_phrase", "Bars. Answer choice: B", "B", ()),
    ("option_phrase", "Bars. The most appropriate option is E.", "E", ()),
    ("option_phrase", "Bars. The correct choice would be A.", "A", ()),
    ("option_phrase", "Bars. The final option is: B", "B", ()),
    ("option_phrase", "Bars. Hence the correct option: C", "C", ()),
    ("option_phrase", "Bars. The most likely choice is (A) red.", "(A) red", ()),
    ("last_line", "We count the bars.\n\n3", "3", ()),
    ("last_line", "We count the bars.\n\n(B)", "(B)", ()),
    ("last_line", "We count the bars.\n\nB", "B", ()),
    ("last_line", "We count the bars.\n\nYes", "Yes", ()),
    ("last_line", "We count the bars.\n\n(C) Octopus", "(C) Octopus", ()),
    ("last_line", "We count the bars.\n\n-2.5", "-2.5", ()),
    ("last_line", "We count the bars.\n\n45°", "45°", ()),
    ("last_line", "We count the bars.\n\n12", "12", ()),
    ("last_line", "We count.\nThen we add.\n\n$7", "$7", ()),
    ("last_line", "We count the bars.\n\n50%", "50%", ()),
    (
        "closing_number",
        "We add 4 and 2.\n\nSo, the perimeter of the square is 16 meters.",
        "16",
        (),
    ),
    ("closing_number", "Sum.\nThe area of the shape is 6 square units.", "6", ()),
    ("closing_number", "Sum.\nThe slug is about 3 inches long.", "3", ()),
    ("closing_number", "Sum.\nTherefore, the mode of the numbers is 10.", "10", ()),
    ("closing_number", "Sum.\nThe difference is -2.", "-2", ()),
    ("closing_number", "Sum.\nThe total cost is $13.8.", "13.8", ()),
    ("closing_number", "Sum.\nThe share of women is 47.7%.", "47.7%", ()),
    ("closing_number", "Sum.\nThus the angle equals 30°.", "30°", ()),
    ("closing_number", "Sum.\nThe number of objects left is 2.", "2", ()),
    ("closing_number", "Sum.\nHence the sum of the two bars is 18.27.", "18.27", ()),
    ("answer_line", "Bars.\nAnswer: B", "B", ()),
    ("answer_line", "Bars.\nFinal answer: 3", "3", ()),
    ("answer_line", "Bars.\n**Answer:** C", "C", ()),
    ("answer_line", "Bars.\nThe answer is 7", "7", ()),
    ("answer_line", "Bars.\nAnswer - yes", "yes", ()),
    ("answer_line", "Bars.\nCorrect answer: (D)", "(D)", ()),
    ("answer_line", "Bars.\nAnswer：B", "B", ()),
    ("answer_line", "Bars.\n- Answer: 12", "12", ()),
    ("answer_line", "Bars.\nMy answer is A.", "A", ()),
    ("answer_line", "Bars.\nShort answer: no", "no", ()),
    ("answer_phrase", "First, the answer is C. The bar for C is tallest.", "C", ()),
    ("answer_phrase", "Bars are equal, so the answer is B.", "B", ()),
    ("answer_phrase", "Thus the answer is 12 cm.", "12 cm", ()),
    ("answer_phrase", "I think the answer would be (A).", "(A)", ()),
    ("answer_phrase", "After counting, the final answer is 5.", "5", ()),
    ("answer_phrase", "Hence, the correct answer is D, since D is red.", "D", ()),
    ("answer_phrase", "So the answer should be yes.", "yes", ()),
    ("answer_phrase", "We see that the answer is: 4.", "4", ()),
    ("answer_phrase", "In all, the answer will be C; the rest are wrong.", "C", ()),
    ("answer_phrase", "Counting again, the answer is 3!", "3", ()),
    ("boxed", r"So x = \boxed{4}.", "4", ()),
    ("boxed", "Thus, the correct answer is: \\[\n\\boxed{B}\n\\]", "B", ()),
    ("boxed", r"$\boxed{\text{Left}}$", "Left", ()),
    ("boxed", r"The area is \boxed{\frac{1}{2}}", r"\frac{1}{2}", ()),
    ("boxed", r"\fbox{C}", "C", ()),
    ("boxed", "Sum.\n\\[ \\boxed{12} \\]", "12", ()),
    ("boxed", r"First \boxed{3}, then \boxed{5}", "5", ()),
    ("boxed", r"**\boxed{A}**", "A", ()),
    ("boxed", r"The answer is $\boxed{-2}$.", "-2", ()),
    ("boxed", r"\boxed {7}", "7", ()),
    ("answer_tag", "<think>Count.</think><answer>B</answer>", "B", ()),
    ("answer_tag", "<answer>\nB and D\n</answer>", "B and D", ()),
    ("answer_tag", "<CONCLUSION> C </CONCLUSION>", "C", ()),
    ("answer_tag", "Bars.<answer>12</answer>", "12", ()),
    ("answer_tag", "<answer>yes</answer>", "yes", ()),
    ("answer_tag", "<Answer>(A)</Answer>", "(A)", ()),
    ("answer_tag", "<SUMMARY>x</SUMMARY><CONCLUSION>D</CONCLUSION>", "D", ()),
    ("answer_tag", "<answer> 3.5 </answer>", "3.5", ()),
    ("answer_tag", "<think>hm</think>\n<answer>left</answer>", "left", ()),
    ("answer_tag", "<answer>A, C", "A, C", ()),
    ("bare_reply", "B", "B", ()),
    ("bare_reply", "(B) cat", "(B) cat", ()),
    ("bare_reply", "42", "42", ()),
    ("bare_reply", "Yes", "Yes", ()),
    ("bare_reply", "The left one.", "The left one", ()),
    ("bare_reply", "C.", "C", ()),
    ("bare_reply", "no", "no", ()),
    ("bare_reply", "3.5", "3.5", ()),
    ("bare_reply", "Red", "Red", ()),
    ("bare_reply", "A)", "A)", ()),
    ("json", '{"reasoning_steps": ["a"], "answer": "B"}', "B", ()),
    ("json", '```json\n{"reasoning_steps": ["a"], "answer": "3"}\n```', "3", ()),
    ("json", '{"steps": ["a", "b"], "final_answer": "yes"}', "yes", ()),
    ("json", 'Sure. {"reasoning_steps": ["a"], "answer": "C"} Done.', "C", ()),
    ("json", "{'reasoning_steps': ['a'], 'answer': 'D'}", "D", ()),
    ("json", '{"reasoning_steps": ["a",], "answer": "7",}', "7", ()),
    ("json", '{"reasoning_steps": ["x = 2"], "answer": "2"}', "2", ()),
    ("json", '{"reasoning": ["a"], "answer": "left"}', "left", ()),
    ("json", '{"reasoning_steps": ["a"], "answer": "(A) red"}', "(A) red", ()),
    ("json", '{"reasoning_steps": ["a", "b"], "answer": "12 cm"}', "12 cm", ()),
]


@pytest.mark.parametrize(("rule", "text", "answer", "phrases"), CASES)
def test_rule_takes_the_answer(rule: str, text: str, answer: str, phrases: tuple[str, ...]) -> None:
    assert extract_answer(text, phrases) == (answer, rule)


def test_every_rule_has_ten_cases() -> None:
    counts = {rule: sum(1 for case in CASES if case[0] == rule) for rule in ANSWER_RULES}
    counts.pop("given")  # a predictions file's answer: tests/parsing/test_parsing.py
    assert all(n >= 10 for n in counts.values()), counts


@pytest.mark.parametrize(
    "text",
    [
        "So, the perimeter of the rectangle is 6 yards and the width is 2 yards.",
        "The bars show a rising trend.",
        "The final value for the age gap is not applicable in this case.",
        "",
    ],
)
def test_no_rule_commits(text: str) -> None:
    assert extract_answer(text, FV) == (None, None)


# MARK: steps around the answers


def test_lead_in_line_stays_a_step_with_its_value() -> None:
    parsed = parse_response("The bar for B is shorter.\nTherefore, the correct answer is:\n(B) No")
    assert parsed.steps == ["The bar for B is shorter.", "Therefore, the correct answer is: (B) No"]


def test_answer_first_keeps_the_reasoning_after_it() -> None:
    parsed = parse_response("The answer is C. The bar for C is tallest. The others are shorter.")
    assert (parsed.answer, parsed.status) == ("C", "sentences")
    assert parsed.steps == ["The bar for C is tallest.", "The others are shorter."]


def test_answer_first_inside_think() -> None:
    parsed = parse_response("<think>The answer is C. The bar for C is tallest.</think>")
    assert parsed.answer == "C"
    assert parsed.steps == ["The bar for C is tallest."]


def test_heading_with_bold_value_is_no_step() -> None:
    parsed = parse_response("Count.\n\n### Final Answer:\n**C. None of the choices provided**")
    assert (parsed.steps, parsed.answer) == (["Count."], "C")


def test_declared_phrase_statement_is_no_step() -> None:
    parsed = parse_response("The sum is 4.\n\nThe final value is:\n\n0", answer_phrases=FV)
    assert (parsed.steps, parsed.answer, parsed.extraction) == (
        ["The sum is 4."],
        "0",
        "prompt_phrase",
    )


def test_last_line_value_is_no_step() -> None:
    parsed = parse_response("We count the bars.\n\n3")
    assert (parsed.steps, parsed.answer, parsed.extraction) == (
        ["We count the bars."],
        "3",
        "last_line",
    )


@pytest.mark.parametrize(
    "signoff",
    [
        "I hope this helps!",
        "Let me know if you have any other questions.",
        "Feel free to ask if anything is unclear.",
        "If you have any more questions, just ask.",
        "Hope that helps.",
        "Is there anything else I can do?",
        "Good luck!",
        "I hope this explanation helps you understand.",
        "Please let me know if you need more detail.",
        "希望这对你有帮助！",
    ],
)
def test_sign_offs_are_not_steps(signoff: str) -> None:
    parsed = parse_response(f"The red bar is 4.\n\nThe blue bar is 5.\n\n{signoff}")
    assert parsed.steps == ["The red bar is 4.", "The blue bar is 5."]


def test_code_block_is_no_step_and_never_its_lines() -> None:
    text = (
        "We compute the cost.\n\n```python\ndef cost(n):\n    total_cost = 3 * n\n"
        "    return total_cost\nprint(cost(2))\n```\n\nThe cost is 6 dollars."
    )
    parsed = parse_response(text)
    assert parsed.steps == ["We compute the cost.", "The cost is 6 dollars."]


def test_formula_block_is_one_step() -> None:
    text = "The work is:\n\n```\nW = -1/2 k x^2\nW = -2\n```\n\nSo W is negative."
    assert parse_response(text).steps == ["W = -1/2 k x^2 W = -2", "So W is negative."]


def test_code_block_in_markup_is_one_unit_or_none() -> None:
    text = "1. Read the table.\n2. Sum it:\n```python\nprint(sum(x))\n```\n3. The sum is 9."
    steps = parse_response(text).steps
    assert all("print" not in step for step in steps)
    assert steps[-1] == "The sum is 9."


def test_no_dangling_display_math_after_a_box() -> None:
    text = "The side is 5.\nTherefore, the radius of the circle is: \\[\n\\boxed{5}\n\\]"
    parsed = parse_response(text)
    assert parsed.answer == "5"
    assert all("\\[" not in step and "\\]" not in step for step in parsed.steps)
    assert parsed.steps[-1] == "Therefore, the radius of the circle is: 5"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "It holds for both Set A and Set B. Set A alternates colours.",
            ["It holds for both Set A and Set B.", "Set A alternates colours."],
        ),
        (
            "Compare option B. The bar is taller.",
            ["Compare option B.", "The bar is taller."],
        ),
        ("J. K. Rowling wrote it.", ["J. K. Rowling wrote it."]),
        ("The ratio is 3.5. Next we add.", ["The ratio is 3.5.", "Next we add."]),
        ("See Fig. 2 for e.g. the trend.", ["See Fig. 2 for e.g. the trend."]),
        ("Dr. Smith signed. He left.", ["Dr. Smith signed.", "He left."]),
    ],
)
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert parse_response(text).steps == expected


@pytest.mark.parametrize(
    ("text", "truncated"),
    [
        ("First, the area is 3 x 4 = 12. Next, the", True),
        ("We compute:\n\\[ x = \\frac{1}{", True),
        ("Code:\n```python\nx = 1", True),
        ("<think>First the bars are 3 and the next ones are 4 and 5, so", True),
        ("We add them. The sum is 3 +", True),
        ("The area is 12.", False),
        ("The area is 12. The answer is B", False),
        ("We count the bars.\n\n3", False),
        ('{"reasoning_steps": ["a", "b"], "answer": "C"}', False),
        ('{"reasoning_steps": ["a", "b", "c', True),
    ],
)
def test_truncated_flag(text: str, truncated: bool) -> None:
    assert parse_response(text).truncated is truncated
