"""Label files: the review app's export, plain CSV and JSONL; bad files name file/line/field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from validation_helpers import make_pair, write_labels_csv, write_pairs_jsonl

from crystalbench.cli.main import app
from crystalbench.errors import InputError
from crystalbench.validation.agreement import compute_agreement
from crystalbench.validation.labels import read_decisions, read_labels
from fakes import write_jsonl

runner = CliRunner()


def export_line(pair_id: str, final, status: str, labels, **extra):
    """One line as ``crystal review export --kind pairs`` writes it."""
    record = {
        "pair_id": pair_id,
        "item_id": f"item-{pair_id}",
        "final_label": final,
        "final_status": status,
        "labels": [
            {"annotator": a, "label": label, "time": "2026-11-30T10:00:00+00:00"}
            for a, label in labels
        ],
        "revisions": [],
        "adjudication": None,
        "n_labels": len(labels),
        "quota": 3,
        "gold": False,
    }
    record.update(extra)
    return record


def test_review_export_is_read_as_the_app_decided(tmp_path):
    path = write_jsonl(
        tmp_path / "export.jsonl",
        [
            export_line("p1", "match", "unanimous", [("ann", "match"), ("bob", "match")]),
            export_line(
                "p2",
                "no_match",
                "adjudicated",
                [("ann", "match"), ("bob", "no_match")],
                adjudication={"adjudicator": "lead", "label": "no_match", "reason": "numbers"},
            ),
            export_line("p3", "unsure", "majority", [("ann", "unsure"), ("bob", "unsure")]),
            export_line("p4", None, "unresolved", [("ann", "match"), ("bob", "no_match")]),
            export_line("g1", "match", "unanimous", [("ann", "match")], gold=True),
        ],
    )
    labels = read_labels(path)
    assert labels.kind == "review-export"
    assert labels.n_gold_skipped == 1
    assert "g1" not in labels.pairs
    assert labels.pairs["p1"].final == "match"
    assert labels.pairs["p1"].status == "unanimous"
    assert labels.pairs["p2"].final == "no_match"
    assert labels.pairs["p2"].adjudicator == "lead"
    assert labels.pairs["p3"].final is None
    assert labels.pairs["p3"].status == "unresolved"
    assert labels.pairs["p4"].final is None
    assert labels.annotators == ["ann", "bob"]
    assert labels.pairs["p2"].votes[0].time == "2026-11-30T10:00:00+00:00"
    pairs = [make_pair(p, c) for p, c in [("p1", 0.8), ("p2", 0.6), ("p3", 0.1), ("p4", 0.4)]]
    report = compute_agreement(pairs, labels, n_resamples=0)
    assert (report.n_resolved, report.n_unresolved) == (2, 2)
    assert report.overall.false_positives == 1  # p2: cosine 0.6, people say no


def test_plain_csv_with_empty_rows_roles_and_extra_columns(tmp_path):
    """A filled-in ``pairs.blind.csv``: extra columns are ignored, rows left empty skipped."""
    path = write_labels_csv(
        tmp_path / "blind.csv",
        [
            ("p1", "item-1", "step a", "step b", "ann", "match"),
            ("p2", "item-2", "step c", "step d", "", ""),
            ("p1", "item-1", "step a", "step b", "bob", "no_match"),
        ],
        ("pair_id", "item_id", "pred_step", "ref_step", "annotator", "label"),
    )
    labels = read_labels(path)
    assert labels.kind == "plain"
    assert labels.n_empty_skipped == 1
    assert list(labels.pairs) == ["p1"]
    assert labels.pairs["p1"].status == "unresolved"


def test_plain_jsonl_and_a_mixed_file(tmp_path):
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"pair_id": "p1", "annotator": "ann", "label": "match"},
            {"pair_id": "p1", "annotator": "bob", "label": "match"},
            {"pair_id": "p1", "annotator": "cy", "label": "no_match"},
            export_line("p2", "match", "unanimous", [("dee", "match")]),
        ],
    )
    labels = read_labels(path)
    assert labels.kind == "mixed"
    assert labels.pairs["p1"].final == "match"
    assert labels.pairs["p1"].status == "majority"
    assert labels.pairs["p2"].final == "match"
    assert labels.lines == {"p2": 4, "p1": 1}


@pytest.mark.parametrize(
    ("rows", "line", "field", "words"),
    [
        ([{"pair_id": "p1", "annotator": "ann", "label": "yes"}], 1, "label", "must be one of"),
        ([{"pair_id": "p1", "label": "match"}], 1, "annotator", "non-empty string"),
        ([{"annotator": "ann", "label": "match"}], 1, "pair_id", "missing"),
        (
            [
                {"pair_id": "p1", "annotator": "ann", "label": "match"},
                {"pair_id": "p1", "annotator": "ann", "label": "no_match"},
            ],
            2,
            "annotator",
            "twice (first on line 1)",
        ),
        (
            [{"pair_id": "p1", "annotator": "ann", "label": "match", "role": "boss"}],
            1,
            "role",
            "annotator, adjudicator",
        ),
        (
            [{"pair_id": "p1", "annotator": "ann", "label": "unsure", "role": "adjudicator"}],
            1,
            "label",
            "an adjudicator decides",
        ),
        ([export_line("p1", "match", "done", [])], 1, "final_status", "must be one of"),
        ([export_line("p1", "maybe", "unanimous", [])], 1, "final_label", "or null"),
        (
            [export_line("p1", "match", "unanimous", [("ann", "match"), ("ann", "match")])],
            1,
            "labels.1.annotator",
            "twice",
        ),
        (
            [
                export_line("p1", "match", "unanimous", []),
                export_line("p1", "match", "unanimous", []),
            ],
            2,
            "pair_id",
            "duplicate",
        ),
    ],
)
def test_bad_label_files_name_file_line_and_field(tmp_path, rows, line, field, words):
    path = write_jsonl(tmp_path / "labels.jsonl", rows)
    with pytest.raises(InputError) as caught:
        read_labels(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    assert words in error.message


def test_bad_csv_files(tmp_path):
    missing = write_labels_csv(tmp_path / "a.csv", [("p1", "match")], ("pair_id", "label"))
    with pytest.raises(InputError, match="header lacks annotator") as caught:
        read_labels(missing)
    assert caught.value.line == 1
    ragged = tmp_path / "b.csv"
    ragged.write_text("pair_id,annotator,label\np1,ann,match,extra\n")
    with pytest.raises(InputError, match="more cells") as caught:
        read_labels(ragged)
    assert caught.value.line == 2
    latin = tmp_path / "c.csv"
    latin.write_bytes("pair_id,annotator,label\np1,Jos\xe9,match\n".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        read_labels(latin)
    empty = write_labels_csv(
        tmp_path / "d.csv", [("p1", "", "")], ("pair_id", "annotator", "label")
    )
    with pytest.raises(InputError, match="holds no label"):
        read_labels(empty)
    with pytest.raises(InputError, match="not found"):
        read_labels(tmp_path / "none.csv")


def test_a_label_for_an_unknown_pair_names_its_line(tmp_path):
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"pair_id": "p1", "annotator": "a", "label": "match"},
            {"pair_id": "zz", "annotator": "a", "label": "match"},
        ],
    )
    with pytest.raises(InputError) as caught:
        compute_agreement([make_pair("p1", 0.5)], read_labels(path), n_resamples=0)
    assert (caught.value.line, caught.value.field) == (2, "pair_id")
    assert "not in the pairs file" in caught.value.message


def test_the_command_line_reports_bad_files_without_a_traceback(tmp_path):
    pairs = write_pairs_jsonl(tmp_path / "pairs.jsonl", [make_pair("p1", 0.5)])
    labels = write_jsonl(
        tmp_path / "labels.jsonl", [{"pair_id": "p1", "annotator": "a", "label": "Match"}]
    )
    result = runner.invoke(
        app,
        [
            "validate",
            "agreement",
            "--pairs",
            str(pairs),
            "--labels",
            str(labels),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 2
    assert f"{labels}:1: field label: must be one of match, no_match, unsure" in result.output
    assert "Traceback" not in result.output
    bad_pairs = write_jsonl(tmp_path / "bad.jsonl", [{"pair_id": "p1", "cosine": "high"}])
    result = runner.invoke(
        app,
        [
            "validate",
            "agreement",
            "--pairs",
            str(bad_pairs),
            "--labels",
            str(labels),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 2
    assert f"{bad_pairs}:1: field" in result.output


def test_decision_files(tmp_path):
    path = write_labels_csv(
        tmp_path / "d.csv",
        [("p1", "gpt-judge", "match"), ("p2", "gpt-judge", "no_match"), ("p1", "other", "match")],
        ("pair_id", "matcher", "decision"),
    )
    assert read_decisions(path) == {"gpt-judge": {"p1": True, "p2": False}, "other": {"p1": True}}
    bad = write_jsonl(tmp_path / "d.jsonl", [{"pair_id": "p1", "matcher": "m", "decision": 1}])
    with pytest.raises(InputError) as caught:
        read_decisions(bad)
    assert (caught.value.line, caught.value.field) == (1, "decision")
    twice = write_jsonl(
        tmp_path / "t.jsonl",
        [{"pair_id": "p1", "matcher": "m", "decision": "match"}] * 2,
    )
    with pytest.raises(InputError, match="twice"):
        read_decisions(twice)


def test_decisions_given_on_the_command_line_are_compared(tmp_path):
    pairs = write_pairs_jsonl(
        tmp_path / "pairs.jsonl", [make_pair("p1", 0.5), make_pair("p2", 0.6)]
    )
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"pair_id": "p1", "annotator": "a", "label": "match"},
            {"pair_id": "p2", "annotator": "a", "label": "no_match"},
        ],
    )
    decisions = write_jsonl(
        tmp_path / "judge.jsonl",
        [
            {"pair_id": "p1", "matcher": "mine", "decision": "match"},
            {"pair_id": "p2", "matcher": "mine", "decision": "no_match"},
        ],
    )
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "validate",
            "agreement",
            "--pairs",
            str(pairs),
            "--labels",
            str(labels),
            "--decisions",
            str(decisions),
            "--out",
            str(out),
            "--resamples",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "agreement.json").read_text())
    by_name = {m["matcher"]: m["overall"] for m in data["matchers"]}
    assert by_name["mine"]["agreement"] == 1.0
    assert by_name["cosine>=0.35"]["agreement"] == 0.5
    assert Path(out / "agreement.md").read_text().count("| mine |") == 1
