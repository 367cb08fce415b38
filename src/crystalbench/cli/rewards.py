"""``crystal serve-rewards``: the CRYSTAL reward server shared by trainer ranks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer

from crystalbench.cli.common import PORT_RANGE, err_console, handle_errors
from crystalbench.defaults import ENCODER, GUARD, GUARDS, TAU, CompatMode
from crystalbench.settings import (
    REWARD_SERVER_IDLE_TIMEOUT_S,
    REWARD_SERVER_MAX_BODY_BYTES,
    REWARD_SERVER_MAX_CONNECTIONS,
    REWARD_SERVER_MAX_ROWS,
    REWARD_SERVER_MAX_WAIT_MS,
    REWARD_SERVER_TOKEN_ENV,
)


@handle_errors
def serve_rewards(
    encoder: Annotated[
        str,
        typer.Option(help="Sentence encoder: hub name, folder, minilm-offline or hash"),
    ] = ENCODER,
    host: Annotated[
        str, typer.Option(help="Interface to bind (0.0.0.0 to serve other machines)")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one)", **PORT_RANGE)] = 8765,
    threshold: Annotated[
        float, typer.Option("--threshold", "--tau", help="Step-matching cosine threshold tau")
    ] = TAU,
    compat: Annotated[
        str, typer.Option(help="Matching rules: none (paper) or crystal-metrics-0.2")
    ] = "none",
    guard: Annotated[
        str,
        typer.Option(
            help="Fact guard of step matching: none (paper), facts, or facts-strict (a step "
            "that contradicts the reference step it restates earns nothing; for training)"
        ),
    ] = GUARD,
    kind: Annotated[
        str, typer.Option(help="Reward kind of POST /v1/rewards when a request names none")
    ] = "cpr",
    device: Annotated[
        str | None, typer.Option(help="Encoder device (cuda:0, cpu...); automatic when unset")
    ] = None,
    dtype: Annotated[str, typer.Option(help="float32 (evaluation numbers) or float16")] = (
        "float32"
    ),
    batch_size: Annotated[
        int | None, typer.Option(help="Sentences per forward pass (64 on CPU, 256 on GPU)")
    ] = None,
    allow_think: Annotated[
        bool,
        typer.Option(
            "--allow-think/--no-think", help="Tolerate one leading <think>...</think> block"
        ),
    ] = False,
    max_chars: Annotated[int, typer.Option(help="Longest completion parsed (characters)")] = (
        16_000
    ),
    max_steps: Annotated[int, typer.Option(help="Most reasoning steps accepted")] = 64,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body (MiB); 413 above")] = (
        REWARD_SERVER_MAX_BODY_BYTES / (1024 * 1024)
    ),
    max_rows: Annotated[int, typer.Option(help="Most completions per request; 413 above")] = (
        REWARD_SERVER_MAX_ROWS
    ),
    max_wait_ms: Annotated[
        float, typer.Option(help="Wait for concurrent requests to join one encoder pass")
    ] = REWARD_SERVER_MAX_WAIT_MS,
    max_connections: Annotated[
        int, typer.Option(help="Open connections beyond which new requests get 503 (retried)")
    ] = REWARD_SERVER_MAX_CONNECTIONS,
    idle_timeout: Annotated[
        float, typer.Option(help="Close a connection silent for this many seconds")
    ] = REWARD_SERVER_IDLE_TIMEOUT_S,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=REWARD_SERVER_TOKEN_ENV,
            show_envvar=True,
            help="Bearer token every request must carry (prefer the environment variable: "
            "a command line is visible to other users)",
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option(help="Folder of the on-disk reference-embedding cache")
    ] = None,
    use_cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Keep reference embeddings on disk")
    ] = True,
    warm: Annotated[
        str | None,
        typer.Option(help="Benchmark spec whose reference steps are embedded at start-up"),
    ] = None,
    verbose: Annotated[bool, typer.Option(help="Log every request")] = False,
) -> None:
    """Serve CRYSTAL rewards over HTTP for several trainer ranks (docs/rewards.md).

    Ranks point at it with RemoteRewardScorer(url) (TRL) or CRYSTAL_REWARD_SERVER=url
    (verl, EasyR1). Concurrent batches are coalesced into one encoder pass. Listens on
    loopback unless --host says otherwise; give a --token when it does.
    """
    from crystalbench.compat.matching import match_rules
    from crystalbench.paths import default_cache_dir
    from crystalbench.rewards.encoder_loading import load_reward_encoder
    from crystalbench.rewards.scorer import RewardScorer
    from crystalbench.rewards.server import RewardServer, ServerLimits, configure_logging
    from crystalbench.rewards.types import REWARD_KINDS, FormatRules

    if kind not in REWARD_KINDS:
        from crystalbench.errors import UnknownNameError

        raise UnknownNameError("reward kind", kind, REWARD_KINDS)
    match_rules(compat)  # unknown modes fail now, not in the worker
    if guard not in GUARDS:
        from crystalbench.errors import UnknownNameError

        raise UnknownNameError("guard", guard, GUARDS)
    rules = FormatRules(allow_think=allow_think, max_chars=max_chars, max_steps=max_steps)
    limits = ServerLimits(
        max_body_bytes=int(max_body_mb * 1024 * 1024),
        max_rows=max_rows,
        max_wait_ms=max_wait_ms,
        max_connections=max_connections,
        idle_timeout_s=idle_timeout,
    )
    store_path = None
    if use_cache and encoder != "hash":
        store_path = (cache_dir or default_cache_dir()) / "embeddings.sqlite"

    def build() -> RewardScorer:
        scorer = RewardScorer(
            load_reward_encoder(encoder, device=device, dtype=dtype, batch_size=batch_size),
            kind=kind,  # type: ignore[arg-type]
            tau=threshold,
            compat=None if compat == "none" else cast(CompatMode, compat),
            format_rules=rules,
            store=store_path,
            guard=guard,
        )
        if warm:
            from crystalbench.data.loading import load_benchmark

            count = scorer.warm(load_benchmark(warm).items)
            err_console.print(f"embedded {count} reference steps of {warm}")
        return scorer

    configure_logging(verbose)
    try:
        server = RewardServer(
            build, host=host, port=port, limits=limits, token=token or None, verbose=verbose
        )
    except OSError as exc:
        from crystalbench.errors import InputError

        raise InputError(f"cannot listen on {host}:{port}: {exc}") from None

    def ready(srv: Any) -> None:
        config = srv.scorer.config_record()
        typer.echo(
            f"crystal serve-rewards: listening on {srv.url} "
            f"(encoder {config['encoder_identity']}, tau {config['tau']}"
            + (f", guard {config['guard']}" if config["guard"] != "none" else "")
            + (", bearer token required)" if token else ")")
        )

    err_console.print(f"loading encoder {encoder} ...")
    server.serve_forever(on_ready=ready)
