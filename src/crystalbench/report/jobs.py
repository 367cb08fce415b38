"""What ``crystal report``, ``crystal leaderboard`` and ``crystal compare`` do, as configs
and one library function each.

Each command's options are one config (:class:`ReportConfig`, :class:`LeaderboardConfig`,
:class:`CompareConfig`; the resampling options they share in :class:`Resampling`), loadable
from a YAML/TOML file like every config (:func:`crystalbench.config.loader.build_config`).
:func:`write_report`, :func:`write_leaderboard` and :func:`compare_results` load the
results folders the config names, compute, write, and return what the command prints.

Examples:
    >>> import tempfile
    >>> from crystalbench.data import SAMPLE_DIR, load_benchmark
    >>> from crystalbench.config.scoring import ScoreConfig
    >>> from crystalbench.data.predictions import load_predictions
    >>> from crystalbench.scoring.evaluation import evaluate
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name in ("terse-precise", "verbose-recall"):
    ...     _ = evaluate(load_benchmark("sample"),
    ...                  load_predictions(SAMPLE_DIR / "predictions" / f"{name}.jsonl"),
    ...                  ScoreConfig(encoder="hash", use_cache=False), out_dir=folder / name)
    >>> board = write_leaderboard(LeaderboardConfig(
    ...     results=[str(folder / "terse-precise"), str(folder / "verbose-recall")],
    ...     output_format="csv", resamples=20))
    >>> board.text.splitlines()[0].split(",")[:3]
    ['model', 'accuracy', 'accuracy_low']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.report.analysis import SOUND_REASONING_F1, WEAK_REASONING_F1
from crystalbench.report.html import IMAGE_MAX_SIDE
from crystalbench.report.leaderboard import FORMATS, METRIC_KEYS
from crystalbench.statistics.intervals import (
    DEFAULT_CONFIDENCE,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)

if TYPE_CHECKING:
    from crystalbench.report.comparison import RunComparison
    from crystalbench.report.loading import RunData

    OutputFormat = str
else:  # the names live in one place: report.leaderboard.FORMATS
    OutputFormat = Literal[FORMATS]

__all__ = [
    "CompareConfig",
    "LeaderboardConfig",
    "LeaderboardOutput",
    "ReportConfig",
    "ReportOutput",
    "Resampling",
    "compare_results",
    "write_leaderboard",
    "write_report",
]


class Resampling(BaseModel):
    """How every interval and paired test is resampled (shared by the three commands)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    resamples: int = Field(DEFAULT_RESAMPLES, ge=1)
    """Bootstrap resamples of every interval and paired test."""
    confidence: float = Field(DEFAULT_CONFIDENCE, ge=0.5, le=0.999)
    """Confidence level of every interval."""
    seed: int = DEFAULT_SEED
    """Seed of every resampling (the same seed gives the same numbers)."""


class _Runs(Resampling):
    results: list[str] = Field(min_length=1)
    """Results folders (``examples.jsonl`` + ``summary.json``); other paths a glob matched
    are skipped with a note."""
    names: list[str] | None = None
    """A display name per results folder, in order (default: the model, else the folder)."""


class ReportConfig(_Runs):
    """What ``crystal report`` writes: one self-contained HTML report of ``results``."""

    benchmark: str | None = None
    """The benchmark the runs were scored on: adds questions, options and thumbnails."""
    image_root: str | None = None
    """A folder item images may also lie under (besides the benchmark's own folder)."""
    baseline: str | None = None
    """The run the others are compared against: its index, name or folder (default: the
    first)."""
    title: str | None = None
    """Page title."""
    permutations: int = Field(DEFAULT_PERMUTATIONS, ge=1)
    """Random sign patterns of the permutation tests (exact when few items differ)."""
    weak_f1: float = Field(WEAK_REASONING_F1, ge=0.0, le=1.0)
    """"Right answer, weak reasoning" lists correct answers with Match F1 below this."""
    sound_f1: float = Field(SOUND_REASONING_F1, ge=0.0, le=1.0)
    """"Sound reasoning, wrong answer" lists wrong answers with Match F1 from this."""
    images: bool = True
    """Embed item images (needs ``benchmark``)."""
    image_size: int = Field(IMAGE_MAX_SIDE, ge=32, le=2048)
    """Longest side of the embedded thumbnails, in pixels."""


class LeaderboardConfig(_Runs):
    """What ``crystal leaderboard`` prints: the paper's Table 2 of ``results``."""

    output_format: OutputFormat = "md"
    """``md`` (GitHub Markdown), ``csv`` or ``tex`` (booktabs LaTeX)."""
    sort: str | None = None
    """Sort by this metric, highest first (default: the order given)."""
    intervals: bool = True
    """Show bootstrap intervals (Markdown and LaTeX)."""

    @field_validator("sort")
    @classmethod
    def _known_metric(cls, value: str | None) -> str | None:
        if value is not None and value not in METRIC_KEYS:
            raise ValueError(UnknownNameError("metric", value, METRIC_KEYS).message)
        return value


class CompareConfig(_Runs):
    """What ``crystal compare`` tests: run B (``results[1]``) against run A (``results[0]``)."""

    permutations: int = Field(DEFAULT_PERMUTATIONS, ge=1)
    """Random sign patterns when a permutation test is not exact."""
    same_items: bool = False
    """Fail when the runs hold different items, instead of comparing the items they share."""

    @model_validator(mode="after")
    def _two_runs(self) -> CompareConfig:
        if len(self.results) != 2:
            raise ValueError(f"compare takes two results folders, not {len(self.results)}")
        return self


@dataclass(frozen=True)
class ReportOutput:
    """What :func:`write_report` wrote."""

    path: Path
    """The HTML file."""
    runs: list[RunData]
    """The runs in it."""
    skipped: list[str] = field(default_factory=list)
    """A note per path that was not a results folder."""


@dataclass(frozen=True)
class LeaderboardOutput:
    """What :func:`write_leaderboard` rendered (and wrote, with an ``out`` file)."""

    text: str
    """The table, as Markdown, CSV or LaTeX."""
    skipped: list[str] = field(default_factory=list)
    """A note per path that was not a results folder."""
    runs: list[RunData] = field(default_factory=list)
    """The results folders in the table, loaded (what ``--tracker`` logs)."""


def _load(config: _Runs, *, all_needed: bool = False) -> tuple[list[RunData], list[str]]:
    from crystalbench.report.loading import load_runs, select_results

    selection = select_results(config.results, names=config.names)
    if all_needed and selection.skipped:  # say which one is not a results folder
        raise InputError("compare needs two results folders; " + "; ".join(selection.skipped))
    return load_runs(selection.paths, names=selection.names), list(selection.skipped)


def write_report(config: ReportConfig, out: str | Path) -> ReportOutput:
    """Write the HTML report of ``config.results`` to ``out`` (see
    :func:`crystalbench.report.build_report`).

    Raises:
        InputError: No results folder among ``config.results``, a broken one, a bad
            benchmark or a baseline that names no run.
    """
    from crystalbench.report.html import build_report

    runs, skipped = _load(config)
    bench: Any = None
    if config.benchmark is not None:
        from crystalbench.data import load_benchmark

        bench = load_benchmark(config.benchmark, image_root=config.image_root)
    path = build_report(
        runs,
        out,
        benchmark=bench,
        baseline=config.baseline,
        title=config.title,
        n_resamples=config.resamples,
        n_permutations=config.permutations,
        confidence=config.confidence,
        seed=config.seed,
        weak_f1=config.weak_f1,
        sound_f1=config.sound_f1,
        embed_images=config.images,
        image_max_side=config.image_size,
    )
    return ReportOutput(path=Path(path), runs=runs, skipped=skipped)


def write_leaderboard(
    config: LeaderboardConfig, out: str | Path | None = None
) -> LeaderboardOutput:
    """Table 2 of ``config.results`` with bootstrap intervals; written to ``out`` when given.

    Raises:
        InputError: No results folder among ``config.results``, or a broken one.
    """
    from crystalbench._internal.io import atomic_write_text
    from crystalbench.report.leaderboard import leaderboard_rows, render

    runs, skipped = _load(config)
    rows = leaderboard_rows(
        runs,
        n_resamples=config.resamples,
        confidence=config.confidence,
        seed=config.seed,
        sort_by=config.sort,
    )
    text = render(rows, config.output_format, intervals=config.intervals)
    if out is not None:
        atomic_write_text(out, text)
    return LeaderboardOutput(text=text, skipped=skipped, runs=runs)


def compare_results(config: CompareConfig, out: str | Path | None = None) -> RunComparison:
    """Paired bootstrap and permutation tests of ``results[1]`` against ``results[0]``;
    the full comparison is written to ``out`` as JSON when given.

    Raises:
        InputError: A path that is not a results folder, or (``same_items``) runs that
            hold different items.
    """
    from crystalbench._internal.io import atomic_write_json
    from crystalbench.report.comparison import compare_runs

    runs, _ = _load(config, all_needed=True)
    comparison = compare_runs(
        runs[0],
        runs[1],
        n_resamples=config.resamples,
        n_permutations=config.permutations,
        confidence=config.confidence,
        seed=config.seed,
        require_same_items=config.same_items,
    )
    if out is not None:
        atomic_write_json(out, comparison.model_dump(mode="json"))
    return comparison
