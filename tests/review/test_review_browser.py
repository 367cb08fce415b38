"""The review app in a real browser: Debian chromium driven by Playwright against the app on
a loopback uvicorn server (SQLite).

Covers logging in, labelling pairs with the keyboard, reviewing a chain (step flags, reason,
verdict by key), image zoom, adjudication (a note is required to override a majority), the
admin page and an export download, hostile text shown as text, and a tablet viewport. Every
page must load without a console error (a Content-Security-Policy violation is one).

Screenshots land in ``test-artifacts/``; with ``CRYSTALBENCH_README_SCREENSHOTS=docs/images``
they are also copied there as ``review-*.png`` (that is how the README's are made).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_support import PASSWORD, Browser, ReviewServer, make_users
from sqlalchemy import select

from crystalbench.data import SAMPLE_DIR
from crystalbench.review.db import Database
from crystalbench.review.importing import import_path
from crystalbench.review.models import Adjudication, Annotation, Task, User
from crystalbench.review.settings import ReviewSettings

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
HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(2)>"
SAMPLE_IDS = [
    "mathvision-01",
    "scienceqa-01",
    "plotqa-01",
    "mmvp-01",
    "realworldqa-01",
    "mathvision-02",
]


def _screenshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"review-{name}.png"
    page.screenshot(path=str(path))
    target = os.environ.get("CRYSTALBENCH_README_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(target) / path.name)


def _sample_rows() -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (SAMPLE_DIR / "benchmark.jsonl").read_text().splitlines()]
    return {row["id"]: row for row in rows}


def _references_folder(folder: Path) -> Path:
    """Sample items as a references output folder: provenance per step, images copied."""
    rows = _sample_rows()
    (folder / "images").mkdir(parents=True)
    models = ["qwen2.5-vl-7b", "internvl3-8b", "llava-ov-7b", "gemma-3-12b"]
    records = []
    for index, item_id in enumerate(SAMPLE_IDS[:3]):
        row = dict(rows[item_id])
        image = Path(row["image"]).name
        shutil.copyfile(SAMPLE_DIR / row["image"], folder / "images" / image)
        row["image"] = f"images/{image}"
        steps = row["reference_steps"][:6]
        if index == 2:
            steps = [*steps[:2], HOSTILE]
        row["reference_steps"] = steps
        if index == 1:  # its first two steps may come in either order
            row["reference_precedence"] = [[0, 2], [1, 2]] + [
                [k, k + 1] for k in range(2, len(steps) - 1)
            ]
        row["metadata"] = {
            "reference_round": 1,
            "reference_provenance": [
                {
                    "support": 4 - (k % 3),
                    "models": models[: 4 - (k % 3)],
                    "members": [step, step.replace("The ", "This ")] if k % 2 == 0 else [step],
                }
                for k, step in enumerate(steps)
            ],
        }
        records.append(row)
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _pairs_file(path: Path, prefix: str = "p") -> Path:
    """Step pairs from the sample: a prediction's step beside a reference step."""
    rows = _sample_rows()
    predictions = {
        json.loads(line)["id"]: json.loads(line)
        for line in (SAMPLE_DIR / "predictions" / "verbose-recall.jsonl").read_text().splitlines()
    }
    pairs = []
    for index, item_id in enumerate(SAMPLE_IDS):
        reference = rows[item_id]["reference_steps"][2]
        words = set(reference.lower().split())
        steps = predictions[item_id]["reasoning_steps"]
        closest = max(steps, key=lambda step: len(words & set(step.lower().split())))
        pairs.append(
            {
                "pair_id": f"{prefix}{index}",
                "item_id": item_id,
                "model": "verbose-recall",
                "pred_step": HOSTILE if index == 5 else closest,
                "ref_step": reference,
                "cosine": 0.41 + index / 100,
                "band": "[0.35,0.50)",
            }
        )
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path


@pytest.fixture(scope="module")
def app_server(tmp_path_factory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("review-browser")
    db = Database(f"sqlite:///{root / 'review.sqlite'}")
    import_path(db, _references_folder(root / "refs"), actor="test")
    import_path(
        db, _pairs_file(root / "pairs.jsonl"), benchmark="sample", annotators=3, actor="test"
    )
    make_users(db, ["ana", "ben", "cleo"])
    make_users(db, ["judge"], role="adjudicator")
    make_users(db, ["admin"], role="admin")
    with ReviewServer(db, ReviewSettings(gold_every=0)) as server:
        yield {"db": db, "server": server, "root": root}
    db.dispose()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (make browser installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def _context(browser: Any, **options: Any) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(**{"viewport": {"width": 1366, "height": 900}, **options})
    context.set_default_timeout(15000)
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on(
        "dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss())
    )
    return context, page, problems


def _login(page: Any, server: Any, name: str) -> None:
    page.goto(server.url + "/")
    page.wait_for_url("**/login?next=/")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(server.url + "/")


def _wait_ready(page: Any) -> None:
    page.wait_for_selector("html[data-ready='1']")


def _labels(db: Any, kind: str) -> list[tuple[str, str, str]]:
    with db.read() as session:
        rows = session.execute(
            select(User.name, Task.external_id, Annotation.label)
            .join(User, User.id == Annotation.user_id)
            .join(Task, Task.id == Annotation.task_id)
            .where(Task.kind == kind)
            .order_by(Annotation.id)
        ).all()
    return [tuple(row) for row in rows]


def test_login_and_label_pairs_with_the_keyboard(browser, app_server):
    server, db = app_server["server"], app_server["db"]
    context, page, problems = _context(browser)
    page.goto(server.url + "/login")
    page.fill("input[name=name]", "ana")
    page.fill("input[name=password]", "wrong password")
    page.press("input[name=password]", "Enter")
    assert "Wrong name or password" in page.locator(".message.error").inner_text()
    problems.clear()  # the 401 page load is reported as a console error by chromium
    page.fill("input[name=name]", "ana")
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(server.url + "/")
    page.click("[data-testid=start-pair]")
    _wait_ready(page)
    assert page.locator("[data-testid=progress]").is_visible()
    assert "you: 0" in page.locator("[data-testid=progress]").inner_text()
    _screenshot(page, "pair")
    keys = ["m", "n", "u", "1", "2", "m"]
    for number, key in enumerate(keys):
        _wait_ready(page)
        url = page.url
        assert f"you: {number}" in page.locator("[data-testid=progress]").inner_text()
        if number == 5:  # the hostile predicted step is shown as text, nothing runs
            assert page.locator("[data-testid=pred-step]").inner_text() == HOSTILE
        page.keyboard.press(key)
        page.wait_for_url(lambda u, old=url: u != old)
    page.wait_for_selector("[data-testid=done]")
    assert [label for _, _, label in _labels(db, "pair")] == [
        "match",
        "no_match",
        "unsure",
        "match",
        "no_match",
        "match",
    ]
    assert {name for name, _, _ in _labels(db, "pair")} == {"ana"}
    # back (B) reopens the last pair with its label, and answering again revises it
    page.goto(server.url + "/tasks/" + str(_task_id(db, "pair", "p5")))
    _wait_ready(page)
    assert "You labelled this pair" in page.locator("main").inner_text()
    page.keyboard.press("b")
    page.wait_for_url("**/tasks/*")
    _wait_ready(page)
    assert page.url.endswith(f"/tasks/{_task_id(db, 'pair', 'p4')}")
    assert problems == [], problems
    context.close()


def _task_id(db: Any, kind: str, external: str) -> int:
    with db.read() as session:
        return int(
            session.execute(
                select(Task.id).where(Task.kind == kind, Task.external_id == external)
            ).scalar_one()
        )


def test_review_a_chain_with_flags_and_a_reason(browser, app_server):
    server, db = app_server["server"], app_server["db"]
    context, page, problems = _context(browser)
    _login(page, server, "ben")
    page.click("[data-testid=start-chain]")
    _wait_ready(page)
    assert page.locator(".chain-step").count() == 6
    assert page.locator(".support").first.inner_text() == "support 4"
    assert page.locator("[data-testid=answer]").inner_text() == "10"
    # zoom with the keyboard, then fit again
    page.keyboard.press("=")
    page.keyboard.press("=")
    transform = page.eval_on_selector(".zoom-view img", "i => i.style.transform")
    assert "scale(1.5625)" in transform
    page.keyboard.press("0")
    assert "scale(1)" in page.eval_on_selector(".zoom-view img", "i => i.style.transform")
    # step 2 is not visible, step 3 wrong; reject without a reason is stopped in the page
    page.keyboard.press("j")
    page.keyboard.press("v")
    page.keyboard.press("j")
    page.keyboard.press("w")
    page.keyboard.press("k")
    page.keyboard.press("u")
    assert page.locator(".chain-step.current").get_attribute("data-step") == "1"
    page.keyboard.press("r")
    assert "Choose a reason" in page.locator("[data-hint]").inner_text()
    page.keyboard.press("1")
    page.keyboard.press("n")
    page.keyboard.type("The triangle's side labels are unreadable.")
    page.keyboard.press("Escape")
    page.set_viewport_size({"width": 1366, "height": 1280})
    page.evaluate("window.scrollTo(0, 0)")
    _screenshot(page, "chain")
    url = page.url
    assert page.locator("[data-testid=interchangeable]").count() == 0
    assert page.locator(".chain-step .free").count() == 0
    page.keyboard.press("r")
    page.wait_for_url(lambda u: u != url)
    _wait_ready(page)
    # the second chain's first two steps may come in either order (reference_precedence)
    note = " ".join(page.locator("[data-testid=interchangeable]").inner_text().split())
    assert "steps 1 and 2." in note
    assert page.locator("[data-testid=free-0]").inner_text() == "⇄ 2"
    assert page.locator("[data-testid=free-1]").inner_text() == "⇄ 1"
    assert page.locator(".chain-step .free").count() == 2
    _screenshot(page, "chain-partial-order")
    page.keyboard.press("a")  # the second chain: accepted as it is
    page.wait_for_url(lambda u: u != url)
    _wait_ready(page)
    assert page.locator("[data-testid=step-2]").inner_text() == HOSTILE
    page.keyboard.press("a")
    page.wait_for_selector("[data-testid=done]")
    with db.read() as session:
        rows = (
            session.execute(
                select(Annotation).join(Task).where(Task.kind == "chain").order_by(Annotation.id)
            )
            .scalars()
            .all()
        )
    assert [r.label for r in rows] == ["reject", "accept", "accept"]
    first = rows[0]
    assert first.reason == "not_visible"
    assert first.note == "The triangle's side labels are unreadable."
    assert first.step_flags == [[], ["not_visible", "unjustified"], ["wrong"], [], [], []]
    assert first.duration_ms is not None
    assert first.duration_ms > 0
    assert problems == [], problems
    context.close()


def test_accept_with_flags_or_a_reason_asks_for_confirmation(browser, tmp_path):
    """Accept pressed with a step flagged and a reject reason chosen shows a question instead
    of sending; Esc goes back to the chain, Y accepts anyway (flags kept, reason dropped).
    Before, the chain was accepted without a word and the reason silently thrown away."""
    db = Database(f"sqlite:///{tmp_path / 'review.sqlite'}")
    import_path(db, _references_folder(tmp_path / "refs"), actor="test")
    make_users(db, ["dana"])
    try:
        with ReviewServer(db, ReviewSettings(gold_every=0)) as server:
            context, page, problems = _context(browser)
            _login(page, server, "dana")
            page.click("[data-testid=start-chain]")
            _wait_ready(page)
            url = page.url
            box = page.locator("[data-testid=confirm-accept]")
            assert box.is_hidden()
            page.keyboard.press("j")
            page.keyboard.press("w")  # step 2 is wrong
            page.keyboard.press("3")  # reason: a step is wrong
            page.keyboard.press("a")
            box.wait_for(state="visible")
            text = box.inner_text()
            assert "You pressed Accept, but step 2 is flagged" in text
            assert "the reject reason 'A step is wrong' is chosen" in text
            assert page.url == url
            assert _labels(db, "chain") == []
            _screenshot(page, "chain-confirm-accept")
            page.keyboard.press("Escape")
            assert box.is_hidden()
            assert _labels(db, "chain") == []
            page.keyboard.press("a")  # asks again
            box.wait_for(state="visible")
            page.keyboard.press("y")
            page.wait_for_url(lambda u: u != url)
            _wait_ready(page)
            # The next chain has nothing flagged: A sends at once.
            second = page.url
            page.keyboard.press("a")
            page.wait_for_url(lambda u: u != second)
            with db.read() as session:
                rows = session.execute(select(Annotation).order_by(Annotation.id)).scalars().all()
                first = rows[0]
                assert [r.label for r in rows] == ["accept", "accept"]
                assert first.reason is None
                assert first.step_flags == [[], ["wrong"], [], [], [], []]
            assert problems == [], problems
            context.close()
    finally:
        db.dispose()


def test_adjudicate_and_export(browser, app_server):
    server, db = app_server["server"], app_server["db"]
    # ben and cleo label p0 (ana said match): 2 no_match against 1 match, a majority
    for name in ("ben", "cleo"):
        with Browser(server) as client:
            client.login(name)
            while (task := client.start("pair")) is not None:
                client.label(task, {"label": "no_match"})
    context, page, problems = _context(browser)
    _login(page, server, "judge")
    page.goto(server.url + "/adjudicate")
    queue = page.locator("[data-testid=queue-pair] tbody tr")
    assert queue.count() >= 1
    page.locator("[data-testid=queue-pair] tbody tr a").first.click()
    _wait_ready(page)
    assert "Annotator 1" in page.locator("[data-testid=labels]").inner_text()
    assert "ana" not in page.locator("[data-testid=labels]").inner_text()  # blind
    _screenshot(page, "adjudicate")
    majority = page.locator("legend small").inner_text()
    minority_key = "m" if "No match" in majority else "n"
    page.keyboard.press(minority_key)
    page.keyboard.press("4")
    url = page.url
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    assert "add a note" in page.locator(".message.error").inner_text()
    problems.clear()  # the 400 page load is a console error for chromium
    page.keyboard.press(minority_key)
    page.keyboard.press("4")
    page.fill("textarea[name=note]", "The predicted step states the same measurement.")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda u: u != url and "/adjudicate" in u)
    with db.read() as session:
        decision = session.execute(select(Adjudication)).scalars().first()
    assert decision.overrides_majority
    assert decision.reason == "edge_case"
    assert decision.note == "The predicted step states the same measurement."
    context.close()
    assert problems == [], problems

    context, page, problems = _context(browser, accept_downloads=True)
    _login(page, server, "admin")
    page.goto(server.url + "/admin")
    assert page.locator("[data-testid=admin-pair]").is_visible()
    assert page.locator("[data-testid=alpha-pair]").inner_text() != ""
    assert "ana" in page.locator("[data-testid=annotators-pair]").inner_text()
    page.set_viewport_size({"width": 1366, "height": 1300})
    _screenshot(page, "admin")
    with page.expect_download() as download_info:
        page.click("[data-testid=export-pairs]")
    download = download_info.value
    assert download.suggested_filename.startswith("review-pairs-")
    records = [json.loads(line) for line in Path(download.path()).read_text().splitlines()]
    statuses = {r["pair_id"]: r["final_status"] for r in records}
    decided = _task_external(db, decision.task_id)
    assert statuses[decided] == "adjudicated"
    assert all(len(r["labels"]) == 3 for r in records)
    with page.expect_download() as download_info:
        page.click("[data-testid=export-rejected]")
    rejected = Path(download_info.value.path()).read_text().splitlines()
    assert rejected == ["mathvision-01"]
    page.goto(server.url + "/admin/audit")
    assert "adjudicate" in page.locator("[data-testid=audit]").inner_text()
    assert problems == [], problems
    context.close()


def _task_external(db: Any, task_id: int) -> str:
    with db.read() as session:
        return str(session.get(Task, task_id).external_id)


def test_a_tablet_can_label_by_touch(browser, app_server, tmp_path):
    server, db = app_server["server"], app_server["db"]
    import_path(db, _pairs_file(tmp_path / "more.jsonl", "t"), benchmark="sample", actor="test")
    context, page, problems = _context(
        browser,
        viewport={"width": 820, "height": 1180},
        has_touch=True,
        is_mobile=True,
        device_scale_factor=1,
    )
    _login(page, server, "admin")
    page.click("[data-testid=start-pair]")
    _wait_ready(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 820  # no sideways scrolling
    button = page.locator("button[value=match]")
    box = button.bounding_box()
    assert box["height"] >= 44
    assert box["width"] >= 100
    _screenshot(page, "tablet")
    url = page.url
    button.tap()
    page.wait_for_url(lambda u: u != url)
    assert any(name == "admin" for name, _, _ in _labels(db, "pair"))
    assert problems == [], problems
    context.close()
