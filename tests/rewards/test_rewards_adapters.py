"""TRL, verl and EasyR1 adapters, called exactly the way each trainer calls them."""

from __future__ import annotations

import json
import math
import types
from collections import defaultdict

import numpy as np
import pytest

from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.judges import ScriptedJudge
from crystalbench.rewards import (
    CrystalReward,
    RewardScorer,
    completion_text,
    easyr1,
    ground_truth_json,
    item_from_ground_truth,
    items_from_columns,
    runtime,
    trl_reward_funcs,
    verl,
)
from crystalbench.types import BenchmarkItem


def dumps(steps, answer):
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


@pytest.fixture(scope="module")
def items() -> list[BenchmarkItem]:
    return list(load_benchmark("sample").items)


# --------------------------------------------------------------------------- TRL


def trl_stub(funcs):
    """The attributes GRPOTrainer._calculate_rewards reads, around our reward functions."""
    from transformers import TrainerState

    metrics: dict[str, list[float]] = defaultdict(list)
    extra: dict[str, list[object]] = defaultdict(list)
    stub = types.SimpleNamespace(
        accelerator=types.SimpleNamespace(device="cpu", is_main_process=True),
        args=types.SimpleNamespace(report_to=[]),
        state=TrainerState(),
        reward_funcs=funcs,
        reward_processing_classes=[None] * len(funcs),
        reward_func_names=[f.__name__ for f in funcs],
        _log_completion_extra=lambda column, values: extra[column].extend(values),
        _log_metric=lambda name, value: metrics[name].append(value),
        environments=None,
    )
    return stub, metrics, extra


def dataset_rows(items, per_item=2):
    rows = []
    for item in items:
        row = {
            "prompt": [{"role": "user", "content": item.question}],
            "answer": item.answer,
            "answer_type": item.answer_type,
            "options": item.options,
            "question": item.question,
            "reference_steps": item.reference_steps,
            "source": item.source,
            "id": item.id,
            "image": None,
            "difficulty": item.difficulty,
        }
        rows += [row] * per_item
    return rows


def test_trl_calculate_rewards_calls_our_functions(items):
    """Run TRL's own GRPOTrainer._calculate_rewards (the exact call site) on our functions."""
    from trl import GRPOTrainer

    funcs = trl_reward_funcs(RewardScorer(HashEncoder()), ["cpr", "cpr_answer", "cpr_reasoning"])
    stub, metrics, extra = trl_stub(funcs)
    chosen = items[:4]
    inputs = dataset_rows(chosen)
    prompts = [row["prompt"] for row in inputs]
    completions = []
    for item in chosen:
        completions.append(
            [{"role": "assistant", "content": dumps(item.reference_steps, item.answer)}]
        )
        completions.append([{"role": "assistant", "content": "I think it is " + item.answer}])
    rewards = GRPOTrainer._calculate_rewards(stub, inputs, prompts, completions, [[1]] * 8)
    assert rewards.shape == (8, 3)
    values = rewards.tolist()
    for row in range(0, 8, 2):
        assert values[row] == pytest.approx([1.0, 0.65, 0.35], abs=1e-6)
        assert values[row + 1] == [0.0, 0.0, 0.0]
    for cpr, answer_part, step_part in values:
        assert cpr == pytest.approx(answer_part + step_part, abs=1e-7)
    # Only the first function logs, every key once per batch.
    assert metrics["crystal/format"] == [0.5]
    assert metrics["crystal/answer_correct"] == [0.5]
    assert len(metrics) == 4
    errors = extra["crystal_format_error"]
    assert errors[::2] == [""] * 4
    assert all(error in ("no_json", "text_outside_json") for error in errors[1::2])


def test_trl_rows_without_data_become_nan(items):
    from trl import GRPOTrainer

    funcs = trl_reward_funcs(RewardScorer(HashEncoder()), ["format", "cpr"], log_metrics=False)
    stub, metrics, _ = trl_stub(funcs)
    inputs = [
        *dataset_rows(items[:1], per_item=1),
        {
            "prompt": "p",
            "answer": None,
            "reference_steps": None,
            "answer_type": None,
            "options": None,
            "question": None,
            "source": None,
            "id": None,
            "image": None,
            "difficulty": None,
        },
    ]
    completions = [dumps(items[0].reference_steps, items[0].answer)] * 2  # plain completions
    rewards = GRPOTrainer._calculate_rewards(stub, inputs, ["p", "p"], completions, [[1], [1]])
    assert rewards[0].tolist() == [1.0, 1.0]
    assert rewards[1, 0].item() == 1.0
    assert math.isnan(rewards[1, 1].item())
    assert metrics == {}


def test_trl_function_contract(items):
    scorer = RewardScorer(HashEncoder())
    reward = CrystalReward(scorer, "composite", name="crystal_composite_v2")
    assert reward.__name__ == "crystal_composite_v2"
    text = dumps(items[0].reference_steps, items[0].answer)
    # TRL's own accuracy_reward reads `solution`; both spellings work; unknown kwargs ignored.
    out = reward(
        prompts=["p"],
        completions=[text],
        completion_ids=[[1, 2]],
        solution=[items[0].answer],
        reference_steps=[items[0].reference_steps],
        trainer_state=object(),
        environments=[None],
        some_new_trl_kwarg=123,
    )
    assert out == [3.0]
    assert reward(prompts=[], completions=[]) == []
    with pytest.raises(InputError, match="reference_steps"):
        reward(prompts=["p"], completions=[text], answer=["10"], reference_steps=[7])


# --------------------------------------------------------------------------- items


def test_completion_text_shapes():
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "x"}]) == "x"
    assert (
        completion_text([{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]) == "x"
    )
    tool_turns = [
        {"role": "assistant", "content": "call"},
        {"role": "tool", "content": "result"},
        {"role": "assistant", "content": "final"},
    ]
    assert completion_text(tool_turns) == "final"
    assert completion_text({"role": "assistant", "content": "x"}) == "x"
    assert completion_text(None) is None
    assert completion_text([]) is None
    assert completion_text([{"role": "assistant", "content": [{"type": "image"}]}]) is None


def test_items_from_columns_accept_dataset_types():
    items = items_from_columns(
        3,
        {
            "answer": ["B", 4, None],
            "options": [np.array(["x", "y"]), None, None],
            "reference_steps": ['["Look.", "Count."]', ["One."], ["Two."]],
            "answer_type": ["multiple_choice", None, None],
            "source": ["mmvp", None, None],
            "trainer_state": "not a column",
        },
    )
    first, second, third = items
    assert first is not None
    assert first.options == ["x", "y"]
    assert first.reference_steps == ["Look.", "Count."]
    assert second is not None
    assert second.answer == "4"
    assert second.source == "unknown"
    assert third is None
    with pytest.raises(InputError, match="answer_type"):
        items_from_columns(1, {"answer": ["B"], "answer_type": ["multiple choice"]})
    with pytest.raises(InputError, match="options"):
        items_from_columns(1, {"answer": ["B"], "options": ["a, b"]})


def test_ground_truth_json_round_trips_every_sample_item(items):
    for item in items:
        back = item_from_ground_truth(ground_truth_json(item))
        assert back is not None
        fields = {"id", "source", "question", "options", "answer", "answer_type"}
        fields.add("reference_steps")
        assert back.model_dump(include=fields) == item.model_dump(include=fields)


def test_ground_truth_forms():
    plain = item_from_ground_truth("42", {"reference_steps": ["Add."], "question": "Sum?"})
    assert plain is not None
    assert (plain.answer, plain.question) == ("42", "Sum?")
    # Fields in the ground truth win over extra_info.
    both = item_from_ground_truth('{"answer": "B", "options": ["x", "y"]}', {"answer": "A"})
    assert both is not None
    assert both.answer == "B"
    # An answer that merely looks like JSON stays an answer.
    assert item_from_ground_truth("[1, 2]").answer == "[1, 2]"  # type: ignore[union-attr]
    assert item_from_ground_truth({"answer": 3.5}).answer == "3.5"  # type: ignore[union-attr]
    assert item_from_ground_truth(None) is None


# --------------------------------------------------------------------------- verl


def test_verl_compute_score_per_sample(items):
    item = items[0]
    good = dumps(item.reference_steps, item.answer)
    result = verl.compute_score("crystal", good, ground_truth_json(item), None, encoder="hash")
    assert result == {
        "score": 1.0,
        "format": 1.0,
        "answer_correct": 1.0,
        "step_f1": 1.0,
        "cpr_answer": 0.65,
        "cpr_reasoning": pytest.approx(0.35),
        "unscored": 0.0,
    }
    extra = {"reference_steps": item.reference_steps, "question": item.question}
    wrong = verl.compute_score(
        "crystal", dumps(item.reference_steps, "99"), item.answer, extra, encoder="hash"
    )
    assert wrong["score"] == pytest.approx(0.105)
    assert verl.compute_score("c", good, item.answer, extra, encoder="hash", kind="format") == {
        **verl.compute_score("c", good, item.answer, extra, encoder="hash", kind="format"),
        "score": 1.0,
    }


def test_verl_batch_matches_per_sample(items):
    chosen = items[:6]
    solutions = [dumps(i.reference_steps[:3], i.answer) for i in chosen]
    truths = [ground_truth_json(i) for i in chosen]
    batch = verl.compute_score_batch(["crystal"] * 6, solutions, truths, [None] * 6, encoder="hash")
    single = [
        verl.compute_score("crystal", s, t, None, encoder="hash")
        for s, t in zip(solutions, truths, strict=False)
    ]
    assert batch == single
    assert all(0.65 < r["score"] < 1.0 for r in batch)


def test_verl_missing_data_raises_and_judge_failure_is_flagged(items):
    with pytest.raises(InputError, match="reference_steps"):
        verl.compute_score("c", "{}", "4", None, encoder="hash")
    with pytest.raises(InputError, match="gold answer"):
        verl.compute_score("c", "{}", None, None, encoder="hash")
    item = BenchmarkItem(
        id="f", source="x", question="Colour?", answer="blue", reference_steps=["Look."]
    )
    scorer = RewardScorer(HashEncoder(), judge=ScriptedJudge(lambda q, g, p: None))
    result = runtime.score_dicts(scorer, [dumps(["Look."], "navy")], [item])[0]
    assert result["score"] == 0.0
    assert result["unscored"] == 1.0


def test_shared_adapter_pieces_live_below_the_adapters():
    """verl and EasyR1 share one body (in ``runtime``) and read signals through the protocol
    in ``types``; the old import paths keep working."""
    import ast
    import inspect

    from crystalbench.rewards import trl, types

    assert verl.score_dicts is runtime.score_dicts
    assert verl.kind_and_source is runtime.kind_and_source
    assert trl.SignalSource is types.SignalSource
    assert isinstance(RewardScorer(HashEncoder()), types.SignalSource)
    for module in (easyr1, runtime):
        imported = {
            node.module
            for node in ast.walk(ast.parse(inspect.getsource(module)))
            if isinstance(node, ast.ImportFrom)
        }
        assert not imported & {"crystalbench.rewards.verl", "crystalbench.rewards.trl"}, module


# --------------------------------------------------------------------------- EasyR1


def test_easyr1_batch_contract(items):
    assert easyr1.REWARD_TYPE == "batch"
    chosen = items[:4]
    inputs = [
        {
            "response": dumps(i.reference_steps, i.answer),
            "response_length": 10,
            "ground_truth": ground_truth_json(i),
        }
        for i in chosen
    ]
    inputs.append(
        {"response": "no", "response_length": 1, "ground_truth": ground_truth_json(chosen[0])}
    )
    out = easyr1.compute_score(inputs, encoder="hash")
    assert len(out) == 5
    assert out[0]["overall"] == 1.0
    assert out[0]["format"] == 1.0
    assert out[0]["accuracy"] == 1.0
    keys = ["overall", "format", "accuracy", "step_f1", "cpr_answer", "cpr_reasoning"]
    assert out[-1] == {**dict.fromkeys(keys, 0.0), "unscored": 0.0}
    phase1 = easyr1.compute_score(inputs[:1], encoder="hash", kind="curriculum_phase1")
    assert phase1[0]["overall"] == 2.0
    with pytest.raises(Exception, match="reward kind"):
        easyr1.compute_score(inputs[:1], encoder="hash", kind="nope")
