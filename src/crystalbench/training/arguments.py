"""The ``GRPOConfig`` arguments of one phase, from the run's config and the phase plan.

Torch-free until the arguments are checked against TRL's ``GRPOConfig`` fields (TRL is
imported inside :func:`grpo_arguments`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.training.checkpoints import phase_selection_metric
from crystalbench.training.config import RECIPES_DIR, PhasePlan, TrainConfig

__all__ = ["grpo_arguments"]

_EVAL_ONLY_AT_END = 10**9


def grpo_arguments(config: TrainConfig, plan: PhasePlan) -> dict[str, Any]:
    """The keyword arguments of the ``GRPOConfig`` of one phase.

    Raises:
        UnknownNameError: ``grpo.extra`` names a field ``GRPOConfig`` does not have.
        InputError: ``grpo.extra`` sets a field crystalbench already sets.
    """
    g = config.grpo
    evaluation = config.evaluation.enabled
    args: dict[str, Any] = {
        "output_dir": plan.output_dir,
        "seed": config.seed,
        "data_seed": config.seed,
        "run_name": f"{config.run_name or Path(config.output_dir).name}-{plan.name}",
        "report_to": list(config.report_to),
        "learning_rate": plan.learning_rate,
        "num_train_epochs": plan.num_train_epochs,
        "max_steps": plan.max_steps,
        "per_device_train_batch_size": g.per_device_train_batch_size,
        "per_device_eval_batch_size": g.num_generations,
        "gradient_accumulation_steps": g.gradient_accumulation_steps,
        "num_generations": g.num_generations,
        "max_completion_length": g.max_completion_length,
        "temperature": g.temperature,
        "top_p": g.top_p,
        "beta": g.beta,
        "epsilon": g.epsilon,
        "num_iterations": g.num_iterations,
        "loss_type": g.loss_type,
        "scale_rewards": g.scale_rewards,
        "multi_objective_aggregation": g.multi_objective_aggregation,
        # Held-out graders are reward functions of weight 0: logged, never trained on.
        "reward_weights": [term.weight for term in plan.terms] + [0.0] * len(config.heldout),
        "warmup_steps": g.warmup_steps,
        "lr_scheduler_type": g.lr_scheduler_type,
        "weight_decay": g.weight_decay,
        "max_grad_norm": g.max_grad_norm,
        "gradient_checkpointing": g.gradient_checkpointing,
        "use_vllm": g.use_vllm,
        "vllm_mode": g.vllm_mode,
        "vllm_gpu_memory_utilization": g.vllm_gpu_memory_utilization,
        "vllm_tensor_parallel_size": g.vllm_tensor_parallel_size,
        "logging_steps": g.logging_steps,
        "save_strategy": "steps" if g.save else "no",
        "save_steps": plan.save_steps,
        # Phase 2 starts from phase-1 weights with a fresh optimizer: optimizer state in
        # phase-1 checkpoints would only cost disk.
        "save_only_model": plan.name == "phase1",
        # Rotation is crystalbench's when a phase selects its best checkpoint (it keeps the
        # best validated one); TRL's otherwise.
        "save_total_limit": None
        if phase_selection_metric(config, plan) is not None
        else g.save_total_limit,
        "eval_strategy": "steps" if evaluation else "no",
        "eval_steps": (plan.eval_steps or _EVAL_ONLY_AT_END) if evaluation else None,
        "eval_on_start": evaluation and config.evaluation.at_start,
        "shuffle_dataset": not plan.ordered,
        "remove_unused_columns": False,
        "model_init_kwargs": {
            "dtype": config.model.dtype,
            "trust_remote_code": config.model.trust_remote_code,
            **(
                {"attn_implementation": config.model.attn_implementation}
                if config.model.attn_implementation
                else {}
            ),
        },
        "trust_remote_code": config.model.trust_remote_code,
        "use_cpu": g.use_cpu,
        "dataloader_num_workers": g.dataloader_num_workers,
        "log_completions": g.log_completions,
    }
    if g.bf16 is not None:
        args["bf16"] = g.bf16
    from trl import GRPOConfig

    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    if "activation_checkpointing" in fields:  # transformers >= 5.x renamed the option
        args["activation_checkpointing"] = args.pop("gradient_checkpointing")
    if g.deepspeed is not None:
        args["deepspeed"] = str(_recipe_file(g.deepspeed))
    if g.extra:
        for key in g.extra:
            if key not in fields:
                raise UnknownNameError("GRPOConfig field", key, fields)
            if key in args or (
                key == "gradient_checkpointing" and "activation_checkpointing" in args
            ):
                raise InputError(
                    f"grpo.extra.{key} is set by crystalbench; use the config option instead",
                    field=f"grpo.extra.{key}",
                )
        args.update(g.extra)
    return args


def _recipe_file(spec: str) -> Path:
    if spec.startswith("recipe:"):
        path = RECIPES_DIR / spec[len("recipe:") :]
        if not path.is_file():
            known = sorted(p.name for p in RECIPES_DIR.iterdir() if p.is_file())
            raise UnknownNameError("recipe file", spec, known)
        return path
    return Path(spec)
