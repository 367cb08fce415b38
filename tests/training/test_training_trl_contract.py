"""What CrystalGRPOTrainer takes from TRL that is not TRL's public API.

The trainer overrides and calls private methods of ``trl.GRPOTrainer`` (and of
transformers' ``Trainer`` underneath). The ``train`` extra bounds TRL below 2.0; this test
says, on the TRL installed, that each of those methods exists and takes the parameters the
trainer passes, so a TRL that renames one fails here and not in the middle of a run.
"""

from __future__ import annotations

import inspect

import pytest

trl = pytest.importorskip("trl")

# name -> the parameters (after self) the trainer passes or receives
PRIVATE = {
    "_get_train_sampler": ["dataset"],
    "_calculate_rewards": ["inputs", "prompts", "completions", "completion_ids_list"],
    "_generate_and_score_completions": ["inputs"],
    "_compute_loss": ["model", "inputs"],
    "_prepare_inputs": ["generation_batch"],  # called with one positional argument
    "_log_metric": None,
}


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_grpo_trainer_has_the_private_method(name):
    from crystalbench.training.trainer import CrystalGRPOTrainer

    source = inspect.getsource(CrystalGRPOTrainer)
    assert f"{name}(" in source, f"the trainer no longer uses {name}: drop it here"
    method = getattr(trl.GRPOTrainer, name, None)
    assert callable(method), f"trl {trl.__version__} GRPOTrainer has no {name}"
    wanted = PRIVATE[name]
    if wanted is not None:
        parameters = list(inspect.signature(method).parameters)[1:]
        assert parameters[: len(wanted)] == wanted, (name, parameters)
