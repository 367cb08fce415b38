"""A judge matcher: an LLM decides which predicted steps match each reference step.

The paper's matcher accepts a pair when its cosine reaches tau. The judge matcher (beyond the
paper, as MME-CoT judges its key steps) asks an OpenAI-compatible LLM, once per reference
step, which of the item's predicted steps state the same thing; every pair it names is a
candidate. The candidates are then matched **one-to-one exactly as the paper matches**: sorted
by cosine, highest first (ties to the lower indices), each accepted when neither step is
matched yet (:func:`judged_similarity` turns the verdicts into a similarity matrix whose
only finite entries are the judge's pairs, for :func:`crystalbench.scoring.matching.chain_fields`).

Requests use temperature 0 and the versioned prompt ``crystalbench/prompts/step_match_v1.txt``,
whose SHA-256 is recorded with the model and URL in every results file. Decided verdicts are
cached on disk (``step_judge.sqlite`` in the cache folder, keyed by model, URL, prompt hash,
reference step and predicted chain), so scoring again, or validating the judge against human
labels on pairs of the same runs, asks nothing twice. A failed request is no verdict: the
reference step then has no candidate, and the failure is counted (never cached, so a later
run asks again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from crystalbench.config.settings import STEP_JUDGE_MAX_TOKENS
from crystalbench.defaults import STEP_JUDGE_PROMPT
from crystalbench.errors import UnknownNameError
from crystalbench.judges.base import JudgeIdentity, JudgeVerdict
from crystalbench.judges.openai_judge import JudgeCallError, OpenAIChatJudge, VerdictCache
from crystalbench.types import Record

__all__ = [
    "OpenAIStepJudge",
    "StepJudge",
    "StepMatchPrompt",
    "StepMatchRequest",
    "StepMatchVerdict",
    "judged_similarity",
    "load_step_prompt",
    "parse_step_reply",
]

STEP_JUDGE_CACHE_FILE = "step_judge.sqlite"
"""The judge matcher's verdict cache, in the cache folder."""


class StepMatchVerdict(Record):
    """Which predicted steps the judge matched with one reference step."""

    matches: list[int] | None
    """0-based indices of the matching predicted steps (empty: none matches), or ``None``
    when the judge gave no usable verdict (see ``error``)."""
    reason: str | None = None
    """The judge's short explanation, when it gave one."""
    raw: str | None = None
    """The reply as received, for auditing."""
    error: str | None = None
    """Why there is no verdict (connection, timeout, unreadable reply); else ``None``."""


class StepMatchRequest(NamedTuple):
    """One question for the judge matcher: a reference step and the predicted chain."""

    reference_step: str
    predicted_steps: tuple[str, ...]


@runtime_checkable
class StepJudge(Protocol):
    """Decides which predicted steps match a reference step. Never raises."""

    @property
    def identity(self) -> JudgeIdentity:
        """Which model, endpoint and prompt decide."""
        ...

    def judge_many(self, requests: Sequence[StepMatchRequest]) -> list[StepMatchVerdict]:
        """One verdict per request, in order; failures are verdicts with ``matches=None``."""
        ...


# ---------------------------------------------------------------------------------------------
# Prompt and reply
# ---------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(reference_step|predicted_steps)\}\}")


@dataclass(frozen=True)
class StepMatchPrompt:
    """The versioned judge-matcher prompt: a system message and a user template.

    The template holds ``{{reference_step}}`` and ``{{predicted_steps}}`` (the predicted
    steps, numbered from 1, one per line). ``sha256`` hashes the file's bytes.
    """

    name: str
    system: str
    user_template: str
    sha256: str

    def render(self, reference_step: str, predicted_steps: Sequence[str]) -> list[dict[str, str]]:
        """Chat messages for one request (values inserted verbatim, never re-expanded).

        Examples:
            >>> prompt = load_step_prompt()
            >>> user = prompt.render("The bar is 5.", ["It is 5.", "Done."])[1]["content"]
            >>> "1. It is 5.\\n2. Done." in user
            True
        """
        numbered = "\n".join(f"{k}. {step}" for k, step in enumerate(predicted_steps, start=1))
        values = {"reference_step": reference_step, "predicted_steps": numbered}
        user = _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.user_template)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


def load_step_prompt(name: str = STEP_JUDGE_PROMPT) -> StepMatchPrompt:
    """Load ``crystalbench/prompts/<name>.txt`` (a ``step_match`` prompt).

    Raises:
        UnknownNameError: No such prompt file.

    Examples:
        >>> prompt = load_step_prompt()
        >>> prompt.name, len(prompt.sha256), "{{predicted_steps}}" in prompt.user_template
        ('step_match_v1', 64, True)
    """
    folder = resources.files("crystalbench").joinpath("prompts")
    available = sorted(
        entry.name[: -len(".txt")]
        for entry in folder.iterdir()
        if entry.name.startswith("step_match") and entry.name.endswith(".txt")
    )
    if name not in available:
        raise UnknownNameError("judge-matcher prompt", name, available)
    data = folder.joinpath(f"{name}.txt").read_bytes()
    text = data.decode("utf-8")
    match = re.fullmatch(r"\s*\[system\]\n(?P<system>.*?)\n\[user\]\n(?P<user>.*)", text, re.S)
    if match is None:  # our own packaged file: a broken one must fail loudly
        raise ValueError(f"prompt {name!r} lacks its [system] and [user] sections")
    return StepMatchPrompt(
        name=name,
        system=match["system"].strip(),
        user_template=match["user"].strip(),
        sha256=hashlib.sha256(data).hexdigest(),
    )


_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def parse_step_reply(raw: str | None, n_predicted: int) -> StepMatchVerdict:
    """Read ``{"matches": [numbers], "reason": ...}`` from a judge's reply.

    ``<think>`` blocks, code fences and prose around the object are ignored; the first JSON
    object with a ``matches`` field wins. Step numbers are 1-based in the reply and 0-based
    in the verdict; ``null`` or ``[]`` means no step matches. Anything else (no such object,
    a number outside ``1..n_predicted``, a non-integer) is an error verdict: a guess is
    never taken for a decision.

    Examples:
        >>> parse_step_reply('```json\\n{"matches": [2, 1], "reason": "same"}\\n```', 3).matches
        [0, 1]
        >>> parse_step_reply('{"matches": [4]}', 3).error
        'step number 4 outside 1..3'
        >>> parse_step_reply("Step 2 matches.", 3).error
        'unparseable reply'
    """
    if raw is None or not raw.strip():
        return StepMatchVerdict(matches=None, raw=raw, error="empty reply")
    text = _THINK.sub(" ", raw)
    decoder = json.JSONDecoder()
    for found in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, found.start())
        except ValueError:
            continue
        if not isinstance(value, dict) or "matches" not in value:
            continue
        numbers = value["matches"]
        if numbers is None:
            numbers = []
        if not isinstance(numbers, list):
            return StepMatchVerdict(matches=None, raw=raw, error="'matches' is not a list")
        indices: set[int] = set()
        for number in numbers:
            if isinstance(number, bool) or not isinstance(number, int):
                return StepMatchVerdict(
                    matches=None, raw=raw, error=f"step number {number!r} is not an integer"
                )
            if not 1 <= number <= n_predicted:
                return StepMatchVerdict(
                    matches=None, raw=raw, error=f"step number {number} outside 1..{n_predicted}"
                )
            indices.add(number - 1)
        reason = value.get("reason")
        return StepMatchVerdict(
            matches=sorted(indices), reason=str(reason) if reason is not None else None, raw=raw
        )
    return StepMatchVerdict(matches=None, raw=raw, error="unparseable reply")


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------


def judged_similarity(
    similarity: np.ndarray, verdicts: Sequence[StepMatchVerdict | None]
) -> np.ndarray:
    """The cosine matrix with every pair the judge did not name set to NaN.

    Matched with ``tau = -inf`` by :func:`crystalbench.scoring.matching.greedy_pairs`, the finite
    entries (the judge's candidates, one column per reference step) are accepted
    one-to-one in cosine order, as the paper's greedy matching does; NaN never passes.

    Args:
        similarity: ``(m, n)`` cosines of predicted against reference steps.
        verdicts: One verdict per reference step (``None`` or a failed verdict: no candidate).

    Examples:
        >>> S = np.array([[0.9, 0.2], [0.4, 0.8]], dtype=np.float32)
        >>> v = [StepMatchVerdict(matches=[1]), StepMatchVerdict(matches=None, error="x")]
        >>> judged_similarity(S, v).tolist()
        [[nan, nan], [0.4000000059604645, nan]]
    """
    sim = np.asarray(similarity, dtype=np.float32)
    passing = np.zeros(sim.shape, dtype=bool)
    for column, verdict in enumerate(verdicts):
        if verdict is not None and verdict.matches:
            passing[verdict.matches, column] = True
    return np.where(passing, sim, np.float32(np.nan))


# ---------------------------------------------------------------------------------------------
# The OpenAI-compatible judge matcher
# ---------------------------------------------------------------------------------------------


class OpenAIStepJudge(OpenAIChatJudge):
    """Judge matcher over an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Args:
        base_url: Endpoint, e.g. ``http://localhost:8000/v1``.
        model: Model name the endpoint serves.
        api_key: Key; defaults to ``$OPENAI_API_KEY``, else ``"EMPTY"``. Never recorded.
        timeout: Seconds per request.
        max_retries: Retries the ``openai`` client makes on connection errors and 5xx.
        cache_dir: Folder of ``step_judge.sqlite``; default :func:`default_cache_dir`.
        use_cache: ``False`` disables the on-disk cache.
        max_workers: Requests in flight at once in :meth:`judge_many`.
        max_tokens: Reply length limit.
        prompt: Prompt file name under ``crystalbench/prompts``.

    Nothing is contacted until the first request; no method raises on a failed request.

    Examples:
        >>> import tempfile
        >>> judge = OpenAIStepJudge("http://127.0.0.1:9/v1", "m", cache_dir=tempfile.mkdtemp())
        >>> judge.identity.kind, judge.identity.prompt_name
        ('openai-step-match', 'step_match_v1')
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        max_workers: int = 8,
        max_tokens: int = STEP_JUDGE_MAX_TOKENS,
        prompt: str = STEP_JUDGE_PROMPT,
    ) -> None:
        super().__init__(
            base_url,
            model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            max_workers=max_workers,
            max_tokens=max_tokens,
            cache_path=self.cache_path(cache_dir, STEP_JUDGE_CACHE_FILE, use_cache),
        )
        self.prompt = load_step_prompt(prompt)
        self._identity = JudgeIdentity(
            kind="openai-step-match",
            model=model,
            base_url=self.base_url,
            prompt_name=self.prompt.name,
            prompt_hash=self.prompt.sha256,
        )

    @classmethod
    def from_config(
        cls, config: Any, *, cache_dir: str | Path | None = None, use_cache: bool = True
    ) -> OpenAIStepJudge:
        """Build from a :class:`crystalbench.config.scoring.JudgeConfig` (url, model, key, timeout,
        concurrency)."""
        return cls(
            config.url,
            config.model,
            **cls.config_options(config),
            cache_dir=cache_dir,
            use_cache=use_cache,
        )

    @property
    def identity(self) -> JudgeIdentity:
        """Kind ``openai-step-match``, model, base URL, prompt name and prompt hash."""
        return self._identity

    def info(self) -> dict[str, Any]:
        """Everything that shapes a verdict, and the counters, for results files (no key)."""
        return {
            **self._identity.model_dump(),
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "requests": self.stats.requests,
            "cache_hits": self.stats.cache_hits,
            "failures": self.stats.failures,
        }

    def _cache_key(self, request: StepMatchRequest) -> str:
        return VerdictCache.key(
            self.model,
            self.base_url,
            self.prompt.sha256,
            "step_match",
            request.reference_step,
            json.dumps(list(request.predicted_steps), ensure_ascii=False),
        )

    def judge(self, reference_step: str, predicted_steps: Sequence[str]) -> StepMatchVerdict:
        """Verdict for one reference step: from the cache, else from the endpoint."""
        request = StepMatchRequest(reference_step, tuple(predicted_steps))
        key = self._cache_key(request)
        if self.cache is not None:
            try:
                cached = self.cache.get(key)
            except sqlite3.Error:
                cached = None
            if cached is not None:
                verdict = parse_step_reply(cached.raw, len(request.predicted_steps))
                if verdict.matches is not None:
                    self._count("cache_hits")
                    return verdict
        verdict = self._ask(request)
        if verdict.matches is None:
            self._count("failures")
        elif self.cache is not None:
            # The raw reply is stored and parsed again on reading: one parser, one meaning.
            with contextlib.suppress(sqlite3.Error):
                self.cache.put(key, JudgeVerdict(correct=True, raw=verdict.raw))
        return verdict

    def _ask(self, request: StepMatchRequest) -> StepMatchVerdict:
        try:
            raw = self._chat(self.prompt.render(request.reference_step, request.predicted_steps))
        except JudgeCallError as error:
            return StepMatchVerdict(matches=None, error=str(error))
        except Exception as error:  # connection, timeout, HTTP status, odd response shape
            return StepMatchVerdict(matches=None, error=f"{type(error).__name__}: {error}")
        return parse_step_reply(raw, len(request.predicted_steps))

    def judge_many(self, requests: Sequence[StepMatchRequest]) -> list[StepMatchVerdict]:
        """Verdicts for many requests (identical ones asked once), in input order."""
        unique = list(dict.fromkeys(StepMatchRequest(r[0], tuple(r[1])) for r in requests))
        answers = self._map(self.judge, unique)
        by_request = dict(zip(unique, answers, strict=True))
        return [by_request[StepMatchRequest(r[0], tuple(r[1]))] for r in requests]


# ---------------------------------------------------------------------------------------------
# The scorer's hook
# ---------------------------------------------------------------------------------------------


class JudgeMatcher:
    """The judge matcher as a candidate filter of the scoring engine
    (:class:`crystalbench.scoring.CandidateFilter`), used when ``config.matcher == "judge"``.

    Per chunk of items, :meth:`prepare` asks the judge about every reference step of every
    chain each item is scored against, for the items with predicted steps (all requests of
    the chunk together, concurrently, identical ones once); per item and chain,
    :meth:`candidates` masks the cosine matrix to the judge's pairs. Each prediction set
    has its own matcher (its failures are its own); they may share one judge.

    Args:
        judge: The :class:`StepJudge`.
    """

    name = "judge_matcher"
    """Key of the seconds spent asking, in the run's timings."""

    def __init__(self, judge: StepJudge) -> None:
        self.judge = judge
        self.failures = 0
        """Reference steps left without a verdict (no candidate) because the judge failed."""
        self.first_error: str | None = None
        """The first failure's message."""
        self._verdicts: dict[StepMatchRequest, StepMatchVerdict] = {}

    @classmethod
    def from_config(cls, config: Any, judge: StepJudge | None = None) -> JudgeMatcher:
        """The judge matcher of a :class:`~crystalbench.config.scoring.ScoreConfig` (``judge``
        instead of building :class:`OpenAIStepJudge` from ``config.matcher_judge``)."""
        if judge is None:
            judge = OpenAIStepJudge.from_config(
                config.matcher_judge, cache_dir=config.cache_dir, use_cache=config.use_cache
            )
        return cls(judge)

    @staticmethod
    def rules(rules: Any) -> Any:
        """The scorer's match rules with the threshold test removed: every finite entry of
        :meth:`candidates` passes (ties keep the order of ``rules``)."""
        import dataclasses

        return dataclasses.replace(rules, tau=float("-inf"), strict=False)

    @staticmethod
    def requests(batch: Sequence[Any]) -> list[StepMatchRequest]:
        """The distinct questions a chunk asks: each reference step of each chain an item is
        scored against, with the item's predicted chain (items without steps ask nothing).

        ``batch`` holds :class:`~crystalbench.scoring.PreparedItem` records (their
        ``pred_steps`` and ``chains``, whose ``steps`` are non-blank).
        """
        return list(
            dict.fromkeys(
                StepMatchRequest(reference, tuple(ready.pred_steps))
                for ready in batch
                if ready.pred_steps
                for chain in ready.chains
                for reference in chain.steps
            )
        )

    def prepare(self, batch: Sequence[Any]) -> None:
        """Ask the judge about a chunk (:meth:`requests`) and keep the verdicts."""
        requests = self.requests(batch)
        verdicts = self.judge.judge_many(requests) if requests else []
        self._verdicts = dict(zip(requests, verdicts, strict=True))
        for verdict in verdicts:
            if verdict.matches is None:
                self.failures += 1
                self.first_error = self.first_error or verdict.error

    def candidates(
        self,
        similarity: np.ndarray,
        pred_steps: Sequence[str],
        ref_steps: Sequence[str],
        context: Any = None,
    ) -> np.ndarray:
        """The item's cosine matrix masked to the judge's pairs (:func:`judged_similarity`;
        ``context``, the item's :class:`~crystalbench.scoring.ChainContext`, is not needed)."""
        chain = tuple(pred_steps)
        found = [self._verdicts.get(StepMatchRequest(ref, chain)) for ref in ref_steps]
        return judged_similarity(similarity, found)

    def finish(self) -> None:
        """Nothing to do: verdicts are cached as they come."""

    def info(self) -> dict[str, Any]:
        """Identity (model, URL, prompt hash), counters and failures, for ``summary.json``."""
        info = getattr(self.judge, "info", None)
        record = dict(info()) if callable(info) else self.judge.identity.model_dump()
        record["failed_reference_steps"] = self.failures
        record["first_error"] = self.first_error
        return record

    def record(self) -> dict[str, Any]:
        """``{"matcher_identity": info()}``: the entry of the run's config record."""
        return {"matcher_identity": self.info()}


def judge_pair_decisions(pairs: Sequence[Any], judge: StepJudge) -> dict[str, bool | None]:
    """The judge matcher's decision on labelled pairs: does it name the pair's predicted step
    for the pair's reference step, given the item's whole predicted chain?

    These are the requests ``crystal score --matcher judge`` makes for the same runs, so a
    judge-scored run leaves them all in the cache. ``None``: the judge gave no verdict.

    Args:
        pairs: :class:`~crystalbench.validation.StepPair` records with ``pred_index`` and
            ``pred_steps`` (the ``pairs.jsonl`` of ``crystal validate sample-pairs``).
        judge: The judge matcher.

    Raises:
        InputError: A pair lacks its predicted chain.
    """
    from crystalbench.errors import InputError

    requests = []
    for pair in pairs:
        if pair.pred_steps is None or pair.pred_index is None:
            raise InputError(
                f"pair {pair.pair_id!r} has no predicted chain: the judge matcher needs the "
                "pairs.jsonl that `crystal validate sample-pairs` wrote (not a CSV)",
                field="pred_steps",
            )
        requests.append(StepMatchRequest(pair.ref_step, tuple(pair.pred_steps)))
    verdicts = judge.judge_many(requests)
    return {
        pair.pair_id: None if verdict.matches is None else pair.pred_index in verdict.matches
        for pair, verdict in zip(pairs, verdicts, strict=True)
    }
