"""``CrystalGRPOTrainer``: TRL's ``GRPOTrainer`` with PCGrad, curriculum order and CRYSTAL logs.

What it adds to ``GRPOTrainer`` (TRL 1.x):

- **Monitoring.** Every reward batch logs ``crystal/format_rate``, ``crystal/accuracy``,
  ``crystal/step_f1``, ``crystal/cpr`` (with the run's weights, whatever the strategy) and
  ``crystal/steps`` through TRL's metric path, so they reach ``report_to`` (TensorBoard,
  W&B...) averaged over ranks, next to TRL's ``reward``, ``rewards/<function>/mean``,
  ``entropy`` and ``kl`` (when ``beta > 0``). With PCGrad it logs ``pcgrad/cosine``,
  ``pcgrad/conflict`` (averaged over the logging window: the conflict rate),
  ``pcgrad/conflict_rate`` (since the start), ``pcgrad/dot``, the two gradient norms and the
  two update weights.
- **Validation.** ``evaluate()`` is replaced by crystalbench scoring of greedy answers on the
  validation split (:mod:`crystalbench.training.evaluation`); metrics are logged as
  ``eval_accuracy``, ``eval_match_f1``, ``eval_format_rate``, ``eval_cpr``... and appended to
  ``OUTPUT_DIR/validation.jsonl`` (what the curriculum hand-over selects on).
- **Curriculum.** With a schedule, prompts are drawn by
  :class:`~crystalbench.training.sampler.CurriculumSampler` instead of TRL's shuffled
  ``RepeatSampler``.
- **PCGrad.** ``_generate_and_score_completions`` adds ``advantages_answer`` and
  ``advantages_reasoning`` (which sum to TRL's ``advantages``; checked on every batch), and
  ``training_step`` computes the GRPO loss once per objective, runs one backward pass per
  objective and lets :class:`~crystalbench.training.pcgrad.GradientSurgeon` project and
  combine the gradients at the optimizer boundary.

How the per-objective losses are built: TRL's own ``_compute_loss`` is called with the
advantages replaced, so every loss type, clipping rule, importance-sampling correction and
mask TRL supports is kept. In ``shared`` mode the model forward is computed once and reused
by every call (``retain_graph``); in ``separate`` mode each objective has its own forward.
Regularisers that do not depend on the advantage (``beta`` KL term, entropy bonus, MoE
auxiliary loss) are isolated as ``L(0)``, the loss with zero advantages: the objective losses
are ``L(A_ans) - L(0)`` and ``L(A_rsn) - L(0)`` (exactly the policy terms) and ``L(0)`` is
back-propagated once and added unprojected. Calls other than the one with TRL's full advantage
leave TRL's metrics and entropy controller untouched.

On policy (``num_iterations=1``, no vLLM importance-sampling correction) the probability ratio
is 1 and the loss is linear in the advantage, so ``L(A_ans) + L(A_rsn) = L(A)``: without a
conflict the PCGrad update equals TRL's CPR update. Off policy, each objective is optimised
with its own clipped surrogate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import Trainer
from trl import GRPOTrainer

from crystalbench._internal.io import atomic_write_text
from crystalbench.encoders.base import Encoder
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.items import items_from_columns
from crystalbench.rewards.types import RewardWeights, SignalSource
from crystalbench.training.config import OBJECTIVES, PCGradConfig, RewardTerm, TrainingError
from crystalbench.training.evaluation import (
    ValidationResult,
    generate_completions,
    reward_means,
    score_validation,
)
from crystalbench.training.pcgrad import GradientSurgeon, ProjectionInfo, split_advantages
from crystalbench.training.sampler import CurriculumSampler
from crystalbench.types import BenchmarkItem

__all__ = ["CrystalGRPOTrainer", "ValidationSetup"]

_ENTROPY_STATE = ("entropy_coef", "_entropy_window_stats", "_last_world_entropy")


@dataclass
class ValidationSetup:
    """Everything periodic validation needs."""

    items: Sequence[BenchmarkItem]
    """Validation items (already capped to ``evaluation.max_items``)."""
    messages: Callable[[BenchmarkItem], list[dict[str, Any]]]
    """Conversational prompt of an item."""
    image_bytes: Callable[[BenchmarkItem], bytes | None]
    """Encoded image of an item."""
    source: SignalSource
    """Reward scorer (strict format, CPR)."""
    weights: RewardWeights
    encoder: Encoder
    """Encoder for Match F1 (the reward's)."""
    tau: float
    batch_size: int
    max_new_tokens: int
    kl: bool = False
    """Measure KL to the phase's initial policy (``kl``, ``sqrt_kl``)."""


class CrystalGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` plus PCGrad, curriculum sampling, CRYSTAL metrics and validation.

    Args:
        *args: ``GRPOTrainer`` arguments (``model``, ``reward_funcs``, ``args``...).
        reward_terms: One :class:`~crystalbench.training.config.RewardTerm` per reward
            function, in the same order (its objective decides the PCGrad split).
        signal_source: The reward scorer, for the ``crystal/*`` metrics (``None``: not
            logged).
        weights: CPR weights for the logged ``crystal/cpr``.
        pcgrad: PCGrad settings (off when ``None``).
        curriculum_schedule: Dataset indices in curriculum order (``None``: TRL's sampler).
        validation: Validation setup (``None``: TRL's own evaluation loop).
        **kwargs: More ``GRPOTrainer`` arguments.

    Raises:
        ValueError: ``reward_terms`` does not match ``reward_funcs``, or PCGrad lacks an
            objective.
    """

    def __init__(
        self,
        *args: Any,
        reward_terms: Sequence[RewardTerm],
        signal_source: SignalSource | None = None,
        weights: RewardWeights | None = None,
        pcgrad: PCGradConfig | None = None,
        curriculum_schedule: Sequence[int] | None = None,
        validation: ValidationSetup | None = None,
        **kwargs: Any,
    ) -> None:
        self.reward_terms = list(reward_terms)
        self.signal_source = signal_source
        self.crystal_weights = weights or RewardWeights()
        self.pcgrad_config = pcgrad or PCGradConfig()
        self.curriculum_schedule = (
            list(curriculum_schedule) if curriculum_schedule is not None else None
        )
        self.validation = validation
        self.projection_history: list[ProjectionInfo] = []
        self.validation_history: list[tuple[int, ValidationResult]] = []
        self._last_rewards_per_func: torch.Tensor | None = None
        self._surgeon: GradientSurgeon | None = None
        self.crystal_run_record: dict[str, Any] = {}
        """Provenance written to ``crystal_train_run.json`` (set by the runner)."""
        super().__init__(*args, **kwargs)
        if len(self.reward_terms) != len(self.reward_funcs):
            raise ValueError(
                f"{len(self.reward_terms)} reward terms for "
                f"{len(self.reward_funcs)} reward functions"
            )
        self.objectives = [term.objective for term in self.reward_terms]
        trained = set(self.objectives) - {"heldout"}
        if self.pcgrad_config.enabled and trained != set(OBJECTIVES):
            raise ValueError(
                f"PCGrad needs both objectives, the reward terms have {self.objectives}"
            )
        self.kl_reference: Any = None
        """The initial policy validation measures KL to (``evaluation.kl``)."""
        if validation is not None and validation.kl:
            self.kl_reference = self._initial_policy()

    def _initial_policy(self) -> Any:
        if self.ref_model is not None:
            return self.ref_model
        if self.is_deepspeed_enabled:
            import logging

            logging.getLogger(__name__).warning(
                "evaluation.kl under DeepSpeed needs grpo.beta > 0 (TRL's reference model): "
                "no KL is measured"
            )
            return None
        import copy

        model: Any = self.model
        frozen = copy.deepcopy(model).eval()
        for module in frozen.modules():
            # TRL patches ``model.forward`` with a closure over the *original* model's forward
            # (its fused LM head): a copy would run the live policy. The class's forward it is.
            module.__dict__.pop("forward", None)
        for parameter in frozen.parameters():
            parameter.requires_grad_(False)
        return frozen

    @property
    def pcgrad_enabled(self) -> bool:
        """PCGrad is on for this trainer."""
        return self.pcgrad_config.enabled

    # ------------------------------------------------------------------ sampling
    def _get_train_sampler(self, dataset: Any = None) -> Any:
        if self.curriculum_schedule is None:
            return super()._get_train_sampler(dataset)
        rows: Any = dataset if dataset is not None else self.train_dataset
        size = len(rows)
        if self.curriculum_schedule and max(self.curriculum_schedule) >= size:
            raise TrainingError(f"curriculum schedule points past the {size} training rows")
        args: Any = self.args
        generations = int(self.num_generations or 1)
        return CurriculumSampler(
            self.curriculum_schedule,
            mini_repeat_count=generations,
            batch_size=args.generation_batch_size // generations,
            repeat_count=self.num_iterations * args.steps_per_generation,
        )

    # ------------------------------------------------------------------ rewards and advantages
    def _calculate_rewards(
        self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any
    ) -> torch.Tensor:
        rewards_per_func = super()._calculate_rewards(
            inputs, prompts, completions, completion_ids_list
        )
        self._last_rewards_per_func = rewards_per_func
        if self.signal_source is not None:
            self._log_reward_signals(inputs, completions)
        return rewards_per_func

    def _log_reward_signals(
        self, inputs: Sequence[dict[str, Any]], completions: Sequence[Any]
    ) -> None:
        columns = {key: [row.get(key) for row in inputs] for key in inputs[0]}
        items = items_from_columns(len(inputs), columns)
        assert self.signal_source is not None
        signals = self.signal_source.signals(list(completions), items)

        def mean(values: list[float]) -> float:
            return math.fsum(values) / len(values) if values else 0.0

        cprs = [make_breakdown(s, "cpr", self.crystal_weights).total for s in signals]
        # Every rank must log the same keys (TRL gathers them), so each key is always logged.
        self._log_metric("crystal/format_rate", mean([float(s.format_ok) for s in signals]))
        self._log_metric(
            "crystal/accuracy",
            mean([float(s.answer_correct) for s in signals if s.answer_correct is not None]),
        )
        self._log_metric(
            "crystal/step_f1", mean([s.step_f1 for s in signals if s.step_f1 is not None])
        )
        self._log_metric("crystal/cpr", mean([c for c in cprs if c is not None]))
        self._log_metric("crystal/steps", mean([float(s.n_steps) for s in signals]))

    def _generate_and_score_completions(self, inputs: Any) -> dict[str, Any]:
        output = super()._generate_and_score_completions(inputs)
        if not self.pcgrad_enabled or self._last_rewards_per_func is None:
            return output
        model: Any = self.model
        mode = "train" if model.training else "eval"
        groups = self.num_generations if mode == "train" else self.num_generations_eval
        parts = split_advantages(
            self._last_rewards_per_func,
            self.reward_weights,
            self.objectives,
            num_generations=int(groups or 1),
            scale_rewards=self.scale_rewards,
            aggregation=self.multi_objective_aggregation,
        )
        n_local = len(inputs)
        local = slice(
            self.accelerator.process_index * n_local, (self.accelerator.process_index + 1) * n_local
        )
        advantages = output["advantages"]
        answer = parts["answer"][local].to(advantages.device, advantages.dtype)
        reasoning = parts["reasoning"][local].to(advantages.device, advantages.dtype)
        tolerance = 1e-4 * max(1.0, float(advantages.abs().max()) if advantages.numel() else 1.0)
        if advantages.numel() and float((answer + reasoning - advantages).abs().max()) > tolerance:
            raise TrainingError(
                "the answer and reasoning advantages do not add up to TRL's advantage: TRL's "
                "advantage computation changed; PCGrad's split must be updated "
                "(crystalbench.training.pcgrad.split_advantages)"
            )
        output["advantages_answer"] = answer
        output["advantages_reasoning"] = reasoning
        return output

    # ------------------------------------------------------------------ PCGrad step
    def training_step(
        self, model: torch.nn.Module, inputs: Any, num_items_in_batch: Any = None
    ) -> torch.Tensor:
        if not self.pcgrad_enabled:
            return super().training_step(model, inputs, num_items_in_batch)
        started = time.perf_counter()
        model.train()
        optimizer: Any = self.optimizer
        if hasattr(optimizer, "train") and callable(optimizer.train):
            optimizer.train()
        inputs = self._prepare_inputs(inputs)
        if self._surgeon is None:
            self._surgeon = GradientSurgeon(self.accelerator, model, eps=self.pcgrad_config.eps)
        with self._surgeon.context(model):
            loss = self._objective_backward(model, inputs)
        if self.accelerator.sync_gradients:
            self._record_projection(self._surgeon.apply())
        self._step += 1
        self._current_train_step_time += time.perf_counter() - started
        if self._step % self.current_gradient_accumulation_steps == 0:
            self._metrics["train"]["step_time"].append(self._current_train_step_time)
            self._current_train_step_time = 0.0
        return loss.detach()

    def _has_regulariser(self) -> bool:
        return bool(
            self.beta != 0.0
            or getattr(self, "_entropy_bonus_enabled", False)
            or getattr(self, "aux_loss_enabled", False)
        )

    def _loss_with(
        self,
        model: torch.nn.Module,
        inputs: dict[str, Any],
        advantages: torch.Tensor,
        *,
        shadow: bool,
    ) -> torch.Tensor:
        variant = dict(inputs)
        variant["advantages"] = advantages
        with self.compute_loss_context_manager():
            if not shadow:
                return self._compute_loss(model, variant)
            with self._shadow_state():
                return self._compute_loss(model, variant)

    def _objective_backward(self, model: torch.nn.Module, inputs: dict[str, Any]) -> torch.Tensor:
        assert self._surgeon is not None
        surgeon = self._surgeon
        answer = inputs["advantages_answer"]
        reasoning = inputs["advantages_reasoning"]
        zeros = torch.zeros_like(inputs["advantages"])
        regulariser = self._has_regulariser()
        if self.pcgrad_config.forward == "shared":
            with self._cached_forward():
                total = self._loss_with(model, inputs, inputs["advantages"], shadow=False)
                base = self._loss_with(model, inputs, zeros, shadow=True) if regulariser else None
                loss_a = self._loss_with(model, inputs, answer, shadow=True)
                loss_r = self._loss_with(model, inputs, reasoning, shadow=True)
            if base is not None:
                surgeon.backward("answer", loss_a - base, retain_graph=True)
                surgeon.backward("reasoning", loss_r - base, retain_graph=True)
                surgeon.backward("regulariser", base, retain_graph=False)
            else:
                surgeon.backward("answer", loss_a, retain_graph=True)
                surgeon.backward("reasoning", loss_r, retain_graph=False)
            return total
        with self._cached_forward():
            total = self._loss_with(model, inputs, inputs["advantages"], shadow=False)
            total = total.detach()  # let the first forward's graph go after its backward
            base = self._loss_with(model, inputs, zeros, shadow=True) if regulariser else None
            loss_a = self._loss_with(model, inputs, answer, shadow=True)
            if base is not None:
                surgeon.backward("answer", loss_a - base, retain_graph=True)
                surgeon.backward("regulariser", base, retain_graph=False)
            else:
                surgeon.backward("answer", loss_a, retain_graph=False)
        with self._cached_forward():
            base = self._loss_with(model, inputs, zeros, shadow=True) if regulariser else None
            loss_r = self._loss_with(model, inputs, reasoning, shadow=True)
            surgeon.backward(
                "reasoning", loss_r - base if base is not None else loss_r, retain_graph=False
            )
        return total

    @contextmanager
    def _cached_forward(self) -> Iterator[None]:
        """Within the block, the policy forward of ``_compute_loss`` runs once and is reused."""
        original = type(self)._get_per_token_logps_and_entropies
        cache: dict[str, Any] = {}

        def cached(model: Any, *args: Any, **kwargs: Any) -> Any:
            if "value" not in cache:
                cache["value"] = original(self, model, *args, **kwargs)
            return cache["value"]

        self._get_per_token_logps_and_entropies = cached  # type: ignore[method-assign]
        try:
            yield
        finally:
            del self.__dict__["_get_per_token_logps_and_entropies"]

    @contextmanager
    def _shadow_state(self) -> Iterator[None]:
        """Undo what a ``_compute_loss`` call does to metrics and the entropy controller."""
        model: Any = self.model
        mode = "train" if model.training else "eval"
        metrics = self._metrics[mode]
        lengths = {key: len(values) for key, values in metrics.items()}
        missing = object()
        saved = {name: getattr(self, name, missing) for name in _ENTROPY_STATE}
        try:
            yield
        finally:
            for key in list(metrics):
                if key not in lengths:
                    del metrics[key]
                else:
                    del metrics[key][lengths[key] :]
            for name, value in saved.items():
                if value is not missing:
                    setattr(self, name, value)

    def _record_projection(self, info: ProjectionInfo) -> None:
        self.projection_history.append(info)
        conflicts = sum(1 for p in self.projection_history if p.conflict)
        metrics = self._metrics["train"]
        metrics["pcgrad/cosine"].append(info.cosine)
        metrics["pcgrad/conflict"].append(1.0 if info.conflict else 0.0)
        metrics["pcgrad/conflict_rate"].append(conflicts / len(self.projection_history))
        metrics["pcgrad/dot"].append(info.dot)
        metrics["pcgrad/grad_norm_answer"].append(info.norm_answer)
        metrics["pcgrad/grad_norm_reasoning"].append(info.norm_reasoning)
        metrics["pcgrad/weight_answer"].append(info.weight_answer)
        metrics["pcgrad/weight_reasoning"].append(info.weight_reasoning)

    # ------------------------------------------------------------------ validation
    def run_validation(self) -> ValidationResult:
        """Generate greedy answers for the validation items and score them."""
        setup = self.validation
        if setup is None:
            raise TrainingError("this trainer has no validation split")
        kls: list[float] = []
        completions = generate_completions(
            self,
            setup.items,
            setup.messages,
            setup.image_bytes,
            batch_size=setup.batch_size,
            max_new_tokens=setup.max_new_tokens,
            reference=self.kl_reference,
            kl_out=kls,
        )
        result = score_validation(
            setup.items,
            completions,
            source=setup.source,
            weights=setup.weights,
            encoder=setup.encoder,
            tau=setup.tau,
        )
        metrics = dict(result.metrics)
        metrics.update(self._grader_metrics(setup.items, completions))
        if self.kl_reference is not None and kls:
            kl = math.fsum(kls) / len(kls)
            metrics["kl"] = kl
            metrics["sqrt_kl"] = math.sqrt(max(kl, 0.0))
        return ValidationResult(n_items=result.n_items, metrics=metrics)

    def _grader_metrics(
        self, items: Sequence[BenchmarkItem], completions: Sequence[str]
    ) -> dict[str, float]:
        """``proxy`` (the phase's weighted reward) and ``heldout/NAME`` on validation."""
        weights = [float(w) for w in self.reward_weights.tolist()]
        trained = [i for i, o in enumerate(self.objectives) if o != "heldout"]
        held = [i for i, o in enumerate(self.objectives) if o == "heldout"]
        functions = list(self.reward_funcs)
        if not items:
            return {}
        proxy, _ = reward_means(
            [functions[i] for i in trained], [weights[i] for i in trained], items, completions
        )
        metrics = {"proxy": proxy}
        if held:
            _, means = reward_means(
                [functions[i] for i in held], [1.0] * len(held), items, completions
            )
            for index, mean in zip(held, means, strict=True):
                name = str(getattr(functions[index], "__name__", index)).removeprefix("heldout_")
                metrics[f"heldout/{name}"] = mean
        return metrics

    def evaluate(
        self,
        eval_dataset: Any = None,
        ignore_keys: list[str] | None = None,
        metric_key_prefix: str = "eval",
    ) -> dict[str, float]:
        if self.validation is None:
            return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        result = self.run_validation()
        self.validation_history.append((self.state.global_step, result))
        metrics = {f"{metric_key_prefix}_{k}": v for k, v in result.metrics.items()}
        metrics[f"{metric_key_prefix}_n_items"] = float(result.n_items)
        # transformers' log, not TRL's: TRL's would flush the pending train metrics as eval.
        Trainer.log(self, dict(metrics))
        self.control = self.callback_handler.on_evaluate(
            self.args, self.state, self.control, metrics
        )
        if self.accelerator.is_main_process:
            self._append_validation(result)
        return metrics

    def _append_validation(self, result: ValidationResult) -> None:
        import json

        path = Path(str(self.args.output_dir)) / "validation.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "step": self.state.global_step,
            "n_items": result.n_items,
            "metrics": result.metrics,
        }
        previous = path.read_text(encoding="utf-8") if path.exists() else ""
        atomic_write_text(path, previous + json.dumps(record) + "\n")
