"""What ``crystal validate sample-pairs``, ``agreement``, ``ablate`` and ``panel`` do, as
configs and one library function each.

Each command's options are one config (:class:`SamplePairsConfig`,
:class:`AgreementConfig`, :class:`AblationConfig`, :class:`PanelConfig`), built by
:func:`crystalbench.config.loader.build_config` from a file, ``CRYSTALBENCH_CACHE_DIR`` and
flags. :func:`draw_pairs`, :func:`measure_agreement`, :func:`ablate` and :func:`panel` read
what the config names, compute (:func:`~crystalbench.validation.sample_pairs`,
:func:`~crystalbench.validation.compute_agreement`,
:func:`~crystalbench.validation.run_ablation`,
:func:`~crystalbench.validation.panel.run_panel`), write, and return what the command prints.
Lists of numbers (``bands``, ``thresholds``, ``grid``) may be given as ``0.2,0.35,0.5``.

Examples:
    >>> AgreementConfig(pairs="p.jsonl", labels="l.csv", bands="0.2,0.5").bands
    [0.2, 0.5]
    >>> AblationConfig(benchmark="sample", predictions=["p.jsonl"], encoders="hash,h2=hash",
    ...                thresholds="0.3,0.5").encoders
    ['hash', 'h2=hash']
    >>> PanelConfig(benchmark="sample", predictions=["p.jsonl"],
    ...             graders=["minilm-offline,mpnet-offline", "hash@0.5"]).graders
    ['minilm-offline', 'mpnet-offline', 'hash@0.5']
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from crystalbench.config.loader import comma_list
from crystalbench.config.scoring import JudgeConfig, ScoreConfig
from crystalbench.config.settings import (
    ABLATION_THRESHOLDS,
    CACHE_DIR_ENV,
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CONFIDENCE,
    VALIDATION_PAIRS_PER_BAND,
    VALIDATION_SEED,
)
from crystalbench.defaults import TAU, VALIDATION_BAND_EDGES

if TYPE_CHECKING:
    from crystalbench.validation.ablation import AblationReport
    from crystalbench.validation.agreement import AgreementReport
    from crystalbench.validation.pairs import PairSample, StepPair
    from crystalbench.validation.panel import PanelReport

__all__ = [
    "AblationConfig",
    "AblationDone",
    "AgreementConfig",
    "AgreementDone",
    "PairsDrawn",
    "PanelConfig",
    "PanelDone",
    "SamplePairsConfig",
    "ablate",
    "draw_pairs",
    "judge_matcher_decisions",
    "measure_agreement",
    "panel",
]


def _increasing(values: list[float]) -> list[float]:
    """``values`` if they increase strictly and lie in [-1, 1] (cosines)."""
    for value in values:
        if not math.isfinite(value) or not -1.0 <= value <= 1.0:
            raise ValueError(f"{value:g} is outside [-1, 1]")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(f"values must increase: {','.join(f'{v:g}' for v in values)}")
    return values


class _Validation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    environment_variables: ClassVar[dict[str, str]] = {"cache_dir": CACHE_DIR_ENV}
    """The cache folder may come from ``CRYSTALBENCH_CACHE_DIR`` (a flag wins)."""

    seed: int = VALIDATION_SEED
    """Seed of every random choice (the draw, the bootstrap), recorded in the output."""
    use_cache: bool = True
    """Read and write the on-disk cache (embeddings; the judge matcher's verdicts)."""
    cache_dir: str | None = None
    """The cache folder (default ``$CRYSTALBENCH_CACHE_DIR``, ``~/.cache/crystalbench``)."""


class SamplePairsConfig(_Validation):
    """What ``crystal validate sample-pairs`` draws."""

    results: list[str] = Field(min_length=1)
    """Results folders of ``crystal score`` (one per model)."""
    per_band: int = Field(VALIDATION_PAIRS_PER_BAND, ge=1)
    """Pairs drawn per cosine band."""
    bands: list[float] = Field(default_factory=lambda: list(VALIDATION_BAND_EDGES), min_length=1)
    """Band edges, increasing (``<e0``, ``[e0,e1)``, ..., ``>=ek``)."""
    device: str | None = None
    """Where an encoder that has to be loaded runs (``None``: a GPU if visible)."""

    _split_bands = field_validator("bands", mode="before")(comma_list)
    _check_bands = field_validator("bands")(_increasing)


class AgreementConfig(_Validation):
    """What ``crystal validate agreement`` measures."""

    pairs: str
    """The pairs file of ``sample-pairs`` (``pairs.jsonl``, or its ``.csv``)."""
    labels: str
    """The review app's pairs export, or CSV/JSONL rows of ``pair_id``, ``annotator``,
    ``label`` (``match``/``no_match``/``unsure``)."""
    threshold: float = Field(TAU, ge=-1.0, le=1.0)
    """tau of the cosine matcher (the primary matcher)."""
    bands: list[float] = Field(default_factory=lambda: list(VALIDATION_BAND_EDGES), min_length=1)
    """Band edges, increasing."""
    decisions: list[str] | None = None
    """Other matchers' decisions: CSV/JSONL files of ``pair_id``, ``matcher``, ``decision``."""
    matcher_judge: JudgeConfig | None = None
    """Also score the judge matcher at this endpoint (its url and model)."""
    guard: str = "facts"
    """Also score cosine at tau with this fact guard (``facts``), or not (``none``);
    ``facts-strict`` is refused with the reason (its step scope needs whole chains)."""
    resamples: int = Field(VALIDATION_BOOTSTRAP_RESAMPLES, ge=0)
    """Bootstrap resamples (0: no kappa intervals)."""
    confidence: float = Field(VALIDATION_CONFIDENCE, ge=0.5, le=0.999)
    """Confidence level of every interval."""

    _split_bands = field_validator("bands", mode="before")(comma_list)
    _check_bands = field_validator("bands")(_increasing)


class AblationConfig(BaseModel):
    """What ``crystal validate ablate`` scores: every prediction set with every encoder at
    every threshold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    """``sample``, a hub id, a ``save_to_disk`` folder, a ``.parquet`` or ``.jsonl`` file."""
    predictions: list[str] = Field(min_length=1)
    """Prediction sets: ``NAME=FILE``, files, folders of ``.jsonl`` files or globs."""
    encoders: list[str] = Field(min_length=1)
    """Encoders (names, folders, ``minilm-offline``, ``hash``), each ``NAME`` or
    ``LABEL=NAME``."""
    thresholds: list[float] = Field(default_factory=lambda: list(ABLATION_THRESHOLDS), min_length=1)
    """The thresholds, increasing."""
    default_encoder: str | None = None
    """Label of the encoder of the reference ranking (``None``: the first)."""
    default_threshold: float | None = None
    """Threshold of the reference ranking (``None``: 0.35 if in the grid, else the first)."""
    guards: list[str] | None = None
    """Fact guards to ablate (``none``, ``facts``, ``facts-strict``): one row per encoder
    and guard (``None``: ``scoring.guard`` alone)."""
    scoring: ScoreConfig = Field(default_factory=ScoreConfig)
    """Every other scoring choice (alpha, order, compat, sources, cache...); its encoder
    and threshold are set per cell."""

    _split = field_validator("encoders", "thresholds", mode="before")(comma_list)
    _split_guards = field_validator("guards", mode="before")(comma_list)
    _check_thresholds = field_validator("thresholds")(_increasing)


class PanelConfig(BaseModel):
    """What ``crystal validate panel`` scores: every prediction set under every grader
    (:mod:`crystalbench.validation.panel`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    """``sample``, a hub id, a ``save_to_disk`` folder, a ``.parquet`` or ``.jsonl`` file."""
    predictions: list[str] = Field(min_length=1)
    """Prediction sets: ``NAME=FILE``, files, folders of ``.jsonl`` files or globs."""
    graders: list[str] = Field(min_length=1)
    """Graders, each ``[LABEL=]ENCODER[+facts|+facts-strict|+judge][@TAU]``
    (:func:`~crystalbench.validation.panel.parse_graders`); comma-separated parts split."""
    metric: str = "match_f1"
    """The metric of the rankings, tau-b and gains (a key of
    :data:`crystalbench.metrics.METRIC`)."""
    ensemble: bool = True
    """Add the conservative ensemble ``min`` (per item, the lowest value of any grader)."""
    baseline: str | None = None
    """The paired baseline set's name (with ``treated``): the run before training."""
    treated: str | None = None
    """The paired treated set's name: the run after training."""
    training_grader: str | None = None
    """The grader of the training reward (``None``: the first); the others are held out."""
    resamples: int = Field(VALIDATION_BOOTSTRAP_RESAMPLES, ge=0)
    """Bootstrap resamples of every interval (0: no tau-b intervals)."""
    confidence: float = Field(VALIDATION_CONFIDENCE, ge=0.5, le=0.999)
    """Confidence level of every interval."""
    seed: int = VALIDATION_SEED
    """Seed of every resampling, recorded in the output."""
    scoring: ScoreConfig = Field(default_factory=ScoreConfig)
    """Every other scoring choice (alpha, order, compat, items, cache, the judge matcher's
    endpoint...); its encoder, threshold, guard and matcher are set per grader."""

    @field_validator("graders", mode="before")
    @classmethod
    def _split_graders(cls, value: Any) -> Any:
        """``--grader a,b --grader c`` and ``graders: "a,b"`` both give ``[a, b, c]``."""
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return value
        return [part.strip() for text in texts for part in text.split(",") if part.strip()]


# --------------------------------------------------------------------------- the functions
@dataclass
class PairsDrawn:
    """What :func:`draw_pairs` drew and wrote."""

    sample: PairSample
    """The pairs and how each band was drawn."""
    models: list[str]
    """The runs' names, in order."""
    paths: dict[str, Path]
    """``jsonl``, ``csv``, ``blind_csv``, ``sampling``: the files written."""


def draw_pairs(
    config: SamplePairsConfig, out: str | Path, *, overwrite: bool = False
) -> PairsDrawn:
    """Draw step pairs from scored runs, stratified by cosine band, and write them beside
    ``out`` (the pairs JSONL; ``.csv``, ``.blind.csv`` and ``.sampling.json`` next to it).

    Raises:
        InputError: ``out`` holds an earlier draw and ``overwrite`` is off, a results folder
            cannot be read, no item has steps to pair, or the cached embeddings do not
            reproduce a run's cosines.
    """
    from crystalbench.encoders import EmbeddingStore
    from crystalbench.report.loading import load_runs
    from crystalbench.validation.pairs import check_pairs_out, sample_pairs, write_pairs

    check_pairs_out(out, overwrite=overwrite)
    runs = load_runs(config.results)
    sample = sample_pairs(
        runs,
        per_band=config.per_band,
        edges=config.bands,
        seed=config.seed,
        store=EmbeddingStore.default(config.cache_dir) if config.use_cache else None,
        device=config.device,
        cache_dir=config.cache_dir,
    )
    return PairsDrawn(sample, [run.name for run in runs], write_pairs(sample, out))


@dataclass
class AgreementDone:
    """What :func:`measure_agreement` computed and wrote."""

    report: AgreementReport
    """Every statistic."""
    paths: dict[str, Path]
    """``json``, ``md``, ``html``: the files written."""


def judge_matcher_decisions(
    pairs: list[StepPair], judge: JudgeConfig, *, cache_dir: str | None, use_cache: bool = True
) -> tuple[str, tuple[str, dict[str, bool | None]]]:
    """The judge matcher's decision on every pair, as a matcher of
    :func:`~crystalbench.validation.compute_agreement`: ``(name, (description, decisions))``.

    Raises:
        InputError: A pair lacks its predicted chain (a CSV pairs file).
    """
    from crystalbench.judges.step_judge import OpenAIStepJudge, judge_pair_decisions

    client = OpenAIStepJudge.from_config(judge, cache_dir=cache_dir, use_cache=use_cache)
    try:
        found = judge_pair_decisions(pairs, client)
    finally:
        client.close()
    identity = client.identity
    description = (
        f"the judge matcher ({identity.model} at {identity.base_url}, prompt "
        f"{identity.prompt_name} {(identity.prompt_hash or '')[:12]}): does it name the "
        "pair's predicted step for its reference step"
    )
    return f"judge:{judge.model}", (description, found)


def measure_agreement(config: AgreementConfig, out: str | Path) -> AgreementDone:
    """Agreement of the matchers with people (the paper's Table 3, kappa, alpha, the best
    tau, calibration), written as ``out/agreement.{json,md,html}``.

    Raises:
        InputError: A pairs, labels or decisions file is malformed, or a label names a pair
            the pairs file lacks.
    """
    from crystalbench.validation.agreement import compute_agreement, require_agreement_stack
    from crystalbench.validation.labels import read_decisions, read_labels
    from crystalbench.validation.pairs import read_pairs
    from crystalbench.validation.render import write_agreement

    require_agreement_stack()  # before any judge request: the extra is named at once

    pairs = read_pairs(config.pairs)
    labels = read_labels(config.labels)
    matchers: dict[str, tuple[str, Any]] = {}
    for file in config.decisions or []:
        for name, values in read_decisions(file).items():
            matchers[name] = (f"decisions read from {file}", values)
    if config.matcher_judge is not None:
        name, matcher = judge_matcher_decisions(
            pairs, config.matcher_judge, cache_dir=config.cache_dir, use_cache=config.use_cache
        )
        matchers[name] = matcher
    report = compute_agreement(
        pairs,
        labels,
        threshold=config.threshold,
        edges=config.bands,
        matchers=matchers,
        confidence=config.confidence,
        n_resamples=config.resamples,
        seed=config.seed,
        guard=config.guard,
    )
    return AgreementDone(report, write_agreement(report, out))


@dataclass
class AblationDone:
    """What :func:`ablate` computed and wrote."""

    report: AblationReport
    """Every cell, the rankings and the per-encoder means (``failures`` included)."""
    paths: dict[str, Path]
    """``json``, ``md``, ``csv``, ``tex``, ``html`` and the heatmaps: the files written."""
    failures: list[str] = field(default_factory=list)
    """The prediction sets that could not be scored (also in ``report.failures``)."""


def ablate(
    config: AblationConfig,
    out: str | Path,
    *,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> AblationDone:
    """Score every prediction set with every encoder at every threshold and write the
    ablation into ``out`` (``ablation.{json,md,csv,tex,html}`` and heatmap SVGs).

    A set that cannot be read or scored fails alone (:attr:`AblationDone.failures`).

    Raises:
        InputError: A bad benchmark, encoder list or default cell, or no set could be
            scored.
    """
    from crystalbench.data import load_benchmark
    from crystalbench.scoring.evaluation_many import resolve_prediction_args
    from crystalbench.validation.ablation import parse_encoders, run_ablation
    from crystalbench.validation.render import write_ablation

    encoders = parse_encoders(config.encoders)
    entries, failed = resolve_prediction_args(config.predictions)
    report = run_ablation(
        load_benchmark(config.benchmark),
        [(name, path) for name, path in entries],
        encoders,
        thresholds=config.thresholds,
        config=config.scoring,
        default_encoder=config.default_encoder,
        default_threshold=config.default_threshold,
        progress=progress,
        guards=config.guards,
    )
    failures = [str(failure) for failure in failed] + list(report.failures)
    report = report.model_copy(update={"failures": failures})
    return AblationDone(report, write_ablation(report, out), failures)


@dataclass
class PanelDone:
    """What :func:`panel` computed and wrote."""

    report: PanelReport
    """Every grader's metrics, the rankings, tau-b, the paired gains (``failures``
    included)."""
    paths: dict[str, Path]
    """``json`` and ``md``: the files written."""
    failures: list[str] = field(default_factory=list)
    """The prediction sets that could not be scored (also in ``report.failures``)."""


def panel(
    config: PanelConfig,
    out: str | Path,
    *,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> PanelDone:
    """Score every prediction set under every grader and write ``panel.json`` and
    ``panel.md`` into ``out``.

    Every grader is one scoring pass of the engine
    (:func:`~crystalbench.validation.panel.score_graders`); a set that cannot be read or
    scored fails alone (:attr:`PanelDone.failures`).

    Raises:
        InputError: A bad benchmark, grader, metric, baseline or treated name, or no set
            could be scored.
    """
    from crystalbench.data import load_benchmark
    from crystalbench.scoring.evaluation_many import resolve_prediction_args
    from crystalbench.validation.panel import parse_graders, run_panel
    from crystalbench.validation.render import write_panel

    graders = parse_graders(config.graders)
    entries, failed = resolve_prediction_args(config.predictions)
    report = run_panel(
        load_benchmark(config.benchmark),
        [(name, path) for name, path in entries],
        graders,
        config=config.scoring,
        metric=config.metric,
        ensemble=config.ensemble,
        baseline=config.baseline,
        treated=config.treated,
        training_grader=config.training_grader,
        confidence=config.confidence,
        n_resamples=config.resamples,
        seed=config.seed,
        progress=progress,
    )
    failures = [str(failure) for failure in failed] + list(report.failures)
    report = report.model_copy(update={"failures": failures})
    return PanelDone(report, write_panel(report, out), failures)
