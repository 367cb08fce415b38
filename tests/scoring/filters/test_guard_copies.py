"""Issue 30: the guard holds against a model that copies the reference's wording with wrong
values, entities or relations (``crystalbench.scoring.filters.guard.slots``), through the
engine as a user runs it."""

from __future__ import annotations

import pytest

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import load_benchmark
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.filters.guard import FactGuard
from crystalbench.scoring.filters.guard.slots import (
    copied_with_a_wrong_fact,
    copy_of,
    slot_conflict,
)
from crystalbench.types import Prediction

PLOTQA_01_ATTACK = [
    "The bar chart shows international tourist arrivals in 2018 for five countries.",
    "The bar for Norway shows a value of 5,680.",
    "The bar for Chile shows a value of 11,450.",
    "The bar for Kenya shows a value of 3,900.",
    "The highest bar is Chile with 11,450 arrivals.",
    "The lowest bar is Kenya with 3,900 arrivals.",
    "The difference is 11,450 - 3,900 = 7,550.",
]
"""The issue's answer to ``plotqa-01``: the reference's wording, Chile 11,450 for 12,450 and
Kenya 3,900 for 3,200, the difference recomputed. Only the intro and Norway are right."""


@pytest.mark.parametrize("encoder", ["hash", "minilm-offline"])
def test_plotqa_01_copied_with_wrong_values_earns_only_its_unchanged_steps(encoder):
    """Before: Match F1 0.824 with and without ``--guard facts`` (the vetoed copies went on
    to match other reference steps: Chile 11,450 with Chile 12,450 in another frame, with
    Peru 8,120, the difference with the reference's). Right: 2 of 7 steps against 10
    reference steps, F1 = 4 / 17 = 0.235, under both guards."""
    bench = load_benchmark("sample").subset(ids=["plotqa-01"])
    attack = [Prediction(id="plotqa-01", reasoning_steps=PLOTQA_01_ATTACK, answer="9,250")]
    scores = {}
    for guard in ("none", "facts", "facts-strict"):
        config = ScoreConfig(encoder=encoder, use_cache=False, guard=guard)
        (result,) = evaluate(bench, attack, config).items
        scores[guard] = result.f1
        if guard != "none":
            assert sorted((i, j) for i, j, _ in result.matches) == [(0, 0), (1, 2)]
            vetoed = {(v.pred, v.ref, v.scope) for v in result.vetoed or ()}
            assert vetoed == {(2, 3, "step"), (3, 4, "step"), (4, 7, "step"), (5, 8, "step"),
                              (6, 9, "step")}  # fmt: skip
    assert scores["facts"] == pytest.approx(4 / 17)
    assert scores["facts-strict"] == pytest.approx(4 / 17)
    if encoder == "minilm-offline":
        assert scores["none"] == pytest.approx(14 / 17)  # the hole: every step matched


def test_the_reference_chain_itself_is_never_blocked():
    """A chain that states the reference facts (the chain itself, or its values written
    otherwise) keeps every match under both guards."""
    bench = load_benchmark("sample")
    honest = [
        Prediction(
            id=item.id,
            reasoning_steps=[step.replace("12,450", "12450") for step in item.reference_steps],
            answer=item.answer,
        )
        for item in bench.items
    ]
    for guard in ("facts", "facts-strict"):
        run = evaluate(bench, honest, ScoreConfig(encoder="hash", use_cache=False, guard=guard))
        assert run.summary.match_f1 == 1.0, guard
        assert run.summary.n_vetoed_pairs == 0, guard


@pytest.mark.parametrize(
    ("pred", "ref", "copy"),
    [
        ("The difference is 11,450 - 3,900 = 7,550.",
         "The difference is 12,450 - 3,200 = 9,250.", True),
        ("The bar for Peru shows a value of 12,450.",
         "The bar for Chile shows a value of 12,450.", True),
        ("The lowest bar is Chile with 12,450 arrivals.",
         "The highest bar is Chile with 12,450 arrivals.", True),
        ("The bar for South Africa shows 5.", "The bar for Chile shows 5.", True),
        ("The bar for Chile shows a value of 12,450.",
         "The bar for Chile shows a value of 12,450.", False),
        ("The bar for Chile displays 11,450.", "The bar for Chile shows 12,450.", False),
        ("Row 2 contains 3 cells.", "Row 1 has 2 cells.", False),
        ("Chile's bar shows 12,450.", "The bar for Chile shows a value of 12,450.", False),
    ],
)  # fmt: skip
def test_what_counts_as_a_copy(pred, ref, copy):
    assert copy_of(pred, ref) is copy


@pytest.mark.parametrize(
    ("pred", "ref", "reason", "spans"),
    [
        ("Taking the root gives AM = sqrt(13).", "Taking the root gives AM = sqrt(12).",
         "number", ("13", "12")),
        ("So 4/2 is in lowest terms.", "So 3/2 is in lowest terms.", "number", ("4", "3")),
        ("The bar for Peru ends at 58.5%.", "The bar for Fiji ends at 58.5%.", "entity",
         ("Peru", "Fiji")),
        ("Side AC is labelled 6.", "Side AB is labelled 6.", "entity", ("AC", "AB")),
        ("The rate first falls to 8.4.", "The rate first rises to 8.4.", "relation",
         ("falls", "rises")),
        ("The right side is labelled 8.", "The left side is labelled 8.", "relation",
         ("right", "left")),
        ("The answer is (b) Open.", "The answer is (b) Closed.", "relation", ("Open", "Closed")),
        ("The lamp is blue.", "The lamp is red.", "colour", ("blue", "red")),
    ],
)  # fmt: skip
def test_the_changed_slot_says_what_is_wrong(pred, ref, reason, spans):
    conflict = slot_conflict(pred, ref)
    assert conflict is not None
    assert conflict.reason == reason
    assert (conflict.spans.pred.text, conflict.spans.ref.text) == spans
    assert pred[conflict.spans.pred.start : conflict.spans.pred.end] == spans[0]


@pytest.mark.parametrize(
    ("pred", "ref"),
    [
        ("The bar for Chile displays 8.", "The bar for Chile shows 8."),  # a synonym
        ("The value is 3.46.", "The value is 3.464."),  # another precision
        ("The value is 40.0.", "The value is 40."),
        ("The area equals 16.", "The area is 16."),
    ],
)
def test_paraphrases_in_one_slot_are_not_wrong_facts(pred, ref):
    assert slot_conflict(pred, ref) is None
    assert copied_with_a_wrong_fact([pred], [ref], FactGuard().check) == {}


def test_a_copy_that_is_another_reference_step_is_kept():
    """ "Row 2 has 3 cells." copies "Row 1 has 2 cells." with its values changed, but it is
    the chain's own second step: a right fact, not blocked."""
    refs = ["Row 1 has 2 cells.", "Row 2 has 3 cells."]
    assert copied_with_a_wrong_fact(["Row 2 has 3 cells."], refs, FactGuard().check) == {}
    assert copied_with_a_wrong_fact(["Row 2 has 3.0 cells."], refs, FactGuard().check) == {}
    found = copied_with_a_wrong_fact(["Row 2 has 4 cells."], refs, FactGuard().check)
    assert list(found) == [0]
