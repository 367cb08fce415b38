"""The provenance files of a phase: the resolved config and the run record.

Every phase folder holds ``crystal_train_config.yaml`` (the resolved config, loadable again
with ``--config``) and ``crystal_train_run.json`` (phase, reward functions, the exact
``GRPOConfig`` arguments, data fingerprints, leakage summary, prompt digest, versions); both
are copied into every ``checkpoint-N`` folder as it is saved (:func:`run_files_callback`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_text
from crystalbench._version import __version__
from crystalbench.training.config import PhasePlan, TrainConfig, dump_config
from crystalbench.training.data import prompt_digest
from crystalbench.training.preparation import TrainingData

__all__ = ["CONFIG_FILE", "RUN_FILE", "run_files_callback", "run_record", "write_run_files"]

CONFIG_FILE = "crystal_train_config.yaml"
"""The resolved config of a phase (loadable again with ``crystal train --config``)."""
RUN_FILE = "crystal_train_run.json"
"""The run record of a phase (:func:`run_record`)."""


def run_record(
    config: TrainConfig, plan: PhasePlan, data: TrainingData, args: dict[str, Any]
) -> dict[str, Any]:
    """What ``crystal_train_run.json`` holds for one phase (``args``: its ``GRPOConfig``)."""
    import torch
    import transformers
    import trl

    return {
        "crystalbench": __version__,
        "trl": trl.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "strategy": config.strategy,
        "phase": plan.name,
        "config_digest": config.digest(),
        "reward_terms": [term.model_dump() for term in plan.terms],
        "pcgrad": plan.pcgrad,
        "curriculum": config.curriculum.model_dump(mode="json") if plan.ordered else None,
        "prompt_digest": prompt_digest(),
        "grpo_config": {k: v for k, v in args.items() if _jsonable(v)},
        "data": data.record(),
    }


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, list, dict)) or value is None


def _texts(config: TrainConfig, run: dict[str, Any]) -> tuple[str, str]:
    return dump_config(config), json.dumps(run, indent=2, default=str)


def write_run_files(folder: Path, config: TrainConfig, run: dict[str, Any]) -> None:
    """Write :data:`CONFIG_FILE` and :data:`RUN_FILE` into ``folder``."""
    config_text, run_text = _texts(config, run)
    atomic_write_text(folder / CONFIG_FILE, config_text)
    atomic_write_text(folder / RUN_FILE, run_text)


def run_files_callback(config: TrainConfig, run: dict[str, Any]) -> Any:
    """A ``TrainerCallback`` that copies both files into every saved ``checkpoint-N``."""
    from transformers import TrainerCallback

    config_text, run_text = _texts(config, run)

    class RunFilesCallback(TrainerCallback):
        """Writes the resolved config and run record next to every checkpoint."""

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                atomic_write_text(folder / CONFIG_FILE, config_text)
                atomic_write_text(folder / RUN_FILE, run_text)

    return RunFilesCallback()
