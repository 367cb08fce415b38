"""Agreement between raters: Cohen's kappa, Krippendorff's alpha and their intervals.

The one home of every agreement number crystalbench reports. The review app's admin page
(:func:`crystalbench.review.agreement.agreement_summary`) and evaluator validation
(:func:`crystalbench.validation.agreement.compute_agreement`, ``crystal validate agreement``)
both compute them here, so the same labels give the same numbers in both (a test checks it).

One maintained library per statistic:

- **Cohen's kappa** (Cohen 1960): :func:`statsmodels.stats.inter_rater.cohens_kappa` on the two
  raters' contingency table, ``(p_o - p_e) / (1 - p_e)`` with the chance agreement ``p_e``
  from both raters' marginals. Undefined (``None``) when ``p_e = 1``: both raters give one
  and the same class throughout.
- **Krippendorff's alpha**, nominal (Krippendorff 2011): the ``krippendorff`` package, on the
  number of each label per unit (any number of raters, missing ratings allowed).
- **Wilson** score interval of a share: :func:`statsmodels.stats.proportion.proportion_confint`.
- **Bootstrap** intervals, percentile, units resampled with replacement
  (:func:`scipy.stats.bootstrap`): of kappa, and of alpha (the unit bootstrap Zapf et al.
  2016 recommend for alpha on nominal data). Resamples where the statistic is undefined are
  left out of the interval and counted.

**What a rating is.** A unit (a step pair, a reference chain) is labelled by several raters;
a rating is one rater's current label of one unit. An abstention (``unsure``,
:data:`ABSTENTIONS`) is a *missing value* in every statistic here, not a third answer: the
question asked of a step pair is binary (does the predicted step say what the reference
step says?) and ``unsure`` answers neither way. Counting it as a category would score
"unsure" against "match" as a disagreement as strong as "no match" against "match", and two
raters who are both unsure as agreeing about the pair; it would also make the human ceiling
incomparable with a matcher that can only say match or no match. Abstentions are counted
(``n_abstained``), never dropped silently. A unit left with fewer than two ratings is
unpairable and enters no statistic (Krippendorff's convention).

Before this module the review app counted ``unsure`` as a third nominal category while
validation treated it as missing, so the admin page and ``crystal validate agreement`` showed
different alphas (0.558 and 0.662) for the same labels (issue 23).

statsmodels, scipy and krippendorff are imported only inside the functions that need them
(through :func:`crystalbench._internal.extras.require`): ``pip install 'crystalbench[validate]'`` or
``'crystalbench[review]'`` installs them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np

from crystalbench._internal.extras import require
from crystalbench.config.settings import (
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CONFIDENCE,
    VALIDATION_SEED,
)
from crystalbench.types import Record

__all__ = [
    "ABSTENTIONS",
    "BootstrapInterval",
    "PairwiseAgreement",
    "Proportion",
    "RaterAgreement",
    "binary_kappa",
    "binary_table",
    "bootstrap_distribution",
    "bootstrap_interval",
    "cohen_kappa",
    "kappa_of_table",
    "krippendorff_alpha",
    "percentile_interval",
    "proportion",
    "rater_agreement",
    "wilson_interval",
]

ABSTENTIONS: tuple[str, ...] = ("unsure",)
"""Labels that say "I cannot tell": missing values in every statistic (see the module
docstring)."""

Ratings = Mapping[str, Mapping[str, str]]
"""Labels by unit, then by rater: ``{unit_id: {rater: label}}``."""


# --------------------------------------------------------------------------- records


class Proportion(Record):
    """A share with its Wilson interval."""

    count: int
    n: int
    estimate: float | None
    """``count / n``; ``None`` when ``n`` is 0."""
    low: float | None
    high: float | None


class BootstrapInterval(Record):
    """A percentile bootstrap interval (units resampled with replacement)."""

    low: float | None
    high: float | None
    n_resamples: int
    n_undefined: int
    """Resamples in which the statistic was undefined, left out of the interval."""


class PairwiseAgreement(Record):
    """Two raters on the units both rated."""

    a: str
    b: str
    n: int
    """Units both rated (abstentions excluded)."""
    agreement: float | None
    """Share of those units where the two gave the same label."""
    cohen_kappa: float | None
    """Cohen's kappa of the two (``None`` when undefined or ``n`` is 0)."""


class RaterAgreement(Record):
    """How far raters agree with each other (for step pairs: the ceiling for any matcher)."""

    annotators: list[str]
    """Every rater with at least one rating, sorted by name."""
    n_labels: int
    """Ratings given, abstentions included."""
    n_abstained: int = 0
    """Ratings that were abstentions (:data:`ABSTENTIONS`): missing values."""
    n_multiply_labelled: int
    """Units with at least two ratings (abstentions excluded): the pairable units."""
    percent_agreement: float | None = None
    """Mean over the pairable units of the share of rater pairs giving the same label."""
    krippendorff_alpha: float | None
    """Nominal alpha over every rater and unit (``None`` with one rater, no pairable unit,
    or one label throughout)."""
    alpha_interval: BootstrapInterval | None = None
    """Bootstrap interval of alpha over the pairable units."""
    pairwise: list[PairwiseAgreement]
    """Every pair of raters, by name."""
    cohen_kappa: float | None = None
    """Cohen's kappa when exactly two raters rated the pairable units, else ``None``."""
    mean_pairwise_kappa: float | None
    """Light's kappa (Light 1971): the unweighted mean of the defined pairwise kappas."""
    note: str | None = None


# --------------------------------------------------------------------------- shares


def wilson_interval(
    count: int, n: int, confidence: float = VALIDATION_CONFIDENCE
) -> tuple[float | None, float | None]:
    """Wilson score interval of ``count / n`` (statsmodels' ``proportion_confint``).

    Examples:
        >>> [round(x, 4) for x in wilson_interval(84, 100)]
        [0.7558, 0.899]
        >>> wilson_interval(0, 0)
        (None, None)
    """
    if n == 0:
        return None, None
    proportions: Any = require(
        "statsmodels.stats.proportion", what="Wilson intervals", extra="validate"
    )
    low, high = proportions.proportion_confint(count, n, alpha=1.0 - confidence, method="wilson")
    return float(low), float(high)


def proportion(count: int, n: int, confidence: float = VALIDATION_CONFIDENCE) -> Proportion:
    """``count / n`` with its Wilson interval.

    Examples:
        >>> p = proportion(84, 100)
        >>> p.estimate, round(p.low, 4)
        (0.84, 0.7558)
    """
    low, high = wilson_interval(count, n, confidence)
    return Proportion(count=count, n=n, estimate=count / n if n else None, low=low, high=high)


# --------------------------------------------------------------------------- Cohen's kappa


def kappa_of_table(table: Sequence[Sequence[int]] | np.ndarray) -> float | None:
    """Cohen's kappa of a square contingency table (rows: one rater, columns: the other),
    by statsmodels; ``None`` when it is undefined (an empty table, or ``p_e = 1``).

    Examples:
        >>> round(kappa_of_table([[37, 16], [0, 47]]), 4)   # the paper's Table 3 counts
        0.6849
        >>> kappa_of_table([[5, 0], [0, 0]]) is None
        True
    """
    array = np.asarray(table, dtype=np.float64)
    if array.sum() == 0:
        return None
    inter_rater: Any = require(
        "statsmodels.stats.inter_rater", what="Cohen's kappa", extra="validate"
    )

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(inter_rater.cohens_kappa(array, return_results=False))
    return value if math.isfinite(value) else None


@lru_cache(maxsize=65536)
def binary_kappa(tp: int, fp: int, fn: int, tn: int) -> float:
    """Cohen's kappa of a 2 x 2 table given as counts (first rater says yes and second yes,
    first yes and second no, first no and second yes, both no); NaN when undefined.

    :func:`kappa_of_table` with a NaN instead of ``None``, for arrays of kappas. Tables
    repeat a lot across bootstrap resamples and thresholds, hence the cache.

    Examples:
        >>> round(binary_kappa(37, 16, 0, 47), 3)
        0.685
        >>> math.isnan(binary_kappa(0, 0, 0, 4))
        True
    """
    value = kappa_of_table([[tp, fp], [fn, tn]])
    return math.nan if value is None else value


def binary_table(first: np.ndarray, second: np.ndarray) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` of two boolean arrays (``first`` plays the rater whose yes is a
    positive: the matcher, against people).

    Examples:
        >>> binary_table(np.array([True, True, False]), np.array([True, False, False]))
        (1, 1, 0, 1)
    """
    first = np.asarray(first, dtype=bool)
    second = np.asarray(second, dtype=bool)
    counts = np.bincount(2 * first.astype(np.intp) + second, minlength=4).tolist()
    return counts[3], counts[2], counts[1], counts[0]


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels of the same units (any labels: strings, booleans);
    ``None`` when undefined (no units, or both give one and the same label throughout).

    Examples:
        >>> cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])
        0.5
        >>> m = [True] * 53 + [False] * 47
        >>> h = [True] * 37 + [False] * 63       # the paper's Table 3 counts
        >>> round(cohen_kappa(m, h), 3)
        0.685
        >>> cohen_kappa([False, False], [False, False]) is None
        True
    """
    if len(first) != len(second):
        raise ValueError(f"{len(first)} labels against {len(second)}")
    if not first:
        return None
    if all(isinstance(x, (bool, np.bool_)) for x in (*first, *second)):
        value = binary_kappa(*binary_table(np.asarray(first), np.asarray(second)))
        return None if math.isnan(value) else value
    categories = {label: k for k, label in enumerate(sorted(set(first) | set(second), key=str))}
    table = np.zeros((len(categories), len(categories)), dtype=np.int64)
    for x, y in zip(first, second, strict=True):
        table[categories[x], categories[y]] += 1
    return kappa_of_table(table)


# --------------------------------------------------------------------------- Krippendorff


def _value_counts(units: Sequence[Sequence[str]]) -> np.ndarray:
    """Units x labels: how often each label was given to each unit (pairable units only)."""
    pairable = [labels for labels in units if len(labels) >= 2]
    categories = {label: k for k, label in enumerate(sorted({x for u in pairable for x in u}))}
    counts = np.zeros((len(pairable), len(categories)), dtype=np.float64)
    for row, labels in enumerate(pairable):
        for label in labels:
            counts[row, categories[label]] += 1
    return counts


def _alpha_of_counts(counts: np.ndarray) -> float:
    """Nominal alpha of a units x labels count matrix (NaN when undefined)."""
    if counts.shape[0] == 0 or np.count_nonzero(counts.sum(axis=0)) < 2:
        return math.nan
    krippendorff: Any = require("krippendorff", what="Krippendorff's alpha", extra="validate")

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))
    return value if math.isfinite(value) else math.nan


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Nominal Krippendorff's alpha of the labels each unit received (abstentions already
    removed); ``None`` when undefined (no unit with two labels, or one label throughout).

    Examples:
        >>> round(krippendorff_alpha([["a", "a"], ["b", "b"], ["a", "b"]]), 3)
        0.444
        >>> krippendorff_alpha([["a"], ["b"]]) is None
        True
    """
    value = _alpha_of_counts(_value_counts(units))
    return None if math.isnan(value) else value


# --------------------------------------------------------------------------- bootstrap


def bootstrap_distribution(
    n: int,
    statistic: Callable[[np.ndarray], float],
    *,
    n_resamples: int = VALIDATION_BOOTSTRAP_RESAMPLES,
    seed: int = VALIDATION_SEED,
) -> np.ndarray:
    """``statistic(indices)`` over ``n_resamples`` resamples of ``range(n)`` with replacement
    (:func:`scipy.stats.bootstrap`'s resampling; NaN where the statistic is undefined).

    Examples:
        >>> values = np.array([0.0, 1.0, 1.0, 1.0])
        >>> d = bootstrap_distribution(4, lambda i: float(values[i].mean()), n_resamples=50)
        >>> d.shape, bool(((d >= 0) & (d <= 1)).all())
        ((50,), True)
    """
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


def percentile_interval(
    values: np.ndarray, confidence: float = VALIDATION_CONFIDENCE
) -> tuple[float | None, float | None, int]:
    """The two-sided percentile interval of the finite ``values``, and how many were not.

    Examples:
        >>> percentile_interval(np.array([0.0, 1.0, 2.0, math.nan]), 0.5)
        (0.5, 1.5, 1)
    """
    finite = values[np.isfinite(values)]
    undefined = int(values.size - finite.size)
    if finite.size == 0:
        return None, None, undefined
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high), undefined


def bootstrap_interval(
    n: int,
    statistic: Callable[[np.ndarray], float],
    *,
    confidence: float = VALIDATION_CONFIDENCE,
    n_resamples: int = VALIDATION_BOOTSTRAP_RESAMPLES,
    seed: int = VALIDATION_SEED,
) -> BootstrapInterval | None:
    """Percentile bootstrap interval of ``statistic(indices)`` over ``n`` units (NaN marks an
    undefined resample); ``None`` with fewer than two units or no resamples.

    Examples:
        >>> values = np.array([0.0, 1.0, 1.0, 1.0])
        >>> i = bootstrap_interval(4, lambda idx: float(values[idx].mean()), n_resamples=200)
        >>> 0.0 <= i.low <= 0.75 <= i.high <= 1.0, i.n_undefined
        (True, 0)
    """
    if n < 2 or n_resamples <= 0:
        return None
    distribution = bootstrap_distribution(n, statistic, n_resamples=n_resamples, seed=seed)
    low, high, undefined = percentile_interval(distribution, confidence)
    return BootstrapInterval(low=low, high=high, n_resamples=n_resamples, n_undefined=undefined)


# --------------------------------------------------------------------------- the whole report


def rater_agreement(
    ratings: Ratings,
    *,
    abstentions: Collection[str] = ABSTENTIONS,
    confidence: float = VALIDATION_CONFIDENCE,
    n_resamples: int = VALIDATION_BOOTSTRAP_RESAMPLES,
    seed: int = VALIDATION_SEED,
) -> RaterAgreement:
    """Every statistic of how far raters agree, from their labels of each unit.

    The one computation behind the review app's admin page and the human ceiling of
    ``crystal validate agreement``. Units are taken in the order of their ids (so the
    bootstrap does not depend on the order a file or a database lists them in).

    Args:
        ratings: ``{unit_id: {rater: label}}``, each rater's current label of each unit.
        abstentions: Labels that are missing values (default ``unsure``).
        confidence: Two-sided level of the alpha interval.
        n_resamples: Bootstrap resamples of the alpha interval (0: no interval).
        seed: Seed of the bootstrap.

    Returns:
        Percent agreement, Krippendorff's alpha with its interval, Cohen's kappa of every
        pair of raters, their mean (Light's kappa), and the counts behind them.

    Examples:
        >>> r = rater_agreement({"p1": {"ann": "match", "bob": "match"},
        ...                      "p2": {"ann": "match", "bob": "no_match"},
        ...                      "p3": {"ann": "no_match", "bob": "no_match"},
        ...                      "p4": {"ann": "no_match", "bob": "no_match", "cy": "unsure"}},
        ...                     n_resamples=0)
        >>> r.annotators, r.n_labels, r.n_abstained, r.n_multiply_labelled
        (['ann', 'bob', 'cy'], 9, 1, 4)
        >>> r.percent_agreement, r.cohen_kappa, round(r.krippendorff_alpha, 3)
        (0.75, 0.5, 0.533)
    """
    skip = set(abstentions)
    raters = sorted({rater for unit in ratings.values() for rater in unit})
    n_labels = sum(len(unit) for unit in ratings.values())
    kept = {
        unit_id: {rater: label for rater, label in unit.items() if label not in skip}
        for unit_id, unit in sorted(ratings.items())
    }
    n_abstained = n_labels - sum(len(unit) for unit in kept.values())
    pairable = [unit for unit in kept.values() if len(unit) >= 2]
    shares = [
        sum(a == b for a, b in combinations(unit.values(), 2)) / math.comb(len(unit), 2)
        for unit in pairable
    ]
    counts = _value_counts([list(unit.values()) for unit in pairable])
    alpha = _alpha_of_counts(counts)
    interval = None
    if math.isfinite(alpha):
        interval = bootstrap_interval(
            len(pairable),
            lambda indices: _alpha_of_counts(counts[indices]),
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    pairwise = []
    for a, b in combinations(raters, 2):
        both = [(unit[a], unit[b]) for unit in kept.values() if a in unit and b in unit]
        pairwise.append(
            PairwiseAgreement(
                a=a,
                b=b,
                n=len(both),
                agreement=sum(x == y for x, y in both) / len(both) if both else None,
                cohen_kappa=cohen_kappa([x for x, _ in both], [y for _, y in both]),
            )
        )
    kappas = [p.cohen_kappa for p in pairwise if p.cohen_kappa is not None]
    rating_raters = sorted({rater for unit in pairable for rater in unit})
    two = [p for p in pairwise if (p.a, p.b) == tuple(rating_raters)]
    note = None
    if len(raters) < 2:
        note = "one annotator: no agreement between annotators, so no ceiling to compare with"
    elif not pairable:
        note = "no unit was labelled by two annotators: no agreement between annotators"
    elif not math.isfinite(alpha):
        note = "alpha is undefined: every label is the same class"
    return RaterAgreement(
        annotators=raters,
        n_labels=n_labels,
        n_abstained=n_abstained,
        n_multiply_labelled=len(pairable),
        percent_agreement=sum(shares) / len(shares) if shares else None,
        krippendorff_alpha=alpha if math.isfinite(alpha) else None,
        alpha_interval=interval,
        pairwise=pairwise,
        cohen_kappa=two[0].cohen_kappa if len(rating_raters) == 2 and two else None,
        mean_pairwise_kappa=float(np.mean(kappas)) if kappas else None,
        note=note,
    )
