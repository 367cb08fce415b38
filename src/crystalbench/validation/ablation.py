"""The encoder x threshold ablation (the paper's 4 encoders x 5 thresholds x 5 models), and
the fact guard as one more axis.

For every encoder, the prediction sets are scored once, together, by
:func:`crystalbench.scoring.evaluation_many.evaluate_many` at the **lowest** threshold of the grid:
one
encoder load, each distinct step text encoded once (and cached), the usual per-item records.
Every higher threshold is then read off those records (:func:`~.thresholds.chain_at`: the
matches at a higher tau are a prefix of the matches at the lower one), so the thresholds cost
microseconds per item and no encoder call. Each cell (encoder, threshold) gets every model's
metrics (macro means over all items, as ``summary.json`` computes them, from the metric table
:data:`crystalbench.metrics.METRICS`), the models' ranking by Match F1, and Kendall's tau-b
and Spearman's rho of that ranking against the default cell (:func:`scipy.stats.kendalltau`,
:func:`scipy.stats.spearmanr`). The paper's comparison, mean Match F1 per encoder over its
models and thresholds, comes with it.

With several fact guards (``guards=["none", "facts"]``, ``--guards none,facts``) every
encoder scores the sets once per guard, and each (encoder, guard) is one row of the grid,
labelled ``ENCODER+GUARD`` (``minilm+facts``): the guard's effect on every model at every
threshold, and on the ranking, side by side with the encoder's. The thresholds are read off
one scoring per row as before: a vetoed pair is vetoed at every threshold, and a predicted
step's closest reference step (``facts-strict``) is the same at every threshold where it is
a candidate at all, so the matches at a higher tau are still a prefix.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field

from crystalbench.config.scoring import ScoreConfig
from crystalbench.config.settings import ABLATION_THRESHOLDS, SCHEMA_VERSION
from crystalbench.defaults import TAU
from crystalbench.encoders import EmbeddingStore, Encoder
from crystalbench.errors import InputError
from crystalbench.metrics import METRICS
from crystalbench.scoring.compat import match_rules
from crystalbench.types import Record
from crystalbench.validation.thresholds import chain_at

__all__ = [
    "AblationCell",
    "AblationReport",
    "EncoderRun",
    "parse_encoders",
    "run_ablation",
]


class EncoderRun(Record):
    """One encoder of the ablation and what scoring with it cost."""

    label: str
    """Name shown in tables (``LABEL=NAME`` on the command line, else the name; with
    several guards ``LABEL+GUARD``: one row per encoder and guard)."""
    guard: str = "none"
    """The fact guard of this row's scoring."""
    name: str
    """Encoder name or folder, as :func:`crystalbench.encoders.load_encoder` takes it."""
    identity: str
    """Exact identity (the cache key)."""
    encoded: int
    """Texts sent through the encoder."""
    cache_hits: int
    encode_seconds: float
    """Seconds in the encoder's forward passes."""
    score_seconds: float
    """Seconds of the whole scoring pass (encoding included)."""
    derive_seconds: float
    """Seconds to derive every other threshold from that pass."""


class AblationCell(Record):
    """One (encoder, threshold) cell."""

    encoder: str
    """The row's label (the encoder's; ``LABEL+GUARD`` with several guards)."""
    guard: str = "none"
    """The fact guard the cell was scored with."""
    threshold: float
    match_f1: dict[str, float]
    """Model -> Match F1."""
    metrics: dict[str, dict[str, float]]
    """Model -> every summary metric (``accuracy``, ``match_f1``, ``precision``...)."""
    ranking: list[str]
    """Models by Match F1, best first (ties: the order given)."""
    mean_match_f1: float
    """Mean Match F1 over the models."""
    kendall_tau: float | None
    """Kendall's tau-b of the models' Match F1 against the default cell (``None`` with
    fewer than two models, or when one side is constant)."""
    kendall_p: float | None
    spearman_rho: float | None
    spearman_p: float | None


class AblationReport(Record):
    """``ablation.json``."""

    schema_version: str = SCHEMA_VERSION
    benchmark: str
    benchmark_fingerprint: str | None
    n_items: int
    models: list[str]
    encoders: list[EncoderRun]
    thresholds: list[float]
    guards: list[str] = Field(default_factory=lambda: ["none"])
    """The fact guards ablated (one row per encoder and guard when several)."""
    default_encoder: str
    """The row of the reference ranking (an encoder's label, ``LABEL+GUARD`` with several
    guards)."""
    default_threshold: float
    config: dict[str, Any]
    """alpha, order metric, compat and the other scoring settings shared by every cell."""
    cells: list[AblationCell]
    mean_f1_by_encoder: dict[str, float]
    """Encoder -> mean Match F1 over every model and threshold (the paper's comparison)."""
    mean_f1_by_threshold: dict[str, dict[str, float]]
    """Encoder -> threshold (as text) -> mean Match F1 over the models."""
    min_kendall_tau: float | None
    """The lowest tau-b of any cell against the default (ranking stability)."""
    n_cells_same_ranking: int
    """Cells whose ranking equals the default cell's."""
    failures: list[str] = Field(default_factory=list)
    """Prediction sets that could not be scored (the others were)."""
    timings: dict[str, float] = Field(default_factory=dict)


def parse_encoders(text: str | Sequence[str]) -> list[tuple[str, str]]:
    """``(label, name)`` pairs from ``"minilm=minilm-offline,hash"``.

    Raises:
        InputError: No encoder, an empty part, or a label used twice.

    Examples:
        >>> parse_encoders("minilm=minilm-offline,hash")
        [('minilm', 'minilm-offline'), ('hash', 'hash')]
    """
    parts = text.split(",") if isinstance(text, str) else list(text)
    out: list[tuple[str, str]] = []
    for raw in (part.strip() for part in parts):
        if not raw:
            continue
        label, sep, name = raw.partition("=")
        if not sep:
            label = name = raw
        if not label.strip() or not name.strip():
            raise InputError(f"expected NAME or LABEL=NAME, got {raw!r}", field="--encoders")
        out.append((label.strip(), name.strip()))
    if not out:
        raise InputError("give at least one encoder", field="--encoders")
    labels = [label for label, _ in out]
    for label in labels:
        if labels.count(label) > 1:
            raise InputError(f"encoder label {label!r} is used twice", field="--encoders")
    return out


def _check_guards(guards: Sequence[str] | None, default: str) -> list[str]:
    """The guards to ablate, each once, in the order given.

    Raises:
        InputError: An unknown guard (naming the valid ones), or none at all.

    Examples:
        >>> _check_guards(["none", "facts", "none"], "none")
        ['none', 'facts']
        >>> _check_guards(None, "facts-strict")
        ['facts-strict']
    """
    from crystalbench.defaults import GUARDS

    chosen = list(dict.fromkeys(guards)) if guards is not None else [default]
    if not chosen:
        raise InputError("give at least one guard", field="--guards")
    for guard in chosen:
        if guard not in GUARDS:
            raise InputError(
                f"unknown guard {guard!r} (valid: {', '.join(GUARDS)})", field="--guards"
            )
    return chosen


def _metric_means(
    items: Sequence[Any], grid: Sequence[float], *, strict: bool, alpha: float, order_metric: str
) -> dict[float, dict[str, float]]:
    """Every summary metric of one model at every threshold of ``grid`` (the items were
    scored at ``grid[0]``), computed by the scoring
    :class:`~crystalbench.scoring.aggregate.Aggregator` from each threshold's per-item records.
    Only the items whose weakest match fails a threshold are derived again (their leading
    matches and step metrics at that threshold, :func:`~.thresholds.chain_at`); the others are
    the records as scored."""
    from crystalbench.scoring.aggregate import Aggregator
    from crystalbench.validation.thresholds import passing_prefix

    out: dict[float, dict[str, float]] = {}
    for tau in grid:
        bar = float(np.float32(tau))
        aggregator = Aggregator()
        for item in items:
            weakest = item.matches[-1][2] if item.matches else np.inf
            if tau != grid[0] and (weakest <= bar if strict else weakest < bar):
                chain = chain_at(item, tau, strict=strict, alpha=alpha, order_metric=order_metric)
                kept = passing_prefix(item.matches, tau, strict=strict)
                item = item.model_copy(update={**chain, "matches": item.matches[:kept]})
            aggregator.add(item)
        summary = aggregator.summary({})
        out[tau] = {metric.key: float(getattr(summary, metric.key)) for metric in METRICS}
    return out


def _rank_statistics(
    reference: Sequence[float], values: Sequence[float]
) -> tuple[float | None, float | None, float | None, float | None]:
    if len(values) < 2:
        return None, None, None, None
    from scipy import stats

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        tau = stats.kendalltau(reference, values, variant="b")
        rho = stats.spearmanr(reference, values)

    def clean(value: Any) -> float | None:
        number = float(value)
        return number if math.isfinite(number) else None

    return clean(tau.statistic), clean(tau.pvalue), clean(rho.statistic), clean(rho.pvalue)


def run_ablation(
    benchmark: Any,
    predictions: Mapping[str, Any] | Sequence[tuple[str, Any]],
    encoders: Sequence[tuple[str, str]],
    *,
    thresholds: Sequence[float] = ABLATION_THRESHOLDS,
    config: ScoreConfig | None = None,
    default_encoder: str | None = None,
    default_threshold: float | None = None,
    encoder_objects: Mapping[str, Encoder] | None = None,
    store: EmbeddingStore | None = None,
    progress: Any = None,
    guards: Sequence[str] | None = None,
    default_guard: str | None = None,
) -> AblationReport:
    """Score every prediction set with every encoder at every threshold.

    Args:
        benchmark: From :func:`crystalbench.data.load_benchmark`.
        predictions: ``{name: set}`` or ``(name, set)`` pairs, as
            :func:`~crystalbench.scoring.evaluation_many.evaluate_many` takes them (loaded sets are
            parsed once per encoder, read once).
        encoders: ``(label, name)`` pairs (:func:`parse_encoders`).
        thresholds: The thresholds (each at least -1, at most 1).
        config: Shared scoring settings (alpha, order metric, compat, cache...); its
            encoder and threshold are replaced per cell.
        default_encoder: Label of the default cell's encoder (default: the first).
        default_threshold: The default cell's threshold (default: the paper's 0.35 when in
            the grid, else the first).
        encoder_objects: Encoders to use instead of loading them, by label (tests).
        store: The embedding cache (default: ``config``'s).
        progress: Progress hook passed to every scoring pass.
        guards: The fact guards to ablate (default: ``config.guard`` alone); with several,
            every encoder scores the sets once per guard, one row each (``LABEL+GUARD``).
        default_guard: The guard of the reference ranking's row (default: the first).

    Returns:
        The :class:`AblationReport`.

    Raises:
        InputError: Bad thresholds, guards or default cell, or every prediction set
            failed.
    """
    from crystalbench.data.predictions import PredictionSet, load_predictions

    began = time.perf_counter()
    config = config or ScoreConfig()
    if config.matcher != "cosine":
        raise InputError("the ablation varies the cosine matcher: use matcher 'cosine'")
    grid = sorted({float(t) for t in thresholds})
    if not grid:
        raise InputError("give at least one threshold", field="--thresholds")
    fact_guards = _check_guards(guards, config.guard)
    default_guard = default_guard or fact_guards[0]
    if default_guard not in fact_guards:
        raise InputError(
            f"default guard {default_guard!r} is not one of {', '.join(fact_guards)}",
            field="--guards",
        )
    encoder_labels = [label for label, _ in encoders]
    default_encoder = default_encoder or encoder_labels[0]
    if default_encoder not in encoder_labels:
        raise InputError(
            f"default encoder {default_encoder!r} is not one of {', '.join(encoder_labels)}",
            field="--default-encoder",
        )

    def row(label: str, guard: str) -> str:
        return label if len(fact_guards) == 1 else f"{label}+{guard}"

    labels = [row(label, guard) for label, _ in encoders for guard in fact_guards]
    default_encoder = row(default_encoder, default_guard)
    if default_threshold is None:
        default_threshold = TAU if TAU in grid else grid[0]
    if default_threshold not in grid:
        raise InputError(
            f"default threshold {default_threshold:g} is not in the grid",
            field="--default-threshold",
        )
    entries = list(predictions.items()) if isinstance(predictions, Mapping) else list(predictions)
    loaded: list[tuple[str, Any]] = []
    failures: list[str] = []
    for name, value in entries:  # read each file once; evaluate_many reports what fails
        if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
            try:
                value = load_predictions(value, lenient=config.lenient)
            except InputError as error:
                failures.append(f"{name}: {error}")
                continue
        loaded.append((name, value if isinstance(value, PredictionSet) else list(value)))
    strict = match_rules(config.compat).strict
    runs: list[EncoderRun] = []
    cells: dict[tuple[str, float], dict[str, dict[str, float]]] = {}
    models: list[str] | None = None
    from crystalbench.validation.panel import Grader, score_graders

    graders = [
        Grader(label=row(label, guard), encoder=name, threshold=grid[0], guard=guard)
        for label, name in encoders
        for guard in fact_guards
    ]
    by_name = {
        name: (encoder_objects or {})[label]
        for label, name in encoders
        if label in (encoder_objects or {})
    }
    n_items = 0
    for scored in score_graders(
        benchmark, loaded, graders, config, encoder_objects=by_name, store=store, progress=progress
    ):
        many = scored.many
        label = scored.grader.label
        if models is None:
            failures.extend(str(failure) for failure in many.failures)
            models = list(many.runs)
            if not models:
                raise InputError("no prediction set could be scored: " + "; ".join(failures))
            n_items = many.runs[models[0]].summary.n_items
        started = time.perf_counter()
        for model in models:
            means = _metric_means(
                many.runs[model].items,
                grid,
                strict=strict,
                alpha=config.alpha,
                order_metric=config.order_metric,
            )
            for tau, values in means.items():
                cells.setdefault((label, tau), {})[model] = values
        derive = time.perf_counter() - started
        stats = many.encode_stats
        runs.append(
            EncoderRun(
                label=label,
                guard=scored.grader.guard,
                name=scored.grader.encoder,
                identity=scored.identity,
                encoded=stats.encoded,
                cache_hits=stats.cache_hits,
                encode_seconds=stats.encode_seconds,
                score_seconds=scored.seconds,
                derive_seconds=derive,
            )
        )
        del many, scored
    assert models is not None
    reference = [cells[(default_encoder, default_threshold)][m]["match_f1"] for m in models]
    out_cells = []
    for run in runs:
        label = run.label
        for tau in grid:
            metrics = cells[(label, tau)]
            f1 = {m: metrics[m]["match_f1"] for m in models}
            ranking = sorted(models, key=lambda m: (-f1[m], models.index(m)))
            k_tau, k_p, rho, rho_p = _rank_statistics(reference, [f1[m] for m in models])
            out_cells.append(
                AblationCell(
                    encoder=label,
                    guard=run.guard,
                    threshold=tau,
                    match_f1=f1,
                    metrics={m: metrics[m] for m in models},
                    ranking=ranking,
                    mean_match_f1=float(np.mean(list(f1.values()))),
                    kendall_tau=k_tau,
                    kendall_p=k_p,
                    spearman_rho=rho,
                    spearman_p=rho_p,
                )
            )
    default_ranking = next(
        c.ranking
        for c in out_cells
        if c.encoder == default_encoder and c.threshold == default_threshold
    )
    taus = [c.kendall_tau for c in out_cells if c.kendall_tau is not None]
    varied = {"encoder", "threshold"} | ({"guard"} if len(fact_guards) > 1 else set())
    shared = config.model_dump(mode="json", exclude=varied)
    return AblationReport(
        benchmark=benchmark.name,
        benchmark_fingerprint=getattr(benchmark, "fingerprint", None),
        n_items=n_items,
        models=models,
        encoders=runs,
        thresholds=grid,
        guards=fact_guards,
        default_encoder=default_encoder,
        default_threshold=default_threshold,
        config=shared,
        cells=out_cells,
        mean_f1_by_encoder={
            label: float(np.mean([c.mean_match_f1 for c in out_cells if c.encoder == label]))
            for label in labels
        },
        mean_f1_by_threshold={
            label: {f"{c.threshold:g}": c.mean_match_f1 for c in out_cells if c.encoder == label}
            for label in labels
        },
        min_kendall_tau=min(taus) if taus else None,
        n_cells_same_ranking=sum(1 for c in out_cells if c.ranking == default_ranking),
        failures=failures,
        timings={"total": time.perf_counter() - began},
    )
