"""A run where most items have no prediction says so: in the terminal, in summary.json's
``warnings`` and in the HTML report (issue 30: 35 of 40 items missing printed "Accuracy
12.50" with no word)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR
from crystalbench.metrics import missing_warning
from crystalbench.report import build_report

runner = CliRunner()
TERSE = SAMPLE_DIR / "predictions" / "terse-precise.jsonl"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))


def _score(tmp_path: Path, lines: int | None, name: str):
    records = TERSE.read_text(encoding="utf-8").splitlines()
    preds = tmp_path / f"{name}.jsonl"
    preds.write_text("\n".join(records[:lines]) + "\n", encoding="utf-8")
    out = tmp_path / name
    args = ["score", "-b", "sample", "-p", str(preds), "-o", str(out), "--encoder", "hash"]
    result = runner.invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    return out, result


def _report_warnings(out: Path, tmp_path: Path) -> list[str]:
    html = build_report([out], tmp_path / f"{out.name}.html", n_resamples=10).read_text()
    pattern = r'<script type="application/json" id="report-data">(.*?)</script>'
    match = re.search(pattern, html, re.S)
    assert match is not None
    return json.loads(match.group(1))["meta"]["warnings"]


def test_most_items_missing_warns_everywhere(tmp_path):
    out, result = _score(tmp_path, 5, "five")
    expected = missing_warning(35, 40)
    assert expected is not None
    assert expected.startswith("35 of 40 items (88%) have no prediction")
    said = " ".join(result.stderr.split())
    assert f"warning: {expected}" in said
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_missing"] == 35
    assert summary["warnings"] == [expected]
    assert any(expected in warning for warning in _report_warnings(out, tmp_path))


def test_quiet_still_warns(tmp_path):
    records = TERSE.read_text(encoding="utf-8").splitlines()
    preds = tmp_path / "two.jsonl"
    preds.write_text("\n".join(records[:2]) + "\n", encoding="utf-8")
    args = ["score", "-b", "sample", "-p", str(preds), "-o", str(tmp_path / "q")]
    result = runner.invoke(app, [*args, "--encoder", "hash", "-q"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "38 of 40 items (95%) have no prediction" in " ".join(result.stderr.split())


def test_a_full_run_has_no_warning_and_an_unchanged_summary(tmp_path):
    out, result = _score(tmp_path, None, "full")
    assert "warning" not in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert "warnings" not in summary  # the file of a run without one stays as it was
    assert not any("no prediction" in w for w in _report_warnings(out, tmp_path))


def test_half_missing_is_not_most():
    assert missing_warning(20, 40) is None
    assert missing_warning(21, 40) is not None
    assert missing_warning(1, 1) == (
        "1 of 1 item (100%) has no prediction: it scores 0 and every mean is over all 1 item, "
        "so these numbers mostly measure what is missing (check the predictions file and the "
        "item ids)"
    )
