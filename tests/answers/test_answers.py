"""Typed answer correctness: golden cases per source, known exploits, compat parity, judges."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from crystalbench.answers import (
    compat_question,
    infer_answer_type,
    item_options,
    parse_embedded_options,
    resolve_choice,
    score_answer,
    score_answers,
)
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.judges import JudgeVerdict, ScriptedJudge
from crystalbench.types import BenchmarkItem

COMPAT = "crystal-metrics-0.2"
CASES_FILE = Path(__file__).parent / "cases.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line]


def make_item(answer, question="Question?", options=(), answer_type=None, source="test", id="1"):
    return BenchmarkItem(
        id=id,
        source=source,
        question=question,
        options=list(options),
        answer=answer,
        answer_type=answer_type,
        reference_steps=["a step"],
    )


def case_item(case):
    return make_item(
        case["answer"],
        question=case["question"],
        options=case.get("options", ()),
        answer_type=case.get("answer_type"),
        source=case["source"],
        id=case["id"],
    )


# ----------------------------------------------------------------------------- the fixture


def test_fixture_is_large_and_covers_every_type_and_source():
    assert len(CASES) >= 80
    assert len({case["id"] for case in CASES}) == len(CASES)
    assert {case["type"] for case in CASES} == {
        "multiple_choice",
        "numeric",
        "yes_no",
        "free_form",
    }
    assert {"mathvision", "scienceqa", "realworldqa", "mmvp", "plotqa"} <= {
        case["source"] for case in CASES
    }
    assert {True, False} == {case["correct"] for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_golden_case_paper_mode(case):
    item = case_item(case)
    assert infer_answer_type(item) == case["type"]
    verdict = score_answer(case["predicted"], item)
    assert verdict.answer_type == case["type"]
    assert verdict.correct is case["correct"], verdict
    if "rule" in case:
        assert verdict.rule == case["rule"], verdict


COMPAT_CASES = [case for case in CASES if "compat" in case]


@pytest.mark.parametrize("case", COMPAT_CASES, ids=[case["id"] for case in COMPAT_CASES])
def test_golden_case_compat_mode(case):
    verdict = score_answer(case["predicted"], case_item(case), compat=COMPAT)
    assert verdict.correct is case["compat"], verdict
    assert verdict.rule.startswith("compat_")


# ----------------------------------------------------------------------------- known exploits


def test_incorrect_is_not_yes():
    """Attack: answer "incorrect" to a yes question; a substring test finds "correct" in it."""
    item = make_item("yes", "Is the light on?")
    assert score_answer("incorrect", item).correct is False
    assert score_answer("incorrect", make_item("no", "Is the light on?")).correct is True
    assert score_answer("incorrect", item, compat=COMPAT).correct is True  # the 0.2.0 bug


def test_know_is_not_no():
    """Attack: "I know" / "I don't know" on a no question; a substring test finds "no"."""
    item = make_item("no", "Is the cup full?")
    for answer in ("I know", "I don't know", "unknown", "I do not know."):
        assert score_answer(answer, item).correct is False, answer
        assert score_answer(answer, item, compat=COMPAT).correct is True, answer


def test_answer_is_blue_is_not_b():
    """Attack: an answer word starting with the gold letter ("answer is blue" for gold B)."""
    item = make_item("B", "Which colour?", options=["red", "green", "blue"])
    verdict = score_answer("answer is blue", item)
    assert (verdict.correct, verdict.predicted) == (False, "C")
    assert score_answer("answer is blue", item, compat=COMPAT).correct is True


def test_empty_answers_are_never_correct():
    """Attack: say nothing; a substring fallback finds "" inside every gold.

    Paper mode: never correct. Compat mode reproduces crystal-metrics 0.2.0, which credits a
    blank answer against every gold but a yes/no one, under its own rule (``compat_blank``)
    so that it can be counted; no answer at all (``None``) stays missing."""
    items = [
        make_item("stop sign", "What sign?"),
        make_item("B", "Which?", options=["cat", "dog"]),
        make_item("12", "How many?"),
        make_item("yes", "Is it?"),
    ]
    for item in items:
        for answer in (None, "", "   ", "\n"):
            verdict = score_answer(answer, item)
            assert (verdict.correct, verdict.rule) == (False, "missing")
            compat = score_answer(answer, item, compat=COMPAT)
            if answer is None or item.answer == "yes":
                assert (compat.correct, compat.rule) == (False, "missing")
            else:  # the 0.2.0 bug, reproduced and named
                assert (compat.correct, compat.rule) == (True, "compat_blank")
        for answer in (".", "...", "**", "?!"):  # not blank, but says nothing
            assert score_answer(answer, item).correct is False, (answer, item.answer)
    assert score_answer(".", items[0], compat=COMPAT).correct is True  # the 0.2.0 bug


def test_first_number_trap():
    """Attack: a year (or any earlier number) before the real answer hides it, or stands in."""
    item = make_item("45", "What is the value?")
    assert score_answer("In 2019 the value was 45", item).correct is True
    assert score_answer("In 2019 the value was 45", item, compat=COMPAT).correct is False
    wrong = make_item("2019", "Which year?")
    assert score_answer("The value in 2019 was 45", wrong).correct is False
    assert score_answer("The value in 2019 was 45", wrong, compat=COMPAT).correct is True


def test_no_extra_numeric_leniency():
    """Attack: rely on crystal-metrics' extra 15 % band for short answers (8 for 7)."""
    item = make_item("7", "How many?")
    assert score_answer("8", item).correct is False
    assert score_answer("8", item, compat=COMPAT).correct is True


def test_substring_of_gold_is_not_correct():
    """Attack: answer one word of a multi-word gold; the substring fallback accepts it."""
    item = make_item("red umbrella", "What is he holding?")
    assert score_answer("red", item).correct is False
    assert score_answer("umbrella", item, compat=COMPAT).correct is True


def test_hedging_over_all_letters_is_wrong():
    """Attack: list every option letter and let a lenient extractor pick the right one."""
    item = make_item("C", "How many?", options=["1", "2", "3", "4"])
    for answer in ("A, B, C, D", "A or B or C or D", "(A) (B) (C) (D)", "The answer is C or D"):
        verdict = score_answer(answer, item)
        assert (verdict.correct, verdict.rule) == (False, "mc_ambiguous"), answer


def test_hedging_over_all_option_texts_is_wrong():
    """Attack: name every option text in one answer."""
    item = make_item("B", "Which side?", options=["left", "right"])
    assert score_answer("It could be left or right.", item).rule == "mc_ambiguous"


# ----------------------------------------------------------------------------- types and options


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "Which way?\nA. Left\nB. Right\nC. Straight\nPlease answer directly.",
            ["Left", "Right", "Straight"],
        ),
        ("Pick one:\nA) cat\nB) dog", ["cat", "dog"]),
        ("Pick one:\n(A) cat\n(B) dog", ["cat", "dog"]),
        ("Pick one:\na. cat\nb. dog", ["cat", "dog"]),
        ("Is the door open or closed? (a) Open (b) Closed", ["Open", "Closed"]),
        ("Choices: (A) 1 (B) 2 (C) 3", ["1", "2", "3"]),
        ("Which? (a) red, or (b) blue", ["red", "blue"]),
        ("How many cars are there?", []),
        ("Only one option:\nA. Left", []),
        ("B. Left\nC. Right", []),  # letters must start at A
        ("A. Left\nC. Right", []),  # and run without gaps
        ("In figure (a) and (b), find x.", []),  # markers with empty texts
        ("Compute f(a) + f(b).", []),  # function calls are not markers
    ],
)
def test_parse_embedded_options(question, options):
    assert parse_embedded_options(question) == options


def test_item_options_prefers_the_given_list():
    item = make_item("A", "Which?\nA. x\nB. y", options=["cat", "dog"])
    assert item_options(item) == ["cat", "dog"]


@pytest.mark.parametrize(
    ("answer", "question", "options", "given", "expected"),
    [
        ("B", "Q?", ["x", "y"], None, "multiple_choice"),
        ("12", "Q?", ["12", "13"], None, "multiple_choice"),
        ("yes", "Q?", ["yes", "no"], None, "multiple_choice"),
        ("A", "Which?\nA. Left\nB. Right", [], None, "multiple_choice"),
        ("Left", "Which?\nA. Left\nB. Right", [], None, "multiple_choice"),
        ("5", "In figures (a) up and (b) down, count.", [], None, "numeric"),
        ("1,234", "Q?", [], None, "numeric"),
        (r"\frac{3}{2}", "Q?", [], None, "numeric"),
        (r"2\sqrt{3}", "Q?", [], None, "numeric"),
        ("45^\\circ", "Q?", [], None, "numeric"),
        ("3:2", "Q?", [], None, "numeric"),
        ("12 cm", "Q?", [], None, "numeric"),
        ("Yes", "Q?", [], None, "yes_no"),
        ("false", "Q?", [], None, "yes_no"),
        ("Route 66", "Q?", [], None, "free_form"),
        ("(2, 3)", "Q?", [], None, "free_form"),
        ("e", "Q?", [], None, "free_form"),
        ("a red umbrella", "Q?", [], None, "free_form"),
        ("12", "Q?", [], "free_form", "free_form"),
        ("yes", "Q?", [], "free_form", "free_form"),
    ],
)
def test_infer_answer_type(answer, question, options, given, expected):
    assert infer_answer_type(make_item(answer, question, options, given)) == expected


def test_resolve_choice_reports_how():
    options = ["Left", "Right"]
    assert resolve_choice("B", options) == (1, "letter", "letter, whole")
    assert resolve_choice("Right.", options) == (1, "text", "option text")
    assert resolve_choice("(a) Right", options).option == 0  # the marker wins over the text
    assert resolve_choice("nothing", options).how == "unresolved"


def test_compat_question_appends_options_like_the_authors():
    item = make_item("A", "Which pet?", options=["cat", "dog"])
    assert compat_question(item) == "Which pet?\n\nA) cat\nB) dog"
    assert compat_question(make_item("3", "How many?")) == "How many?"


# ----------------------------------------------------------------------------- bad data


@pytest.mark.parametrize(
    "item",
    [
        make_item("F", "Which?", options=["a", "b", "c"]),
        make_item("elephant", "Which?", options=["cat", "dog"]),
        make_item("maybe", "Is it?", answer_type="yes_no"),
        make_item("many", "How many?", answer_type="numeric"),
        make_item("  ", "Which?"),
    ],
    ids=["mc-letter-out-of-range", "mc-text-not-an-option", "yes-no", "numeric", "empty"],
)
def test_unreadable_gold_raises(item):
    with pytest.raises(InputError) as raised:
        score_answer("anything", item)
    assert "answer" in str(raised.value)


def test_unknown_compat_mode_raises_with_suggestion():
    with pytest.raises(UnknownNameError, match=r"crystal-metrics-0\.2"):
        score_answer("x", make_item("x"), compat="crystal-metrics-0.3")


def test_compat_none_string_is_paper_mode():
    item = make_item("yes")
    assert score_answer("incorrect", item, compat="none").correct is False


# ----------------------------------------------------------------------------- judge


def test_judge_decides_free_form_mismatch():
    judge = ScriptedJudge({("a red umbrella", "an umbrella that is red"): True})
    item = make_item("a red umbrella", "What is he holding?")
    verdict = score_answer("an umbrella that is red", item, judge=judge)
    assert (verdict.correct, verdict.rule, verdict.detail) == (True, "judge", "scripted")
    assert judge.calls == [("What is he holding?", "a red umbrella", "an umbrella that is red")]


def test_judge_not_called_on_exact_match_or_other_types():
    judge = ScriptedJudge(lambda question, gold, predicted: False)
    assert score_answer("A red umbrella.", make_item("red umbrella"), judge=judge).rule == "exact"
    assert score_answer("13", make_item("12"), judge=judge).rule == "numeric"
    assert score_answer("No", make_item("yes"), judge=judge).rule == "yes_no"
    item = make_item("B", options=["x", "y"])
    assert score_answer("nothing", item, judge=judge).rule == "mc_unresolved"
    assert judge.calls == []


@pytest.mark.parametrize(
    "script",
    [
        {},  # triple missing from the table
        {("gold text", "other text"): None},
        {("gold text", "other text"): JudgeVerdict(correct=None, error="timeout")},
    ],
)
def test_judge_failure_is_unscored(script):
    verdict = score_answer("other text", make_item("gold text"), judge=ScriptedJudge(script))
    assert (verdict.correct, verdict.rule) == (None, "judge_failed")
    assert verdict.detail is not None
    assert verdict.detail.startswith("judge failed")


def test_raising_judge_is_unscored_not_fatal():
    class Broken:
        identity = None

        def judge(self, question, gold, predicted):
            raise RuntimeError("boom")

    verdict = score_answer("other text", make_item("gold text"), judge=Broken())  # type: ignore[arg-type]
    assert (verdict.correct, verdict.rule) == (None, "judge_failed")
    assert "boom" in (verdict.detail or "")


def test_without_judge_a_mismatch_is_wrong():
    verdict = score_answer("other text", make_item("gold text"))
    assert (verdict.correct, verdict.rule) == (False, "exact")


def test_compat_judge_failure_falls_back_to_substring():
    item = make_item("red umbrella", "What?")
    verdict = score_answer("a big red umbrella", item, compat=COMPAT, judge=ScriptedJudge({}))
    assert (verdict.correct, verdict.rule) == (True, "compat_substring")
    ok = ScriptedJudge({("red umbrella", "a big red umbrella"): False})
    verdict = score_answer("a big red umbrella", item, compat=COMPAT, judge=ok)
    assert (verdict.correct, verdict.rule) == (False, "judge")


def test_score_answers_batches_judge_calls_in_order():
    items = [
        make_item("a red umbrella", "Q0", id="0"),
        make_item("12", "Q1", id="1"),
        make_item("a blue kite", "Q2", id="2"),
        make_item("a green hat", "Q3", id="3"),
    ]
    answers = ["an umbrella, red", "12", "a kite, blue", None]
    seen: list[str] = []
    lock = threading.Lock()

    def decide(question, gold, predicted):
        with lock:
            seen.append(question)
        return question == "Q0"

    verdicts = score_answers(answers, items, judge=ScriptedJudge(decide), max_workers=4)
    assert [(v.correct, v.rule) for v in verdicts] == [
        (True, "judge"),
        (True, "numeric"),
        (False, "judge"),
        (False, "missing"),
    ]
    assert sorted(seen) == ["Q0", "Q2"]


def test_score_answers_matches_score_answer_on_fixture():
    items = [case_item(case) for case in CASES]
    answers = [case["predicted"] for case in CASES]
    batch = score_answers(answers, items)
    single = [score_answer(answer, item) for answer, item in zip(answers, items, strict=True)]
    assert batch == single


def test_score_answers_length_mismatch_raises():
    with pytest.raises(ValueError, match="2 answers for 1 items"):
        score_answers(["a", "b"], [make_item("a")])


def test_symbolic_scoring_in_worker_threads():
    """Scoring runs in thread pools; math-verify's signal timeout must not break it there."""
    item = make_item(r"2\sqrt{3}")
    results: list[bool | None] = []
    workers = [
        threading.Thread(target=lambda: results.append(score_answer("3.46", item).correct))
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == [True, True, True]


# ----------------------------------------------------------------------------- compat parity

# Extra cases beyond the fixture that exercise each crystal-metrics heuristic.
PARITY_EXTRA = [
    ("Which?", ["cat", "dog"], "B", "b)"),
    ("Which?", ["cat", "dog"], "B", "(b) dog"),
    ("Which?", ["cat", "dog"], "B", "choice b"),
    ("Which?", ["cat", "dog"], "B", "the answer is dog"),
    ("Which?", ["big cat", "dog"], "A", "big cats"),
    ("Which?", ["the tall building", "dog"], "A", "tall building"),
    ("Which?", [], "blue", "answer is blue"),
    ("How many?", [], "7", "7.5"),
    ("How many?", [], "7", "about 7"),
    ("How many?", [], "0.12", "0.1"),
    ("How many?", [], "100", "114"),
    ("How many?", [], "100", "116"),
    ("How many?", [], "3.14159", "3.14"),
    ("How many?", [], "0", "0.009"),
    ("How many?", [], "2.5", "2.55"),
    ("How many?", [], "1,234", "1234"),
    ("How many?", [], "-4", "The result is -4"),
    ("Is it?", [], "Yes", "affirmative"),
    ("Is it?", [], "no", "negative"),
    ("Is it?", [], "no", "nope, not at all"),
    ("Is it?", [], "True", "yes indeed"),
    ("Is it?", [], "yes.", "No."),
    ("What?", [], "golden retriever", "retriever"),
    ("What?", [], "Paris", "Lyon"),
    ("What?", [], "the Eiffel Tower", "eiffel tower"),
    ("What?", [], "the Eiffel Tower", "It is the Eiffel Tower in Paris"),
    ("What?\nA) left side\nB) right side", [], "A", "left side"),
    ("What?\nA) left side\nB) right side", [], "B", "the left side"),
    ("Pick (a) one (b) two", [], "(a)", "(a)"),
    ("Pick (a) one (b) two", [], "(a)", "one"),
]


def _parity_rows():
    rows = []
    for case in CASES:
        question = case["question"]
        if case.get("options"):
            lines = "\n".join(f"{chr(65 + i)}) {text}" for i, text in enumerate(case["options"]))
            question = f"{question}\n\n{lines}"
        rows.append((case["id"], case_item(case), question, case["predicted"]))
    for index, (question, options, gold, predicted) in enumerate(PARITY_EXTRA):
        item = make_item(gold, question, options, answer_type="free_form")
        full = question
        if options:
            full += "\n\n" + "\n".join(f"{chr(65 + i)}) {t}" for i, t in enumerate(options))
        rows.append((f"extra-{index}", item, full, predicted))
    return rows


PARITY_ROWS = _parity_rows()


@pytest.fixture(scope="module")
def crystal_accuracy():
    """crystal-metrics 0.2.0's pure answer logic (imports no model)."""
    module = pytest.importorskip("crystal_metrics.accuracy")
    version = pytest.importorskip("crystal_metrics").__version__
    if version != "0.2.0":
        pytest.skip(f"parity is defined against crystal-metrics 0.2.0, found {version}")
    return module


def test_parity_covers_enough_cases():
    assert len(PARITY_ROWS) >= 60


@pytest.mark.parametrize(
    ("case_id", "item", "question", "predicted"), PARITY_ROWS, ids=[r[0] for r in PARITY_ROWS]
)
def test_compat_matches_crystal_metrics(case_id, item, question, predicted, crystal_accuracy):
    """Compat mode gives the verdict crystal-metrics 0.2.0 gives (LLM grader off)."""
    reference = crystal_accuracy.AccuracyCalculator(use_llm_grader=False)
    expected = reference.evaluate_single(question, predicted, item.answer)
    ours = score_answer(predicted, item, compat=COMPAT)
    assert ours.correct is expected.is_correct, (ours, expected)
    assert ours.predicted == expected.normalized_prediction
    assert ours.gold == expected.normalized_ground_truth
