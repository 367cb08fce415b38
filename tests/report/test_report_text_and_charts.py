"""The report's small texts and chart rules (issue 30): labels of a crowded scatter never
overlap, answers in LaTeX read as plain text, counts are pluralised, the baseline is the
first run given and the page says how it was chosen, and one qualifying item draws no LIS
distribution. The chart code runs in Node (as the browser runs it) where Node exists."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from crystalbench.report import build_report
from crystalbench.scoring.evaluation import evaluate

ASSETS = Path(__file__).resolve().parents[2] / "src" / "crystalbench" / "report" / "assets"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the page's script")


def _charts(script: str) -> object:
    """Run ``script`` against charts.js in Node; it prints one JSON value."""
    assert NODE is not None
    prelude = (
        "global.window = {};\n"
        f"eval(require('fs').readFileSync({json.dumps(str(ASSETS / 'charts.js'))}, 'utf8'));\n"
        "const C = window.CrystalCharts;\n"
    )
    done = subprocess.run(
        [NODE, "-e", prelude + script], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout)


@needs_node
def test_crowded_scatter_labels_never_overlap():
    boxes = _charts(
        """
const pts = [0, 1, 2, 3, 4, 5].map(i => ({x: 0.5 + i * 0.002, y: 0.5, label: "model-" + i}));
const box = {};
C.scatter(box, {name: "s", points: pts});
const re = new RegExp('<text x="([\\\\d.-]+)" y="([\\\\d.-]+)" font-size="(\\\\d+)"' +
  '[^>]*text-anchor="(\\\\w+)">(model-\\\\d)<', "g");
const out = [];
for (const t of box.innerHTML.matchAll(re)) {
  const x = +t[1], y = +t[2], f = +t[3], w = t[5].length * f * 0.58;
  const x0 = t[4] === "start" ? x : x - w;
  out.push([x0, x0 + w, y - f, y + 2]);
}
console.log(JSON.stringify(out));
"""
    )
    assert isinstance(boxes, list)
    assert len(boxes) == 6
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            overlap = a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]
            assert not overlap, (a, b)


@needs_node
def test_latex_answers_read_as_plain_text_and_counts_are_pluralised():
    got = _charts(
        r"""
const answers = ["\\frac{3}{2}", "$\\frac{3}{2}$", "\\dfrac{\\sqrt{3}}{2}", "45^\\circ",
  "\\frac{x+1}{2}", "B", "12,450", "\\text{12 cm}", "50\\%"];
console.log(JSON.stringify({math: answers.map(C.plainMath),
  plural: [C.plural(1, "parse failure"), C.plural(2, "parse failure"), C.plural(1, "item")]}));
"""
    )
    assert got == {
        "math": ["3/2", "3/2", "√3/2", "45°", "(x+1)/2", "B", "12,450", "12 cm", "50%"],
        "plural": ["1 parse failure", "2 parse failures", "1 item"],
    }


def test_the_page_counts_in_words_that_agree_with_the_number():
    script = (ASSETS / "report.js").read_text()
    for wrong in ('" parse failures, "', '" items, " + c.n_scored', '" shared items"'):
        assert wrong not in script
    assert 'plural(c.n_parse_failed, "parse failure")' in script
    assert "answerHtml(ITEMS.gold[g])" in script  # answers go through plainMath


def _data(html: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    from crystalbench.data import SAMPLE_DIR, load_benchmark
    from crystalbench.data.predictions import load_predictions
    from fakes import HASH_CONFIG

    root = tmp_path_factory.mktemp("runs")
    bench = load_benchmark("sample")
    folders = []
    for name in ("zeta-terse", "alpha-verbose"):  # given out of alphabetical order
        style = "terse-precise" if name == "zeta-terse" else "verbose-recall"
        preds = load_predictions(SAMPLE_DIR / "predictions" / f"{style}.jsonl")
        evaluate(bench, preds, HASH_CONFIG, out_dir=root / name)
        folders.append(root / name)
    return folders


def test_the_baseline_is_the_first_run_given_and_the_page_says_how(two_runs, tmp_path):
    data = _data(build_report(two_runs, tmp_path / "a.html", n_resamples=10).read_text())
    assert data["runs"][data["meta"]["baseline"]]["name"] == "terse-precise"  # zeta-terse/, first
    assert data["meta"]["baseline_given"] is False
    chosen = build_report(two_runs, tmp_path / "b.html", n_resamples=10, baseline=1)
    meta = _data(chosen.read_text())["meta"]
    assert (meta["baseline"], meta["baseline_given"]) == (1, True)
    script = (ASSETS / "report.js").read_text()
    assert "the first run given; <code>crystal report --baseline RUN</code> picks another" in script


def test_one_qualifying_item_draws_no_lis_distribution():
    """The LIS chart of a run with a single item of two or more matches would be a 100 %
    spike: the script draws no line for it and writes a note under the chart instead."""
    script = (ASSETS / "report.js").read_text()
    assert "values: h.n > 1 ? h.shares" in script
    assert "too few to draw a distribution" in script
    assert 'id="lis-note"' in (ASSETS / "report.html").read_text()
