"""The HTML report in a real browser: Debian chromium driven by Playwright, page opened from disk.

The report is built from the bundled sample's five prediction styles (hash encoder by
default; set ``CRYSTALBENCH_REPORT_ENCODER=minilm-offline`` for the real offline encoder).
Screenshots land in ``test-artifacts/``; with ``CRYSTALBENCH_README_SCREENSHOT=path`` the
main view is also written there and the alignment view next to it as ``<stem>-item.png``
(that is how ``docs/images/report.png`` and ``report-item.png`` are made).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
STYLES = (
    "terse-precise",
    "verbose-recall",
    "scrambled-order",
    "right-answer-weak-reasoning",
    "messy-raw",
)
CHARTS = (
    "precision-recall",
    "accuracy-f1",
    "f1-by-length",
    "lis-distribution",
    "steps-per-item",
    "breakdown",
)


def _examples(folder: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (folder / "examples.jsonl").read_text().splitlines()]
    return {row["id"]: row for row in rows}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Any]:
    """Score the sample's styles and build the report (with images) once for the module."""
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data import SAMPLE_DIR, load_benchmark
    from crystalbench.data.predictions import load_predictions
    from crystalbench.encoders import load_encoder
    from crystalbench.report import build_report
    from crystalbench.scoring.evaluation import evaluate

    encoder_name = os.environ.get("CRYSTALBENCH_REPORT_ENCODER", "hash")
    root = tmp_path_factory.mktemp("report-browser")
    bench = load_benchmark("sample")
    encoder = load_encoder(encoder_name)
    config = ScoreConfig(encoder=encoder_name, use_cache=False)
    folders = []
    for style in STYLES:
        preds = load_predictions(SAMPLE_DIR / "predictions" / f"{style}.jsonl")
        evaluate(bench, preds, config, encoder=encoder, out_dir=root / style)
        folders.append(root / style)
    out = build_report(
        folders, root / "report.html", benchmark=bench, n_resamples=300, title="CRYSTAL sample"
    )
    return {"html": out, "folders": folders, "bench": bench, "encoder": encoder_name}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (make browser installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, built) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda message: (
            problems.append(f"{message.type}: {message.text}")
            if message.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on(
        "request",
        lambda request: (
            problems.append(f"request: {request.url}")
            if not request.url.startswith(("file:", "data:"))
            else None
        ),
    )
    page.goto(built["html"].resolve().as_uri())
    page.wait_for_selector("html[data-ready='1']", timeout=15000)
    page.problems = problems  # type: ignore[attr-defined]
    yield page
    assert problems == [], problems
    context.close()


def _leaderboard_names(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "#leaderboard tbody tr th", "cells => cells.map(c => c.textContent.trim())"
    )


def test_page_renders_leaderboard_and_charts(page, built):
    assert _leaderboard_names(page) == list(STYLES)
    for chart in CHARTS:
        marks = page.locator(f'svg[data-chart="{chart}"] .mark').count()
        assert marks > 0, chart
    # One precision/recall point per run, labelled with its name.
    labels = page.eval_on_selector_all(
        'svg[data-chart="precision-recall"] .mark text', "ts => ts.map(t => t.textContent)"
    )
    assert sorted(labels) == sorted(STYLES)
    # Pairwise comparisons against the first run, and the provenance table.
    assert page.locator("#compare .comparison").count() == len(STYLES) - 1
    provenance = page.locator("#provenance").inner_text()
    assert provenance.count(built["encoder"]) >= len(STYLES)
    assert built["bench"].fingerprint in provenance
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 1480})  # leaderboard and the first plots
    page.screenshot(path=str(ARTIFACTS / "report.png"))
    readme = os.environ.get("CRYSTALBENCH_README_SCREENSHOT")
    if readme:
        Path(readme).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ARTIFACTS / "report.png", readme)


def test_clicking_a_header_sorts_the_leaderboard(page, built):
    summaries = {
        folder.name: json.loads((folder / "summary.json").read_text())
        for folder in built["folders"]
    }
    by_f1 = sorted(summaries, key=lambda name: summaries[name]["match_f1"], reverse=True)
    assert by_f1 != list(STYLES)  # the click must change the order
    header = page.locator('#leaderboard th[data-key="match_f1"]')
    header.click()
    assert _leaderboard_names(page) == by_f1
    assert header.get_attribute("aria-sort") == "descending"
    header.click()
    assert _leaderboard_names(page) == by_f1[::-1]
    page.locator('#leaderboard th[data-key="name"]').click()
    assert _leaderboard_names(page) == sorted(STYLES)


def _item_with_out_of_order_pairs(folder: Path) -> dict[str, Any]:
    rows = [row for row in _examples(folder).values() if row["out_of_order"]]
    assert rows, "the scrambled sample style must produce out-of-order pairs"
    return max(rows, key=lambda row: (len(row["matches"]), row["id"]))


def _open_from_items_table(page: Any, run_index: int, item_id: str) -> None:
    page.select_option("#items-run", str(run_index))
    page.fill("#f-text", item_id)
    button = page.locator("#items tbody button.open", has_text=item_id).first
    button.wait_for(timeout=5000)
    button.click()
    page.wait_for_selector("#item-view:not([hidden]) #iv-links path.link", timeout=5000)


def _drawn_links(page: Any) -> list[tuple[int, int, float, bool]]:
    return page.eval_on_selector_all(
        "#iv-links path.link",
        """paths => paths.map(p => [+p.dataset.pred, +p.dataset.ref, +p.dataset.cos,
                                     p.classList.contains('ooo')])""",
    )


def test_opening_an_item_shows_its_matched_pairs(page, built):
    run_index = STYLES.index("scrambled-order")
    folder = built["folders"][run_index]
    row = _item_with_out_of_order_pairs(folder)
    _open_from_items_table(page, run_index, row["id"])
    assert row["id"] in page.locator("#iv-title").inner_text()
    out_of_order = {(i, j) for i, j in row["out_of_order"]}
    expected = sorted((i, j, round(cos, 3), (i, j) in out_of_order) for i, j, cos in row["matches"])
    drawn = sorted((i, j, round(c, 3), ooo) for i, j, c, ooo in _drawn_links(page))
    assert drawn == expected
    # Unmatched predictions are false positives, uncovered reference steps false negatives.
    assert page.locator("#iv-body li.step.fp").count() == row["n_pred"] - len(row["matches"])
    assert page.locator("#iv-body li.step.fn").count() == row["n_ref"] - len(row["matches"])
    assert page.locator("#iv-body .tag.ooo").count() == 2 * len(row["out_of_order"])
    # Question and image come from the benchmark; the image is decoded on demand.
    item = built["bench"].get(row["id"])
    assert item.question in page.locator("#iv-body .question").inner_text()
    assert page.locator("#iv-gold").inner_text() == row["gold_answer"]
    if item.image is not None:
        image = page.locator("#iv-body .item-image img")
        image.wait_for()
        page.wait_for_function(
            "() => document.querySelector('#iv-body .item-image img').naturalWidth > 0"
        )
    # Each line starts at its reference step and ends at its predicted step.
    geometry_ok = page.evaluate(
        """() => {
        const box = document.getElementById('iv-align').getBoundingClientRect();
        return [...document.querySelectorAll('#iv-links path.link')].every(p => {
          const ref = document.getElementById('ref-' + p.dataset.ref).getBoundingClientRect();
          const pred = document.getElementById('pred-' + p.dataset.pred).getBoundingClientRect();
          const d = p.getAttribute('d').match(/-?[0-9.]+/g).map(Number);
          const [x1, y1] = d.slice(0, 2), [x2, y2] = d.slice(-2);
          return Math.abs(x1 - (ref.right - box.left)) < 1
            && Math.abs(x2 - (pred.left - box.left)) < 1
            && y1 >= ref.top - box.top && y1 <= ref.bottom - box.top
            && y2 >= pred.top - box.top && y2 <= pred.bottom - box.top;
        });
      }"""
    )
    assert geometry_ok
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-item.png"))
    readme = os.environ.get("CRYSTALBENCH_README_SCREENSHOT")
    if readme:
        target = Path(readme)
        shutil.copyfile(ARTIFACTS / "report-item.png", target.with_name(target.stem + "-item.png"))
    # Switching the run tab shows the same item as another model answered it.
    other = STYLES.index("terse-precise")
    page.locator(f'#iv-body .run-tabs button[data-run="{other}"]').click()
    other_row = _examples(built["folders"][other])[row["id"]]
    drawn = sorted((i, j) for i, j, _, _ in _drawn_links(page))
    assert drawn == sorted((i, j) for i, j, _ in other_row["matches"])
    page.keyboard.press("Escape")
    assert page.locator("#item-view").is_hidden()


def test_failure_list_entry_opens_its_item(page, built):
    run_index = STYLES.index("right-answer-weak-reasoning")
    rows = _examples(built["folders"][run_index]).values()
    weak = sorted(
        (row for row in rows if row["answer_correct"] is True and row["f1"] < 0.3),
        key=lambda row: (row["f1"], row["id"]),
    )
    assert weak
    page.select_option("#fail-run", str(run_index))
    entries = page.locator("#list-weak_reasoning li button")
    assert page.locator("#list-weak_reasoning .count-badge").inner_text() == str(len(weak))
    entries.first.click()
    page.wait_for_selector("#item-view:not([hidden])")
    assert f"Item {weak[0]['id']} " in page.locator("#iv-title").inner_text()
    assert "correct" in page.locator("#iv-verdict").inner_text()
    if len(weak) > 1:
        page.locator("#iv-next").click()
        assert f"Item {weak[1]['id']} " in page.locator("#iv-title").inner_text()


def test_hash_link_opens_an_item(browser, built):
    run_index = STYLES.index("scrambled-order")
    row = _item_with_out_of_order_pairs(built["folders"][run_index])
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(built["html"].resolve().as_uri() + f"#item={row['id']}&run={run_index}")
    page.wait_for_selector("#item-view:not([hidden]) #iv-links path.link", timeout=5000)
    assert len(_drawn_links(page)) == len(row["matches"])
    context.close()


def test_phone_layout_fits_the_screen(browser, built):
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(built["html"].resolve().as_uri())
    page.wait_for_selector("html[data-ready='1']")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"page scrolls sideways on a phone ({width}px)"
    run_index = STYLES.index("scrambled-order")
    row = _item_with_out_of_order_pairs(built["folders"][run_index])
    page.evaluate(f"window.crystalReport.openItem({json.dumps(row['id'])}, {run_index})")
    page.wait_for_selector("#iv-links path.link")
    assert len(_drawn_links(page)) == len(row["matches"])
    assert page.evaluate("document.querySelector('.sheet').scrollWidth") <= 390
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-phone-item.png"))
    assert errors == []
    context.close()


def _write_results(folder: Path, items: list[dict[str, Any]], model: str) -> Path:
    """A results folder written through the real records and aggregator."""
    from crystalbench._internal.io import atomic_write_json, write_jsonl
    from crystalbench.scoring.evaluation import Aggregator
    from crystalbench.types import ItemResult

    results = [ItemResult.model_validate(item) for item in items]
    aggregator = Aggregator()
    for result in results:
        aggregator.add(result)
    write_jsonl(folder / "examples.jsonl", results)
    summary = aggregator.summary({"encoder": "hash", "threshold": 0.35, "model": model})
    atomic_write_json(folder / "summary.json", summary.model_dump(mode="json"))
    return folder


def _record(item_id: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": item_id,
        "source": "mmvp",
        "difficulty": "easy",
        "missing": False,
        "parse_status": "json",
        "n_pred": 1,
        "n_ref": 1,
        "matches": [[0, 0, 0.9]],
        "out_of_order": [],
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "lis": 1.0,
        "kendall": 1.0,
        "ordered_f1": 1.0,
        "answer_correct": True,
        "answer_rule": "exact",
        "answer_type": "free_form",
        "pred_answer": "a <b>bold</b> answer",
        "gold_answer": "x",
        "pred_steps": ["<img src=x onerror=alert(1)> step"],
        "ref_steps": ["reference"],
    }
    return {**base, **changes}


def test_edge_cases_render_without_errors(browser, tmp_path):
    """Missing items, parse failures, empty chains, different item sets, hostile text."""
    from crystalbench.report import build_report

    nothing = {
        "n_pred": 0,
        "matches": [],
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "ordered_f1": 0.0,
        "pred_steps": [],
        "answer_correct": None,
        "pred_answer": None,
    }
    x = _write_results(
        tmp_path / "x",
        [
            _record("shared"),
            _record("gone", missing=True, parse_status="missing", answer_rule="missing", **nothing),
            _record("garbled", parse_status="unparseable", **{**nothing, "answer_correct": False}),
            _record("terse", parse_status="answer_only", **{**nothing, "pred_answer": "B"}),
            _record("reasoner", parse_status="thinking_sentences"),
        ],
        "model-x",
    )
    y = _write_results(tmp_path / "y", [_record("shared"), _record("only-y")], "model-y")
    from crystalbench.report import ReportWarning

    with pytest.warns(ReportWarning, match=r"only the 1 they share \(4 only in model-x"):
        html = build_report([x, y], tmp_path / "r.html", n_resamples=50)
    single = build_report([y], tmp_path / "single.html", n_resamples=50)
    for path in (html, single):
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        page.on(
            "console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None
        )
        page.on("dialog", lambda dialog, errors=errors: errors.append("dialog: " + dialog.message))
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("html[data-ready='1']")
        if path == single:
            assert "One run only" in page.locator("#compare").inner_text()
        else:
            # Each status filter shows exactly its own items (one of each here).
            for status in ("failed", "nosteps", "think"):
                page.select_option("#f-status", status)
                assert page.locator("#items tbody button.open").count() == 1, status
            page.select_option("#f-status", "missing")
            assert page.locator("#items tbody button.open").count() == 1
            page.locator("#items tbody button.open").first.click()
            assert "No prediction for this item." in page.locator("#iv-body").inner_text()
            page.keyboard.press("Escape")
            # "only-y" is not in run x: opening it from run x shows run y's view.
            page.evaluate("window.crystalReport.openItem('only-y', 0)")
            assert (
                page.locator('#iv-body .run-tabs button[aria-pressed="true"]')
                .inner_text()
                .startswith("model-y")
            )
            assert page.locator("#iv-body img").count() == 0  # the step text stayed text
            assert "<b>bold</b>" in page.locator("#iv-pred").inner_text()
        assert errors == [], errors
        page.close()


def test_an_item_scored_against_a_partial_order_says_which_steps_may_swap(browser, tmp_path):
    """A chart item whose two readings are interchangeable (``reference_precedence``): the
    item view says so above the alignment and on each of the two steps; the item without a
    precedence shows neither."""
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.report import build_report
    from crystalbench.scoring.evaluation import evaluate
    from crystalbench.types import Prediction
    from fakes import make_benchmark, make_item

    chart = ["The bar for May is 40.", "The bar for June is 55.", "June minus May is 15."]
    bench = make_benchmark(
        [
            make_item("partial", chart, answer="15", reference_precedence=[[0, 2], [1, 2]]),
            make_item("plain", chart, answer="15"),
        ]
    )
    swapped = [chart[1], chart[0], chart[2]]
    preds = [Prediction(id=i, reasoning_steps=swapped, answer="15") for i in ("partial", "plain")]
    evaluate(bench, preds, ScoreConfig(encoder="hash", use_cache=False), out_dir=tmp_path / "run")
    html = build_report([tmp_path / "run"], tmp_path / "r.html", benchmark=bench, n_resamples=50)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(html.resolve().as_uri() + "#item=partial&run=0")
    page.wait_for_selector("#item-view:not([hidden]) #iv-links path.link", timeout=5000)
    note = page.locator("#iv-order").inner_text()
    assert "steps R1 and R2 may come in either order" in note
    assert "reference_precedence" in note
    assert page.locator("#ref-0 .tag.free").inner_text() == "⇄ R2"
    assert page.locator("#ref-1 .tag.free").inner_text() == "⇄ R1"
    assert page.locator("#ref-2 .tag.free").count() == 0
    assert "LIS 1.000" in " ".join(page.locator("#iv-metrics").inner_text().split())
    assert page.locator("#iv-body .tag.ooo").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-partial-order.png"))
    page.evaluate("window.crystalReport.openItem('plain', 0)")
    page.wait_for_selector("#iv-title:has-text('Item plain')")
    assert page.locator("#iv-order").count() == 0
    assert page.locator("#iv-body .tag.free").count() == 0
    assert page.locator("#iv-body .tag.ooo").count() == 2  # the paper's order: one pair out
    assert errors == [], errors
    page.close()


@pytest.mark.parametrize("width", [1400, 1280])
def test_the_leaderboard_fits_a_laptop_screen(browser, built, width):
    """At 1,400 px (and 1,280) nothing of the leaderboard is cut off or needs a sideways
    scroll: the table fits its box and the page does not scroll sideways. Before, the last
    columns ("Pair acc (%)") ran out of the 1,248 px of content and were hidden."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(built["html"].resolve().as_uri())
    page.wait_for_selector("html[data-ready='1']")
    sizes = page.evaluate(
        """() => { const table = document.getElementById('leaderboard');
        const box = table.parentElement;
        return {page: document.documentElement.scrollWidth, table: table.scrollWidth,
                box: box.clientWidth, boxScroll: box.scrollWidth,
                right: table.getBoundingClientRect().right,
                boxRight: box.getBoundingClientRect().right,
                headers: table.querySelectorAll('thead th').length}; }"""
    )
    assert sizes["headers"] == 14, sizes  # model, 7 metrics, 4 counts, 2 MMVP pair columns
    assert sizes["page"] <= width, sizes
    assert sizes["boxScroll"] <= sizes["box"], sizes
    assert sizes["right"] <= sizes["boxRight"] + 0.5, sizes
    last = page.locator("#leaderboard thead th").last
    box = last.bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= width
    context.close()
