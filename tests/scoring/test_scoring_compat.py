"""Compat mode through the whole scorer: blank steps, and parity with crystal-metrics 0.2.0.

crystal-metrics embeds ``predictions[id]["reasoning_steps"]`` exactly as given, so ``""`` and
``"  "`` are predicted steps: they count in m (lowering precision) and are matched like any
other step. Paper mode drops and counts them (``n_blank_dropped``).
"""

from __future__ import annotations

import numpy as np
import pytest

from crystalbench.config.scoring import ScoreConfig
from crystalbench.encoders import HashEncoder, l2_normalise
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import make_benchmark, make_item


@pytest.fixture(scope="module")
def crystal_reasoning():
    """crystal-metrics 0.2.0's matcher: only the parity tests skip without the package."""
    return pytest.importorskip("crystal_metrics.reasoning")


COMPAT = ScoreConfig(encoder="hash", use_cache=False, compat="crystal-metrics-0.2")
PAPER = ScoreConfig(encoder="hash", use_cache=False)


class SentenceLikeEncoder:
    """Hashed bag of words plus a component every text shares, as real sentence encoders give.

    Blank texts get the shared component alone (a real encoder embeds its special tokens),
    so a blank step has a non-zero vector with a small cosine to every step, as with
    sentence-transformers; ``bias`` sets how large.
    """

    def __init__(self, bias: float = 0.3, dim: int = 255) -> None:
        self.hash = HashEncoder(dim=dim)
        self.bias = bias

    @property
    def identity(self) -> str:
        return f"sentence-like:{self.bias}:{self.hash.identity}"

    def encode(self, texts, **_ignored):
        words = self.hash.encode(list(texts))
        shared = np.full((len(texts), 1), self.bias, dtype=np.float32)
        return l2_normalise(np.hstack([shared, words]))


ITEMS = [
    make_item(
        "plot-1",
        [
            "Read the value of the 2019 bar.",
            "The 2019 bar reaches 42 units.",
            "The 2018 bar reaches 30 units.",
            "The difference is 12 units.",
        ],
        answer="12",
    ),
    make_item(
        "geo-1",
        ["Angle ABC and angle CBD form a straight line.", "So angle CBD is 140 degrees."],
        answer="140",
        source="mathvision",
    ),
    make_item(
        "sci-1",
        ["The magnet attracts iron.", "The nail is made of iron.", "So the nail is attracted."],
        answer="yes",
        source="scienceqa",
    ),
]

PREDICTIONS = [
    Prediction(
        id="plot-1",
        reasoning_steps=[
            "Read the value of the 2019 bar.",
            "",
            "The 2019 bar reaches 42 units.",
            "   ",
            "The difference is 12 units.",
        ],
        answer="12",
    ),
    Prediction(id="geo-1", reasoning_steps=["  ", "", "\t"], answer="140"),
    Prediction(
        id="sci-1",
        reasoning_steps=["The nail is made of iron.", " The magnet attracts iron. ", ""],
        answer="yes",
    ),
]


def _theirs(crystal_reasoning, encoder, bias_threshold: float):
    """crystal-metrics' own evaluate_single with our encoder in place of its model."""
    evaluator = crystal_reasoning.MLLMReasoningEvaluator.__new__(
        crystal_reasoning.MLLMReasoningEvaluator
    )
    evaluator.similarity_threshold = bias_threshold
    evaluator.debug_mode = False
    evaluator.model_name = "test"
    evaluator.model = encoder
    return {
        pred.id: evaluator.evaluate_single(
            pred.reasoning_steps,
            next(item for item in ITEMS if item.id == pred.id).reference_steps,
            alpha=0.3,
            order_metric="lis",
        )
        for pred in PREDICTIONS
    }


@pytest.mark.parametrize("bias", [0.3, 0.6])
def test_blank_steps_score_as_crystal_metrics_does(crystal_reasoning, bias):
    """Per item P/R/F1/LIS/Ordered F1 and m equal crystal-metrics 0.2.0, blank steps included.

    With bias 0.3 a blank step's cosine to every reference is 0.29 (< tau): blanks only
    lower precision. With 0.6 it is 0.51: a blank step can take a reference step, as it
    does in crystal-metrics with a real encoder.
    """
    encoder = SentenceLikeEncoder(bias)
    run = evaluate(make_benchmark(ITEMS), PREDICTIONS, COMPAT, encoder=encoder)
    theirs = _theirs(crystal_reasoning, encoder, 0.35)
    for item in run.items:
        expected = theirs[item.id]
        assert item.n_pred == expected.num_predicted_steps
        assert item.precision == pytest.approx(expected.precision, abs=1e-12)
        assert item.recall == pytest.approx(expected.recall, abs=1e-12)
        assert item.f1 == pytest.approx(expected.match_f1, abs=1e-12)
        assert item.lis == pytest.approx(expected.lis_ratio, abs=1e-12)
        assert item.ordered_f1 == pytest.approx(expected.ordered_match_f1, abs=1e-12)
    by_id = {item.id: item for item in run.items}
    assert by_id["plot-1"].n_pred == 5  # the two blank steps count in m
    assert by_id["plot-1"].pred_steps[1] == ""  # and stay in the record, as scored
    assert by_id["sci-1"].pred_steps[1] == " The magnet attracts iron. "  # never stripped
    assert by_id["geo-1"].n_blank_dropped == 0
    if bias == 0.6:
        assert by_id["geo-1"].f1 > 0  # blank steps matched reference steps


def test_paper_mode_drops_and_counts_blank_steps():
    encoder = SentenceLikeEncoder(0.3)  # blank steps match nothing: they only cost precision
    paper = {
        i.id: i for i in evaluate(make_benchmark(ITEMS), PREDICTIONS, PAPER, encoder=encoder).items
    }
    compat = {
        i.id: i for i in evaluate(make_benchmark(ITEMS), PREDICTIONS, COMPAT, encoder=encoder).items
    }
    assert (paper["plot-1"].n_pred, paper["plot-1"].n_blank_dropped) == (3, 2)
    assert paper["plot-1"].precision == 1.0
    assert compat["plot-1"].precision == pytest.approx(3 / 5)
    assert (paper["geo-1"].n_pred, paper["geo-1"].n_blank_dropped, paper["geo-1"].f1) == (0, 3, 0.0)
    assert paper["geo-1"].no_steps
    assert paper["sci-1"].pred_steps == ["The nail is made of iron.", "The magnet attracts iron."]
