"""The one answer extractor (issue 12, point 2) and the answer rules of issue 11, point 3:
``\\boxed{}`` with escaped braces, parser/normalize parity, abbreviations after "Answer:",
boxed lines, step labels and markdown tables."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from crystalbench import normalize
from crystalbench.parsing import answer, parse_response
from crystalbench.parsing.answer import boxed_spans, cut_answer, extract_boxed, tidy_answer

PARSING_DIR = Path(answer.__file__).parent


# MARK: boxes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\boxed{a\}b}", r"a\}b"),
        (r"\boxed{\{1, 2\} \cup \{3\}}", r"\{1, 2\} \cup \{3\}"),
        (r"\boxed{\left\{ x \right.}", r"\left\{ x \right."),
        (r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"),
        (r"\boxed{x \\}", r"x \\"),
        (r"\boxed{\frac{\sqrt{3}}{4}}", r"\frac{\sqrt{3}}{4}"),
        (r"\boxed{3} or \boxed{4}", "4"),
        (r"\boxed{\boxed{7}}", "7"),
        (r"\fbox{A}", "A"),
        (r"\boxed {12}", "12"),
        (r'"answer": "\\boxed{5}"', "5"),
        (r"\boxed{unclosed", None),
        (r"\boxed{2} then \boxed{unclosed", "2"),
        ("no box", None),
    ],
)
def test_extract_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected
    assert normalize.extract_boxed(text) == expected  # one implementation, two names


def test_escaped_brace_does_not_close_a_box_through_both_paths() -> None:
    text = r"The set difference is \boxed{a\}b}."
    assert parse_response(text).answer == r"a\}b"
    assert normalize.extract_boxed(text) == r"a\}b"
    assert normalize.committed_segment(text) == r"a\}b"


def test_boxed_spans_offsets() -> None:
    text = r"x \boxed{1} y \boxed{\text{B}}"
    spans = boxed_spans(text)
    assert [span.start for span in spans] == [2, 14]
    assert [span.content(text) for span in spans] == ["1", r"\text{B}"]


def test_normalize_delegates_to_the_one_extractor() -> None:
    assert normalize.extract_boxed is answer.extract_boxed
    assert normalize.answer_tail is answer.answer_tail
    from crystalbench.normalize import text

    assert text._ANSWER_LEAD_IN is answer.ANSWER_LEAD_IN


# MARK: parity between the parser and normalize

# Realistic final answers: the parser's answer and normalize's committed, cleaned segment must
# be the same string.
PARITY_CASES = [
    r"\boxed{a\}b}",
    r"So the area is $\boxed{\frac{\sqrt{3}}{4}}$.",
    r"Therefore $\boxed{2\sqrt{3}}$",
    r"The answer is $\boxed{\text{Left}}$.",
    r"\boxed{\{1, 2\}}",
    "The answer is 42.",
    "The answer is 7 apples.",
    "The answer is **black**.",
    "Final answer: B",
    "**Final answer:** 3:30",
    "Answer: Dr. Smith",
    "Answer: St. Louis",
    "Answer: 12.5 cm",
    "The final answer is $\\frac{1}{2}$.",
    "So the answer is (C).",
    "The answer is yes.",
    "Answer: São Paulo",
    "The answer is -3/4.",
    "Answer: 1,234",
    r"x + 3 = 7, so x = \boxed{4}",
]


@pytest.mark.parametrize("text", PARITY_CASES)
def test_parser_and_normalize_agree(text: str) -> None:
    parsed = parse_response(text).answer
    committed = normalize.clean_answer(normalize.committed_segment(text))
    assert parsed is not None
    assert parsed == committed


# MARK: answers after "Answer:"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Dr. Smith", "Dr. Smith"),
        ("Dr. Smith. He wrote the letter.", "Dr. Smith"),
        ("St. Petersburg, because the spire is visible.", "St. Petersburg"),
        ("No. 5 is the red one.", "No. 5 is the red one"),
        ("No. The bar is shorter.", "No"),
        ("the U.S. Then more", "the U.S. Then more"),
        ("B. The red car is first", "B"),
        ("3, because 1 + 2 = 3", "3"),
        ("approx. 45 cm", "approx. 45 cm"),
    ],
)
def test_cut_answer(value: str, expected: str) -> None:
    assert cut_answer(value) == expected


def test_answer_line_with_abbreviation() -> None:
    for text in ("Answer: Dr. Smith", "The signature reads Dr. Smith.\nFinal answer: Dr. Smith"):
        assert parse_response(text).answer == "Dr. Smith", text
    assert parse_response("The answer is Mt. Everest.").answer == "Mt. Everest"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r"\boxed{\text{Left}}", "Left"),
        (r"$\boxed{\textbf{B}}$", "B"),
        (r"\mathrm{cm}", "cm"),
        (r"5\,\mathrm{cm}", r"5\,\mathrm{cm}"),
        (r"\text{a} + \text{b}", r"\text{a} + \text{b}"),
    ],
)
def test_tidy_answer_unwraps_a_whole_text_command(raw: str, expected: str) -> None:
    assert tidy_answer(raw, trim_period=True) == expected


# MARK: boxed lines, labels, tables


def test_boxed_line_is_the_answer_and_never_glued_to_a_step() -> None:
    texts = [
        "Step 1: The arrow points to the left.\nStep 2: So the car turns\n\\boxed{\\text{Left}}",
        "1. The arrow points to the left.\n2. So the car turns\n   $\\boxed{\\text{Left}}$",
        "The arrow points to the left. So the car turns\n**$\\boxed{\\text{Left}}$**",
        "The arrow points to the left. So the car turns. $\\boxed{\\text{Left}}$",
        "- The arrow points to the left.\n- So the car turns. \\boxed{\\text{Left}}",
    ]
    for text in texts:
        parsed = parse_response(text)
        assert parsed.answer == "Left", text
        assert all("boxed" not in step and "Left" not in step for step in parsed.steps), text
        assert parsed.steps[0] == "The arrow points to the left.", text


def test_reply_that_is_only_a_box() -> None:
    parsed = parse_response("$\\boxed{42}$")
    assert (parsed.steps, parsed.answer, parsed.status) == ([], "42", "answer_only")


def test_box_inside_a_sentence_stays_a_step() -> None:
    parsed = parse_response("Its area is $\\boxed{6}$ square units. The end.")
    assert parsed.steps[0] == "Its area is $\\boxed{6}$ square units."


@pytest.mark.parametrize(
    "label", ["Explanation:", "**Explanation:**", "Reasoning:", "Solution:", "Rationale:"]
)
def test_step_labels_are_not_part_of_a_step(label: str) -> None:
    parsed = parse_response(f"Answer: C\n{label} The third bar is the tallest.")
    assert parsed.steps == ["The third bar is the tallest."]
    assert parsed.answer == "C"
    listed = parse_response(f"- {label} The bar is red.\n- {label} It is the tallest.")
    assert listed.steps == ["The bar is red.", "It is the tallest."]


def test_words_that_only_look_like_labels_stay() -> None:
    parsed = parse_response("The solution is to compare the bars. Reasoning helps here.")
    assert parsed.steps == ["The solution is to compare the bars.", "Reasoning helps here."]


def test_markdown_table_rows_are_steps() -> None:
    text = (
        "| Step | Observation | Conclusion |\n"
        "| --- | --- | --- |\n"
        "| 1 | The red bar is 40 | It is the tallest |\n"
        "| 2 | The blue bar is 25 | It is second |\n"
        "| 3 | 40 - 25 = 15 | The gap is 15 |\n"
        "\n"
        "Answer: 15"
    )
    parsed = parse_response(text)
    assert parsed.steps == [
        "The red bar is 40. It is the tallest",
        "The blue bar is 25. It is second",
        "40 - 25 = 15. The gap is 15",
    ]
    assert parsed.answer == "15"
    assert parsed.status == "markup"
    assert all("|" not in step and "---" not in step for step in parsed.steps)
    assert all("Observation" not in step for step in parsed.steps)


def test_single_row_table_in_prose() -> None:
    text = "The chart has two bars.\n\n| Bar | Value |\n|---|---|\n| Red | 40 |\n\nSo red wins."
    parsed = parse_response(text)
    assert parsed.steps == ["The chart has two bars.", "Red: 40", "So red wins."]
    assert parsed.status == "sentences"


def test_escaped_pipe_stays_in_a_cell() -> None:
    parsed = parse_response("| 1 | Use \\| x \\| = 3 |\n| 2 | So x is 3 or -3 |")
    assert parsed.steps == ["Use \\| x \\| = 3", "So x is 3 or -3"]


def test_a_line_with_pipes_that_is_not_a_table() -> None:
    parsed = parse_response("|x| = 3 means x is 3 or -3.")
    assert parsed.steps == ["|x| = 3 means x is 3 or -3."]


# MARK: layout of the parsing package


def _imports(path: Path) -> tuple[set[str], list[str]]:
    """(modules imported at module level, imports found inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module)
        elif isinstance(node, ast.Import):
            top.update(alias.name for alias in node.names)
    inner = [
        ast.unparse(node)
        for func in ast.walk(tree)
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(func)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    return top, inner


def test_parsing_package_layout() -> None:
    """No module over 600 lines, no import inside a function, no import of the layers above
    (normalize, answers, scoring), and no cycle among the package's modules."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PARSING_DIR.glob("*.py")):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 600, path.name
        top, inner = _imports(path)
        assert inner == [], path.name
        for module in top:
            assert not module.startswith(
                (
                    "crystalbench.normalize",
                    "crystalbench.answers",
                    "crystalbench.scoring.evaluation",
                )
            ), (path.name, module)
        name = "crystalbench.parsing" + ("" if path.stem == "__init__" else "." + path.stem)
        graph[name] = {m for m in top if m.startswith("crystalbench.parsing.")}
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        assert node not in visiting, " -> ".join((*trail, node))
        if node in done:
            return
        visiting.add(node)
        for child in graph.get(node, ()):
            visit(child, (*trail, node))
        visiting.discard(node)
        done.add(node)

    for node in graph:
        visit(node, ())
