"""The guard's doors: check, veto_mask (only pairs at or above tau), records, helpers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crystalbench.defaults import GUARD, GUARDS
from crystalbench.errors import UnknownNameError
from crystalbench.scoring.filters.guard import (
    VETO_REASONS,
    Conflict,
    FactGuard,
    Veto,
    build_guard,
    step_facts,
    veto_whole_steps,
    without_vetoed,
)
from crystalbench.scoring.matching import MatchRules, greedy_pairs

PRED = ["The angle ABC is 50 degrees.", "The area equals 16.", "The door is not open."]
REF = ["The angle ABC is 40 degrees.", "The area is 16 square units.", "The door is open."]


class CountingGuard(FactGuard):
    """Records which pairs it was asked about."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, str]] = []

    def check(self, pred_step: str, ref_step: str) -> Conflict | None:
        self.asked.append((pred_step, ref_step))
        return super().check(pred_step, ref_step)


def test_the_default_guard_is_the_papers() -> None:
    assert GUARD == "none"
    assert GUARDS == ("none", "facts", "facts-strict")
    assert build_guard("none") is None
    assert isinstance(build_guard("facts", ["a", "b"]), FactGuard)
    assert isinstance(build_guard("facts-strict"), FactGuard)


def test_an_unknown_guard_names_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="'facts'"):
        build_guard("fact")


def test_veto_mask_reads_only_pairs_at_or_above_tau() -> None:
    similarity = np.array(
        [[0.9, 0.1, 0.2], [0.2, 0.35, 0.1], [0.1, 0.2, 0.34999]], dtype=np.float32
    )
    guard = CountingGuard()
    mask, vetoes = guard.veto_mask(PRED, REF, similarity, 0.35)
    assert sorted(guard.asked) == sorted([(PRED[0], REF[0]), (PRED[1], REF[1])])
    assert mask.tolist() == [[True, False, False], [False, False, False], [False, False, False]]
    assert [(v.pred, v.ref, v.reason) for v in vetoes] == [(0, 0, "number")]
    assert vetoes[0].cosine == pytest.approx(0.9)


def test_strict_candidates_leave_a_pair_exactly_at_tau() -> None:
    similarity = np.full((3, 3), 0.1, dtype=np.float32)
    similarity[2, 2] = np.float32(0.35)
    mask, _ = FactGuard().veto_mask(PRED, REF, similarity, 0.35)
    assert mask[2, 2]
    mask, _ = FactGuard().veto_mask(PRED, REF, similarity, 0.35, strict=True)
    assert not mask.any()


def test_vetoes_come_in_index_order_with_their_spans() -> None:
    similarity = np.full((3, 3), 0.9, dtype=np.float32)
    _, vetoes = FactGuard().veto_mask(PRED, REF, similarity, 0.35)
    assert [(v.pred, v.ref) for v in vetoes] == sorted((v.pred, v.ref) for v in vetoes)
    assert {(v.pred, v.ref, v.reason) for v in vetoes} >= {(0, 0, "number"), (2, 2, "negation")}
    for veto in vetoes:
        assert veto.reason in VETO_REASONS
        assert PRED[veto.pred][veto.spans.pred.start : veto.spans.pred.end] == veto.spans.pred.text
        assert REF[veto.ref][veto.spans.ref.start : veto.spans.ref.end] == veto.spans.ref.text


def test_a_veto_is_a_flat_json_record() -> None:
    similarity = np.eye(3, dtype=np.float32)
    _, vetoes = FactGuard().veto_mask(PRED, REF, similarity, 0.35)
    line = json.loads(vetoes[0].model_dump_json())
    assert line == {
        "pred": 0,
        "ref": 0,
        "cosine": 1.0,
        "reason": "number",
        "spans": {
            "pred": {"start": 17, "end": 27, "text": "50 degrees"},
            "ref": {"start": 17, "end": 27, "text": "40 degrees"},
        },
        "scope": "pair",
    }
    assert Veto.model_validate(line) == vetoes[0]
    with pytest.raises(ValueError, match="extra"):
        Veto.model_validate({**line, "why": "x"})


def test_a_matrix_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        FactGuard().veto_mask(PRED, REF, np.zeros((2, 3), dtype=np.float32), 0.35)


def test_empty_chains_give_an_empty_mask() -> None:
    mask, vetoes = FactGuard().veto_mask([], REF, np.zeros((0, 3), dtype=np.float32), 0.35)
    assert mask.shape == (0, 3)
    assert vetoes == []


def test_a_vetoed_pair_is_no_candidate_and_matching_takes_the_next_best() -> None:
    pred = ["The angle ABC is 50 degrees."]
    ref = ["The angle ABC is 40 degrees.", "The angle ABC is 50 degrees, as marked."]
    similarity = np.array([[0.9, 0.8]], dtype=np.float32)
    mask, _ = FactGuard().veto_mask(pred, ref, similarity, 0.35)
    assert [(i, j) for i, j, _ in greedy_pairs(similarity, MatchRules())] == [(0, 0)]
    assert [(i, j) for i, j, _ in greedy_pairs(without_vetoed(similarity, mask), MatchRules())] == [
        (0, 1)
    ]


def test_whole_step_vetoes_keep_a_wrong_copy_from_matching_a_neighbour() -> None:
    pred = ["The first row has 4 shaded squares."]
    ref = ["The first row has 2 shaded squares.", "The second row has 1 shaded square."]
    similarity = np.array([[0.95, 0.9]], dtype=np.float32)
    mask, _ = FactGuard().veto_mask(pred, ref, similarity, 0.35)
    assert mask.tolist() == [[True, False]]  # the neighbour is another fact, not a contradiction
    assert veto_whole_steps(mask, similarity, 0.35).tolist() == [[True, True]]
    assert greedy_pairs(without_vetoed(similarity, veto_whole_steps(mask, similarity, 0.35))) == []


def test_whole_step_vetoes_need_the_closest_reference_step_vetoed() -> None:
    similarity = np.array([[0.6, 0.9], [0.3, 0.2]], dtype=np.float32)
    mask = np.array([[True, False], [True, False]])
    assert veto_whole_steps(mask, similarity, 0.35).tolist() == [[True, False], [True, False]]


def test_facts_are_read_once_per_step_text() -> None:
    step_facts.cache_clear()
    guard = FactGuard()
    similarity = np.full((3, 3), 0.9, dtype=np.float32)
    guard.veto_mask(PRED, REF, similarity, 0.35)
    info = step_facts.cache_info()
    assert info.misses == len(set(PRED + REF))
    assert info.hits >= 9 * 2 - info.misses


def test_guard_reasons_are_the_records_reasons() -> None:
    assert set(VETO_REASONS) == {"number", "negation", "relation", "option", "colour", "entity"}
