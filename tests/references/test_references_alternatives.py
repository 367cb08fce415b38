"""Alternative reference chains: whole candidate chains kept beside the consensus
(``alternatives``), picked by distinct cluster sets, scored as best-of by ``crystal score``."""

from __future__ import annotations

import dataclasses

from references_helpers import FAST, config_data
from scripted_models import ScriptedModels, chain_for

from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.references import (
    CandidateChain,
    build_consensus,
    build_references,
    load_references_config,
)
from crystalbench.references.alternatives import pick_alternatives
from crystalbench.references.engine import LocalEngine
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG


def build(server, item_set, out, **extra):
    config = load_references_config(overrides=config_data(server, item_set, **extra))
    retry = dataclasses.replace(FAST, max_attempts=config.max_attempts)
    return build_references(config, out, engine=LocalEngine(config, retry=retry))


def chains(*specs: tuple[str, tuple[str, ...]]) -> list[CandidateChain]:
    return [CandidateChain(model, i, steps, key=model) for i, (model, steps) in enumerate(specs)]


def test_the_most_distinct_path_comes_first_and_duplicates_are_never_kept():
    candidates = chains(
        ("a", ("the bar for May is 40", "the bar for June is 55", "June minus May is 15")),
        ("b", ("the bar for May is 40", "the bar for June is 55", "June minus May is 15")),
        ("c", ("June is three ticks above May", "June minus May is 15")),
    )
    consensus = build_consensus(candidates, HashEncoder(), theta=0.99)
    steps = {c.key: c.steps for c in candidates}
    picked = pick_alternatives(consensus, steps, 5)
    assert [a.key for a in picked] == ["c", "a"]  # b repeats a's clusters: never kept
    assert picked[0].steps == candidates[2].steps
    assert picked[0].similarity < picked[1].similarity
    assert pick_alternatives(consensus, steps, 0) == []
    # chains that cover every cluster are the consensus itself: nothing to add
    same = build_consensus(candidates[:2], HashEncoder(), theta=0.99)
    assert pick_alternatives(same, {k: steps[k] for k in ("a", "b")}, 3) == []


def test_a_build_keeps_alternatives_and_scoring_takes_the_best_chain(
    server, item_set, sample_items, tmp_path
):
    server.state.script = ScriptedModels(sample_items)
    plain = build(server, item_set, tmp_path / "plain", limit=4)
    server.state.script = ScriptedModels(sample_items)
    result = build(server, item_set, tmp_path / "alt", limit=4, alternatives=2)
    assert result.accepted == plain.accepted
    assert result.summary["config"]["alternatives"] == 2
    bench = load_benchmark(tmp_path / "alt")
    reference = {item.id: item for item in sample_items}
    for item, before in zip(bench.items, load_benchmark(tmp_path / "plain").items, strict=True):
        assert item.reference_steps == before.reference_steps  # the primary chain is unchanged
        assert not before.reference_chains
        kept = item.metadata["reference_alternatives"]
        assert 1 <= len(item.reference_chains) == len(kept) <= 2
        # gen-c leaves the last step out: the most distinct path, picked first
        assert kept[0]["model"] == "gen-c"
        assert item.reference_chains[0] == chain_for(
            "gen-c", list(reference[item.id].reference_steps)
        )
        assert all(chain != item.reference_steps for chain in item.reference_chains)

    # a model that follows gen-c's path scores against that chain
    predictions = [
        Prediction(id=item.id, reasoning_steps=item.reference_chains[0], answer=item.answer)
        for item in bench.items
    ]
    config = HASH_CONFIG
    with_alternatives = evaluate(bench, predictions, config)
    primary_only = evaluate(load_benchmark(tmp_path / "plain"), predictions, config)
    assert {r.ref_chain for r in with_alternatives.items} == {1}
    assert with_alternatives.summary.match_f1 > primary_only.summary.match_f1
    assert with_alternatives.summary.match_f1 == 1.0

    # the setting changes only the outputs: a finished build rerun with it sends nothing
    sent = len(server.state.log)
    build(server, item_set, tmp_path / "plain", limit=4, alternatives=2)
    assert len(server.state.log) == sent
    rebuilt = load_benchmark(tmp_path / "plain").items
    assert [i.reference_chains for i in rebuilt] == [i.reference_chains for i in bench.items]
    assert [i.metadata["reference_alternatives"] for i in rebuilt] == [
        i.metadata["reference_alternatives"] for i in bench.items
    ]
