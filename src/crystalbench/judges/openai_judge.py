"""LLM judge over any OpenAI-compatible chat endpoint, with an on-disk verdict cache.

The official ``openai`` client talks to the endpoint (OpenAI, vLLM, SGLang, Ollama, a local
test server); :mod:`crystalbench._internal.openai_client` builds it and reads the key. Requests use
temperature 0 and the versioned prompt in ``crystalbench/prompts/judge_v1.txt``; the reply is
parsed by :func:`crystalbench.judges.base.parse_judge_reply`. Decided verdicts are cached in a
SQLite file keyed by (model, base URL, prompt hash, question, gold, predicted), so re-scoring
never asks twice; failures are not cached, so a later run retries them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crystalbench._internal.extras import require
from crystalbench._internal.openai_client import api_key_from_env
from crystalbench._internal.paths import default_cache_dir
from crystalbench._internal.sqlite import enable_wal
from crystalbench.config.settings import JUDGE_MAX_RETRIES, JUDGE_TIMEOUT, OPENAI_API_KEY_ENV
from crystalbench.judges.base import (
    JudgeIdentity,
    JudgeRequest,
    JudgeVerdict,
    load_prompt,
    parse_judge_reply,
)
from crystalbench.judges.client import ChatRequest, JudgeClient

__all__ = ["JudgeStats", "OpenAIJudge", "VerdictCache"]


class VerdictCache:
    """Judge verdicts on disk in one SQLite file, safe across threads and processes.

    Args:
        path: The database file; its folder is created.

    Examples:
        >>> import tempfile
        >>> cache = VerdictCache(Path(tempfile.mkdtemp()) / "judge.sqlite")
        >>> key = VerdictCache.key("m", "http://x/v1", "abc", "q", "4", "four")
        >>> cache.put(key, JudgeVerdict(correct=True, reason="same"))
        >>> cache.get(key).correct, cache.get("other") is None
        (True, True)
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
            "CREATE TABLE IF NOT EXISTS verdicts ("
            " key TEXT PRIMARY KEY, correct INTEGER NOT NULL, reason TEXT, raw TEXT,"
            " created REAL NOT NULL) WITHOUT ROWID"
        )

    @staticmethod
    def key(
        model: str, base_url: str, prompt_hash: str, question: str, gold: str, predicted: str
    ) -> str:
        """SHA-256 of the six fields (JSON-encoded, so no two tuples collide)."""
        blob = json.dumps([model, base_url, prompt_hash, question, gold, predicted])
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, key: str) -> JudgeVerdict | None:
        """The cached verdict, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT correct, reason, raw FROM verdicts WHERE key = ?", [key]
            ).fetchone()
        if row is None:
            return None
        return JudgeVerdict(correct=bool(row[0]), reason=row[1], raw=row[2])

    def put(self, key: str, verdict: JudgeVerdict) -> None:
        """Store a decided verdict (an undecided one is ignored)."""
        if verdict.correct is None:
            return
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO verdicts (key, correct, reason, raw, created)"
                " VALUES (?, ?, ?, ?, ?)",
                [key, int(verdict.correct), verdict.reason, verdict.raw, time.time()],
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


@dataclass
class JudgeStats:
    """Counters of one :class:`OpenAIJudge`."""

    requests: int = 0
    """HTTP requests sent (retries inside the client not counted)."""
    cache_hits: int = 0
    """Verdicts served from the cache."""
    failures: int = 0
    """Verdicts that came back undecided."""


class JudgeCallError(RuntimeError):
    """A request of the judge layer got no reply (the message says why)."""


class OpenAIChatJudge:
    """What every LLM judge over an OpenAI-compatible ``/v1/chat/completions`` endpoint
    shares: the judge layer's :class:`~crystalbench.judges.client.JudgeClient` (the one
    client factory, token counts, the served model id and ``system_fingerprint``), the on-disk
    verdict cache, the counters, one deterministic chat request, the concurrent map and
    ``close``. Its verdict cache predates the layer's reply cache and keeps its files and
    keys, so verdicts cached by earlier runs are still found.

    Subclasses (:class:`OpenAIJudge`, the judge matcher's ``OpenAIStepJudge``) render their
    prompt, parse the reply and choose the cache file. Nothing is contacted until the first
    request.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        max_workers: int,
        max_tokens: int,
        cache_path: Path | None,
    ) -> None:
        # Say so now, not as failed verdicts.
        require("openai", what="the LLM judge", extra="openai", load=False)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_workers = max(1, max_workers)
        self.max_tokens = max_tokens
        self._api_key = api_key
        self.cache = VerdictCache(cache_path) if cache_path is not None else None
        self.stats = JudgeStats()
        self.client = JudgeClient(
            self.base_url,
            model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            concurrency=self.max_workers,
            cache_path=None,  # decided verdicts are cached above, in ``self.cache``
        )
        """The judge layer's client: every request goes through it."""
        self._lock = threading.Lock()

    @staticmethod
    def cache_path(cache_dir: str | Path | None, name: str, use_cache: bool) -> Path | None:
        """``cache_dir/name`` (default folder: :func:`default_cache_dir`), or ``None``."""
        if not use_cache:
            return None
        return (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / name

    @staticmethod
    def config_options(config: Any) -> dict[str, Any]:
        """Key, timeout and concurrency from a :class:`crystalbench.config.scoring.JudgeConfig`
        (or anything shaped like it).

        Raises:
            InputError: ``api_key_env`` names a variable other than ``OPENAI_API_KEY`` that
                is not set (:func:`crystalbench._internal.openai_client.api_key_from_env`).
        """
        model = getattr(config, "model", "")
        return {
            "api_key": api_key_from_env(
                getattr(config, "api_key_env", OPENAI_API_KEY_ENV), what=f"judge {model}"
            ),
            "timeout": float(getattr(config, "timeout", JUDGE_TIMEOUT)),
            "max_workers": int(getattr(config, "concurrency", 8)),
        }

    def _count(self, counter: str) -> None:
        with self._lock:
            setattr(self.stats, counter, getattr(self.stats, counter) + 1)

    def _chat(self, messages: list[dict[str, str]]) -> str | None:
        """One request at temperature 0 (counted) through the judge layer.

        Raises:
            JudgeCallError: No reply (its message is the client's error).
        """
        self._count("requests")
        prompt = getattr(self, "prompt", None)
        request = ChatRequest(
            tuple(messages),
            prompt_sha256=getattr(prompt, "sha256", ""),
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        reply = self.client.complete(request)
        if reply.error is not None:
            raise JudgeCallError(reply.error)
        return reply.content

    def _map(self, work: Any, unique: Sequence[Any], max_workers: int | None = None) -> list[Any]:
        """``work(*request)`` for each distinct request, at most ``max_workers`` at once."""
        workers = min(max_workers or self.max_workers, max(1, len(unique)))
        if workers <= 1:
            return [work(*request) for request in unique]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda request: work(*request), unique))

    def close(self) -> None:
        """Close the HTTP client and the cache."""
        self.client.close()
        if self.cache is not None:
            self.cache.close()


class OpenAIJudge(OpenAIChatJudge):
    """LLM judge over an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Args:
        base_url: Endpoint, e.g. ``http://localhost:8000/v1``.
        model: Model name the endpoint serves.
        api_key: Key; defaults to ``$OPENAI_API_KEY``, else ``"EMPTY"`` (local servers).
            Never recorded anywhere.
        timeout: Seconds per request.
        max_retries: Retries the ``openai`` client makes on connection errors and 5xx.
        cache_dir: Folder of ``judge.sqlite``; default :func:`default_cache_dir`.
        use_cache: ``False`` disables the on-disk cache.
        max_workers: Concurrent requests in :meth:`judge_many`.
        max_tokens: Reply length limit.
        prompt: Prompt file name under ``crystalbench/prompts``.

    Nothing is contacted until the first :meth:`judge`; :meth:`judge` never raises.

    Examples:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> judge = OpenAIJudge("http://127.0.0.1:9/v1", "judge-model", cache_dir=folder)
        >>> judge.identity.model, judge.identity.prompt_name, len(judge.identity.prompt_hash)
        ('judge-model', 'judge_v1', 64)
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = JUDGE_TIMEOUT,
        max_retries: int = JUDGE_MAX_RETRIES,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        max_workers: int = 8,
        max_tokens: int = 256,
        prompt: str = "judge_v1",
    ) -> None:
        super().__init__(
            base_url,
            model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            max_workers=max_workers,
            max_tokens=max_tokens,
            cache_path=self.cache_path(cache_dir, "judge.sqlite", use_cache),
        )
        self.prompt = load_prompt(prompt)
        self._identity = JudgeIdentity(
            kind="openai",
            model=model,
            base_url=self.base_url,
            prompt_name=self.prompt.name,
            prompt_hash=self.prompt.sha256,
        )

    @classmethod
    def from_config(cls, config: Any, *, cache_dir: str | Path | None = None) -> OpenAIJudge:
        """Build from a :class:`crystalbench.config.scoring.JudgeConfig` (or anything shaped like
        it).

        Reads ``url``, ``model``, ``api_key_env``, ``timeout`` and ``concurrency``.

        Examples:
            >>> import tempfile
            >>> from types import SimpleNamespace
            >>> config = SimpleNamespace(url="http://127.0.0.1:9/v1", model="m",
            ...                          api_key_env="OPENAI_API_KEY", timeout=5.0, concurrency=4)
            >>> judge = OpenAIJudge.from_config(config, cache_dir=tempfile.mkdtemp())
            >>> judge.identity.model, judge.max_workers, judge.timeout
            ('m', 4, 5.0)
            >>> unset = SimpleNamespace(url=config.url, model="m", api_key_env="NO_SUCH_VARIABLE")
            >>> from crystalbench.errors import InputError
            >>> try:
            ...     OpenAIJudge.from_config(unset)
            ... except InputError as error:
            ...     print(error)
            field api_key_env: environment variable NO_SUCH_VARIABLE is not set (judge m)
        """
        return cls(config.url, config.model, **cls.config_options(config), cache_dir=cache_dir)

    @property
    def identity(self) -> JudgeIdentity:
        """Model, base URL, prompt name and prompt hash."""
        return self._identity

    def info(self) -> dict[str, Any]:
        """Everything that shapes a verdict, for results files (no API key)."""
        return {
            **self._identity.model_dump(),
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "cache": str(self.cache.path) if self.cache is not None else None,
        }

    def _cache_key(self, question: str, gold: str, predicted: str) -> str:
        return VerdictCache.key(
            self.model, self.base_url, self.prompt.sha256, question, gold, predicted
        )

    def judge(self, question: str, gold: str, predicted: str) -> JudgeVerdict:
        """Verdict for one triple: from the cache, else from the endpoint. Never raises."""
        key = self._cache_key(question, gold, predicted)
        if self.cache is not None:
            try:
                cached = self.cache.get(key)
            except sqlite3.Error:
                cached = None
            if cached is not None:
                self._count("cache_hits")
                return cached
        verdict = self._ask(question, gold, predicted)
        if verdict.correct is None:
            self._count("failures")
        elif self.cache is not None:
            with contextlib.suppress(sqlite3.Error):  # an uncached verdict is still a verdict
                self.cache.put(key, verdict)
        return verdict

    def _ask(self, question: str, gold: str, predicted: str) -> JudgeVerdict:
        try:
            raw = self._chat(self.prompt.render(question, gold, predicted))
        except JudgeCallError as error:
            return JudgeVerdict(correct=None, error=str(error))
        except Exception as error:  # connection, timeout, HTTP status, odd response shape
            return JudgeVerdict(correct=None, error=f"{type(error).__name__}: {error}")
        return parse_judge_reply(raw)

    def judge_many(
        self,
        requests: Sequence[JudgeRequest | tuple[str, str, str]],
        *,
        max_workers: int | None = None,
    ) -> list[JudgeVerdict]:
        """Judge many triples concurrently (at most ``max_workers`` requests in flight).

        Identical triples are asked once. Results come back in input order.
        """
        triples = [JudgeRequest(*request) for request in requests]
        unique = list(dict.fromkeys(triples))
        answers = self._map(self.judge, unique, max_workers)
        by_triple = dict(zip(unique, answers, strict=True))
        return [by_triple[triple] for triple in triples]
