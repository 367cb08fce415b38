"""The leaderboard: the paper's Table 2 columns with bootstrap intervals, in four formats.

:func:`leaderboard_rows` computes one :class:`LeaderboardRow` per run (point estimates
and seeded percentile-bootstrap intervals from the per-item values of
``examples.jsonl``); :func:`render_markdown`, :func:`render_csv` and
:func:`render_latex` print the same rows. The HTML report embeds the same rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from crystalbench.answers.compat import BLANK_RULE
from crystalbench.errors import UnknownNameError
from crystalbench.metrics import (
    COUNTS,
    LEADERBOARD,
    LEADERBOARD_KEYS,
    PAIR_COUNTS,
    PAIR_METRICS,
    PAPER_TABLE_COUNTS,
    Metric,
    format_value,
    plural,
)
from crystalbench.report.loading import RunData
from crystalbench.scoring.mmvp import summarize_pairs
from crystalbench.statistics.intervals import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    bootstrap_cis,
)
from crystalbench.types import PairSummary, Record

TABLE2: tuple[Metric, ...] = LEADERBOARD
"""The paper's Table 2 columns (:data:`crystalbench.metrics.LEADERBOARD`).

``Steps`` (mean predicted steps) has no better direction, so it is never bolded.
"""

METRIC_KEYS: tuple[str, ...] = LEADERBOARD_KEYS
"""Keys of the Table 2 columns (what ``--sort`` accepts)."""

FORMATS: tuple[str, ...] = ("md", "csv", "tex")
"""Output formats of :func:`render`."""

format_number = format_value
"""Format one metric value as in the paper (see :func:`crystalbench.metrics.format_value`)."""


class LeaderboardRow(Record):
    """One run's line of the leaderboard."""

    name: str
    """Display name of the run."""
    results_dir: str
    """Folder the run was read from."""
    metrics: dict[str, Interval]
    """Table 2 metric key -> macro mean with its bootstrap interval (fractions, not %)."""
    n_items: int
    """Items in the run."""
    n_scored: int
    """Items whose prediction parsed into at least one step."""
    n_no_steps: int = 0
    """Items whose prediction parsed but gave no step (an answer alone)."""
    n_missing: int
    """Items with no prediction."""
    n_parse_failed: int
    """Items whose output could not be parsed."""
    n_judge_unscored: int
    """Free-form answers the judge left unscored (counted as wrong)."""
    n_multi_chain: int = 0
    """Items scored against more than one reference chain."""
    n_alt_chain_won: int = 0
    """Items whose best reference chain was not the primary one."""
    n_order_undefined: int = 0
    """Items with fewer than two matches (LIS and Kendall 1.0 by the paper's convention)."""
    n_compat_blank: int = 0
    """Blank answers crystal-metrics 0.2.0's answer rules credited."""
    n_truncated: int = 0
    """Items whose reply stops mid-reasoning (``truncated`` in their record)."""
    n_precedence: int = 0
    """Items whose order was scored against a partial-order reference."""
    guard: str = "none"
    """The fact guard the run was scored with (``none``: the paper)."""
    n_vetoed_pairs: int = 0
    """Step pairs the fact guard kept from matching."""
    n_vetoed_items: int = 0
    """Items with at least one vetoed pair."""
    pairs: PairSummary | None = None
    """Question and pair accuracy of the paired items (MMVP); ``None`` when none is paired."""
    verifier: str = "none"
    """Who verified the run's steps (:attr:`~crystalbench.report.loading.RunData.verifier`;
    ``none``: no verifier, the paper)."""
    verified_precision: float | None = None
    """The verifier's (matched or supported) / (predicted - unverified) steps."""
    hallucination_rate: float | None = None
    """The verifier's ``wrong_perception`` / (predicted - unverified) steps."""
    n_unverified: int = 0
    """Steps the verifier left without a label (failed calls)."""
    verifier_alpha: float | None = None
    """A verifier panel's Krippendorff's alpha (``None``: one judge, or undefined)."""


def leaderboard_rows(
    runs: Sequence[RunData],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    sort_by: str | None = None,
    descending: bool = True,
) -> list[LeaderboardRow]:
    """One :class:`LeaderboardRow` per run, with bootstrap intervals.

    Args:
        runs: Loaded results folders.
        n_resamples: Bootstrap resamples per run.
        confidence: Confidence level of the intervals.
        seed: Seed of the resampling (the same for every run).
        sort_by: A metric key to sort on; ``None`` keeps the order of ``runs``.
        descending: Sort from the highest value down.

    Raises:
        KeyError: ``sort_by`` is not a Table 2 metric.
    """
    if sort_by is not None and sort_by not in METRIC_KEYS:
        raise KeyError(f"unknown metric {sort_by!r}; valid: {', '.join(METRIC_KEYS)}")
    rows = []
    for run in runs:
        intervals = bootstrap_cis(
            {key: run.values(key) for key in METRIC_KEYS},
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        missing = sum(1 for item in run.items if item.missing)
        failed = sum(1 for item in run.items if item.parse_failed)
        no_steps = sum(1 for item in run.items if item.no_steps)
        rows.append(
            LeaderboardRow(
                name=run.name,
                results_dir=str(run.path),
                metrics=intervals,
                n_items=len(run.items),
                n_scored=len(run.items) - missing - failed - no_steps,
                n_no_steps=no_steps,
                n_missing=missing,
                n_parse_failed=failed,
                n_judge_unscored=run.summary.n_judge_unscored,
                n_multi_chain=sum(1 for item in run.items if item.n_ref_chains > 1),
                n_alt_chain_won=sum(1 for item in run.items if item.ref_chain > 0),
                n_order_undefined=sum(1 for item in run.items if len(item.matches) < 2),
                n_compat_blank=sum(1 for item in run.items if item.answer_rule == BLANK_RULE),
                n_truncated=sum(1 for item in run.items if item.truncated),
                n_precedence=sum(1 for item in run.items if item.ref_precedence is not None),
                guard=run.guard,
                n_vetoed_pairs=sum(len(item.vetoed or ()) for item in run.items),
                n_vetoed_items=sum(1 for item in run.items if item.vetoed),
                pairs=summarize_pairs(
                    (item.pair, item.pair_size, item.answer_correct is True) for item in run.items
                ),
                **_verifier_fields(run),
            )
        )
    if sort_by is not None:
        rows.sort(key=lambda row: row.metrics[sort_by].estimate, reverse=descending)
    return rows


def _verifier_fields(run: RunData) -> dict[str, object]:
    """The row's verifier fields (empty without a verifier: the row's defaults)."""
    verified = run.summary.verification
    if verified is None:
        return {}
    agreement = verified.agreement
    return {
        "verifier": run.verifier,
        "verified_precision": verified.verified_precision,
        "hallucination_rate": verified.hallucination_rate,
        "n_unverified": verified.n_unverified,
        "verifier_alpha": agreement.krippendorff_alpha if agreement is not None else None,
    }


VERIFIER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("verified_precision", "Verified prec."),
    ("hallucination_rate", "Halluc. rate"),
    ("n_unverified", "Unverified"),
)
"""The verifier's columns (key, header), shown when a run was verified."""


def verified(rows: Sequence[LeaderboardRow]) -> bool:
    """Whether a run was verified (the verifier's columns are shown only then)."""
    return any(row.verifier != "none" for row in rows)


def verifier_cells(row: LeaderboardRow) -> list[str]:
    """The verifier's columns of one row (``-`` for a run without a verifier)."""
    if row.verifier == "none":
        return ["-" for _ in VERIFIER_COLUMNS]
    return [
        "-" if row.verified_precision is None else f"{row.verified_precision:.3f}",
        "-" if row.hallucination_rate is None else f"{row.hallucination_rate:.3f}",
        str(row.n_unverified),
    ]


def verifier_note(rows: Sequence[LeaderboardRow]) -> str | None:
    """The line under a leaderboard with a verified run: what the columns mean, which
    verifier each run used, and that runs with different verifiers are not comparable;
    ``None`` when no run was verified.

    Examples:
        >>> from crystalbench.statistics.intervals import Interval
        >>> ci = {k: Interval(estimate=0.5, low=0.4, high=0.6) for k in METRIC_KEYS}
        >>> rows = [LeaderboardRow(name=n, results_dir="r", metrics=ci, n_items=3, n_scored=3,
        ...     n_missing=0, n_parse_failed=0, n_judge_unscored=0, verifier=v)
        ...     for n, v in (("a", "x (unmatched)"), ("b", "y (unmatched)"))]
        >>> print(verifier_note(rows))
        Verifier (an extension, not in the paper): verified precision counts matched or supported steps, hallucination rate the steps that state what the image does not show, over predicted steps less unverified ones. a: x (unmatched); b: y (unmatched). Runs with different verifiers are NOT comparable on these columns.
    """  # noqa: E501
    if not verified(rows):
        return None
    note = (
        "Verifier (an extension, not in the paper): verified precision counts matched or "
        "supported steps, hallucination rate the steps that state what the image does not "
        "show, over predicted steps less unverified ones. "
        + "; ".join(
            f"{row.name}: {row.verifier}"
            + (
                f", judges' alpha {row.verifier_alpha:.3f}"
                if row.verifier_alpha is not None
                else ""
            )
            for row in rows
        )
        + "."
    )
    if len({row.verifier for row in rows}) > 1:
        note += " Runs with different verifiers are NOT comparable on these columns."
    return note


def _best(rows: Sequence[LeaderboardRow]) -> dict[str, set[int]]:
    """Row indices holding the best (rounded) value of each higher-is-better column."""
    best: dict[str, set[int]] = {}
    if len(rows) < 2:
        return best
    for column in TABLE2:
        if not column.higher_is_better:
            continue
        shown = [
            format_number(row.metrics[column.key].estimate, column.number_format) for row in rows
        ]
        top = max(float(s) for s in shown)
        best[column.key] = {i for i, s in enumerate(shown) if float(s) == top}
    return best


def _interval_text(interval: Interval, kind: str) -> str:
    return f"[{format_number(interval.low, kind)}, {format_number(interval.high, kind)}]"


def render_markdown(
    rows: Sequence[LeaderboardRow], *, intervals: bool = True, bold_best: bool = True
) -> str:
    """A GitHub-flavoured Markdown table (best value per column in bold).

    Examples:
        >>> from crystalbench.statistics.intervals import Interval
        >>> ci = {k: Interval(estimate=0.5, low=0.4, high=0.6) for k in METRIC_KEYS}
        >>> row = LeaderboardRow(name="m", results_dir="r", metrics=ci, n_items=3, n_scored=2,
        ...                      n_no_steps=1, n_missing=0, n_parse_failed=0, n_judge_unscored=0)
        >>> print(render_markdown([row], intervals=False), end="")
        | Model | Accuracy (%) | Match F1 | Precision | Recall | Steps | LIS | Ordered F1 | Items | No steps | Missing | Parse fail |
        |:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|
        | m | 50.00 | 0.500 | 0.500 | 0.500 | 0.50 | 0.500 | 0.500 | 3 | 1 | 0 | 0 |
    """  # noqa: E501
    best = _best(rows) if bold_best else {}
    paired = _has_pairs(rows)
    guarded = _guarded(rows)
    checked = verified(rows)
    header = [
        "Model",
        *(["Guard"] if guarded else []),
        *(column.header for column in TABLE2),
        *(header for _, header in VERIFIER_COLUMNS if checked),
        *(count.header for count in PAPER_TABLE_COUNTS),
        *(column.header for column in PAIR_METRICS if paired),
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|:--|" + "--:|" * (len(header) - 1),
    ]
    for index, row in enumerate(rows):
        cells = [_md_escape(row.name), *([row.guard] if guarded else [])]
        for column in TABLE2:
            interval = row.metrics[column.key]
            text = format_number(interval.estimate, column.number_format)
            if index in best.get(column.key, set()):
                text = f"**{text}**"
            if intervals:
                text += f" {_interval_text(interval, column.number_format)}"
            cells.append(text)
        cells += verifier_cells(row) if checked else []
        cells += _count_cells(row)
        cells += _pair_cells(row) if paired else []
        lines.append("| " + " | ".join(cells) + " |")
    if intervals and rows:
        first = next(iter(rows[0].metrics.values()))
        lines.append("")
        lines.append(
            f"Brackets: {100 * first.confidence:g}% percentile bootstrap intervals over items "
            f"({first.n_resamples or 'no'} resamples). Accuracy in percent."
        )
    if paired:
        lines.append("")
        lines.append(_pair_note(rows))
    for note in (guard_note(rows), verifier_note(rows)):
        if note is not None:
            lines.append("")
            lines.append(_md_escape(note) if note.startswith("Verifier") else note)
    return "\n".join(lines) + "\n"


def _guarded(rows: Sequence[LeaderboardRow]) -> bool:
    """Whether a run used a fact guard (a ``Guard`` column is shown only then)."""
    return any(row.guard != "none" for row in rows)


def guard_note(rows: Sequence[LeaderboardRow]) -> str | None:
    """The line under a leaderboard whose runs used a fact guard: which, and that runs with
    different guards are not comparable; ``None`` when no run used one.

    Examples:
        >>> from crystalbench.statistics.intervals import Interval
        >>> ci = {k: Interval(estimate=0.5, low=0.4, high=0.6) for k in METRIC_KEYS}
        >>> rows = [LeaderboardRow(name=n, results_dir="r", metrics=ci, n_items=3, n_scored=3,
        ...     n_missing=0, n_parse_failed=0, n_judge_unscored=0, guard=g)
        ...     for n, g in (("a", "none"), ("b", "facts"))]
        >>> print(guard_note(rows))
        Guard: the fact guard each run was scored with (an extension, not in the paper). Runs with different guards are NOT comparable (none, facts).
    """  # noqa: E501
    if not _guarded(rows):
        return None
    note = "Guard: the fact guard each run was scored with (an extension, not in the paper)."
    guards = list(dict.fromkeys(row.guard for row in rows))
    if len(guards) > 1:
        note += f" Runs with different guards are NOT comparable ({', '.join(guards)})."
    return note


def _count_cells(row: LeaderboardRow) -> list[str]:
    return [str(getattr(row, count.key)) for count in PAPER_TABLE_COUNTS]


def _has_pairs(rows: Sequence[LeaderboardRow]) -> bool:
    """Whether any run has paired items (the pair columns are shown only then)."""
    return any(row.pairs is not None for row in rows)


def _pair_cells(row: LeaderboardRow) -> list[str]:
    """The pair columns of one row (``-`` for a run without paired items)."""
    if row.pairs is None:
        return ["-" for _ in PAIR_METRICS]
    return [format_value(getattr(row.pairs, c.key), c.number_format) for c in PAIR_METRICS]


def _pair_note(rows: Sequence[LeaderboardRow]) -> str:
    """What the pair columns count, with each run's pairs (incomplete ones named)."""
    parts = []
    for row in rows:
        if row.pairs is not None:
            parts.append(
                f"{row.name}: {row.pairs.n_pairs_right}/{plural(row.pairs.n_pairs, 'pair')} right, "
                f"{row.pairs.n_pairs_incomplete} incomplete"
            )
    return (
        "Pair accuracy: both questions of a pair right (MMVP); a pair missing a question "
        "counts as not right. " + "; ".join(parts) + "."
    )


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_csv(rows: Sequence[LeaderboardRow]) -> str:
    """CSV with full-precision fractions: ``<metric>``, ``<metric>_low``, ``<metric>_high``.

    Accuracy is a fraction in [0, 1] here (not percent), so the file feeds other tools as is.

    Examples:
        >>> from crystalbench.statistics.intervals import Interval
        >>> ci = {k: Interval(estimate=0.25, low=0.0, high=0.5) for k in METRIC_KEYS}
        >>> row = LeaderboardRow(name="m", results_dir="r", metrics=ci, n_items=4, n_scored=4,
        ...                      n_no_steps=0, n_missing=0, n_parse_failed=0, n_judge_unscored=0)
        >>> render_csv([row]).splitlines()[1][:30]
        'm,0.25,0.0,0.5,0.25,0.0,0.5,0.'
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    guarded = _guarded(rows)
    header = ["model", *(["guard"] if guarded else [])]
    for key in METRIC_KEYS:
        header += [key, f"{key}_low", f"{key}_high"]
    paired = _has_pairs(rows)
    checked = verified(rows)
    verifier_keys = ["verifier", *(key for key, _ in VERIFIER_COLUMNS), "verifier_alpha"]
    header += [
        *(verifier_keys if checked else []),
        *(count.key for count in COUNTS),
        *([*(c.key for c in PAIR_METRICS), *PAIR_COUNTS] if paired else []),
        "confidence",
        "n_resamples",
        "results_dir",
    ]
    writer.writerow(header)
    for row in rows:
        values: list[object] = [row.name, *([row.guard] if guarded else [])]
        for key in METRIC_KEYS:
            interval = row.metrics[key]
            values += [repr(interval.estimate), repr(interval.low), repr(interval.high)]
        first = row.metrics[METRIC_KEYS[0]]
        pair_values: list[object] = []
        if paired:
            keys = [*(c.key for c in PAIR_METRICS), *PAIR_COUNTS]
            pair_values = ["" if row.pairs is None else getattr(row.pairs, key) for key in keys]
        if checked:
            values += [
                "" if getattr(row, key) is None else getattr(row, key) for key in verifier_keys
            ]
        values += [
            *(getattr(row, count.key) for count in COUNTS),
            *pair_values,
            first.confidence,
            first.n_resamples,
            row.results_dir,
        ]
        writer.writerow(values)
    return buffer.getvalue()


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters.

    Examples:
        >>> print(latex_escape("gpt_5 & 50% {x}"))
        gpt\_5 \& 50\% \{x\}
    """
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def render_latex(
    rows: Sequence[LeaderboardRow],
    *,
    intervals: bool = True,
    bold_best: bool = True,
    caption: str | None = None,
    label: str = "tab:crystal",
) -> str:
    """A booktabs LaTeX table (needs ``\\usepackage{booktabs}``), best values in bold.

    Intervals, when shown, are set in ``\\scriptsize`` after each value.
    """
    best = _best(rows) if bold_best else {}
    first = next(iter(rows[0].metrics.values())) if rows else None
    if caption is None:
        caption = "CRYSTAL results."
        if intervals and first is not None:
            caption = (
                f"CRYSTAL results with {100 * first.confidence:g}\\% percentile bootstrap "
                f"intervals over items ({first.n_resamples} resamples)."
            )
    paired = _has_pairs(rows)
    guarded = _guarded(rows)
    for note in (guard_note(rows), verifier_note(rows)):
        if note is not None:
            caption = f"{caption} {latex_escape(note)}"
    checked = verified(rows)
    pair_columns = PAIR_METRICS if paired else ()
    n_verifier = len(VERIFIER_COLUMNS) if checked else 0
    columns = (
        "l"
        + "l" * guarded
        + "r" * (len(TABLE2) + n_verifier + len(PAPER_TABLE_COUNTS) + len(pair_columns))
    )
    header = " & ".join(
        [
            "Model",
            *(["Guard"] if guarded else []),
            *(latex_escape(c.header) for c in TABLE2),
            *(latex_escape(header) for _, header in VERIFIER_COLUMNS if checked),
            *(latex_escape(c.header) for c in PAPER_TABLE_COUNTS),
            *(latex_escape(c.header) for c in pair_columns),
        ]
    )
    lines = [
        "% requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\begin{{tabular}}{{{columns}}}",
        "\\toprule",
        header + " \\\\",
        "\\midrule",
    ]
    for index, row in enumerate(rows):
        cells = [latex_escape(row.name), *([latex_escape(row.guard)] if guarded else [])]
        for column in TABLE2:
            interval = row.metrics[column.key]
            text = format_number(interval.estimate, column.number_format)
            if index in best.get(column.key, set()):
                text = f"\\textbf{{{text}}}"
            if intervals:
                text += f" {{\\scriptsize {_interval_text(interval, column.number_format)}}}"
            cells.append(text)
        cells += verifier_cells(row) if checked else []
        cells += _count_cells(row)
        cells += _pair_cells(row) if paired else []
        lines.append(" & ".join(cells) + " \\\\")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def render(rows: Sequence[LeaderboardRow], fmt: str, *, intervals: bool = True) -> str:
    """Render in ``md``, ``csv`` or ``tex``.

    Raises:
        crystalbench.errors.UnknownNameError: Unknown format.
    """
    if fmt == "md":
        return render_markdown(rows, intervals=intervals)
    if fmt == "csv":
        return render_csv(rows)
    if fmt == "tex":
        return render_latex(rows, intervals=intervals)
    raise UnknownNameError("leaderboard format", fmt, FORMATS)
