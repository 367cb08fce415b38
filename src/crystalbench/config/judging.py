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

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crystalbench.config.settings import JUDGE_MAX_RETRIES, JUDGE_TIMEOUT, OPENAI_API_KEY_ENV

__all__ = [
    "VERIFY_MODES",
    "ExtractorConfig",
    "Price",
    "VerifierConfig",
    "VerifierJudge",
    "VerifyMode",
]

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


class VerifierJudge(BaseModel):
    """One judge of a verifier panel (``verifier.judges``): a model, on the verifier's
    endpoint unless it names its own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    """Served model name."""
    url: str | None = None
    """Its base URL (``None``: the verifier's ``url``)."""
    api_key_env: str | None = None
    """Environment variable holding its key (``None``: the verifier's ``api_key_env``)."""


class VerifierConfig(BaseModel):
    """The step verifier: an OpenAI-compatible vision-language model asked whether a
    predicted step is correct for the item's image and question (``docs/metrics.md``,
    "Step verifier"), or a panel of several (``judges``) whose majority decides.

    Examples:
        >>> one = VerifierConfig(url="http://h/v1", model="a")
        >>> [judge.model for judge in one.panel()], one.name
        (['a'], 'a')
        >>> two = VerifierConfig(url="http://h/v1", model=["a", "b"])
        >>> [(judge.model, judge.url) for judge in two.panel()], two.name
        ([('a', 'http://h/v1'), ('b', 'http://h/v1')], 'a+b')
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    """Base URL of the endpoint, e.g. ``http://localhost:8000/v1``."""
    model: str | None = None
    """Served model name (one judge). Several names (``--verifier-model`` repeated, or a
    list) make a panel, as ``judges`` does."""
    judges: list[VerifierJudge] = Field(default_factory=list)
    """Several judges at once (not with ``model``): each step gets every judge's label, the
    majority decides (ties to the less favourable label), and the agreement between them
    (Krippendorff's alpha) is reported beside the score (``docs/metrics.md``)."""
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

    @model_validator(mode="before")
    @classmethod
    def _models_make_a_panel(cls, data: Any) -> Any:
        """``model: [a, b]`` (``--verifier-model`` repeated) is the panel ``judges: [a, b]``;
        a list of one is that model."""
        if not isinstance(data, dict) or not isinstance(data.get("model"), (list, tuple)):
            return data
        names = list(data["model"])
        if len(names) == 1:
            return {**data, "model": names[0]}
        if data.get("judges"):
            raise ValueError("give the verifier's models or its judges, not both")
        return {**data, "model": None, "judges": [{"model": name} for name in names]}

    @model_validator(mode="after")
    def _one_model_or_judges(self) -> VerifierConfig:
        if self.model is not None and self.judges:
            raise ValueError(
                "give the verifier's model or its judges, not both (verifier.model "
                f"{self.model!r}, verifier.judges {[j.model for j in self.judges]})"
            )
        if self.model is None and not self.judges:
            raise ValueError(
                "the verifier needs a model (--verifier-model, verifier.model) or judges "
                "(verifier.judges)"
            )
        names = [judge.model for judge in self.judges]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"verifier judges must be distinct models: {', '.join(repeated)}")
        return self

    @property
    def name(self) -> str:
        """The model, or the panel's models joined by ``+``."""
        return self.model if self.model is not None else "+".join(j.model for j in self.judges)

    def panel(self) -> list[VerifierConfig]:
        """One single-judge config per judge (the config itself without ``judges``)."""
        if not self.judges:
            return [self]
        return [
            self.model_copy(
                update={
                    "model": judge.model,
                    "url": judge.url or self.url,
                    "api_key_env": judge.api_key_env or self.api_key_env,
                    "judges": [],
                }
            )
            for judge in self.judges
        ]


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
    encoder: str | None = None
    """Sentence encoder of the cosine bands (``by_band``): each step of a line that carries
    ``reference_steps`` is banded by its best cosine to them; ``None``: no bands."""
    bands: tuple[float, ...] = (0.20, 0.35, 0.50, 0.70)
    """Band edges (the paper's Table 3)."""
