"""The grader panel: the same prediction sets scored by several graders, and whether they agree.

A gain measured with the encoder that produced the training reward may be grader fitting.
The panel scores every prediction set under several **graders**, each one
:class:`~crystalbench.config.scoring.ScoreConfig` variation scored by the engine
(:func:`~crystalbench.scoring.evaluation_many.evaluate_many`, the one scoring loop; the
encoder x threshold ablation of :mod:`~crystalbench.validation.ablation` runs through
:func:`score_graders` too): an encoder of another family (``minilm-offline``,
``mpnet-offline``, ``hash``, any sentence-transformers model), at its own threshold
(crystal-metrics' per-model threshold, :data:`crystalbench.defaults.ENCODER_THRESHOLDS`, unless
one is given), with a fact guard or the judge matcher. It reports

- every model's metrics under each grader (the engine's summaries: the scoring
  :class:`~crystalbench.scoring.aggregate.Aggregator`), and the models' ranking by one metric;
- Kendall's tau-b between every two graders' rankings (:func:`scipy.stats.kendalltau`), with a
  percentile bootstrap interval over items (the items are resampled, every model's mean under
  both graders recomputed, tau-b again);
- a conservative ensemble, ``min``: per item and metric, the lowest value any grader gives,
  aggregated like any other grader (graders of one pretraining family make correlated errors,
  so their minimum is the claim all of them support);
- for paired runs (``baseline`` and ``treated``: before and after training), the gain under
  each grader with a paired bootstrap interval
  (:func:`crystalbench.statistics.intervals.paired_bootstrap`), and the share of the training
  grader's gain that each held-out grader confirms (its gain / the training grader's gain).

Grader specs: ``LABEL=ENCODER[+MODIFIER...][@TAU]`` where a modifier is a fact guard
(``facts``, ``facts-strict``) or ``judge`` (the judge matcher of ``scoring.matcher_judge``), and
``@TAU`` a threshold; ``mpnet=mpnet-offline``, ``minilm+facts=minilm-offline+facts``, ``hash``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from crystalbench.config.scoring import ScoreConfig
from crystalbench.config.settings import (
    SCHEMA_VERSION,
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CONFIDENCE,
    VALIDATION_SEED,
)
from crystalbench.defaults import ENCODER_THRESHOLDS, GUARDS, GuardKind, MatcherKind
from crystalbench.encoders import EmbeddingStore, Encoder, load_encoder
from crystalbench.errors import InputError
from crystalbench.metrics import METRIC, METRICS
from crystalbench.scoring.aggregate import Aggregator
from crystalbench.types import ItemResult, Record

__all__ = [
    "ENSEMBLE",
    "Grader",
    "GraderGain",
    "GraderRun",
    "PairedGains",
    "PanelReport",
    "RankAgreement",
    "ScoredGrader",
    "ensemble_items",
    "grader_threshold",
    "parse_graders",
    "run_panel",
    "score_graders",
]

ENSEMBLE = "min"
"""Label of the conservative ensemble: per item and metric, the minimum over the graders."""

_ENSEMBLE_FIELDS = ("precision", "recall", "f1", "lis", "kendall", "ordered_f1")
"""Per-item fields the ensemble takes the minimum of (the step metrics; the answer and the
step count are the same under every encoder grader)."""


class Grader(Record):
    """One grader: a variation of the scoring configuration."""

    label: str
    """Name in tables."""
    encoder: str
    """Encoder name or folder (:func:`crystalbench.encoders.load_encoder`)."""
    threshold: float | None = None
    """Cosine threshold; ``None``: :func:`grader_threshold` decides."""
    guard: GuardKind = "none"
    """Fact guard."""
    matcher: MatcherKind = "cosine"
    """``cosine`` or ``judge`` (needs ``scoring.matcher_judge``)."""


def grader_threshold(grader: Grader, config: ScoreConfig) -> float:
    """The grader's threshold: its own, else crystal-metrics' threshold for its encoder's
    model (all-mpnet-base-v2: 0.38), else the configuration's.

    Examples:
        >>> grader_threshold(Grader(label="m", encoder="mpnet-offline"), ScoreConfig())
        0.38
        >>> grader_threshold(Grader(label="h", encoder="hash"), ScoreConfig(threshold=0.4))
        0.4
    """
    if grader.threshold is not None:
        return grader.threshold
    from crystalbench.encoders.model_files import model_label

    for name in (model_label(grader.encoder), Path(grader.encoder).name):
        if name in ENCODER_THRESHOLDS:
            return ENCODER_THRESHOLDS[name]
    return config.threshold


def parse_graders(text: str | Sequence[str]) -> list[Grader]:
    """Graders from ``"minilm=minilm-offline,mpnet=mpnet-offline+facts@0.4,hash"``.

    Raises:
        InputError: An empty spec, an unknown modifier, a bad threshold or a label used twice.

    Examples:
        >>> [(g.label, g.encoder, g.guard, g.threshold) for g in parse_graders(
        ...     "minilm=minilm-offline,m+f=mpnet-offline+facts@0.4,hash")]
        [('minilm', 'minilm-offline', 'none', None), ('m+f', 'mpnet-offline', 'facts', 0.4), \
('hash', 'hash', 'none', None)]
    """
    parts = text.split(",") if isinstance(text, str) else list(text)
    out: list[Grader] = []
    for raw in (part.strip() for part in parts):
        if not raw:
            continue
        label, sep, spec = raw.partition("=")
        if not sep:
            label, spec = raw, raw
        spec, at, tau_text = spec.partition("@")
        encoder, *modifiers = spec.split("+")
        if not label.strip() or not encoder.strip():
            raise InputError(
                f"expected LABEL=ENCODER[+GUARD|+judge][@TAU], got {raw!r}", field="--graders"
            )
        guard: str = "none"
        matcher = "cosine"
        for modifier in (m.strip() for m in modifiers):
            if modifier == "judge":
                matcher = "judge"
            elif modifier in GUARDS:
                guard = modifier
            else:
                raise InputError(
                    f"unknown grader modifier {modifier!r} in {raw!r} (valid: judge, "
                    f"{', '.join(GUARDS)})",
                    field="--graders",
                )
        threshold = None
        if at:
            try:
                threshold = float(tau_text)
            except ValueError:
                raise InputError(
                    f"threshold {tau_text!r} of {raw!r} is not a number", field="--graders"
                ) from None
            if not -1.0 <= threshold <= 1.0:
                raise InputError(f"threshold of {raw!r} is not in [-1, 1]", field="--graders")
        out.append(
            Grader(
                label=label.strip(),
                encoder=encoder.strip(),
                threshold=threshold,
                guard=guard,
                matcher=matcher,
            )
        )
    if not out:
        raise InputError("give at least one grader", field="--graders")
    labels = [g.label for g in out]
    for label in labels:
        if labels.count(label) > 1 or label == ENSEMBLE:
            why = "is used twice" if label != ENSEMBLE else "is the ensemble's"
            raise InputError(f"grader label {label!r} {why}", field="--graders")
    return out


# --------------------------------------------------------------------------- scoring
@dataclass
class ScoredGrader:
    """One grader's scoring of every prediction set (what :func:`score_graders` yields)."""

    grader: Grader
    config: ScoreConfig
    """The configuration it scored with."""
    many: Any
    """The :class:`~crystalbench.scoring.evaluation_many.MultiRunResult`."""
    identity: str
    """The encoder's identity."""
    seconds: float
    """Seconds of the scoring pass (the encoder's load included for its first grader)."""


def score_graders(
    benchmark: Any,
    predictions: Sequence[tuple[str, Any]],
    graders: Sequence[Grader],
    config: ScoreConfig,
    *,
    encoder_objects: Mapping[str, Encoder] | None = None,
    store: EmbeddingStore | None = None,
    progress: Any = None,
) -> Iterator[ScoredGrader]:
    """Score ``predictions`` once per grader through the engine, one encoder load per encoder.

    Graders of one encoder in a row share its load; an encoder is closed when the next grader
    needs another one.

    Args:
        benchmark: From :func:`crystalbench.data.load_benchmark`.
        predictions: ``(name, set)`` pairs (:func:`~crystalbench.scoring.evaluation_many.
            evaluate_many` takes them).
        graders: The graders, in order.
        config: Everything the graders share (items, alpha, order, compat, cache...).
        encoder_objects: Encoders to use instead of loading them, by encoder name (tests).
        store: The embedding cache (default: ``config``'s).
        progress: Progress hook of every scoring pass.

    Raises:
        InputError: A judge grader without ``config.matcher_judge``.
    """
    from crystalbench.scoring.evaluation_many import evaluate_many

    given = dict(encoder_objects or {})
    encoder: Encoder | None = None
    loaded_name: str | None = None
    try:
        for grader in graders:
            started = time.perf_counter()
            if grader.matcher == "judge" and config.matcher_judge is None:
                raise InputError(
                    f"grader {grader.label!r} uses the judge matcher: give --matcher-url and "
                    "--matcher-model",
                    field="--graders",
                )
            if grader.encoder != loaded_name:
                _close(encoder, given)
                encoder = given.get(grader.encoder) or load_encoder(
                    grader.encoder, **config.encoder_options()
                )
                loaded_name = grader.encoder
            assert encoder is not None
            grader_config = config.model_copy(
                update={
                    "encoder": grader.encoder,
                    "threshold": grader_threshold(grader, config),
                    "guard": grader.guard,
                    "matcher": grader.matcher,
                }
            )
            many = evaluate_many(
                benchmark,
                predictions,
                grader_config,
                encoder=encoder,
                store=store,
                progress=progress,
            )
            yield ScoredGrader(
                grader, grader_config, many, encoder.identity, time.perf_counter() - started
            )
    finally:
        _close(encoder, given)


def _close(encoder: Encoder | None, given: Mapping[str, Encoder]) -> None:
    if encoder is None or any(encoder is e for e in given.values()):
        return
    close = getattr(encoder, "close", None)
    if close is not None:
        close()


# --------------------------------------------------------------------------- the report
class GraderRun(Record):
    """One grader of the panel and what its scoring cost."""

    label: str
    encoder: str
    """Encoder name or folder (``min`` for the ensemble)."""
    identity: str
    """The encoder's exact identity (the ensemble: the graders it takes the minimum of)."""
    threshold: float | None
    guard: str
    matcher: str
    encoded: int = 0
    """Texts sent through the encoder."""
    cache_hits: int = 0
    seconds: float = 0.0


class RankAgreement(Record):
    """Kendall's tau-b between two graders' rankings of the models."""

    first: str
    second: str
    kendall_tau: float | None
    """tau-b of the models' metric under both graders (``None`` with fewer than two models or
    a constant side)."""
    p_value: float | None
    low: float | None
    """Percentile bootstrap interval over items (``None``: no resamples or too few items)."""
    high: float | None
    n_undefined: int = 0
    """Resamples where tau-b is undefined (a constant side), left out of the interval."""


class GraderGain(Record):
    """The treated run's gain over the baseline under one grader."""

    grader: str
    baseline: float
    """The baseline's mean of the metric."""
    treated: float
    gain: float
    """``treated - baseline``."""
    low: float
    """Paired bootstrap interval of the gain (items resampled with both runs together)."""
    high: float
    p_value: float
    """Two-sided paired bootstrap p-value of ``gain == 0``."""
    confirmed_share: float | None
    """This grader's gain / the training grader's gain (``None`` when that is 0)."""


class PairedGains(Record):
    """``--baseline A --treated B`` under every grader."""

    baseline: str
    treated: str
    training_grader: str
    """The grader the training reward used: the others are held out."""
    gains: list[GraderGain]
    """One per grader, the ensemble last."""
    held_out_share: float | None
    """The lowest confirmed share of any held-out grader (the ensemble's aside): how much of
    the training grader's gain every held-out grader supports."""
    n_held_out_significant: int
    """Held-out graders whose gain interval lies above 0."""


class PanelReport(Record):
    """``panel.json``."""

    schema_version: str = SCHEMA_VERSION
    benchmark: str
    benchmark_fingerprint: str | None
    n_items: int
    """Items scored (the engine's count: ``--ids``, ``--limit`` and ``--sources`` applied)."""
    models: list[str]
    metric: str
    """The metric the rankings, tau-b and gains use (``match_f1`` by default)."""
    graders: list[GraderRun]
    """Every grader, the ensemble last when it is computed."""
    metrics: dict[str, dict[str, dict[str, float]]]
    """Grader -> model -> every summary metric."""
    rankings: dict[str, list[str]]
    """Grader -> models by the metric, best first (ties: the order given)."""
    agreement: list[RankAgreement]
    """Every two graders (the ensemble included)."""
    paired: PairedGains | None = None
    confidence: float
    n_resamples: int
    seed: int
    config: dict[str, Any]
    """The scoring settings every grader shares."""
    failures: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)


def ensemble_items(per_grader: Sequence[Sequence[ItemResult]]) -> list[ItemResult]:
    """Per item, the minimum of every step metric over the graders' records of that item.

    The first grader's record carries the rest (answer, counts); ``matches`` are the first
    grader's matches of the grader with the lowest F1 (so order counts stay consistent).

    Raises:
        ValueError: The graders' records are not of the same items in the same order.
    """
    out: list[ItemResult] = []
    for records in zip(*per_grader, strict=True):
        if len({r.id for r in records}) != 1:
            raise ValueError("the graders' records are not aligned by item")
        lowest = min(records, key=lambda r: r.f1)
        update: dict[str, Any] = {
            name: min(getattr(r, name) for r in records) for name in _ENSEMBLE_FIELDS
        }
        update["matches"] = lowest.matches
        out.append(records[0].model_copy(update=update))
    return out


def _metrics_of(summary: Any) -> dict[str, float]:
    return {m.key: float(getattr(summary, m.key)) for m in METRICS}


def _item_values(items: Sequence[ItemResult], metric: str) -> np.ndarray:
    spec = METRIC[metric]
    return np.asarray([float(spec.item_value(it)) for it in items], dtype=np.float64)


def _kendall(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    if a.size < 2:
        return None, None
    from scipy import stats

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = stats.kendalltau(a, b, variant="b")
    tau, p = float(result.statistic), float(result.pvalue)
    return (tau if math.isfinite(tau) else None), (p if math.isfinite(p) else None)


def _tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two short vectors, by its definition over every pair: (concordant -
    discordant) / sqrt(pairs not tied in a * pairs not tied in b); NaN when a side is
    constant. The same number as :func:`scipy.stats.kendalltau` (``variant="b"``; the tests
    check it), without its per-call cost, which dominated thousands of resamples.

    Examples:
        >>> _tau_b(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))
        0.3333333333333333
        >>> _tau_b(np.array([1.0, 1.0]), np.array([1.0, 2.0]))
        nan
    """
    upper = np.triu_indices(a.size, k=1)
    sign_a = np.sign(a[:, None] - a[None, :])[upper]
    sign_b = np.sign(b[:, None] - b[None, :])[upper]
    untied = float(np.count_nonzero(sign_a)) * float(np.count_nonzero(sign_b))
    if untied == 0.0:
        return math.nan
    return float((sign_a * sign_b).sum() / math.sqrt(untied))


def rank_agreement(
    first: str,
    second: str,
    values_a: np.ndarray,
    values_b: np.ndarray,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> RankAgreement:
    """tau-b of two graders' per-model means, with a bootstrap interval over items.

    Args:
        first: The first grader's label.
        second: The second's.
        values_a: ``(models, items)`` per-item values under the first grader.
        values_b: The same under the second.
        confidence: Level of the interval.
        n_resamples: Bootstrap resamples (0: no interval).
        seed: Seed of the resampling.
    """
    from crystalbench.statistics.agreement import bootstrap_interval

    tau, p = _kendall(values_a.mean(axis=1), values_b.mean(axis=1))

    def statistic(index: np.ndarray) -> float:
        return _tau_b(values_a[:, index].mean(axis=1), values_b[:, index].mean(axis=1))

    interval = None
    if values_a.shape[0] >= 2:
        interval = bootstrap_interval(
            values_a.shape[1],
            statistic,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    return RankAgreement(
        first=first,
        second=second,
        kendall_tau=tau,
        p_value=p,
        low=interval.low if interval is not None else None,
        high=interval.high if interval is not None else None,
        n_undefined=interval.n_undefined if interval is not None else 0,
    )


def run_panel(
    benchmark: Any,
    predictions: Mapping[str, Any] | Sequence[tuple[str, Any]],
    graders: Sequence[Grader],
    *,
    config: ScoreConfig | None = None,
    metric: str = "match_f1",
    ensemble: bool = True,
    baseline: str | None = None,
    treated: str | None = None,
    training_grader: str | None = None,
    confidence: float = VALIDATION_CONFIDENCE,
    n_resamples: int = VALIDATION_BOOTSTRAP_RESAMPLES,
    seed: int = VALIDATION_SEED,
    encoder_objects: Mapping[str, Encoder] | None = None,
    store: EmbeddingStore | None = None,
    progress: Any = None,
) -> PanelReport:
    """Score every prediction set under every grader and compare the graders.

    Args:
        benchmark: From :func:`crystalbench.data.load_benchmark`.
        predictions: ``{name: set}`` or ``(name, set)`` pairs (files are read once).
        graders: The graders (:func:`parse_graders`).
        config: What every grader shares (items: ``ids``, ``limit``, ``sources``; alpha...).
        metric: The metric of rankings, tau-b and gains (a key of
            :data:`crystalbench.metrics.METRIC`).
        ensemble: Add the conservative ensemble ``min`` (needs two graders).
        baseline: The paired baseline set's name (with ``treated``).
        treated: The paired treated set's name.
        training_grader: The grader of the training reward (default: the first).
        confidence: Level of every interval.
        n_resamples: Bootstrap resamples of every interval.
        seed: Seed of every resampling.
        encoder_objects: Encoders by name instead of loading them (tests).
        store: The embedding cache.
        progress: Progress hook of every scoring pass.

    Raises:
        InputError: An unknown metric, set name or grader, or no set could be scored.
    """
    from crystalbench.data.predictions import PredictionSet, load_predictions
    from crystalbench.statistics.intervals import paired_bootstrap

    began = time.perf_counter()
    config = config or ScoreConfig()
    if metric not in METRIC:
        valid = ", ".join(METRIC)
        raise InputError(f"unknown metric {metric!r} (valid: {valid})", field="--metric")
    labels = [g.label for g in graders]
    training_grader = training_grader or labels[0]
    if training_grader not in labels:
        raise InputError(
            f"training grader {training_grader!r} is not one of {', '.join(labels)}",
            field="--training-grader",
        )
    if (baseline is None) != (treated is None):
        raise InputError("give --baseline and --treated together", field="--baseline")
    entries = list(predictions.items()) if isinstance(predictions, Mapping) else list(predictions)
    loaded: list[tuple[str, Any]] = []
    failures: list[str] = []
    for name, value in entries:
        if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
            try:
                value = load_predictions(value, lenient=config.lenient)
            except InputError as error:
                failures.append(f"{name}: {error}")
                continue
        loaded.append((name, value if isinstance(value, PredictionSet) else list(value)))

    runs: list[GraderRun] = []
    items: dict[str, dict[str, list[ItemResult]]] = {}
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    models: list[str] | None = None
    n_items = 0
    for scored in score_graders(
        benchmark,
        loaded,
        graders,
        config,
        encoder_objects=encoder_objects,
        store=store,
        progress=progress,
    ):
        many = scored.many
        if models is None:
            failures.extend(str(failure) for failure in many.failures)
            models = list(many.runs)
            if not models:
                raise InputError("no prediction set could be scored: " + "; ".join(failures))
            n_items = many.runs[models[0]].summary.n_items
        label = scored.grader.label
        items[label] = {m: many.runs[m].items for m in models}
        metrics[label] = {m: _metrics_of(many.runs[m].summary) for m in models}
        runs.append(
            GraderRun(
                label=label,
                encoder=scored.grader.encoder,
                identity=scored.identity,
                threshold=scored.config.threshold,
                guard=scored.grader.guard,
                matcher=scored.grader.matcher,
                encoded=many.encode_stats.encoded,
                cache_hits=many.encode_stats.cache_hits,
                seconds=scored.seconds,
            )
        )
    assert models is not None
    for given in (baseline, treated):
        if given is not None and given not in models:
            raise InputError(
                f"prediction set {given!r} is not one of the sets scored ({', '.join(models)})",
                field="--baseline" if given == baseline else "--treated",
            )
    grader_labels = list(labels)
    if ensemble and len(graders) >= 2:
        items[ENSEMBLE] = {}
        metrics[ENSEMBLE] = {}
        for model in models:
            combined = ensemble_items([items[g][model] for g in labels])
            aggregator = Aggregator()
            for record in combined:
                aggregator.add(record)
            items[ENSEMBLE][model] = combined
            metrics[ENSEMBLE][model] = _metrics_of(aggregator.summary({}))
        runs.append(
            GraderRun(
                label=ENSEMBLE,
                encoder=ENSEMBLE,
                identity="min(" + ",".join(labels) + ")",
                threshold=None,
                guard="-",
                matcher="-",
            )
        )
        grader_labels.append(ENSEMBLE)

    values = {
        g: np.vstack([_item_values(items[g][m], metric) for m in models]) for g in grader_labels
    }

    def ranking(grader: str) -> list[str]:
        assert models is not None
        order = {model: index for index, model in enumerate(models)}
        return sorted(models, key=lambda m: (-metrics[grader][m][metric], order[m]))

    rankings = {g: ranking(g) for g in grader_labels}
    agreement = [
        rank_agreement(
            a,
            b,
            values[a],
            values[b],
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
        for k, a in enumerate(grader_labels)
        for b in grader_labels[k + 1 :]
    ]
    paired = None
    if baseline is not None and treated is not None:
        b_index, t_index = models.index(baseline), models.index(treated)
        gains: list[GraderGain] = []
        train_gain = 0.0
        for g in grader_labels:
            delta, low, high, p = paired_bootstrap(
                values[g][b_index],
                values[g][t_index],
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            )
            if g == training_grader:
                train_gain = delta
            gains.append(
                GraderGain(
                    grader=g,
                    baseline=metrics[g][baseline][metric],
                    treated=metrics[g][treated][metric],
                    gain=delta,
                    low=low,
                    high=high,
                    p_value=p,
                    confirmed_share=None,
                )
            )
        gains = [
            gain.model_copy(
                update={"confirmed_share": gain.gain / train_gain if train_gain else None}
            )
            for gain in gains
        ]
        held_out = [g for g in gains if g.grader not in (training_grader, ENSEMBLE)]
        shares = [g.confirmed_share for g in held_out if g.confirmed_share is not None]
        paired = PairedGains(
            baseline=baseline,
            treated=treated,
            training_grader=training_grader,
            gains=gains,
            held_out_share=min(shares) if shares and len(shares) == len(held_out) else None,
            n_held_out_significant=sum(1 for g in held_out if g.low > 0),
        )
    varied = {"encoder", "threshold", "guard", "matcher"}
    return PanelReport(
        benchmark=benchmark.name,
        benchmark_fingerprint=getattr(benchmark, "fingerprint", None),
        n_items=n_items,
        models=models,
        metric=metric,
        graders=runs,
        metrics=metrics,
        rankings=rankings,
        agreement=agreement,
        paired=paired,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        config=config.model_dump(mode="json", exclude=varied),
        failures=failures,
        timings={"total": time.perf_counter() - began},
    )
