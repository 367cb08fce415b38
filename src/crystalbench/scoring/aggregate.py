"""Macro-averages of per-item records: overall, by source and by difficulty tier.

Which per-item field each summary metric averages comes from
:data:`crystalbench.metrics.METRICS`; the counts (scored, no steps, missing, parse failed,
judge unscored) follow the metric contract: nothing is dropped from a denominator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from crystalbench.answers.compat import BLANK_RULE as COMPAT_BLANK_RULE
from crystalbench.metrics import METRICS, missing_warning
from crystalbench.scoring.mmvp import PairedAnswer, summarize_pairs
from crystalbench.types import (
    DIFFICULTIES,
    VETO_REASONS,
    ItemResult,
    MetricSummary,
    RunSummary,
)

__all__ = ["MAX_PROBLEMS_KEPT", "Aggregator"]

MAX_PROBLEMS_KEPT = 100
"""Messages of skipped records kept in ``summary.json`` (all of them are counted)."""


class Aggregator:
    """Accumulates the per-item numbers needed for macro-averages, overall and per group.

    Which per-item field each summary metric averages comes from
    :data:`crystalbench.metrics.METRICS`. Items split into scored (at least one step), no
    steps (parsed, but no step: an answer alone), missing and parse failed.
    """

    def __init__(self) -> None:
        self._fields = [(m.key, m.item_field, m.average == "share_true") for m in METRICS]
        self.values: dict[str, list[float]] = {m.key: [] for m in METRICS}
        self.missing: list[bool] = []
        self.parse_failed: list[bool] = []
        self.no_steps: list[bool] = []
        self.unscored: list[bool] = []
        self.multi_chain: list[bool] = []
        self.alt_chain_won: list[bool] = []
        self.order_undefined: list[bool] = []
        self.compat_blank: list[bool] = []
        self.precedence: list[bool] = []
        self.truncated: list[bool] = []
        self.vetoed: list[int] = []
        self.guarded = False
        """Whether a guard ran (some record carries ``vetoed``)."""
        self.vetoed_by_reason: Counter[str] = Counter()
        self.paired: list[PairedAnswer] = []
        self.source: list[str] = []
        self.difficulty: list[str] = []

    def add(self, result: ItemResult) -> None:
        """Record one item's numbers."""
        for key, name, share_true in self._fields:
            value = getattr(result, name)
            self.values[key].append((value is True) if share_true else value)
        self.missing.append(result.missing)
        self.parse_failed.append(result.parse_failed)
        self.no_steps.append(result.no_steps)
        self.unscored.append(result.answer_correct is None and not result.missing)
        self.multi_chain.append(result.n_ref_chains > 1)
        self.alt_chain_won.append(result.ref_chain > 0)
        self.order_undefined.append(len(result.matches) < 2)
        self.compat_blank.append(result.answer_rule == COMPAT_BLANK_RULE)
        self.precedence.append(result.ref_precedence is not None)
        self.truncated.append(result.truncated)
        vetoed = result.vetoed
        self.vetoed.append(len(vetoed) if vetoed else 0)
        if vetoed is not None:
            self.guarded = True
            self.vetoed_by_reason.update(veto.reason for veto in vetoed)
        if result.pair is not None:
            self.paired.append((result.pair, result.pair_size, result.answer_correct is True))
        self.source.append(result.source)
        self.difficulty.append(result.difficulty)

    def _summary(self, mask: np.ndarray) -> MetricSummary:
        n = int(mask.sum())

        def count(flags: list[bool]) -> int:
            return int(np.asarray(flags, dtype=bool)[mask].sum())

        vetoed = np.asarray(self.vetoed, dtype=np.int64)[mask]

        means = {
            key: float(np.asarray(values, dtype=np.float64)[mask].mean()) if n else 0.0
            for key, values in self.values.items()
        }
        missing, failed, no_steps = (
            count(self.missing),
            count(self.parse_failed),
            count(self.no_steps),
        )
        return MetricSummary(
            n_items=n,
            n_scored=n - missing - failed - no_steps,
            n_no_steps=no_steps,
            n_missing=missing,
            n_parse_failed=failed,
            n_judge_unscored=count(self.unscored),
            **means,
            n_multi_chain=count(self.multi_chain),
            n_alt_chain_won=count(self.alt_chain_won),
            n_order_undefined=count(self.order_undefined),
            n_compat_blank=count(self.compat_blank),
            n_precedence=count(self.precedence),
            n_vetoed_pairs=int(vetoed.sum()),
            n_vetoed_items=int((vetoed > 0).sum()),
            n_truncated=count(self.truncated),
        )

    def summary(
        self,
        config: dict[str, Any],
        *,
        problems: Sequence[str] = (),
        n_unknown_ids: int = 0,
        n_invalid_records: int = 0,
    ) -> RunSummary:
        """The run summary: overall, by source (sorted) and by difficulty (easy -> hard)."""
        everything = np.ones(len(self.source), dtype=bool)
        overall = self._summary(everything)
        sources = np.asarray(self.source)
        tiers = np.asarray(self.difficulty)
        by_source = {s: self._summary(sources == s) for s in sorted(set(self.source))}
        by_difficulty = {
            d: self._summary(tiers == d) for d in DIFFICULTIES if d in set(self.difficulty)
        }
        warning = missing_warning(overall.n_missing, overall.n_items)
        return RunSummary(
            **overall.model_dump(),
            by_source=by_source,
            by_difficulty=by_difficulty,
            pairs=summarize_pairs(self.paired),
            n_unknown_ids=n_unknown_ids,
            n_invalid_records=n_invalid_records,
            vetoed_by_reason=(
                {reason: self.vetoed_by_reason[reason] for reason in VETO_REASONS}
                if self.guarded
                else {}
            ),
            problems=list(problems)[:MAX_PROBLEMS_KEPT],
            warnings=[warning] if warning else [],
            config=config,
        )
