"""The fact guard's worked examples in ``docs/metrics.md`` ("Fact-aware matching") are true:
every row of the rule table (verdict, reason and the two conflicting spans) and the doctest of
the two scopes."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from crystalbench.scoring.filters.guard import FactGuard

DOC = Path(__file__).resolve().parents[3] / "docs" / "metrics.md"
SECTION = "## Fact-aware matching (extension, not in the paper)"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    return text[start : following if following > 0 else len(text)]


def table_rows() -> list[list[str]]:
    body = section()
    table = body[body.index("<!-- fact-guard-examples -->") : body.index("<!-- /fact-guard")]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]  # no header
    return [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]


def test_the_table_has_examples_of_every_rule_both_ways():
    rows = table_rows()
    rules = {"number", "negation", "relation", "option", "colour", "binding", "computation"}
    assert {row[0] for row in rows} == rules
    for rule in ("number", "relation", "option", "colour", "binding", "computation"):
        verdicts = {row[4].split(":")[0] for row in rows if row[0] == rule}
        assert verdicts == {"vetoed", "kept"}, rule


@pytest.mark.parametrize("row", table_rows(), ids=lambda row: f"{row[0]}: {row[3]}")
def test_each_row_says_what_the_guard_does(row):
    rule, options, reference, predicted, verdict, spans = row
    guard = FactGuard([o.strip() for o in options.split(";")] if options else [])
    conflict = guard.check(predicted, reference)
    if verdict == "kept":
        assert conflict is None
        assert not spans
        return
    assert conflict is not None
    assert f"vetoed: {conflict.reason}" == verdict
    # the binding and computation rules report "number" (different values)
    assert conflict.reason == ("number" if rule in ("binding", "computation") else rule)
    pred_span, ref_span = re.fullmatch(r"`(.*)` / `(.*)`", spans).groups()
    assert (conflict.spans.pred.text, conflict.spans.ref.text) == (pred_span, ref_span)


def test_the_worked_example_of_the_two_scopes_runs():
    body = section()
    start = body.index("### A worked example: the two scopes")
    example = body[start : body.index("### In the scoring engine", start)]
    test = doctest.DocTestParser().get_doctest(example, {}, "metrics.md", str(DOC), 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
