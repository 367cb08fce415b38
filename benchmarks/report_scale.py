"""How the HTML report scales to CRYSTAL's size: build time, file size, browser load time.

Writes synthetic results folders shaped like the full benchmark (6,372 items, mean 11.6
reference steps, realistic step lengths and match patterns), builds the report, and, when
Debian chromium and Playwright are present, opens it from disk and times:

- load: navigation until the page's script has rendered everything (``data-ready``);
- open item: clicking an item in the explorer until its alignment lines are drawn;
- filter: typing a search into the explorer until the table updates.

Usage::

    .venv/bin/python benchmarks/report_scale.py [--items 6372] [--runs 3] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

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
SOURCES = (
    ("mathvision", 3039),
    ("scienceqa", 2017),
    ("realworldqa", 765),
    ("mmvp", 299),
    ("plotqa", 252),
)
WORDS = [
    "the",
    "figure",
    "shows",
    "a",
    "triangle",
    "with",
    "sides",
    "labelled",
    "and",
    "the",
    "angle",
    "at",
    "the",
    "vertex",
    "is",
    "marked",
    "so",
    "we",
    "compute",
    "the",
    "area",
    "using",
    "the",
    "formula",
    "then",
    "compare",
    "both",
    "values",
    "and",
    "conclude",
    "the",
    "answer",
]


def _sentence(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(8, 18)))).capitalize() + "."


def write_results(root: Path, n_items: int, n_runs: int, seed: int = 0) -> list[Path]:
    """Synthetic results folders with ``n_items`` items each (same ids in every run)."""
    rng = np.random.default_rng(seed)
    weights = np.array([n for _, n in SOURCES], dtype=float)
    sources = rng.choice([s for s, _ in SOURCES], size=n_items, p=weights / weights.sum())
    n_ref = np.clip(rng.poisson(11.6, size=n_items), 3, 42)
    refs = [[_sentence(rng) for _ in range(k)] for k in n_ref]
    folders = []
    for run in range(n_runs):
        folder = root / f"model-{run}"
        folder.mkdir(parents=True, exist_ok=True)
        f1s, accs = [], []
        with (folder / "examples.jsonl").open("w", encoding="utf-8") as handle:
            for i in range(n_items):
                m = int(np.clip(rng.poisson(4 + 3 * run), 0, 40))
                n = int(n_ref[i])
                tp = int(min(m, n, rng.binomial(min(m, n), 0.6 + 0.1 * run))) if m else 0
                pred_idx = rng.permutation(m)[:tp] if m else []
                ref_idx = np.sort(rng.permutation(n)[:tp])
                matches = [
                    [int(p), int(r), round(float(rng.uniform(0.35, 0.95)), 4)]
                    for p, r in zip(pred_idx, ref_idx, strict=True)
                ]
                p = tp / m if m else 0.0
                r = tp / n
                f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
                correct = bool(rng.random() < 0.4 + 0.1 * run)
                f1s.append(f1)
                accs.append(correct)
                record = {
                    "id": str(i),
                    "source": str(sources[i]),
                    "difficulty": "easy" if n < 9 else "medium" if n < 16 else "hard",
                    "missing": False,
                    "parse_status": "json",
                    "n_pred": m,
                    "n_ref": n,
                    "matches": matches,
                    "out_of_order": [],
                    "precision": p,
                    "recall": r,
                    "f1": f1,
                    "lis": 1.0,
                    "kendall": 1.0,
                    "ordered_f1": f1,
                    "answer_correct": correct,
                    "answer_rule": "exact",
                    "answer_type": "free_form",
                    "pred_answer": "x",
                    "gold_answer": "x",
                    "pred_steps": [_sentence(rng) for _ in range(m)],
                    "ref_steps": refs[i],
                }
                handle.write(json.dumps(record) + "\n")
        summary = {
            "n_items": n_items,
            "n_scored": n_items,
            "n_missing": 0,
            "n_parse_failed": 0,
            "n_judge_unscored": 0,
            "accuracy": float(np.mean(accs)),
            "match_f1": float(np.mean(f1s)),
            "precision": 0.0,
            "recall": 0.0,
            "steps": 0.0,
            "lis": 1.0,
            "kendall": 1.0,
            "ordered_f1": float(np.mean(f1s)),
            "by_source": {},
            "by_difficulty": {},
            "config": {"model": f"model-{run}"},
        }
        (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
        folders.append(folder)
    return folders


def time_browser(html: Path) -> dict[str, float] | None:
    """Load, open-item and filter times in headless chromium, or None without a browser."""
    if not Path(CHROMIUM).exists():
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        began = time.perf_counter()
        page.goto(html.resolve().as_uri(), timeout=120_000)
        page.wait_for_selector("html[data-ready='1']", timeout=120_000)
        load = time.perf_counter() - began
        began = time.perf_counter()
        page.locator("#items tbody button.open").first.click()
        page.wait_for_selector("#item-view:not([hidden]) #iv-align", timeout=30_000)
        open_item = time.perf_counter() - began
        page.keyboard.press("Escape")
        began = time.perf_counter()
        page.fill("#f-text", "triangle area")
        page.wait_for_function(
            "() => document.querySelector('#items-pager').textContent.length > 0", timeout=30_000
        )
        page.wait_for_timeout(250)  # the search is debounced by 200 ms
        filtering = time.perf_counter() - began
        browser.close()
    return {"load_s": load, "open_item_s": open_item, "filter_s": filtering}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6372)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()

    import warnings

    from crystalbench.report import build_report

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        began = time.perf_counter()
        folders = write_results(root, args.items, args.runs)
        print(
            f"wrote {args.runs} synthetic runs x {args.items} items "
            f"in {time.perf_counter() - began:.1f}s"
        )
        began = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = build_report(folders, root / "report.html", n_resamples=args.resamples)
        build = time.perf_counter() - began
        size = out.stat().st_size / 1e6
        print(
            f"build_report: {build:.1f}s, {size:.1f} MB "
            f"({args.resamples} resamples, {args.runs - 1} comparisons)"
        )
        timings = time_browser(out)
        if timings is None:
            print("browser timings skipped (no chromium or playwright)")
        else:
            print("chromium: " + ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))
        print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
