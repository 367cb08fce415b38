"""The judge layer: one chat client for every model call that judges, with one reply cache.

The answer judge, the judge matcher, the answer extractor and the step verifier all send
their requests through :class:`JudgeClient`:

- **one client factory**: the official ``openai`` client from
  :func:`crystalbench._internal.openai_client.openai_client` (the key rule lives there);
- **one persistent cache** (:class:`ReplyCache`, a SQLite file): a reply is keyed by the model
  name the endpoint serves, the base URL, the prompt file's SHA-256, the image's SHA-256 and
  every request parameter (messages, temperature, token limit, response format, guided
  choice, logprobs), so a re-run sends no request. Only replies that arrived are stored;
  a failed request is asked again next time;
- **provenance**: the model id the server says it served (``response.model``) and its
  ``system_fingerprint`` are kept with each reply and counted in :class:`ClientStats`;
- **retries with backoff**: the ``openai`` client's own (exponential back-off with jitter,
  honouring ``Retry-After``, on connection errors, 408, 409, 429 and 5xx; ``max_retries``),
  and **a concurrency limit** (``concurrency`` requests in flight, for all threads);
- **structured outputs**: a JSON schema (``response_format``) or a guided choice
  (vLLM's ``guided_choice``, sent in ``extra_body``);
- **reasoning models**: :func:`final_text` strips think blocks with
  :func:`crystalbench.parsing.thinking.split_thinking` before a verdict is read, and counts
  replies whose block never closed (:attr:`ClientStats.unclosed_think`);
- **tokens and cost**: prompt and completion tokens per run (the server's ``usage``), an
  estimate before a run (:meth:`JudgeClient.estimate`: about four characters a token, the
  token limit for the reply) priced with a :class:`~crystalbench.config.judging.Price`
  table; ``dry_run`` records the requests it would send and sends none.

Nothing is contacted until the first request; :meth:`JudgeClient.complete` never raises.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crystalbench._internal.openai_client import openai_client
from crystalbench._internal.sqlite import enable_wal
from crystalbench.parsing.thinking import split_thinking

__all__ = [
    "ChatReply",
    "ChatRequest",
    "ClientStats",
    "JudgeClient",
    "ReplyCache",
    "estimate_tokens",
    "final_text",
    "image_data_url",
    "thinks_first",
]

CHARS_PER_TOKEN = 4
"""The rough size of a token in characters, for estimates made before a run."""
IMAGE_TOKENS = 800
"""Tokens counted for one image in an estimate (a 672-pixel image in most VLMs' tilings)."""


@dataclass(frozen=True, eq=False)
class ChatRequest:
    """One chat request, as cached: everything that shapes the reply.

    ``messages`` may carry an image as an ``image_url`` part (a data URL); ``image_sha256``
    names it in the cache key, and ``prompt_sha256`` names the prompt file.
    """

    messages: tuple[Mapping[str, Any], ...]
    """Chat messages (``role``, ``content``: a string or a list of parts)."""
    prompt_sha256: str
    """SHA-256 of the prompt file the messages were rendered from."""
    image_sha256: str | None = None
    """SHA-256 of the image's bytes, when the messages carry one."""
    max_tokens: int = 256
    """Reply length limit."""
    temperature: float = 0.0
    """Sampling temperature (0: deterministic where the server allows)."""
    json_schema: Mapping[str, Any] | None = None
    """A JSON schema the reply must follow (``response_format`` of type ``json_schema``)."""
    guided_choice: tuple[str, ...] | None = None
    """The only replies allowed (vLLM's ``guided_choice``, in ``extra_body``)."""
    logprobs: int | None = None
    """Ask for the first tokens' log-probabilities, with this many alternatives."""

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-256 of everything in the request: equal requests have equal fingerprints."""
        blob = json.dumps(
            [list(self.messages), self.prompt_sha256, self.image_sha256, self.parameters()],
            ensure_ascii=False,
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatRequest) and other.fingerprint == self.fingerprint

    def parameters(self) -> dict[str, Any]:
        """The request's parameters besides the messages (for the key and a dry run)."""
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "json_schema": dict(self.json_schema) if self.json_schema is not None else None,
            "guided_choice": list(self.guided_choice) if self.guided_choice else None,
            "logprobs": self.logprobs,
        }

    def text(self) -> str:
        """The text parts of every message (for estimates and dry runs)."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(p.get("text", "")) for p in content if p.get("type") == "text")
        return "\n".join(parts)

    def n_images(self) -> int:
        """Image parts in the messages."""
        return sum(
            1
            for message in self.messages
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "image_url"
        )


class ChatReply:
    """What came back for one request (or why nothing did)."""

    __slots__ = (
        "cached",
        "completion_tokens",
        "content",
        "error",
        "prompt_tokens",
        "served_model",
        "system_fingerprint",
        "top_logprobs",
    )

    def __init__(
        self,
        content: str | None = None,
        *,
        top_logprobs: list[tuple[str, float]] | None = None,
        served_model: str | None = None,
        system_fingerprint: str | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cached: bool = False,
        error: str | None = None,
    ) -> None:
        self.content = content
        """The reply text as received (think blocks included)."""
        self.top_logprobs = top_logprobs
        """The first token's alternatives ``[(token, logprob)]``; ``None``: none given."""
        self.served_model = served_model
        """``response.model``: the model id the server says it served."""
        self.system_fingerprint = system_fingerprint
        """``response.system_fingerprint`` (``None`` where the server sends none)."""
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.cached = cached
        """Served from the cache (no request sent)."""
        self.error = error
        """Why there is no reply (connection, timeout, HTTP status, dry run); else ``None``."""

    def as_json(self) -> str:
        """The cached form (a successful reply only)."""
        return json.dumps(
            {
                "content": self.content,
                "top_logprobs": self.top_logprobs,
                "served_model": self.served_model,
                "system_fingerprint": self.system_fingerprint,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> ChatReply:
        """A reply read back from the cache (``cached=True``)."""
        data = json.loads(text)
        logprobs = data.get("top_logprobs")
        return cls(
            data.get("content"),
            top_logprobs=[(str(t), float(lp)) for t, lp in logprobs] if logprobs else None,
            served_model=data.get("served_model"),
            system_fingerprint=data.get("system_fingerprint"),
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            completion_tokens=int(data.get("completion_tokens") or 0),
            cached=True,
        )


class ReplyCache:
    """Replies on disk in one SQLite file, safe across threads and processes.

    Examples:
        >>> import tempfile
        >>> cache = ReplyCache(Path(tempfile.mkdtemp()) / "replies.sqlite")
        >>> cache.put("k", ChatReply("yes", served_model="m"))
        >>> cache.get("k").content, cache.get("k").cached, cache.get("x") is None
        ('yes', True, True)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA busy_timeout = 60000")
        enable_wal(self._conn, timeout_s=60.0)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS replies ("
            " key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID"
        )

    def get(self, key: str) -> ChatReply | None:
        """The cached reply, or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT reply FROM replies WHERE key = ?", [key]).fetchone()
        return None if row is None else ChatReply.from_json(row[0])

    def put(self, key: str, reply: ChatReply) -> None:
        """Store a reply that arrived (one with an error is ignored)."""
        if reply.error is not None:
            return
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO replies (key, reply, created) VALUES (?, ?, ?)",
                [key, reply.as_json(), time.time()],
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


@dataclass
class ClientStats:
    """Counters of one :class:`JudgeClient` over a run."""

    requests: int = 0
    """Requests sent (the ``openai`` client's own retries not counted)."""
    cache_hits: int = 0
    """Replies served from the cache."""
    failures: int = 0
    """Requests that got no reply."""
    prompt_tokens: int = 0
    """Prompt tokens the server reported, over the requests sent."""
    completion_tokens: int = 0
    """Completion tokens the server reported, over the requests sent."""
    unclosed_think: int = 0
    """Replies whose think block never closed (cut off while thinking)."""
    served_models: set[str] = field(default_factory=set)
    """Every ``response.model`` seen (cached replies included)."""
    system_fingerprints: set[str] = field(default_factory=set)
    """Every ``system_fingerprint`` seen."""
    planned: list[ChatRequest] = field(default_factory=list)
    """Requests a dry run would have sent."""

    def record(self) -> dict[str, Any]:
        """JSON-ready counters (sets sorted)."""
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "failures": self.failures,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "unclosed_think": self.unclosed_think,
            "served_models": sorted(self.served_models),
            "system_fingerprints": sorted(self.system_fingerprints),
        }


# ---------------------------------------------------------------------------------------------
# Reasoning models
# ---------------------------------------------------------------------------------------------

_OPEN = re.compile(r"<[ \t]*(?:think(?:ing)?|reasoning)[ \t]*>|◁think▷", re.I)
_CLOSE = re.compile(r"<[ \t]*/[ \t]*(?:think(?:ing)?|reasoning)[ \t]*>|◁/think▷", re.I)


def final_text(content: str | None) -> tuple[str, bool]:
    """``(the reply without its think blocks, whether a block was left unclosed)``.

    Examples:
        >>> final_text("<think>Look at the bars.</think>yes")
        ('yes', False)
        >>> final_text("<think>The bar is tall, so")
        ('', True)
    """
    if not content:
        return "", False
    last_open = [m.end() for m in _OPEN.finditer(content)]
    unclosed = bool(last_open) and _CLOSE.search(content, last_open[-1]) is None
    remaining, _ = split_thinking(content)
    return remaining.strip(), unclosed


def thinks_first(token: str) -> bool:
    """Whether a first token opens a think block, or is the start of prose, not a verdict
    (a reasoning model's "So" or "<think>"): logprob scoring cannot read such a reply.

    Examples:
        >>> thinks_first("<think>"), thinks_first(" Yes"), thinks_first("So")
        (True, False, True)
    """
    word = token.strip().lower()
    return word.startswith("<") or word not in {"yes", "no", "true", "false", ""}


# ---------------------------------------------------------------------------------------------
# Images and estimates
# ---------------------------------------------------------------------------------------------


def image_data_url(data: bytes) -> tuple[str, str]:
    """``(data URL, SHA-256 of the bytes)`` of an image file's bytes (PNG, JPEG, GIF, WebP).

    Examples:
        >>> url, digest = image_data_url(b"\\x89PNG\\r\\n\\x1a\\n...")
        >>> url[:22], len(digest)
        ('data:image/png;base64,', 64)
    """
    import base64

    kind = "png"
    if data[:3] == b"\xff\xd8\xff":
        kind = "jpeg"
    elif data[:4] == b"GIF8":
        kind = "gif"
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        kind = "webp"
    encoded = base64.b64encode(data).decode("ascii")
    return f"data:image/{kind};base64,{encoded}", hashlib.sha256(data).hexdigest()


def estimate_tokens(request: ChatRequest) -> tuple[int, int]:
    """``(prompt tokens, completion tokens)`` a request may cost, estimated before sending:
    :data:`CHARS_PER_TOKEN` characters a token, :data:`IMAGE_TOKENS` an image, and the whole
    token limit for the reply (an upper bound).

    Examples:
        >>> estimate_tokens(ChatRequest(({"role": "user", "content": "x" * 40},), "h"))
        (10, 256)
    """
    prompt = len(request.text()) // CHARS_PER_TOKEN + IMAGE_TOKENS * request.n_images()
    return max(1, prompt), request.max_tokens


# ---------------------------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------------------------


class JudgeClient:
    """Chat requests to one OpenAI-compatible endpoint and model, cached and counted.

    Args:
        base_url: The endpoint, e.g. ``http://localhost:8000/v1``.
        model: The model name the endpoint serves.
        api_key: The key (:func:`~crystalbench._internal.openai_client.resolve_api_key`).
        timeout: Seconds per request.
        max_retries: Retries with back-off the ``openai`` client makes.
        concurrency: Requests in flight at once (over every thread using this client).
        cache_path: The :class:`ReplyCache` file; ``None``: no cache.
        dry_run: Record the requests (:attr:`ClientStats.planned`) and send none.
        what: Who calls, for the error when ``openai`` is missing.

    Examples:
        >>> client = JudgeClient("http://127.0.0.1:9/v1", "m", dry_run=True)
        >>> request = ChatRequest(({"role": "user", "content": "Is 2 + 2 = 4?"},), "h")
        >>> reply = client.complete(request)
        >>> reply.error, len(client.stats.planned), client.stats.requests
        ('dry run: not sent', 1, 0)
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        concurrency: int = 8,
        cache_path: str | Path | None = None,
        dry_run: bool = False,
        what: str = "the LLM judge",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = max(1, concurrency)
        self.dry_run = dry_run
        self.what = what
        self._api_key = api_key
        self.cache = ReplyCache(cache_path) if cache_path is not None else None
        self.stats = ClientStats()
        self._client: Any = None
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.concurrency)

    def key(self, request: ChatRequest) -> str:
        """The cache key: model, base URL, prompt hash, image hash, parameters and the
        messages (an image part by its hash, so the key does not carry the pixels)."""
        messages = []
        for message in request.messages:
            content = message.get("content")
            if isinstance(content, list):
                content = [
                    {"type": "image", "sha256": request.image_sha256}
                    if part.get("type") == "image_url"
                    else dict(part)
                    for part in content
                ]
            messages.append({"role": message.get("role"), "content": content})
        blob = json.dumps(
            [
                self.model,
                self.base_url,
                request.prompt_sha256,
                request.image_sha256,
                request.parameters(),
                messages,
            ],
            ensure_ascii=False,
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = openai_client(
                    self.base_url,
                    api_key=self._api_key,
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                    what=self.what,
                )
            return self._client

    def _note(self, reply: ChatReply) -> ChatReply:
        with self._lock:
            if reply.served_model:
                self.stats.served_models.add(reply.served_model)
            if reply.system_fingerprint:
                self.stats.system_fingerprints.add(reply.system_fingerprint)
            if reply.content and final_text(reply.content)[1]:
                self.stats.unclosed_think += 1
        return reply

    def complete(self, request: ChatRequest) -> ChatReply:
        """The reply to ``request``: from the cache, else from the endpoint. Never raises."""
        key = self.key(request)
        if self.cache is not None:
            try:
                cached = self.cache.get(key)
            except sqlite3.Error:
                cached = None
            if cached is not None:
                with self._lock:
                    self.stats.cache_hits += 1
                return self._note(cached)
        if self.dry_run:
            with self._lock:
                self.stats.planned.append(request)
            return ChatReply(error="dry run: not sent")
        reply = self._send(request)
        if reply.error is not None:
            with self._lock:
                self.stats.failures += 1
            return reply
        if self.cache is not None:
            with contextlib.suppress(sqlite3.Error):  # an uncached reply is still a reply
                self.cache.put(key, reply)
        return self._note(reply)

    def _send(self, request: ChatRequest) -> ChatReply:
        options: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.json_schema is not None:
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": dict(request.json_schema)},
            }
        if request.guided_choice:
            options["extra_body"] = {"guided_choice": list(request.guided_choice)}
        if request.logprobs is not None:
            options["logprobs"] = True
            options["top_logprobs"] = request.logprobs
        with self._slots:
            with self._lock:
                self.stats.requests += 1
            try:
                response = self._get_client().chat.completions.create(**options)
                choice = response.choices[0]
                content = choice.message.content
            except Exception as error:  # connection, timeout, HTTP status, odd response
                return ChatReply(error=f"{type(error).__name__}: {error}")
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        with self._lock:
            self.stats.prompt_tokens += prompt_tokens
            self.stats.completion_tokens += completion_tokens
        return ChatReply(
            content,
            top_logprobs=_first_token_logprobs(choice),
            served_model=getattr(response, "model", None),
            system_fingerprint=getattr(response, "system_fingerprint", None),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:
        """Replies in input order; identical requests are sent once, at most
        ``concurrency`` at a time."""
        unique = list(dict.fromkeys(requests))
        workers = min(self.concurrency, max(1, len(unique)))
        if workers <= 1:
            answers = [self.complete(request) for request in unique]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                answers = list(pool.map(self.complete, unique))
        by_request = dict(zip(unique, answers, strict=True))
        return [by_request[request] for request in requests]

    def estimate(self, requests: Sequence[ChatRequest]) -> tuple[int, int]:
        """``(prompt tokens, completion tokens)`` the requests may cost (:func:`estimate_tokens`,
        summed; cached ones included: an upper bound)."""
        prompt = completion = 0
        for request in requests:
            p, c = estimate_tokens(request)
            prompt += p
            completion += c
        return prompt, completion

    def identity(self) -> dict[str, Any]:
        """Model, URL and what the server said it served (no key)."""
        return {
            "model": self.model,
            "base_url": self.base_url,
            "served_models": sorted(self.stats.served_models),
            "system_fingerprints": sorted(self.stats.system_fingerprints),
        }

    def close(self) -> None:
        """Close the HTTP client and the cache."""
        if self._client is not None:
            self._client.close()
        if self.cache is not None:
            self.cache.close()


def _first_token_logprobs(choice: Any) -> list[tuple[str, float]] | None:
    """The first generated token and its alternatives, or ``None`` when the server gave none."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    first = content[0]
    pairs = [(str(first.token), float(first.logprob))]
    for alternative in getattr(first, "top_logprobs", None) or []:
        pairs.append((str(alternative.token), float(alternative.logprob)))
    return list(dict.fromkeys(pairs))
