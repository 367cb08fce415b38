"""The configuration of a reference build: models, prompts, seeds, thresholds, rounds, engine.

:class:`ReferencesConfig` loads from YAML (or JSON) like the other configurations; command-line
flags override the file (:func:`load_references_config`), and the configuration is written
into ``DIR/config.json`` and ``DIR/summary.json``. Resuming or regenerating in ``DIR``
refuses a configuration whose *content* fields differ from the stored one (models, prompts,
seeds, sampling, encoder, thresholds: :meth:`ReferencesConfig.content`), so one folder never
mixes two builds; operational fields (URLs, concurrency, timeouts, engine, rounds) may change.

Example YAML::

    items: data/items            # an item set (`crystal data build` output)
    generators:
      - name: qwen72b
        model: Qwen/Qwen2.5-VL-72B-Instruct
        base_urls: [http://node1:8000/v1, http://node2:8000/v1]   # replicas
        concurrency: 16
      - {name: gemma27b, model: google/gemma-3-27b-it, base_urls: [http://node3:8000/v1]}
    validator: {name: molmo, model: allenai/Molmo-72B-0924, base_urls: [http://node4:8000/v1]}
    theta: 0.78
    max_rounds: 3
    samples: 1
    generation: {temperature: 0.7, top_p: 0.95, max_tokens: 2048}
    precedence: true             # infer which steps are interchangeable (reference_precedence)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from crystalbench.config.scoring import load_config_with_overrides
from crystalbench.config.settings import (
    CACHE_DIR_ENV,
    INFER_MAX_ATTEMPTS,
    INFER_MAX_RETRY_AFTER,
    INFER_TIMEOUT,
    OPENAI_API_KEY_ENV,
    REFERENCES_ALTERNATIVES,
    REFERENCES_CONCURRENCY,
    REFERENCES_ENCODER,
    REFERENCES_GENERATORS,
    REFERENCES_MAX_ROUNDS,
    REFERENCES_MAX_TOKENS,
    REFERENCES_MIN_CHAINS,
    REFERENCES_MIN_SUPPORT,
    REFERENCES_OUTPUT_ATTEMPTS,
    REFERENCES_PRECEDENCE,
    REFERENCES_PRECEDENCE_MIN_CHAINS,
    REFERENCES_PRECEDENCE_SHARE,
    REFERENCES_RAY_BATCH_SIZE,
    REFERENCES_RAY_CONCURRENCY,
    REFERENCES_SAMPLES,
    REFERENCES_SEED,
    REFERENCES_TEMPERATURE,
    REFERENCES_THETA,
    REFERENCES_TOP_P,
    REFERENCES_VALIDATOR,
    REFERENCES_VALIDATOR_MAX_TOKENS,
    REFERENCES_VALIDATOR_TEMPERATURE,
)
from crystalbench.errors import InputError
from crystalbench.inference.records import GenerationSettings
from crystalbench.inference.retry import RetryPolicy

ENGINES = ("local", "ray")
"""``--engine`` values."""


class ModelEndpoint(BaseModel):
    """One generator or the validator: a name, the served model, where it is served."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Label written into records and provenance (unique among the generators)."""
    model: str | None = None
    """Model name the server expects (``--served-model-name``; default: ``name``)."""
    base_urls: list[str] = Field(default_factory=list)
    """OpenAI-compatible base URLs ending in ``/v1``; several are replicas of one model."""
    concurrency: int = Field(REFERENCES_CONCURRENCY, ge=1)
    """Requests in flight per base URL."""
    api_key_env: str = OPENAI_API_KEY_ENV
    """Environment variable holding the API key (never the key itself)."""
    extra_body: dict[str, Any] | None = None
    """JSON fields added to every request (``top_k``, ``chat_template_kwargs``...)."""
    generation: GenerationSettings | None = None
    """Sampling settings for this model only (``None``: the configuration's)."""
    vllm: dict[str, Any] | None = None
    """``--engine ray`` with ``ray.processor: vllm``: engine arguments of this model
    (``tensor_parallel_size``, ``max_model_len``...) and ``model_source`` (hub id or path)."""

    @property
    def served(self) -> str:
        """The model name sent in requests."""
        return self.model or self.name

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        value = value.strip()
        if not value or "|" in value:
            raise ValueError("a model name must be non-empty and contain no '|'")
        return value


class RayOptions(BaseModel):
    """Options of ``--engine ray``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    address: str | None = None
    """Cluster address for ``ray.init`` (``None``: start or join a local instance)."""
    num_cpus: int | None = Field(None, ge=1)
    """CPUs of a local instance (``None``: Ray's default)."""
    batch_size: int = Field(REFERENCES_RAY_BATCH_SIZE, ge=1)
    """Rows per Ray Data batch."""
    concurrency: int = Field(REFERENCES_RAY_CONCURRENCY, ge=1)
    """Actors per stage (each with its own HTTP clients)."""
    processor: Literal["http", "vllm"] = "http"
    """``http``: requests to the models' endpoints from Ray Data actors (the same backend
    as the local engine); ``vllm``: Ray Data LLM ``vLLMEngineProcessorConfig`` engines on
    the cluster's GPUs (each model's ``vllm`` options)."""


class ReferencesConfig(BaseModel):
    """Every choice of one reference build. Defaults name the paper's models."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    environment_variables: ClassVar[dict[str, str]] = {"cache_dir": CACHE_DIR_ENV}
    """Fields the config loader reads from these environment variables when no flag sets them."""

    # --- input ------------------------------------------------------------------------------
    items: str | None = None
    """The item set (``crystal data build`` output) or any benchmark spec; existing
    ``reference_steps`` are ignored."""
    image_root: str | None = None
    """A folder item images may also lie under."""
    ids: list[str] | None = None
    """Only these item ids (``None``: all)."""
    limit: int | None = Field(None, ge=1)
    """Only the first N items."""

    # --- models -------------------------------------------------------------------------------
    generators: list[ModelEndpoint] = Field(
        default_factory=lambda: [ModelEndpoint(name=name) for name in REFERENCES_GENERATORS]
    )
    """The generators, one entry per model (replicas in ``base_urls``)."""
    validator: ModelEndpoint | None = Field(
        default_factory=lambda: ModelEndpoint(name=REFERENCES_VALIDATOR)
    )
    """The validator (``None`` or ``validate: false``: every consensus chain is accepted)."""
    validate_chains: bool = Field(True, alias="validate")
    """Run the validator gate (``--no-validator`` turns it off)."""

    # --- prompts and sampling -----------------------------------------------------------------
    generate_prompt: str = "references_generate_v1"
    """Generation prompt: a built-in name or a file with ``{question}``, ``{options}``,
    ``{answer}``."""
    validate_prompt: str = "references_validate_v1"
    """Validator prompt: a built-in name or a file with ``{question}``, ``{options}``,
    ``{answer}``, ``{chain}``."""
    generation: GenerationSettings = Field(
        default_factory=lambda: GenerationSettings(
            temperature=REFERENCES_TEMPERATURE,
            top_p=REFERENCES_TOP_P,
            max_tokens=REFERENCES_MAX_TOKENS,
        )
    )
    """Generators' sampling settings (the seed is set per request)."""
    validation: GenerationSettings = Field(
        default_factory=lambda: GenerationSettings(
            temperature=REFERENCES_VALIDATOR_TEMPERATURE, max_tokens=REFERENCES_VALIDATOR_MAX_TOKENS
        )
    )
    """Validator's sampling settings (the seed is set per request)."""
    samples: int = Field(REFERENCES_SAMPLES, ge=1)
    """Candidate chains per generator, item and round."""
    seed: int = REFERENCES_SEED
    """Base of every request's seed (with item, model, round, sample and attempt)."""
    output_attempts: int = Field(REFERENCES_OUTPUT_ATTEMPTS, ge=1)
    """Requests per slot when the output is unusable or the request failed."""

    # --- consensus ----------------------------------------------------------------------------
    encoder: str = REFERENCES_ENCODER
    """Sentence encoder of the candidate steps (``hash`` for smoke runs)."""
    use_cache: bool = True
    """Keep step embeddings in the on-disk cache."""
    cache_dir: str | None = None
    """Embedding cache folder (``None``: the default cache)."""
    device: str | None = None
    """Where the encoder runs (``cuda``, ``cpu``...; ``None``: a GPU if visible)."""
    theta: float = Field(REFERENCES_THETA, ge=-1.0, le=1.0)
    """Link steps of different chains at cosine ``>= theta``."""
    min_support: int = Field(REFERENCES_MIN_SUPPORT, ge=1)
    """Keep clusters with members from at least this many chains (1: all, as the paper)."""
    min_chains: int = Field(REFERENCES_MIN_CHAINS, ge=1)
    """Valid candidate chains an item needs in a round for a consensus."""
    max_rounds: int = Field(REFERENCES_MAX_ROUNDS, ge=1)
    """Rounds before an item still rejected is reported."""
    alternatives: int = Field(REFERENCES_ALTERNATIVES, ge=0)
    """Candidate chains of the accepted round kept as alternative references
    (:mod:`crystalbench.references.alternatives`); 0 keeps the consensus only, as the paper."""
    precedence: bool = REFERENCES_PRECEDENCE
    """Infer each accepted item's ``reference_precedence`` from the candidate chains of its
    accepted round (:mod:`crystalbench.references.precedence`): consensus steps the chains
    state in either order become interchangeable. Off: the chain's own order, as the paper."""
    precedence_share: float = Field(REFERENCES_PRECEDENCE_SHARE, gt=0.5, le=1.0)
    """Share of the chains holding two consensus steps that must state them in the consensus
    order for an edge between them (1.0: all of them)."""
    precedence_min_chains: int = Field(REFERENCES_PRECEDENCE_MIN_CHAINS, ge=1)
    """Chains that must hold two consensus steps for an edge of their own."""

    # --- requests -----------------------------------------------------------------------------
    timeout: float = Field(INFER_TIMEOUT, gt=0)
    """Seconds one request may take in all."""
    max_attempts: int = Field(INFER_MAX_ATTEMPTS, ge=1)
    """HTTP attempts per request on timeouts, connection errors, 429 and 5xx."""
    max_retry_after: float = Field(INFER_MAX_RETRY_AFTER, ge=0)
    """Longest ``Retry-After`` honoured."""
    max_image_side: int | None = Field(None, ge=28)
    """Longest image side sent (``None``: the inference default)."""
    preflight: bool = True
    """Check every endpoint (``/v1/models``) before the first request."""
    fsync_interval: float = Field(1.0, ge=0.0)
    """Seconds between ``fsync`` calls of the journals (0: after every record)."""

    # --- engine -------------------------------------------------------------------------------
    engine: Literal["local", "ray"] = "local"
    """``local`` (asyncio in this process) or ``ray`` (Ray Data; see :class:`RayOptions`)."""
    ray: RayOptions = Field(default_factory=RayOptions)
    """Options of the ``ray`` engine."""

    @field_validator("ids")
    @classmethod
    def _no_empty_ids(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        kept = [part.strip() for part in value if part.strip()]
        return kept or None

    @model_validator(mode="after")
    def _consistent(self) -> ReferencesConfig:
        if not self.generators:
            raise ValueError("at least one generator is needed")
        names = [g.name for g in self.generators]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"generator names must be unique: {', '.join(repeated)}")
        if len(self.generators) * self.samples < self.min_chains:
            # Name a generator given without its URL first: that is usually the slip.
            unserved = [g.name for g in self.generators if not g.base_urls]
            example = unserved[0] if len(unserved) == 1 else "NAME"
            first = (
                "generator "
                + ", ".join(repr(name) for name in unserved)
                + f" has no base URL (--generator '{example}=http://HOST:PORT/v1'); and "
                if unserved
                else ""
            )
            raise ValueError(
                f"{first}consensus needs min_chains={self.min_chains} chains per round, but "
                f"{len(self.generators)} generator(s) x {self.samples} sample(s) give only "
                f"{len(self.generators) * self.samples}: give {self.min_chains} generators or "
                "more (repeat --generator), raise samples or lower min_chains"
            )
        return self

    @property
    def validating(self) -> bool:
        """Whether the validator gate runs."""
        return self.validate_chains and self.validator is not None

    def retry_policy(self) -> RetryPolicy:
        """The HTTP retry policy."""
        return RetryPolicy(max_attempts=self.max_attempts, max_retry_after=self.max_retry_after)

    def settings_for(self, endpoint: ModelEndpoint) -> GenerationSettings:
        """A generator's sampling settings (its own, else the configuration's)."""
        return endpoint.generation or self.generation

    def content(self) -> dict[str, Any]:
        """The fields that decide what a build produces (compared when resuming)."""
        return {
            "generators": [
                {"name": g.name, "model": g.served, "generation": self.settings_for(g).model_dump()}
                for g in self.generators
            ],
            "validator": (
                {"name": self.validator.name, "model": self.validator.served}
                if self.validating and self.validator is not None
                else None
            ),
            "validation": self.validation.model_dump() if self.validating else None,
            "generate_prompt": self.generate_prompt,
            "validate_prompt": self.validate_prompt if self.validating else None,
            "samples": self.samples,
            "seed": self.seed,
            "output_attempts": self.output_attempts,
            "encoder": self.encoder,
            "theta": self.theta,
            "min_support": self.min_support,
            "min_chains": self.min_chains,
        }

    def record(self) -> dict[str, Any]:
        """JSON-ready dump written into ``config.json`` and ``summary.json``."""
        return self.model_dump(mode="json", by_alias=True)


def parse_endpoint(spec: str, *, what: str = "--generator") -> tuple[str, list[str]]:
    """``NAME=URL`` (or ``NAME=URL1,URL2`` for replicas, or ``NAME`` alone) as
    ``(name, urls)``.

    Examples:
        >>> parse_endpoint("qwen=http://a:8000/v1,http://b:8000/v1")
        ('qwen', ['http://a:8000/v1', 'http://b:8000/v1'])
        >>> parse_endpoint("google/gemma-3-27b-it")
        ('google/gemma-3-27b-it', [])
        >>> parse_endpoint("=http://a/v1")
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field --generator: expected NAME=BASE_URL, got '=http://a/v1'
    """
    name, _, urls = spec.partition("=")
    name = name.strip()
    if not name:
        raise InputError(f"expected NAME=BASE_URL, got {spec!r}", field=what)
    return name, [u.strip() for u in urls.split(",") if u.strip()]


def endpoints_from_flags(
    specs: Sequence[str], existing: Sequence[ModelEndpoint] = (), *, what: str = "--generator"
) -> list[dict[str, Any]]:
    """Endpoints for repeated ``--generator NAME=URL`` flags.

    A name repeated gathers its URLs as replicas; a name the config file already lists
    keeps its other settings (model, concurrency...) and takes the flag's URLs.

    Examples:
        >>> [e["base_urls"] for e in endpoints_from_flags(["a=http://x/v1", "a=http://y/v1"])]
        [['http://x/v1', 'http://y/v1']]
    """
    known = {e.name: e for e in existing}
    merged: dict[str, list[str]] = {}
    for spec in specs:
        name, urls = parse_endpoint(spec, what=what)
        merged.setdefault(name, []).extend(u for u in urls if u not in merged.get(name, []))
    out = []
    for name, urls in merged.items():
        base: dict[str, Any] = known[name].model_dump() if name in known else {"name": name}
        if urls:
            base["base_urls"] = urls
        out.append(base)
    return out


def load_references_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> ReferencesConfig:
    """A :class:`ReferencesConfig` from a YAML/JSON file with ``overrides`` on top.

    Args:
        path: A config file (``None``: defaults only).
        overrides: Field values that win over the file (command-line flags); a dotted name
            sets a nested field (``{"ray.address": "auto"}``).

    Raises:
        InputError: The file is missing or malformed, or a value is invalid (naming the field).

    Examples:
        >>> config = load_references_config(overrides={"theta": 0.7, "validate": False})
        >>> config.theta, config.validating, len(config.generators)
        (0.7, False, 4)
        >>> load_references_config(overrides={"max_rounds": 0})
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field max_rounds: Input should be greater than or equal to 1
    """
    return load_config_with_overrides(ReferencesConfig, path, overrides)
