"""Stage 2 of a run: the :class:`~crystalbench.training.trainer.CrystalGRPOTrainer` of a phase.

:func:`build_trainer` builds the reward functions, the ``GRPOConfig``
(:func:`crystalbench.training.arguments.grpo_arguments`), the TRL datasets, the curriculum
schedule and the validation setup, then the trainer, and writes the phase's run files
(:mod:`crystalbench.training.run_files`). Torch, TRL and the trainer module are imported when
a trainer is built, not when this module is imported.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crystalbench.training.arguments import grpo_arguments
from crystalbench.training.checkpoints import checkpoint_keeper, phase_selection_metric
from crystalbench.training.config import PhasePlan, RewardTerm, TrainConfig, TrainingError
from crystalbench.training.curriculum import curriculum_schedule
from crystalbench.training.data import item_messages, prompt_digest, to_trl_dataset
from crystalbench.training.preparation import TrainingData
from crystalbench.training.run_files import run_files_callback, run_record, write_run_files
from crystalbench.training.tiny_model import (
    build_tiny_model,
    is_tiny_model,
    tiny_generation_kwargs,
)

if TYPE_CHECKING:
    from crystalbench.encoders.base import Encoder
    from crystalbench.rewards.types import SignalSource
    from crystalbench.training.trainer import ValidationSetup

__all__ = ["build_trainer", "load_processor"]


def load_processor(config: TrainConfig) -> Any:
    """The processor of ``config.model`` (``AutoProcessor``), with ``processor_kwargs``."""
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(
        config.model.processor or config.model.name_or_path,
        trust_remote_code=config.model.trust_remote_code,
        **config.model.processor_kwargs,
    )


def reward_functions(
    config: TrainConfig, plan: PhasePlan, source: SignalSource
) -> tuple[list[Any], list[RewardTerm]]:
    """The phase's TRL reward functions and their terms: the trained ones, then one per
    held-out grader (weight 0, objective ``heldout``, named ``heldout_<name>``).

    Each held-out grader scores in process with its own encoder and threshold (never on the
    reward server, which holds the reward's encoder).
    """
    from crystalbench.rewards import CrystalReward, shared_source
    from crystalbench.training.controls import RandomReward

    rewards = config.rewards
    weights = rewards.weights
    functions: list[Any] = []
    for term in plan.terms:
        if term.kind == "random":
            functions.append(RandomReward(config.seed, weights.cpr_answer + weights.cpr_step))
        else:
            functions.append(CrystalReward(source, term.kind, weights=weights))
    terms = list(plan.terms)
    for grader in config.heldout:
        grader_source = shared_source(
            encoder=grader.encoder or rewards.encoder,
            tau=grader.tau if grader.tau is not None else rewards.tau,
            device=rewards.device,
            allow_think=rewards.allow_think,
        )
        functions.append(
            CrystalReward(
                grader_source, grader.kind, weights=weights, name=f"heldout_{grader.name}"
            )
        )
        terms.append(RewardTerm(kind=grader.kind, weight=0.0, objective="heldout"))
    return functions, terms


def grpo_settings(args: dict[str, Any]) -> Any:
    """``GRPOConfig(**args)``, its refusals turned into one line naming the ``grpo`` settings.

    Raises:
        TrainingError: ``GRPOConfig`` (or transformers' ``TrainingArguments``) rejects them.
    """
    from trl import GRPOConfig

    try:
        return GRPOConfig(**args)
    except (ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TrainingError(
            f"TRL's GRPOConfig refuses the grpo settings: {first} (change the grpo field it "
            "names, or the grpo.extra entry)"
        ) from None


def build_trainer(
    config: TrainConfig,
    plan: PhasePlan,
    data: TrainingData,
    *,
    model: Any = None,
    processing_class: Any = None,
    callbacks: list[Any] | None = None,
) -> Any:
    """A :class:`~crystalbench.training.trainer.CrystalGRPOTrainer` for one phase.

    Args:
        config: The run.
        plan: The phase (from :func:`~crystalbench.training.config.phase_plans`).
        data: From :func:`~crystalbench.training.preparation.prepare_data`.
        model: A model object, or a path / hub id; ``None`` loads
            ``config.model.name_or_path``.
        processing_class: Processor; ``None`` loads it from ``config.model``.
        callbacks: Extra ``TrainerCallback`` objects.
    """
    from crystalbench.rewards import load_reward_encoder, shared_source
    from crystalbench.training.trainer import CrystalGRPOTrainer

    rewards = config.rewards
    # The reward encoder is loaded before GRPOConfig registers a ZeRO-3 config with
    # transformers (see crystalbench.rewards.encoder_loading).
    source = shared_source(
        server_url=rewards.server_url,
        encoder=rewards.encoder,
        tau=rewards.tau,
        device=rewards.device,
        allow_think=rewards.allow_think,
    )
    reward_funcs, terms = reward_functions(config, plan, source)
    evaluation = config.evaluation
    encoder = (
        load_reward_encoder(rewards.encoder, device=rewards.device) if evaluation.enabled else None
    )

    args = grpo_arguments(config, plan)
    if is_tiny_model(config.model.name_or_path):
        if model is None or processing_class is None:
            items = [*data.split.train, *data.split.validation]
            tiny, tiny_processor = build_tiny_model(
                config.model.name_or_path, items, seed=config.seed
            )
            model = tiny if model is None else model
            processing_class = processing_class or tiny_processor
        args["generation_kwargs"] = {
            **tiny_generation_kwargs(processing_class),
            **(args.get("generation_kwargs") or {}),
        }
    grpo_config = grpo_settings(args)
    if processing_class is None:
        processing_class = load_processor(config)

    train_dataset, eval_dataset = _trl_datasets(config, data)
    schedule = None
    if plan.ordered:
        cur = config.curriculum
        schedule = curriculum_schedule(
            data.split.train,
            cur.pacing,
            stages=cur.stages,
            tie_break=cur.tie_break,
            seed=config.seed,
        )
    validation = (
        _validation_setup(config, data, source, encoder)
        if evaluation.enabled and encoder is not None
        else None
    )
    run = run_record(config, plan, data, args)
    own_callbacks = [run_files_callback(config, run)]
    keep_by = phase_selection_metric(config, plan)
    if keep_by is not None and config.grpo.save_total_limit is not None:
        own_callbacks.append(checkpoint_keeper(keep_by, config.grpo.save_total_limit))
    trainer = CrystalGRPOTrainer(
        model=model if model is not None else config.model.name_or_path,
        reward_funcs=reward_funcs,
        args=grpo_config,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=processing_class,
        callbacks=[*own_callbacks, *(callbacks or [])],
        reward_terms=terms,
        signal_source=source,
        weights=rewards.weights,
        pcgrad=config.pcgrad if plan.pcgrad else None,
        curriculum_schedule=schedule,
        validation=validation,
    )
    if config.model.freeze_vision:
        _freeze_vision(trainer.model)
    trainer.crystal_run_record = run
    if trainer.accelerator.is_main_process:
        out = Path(plan.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        # A fresh run: validation records of an earlier run in this folder must not steer
        # the checkpoint selection.
        (out / "validation.jsonl").unlink(missing_ok=True)
        write_run_files(out, config, run)
    return trainer


def _trl_datasets(config: TrainConfig, data: TrainingData) -> tuple[Any, Any]:
    """The TRL training dataset and, with validation on, the evaluation dataset (cached)."""
    from accelerate import PartialState

    train_items = data.split.train
    system_prompt = config.data.system_prompt
    cache = Path(config.output_dir) / ".dataset_cache"
    with PartialState().main_process_first():
        train_dataset = to_trl_dataset(
            train_items,
            data.pool.image_bytes,
            system_prompt=system_prompt,
            cache_dir=cache,
            fingerprint=_rows_fingerprint(
                data.pool.fingerprint, "train", train_items, system_prompt
            ),
        )
        eval_dataset = None
        if config.evaluation.enabled:
            eval_dataset = to_trl_dataset(
                data.split.validation,
                data.validation_images.image_bytes,
                system_prompt=system_prompt,
                cache_dir=cache,
                fingerprint=_rows_fingerprint(
                    data.validation_images.fingerprint,
                    "validation",
                    data.split.validation,
                    system_prompt,
                ),
            )
    return train_dataset, eval_dataset


def _validation_setup(
    config: TrainConfig, data: TrainingData, source: SignalSource, encoder: Encoder
) -> ValidationSetup:
    from crystalbench.training.trainer import ValidationSetup

    evaluation = config.evaluation
    rewards = config.rewards
    system_prompt = config.data.system_prompt
    items = (
        data.split.validation[: evaluation.max_items]
        if evaluation.max_items
        else data.split.validation
    )
    return ValidationSetup(
        items=list(items),
        messages=lambda item: item_messages(item, system_prompt),
        image_bytes=data.validation_images.image_bytes,
        source=source,
        weights=rewards.weights,
        encoder=encoder,
        tau=rewards.tau,
        batch_size=evaluation.batch_size,
        max_new_tokens=evaluation.max_new_tokens or config.grpo.max_completion_length,
        kl=evaluation.kl,
    )


def _rows_fingerprint(source: str, part: str, items: Any, system_prompt: str | None) -> str:
    digest = hashlib.sha256(f"{source}|{part}|{system_prompt!r}|{prompt_digest()}".encode())
    for item in items:
        digest.update(item.id.encode() + b"\n")
    return digest.hexdigest()[:32]


def _freeze_vision(model: Any) -> int:
    frozen = 0
    markers = ("visual", "vision_tower", "vision_model", "multi_modal_projector")
    for name, parameter in model.named_parameters():
        if any(marker in name for marker in markers):
            parameter.requires_grad_(False)
            frozen += parameter.numel()
    return frozen
