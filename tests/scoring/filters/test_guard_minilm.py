"""The issue's table with the real MiniLM encoder: cosine matches every row, the guard keeps
only the paraphrases (the motivating measurement of issue 24)."""

from __future__ import annotations

import numpy as np
import pytest

from crystalbench.defaults import TAU
from crystalbench.encoders import load_encoder
from crystalbench.scoring.filters.guard import FactGuard, without_vetoed
from crystalbench.scoring.matching import MatchRules, greedy_pairs

pytestmark = pytest.mark.slow

TABLE = [
    ("The angle ABC is 40 degrees.", "The angle ABC is 50 degrees.", False),
    (
        "The red bar is taller than the blue bar.",
        "The red bar is shorter than the blue bar.",
        False,
    ),
    ("The door is open.", "The door is not open.", False),
    ("There are 3 apples on the table.", "There are 7 apples on the table.", False),
    ("The left console is the smallest.", "The middle console is the smallest.", False),
    ("The area is 16 square units.", "The area equals 16.", True),
    ("Count the unit cells: 16.", "There are 16 unit cells.", True),
]


def test_cosine_matches_every_row_and_the_guard_only_the_paraphrases() -> None:
    encoder = load_encoder("minilm-offline")
    refs = [ref for ref, _, _ in TABLE]
    preds = [pred for _, pred, _ in TABLE]
    ref_vectors = np.asarray(encoder.encode(refs), dtype=np.float32)
    pred_vectors = np.asarray(encoder.encode(preds), dtype=np.float32)
    for (ref, pred, same), a, b in zip(TABLE, ref_vectors, pred_vectors, strict=True):
        cosine = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        assert cosine >= TAU, (ref, pred, cosine)
        assert (FactGuard().check(pred, ref) is None) == same, (ref, pred)


def test_a_copied_chain_with_wrong_numbers_loses_its_matches() -> None:
    """Copy each reference step with its number changed: cosine matches every step; the
    guard vetoes each copy against its original (and, over whole steps, against all)."""
    encoder = load_encoder("minilm-offline")
    ref = [
        "There are 3 apples on the table.",
        "The angle ABC is 40 degrees.",
        "The area is 16 square units.",
    ]
    pred = [
        "There are 5 apples on the table.",
        "The angle ABC is 45 degrees.",
        "The area is 18 square units.",
    ]
    a = np.asarray(encoder.encode(pred), dtype=np.float32)
    b = np.asarray(encoder.encode(ref), dtype=np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    similarity = (a @ b.T).astype(np.float32)
    assert len(greedy_pairs(similarity, MatchRules())) == 3
    mask, vetoes = FactGuard().veto_mask(pred, ref, similarity, TAU)
    assert {(v.pred, v.ref) for v in vetoes} >= {(0, 0), (1, 1), (2, 2)}
    assert all(v.reason == "number" for v in vetoes if v.pred == v.ref)
    assert greedy_pairs(without_vetoed(similarity, mask), MatchRules()) == []
