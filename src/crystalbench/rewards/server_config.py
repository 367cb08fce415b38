"""What ``crystal serve-rewards`` serves, as one config: :class:`RewardServerConfig`.

Its fields come from a YAML/JSON/TOML file (``--config``), the environment variables it
documents (``CRYSTALBENCH_REWARD_TOKEN``, ``CRYSTALBENCH_CACHE_DIR``) and flags, merged by
:func:`crystalbench.config.loader.build_config`. :func:`build_reward_server` turns it into
a bound :class:`~crystalbench.rewards.server.RewardServer` (the encoder loads on the
server's worker thread); :func:`serve_rewards` also serves until interrupted.

Example YAML::

    encoder: minilm-offline
    threshold: 0.35
    guard: facts-strict    # copied wording with wrong facts earns no step credit
    kind: cpr
    format_rules: {allow_think: true}
    limits: {max_rows: 2048, idle_timeout_s: 10}
    host: 0.0.0.0          # other machines: give a token (CRYSTALBENCH_REWARD_TOKEN)
    port: 8765

Examples:
    >>> config = RewardServerConfig(encoder="hash", use_cache=False, port=0)
    >>> with build_reward_server(config) as server:
    ...     server.url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from crystalbench.config.settings import (
    CACHE_DIR_ENV,
    ENCODER_BACKEND,
    REWARD_SERVER_HOST,
    REWARD_SERVER_PORT,
    REWARD_SERVER_TOKEN_ENV,
    EncoderBackend,
)
from crystalbench.defaults import ENCODER, GUARD, TAU, CompatMode, GuardKind
from crystalbench.rewards.server import ServerLimits
from crystalbench.rewards.types import FormatRules, RewardKind
from crystalbench.serving.connections import Port

if TYPE_CHECKING:
    from crystalbench.rewards.scorer import RewardScorer
    from crystalbench.rewards.server import RewardServer

__all__ = ["RewardServerConfig", "build_reward_server", "serve_rewards"]


class RewardServerConfig(BaseModel):
    """Everything ``crystal serve-rewards`` decides: the scorer, where it listens, its bounds.

    Examples:
        >>> RewardServerConfig().host, RewardServerConfig().port, RewardServerConfig().kind
        ('127.0.0.1', 8765, 'cpr')
        >>> RewardServerConfig(port=99999)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pydantic_core._pydantic_core.ValidationError: 1 validation error for RewardServerConfig
        port
          Value error, 99999 is not a TCP port: give 1-65535, or 0 for a free one ...
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    environment_variables: ClassVar[dict[str, str]] = {
        "token": REWARD_SERVER_TOKEN_ENV,
        "cache_dir": CACHE_DIR_ENV,
    }
    """Fields the config loader reads from these environment variables when no flag sets
    them (the token belongs there: a command line is visible to other users)."""

    # --- the scorer ---------------------------------------------------------------------------
    encoder: str = ENCODER
    """Sentence encoder: a sentence-transformers name or folder, ``minilm-offline`` or ``hash``."""
    device: str | None = None
    """Encoder device (``cuda:0``, ``cpu``...); automatic when ``None``."""
    backend: EncoderBackend = ENCODER_BACKEND
    """How the encoder runs: ``auto``, ``torch``, ``onnx`` or ``onnx-int8``."""
    dtype: Literal["float32", "float16"] = "float32"
    """Encoder precision: ``float32`` gives the evaluation's numbers."""
    batch_size: int | None = Field(None, ge=1)
    """Sentences per forward pass (``None``: 64 on a CPU, 256 on a GPU)."""
    use_cache: bool = True
    """Keep reference embeddings in the on-disk cache (never with the ``hash`` encoder)."""
    cache_dir: str | None = None
    """Embedding cache folder (default ``$CRYSTALBENCH_CACHE_DIR``, ``~/.cache/crystalbench``)."""
    threshold: float = Field(TAU, ge=-1.0, le=1.0)
    """tau: minimum cosine for a step pair to match."""
    compat: CompatMode = "none"
    """Step rules: ``none`` (the paper) or ``crystal-metrics-0.2``."""
    guard: GuardKind = GUARD
    """Fact guard of step matching: ``none`` (the paper), ``facts``, or ``facts-strict`` (a
    step that contradicts the reference step it restates earns nothing: the one to train
    with; ``docs/rewards.md``)."""
    kind: RewardKind = "cpr"
    """Reward kind of ``POST /v1/rewards`` when a request names none."""
    format_rules: FormatRules = Field(default_factory=FormatRules)
    """What the format check tolerates (``allow_think``) and its caps (``max_chars``,
    ``max_steps``...)."""
    warm: str | None = None
    """A benchmark whose reference steps are embedded at start-up (any benchmark spec)."""

    # --- where it listens and its bounds ------------------------------------------------------
    host: str = REWARD_SERVER_HOST
    """Interface to bind (``0.0.0.0``: every interface; give a ``token`` then)."""
    port: Port = REWARD_SERVER_PORT
    """TCP port (0 picks a free one)."""
    token: str | None = Field(None, repr=False)
    """Bearer token every request must carry (``None``: none)."""
    limits: ServerLimits = Field(default_factory=ServerLimits)
    """Request, connection and batching bounds."""
    verbose: bool = False
    """Log every request."""

    def store_path(self) -> Path | None:
        """The embedding cache file, or ``None`` without a cache.

        Examples:
            >>> RewardServerConfig(encoder="hash").store_path() is None
            True
            >>> RewardServerConfig(cache_dir="/tmp/c").store_path()
            PosixPath('/tmp/c/embeddings.sqlite')
        """
        if not self.use_cache or self.encoder == "hash":
            return None
        from crystalbench._internal.paths import default_cache_dir

        folder = Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir()
        return folder / "embeddings.sqlite"

    def build_scorer(self, on_note: Callable[[str], None] | None = None) -> RewardScorer:
        """Load the encoder and build the scorer (then embed ``warm``'s reference steps).

        Args:
            on_note: Called with one line per start-up step worth telling.
        """
        from crystalbench.rewards.encoder_loading import load_reward_encoder
        from crystalbench.rewards.scorer import RewardScorer

        encoder = load_reward_encoder(
            self.encoder,
            device=self.device,
            dtype=self.dtype,
            batch_size=self.batch_size,
            backend=self.backend,
        )
        scorer = RewardScorer(
            encoder,
            kind=self.kind,
            tau=self.threshold,
            compat=None if self.compat == "none" else self.compat,
            format_rules=self.format_rules,
            store=self.store_path(),
            guard=self.guard,
        )
        if self.warm:
            from crystalbench.data.loading import load_benchmark

            from_store = scorer.stats.reference_store_hits
            encoded = scorer.warm(load_benchmark(self.warm).items)
            cached = scorer.stats.reference_store_hits - from_store
            if on_note is not None:
                on_note(warm_note(self.warm, encoded, cached))
        return scorer


def warm_note(benchmark: str, encoded: int, cached: int) -> str:
    """What ``--warm`` did, in one line: reference steps encoded and found in the cache.

    Examples:
        >>> warm_note("sample", 0, 327)
        'warmed 327 reference steps of sample: 0 encoded, 327 from the cache'
        >>> warm_note("sample", 1, 0)
        'warmed 1 reference step of sample: 1 encoded, 0 from the cache'
    """
    total = encoded + cached
    return (
        f"warmed {total:,} reference step{'s' * (total != 1)} of {benchmark}: "
        f"{encoded:,} encoded, {cached:,} from the cache"
    )


def build_reward_server(
    config: RewardServerConfig, on_note: Callable[[str], None] | None = None
) -> RewardServer:
    """A reward server bound to ``config.host:config.port``; its scorer is built on the
    server's worker thread once it starts (health checks answer 503 until then).

    Args:
        config: The server's config.
        on_note: Called with one line per start-up step worth telling.

    Raises:
        InputError: The address cannot be bound (in use, not an interface of this machine).
    """
    from crystalbench.errors import InputError
    from crystalbench.rewards.server import RewardServer

    try:
        return RewardServer(
            lambda: config.build_scorer(on_note),
            host=config.host,
            port=config.port,
            limits=config.limits,
            token=config.token or None,
            verbose=config.verbose,
        )
    except OSError as exc:
        raise InputError(f"cannot listen on {config.host}:{config.port}: {exc}") from None


def serve_rewards(
    config: RewardServerConfig,
    *,
    on_ready: Callable[[RewardServer], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> None:
    """Serve rewards as ``config`` says until interrupted (Ctrl-C, SIGTERM).

    Args:
        config: The server's config.
        on_ready: Called with the server once its scorer is loaded.
        on_note: Called with one line per start-up step worth telling (the encoder loading,
            the references warmed).

    Raises:
        InputError: The address cannot be bound, or the scorer cannot be built (unknown
            encoder, bad ``warm`` benchmark).
    """
    from crystalbench.rewards.server import configure_logging

    configure_logging(config.verbose)
    server = build_reward_server(config, on_note)
    if on_note is not None:
        on_note(f"loading encoder {config.encoder} ...")
    server.serve_forever(on_ready=on_ready)
