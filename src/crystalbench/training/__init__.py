"""GRPO training on CRYSTAL rewards: strategies, CPR-Curriculum, PCGrad, leakage checks.

Entry points (``docs/training.md`` has the commands):

- :func:`crystalbench.training.config.load_train_config` and
  :class:`~crystalbench.training.config.TrainConfig`: one YAML file per run;
- :func:`crystalbench.training.runner.run_training`: what ``crystal train`` runs;
- :func:`crystalbench.training.sweep.run_sweep`: the reward-weight sweep;
- :func:`crystalbench.training.leakage.check_leakage`: ``crystal data check-leakage``;
- :mod:`crystalbench.training.pcgrad`: PCGrad maths, the advantage split and the gradient
  surgery used by :class:`~crystalbench.training.trainer.CrystalGRPOTrainer`;
- :mod:`crystalbench.training.curriculum`: easy-to-hard order, the sampler, the hand-over.

Importing this package imports neither torch nor TRL; the modules that need them
(``pcgrad``, ``curriculum``, ``trainer``, ``runner``, ``evaluation``) import them when used.
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
