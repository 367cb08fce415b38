"""Agreement statistics against hand-computed values: Table 3, kappa, alpha, Wilson, tau."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner
from validation_helpers import make_pair, paper_pairs, write_labels_csv, write_pairs_jsonl

from crystalbench.cli.main import app
from crystalbench.validation.agreement import cohen_kappa, compute_agreement, wilson_interval
from crystalbench.validation.labels import read_labels

runner = CliRunner()


def labels_file(
    tmp_path: Path, rows: list[tuple[str, ...]], header=("pair_id", "annotator", "label")
):
    return read_labels(write_labels_csv(tmp_path / "labels.csv", rows, header))


def hand_kappa(tp: int, fp: int, fn: int, tn: int) -> float:
    """Cohen (1960), written out: observed against chance agreement from both marginals."""
    n = tp + fp + fn + tn
    observed = (tp + tn) / n
    chance = ((tp + fp) / n) * ((tp + fn) / n) + ((fn + tn) / n) * ((fp + tn) / n)
    return (observed - chance) / (1 - chance)


def hand_wilson(count: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


# ------------------------------------------------------------------------- the paper's counts


def test_paper_counts_give_its_agreement_and_the_standard_kappa(tmp_path):
    """Table 3's counts: 84.0 % overall, its per-band figures, 16 false positives and no false
    negative; the standard kappa of those counts is 0.685 (the paper prints 0.534)."""
    pairs, rows = paper_pairs()
    report = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=200)
    assert report.overall.n == 100
    assert report.overall.agreement == pytest.approx(0.84)
    assert [b.n for b in report.by_band] == [33, 14, 19, 25, 9]
    assert [round(100 * b.agreement, 1) for b in report.by_band] == [100.0, 100.0, 68.4, 64.0, 88.9]
    assert (report.overall.false_positives, report.overall.false_negatives) == (16, 0)
    assert (report.overall.true_positives, report.overall.true_negatives) == (37, 47)
    assert report.overall.cohen_kappa == pytest.approx(hand_kappa(37, 16, 0, 47))
    assert round(report.overall.cohen_kappa, 3) == 0.685
    assert "0.534" in report.kappa_definition
    assert "0.685" in report.kappa_definition


def test_paper_counts_through_the_command_line(tmp_path):
    pairs, rows = paper_pairs()
    pairs_file = write_pairs_jsonl(tmp_path / "pairs.jsonl", pairs)
    labels = write_labels_csv(tmp_path / "labels.csv", rows, ("pair_id", "annotator", "label"))
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "validate",
            "agreement",
            "--pairs",
            str(pairs_file),
            "--labels",
            str(labels),
            "--out",
            str(out),
            "--resamples",
            "100",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "agreement.json").read_text())
    assert data["overall"]["n"] == 100
    assert data["overall"]["agreement"] == pytest.approx(0.84)
    assert data["overall"]["cohen_kappa"] == pytest.approx(0.6849153, abs=1e-6)
    assert (data["overall"]["false_positives"], data["overall"]["false_negatives"]) == (16, 0)
    assert [(b["band"], b["n"]) for b in data["by_band"]] == [
        ("<0.20", 33),
        ("[0.20,0.35)", 14),
        ("[0.35,0.50)", 19),
        ("[0.50,0.70)", 25),
        (">=0.70", 9),
    ]
    table = (out / "agreement.md").read_text()
    assert "| [0.35, 0.50) | 19 | 68.4% |" in table
    assert "| Overall | 100 | 84.0% |" in table
    page = (out / "agreement.html").read_text()
    assert page.count("<svg") == 3
    assert "<script" not in page
    assert "http" not in page.split("<svg")[0]
    assert "84.0%" in result.output


# ------------------------------------------------------------------------- golden hand-made cases


def test_perfect_agreement(tmp_path):
    pairs = [make_pair(f"p{k}", c) for k, c in enumerate([0.1, 0.3, 0.4, 0.6, 0.9, 0.15])]
    rows = [(p.pair_id, "a", "match" if p.cosine >= 0.35 else "no_match") for p in pairs]
    report = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=100)
    assert report.overall.agreement == 1.0
    assert report.overall.cohen_kappa == 1.0
    assert (report.overall.false_positives, report.overall.false_negatives) == (0, 0)
    assert report.overall.kappa_interval is not None
    assert report.overall.kappa_interval.high == 1.0


def test_chance_level_agreement_has_kappa_zero(tmp_path):
    """A 2x2 table with ad = bc: the matcher tells people nothing (observed = chance)."""
    pairs, rows = [], []
    for k in range(40):
        matcher_says = k < 20
        people_say = k % 2 == 0  # half of each matcher class
        pairs.append(make_pair(f"p{k}", 0.6 if matcher_says else 0.1))
        rows.append((f"p{k}", "a", "match" if people_say else "no_match"))
    report = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=200)
    assert report.overall.agreement == 0.5
    assert report.overall.cohen_kappa == pytest.approx(0.0, abs=1e-12)
    interval = report.overall.kappa_interval
    assert interval is not None
    assert interval.low < 0.0 < interval.high


def test_a_band_holding_one_class_only_has_no_kappa(tmp_path):
    pairs = [make_pair(f"low{k}", 0.05 + 0.01 * k) for k in range(8)]
    pairs += [make_pair(f"high{k}", 0.8) for k in range(4)]
    rows = [(p.pair_id, "a", "no_match") for p in pairs[:8]]
    rows += [
        ("high0", "a", "match"),
        ("high1", "a", "match"),
        ("high2", "a", "no_match"),
        ("high3", "a", "match"),
    ]
    report = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=100)
    low = report.by_band[0]
    assert (low.band, low.n, low.agreement) == ("<0.20", 8, 1.0)
    assert low.cohen_kappa is None
    assert low.kappa_interval is not None
    assert (low.kappa_interval.low, low.kappa_interval.n_undefined) == (None, 100)
    assert low.agreement_interval.low == pytest.approx(hand_wilson(8, 8)[0])
    top = report.by_band[-1]
    assert (top.n, top.agreement, top.false_positives) == (4, 0.75, 1)
    assert top.cohen_kappa == pytest.approx(0.0)  # the matcher says match throughout
    empty = report.by_band[1]
    assert (empty.n, empty.agreement, empty.cohen_kappa) == (0, None, None)


def test_a_single_annotator_has_no_human_ceiling(tmp_path):
    pairs = [make_pair(f"p{k}", c) for k, c in enumerate([0.1, 0.5, 0.7, 0.4])]
    rows = [
        ("p0", "ann", "no_match"),
        ("p1", "ann", "match"),
        ("p2", "ann", "match"),
        ("p3", "ann", "no_match"),
    ]
    report = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=50)
    humans = report.humans
    assert humans.annotators == ["ann"]
    assert humans.krippendorff_alpha is None
    assert humans.pairwise == []
    assert "one annotator" in humans.note
    (mine,) = report.matchers[0].by_annotator
    assert (mine.n, mine.agreement) == (4, 0.75)
    assert mine.cohen_kappa == pytest.approx(report.overall.cohen_kappa)
    assert mine.cohen_kappa == pytest.approx(hand_kappa(2, 1, 0, 1))


def three_annotators(tmp_path: Path):
    """Six pairs, three annotators (c unsure once), one tie settled by an adjudicator."""
    cosines = {"p1": 0.8, "p2": 0.1, "p3": 0.5, "p4": 0.4, "p5": 0.6, "p6": 0.9}
    votes = {
        "p1": ("match", "match", "match"),
        "p2": ("no_match", "no_match", "no_match"),
        "p3": ("match", "match", "no_match"),
        "p4": ("match", "no_match", "unsure"),
        "p5": ("no_match", "no_match", "match"),
        "p6": ("match", "match", "match"),
    }
    rows = [
        (pair_id, annotator, label, "annotator")
        for pair_id, labels in votes.items()
        for annotator, label in zip("abc", labels, strict=True)
    ]
    rows.append(("p4", "lead", "no_match", "adjudicator"))
    labels = labels_file(tmp_path, rows, ("pair_id", "annotator", "label", "role"))
    pairs = [make_pair(pair_id, cosine) for pair_id, cosine in cosines.items()]
    return pairs, labels


def test_three_annotators_with_one_adjudication(tmp_path):
    """Hand-computed: Krippendorff's alpha 11/35 from the coincidence matrix (o11 7, o00 4,
    o01 = o10 3); pairwise kappa a-b 2/3, a-c and b-c 1/6; matcher vs final 1/3."""
    pairs, labels = three_annotators(tmp_path)
    assert labels.statuses() == {"unanimous": 3, "majority": 2, "adjudicated": 1, "unresolved": 0}
    assert labels.pairs["p4"].final == "no_match"
    assert labels.pairs["p4"].adjudicator == "lead"
    assert labels.annotators == ["a", "b", "c"]  # the adjudicator is no annotator
    report = compute_agreement(pairs, labels, n_resamples=100)
    humans = report.humans
    assert humans.krippendorff_alpha == pytest.approx(11 / 35)
    assert humans.n_labels == 18
    assert humans.n_multiply_labelled == 6
    kappas = {(p.a, p.b): p.cohen_kappa for p in humans.pairwise}
    assert kappas[("a", "b")] == pytest.approx(2 / 3)
    assert kappas[("a", "c")] == pytest.approx(1 / 6)
    assert kappas[("b", "c")] == pytest.approx(1 / 6)
    assert humans.mean_pairwise_kappa == pytest.approx(1 / 3)
    overall = report.overall
    assert (overall.true_positives, overall.false_positives) == (3, 2)
    assert (overall.false_negatives, overall.true_negatives) == (0, 1)
    assert overall.cohen_kappa == pytest.approx(1 / 3)
    per_annotator = {p.b: p for p in report.matchers[0].by_annotator}
    assert per_annotator["a"].cohen_kappa == pytest.approx(4 / 7)
    assert per_annotator["c"].n == 5  # the unsure label abstains


def test_unresolved_and_unlabelled_pairs_are_counted_not_scored(tmp_path):
    pairs = [make_pair(f"p{k}", 0.5) for k in range(4)]
    rows = [
        ("p0", "a", "match"),
        ("p0", "b", "no_match"),
        ("p1", "a", "match"),
        ("p2", "a", "unsure"),
    ]
    report = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=0)
    assert (report.n_pairs, report.n_labelled, report.n_resolved) == (4, 3, 1)
    assert (report.n_unresolved, report.n_unlabelled) == (2, 1)
    assert report.overall.n == 1
    assert report.overall.kappa_interval is None


# ------------------------------------------------------------------------- libraries vs hand


def test_kappa_matches_the_written_out_formula_on_many_tables():
    rng = np.random.default_rng(3)
    for _ in range(200):
        tp, fp, fn, tn = (int(x) for x in rng.integers(0, 30, size=4))
        matcher = [True] * (tp + fp) + [False] * (fn + tn)
        people = [True] * tp + [False] * fp + [True] * fn + [False] * tn
        one_class = len(set(matcher) | set(people)) == 1
        if not matcher or one_class:
            assert cohen_kappa(matcher, people) is None  # p_e = 1: undefined
            continue
        assert cohen_kappa(matcher, people) == pytest.approx(hand_kappa(tp, fp, fn, tn))


def test_wilson_interval_matches_the_written_out_formula():
    for count, n in [(84, 100), (0, 9), (9, 9), (13, 19), (1, 2)]:
        low, high = wilson_interval(count, n)
        assert (low, high) == pytest.approx(hand_wilson(count, n))
    assert wilson_interval(0, 0) == (None, None)


def test_bootstrap_is_seeded_and_covers_the_estimate(tmp_path):
    pairs, rows = paper_pairs()
    labels = labels_file(tmp_path, rows)
    first = compute_agreement(pairs, labels, n_resamples=300, seed=7).overall.kappa_interval
    again = compute_agreement(pairs, labels, n_resamples=300, seed=7).overall.kappa_interval
    other = compute_agreement(pairs, labels, n_resamples=300, seed=8).overall.kappa_interval
    assert first == again
    assert first != other
    assert first.low < 0.685 < first.high


# ------------------------------------------------------------------------- threshold, calibration


def test_threshold_search_finds_the_cut_people_make(tmp_path):
    """People say match exactly from 0.55 up: kappa is 1 for tau in (0.45, 0.55]; among the
    tied grid points the one nearest the scored tau (0.35) wins: 0.46."""
    cosines = [0.1, 0.2, 0.3, 0.45, 0.55, 0.6, 0.8, 0.9]
    pairs = [make_pair(f"p{k}", c) for k, c in enumerate(cosines)]
    rows = [(p.pair_id, "a", "match" if p.cosine >= 0.55 else "no_match") for p in pairs]
    search = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=100).threshold_search
    assert search.best_threshold == pytest.approx(0.46)
    assert search.best_kappa == pytest.approx(1.0)
    assert 0.3 <= search.low <= search.best_threshold <= search.high <= 0.56
    at = {round(p.threshold, 2): p for p in search.curve}
    assert at[0.35].agreement == pytest.approx(7 / 8)
    assert at[0.35].cohen_kappa == pytest.approx(hand_kappa(4, 1, 0, 3))


def test_calibration_counts_human_matches_per_cosine_bin(tmp_path):
    pairs = [make_pair(f"p{k}", c) for k, c in enumerate([-0.2, 0.05, 0.12, 0.55, 0.58, 1.0])]
    rows = [
        ("p0", "a", "no_match"),
        ("p1", "a", "no_match"),
        ("p2", "a", "match"),
        ("p3", "a", "match"),
        ("p4", "a", "no_match"),
        ("p5", "a", "match"),
    ]
    bins = compute_agreement(pairs, labels_file(tmp_path, rows), n_resamples=0).calibration
    counts = [(b.low, b.n, b.human_match.count) for b in bins if b.n]
    assert counts == [(0.0, 2, 0), (0.1, 1, 1), (0.5, 2, 1), (0.9, 1, 1)]
    assert sum(b.n for b in bins) == 6


def test_decision_files_and_float32_threshold(tmp_path):
    """A matcher read from a file is scored on the same labels; the cosine test compares at
    float32 as the matcher does (0.35 in float32 passes a cosine of 0.35)."""
    pairs = [make_pair("p0", 0.35), make_pair("p1", 0.3499), make_pair("p2", 0.9)]
    rows = [("p0", "a", "match"), ("p1", "a", "no_match"), ("p2", "a", "no_match")]
    labels = labels_file(tmp_path, rows)
    other = {"p0": True, "p1": False, "p2": False}
    report = compute_agreement(
        pairs, labels, matchers={"perfect": ("from a file", other)}, n_resamples=0
    )
    by_name = {m.matcher: m for m in report.matchers}
    assert by_name["cosine>=0.35"].overall.false_positives == 1
    assert by_name["perfect"].overall.agreement == 1.0
