"""Client of ``crystal serve-rewards``: the same ``signals`` interface as the in-process scorer.

:class:`RemoteRewardScorer` plugs into every adapter (TRL, verl, EasyR1) in place of a
:class:`~crystalbench.rewards.scorer.RewardScorer`; only the encoder lives elsewhere. It
splits large batches so that every request stays within the server's limits (read once from
``/v1/health``), shortens over-long completions to one character past the server's
``max_chars`` (they fail the format check exactly as the full text would, without shipping
megabytes), and retries while the server starts, restarts or is busy (503). It sends the
server's bearer token (``token=``, else ``CRYSTALBENCH_REWARD_TOKEN``) when there is one.
Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from crystalbench.config.settings import (
    REWARD_SERVER_MAX_BODY_BYTES,
    REWARD_SERVER_MAX_ROWS,
    REWARD_SERVER_TOKEN_ENV,
)
from crystalbench.errors import CrystalbenchError, InputError
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.items import ITEM_FIELDS, completion_text
from crystalbench.rewards.types import RewardKind, RewardSignals, RewardWeights
from crystalbench.types import BenchmarkItem

__all__ = ["RemoteRewardScorer", "RewardServerError"]


class RewardServerError(CrystalbenchError):
    """The reward server could not be reached or refused a request."""


class RemoteRewardScorer:
    """Scores batches through a reward server.

    Args:
        url: Server base URL, e.g. ``http://10.0.0.5:8765``.
        weights: Weights and CPR constants used to total rewards client-side (paper
            defaults); the server's format rules, encoder and tau decide the signals.
        timeout: Seconds per request.
        max_rows_per_request: Upper bound on rows per request (the server's ``max_rows``
            also applies).
        retries: Attempts on connection errors and 503 (server loading or busy) before
            giving up.
        backoff: Seconds before the first retry (doubles each time, at most 30).
        token: The server's bearer token; ``None`` reads ``CRYSTALBENCH_REWARD_TOKEN`` (no
            token when that is unset or empty).
    """

    def __init__(
        self,
        url: str,
        *,
        weights: RewardWeights | None = None,
        timeout: float = 600.0,
        max_rows_per_request: int = 2048,
        retries: int = 8,
        backoff: float = 0.5,
        token: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.weights = weights or RewardWeights()
        self.timeout = timeout
        self.max_rows_per_request = max_rows_per_request
        self.retries = retries
        self.backoff = backoff
        self._token = token if token is not None else os.environ.get(REWARD_SERVER_TOKEN_ENV)
        self._health: dict[str, Any] | None = None

    # ------------------------------------------------------------------ transport
    def _request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        delay = self.backoff
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(
                self.url + path, data=data, method=method, headers=headers
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                message = _error_message(exc)
                if exc.code == 503 and attempt < self.retries:
                    pass  # still loading the encoder, or busy
                elif exc.code == 401:
                    raise InputError(
                        f"reward server {self.url}{path}: 401 {message}; pass token= or set "
                        f"{REWARD_SERVER_TOKEN_ENV}"
                    ) from None
                elif 400 <= exc.code < 500:
                    raise InputError(
                        f"reward server {self.url}{path}: {exc.code} {message}"
                    ) from None
                elif attempt >= self.retries:
                    raise RewardServerError(
                        f"reward server {self.url}{path}: {exc.code} {message}"
                    ) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if attempt >= self.retries:
                    raise RewardServerError(
                        f"reward server {self.url} unreachable: {exc}"
                    ) from None
            time.sleep(delay)
            delay = min(delay * 2, 30.0)
        raise RewardServerError(f"reward server {self.url}{path}: no answer")  # pragma: no cover

    def health(self, refresh: bool = False) -> dict[str, Any]:
        """The server's ``/v1/health`` body (config and limits), cached after the first call."""
        if self._health is None or refresh:
            self._health = self._request("GET", "/v1/health")
        return self._health

    # ------------------------------------------------------------------ scoring
    def signals(
        self, completions: Sequence[Any], items: Sequence[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        """One :class:`RewardSignals` per completion, computed by the server."""
        if len(completions) != len(items):
            raise ValueError(f"{len(completions)} completions for {len(items)} items")
        limits = self.health().get("limits", {})
        max_chars = int(self.health().get("config", {}).get("format_rules", {}).get("max_chars", 0))
        max_rows = min(
            self.max_rows_per_request, int(limits.get("max_rows", REWARD_SERVER_MAX_ROWS))
        )
        max_body = int(limits.get("max_body_bytes", REWARD_SERVER_MAX_BODY_BYTES)) - 1024
        rows = []
        for completion, item in zip(completions, items, strict=True):
            text = completion_text(completion)
            if text is not None and max_chars and len(text) > max_chars:
                text = text[: max_chars + 1]
            rows.append((text, _item_payload(item)))
        out: list[RewardSignals] = []
        for chunk in _chunks(rows, max_rows, max_body):
            reply = self._request(
                "POST",
                "/v1/signals",
                {"completions": [r[0] for r in chunk], "items": [r[1] for r in chunk]},
            )
            out.extend(RewardSignals.model_validate(s) for s in reply["signals"])
        return out

    def rewards(
        self,
        completions: Sequence[Any],
        items: Sequence[BenchmarkItem | None],
        kind: RewardKind = "cpr",
    ) -> list[float | None]:
        """Totals of ``kind`` with this client's weights; ``None`` for unscored rows."""
        return [
            make_breakdown(s, kind, self.weights).total for s in self.signals(completions, items)
        ]


def _item_payload(item: BenchmarkItem | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return item.model_dump(include=set(ITEM_FIELDS))


def _chunks(
    rows: list[tuple[str | None, dict[str, Any] | None]], max_rows: int, max_body: int
) -> list[list[tuple[str | None, dict[str, Any] | None]]]:
    chunks: list[list[tuple[str | None, dict[str, Any] | None]]] = []
    current: list[tuple[str | None, dict[str, Any] | None]] = []
    size = 64
    for row in rows:
        row_size = len(json.dumps(row).encode("utf-8")) + 8
        if row_size > max_body:
            raise InputError(
                f"one row needs {row_size} bytes, over the reward server's body limit "
                f"({max_body}); its reference is too large"
            )
        if current and (len(current) >= max_rows or size + row_size > max_body):
            chunks.append(current)
            current, size = [], 64
        current.append(row)
        size += row_size
    if current:
        chunks.append(current)
    return chunks


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read()).get("error", exc.reason))
    except Exception:
        return str(exc.reason)
