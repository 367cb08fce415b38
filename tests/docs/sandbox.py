"""The folder a documentation page's examples run in.

Each page gets a fresh folder holding the files its examples name, all drawn from the bundled
sample (``crystalbench.data.SAMPLE_DIR``), so that a command written for a reader's own files
runs as written:

- ``preds.jsonl``: one model's predictions for the sample (the ``terse-precise`` style);
- ``runs/qwen.jsonl``, ``runs/llava-v1.6.jsonl``: two models' (``terse-precise``,
  ``verbose-recall``);
- ``src/crystalbench/data/sample/``: the sample, where a clone of the repository has it.

Anything else an example needs, the page creates in an earlier block (a file is a block
titled with its name), so a reader can follow along.

The pages a newcomer reads first (:data:`FIRST_PAGES`: the README, the home page, getting
started) get an empty folder instead: their commands must run as written where a reader has
nothing yet (``crystal data sample`` writes the prediction files they score).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from crystalbench.data import SAMPLE_DIR

PREDICTIONS = SAMPLE_DIR / "predictions"
FIRST_PAGES = ("README.md", "docs/index.md", "docs/getting-started.md")
"""The pages whose examples run in an empty folder (paths in the repository)."""


def make_sandbox(folder: Path, *, empty: bool = False) -> Path:
    """Lay out the files every page may name in ``folder`` (created) and return it;
    ``empty``: nothing (a first page's folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    if empty:
        return folder
    shutil.copyfile(PREDICTIONS / "terse-precise.jsonl", folder / "preds.jsonl")
    runs = folder / "runs"
    runs.mkdir()
    shutil.copyfile(PREDICTIONS / "terse-precise.jsonl", runs / "qwen.jsonl")
    shutil.copyfile(PREDICTIONS / "verbose-recall.jsonl", runs / "llava-v1.6.jsonl")
    sample_in_clone = folder / "src" / "crystalbench" / "data"
    sample_in_clone.mkdir(parents=True)
    (sample_in_clone / "sample").symlink_to(SAMPLE_DIR, target_is_directory=True)
    return folder
