"""The fact guard in the HTML report, in a real browser (Debian chromium, Playwright): the
item view lists each veto with its reason and highlights the two conflicting stretches of
text; the leaderboard says which guard each run used; runs with different guards are marked
not comparable; the status filter finds the items with vetoes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_report_browser import ARTIFACTS, browser  # noqa: F401  (the module's chromium)

from crystalbench.config.scoring import ScoreConfig
from crystalbench.report import build_report
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import make_benchmark, make_item

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REFERENCE = ["The angle ABC is 40 degrees.", "The door is open.", "The side AB is 6 cm."]
COPIED = ["The angle ABC is 50 degrees.", "The door is not open.", "The side AB measures 6 cm."]


def _runs(tmp_path: Path) -> tuple[Path, Path, Any]:
    bench = make_benchmark(
        [
            make_item("copied", REFERENCE, answer="40"),
            make_item("honest", REFERENCE, answer="40"),
        ]
    )
    preds = [
        Prediction(id="copied", reasoning_steps=COPIED, answer="40"),
        Prediction(id="honest", reasoning_steps=REFERENCE, answer="40"),
    ]
    for guard in ("none", "facts"):
        config = ScoreConfig(encoder="hash", use_cache=False, guard=guard)
        evaluate(bench, preds, config, out_dir=tmp_path / guard)
    return tmp_path / "none", tmp_path / "facts", bench


def _open(browser: Any, html: Path, fragment: str = "") -> tuple[Any, list[str]]:  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(html.resolve().as_uri() + fragment)
    page.wait_for_selector("html[data-ready='1']")
    return page, errors


def test_the_item_view_shows_each_veto_with_its_reason_and_spans(browser, tmp_path):  # noqa: F811
    _, guarded, bench = _runs(tmp_path)
    html = build_report([guarded], tmp_path / "r.html", benchmark=bench, n_resamples=50)
    page, errors = _open(browser, html, "#item=copied&run=0")
    page.wait_for_selector("#item-view:not([hidden]) #iv-vetoes")
    vetoes = page.locator("#iv-vetoes li")
    assert vetoes.count() == 2
    # In the order the greedy walk reached them: highest cosine first.
    assert [vetoes.nth(i).get_attribute("data-reason") for i in range(2)] == [
        "negation",
        "number",
    ]
    number = " ".join(vetoes.nth(1).inner_text().split())
    assert number.startswith("P1 ↔ R1 · cos 0.7")
    assert "number 50 degrees vs 40 degrees" in number
    assert "facts" in page.locator("#iv-vetoes p").inner_text()
    # The conflicting stretches are highlighted inside both steps, nothing else is.
    assert page.locator("#pred-0 mark.veto-span").inner_text() == "50 degrees"
    assert page.locator("#ref-0 mark.veto-span").inner_text() == "40 degrees"
    assert page.locator("#pred-1 mark.veto-span").inner_text() == "not"
    assert page.locator("#pred-2 mark.veto-span").count() == 0
    assert "✕ R1 vetoed: number" in page.locator("#pred-0 .tag.veto").inner_text()
    assert page.locator("#iv-links path.link.veto").count() == 2
    # The vetoed copies match nothing (the FP tag); the honest paraphrase matches.
    assert page.locator("#pred-0 .tag.fp").count() == 1
    assert page.locator("#pred-2 .tag.fp").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-guard-item.png"))
    page.evaluate("window.crystalReport.openItem('honest', 0)")
    page.wait_for_selector("#iv-title:has-text('Item honest')")
    assert page.locator("#iv-vetoes").count() == 0
    assert page.locator("#iv-body mark").count() == 0
    page.keyboard.press("Escape")
    page.select_option("#f-status", "vetoed")
    assert page.locator("#items tbody button.open").all_inner_texts() == ["copied"]
    assert (
        "2 pairs vetoed in 1 item (number 1, negation 1)" in page.locator("#guard-0").inner_text()
    )
    assert errors == [], errors
    page.close()


def test_runs_with_different_guards_are_marked_not_comparable(browser, tmp_path):  # noqa: F811
    plain, guarded, _ = _runs(tmp_path)
    with pytest.warns(UserWarning, match="fact guard"):
        html = build_report(
            [plain, guarded], tmp_path / "r.html", names=["paper", "guarded"], n_resamples=50
        )
    page, errors = _open(browser, html)
    header = page.eval_on_selector_all(
        "#leaderboard thead th", "cells => cells.map(c => c.textContent.trim())"
    )
    assert header[:2] == ["Model", "Guard"]
    guards = page.eval_on_selector_all(
        "#leaderboard tbody td.guard", "cells => cells.map(c => c.textContent.trim())"
    )
    assert guards == ["none", "facts"]
    banners = page.locator("#warnings").inner_text()
    assert "different fact guards" in banners
    assert "not directly comparable" in banners
    row = page.locator("#provenance tr:has(th:text('Fact guard')) td")
    assert row.all_inner_texts() == ["none", "facts"]
    assert row.nth(0).get_attribute("class") == "differs"
    assert errors == [], errors
    page.close()
