"""Helpers of the reference-construction tests: an item set from the bundled sample, the
configuration of a build against the scripted models' loopback server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from references_server import ReferenceServer
from scripted_models import GENERATORS, VALIDATOR

from crystalbench.data import load_benchmark
from crystalbench.inference import RetryPolicy

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
