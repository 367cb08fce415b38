"""How well a matcher agrees with people on labelled step pairs (the paper's Table 3, and more).

For every matcher (the cosine threshold test ``S >= tau``; the pairs the scored run matched
one-to-one; the judge matcher; any decisions read from a file) against the final human
labels:

- **agreement** (share of pairs where matcher and people say the same), overall and per
  cosine band, with **Wilson** intervals (:func:`statsmodels.stats.proportion.proportion_confint`);
- **Cohen's kappa**, the standard binary one (Cohen 1960: ``(p_o - p_e) / (1 - p_e)`` with
  the chance agreement ``p_e`` from both sides' marginals), from
  :func:`statsmodels.stats.inter_rater.cohens_kappa` on the 2 x 2 table, with a percentile
  **bootstrap** interval over pairs (:func:`scipy.stats.bootstrap`). Kappa is undefined
  (``None``) when both sides give one class only (``p_e = 1``): a band below tau where
  everybody says "no match" has agreement 100 % and no kappa. Resamples where it is
  undefined are left out of the interval and counted. Note: the paper reports kappa 0.534
  for its Table 3; the standard kappa of its own counts (TP 37, FP 16, FN 0, TN 47) is
  0.685, which is what this module computes for them;
- the **confusion split**: false positives (the matcher says match, people say no) and false
  negatives;
- with several annotators, the **human-human ceiling**: Krippendorff's alpha (nominal, the
  ``krippendorff`` package; ``unsure`` is a missing value) and Cohen's kappa of every pair of
  annotators on the pairs both labelled; and each annotator's kappa with the matcher;
- the **threshold that maximises kappa** against people on a grid of tau, with a bootstrap
  interval (the same resampled pairs, the argmax per resample);
- a **calibration curve**: the share of human "match" per cosine bin, with Wilson intervals.

Pairs without a final human label (unresolved ties, only ``unsure``) are left out of the
matcher statistics and counted; so are pairs a matcher could not decide (a failed judge).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import combinations

import numpy as np
from pydantic import Field

from crystalbench.defaults import TAU, VALIDATION_BAND_EDGES
from crystalbench.settings import (
    SCHEMA_VERSION,
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CALIBRATION_EDGES,
    VALIDATION_CONFIDENCE,
    VALIDATION_SEED,
    VALIDATION_THRESHOLD_GRID,
)
from crystalbench.types import Record
from crystalbench.validation.bands import band_bounds, band_index, band_labels
from crystalbench.validation.labels import LabelSet
from crystalbench.validation.pairs import StepPair

__all__ = [
    "KAPPA_DEFINITION",
    "AgreementReport",
    "Decisions",
    "GroupAgreement",
    "cohen_kappa",
    "compute_agreement",
    "cosine_decisions",
    "wilson_interval",
]

KAPPA_DEFINITION = (
    "Cohen's kappa is the standard binary kappa (Cohen 1960) of the matcher's decision "
    "against the final human label: (p_o - p_e) / (1 - p_e), p_e from both marginals "
    "(statsmodels.stats.inter_rater.cohens_kappa on the 2x2 table); undefined when both "
    "sides give one class only. The paper's Table 3 reports 0.534; the standard kappa of "
    "its own counts (TP 37, FP 16, FN 0, TN 47) is 0.685."
)

Decisions = Mapping[str, bool | None]
"""A matcher's decision per ``pair_id``: True (match), False, or None (undecided)."""


# --------------------------------------------------------------------------- records


class Proportion(Record):
    """A share with its Wilson interval."""

    count: int
    n: int
    estimate: float | None
    """``count / n``; ``None`` when ``n`` is 0."""
    low: float | None
    high: float | None


class KappaInterval(Record):
    """A percentile bootstrap interval of Cohen's kappa."""

    low: float | None
    high: float | None
    n_resamples: int
    n_undefined: int
    """Resamples in which kappa was undefined (one class only), left out of the interval."""


class GroupAgreement(Record):
    """One matcher against people on a group of pairs (all, or one cosine band)."""

    band: str
    """``all``, or the band label."""
    low: float | None = None
    """Inclusive lower cosine of the band (``None``: unbounded)."""
    high: float | None = None
    """Exclusive upper cosine of the band (``None``: unbounded)."""
    n: int
    """Pairs with a final human label and a matcher decision."""
    agreement: float | None
    """Share of those where matcher and people agree (``None`` when ``n`` is 0)."""
    agreement_interval: Proportion
    cohen_kappa: float | None
    """Standard binary Cohen's kappa (see :data:`KAPPA_DEFINITION`); ``None`` if undefined."""
    kappa_interval: KappaInterval | None
    true_positives: int
    """Matcher match, people match."""
    false_positives: int
    """Matcher match, people no match."""
    false_negatives: int
    """Matcher no match, people match."""
    true_negatives: int
    """Matcher no match, people no match."""
    matcher_match_share: float | None
    human_match_share: float | None


class AnnotatorAgreement(Record):
    """Two raters on the pairs both decided."""

    a: str
    b: str
    n: int
    agreement: float | None
    cohen_kappa: float | None


class MatcherAgreement(Record):
    """One matcher's agreement with people."""

    matcher: str
    description: str
    overall: GroupAgreement
    by_band: list[GroupAgreement]
    n_undecided: int
    """Labelled pairs the matcher gave no decision for (left out)."""
    by_annotator: list[AnnotatorAgreement] = Field(default_factory=list)
    """The matcher against each annotator's own labels."""


class HumanAgreement(Record):
    """How far people agree with each other: the ceiling for any matcher."""

    annotators: list[str]
    n_labels: int
    """Annotator labels (``unsure`` included; adjudicators excluded)."""
    n_multiply_labelled: int
    """Pairs with match/no_match labels from at least two annotators."""
    krippendorff_alpha: float | None
    """Nominal alpha over every annotator and pair (``None`` with one annotator or no pair
    labelled twice)."""
    pairwise: list[AnnotatorAgreement]
    mean_pairwise_kappa: float | None
    note: str | None = None


class ThresholdPoint(Record):
    threshold: float
    agreement: float
    cohen_kappa: float | None


class ThresholdSearch(Record):
    """The threshold of the cosine test that agrees best with people."""

    best_threshold: float | None
    """Highest kappa on the grid (ties: nearest to the scored tau, then the lower)."""
    best_kappa: float | None
    low: float | None
    """Percentile bootstrap interval of the best threshold."""
    high: float | None
    n_resamples: int
    curve: list[ThresholdPoint]


class CalibrationBin(Record):
    """Share of human "match" among the pairs of one cosine bin."""

    low: float
    high: float
    n: int
    mean_cosine: float | None
    human_match: Proportion


class LabelSummary(Record):
    path: str
    kind: str
    annotators: list[str]
    statuses: dict[str, int]
    n_gold_skipped: int
    n_empty_skipped: int


class AgreementReport(Record):
    """``agreement.json``: every number of ``crystal validate agreement``."""

    schema_version: str = SCHEMA_VERSION
    threshold: float
    """tau of the cosine matcher."""
    bands: list[float]
    """Band edges."""
    confidence: float
    n_resamples: int
    seed: int
    n_pairs: int
    """Pairs in the pairs file."""
    n_labelled: int
    """Pairs with at least one label."""
    n_resolved: int
    """Pairs with a final human label (the denominator of every matcher statistic)."""
    n_unresolved: int
    n_unlabelled: int
    primary: str
    """The matcher of ``overall`` and ``by_band``: the cosine test at ``threshold``."""
    overall: GroupAgreement
    by_band: list[GroupAgreement]
    matchers: list[MatcherAgreement]
    humans: HumanAgreement
    threshold_search: ThresholdSearch
    calibration: list[CalibrationBin]
    labels: LabelSummary
    kappa_definition: str = KAPPA_DEFINITION


# --------------------------------------------------------------------------- statistics


def wilson_interval(
    count: int, n: int, confidence: float = VALIDATION_CONFIDENCE
) -> tuple[float | None, float | None]:
    """Wilson score interval of ``count / n`` (statsmodels' ``proportion_confint``).

    Examples:
        >>> [round(x, 4) for x in wilson_interval(84, 100)]
        [0.7558, 0.899]
    """
    if n == 0:
        return None, None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(count, n, alpha=1.0 - confidence, method="wilson")
    return float(low), float(high)


@lru_cache(maxsize=65536)
def _kappa_of_table(tp: int, fp: int, fn: int, tn: int) -> float:
    """statsmodels' Cohen's kappa of one 2 x 2 table (NaN when undefined); tables repeat a
    lot across bootstrap resamples and thresholds, hence the cache."""
    from statsmodels.stats.inter_rater import cohens_kappa

    table = np.array([[tp, fp], [fn, tn]], dtype=np.float64)
    if table.sum() == 0:
        return math.nan
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(cohens_kappa(table, return_results=False))
    return value if math.isfinite(value) else math.nan


def cohen_kappa(matcher: Sequence[bool], people: Sequence[bool]) -> float | None:
    """Standard binary Cohen's kappa of two raters; ``None`` when undefined.

    Examples:
        >>> m = [True] * 53 + [False] * 47
        >>> h = [True] * 37 + [False] * 63       # the paper's Table 3 counts
        >>> round(cohen_kappa(m, h), 3)
        0.685
        >>> cohen_kappa([False, False], [False, False]) is None
        True
    """
    tp, fp, fn, tn = _table(np.asarray(matcher, dtype=bool), np.asarray(people, dtype=bool))
    value = _kappa_of_table(tp, fp, fn, tn)
    return None if math.isnan(value) else value


def _table(matcher: np.ndarray, people: np.ndarray) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` of two boolean arrays (matcher, people)."""
    counts = np.bincount(2 * matcher.astype(np.intp) + people, minlength=4).tolist()
    return counts[3], counts[2], counts[1], counts[0]


def _bootstrap(
    n: int,
    statistic: Callable[[np.ndarray], float],
    n_resamples: int,
    seed: int,
) -> np.ndarray:
    """The bootstrap distribution of ``statistic(indices)`` over pairs resampled with
    replacement (:func:`scipy.stats.bootstrap`; NaN where the statistic is undefined)."""
    from scipy import stats

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (np.arange(n),),
            statistic,
            n_resamples=n_resamples,
            vectorized=False,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return np.asarray(result.bootstrap_distribution, dtype=np.float64).reshape(-1)


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float | None, float | None, int]:
    finite = values[np.isfinite(values)]
    undefined = int(values.size - finite.size)
    if finite.size == 0:
        return None, None, undefined
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high), undefined


def _group(
    label: str,
    bounds: tuple[float, float] | None,
    matcher: np.ndarray,
    people: np.ndarray,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> GroupAgreement:
    n = int(matcher.size)
    tp, fp, fn, tn = _table(matcher, people)
    agree = tp + tn
    low, high = wilson_interval(agree, n, confidence)
    kappa_value = _kappa_of_table(tp, fp, fn, tn) if n else math.nan
    interval = None
    if n >= 2 and n_resamples > 0:

        def statistic(indices: np.ndarray) -> float:
            m, h = matcher[indices], people[indices]
            return _kappa_of_table(*_table(m, h))

        distribution = _bootstrap(n, statistic, n_resamples, seed)
        k_low, k_high, undefined = _percentiles(distribution, confidence)
        interval = KappaInterval(
            low=k_low, high=k_high, n_resamples=n_resamples, n_undefined=undefined
        )
    return GroupAgreement(
        band=label,
        low=None if bounds is None or math.isinf(bounds[0]) else bounds[0],
        high=None if bounds is None or math.isinf(bounds[1]) else bounds[1],
        n=n,
        agreement=agree / n if n else None,
        agreement_interval=Proportion(
            count=agree, n=n, estimate=agree / n if n else None, low=low, high=high
        ),
        cohen_kappa=None if math.isnan(kappa_value) else kappa_value,
        kappa_interval=interval,
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        true_negatives=tn,
        matcher_match_share=(tp + fp) / n if n else None,
        human_match_share=(tp + fn) / n if n else None,
    )


def cosine_decisions(pairs: Sequence[StepPair], threshold: float) -> dict[str, bool]:
    """The paper's decision for every pair: ``cosine >= tau``, compared in float32 as the
    matcher compares it (:func:`crystalbench.matching.greedy_pairs`).

    Examples:
        >>> from crystalbench.validation.pairs import StepPair
        >>> p = StepPair(pair_id="a", item_id="1", model="m", pred_step="x", ref_step="y",
        ...              cosine=0.35, band="[0.35,0.50)")
        >>> cosine_decisions([p], 0.35)
        {'a': True}
    """
    tau = np.float32(threshold)
    return {p.pair_id: bool(np.float32(p.cosine) >= tau) for p in pairs}


def _matcher_agreement(
    name: str,
    description: str,
    decisions: Decisions,
    resolved: Sequence[tuple[StepPair, bool]],
    labels: LabelSet,
    edges: Sequence[float],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> MatcherAgreement:
    kept = [(pair, human) for pair, human in resolved if decisions.get(pair.pair_id) is not None]
    matcher = np.array([bool(decisions[pair.pair_id]) for pair, _ in kept], dtype=bool)
    people = np.array([human for _, human in kept], dtype=bool)
    options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    overall = _group("all", None, matcher, people, **options)  # type: ignore[arg-type]
    bands = band_index([pair.cosine for pair, _ in kept], edges) if kept else np.zeros(0, int)
    by_band = [
        _group(label, bounds, matcher[bands == b], people[bands == b], **options)  # type: ignore[arg-type]
        for b, (label, bounds) in enumerate(
            zip(band_labels(edges), band_bounds(edges), strict=True)
        )
    ]
    per_annotator = []
    for annotator in labels.annotators:
        m: list[bool] = []
        h: list[bool] = []
        for pair_id, decision in decisions.items():
            entry = labels.pairs.get(pair_id)
            if decision is None or entry is None:
                continue
            for vote in entry.votes:
                if vote.annotator == annotator and vote.label != "unsure":
                    m.append(bool(decision))
                    h.append(vote.label == "match")
        per_annotator.append(_two_raters(name, annotator, m, h))
    return MatcherAgreement(
        matcher=name,
        description=description,
        overall=overall,
        by_band=by_band,
        n_undecided=len(resolved) - len(kept),
        by_annotator=per_annotator,
    )


def _two_raters(a: str, b: str, left: Sequence[bool], right: Sequence[bool]) -> AnnotatorAgreement:
    n = len(left)
    agree = sum(1 for x, y in zip(left, right, strict=True) if x == y)
    return AnnotatorAgreement(
        a=a,
        b=b,
        n=n,
        agreement=agree / n if n else None,
        cohen_kappa=cohen_kappa(left, right) if n else None,
    )


def _humans(labels: LabelSet, pair_ids: Sequence[str]) -> HumanAgreement:
    annotators = labels.annotators
    column = {pair_id: k for k, pair_id in enumerate(pair_ids)}
    data = np.full((len(annotators), len(pair_ids)), np.nan)
    row = {name: k for k, name in enumerate(annotators)}
    n_labels = 0
    for pair_id, entry in labels.pairs.items():
        if pair_id not in column:
            continue
        for vote in entry.votes:
            n_labels += 1
            if vote.label != "unsure":
                data[row[vote.annotator], column[pair_id]] = 1.0 if vote.label == "match" else 0.0
    decided = np.sum(~np.isnan(data), axis=0)
    multiply = int(np.sum(decided >= 2))
    alpha = None
    note = None
    if len(annotators) < 2:
        note = "one annotator: no human-human agreement, so no ceiling to compare with"
    elif multiply == 0:
        note = "no pair was labelled by two annotators: no human-human agreement"
    else:
        import krippendorff

        keep = decided >= 2
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(
                krippendorff.alpha(reliability_data=data[:, keep], level_of_measurement="nominal")
            )
        alpha = value if math.isfinite(value) else None
        if alpha is None:
            note = "alpha is undefined: every decided label is the same class"
    pairwise = []
    for (i, a), (j, b) in combinations(enumerate(annotators), 2):
        both = ~np.isnan(data[i]) & ~np.isnan(data[j])
        pairwise.append(
            _two_raters(a, b, (data[i, both] == 1.0).tolist(), (data[j, both] == 1.0).tolist())
        )
    kappas = [p.cohen_kappa for p in pairwise if p.cohen_kappa is not None]
    return HumanAgreement(
        annotators=annotators,
        n_labels=n_labels,
        n_multiply_labelled=multiply,
        krippendorff_alpha=alpha,
        pairwise=pairwise,
        mean_pairwise_kappa=float(np.mean(kappas)) if kappas else None,
        note=note,
    )


def _grid(grid: tuple[float, float, float]) -> np.ndarray:
    first, last, step = grid
    count = round((last - first) / step) + 1
    return np.round(first + step * np.arange(count), 10)


def _kappas_over_grid(cosines: np.ndarray, people: np.ndarray, grid: np.ndarray) -> np.ndarray:
    decisions = cosines[:, None] >= grid.astype(np.float32)[None, :]
    h = people[:, None]
    tp = np.sum(decisions & h, axis=0).tolist()
    fp = np.sum(decisions & ~h, axis=0).tolist()
    fn = np.sum(~decisions & h, axis=0).tolist()
    tn = np.sum(~decisions & ~h, axis=0).tolist()
    return np.array(
        [_kappa_of_table(*cell) for cell in zip(tp, fp, fn, tn, strict=True)], dtype=np.float64
    )


def _best(kappas: np.ndarray, grid: np.ndarray, tau: float) -> float:
    if not np.any(np.isfinite(kappas)):
        return math.nan
    top = np.nanmax(kappas)
    ties = np.flatnonzero(kappas == top)
    return float(grid[min(ties, key=lambda k: (abs(grid[k] - tau), grid[k]))])


def _threshold_search(
    resolved: Sequence[tuple[StepPair, bool]],
    tau: float,
    grid: tuple[float, float, float],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> ThresholdSearch:
    thresholds = _grid(grid)
    cosines = np.array([pair.cosine for pair, _ in resolved], dtype=np.float32)
    people = np.array([human for _, human in resolved], dtype=bool)
    if cosines.size == 0:
        return ThresholdSearch(
            best_threshold=None, best_kappa=None, low=None, high=None, n_resamples=0, curve=[]
        )
    kappas = _kappas_over_grid(cosines, people, thresholds)
    agreement = np.mean(
        (cosines[:, None] >= thresholds.astype(np.float32)[None, :]) == people[:, None], axis=0
    )
    best = _best(kappas, thresholds, tau)
    low = high = None
    resamples = 0
    if cosines.size >= 2 and n_resamples > 0 and math.isfinite(best):

        def statistic(indices: np.ndarray) -> float:
            return _best(
                _kappas_over_grid(cosines[indices], people[indices], thresholds), thresholds, tau
            )

        distribution = _bootstrap(cosines.size, statistic, n_resamples, seed)
        low, high, _ = _percentiles(distribution, confidence)
        resamples = n_resamples
    curve = [
        ThresholdPoint(
            threshold=float(t),
            agreement=float(a),
            cohen_kappa=None if math.isnan(k) else float(k),
        )
        for t, a, k in zip(thresholds, agreement, kappas, strict=True)
    ]
    best_kappa = float(np.nanmax(kappas)) if math.isfinite(best) else None
    return ThresholdSearch(
        best_threshold=best if math.isfinite(best) else None,
        best_kappa=best_kappa,
        low=low,
        high=high,
        n_resamples=resamples,
        curve=curve,
    )


def _calibration(
    resolved: Sequence[tuple[StepPair, bool]], edges: Sequence[float], confidence: float
) -> list[CalibrationBin]:
    cosines = np.array([pair.cosine for pair, _ in resolved], dtype=np.float64)
    people = np.array([human for _, human in resolved], dtype=bool)
    inner = list(edges[1:-1])
    index = np.searchsorted(np.asarray(inner), cosines, side="right") if cosines.size else cosines
    out = []
    for k, (low, high) in enumerate(itertools.pairwise(edges)):
        mask = index == k
        n = int(mask.sum())
        count = int(people[mask].sum())
        w_low, w_high = wilson_interval(count, n, confidence)
        out.append(
            CalibrationBin(
                low=float(low),
                high=float(high),
                n=n,
                mean_cosine=float(cosines[mask].mean()) if n else None,
                human_match=Proportion(
                    count=count, n=n, estimate=count / n if n else None, low=w_low, high=w_high
                ),
            )
        )
    return out


# --------------------------------------------------------------------------- entry point


def compute_agreement(
    pairs: Sequence[StepPair],
    labels: LabelSet,
    *,
    threshold: float = TAU,
    edges: Sequence[float] = VALIDATION_BAND_EDGES,
    matchers: Mapping[str, tuple[str, Decisions]] | None = None,
    confidence: float = VALIDATION_CONFIDENCE,
    n_resamples: int = VALIDATION_BOOTSTRAP_RESAMPLES,
    seed: int = VALIDATION_SEED,
    grid: tuple[float, float, float] = VALIDATION_THRESHOLD_GRID,
    calibration_edges: Sequence[float] = VALIDATION_CALIBRATION_EDGES,
) -> AgreementReport:
    """Every agreement statistic of ``crystal validate agreement``.

    Args:
        pairs: The pairs file (:func:`~crystalbench.validation.read_pairs`).
        labels: Their human labels (:func:`~crystalbench.validation.read_labels`); every
            labelled pair must be in ``pairs``.
        threshold: tau of the cosine matcher (the primary matcher).
        edges: Cosine band edges.
        matchers: More matchers: ``{name: (description, decisions by pair_id)}``.
        confidence: Two-sided level of every interval.
        n_resamples: Bootstrap resamples (0: no bootstrap intervals).
        seed: Seed of every bootstrap.
        grid: ``(first, last, step)`` of the threshold search.
        calibration_edges: Bin edges of the calibration curve.

    Returns:
        The :class:`AgreementReport`.

    Raises:
        InputError: A label names a pair that is not in ``pairs``.
    """
    from crystalbench.errors import InputError

    known = {pair.pair_id: pair for pair in pairs}
    for pair_id, line in labels.lines.items():
        if pair_id not in known:
            raise InputError(
                f"pair_id {pair_id!r} is not in the pairs file (labels of other pairs?)",
                path=labels.path,
                line=line,
                field="pair_id",
            )
    resolved = [
        (pair, labels.pairs[pair.pair_id].final == "match")
        for pair in pairs
        if pair.pair_id in labels.pairs and labels.pairs[pair.pair_id].final is not None
    ]
    primary = f"cosine>={threshold:g}"
    all_matchers: dict[str, tuple[str, Decisions]] = {
        primary: (
            f"the paper's test: a pair matches when its cosine reaches tau = {threshold:g}",
            cosine_decisions(pairs, threshold),
        )
    }
    kinds = {pair.kind for pair in pairs}
    if kinds <= {"matched", "unmatched"} and kinds:
        taus = sorted({pair.threshold for pair in pairs if pair.threshold is not None})
        at = f" (tau {', '.join(f'{t:g}' for t in taus)})" if taus else ""
        all_matchers["as-matched"] = (
            f"the scored runs' one-to-one matching{at}: matched pairs say match, best "
            "unmatched candidates say no",
            {pair.pair_id: pair.kind == "matched" for pair in pairs},
        )
    for name, value in (matchers or {}).items():
        all_matchers[name] = value
    options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    results = [
        _matcher_agreement(name, text, decisions, resolved, labels, edges, **options)  # type: ignore[arg-type]
        for name, (text, decisions) in all_matchers.items()
    ]
    labelled = sum(1 for pair in pairs if pair.pair_id in labels.pairs)
    return AgreementReport(
        threshold=threshold,
        bands=[float(e) for e in edges],
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        n_pairs=len(pairs),
        n_labelled=labelled,
        n_resolved=len(resolved),
        n_unresolved=labelled - len(resolved),
        n_unlabelled=len(pairs) - labelled,
        primary=primary,
        overall=results[0].overall,
        by_band=results[0].by_band,
        matchers=results,
        humans=_humans(labels, [pair.pair_id for pair in pairs]),
        threshold_search=_threshold_search(resolved, threshold, grid, **options),  # type: ignore[arg-type]
        calibration=_calibration(resolved, calibration_edges, confidence),
        labels=LabelSummary(
            path=str(labels.path),
            kind=labels.kind,
            annotators=labels.annotators,
            statuses=labels.statuses(),
            n_gold_skipped=labels.n_gold_skipped,
            n_empty_skipped=labels.n_empty_skipped,
        ),
    )
