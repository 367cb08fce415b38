"""How the tools run: limits, timeouts, ports, batch sizes, server, review and construction
settings, in one place.

None of these changes a CRYSTAL number (those are :mod:`crystalbench.defaults`). Each is the
default of a config field or a command-line option, or a limit the loaders enforce; the
README and the docs name the environment variables that override some of them.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

SCHEMA_VERSION: Final = "1"
"""Version of the results-file schema (``examples.jsonl``, ``summary.json``)."""

# --- inference ---------------------------------------------------------------------------------
INFER_TEMPERATURE: Final = 0.1
"""Sampling temperature of ``crystal infer`` (the authors' inference script uses 0.1)."""

INFER_MAX_TOKENS: Final = 4096
"""Completion token budget of ``crystal infer`` (the authors' script uses 4096)."""

INFER_CONCURRENCY: Final = 32
"""Requests in flight per endpoint."""

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

EncoderBackend = Literal["auto", "torch", "onnx", "onnx-int8"]
"""How sentence-transformers models run: automatic, PyTorch, ONNX Runtime fp32 or int8."""

ENCODER_BACKENDS: Final[tuple[str, ...]] = get_args(EncoderBackend)
"""The valid encoder back ends, read off :data:`EncoderBackend`."""

ENCODER_BACKEND: Final[EncoderBackend] = "auto"
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

SCORE_CHUNK_ITEMS: Final = 8192
"""Items scored per chunk; bounds memory on very large runs. 8,192 holds the whole CRYSTAL
benchmark (6,372 items) in one chunk, so a re-score reads its ~115,000 cached step vectors
(177 MB at 384 dimensions, 355 MB at 768) in one pass over the cache file; it was 4,096."""

CACHE_DIR_ENV: Final = "CRYSTALBENCH_CACHE_DIR"
"""Environment variable that moves the on-disk caches."""

# --- the model hub -------------------------------------------------------------------------------
# (crystalbench._internal.hub_probe: is the Hugging Face hub reachable before a model or dataset
# load.)
HUB_ENDPOINT: Final = "https://huggingface.co"
"""The hub's address when ``HF_ENDPOINT`` is not set (the variable ``huggingface_hub`` reads)."""

HUB_PROBE_TIMEOUT_S: Final = 3.0
"""Seconds the reachability probe waits for the hub to answer before a model or dataset that is
not on this machine is loaded from it. Without the probe, an unreachable hub costs minutes of
``huggingface_hub`` retries before the error (82 s for the default encoder, measured in
``benchmarks/RESULTS.md``); with it the error comes in about this long, suggesting a local copy.
Environment variable: ``CRYSTALBENCH_HUB_PROBE_TIMEOUT`` (``0`` turns the probe off)."""

HUB_PROBE_TIMEOUT_ENV: Final = "CRYSTALBENCH_HUB_PROBE_TIMEOUT"
"""Environment variable overriding :data:`HUB_PROBE_TIMEOUT_S`."""

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

# --- OpenAI-compatible clients -----------------------------------------------------------------
# (crystalbench._internal.openai_client builds every client: inference, the judges, reference
# construction.)
OPENAI_API_KEY_ENV: Final = "OPENAI_API_KEY"
"""The environment variable every OpenAI-compatible client reads its key from, unless a
config names another (``api_key_env``). It may be unset: local servers need no key."""

OPENAI_BASE_URL_ENV: Final = "OPENAI_BASE_URL"
"""The base URL ``crystal infer`` uses when it is given none (else the OpenAI API)."""

OPENAI_NO_KEY: Final = "EMPTY"
"""The key sent when none is set (vLLM, SGLang and other local servers ignore it; the
``openai`` client refuses to start without one)."""

JUDGE_TIMEOUT: Final = 60.0
"""Seconds one LLM-judge request may take (answer judge and judge matcher)."""

JUDGE_MAX_RETRIES: Final = 2
"""Retries the ``openai`` client makes for one judge request on connection errors, 408,
409, 429 and 5xx (with its own backoff)."""

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

REWARD_SERVER_HOST: Final = "127.0.0.1"
"""Interface the reward server binds (``--host``): loopback, this machine only."""

REWARD_SERVER_PORT: Final = 8765
"""TCP port of the reward server (``--port``; 0 picks a free one)."""

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
"""Requests decoded and scored at once (scoring slots); later ones wait their turn. A request
takes its slot only once its whole body has arrived, so a client still sending (or not
sending) its body holds none; ``REWARD_SERVER_MAX_BUFFERED_BODY_BYTES`` bounds the bodies being
read."""

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

REWARD_SERVER_MAX_BUFFERED_BODY_BYTES: Final = (
    REWARD_SERVER_MAX_ACTIVE_REQUESTS * REWARD_SERVER_MAX_BODY_BYTES
)
"""Bytes of request bodies read at once over all connections (2 GiB): each body reserves its
``Content-Length`` before it is read, and one that does not fit waits its turn (holding no
scoring slot). Bodies are read before a request takes a scoring slot, so this bounds the
memory they take: as many bodies of the largest size as there are scoring slots."""

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

# --- request bodies (both servers: crystalbench.serving) -----------------------------------------
SERVING_MIN_BODY_BYTES_PER_S: Final = 16 * 1024
"""Slowest a request body may arrive, on average, once its grace period is over: a body must have
delivered at least ``rate x (seconds since it was first awaited - grace)`` bytes whenever the
server waits for more, or the request gets 408 and its connection is closed. Both servers (the
reward server and the review app) enforce it, so a client that announces a body and sends
nothing, or trickles it, holds its connection for seconds, not for the whole body timeout.
16 KiB/s is far below any network a trainer or an annotator uses."""

SERVING_BODY_GRACE_S: Final = 5.0
"""Seconds a request body may take before the minimum rate applies (its first bytes, a slow
start)."""

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

REFERENCES_GENERATORS: Final = (
    "Qwen/Qwen2.5-VL-72B-Instruct",
    "OpenGVLab/InternVL3-78B",
    "google/gemma-3-27b-it",
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
)
"""The paper's four generators (served model names; the paper's "InternVL3-76B" does not
exist, InternVL3 comes in 78B). Each is replaceable with ``--generator NAME=URL``."""

REFERENCES_VALIDATOR: Final = "allenai/Molmo-72B-0924"
"""The held-out fifth model that checks each consensus chain (``--validator NAME=URL``)."""

REFERENCES_ENCODER: Final = "minilm-offline"
"""Encoder of the candidate steps for clustering (``--encoder``); ``REFERENCES_THETA`` was
measured with it (``benchmarks/bench_consensus.py --theta-sweep``)."""

REFERENCES_THETA: Final = 0.78
"""Consensus linking threshold: steps of different chains are linked at cosine >= this
(``--theta``). Chosen by the sweep recorded in ``benchmarks/results/references.md``."""

REFERENCES_MIN_SUPPORT: Final = 1
"""Clusters with members from fewer chains than this are dropped (1: keep all, as the paper)."""

REFERENCES_MIN_CHAINS: Final = 2
"""Valid candidate chains an item needs in a round before a consensus is built; with fewer
the round fails and the item goes to the next round with fresh seeds."""

REFERENCES_MAX_ROUNDS: Final = 3
"""Rounds (generation, consensus, validation) an item gets before it is reported rejected
(``--max-rounds``)."""

REFERENCES_ALTERNATIVES: Final = 0
"""Candidate chains of the accepted round kept as alternative references
(``reference_chains``, ``--alternatives``): 0 keeps only the consensus, as the paper."""

REFERENCES_PRECEDENCE: Final = False
"""Infer a ``reference_precedence`` from the candidate chains (``--precedence``): steps the
chains state in either order become interchangeable. Off: the chain's own order, as the paper
(:mod:`crystalbench.references.precedence`)."""

REFERENCES_PRECEDENCE_SHARE: Final = 1.0
"""Share of the chains holding both of two consensus steps that must state them in the
consensus order for an edge ``a -> b`` (``--precedence-share``, in ``(0.5, 1]``). 1.0: all of
them, so a single chain stating them the other way round makes the two interchangeable."""

REFERENCES_PRECEDENCE_MIN_CHAINS: Final = 1
"""Chains that must hold both of two consensus steps before an edge between them is inferred
(``--precedence-min-chains``). With fewer the two stay interchangeable unless other edges imply
their order (two steps that never meet in one chain never get an edge of their own). 1: one
chain's order is enough when no chain contradicts it."""

REFERENCES_SAMPLES: Final = 1
"""Candidate chains each generator writes per item and round (``--samples``)."""

REFERENCES_SEED: Final = 0
"""Base seed every request seed is derived from, with item, model, round, sample, attempt."""

REFERENCES_OUTPUT_ATTEMPTS: Final = 3
"""Requests per (item, model, round, sample) slot when the output is unusable (garbage,
empty, truncated, wrong schema) or the request failed; each attempt has its own seed."""

REFERENCES_TEMPERATURE: Final = 0.7
"""Generators' sampling temperature (seeds only make chains differ at temperature > 0)."""

REFERENCES_TOP_P: Final = 0.95
"""Generators' nucleus mass."""

REFERENCES_MAX_TOKENS: Final = 2048
"""Generators' completion budget."""

REFERENCES_VALIDATOR_TEMPERATURE: Final = 0.0
"""Validator's temperature (greedy: a verdict should not depend on luck)."""

REFERENCES_VALIDATOR_MAX_TOKENS: Final = 1024
"""Validator's completion budget."""

REFERENCES_TIE_TOLERANCE: Final = 1e-6
"""Medoid scores (mean cosine to the other members) this close to the best are ties,
broken by the lowest canonical index (float32 embeddings give cosines good to ~1e-7)."""

REFERENCES_CONSENSUS_CHUNK: Final = 1024
"""Items whose steps are embedded and clustered together (bounds the embeddings in memory:
about 1024 x 48 x 384 float32, 75 MB; each chunk is journaled before the next)."""

REFERENCES_CONCURRENCY: Final = 8
"""Requests in flight per base URL of each generator and the validator."""

REFERENCES_REPORT_MAX_ITEMS: Final = 200
"""Items shown in the construction report's per-item view (rejected and regenerated first)."""

REFERENCES_RAY_BATCH_SIZE: Final = 16
"""Rows per Ray Data batch of the ``ray`` engine (small batches lose less on a failure)."""

REFERENCES_RAY_CONCURRENCY: Final = 2
"""Ray actors per stage (generation, consensus) of the ``ray`` engine."""

REFERENCES_DEMO_PORT: Final = 8431
"""Port of ``crystal references demo-server`` (the scripted OpenAI-compatible server on
loopback; ``crystal demo --construction`` starts its own on a free port)."""

# --- review app -----------------------------------------------------------------------------------
# (``crystal review serve``: annotators per task, holds, sessions, rate limits.)

REVIEW_DB: Final = "review.sqlite"
"""Database of ``crystal review`` when ``--db`` is not given: a SQLite file in the working
folder (``--db postgresql://user@host/name`` for a team server)."""

REVIEW_DB_ENV: Final = "CRYSTALBENCH_REVIEW_DB"
"""Environment variable naming the review database when ``--db`` is not given."""

REVIEW_HOST: Final = "127.0.0.1"
"""Address ``crystal review serve`` binds by default: loopback only; any other address
prints a warning (put the app behind TLS before exposing it)."""

REVIEW_PORT: Final = 8420
"""Port ``crystal review serve`` listens on by default."""

REVIEW_ANNOTATORS_PER_CHAIN: Final = 1
"""Annotators who review each reference chain (``crystal review import --annotators``)."""

REVIEW_ANNOTATORS_PER_PAIR: Final = 2
"""Annotators who label each step pair (``crystal review import --annotators``)."""

REVIEW_HOLD_MINUTES: Final = 30.0
"""How long a task handed to an annotator stays reserved for them; an abandoned task goes
back to the queue after this (``crystal review serve --hold-minutes``)."""

REVIEW_GOLD_EVERY: Final = 10
"""One task in this many served to an annotator is a gold task (one with a known answer)
while unseen gold tasks of that kind remain (``--gold-every``; 0 turns gold tasks off)."""

REVIEW_GOLD_MIN_ACCURACY: Final = 0.7
"""Share of gold tasks an annotator must get right; the admin page flags anyone below."""

REVIEW_GOLD_MIN_SEEN: Final = 5
"""Gold tasks an annotator must have answered before their gold accuracy is judged."""

REVIEW_FAST_LABEL_MS: Final = 500
"""A median time per label under this many milliseconds flags an annotator as too fast to
have read the task."""

REVIEW_ADJUDICATION_THRESHOLD: Final = 1.0
"""A finished task whose pairwise agreement is below this goes to the adjudication queue
(1.0: any disagreement)."""

REVIEW_SESSION_HOURS: Final = 12.0
"""Lifetime of a login session; the annotator logs in again after it."""

REVIEW_SESSION_CACHE_S: Final = 30.0
"""How long the server remembers a looked-up login session before asking the database again
(a logout takes effect at once; a role changed with ``add-user --update`` within this)."""

REVIEW_SESSION_COOKIE: Final = "crystal_review_session"
"""Name of the session cookie (HttpOnly, SameSite=Lax; Secure with ``--secure-cookies``)."""

REVIEW_LOGIN_COOKIE: Final = "crystal_review_login"
"""Name of the short-lived cookie holding the login form's CSRF token (double submit)."""

REVIEW_LOGIN_MAX_FAILURES: Final = 5
"""Wrong passwords for one user name, or from one address, within
``REVIEW_LOGIN_WINDOW_S`` before further attempts are refused (429)."""

REVIEW_LOGIN_WINDOW_S: Final = 900.0
"""Window in which failed logins are counted, in seconds."""

REVIEW_LOGIN_LOCKOUT_S: Final = 60.0
"""First lockout after too many failed logins, in seconds; it doubles with each further
failure, up to ``REVIEW_LOGIN_LOCKOUT_MAX_S``."""

REVIEW_LOGIN_LOCKOUT_MAX_S: Final = 3600.0
"""Longest lockout after failed logins, in seconds."""

REVIEW_PASSWORD_MIN_CHARS: Final = 8
"""Shortest password ``crystal review add-user`` accepts."""

REVIEW_MAX_BODY_BYTES: Final = 64 * 1024
"""Largest request body the review app reads (a label form is well under 8 KiB); 413 beyond."""

REVIEW_MAX_HEADER_BYTES: Final = 16 * 1024
"""Largest request line plus headers; 431 beyond."""

REVIEW_MAX_FORM_FIELDS: Final = 1000
"""Most fields in one submitted form (a chain of 300 steps with flags fits); 400 beyond."""

REVIEW_MAX_NOTE_CHARS: Final = 4000
"""Longest note on a review or an adjudication; 400 beyond."""

REVIEW_MAX_NAME_CHARS: Final = 64
"""Longest user name."""

REVIEW_IDLE_TIMEOUT_S: Final = 15.0
"""A browser connection idle this long between requests is closed (keep-alive timeout)."""

REVIEW_HEADER_TIMEOUT_S: Final = 10.0
"""Seconds from a request's first byte to the end of its headers; the connection is closed
beyond (slow clients cannot hold connections open)."""

REVIEW_SQLITE_SYNCHRONOUS: Final = "NORMAL"
"""SQLite's ``synchronous`` setting for the review database (WAL mode): ``NORMAL`` survives a
crash or kill of the app with every committed label and never corrupts the file; only a power
cut or kernel crash may lose the last commits. ``crystal review serve --durable`` uses
``FULL`` (an fsync per label, a few milliseconds each on a busy disk)."""

REVIEW_BACKLOG: Final = 1024
"""Listen backlog of ``crystal review serve``."""

REVIEW_AUDIT_PAGE: Final = 200
"""Audit entries shown per page on the admin's audit page."""

VALIDATION_PAIRS_PER_BAND: Final = 20
"""Step pairs drawn per cosine band by ``crystal validate sample-pairs`` (``--per-band``);
five bands of 20 give the paper's 100 pairs."""

VALIDATION_SEED: Final = 0
"""Seed of the pair sampling and of every agreement bootstrap (``crystal validate agreement``
and the review app's admin page, :mod:`crystalbench.statistics.agreement`)."""

VALIDATION_CONFIDENCE: Final = 0.95
"""Two-sided confidence level of the agreement intervals (Wilson and bootstrap), in
``crystal validate agreement`` and on the review app's admin page."""

VALIDATION_BOOTSTRAP_RESAMPLES: Final = 2000
"""Bootstrap resamples of every kappa and alpha interval and of the kappa-maximising
threshold (validation and the review app's admin page alike)."""

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
"""Thresholds of ``crystal validate ablate`` (the paper's five; ``--thresholds``)."""

TRAIN_SWEEP_GRID: Final = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
"""Values of CPR's answer weight a_w that ``crystal train-sweep`` trains (``--grid``)."""

TRAIN_SWEEP_METRIC: Final = "harmonic"
"""Validation metric that picks the best a_w of ``crystal train-sweep`` (``--metric``)."""

STEP_JUDGE_MAX_TOKENS: Final = 256
"""Reply length limit of one judge-matcher request."""

LMMS_EVAL_TASK_NAME: Final = "crystal"
"""Name of the lmms-eval task (``--tasks crystal``), of its folder, and the prefix of its
metrics (``crystal_match_f1``...)."""

LMMS_EVAL_ENCODER_ENV: Final = "CRYSTALBENCH_LMMS_EVAL_ENCODER"
"""Environment variable that overrides the encoder the installed lmms-eval task scores with."""
