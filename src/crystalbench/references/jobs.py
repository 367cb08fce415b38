"""What ``crystal references build`` and ``regenerate`` do, as configs and one library
function each.

A build is a :class:`~crystalbench.references.config.ReferencesConfig` (the ``--config``
file) plus the endpoints a command line names: ``--generator NAME=URL`` gives a model's
URLs (a name the file already lists keeps its other settings), ``--validator NAME=URL``
the validator's, ``--concurrency`` every model's requests in flight.
:class:`ReferencesBuild` holds both and :meth:`ReferencesBuild.resolved` merges them;
:func:`build_from_job` builds. :class:`ReferencesRegenerate` names the items a build sends
back and the operational settings it may change (:func:`regenerate_from_job`).

Examples:
    >>> job = ReferencesBuild(generators=["qwen=http://a/v1", "gemma=http://b/v1"],
    ...                       validator="molmo=http://c/v1", concurrency=4)
    >>> config = job.resolved()
    >>> [(g.name, g.base_urls, g.concurrency) for g in config.generators]
    [('qwen', ['http://a/v1'], 4), ('gemma', ['http://b/v1'], 4)]
    >>> config.validator.base_urls
    ['http://c/v1']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crystalbench.errors import InputError
from crystalbench.references.config import ModelEndpoint, ReferencesConfig, endpoints_from_flags

if TYPE_CHECKING:
    from crystalbench.references.pipeline import BuildResult, Events

__all__ = [
    "ReferencesBuild",
    "ReferencesRegenerate",
    "build_from_job",
    "regenerate_from_job",
]


class _Endpoints(BaseModel):
    """Model endpoints given as ``NAME=URL`` on a command line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    generators: list[str] | None = None
    """``NAME=URL`` of a generator each (``NAME=URL1,URL2`` or a repeated ``NAME`` for
    replicas); a name the config already lists keeps its other settings."""
    validator: str | None = None
    """``NAME=URL`` of the validator."""
    concurrency: int | None = Field(None, ge=1)
    """Requests in flight per base URL, for every model (``None``: each model's own)."""

    def merged(
        self, generators: list[ModelEndpoint], validator: ModelEndpoint | None
    ) -> dict[str, Any]:
        """``{"generators": ..., "validator": ...}`` with these endpoints merged into the
        given ones (only the keys that change)."""
        out: dict[str, Any] = {}
        if self.generators:
            out["generators"] = endpoints_from_flags(self.generators, generators)
        if self.validator:
            known = [validator] if validator is not None else []
            out["validator"] = endpoints_from_flags([self.validator], known, what="--validator")[0]
        if self.concurrency is not None:
            gens = out.get("generators") or [g.model_dump() for g in generators]
            out["generators"] = [{**g, "concurrency": self.concurrency} for g in gens]
            val = out.get("validator") or (validator.model_dump() if validator else None)
            if val is not None:
                out["validator"] = {**val, "concurrency": self.concurrency}
        return out


class ReferencesBuild(_Endpoints):
    """What ``crystal references build`` builds: a :class:`ReferencesConfig` and the
    endpoints the command line names."""

    references: ReferencesConfig = Field(default_factory=ReferencesConfig)
    """The build's configuration (the ``--config`` file and the other flags)."""

    def resolved(self) -> ReferencesConfig:
        """:attr:`references` with the command line's endpoints merged in.

        Raises:
            InputError: A malformed ``NAME=URL``, or the merged configuration is invalid
                (e.g. fewer generators than ``min_chains`` needs).
        """
        changes = self.merged(list(self.references.generators), self.references.validator)
        if not changes:
            return self.references
        return _validated({**self.references.record(), **changes})


class ReferencesRegenerate(_Endpoints):
    """What ``crystal references regenerate`` sends back, and what it may change in the
    build's stored configuration (operational settings only: URLs, concurrency, engine,
    rounds; content settings stay the build's)."""

    ids: str
    """The items to send back: comma-separated ids, or a file (``@FILE`` or ``FILE``) with
    one id per line (``#`` comments) or JSONL with ``id`` / ``item_id`` (the review app's
    ``rejected`` export)."""
    items: str | None = None
    """The item set, if it moved since the build."""
    engine: Literal["local", "ray"] | None = None
    """``local`` or ``ray`` (``None``: the build's)."""
    max_rounds: int | None = Field(None, ge=1)
    """New rounds per item (``None``: the build's ``max_rounds``)."""
    preflight: bool | None = None
    """Check every endpoint first (``None``: the build's setting)."""

    def item_ids(self) -> tuple[list[str], str | None]:
        """``(ids, the file they came from or None)``.

        Examples:
            >>> ReferencesRegenerate(ids="mmvp/1, plotqa/2").item_ids()
            (['mmvp/1', 'plotqa/2'], None)
        """
        from crystalbench.references.build import read_ids_file

        path = Path(self.ids.removeprefix("@")).expanduser()
        if self.ids.startswith("@") or path.is_file():
            return read_ids_file(path), str(path)
        if path.suffix.lower() in (".txt", ".jsonl", ".json", ".csv"):
            raise InputError("ids file not found", path=path, field="ids")
        ids = [part.strip() for part in self.ids.split(",") if part.strip()]
        if not ids:
            raise InputError("no item ids given", field="ids")
        return ids, None

    def resolved(self, stored: dict[str, Any]) -> ReferencesConfig:
        """The build's stored configuration (``config.json``'s ``config``) with this
        command's changes.

        Raises:
            InputError: The stored configuration or a change is invalid.
        """
        base = ReferencesConfig.model_validate(stored) if stored else ReferencesConfig()
        data = {**stored, **self.merged(list(base.generators), base.validator)}
        for name in ("items", "engine", "max_rounds", "preflight"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return _validated(data)


def _validated(data: dict[str, Any]) -> ReferencesConfig:
    from crystalbench.config.loader import build_config

    return build_config(ReferencesConfig, base=data, environ={})


def build_from_job(
    job: ReferencesBuild, out: str | Path, *, on_event: Events | None = None
) -> BuildResult:
    """Build (or resume) the reference chains ``job`` describes into ``out``
    (:func:`crystalbench.references.build_references` with :meth:`ReferencesBuild.resolved`).

    Raises:
        InputError: See :func:`~crystalbench.references.build_references`.
    """
    from crystalbench.references.build import build_references

    return build_references(job.resolved(), out, on_event=on_event)


def regenerate_from_job(
    job: ReferencesRegenerate, out: str | Path, *, on_event: Events | None = None
) -> tuple[BuildResult, int]:
    """Send ``job``'s items of the build in ``out`` back for new rounds with fresh seeds.

    Returns:
        The build's result and how many distinct items were sent back.

    Raises:
        InputError: ``out`` is not a build, an id is not one of its items, or a change is
            invalid.
    """
    from crystalbench._internal.io import read_text_file
    from crystalbench.references.build import regenerate_references
    from crystalbench.references.pipeline import CONFIG_FILE

    folder = Path(out)
    stored_path = folder / CONFIG_FILE
    if not stored_path.is_file():
        raise InputError(f"{folder} is not a reference build (no {CONFIG_FILE})", path=folder)
    stored = dict(json.loads(read_text_file(stored_path)).get("config", {}))
    config = job.resolved(stored)
    ids, source = job.item_ids()
    overrides = config.record()
    result = regenerate_references(
        folder, ids, overrides=overrides, source=source, on_event=on_event
    )
    return result, len(dict.fromkeys(ids))
