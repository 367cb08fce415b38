"""Final labels, agreement and the adjudication queue, against hand-computed values."""

from __future__ import annotations

import math

import pytest
from review_support import make_users, pair_rows, users_by_name, write_pairs, write_references

from crystalbench.review.agreement import (
    adjudication_queue,
    agreement_summary,
    cohen_kappa,
    krippendorff_alpha,
    load_outcomes,
)
from crystalbench.review.assign import next_task, submit_label
from crystalbench.review.importing import import_path
from crystalbench.review.labels import (
    Submission,
    SubmissionError,
    final_decision,
    parse_submission,
)
from crystalbench.review.settings import ReviewSettings


@pytest.mark.parametrize(
    ("labels", "quota", "adjudicated", "expected"),
    [
        (["match", "match"], 2, None, ("match", "unanimous")),
        (["no_match"], 1, None, ("no_match", "unanimous")),
        (["match", "no_match", "match"], 3, None, ("match", "majority")),
        (["match", "no_match"], 2, None, (None, "unresolved")),
        (["match"], 2, None, (None, "unresolved")),
        ([], 2, None, (None, "unresolved")),
        (["unsure", "unsure"], 2, None, ("unsure", "unanimous")),
        (["match", "no_match"], 2, "no_match", ("no_match", "adjudicated")),
        (["match", "match", "no_match"], 3, "no_match", ("no_match", "adjudicated")),
        (["accept", "reject", "reject"], 3, None, ("reject", "majority")),
    ],
)
def test_final_decision(labels, quota, adjudicated, expected):
    decision = final_decision(labels, quota, adjudicated)
    assert (decision.label, decision.status) == expected


def test_cohen_kappa_of_the_paper_table_3_counts_is_the_standard_value():
    """TP 37, FP 16, TN 47, FN 0 (construction anchors 5.2): p_o 0.84, p_e 0.4922."""
    people = ["match"] * 37 + ["no_match"] * 16 + ["no_match"] * 47
    matcher = ["match"] * 37 + ["match"] * 16 + ["no_match"] * 47
    expected = (0.84 - (0.53 * 0.37 + 0.47 * 0.63)) / (1 - (0.53 * 0.37 + 0.47 * 0.63))
    assert cohen_kappa(people, matcher, ["match", "no_match"]) == pytest.approx(expected, abs=1e-12)
    assert round(expected, 3) == 0.685


def test_cohen_kappa_is_undefined_when_both_give_one_label():
    assert cohen_kappa(["match"] * 4, ["match"] * 4, ["match", "no_match"]) is None
    assert cohen_kappa([], [], ["match", "no_match"]) is None


def test_krippendorff_alpha_of_krippendorffs_own_example():
    """The nominal reliability data of Krippendorff (2011), 4 coders x 12 units: 0.743."""
    nan = math.nan
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    units = [
        [str(int(coder[u])) for coder in coders if not math.isnan(coder[u])] for u in range(12)
    ]
    assert round(krippendorff_alpha(units, ["1", "2", "3", "4", "5"]), 3) == 0.743


def test_krippendorff_alpha_is_undefined_without_pairs_or_variety():
    assert krippendorff_alpha([["match"], ["no_match"]], ["match", "no_match"]) is None
    assert krippendorff_alpha([["match", "match"]] * 3, ["match", "no_match"]) is None


def test_parse_submission_refuses_what_the_form_cannot_mean():
    with pytest.raises(SubmissionError, match="label must be one of"):
        parse_submission("pair", {"label": "maybe"})
    with pytest.raises(SubmissionError, match="needs a reason"):
        parse_submission("chain", {"verdict": "reject"}, 3)
    with pytest.raises(SubmissionError, match="needs a note"):
        parse_submission("chain", {"verdict": "reject", "reason": "other"}, 3)
    with pytest.raises(SubmissionError, match="unknown step flag"):
        parse_submission("chain", {"verdict": "accept", "flag-9-wrong": "on"}, 3)
    with pytest.raises(SubmissionError, match="unknown step flag"):
        parse_submission("chain", {"verdict": "accept", "flag-0-ugly": "on"}, 3)
    accepted = parse_submission("chain", {"verdict": "accept", "reason": "wrong_step"}, 2)
    assert accepted.reason is None
    assert accepted.step_flags == [[], []]


def _label_all(db, tmp_path, table):
    """Import ``len(table)`` pairs and have annotator ``name`` give ``table[i][name]``."""
    bench = write_references(tmp_path / "refs", 2)
    annotators = max(len(row) for row in table)
    pairs = write_pairs(tmp_path / "pairs.jsonl", pair_rows(len(table), 2))
    import_path(db, pairs, benchmark=bench, annotators=annotators, actor="test")
    names = sorted({name for row in table for name in row})
    make_users(db, names)
    users = users_by_name(db)
    with db.read() as session:
        from sqlalchemy import select

        from crystalbench.review.models import Task

        ids = dict(session.execute(select(Task.external_id, Task.id)).all())
    for index, row in enumerate(table):
        for name, label in row.items():
            with db.write() as session:
                submit_label_for(session, users[name], ids[f"pair-{index}"], label)
    with db.read() as session:
        return load_outcomes(session, "pair")


def submit_label_for(session, user, task_id, label):
    """Hand ``task_id`` to ``user`` (bypassing the queue order) and label it."""
    from crystalbench.review.assign import _hold
    from crystalbench.review.models import Task, utcnow

    _hold(session, session.get(Task, task_id), user, utcnow(), ReviewSettings(), None)
    submit_label(session, user, task_id, Submission(label=label))


def test_agreement_of_two_annotators(db, tmp_path):
    m, n = "match", "no_match"
    table = [{"ann": m, "bob": m}, {"ann": m, "bob": n}, {"ann": n, "bob": n}, {"ann": n, "bob": n}]
    summary = agreement_summary(_label_all(db, tmp_path, table), "pair")
    # p_o = 3/4; ann: 2 m 2 n, bob: 1 m 3 n; p_e = .5*.25 + .5*.75 = .5; kappa = .5
    assert summary.percent == pytest.approx(0.75)
    assert summary.cohen_kappa == pytest.approx(0.5)
    assert summary.n_tasks == 4
    assert summary.n_annotators == 2
    assert summary.statuses == {"unanimous": 3, "majority": 0, "adjudicated": 0, "unresolved": 1}
    assert [(p.first, p.second, p.shared) for p in summary.pairs] == [("ann", "bob", 4)]


def test_agreement_of_three_annotators_with_alpha(db, tmp_path):
    m, n = "match", "no_match"
    table = [
        {"a": m, "b": m, "c": m},
        {"a": m, "b": m, "c": n},
        {"a": n, "b": n, "c": n},
        {"a": n, "b": m, "c": n},
    ]
    outcomes = _label_all(db, tmp_path, table)
    summary = agreement_summary(outcomes, "pair")
    assert summary.cohen_kappa is None  # more than two annotators: the pairwise table instead
    assert len(summary.pairs) == 3
    # per task pairwise agreement: 1, 1/3, 1, 1/3
    assert summary.percent == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 4)
    expected_alpha = krippendorff_alpha(
        [[m, m, m], [m, m, n], [n, n, n], [n, m, n]], [m, n, "unsure"]
    )
    assert summary.alpha == pytest.approx(expected_alpha)
    # by hand: o_mm = 4 + 2 + 0 + 0... coincidences: n_m = 6, n_n = 6, D_o = 4/12, D_e = 72/132
    assert summary.alpha == pytest.approx(1 - (4 / 12) / (72 / 132))
    assert summary.statuses["majority"] == 2
    assert summary.statuses["unanimous"] == 2
    # the 2-1 tasks are in the adjudication queue, lowest agreement first, own tasks excluded
    queue = adjudication_queue(outcomes, 1.0)
    assert [o.external_id for o in queue] == ["pair-1", "pair-3"]
    users = users_by_name(db)
    assert adjudication_queue(outcomes, 1.0, exclude_user=users["a"].id) == []


def test_load_outcomes_keeps_superseded_labels_in_history(db, tmp_path):
    bench = write_references(tmp_path / "refs", 1)
    pairs = write_pairs(tmp_path / "pairs.jsonl", pair_rows(1, 1))
    import_path(db, pairs, benchmark=bench, annotators=1, actor="test")
    make_users(db, ["a"])
    user = users_by_name(db)["a"]
    with db.write() as session:
        task = next_task(session, user, "pair", ReviewSettings())
        submit_label(session, user, task.id, Submission(label="match"))
    with db.write() as session:
        submit_label(session, user, task.id, Submission(label="no_match"))
    with db.read() as session:
        (outcome,) = load_outcomes(session, "pair")
    assert outcome.labels == ["no_match"]
    assert [row.label for row in outcome.history] == ["match", "no_match"]
    assert outcome.decision.status == "unanimous"
    assert outcome.decision.label == "no_match"
