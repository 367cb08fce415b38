"""Configuration of the model calls that judge beyond the answer judge: the step verifier
and the answer extractor.

:class:`VerifierConfig` is the ``verifier`` section of a
:class:`~crystalbench.config.scoring.ScoreConfig` (``crystal score --verify unmatched
--verifier-url URL --verifier-model NAME``; the rest from ``--config FILE``);
:class:`ExtractorConfig` is its ``extractor`` section (``--extractor-url URL
--extractor-model NAME``). Their :class:`Price` tables give the cost estimate printed before
a run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from crystalbench.config.settings import JUDGE_MAX_RETRIES, JUDGE_TIMEOUT, OPENAI_API_KEY_ENV

__all__ = ["VERIFY_MODES", "ExtractorConfig", "Price", "VerifierConfig", "VerifyMode"]

VerifyMode = Literal["none", "unmatched", "all"]
"""Which predicted steps the verifier checks: none (the paper), those no reference step
matched, or every step."""
VERIFY_MODES: tuple[str, ...] = ("none", "unmatched", "all")


class Price(BaseModel):
    """What one model's tokens cost, in any currency (the estimate prints the same unit)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_million: float = Field(ge=0.0)
    """Price of a million prompt tokens."""
    output_per_million: float = Field(ge=0.0)
    """Price of a million completion tokens."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The price of these tokens.

        Examples:
            >>> Price(input_per_million=1.0, output_per_million=4.0).cost(500_000, 250_000)
            1.5
        """
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1e6


class VerifierConfig(BaseModel):
    """The step verifier: an OpenAI-compatible vision-language model asked whether a
    predicted step is correct for the item's image and question (``docs/metrics.md``,
    "Step verifier")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    """Base URL of the endpoint, e.g. ``http://localhost:8000/v1``."""
    model: str
    """Served model name."""
    api_key_env: str = OPENAI_API_KEY_ENV
    """Environment variable holding the key (``OPENAI_API_KEY`` may be unset)."""
    timeout: float = JUDGE_TIMEOUT
    """Seconds per request."""
    max_retries: int = Field(JUDGE_MAX_RETRIES, ge=0)
    """Retries with back-off on connection errors, 408, 409, 429 and 5xx."""
    concurrency: int = Field(8, ge=1)
    """Requests in flight at once."""
    probability: Literal["auto", "logprobs", "json"] = "auto"
    """Where ``p_correct`` comes from: ``logprobs`` (one constrained yes/no token,
    P(yes) / (P(yes) + P(no))), ``json`` (the probability the JSON reply states), ``auto``
    (logprobs where the server gives them, else the JSON reply's)."""
    reasoning: bool = False
    """The model thinks before it answers (a reasoning model): think blocks are stripped
    before a verdict is read, and logprob scoring is refused (its first token is not a
    verdict)."""
    with_reference: bool = False
    """Show the verifier the item's reference chain (never the gold answer)."""
    with_image: bool = True
    """Send the item's image (a data URL); an item without an image file is asked without."""
    max_tokens: int = Field(256, ge=1)
    """Reply length limit of the JSON verdict (a reasoning model needs more)."""
    prompt: str = "verify_step_v1"
    """Prompt file under ``crystalbench/prompts``."""
    dry_run: bool = False
    """Print the requests and their estimated tokens and send none (every step to check is
    then counted unverified)."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Price per model name (the served name given in ``model``), for the cost estimate
    printed before a run."""


class ExtractorConfig(BaseModel):
    """The answer extractor: an OpenAI-compatible model asked for the final answer of a
    response where no answer rule committed (``docs/parsing.md``, "Model-based extraction").
    It sees the question and the response, never the gold answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    """Base URL of the endpoint, e.g. ``http://localhost:8000/v1``."""
    model: str
    """Served model name."""
    api_key_env: str = OPENAI_API_KEY_ENV
    """Environment variable holding the key (``OPENAI_API_KEY`` may be unset)."""
    timeout: float = JUDGE_TIMEOUT
    """Seconds per request."""
    max_retries: int = Field(JUDGE_MAX_RETRIES, ge=0)
    """Retries with back-off on connection errors, 408, 409, 429 and 5xx."""
    concurrency: int = Field(8, ge=1)
    """Requests in flight at once."""
    max_tokens: int = Field(128, ge=1)
    """Reply length limit of the JSON answer (a reasoning model needs more)."""
    max_response_chars: int = Field(8000, ge=200)
    """Longest stretch of a response sent: a longer one is sent as its last this many
    characters (an answer stands at the end), marked as cut."""
    prompt: str = "extract_answer_v1"
    """Prompt file under ``crystalbench/prompts``."""
    dry_run: bool = False
    """Print the requests and their estimated tokens and send none (every item to ask is
    then counted failed and keeps no answer)."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Price per model name, for the cost estimate printed before a run."""


class VerifierValidationConfig(BaseModel):
    """What ``crystal validate verifier`` measures: a step verifier against human step
    labels in VisualProcessBench's ``test.jsonl`` layout
    (:mod:`crystalbench.validation.verifier`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    labels: str
    """The labels file (one JSON object a line: ``image``, ``question``, ``answer``,
    ``response`` with ``steps`` and ``process_correctness``, ``policy_model``,
    ``data_source``)."""
    images: str | None = None
    """Folder the relative image paths are under (default: the labels file's folder); a
    path that leaves it is refused."""
    verifier: VerifierConfig
    """The verifier's endpoint, model and options."""
    threshold: float | None = Field(None, ge=0.0, le=1.0)
    """A fixed decision threshold on ``p_correct`` (then every solution is test); ``None``:
    fitted on the dev split."""
    dev_every: int = Field(3, ge=2)
    """Every ``dev_every``-th solution (lines 1, 1 + k, 1 + 2k...) is the dev split the
    threshold is fitted on; the others are the test split every figure is reported on."""
    resamples: int = Field(1000, ge=0)
    """Bootstrap resamples of the test solutions (0: no interval)."""
    confidence: float = Field(0.95, ge=0.5, le=0.999)
    """Confidence level of the interval."""
    seed: int = 0
    """Seed of the bootstrap, recorded in the output."""
    use_cache: bool = True
    """Read and write the verifier's reply cache."""
    cache_dir: str | None = None
    """The cache folder (default ``$CRYSTALBENCH_CACHE_DIR``, ``~/.cache/crystalbench``)."""
