"""``crystal train-sweep``: a grid of training runs judged on the held-out validation split.

The grid's axes (each optional but the first, which defaults to the paper's range):

- ``grid``: CPR's answer weight a_w, with ``s_w = 1 - a_w`` (the paper's weights sum to 1:
  0.65 + 0.35; ``--keep-step-weight`` keeps the config's ``s_w``); CPR strategies only;
- ``strategies``: the strategies compared (``cpr,random,format-only``: CPR against its
  controls); default: the base config's;
- ``seeds``: a count (``3``: the config's seed and the next two) or a list of seeds: every
  configuration is trained with each;
- ``pcgrad``: PCGrad ``on`` / ``off`` (strategies with an answer and a reasoning objective);
- ``curriculum``: the easy-to-hard order of phase 2 ``on`` / ``off`` (``cpr-curriculum``);
- ``phase2_learning_rates``: phase 2's learning rate (``cpr-curriculum``).

An axis applies only to the strategies it can change; the others get one point (and a
strategy with a single objective trains without PCGrad). Each run goes to its own folder,
``OUTPUT_DIR/<configuration>/`` (``aw-0.65``, ``random``, ``cpr-curriculum_aw-0.65_pcgrad-off``
...), and with ``seeds`` to ``OUTPUT_DIR/<configuration>/seed-N/``. Every run shares one data
preparation, so every run trains on the same items and is judged on the same validation
items (the held-out 15% of the pool; never benchmark items); each run's config records that
split's seed. After training, the final policy answers the *whole* validation split greedily
and is scored by crystalbench (:mod:`crystalbench.training.evaluation`), held-out graders
included; each run also keeps its own ``best`` checkpoint and over-optimization report.

The configurations are compared on a weight-free metric (default ``harmonic``: the harmonic
mean of validation accuracy and Match F1, since CPR itself changes with the weights; or a
held-out grader, ``heldout/NAME``), averaged over seeds. Results: ``OUTPUT_DIR/sweep.jsonl``
(one line per run), ``OUTPUT_DIR/sweep.md`` (a table) and the seed table
(:mod:`crystalbench.training.seeds`: ``seeds.json``, ``seeds.csv``, ``seeds.md``: mean and
standard deviation of every validation metric per configuration, and whether each
difference between configurations exceeds two standard deviations).
"""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from crystalbench._internal.io import atomic_write_text
from crystalbench.config.loader import comma_list
from crystalbench.config.settings import TRAIN_SWEEP_GRID, TRAIN_SWEEP_METRIC
from crystalbench.defaults import CPR_ANSWER_WEIGHT
from crystalbench.errors import UnknownNameError
from crystalbench.rewards.types import RewardWeights
from crystalbench.training.checkpoints import CheckpointChoice
from crystalbench.training.config import (
    Strategy,
    TrainConfig,
    TrainingError,
    phase_plans,
    require_training_stack,
    reward_terms,
)
from crystalbench.training.evaluation import VALIDATION_METRICS
from crystalbench.training.preflight import check_environment
from crystalbench.training.seeds import SeedRun, SeedTable, build_seed_table, write_seed_table
from crystalbench.types import Record

__all__ = [
    "CPR_STRATEGIES",
    "PlannedRun",
    "SweepConfig",
    "SweepPoint",
    "SweepReport",
    "SweepSettings",
    "plan_sweep",
    "render_sweep",
    "run_sweep",
    "run_sweep_config",
    "sweep_configs",
]

CPR_STRATEGIES: tuple[str, ...] = ("cpr", "cpr-curriculum")
"""Strategies with CPR's weights (the ``grid`` axis applies to them)."""


class SweepPoint(Record):
    """One trained run of the sweep."""

    answer_weight: float
    """a_w."""
    step_weight: float
    """s_w."""
    output_dir: str
    n_items: int
    """Validation items scored."""
    metrics: dict[str, float]
    """Validation metrics of the final policy (see ``evaluation.VALIDATION_METRICS``; plus
    ``proxy``, ``heldout/NAME`` and ``sqrt_kl`` where the run records them)."""
    configuration: str = ""
    """Label of the run's configuration (everything but the seed): its folder name."""
    strategy: str | None = None
    seed: int | None = None
    pcgrad: bool | None = None
    """PCGrad on in this run."""
    curriculum: bool | None = None
    """Phase 2's easy-to-hard order (``cpr-curriculum`` only)."""
    phase2_learning_rate: float | None = None
    """Phase 2's learning rate (``cpr-curriculum`` only)."""
    selected: CheckpointChoice | None = None
    """The run's own ``best`` checkpoint, chosen on validation (``best.json``)."""


class SweepReport(Record):
    """The whole sweep."""

    metric: str
    """Metric the best configuration is chosen by (its mean over seeds)."""
    points: list[SweepPoint]
    best: float
    """a_w of the best configuration."""
    best_configuration: str = ""
    """Label of the best configuration."""
    axes: list[str] = Field(default_factory=list)
    """The axes given besides ``grid`` (``strategies``, ``seeds``, ``pcgrad``...)."""
    seeds: SeedTable | None = None
    """The seed table (also in ``seeds.json``)."""


class SweepSettings(Record):
    """What one configuration of the sweep sets."""

    strategy: str
    answer_weight: float
    step_weight: float
    pcgrad: bool
    curriculum: bool | None
    """``None`` unless the strategy is ``cpr-curriculum``."""
    phase2_learning_rate: float | None
    """``None``: the base config's phase-2 rate (or not ``cpr-curriculum``)."""


@dataclass(frozen=True)
class PlannedRun:
    """One run the sweep will train."""

    configuration: str
    seed: int
    settings: SweepSettings
    config: TrainConfig


def _two_objectives(strategy: str) -> bool:
    phases = ("phase1", "phase2") if strategy == "cpr-curriculum" else ("main",)
    return any(
        len({t.objective for t in reward_terms(strategy, RewardWeights(), phase)}) == 2
        for phase in phases
    )


def _split_seeds(value: Any) -> Any:
    if isinstance(value, str):
        if "," in value:
            return comma_list(value)
        if not value.strip().lstrip("-").isdigit():
            raise ValueError(f"expected a count (3) or a list of seeds (1,2,3), got {value!r}")
    return value


def _unique(values: list[Any], what: str) -> list[Any]:
    if len(set(values)) != len(values):
        raise ValueError(f"each {what} once, got {values}")
    return values


def _on_off(value: bool) -> str:
    return "on" if value else "off"


class SweepConfig(BaseModel):
    """What ``crystal train-sweep`` trains: a base config and the grid's axes.

    A bad axis fails when the config is built, naming the field: ``curriculum`` without
    ``cpr-curriculum`` among the strategies, a phase-2 learning rate not below phase 1's, a
    metric the runs do not record.

    Examples:
        >>> base = TrainConfig(strategy="cpr", output_dir="s", model={"name_or_path": "m"},
        ...                    data={"train": "pool.jsonl"})
        >>> config = SweepConfig(train=base, grid=[0.6], strategies=["cpr", "random"], seeds=2)
        >>> [(r.configuration, r.seed, r.config.output_dir) for r in plan_sweep(config)]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('cpr_aw-0.60', 42, 's/cpr_aw-0.60/seed-42'), ('cpr_aw-0.60', 43, 's/cpr_aw-0.60/seed-43'),
         ('random', 42, 's/random/seed-42'), ('random', 43, 's/random/seed-43')]
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    train: TrainConfig
    """The base training config; each run goes to a folder under ``train.output_dir``."""
    strategies: list[Strategy] | None = Field(None, min_length=1)
    """Strategies compared (``cpr,random,format-only``); ``None``: ``train.strategy``."""
    grid: list[float] = Field(default_factory=lambda: list(TRAIN_SWEEP_GRID), min_length=1)
    """Values of a_w (``0.5,0.6`` on a command line); CPR strategies only."""
    metric: str = TRAIN_SWEEP_METRIC
    """Validation metric that picks the best configuration, averaged over seeds
    (``harmonic``, ``accuracy``..., or a held-out grader ``heldout/NAME``)."""
    keep_step_weight: bool = False
    """Keep the config's s_w instead of ``1 - a_w``."""
    seeds: int | list[int] | None = None
    """Seeds of every configuration: a count (``3``: ``train.seed`` and the next two) or a
    list (``1,2,3``); ``None``: ``train.seed`` alone, no ``seed-N`` folders."""
    pcgrad: list[bool] | None = Field(None, min_length=1)
    """PCGrad ``on,off`` (strategies with an answer and a reasoning objective)."""
    curriculum: list[bool] | None = Field(None, min_length=1)
    """Phase 2's easy-to-hard order ``on,off`` (``cpr-curriculum``)."""
    phase2_learning_rates: list[float] | None = Field(None, min_length=1)
    """Phase 2's learning rates (``cpr-curriculum``; each below phase 1's)."""

    _split_lists = field_validator(
        "strategies", "grid", "pcgrad", "curriculum", "phase2_learning_rates", mode="before"
    )(comma_list)
    _split_seeds = field_validator("seeds", mode="before")(_split_seeds)

    @field_validator("train")
    @classmethod
    def _validates(cls, value: TrainConfig) -> TrainConfig:
        if not value.evaluation.enabled:
            raise ValueError(
                "the sweep compares runs on the validation split: evaluation.enabled must be true"
            )
        return value

    @field_validator("strategies")
    @classmethod
    def _unique_strategies(cls, values: list[str] | None) -> list[str] | None:
        return None if values is None else _unique(values, "strategy")

    @field_validator("grid")
    @classmethod
    def _open_unit_interval(cls, values: list[float], info: ValidationInfo) -> list[float]:
        outside = [value for value in values if not 0.0 < value < 1.0]
        if outside:
            raise ValueError(f"a_w must lie in (0, 1), got {outside[0]:g}")
        _unique(values, "a_w")
        strategies = _strategies_of(info)
        if strategies is not None and not set(strategies) & set(CPR_STRATEGIES):
            raise ValueError(
                f"the a_w grid needs a CPR strategy (cpr or cpr-curriculum) among the "
                f"sweep's strategies, not only {', '.join(strategies)}"
            )
        return values

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str, info: ValidationInfo) -> str:
        train = info.data.get("train")
        graders = [f"heldout/{g.name}" for g in train.heldout] if train is not None else []
        known = (*VALIDATION_METRICS, *graders)
        if value not in known and not (train is None and value.startswith("heldout/")):
            raise ValueError(UnknownNameError("sweep metric", value, known).message)
        return value

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, value: int | list[int] | None) -> int | list[int] | None:
        if isinstance(value, int) and value < 1:
            raise ValueError(f"a count of seeds must be at least 1, got {value}")
        if isinstance(value, list):
            if not value:
                raise ValueError("the list of seeds is empty")
            _unique(value, "seed")
        return value

    @field_validator("pcgrad")
    @classmethod
    def _pcgrad_applies(cls, values: list[bool] | None, info: ValidationInfo) -> Any:
        if values is None:
            return None
        _unique(values, "value")
        strategies = _strategies_of(info)
        if strategies is not None and not any(_two_objectives(s) for s in strategies):
            raise ValueError(
                "PCGrad needs a strategy with an answer and a reasoning objective (composite, "
                f"cpr, cpr-curriculum) among the sweep's strategies ({', '.join(strategies)})"
            )
        return values

    @field_validator("curriculum")
    @classmethod
    def _curriculum_applies(cls, values: list[bool] | None, info: ValidationInfo) -> Any:
        if values is None:
            return None
        _unique(values, "value")
        _needs_curriculum(info, "the curriculum axis")
        return values

    @field_validator("phase2_learning_rates")
    @classmethod
    def _phase2_rates(cls, values: list[float] | None, info: ValidationInfo) -> Any:
        if values is None:
            return None
        _unique(values, "learning rate")
        if any(value <= 0 for value in values):
            raise ValueError(f"learning rates must be positive, got {values}")
        _needs_curriculum(info, "the phase-2 learning rate axis")
        train = info.data.get("train")
        if train is not None:
            first = phase_plans(train.model_copy(update={"strategy": "cpr-curriculum"}))[0]
            high = [value for value in values if value >= first.learning_rate]
            if high:
                raise ValueError(
                    f"phase 2 must learn slower than phase 1 ({first.learning_rate:g}), got "
                    f"{high[0]:g}"
                )
        return values

    @model_validator(mode="after")
    def _every_run_is_a_valid_config(self) -> SweepConfig:
        plan_sweep(self)
        return self

    def strategy_list(self) -> list[str]:
        """The strategies compared (``strategies``, or the base config's)."""
        return list(self.strategies) if self.strategies is not None else [self.train.strategy]

    def seed_list(self) -> list[int]:
        """The seeds every configuration trains with."""
        if self.seeds is None:
            return [self.train.seed]
        if isinstance(self.seeds, int):
            return [self.train.seed + index for index in range(self.seeds)]
        return list(self.seeds)

    def axes(self) -> list[str]:
        """The axes given besides ``grid``."""
        names = ("strategies", "seeds", "pcgrad", "curriculum", "phase2_learning_rates")
        return [name for name in names if getattr(self, name) is not None]


def _strategies_of(info: ValidationInfo) -> list[str] | None:
    """The sweep's strategies from the fields validated so far (``None``: unknown yet)."""
    if info.data.get("strategies") is not None:
        return list(info.data["strategies"])
    train = info.data.get("train")
    return [train.strategy] if train is not None else None


def _needs_curriculum(info: ValidationInfo, what: str) -> None:
    strategies = _strategies_of(info)
    if strategies is not None and "cpr-curriculum" not in strategies:
        raise ValueError(
            f"{what} needs strategy cpr-curriculum among the sweep's strategies "
            f"({', '.join(strategies)}; add --strategies ...,cpr-curriculum)"
        )


def plan_sweep(config: SweepConfig) -> list[PlannedRun]:
    """Every run of the sweep, in order: strategy, a_w, PCGrad, curriculum, phase-2 rate,
    seed (see the module docstring for folders and labels).

    Raises:
        ValueError: A run's config is not a valid ``TrainConfig`` (the configuration named).
    """
    base = config.train
    explicit = config.strategies is not None
    validation_seed = (
        base.data.validation_seed if base.data.validation_seed is not None else base.seed
    )
    dumped = base.model_dump(mode="json")
    out = Path(base.output_dir)
    runs: list[PlannedRun] = []
    for strategy in config.strategy_list():
        cpr = strategy in CPR_STRATEGIES
        two = _two_objectives(strategy)
        weights: list[float | None] = list(config.grid) if cpr else [None]
        pcgrads = list(config.pcgrad) if config.pcgrad and two else [base.pcgrad.enabled and two]
        curricula: list[bool | None] = (
            list(config.curriculum)
            if config.curriculum and strategy == "cpr-curriculum"
            else [base.curriculum.enabled if strategy == "cpr-curriculum" else None]
        )
        rates: list[float | None] = (
            list(config.phase2_learning_rates)
            if config.phase2_learning_rates and strategy == "cpr-curriculum"
            else [None]
        )
        for a_w, pcgrad, curriculum, rate in itertools.product(weights, pcgrads, curricula, rates):
            parts = [strategy] if explicit or not cpr else []
            if a_w is not None:
                parts.append(f"aw-{a_w:.2f}")
            if config.pcgrad and two:
                parts.append(f"pcgrad-{_on_off(pcgrad)}")
            if config.curriculum and curriculum is not None:
                parts.append(f"curriculum-{_on_off(curriculum)}")
            if rate is not None:
                parts.append(f"lr2-{rate:g}")
            label = "_".join(parts)
            data = json.loads(json.dumps(dumped))
            data["strategy"] = strategy
            weights_of = data["rewards"]["weights"]
            if a_w is not None:
                weights_of["cpr_answer"] = a_w
                if not config.keep_step_weight:
                    weights_of["cpr_step"] = round(1.0 - a_w, 10)
            data["pcgrad"]["enabled"] = pcgrad
            if curriculum is not None:
                data["curriculum"]["enabled"] = curriculum
            if rate is not None:
                data["curriculum"]["phase2"]["learning_rate"] = rate
            data["data"]["validation_seed"] = validation_seed
            for seed in config.seed_list():
                folder = out / label
                if config.seeds is not None:
                    folder = folder / f"seed-{seed}"
                data["seed"] = seed
                data["output_dir"] = str(folder)
                try:
                    run_config = TrainConfig.model_validate(data)
                except ValidationError as exc:
                    first = exc.errors()[0]
                    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
                    raise ValueError(f"configuration {label}: {message}") from None
                settings = SweepSettings(
                    strategy=strategy,
                    answer_weight=run_config.rewards.weights.cpr_answer,
                    step_weight=run_config.rewards.weights.cpr_step,
                    pcgrad=pcgrad,
                    curriculum=curriculum,
                    phase2_learning_rate=rate,
                )
                runs.append(PlannedRun(label, seed, settings, run_config))
    return runs


def sweep_configs(
    config: TrainConfig, grid: Sequence[float], *, keep_step_weight: bool = False
) -> list[tuple[float, TrainConfig]]:
    """One config per ``a_w``, each in its own output folder.

    Raises:
        TrainingError: The strategy has no CPR, or a weight is outside (0, 1).

    Examples:
        >>> base = TrainConfig(strategy="cpr", output_dir="sweep", model={"name_or_path": "m"},
        ...                    data={"train": "pool.jsonl"})
        >>> [(a, c.rewards.weights.cpr_step, c.output_dir) for a, c in sweep_configs(base, [0.6])]
        [(0.6, 0.4, 'sweep/aw-0.60')]
    """
    if config.strategy not in ("cpr", "cpr-curriculum"):
        raise TrainingError(f"the a_w sweep needs a CPR strategy, not {config.strategy!r}")
    if not grid:
        raise TrainingError("the a_w grid is empty")
    out = []
    for a_w in grid:
        if not 0.0 < a_w < 1.0:
            raise TrainingError(f"a_w must lie in (0, 1), got {a_w}")
        weights = config.rewards.weights.model_copy(
            update={"cpr_answer": a_w}
            if keep_step_weight
            else {"cpr_answer": a_w, "cpr_step": round(1.0 - a_w, 10)}
        )
        rewards = config.rewards.model_copy(update={"weights": weights})
        folder = str(Path(config.output_dir) / f"aw-{a_w:.2f}")
        out.append((a_w, config.model_copy(update={"rewards": rewards, "output_dir": folder})))
    return out


def run_sweep(
    config: TrainConfig,
    grid: Sequence[float],
    *,
    metric: str = "harmonic",
    keep_step_weight: bool = False,
    model_factory: Callable[[], tuple[Any, Any]] | None = None,
) -> SweepReport:
    """Train one run per ``a_w`` and compare them on the validation split (the a_w axis
    alone; :func:`run_sweep_config` takes every axis).

    Args:
        config: Base config (``cpr`` or ``cpr-curriculum``).
        grid: Values of ``a_w``.
        metric: Validation metric that picks the best point.
        keep_step_weight: Keep ``s_w`` instead of ``1 - a_w``.
        model_factory: Returns a fresh ``(model, processor)`` per run (``None``: load
            ``config.model`` each time).

    Raises:
        TrainingError: Bad grid or strategy; unknown metric.
        MissingExtraError: The ``train`` extra is not installed.
    """
    if config.strategy not in CPR_STRATEGIES:
        raise TrainingError(f"the a_w sweep needs a CPR strategy, not {config.strategy!r}")
    try:
        sweep = SweepConfig(
            train=config, grid=list(grid), metric=metric, keep_step_weight=keep_step_weight
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ()))
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        raise TrainingError(f"{field}: {message}" if field else message) from None
    return run_sweep_config(sweep, model_factory=model_factory)


def run_sweep_config(
    config: SweepConfig, *, model_factory: Callable[[], tuple[Any, Any]] | None = None
) -> SweepReport:
    """Train every run of :func:`plan_sweep` and compare the configurations on validation.

    Args:
        config: The base config and the axes.
        model_factory: Returns a fresh ``(model, processor)`` per run (``None``: load each
            run's ``model`` itself).

    Raises:
        MissingExtraError: The ``train`` extra is not installed.
    """
    from crystalbench.training.runner import prepare_data, run_training

    require_training_stack("crystal train-sweep")
    runs = plan_sweep(config)
    if model_factory is None:
        check_environment(config.train, what="crystal train-sweep")
    data = prepare_data(config.train)
    points: list[SweepPoint] = []
    out = Path(config.train.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    main_process = True
    for run in runs:
        model, processor = model_factory() if model_factory is not None else (None, None)
        result = run_training(
            run.config, model=model, processing_class=processor, data=data, keep_trainers=True
        )
        last = result.phases[-1]
        trainer = last.trainer
        if trainer.validation is None:  # pragma: no cover - SweepConfig requires evaluation
            raise TrainingError("the sweep needs evaluation.enabled: true")
        trainer.validation.items = list(data.split.validation)
        validation = trainer.run_validation()
        settings = run.settings
        points.append(
            SweepPoint(
                answer_weight=settings.answer_weight,
                step_weight=settings.step_weight,
                output_dir=run.config.output_dir,
                n_items=validation.n_items,
                metrics=validation.metrics,
                configuration=run.configuration,
                strategy=settings.strategy,
                seed=run.seed,
                pcgrad=settings.pcgrad,
                curriculum=settings.curriculum,
                phase2_learning_rate=settings.phase2_learning_rate,
                selected=last.best,
            )
        )
        main_process = bool(trainer.accelerator.is_main_process)
        if main_process:
            lines = "".join(json.dumps(p.model_dump(mode="json")) + "\n" for p in points)
            atomic_write_text(out / "sweep.jsonl", lines)
        del trainer, result, last, model
        gc.collect()
        _empty_device_cache()
    table = build_seed_table(
        [
            SeedRun(
                configuration=p.configuration,
                settings=_settings_columns(p),
                seed=p.seed if p.seed is not None else config.train.seed,
                metrics=p.metrics,
            )
            for p in points
        ],
        metric=config.metric,
    )
    best_row = max(
        enumerate(table.rows),
        key=lambda pair: (
            pair[1].metrics[config.metric].mean
            if config.metric in pair[1].metrics
            else float("-inf"),
            -abs(float(pair[1].settings.get("a_w", CPR_ANSWER_WEIGHT)) - CPR_ANSWER_WEIGHT),
            -pair[0],
        ),
    )[1]
    best_point = next(p for p in points if p.configuration == best_row.configuration)
    report = SweepReport(
        metric=config.metric,
        points=points,
        best=best_point.answer_weight,
        best_configuration=best_row.configuration,
        axes=config.axes(),
        seeds=table,
    )
    if main_process:
        atomic_write_text(out / "sweep.md", render_sweep(report))
        write_seed_table(out, table)
    return report


def _settings_columns(point: SweepPoint) -> dict[str, Any]:
    columns: dict[str, Any] = {"strategy": point.strategy}
    if point.strategy in CPR_STRATEGIES:
        columns |= {"a_w": point.answer_weight, "s_w": point.step_weight}
    columns["pcgrad"] = point.pcgrad
    if point.curriculum is not None:
        columns["curriculum"] = point.curriculum
    if point.phase2_learning_rate is not None:
        columns["phase2_learning_rate"] = point.phase2_learning_rate
    return columns


def _empty_device_cache() -> None:
    try:
        import torch
    except ImportError:  # pragma: no cover - training always has torch
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def render_sweep(report: SweepReport) -> str:
    """The sweep as a Markdown table (the best configuration marked).

    Examples:
        >>> point = SweepPoint(answer_weight=0.65, step_weight=0.35, output_dir="x",
        ...                    n_items=10, metrics={k: 0.5 for k in VALIDATION_METRICS})
        >>> print(render_sweep(SweepReport(metric="harmonic", points=[point], best=0.65)))
        ... # doctest: +ELLIPSIS
        | a_w | s_w | accuracy | match_f1 | ordered_f1 | format_rate | cpr | harmonic | items |
        |---|---|---|---|---|---|---|---|---|
        | **0.65** | 0.35 | 0.500 | 0.500 | 0.500 | 0.500 | 0.500 | 0.500 | 10 |
        ...
    """
    columns = ("accuracy", "match_f1", "ordered_f1", "format_rate", "cpr", "harmonic")
    graders = sorted({k for p in report.points for k in p.metrics if k.startswith("heldout/")})
    if not report.axes:
        lines = [
            "| a_w | s_w | " + " | ".join(columns) + " | items |",
            "|" + "---|" * (len(columns) + 3),
        ]
        for point in report.points:
            a_w = f"{point.answer_weight:.2f}"
            if point.answer_weight == report.best:
                a_w = f"**{a_w}**"
            values = " | ".join(f"{point.metrics.get(c, float('nan')):.3f}" for c in columns)
            lines.append(f"| {a_w} | {point.step_weight:.2f} | {values} | {point.n_items} |")
        lines.append("")
        lines.append(f"Best a_w by validation {report.metric}: {report.best:.2f}.")
        return "\n".join(lines) + "\n"
    shown = (*columns, *graders)
    lines = [
        "| configuration | seed | " + " | ".join(shown) + " | items | selected step |",
        "|" + "---|" * (len(shown) + 4),
    ]
    for point in report.points:
        name = point.configuration
        if name == report.best_configuration:
            name = f"**{name}**"
        values = " | ".join(f"{point.metrics.get(c, float('nan')):.3f}" for c in shown)
        step = "-" if point.selected is None else str(point.selected.step)
        lines.append(f"| {name} | {point.seed} | {values} | {point.n_items} | {step} |")
    lines.append("")
    lines.append(
        f"Best configuration by mean validation {report.metric} over seeds: "
        f"{report.best_configuration}. Mean, standard deviation and comparisons: seeds.md."
    )
    return "\n".join(lines) + "\n"
