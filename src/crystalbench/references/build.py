"""Building and regenerating a reference benchmark: the folder checks, the engine choice and the
run that drives :class:`~crystalbench.references.pipeline.Builder` and writes the outputs.

The top of the package: it imports the pipeline, the engines and the output writers, and none
of them imports it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_json, read_text_file
from crystalbench.data.loading import Benchmark, load_benchmark
from crystalbench.errors import InputError
from crystalbench.references.config import ReferencesConfig
from crystalbench.references.engine import Engine, LocalEngine, check_endpoint_urls
from crystalbench.references.pipeline import CONFIG_FILE, Builder, BuildResult, Events, Journals
from crystalbench.references.records import RegenerationRecord, lock_folder

__all__ = [
    "build_references",
    "load_items",
    "make_engine",
    "read_ids_file",
    "regenerate_references",
]


def _check_folder(out: Path, config: ReferencesConfig, *, resume_only: bool) -> dict[str, Any]:
    """Check ``out`` is a fresh folder or a build with the same content configuration;
    returns the stored configuration (empty for a new folder)."""
    stored_path = out / CONFIG_FILE
    if stored_path.is_file():
        stored = json.loads(read_text_file(stored_path))
        before = stored.get("content", {})
        now = json.loads(json.dumps(config.content()))
        differ = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        if differ:
            raise InputError(
                f"{out} was built with another configuration ({', '.join(differ)} differ): "
                "resume with the same settings, or build into another --out",
                path=stored_path,
            )
        return dict(stored)
    if resume_only:
        raise InputError(f"{out} is not a reference build (no {CONFIG_FILE})", path=out)
    if out.exists() and any(p for p in out.iterdir() if not p.name.startswith(".")):
        raise InputError(
            f"{out} exists and is not a reference build: choose a new or empty folder", path=out
        )
    return {}


def _store_config(out: Path, config: ReferencesConfig) -> None:
    atomic_write_json(
        out / CONFIG_FILE,
        {"content": config.content(), "config": config.record(), "schema_version": "references-1"},
    )


def load_items(config: ReferencesConfig, benchmark: Benchmark | None = None) -> Benchmark:
    """The items ``config`` selects (existing reference steps are ignored).

    Raises:
        InputError: No item set is named, or the selection names unknown ids.
    """
    if benchmark is None:
        if not config.items:
            raise InputError("no items to build references for: pass --items", field="items")
        benchmark = load_benchmark(
            config.items, image_root=config.image_root, require_references=False
        )
    return benchmark.subset(ids=config.ids, limit=config.limit)


def build_references(
    config: ReferencesConfig,
    out: str | Path,
    *,
    benchmark: Benchmark | None = None,
    engine: Engine | None = None,
    encoder: Any = None,
    on_event: Events | None = None,
    write: bool = True,
) -> BuildResult:
    """Build (or resume building) reference chains for an item set into ``out``.

    Args:
        config: The build's configuration (``config.items`` names the item set unless
            ``benchmark`` is given).
        out: The output folder (new, empty, or an earlier build to resume).
        benchmark: Already loaded items instead of ``config.items``.
        engine: An engine instead of the one ``config.engine`` names.
        encoder: An encoder instead of ``config.encoder`` (tests).
        on_event: Called with one line per stage.
        write: Write ``benchmark.jsonl``, ``summary.json`` and the report at the end.

    Returns:
        The :class:`BuildResult`.

    Raises:
        InputError: Bad items, a folder holding another build or something else, a bad
            prompt file, a model without base URL.
        InferenceAbortedError: A model refuses every request (bad key, unknown model); the
            journals keep what was done, rerun the same command to resume.
    """
    return _run(config, Path(out), benchmark, engine, encoder, on_event, write, regenerate=None)


def regenerate_references(
    out: str | Path,
    ids: Sequence[str],
    *,
    overrides: dict[str, Any] | None = None,
    source: str | None = None,
    benchmark: Benchmark | None = None,
    engine: Engine | None = None,
    encoder: Any = None,
    on_event: Events | None = None,
    write: bool = True,
) -> BuildResult:
    """Send items of an earlier build back for new rounds with fresh seeds.

    The build's stored configuration is used (``overrides`` may change operational fields:
    URLs, concurrency, engine, ``max_rounds``...). Each item gets up to ``max_rounds`` new
    rounds after its last one; its earlier rounds stay in the journals.

    Raises:
        InputError: ``out`` is not a build, or an id is not one of its items.
    """
    folder = Path(out)
    stored_path = folder / CONFIG_FILE
    if not stored_path.is_file():
        raise InputError(f"{folder} is not a reference build (no {CONFIG_FILE})", path=folder)
    stored = json.loads(read_text_file(stored_path))
    data = dict(stored.get("config", {}))
    for name, value in (overrides or {}).items():
        data[name] = value
    from crystalbench.references.config import load_references_config

    config = load_references_config(overrides=data)
    return _run(
        config, folder, benchmark, engine, encoder, on_event, write, regenerate=(ids, source)
    )


def _run(
    config: ReferencesConfig,
    out: Path,
    benchmark: Benchmark | None,
    engine: Engine | None,
    encoder: Any,
    on_event: Events | None,
    write: bool,
    regenerate: tuple[Sequence[str], str | None] | None,
) -> BuildResult:
    items = load_items(config, benchmark)
    if not items.items:
        raise InputError("the selection holds no items", field="items")
    warnings: list[str] = []
    with lock_folder(out):
        _check_folder(out, config, resume_only=regenerate is not None)
        if any(item.reference_steps for item in items.items):
            warnings.append("the items already have reference_steps: they are ignored and rebuilt")
        own_engine = engine is None
        if engine is None:
            engine = make_engine(config)
        journals = Journals.open(out, config.fsync_interval)
        warnings.extend(journals.torn())
        try:
            _store_config(out, config)
            builder = Builder(config, out, items, journals, engine, encoder, on_event)
            if regenerate is not None:
                _request_regeneration(builder, regenerate[0], regenerate[1])
            pending = any(not builder.plan(i).final for i in builder.items)
            if pending and config.preflight and hasattr(engine, "preflight"):
                warnings.extend(engine.preflight())
            plans = builder.run()
        finally:
            journals.close()
            if own_engine:
                engine.close()
        summary: dict[str, Any] = {}
        if write:
            from crystalbench.references.output import write_outputs

            summary = write_outputs(builder, plans, warnings=warnings)
    return BuildResult(out=out, plans=plans, summary=summary, warnings=warnings)


def _request_regeneration(builder: Builder, ids: Sequence[str], source: str | None) -> None:
    unknown = [i for i in ids if i not in builder.items]
    if unknown:
        raise InputError(
            f"{len(unknown)} id(s) are not items of this build: {', '.join(unknown[:5])}",
            path=source,
        )
    for item_id in dict.fromkeys(ids):
        plan = builder.plan(item_id)
        last = plan.round if plan.final else plan.round - 1
        if not plan.final and plan.round == plan.first_round:
            continue  # already sent back and not started again: nothing to add
        key = f"{item_id}|after-r{last}"
        if key not in builder.journals.regenerations:
            builder.journals.regenerations.append(
                RegenerationRecord(key=key, item_id=item_id, after_round=last, source=source)
            )


def make_engine(config: ReferencesConfig) -> Engine:
    """The engine ``config.engine`` names.

    Raises:
        InputError: The engine sends HTTP requests and a model has no base URL (all such
            models are named: :func:`~crystalbench.references.engine.check_endpoint_urls`).
    """
    if config.engine != "ray" or config.ray.processor == "http":
        check_endpoint_urls(config)
    if config.engine == "ray":
        from crystalbench.references.ray_engine import RayEngine

        return RayEngine(config)
    return LocalEngine(config)


def read_ids_file(path: str | Path) -> list[str]:
    """Item ids from a file: one id per line (blank lines and ``#`` comments skipped), or
    JSONL with an ``id`` or ``item_id`` field (the review app's export).

    Raises:
        InputError: The file is missing, empty, or a JSONL line has no id (names the line).

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "ids.txt"
        >>> _ = p.write_text("# rejected in review\\nplotqa/1\\n\\nmmvp/2\\n")
        >>> read_ids_file(p)
        ['plotqa/1', 'mmvp/2']
        >>> _ = p.write_text('{"item_id": "a", "verdict": "reject"}\\n{"id": "b"}\\n')
        >>> read_ids_file(p)
        ['a', 'b']
    """
    path = Path(path)
    text = read_text_file(path)
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1)]
    lines = [(n, line) for n, line in lines if line and not line.startswith("#")]
    if not lines:
        raise InputError("the ids file holds no ids", path=path)
    ids: list[str] = []
    if lines[0][1].startswith("{"):
        from crystalbench._internal.io import read_jsonl

        for number, row in read_jsonl(path):
            value = row.get("id", row.get("item_id"))
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise InputError("no id or item_id field", path=path, line=number, field="id")
            ids.append(str(value))
        return ids
    return [line for _, line in lines]
