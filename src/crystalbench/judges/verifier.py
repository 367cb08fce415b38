"""The step verifier: a vision-language model says whether one predicted step is correct.

For a step, the model sees the item's image, the question and the steps the chain wrote
before it (never the gold answer; the reference chain only when
:attr:`~crystalbench.config.judging.VerifierConfig.with_reference` says so), through the
judge layer (:class:`~crystalbench.judges.client.JudgeClient`: one client, one reply cache,
counted tokens). Two requests per step at most:

1. **the label**: a JSON object under a JSON schema, ``{"label", "p_correct", "reason"}``,
   with the label one of ``supported``, ``wrong_perception``, ``wrong_logic``,
   ``irrelevant`` (think blocks are stripped before it is read);
2. **the probability** (``probability`` ``logprobs`` or ``auto``): one token constrained to
   ``yes`` / ``no`` (vLLM's guided choice) with its top log-probabilities; ``p_correct`` is
   P(yes) / (P(yes) + P(no)), as MM-PRM scores a step. A server that gives no logprobs
   (``auto``: the JSON reply's probability is kept, and the request is not made again), or a
   model whose first token is not a verdict (a reasoning model's ``<think>`` or "So"), cannot
   be scored so: ``logprobs`` then refuses with a message, ``auto`` falls back to the JSON
   reply. A config that declares a reasoning model with ``probability: logprobs`` is refused
   when the verifier is built.

A failed call is a verdict with ``label=None`` and ``error``: counted unverified by the
scoring step (:mod:`crystalbench.scoring.verify`), never a wrong step.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from crystalbench._internal.openai_client import api_key_from_env
from crystalbench._internal.paths import default_cache_dir
from crystalbench.config.judging import VerifierConfig
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.judges.client import (
    ChatReply,
    ChatRequest,
    JudgeClient,
    final_text,
    image_data_url,
    thinks_first,
)
from crystalbench.types import StepLabel, StepVerdict

__all__ = [
    "LABELS",
    "OpenAIVerifier",
    "ScriptedVerifier",
    "StepCheck",
    "StepVerifier",
    "VerifyPrompt",
    "load_verify_prompt",
    "p_yes",
    "parse_verify_reply",
]

LABELS: tuple[StepLabel, ...] = ("supported", "wrong_perception", "wrong_logic", "irrelevant")
"""The verifier's labels, in the order summaries list them."""

VERIFIER_CACHE_FILE = "verifier.sqlite"
"""The verifier's reply cache, in the cache folder."""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": list(LABELS)},
        "p_correct": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
    "required": ["label", "p_correct", "reason"],
    "additionalProperties": False,
}
"""The JSON schema of the label reply (sent as ``response_format``)."""


class StepCheck(NamedTuple):
    """One question for the verifier: a step in its context."""

    question: str
    """The benchmark question (options included as the item shows them)."""
    step: str
    """The predicted step to check."""
    prior_steps: tuple[str, ...]
    """The predicted steps before it, in order."""
    image: str | None = None
    """Path of the item's image file (``None``: asked without an image)."""
    reference: tuple[str, ...] | None = None
    """The reference chain, when the config shows it; else ``None``."""


@runtime_checkable
class StepVerifier(Protocol):
    """Labels predicted steps. Never raises on a failed call."""

    def identity(self) -> dict[str, Any]:
        """Model, URL, prompt hash and options, for ``summary.json``."""
        ...

    def verify_many(self, checks: Sequence[StepCheck]) -> list[StepVerdict]:
        """One verdict per check, in order (``pred`` is 0: the caller sets it)."""
        ...


# ---------------------------------------------------------------------------------------------
# Prompt and replies
# ---------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(question|prior_steps|step|reference)\}\}")


@dataclass(frozen=True)
class VerifyPrompt:
    """The versioned verifier prompt: ``[system]``, ``[user]`` (with ``{{question}}``,
    ``{{prior_steps}}``, ``{{step}}``, ``{{reference}}``) and ``[yes_no]`` (the one-token
    question). ``sha256`` hashes the file's bytes."""

    name: str
    system: str
    user_template: str
    yes_no: str
    sha256: str

    def render(self, check: StepCheck) -> str:
        """The user text for one check (values inserted verbatim, never re-expanded).

        Examples:
            >>> prompt = load_verify_prompt()
            >>> text = prompt.render(StepCheck("How many?", "There are 3.", ("I count.",)))
            >>> "1. I count." in text and "There are 3." in text and "Reference" not in text
            True
        """
        prior = "\n".join(f"{k}. {s}" for k, s in enumerate(check.prior_steps, start=1))
        reference = ""
        if check.reference is not None:
            chain = "\n".join(f"{k}. {s}" for k, s in enumerate(check.reference, start=1))
            reference = f"Reference solution (one valid way, not the only one):\n{chain}\n\n"
        values = {
            "question": check.question,
            "prior_steps": prior or "(none: this is the first step)",
            "step": check.step,
            "reference": reference,
        }
        return _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.user_template)


def load_verify_prompt(name: str = "verify_step_v1") -> VerifyPrompt:
    """Load ``crystalbench/prompts/<name>.txt`` (a ``verify_step`` prompt).

    Raises:
        UnknownNameError: No such prompt file.

    Examples:
        >>> prompt = load_verify_prompt()
        >>> prompt.name, len(prompt.sha256), "yes or no" in prompt.yes_no
        ('verify_step_v1', 64, True)
    """
    folder = resources.files("crystalbench").joinpath("prompts")
    available = sorted(
        entry.name[: -len(".txt")]
        for entry in folder.iterdir()
        if entry.name.startswith("verify_step") and entry.name.endswith(".txt")
    )
    if name not in available:
        raise UnknownNameError("verifier prompt", name, available)
    data = folder.joinpath(f"{name}.txt").read_bytes()
    match = re.fullmatch(
        r"\s*\[system\]\n(?P<system>.*?)\n\[user\]\n(?P<user>.*?)\n\[yes_no\]\n(?P<yes>.*)",
        data.decode("utf-8"),
        re.S,
    )
    if match is None:  # our own packaged file: a broken one must fail loudly
        raise ValueError(f"prompt {name!r} lacks its [system], [user] and [yes_no] sections")
    return VerifyPrompt(
        name=name,
        system=match["system"].strip(),
        user_template=match["user"].strip(),
        yes_no=match["yes"].strip(),
        sha256=hashlib.sha256(data).hexdigest(),
    )


def parse_verify_reply(
    raw: str | None,
) -> tuple[StepLabel | None, float | None, str | None, str | None]:
    """``(label, p_correct, reason, error)`` from a label reply.

    Think blocks are stripped first; the first JSON object with a ``label`` field wins; a
    label outside :data:`LABELS` is an error; a ``p_correct`` that is not a number in [0, 1]
    is dropped (``None``).

    Examples:
        >>> parse_verify_reply('<think>hm</think>{"label": "wrong_logic", "p_correct": 0.2}')
        ('wrong_logic', 0.2, None, None)
        >>> parse_verify_reply('{"label": "maybe"}')[3]
        "label 'maybe' is not one of supported, wrong_perception, wrong_logic, irrelevant"
        >>> parse_verify_reply("<think>Let me look")[3]
        'no verdict after the think block (unclosed)'
    """
    text, unclosed = final_text(raw)
    if not text:
        return (
            None,
            None,
            None,
            ("no verdict after the think block (unclosed)" if unclosed else "empty reply"),
        )
    decoder = json.JSONDecoder()
    for found in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, found.start())
        except ValueError:
            continue
        if not isinstance(value, dict) or "label" not in value:
            continue
        label = value["label"]
        if label not in LABELS:
            return None, None, None, f"label {label!r} is not one of {', '.join(LABELS)}"
        p = value.get("p_correct")
        probability = (
            float(p)
            if isinstance(p, (int, float)) and not isinstance(p, bool) and 0.0 <= p <= 1.0
            else None
        )
        reason = value.get("reason")
        return label, probability, str(reason) if reason is not None else None, None
    return None, None, None, "unparseable reply"


def p_yes(top_logprobs: Sequence[tuple[str, float]] | None) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first token's alternatives (case and spaces
    ignored); ``None`` when neither word is among them.

    Examples:
        >>> round(p_yes([("yes", math.log(0.6)), ("no", math.log(0.2)), ("So", -3.0)]), 6)
        0.75
        >>> p_yes([("So", -0.1)]) is None
        True
    """
    if not top_logprobs:
        return None
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in top_logprobs:
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return None if total <= 0.0 else mass["yes"] / total


# ---------------------------------------------------------------------------------------------
# The OpenAI-compatible verifier
# ---------------------------------------------------------------------------------------------


class OpenAIVerifier:
    """The step verifier over an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Args:
        config: The :class:`~crystalbench.config.judging.VerifierConfig`.
        cache_dir: Folder of ``verifier.sqlite`` (default: :func:`default_cache_dir`).
        use_cache: ``False``: no reply cache.

    Raises:
        InputError: A reasoning model with ``probability: logprobs`` (its first token is
            not a verdict), or a key variable that is named and unset.

    Examples:
        >>> import tempfile
        >>> config = VerifierConfig(url="http://127.0.0.1:9/v1", model="vlm")
        >>> verifier = OpenAIVerifier(config, cache_dir=tempfile.mkdtemp())
        >>> verifier.identity()["model"], verifier.identity()["prompt_name"]
        ('vlm', 'verify_step_v1')
    """

    def __init__(
        self,
        config: VerifierConfig,
        *,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
    ) -> None:
        if config.reasoning and config.probability == "logprobs":
            raise InputError(
                f"verifier {config.model} is declared a reasoning model (it thinks before it "
                "answers), so its first token is not a verdict and logprob scoring cannot "
                "read it: set verifier.probability to json or auto",
                field="verifier.probability",
            )
        if config.model is None:  # a panel's config: build_verifier makes one per judge
            raise ValueError("OpenAIVerifier takes one judge: use judges.panel.build_verifier")
        self.config = config
        self.prompt = load_verify_prompt(config.prompt)
        cache_path = None
        if use_cache:
            folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
            cache_path = folder / VERIFIER_CACHE_FILE
        self.client = JudgeClient(
            config.url,
            config.model,
            api_key=api_key_from_env(config.api_key_env, what=f"verifier {config.model}"),
            timeout=config.timeout,
            max_retries=config.max_retries,
            concurrency=config.concurrency,
            cache_path=cache_path,
            dry_run=config.dry_run,
            what="the step verifier",
        )
        self.logprobs_available: bool | None = (
            False if config.probability == "json" or config.reasoning else None
        )
        """Whether the server gives logprobs a verdict token can be read from (``None``: not
        known yet)."""
        self.logprob_fallbacks = 0
        """Steps whose probability came from the JSON reply because logprobs were unusable."""
        self._images: dict[str, tuple[str, str] | str] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``model:<name>``: the ``judge`` of every verdict this verifier gives."""
        return f"model:{self.config.model}"

    def identity(self) -> dict[str, Any]:
        """Model, URL, prompt, served ids, fingerprints and the options that shape a verdict."""
        return {
            "kind": "openai-verifier",
            **self.client.identity(),
            "prompt_name": self.prompt.name,
            "prompt_hash": self.prompt.sha256,
            "probability": self.config.probability,
            "logprobs_used": bool(self.logprobs_available),
            "logprob_fallbacks": self.logprob_fallbacks,
            "reasoning": self.config.reasoning,
            "with_reference": self.config.with_reference,
            "with_image": self.config.with_image,
            "temperature": 0.0,
            "max_tokens": self.config.max_tokens,
        }

    # ------------------------------------------------------------------ requests
    def _image(self, path: str | None) -> tuple[str, str] | str | None:
        """``(data URL, sha256)``, an error message, or ``None`` (no image to send)."""
        if path is None or not self.config.with_image:
            return None
        with self._lock:
            if path in self._images:
                return self._images[path]
        try:
            found: tuple[str, str] | str = image_data_url(Path(path).read_bytes())
        except OSError as error:
            found = f"image unreadable: {path}: {error.strerror or error}"
        with self._lock:
            self._images[path] = found
        return found

    def requests(self, check: StepCheck) -> tuple[ChatRequest, ChatRequest] | str:
        """The label request and the yes/no request of one check (or why none can be made)."""
        image = self._image(check.image)
        if isinstance(image, str):
            return image
        user = self.prompt.render(check)

        def messages(text: str) -> tuple[dict[str, Any], ...]:
            content: Any = text
            if image is not None:
                content = [
                    {"type": "image_url", "image_url": {"url": image[0]}},
                    {"type": "text", "text": text},
                ]
            return (
                {"role": "system", "content": self.prompt.system},
                {"role": "user", "content": content},
            )

        digest = image[1] if image is not None else None
        label = ChatRequest(
            messages(user),
            prompt_sha256=self.prompt.sha256,
            image_sha256=digest,
            max_tokens=self.config.max_tokens,
            json_schema=VERDICT_SCHEMA,
        )
        yes_no = ChatRequest(
            messages(f"{user}\n\n{self.prompt.yes_no}"),
            prompt_sha256=self.prompt.sha256,
            image_sha256=digest,
            max_tokens=1,
            guided_choice=("yes", "no"),
            logprobs=20,
        )
        return label, yes_no

    def verify_many(self, checks: Sequence[StepCheck]) -> list[StepVerdict]:
        """One verdict per check, in input order (identical checks asked once)."""
        built = [self.requests(check) for check in checks]
        labels = [b[0] for b in built if not isinstance(b, str)]
        label_replies = dict(zip(labels, self.client.complete_many(labels), strict=True))
        yes_no_replies: dict[ChatRequest, ChatReply] = {}
        if self.logprobs_available is not False:
            asked = [b[1] for b in built if not isinstance(b, str)]
            if self.logprobs_available is None and asked:  # one probe first
                yes_no_replies[asked[0]] = self.client.complete(asked[0])
                self._learn(yes_no_replies[asked[0]])
            if self.logprobs_available is not False:
                rest = [request for request in asked if request not in yes_no_replies]
                yes_no_replies.update(zip(rest, self.client.complete_many(rest), strict=True))
        return [
            self._verdict(b, label_replies, yes_no_replies)
            if not isinstance(b, str)
            else StepVerdict(pred=0, label=None, judge=self.name, error=b)
            for b in built
        ]

    def _learn(self, reply: ChatReply) -> None:
        """Whether logprobs can be used, from the first yes/no reply (a failed call says
        nothing)."""
        if reply.error is not None:
            return
        usable = reply.top_logprobs is not None and not thinks_first(reply.top_logprobs[0][0])
        if usable or self.config.probability == "auto":
            self.logprobs_available = usable

    def _verdict(
        self,
        built: tuple[ChatRequest, ChatRequest],
        label_replies: dict[ChatRequest, ChatReply],
        yes_no_replies: dict[ChatRequest, ChatReply],
    ) -> StepVerdict:
        reply = label_replies[built[0]]
        if reply.error is not None:
            return StepVerdict(pred=0, label=None, judge=self.name, error=reply.error)
        label, probability, reason, error = parse_verify_reply(reply.content)
        if error is not None:
            return StepVerdict(pred=0, label=None, judge=self.name, reason=reason, error=error)
        yes_no = yes_no_replies.get(built[1])
        if yes_no is not None:
            scored, refusal = self._probability(yes_no)
            if refusal is not None:
                return StepVerdict(pred=0, label=None, judge=self.name, error=refusal)
            if scored is not None:
                probability = scored
            else:
                with self._lock:
                    self.logprob_fallbacks += 1
        elif self.config.probability != "json":
            with self._lock:
                self.logprob_fallbacks += 1
        return StepVerdict(
            pred=0, label=label, p_correct=probability, reason=reason, judge=self.name
        )

    def _probability(self, reply: ChatReply) -> tuple[float | None, str | None]:
        """``(p from the logprobs or None, refusal message or None)``."""
        if reply.error is not None:
            if self.config.probability == "logprobs":
                return None, reply.error
            return None, None
        first = reply.top_logprobs[0][0] if reply.top_logprobs else None
        if first is not None and thinks_first(first):
            if self.config.probability == "logprobs":
                return None, (
                    f"logprob scoring refused: the model's first token is {first!r}, not a "
                    "verdict (a model that thinks first); set verifier.probability to json"
                )
            return None, None
        probability = p_yes(reply.top_logprobs)
        if probability is None and self.config.probability == "logprobs":
            return None, "the server gave no logprobs for yes/no"
        return probability, None

    def close(self) -> None:
        """Close the client and its cache."""
        self.client.close()


class ScriptedVerifier:
    """A verifier whose verdicts are written down: ``script[step]`` is a label (or a
    :class:`StepVerdict`, or ``None`` for a failure); a step not in it fails.

    Examples:
        >>> verifier = ScriptedVerifier({"There are 3 cats.": "wrong_perception"})
        >>> verifier.verify_many([StepCheck("How many?", "There are 3 cats.", ())])[0].label
        'wrong_perception'
    """

    def __init__(self, script: dict[str, Any], *, name: str = "scripted") -> None:
        self.script = script
        self.model = name
        self.checks: list[StepCheck] = []
        """Every check asked, in order."""

    def identity(self) -> dict[str, Any]:
        """``kind="scripted"`` and the name."""
        return {"kind": "scripted", "model": self.model}

    def verify_many(self, checks: Sequence[StepCheck]) -> list[StepVerdict]:
        """The scripted verdicts."""
        self.checks.extend(checks)
        verdicts = []
        for check in checks:
            value = self.script.get(check.step)
            judge = f"model:{self.model}"
            if isinstance(value, StepVerdict):
                verdicts.append(value)
            elif value in LABELS:
                p = 1.0 if value == "supported" else 0.0
                verdicts.append(
                    StepVerdict(pred=0, label=value, p_correct=p, reason="scripted", judge=judge)
                )
            else:
                verdicts.append(
                    StepVerdict(pred=0, label=None, judge=judge, error="no scripted verdict")
                )
        return verdicts
