"""The fact guard in ``crystal validate agreement``: cosine at tau, cosine with the guard and
any other matcher scored against the same human labels, overall and by cosine band, so a
user measures the guard on their own labels.

The pairs are the issue's table (MiniLM cosines as the issue measured them); "people" say
that the five contradictions are no match and the two paraphrases are.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from validation_helpers import make_pair, write_pairs_jsonl

from crystalbench.cli.main import app
from crystalbench.errors import InputError
from crystalbench.validation.agreement import compute_agreement, guard_decisions
from crystalbench.validation.labels import read_labels
from crystalbench.validation.render import agreement_markdown
from fakes import write_jsonl

ISSUE_TABLE = [
    # (reference step, predicted step, same fact?, cosine)
    ("The angle ABC is 40 degrees.", "The angle ABC is 50 degrees.", False, 0.891),
    (
        "The red bar is taller than the blue bar.",
        "The red bar is shorter than the blue bar.",
        False,
        0.942,
    ),
    ("The door is open.", "The door is not open.", False, 0.849),
    ("There are 3 apples on the table.", "There are 7 apples on the table.", False, 0.839),
    ("The left console is the smallest.", "The middle console is the smallest.", False, 0.899),
    ("The area is 16 square units.", "The area equals 16.", True, 0.850),
    ("Count the unit cells: 16.", "There are 16 unit cells.", True, 0.878),
    # below tau: nobody matches it, the guard never reads it
    ("The door is open.", "The chart has five bars.", False, 0.120),
]
runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    pairs = [
        make_pair(f"p{k}", cosine, ref_step=ref, pred_step=pred)
        for k, (ref, pred, _, cosine) in enumerate(ISSUE_TABLE)
    ]
    labels = [
        {"pair_id": f"p{k}", "annotator": "a", "label": "match" if same else "no_match"}
        for k, (_, _, same, _) in enumerate(ISSUE_TABLE)
    ]
    return (
        pairs,
        write_pairs_jsonl(tmp_path / "pairs.jsonl", pairs),
        write_jsonl(tmp_path / "labels.jsonl", labels),
    )


def test_the_guard_is_scored_against_the_same_labels_by_band(files):
    pairs, _, labels_file = files
    report = compute_agreement(pairs, read_labels(labels_file), guard="facts", n_resamples=0)
    by_name = {m.matcher: m for m in report.matchers}
    cosine, guarded = by_name["cosine>=0.35"], by_name["cosine>=0.35+facts"]
    assert (cosine.overall.n, guarded.overall.n) == (8, 8)  # the same labelled pairs
    assert (cosine.overall.false_positives, cosine.overall.agreement) == (5, 3 / 8)
    assert (guarded.overall.false_positives, guarded.overall.false_negatives) == (0, 0)
    assert guarded.overall.agreement == 1.0
    # By band: the contradictions sit in the top bands, where the guard makes the difference.
    top = {m.matcher: m.by_band[-1] for m in report.matchers}
    assert top["cosine>=0.35"].n == top["cosine>=0.35+facts"].n == 7
    assert top["cosine>=0.35+facts"].false_positives == 0
    assert by_name["cosine>=0.35"].by_band[0].agreement == 1.0  # below tau: both say no
    markdown = agreement_markdown(report)
    assert "### Every matcher by cosine band" in markdown
    assert "| ≥ 0.70 | `cosine>=0.35+facts` | 7 | 100.0% |" in markdown


def test_guard_decisions_read_only_pairs_at_or_above_tau(files):
    pairs, _, _ = files
    decisions = guard_decisions(pairs, 0.35)
    assert [decisions[f"p{k}"] for k in range(len(ISSUE_TABLE))] == [
        same for _, _, same, _ in ISSUE_TABLE
    ]
    # With tau above every cosine nothing matches, whatever the guard says.
    assert not any(guard_decisions(pairs, 0.95).values())


def test_option_texts_need_the_items_options():
    pair = make_pair(
        "o", 0.9, pred_step="The producer is the fox.", ref_step="The producer is the grass."
    )
    assert guard_decisions([pair], 0.35) == {"o": True}
    options = {pair.item_id: ["fox", "grass", "frog"]}
    assert guard_decisions([pair], 0.35, options=options) == {"o": False}


def test_the_command_scores_the_guard_and_refuses_the_step_scope(files, tmp_path):
    _, pairs_file, labels_file = files
    args = ["validate", "agreement", "--pairs", str(pairs_file), "--labels", str(labels_file)]
    out = tmp_path / "out"
    result = runner.invoke(app, [*args, "--out", str(out), "--resamples", "0"])
    assert result.exit_code == 0, result.output
    assert "cosine>=0.35+facts: 8 pairs, agreement 100.0%" in result.output
    data = json.loads((out / "agreement.json").read_text())
    assert [m["matcher"] for m in data["matchers"]] == ["cosine>=0.35", "cosine>=0.35+facts"]
    assert "Every matcher by cosine band" in (out / "agreement.html").read_text()
    none = runner.invoke(app, [*args, "--out", str(tmp_path / "n"), "--guard", "none"])
    assert none.exit_code == 0, none.output
    names = [
        m["matcher"] for m in json.loads((tmp_path / "n/agreement.json").read_text())["matchers"]
    ]
    assert names == ["cosine>=0.35"]
    strict = runner.invoke(app, [*args, "--out", str(tmp_path / "s"), "--guard", "facts-strict"])
    assert strict.exit_code == 2
    assert "whole chains" in strict.output
    with pytest.raises(InputError, match="only the pair rule"):
        compute_agreement([], read_labels(labels_file), guard="facts-strict")
