"""One reward scorer per process for trainers that import a bare ``compute_score`` function.

verl and EasyR1 load a reward *function* from a file path, so the scorer it needs (encoder,
tau, caches) must be built on first use and kept for the life of the process. Settings come
from the function's keyword arguments (``reward_kwargs`` / ``reward_function_kwargs`` in the
trainer config), else from environment variables, else the paper defaults:

==========================  ==================================  =========================
keyword                     environment variable                default
==========================  ==================================  =========================
``server_url``              ``CRYSTAL_REWARD_SERVER``           none: score in process
``encoder``                 ``CRYSTAL_REWARD_ENCODER``          ``all-distilroberta-v1``
``tau``                     ``CRYSTAL_REWARD_TAU``              0.35
``device``                  ``CRYSTAL_REWARD_DEVICE``           ``cuda:$LOCAL_RANK`` / cpu
``allow_think``             ``CRYSTAL_REWARD_ALLOW_THINK``      false
``guard``                   ``CRYSTAL_REWARD_GUARD``            ``none`` (``facts-strict``
                                                                for training, see
                                                                ``docs/rewards.md``)
``cache_dir``               ``CRYSTALBENCH_CACHE_DIR``          ``~/.cache/crystalbench``
(reference embeddings on    ``CRYSTAL_REWARD_DISK_CACHE=0``     on
disk)                       turns it off
==========================  ==================================  =========================

With a server URL, every rank sends its batches to one ``crystal serve-rewards`` process
and no encoder is loaded in the trainer at all (``CRYSTALBENCH_REWARD_TOKEN`` holds the
server's bearer token when it has one).

:func:`kind_and_source` and :func:`score_dicts` are the shared body of the verl and EasyR1
entry points: the reward kind and source named by a trainer's keyword arguments, and one
result dict per response. :func:`heldout_sources` reads the ``heldout`` keyword: graders
scored beside the reward and never added to it (``heldout_<name>`` in each result dict).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, field_validator

from crystalbench.config.loader import Given, build_config
from crystalbench.defaults import ENCODER, GUARD, GUARDS, TAU
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.types import (
    ANSWER_KINDS,
    REWARD_KINDS,
    STEP_KINDS,
    FormatRules,
    HeldoutGrader,
    RewardKind,
    RewardSignals,
    SignalSource,
)
from crystalbench.types import BenchmarkItem

__all__ = [
    "HeldoutSource",
    "RewardEnvironment",
    "heldout_graders",
    "heldout_sources",
    "kind_and_source",
    "score_dicts",
    "shared_source",
]

_SOURCES: dict[tuple[Any, ...], SignalSource] = {}
_LOCK = threading.Lock()

_TRUE = ("1", "true", "yes", "on")


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


class RewardEnvironment(BaseModel):
    """The settings of the process-wide scorer, read through the one config loader.

    Keyword arguments of :func:`shared_source` win over the ``CRYSTAL_REWARD_*`` variables,
    which win over the paper defaults; a bad value is an :class:`InputError` naming the
    variable it came from.

    Examples:
        >>> from crystalbench.config.loader import build_config
        >>> build_config(RewardEnvironment, environ={"CRYSTAL_REWARD_TAU": "0.5"}).tau
        0.5
        >>> try:
        ...     build_config(RewardEnvironment, environ={"CRYSTAL_REWARD_TAU": "high"})
        ... except InputError as error:
        ...     print(error.field)
        tau
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    environment_variables: ClassVar[dict[str, str]] = {
        "server_url": "CRYSTAL_REWARD_SERVER",
        "encoder": "CRYSTAL_REWARD_ENCODER",
        "tau": "CRYSTAL_REWARD_TAU",
        "device": "CRYSTAL_REWARD_DEVICE",
        "allow_think": "CRYSTAL_REWARD_ALLOW_THINK",
        "guard": "CRYSTAL_REWARD_GUARD",
    }
    """The variables of the module's table, read when no keyword argument sets a field."""

    server_url: str | None = None
    """A ``crystal serve-rewards`` URL; ``None``: score in process."""
    encoder: str = ENCODER
    """The sentence encoder's name."""
    tau: float = TAU
    """Minimum cosine for a step pair to match."""
    device: str | None = None
    """Where the encoder runs; automatic when ``None``."""
    allow_think: bool = False
    """Accept a ``<think>`` block before the answer."""
    guard: str = GUARD
    """The fact guard's name."""

    @field_validator("allow_think", mode="before")
    @classmethod
    def _truthy(cls, value: Any) -> bool:
        return _flag(value)


def shared_source(
    *,
    server_url: str | None = None,
    encoder: str | None = None,
    tau: float | None = None,
    device: str | None = None,
    allow_think: bool | str | None = None,
    cache_dir: str | None = None,
    guard: str | None = None,
) -> SignalSource:
    """The process-wide scorer (or reward-server client) for these settings.

    Raises:
        UnknownNameError: ``guard`` (or ``$CRYSTAL_REWARD_GUARD``) is not a fact guard.
        InputError: a bad value, e.g. ``$CRYSTAL_REWARD_TAU=high``, naming its variable.

    Examples:
        >>> shared_source(encoder="hash") is shared_source(encoder="hash")
        True
        >>> shared_source(encoder="hash", guard="facts").guard
        'facts'
    """
    given = {
        "server_url": server_url or None,
        "encoder": encoder or None,
        "tau": tau,
        "device": device or None,
        "allow_think": allow_think,
        "guard": guard or None,
    }
    settings = build_config(
        RewardEnvironment,
        flags={field: Given(value) for field, value in given.items() if value is not None},
    )
    if settings.guard not in GUARDS:
        raise UnknownNameError("guard", settings.guard, GUARDS)
    if settings.server_url:
        key: tuple[Any, ...] = ("remote", settings.server_url)
    else:
        key = (
            "local",
            settings.encoder,
            settings.tau,
            settings.device,
            settings.allow_think,
            cache_dir,
            settings.guard,
        )
    with _LOCK:
        source = _SOURCES.get(key)
        if source is None:
            source = _build(key)
            _SOURCES[key] = source
        return source


def _build(key: tuple[Any, ...]) -> SignalSource:
    if key[0] == "remote":  # format rules, tau and encoder are the server's
        from crystalbench.rewards.client import RemoteRewardScorer

        return RemoteRewardScorer(key[1])
    _, name, threshold, where, think, cache_dir, fact_guard = key
    from crystalbench.rewards.encoder_loading import load_reward_encoder
    from crystalbench.rewards.scorer import RewardScorer

    store = None
    if name != "hash" and os.environ.get("CRYSTAL_REWARD_DISK_CACHE", "1") not in ("0", "false"):
        from crystalbench._internal.paths import default_cache_dir

        store = (Path(cache_dir) if cache_dir else default_cache_dir()) / "embeddings.sqlite"
    encoder = load_reward_encoder(name, device=where)
    return RewardScorer(
        encoder,
        tau=threshold,
        format_rules=FormatRules(allow_think=think),
        store=store,
        guard=fact_guard,
    )


_SOURCE_KEYS = ("server_url", "encoder", "tau", "device", "allow_think", "cache_dir", "guard")


HeldoutSource = tuple[str, RewardKind, SignalSource]
"""A held-out grader ready to score: ``(name, kind, source)``."""


def score_dicts(
    source: SignalSource,
    solution_strs: Sequence[Any],
    items: Sequence[BenchmarkItem | None],
    kind: RewardKind = "cpr",
    heldout: Sequence[HeldoutSource] = (),
) -> list[dict[str, float]]:
    """verl-style result dicts for a batch (the shared body of both entry points).

    Each held-out grader adds ``heldout_<name>`` (its reward kind's total under its own
    source; 0 where it cannot score, as for the reward) and never changes ``score``.

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> from crystalbench.rewards.items import item_from_ground_truth
        >>> from crystalbench.rewards.scorer import RewardScorer
        >>> item = item_from_ground_truth("4", {"reference_steps": ["Add 2 and 2."]})
        >>> text = '{"reasoning_steps": ["Add 2 and 2."], "answer": "4"}'
        >>> score_dicts(RewardScorer(HashEncoder()), [text], [item])[0]["score"]
        1.0
        >>> scorer = RewardScorer(HashEncoder())
        >>> row = score_dicts(scorer, [text], [item], "cpr", [("acc", "answer", scorer)])[0]
        >>> row["score"], row["heldout_acc"]
        (1.0, 1.0)
    """
    kinds = [(kind, "reward")] + [(k, f"held-out grader {n!r}") for n, k, _ in heldout]
    for index, item in enumerate(items):
        for needed, what in kinds:
            if item is None and needed in ANSWER_KINDS:
                raise InputError(
                    f"row {index}: no gold answer in ground_truth ({what} {needed!r})",
                    field="ground_truth",
                )
            if needed in STEP_KINDS and (
                item is None or not any(s.strip() for s in item.reference_steps)
            ):
                raise InputError(
                    f"row {index}: {what} {needed!r} needs reference_steps in the ground truth "
                    "JSON or in extra_info",
                    field="reference_steps",
                )
    completions, rows = list(solution_strs), list(items)
    signals = source.signals(completions, rows)
    results = [_result(s, kind, source) for s in signals]
    measured: dict[int, list[RewardSignals]] = {id(source): signals}
    for name, grader_kind, grader_source in heldout:
        if id(grader_source) not in measured:
            measured[id(grader_source)] = grader_source.signals(completions, rows)
        for result, grader_signals in zip(results, measured[id(grader_source)], strict=True):
            total = make_breakdown(grader_signals, grader_kind, grader_source.weights).total
            result[f"heldout_{name}"] = total if total is not None else 0.0
    return results


def _result(signals: RewardSignals, kind: RewardKind, source: SignalSource) -> dict[str, float]:
    chosen = make_breakdown(signals, kind, source.weights)
    cpr = make_breakdown(signals, "cpr", source.weights)
    return {
        "score": chosen.total if chosen.total is not None else 0.0,
        "format": float(signals.format_ok),
        "answer_correct": float(bool(signals.answer_correct)),
        "step_f1": signals.step_f1 if signals.step_f1 is not None else 0.0,
        "cpr_answer": cpr.components.get("answer", 0.0),
        "cpr_reasoning": cpr.components.get("reasoning", 0.0),
        "unscored": float(chosen.total is None),
    }


def kind_and_source(kwargs: Mapping[str, Any]) -> tuple[RewardKind, SignalSource]:
    """The reward kind and the process-wide scorer named by a trainer's reward kwargs."""
    kind = kwargs.get("kind", "cpr")
    if kind not in REWARD_KINDS:
        raise UnknownNameError("reward kind", str(kind), REWARD_KINDS)
    source = shared_source(**{k: kwargs[k] for k in _SOURCE_KEYS if kwargs.get(k) is not None})
    return kind, source


def heldout_graders(spec: Any) -> list[HeldoutGrader]:
    """The ``heldout`` reward keyword as graders.

    Accepted: a list of ``{name, kind, encoder, tau}`` mappings, a mapping ``name ->
    {kind, encoder, tau}``, or either as a JSON string (Hydra's list and dict configs count
    as lists and mappings).

    Raises:
        InputError: Not one of those shapes, a bad field (named), or a name given twice.

    Examples:
        >>> [g.name for g in heldout_graders({"accuracy": {"kind": "answer"}, "f1": {}})]
        ['accuracy', 'f1']
        >>> heldout_graders('[{"name": "f1_minilm", "encoder": "minilm-offline"}]')[0].encoder
        'minilm-offline'
    """
    if spec is None or spec == "":
        return []
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc.msg}", field="heldout") from None
    if isinstance(spec, Mapping):
        spec = [
            {"name": name, **(dict(value) if isinstance(value, Mapping) else {"kind": value})}
            if value is not None
            else {"name": name}
            for name, value in spec.items()
        ]
    if isinstance(spec, str | bytes) or not isinstance(spec, Sequence):
        raise InputError(
            "expected a list of {name, kind, encoder, tau} or a mapping name -> {kind, ...}, "
            f"got {type(spec).__name__}",
            field="heldout",
        )
    rows = [dict(row) if isinstance(row, Mapping) else row for row in spec]
    try:
        graders = TypeAdapter(list[HeldoutGrader]).validate_python(rows)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first.get("loc", ()))
        message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        raise InputError(message, field=f"heldout.{loc}" if loc else "heldout") from None
    names = [grader.name for grader in graders]
    if len(set(names)) != len(names):
        raise InputError(f"grader names must be unique, got {names}", field="heldout")
    return graders


def heldout_sources(kwargs: Mapping[str, Any]) -> list[HeldoutSource]:
    """The held-out graders of a trainer's reward kwargs (``heldout``), each with its scorer.

    A grader without its own ``encoder`` or ``tau`` scores with the reward's own source (one
    encoder pass for both); one with them scores in process with that encoder and threshold
    (never on the reward server, which holds the reward's encoder). ``device``,
    ``allow_think`` and ``cache_dir`` are the reward's.

    Examples:
        >>> [(name, kind) for name, kind, _ in heldout_sources(
        ...     {"encoder": "hash", "heldout": [{"name": "accuracy", "kind": "answer"}]})]
        [('accuracy', 'answer')]
    """
    graders = heldout_graders(kwargs.get("heldout"))
    if not graders:
        return []
    out: list[HeldoutSource] = []
    main: SignalSource | None = None
    for grader in graders:
        if grader.encoder is None and grader.tau is None:
            if main is None:
                main = kind_and_source(kwargs)[1]
            out.append((grader.name, grader.kind, main))
            continue
        settings = {
            key: kwargs[key]
            for key in ("encoder", "tau", "device", "allow_think", "cache_dir")
            if kwargs.get(key) is not None
        }
        if grader.encoder is not None:
            settings["encoder"] = grader.encoder
        if grader.tau is not None:
            settings["tau"] = grader.tau
        out.append((grader.name, grader.kind, shared_source(**settings)))
    return out
