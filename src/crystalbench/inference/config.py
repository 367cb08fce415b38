"""One inference configuration: what ``crystal infer`` / ``crystal run`` do, as one record.

:class:`InferenceConfig` holds every choice of a run (the model and where it is served,
which items, the prompt and sampling settings, deadlines and retries, the local
backends' knobs, how the output file is written). Its defaults come from
:mod:`crystalbench.defaults`. It loads from YAML like
:class:`~crystalbench.config.scoring.ScoreConfig`
(``crystalbench.config.scoring.load_config(path, InferenceConfig)``), command-line flags
override what the file says, and it is written into the run's summary
(``inference.json``), so a run can be repeated from its own results.

Examples:
    >>> config = InferenceConfig(model="Qwen/Qwen2.5-VL-7B-Instruct", limit=10)
    >>> config.backend, config.generation.temperature, config.timeout
    ('openai', 0.1, 300.0)
    >>> config.retry_policy().max_retry_after
    600.0
    >>> InferenceConfig(model="m", backend="vllmm")
    Traceback (most recent call last):
    ...
    crystalbench.errors.UnknownNameError: unknown backend 'vllmm'; did you mean 'vllm'? ...
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from crystalbench.config.scoring import ScoreConfig, load_config_with_overrides
from crystalbench.config.settings import (
    IMAGE_MAX_SIDE_ENV,
    INFER_ABORT_AFTER,
    INFER_CONCURRENCY,
    INFER_FSYNC_INTERVAL,
    INFER_MAX_ATTEMPTS,
    INFER_MAX_RETRY_AFTER,
    INFER_TIMEOUT,
    OPENAI_API_KEY_ENV,
)
from crystalbench.data.loading import HUB_DATASET
from crystalbench.errors import UnknownNameError
from crystalbench.inference.backends import BACKENDS
from crystalbench.inference.records import GenerationSettings
from crystalbench.inference.retry import RetryPolicy


class InferenceConfig(BaseModel):
    """Every choice of one inference run. Defaults are those of ``crystal infer``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    environment_variables: ClassVar[dict[str, str]] = {"max_image_side": IMAGE_MAX_SIDE_ENV}
    """Fields the config loader reads from these variables when no flag sets them."""

    # --- what runs, on what ----------------------------------------------------------------
    model: str
    """Served model name (``openai``), or a hub id / folder (``vllm``, ``transformers``)."""
    benchmark: str = HUB_DATASET
    """Benchmark spec for :func:`crystalbench.data.load_benchmark`: the hub id, ``sample``,
    a ``save_to_disk`` folder, a ``.parquet`` or ``.jsonl`` file."""
    image_root: str | None = None
    """A folder item images may also lie under (besides the benchmark file's own folder);
    any other image path is refused and never read."""
    backend: str = "openai"
    """``openai`` (any OpenAI-compatible endpoint), ``vllm`` (offline) or ``transformers``."""

    # --- which items -----------------------------------------------------------------------
    sources: list[str] | None = None
    """Only items of these sources (``None``: all)."""
    ids: list[str] | None = None
    """Only these item ids (``None``: all)."""
    limit: int | None = Field(None, ge=1)
    """Only the first N items left after ``sources`` and ``ids``."""

    # --- what is asked ---------------------------------------------------------------------
    prompt_file: str | None = None
    """Prompt template file with ``{question}`` and ``{options}`` (``None``: ``infer_v1``)."""
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    """Sampling settings sent with every request and stored in every record."""
    extra_body: dict[str, Any] | None = None
    """JSON fields added to every request (``top_k``, ``chat_template_kwargs``...)."""
    max_image_side: int | None = Field(None, ge=28)
    """Longest image side ever sent: larger images are downscaled (aspect kept) before the
    first request. ``None``: ``$CRYSTALBENCH_IMAGE_MAX_SIDE``, else
    :data:`~crystalbench.config.settings.IMAGE_MAX_SIDE` (2048)."""

    # --- HTTP endpoints (backend ``openai``) -------------------------------------------------
    base_urls: list[str] = Field(default_factory=list)
    """Endpoints ending in ``/v1``; several spread the requests over replicas
    (empty: ``$OPENAI_BASE_URL`` or the OpenAI API)."""
    api_key_env: str = OPENAI_API_KEY_ENV
    """Environment variable holding the API key (never the key itself)."""
    concurrency: int = Field(INFER_CONCURRENCY, ge=1)
    """Requests in flight per base URL."""
    timeout: float = Field(INFER_TIMEOUT, gt=0)
    """Seconds one request may take in all, from sending it to the last byte of the answer."""
    max_attempts: int = Field(INFER_MAX_ATTEMPTS, ge=1)
    """Requests per item on timeouts, connection errors, 408, 409, 429 and 5xx."""
    max_retry_after: float = Field(INFER_MAX_RETRY_AFTER, ge=0)
    """Longest ``Retry-After`` wait honoured, in seconds (longer ones are cut to this)."""
    preflight: bool = True
    """Check endpoints, key and model name (``/v1/models``) before the run."""

    # --- local backends (``vllm``, ``transformers``) -----------------------------------------
    batch_size: int | None = Field(None, ge=0)
    """Items per generate call (``None``: vllm 1024, transformers 4; 0: all at once)."""
    device: str | None = None
    """transformers device: ``cuda``, ``cuda:1``, ``cpu``, ``mps`` (``None``: CUDA if present)."""
    dtype: str = "auto"
    """``auto``, ``bfloat16``, ``float16`` or ``float32``."""
    tensor_parallel_size: int = Field(1, ge=1)
    """vllm: GPUs to shard the model over."""
    gpu_memory_utilization: float = Field(0.9, gt=0.0, le=1.0)
    """vllm: share of GPU memory to use."""
    max_model_len: int | None = Field(None, ge=1)
    """vllm: context length cap (``None``: the model's)."""
    trust_remote_code: bool = False
    """Allow custom model code from the hub."""

    # --- the output file -------------------------------------------------------------------
    retry_errors: bool = False
    """Ask again the items whose record is an error."""
    allow_mixed: bool = False
    """Append to a file holding another model, prompt or sampling settings."""
    fsync_interval: float = Field(INFER_FSYNC_INTERVAL, ge=0.0)
    """Seconds between ``fsync`` calls of the output (0: after every record)."""
    abort_after: int = Field(INFER_ABORT_AFTER, ge=0)
    """Stop when this many items failed and none succeeded (0: never)."""

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value not in BACKENDS:
            raise UnknownNameError("backend", value, BACKENDS)
        return value

    @field_validator("sources", "ids")
    @classmethod
    def _no_empty_selection(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        kept = [part.strip() for part in value if part.strip()]
        return kept or None

    def retry_policy(self) -> RetryPolicy:
        """The :class:`RetryPolicy` of this configuration (attempts and ``Retry-After`` cap)."""
        return RetryPolicy(max_attempts=self.max_attempts, max_retry_after=self.max_retry_after)

    def record(self) -> dict[str, Any]:
        """JSON-ready dump written into results."""
        return self.model_dump(mode="json")


class RunConfig(InferenceConfig):
    """What ``crystal run`` does: an inference run (every :class:`InferenceConfig` field,
    at the top level of its file), then scoring and a report.

    Examples:
        >>> config = RunConfig(model="m", benchmark="sample", scoring={"encoder": "hash"})
        >>> config.scoring.encoder, config.report, config.inference().model
        ('hash', True, 'm')
        >>> type(config.inference()).__name__
        'InferenceConfig'
    """

    scoring: ScoreConfig = Field(default_factory=ScoreConfig)
    """How the answers are scored (``scoring:`` in the file)."""
    report: bool = True
    """Write ``report.html`` into the results folder."""

    def inference(self) -> InferenceConfig:
        """The inference part alone (what ``inference.json`` records)."""
        return InferenceConfig.model_validate(
            {name: getattr(self, name) for name in InferenceConfig.model_fields}
        )


def load_inference_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> InferenceConfig:
    """An :class:`InferenceConfig` from a YAML/JSON file, with ``overrides`` on top.

    Args:
        path: A config file (``None``: defaults only). It need not name the model when
            ``overrides`` does.
        overrides: Field values that win over the file (command-line flags). A dotted
            name sets a nested field: ``{"generation.temperature": 0.0}``.

    Raises:
        InputError: The file is missing or malformed, or a value is invalid (naming the
            field, and the file when the value came from it).

    Examples:
        >>> config = load_inference_config(overrides={"model": "m", "generation.seed": 7})
        >>> config.model, config.generation.seed, config.generation.max_tokens
        ('m', 7, 4096)
        >>> load_inference_config(overrides={"model": "m", "concurrency": 0})
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: field concurrency: Input should be greater than ...
    """
    return load_config_with_overrides(InferenceConfig, path, overrides)
