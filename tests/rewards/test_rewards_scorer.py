"""The batched scorer: same numbers as one-at-a-time scoring, one encoder pass, caches."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from crystalbench.data import load_benchmark
from crystalbench.encoders import EmbeddingStore, HashEncoder
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.judges import ScriptedJudge
from crystalbench.rewards import (
    REWARD_KINDS,
    RewardScorer,
    RewardWeights,
    score_completion,
)
from crystalbench.types import BenchmarkItem
from fakes import CountingEncoder


def dumps(steps: Sequence[str], answer: str) -> str:
    return json.dumps({"reasoning_steps": list(steps), "answer": answer})


@pytest.fixture(scope="module")
def items() -> list[BenchmarkItem]:
    return list(load_benchmark("sample").items)


def mixed_batch(items: list[BenchmarkItem]) -> tuple[list[object], list[BenchmarkItem | None]]:
    completions: list[object] = []
    rows: list[BenchmarkItem | None] = []
    for index, item in enumerate(items):
        refs = item.reference_steps
        completions += [
            dumps(refs, item.answer),
            dumps([*refs[::2], "An unrelated remark about colours."], "Z"),
            [{"role": "assistant", "content": dumps(refs[1:3], item.answer)}],
            "no json at all" if index % 2 else dumps([item.question], item.answer),
        ]
        rows += [item] * 4
    completions.append(dumps(["Step."], "x"))
    rows.append(None)
    return completions, rows


def test_batched_equals_one_at_a_time(items):
    completions, rows = mixed_batch(items)
    scorer = RewardScorer(HashEncoder())
    for kind in REWARD_KINDS:
        batched = scorer.breakdowns(completions, rows, kind)
        for completion, item, got in zip(completions, rows, batched, strict=True):
            text = completion if isinstance(completion, str) else completion[0]["content"]  # type: ignore[index]
            single = score_completion(text, item, HashEncoder(), kind=kind)
            assert got == single


def test_one_encoder_call_per_batch_and_references_cached(items):
    encoder = CountingEncoder(HashEncoder())
    scorer = RewardScorer(encoder)
    completions, rows = mixed_batch(items[:10])
    scorer.signals(completions, rows)
    assert len(encoder.calls) == 1
    first = encoder.calls[0]
    assert len(first) == len(set(first))  # each distinct text embedded once
    refs = {s for item in items[:10] for s in item.reference_steps}
    assert refs <= set(first)
    # A new batch on the same items: its new steps only, no reference step again.
    fresh = [dumps([f"A fresh step number {i}."], item.answer) for i, item in enumerate(items[:10])]
    scorer.signals(fresh, items[:10])
    assert len(encoder.calls) == 2
    assert set(encoder.calls[1]) == {f"A fresh step number {i}." for i in range(10)}
    assert scorer.stats.reference_memory_hits >= len(refs)


def test_memo_serves_repeated_calls_without_encoding(items):
    encoder = CountingEncoder(HashEncoder())
    scorer = RewardScorer(encoder)
    completions, rows = mixed_batch(items[:5])
    first = scorer.breakdowns(completions, rows, "cpr_answer")
    second = scorer.breakdowns(completions, rows, "cpr_reasoning")
    assert len(encoder.calls) == 1
    assert scorer.stats.memo_hits == len(completions)
    for a, b in zip(first, second, strict=True):
        whole = scorer.breakdowns([], [], "cpr")  # empty batches are fine
        assert whole == []
        assert a.step_f1 == b.step_f1


def test_memo_never_confuses_items_with_the_same_id(items):
    item = items[0]
    other = item.model_copy(update={"answer": "20"})  # same id, different gold
    scorer = RewardScorer(HashEncoder())
    text = dumps(item.reference_steps, item.answer)
    right, wrong = scorer.rewards([text, text], [item, other])
    assert right == 1.0
    assert wrong is not None
    assert wrong < 0.2


def test_warm_then_only_completion_steps_are_encoded(items):
    encoder = CountingEncoder(HashEncoder())
    scorer = RewardScorer(encoder)
    assert scorer.warm(items) == len({s for i in items for s in i.reference_steps})
    assert scorer.warm(items) == 0
    calls = len(encoder.calls)
    scorer.signals([dumps(["Something new."], items[0].answer)], [items[0]])
    assert encoder.calls[calls:] == [["Something new."]]


def test_on_disk_reference_store_is_shared_across_scorers(tmp_path, items):
    path = tmp_path / "embeddings.sqlite"
    first = RewardScorer(CountingEncoder(HashEncoder()), store=path)
    batch = [dumps(["A step."], item.answer) for item in items[:3]]
    first.signals(batch, items[:3])
    encoder = CountingEncoder(HashEncoder())
    second = RewardScorer(encoder, store=path)
    second.signals(batch, items[:3])
    refs = {s for i in items[:3] for s in i.reference_steps}
    assert second.stats.reference_store_hits == len(refs)
    assert encoder.calls == [["A step."]]
    assert EmbeddingStore(path).stats()[HashEncoder().identity] == len(refs)


def test_unscored_rows_are_none(items):
    scorer = RewardScorer(HashEncoder())
    no_refs = items[0].model_copy(update={"reference_steps": []})
    text = dumps(["Look."], items[0].answer)
    assert scorer.rewards([text, text], [None, no_refs], "cpr") == [None, None]
    assert scorer.rewards([text, text], [None, no_refs], "format") == [1.0, 1.0]
    assert scorer.rewards([text], [no_refs], "answer") == [1.0]


def test_judge_failure_leaves_free_form_rows_unscored():
    item = BenchmarkItem(
        id="f", source="x", question="What colour?", answer="blue", reference_steps=["Look."]
    )
    judge = ScriptedJudge(lambda question, gold, predicted: None)
    scorer = RewardScorer(HashEncoder(), judge=judge)
    breakdown = scorer.breakdowns([dumps(["Look."], "navy")], [item])[0]
    assert breakdown.answer_correct is None
    assert breakdown.total is None
    assert scorer.rewards([dumps(["Look."], "navy")], [item], "format") == [1.0]


def test_our_bad_data_raises(items):
    scorer = RewardScorer(HashEncoder())
    bad = items[0].model_copy(update={"answer": "not a number", "answer_type": "numeric"})
    with pytest.raises(InputError):
        scorer.signals([dumps(["x"], "1")], [bad])
    with pytest.raises(ValueError, match="completions for"):
        scorer.signals(["a", "b"], [items[0]])
    with pytest.raises(UnknownNameError):
        RewardScorer(HashEncoder(), kind="cpr+")  # type: ignore[arg-type]


def test_configured_kind_and_weights(items):
    item = items[0]
    weights = RewardWeights(cpr_answer=0.5, cpr_step=0.5, cpr_wrong_discount=0.0)
    scorer = RewardScorer(HashEncoder(), kind="cpr", weights=weights)
    text = dumps(item.reference_steps, item.answer)
    wrong = dumps(item.reference_steps, "12345")
    assert [b.total for b in scorer([text, wrong], [item, item])] == [1.0, 0.0]
    record = scorer.config_record()
    assert record["weights"]["cpr_answer"] == 0.5
    assert record["tau"] == 0.35
    assert record["encoder_identity"] == HashEncoder().identity
