"""One declaration per CRYSTAL metric and per item count: keys, headers, formats, directions.

Everything that averages, loads, tabulates or plots a metric reads this table: the
aggregator (:class:`crystalbench.scoring.evaluation.Aggregator`), the results loader
(:meth:`crystalbench.report.RunData.values`), the leaderboard (Markdown, CSV, LaTeX), the
HTML report and the CLI tables. A summary metric is the macro-average over items of one
per-item field (``match_f1`` averages ``f1``, ``steps`` averages ``n_pred``, ``accuracy`` is
the share of items whose ``answer_correct`` is true); that mapping lives here and nowhere
else. The definitions are in ``docs/metrics.md``.

Examples:
    >>> METRIC["match_f1"].item_field, METRIC["steps"].item_field
    ('f1', 'n_pred')
    >>> [m.key for m in LEADERBOARD]
    ['accuracy', 'match_f1', 'precision', 'recall', 'steps', 'lis', 'ordered_f1']
    >>> format_value(0.5799, "pct"), format_value(5.291, "f2")
    ('57.99', '5.29')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

NumberFormat = Literal["pct", "f3", "f2"]
"""How a value is shown: ``pct`` (a fraction shown in percent, 2 decimals), ``f3``, ``f2``."""

Average = Literal["mean", "share_true"]
"""How items combine: the mean of a number, or the share of items whose field is ``True``
(``False`` and ``None``, i.e. wrong, missing and unscored answers, count as 0)."""


@dataclass(frozen=True)
class Metric:
    """One summary metric and the per-item field it macro-averages.

    Attributes:
        key: Name in ``summary.json`` (a :class:`~crystalbench.types.MetricSummary` field),
            in leaderboards and in comparisons.
        item_field: The :class:`~crystalbench.types.ItemResult` field it averages.
        average: ``mean`` or ``share_true``.
        header: Column header.
        number_format: How values are printed.
        higher_is_better: ``True`` / ``False``, or ``None`` when no direction is better
            (the number of steps): such a column is never bolded.
        low: Smallest possible value.
        high: Largest possible value (``None``: unbounded).
        leaderboard: A column of the paper's Table 2 (leaderboards, CLI tables, report).
        report_column: Key of the per-item column in the HTML report's embedded data.
        description: One line for tooltips and docs.
    """

    key: str
    item_field: str
    average: Average
    header: str
    number_format: NumberFormat
    higher_is_better: bool | None
    low: float
    high: float | None
    leaderboard: bool
    report_column: str
    description: str

    def item_value(self, item: Any) -> float:
        """This metric's value for one per-item record (anything with ``item_field``).

        Examples:
            >>> from types import SimpleNamespace as NS
            >>> METRIC["accuracy"].item_value(NS(answer_correct=None))
            0.0
            >>> METRIC["steps"].item_value(NS(n_pred=4))
            4.0
        """
        value = getattr(item, self.item_field)
        if self.average == "share_true":
            return 1.0 if value is True else 0.0
        return float(value)


def _score(
    key: str,
    item_field: str,
    header: str,
    report_column: str,
    description: str,
    *,
    leaderboard: bool = True,
) -> Metric:
    """A per-item score in [0, 1], higher better, averaged over items and shown as ``f3``."""
    return Metric(
        key=key,
        item_field=item_field,
        average="mean",
        header=header,
        number_format="f3",
        higher_is_better=True,
        low=0.0,
        high=1.0,
        leaderboard=leaderboard,
        report_column=report_column,
        description=description,
    )


METRICS: tuple[Metric, ...] = (
    Metric(
        key="accuracy",
        item_field="answer_correct",
        average="share_true",
        header="Accuracy (%)",
        number_format="pct",
        higher_is_better=True,
        low=0.0,
        high=1.0,
        leaderboard=True,
        report_column="ok",
        description="share of items answered correctly (missing, unparseable, unscored: wrong)",
    ),
    _score(
        "match_f1",
        "f1",
        "Match F1",
        "f1",
        "F1 of the one-to-one matching of predicted to reference steps",
    ),
    _score(
        "precision",
        "precision",
        "Precision",
        "p",
        "matched share of the predicted steps",
    ),
    _score(
        "recall",
        "recall",
        "Recall",
        "r",
        "matched share of the reference steps",
    ),
    Metric(
        key="steps",
        item_field="n_pred",
        average="mean",
        header="Steps",
        number_format="f2",
        higher_is_better=None,
        low=0.0,
        high=None,
        leaderboard=True,
        report_column="m",
        description="mean predicted steps per item",
    ),
    _score(
        "lis",
        "lis",
        "LIS",
        "lis",
        "longest increasing subsequence of the matches over their number",
    ),
    _score(
        "kendall",
        "kendall",
        "Kendall",
        "kt",
        "Kendall tau of the matches, normalised to [0, 1]",
        leaderboard=False,
    ),
    _score(
        "ordered_f1",
        "ordered_f1",
        "Ordered F1",
        "of1",
        "Match F1 weighted by the order score",
    ),
)
"""Every summary metric, in ``summary.json`` order."""

METRIC: dict[str, Metric] = {m.key: m for m in METRICS}
"""Metric by summary key."""

METRIC_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS)
"""Every summary metric key."""

LEADERBOARD: tuple[Metric, ...] = tuple(m for m in METRICS if m.leaderboard)
"""The paper's Table 2 columns, in order."""

LEADERBOARD_KEYS: tuple[str, ...] = tuple(m.key for m in LEADERBOARD)
"""Keys of the paper's Table 2 columns."""


@dataclass(frozen=True)
class Count:
    """One count of items in a summary (a :class:`~crystalbench.types.MetricSummary` field).

    Attributes:
        key: Field name.
        header: Column header.
        description: What is counted.
        in_tables: A column of the CLI tables and of the HTML report's leaderboard.
        in_paper_tables: Also a column of the Markdown and LaTeX leaderboards (the CSV
            holds every count).
        optional: Shown in the one-line counts only when not 0 (counts of a feature most
            benchmarks do not use, such as several reference chains).
    """

    key: str
    header: str
    description: str
    in_tables: bool
    in_paper_tables: bool
    optional: bool = False


COUNTS: tuple[Count, ...] = (
    Count("n_items", "Items", "items in the run", True, True),
    Count(
        "n_scored",
        "Scored",
        "items whose prediction parsed into at least one step",
        False,
        False,
    ),
    Count(
        "n_no_steps",
        "No steps",
        "items whose prediction parsed but gave no step (an answer alone); they score 0",
        True,
        True,
    ),
    Count("n_missing", "Missing", "items with no prediction (they score 0)", True, True),
    Count(
        "n_parse_failed",
        "Parse fail",
        "items whose output gave neither steps nor an answer (they score 0)",
        True,
        True,
    ),
    Count(
        "n_judge_unscored",
        "Judge unscored",
        "free-form answers the judge left unscored (counted as wrong)",
        False,
        False,
    ),
    Count(
        "n_multi_chain",
        "Multi-ref",
        "items scored against more than one reference chain (the best one counts)",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_alt_chain_won",
        "Alt ref won",
        "items whose best reference chain was an alternative, not the primary one",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_order_undefined",
        "Order undefined",
        "items with fewer than two matched pairs: LIS and Kendall are 1.0 there by the "
        "paper's convention (missing and step-less items included)",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_compat_blank",
        "Compat blank",
        "blank answers crystal-metrics 0.2.0's answer rules credited (compat answer rules)",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_truncated",
        "Truncated",
        "items whose reply stops mid-reasoning (cut off by the token limit)",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_precedence",
        "Partial order",
        "items whose order was scored against a partial-order reference (reference_precedence)",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_vetoed_pairs",
        "Vetoed pairs",
        "step pairs the fact guard kept from matching (--guard facts or facts-strict)",
        False,
        False,
        optional=True,
    ),
    Count(
        "n_vetoed_items",
        "Vetoed items",
        "items with at least one pair the fact guard kept from matching",
        False,
        False,
        optional=True,
    ),
)
"""Every item count, in ``summary.json`` order; ``n_items = n_scored + n_no_steps +
n_missing + n_parse_failed``."""

TABLE_COUNTS: tuple[Count, ...] = tuple(c for c in COUNTS if c.in_tables)
"""The counts shown as columns of the CLI tables and the HTML leaderboard."""

PAPER_TABLE_COUNTS: tuple[Count, ...] = tuple(c for c in COUNTS if c.in_paper_tables)
"""The counts shown as the last columns of the Markdown and LaTeX leaderboards."""


@dataclass(frozen=True)
class PairMetric:
    """One number of a :class:`~crystalbench.types.PairSummary` shown in tables.

    Pair accuracy is not a macro-average over items (a pair is right when both of its
    questions are), so it is not a :class:`Metric`; tables add these columns only when a run
    has paired items (MMVP).

    Attributes:
        key: Field of :class:`~crystalbench.types.PairSummary`.
        header: Column header.
        number_format: How values are printed.
        description: One line for tooltips and docs.
    """

    key: str
    header: str
    number_format: NumberFormat
    description: str


PAIR_METRICS: tuple[PairMetric, ...] = (
    PairMetric(
        "question_accuracy",
        "Paired Q acc (%)",
        "pct",
        "share of the paired questions (MMVP) answered correctly",
    ),
    PairMetric(
        "pair_accuracy",
        "Pair acc (%)",
        "pct",
        "share of pairs with both questions right (a pair missing a question is not right)",
    ),
)
"""The pair columns of the leaderboards, CLI tables and report, in order."""

PAIR_COUNTS: tuple[str, ...] = ("n_pairs", "n_pairs_right", "n_pairs_incomplete")
"""The pair counts written with them (CSV, CLI, report)."""


def format_value(value: float, number_format: str) -> str:
    """Format one metric value as in the paper (``pct``: a fraction shown in percent).

    Examples:
        >>> format_value(0.5799, "pct"), format_value(0.61234, "f3"), format_value(5.291, "f2")
        ('57.99', '0.612', '5.29')
    """
    if number_format == "pct":
        return f"{100 * value:.2f}"
    if number_format == "f2":
        return f"{value:.2f}"
    return f"{value:.3f}"


def metric(key: str) -> Metric:
    """The metric with this summary key.

    Raises:
        KeyError: Unknown key (the message lists the valid ones).
    """
    try:
        return METRIC[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r}; valid: {', '.join(METRIC_KEYS)}") from None


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, in the plural unless ``count`` is 1.

    Examples:
        >>> plural(1, "parse failure"), plural(3, "item"), plural(0, "item")
        ('1 parse failure', '3 items', '0 items')
        >>> plural(2, "reply", "replies"), plural(1_234, "step")
        ('2 replies', '1,234 steps')
    """
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"


MOST_MISSING_SHARE = 0.5
"""A run in which more than this share of the items has no prediction gets a warning
(terminal, ``summary.json``'s ``warnings``, the HTML report): its means are over every item,
the missing ones counting 0, so they mostly measure how little was predicted."""


def missing_warning(n_missing: int, n_items: int) -> str | None:
    """The warning for a run where most items have no prediction; ``None`` otherwise.

    Examples:
        >>> print(missing_warning(35, 40))
        35 of 40 items (88%) have no prediction: they score 0 and every mean is over all 40 items, so these numbers mostly measure what is missing (check the predictions file and the item ids)
        >>> missing_warning(20, 40) is None, missing_warning(0, 0) is None
        (True, True)
    """  # noqa: E501
    if n_items <= 0 or n_missing <= MOST_MISSING_SHARE * n_items:
        return None
    return (
        f"{n_missing:,} of {plural(n_items, 'item')} ({100 * n_missing / n_items:.0f}%) "
        f"{'has' if n_missing == 1 else 'have'} no prediction: "
        f"{'it scores' if n_missing == 1 else 'they score'} 0 and every mean is "
        f"over all {plural(n_items, 'item')}, so these numbers mostly measure what is missing "
        "(check the predictions file and the item ids)"
    )
