"""The report with several reference chains per item (and, below, MMVP pairs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from crystalbench.encoders import OneHotEncoder
from crystalbench.report import build_report
from crystalbench.scoring import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item

TABLE = {name: [1.0 if k == j else 0.0 for j in range(6)] for k, name in enumerate("abcdef")}


def _data(path: Path) -> dict:
    html = path.read_text(encoding="utf-8")
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def test_the_item_view_gets_every_chain_and_the_scored_one(tmp_path):
    bench = make_benchmark(
        [
            make_item("q1", ["c", "d"], reference_chains=[["a", "b"], ["e"]]),
            make_item("q2", ["a", "f"]),
        ]
    )
    preds = [
        Prediction(id="q1", reasoning_steps=["a", "b"], answer="3"),
        Prediction(id="q2", reasoning_steps=["a"], answer="3"),
    ]
    evaluate(bench, preds, HASH_CONFIG, encoder=OneHotEncoder(TABLE), out_dir=tmp_path / "run")
    out = build_report([tmp_path / "run"], tmp_path / "r.html", benchmark=bench, n_resamples=20)
    data = _data(out)
    items = data["runs"][0]["items"]
    g1, g2 = data["items"]["id"].index("q1"), data["items"]["id"].index("q2")
    k1, k2 = items["pos"].index(g1), items["pos"].index(g2)
    assert (items["rc"][k1], items["nrc"][k1]) == (1, 3)
    assert (items["rc"][k2], items["nrc"][k2]) == (0, 1)
    assert data["items"]["chains"][g1] == [["c", "d"], ["a", "b"], ["e"]]
    assert data["items"]["chains"][g2] is None  # one chain: the usual view
    assert data["runs"][0]["counts"]["n_alt_chain_won"] == 1
    assert "iv-chains" in out.read_text(encoding="utf-8")  # the view that lists them
