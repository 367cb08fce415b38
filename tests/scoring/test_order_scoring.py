"""Partial-order references through the whole scoring engine: ``evaluate``, ``crystal score``,
the record and summary fields, blank steps, compat mode, alternative chains, the threshold
ablation and the reward scorer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from crystalbench import load_predictions
from crystalbench.cli.main import app
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.encoders import HashEncoder, OneHotEncoder
from crystalbench.rewards import RewardScorer
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import BenchmarkItem, Prediction
from crystalbench.validation.thresholds import THRESHOLD_FIELDS, chain_at
from fakes import HASH_CONFIG, make_benchmark, make_item, write_jsonl

MAY = "The bar for May is 40."
JUNE = "The bar for June is 55."
COMPARE = "June minus May is 15."
ANSWER = "So the answer is 15."
CHART = [MAY, JUNE, COMPARE, ANSWER]
EITHER_READING = [[0, 2], [1, 2], [2, 3]]  # steps 0 and 1 are interchangeable
TABLE = {text: [1.0 if k == j else 0.0 for j in range(6)] for k, text in enumerate(CHART)}
TABLE["Zebras juggle."] = [0.0] * 5 + [1.0]


def chart_item(
    precedence: Any = None, steps: list[str] = CHART, item_id: str = "plotqa/7", **extra: Any
) -> BenchmarkItem:
    fields: dict[str, Any] = {"answer": "15", **extra}
    if precedence is not None:
        fields["reference_precedence"] = precedence
    return make_item(item_id, steps, **fields)


def score(items: list[BenchmarkItem], steps: list[list[str]], **config: Any):
    predictions = [
        Prediction(id=item.id, reasoning_steps=chain, answer="15")
        for item, chain in zip(items, steps, strict=True)
    ]
    return evaluate(
        make_benchmark(items),
        predictions,
        ScoreConfig(encoder="hash", use_cache=False, **config),
        encoder=OneHotEncoder(TABLE),
    )


# ----------------------------------------------------------------------------- worked example


def test_a_model_reading_june_first_keeps_full_order_with_the_precedence():
    """docs/metrics.md's worked example, end to end: LIS 1.0 with the precedence, 0.75 without."""
    swapped = [[JUNE, MAY, COMPARE, ANSWER]]
    partial = score([chart_item(EITHER_READING)], swapped).items[0]
    paper = score([chart_item()], swapped).items[0]
    assert (partial.f1, paper.f1) == (1.0, 1.0)
    assert (partial.lis, partial.kendall, partial.out_of_order) == (1.0, 1.0, [])
    assert partial.ordered_f1 == 1.0
    assert partial.ref_precedence == [(0, 2), (1, 2), (2, 3)]
    assert (paper.lis, paper.out_of_order) == (0.75, [(1, 0)])
    assert paper.kendall == pytest.approx(5 / 6)
    assert paper.ordered_f1 == pytest.approx(0.925)
    assert paper.ref_precedence is None
    # Kendall instead of LIS inside Ordered F1 follows the precedence too
    kendall = score([chart_item(EITHER_READING)], swapped, order_metric="kendall").items[0]
    assert kendall.ordered_f1 == 1.0


def test_stating_the_comparison_first_still_loses_order():
    """The comparison needs both readings: stated first, it is out of order either way."""
    early = [["Zebras juggle.", COMPARE, MAY, JUNE, ANSWER]]  # matches (2,0) (3,1) (1,2) (4,3)
    (result,) = score([chart_item(EITHER_READING)], early).items
    assert result.lis == 0.75
    assert result.out_of_order == [(1, 2)]
    assert result.kendall == pytest.approx(0.6)


def test_the_written_line_and_summary_say_the_order_was_partial(tmp_path):
    items = [chart_item(EITHER_READING), chart_item(item_id="plotqa/8")]
    run = score(items, [[JUNE, MAY, COMPARE, ANSWER]] * 2)
    run.write(tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "examples.jsonl").read_text().splitlines()]
    assert lines[0]["ref_precedence"] == [[0, 2], [1, 2], [2, 3]]
    assert "ref_precedence" not in lines[1]  # the paper's order: the line is as before
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["n_precedence"] == 1
    assert summary["by_source"]["plotqa"]["n_precedence"] == 1


def test_crystal_score_reads_the_precedence_and_reports_it(tmp_path):
    bench = write_jsonl(
        tmp_path / "bench.jsonl",
        [
            chart_item(EITHER_READING).model_dump(mode="json"),
            chart_item(item_id="plotqa/8").model_dump(),
        ],
    )
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            {"id": i, "reasoning_steps": [JUNE, MAY, COMPARE, ANSWER], "answer": "15"}
            for i in ("plotqa/7", "plotqa/8")
        ],
    )
    out = tmp_path / "out"
    args = ["score", "-b", str(bench), "-p", str(preds), "-o", str(out), "--encoder", "hash"]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "partial order 1" in " ".join(result.output.split())
    lines = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    assert [line.get("ref_precedence") for line in lines] == [[[0, 2], [1, 2], [2, 3]], None]
    assert json.loads((out / "summary.json").read_text())["n_precedence"] == 1


# ----------------------------------------------------------------------------- which chain


def test_blank_reference_steps_are_dropped_with_the_orders_through_them():
    """Steps 0 and 2 read the bars, step 1 is blank: the precedence holds among the kept."""
    steps = [MAY, "  ", JUNE, COMPARE]
    (result,) = score([chart_item([[0, 3], [2, 3], [1, 2]], steps)], [[JUNE, MAY, COMPARE]]).items
    assert result.ref_steps == [MAY, JUNE, COMPARE]
    assert result.n_blank_dropped == 1
    assert result.ref_precedence == [(0, 2), (1, 2)]
    assert result.lis == 1.0
    # 0 -> 1(blank) -> 2 still orders the two readings once the blank step is gone
    (chained,) = score([chart_item([[0, 1], [1, 2], [2, 3]], steps)], [[JUNE, MAY, COMPARE]]).items
    assert chained.ref_precedence == [(0, 1), (1, 2)]
    assert chained.lis == pytest.approx(2 / 3)


def test_compat_mode_scores_the_chain_s_own_order():
    """crystal-metrics 0.2 knows no partial order: its numbers stay that package's."""
    (result,) = score(
        [chart_item(EITHER_READING)], [[JUNE, MAY, COMPARE, ANSWER]], compat="crystal-metrics-0.2"
    ).items
    assert (result.lis, result.ref_precedence) == (0.75, None)


def test_alternative_chains_keep_their_own_order():
    """The precedence is the primary chain's; an alternative that wins is read in its order."""
    # Both chains hold the three steps (F1 1.0 each); Ordered F1 decides. With the
    # precedence the primary keeps full order credit and wins the tie (the lower index).
    item = chart_item([[0, 2], [1, 2]], [MAY, JUNE, COMPARE],
                      reference_chains=[[JUNE, MAY, COMPARE]])  # fmt: skip
    (result,) = score([item], [[JUNE, MAY, COMPARE]]).items
    assert (result.ref_chain, result.lis, result.ref_precedence) == (0, 1.0, [(0, 2), (1, 2)])
    plain = chart_item(None, [MAY, JUNE, COMPARE], reference_chains=[[JUNE, MAY, COMPARE]])
    (result,) = score([plain], [[JUNE, MAY, COMPARE]]).items
    assert (result.ref_chain, result.lis, result.ref_precedence) == (1, 1.0, None)
    # The alternative wins on F1 (1.0 against 6/7): its own order, no precedence.
    item = chart_item(EITHER_READING, reference_chains=[[JUNE, MAY, COMPARE]])
    run = score([item], [[MAY, JUNE, COMPARE]])
    (result,) = run.items
    assert result.ref_chain == 1
    assert (result.lis, result.ref_precedence) == (pytest.approx(2 / 3), None)
    assert run.summary.n_precedence == 0


def test_higher_thresholds_are_derived_against_the_precedence():
    """The ablation reads higher thresholds off the records: with the precedence, as scoring."""
    table = dict(TABLE)
    table["Roughly May is 40."] = [0.8, 0.0, 0.0, 0.0, 0.0, 0.6]
    table["Roughly June is 55."] = [0.0, 0.9, 0.0, 0.0, 0.0, 0.43589]
    preds = [Prediction(id="plotqa/7", reasoning_steps=[
        "Roughly June is 55.", ANSWER, "Roughly May is 40.", COMPARE])]  # fmt: skip
    bench = make_benchmark([chart_item(EITHER_READING)])

    def run(tau: float):
        config = ScoreConfig(encoder="hash", use_cache=False, threshold=tau)
        return evaluate(bench, preds, config, encoder=OneHotEncoder(table)).items[0]

    low = run(0.35)
    assert low.ref_precedence is not None
    for tau in (0.85, 0.95):
        derived = chain_at(low, tau, alpha=0.3, order_metric="lis")
        again = run(tau)
        assert derived == {name: getattr(again, name) for name in THRESHOLD_FIELDS}, tau
    # At 0.85 the loose May reading drops out: the answer stated before the comparison is
    # the one conflict left (June read first is not one).
    assert (run(0.85).lis, run(0.85).out_of_order) == (pytest.approx(2 / 3), [(3, 2)])


# ----------------------------------------------------------------------------- the property


def as_chain_order(item: BenchmarkItem, form: str) -> BenchmarkItem:
    """``item`` with its own chain order written out as a precedence (a form of it)."""
    n = len(item.reference_steps)
    pairs = {
        "consecutive": [[a, a + 1] for a in range(n - 1)],
        "closure": [[a, b] for a in range(n) for b in range(a + 1, n)],
        "shuffled": [[a, b] for a in range(n) for b in range(a + 1, n)][::-1],
    }[form]
    return BenchmarkItem.model_validate({**item.model_dump(), "reference_precedence": pairs})


def without_extension(data: Any) -> Any:
    """A record or summary without the optional fields of this extension (and the config,
    which carries the benchmark's fingerprint)."""
    if isinstance(data, dict):
        return {
            key: without_extension(value)
            for key, value in data.items()
            if key not in ("ref_precedence", "n_precedence", "config")
        }
    return data


def assert_same_numbers(plain, ordered) -> None:
    assert len(plain.items) == len(ordered.items)
    for a, b in zip(plain.items, ordered.items, strict=True):
        assert a.ref_precedence is None
        if b.ref_chain == 0:
            n = b.n_ref
            assert b.ref_precedence == [(k, k + 1) for k in range(n - 1)]
        else:
            assert b.ref_precedence is None
        assert without_extension(b.model_dump(mode="json")) == a.model_dump(mode="json")
    assert without_extension(ordered.summary.model_dump(mode="json")) == without_extension(
        plain.summary.model_dump(mode="json")
    )
    assert ordered.summary.n_precedence == sum(1 for b in ordered.items if b.ref_chain == 0)


@pytest.mark.parametrize(
    ("config", "form"),
    [
        ({}, "consecutive"),
        ({"order_metric": "kendall", "threshold": 0.5}, "closure"),
        ({"alpha": 0.9}, "shuffled"),
    ],
)
def test_the_chain_s_own_order_as_a_precedence_changes_no_number_on_the_sample(config, form):
    """Every sample prediction file, scored with each item's own chain order given as a
    precedence: every record and summary equals today's but for the new optional fields."""
    bench = load_benchmark("sample")
    ordered = make_benchmark([as_chain_order(item, form) for item in bench.items])
    assert ordered.fingerprint != bench.fingerprint
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        predictions = load_predictions(path)
        score_config = HASH_CONFIG.model_copy(update=config)
        plain = evaluate(bench, predictions, score_config)
        assert_same_numbers(plain, evaluate(ordered, predictions, score_config))


WORDS = ["The", "red", "bar", "is", "taller", "than", "blue", "one", "area", "16", "May", "40"]
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
steps = st.lists(st.one_of(sentences, st.sampled_from(["", "  "])), min_size=1, max_size=8)


@st.composite
def scored_items(draw):
    """Random items (blank steps, repeated steps, alternative chains) and predictions."""
    items, predictions = [], []
    for k in range(draw(st.integers(1, 4))):
        chain = draw(steps.filter(lambda s: any(x.strip() for x in s)))
        alternatives = draw(st.lists(steps, max_size=2))
        items.append(make_item(k, chain, reference_chains=alternatives))
        if draw(st.booleans()):  # a reordering of the chain, with some words changed
            predicted = draw(st.permutations(chain))
            predicted = [s + draw(st.sampled_from(["", " taller", " blue"])) for s in predicted]
        else:
            predicted = draw(steps)
        predictions.append(Prediction(id=str(k), reasoning_steps=predicted, answer="3"))
    return items, predictions


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scored_items(),
    st.sampled_from(["consecutive", "closure", "shuffled"]),
    st.sampled_from(["lis", "kendall"]),
    st.sampled_from([0.2, 0.35, 0.6]),
)
def test_the_chain_s_own_order_as_a_precedence_changes_no_number(case, form, order, tau):
    """The property of the issue through the whole engine: random chains (with blank steps
    and alternatives), random predictions, every threshold and order metric."""
    items, predictions = case
    config = ScoreConfig(encoder="hash", use_cache=False, order_metric=order, threshold=tau)
    encoder = HashEncoder(dim=32)
    plain = evaluate(make_benchmark(items), predictions, config, encoder=encoder)
    ordered = evaluate(
        make_benchmark([as_chain_order(item, form) for item in items]),
        predictions,
        config,
        encoder=encoder,
    )
    assert_same_numbers(plain, ordered)


# ----------------------------------------------------------------------------- rewards


def test_the_reward_is_unaffected_by_a_precedence():
    """The CPR reward reads Match F1 (and the answer) only: order plays no part in it."""
    scorer = RewardScorer(HashEncoder())
    completion = json.dumps({"reasoning_steps": [JUNE, MAY, COMPARE, ANSWER], "answer": "15"})
    plain = scorer.breakdowns([completion], [chart_item()])
    partial = scorer.breakdowns([completion], [chart_item(EITHER_READING)])
    assert plain == partial
    assert plain[0].total is not None
