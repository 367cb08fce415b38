"""Final labels, agreement and the adjudication queue, against hand-computed values; and the
same labels giving the same agreement numbers in the review app and in validation."""

from __future__ import annotations

import pytest
from review_support import make_users, pair_rows, users_by_name, write_pairs, write_references

from crystalbench.review.agreement import (
    adjudication_queue,
    agreement_summary,
    load_outcomes,
)
from crystalbench.review.assign import next_task, submit_label
from crystalbench.review.importing import import_path
from crystalbench.review.labels import (
    AcceptNeedsConfirmation,
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
    # Accept with a reason or flagged steps contradicts itself: it must be confirmed.
    with pytest.raises(AcceptNeedsConfirmation, match="reject reason 'A step is wrong'"):
        parse_submission("chain", {"verdict": "accept", "reason": "wrong_step"}, 2)
    with pytest.raises(AcceptNeedsConfirmation, match="steps 1 and 2 are flagged"):
        parse_submission("chain", {"verdict": "accept", "flag-0-wrong": "on",
                                   "flag-1-unjustified": "on"}, 2)  # fmt: skip
    confirmed = {"verdict": "accept", "reason": "wrong_step", "flag-1-wrong": "on"}
    accepted = parse_submission("chain", {**confirmed, "confirm_accept": "1"}, 2)
    assert accepted.label == "accept"
    assert accepted.reason is None  # dropped: a reason belongs to a rejection
    assert accepted.step_flags == [[], ["wrong"]]  # kept with the review
    plain = parse_submission("chain", {"verdict": "accept"}, 2)
    assert (plain.label, plain.reason, plain.step_flags) == ("accept", None, [[], []])
    # "Accept anyway" sends confirm_accept alone: it means accept.
    assert parse_submission("chain", {"confirm_accept": "1"}, 2).label == "accept"


def test_agreement_with_the_final_label_counts_overruled_labels(db, tmp_path):
    """The issue's case: ann's three disputed labels were all overruled by an adjudicator.
    The old figure ("agrees with majority") left ties out, adjudicated or not, and read 100 %;
    the final label now counts, so ann agrees on 2 of 5, bob on 5 of 5. A tie not yet
    adjudicated and ann's unsure label are left out."""
    from sqlalchemy import select

    from crystalbench.review.agreement import annotator_stats
    from crystalbench.review.models import Adjudication, Task, utcnow

    m, n, u = "match", "no_match", "unsure"
    table = [
        {"ann": m, "bob": m},
        {"ann": n, "bob": n},
        {"ann": m, "bob": n},  # overruled
        {"ann": m, "bob": n},  # overruled
        {"ann": n, "bob": m},  # overruled
        {"ann": m, "bob": n},  # a tie nobody has settled yet
        {"ann": u, "bob": m},  # ann abstained; adjudicated below
    ]
    _label_all(db, tmp_path, table)
    make_users(db, ["judge"], role="adjudicator")
    judge = users_by_name(db)["judge"]
    with db.write() as session:
        ids = dict(session.execute(select(Task.external_id, Task.id)).all())
        for index in (2, 3, 4, 6):
            session.add(Adjudication(
                task_id=ids[f"pair-{index}"], user_id=judge.id, label=table[index]["bob"],
                reason="annotator_error", note=None, overrides_majority=False,
                created_at=utcnow(),
            ))  # fmt: skip
    with db.read() as session:
        outcomes = load_outcomes(session, "pair")
        stats = {s.name: s for s in annotator_stats(session, outcomes, "pair")}
    assert (stats["ann"].final_agreed, stats["ann"].final_compared) == (2, 5)
    assert stats["ann"].agreement_with_final == pytest.approx(0.4)
    assert (stats["bob"].final_agreed, stats["bob"].final_compared) == (6, 6)


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
    summary = agreement_summary(_label_all(db, tmp_path, table), n_resamples=0)
    raters = summary.raters
    # p_o = 3/4; ann: 2 m 2 n, bob: 1 m 3 n; p_e = .5*.25 + .5*.75 = .5; kappa = .5
    assert raters.percent_agreement == pytest.approx(0.75)
    assert raters.cohen_kappa == pytest.approx(0.5)
    assert summary.n_tasks == 4
    assert raters.n_multiply_labelled == 4
    assert raters.annotators == ["ann", "bob"]
    assert summary.statuses == {"unanimous": 3, "majority": 0, "adjudicated": 0, "unresolved": 1}
    assert [(p.a, p.b, p.n) for p in raters.pairwise] == [("ann", "bob", 4)]


def test_agreement_of_three_annotators_with_alpha(db, tmp_path):
    m, n = "match", "no_match"
    table = [
        {"a": m, "b": m, "c": m},
        {"a": m, "b": m, "c": n},
        {"a": n, "b": n, "c": n},
        {"a": n, "b": m, "c": n},
    ]
    outcomes = _label_all(db, tmp_path, table)
    summary = agreement_summary(outcomes, n_resamples=0)
    raters = summary.raters
    assert raters.cohen_kappa is None  # more than two annotators: the pairwise table instead
    assert len(raters.pairwise) == 3
    # per task pairwise agreement: 1, 1/3, 1, 1/3
    assert raters.percent_agreement == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 4)
    # by hand: coincidences n_m = 6, n_n = 6, D_o = 4/12, D_e = 72/132
    assert raters.krippendorff_alpha == pytest.approx(1 - (4 / 12) / (72 / 132))
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


def test_the_review_app_and_validation_give_the_same_agreement(db, tmp_path):
    """The same labels, once on the admin page's computation and once exported and read by
    ``crystal validate agreement``: identical percent agreement, kappas, Light's kappa, alpha
    and alpha interval. ``unsure`` labels and annotators who skipped pairs are in the table.
    Before issue 23 the app counted ``unsure`` as a third category and validation as missing,
    and the two alphas differed."""
    import krippendorff
    import numpy as np

    from crystalbench.review.exporting import export_text
    from crystalbench.validation.agreement import compute_agreement
    from crystalbench.validation.labels import read_labels
    from crystalbench.validation.pairs import read_pairs

    m, n, u = "match", "no_match", "unsure"
    table = [
        {"ann": m, "bob": m, "cy": m},
        {"ann": m, "bob": n, "cy": u},
        {"ann": n, "bob": n, "cy": n},
        {"ann": u, "bob": n, "cy": n},
        {"ann": m, "bob": m},
        {"ann": n, "bob": m, "cy": m},
        {"ann": u, "bob": u, "cy": m},
        {"bob": n, "cy": n},
        {"ann": m, "bob": m, "cy": n},
        {"ann": n, "cy": u},
    ]
    outcomes = _label_all(db, tmp_path, table)
    review = agreement_summary(outcomes, n_resamples=300, seed=7).raters
    export = tmp_path / "labels.jsonl"
    export.write_text(export_text(db, "pairs", actor="test")[0], encoding="utf-8")
    report = compute_agreement(
        read_pairs(tmp_path / "pairs.jsonl"), read_labels(export), n_resamples=300, seed=7
    )
    assert review.model_dump() == report.humans.model_dump()
    assert review.n_labels == 27
    assert review.n_abstained == 5
    assert review.n_multiply_labelled == 8  # pairs 7 and 10 keep one decided label each
    # By hand, unsure missing: 10 match and 10 no_match values in the 8 pairable units;
    # D_o = (2 + 2 + 2) / 20 (units 2, 6, 9), D_e = 2 * 10 * 10 / (20 * 19); alpha = 0.43.
    assert review.krippendorff_alpha == pytest.approx(1 - (6 / 20) / (200 / 380))
    assert review.alpha_interval is not None
    assert review.alpha_interval.low < review.krippendorff_alpha < review.alpha_interval.high
    # The old review definition (unsure a third category) gives another number.
    categories = [m, n, u]
    counts = np.array([[sum(r.get(a) == c for a in r) for c in categories] for r in table])
    as_category = krippendorff.alpha(
        value_counts=counts[counts.sum(axis=1) >= 2].astype(float),
        level_of_measurement="nominal",
    )
    assert abs(as_category - review.krippendorff_alpha) > 0.05
