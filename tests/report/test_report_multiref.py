"""The report with several reference chains per item (and, below, MMVP pairs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from crystalbench.encoders import OneHotEncoder
from crystalbench.report import build_report
from crystalbench.scoring.evaluation import evaluate
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


def test_the_report_shows_pair_accuracy(tmp_path):
    meta = [{"pair": 0, "pair_items": ["m1", "m2"]}, {"pair": 0, "pair_items": ["m1", "m2"]}]
    bench = make_benchmark(
        [
            make_item(
                "m1", ["a"], source="mmvp", answer="(a)", options=["L", "R"], metadata=meta[0]
            ),
            make_item(
                "m2", ["b"], source="mmvp", answer="(b)", options=["L", "R"], metadata=meta[1]
            ),
            make_item(
                "m3", ["c"], source="mmvp", answer="(a)", options=["L", "R"], metadata={"pair": 1}
            ),
        ]
    )
    preds = [
        Prediction(id=i, reasoning_steps=["a"], answer=a)
        for i, a in (("m1", "A"), ("m2", "B"), ("m3", "A"))
    ]
    evaluate(bench, preds, HASH_CONFIG, encoder=OneHotEncoder(TABLE), out_dir=tmp_path / "run")
    out = build_report([tmp_path / "run"], tmp_path / "r.html", n_resamples=20)
    data = _data(out)
    pairs = data["runs"][0]["pairs"]
    assert (pairs["n_pairs"], pairs["n_pairs_right"], pairs["n_pairs_incomplete"]) == (2, 1, 1)
    html = out.read_text(encoding="utf-8")
    assert 'data-key="pair_accuracy"' in html
    assert ">50.00</td>" in html
