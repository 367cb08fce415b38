"""Reports on results folders: the diagnostic HTML page, leaderboards and run comparisons.

The per-item numbers come from ``examples.jsonl`` and ``summary.json`` as scoring wrote
them (:mod:`~crystalbench.report.loading`); what each metric is, from
:mod:`crystalbench.metrics`; the statistics from :mod:`crystalbench.statistics.intervals`, through
:mod:`~crystalbench.report.analysis` for the report's breakdowns and plots. The renderers
compute nothing new.

- :func:`build_report` writes one self-contained HTML file (``crystal report``);
- :func:`leaderboard_rows` + :func:`render_markdown` / :func:`render_csv` /
  :func:`render_latex` give the paper's Table 2 with bootstrap intervals
  (``crystal leaderboard``);
- :func:`compare_runs` tests two runs on the same items (``crystal compare``).
"""

from __future__ import annotations

from crystalbench.report.comparison import RunComparison, compare_runs, config_differences
from crystalbench.report.html import build_report, thumbnail
from crystalbench.report.leaderboard import (
    FORMATS,
    METRIC_KEYS,
    TABLE2,
    LeaderboardRow,
    leaderboard_rows,
    render,
    render_csv,
    render_latex,
    render_markdown,
)
from crystalbench.report.loading import (
    Alignment,
    ReportWarning,
    RunData,
    Selection,
    align_runs,
    load_run,
    load_runs,
    select_results,
)

__all__ = [
    "FORMATS",
    "METRIC_KEYS",
    "TABLE2",
    "Alignment",
    "LeaderboardRow",
    "ReportWarning",
    "RunComparison",
    "RunData",
    "Selection",
    "align_runs",
    "build_report",
    "compare_runs",
    "config_differences",
    "leaderboard_rows",
    "load_run",
    "load_runs",
    "render",
    "render_csv",
    "render_latex",
    "render_markdown",
    "select_results",
    "thumbnail",
]
