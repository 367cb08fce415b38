"""GRPO training on CRYSTAL rewards: strategies, CPR-Curriculum, PCGrad, leakage checks.

Entry points (``docs/training.md`` has the commands):

- :func:`crystalbench.training.config.load_train_config` and
  :class:`~crystalbench.training.config.TrainConfig`: one YAML file per run;
- :func:`crystalbench.training.runner.run_training`: what ``crystal train`` runs;
- :func:`crystalbench.training.sweep.run_sweep`: the reward-weight sweep;
- :func:`crystalbench.training.leakage.check_leakage`: ``crystal data check-leakage``;
- :mod:`crystalbench.training.pcgrad`: PCGrad maths, the advantage split and the gradient
  surgery used by :class:`~crystalbench.training.trainer.CrystalGRPOTrainer`;
- :mod:`crystalbench.training.curriculum` (easy-to-hard order),
  :mod:`crystalbench.training.sampler` (the order as TRL's sampler) and
  :mod:`crystalbench.training.strategies` (the phase hand-over).

Imports run one way (``tests/test_import_graph.py`` checks it, imports inside functions
included); each line imports only from the lines above it::

    config  data  leakage  evaluation  pcgrad  sampler       the bottom: no package imports
    tiny_model                                               the bundled tiny policy
    curriculum  checkpoints  arguments  preparation         order, selection, GRPOConfig, data
    preflight                                                what the machine must offer
    trainer  run_files                                       the GRPOTrainer subclass, provenance
    building                                                 one phase's trainer (stage 2)
    phases -> strategies -> runner -> sweep                  train a phase, chain them, the CLI's

Importing this package imports neither torch nor TRL. ``pcgrad``, ``sampler`` and ``trainer``
import torch when they are imported; every other module imports torch, TRL or transformers
only inside the functions that train.
"""

from __future__ import annotations

from crystalbench.training.config import (
    STRATEGIES,
    LeakageError,
    TrainConfig,
    TrainingError,
    load_train_config,
    phase_plans,
    reward_terms,
)

__all__ = [
    "STRATEGIES",
    "LeakageError",
    "TrainConfig",
    "TrainingError",
    "load_train_config",
    "phase_plans",
    "reward_terms",
]
