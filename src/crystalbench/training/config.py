"""Training configuration: one YAML file describes a whole GRPO run.

A :class:`TrainConfig` is validated when it is loaded (unknown keys, impossible values and
inconsistent settings fail at once, naming the field), resolved into the exact
``GRPOConfig`` arguments and reward functions of each phase, and written next to every
checkpoint (``crystal_train_config.yaml``: loadable again with ``crystal train --config``).

The four strategies and the rewards they train on (see ``docs/training.md``):

================  ========================================================================
strategy          reward functions (TRL ``reward_funcs`` x ``reward_weights``)
================  ========================================================================
answer-only       ``format`` x w_format + ``answer`` x w_answer
composite         ``format`` x w_format + ``answer`` x w_answer + ``step_f1`` x w_step
cpr               ``cpr_answer`` + ``cpr_reasoning`` (= a_w c + s_w F1 (c + lambda (1 - c)))
cpr-curriculum    phase 1: as answer-only; phase 2 (from the best phase-1 checkpoint,
                  lower learning rate, fresh optimizer, items ordered by reference steps):
                  as cpr
random            ``random`` (control: a seeded uniform reward on CPR's range [0, a_w + s_w])
format-only       ``format`` x w_format (control: the format alone)
================  ========================================================================

Held-out graders (``heldout``) are added to every phase as TRL reward functions of weight 0:
logged, never trained on.

Each reward term belongs to one *objective*, ``answer`` or ``reasoning``; PCGrad projects the
gradients of the two objectives (see :mod:`crystalbench.training.pcgrad`).

This module imports neither torch nor TRL.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from crystalbench._internal.extras import require
from crystalbench.defaults import ENCODER, TAU
from crystalbench.errors import CrystalbenchError, UnknownNameError
from crystalbench.rewards.types import HeldoutGrader, RewardKind, RewardWeights

__all__ = [
    "CONTROL_STRATEGIES",
    "OBJECTIVES",
    "STRATEGIES",
    "CurriculumConfig",
    "DataConfig",
    "EvaluationConfig",
    "GRPOSettings",
    "HeldoutGrader",
    "LeakageConfig",
    "LeakageError",
    "ModelConfig",
    "Objective",
    "PCGradConfig",
    "PhaseOverrides",
    "PhasePlan",
    "RewardConfig",
    "RewardTerm",
    "Strategy",
    "TermKind",
    "TrainConfig",
    "TrainingError",
    "bundled_file",
    "bundled_recipes",
    "dump_config",
    "load_train_config",
    "phase_plans",
    "require_training_stack",
    "resolve_recipe_path",
    "reward_terms",
]

Strategy = Literal["answer-only", "composite", "cpr", "cpr-curriculum", "random", "format-only"]
STRATEGIES: tuple[str, ...] = (
    "answer-only",
    "composite",
    "cpr",
    "cpr-curriculum",
    "random",
    "format-only",
)
CONTROL_STRATEGIES: tuple[str, ...] = ("random", "format-only")
"""Controls: what a gain looks like without the reward's signal (``random``: a seeded random
reward on CPR's scale) or with the format alone (``format-only``)."""

Objective = Literal["answer", "reasoning", "heldout"]
OBJECTIVES: tuple[str, ...] = ("answer", "reasoning")
"""The trained objectives PCGrad projects; ``heldout`` graders are logged, never trained on."""

TermKind = Literal[RewardKind, "random"]
"""A reward term's kind: a :mod:`crystalbench.rewards` kind, or the ``random`` control."""

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
"""Bundled recipes (``recipe:NAME`` in ``--config``)."""


class TrainingError(CrystalbenchError):
    """A training run cannot start or go on (no checkpoint to hand over, bad phase state...)."""


class LeakageError(TrainingError):
    """The training pool contains benchmark items and the config says to refuse."""


class _Config(BaseModel):
    """Frozen, no unknown keys: a misspelt option fails loudly."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelConfig(_Config):
    """The policy model and its processor."""

    name_or_path: str
    """Hub id or folder of the policy (e.g. ``Qwen/Qwen2.5-VL-3B-Instruct``,
    ``OpenGVLab/InternVL3_5-4B-HF``)."""
    processor: str | None = None
    """Processor id or folder when it differs from ``name_or_path``."""
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "bfloat16"
    """Weights dtype at load time (``model_init_kwargs.dtype``)."""
    attn_implementation: str | None = None
    """``sdpa``, ``flash_attention_2``... (``None``: the model's default)."""
    trust_remote_code: bool = False
    """Allow hub code (not needed for the transformers-native ``-HF`` checkpoints)."""
    processor_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Extra ``AutoProcessor.from_pretrained`` arguments (Qwen: ``min_pixels``, ``max_pixels``)."""
    freeze_vision: bool = False
    """Freeze the vision tower (parameters whose name contains ``visual`` or
    ``vision_tower``) and its projector; only the language model is trained."""


class LeakageConfig(_Config):
    """Proof that no training item is a benchmark item (image hash plus normalised question)."""

    benchmark: str | None = "waybarrios/CRYSTAL"
    """Benchmark to check against (any ``load_benchmark`` spec); ``None`` skips the check,
    which must then be said explicitly with ``on_leak: ignore``."""
    on_leak: Literal["refuse", "drop", "ignore"] = "refuse"
    """``refuse`` to train, ``drop`` the leaked items, or ``ignore`` them (train anyway)."""
    max_hamming: int = Field(4, ge=0, le=16)
    """Largest Hamming distance between 64-bit difference hashes that counts as the same
    image (re-encoded or resized copies); equal pixels always count."""

    @model_validator(mode="after")
    def _explicit_skip(self) -> LeakageConfig:
        if self.benchmark is None and self.on_leak != "ignore":
            raise ValueError(
                "leakage.benchmark is null: set leakage.on_leak to 'ignore' to train without "
                "the leakage check, or name the benchmark to check against"
            )
        return self


class DataConfig(_Config):
    """Where the training pool comes from and how it is split."""

    train: str
    """Training pool: any :func:`crystalbench.data.load_benchmark` spec (JSONL file,
    ``save_to_disk`` folder, Parquet file, hub id) whose items carry reference steps."""
    split: str = "train"
    """Hub split of ``train``."""
    sources: list[str] | None = None
    """Keep only these sources of the pool."""
    limit: int | None = Field(None, ge=1)
    """Keep only the first ``limit`` items (after ``sources``)."""
    validation: str | None = None
    """A separate validation set; when ``None`` it is split off the pool."""
    validation_fraction: float = Field(0.15, gt=0.0, lt=1.0)
    """Share of the pool held out for validation (the paper holds out 15%)."""
    validation_seed: int | None = None
    """Seed of the validation split (``seed`` when ``None``)."""
    system_prompt: str | None = None
    """Optional system message; the user message is :func:`~crystalbench.training.data.
    prompt_text` of the item."""
    leakage: LeakageConfig = Field(default_factory=LeakageConfig)
    """Leakage check against the benchmark."""


class RewardConfig(_Config):
    """Reward encoder and weights (paper values by default)."""

    encoder: str = ENCODER
    """Sentence encoder for step F1 (the evaluation encoder; ``hash`` for smoke tests)."""
    tau: float = Field(TAU, ge=-1.0, le=1.0)
    """Step-matching threshold (the evaluation tau)."""
    weights: RewardWeights = Field(default_factory=RewardWeights)
    """Format/answer/step weights and CPR's a_w, s_w, lambda."""
    allow_think: bool = False
    """Accept one leading ``<think>`` block before the JSON object."""
    server_url: str | None = None
    """Score on a ``crystal serve-rewards`` server instead of in the trainer."""
    device: str | None = None
    """Reward encoder device (``cuda:$LOCAL_RANK`` when a GPU is visible)."""


class GRPOSettings(_Config):
    """The GRPO knobs crystalbench sets; anything else goes through ``extra``.

    Defaults follow TRL's except where noted. Every value ends up in the ``GRPOConfig``
    recorded in ``crystal_train_run.json``.
    """

    learning_rate: float = Field(1e-6, gt=0.0)
    num_train_epochs: float = Field(1.0, gt=0.0)
    max_steps: int = -1
    """Optimizer steps; ``-1`` derives them from ``num_train_epochs``."""
    per_device_train_batch_size: int = Field(8, ge=1)
    """Completions per device per micro-batch."""
    gradient_accumulation_steps: int = Field(1, ge=1)
    num_generations: int = Field(8, ge=2)
    """Completions per prompt (the GRPO group)."""
    max_completion_length: int = Field(512, ge=1)
    temperature: float = Field(1.0, gt=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    beta: float = Field(0.0, ge=0.0)
    """KL coefficient; TRL logs ``kl`` only when it is above 0 (it then keeps a reference
    model)."""
    epsilon: float = Field(0.2, gt=0.0)
    num_iterations: int = Field(1, ge=1)
    loss_type: str = "dapo"
    scale_rewards: Literal["group", "batch", "none"] = "group"
    multi_objective_aggregation: Literal["sum_then_normalize", "normalize_then_sum"] = (
        "sum_then_normalize"
    )
    warmup_steps: float = Field(0.0, ge=0.0)
    """Linear warm-up: a number of steps, or a float in [0, 1) for a share of all steps."""
    lr_scheduler_type: str = "constant"
    """crystalbench default ``constant`` (TRL's is linear decay); the paper does not say."""
    weight_decay: float = Field(0.0, ge=0.0)
    max_grad_norm: float = Field(1.0, ge=0.0)
    bf16: bool | None = None
    """``None``: TRL's default (bf16 unless fp16 is set or on CPU)."""
    gradient_checkpointing: bool = True
    use_vllm: bool = False
    vllm_mode: Literal["colocate", "server"] = "colocate"
    vllm_gpu_memory_utilization: float = Field(0.3, gt=0.0, le=1.0)
    vllm_tensor_parallel_size: int = Field(1, ge=1)
    logging_steps: int = Field(10, ge=1)
    save: bool = True
    """Write checkpoints and the final model; ``false`` keeps only logs and validation
    records (smoke tests). CPR-Curriculum needs its phase-1 checkpoints."""
    save_steps: int = Field(100, ge=1)
    save_total_limit: int | None = Field(None, ge=1)
    eval_steps: int | None = Field(100, ge=1)
    """Validation every this many steps (``None``: only at the end)."""
    deepspeed: str | None = None
    """DeepSpeed JSON config (``recipe:ds_zero3.json`` for the bundled one)."""
    use_cpu: bool = False
    dataloader_num_workers: int = Field(0, ge=0)
    log_completions: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)
    """Any other ``GRPOConfig`` field, passed through unchanged (checked at build time)."""


class PCGradConfig(_Config):
    """PCGrad (Yu et al. 2020) between the answer and the reasoning objective."""

    enabled: bool = False
    """Project conflicting gradient components (needs a reward term in each objective)."""
    forward: Literal["shared", "separate"] = "shared"
    """``shared``: one forward, two backward passes (``retain_graph``); ``separate``: one
    forward per objective (costs a forward, frees activations early; the safe choice under
    DeepSpeed ZeRO-3 with reentrant gradient checkpointing)."""
    eps: float = Field(1e-20, gt=0.0)
    """Squared norms below this count as zero gradients (no projection)."""


class PhaseOverrides(_Config):
    """Settings that differ in one phase of CPR-Curriculum."""

    learning_rate: float | None = Field(None, gt=0.0)
    """Absolute learning rate of the phase."""
    learning_rate_factor: float | None = Field(None, gt=0.0)
    """Learning rate as a multiple of ``grpo.learning_rate`` (ignored with
    ``learning_rate``)."""
    max_steps: int | None = None
    num_train_epochs: float | None = Field(None, gt=0.0)
    save_steps: int | None = Field(None, ge=1)
    eval_steps: int | None = Field(None, ge=1)


SelectionMetric = Literal["accuracy", "format_rate", "cpr", "match_f1", "harmonic"]


class CurriculumConfig(_Config):
    """CPR-Curriculum: phase hand-over and the easy-to-hard order of phase 2."""

    pacing: Literal["one_pass", "staged"] = "one_pass"
    """``one_pass``: every item once per epoch, fewer reference steps first;
    ``staged``: ``stages`` buckets by step count, stage k samples (shuffled) from buckets
    1..k, so the pool widens towards longer chains."""
    stages: int = Field(3, ge=2)
    """Buckets of the ``staged`` pacing."""
    enabled: bool = True
    """Order phase 2 from fewer to more reference steps; ``false`` shuffles it (the
    curriculum ablation: the two phases and the hand-over stay)."""
    tie_break: Literal["hash", "id"] = "hash"
    """Order among items with the same step count: a seeded hash of the id (mixes sources
    deterministically) or the id itself."""
    phase1: PhaseOverrides = Field(default_factory=PhaseOverrides)
    """Phase 1 (format + answer rewards)."""
    phase2: PhaseOverrides = Field(default_factory=lambda: PhaseOverrides(learning_rate_factor=0.5))
    """Phase 2 (full CPR); by default half the phase-1 learning rate."""
    selection_metric: SelectionMetric = "accuracy"
    """Validation metric that picks the phase-1 checkpoint phase 2 starts from (ties: higher
    format rate, then the earlier step)."""


class EvaluationConfig(_Config):
    """Periodic validation with crystalbench scoring (greedy decoding)."""

    enabled: bool = True
    max_items: int | None = Field(256, ge=1)
    """Validation items scored each time (the first ``max_items`` of the split)."""
    batch_size: int = Field(8, ge=1)
    """Prompts per generate call per device."""
    max_new_tokens: int | None = Field(None, ge=1)
    """Generation budget (``grpo.max_completion_length`` when ``None``)."""
    at_start: bool = False
    """Also validate the initial policy (step 0) before the first update: the reference
    point of the over-optimization report (KL 0, the starting graders' values)."""
    kl: bool = False
    """Measure KL to the phase's initial policy at each validation (``sqrt_kl``, the x axis of
    the over-optimization report): the summed per-token KL along each greedy validation
    completion. Uses TRL's reference model when ``grpo.beta > 0``; otherwise keeps a frozen
    copy of the initial policy (its memory; not under DeepSpeed ZeRO-3)."""
    selection_metric: str | None = "harmonic"
    """Validation metric that picks the run's ``best`` checkpoint (``best.json`` and a
    ``best`` link in the phase folder): any validation metric (``harmonic``, ``accuracy``,
    ``match_f1``...) or a held-out grader (``heldout/NAME``); ``None``: no selection. Chosen
    on the validation split, never on benchmark items. Checkpoints are then saved whenever
    validation runs (``save_steps = eval_steps``)."""


class TrainConfig(_Config):
    """A whole ``crystal train`` run.

    Examples:
        >>> config = TrainConfig(strategy="cpr", output_dir="runs/x",
        ...                      model={"name_or_path": "Qwen/Qwen2.5-VL-3B-Instruct"},
        ...                      data={"train": "pool.jsonl"})
        >>> [t.kind for t in reward_terms(config.strategy, config.rewards.weights)]
        ['cpr_answer', 'cpr_reasoning']
    """

    strategy: Strategy
    """``answer-only``, ``composite``, ``cpr`` or ``cpr-curriculum``."""
    output_dir: str
    """Run folder: checkpoints, logs, resolved config (phases in ``phase1/``, ``phase2/``)."""
    seed: int = 42
    """Seed of sampling, shuffling, the validation split and the curriculum tie-break."""
    run_name: str | None = None
    """Name shown by the trackers."""
    report_to: list[str] = Field(default_factory=lambda: ["none"])
    """``tensorboard``, ``wandb``, ``trackio``... or ``none``."""
    model: ModelConfig
    data: DataConfig
    rewards: RewardConfig = Field(default_factory=RewardConfig)
    grpo: GRPOSettings = Field(default_factory=GRPOSettings)
    pcgrad: PCGradConfig = Field(default_factory=PCGradConfig)
    curriculum: CurriculumConfig = Field(default_factory=CurriculumConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    heldout: list[HeldoutGrader] = Field(default_factory=list)
    """Held-out graders: logged in training with weight 0 and scored at each validation."""

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        names = [grader.name for grader in self.heldout]
        if len(set(names)) != len(names):
            raise ValueError(f"heldout: grader names must be unique, got {names}")
        if self.pcgrad.enabled:
            for plan in phase_plans(self):
                objectives = {term.objective for term in plan.terms}
                if plan.pcgrad and objectives != set(OBJECTIVES):
                    raise ValueError(
                        f"pcgrad needs a reward term in each objective, but strategy "
                        f"{self.strategy!r} ({plan.name}) only has {sorted(objectives)}"
                    )
        if self.strategy == "cpr-curriculum":
            plans = phase_plans(self)
            if plans[1].learning_rate >= plans[0].learning_rate:
                raise ValueError(
                    f"cpr-curriculum: phase 2 must use a lower learning rate than phase 1 "
                    f"({plans[1].learning_rate:g} >= {plans[0].learning_rate:g})"
                )
            if not self.grpo.save:
                raise ValueError(
                    "cpr-curriculum hands over a phase-1 checkpoint: grpo.save must be true"
                )
            if not self.evaluation.enabled:
                raise ValueError(
                    "cpr-curriculum selects the phase-1 checkpoint on the validation split: "
                    "evaluation.enabled must be true"
                )
        return self

    def digest(self) -> str:
        """SHA-256 (16 hex digits) of the canonical JSON of the config."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


class RewardTerm(_Config):
    """One TRL reward function of a phase."""

    kind: TermKind
    """Reward kind of :mod:`crystalbench.rewards` (its ``CrystalReward``), or ``random``."""
    weight: float
    """TRL ``reward_weights`` entry."""
    objective: Objective
    """Objective the term belongs to (PCGrad projects the two objectives' gradients)."""


class PhasePlan(_Config):
    """Everything that differs between the phases of a run."""

    name: Literal["main", "phase1", "phase2"]
    """``main`` for single-phase strategies."""
    output_dir: str
    terms: list[RewardTerm]
    learning_rate: float
    max_steps: int
    num_train_epochs: float
    save_steps: int
    eval_steps: int | None
    ordered: bool
    """Items ordered by reference step count (``curriculum`` pacing)."""
    pcgrad: bool
    """PCGrad on in this phase (never in a phase with a single objective)."""


def reward_terms(strategy: str, weights: RewardWeights, phase: str = "main") -> list[RewardTerm]:
    """The reward functions of a strategy (and phase), with weights and objectives.

    Args:
        strategy: One of :data:`STRATEGIES`.
        weights: Reward weights and CPR constants.
        phase: ``main``, or ``phase1`` / ``phase2`` for ``cpr-curriculum``.

    Raises:
        UnknownNameError: Unknown strategy or phase.

    Examples:
        >>> w = RewardWeights(format=0.5)
        >>> [(t.kind, t.weight, t.objective) for t in reward_terms("composite", w)]
        [('format', 0.5, 'answer'), ('answer', 1.0, 'answer'), ('step_f1', 1.0, 'reasoning')]
        >>> [t.kind for t in reward_terms("cpr-curriculum", w, "phase1")]
        ['format', 'answer']
    """
    if strategy not in STRATEGIES:
        raise UnknownNameError("strategy", strategy, STRATEGIES)
    if strategy == "cpr-curriculum":
        if phase not in ("phase1", "phase2"):
            raise UnknownNameError("cpr-curriculum phase", phase, ("phase1", "phase2"))
        strategy = "answer-only" if phase == "phase1" else "cpr"
    answer_terms = [
        RewardTerm(kind="format", weight=weights.format, objective="answer"),
        RewardTerm(kind="answer", weight=weights.answer, objective="answer"),
    ]
    if strategy == "answer-only":
        return answer_terms
    if strategy == "format-only":
        return [answer_terms[0]]
    if strategy == "random":
        return [RewardTerm(kind="random", weight=1.0, objective="answer")]
    if strategy == "composite":
        return [
            *answer_terms,
            RewardTerm(kind="step_f1", weight=weights.step, objective="reasoning"),
        ]
    # CPR's weights live inside the two parts; TRL adds them with weight 1 each.
    return [
        RewardTerm(kind="cpr_answer", weight=1.0, objective="answer"),
        RewardTerm(kind="cpr_reasoning", weight=1.0, objective="reasoning"),
    ]


def phase_plans(config: TrainConfig) -> list[PhasePlan]:
    """The phases of a run: one for most strategies, two for ``cpr-curriculum``.

    In phase 1 of the curriculum, checkpoints are saved exactly when validation runs
    (``save_steps = eval_steps``) so that every candidate checkpoint has a validation score.

    Examples:
        >>> config = TrainConfig(strategy="cpr-curriculum", output_dir="r",
        ...                      model={"name_or_path": "m"}, data={"train": "t.jsonl"},
        ...                      grpo={"learning_rate": 1e-6})
        >>> [(p.name, p.learning_rate, p.ordered) for p in phase_plans(config)]
        [('phase1', 1e-06, False), ('phase2', 5e-07, True)]
    """
    grpo = config.grpo
    base = Path(config.output_dir)
    if config.strategy != "cpr-curriculum":
        terms = reward_terms(config.strategy, config.rewards.weights)
        save_steps = grpo.save_steps
        if grpo.eval_steps is not None and _selects(config):
            save_steps = grpo.eval_steps
        return [
            PhasePlan(
                name="main",
                output_dir=str(base),
                terms=terms,
                learning_rate=grpo.learning_rate,
                max_steps=grpo.max_steps,
                num_train_epochs=grpo.num_train_epochs,
                save_steps=save_steps,
                eval_steps=grpo.eval_steps,
                ordered=False,
                pcgrad=config.pcgrad.enabled,
            )
        ]
    plans = []
    for name, overrides in (
        ("phase1", config.curriculum.phase1),
        ("phase2", config.curriculum.phase2),
    ):
        if overrides.learning_rate is not None:
            rate = overrides.learning_rate
        elif overrides.learning_rate_factor is not None:
            rate = grpo.learning_rate * overrides.learning_rate_factor
        else:
            rate = grpo.learning_rate
        eval_steps = overrides.eval_steps or grpo.eval_steps
        save_steps = overrides.save_steps or grpo.save_steps
        if eval_steps is not None and (name == "phase1" or _selects(config)):
            save_steps = eval_steps
        terms = reward_terms("cpr-curriculum", config.rewards.weights, name)
        plans.append(
            PhasePlan(
                name=name,
                output_dir=str(base / name),
                terms=terms,
                learning_rate=rate,
                max_steps=overrides.max_steps
                if overrides.max_steps is not None
                else grpo.max_steps,
                num_train_epochs=overrides.num_train_epochs or grpo.num_train_epochs,
                save_steps=save_steps,
                eval_steps=eval_steps,
                ordered=name == "phase2" and config.curriculum.enabled,
                pcgrad=config.pcgrad.enabled and len({t.objective for t in terms}) == 2,
            )
        )
    return plans


def _selects(config: TrainConfig) -> bool:
    return bool(
        config.evaluation.enabled and config.evaluation.selection_metric and config.grpo.save
    )


def _resolve_path(spec: str | Path) -> Path:
    text = str(spec)
    if text.startswith("recipe:"):
        name = text[len("recipe:") :]
        candidates = [RECIPES_DIR / name, RECIPES_DIR / f"{name}.yaml"]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        known = sorted(p.stem for p in RECIPES_DIR.glob("*.yaml"))
        raise UnknownNameError("recipe", name, known)
    return Path(text)


def resolve_recipe_path(spec: str | Path) -> Path:
    """A config path, or a bundled file named ``recipe:NAME`` (``.yaml`` optional).

    Examples:
        >>> resolve_recipe_path("recipe:qwen2_5_vl_3b_cpr_curriculum").name
        'qwen2_5_vl_3b_cpr_curriculum.yaml'
    """
    return _resolve_path(spec)


def bundled_file(name: str) -> Path:
    """The absolute path of a bundled recipe or launcher config, by its path under the
    recipes folder (``qwen2_5_vl_3b_cpr.yaml``, ``launch/ds_zero3.json``).

    Raises:
        UnknownNameError: No such bundled file (the known ones are listed).

    Examples:
        >>> bundled_file("qwen2_5_vl_3b_cpr.yaml").name
        'qwen2_5_vl_3b_cpr.yaml'
    """
    target = (RECIPES_DIR / name).resolve()
    if not target.is_file() or RECIPES_DIR.resolve() not in target.parents:
        known = sorted(
            str(path.relative_to(RECIPES_DIR)) for path in RECIPES_DIR.rglob("*") if path.is_file()
        )
        raise UnknownNameError("bundled recipe file", name, known)
    return target


def bundled_recipes() -> tuple[list[Path], list[Path]]:
    """``(training recipes, launcher configs)``: the bundled ``recipe:NAME`` files and the
    accelerate / DeepSpeed configs beside them.

    Examples:
        >>> recipes, launchers = bundled_recipes()
        >>> any(path.stem == "qwen2_5_vl_3b_cpr" for path in recipes)
        True
    """
    return sorted(RECIPES_DIR.glob("*.yaml")), sorted((RECIPES_DIR / "launch").glob("*"))


def require_training_stack(what: str = "crystal train") -> None:
    """Fail at once, naming the ``train`` extra, when TRL, transformers, accelerate, PEFT,
    datasets or torch is missing (before any data is prepared or a model loaded).

    Raises:
        MissingExtraError: One of them is not installed.
    """
    require(
        "trl",
        "transformers",
        "accelerate",
        "peft",
        "datasets",
        "torch",
        what=what,
        extra="train",
        load=False,
    )


def load_train_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Load and validate a training config from YAML (or ``recipe:NAME``).

    Args:
        path: YAML file, or ``recipe:NAME`` for a bundled recipe.
        overrides: Dotted keys set after loading, e.g. ``{"grpo.max_steps": 10}``.

    Raises:
        InputError: Missing file, malformed YAML, or a field that fails validation (named).
        UnknownNameError: Unknown recipe.

    Examples:
        >>> config = load_train_config("recipe:qwen2_5_vl_3b_cpr_curriculum",
        ...                            {"output_dir": "/tmp/x", "grpo.max_steps": 3})
        >>> config.strategy, config.grpo.max_steps, config.output_dir
        ('cpr-curriculum', 3, '/tmp/x')
    """
    from crystalbench.config.scoring import load_config_with_overrides

    loaded: TrainConfig = load_config_with_overrides(TrainConfig, _resolve_path(path), overrides)
    return loaded


def dump_config(config: TrainConfig) -> str:
    """The config as YAML with every default filled in (loadable by :func:`load_train_config`).

    Examples:
        >>> config = TrainConfig(strategy="cpr", output_dir="r", model={"name_or_path": "m"},
        ...                      data={"train": "t.jsonl"})
        >>> TrainConfig.model_validate(yaml.safe_load(dump_config(config))) == config
        True
    """
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
