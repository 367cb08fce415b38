"""The drop-in against crystal-metrics 0.2.0 itself on the bundled sample's predictions.

Every public function of crystal-metrics is called on both with the same inputs (the five
sample prediction sets: structured and raw responses, blank steps, missing answers,
unparseable output) and must return the same values, or raise the same exception. Embeddings
come from the deterministic hash encoder on both sides, so the numbers must be equal to the
bit; ``test_crystal_metrics_minilm.py`` repeats the evaluator with a real model.
"""

from __future__ import annotations

import dataclasses
import io
import math
from contextlib import redirect_stdout
from typing import Any

import pandas as pd
import pytest
from cm_sample import HashModel, hash_embeddings, references, sample_sets

import crystalbench.compat.crystal_metrics as dropin

cm = pytest.importorskip("crystal_metrics")
cm_rewards = pytest.importorskip("crystal_metrics.rewards")
cm_similarity = pytest.importorskip("crystal_metrics.similarity")

SETS = sample_sets()
REFS = references()
SETTINGS = [
    {"alpha": 0.0, "order_metric": "kendall_tau"},
    {"alpha": 0.3, "order_metric": "lis"},
    {"alpha": 0.5, "order_metric": "kendall_tau"},
]


def outcome(function: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """``("value", result)`` or ``("raises", exception type name)``."""
    try:
        return "value", function(*args, **kwargs)
    except Exception as error:
        return "raises", type(error).__name__


def theirs_evaluator(threshold: float = 0.35) -> Any:
    evaluator = cm.MLLMReasoningEvaluator.__new__(cm.MLLMReasoningEvaluator)
    evaluator.similarity_threshold = threshold
    evaluator.debug_mode = False
    evaluator.model_name = "hash"
    evaluator._compute_embeddings = hash_embeddings
    return evaluator


def ours_evaluator(threshold: float = 0.35) -> dropin.MLLMReasoningEvaluator:
    return dropin.MLLMReasoningEvaluator("hash", similarity_threshold=threshold, use_cache=False)


def quiet(function: Any, *args: Any, **kwargs: Any) -> tuple[Any, str]:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        result = function(*args, **kwargs)
    return result, buffer.getvalue()


# ----------------------------------------------------------------------------- evaluator


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: f"{s['alpha']}-{s['order_metric']}")
@pytest.mark.parametrize("sample", SETS, ids=lambda s: s.name)
def test_evaluate_dataset_and_summary_equal_crystal_metrics(sample, settings):
    theirs, their_log = quiet(
        theirs_evaluator().evaluate_dataset, sample.predictions, REFS, **settings
    )
    ours, our_log = quiet(ours_evaluator().evaluate_dataset, sample.predictions, REFS, **settings)
    assert list(ours.columns) == list(theirs.columns)
    # crystal-metrics' rows come in set order (it changes between processes); ours in the
    # references' order.
    order = [idx for idx in REFS if idx in sample.predictions]
    assert list(ours["sample_idx"]) == order
    theirs = theirs.set_index("sample_idx").loc[order].reset_index()
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert ours_evaluator().generate_summary(ours) == theirs_evaluator().generate_summary(theirs)
    summary = lambda log: [line for line in log.splitlines() if not line.startswith("Warning")]  # noqa: E731
    assert summary(our_log) == summary(their_log)


@pytest.mark.parametrize("sample", SETS, ids=lambda s: s.name)
def test_evaluate_single_equals_crystal_metrics_field_by_field(sample):
    theirs, ours = theirs_evaluator(0.2), ours_evaluator(0.2)
    for idx, prediction in sample.predictions.items():
        for settings in SETTINGS:
            args = (prediction["reasoning_steps"], REFS[idx]["reference_steps"])
            expected = theirs.evaluate_single(*args, **settings)
            got = ours.evaluate_single(*args, **settings)
            assert dataclasses.asdict(got) == dataclasses.asdict(expected), (idx, settings)
            assert type(got.avg_similarity) is type(expected.avg_similarity)


# ----------------------------------------------------------------------------- answers


def test_accuracy_calculator_equals_crystal_metrics_on_every_answer():
    theirs, ours = cm.AccuracyCalculator(), dropin.AccuracyCalculator()
    blanks = 0
    for sample in SETS:
        for idx, prediction in sample.predictions.items():
            args = (prediction["question"], prediction["answer"], REFS[idx]["answer"])
            expected = dataclasses.asdict(theirs.evaluate_single(*args))
            assert dataclasses.asdict(ours.evaluate_single(*args)) == expected, args
            blanks += not prediction["answer"].strip()
        expected_dataset = theirs.evaluate_dataset(sample.predictions, REFS)
        assert ours.evaluate_dataset(sample.predictions, REFS) == expected_dataset
    assert blanks >= 2  # the sample has unanswered predictions: the blank-answer rule is covered


@pytest.mark.parametrize(
    "method",
    [
        "normalize_text",
        "extract_number",
        "is_yes_no_question",
        "normalize_yes_no",
        "extract_choice",
    ],
)
def test_answer_normalizer_equals_crystal_metrics(method):
    texts = [p["answer"] for s in SETS for p in s.predictions.values()]
    texts += [ref["answer"] for ref in REFS.values()]
    for text in texts:
        assert getattr(dropin.AnswerNormalizer, method)(text) == getattr(
            cm.AnswerNormalizer, method
        )(text), text


def test_answer_normalizer_choices_and_numbers_with_questions():
    for sample in SETS:
        for idx, prediction in sample.predictions.items():
            question, answer, gold = (
                prediction["question"],
                prediction["answer"],
                REFS[idx]["answer"],
            )
            for name in ("extract_choice", "match_answer_to_option"):
                ours = getattr(dropin.AnswerNormalizer, name)(answer, question)
                assert ours == getattr(cm.AnswerNormalizer, name)(answer, question)
            numbers = (
                cm.AnswerNormalizer.extract_number(answer),
                cm.AnswerNormalizer.extract_number(gold),
            )
            if None not in numbers:
                for tolerances in ({}, {"relative_tolerance": 0.02, "absolute_tolerance": 0.0}):
                    assert dropin.AnswerNormalizer.compare_numbers(
                        *numbers, **tolerances
                    ) == cm.AnswerNormalizer.compare_numbers(*numbers, **tolerances)


# ----------------------------------------------------------------------------- rewards


def _batch(sample: Any) -> dict[str, list[Any]]:
    return {
        "golds": [REFS[i]["answer"] for i in sample.ids],
        "problems": [REFS[i]["question"] for i in sample.ids],
        "steps": [REFS[i]["reference_steps"] for i in sample.ids],
    }


@pytest.mark.parametrize("sample", SETS, ids=lambda s: s.name)
def test_rewards_equal_crystal_metrics(sample):
    batch, completions = _batch(sample), sample.completions
    for name in ("format_reward",):
        assert getattr(dropin, name)(completions) == getattr(cm, name)(completions)
    assert dropin.accuracy_reward(
        completions, solution=batch["golds"], problem=batch["problems"]
    ) == cm.accuracy_reward(completions, solution=batch["golds"], problem=batch["problems"])
    for threshold in (0.45, 0.2):
        assert dropin.word_overlap_reasoning_reward(
            completions, reference_steps=batch["steps"], threshold=threshold
        ) == cm.word_overlap_reasoning_reward(
            completions, reference_steps=batch["steps"], threshold=threshold
        )
    for answer_weight, step_weight in ((0.6, 0.4), (0.65, 0.35)):
        kwargs = {"answer_weight": answer_weight, "step_weight": step_weight}
        assert dropin.causal_process_reward(
            completions, ground_truths=batch["golds"], reference_steps=batch["steps"], **kwargs
        ) == cm.causal_process_reward(
            completions, ground_truths=batch["golds"], reference_steps=batch["steps"], **kwargs
        )
    assert dropin.causal_process_reward(
        completions, reference_steps=batch["steps"], solution=batch["golds"]
    ) == cm.causal_process_reward(
        completions, reference_steps=batch["steps"], solution=batch["golds"]
    )
    for threshold in (0.7, 0.3):
        ours = dropin.semantic_reasoning_reward(
            completions, reference_steps=batch["steps"], threshold=threshold, model=HashModel()
        )
        theirs = cm.semantic_reasoning_reward(
            completions, reference_steps=batch["steps"], threshold=threshold, model=HashModel()
        )
        assert ours == theirs


@pytest.mark.parametrize("sample", SETS, ids=lambda s: s.name)
def test_parsing_and_answer_checks_equal_crystal_metrics(sample):
    for completion, idx in zip(sample.completions, sample.ids, strict=True):
        text = completion[0]["content"]
        assert outcome(dropin.parse_reasoning_steps, text) == outcome(
            cm.parse_reasoning_steps, text
        )
        _steps, answer = cm.parse_reasoning_steps(text)
        gold = REFS[idx]["answer"]
        assert outcome(dropin.rewards.check_answer_match, answer, gold) == outcome(
            cm_rewards.check_answer_match, answer, gold
        )
        assert dropin.rewards._extract_json_object(text) == cm_rewards._extract_json_object(text)


def test_select_reward_func_names_the_same_functions():
    for name in ("format", "accuracy", "reasoning", "reasoning_semantic", "reasoning_causal"):
        assert dropin.select_reward_func(name).__name__ == cm.select_reward_func(name).__name__
    assert outcome(dropin.select_reward_func, "nope") == outcome(cm.select_reward_func, "nope")
    with pytest.raises(ValueError, match="Available") as ours:
        dropin.select_reward_func("nope")
    with pytest.raises(ValueError) as theirs:
        cm.select_reward_func("nope")
    assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------------------- similarity


def _step_pairs() -> list[tuple[list[str], list[str]]]:
    pairs = []
    for sample in SETS:
        for idx, prediction in sample.predictions.items():
            pairs.append((prediction["reasoning_steps"], REFS[idx]["reference_steps"]))
    return pairs


def test_similarity_helpers_equal_crystal_metrics():
    for pred_steps, ref_steps in _step_pairs():
        for pred in pred_steps[:3]:
            for ref in ref_steps[:3]:
                for name in ("jaccard_similarity", "word_overlap_similarity"):
                    assert getattr(dropin, name)(pred, ref) == getattr(cm, name)(pred, ref)
        for threshold in (0.3, 0.45):
            assert dropin.best_match_f1(pred_steps, ref_steps, threshold) == cm.best_match_f1(
                pred_steps, ref_steps, threshold
            )
        for threshold in (0.7, 0.35):
            ours = dropin.semantic_match_f1(pred_steps, ref_steps, HashModel(), threshold)
            theirs = cm.semantic_match_f1(pred_steps, ref_steps, HashModel(), threshold)
            assert ours == theirs
            assert all(not isinstance(v, float) or not math.isnan(v) for v in ours)


def test_load_json_data_and_save_results_round_trip_as_crystal_metrics(tmp_path):
    sample = SETS[0]
    path = tmp_path / "preds.json"
    path.write_text(__import__("json").dumps(sample.predictions), encoding="utf-8")
    assert dropin.load_json_data(str(path)) == cm.load_json_data(str(path))
    frame, _ = quiet(ours_evaluator().evaluate_dataset, sample.predictions, REFS)
    _, ours_log = quiet(dropin.save_results, frame, str(tmp_path / "ours.csv"))
    _, theirs_log = quiet(cm.save_results, frame, str(tmp_path / "theirs.csv"))
    assert (tmp_path / "ours.csv").read_bytes() == (tmp_path / "theirs.csv").read_bytes()
    assert ours_log.replace("ours", "theirs") == theirs_log
