"""How well a matcher agrees with people on labelled step pairs (the paper's Table 3, and more).

For every matcher (the cosine threshold test ``S >= tau``; the same test with the fact guard,
``guard="facts"``: a pair at or above tau whose steps state incompatible facts does not
match; the pairs the scored run matched one-to-one; the judge matcher; any decisions read
from a file) against the final human labels, overall and by cosine band:

- **agreement** (share of pairs where matcher and people say the same), overall and per
  cosine band, with **Wilson** intervals;
- **Cohen's kappa**, the standard binary one (Cohen 1960: ``(p_o - p_e) / (1 - p_e)`` with
  the chance agreement ``p_e`` from both sides' marginals) on the 2 x 2 table, with a
  percentile **bootstrap** interval over pairs. Kappa is undefined
  (``None``) when both sides give one class only (``p_e = 1``): a band below tau where
  everybody says "no match" has agreement 100 % and no kappa. Resamples where it is
  undefined are left out of the interval and counted. Note: the paper reports kappa 0.534
  for its Table 3; the standard kappa of its own counts (TP 37, FP 16, FN 0, TN 47) is
  0.685, which is what this module computes for them;
- the **confusion split**: false positives (the matcher says match, people say no) and false
  negatives;
- with several annotators, the **human-human ceiling**
  (:func:`crystalbench.statistics.agreement.rater_agreement`, the computation the review app's admin
  page shows): Krippendorff's alpha (nominal; ``unsure`` is a missing value) with a
  bootstrap interval, Cohen's kappa of every pair of annotators on the pairs both labelled
  and their mean; and each annotator's kappa with the matcher;
- the **threshold that maximises kappa** against people on a grid of tau, with a bootstrap
  interval (the same resampled pairs, the argmax per resample);
- a **calibration curve**: the share of human "match" per cosine bin, with Wilson intervals.

Pairs without a final human label (unresolved ties, only ``unsure``) are left out of the
matcher statistics and counted; so are pairs a matcher could not decide (a failed judge).

Every statistic comes from :mod:`crystalbench.statistics.agreement` (statsmodels for kappa and
Wilson,
the ``krippendorff`` package for alpha, scipy for the bootstrap); this module only decides
which decisions are compared with which labels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import Field

from crystalbench._internal.extras import require
from crystalbench.config.settings import (
    SCHEMA_VERSION,
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CALIBRATION_EDGES,
    VALIDATION_CONFIDENCE,
    VALIDATION_SEED,
    VALIDATION_THRESHOLD_GRID,
)
from crystalbench.defaults import TAU, VALIDATION_BAND_EDGES
from crystalbench.statistics.agreement import (
    BootstrapInterval,
    PairwiseAgreement,
    Proportion,
    RaterAgreement,
    binary_kappa,
    binary_table,
    bootstrap_distribution,
    bootstrap_interval,
    cohen_kappa,
    percentile_interval,
    proportion,
    rater_agreement,
    wilson_interval,
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
    "guard_decisions",
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


KappaInterval = BootstrapInterval
"""A percentile bootstrap interval of Cohen's kappa (resamples where it is undefined are
counted in ``n_undefined``)."""

AnnotatorAgreement = PairwiseAgreement
"""Two raters (two annotators, or a matcher and an annotator) on the pairs both decided."""

HumanAgreement = RaterAgreement
"""How far people agree with each other: the ceiling for any matcher."""


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
    tp, fp, fn, tn = binary_table(matcher, people)
    agree = tp + tn
    kappa_value = binary_kappa(tp, fp, fn, tn) if n else math.nan
    interval = bootstrap_interval(
        n,
        lambda indices: binary_kappa(*binary_table(matcher[indices], people[indices])),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return GroupAgreement(
        band=label,
        low=None if bounds is None or math.isinf(bounds[0]) else bounds[0],
        high=None if bounds is None or math.isinf(bounds[1]) else bounds[1],
        n=n,
        agreement=agree / n if n else None,
        agreement_interval=proportion(agree, n, confidence),
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
    matcher compares it (:func:`crystalbench.scoring.matching.greedy_pairs`).

    Examples:
        >>> from crystalbench.validation.pairs import StepPair
        >>> p = StepPair(pair_id="a", item_id="1", model="m", pred_step="x", ref_step="y",
        ...              cosine=0.35, band="[0.35,0.50)")
        >>> cosine_decisions([p], 0.35)
        {'a': True}
    """
    tau = np.float32(threshold)
    return {p.pair_id: bool(np.float32(p.cosine) >= tau) for p in pairs}


def guard_decisions(
    pairs: Sequence[StepPair],
    threshold: float,
    *,
    options: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, bool]:
    """Cosine at tau with the fact guard (``--guard facts``): a pair matches when its cosine
    reaches tau and the guard finds no conflict between its two steps.

    The guard reads each pair once (pairs below tau are not read: they do not match
    anyway). Item options come from ``options`` (by ``item_id``); without them option
    letters are still compared, option texts are not.

    Examples:
        >>> from crystalbench.validation.pairs import StepPair
        >>> def pair(i, pred, ref, cos):
        ...     return StepPair(pair_id=i, item_id="1", model="m", pred_step=pred,
        ...                     ref_step=ref, cosine=cos, band="x")
        >>> guard_decisions([pair("a", "The door is not open.", "The door is open.", 0.85),
        ...                  pair("b", "The area equals 16.", "The area is 16.", 0.85)], 0.35)
        {'a': False, 'b': True}
    """
    from crystalbench.scoring.filters.guard import FactGuard

    tau = np.float32(threshold)
    guards: dict[tuple[str, ...], FactGuard] = {}
    out = {}
    for pair in pairs:
        if not np.float32(pair.cosine) >= tau:
            out[pair.pair_id] = False
            continue
        key = tuple((options or {}).get(pair.item_id, ()))
        guard = guards.get(key) or guards.setdefault(key, FactGuard(key))
        out[pair.pair_id] = guard.check(pair.pred_step, pair.ref_step) is None
    return out


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


def _humans(labels: LabelSet, *, confidence: float, n_resamples: int, seed: int) -> RaterAgreement:
    """The human-human ceiling: every annotator's label of every pair (``unsure`` is an
    abstention, a missing value), through
    :func:`crystalbench.statistics.agreement.rater_agreement`."""
    ratings = {
        pair_id: {vote.annotator: vote.label for vote in entry.votes}
        for pair_id, entry in labels.pairs.items()
    }
    return rater_agreement(ratings, confidence=confidence, n_resamples=n_resamples, seed=seed)


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
        [binary_kappa(*cell) for cell in zip(tp, fp, fn, tn, strict=True)], dtype=np.float64
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

        distribution = bootstrap_distribution(
            cosines.size, statistic, n_resamples=n_resamples, seed=seed
        )
        low, high, _ = percentile_interval(distribution, confidence)
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
        out.append(
            CalibrationBin(
                low=float(low),
                high=float(high),
                n=n,
                mean_cosine=float(cosines[mask].mean()) if n else None,
                human_match=proportion(count, n, confidence),
            )
        )
    return out


# --------------------------------------------------------------------------- entry point


def require_agreement_stack() -> None:
    """Fail at once, naming the ``validate`` extra, when the libraries behind the agreement
    statistics are missing (call it before slow work such as a judge run).

    Raises:
        MissingExtraError: statsmodels or krippendorff is not installed.
    """
    require(
        "statsmodels",
        "krippendorff",
        what="crystal validate agreement",
        extra="validate",
        load=False,
    )


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
    guard: str = "none",
    item_options: Mapping[str, Sequence[str]] | None = None,
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
        guard: ``facts`` also scores cosine at tau with the fact guard
            (:func:`guard_decisions`, named ``cosine>=TAU+facts``); ``none`` does not.
        item_options: Item options by ``item_id``, for the guard's option-text rule.

    Returns:
        The :class:`AgreementReport`.

    Raises:
        InputError: A label names a pair that is not in ``pairs``, or ``guard`` is
            ``facts-strict`` (its step scope needs the whole chains and their cosines; a
            pair alone cannot show it) or unknown.
        MissingExtraError: statsmodels or krippendorff is not installed (the ``validate``
            extra).
    """
    from crystalbench.errors import InputError

    if guard not in ("none", "facts"):
        raise InputError(
            f"guard {guard!r}: agreement scores lone pairs, so only the pair rule (facts) "
            "applies; facts-strict's step scope needs whole chains and their cosines "
            "(score the runs with --guard facts-strict and use the as-matched pairs)",
            field="guard",
        )
    require_agreement_stack()
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
    if guard == "facts":
        all_matchers[f"{primary}+facts"] = (
            f"the paper's test with the fact guard: a pair matches when its cosine reaches "
            f"tau = {threshold:g} and its steps state no incompatible facts (numbers, "
            "negation, relations, options, colours)"
            + ("" if item_options else "; no item options given, so option texts are not compared"),
            guard_decisions(pairs, threshold, options=item_options),
        )
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
        humans=_humans(labels, **options),  # type: ignore[arg-type]
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
