"""The judge protocol, its records, the versioned prompt and the reply parser.

A judge decides whether a free-form answer means the same as the gold answer. Judges come
in from outside (:func:`crystalbench.answers.score_answer` takes one); each names itself
exactly through :attr:`Judge.identity` so results record which model, endpoint and prompt
produced a verdict. A judge never raises: every failure is a verdict with ``correct=None``
and ``error`` set, which scoring counts as unscored.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any, NamedTuple, Protocol, runtime_checkable

from crystalbench.errors import UnknownNameError
from crystalbench.types import Record

__all__ = [
    "Judge",
    "JudgeIdentity",
    "JudgePrompt",
    "JudgeRequest",
    "JudgeVerdict",
    "judge_many",
    "load_prompt",
    "parse_judge_reply",
]


class JudgeVerdict(Record):
    """What a judge said about one (question, gold, predicted) triple."""

    correct: bool | None
    """True / False, or ``None`` when the judge could not decide (see ``error``)."""
    reason: str | None = None
    """The judge's short explanation, when it gave one."""
    raw: str | None = None
    """The judge's reply text as received, for auditing."""
    error: str | None = None
    """Why no verdict was reached (connection, timeout, unparseable reply); else ``None``."""


class JudgeIdentity(Record):
    """Exactly which judge produced verdicts; written into every results file."""

    kind: str
    """Judge implementation: ``openai`` (any OpenAI-compatible endpoint) or ``scripted``."""
    model: str
    """Model name as sent to the endpoint (or the scripted judge's name)."""
    base_url: str | None = None
    """Endpoint URL; ``None`` for judges that call no server."""
    prompt_name: str | None = None
    """Prompt file name without extension, e.g. ``judge_v1``."""
    prompt_hash: str | None = None
    """SHA-256 (hex) of the prompt file's bytes."""


class JudgeRequest(NamedTuple):
    """One question for a judge."""

    question: str
    """The benchmark question."""
    gold: str
    """The reference answer."""
    predicted: str
    """The model's answer."""


@runtime_checkable
class Judge(Protocol):
    """Decides whether a predicted answer matches the gold answer. Never raises."""

    @property
    def identity(self) -> JudgeIdentity:
        """Which model, endpoint and prompt this judge uses."""
        ...

    def judge(self, question: str, gold: str, predicted: str) -> JudgeVerdict:
        """Verdict for one triple; failures come back as ``correct=None`` with ``error``."""
        ...


def judge_many(
    judge: Judge, requests: Sequence[JudgeRequest | tuple[str, str, str]], *, max_workers: int = 1
) -> list[JudgeVerdict]:
    """Judge many triples, in order, using the judge's own ``judge_many`` when it has one.

    Judges without a batch method are called from ``max_workers`` threads (1: in turn).
    An exception from a misbehaving judge becomes an error verdict.

    Examples:
        >>> from crystalbench.judges.scripted import ScriptedJudge
        >>> verdicts = judge_many(ScriptedJudge({("4", "four"): True}), [("2+2?", "4", "four")])
        >>> [v.correct for v in verdicts]
        [True]
    """
    triples = [JudgeRequest(*request) for request in requests]
    batch = getattr(judge, "judge_many", None)
    if callable(batch):
        verdicts = list(batch(triples))
        if len(verdicts) == len(triples):
            return verdicts

    def one(request: JudgeRequest) -> JudgeVerdict:
        try:
            return judge.judge(request.question, request.gold, request.predicted)
        except Exception as error:  # a judge must not raise; make sure it cannot stop a run
            return JudgeVerdict(correct=None, error=f"{type(error).__name__}: {error}")

    if max_workers <= 1 or len(triples) <= 1:
        return [one(request) for request in triples]
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        return list(pool.map(one, triples))


# ---------------------------------------------------------------------------------------------
# Prompt
# ---------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(question|gold|predicted)\}\}")


@dataclass(frozen=True)
class JudgePrompt:
    """A versioned judge prompt: a system message and a user template.

    The file has a ``[system]`` section and a ``[user]`` section; the user template holds
    ``{{question}}``, ``{{gold}}`` and ``{{predicted}}``. ``sha256`` hashes the file bytes.
    """

    name: str
    """File name without ``.txt``."""
    system: str
    """System message."""
    user_template: str
    """User message with placeholders."""
    sha256: str
    """Hex digest of the file's bytes: the prompt hash recorded in results."""

    def render(self, question: str, gold: str, predicted: str) -> list[dict[str, str]]:
        """Chat messages for one triple (values are inserted verbatim, never re-expanded).

        Examples:
            >>> prompt = load_prompt()
            >>> prompt.render("Q {{gold}}?", "4", "four")[1]["content"].count("Q {{gold}}?")
            1
        """
        values = {"question": question, "gold": gold, "predicted": predicted}
        user = _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.user_template)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


def load_prompt(name: str = "judge_v1") -> JudgePrompt:
    """Load ``crystalbench/prompts/<name>.txt``.

    Raises:
        UnknownNameError: No such prompt file.

    Examples:
        >>> prompt = load_prompt("judge_v1")
        >>> len(prompt.sha256), "{{predicted}}" in prompt.user_template
        (64, True)
    """
    folder = resources.files("crystalbench").joinpath("prompts")
    available = sorted(
        entry.name[: -len(".txt")]
        for entry in folder.iterdir()
        if entry.name.startswith("judge") and entry.name.endswith(".txt")
    )
    if name not in available:
        raise UnknownNameError("judge prompt", name, available)
    data = folder.joinpath(f"{name}.txt").read_bytes()
    text = data.decode("utf-8")
    match = re.fullmatch(r"\s*\[system\]\n(?P<system>.*?)\n\[user\]\n(?P<user>.*)", text, re.S)
    if match is None:  # our own packaged file: a broken one must fail loudly
        raise ValueError(f"prompt {name!r} lacks its [system] and [user] sections")
    return JudgePrompt(
        name=name,
        system=match["system"].strip(),
        user_template=match["user"].strip(),
        sha256=hashlib.sha256(data).hexdigest(),
    )


# ---------------------------------------------------------------------------------------------
# Reply parsing
# ---------------------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_TRUE_WORDS = frozenset({"true", "yes", "correct", "1"})
_FALSE_WORDS = frozenset({"false", "no", "incorrect", "0"})
_LOOSE_FIELD = re.compile(r"[\"']?correct[\"']?\s*[:=]\s*[\"']?(true|false)\b", re.I)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def parse_judge_reply(raw: str | None) -> JudgeVerdict:
    """Read ``{"correct": bool, "reason": str}`` from a judge's reply, robustly.

    ``<think>`` blocks and code fences are ignored; the first JSON object with a
    ``correct`` field wins; ``"true"``/``"yes"``/1 strings and numbers are accepted. Without
    JSON, a ``correct: true`` style field is still read. Anything else is an error verdict:
    a stray "true" in prose is never taken for a verdict.

    Examples:
        >>> parse_judge_reply('```json\\n{"correct": true, "reason": "same value"}\\n```').correct
        True
        >>> parse_judge_reply("I think it's wrong").error
        'unparseable reply'
    """
    if raw is None or not raw.strip():
        return JudgeVerdict(correct=None, raw=raw, error="empty reply")
    text = _THINK.sub(" ", raw)
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and "correct" in value:
            correct = _as_bool(value["correct"])
            if correct is None:
                return JudgeVerdict(correct=None, raw=raw, error="reply field 'correct' not a bool")
            reason = value.get("reason")
            return JudgeVerdict(
                correct=correct, reason=str(reason) if reason is not None else None, raw=raw
            )
    loose = _LOOSE_FIELD.search(text)
    if loose is not None:
        return JudgeVerdict(correct=loose.group(1).lower() == "true", raw=raw)
    return JudgeVerdict(correct=None, raw=raw, error="unparseable reply")
