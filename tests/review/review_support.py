"""Builders and a loopback server for the review app's tests (imported by name: pytest puts
this folder on ``sys.path``).

- :func:`write_references` writes a references output folder in the shape agreed with
  ``crystal references build`` (``benchmark.jsonl`` of BenchmarkItem records whose
  ``metadata`` holds ``reference_provenance`` and ``reference_round``, images beside it).
- :func:`write_pairs` writes a step-pair file as ``crystal validate sample-pairs`` does
  (JSONL or CSV: pair_id, item_id, model, pred_step, ref_step, cosine, band).
- :class:`ReviewServer` runs the real app with uvicorn on 127.0.0.1 in a thread;
  :class:`Browser` is an httpx client that logs in and posts forms with their CSRF token.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from crystalbench.review.app import create_app
from crystalbench.review.auth import add_user
from crystalbench.review.settings import ReviewSettings

PASSWORD = "correct horse battery"
"""Password of every test user."""

CSRF = re.compile(r'name="csrf_token" value="([^"]*)"')


def png_bytes(
    width: int = 60, height: int = 40, color: tuple[int, int, int] = (200, 30, 30)
) -> bytes:
    """A small PNG."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def chain_record(
    index: int, *, steps: Sequence[str] | None = None, round_: int = 1, **metadata: Any
) -> dict[str, Any]:
    """One accepted item of a references output folder, with per-step provenance."""
    steps = list(
        steps
        or (
            f"The chart {index} shows {index + 3} bars.",
            f"The tallest bar of chart {index} is labelled {index * 2}.",
            f"So the answer is {index * 2}.",
        )
    )
    models = ["qwen2.5-vl-7b", "internvl3-8b", "llava-ov-7b", "gemma-3-12b"]
    provenance = [
        {
            "support": 4 - (k % 3),
            "models": models[: 4 - (k % 3)],
            "members": [
                {"text": text, "model": models[0], "seed": 0, "index": k},
                {"text": text.replace("The", "This"), "model": models[1], "seed": 1, "index": k},
            ],
        }
        for k, text in enumerate(steps)
    ]
    return {
        "id": f"item-{index}",
        "source": "plotqa",
        "question": f"What is the value of the tallest bar in chart {index}?",
        "options": [],
        "answer": str(index * 2),
        "reference_steps": steps,
        "image": f"images/item-{index}.png",
        "metadata": {"reference_provenance": provenance, "reference_round": round_, **metadata},
    }


def write_references(
    folder: Path, n_items: int = 3, *, records: list[dict[str, Any]] | None = None
) -> Path:
    """A references output folder with ``n_items`` items (or ``records``) and their images."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    rows = records if records is not None else [chain_record(i) for i in range(n_items)]
    for i, row in enumerate(rows):
        if row.get("image"):
            (folder / row["image"]).write_bytes(png_bytes(60 + i, 40, (20 * i % 255, 90, 160)))
    (folder / "benchmark.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    return folder


def pair_rows(
    n_pairs: int, n_items: int, *, gold: dict[int, str] | None = None
) -> list[dict[str, Any]]:
    """Pair records over items ``item-0 .. item-{n_items-1}``."""
    bands = ["<0.20", "[0.20,0.35)", "[0.35,0.50)", "[0.50,0.70)", ">=0.70"]
    rows = []
    for i in range(n_pairs):
        cosine = round((i * 0.137) % 1.0, 3)
        row = {
            "pair_id": f"pair-{i}",
            "item_id": f"item-{i % n_items}",
            "model": f"secret-model-{i % 3}",
            "pred_step": f"The bar {i} looks taller than the others.",
            "ref_step": f"Bar {i} is the tallest bar in the chart.",
            "cosine": cosine,
            "band": bands[min(4, int(cosine / 0.2))],
        }
        if gold and i in gold:
            row["gold_label"] = gold[i]
        rows.append(row)
    return rows


def write_pairs(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write pair records as JSONL or CSV (by the file's suffix)."""
    if path.suffix == ".csv":
        names = ["pair_id", "item_id", "model", "pred_step", "ref_step", "cosine", "band"]
        if any("gold_label" in r for r in rows):
            names.append("gold_label")
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=names)
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_users(db: Any, names: Sequence[str], role: str = "annotator") -> None:
    """Add users with :data:`PASSWORD`."""
    for name in names:
        add_user(db, name, role, PASSWORD, actor="test")


def users_by_name(db: Any) -> dict[str, Any]:
    """Every user row, by name."""
    from sqlalchemy import select

    from crystalbench.review.models import User

    with db.read() as session:
        return {u.name: u for u in session.execute(select(User)).scalars()}


class ReviewServer:
    """The review app on uvicorn, 127.0.0.1 and a free port, in a background thread."""

    def __init__(self, db: Any, settings: ReviewSettings | None = None) -> None:
        self.db = db
        self.settings = settings or ReviewSettings()
        self.port = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ReviewServer:
        import uvicorn

        from crystalbench.review.app import bind_socket

        sock = bind_socket("127.0.0.1", 0)
        self.port = sock.getsockname()[1]
        self.app = create_app(self.db, self.settings)
        config = uvicorn.Config(
            self.app,
            log_level="error",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("review server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def state(self) -> Any:
        """The app's shared state (limiter, caches)."""
        return self.app.app.state.review


class Browser:
    """An httpx client that behaves like a browser user of the app (cookies, forms, CSRF)."""

    def __init__(self, server: ReviewServer) -> None:
        self.server = server
        self.client = httpx.Client(base_url=server.url, follow_redirects=False, timeout=30)
        self.csrf = ""

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        response = self.client.get(path, **kwargs)
        found = (
            CSRF.search(response.text)
            if response.headers.get("content-type", "").startswith("text/html")
            else None
        )
        if found and self.client.cookies.get("crystal_review_session"):
            self.csrf = found.group(1)
        return response

    def login(self, name: str, password: str = PASSWORD) -> httpx.Response:
        form = self.client.get("/login")
        token = CSRF.search(form.text)
        assert token is not None, form.text
        response = self.client.post(
            "/login",
            data={"name": name, "password": password, "csrf_token": token.group(1), "next": "/"},
        )
        if response.status_code == 303:
            self.get("/")
        return response

    def post(
        self, path: str, data: dict[str, str] | None = None, *, csrf: bool = True, **kwargs: Any
    ) -> httpx.Response:
        fields = dict(data or {})
        if csrf:
            fields["csrf_token"] = self.csrf
        return self.client.post(path, data=fields, **kwargs)

    def start(self, kind: str) -> int | None:
        """Ask for work; the task id handed out, or ``None`` when none is left."""
        response = self.post(f"/work/{kind}")
        assert response.status_code == 303, response.text
        return task_id_of(response.headers["location"])

    def label(self, task_id: int, data: dict[str, str]) -> httpx.Response:
        return self.post(f"/tasks/{task_id}/label", data)


def task_id_of(location: str) -> int | None:
    """The task id a redirect points at, ``None`` for the "no work left" page."""
    match = re.fullmatch(r"/tasks/(\d+)", location)
    return int(match.group(1)) if match else None
