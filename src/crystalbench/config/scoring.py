"""Configuration records: built once, validated, written into every results file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from crystalbench.config.judging import VERIFY_MODES, ExtractorConfig, VerifierConfig, VerifyMode
from crystalbench.config.loader import Given, build_config
from crystalbench.config.settings import (
    CACHE_DIR_ENV,
    ENCODER_BACKEND,
    ENCODER_BACKENDS,
    JUDGE_TIMEOUT,
    OPENAI_API_KEY_ENV,
    EncoderBackend,
)
from crystalbench.defaults import (
    ALPHA,
    ANSWER_RULES,
    COMPAT_MODES,
    DIFFICULTY_MARKERS_NEEDED,
    DIFFICULTY_QUESTION_WORDS,
    DIFFICULTY_STEP_CUTS,
    DIFFICULTY_TIER_CUTS,
    ENCODER,
    GUARD,
    GUARDS,
    MATCHER,
    MATCHERS,
    ORDER_METRIC,
    TAU,
    AnswerRules,
    CompatMode,
    GuardKind,
    MatcherKind,
)
from crystalbench.errors import UnknownNameError


def _known_name(kind: str, value: Any, valid: tuple[str, ...]) -> Any:
    """The ``Literal`` type refuses other names too; this also says which name was meant.

    Raised as a ``ValueError`` so that pydantic reports it with the field (and
    :func:`load_config` with the file).
    """
    if isinstance(value, str) and value not in valid:
        raise ValueError(UnknownNameError(kind, value, valid).message)
    return value


_NAMED: dict[str, tuple[str, tuple[str, ...]]] = {
    "compat": ("compat mode", COMPAT_MODES),
    "answer_rules": ("answer rules", ANSWER_RULES),
    "backend": ("encoder backend", ENCODER_BACKENDS),
    "matcher": ("matcher", MATCHERS),
    "guard": ("guard", GUARDS),
    "verify": ("verify mode", VERIFY_MODES),
}
"""The :class:`ScoreConfig` fields that take one of a few names: what each is called in the
error and its valid names."""


class DifficultyConfig(BaseModel):
    """Cut-offs of the derived difficulty rule (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step_cuts: tuple[int, int] = DIFFICULTY_STEP_CUTS
    """Reference-step counts giving one, then two points."""
    question_words: int = DIFFICULTY_QUESTION_WORDS
    """Questions longer than this (in words) get one point."""
    markers_needed: int = DIFFICULTY_MARKERS_NEEDED
    """Distinct markers needed for one point."""
    tier_cuts: tuple[int, int] = DIFFICULTY_TIER_CUTS
    """Points at which an item becomes medium, then hard."""


class JudgeConfig(BaseModel):
    """An OpenAI-compatible LLM judge for free-form answers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    """Base URL of the endpoint, e.g. ``http://localhost:8000/v1``."""
    model: str
    """Served model name."""
    api_key_env: str = OPENAI_API_KEY_ENV
    """Environment variable holding the key. ``OPENAI_API_KEY`` may be unset (local servers
    need no key: ``EMPTY`` is sent); another variable named here must be set."""
    timeout: float = JUDGE_TIMEOUT
    """Seconds per request."""
    concurrency: int = 16
    """Judge requests in flight at once."""


class ScoreConfig(BaseModel):
    """Everything that decides a CRYSTAL number. Defaults are the paper's.

    Examples:
        >>> ScoreConfig().threshold, ScoreConfig().alpha, ScoreConfig().order_metric
        (0.35, 0.3, 'lis')
        >>> ScoreConfig(compat="paper")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pydantic_core._pydantic_core.ValidationError: 1 validation error for ScoreConfig
        compat
          Value error, unknown compat mode 'paper' (valid: crystal-metrics-0.2, none) ...
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    environment_variables: ClassVar[dict[str, str]] = {"cache_dir": CACHE_DIR_ENV}
    """Fields the config loader (:func:`crystalbench.config.loader.build_config`) reads from
    these environment variables when no flag sets them."""

    encoder: str = ENCODER
    """Sentence encoder: a sentence-transformers name or folder, ``minilm-offline`` or ``hash``."""
    threshold: float = Field(TAU, ge=-1.0, le=1.0)
    """tau: minimum cosine for a step pair to match."""
    alpha: float = Field(ALPHA, ge=0.0, le=1.0)
    """Order weight of Ordered Match F1 (0 gives plain Match F1)."""
    order_metric: Literal["lis", "kendall"] = ORDER_METRIC
    """Order score inside Ordered Match F1."""
    compat: CompatMode = "none"
    """Step rules: ``none`` (paper) or ``crystal-metrics-0.2`` (strict threshold, its tie
    order, blank predicted steps kept); any other name fails here, when the config is built."""
    answer_rules: AnswerRules = "paper"
    """``paper`` or ``crystal-metrics-0.2`` (reproduce that package's answer heuristics)."""
    sources: list[str] | None = None
    """Score only these sources (``None``: all)."""
    ids: list[str] | None = None
    """Score only these item ids (``None``: all); an id the benchmark lacks is an error."""
    limit: int | None = Field(None, ge=1)
    """Score only the first N items left after ``sources`` and ``ids`` (``None``: all)."""
    judge: JudgeConfig | None = None
    """LLM judge for free-form answers; ``None`` means exact match only."""
    difficulty: DifficultyConfig = Field(default_factory=DifficultyConfig)
    """Cut-offs of the derived difficulty tiers."""
    lenient: bool = False
    """Skip (and count) malformed records and unknown ids instead of failing."""
    cache_dir: str | None = None
    """Embedding cache folder (default ``$CRYSTALBENCH_CACHE_DIR``, ``~/.cache/crystalbench``)."""
    use_cache: bool = True
    """Read and write the on-disk embedding cache."""
    device: str | None = None
    """Encoder device; automatic when ``None``."""
    backend: EncoderBackend = ENCODER_BACKEND
    """How the encoder runs: ``auto`` (ONNX Runtime on a CPU, torch on a GPU), ``torch``,
    ``onnx`` or ``onnx-int8``. Each path has its own ``encoder_identity`` in results."""
    workers: int = Field(1, ge=1)
    """Encode in this many worker processes (``1``: in this process)."""
    devices: list[str] | None = None
    """One encoder worker per device, e.g. ``["cuda:0", "cuda:1"]``."""
    batch_size: int | None = Field(None, ge=1)
    """Sentences per forward pass (``None``: 64 on a CPU, 1024 on a GPU)."""
    dtype: Literal["float32", "float16"] = "float32"
    """Encoder precision (``float16`` needs a GPU)."""
    matcher: MatcherKind = MATCHER
    """How step pairs become candidates: ``cosine`` (the paper: ``S >= tau``) or ``judge``
    (an LLM names the predicted steps that match each reference step; both are then matched
    one-to-one in cosine order; :mod:`crystalbench.judges.step_judge`)."""
    matcher_judge: JudgeConfig | None = None
    """Endpoint and model of the judge matcher; required with ``matcher="judge"`` (the
    answer judge's, ``judge``, when only that one is given)."""
    guard: GuardKind = GUARD
    """Fact guard on step matching (not in the paper): ``none`` (the paper), ``facts`` (a
    pair whose steps state incompatible facts is no candidate) or ``facts-strict`` (besides,
    a predicted step that contradicts its closest reference step matches nothing);
    :mod:`crystalbench.scoring.filters.guard`, ``docs/metrics.md``."""
    verify: VerifyMode = "none"
    """Step verifier (not in the paper): ``none`` (the paper), ``unmatched`` (a vision-language
    model checks each predicted step no reference step matched) or ``all`` (every predicted
    step); :mod:`crystalbench.scoring.verify`, ``docs/metrics.md``. Written into results only
    when not ``none``."""
    verifier: VerifierConfig | None = None
    """The verifier's endpoint, model and options; required unless ``verify`` is ``none``."""
    extractor: ExtractorConfig | None = None
    """Model-based answer extraction (not in the paper): an OpenAI-compatible model asked
    for the final answer of the items where no answer rule committed
    (:mod:`crystalbench.scoring.extract`, ``docs/parsing.md``). ``None`` (the default): rules
    only. Written into results only when set."""

    @field_validator("sources", "ids")
    @classmethod
    def _no_empty_selection(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        kept = [part.strip() for part in value if part.strip()]
        return kept or None

    @model_validator(mode="before")
    @classmethod
    def _matcher_shares_the_answer_judge(cls, data: Any) -> Any:
        if (
            isinstance(data, dict)
            and data.get("matcher") == "judge"
            and data.get("matcher_judge") is None
            and data.get("judge") is not None
        ):
            return {**data, "matcher_judge": data["judge"]}
        return data

    @field_validator(*_NAMED, mode="before")
    @classmethod
    def _known_names(cls, value: Any, info: ValidationInfo) -> Any:
        kind, valid = _NAMED[str(info.field_name)]
        return _known_name(kind, value, valid)

    @model_validator(mode="after")
    def _verifier_for_verify(self) -> ScoreConfig:
        if self.verify != "none" and self.verifier is None:
            raise ValueError(
                f"verify {self.verify!r} needs a verifier: its url and model "
                "(--verifier-url, --verifier-model, or the config's verifier section)"
            )
        return self

    @model_validator(mode="after")
    def _judge_for_judge_matcher(self) -> ScoreConfig:
        if self.matcher == "judge" and self.matcher_judge is None:
            raise ValueError(
                "matcher 'judge' needs an endpoint: matcher_judge (its url and model: "
                "--matcher-url, --matcher-model) or the answer judge's (judge: --judge-url, "
                "--judge-model)"
            )
        return self

    def record(self) -> dict[str, Any]:
        """JSON-ready dump written into results."""
        return self.model_dump(mode="json")

    @model_serializer(mode="wrap")
    def _omit_unused_verifier(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The verifier's and the extractor's fields are written only when one runs: a
        config without them dumps (into results, ablations, jobs) what it dumped before they
        existed."""
        data: dict[str, Any] = handler(self)
        if self.verify == "none":
            data.pop("verify", None)
            data.pop("verifier", None)
        if self.extractor is None:
            data.pop("extractor", None)
        return data

    def encoder_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`crystalbench.encoders.load_encoder` this config
        asks for (every field that decides how the encoder runs, besides its name).

        Examples:
            >>> ScoreConfig(device="cpu", batch_size=32).encoder_options()["batch_size"]
            32
        """
        return {
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "backend": self.backend,
            "workers": self.workers,
            "devices": list(self.devices) if self.devices else None,
            "cache_dir": self.cache_dir,
        }


def load_config(path: str | Path, model: type[BaseModel] = ScoreConfig) -> Any:
    """Load a config model from a YAML, JSON or TOML file (nothing else: no environment, no
    flags; :func:`crystalbench.config.loader.build_config` merges those).

    A ``.json`` file goes through the strict JSON reader of :mod:`crystalbench._internal.io`, a
    ``.toml`` file through ``tomllib``; any other file is YAML (``yaml.safe_load``) with
    repeated keys refused. Either way the file must be UTF-8 and at most
    ``max_line_bytes`` (:class:`~crystalbench._internal.io.InputLimits`).

    Raises:
        InputError: The file is missing, too large, not UTF-8, malformed, repeats a key, is
            nested too deep, is not a mapping, or fails validation (naming the field and,
            for YAML, its line).
    """
    return build_config(model, files=[(path, "")], environ={})


def load_config_with_overrides(
    model: type[BaseModel], path: str | Path | None, overrides: Mapping[str, Any] | None
) -> Any:
    """``model`` from a config file (read by :func:`load_config`), the environment
    variables ``model`` documents, and ``overrides`` on top.

    Overrides are command-line values: they win over the file, and a dotted name sets a
    nested field (``{"generation.seed": 7}``). A value that fails validation is reported
    with its field and where it came from (the file and line, the variable, or "given").
    Commands that know the flags' spellings call
    :func:`crystalbench.config.loader.build_config` with :class:`Given` values instead.

    Raises:
        InputError: The file is missing or malformed, or a value is invalid.
    """
    flags = {name: Given(value) for name, value in (overrides or {}).items()}
    files = [(path, "")] if path is not None else []
    return build_config(model, files=files, flags=flags)
