"""The fact guard inside the scoring engine (``ScoreConfig(guard=...)``).

The engine's guard reads only the pairs the greedy walk reaches; these tests hold it to the
plain definition: matching over the similarity matrix with *every* conflicting pair at or
above tau removed (:meth:`FactGuard.veto_mask`), and for ``facts-strict`` every row whose
closest reference step conflicts (:func:`veto_whole_steps`), under the paper's and
crystal-metrics' rules.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import load_benchmark
from crystalbench.encoders import EmbeddingStore, HashEncoder
from crystalbench.errors import UnknownNameError
from crystalbench.scoring import ChainContext, ItemScorer, ScoringEngine
from crystalbench.scoring.compat import match_rules
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.filters.guard import (
    FactGuard,
    veto_copied_steps,
    veto_whole_steps,
    without_vetoed,
)
from crystalbench.scoring.filters.guard.candidates import GuardFilter
from crystalbench.scoring.filters.guard.facts import step_facts
from crystalbench.scoring.filters.guard.memo import (
    UNPACKED,
    DecisionMemo,
    guard_namespace,
    pack_conflict,
    unpack_conflict,
)
from crystalbench.scoring.filters.guard.slots import slot_conflict
from crystalbench.scoring.matching import MatchRules, cosine_matrix, greedy_pairs
from crystalbench.types import ConflictSpans, Prediction, TextSpan
from fakes import make_item

NUMBER = re.compile(r"\d+")


def copier(bench, seed: int = 7) -> list[Prediction]:
    """Reference chains with numbers moved, steps in place, plus one honest step each."""
    rng = random.Random(seed)
    return [
        Prediction(
            id=item.id,
            reasoning_steps=[
                NUMBER.sub(lambda m: str(int(m.group()) + rng.choice([1, 2])), step)
                for step in item.reference_steps
            ]
            + item.reference_steps[:1],
            answer=item.answer,
        )
        for item in bench.items
    ]


@given(
    st.lists(st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4), min_size=1, max_size=4),
    st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3))),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_a_veto_in_the_walk_equals_removing_the_pair(rows, vetoed, compat):
    """``greedy_pairs(S, veto=...)`` equals the walk over S with the vetoed pairs removed,
    and asks only about pairs it would accept."""
    sim = np.asarray(rows, dtype=np.float32)
    rules = match_rules("crystal-metrics-0.2" if compat else "none", tau=0.1)
    asked = []

    def veto(i: int, j: int, _: float) -> bool:
        asked.append((i, j))
        return (i, j) in vetoed

    mask = np.zeros(sim.shape, dtype=bool)
    for i, j in vetoed:
        if i < sim.shape[0]:
            mask[i, j] = True
    assert greedy_pairs(sim, rules, veto=veto) == greedy_pairs(without_vetoed(sim, mask), rules)
    assert len(asked) == len(set(asked))
    assert len(asked) <= int((sim >= np.float32(0.1)).sum())


@pytest.mark.parametrize("compat", ["none", "crystal-metrics-0.2"])
@pytest.mark.parametrize("guard", ["facts", "facts-strict"])
def test_the_engine_guard_equals_masking_every_conflicting_pair(compat, guard):
    bench = load_benchmark("sample")
    preds = {p.id: p for p in copier(bench)}
    config = ScoreConfig(encoder="hash", use_cache=False, compat=compat, guard=guard)
    run = evaluate(bench, list(preds.values()), config)
    rules = match_rules(compat)
    encoder = HashEncoder()
    n_vetoed = 0
    for item, result in zip(bench.items, run.items, strict=True):
        pred, ref = result.pred_steps, result.ref_steps
        sim = cosine_matrix(encoder.encode(pred), encoder.encode(ref), rules)
        item_guard = FactGuard(item.options)
        mask, _ = item_guard.veto_mask(pred, ref, sim, rules.tau, strict=rules.strict)
        pair_mask = mask
        if guard == "facts-strict":
            mask = veto_whole_steps(
                mask, sim, rules.tau, strict=rules.strict, ties_high_first=rules.ties_high_first
            )
        mask = veto_copied_steps(mask, pred, ref, item_guard)  # both scopes
        expected = greedy_pairs(without_vetoed(sim, mask), rules)
        assert result.matches == expected, item.id
        n_vetoed += len(result.vetoed or ())
        for veto in result.vetoed or ():  # every recorded veto is a real conflict
            pred_step, ref_step = pred[veto.pred], ref[veto.ref]
            assert pair_mask[veto.pred, veto.ref] or (
                veto.scope == "step"
                and (item_guard.check(pred_step, ref_step) or slot_conflict(pred_step, ref_step))
            )
            assert pred[veto.pred][veto.spans.pred.start : veto.spans.pred.end] == (
                veto.spans.pred.text
            )
            assert ref[veto.ref][veto.spans.ref.start : veto.spans.ref.end] == veto.spans.ref.text
    assert n_vetoed == run.summary.n_vetoed_pairs > 20
    assert sum(run.summary.vetoed_by_reason.values()) == n_vetoed
    plain = evaluate(bench, list(preds.values()), config.model_copy(update={"guard": "none"}))
    assert run.summary.match_f1 < plain.summary.match_f1


def test_strict_blocks_the_step_and_records_the_conflict_with_its_closest_reference():
    """A restatement (not a copy) that contradicts its closest reference step is vetoed
    against it and matches nothing under ``facts-strict``, although a neighbouring reference
    step (about the whole grid) takes it under ``facts``."""
    refs = ["The first row has 2 shaded squares.", "The grid has 16 squares in all."]
    pred = ["The first row holds 4 shaded squares."]
    item = make_item("rows", refs, answer="3")
    sim = np.array([[0.93, 0.91]], dtype=np.float32)
    scorer = ItemScorer(MatchRules())
    for kind, matches in [("facts", [(0, 1)]), ("facts-strict", [])]:
        context = ChainContext(item, MatchRules())
        out = GuardFilter(kind).candidates(sim, pred, refs, context)
        assert [(i, j) for i, j, _ in scorer.matches(out)] == matches, kind
        (veto,) = context.vetoes or []
        assert (veto.pred, veto.ref, veto.reason) == (0, 0, "number")
        assert veto.scope == ("step" if kind == "facts-strict" else "pair")


def test_the_guard_reads_the_items_options():
    item = make_item(
        "food", ["The producer is the grass."], options=["fox", "grass", "frog"], answer="B"
    )
    sim = np.array([[0.9]], dtype=np.float32)
    with_options = ChainContext(item, MatchRules())
    GuardFilter("facts").candidates(sim, ["The producer is the fox."], item.reference_steps,
                                    with_options)  # fmt: skip
    assert [v.reason for v in with_options.vetoes or []] == ["option"]
    bare = ChainContext(None, MatchRules())
    GuardFilter("facts").candidates(sim, ["The producer is the fox."], item.reference_steps, bare)
    assert bare.vetoes == []


def test_decisions_are_remembered_in_the_cache_file(tmp_path):
    """A re-score reads no step again: every decision comes from the cache file, under the
    guard's rule version; the records are the same."""
    bench = load_benchmark("sample")
    preds = copier(bench)
    config = ScoreConfig(encoder="hash", cache_dir=str(tmp_path), guard="facts-strict")
    first = ScoringEngine(config)
    runs = first.run(bench, [_set(bench, preds)])
    (guard,) = first.candidate_filters()  # a fresh filter: what a new run would use
    assert isinstance(guard, GuardFilter)
    store = EmbeddingStore.default(tmp_path)
    remembered = store.get_values(guard_namespace())
    assert len(remembered) > 100
    assert 0.0 in remembered.values()
    assert any(value > 0 for value in remembered.values())  # packed conflicts
    second = ScoringEngine(config)
    scorer = second.item_scorer()
    again = list(second.iter_scored(bench.items, [{p.id: p for p in preds}], [scorer]))
    (filter_,) = scorer.filters
    assert isinstance(filter_, GuardFilter)
    assert filter_.pairs_checked > 100
    assert filter_.pairs_read == 0
    # Not one step read: every veto, its reason and spans, rebuilt from the cache file.
    step_facts.cache_clear()
    third = ScoringEngine(config)
    again = list(third.iter_scored(bench.items, [{p.id: p for p in preds}], [third.item_scorer()]))
    assert step_facts.cache_info().currsize == 0
    assert [r.model_dump() for _, r in again] == [r.model_dump() for r in runs[0].items]
    assert [r.model_dump() for _, r in again] == [r.model_dump() for r in runs[0].items]
    assert "guard" in first.timings
    assert runs[0].summary.config["guard_rules"] == guard_namespace()


def test_a_memo_without_a_store_stays_bounded(monkeypatch):
    import crystalbench.scoring.filters.guard.memo as memo_module

    monkeypatch.setattr(memo_module, "_MAX_FRESH", 3)
    memo = DecisionMemo()
    for k in range(10):
        memo.put(str(k), float(k % 2))
    assert memo.get("9") == 1.0
    assert memo.get("0") is None  # forgotten
    memo.flush()  # no store: nothing to write, nothing raised


def test_unknown_guards_fail_with_the_valid_names():
    with pytest.raises(UnknownNameError, match="facts-strict"):
        GuardFilter("none")
    with pytest.raises(ValueError, match="unknown guard 'fact'"):
        ScoreConfig(guard="fact")


def _set(bench, preds):
    from crystalbench.scoring import ScoredSet

    return ScoredSet.checked("copier", bench, preds)


def test_a_conflict_packs_into_one_number_and_back():
    guard = FactGuard()
    pairs = [
        ("The angle ABC is 50 degrees.", "The angle ABC is 40 degrees."),
        ("The door is not open.", "The door is open."),
        ("The car is blue.", "The car is red."),
    ]
    for pred, ref in pairs:
        conflict = guard.check(pred, ref)
        assert conflict is not None
        value = pack_conflict(conflict.reason, conflict.spans)
        assert value > 0
        assert value == float(int(value))  # exact in a float
        assert unpack_conflict(value, pred, ref) == (conflict.reason, conflict.spans)
    far = ConflictSpans(
        pred=TextSpan(start=5000, end=5002, text="50"), ref=TextSpan(start=17, end=19, text="40")
    )
    assert pack_conflict("number", far) == UNPACKED  # a step that long is read again instead


@pytest.mark.parametrize("guard", ["facts", "facts-strict"])
def test_a_copy_with_a_wrong_value_is_blocked_for_the_whole_item(guard):
    """Issue 30: a copy of "The first row has 2 shaded squares." with 4 for 2 matches nothing
    under either scope, not the neighbouring row's step; recorded as one step veto against
    the step it copies."""
    refs = ["The first row has 2 shaded squares.", "The second row has 1 shaded square."]
    pred = ["The first row has 4 shaded squares."]
    item = make_item("rows", refs, answer="3")
    sim = np.array([[0.93, 0.91]], dtype=np.float32)
    context = ChainContext(item, MatchRules())
    out = GuardFilter(guard).candidates(sim, pred, refs, context)
    assert ItemScorer(MatchRules()).matches(out) == []
    (veto,) = context.vetoes or []
    assert (veto.pred, veto.ref, veto.reason, veto.scope) == (0, 0, "number", "step")
    assert (veto.spans.pred.text, veto.spans.ref.text) == ("4", "2")
