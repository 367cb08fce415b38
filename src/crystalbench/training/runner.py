"""From a :class:`~crystalbench.training.config.TrainConfig` to a trained policy.

:func:`run_training` is what ``crystal train --config FILE`` calls:

1. :func:`prepare_data` loads the pool, proves it does not leak into the benchmark
   (:func:`crystalbench.training.leakage.check_leakage`; refuse, drop or ignore as
   configured) and splits off the validation items;
2. for each phase (:func:`crystalbench.training.config.phase_plans`), :func:`build_trainer`
   builds the reward functions, the ``GRPOConfig``, the TRL dataset, the curriculum
   schedule and a :class:`~crystalbench.training.trainer.CrystalGRPOTrainer`, and
   :func:`train_phase` trains it;
3. ``cpr-curriculum`` chains the phases through
   :func:`crystalbench.training.curriculum.run_curriculum`.

Every phase folder holds ``crystal_train_config.yaml`` (the resolved config, loadable again
with ``--config``) and ``crystal_train_run.json`` (phase, reward functions, the exact
``GRPOConfig`` arguments, data fingerprints, leakage summary, prompt digest, versions); both
are copied into every ``checkpoint-N`` folder as it is saved.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crystalbench._version import __version__
from crystalbench.data import Benchmark, load_benchmark
from crystalbench.errors import UnknownNameError
from crystalbench.io import atomic_write_json, atomic_write_text
from crystalbench.training.config import (
    LeakageError,
    PhasePlan,
    TrainConfig,
    TrainingError,
    dump_config,
    phase_plans,
)
from crystalbench.training.data import (
    TrainingSplit,
    item_messages,
    load_pool,
    prompt_digest,
    split_validation,
    to_trl_dataset,
)
from crystalbench.training.leakage import LeakageReport, check_leakage

__all__ = [
    "PhaseResult",
    "TrainingData",
    "TrainingResult",
    "build_trainer",
    "grpo_arguments",
    "prepare_data",
    "run_training",
    "train_phase",
]

logger = logging.getLogger(__name__)

CONFIG_FILE = "crystal_train_config.yaml"
RUN_FILE = "crystal_train_run.json"

ProgressHook = Callable[[str, int, int | None], None]


@dataclass
class TrainingData:
    """The pool, its split and the leakage report a run trains on."""

    pool: Benchmark
    """Training pool after the leakage policy (image access for training rows)."""
    split: TrainingSplit
    """Training and validation items."""
    validation_images: Benchmark
    """Where validation images come from (the pool, or the separate validation set)."""
    leakage: LeakageReport | None
    """Leakage report (``None`` when the check was skipped)."""
    dropped: list[str] = dataclasses.field(default_factory=list)
    """Ids dropped as leaked (``on_leak: drop``)."""

    def record(self) -> dict[str, Any]:
        """Data provenance for ``crystal_train_run.json``."""
        report = self.leakage
        return {
            "pool": self.pool.name,
            "pool_fingerprint": self.pool.fingerprint,
            "n_train": len(self.split.train),
            "n_validation": len(self.split.validation),
            "validation_ids": [item.id for item in self.split.validation],
            "leakage": None
            if report is None
            else {
                "benchmark": report.benchmark,
                "benchmark_fingerprint": report.benchmark_fingerprint,
                "n_leaks": len(report.leaks),
                "n_image_only": report.n_image_only,
                "n_question_only": report.n_question_only,
                "dropped": self.dropped,
            },
        }


def prepare_data(config: TrainConfig, *, progress: ProgressHook | None = None) -> TrainingData:
    """Load the pool, run the leakage check, apply the leak policy and split validation.

    Raises:
        LeakageError: A training (or validation) item is a benchmark item and
            ``data.leakage.on_leak`` is ``refuse``.
        InputError / BenchmarkUnavailableError: The pool or the benchmark cannot be loaded.
    """
    spec = config.data
    pool = load_pool(spec.train, split=spec.split, sources=spec.sources, limit=spec.limit)
    validation_set = load_pool(spec.validation) if spec.validation else None
    report: LeakageReport | None = None
    dropped: list[str] = []
    if spec.leakage.benchmark is not None:
        benchmark = load_benchmark(spec.leakage.benchmark)
        checked = pool
        if validation_set is not None:
            checked = Benchmark(
                name=f"{pool.name}+{validation_set.name}",
                items=[*pool.items, *validation_set.items],
                image_loader=_combined_loader(pool, validation_set),
            )
        report = check_leakage(
            checked, benchmark, max_hamming=spec.leakage.max_hamming, progress=progress
        )
        if not report.clean:
            summary = (
                f"{len(report.leaks)} training item(s) duplicate benchmark items of "
                f"{report.benchmark} (e.g. {report.leaks[0].train_id} = "
                f"{report.leaks[0].benchmark_id}, {report.leaks[0].reason})"
            )
            if spec.leakage.on_leak == "refuse":
                raise LeakageError(
                    summary + ". Remove them (crystal data check-leakage lists them all), or set "
                    "data.leakage.on_leak to 'drop' or 'ignore'"
                )
            leaked = report.leaked_ids
            if spec.leakage.on_leak == "drop":
                dropped = sorted(leaked)
                pool = Benchmark(
                    name=pool.name,
                    items=[item for item in pool.items if item.id not in leaked],
                    image_loader=pool.image_loader,
                )
                if validation_set is not None:
                    validation_set = Benchmark(
                        name=validation_set.name,
                        items=[i for i in validation_set.items if i.id not in leaked],
                        image_loader=validation_set.image_loader,
                    )
                logger.warning("%s; dropped them", summary)
            else:
                logger.warning("%s; training on them anyway (on_leak: ignore)", summary)
    if validation_set is not None:
        split = TrainingSplit(train=list(pool.items), validation=list(validation_set.items))
        images = validation_set
    else:
        split = split_validation(
            pool.items,
            spec.validation_fraction,
            spec.validation_seed if spec.validation_seed is not None else config.seed,
        )
        images = pool
    if not split.train:
        raise TrainingError("no training items left")
    return TrainingData(
        pool=pool, split=split, validation_images=images, leakage=report, dropped=dropped
    )


def _combined_loader(first: Benchmark, second: Benchmark) -> Callable[[Any], bytes | None]:
    ids = {item.id for item in second.items}

    def loader(item: Any) -> bytes | None:
        return second.image_bytes(item) if item.id in ids else first.image_bytes(item)

    return loader


# ---------------------------------------------------------------------------------------------
# GRPOConfig
# ---------------------------------------------------------------------------------------------

_EVAL_ONLY_AT_END = 10**9


def grpo_arguments(config: TrainConfig, plan: PhasePlan) -> dict[str, Any]:
    """The keyword arguments of the ``GRPOConfig`` of one phase.

    Raises:
        UnknownNameError: ``grpo.extra`` names a field ``GRPOConfig`` does not have.
        InputError: ``grpo.extra`` sets a field crystalbench already sets.
    """
    from crystalbench.errors import InputError

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
        "reward_weights": [term.weight for term in plan.terms],
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
        "save_total_limit": g.save_total_limit if plan.name != "phase1" else None,
        "eval_strategy": "steps" if evaluation else "no",
        "eval_steps": (plan.eval_steps or _EVAL_ONLY_AT_END) if evaluation else None,
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
    from crystalbench.training.config import RECIPES_DIR

    if spec.startswith("recipe:"):
        path = RECIPES_DIR / spec[len("recipe:") :]
        if not path.is_file():
            known = sorted(p.name for p in RECIPES_DIR.iterdir() if p.is_file())
            raise UnknownNameError("recipe file", spec, known)
        return path
    return Path(spec)


# ---------------------------------------------------------------------------------------------
# Trainer
# ---------------------------------------------------------------------------------------------


def _run_record(
    config: TrainConfig, plan: PhasePlan, data: TrainingData, args: dict[str, Any]
) -> dict[str, Any]:
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


def _make_callbacks(config: TrainConfig, plan: PhasePlan, run: dict[str, Any]) -> list[Any]:
    import json

    from transformers import TrainerCallback

    config_text = dump_config(config)
    run_text = json.dumps(run, indent=2, default=str)

    class RunFilesCallback(TrainerCallback):
        """Writes the resolved config and run record next to every checkpoint."""

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                atomic_write_text(folder / CONFIG_FILE, config_text)
                atomic_write_text(folder / RUN_FILE, run_text)

    callbacks: list[Any] = [RunFilesCallback()]
    if plan.name == "phase1" and config.grpo.save_total_limit is not None:
        callbacks.append(_checkpoint_keeper(config, config.grpo.save_total_limit))
    return callbacks


def _checkpoint_keeper(config: TrainConfig, keep_last: int) -> Any:
    """Phase-1 rotation that never deletes the best validated checkpoint."""
    from transformers import TrainerCallback

    from crystalbench.training.curriculum import select_best_checkpoint

    metric = config.curriculum.selection_metric

    class CheckpointKeeper(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            run_dir = Path(args.output_dir)
            folders = sorted(
                (p for p in run_dir.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()),
                key=lambda p: int(p.name.split("-")[-1]),
            )
            try:
                best = Path(select_best_checkpoint(run_dir, metric).path)
            except TrainingError:
                return
            keep = {best, *folders[-keep_last:]}
            for folder in folders:
                if folder not in keep:
                    shutil.rmtree(folder, ignore_errors=True)

    return CheckpointKeeper()


def _freeze_vision(model: Any) -> int:
    frozen = 0
    markers = ("visual", "vision_tower", "vision_model", "multi_modal_projector")
    for name, parameter in model.named_parameters():
        if any(marker in name for marker in markers):
            parameter.requires_grad_(False)
            frozen += parameter.numel()
    return frozen


def load_processor(config: TrainConfig) -> Any:
    """The processor of ``config.model`` (``AutoProcessor``), with ``processor_kwargs``."""
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(
        config.model.processor or config.model.name_or_path,
        trust_remote_code=config.model.trust_remote_code,
        **config.model.processor_kwargs,
    )


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
        data: From :func:`prepare_data`.
        model: A model object, or a path / hub id; ``None`` loads
            ``config.model.name_or_path``.
        processing_class: Processor; ``None`` loads it from ``config.model``.
        callbacks: Extra ``TrainerCallback`` objects.
    """
    from accelerate import PartialState
    from trl import GRPOConfig

    from crystalbench.rewards import load_reward_encoder, shared_source, trl_reward_funcs
    from crystalbench.training.curriculum import curriculum_schedule
    from crystalbench.training.trainer import CrystalGRPOTrainer, ValidationSetup

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
    reward_funcs = trl_reward_funcs(
        source, [term.kind for term in plan.terms], weights=rewards.weights, log_metrics=False
    )
    evaluation = config.evaluation
    encoder = (
        load_reward_encoder(rewards.encoder, device=rewards.device) if evaluation.enabled else None
    )

    args = grpo_arguments(config, plan)
    grpo_config = GRPOConfig(**args)
    if processing_class is None:
        processing_class = load_processor(config)

    train_items = data.split.train
    system_prompt = config.data.system_prompt
    cache = Path(config.output_dir) / ".dataset_cache"
    state = PartialState()
    with state.main_process_first():
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
        if evaluation.enabled:
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
    schedule = None
    if plan.ordered:
        cur = config.curriculum
        schedule = curriculum_schedule(
            train_items, cur.pacing, stages=cur.stages, tie_break=cur.tie_break, seed=config.seed
        )
    validation = None
    if evaluation.enabled and encoder is not None:
        items = (
            data.split.validation[: evaluation.max_items]
            if evaluation.max_items
            else data.split.validation
        )
        validation = ValidationSetup(
            items=list(items),
            messages=lambda item: item_messages(item, system_prompt),
            image_bytes=data.validation_images.image_bytes,
            source=source,
            weights=rewards.weights,
            encoder=encoder,
            tau=rewards.tau,
            batch_size=evaluation.batch_size,
            max_new_tokens=evaluation.max_new_tokens or config.grpo.max_completion_length,
        )
    run = _run_record(config, plan, data, args)
    trainer = CrystalGRPOTrainer(
        model=model if model is not None else config.model.name_or_path,
        reward_funcs=reward_funcs,
        args=grpo_config,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=processing_class,
        callbacks=[*_make_callbacks(config, plan, run), *(callbacks or [])],
        reward_terms=plan.terms,
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
        import json

        atomic_write_text(out / CONFIG_FILE, dump_config(config))
        atomic_write_text(out / RUN_FILE, json.dumps(run, indent=2, default=str))
    return trainer


def _rows_fingerprint(source: str, part: str, items: Any, system_prompt: str | None) -> str:
    import hashlib

    digest = hashlib.sha256(f"{source}|{part}|{system_prompt!r}|{prompt_digest()}".encode())
    for item in items:
        digest.update(item.id.encode() + b"\n")
    return digest.hexdigest()[:32]


def release() -> None:
    """Free what a finished phase left on the accelerator (before the next phase starts)."""
    import gc

    gc.collect()
    try:
        import torch
    except ImportError:  # pragma: no cover - training always has torch
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


@dataclass
class PhaseResult:
    """One trained phase."""

    name: str
    output_dir: str
    """Phase folder; the final model is saved there."""
    global_step: int
    log_history: list[dict[str, Any]]
    processing_class: Any
    is_main_process: bool
    trainer: Any = None
    """The trainer (kept for inspection; ``None`` after :func:`run_training` returns)."""


def train_phase(
    config: TrainConfig,
    plan: PhasePlan,
    data: TrainingData,
    *,
    model: Any = None,
    processing_class: Any = None,
    keep_trainer: bool = False,
    callbacks: list[Any] | None = None,
) -> PhaseResult:
    """Build the trainer of one phase, train it, and save the final model in the phase folder."""
    trainer = build_trainer(
        config, plan, data, model=model, processing_class=processing_class, callbacks=callbacks
    )
    trainer.train()
    if config.grpo.save:
        trainer.save_model(plan.output_dir)
        if trainer.accelerator.is_main_process:
            trainer.processing_class.save_pretrained(plan.output_dir)
    result = PhaseResult(
        name=plan.name,
        output_dir=plan.output_dir,
        global_step=trainer.state.global_step,
        log_history=list(trainer.state.log_history),
        processing_class=trainer.processing_class,
        is_main_process=trainer.accelerator.is_main_process,
        trainer=trainer if keep_trainer else None,
    )
    return result


@dataclass
class TrainingResult:
    """What :func:`run_training` did."""

    output_dir: str
    phases: list[PhaseResult]
    data: TrainingData
    handover: Any = None
    """The curriculum hand-over (``cpr-curriculum`` only)."""


def run_training(
    config: TrainConfig,
    *,
    model: Any = None,
    processing_class: Any = None,
    data: TrainingData | None = None,
    progress: ProgressHook | None = None,
    callbacks: list[Any] | None = None,
    keep_trainers: bool = False,
    phases: str = "all",
) -> TrainingResult:
    """Train ``config`` end to end (see the module docstring).

    Args:
        config: The run.
        model: Policy object for the first phase (``None``: load ``config.model``).
        processing_class: Processor (``None``: load ``config.model``'s).
        data: Prepared data (``None``: :func:`prepare_data`).
        progress: Progress hook for the leakage check.
        callbacks: Extra ``TrainerCallback`` objects for every phase.
        keep_trainers: Keep each phase's trainer in the result (tests, notebooks).
        phases: ``cpr-curriculum`` only: ``all``, ``phase1`` or ``phase2`` (see
            :func:`~crystalbench.training.curriculum.run_curriculum`).
    """
    if phases != "all" and config.strategy != "cpr-curriculum":
        raise TrainingError(f"--phase {phases} needs strategy cpr-curriculum")
    data = data or prepare_data(config, progress=progress)
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if data.leakage is not None:
        atomic_write_json(out / "leakage.json", data.leakage.model_dump(mode="json"))
    if config.strategy == "cpr-curriculum":
        from crystalbench.training.curriculum import run_curriculum

        summary, first, second = run_curriculum(
            config,
            data,
            model=model,
            processing_class=processing_class,
            callbacks=callbacks,
            keep_trainers=keep_trainers,
            phases=phases,
        )
        done = [phase for phase in (first, second) if phase is not None]
        return TrainingResult(str(out), done, data, handover=summary)
    (plan,) = phase_plans(config)
    result = train_phase(
        config,
        plan,
        data,
        model=model,
        processing_class=processing_class,
        keep_trainer=keep_trainers,
        callbacks=callbacks,
    )
    return TrainingResult(str(out), [result], data)
