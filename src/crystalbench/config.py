"""Configuration records: built once, validated, written into every results file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from crystalbench.defaults import (
    ALPHA,
    ANSWER_RULES,
    COMPAT_MODES,
    ENCODER,
    MATCHER,
    MATCHERS,
    ORDER_METRIC,
    TAU,
    AnswerRules,
    CompatMode,
    MatcherKind,
)
from crystalbench.difficulty import DifficultyConfig
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.settings import (
    ENCODER_BACKEND,
    ENCODER_BACKENDS,
    JUDGE_TIMEOUT,
    OPENAI_API_KEY_ENV,
    EncoderBackend,
)


def _known_name(kind: str, value: Any, valid: tuple[str, ...]) -> Any:
    """The ``Literal`` type refuses other names too; this also says which name was meant.

    Raised as a ``ValueError`` so that pydantic reports it with the field (and
    :func:`load_config` with the file).
    """
    if isinstance(value, str) and value not in valid:
        raise ValueError(UnknownNameError(kind, value, valid).message)
    return value


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
    """Endpoint and model of the judge matcher; required with ``matcher="judge"``."""

    @field_validator("compat", mode="before")
    @classmethod
    def _known_compat(cls, value: Any) -> Any:
        return _known_name("compat mode", value, COMPAT_MODES)

    @field_validator("answer_rules", mode="before")
    @classmethod
    def _known_answer_rules(cls, value: Any) -> Any:
        return _known_name("answer rules", value, ANSWER_RULES)

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, value: Any) -> Any:
        return _known_name("encoder backend", value, ENCODER_BACKENDS)

    @field_validator("matcher", mode="before")
    @classmethod
    def _known_matcher(cls, value: Any) -> Any:
        return _known_name("matcher", value, MATCHERS)

    @model_validator(mode="after")
    def _judge_for_judge_matcher(self) -> ScoreConfig:
        if self.matcher == "judge" and self.matcher_judge is None:
            raise ValueError("matcher 'judge' needs matcher_judge (its url and model)")
        return self

    def record(self) -> dict[str, Any]:
        """JSON-ready dump written into results."""
        return self.model_dump(mode="json")

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
    """Load a config model from a YAML or JSON file.

    A ``.json`` file goes through the strict JSON reader of :mod:`crystalbench.io`; any
    other file is YAML (``yaml.safe_load``) with repeated keys refused. Either way the file
    must be UTF-8 and at most ``max_line_bytes`` (:class:`~crystalbench.io.InputLimits`).

    Raises:
        InputError: The file is missing, too large, not UTF-8, malformed, repeats a key, is
            nested too deep, is not a mapping, or fails validation (naming the field).
    """
    from crystalbench.io import read_json_file, read_text_file, resolve_limits

    path = Path(path)
    if not path.is_file():
        raise InputError("config file not found", path=path)
    limits = resolve_limits(None)
    if path.suffix.lower() == ".json":
        data = read_json_file(path, limits=limits, whole=False)
    else:
        text = read_text_file(path, max_bytes=limits.max_line_bytes, what="config file")
        data = _load_yaml(text, path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping at the top level", path=path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first.get("loc", ()))
        raise InputError(first.get("msg", "invalid value"), path=path, field=loc or None) from None


class _AnyMapping(BaseModel):
    """Accepts any mapping: lets :func:`load_config` read a file whose fields are merged
    with command-line flags before the real model is validated."""

    model_config = ConfigDict(extra="allow")


def load_config_with_overrides(
    model: type[BaseModel], path: str | Path | None, overrides: Mapping[str, Any] | None
) -> Any:
    """``model`` from a YAML/JSON file (read by :func:`load_config`) with ``overrides`` on top.

    Overrides are command-line flags: they win over the file, and a dotted name sets a
    nested field (``{"generation.seed": 7}``). A value that fails validation is reported
    with its field, and with the file when the value came from it (not when a flag gave
    it, or the file does not set that field at all).

    Raises:
        InputError: The file is missing or malformed, or a value is invalid.
    """
    data: dict[str, Any] = {}
    if path is not None:
        data = dict(load_config(path, _AnyMapping).model_extra or {})
    in_file = set(data)
    given = dict(overrides or {})
    for name, value in given.items():
        target = data
        *parents, leaf = name.split(".")
        for parent in parents:
            inner = target.get(parent)
            target[parent] = dict(inner) if isinstance(inner, Mapping) else {}
            target = target[parent]
        target[leaf] = value
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first.get("loc", ())) or None
        message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        from_flags = path is None or (
            loc is not None
            and (
                loc.split(".")[0] not in in_file
                or any(
                    loc == name or loc.startswith(name + ".") or name.startswith(loc + ".")
                    for name in given
                )
            )
        )
        raise InputError(message, path=None if from_flags else path, field=loc) from None


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader when PyYAML has it: fast, and it bounds nesting depth itself."""


class _StrictYamlLoader(_SafeLoader):
    """``yaml.SafeLoader`` that refuses a key repeated inside one mapping."""


def _construct_mapping(loader: _StrictYamlLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:  # the keys written here; merged (``<<``) keys may repeat
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            repeated = key in seen
            seen.add(key)
        except TypeError:  # an unhashable key: let the constructor report it
            break
        if repeated:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears more than once", key_node.start_mark
            )
    loader.flatten_mapping(node)
    return loader.construct_mapping(node, deep=True)


_StrictYamlLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def _load_yaml(text: str, path: Path) -> Any:
    try:
        return yaml.load(text, Loader=_StrictYamlLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        column = f" at column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise InputError(f"malformed YAML ({problem}{column})", path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", path=path) from None
    except RecursionError:
        raise InputError("YAML nested too deeply", path=path) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a date like 2024-13-45
        raise InputError(f"malformed YAML value ({exc})", path=path) from None
