"""The per-item scoring step: one item, its prediction and its reference chains -> one record.

Every door that scores steps (``evaluate``, ``evaluate_many``, ``crystal score``, the reward
scorer, the lmms-eval task, the ablation) scores an item through :class:`ItemScorer`, in
four stages, each one public method:

1. :meth:`ItemScorer.prepare`: the item's prediction parsed, the predicted steps to score
   (blank ones dropped and counted, or kept in compat mode) and the reference chains the
   item is scored against (:class:`ReferenceChain`; every chain, or the primary one alone in
   compat mode), as one :class:`PreparedItem`;
2. :meth:`ItemScorer.candidates`, per chain: the similarity matrix of the candidate pairs.
   The cosines under the match rules come first, then each **candidate filter**
   (:class:`CandidateFilter`) in turn removes pairs (sets them to NaN, which never passes
   the threshold): the judge matcher keeps only the pairs an LLM names; the fact guard
   (:class:`~crystalbench.scoring.filters.guard.candidates.GuardFilter`) removes pairs whose steps
   state
   incompatible facts, so greedy matching moves on to the next best pair, and everything
   downstream follows. A filter reads the item (its options) and notes what it removed in
   a :class:`ChainContext`; the winning chain's notes go into the record (``vetoed``);
3. :meth:`ItemScorer.chain_fields`, per chain: greedy one-to-one matching, precision,
   recall, F1, the order of the matches (LIS, Kendall) and Ordered F1. The order is read
   against the chain's **precedence** (:attr:`ReferenceChain.precedence`): the item's
   ``reference_precedence`` for the primary chain (a partial-order reference), else the
   chain's own order of its steps; it is the one thing this stage reads besides the matrix;
4. :meth:`ItemScorer.score`: the best chain (Match F1, then Ordered F1, then the lower
   index) and the item's :class:`~crystalbench.types.ItemResult`.

Encoding is not done here: :meth:`ItemScorer.score` reads the step vectors from a
:class:`StepVectors` that the engine (:mod:`crystalbench.scoring.engine`) filled for a whole
chunk of items at once. Nothing here does I/O.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from crystalbench.defaults import ALPHA, ORDER_METRIC
from crystalbench.parsing import answer_phrases_of, parse_prediction
from crystalbench.precedence import Precedence
from crystalbench.scoring.compat import (
    given_steps,
    keeps_blank_steps,
    match_rules,
    reads_precedence,
    scores_alternative_chains,
)
from crystalbench.scoring.difficulty import DifficultyConfig, assign_difficulty
from crystalbench.scoring.matching import (
    MatchRules,
    chain_fields,
    check_order_metric,
    cosine_matrix,
    greedy_pairs,
)
from crystalbench.scoring.mmvp import item_pair
from crystalbench.types import (
    AnswerVerdict,
    BenchmarkItem,
    ItemResult,
    ParsedResponse,
    Prediction,
    Veto,
)

__all__ = [
    "CandidateFilter",
    "ChainContext",
    "ItemScorer",
    "PreparedItem",
    "ReferenceChain",
    "StepVectors",
    "is_empty_prediction",
    "non_blank",
    "reference_chain",
]


class ReferenceChain(NamedTuple):
    """One reference chain as it is scored."""

    steps: list[str]
    """Its non-blank steps, in order (indices in the matches point here)."""
    n_blank: int
    """Blank steps dropped from it (counted in ``n_blank_dropped``)."""
    precedence: Precedence | None = None
    """The partial order its order metrics are read against, on :attr:`steps` (``None``: the
    chain's own order, the paper); see :func:`reference_chain`."""


def reference_chain(
    steps: Sequence[str], precedence: Sequence[tuple[int, int]] | None = None
) -> ReferenceChain:
    """A reference chain as it is scored: blank steps dropped, the precedence among the
    steps kept.

    The precedence holds among the kept steps with the orders that passed through a
    dropped one (:meth:`~crystalbench.precedence.Precedence.restricted_to`).

    Args:
        steps: The chain's steps as the item gives them.
        precedence: ``[a, b]`` pairs into ``steps`` (``None``: the chain's own order).

    Raises:
        PrecedenceError: ``precedence`` does not fit ``steps`` (items are checked when
            loaded, so only a caller's own pairs can fail here).

    Examples:
        >>> chain = reference_chain(["Read May.", " ", "Read June.", "Subtract."],
        ...                         [(0, 3), (2, 3)])
        >>> chain.steps, chain.n_blank, chain.precedence.reduction()
        (['Read May.', 'Read June.', 'Subtract.'], 1, [(0, 2), (1, 2)])
        >>> reference_chain(["a", "b"]).precedence is None
        True
    """
    kept, blank = non_blank(steps)
    if precedence is None:
        return ReferenceChain(kept, blank)
    order = Precedence.from_pairs(precedence, len(steps))
    if blank:
        order = order.restricted_to([k for k, step in enumerate(steps) if step.strip()])
    return ReferenceChain(kept, blank, order)


@dataclass(frozen=True)
class PreparedItem:
    """One item ready to be scored: what :meth:`ItemScorer.prepare` gives."""

    item: BenchmarkItem
    parsed: ParsedResponse | None
    """The parsed prediction; ``None`` when it is missing."""
    pred_steps: list[str]
    """The predicted steps to score (indices in the matches point here)."""
    pred_blank: int
    """Blank predicted steps dropped (counted in ``n_blank_dropped``)."""
    chains: tuple[ReferenceChain, ...]
    """The reference chains the item is scored against, the primary first."""
    extractor: str | None = None
    """The answer extractor asked about this item (``model:<name>``;
    :mod:`crystalbench.scoring.extract`); ``None``: not asked."""
    extraction_error: str | None = None
    """Why the extractor's call gave no answer; ``None``: no failed call."""

    def texts(self) -> list[str]:
        """Every step text to embed for this item: each chain's steps, then the predicted."""
        texts = [step for chain in self.chains for step in chain.steps]
        texts.extend(self.pred_steps)
        return texts


@dataclass
class ChainContext:
    """What a candidate filter may read about the chain it filters, and where it notes what
    it removed (one per item and reference chain; the winning chain's notes are recorded).

    Examples:
        >>> context = ChainContext(None, MatchRules())
        >>> context.options, context.vetoes
        ([], None)
        >>> context.add_vetoes([])
        >>> context.vetoes
        []
    """

    item: BenchmarkItem | None
    """The item scored (``None`` where a caller scores bare steps)."""
    rules: MatchRules
    """The match rules the chain is matched with (threshold, strictness, tie order)."""
    vetoes: list[Veto] | None = None
    """Pairs a filter kept from matching, and why (``None``: no filter records vetoes; an
    empty list: one ran and vetoed nothing). Recorded as the item's ``vetoed``."""
    matches: list[tuple[int, int, float]] | None = None
    """The greedy matches of the matrix the last filter returned, when that filter walked it
    (the fact guard does): the scorer then does not walk it again. Reset before each filter."""

    @property
    def options(self) -> list[str]:
        """The item's answer options (empty without an item)."""
        return list(self.item.options) if self.item is not None else []

    def add_vetoes(self, vetoes: Sequence[Veto]) -> None:
        """Note vetoes (an empty sequence still says that a guard ran)."""
        if self.vetoes is None:
            self.vetoes = []
        self.vetoes.extend(vetoes)


@runtime_checkable
class CandidateFilter(Protocol):
    """Removes pairs from an item's candidates (see the module docstring, stage 2).

    ``name`` keys the seconds :meth:`prepare` and :meth:`candidates` take in the run's
    timings; :meth:`record` goes into the config record of ``summary.json``. A filter has
    state of its own (what it prepared, what it counted), so the engine gives every
    prediction set its own filters.
    The judge matcher (:class:`~crystalbench.judges.step_judge.JudgeMatcher`) and the fact
    guard (:class:`~crystalbench.scoring.filters.guard.candidates.GuardFilter`) are two.
    """

    name: str

    def prepare(self, batch: Sequence[PreparedItem]) -> None:
        """Called once per chunk of items, before any of them is scored (a filter that asks
        a service asks here, for the whole chunk at once)."""
        ...

    def candidates(
        self,
        similarity: np.ndarray,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        context: ChainContext,
    ) -> np.ndarray:
        """``similarity`` (predicted x reference steps) with every pair that is not a
        candidate set to NaN (``context``: the item, the match rules, and where to note
        vetoes)."""
        ...

    def finish(self) -> None:
        """Called once the set's items are all scored (a filter that remembers what it
        decided writes it here)."""
        ...

    def record(self) -> dict[str, Any]:
        """Entries for the run's config record: what decided the filter's choices, and its
        counters (e.g. ``{"matcher_identity": {...}}``)."""
        ...


class StepVectors:
    """The step vectors of a chunk of items: one matrix, and each text's row.

    Examples:
        >>> vectors = StepVectors(["a", "b"], np.eye(2, dtype=np.float32))
        >>> vectors.of(["b", "b"]).tolist()
        [[0.0, 1.0], [0.0, 1.0]]
    """

    __slots__ = ("matrix", "rows")

    def __init__(self, texts: Sequence[str], matrix: np.ndarray) -> None:
        self.matrix = matrix
        """``(len(texts), dim)`` float32 rows (``(0, 0)`` without texts)."""
        self.rows = {text: row for row, text in enumerate(texts)}
        """Text -> its row."""

    def of(self, texts: Sequence[str]) -> np.ndarray:
        """The rows of ``texts``, in order, as one ``(len(texts), dim)`` matrix."""
        rows = self.rows
        return self.matrix[[rows[text] for text in texts]]


def non_blank(steps: Sequence[str]) -> tuple[list[str], int]:
    """The steps that are not blank, and how many were.

    Examples:
        >>> non_blank(["Read the axis.", "  ", ""])
        (['Read the axis.'], 2)
    """
    kept = [s for s in steps if s.strip()]
    return kept, len(steps) - len(kept)


def is_empty_prediction(pred: Prediction) -> bool:
    """A record that carries nothing at all (e.g. an inference error): scored as missing.

    Examples:
        >>> is_empty_prediction(Prediction(id="1"))
        True
        >>> is_empty_prediction(Prediction(id="1", answer="B"))
        False
    """
    return pred.reasoning_steps is None and pred.answer is None and pred.response is None


class ItemScorer:
    """Scores one item at a time, configured once (rules, alpha, order, compat, filters).

    Args:
        rules: The match rules (threshold, tie order, products); the paper's when ``None``.
        alpha: Order weight of Ordered Match F1.
        order_metric: ``"lis"`` or ``"kendall"``: the order score inside Ordered F1.
        difficulty: Cut-offs of the derived difficulty tiers.
        compat: ``"none"`` (paper) or ``"crystal-metrics-0.2"``: whether blank predicted
            steps are kept, whether alternative chains are scored and whether an item's
            ``reference_precedence`` is read (the match rules of the mode come in
            ``rules``: :func:`crystalbench.scoring.compat.match_rules`).
        filters: Candidate filters applied in order (stage 2 of the module docstring).

    Raises:
        UnknownNameError: Unknown ``order_metric`` or ``compat``.

    Examples:
        >>> from crystalbench.types import AnswerVerdict
        >>> item = BenchmarkItem(id="1", source="s", question="?", answer="4",
        ...                      reference_steps=["Add 2 and 2.", "It is 4."])
        >>> scorer = ItemScorer()
        >>> ready = scorer.prepare(item, Prediction(id="1", reasoning_steps=["Add 2 and 2."]))
        >>> vectors = StepVectors(ready.texts(), np.eye(3, dtype=np.float32))
        >>> verdict = AnswerVerdict(correct=None, rule="missing", answer_type="numeric")
        >>> result = scorer.score(ready, vectors, verdict)
        >>> result.matches, result.recall
        ([(0, 0, 1.0)], 0.5)
    """

    def __init__(
        self,
        rules: MatchRules | None = None,
        *,
        alpha: float = ALPHA,
        order_metric: str = ORDER_METRIC,
        difficulty: DifficultyConfig | None = None,
        compat: str = "none",
        filters: Sequence[CandidateFilter] = (),
    ) -> None:
        check_order_metric(order_metric)
        match_rules(compat)  # an unknown mode fails here, when the scorer is built
        self.rules = rules or MatchRules()
        self.alpha = alpha
        self.order_metric = order_metric
        self.difficulty = difficulty or DifficultyConfig()
        self.keep_blank_steps = keeps_blank_steps(compat)
        self.alternative_chains = scores_alternative_chains(compat)
        self.reads_precedence = reads_precedence(compat)
        self.filters = tuple(filters)
        self.filter_seconds: dict[str, float] = {}
        """Seconds each filter spent in :meth:`candidates`, by its name."""

    # ------------------------------------------------------------------ stage 1
    @property
    def chain_key(self) -> tuple[bool, bool]:
        """What :meth:`reference_chains` depends on besides the item: scorers with the same
        key get the same chains (the engine prepares them once for all of them)."""
        return self.alternative_chains, self.reads_precedence

    def reference_chains(self, item: BenchmarkItem) -> tuple[ReferenceChain, ...]:
        """The chains ``item`` is scored against: all of them, or the primary in compat
        mode; blank steps dropped and counted. The primary carries the item's
        ``reference_precedence`` (not in compat mode); alternative chains keep their own
        order."""
        precedence = item.reference_precedence if self.reads_precedence else None
        primary = reference_chain(item.reference_steps, precedence)
        if not self.alternative_chains or not item.reference_chains:
            return (primary,)
        return (primary, *(reference_chain(steps) for steps in item.reference_chains))

    def predicted_steps(
        self, pred: Prediction | None, parsed: ParsedResponse | None
    ) -> tuple[list[str], int]:
        """The predicted steps to score and how many blank ones were dropped.

        Paper mode scores the parsed steps; blank ones are dropped and counted (the parser
        already dropped those of a structured prediction, counted here from the record).
        Compat mode scores a structured prediction's steps exactly as given, blank ones
        included, as crystal-metrics 0.2.0 does (:mod:`crystalbench.scoring.compat`).
        """
        if parsed is None:
            return [], 0
        given = pred.reasoning_steps if pred is not None else None
        if given is not None and self.keep_blank_steps:
            return given_steps(given), 0
        steps, blank = non_blank(parsed.steps)
        if given:
            blank += sum(1 for s in given if not s.strip())
        return steps, blank

    def prepare(
        self,
        item: BenchmarkItem,
        pred: Prediction | None,
        chains: tuple[ReferenceChain, ...] | None = None,
    ) -> PreparedItem:
        """Parse ``item``'s prediction (``None``: missing) and pick what is scored.

        ``chains`` is :meth:`reference_chains` of ``item`` when the caller has it already
        (one item scored for several prediction sets).
        """
        parsed = None
        if pred is not None and not is_empty_prediction(pred):
            parsed = parse_prediction(pred, answer_phrases=answer_phrases_of(item.metadata))
        steps, blank = self.predicted_steps(pred, parsed)
        if chains is None:
            chains = self.reference_chains(item)
        return PreparedItem(item, parsed, steps, blank, chains)

    # ------------------------------------------------------------------ stages 2 and 3
    def candidates(
        self,
        pred: np.ndarray,
        ref: np.ndarray,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        context: ChainContext | None = None,
    ) -> np.ndarray:
        """The similarity matrix of the candidate pairs of one chain: the cosines under the
        match rules, then every candidate filter in order (NaN: not a candidate).

        Args:
            pred: ``(m, d)`` unit vectors of the predicted steps.
            ref: ``(n, d)`` unit vectors of the reference steps.
            pred_steps: The ``m`` predicted steps (for filters that read the text).
            ref_steps: The ``n`` reference steps.
            context: The item and where filters note their vetoes (default: no item, the
                notes dropped).
        """
        similarity = cosine_matrix(pred, ref, self.rules)
        if not self.filters:
            return similarity
        if context is None:
            context = ChainContext(None, self.rules)
        seconds = self.filter_seconds
        for candidate_filter in self.filters:
            began = time.perf_counter()
            context.matches = None  # what an earlier filter walked is not this matrix
            similarity = candidate_filter.candidates(similarity, pred_steps, ref_steps, context)
            name = candidate_filter.name
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - began
        return similarity

    def matches(self, similarity: np.ndarray) -> list[tuple[int, int, float]]:
        """Greedy one-to-one matching of the candidates: ``(pred, ref, cosine)`` in
        acceptance order (:func:`crystalbench.scoring.matching.greedy_pairs`)."""
        return greedy_pairs(similarity, self.rules)

    def chain_fields(
        self,
        similarity: np.ndarray,
        chain: ReferenceChain,
        matches: list[tuple[int, int, float]] | None = None,
    ) -> dict[str, Any]:
        """Every step metric of one chain from its candidates
        (:func:`crystalbench.scoring.matching.chain_fields`: matches, P/R/F1, LIS, Kendall, Ordered
        F1). ``chain`` is where the order of its steps comes from (its precedence);
        ``matches``, the greedy matches of ``similarity`` when a filter walked it already
        (:attr:`ChainContext.matches`)."""
        return chain_fields(
            similarity,
            rules=self.rules,
            alpha=self.alpha,
            order_metric=self.order_metric,
            precedence=chain.precedence,
            matches=matches,
        )

    # ------------------------------------------------------------------ stage 4
    def score(
        self, prepared: PreparedItem, vectors: StepVectors, verdict: AnswerVerdict
    ) -> ItemResult:
        """The item's record: every chain scored, the best kept (Match F1, then Ordered F1;
        a tie keeps the lower index), with the answer's verdict."""
        pred_steps = prepared.pred_steps
        pred = vectors.of(pred_steps)
        best: tuple[int, ReferenceChain, dict[str, Any], ChainContext] | None = None
        for index, chain in enumerate(prepared.chains):
            # Stage 2 (candidate filters) then stage 3 (matching and order, against the
            # chain's order). What a filter decided about this item (a guard's vetoes) is
            # the winning chain's, recorded with its fields.
            context = ChainContext(prepared.item, self.rules)
            similarity = self.candidates(
                pred, vectors.of(chain.steps), pred_steps, chain.steps, context
            )
            fields = self.chain_fields(similarity, chain, context.matches)
            if best is None or (fields["f1"], fields["ordered_f1"]) > (
                best[2]["f1"],
                best[2]["ordered_f1"],
            ):
                best = (index, chain, fields, context)
        assert best is not None  # there is always the primary chain
        index, chain, fields, context = best
        item, parsed = prepared.item, prepared.parsed
        pair, pair_size = item_pair(item)
        return ItemResult(
            id=item.id,
            source=item.source,
            difficulty=assign_difficulty(item, self.difficulty),
            missing=parsed is None,
            parse_status="missing" if parsed is None else parsed.status,
            n_blank_dropped=chain.n_blank + prepared.pred_blank,
            **fields,
            answer_correct=verdict.correct,
            answer_rule=verdict.rule,
            answer_type=verdict.answer_type,
            pred_answer=parsed.answer if parsed is not None else None,
            gold_answer=item.answer,
            pred_steps=pred_steps,
            ref_steps=chain.steps,
            ref_chain=index,
            n_ref_chains=len(prepared.chains),
            ref_precedence=chain.precedence.reduction() if chain.precedence else None,
            pair=pair,
            pair_size=pair_size,
            vetoed=context.vetoes,
            answer_extraction=parsed.extraction if parsed is not None else None,
            truncated=parsed.truncated if parsed is not None else False,
            answer_extractor=prepared.extractor,
            extraction_error=prepared.extraction_error,
        )
