"""Fixtures of the reference-construction tests: an item set made from the bundled sample,
the scripted models and a loopback server answering for them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crystalbench.data import load_benchmark
from crystalbench.inference import RetryPolicy
from references_server import ReferenceServer, ServerState
from scripted_models import GENERATORS, VALIDATOR

FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)


def write_item_set(folder: Path, limit: int | None = None) -> Path:
    """The sample's items without their reference steps, as an item set folder."""
    bench = load_benchmark("sample")
    (folder / "images").mkdir(parents=True)
    lines = []
    for item in bench.items[:limit]:
        assert item.image is not None
        name = Path(item.image).name
        shutil.copyfile(item.image, folder / "images" / name)
        record = item.model_copy(update={"reference_steps": [], "image": f"images/{name}"})
        lines.append(record.model_dump_json())
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="session")
def sample_items():
    return load_benchmark("sample").items


@pytest.fixture
def item_set(tmp_path: Path) -> Path:
    return write_item_set(tmp_path / "items")


@pytest.fixture
def server():
    state = ServerState(models=[*GENERATORS, VALIDATOR])
    with ReferenceServer(state) as running:
        yield running


def config_data(server: ReferenceServer, items: Path, **extra: object) -> dict:
    data = {
        "items": str(items),
        "generators": [{"name": g, "base_urls": [server.base_url]} for g in GENERATORS],
        "validator": {"name": VALIDATOR, "base_urls": [server.base_url]},
        "encoder": "hash",
        "use_cache": False,
        "theta": 0.7,
        "fsync_interval": 0.0,
    }
    data.update(extra)
    return json.loads(json.dumps(data))
