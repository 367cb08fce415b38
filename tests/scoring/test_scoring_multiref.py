"""Several reference chains per item: the best chain by Match F1 wins (golden cases)."""

from __future__ import annotations

import json

import pytest

from crystalbench.encoders import OneHotEncoder
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.matching import score_chain
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, CountingEncoder, make_benchmark, make_item

# Orthogonal unit vectors: a step matches only its own copy (cosine 1), never another step.
TABLE = {name: [1.0 if k == j else 0.0 for j in range(8)] for k, name in enumerate("abcdefgh")}


def _encoder() -> CountingEncoder:
    return CountingEncoder(OneHotEncoder(TABLE))


def _run(items, preds, config=HASH_CONFIG, encoder=None):
    return evaluate(make_benchmark(items), preds, config, encoder=encoder or _encoder())


def test_the_alternative_chain_that_fits_better_wins():
    """Prediction a, b follows the alternative a, b; the primary c, d, e shares nothing."""
    item = make_item(1, ["c", "d", "e"], reference_chains=[["a", "b"]])
    run = _run([item], [Prediction(id="1", reasoning_steps=["a", "b"], answer="3")])
    result = run.items[0]
    assert (result.ref_chain, result.n_ref_chains) == (1, 2)
    assert (result.f1, result.ordered_f1, result.n_ref) == (1.0, 1.0, 2)
    assert result.ref_steps == ["a", "b"]  # matches point into the winning chain
    assert [m[:2] for m in result.matches] == [(0, 0), (1, 1)]
    assert (run.summary.n_multi_chain, run.summary.n_alt_chain_won) == (1, 1)
    assert run.summary.by_source["plotqa"].n_alt_chain_won == 1


def test_a_partial_match_picks_the_chain_with_the_higher_f1():
    """Primary a, b, c, d: 1 of 4 matched (F1 0.4); alternative a, b, f: 2 of 3 (F1 2/3)."""
    item = make_item(1, ["a", "g", "h", "d"], reference_chains=[["a", "b", "f"]])
    pred = Prediction(id="1", reasoning_steps=["a", "b"], answer="3")
    result = _run([item], [pred]).items[0]
    assert result.ref_chain == 1
    assert result.precision == 1.0
    assert result.recall == pytest.approx(2 / 3)
    assert result.f1 == pytest.approx(0.8)


def test_equal_f1_is_decided_by_ordered_f1():
    """Both chains hold a and b (F1 1); only the alternative has them in the predicted order."""
    item = make_item(1, ["b", "a"], reference_chains=[["a", "b"]])
    result = _run([item], [Prediction(id="1", reasoning_steps=["a", "b"])]).items[0]
    assert result.ref_chain == 1
    assert (result.f1, result.lis, result.ordered_f1) == (1.0, 1.0, 1.0)


def test_a_full_tie_keeps_the_lower_index():
    item = make_item(1, ["a", "b"], reference_chains=[["c", "d"], ["a", "b"], ["a", "b"]])
    result = _run([item], [Prediction(id="1", reasoning_steps=["a", "b"])]).items[0]
    assert (result.ref_chain, result.n_ref_chains) == (0, 4)
    tied = make_item(1, ["c"], reference_chains=[["a", "b"], ["b", "a"], ["a", "b"]])
    assert _run([tied], [Prediction(id="1", reasoning_steps=["a", "b"])]).items[0].ref_chain == 1


def test_one_chain_gives_the_single_reference_numbers_exactly():
    """Without alternatives (or with a copy of the primary) nothing moves."""
    steps = ["a", "b", "c", "d"]
    pred = Prediction(id="1", reasoning_steps=["b", "a", "e"], answer="3")
    single = _run([make_item(1, steps)], [pred]).items[0]
    copy = _run([make_item(1, steps, reference_chains=[list(steps)])], [pred]).items[0]
    sim = OneHotEncoder(TABLE).encode(["b", "a", "e"]) @ OneHotEncoder(TABLE).encode(steps).T
    expected = score_chain(sim)
    assert single.chain == expected
    assert copy.chain == expected
    assert (single.ref_chain, single.n_ref_chains, copy.ref_chain) == (0, 1, 0)


def test_one_chain_leaves_the_summary_and_examples_as_before(tmp_path):
    items = [make_item(1, ["a", "b"]), make_item(2, ["c", "d"], answer="4")]
    preds = [Prediction(id="1", reasoning_steps=["a"], answer="3")]
    run = _run(items, preds)
    assert (run.summary.n_multi_chain, run.summary.n_alt_chain_won) == (0, 0)
    run.write(tmp_path)
    line = json.loads((tmp_path / "examples.jsonl").read_text().splitlines()[0])
    assert (line["ref_chain"], line["n_ref_chains"]) == (0, 1)
    # The new keys come last: the older keys keep their order.
    opt_in = ("answer_extraction", "truncated", "vetoed", "verdicts", "ref_precedence")
    assert [k for k in line if k not in opt_in][-4:] == [
        "ref_chain",
        "n_ref_chains",
        "pair",
        "pair_size",
    ]


def test_compat_mode_scores_the_primary_chain_only():
    item = make_item(1, ["c", "d"], reference_chains=[["a", "b"], ["e"]])
    pred = Prediction(id="1", reasoning_steps=["a", "b"])
    compat = HASH_CONFIG.model_copy(update={"compat": "crystal-metrics-0.2"})
    encoder = _encoder()
    result = _run([item], [pred], compat, encoder).items[0]
    assert (result.ref_chain, result.n_ref_chains, result.f1) == (0, 1, 0.0)
    assert sorted(encoder.seen) == ["a", "b", "c", "d"]  # the alternatives are not encoded


def test_every_distinct_step_of_every_chain_is_encoded_once():
    items = [
        make_item(1, ["a", "b"], reference_chains=[["a", "c"], ["b", "c", "d"]]),
        make_item(2, ["c", "e"], reference_chains=[["e", "f"]]),
    ]
    preds = [
        Prediction(id="1", reasoning_steps=["a", "d"]),
        Prediction(id="2", reasoning_steps=["g", "e"]),
    ]
    encoder = _encoder()
    _run(items, preds, encoder=encoder)
    assert sorted(encoder.seen) == sorted(set("abcdefg"))


def test_the_written_line_records_the_winning_chain_with_its_matches(tmp_path):
    item = make_item(1, ["c"], reference_chains=[["d"], ["a", "b"]])
    _run([item], [Prediction(id="1", reasoning_steps=["b", "a"])]).write(tmp_path)
    line = json.loads((tmp_path / "examples.jsonl").read_text())
    assert (line["ref_chain"], line["n_ref_chains"], line["ref_steps"]) == (2, 3, ["a", "b"])
    assert sorted(m[:2] for m in line["matches"]) == [[0, 1], [1, 0]]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["n_multi_chain"], summary["n_alt_chain_won"]) == (1, 1)


def test_alternatives_change_the_fingerprint_and_a_single_chain_keeps_it():
    plain = make_benchmark([make_item(1, ["a"])])
    same = make_benchmark([make_item(1, ["a"], reference_chains=[])])
    other = make_benchmark([make_item(1, ["a"], reference_chains=[["b"]])])
    assert plain.fingerprint == same.fingerprint
    assert plain.fingerprint != other.fingerprint
