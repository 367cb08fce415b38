"""The README's screenshots of the review app, taken with Playwright and Debian's chromium.

Runs the commands a user runs, in a temporary folder: ``crystal review add-user`` (five
users), ``crystal review import`` (a references output folder made from the bundled sample,
then step pairs from the sample's predictions), ``crystal review serve`` on a free loopback
port. Then a browser logs in as annotators, labels a few pairs with the keyboard, flags steps
of a chain, and the admin page is opened. Three screenshots are written:

- ``review-pair.png``: a step pair being labelled (match / no match / unsure);
- ``review-chain.png``: a reference chain under review, two steps flagged;
- ``review-admin.png``: the admin page's step pairs (progress, agreement, annotators).

Each PNG is reduced to a 256-colour palette when it is over ``--max-kb`` (200 KB).

Usage::

    .venv/bin/python scripts/review_screenshots.py                 # into docs/images/
    .venv/bin/python scripts/review_screenshots.py --out /tmp/shots --chromium /usr/bin/chromium
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "screenshot-password"
ANNOTATORS = ("ana", "ben", "cleo")
SAMPLE_IDS = ("mathvision-01", "scienceqa-01", "plotqa-01", "mmvp-01", "realworldqa-01")
MODELS = ("qwen2.5-vl-7b", "internvl3-8b", "llava-ov-7b", "gemma-3-12b")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def crystal(*args: str, stdin: str | None = None) -> str:
    """Run ``crystal ARGS`` with this checkout's sources; returns stdout (raises on failure)."""
    result = subprocess.run(
        [sys.executable, "-m", "crystalbench.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"crystal {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def sample_rows() -> dict[str, dict[str, Any]]:
    from crystalbench.data import SAMPLE_DIR

    lines = (SAMPLE_DIR / "benchmark.jsonl").read_text().splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def references_folder(folder: Path) -> Path:
    """Sample items laid out as ``crystal references build`` writes them: ``benchmark.jsonl``
    with ``reference_provenance`` (support, models, medoid, members) and ``reference_round``."""
    from crystalbench.data import SAMPLE_DIR

    (folder / "images").mkdir(parents=True)
    records = []
    for index, item_id in enumerate(SAMPLE_IDS[:3]):
        row = dict(sample_rows()[item_id])
        image = Path(row["image"]).name
        shutil.copyfile(SAMPLE_DIR / row["image"], folder / "images" / image)
        steps = row["reference_steps"][:6]
        provenance = []
        for k, step in enumerate(steps):
            support = 4 - (k + index) % 3
            members = [
                {"model": MODELS[m], "seed": m, "sample": 0, "index": k, "text": text}
                for m, text in enumerate([step, step.replace("The ", "This "), step][:support])
            ]
            provenance.append(
                {
                    "support": support,
                    "n_chains": 4,
                    "models": sorted(MODELS[:support]),
                    "medoid": members[0],
                    "members": members,
                    "mean_position": (k + 0.5) / len(steps),
                    "cohesion": 0.9,
                    "previous_index": None,
                }
            )
        row.update(
            image=f"images/{image}",
            reference_steps=steps,
            metadata={"reference_provenance": provenance, "reference_round": 1},
        )
        records.append(row)
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def pairs_file(path: Path) -> Path:
    """Step pairs: a step of the sample's ``verbose-recall`` predictions beside a reference."""
    from crystalbench.data import SAMPLE_DIR

    rows = sample_rows()
    predictions = {
        row["id"]: row
        for row in map(
            json.loads,
            (SAMPLE_DIR / "predictions" / "verbose-recall.jsonl").read_text().splitlines(),
        )
    }
    pairs = []
    for index, item_id in enumerate(SAMPLE_IDS):
        for offset in (1, 2):
            reference = rows[item_id]["reference_steps"][offset]
            words = set(reference.lower().split())
            steps = predictions[item_id]["reasoning_steps"]
            closest = max(steps, key=lambda step, w=words: len(w & set(step.lower().split())))
            pairs.append(
                {
                    "pair_id": f"{item_id}/{offset}",
                    "item_id": item_id,
                    "model": "verbose-recall",
                    "pred_step": closest,
                    "ref_step": reference,
                    "cosine": round(0.41 + index / 50, 3),
                    "band": "[0.35,0.50)",
                }
            )
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path


def start_server(db: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "crystalbench.cli.main",
            "review",
            "serve",
            "--db",
            str(db),
            "--port",
            "0",
            "--gold-every",
            "0",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"review app on (http://\S+)", line)
        if found:
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
            return process, found.group(1)
    process.kill()
    raise RuntimeError("crystal review serve did not start")


def shrink(path: Path, max_kb: int) -> int:
    """Quantise ``path`` to a 256-colour palette when it is over ``max_kb``; returns bytes."""
    from PIL import Image

    if path.stat().st_size > max_kb * 1024:
        with Image.open(path) as image:
            palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
            buffer = io.BytesIO()
            palette.save(buffer, "PNG", optimize=True)
        path.write_bytes(buffer.getvalue())
    size = path.stat().st_size
    if size > max_kb * 1024:
        raise RuntimeError(f"{path} is {size // 1024} KB even with 256 colours")
    return size


def take(url: str, out: Path, chromium: str) -> list[Path]:
    from playwright.sync_api import sync_playwright

    shots = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)

        def session(name: str, width: int = 1280, height: int = 800) -> Any:
            page = browser.new_context(viewport={"width": width, "height": height}).new_page()
            page.goto(url + "/login")
            page.fill("input[name=name]", name)
            page.fill("input[name=password]", PASSWORD)
            page.press("input[name=password]", "Enter")
            page.wait_for_url(url + "/")
            return page

        def ready(page: Any) -> None:
            page.wait_for_selector("html[data-ready='1']")

        def label_pairs(page: Any, keys: str) -> None:
            page.click("[data-testid=start-pair]")
            for key in keys:
                ready(page)
                before = page.url
                page.keyboard.press(key)
                page.wait_for_url(lambda u, old=before: u != old)

        # two annotators label every pair; the third is caught mid-task for the screenshot
        label_pairs(session("ana"), "mmnmnmmnum")
        label_pairs(session("ben"), "mnnmnmmmnm")
        page = session("cleo")
        label_pairs(page, "mmn")
        ready(page)
        shots.append(out / "review-pair.png")
        page.screenshot(path=str(shots[-1]))

        page = session("ana", height=1000)
        page.click("[data-testid=start-chain]")
        ready(page)
        for key in ("j", "v", "j", "j", "w"):  # step 2 not visible, step 4 wrong
            page.keyboard.press(key)
        page.evaluate("window.scrollTo(0, 0)")
        shots.append(out / "review-chain.png")
        page.screenshot(path=str(shots[-1]))

        page = session("boss", height=1000)
        page.goto(url + "/admin")
        heading = page.get_by_role("heading", name="Step pairs")
        page.evaluate("y => window.scrollTo(0, y - 72)", heading.bounding_box()["y"])
        shots.append(out / "review-admin.png")
        page.screenshot(path=str(shots[-1]), full_page=False)
        browser.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--max-kb", type=int, default=200)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="review-shots-") as folder:
        root = Path(folder)
        db = str(root / "review.sqlite")
        secret = root / "password"
        secret.write_text(PASSWORD + "\n")
        for name in ANNOTATORS:
            crystal("review", "add-user", name, "--password-file", str(secret), "--db", db)
        crystal(
            "review",
            "add-user",
            "judge",
            "--role",
            "adjudicator",
            "--password-file",
            str(secret),
            "--db",
            db,
        )
        crystal(
            "review",
            "add-user",
            "boss",
            "--role",
            "admin",
            "--password-file",
            str(secret),
            "--db",
            db,
        )
        print(crystal("review", "import", str(references_folder(root / "refs")), "--db", db))
        pairs = pairs_file(root / "pairs.jsonl")
        print(
            crystal(
                "review",
                "import",
                str(pairs),
                "--benchmark",
                "sample",
                "--annotators",
                "3",
                "--db",
                db,
            )
        )
        process, url = start_server(Path(db))
        try:
            shots = take(url, args.out, args.chromium)
        finally:
            process.terminate()
            process.wait(timeout=30)
    for shot in shots:
        print(
            f"{shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot}: "
            f"{shrink(shot, args.max_kb) // 1024} KB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
