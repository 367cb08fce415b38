"""Every ``crystal`` command and group, by name: the table the full app
(:mod:`crystalbench.cli.main`) and the one-command apps (:mod:`crystalbench.cli.entry`) are
built from. Nothing here imports a command module until it is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

COMMANDS: dict[str, str] = {
    "score": "crystalbench.cli.score:score",
    "demo": "crystalbench.cli.demo:demo",
    "infer": "crystalbench.cli.infer:infer",
    "run": "crystalbench.cli.infer:run",
    "report": "crystalbench.cli.report:report",
    "leaderboard": "crystalbench.cli.report:leaderboard",
    "compare": "crystalbench.cli.report:compare",
    "serve-rewards": "crystalbench.cli.rewards:serve_rewards",
    "train": "crystalbench.cli.train:train",
    "train-sweep": "crystalbench.cli.train:train_sweep",
    "train-recipes": "crystalbench.cli.train:train_recipes",
    "version": "crystalbench.cli.version:version",
}
"""Top-level commands: ``name -> module:function``, in ``crystal --help`` order."""

GROUPS: dict[str, str] = {
    "cache": "crystalbench.cli.cache:app",
    "data": "crystalbench.cli.data:data_app",
    "references": "crystalbench.cli.references:references_app",
    "review": "crystalbench.cli.review:review_app",
    "integrations": "crystalbench.cli.integrations:integrations_app",
    "validate": "crystalbench.cli.validate:validate_app",
}
"""Command groups: ``name -> module:typer app``."""


def load(target: str) -> Any:
    """The object a ``module:attribute`` string names (importing that module only)."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
