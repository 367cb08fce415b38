"""Report loading, leaderboards (md/csv/tex), run comparisons, the HTML file and the CLI.

Results folders here are written by hand (golden per-item values), so the expected
leaderboard numbers are simple means a reader can check in their head.
"""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.errors import CrystalbenchError, InputError
from crystalbench.report import (
    ReportWarning,
    align_runs,
    build_report,
    compare_runs,
    leaderboard_rows,
    load_run,
    load_runs,
    render_csv,
    render_latex,
    render_markdown,
    thumbnail,
)

CONFIG = {
    "encoder": "hash",
    "threshold": 0.35,
    "alpha": 0.3,
    "order_metric": "lis",
    "compat": "none",
    "answer_rules": "paper",
    "package_version": "0.1.0",
    "benchmark": "handmade",
    "benchmark_fingerprint": "feedfacecafebeef",
    "created_at": "2026-01-01T00:00:00+00:00",
}


def make_item(
    item_id: str,
    *,
    source: str = "mathvision",
    difficulty: str = "easy",
    ref: list[str] | None = None,
    pred: list[str] | None = None,
    matches: list[tuple[int, int, float]] = (),  # type: ignore[assignment]
    out_of_order: list[tuple[int, int]] = (),  # type: ignore[assignment]
    correct: bool | None = True,
    pred_answer: str | None = "A",
    gold: str = "A",
    status: str = "json",
    missing: bool = False,
    lis: float = 1.0,
) -> dict[str, Any]:
    """One examples.jsonl record; P/R/F1 follow the contract from the counts given."""
    ref = ref if ref is not None else ["r1", "r2"]
    pred = pred if pred is not None else []
    m, n, tp = len(pred), len(ref), len(matches)
    if m == 0 and n == 0:
        p = r = f1 = 1.0
    elif m == 0 or n == 0:
        p = r = f1 = 0.0
    else:
        p, r = tp / m, tp / n
        f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    return {
        "id": item_id,
        "source": source,
        "difficulty": difficulty,
        "missing": missing,
        "parse_status": "missing" if missing else status,
        "n_pred": m,
        "n_ref": n,
        "matches": [list(x) for x in matches],
        "out_of_order": [list(x) for x in out_of_order],
        "precision": p,
        "recall": r,
        "f1": f1,
        "lis": lis,
        "kendall": lis,
        "ordered_f1": f1 * (0.7 + 0.3 * lis),
        "answer_correct": None if missing else correct,
        "answer_rule": "missing" if missing else "mc_letter",
        "answer_type": "multiple_choice",
        "pred_answer": None if missing else pred_answer,
        "gold_answer": gold,
        "pred_steps": pred,
        "ref_steps": ref,
    }


def _mean(items: list[dict[str, Any]], key: str) -> float:
    return sum(float(item[key]) for item in items) / len(items) if items else 0.0


def _metrics(items: list[dict[str, Any]]) -> dict[str, Any]:
    missing = sum(item["missing"] for item in items)
    failed = sum(item["parse_status"] in ("empty", "unparseable") for item in items)
    return {
        "n_items": len(items),
        "n_scored": len(items) - missing - failed,
        "n_missing": missing,
        "n_parse_failed": failed,
        "n_judge_unscored": sum(
            item["answer_correct"] is None and not item["missing"] for item in items
        ),
        "accuracy": sum(item["answer_correct"] is True for item in items) / max(1, len(items)),
        "match_f1": _mean(items, "f1"),
        "precision": _mean(items, "precision"),
        "recall": _mean(items, "recall"),
        "steps": _mean(items, "n_pred"),
        "lis": _mean(items, "lis"),
        "kendall": _mean(items, "kendall"),
        "ordered_f1": _mean(items, "ordered_f1"),
    }


def write_run(
    folder: Path, items: list[dict[str, Any]], *, model: str | None = None, **config: Any
) -> Path:
    """Write examples.jsonl and summary.json the way scoring does."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "examples.jsonl").open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item) + "\n")
    by_source = {
        s: _metrics([i for i in items if i["source"] == s])
        for s in sorted({i["source"] for i in items})
    }
    by_difficulty = {
        d: _metrics([i for i in items if i["difficulty"] == d])
        for d in ("easy", "medium", "hard")
        if any(i["difficulty"] == d for i in items)
    }
    summary = {
        **_metrics(items),
        "by_source": by_source,
        "by_difficulty": by_difficulty,
        "config": {**CONFIG, "model": model, **config},
    }
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder


def run_a_items() -> list[dict[str, Any]]:
    """Four items: F1 1.0, 0.5, 0.0 (missing), 1.0 (q4 out of order); accuracy 2/4."""
    return [
        make_item("q1", pred=["p1", "p2"], matches=[(0, 0, 0.9), (1, 1, 0.8)]),
        make_item(
            "q2",
            source="scienceqa",
            pred=["p1", "p2"],
            matches=[(1, 0, 0.6)],
            correct=False,
            pred_answer="B",
        ),
        make_item("q3", source="scienceqa", difficulty="hard", missing=True),
        make_item(
            "q4",
            ref=["r1", "r2", "r3"],
            pred=["p1", "p2", "p3"],
            matches=[(2, 0, 0.7), (0, 1, 0.5), (1, 2, 0.4)],
            out_of_order=[(2, 0)],
            lis=2 / 3,
            difficulty="medium",
        ),
    ]


def run_b_items() -> list[dict[str, Any]]:
    """Same ids; B is better on q2 and q3."""
    return [
        make_item("q1", pred=["p1", "p2"], matches=[(0, 0, 0.9), (1, 1, 0.8)]),
        make_item("q2", source="scienceqa", pred=["p1", "p2"], matches=[(0, 0, 0.9), (1, 1, 0.7)]),
        make_item(
            "q3",
            source="scienceqa",
            difficulty="hard",
            pred=["p1"],
            matches=[(0, 0, 0.8)],
            ref=["r1"],
        ),
        make_item(
            "q4",
            ref=["r1", "r2", "r3"],
            pred=["p1", "p2", "p3"],
            matches=[(2, 0, 0.7), (0, 1, 0.5), (1, 2, 0.4)],
            out_of_order=[(2, 0)],
            lis=2 / 3,
            difficulty="medium",
        ),
    ]


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a = write_run(tmp_path / "run-a", run_a_items(), model="model-a")
    b = write_run(tmp_path / "run-b", run_b_items(), model="model-b")
    return a, b


# --------------------------------------------------------------------------- loading


def test_load_run_reads_items_summary_and_name(two_runs):
    run = load_run(two_runs[0])
    assert run.name == "model-a"
    assert run.ids == ["q1", "q2", "q3", "q4"]
    assert run.values("accuracy").tolist() == [1.0, 0.0, 0.0, 1.0]
    assert run.values("match_f1").tolist() == [1.0, 0.5, 0.0, 1.0]
    assert run.values("steps").tolist() == [2.0, 2.0, 0.0, 3.0]
    assert run.provenance()["tau"] == 0.35
    assert run.provenance()["benchmark_fingerprint"] == "feedfacecafebeef"


def test_folder_name_when_no_model_and_duplicates_disambiguated(tmp_path):
    write_run(tmp_path / "x" / "same", run_a_items())
    write_run(tmp_path / "y" / "same", run_a_items())
    runs = load_runs([tmp_path / "x" / "same", tmp_path / "y" / "same"])
    assert runs[0].name != runs[1].name
    assert all(run.name.startswith("same") for run in runs)
    named = load_runs([tmp_path / "x" / "same"], names=["mine"])
    assert named[0].name == "mine"


def test_prompt_hash_from_a_manifest(tmp_path):
    folder = write_run(tmp_path / "r", run_a_items())
    (folder / "run.json").write_text(json.dumps({"inference": {"prompt_hash": "abc123"}}))
    assert load_run(folder).provenance()["prompt_hash"] == "abc123"


def test_missing_summary_is_an_input_error(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(InputError, match=r"summary\.json is missing"):
        load_run(folder)


def test_malformed_examples_line_names_file_line_and_field(two_runs):
    path = two_runs[0] / "examples.jsonl"
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["f1"] = "high"
    lines[1] = json.dumps(broken)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        load_run(two_runs[0])
    assert "examples.jsonl:2" in str(info.value)
    assert "field f1" in str(info.value)


def test_summary_disagreeing_with_items_warns(two_runs):
    path = two_runs[0] / "examples.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]))
    with pytest.warns(ReportWarning, match="counts 4 items but examples.jsonl holds 3"):
        load_run(two_runs[0])


def test_align_runs_by_id(tmp_path):
    a = load_run(write_run(tmp_path / "a", run_a_items()))
    b = load_run(write_run(tmp_path / "b", [*run_b_items()[1:], make_item("q9")]))
    alignment = align_runs(a, b)
    assert alignment.common == ["q2", "q3", "q4"]
    assert alignment.only_a == ["q1"]
    assert alignment.only_b == ["q9"]
    assert not alignment.identical


# --------------------------------------------------------------------------- leaderboard


def test_leaderboard_point_estimates_are_the_macro_means(two_runs):
    rows = leaderboard_rows(load_runs(list(two_runs)), n_resamples=200)
    a, b = rows
    assert a.metrics["accuracy"].estimate == 0.5
    assert a.metrics["match_f1"].estimate == pytest.approx(2.5 / 4)
    assert a.metrics["steps"].estimate == pytest.approx(7 / 4)
    assert b.metrics["match_f1"].estimate == 1.0
    assert b.metrics["accuracy"].estimate == 1.0
    # B is perfect everywhere: its F1 interval is degenerate; A's is not.
    assert (b.metrics["match_f1"].low, b.metrics["match_f1"].high) == (1.0, 1.0)
    assert a.metrics["match_f1"].low < a.metrics["match_f1"].estimate < a.metrics["match_f1"].high
    assert (a.n_items, a.n_missing, b.n_missing) == (4, 1, 0)


def test_leaderboard_sorting(two_runs):
    rows = leaderboard_rows(load_runs(list(two_runs)), n_resamples=50, sort_by="match_f1")
    assert [row.name for row in rows] == ["model-b", "model-a"]
    rows = leaderboard_rows(
        load_runs(list(two_runs)), n_resamples=50, sort_by="steps", descending=False
    )
    assert [row.name for row in rows] == ["model-a", "model-b"]  # 7/4 steps < 8/4
    with pytest.raises(KeyError):
        leaderboard_rows(load_runs(list(two_runs)), sort_by="nope")


def test_markdown_table_by_hand(two_runs):
    rows = leaderboard_rows(load_runs(list(two_runs)), n_resamples=50)
    text = render_markdown(rows, intervals=False)
    header = "| Model | Accuracy (%) | Match F1 | Precision | Recall | Steps | LIS | Ordered F1 |"
    assert text.splitlines() == [
        header + " Items | No steps | Missing | Parse fail |",
        "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        "| model-a | 50.00 | 0.625 | 0.625 | 0.625 | 1.75 | **0.917** | 0.600 | 4 | 0 | 1 | 0 |",
        "| model-b | **100.00** | **1.000** | **1.000** | **1.000** | 2.00 | **0.917** | **0.975** "
        "| 4 | 0 | 0 | 0 |",
    ]
    with_ci = render_markdown(rows)
    assert "**1.000** [1.000, 1.000]" in with_ci
    assert "50.00 [" in with_ci
    assert "95% percentile bootstrap" in with_ci


def test_csv_round_trips_full_precision(two_runs):
    rows = leaderboard_rows(load_runs(list(two_runs)), n_resamples=50)
    table = list(csv.DictReader(io.StringIO(render_csv(rows))))
    assert [r["model"] for r in table] == ["model-a", "model-b"]
    assert float(table[0]["match_f1"]) == 0.625
    assert float(table[0]["accuracy"]) == 0.5
    assert float(table[1]["match_f1_low"]) == 1.0
    assert table[0]["n_missing"] == "1"
    assert table[0]["n_resamples"] == "50"


def test_latex_escapes_names_and_bolds_best(tmp_path):
    a = write_run(tmp_path / "a", run_a_items(), model="gpt_5 & co")
    b = write_run(tmp_path / "b", run_b_items(), model="100% model")
    text = render_latex(leaderboard_rows(load_runs([a, b]), n_resamples=50))
    assert r"gpt\_5 \& co" in text
    assert r"100\% model" in text
    assert r"\textbf{100.00}" in text
    assert text.count(r"\\") >= 3  # header + two rows
    assert r"\toprule" in text
    assert r"\bottomrule" in text


# --------------------------------------------------------------------------- comparison


def test_compare_runs_on_identical_items(two_runs):
    a, b = load_runs(list(two_runs))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportWarning)
        result = compare_runs(a, b, n_resamples=200)
    assert (result.n_common, result.n_only_a, result.n_only_b) == (4, 0, 0)
    f1 = result.stats.metrics["match_f1"]
    assert f1.delta == pytest.approx(1.0 - 2.5 / 4)
    # Two items differ (q2: +0.5, q3: +1.0): exact sign-flip p = 2/4 for |1.5|... by hand:
    # patterns (+,+) 1.5, (+,-) -0.5, (-,+) 0.5, (-,-) -1.5 -> 2 of 4 reach 1.5.
    assert f1.permutation_exact
    assert f1.p_permutation == 0.5
    acc = result.stats.metrics["accuracy"]
    assert acc.delta == 0.5
    assert sorted(result.stats.by_group) == ["mathvision", "scienceqa"]
    assert result.stats.by_group["mathvision"]["match_f1"].delta == 0.0
    assert result.stats.by_group["scienceqa"]["match_f1"].delta == pytest.approx(0.75)


def test_compare_runs_intersects_loudly(tmp_path):
    a = load_run(write_run(tmp_path / "a", run_a_items(), model="a"))
    b = load_run(write_run(tmp_path / "b", [*run_b_items()[1:], make_item("q9")], model="b"))
    with pytest.warns(ReportWarning, match=r"only the 3 they share \(1 only in a, 1 only in b\)"):
        result = compare_runs(a, b, n_resamples=50)
    assert (result.n_common, result.n_only_a, result.n_only_b) == (3, 1, 1)
    assert result.stats.n == 3
    with pytest.raises(InputError, match="different items"):
        compare_runs(a, b, require_same_items=True)


def test_compare_runs_flags_different_scoring_settings(tmp_path):
    a = load_run(write_run(tmp_path / "a", run_a_items(), model="a"))
    b = load_run(write_run(tmp_path / "b", run_b_items(), model="b", threshold=0.5))
    with pytest.warns(ReportWarning, match="tau: 0.35 vs 0.5"):
        result = compare_runs(a, b, n_resamples=50)
    assert result.differences == ["tau: 0.35 vs 0.5"]


def test_compare_runs_with_no_shared_item_fails(tmp_path):
    a = load_run(write_run(tmp_path / "a", run_a_items()))
    b = load_run(write_run(tmp_path / "b", [make_item("other")]))
    with pytest.raises(InputError, match="share no item id"):
        compare_runs(a, b)


# --------------------------------------------------------------------------- HTML


def _embedded_data(html: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def test_report_is_self_contained(two_runs, tmp_path):
    out = build_report(list(two_runs), tmp_path / "out" / "report.html", n_resamples=100)
    html = out.read_text(encoding="utf-8")
    assert out.stat().st_mode & 0o044  # readable by others, like any exported file
    # Nothing is fetched: no external scripts, styles, fonts or images.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html
    assert "@import" not in html
    assert "url(" not in html
    assert "default-src 'none'" in html  # and the page forbids it anyway
    # Leaderboard and provenance are in the static HTML (readable without scripts).
    assert 'id="leaderboard"' in html
    assert 'id="provenance"' in html
    assert html.count('<tr data-run="') == 2


def test_report_embeds_the_per_item_alignment(two_runs, tmp_path):
    out = build_report(list(two_runs), tmp_path / "r.html", n_resamples=100)
    data = _embedded_data(out.read_text(encoding="utf-8"))
    assert [run["name"] for run in data["runs"]] == ["model-a", "model-b"]
    assert data["items"]["id"] == ["q1", "q2", "q3", "q4"]
    run_a = data["runs"][0]
    k = run_a["items"]["pos"].index(3)  # q4
    assert run_a["items"]["matches"][k] == [[2, 0, 0.7], [0, 1, 0.5], [1, 2, 0.4]]
    assert run_a["items"]["ooo"][k] == [[2, 0]]
    assert data["items"]["ref"][3] == ["r1", "r2", "r3"]
    # Failure lists by hand: q2 is wrong with F1 0.5 (neither list), q3 missing.
    assert run_a["failures"]["missing"] == [2]
    assert run_a["failures"]["weak_reasoning"] == []
    assert run_a["failures"]["sound_wrong"] == []
    assert run_a["failures"]["out_of_order"] == [3]
    assert data["comparisons"][0]["a"] == 0
    assert data["comparisons"][0]["b"] == 1
    assert data["meta"]["has_benchmark"] is False
    assert "--benchmark" in data["meta"]["image_note"]


def test_failure_lists_follow_the_thresholds(tmp_path):
    items = [
        make_item("weak", pred=["p"] * 5, ref=["r"] * 5, matches=[(0, 0, 0.5)]),  # F1 0.2, right
        make_item(
            "sound",
            pred=["p"] * 4,
            ref=["r"] * 4,
            matches=[(0, 0, 0.9), (1, 1, 0.8), (2, 2, 0.7)],
            correct=False,
        ),  # F1 0.75
        make_item("bad", status="unparseable", pred=[], correct=False, pred_answer=None),
    ]
    out = build_report([write_run(tmp_path / "r", items)], tmp_path / "r.html", n_resamples=20)
    failures = _embedded_data(out.read_text())["runs"][0]["failures"]
    assert failures["weak_reasoning"] == [0]
    assert failures["sound_wrong"] == [1]
    assert failures["parse_failed"] == [2]
    out = build_report(
        [tmp_path / "r"], tmp_path / "r2.html", n_resamples=20, weak_f1=0.1, sound_f1=0.8
    )
    failures = _embedded_data(out.read_text())["runs"][0]["failures"]
    assert failures["weak_reasoning"] == []
    assert failures["sound_wrong"] == []


def test_step_text_cannot_break_out_of_the_data_block(tmp_path):
    evil = "</script><script>alert(1)</script> <!-- x"
    items = [make_item("q1", pred=[evil], ref=[evil], matches=[(0, 0, 1.0)])]
    out = build_report([write_run(tmp_path / "r", items)], tmp_path / "r.html", n_resamples=20)
    html = out.read_text()
    assert "<script>alert(1)" not in html
    assert _embedded_data(html)["runs"][0]["items"]["steps"][0] == [evil]


def test_report_warns_about_mixed_settings(tmp_path):
    a = write_run(tmp_path / "a", run_a_items(), model="a")
    b = write_run(tmp_path / "b", run_b_items(), model="b", encoder="all-distilroberta-v1")
    seen: list[str] = []
    with pytest.warns(ReportWarning):
        out = build_report([a, b], tmp_path / "r.html", n_resamples=20, on_warning=seen.append)
    meta = _embedded_data(out.read_text())["meta"]
    assert any("different encoders" in w for w in meta["warnings"])
    assert any("different settings" in w for w in seen)


def test_baseline_by_name_and_bad_baseline(two_runs, tmp_path):
    out = build_report(list(two_runs), tmp_path / "r.html", n_resamples=20, baseline="model-b")
    comparison = _embedded_data(out.read_text())["comparisons"][0]
    assert (comparison["a"], comparison["b"]) == (1, 0)
    with pytest.raises(CrystalbenchError, match="unknown baseline run 'nobody'"):
        build_report(list(two_runs), tmp_path / "r.html", baseline="nobody")
    with pytest.raises(InputError, match="out of range"):
        build_report(list(two_runs), tmp_path / "r.html", baseline=5)


def test_thumbnail_downscales():
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (1000, 500), (200, 30, 30)).save(buffer, format="PNG")
    mime, payload = thumbnail(buffer.getvalue(), 384)
    import base64

    decoded = Image.open(io.BytesIO(base64.b64decode(payload)))
    assert decoded.size == (384, 192)
    assert mime in ("image/png", "image/jpeg")


# --------------------------------------------------------------------------- with a benchmark


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory) -> list[Path]:
    """Two sample prediction sets scored with the hash encoder."""
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data import SAMPLE_DIR, load_benchmark
    from crystalbench.data.predictions import load_predictions
    from crystalbench.scoring.evaluation import evaluate

    root = tmp_path_factory.mktemp("sample-results")
    bench = load_benchmark("sample")
    folders = []
    for style in ("terse-precise", "verbose-recall"):
        preds = load_predictions(SAMPLE_DIR / "predictions" / f"{style}.jsonl")
        evaluate(bench, preds, ScoreConfig(encoder="hash", use_cache=False), out_dir=root / style)
        folders.append(root / style)
    return folders


def test_report_with_benchmark_embeds_questions_and_images(sample_runs, tmp_path):
    from crystalbench.data import load_benchmark

    bench = load_benchmark("sample")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportWarning)
        out = build_report(sample_runs, tmp_path / "r.html", benchmark=bench, n_resamples=50)
    html = out.read_text()
    data = _embedded_data(html)
    with_image = sum(item.image is not None for item in bench.items)
    assert html.count('<script type="text/plain" id="img-') == with_image
    assert sum(data["items"]["image"]) == with_image
    first = bench.items[0]
    g = data["items"]["id"].index(first.id)
    assert data["items"]["question"][g] == first.question
    assert data["items"]["options"][g] == first.options
    assert data["meta"]["benchmark_fingerprint"] == bench.fingerprint


def test_fingerprint_mismatch_warns(sample_runs, tmp_path):
    summary_path = sample_runs[0] / "summary.json"
    original = summary_path.read_text()
    summary = json.loads(original)
    summary["config"]["benchmark_fingerprint"] = "0000000000000000"
    summary_path.write_text(json.dumps(summary))
    try:
        seen: list[str] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build_report(
                sample_runs,
                tmp_path / "r.html",
                benchmark="sample",
                n_resamples=20,
                embed_images=False,
                on_warning=seen.append,
            )
    finally:
        summary_path.write_text(original)
    assert any("scored on benchmark fingerprint 0000000000000000" in w for w in seen)
    # The comparison also notices that the two runs were scored on different benchmarks.
    assert any("benchmark fingerprint: '0000000000000000'" in w for w in seen)


# --------------------------------------------------------------------------- CLI


def test_cli_leaderboard_formats(two_runs, tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["leaderboard", *map(str, two_runs), "--output-format", "csv", "--resamples", "50"],
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["model"] for r in rows] == ["model-a", "model-b"]
    out = tmp_path / "table.tex"
    result = runner.invoke(
        app, ["leaderboard", *map(str, two_runs), "-f", "tex", "-o", str(out), "--sort", "match_f1"]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().index("model-b") < out.read_text().index("model-a")
    result = runner.invoke(app, ["leaderboard", str(two_runs[0]), "--output-format", "xlsx"])
    assert result.exit_code == 2
    assert "field output_format: Input should be 'md', 'csv' or 'tex'" in result.output
    assert "(from --output-format xlsx)" in result.output
    old = runner.invoke(app, ["leaderboard", str(two_runs[0]), "--format", "csv"])
    assert old.exit_code == 2  # 0.1.0 was never published: no old spellings are kept
    assert "No such option: --format" in old.output


def test_cli_compare_prints_tests_and_writes_json(two_runs, tmp_path):
    out = tmp_path / "cmp.json"
    result = CliRunner().invoke(
        app, ["compare", *map(str, two_runs), "--resamples", "100", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "Match F1" in result.stdout
    assert "By source" in result.stdout
    assert "+0.375" in result.stdout  # Δ Match F1 = 1.0 - 0.625
    saved = json.loads(out.read_text())
    assert saved["stats"]["metrics"]["accuracy"]["delta"] == 0.5


def test_cli_compare_warns_on_different_items(tmp_path):
    a = write_run(tmp_path / "a", run_a_items(), model="a")
    b = write_run(tmp_path / "b", run_b_items()[:2], model="b")
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--resamples", "20"])
    assert result.exit_code == 0, result.output
    assert "only the 2 they share" in result.output
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--same-items"])
    assert result.exit_code == 2


def test_cli_report_writes_html(two_runs, tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        app,
        [
            "report",
            *map(str, two_runs),
            "--out",
            str(out),
            "--resamples",
            "50",
            "--title",
            "My runs",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "<title>My runs</title>" in out.read_text()
    result = CliRunner().invoke(app, ["report", str(tmp_path / "nowhere"), "--out", str(out)])
    assert result.exit_code == 2
    assert "none of the paths given is a results folder" in result.output
    assert "no such file or folder" in result.output
