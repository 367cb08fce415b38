"""``crystal serve-rewards``: the CRYSTAL reward server shared by trainer ranks.

The options are :data:`SERVE_REWARDS_FLAGS` (one
:class:`~crystalbench.rewards.server_config.RewardServerConfig`); the work is
:func:`crystalbench.rewards.server_config.serve_rewards`; this module prints.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crystalbench.cli.binding import configured
from crystalbench.cli.common import Quiet, console, err_console, handle_errors
from crystalbench.cli.flags import Flag, cache_flags, device_flag
from crystalbench.cli.score_options import ENCODER_FLAG, THRESHOLD_FLAG
from crystalbench.config.settings import REWARD_SERVER_MAX_BODY_BYTES, REWARD_SERVER_TOKEN_ENV
from crystalbench.rewards.server_config import RewardServerConfig

_MIB = 1024 * 1024

SERVE_REWARDS_FLAGS: tuple[Flag, ...] = (
    replace(ENCODER_FLAG, field="encoder"),
    device_flag(),
    Flag(
        "backend",
        ("--backend",),
        "How the encoder runs: auto (ONNX Runtime on a CPU, torch on a GPU), torch, onnx "
        "or onnx-int8",
    ),
    Flag("dtype", ("--dtype",), "Encoder precision: float32 (the evaluation's numbers) or float16"),
    Flag(
        "batch_size",
        ("--batch-size",),
        "Sentences per forward pass of the encoder",
        kind=int,
        metavar="N",
        default_text="64 on a CPU, 256 on a GPU",
    ),
    *cache_flags(what="embedding cache (reference steps)"),
    replace(THRESHOLD_FLAG, field="threshold"),
    Flag("compat", ("--compat",), "Step rules: none (the paper) or crystal-metrics-0.2"),
    Flag(
        "guard",
        ("--guard",),
        "Fact guard of step matching: none (the paper), facts, or facts-strict (a step that "
        "contradicts the reference step it restates earns nothing; for training)",
    ),
    Flag(
        "kind",
        ("--reward-kind",),
        "Reward kind of POST /v1/rewards when a request names none",
        param_name="reward_kind",
    ),
    Flag(
        "format_rules.allow_think",
        ("--allow-think/--no-think",),
        "Tolerate one leading <think>...</think> block",
        kind=bool,
    ),
    Flag(
        "format_rules.max_chars",
        ("--max-chars",),
        "Longest completion parsed, in characters",
        kind=int,
    ),
    Flag("format_rules.max_steps", ("--max-steps",), "Most reasoning steps accepted", kind=int),
    Flag(
        "warm",
        ("--warm",),
        "A benchmark whose reference steps are embedded at start-up",
        metavar="BENCHMARK",
        default_text="none",
    ),
    Flag(
        "host",
        ("--host",),
        "Interface to bind (0.0.0.0: other machines too; give a --token then)",
        metavar="HOST",
    ),
    Flag("port", ("--port",), "TCP port (0 picks a free one)", kind=int),
    Flag(
        "token",
        ("--token",),
        f"Bearer token every request must carry (prefer ${REWARD_SERVER_TOKEN_ENV}: a "
        "command line is visible to other users)",
        metavar="TOKEN",
        default_text=f"${REWARD_SERVER_TOKEN_ENV}, else none",
    ),
    Flag(
        "limits.max_body_bytes",
        ("--max-body-mb",),
        "Largest request body in MiB; 413 above",
        kind=float,
        metavar="MIB",
        convert=lambda mib: int(mib * _MIB),
        default_text=f"{REWARD_SERVER_MAX_BODY_BYTES / _MIB:g}",
        param_name="max_body_mb",
    ),
    Flag("limits.max_rows", ("--max-rows",), "Most completions per request; 413 above", kind=int),
    Flag(
        "limits.max_wait_ms",
        ("--max-wait-ms",),
        "Wait this long for concurrent requests to join one encoder pass",
        kind=float,
        metavar="MS",
    ),
    Flag(
        "limits.max_connections",
        ("--max-connections",),
        "Open connections beyond which new requests get 503 (clients retry)",
        kind=int,
    ),
    Flag(
        "limits.idle_timeout_s",
        ("--idle-timeout",),
        "Close a connection silent for this many seconds",
        kind=float,
        metavar="SECONDS",
        param_name="idle_timeout",
    ),
    Flag("verbose", ("--verbose/--no-verbose",), "Log every request", kind=bool),
)
"""The options of ``crystal serve-rewards`` (one :class:`RewardServerConfig` field each)."""


@handle_errors
@configured(RewardServerConfig, SERVE_REWARDS_FLAGS)
def serve_rewards(config: RewardServerConfig, quiet: Quiet = False) -> None:
    """Serve CRYSTAL rewards over HTTP for several trainer ranks (docs/rewards.md).

    Ranks point at it with RemoteRewardScorer(url) (TRL) or CRYSTAL_REWARD_SERVER=url
    (verl, EasyR1). Concurrent batches are coalesced into one encoder pass. Listens on
    loopback unless --host says otherwise; give a --token when it does.
    """
    from crystalbench.rewards.server_config import serve_rewards as serve

    def ready(server: Any) -> None:
        record = server.scorer.config_record()
        console.print(
            f"crystal serve-rewards: listening on {server.url} "
            f"(encoder {record['encoder_identity']}, tau {record['tau']}"
            + (f", guard {record['guard']}" if record["guard"] != "none" else "")
            + (", bearer token required)" if config.token else ")"),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )

    serve(config, on_ready=ready, on_note=lambda line: err_console.print(line, highlight=False))
