"""The fact guard behind every door: with ``guard="facts"`` (and ``facts-strict``) a set scored
alone (``evaluate``) and among others (``evaluate_many``, one chunk or many) gives identical
records, summaries and ``examples.jsonl`` bytes under every option set of
``test_scoring_parity.py``, with the judge matcher too, and with the guard's decisions read
back from the cache file. The world adds a set that copies every reference chain with its
numbers moved, so the guard vetoes in every configuration; ``--guard none`` runs of the same
world keep no ``vetoed`` field.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from test_scoring_parity import (
    CONFIGS,
    answer_judge,
    assert_same_run,
    judge_config,
    judge_script,
    judge_world,
    world,
)

from crystalbench.config.scoring import ScoreConfig
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.evaluation_many import evaluate_many
from crystalbench.scoring.results import EXAMPLES_FILE
from crystalbench.types import Prediction
from servers.openai_server import LoopbackServer, ServerState

NUMBER = re.compile(r"\d+")


@pytest.fixture(scope="module")
def guarded_world() -> tuple[Any, dict[str, Any]]:
    bench, sets = world()
    rng = random.Random(24)
    sets["copier"] = [
        Prediction(
            id=item.id,
            reasoning_steps=[
                NUMBER.sub(lambda m: str(int(m.group()) + rng.choice([1, 2, 3])), step)
                for step in item.reference_steps
            ],
            answer=item.answer,
        )
        for item in bench.items
    ]
    return bench, sets


def _alone_and_together(bench, sets, config, tmp_path, chunk_items):
    alone = {
        name: evaluate(bench, preds, config, judge=answer_judge(), out_dir=tmp_path / "a" / name)
        for name, preds in sets.items()
    }
    many = evaluate_many(
        bench, sets, config, judge=answer_judge(), out_dir=tmp_path / "m", chunk_items=chunk_items
    )
    assert many.ok
    for name in sets:
        assert_same_run(alone[name], many.runs[name], name)
        written = (tmp_path / "m" / name / EXAMPLES_FILE).read_bytes()
        assert written == (tmp_path / "a" / name / EXAMPLES_FILE).read_bytes(), name
    return many


@pytest.mark.parametrize("chunk_items", [8192, 7])
@pytest.mark.parametrize("options", list(CONFIGS.values()), ids=list(CONFIGS))
def test_every_option_with_the_guard_scores_the_same_alone_and_among_sets(
    guarded_world, options, chunk_items, tmp_path
):
    bench, sets = guarded_world
    config = ScoreConfig(encoder="hash", use_cache=False, guard="facts", **options)
    many = _alone_and_together(bench, sets, config, tmp_path, chunk_items)
    copier = many.runs["copier"].summary
    assert copier.n_vetoed_pairs > 0  # the guard took effect in this configuration
    assert copier.config["guard"] == "facts"
    assert all(item.vetoed is not None for item in many.runs["copier"].items)


@pytest.mark.parametrize("options", ["paper", "compat-both-kendall", "low-threshold-alpha-0"])
def test_the_strict_guard_and_the_decision_cache_score_the_same(
    guarded_world, options, tmp_path, cache_dir
):
    """facts-strict, with the decisions written to (and read back from) the cache file."""
    bench, sets = guarded_world
    config = ScoreConfig(
        encoder="hash", cache_dir=str(cache_dir), guard="facts-strict", **CONFIGS[options]
    )
    many = _alone_and_together(bench, sets, config, tmp_path, 7)
    vetoes = [v for item in many.runs["copier"].items for v in item.vetoed or ()]
    assert any(v.scope == "step" for v in vetoes)
    again = evaluate(bench, sets["copier"], config)  # every decision from the cache now
    assert [i.model_dump() for i in again.items] == [
        i.model_dump() for i in many.runs["copier"].items
    ]


def test_without_a_guard_records_carry_no_vetoes(guarded_world, tmp_path):
    bench, sets = guarded_world
    run = evaluate(bench, sets["copier"], ScoreConfig(encoder="hash", use_cache=False))
    assert all(item.vetoed is None for item in run.items)
    assert run.summary.vetoed_by_reason == {}
    assert (run.summary.n_vetoed_pairs, run.summary.n_vetoed_items) == (0, 0)
    run.write(tmp_path)
    assert '"vetoed"' not in (tmp_path / EXAMPLES_FILE).read_text()


@pytest.mark.parametrize("chunk_items", [8192, 1])
def test_the_judge_matcher_with_the_guard_scores_the_same(cache_dir, chunk_items):
    """The guard reads the pairs the judge named (after it, in the filter order)."""
    bench, sets = judge_world()
    sets["wrong-value"] = [
        Prediction(id="alt", reasoning_steps=["B is the highest bar.", "B reads 45."]),
        Prediction(id="plain", reasoning_steps=["The area is pi times 9."]),
    ]
    script = judge_script()
    for reference, named in [
        ("The chart has four bars.", []),
        ("The tallest bar is B.", [1]),
        ("B reads 40.", [2]),  # the judge names "B reads 45.": the guard says no
        ("Bar B is the highest.", []),
        ("Its value is 40.", []),
    ]:
        prompt = f"Reference step:\n{reference}\n\nPredicted steps:\n1. B is the highest bar.\n"
        script["answers"][prompt] = json.dumps({"matches": named, "reason": "scripted"})
    state = ServerState()
    state.configure(script)
    with LoopbackServer(state) as server:
        config = judge_config(server, concurrency=4).model_copy(update={"guard": "facts"})
        alone = {name: evaluate(bench, preds, config) for name, preds in sets.items()}
        many = evaluate_many(bench, sets, config, chunk_items=chunk_items)
    assert many.ok
    for name in sets:
        assert_same_run(alone[name], many.runs[name], name)
    follows = many.runs["follows-the-alternative"].items[0]
    assert (follows.ref_chain, follows.f1, follows.vetoed) == (1, 1.0, [])
    wrong = many.runs["wrong-value"].items[0]
    assert wrong.ref_chain == 0
    assert [(i, j) for i, j, _ in wrong.matches] == [(0, 1)]  # "45" kept from "40"
    assert [(v.pred, v.ref, v.reason) for v in wrong.vetoed or ()] == [(1, 2, "number")]
    assert (
        many.runs["wrong-value"].summary.config["matcher_identity"]["failed_reference_steps"] == 0
    )
