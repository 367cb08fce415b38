"""The answer extractor: a model reads the final answer a response states, where no rule did.

The answer rules (:mod:`crystalbench.parsing.answer_rules`) commit only where the text says
where its answer is. An answer stated only in a sentence ("The taller bar belongs to the
second group, so that one wins.") is left to a model here, as the harnesses do (VLMEvalKit's
and MathVista's answer extraction): an OpenAI-compatible model sees the question and the
response (never the gold answer) and replies one JSON object under a JSON schema,
``{"answer": "..."}``, or ``"none"`` when the response states no answer.

Every request goes through the judge layer (:class:`~crystalbench.judges.client.JudgeClient`:
one client, one SQLite reply cache, the served model id, retries with back-off, a
concurrency limit, counted tokens, dry runs). A failed call, or a reply that cannot be read,
is a :class:`ModelExtraction` with ``error`` set and no answer: counted by the scoring step
(:mod:`crystalbench.scoring.extract`), never a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from crystalbench._internal.openai_client import api_key_from_env
from crystalbench._internal.paths import default_cache_dir
from crystalbench.config.judging import ExtractorConfig
from crystalbench.errors import UnknownNameError
from crystalbench.judges.client import ChatReply, ChatRequest, JudgeClient, final_text

__all__ = [
    "ANSWER_SCHEMA",
    "EXTRACTOR_CACHE_FILE",
    "NO_ANSWER_WORDS",
    "AnswerExtractor",
    "AnswerQuery",
    "ExtractPrompt",
    "ModelExtraction",
    "OpenAIExtractor",
    "ScriptedExtractor",
    "load_extract_prompt",
    "parse_extract_reply",
]

EXTRACTOR_CACHE_FILE = "extractor.sqlite"
"""The extractor's reply cache, in the cache folder."""

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
"""The JSON schema of the reply (sent as ``response_format``)."""

NO_ANSWER_WORDS = frozenset({"none", "null", "n/a", "no answer", "unknown", ""})
"""Replies that say the response states no answer (case and surrounding punctuation
ignored)."""

CUT_MARK = "[... the start of the response is cut ...]\n"
"""What stands before a response sent as its last characters only."""


class AnswerQuery(NamedTuple):
    """One question for the extractor: what was asked and what the model replied."""

    question: str
    """The benchmark question (options included as the item shows them)."""
    response: str
    """The model's response, as it wrote it."""


class ModelExtraction(NamedTuple):
    """What the extractor read from one response."""

    answer: str | None
    """The final answer; ``None`` when the response states none or the call failed."""
    error: str | None = None
    """Why there is no reading (connection, HTTP status, unreadable reply, dry run);
    ``None`` when the model replied (an answer, or ``none``)."""
    cached: bool = False
    """The reply came from the cache (no request sent)."""
    prompt_tokens: int = 0
    """Prompt tokens the server reported (0 for a cached reply)."""
    completion_tokens: int = 0
    """Completion tokens the server reported (0 for a cached reply)."""


@runtime_checkable
class AnswerExtractor(Protocol):
    """Reads final answers from responses. Never raises on a failed call."""

    @property
    def name(self) -> str:
        """``model:<name>``: written into the records of the items it was asked about."""
        ...

    def identity(self) -> dict[str, Any]:
        """Model, URL, prompt hash and options, for ``summary.json``."""
        ...

    def extract_many(self, queries: Sequence[AnswerQuery]) -> list[ModelExtraction]:
        """One reading per query, in order."""
        ...


# ---------------------------------------------------------------------------------------------
# Prompt and replies
# ---------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(question|response)\}\}")


@dataclass(frozen=True)
class ExtractPrompt:
    """The versioned extractor prompt: ``[system]`` and ``[user]`` (with ``{{question}}`` and
    ``{{response}}``; there is no placeholder for the gold answer). ``sha256`` hashes the
    file's bytes."""

    name: str
    system: str
    user_template: str
    sha256: str

    def render(self, query: AnswerQuery) -> str:
        """The user text for one query (values inserted verbatim, never re-expanded).

        Examples:
            >>> prompt = load_extract_prompt()
            >>> text = prompt.render(AnswerQuery("How long? {{response}}", "It is 6 yards."))
            >>> "How long? {{response}}" in text and text.count("It is 6 yards.")
            1
        """
        values = {"question": query.question, "response": query.response}
        return _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.user_template)


def load_extract_prompt(name: str = "extract_answer_v1") -> ExtractPrompt:
    """Load ``crystalbench/prompts/<name>.txt`` (an ``extract_answer`` prompt).

    Raises:
        UnknownNameError: No such prompt file.

    Examples:
        >>> prompt = load_extract_prompt()
        >>> prompt.name, len(prompt.sha256), "{{response}}" in prompt.user_template
        ('extract_answer_v1', 64, True)
    """
    folder = resources.files("crystalbench").joinpath("prompts")
    available = sorted(
        entry.name[: -len(".txt")]
        for entry in folder.iterdir()
        if entry.name.startswith("extract_answer") and entry.name.endswith(".txt")
    )
    if name not in available:
        raise UnknownNameError("extractor prompt", name, available)
    data = folder.joinpath(f"{name}.txt").read_bytes()
    match = re.fullmatch(
        r"\s*\[system\]\n(?P<system>.*?)\n\[user\]\n(?P<user>.*)", data.decode("utf-8"), re.S
    )
    if match is None:  # our own packaged file: a broken one must fail loudly
        raise ValueError(f"prompt {name!r} lacks its [system] and [user] sections")
    return ExtractPrompt(
        name=name,
        system=match["system"].strip(),
        user_template=match["user"].strip(),
        sha256=hashlib.sha256(data).hexdigest(),
    )


def parse_extract_reply(raw: str | None) -> tuple[str | None, str | None]:
    """``(answer, error)`` from a reply: ``(None, None)`` when the model says the response
    states no answer (:data:`NO_ANSWER_WORDS`, or ``null``).

    Think blocks are stripped first; the first JSON object with an ``answer`` field wins; a
    number is read as its text. Anything else is an error (no answer, counted failed): a
    stray word in prose is never taken for an answer.

    Examples:
        >>> parse_extract_reply('<think>The last line says 6.</think>{"answer": "6"}')
        ('6', None)
        >>> parse_extract_reply('{"answer": "None."}')
        (None, None)
        >>> parse_extract_reply("The answer is B.")
        (None, 'unreadable reply: no JSON object with an answer')
    """
    text, unclosed = final_text(raw)
    if not text:
        return None, ("no answer after the think block (unclosed)" if unclosed else "empty reply")
    decoder = json.JSONDecoder()
    for found in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, found.start())
        except ValueError:
            continue
        if not isinstance(value, dict) or "answer" not in value:
            continue
        answer = value["answer"]
        if answer is None:
            return None, None
        if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
            return None, f"unreadable reply: answer {answer!r} is not a string"
        answer = str(answer).strip()
        if answer.strip(" .!\"'`*").lower() in NO_ANSWER_WORDS:
            return None, None
        return answer, None
    return None, "unreadable reply: no JSON object with an answer"


def _response_text(response: str, limit: int) -> str:
    """The response as sent: its last ``limit`` characters when it is longer, marked cut."""
    if len(response) <= limit:
        return response
    return CUT_MARK + response[-limit:]


# ---------------------------------------------------------------------------------------------
# The OpenAI-compatible extractor
# ---------------------------------------------------------------------------------------------


class OpenAIExtractor:
    """The answer extractor over an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Args:
        config: The :class:`~crystalbench.config.judging.ExtractorConfig`.
        cache_dir: Folder of ``extractor.sqlite`` (default: :func:`default_cache_dir`).
        use_cache: ``False``: no reply cache.

    Raises:
        InputError: A key variable that is named and unset.

    Examples:
        >>> import tempfile
        >>> config = ExtractorConfig(url="http://127.0.0.1:9/v1", model="reader")
        >>> extractor = OpenAIExtractor(config, cache_dir=tempfile.mkdtemp())
        >>> extractor.name, extractor.identity()["prompt_name"]
        ('model:reader', 'extract_answer_v1')
    """

    def __init__(
        self,
        config: ExtractorConfig,
        *,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
    ) -> None:
        self.config = config
        self.prompt = load_extract_prompt(config.prompt)
        cache_path = None
        if use_cache:
            folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
            cache_path = folder / EXTRACTOR_CACHE_FILE
        self.client = JudgeClient(
            config.url,
            config.model,
            api_key=api_key_from_env(config.api_key_env, what=f"extractor {config.model}"),
            timeout=config.timeout,
            max_retries=config.max_retries,
            concurrency=config.concurrency,
            cache_path=cache_path,
            dry_run=config.dry_run,
            what="the answer extractor",
        )

    @property
    def name(self) -> str:
        """``model:<name>``."""
        return f"model:{self.config.model}"

    def identity(self) -> dict[str, Any]:
        """Model, URL, prompt, served ids, fingerprints and the options that shape a reply."""
        return {
            "kind": "openai-extractor",
            **self.client.identity(),
            "prompt_name": self.prompt.name,
            "prompt_hash": self.prompt.sha256,
            "temperature": 0.0,
            "max_tokens": self.config.max_tokens,
            "max_response_chars": self.config.max_response_chars,
        }

    def request(self, query: AnswerQuery) -> ChatRequest:
        """The request of one query (temperature 0, the JSON schema, the token limit)."""
        shown = AnswerQuery(
            query.question, _response_text(query.response, self.config.max_response_chars)
        )
        return ChatRequest(
            (
                {"role": "system", "content": self.prompt.system},
                {"role": "user", "content": self.prompt.render(shown)},
            ),
            prompt_sha256=self.prompt.sha256,
            max_tokens=self.config.max_tokens,
            json_schema=ANSWER_SCHEMA,
        )

    def extract_many(self, queries: Sequence[AnswerQuery]) -> list[ModelExtraction]:
        """One reading per query, in input order (identical queries asked once)."""
        replies = self.client.complete_many([self.request(query) for query in queries])
        return [_reading(reply) for reply in replies]

    def close(self) -> None:
        """Close the client and its cache."""
        self.client.close()


def _reading(reply: ChatReply) -> ModelExtraction:
    prompt_tokens = 0 if reply.cached else reply.prompt_tokens
    completion_tokens = 0 if reply.cached else reply.completion_tokens
    answer: str | None = None
    error: str | None = reply.error
    if error is None:
        answer, error = parse_extract_reply(reply.content)
    return ModelExtraction(answer, error, reply.cached, prompt_tokens, completion_tokens)


class ScriptedExtractor:
    """An extractor whose readings are written down: ``script[text]`` is the answer (or
    ``None``: the response states none) of the first response that contains ``text``; a
    response no key matches fails.

    Examples:
        >>> extractor = ScriptedExtractor({"6 yards": "6"})
        >>> extractor.extract_many([AnswerQuery("How long?", "It is 6 yards.")])[0].answer
        '6'
        >>> extractor.extract_many([AnswerQuery("How long?", "Hmm.")])[0].error
        'no scripted reading'
    """

    def __init__(self, script: dict[str, str | None], *, name: str = "scripted") -> None:
        self.script = script
        self.model = name
        self.queries: list[AnswerQuery] = []
        """Every query asked, in order."""

    @property
    def name(self) -> str:
        """``model:<name>``."""
        return f"model:{self.model}"

    def identity(self) -> dict[str, Any]:
        """``kind="scripted"`` and the name."""
        return {"kind": "scripted", "model": self.model}

    def extract_many(self, queries: Sequence[AnswerQuery]) -> list[ModelExtraction]:
        """The scripted readings."""
        self.queries.extend(queries)
        readings = []
        for query in queries:
            key = next((k for k in self.script if k in query.response), None)
            if key is None:
                readings.append(ModelExtraction(None, "no scripted reading"))
            else:
                readings.append(ModelExtraction(self.script[key]))
        return readings
