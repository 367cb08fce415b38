"""The training package's torch-free modules stay torch-free: ordering a curriculum, reading
checkpoints or preparing a run's data must not load torch, TRL or transformers."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import crystalbench.training

TORCH_MODULES = frozenset({"pcgrad", "sampler", "trainer"})
"""The modules that import torch when they are imported; every other one must not."""
HEAVY = ("torch", "trl", "transformers", "accelerate", "datasets", "deepspeed")


def test_every_other_training_module_imports_no_heavy_library() -> None:
    names = sorted(m.name for m in pkgutil.iter_modules(crystalbench.training.__path__))
    assert set(names) >= TORCH_MODULES
    torch_free = [f"crystalbench.training.{n}" for n in names if n not in TORCH_MODULES]
    code = "\n".join(
        [*(f"import {name}" for name in torch_free), "import sys", "print(*sorted(sys.modules))"]
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert [name for name in HEAVY if name in out] == []
    assert "crystalbench.training.strategies" in out  # the imports did run
