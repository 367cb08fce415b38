"""Results folders logged to an experiment tracker (MLflow, Weights & Biases).

``crystal score``, ``crystal run`` and ``crystal leaderboard`` take ``--tracker mlflow`` or
``--tracker wandb`` (opt-in; one extra each: ``mlflow``, ``wandb``). Files stay the record of
a run: the tracker gets a copy of what the results folder holds, read back from the folder as
reports read it, so a logged run is exactly what was written:

- the configuration (``summary.json``'s ``config``, flattened to ``a.b`` keys) as parameters;
- the summary (every metric and count) and the breakdowns (``by_source/NAME/METRIC``,
  ``by_difficulty/NAME/METRIC``, MMVP ``pairs/...``) as metrics;
- the per-item table (one row per item: id, source, difficulty, status, answer, step metrics);
- ``summary.json`` and ``examples.jsonl`` as artifacts;
- tags: the results folder, its ``run_id`` and ``examples_sha256``, the crystalbench version
  and the command that logged it.

MLflow honours ``MLFLOW_TRACKING_URI`` (and its other environment variables); without it
MLflow's own default applies. A results folder already logged to the same MLflow experiment
(same ``run_id`` tag) is not logged twice. Weights & Biases honours ``WANDB_MODE`` (``offline``
writes a local run that ``wandb sync`` uploads later), ``WANDB_DIR``, ``WANDB_ENTITY`` and the
rest of its environment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from crystalbench._internal.extras import require
from crystalbench.errors import InputError
from crystalbench.report.loading import RunData
from crystalbench.scoring.results import EXAMPLES_FILE, SUMMARY_FILE
from crystalbench.types import MetricSummary, RunSummary

__all__ = [
    "DEFAULT_PROJECT",
    "ITEM_COLUMNS",
    "TRACKERS",
    "TrackedRun",
    "Tracker",
    "check_tracker",
    "config_params",
    "item_rows",
    "run_metrics",
    "track_runs",
]

Tracker = Literal["mlflow", "wandb"]
TRACKERS: tuple[str, ...] = ("mlflow", "wandb")
"""The experiment trackers ``--tracker`` accepts."""

DEFAULT_PROJECT = "crystalbench"
"""The MLflow experiment / W&B project runs go to unless ``--tracker-project`` names one."""

ITEM_COLUMNS: tuple[str, ...] = (
    "id",
    "source",
    "difficulty",
    "missing",
    "parse_status",
    "answer_correct",
    "answer_rule",
    "pred_answer",
    "gold_answer",
    "n_pred",
    "n_ref",
    "n_matched",
    "match_f1",
    "precision",
    "recall",
    "lis",
    "kendall",
    "ordered_f1",
    "ref_chain",
)
"""Columns of the per-item table, in order (fields of an ``examples.jsonl`` line)."""

_SUMMARY_FIELDS: tuple[str, ...] = tuple(MetricSummary.model_fields)
_PARAM_LIMIT = 6000
"""MLflow's longest parameter value; longer values are cut with a note (the whole
configuration is in the logged ``summary.json``)."""
_KEY_CHARACTER = re.compile(r"[^A-Za-z0-9_\-. /]")


@dataclass(frozen=True)
class TrackedRun:
    """One results folder as the tracker holds it."""

    name: str
    """The run's display name (the model, else the folder)."""
    tracker: str
    """``mlflow`` or ``wandb``."""
    run_id: str
    """The tracker's id of the run."""
    location: str
    """Where it went: the MLflow tracking URI or the W&B run folder / URL."""
    already_logged: bool = False
    """The folder was already in the tracker (same ``run_id``): nothing new was logged."""


def _key(*parts: str) -> str:
    """A metric key both trackers accept (``by_source/plot qa/match_f1``).

    Examples:
        >>> _key("by_source", "chart:qa", "match_f1")
        'by_source/chart_qa/match_f1'
    """
    return "/".join(_KEY_CHARACTER.sub("_", part) for part in parts)


def _numbers(summary: MetricSummary, prefix: tuple[str, ...] = ()) -> dict[str, float]:
    values: dict[str, float] = {}
    for name in _SUMMARY_FIELDS:
        value = getattr(summary, name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        values[_key(*prefix, name)] = float(value)
    return values


def run_metrics(summary: RunSummary) -> dict[str, float]:
    """Every number of ``summary.json``: the summary's metrics and counts, its breakdowns
    (``by_source/NAME/METRIC``, ``by_difficulty/NAME/METRIC``), the MMVP pairs
    (``pairs/...``) and the guard's vetoes by reason (``vetoed_by_reason/REASON``)."""
    values = _numbers(summary)
    for breakdown in ("by_source", "by_difficulty"):
        for name, part in getattr(summary, breakdown).items():
            values.update(_numbers(part, (breakdown, name)))
    if summary.pairs is not None:
        for name, value in summary.pairs.model_dump().items():
            values[_key("pairs", name)] = float(value)
    for reason, count in summary.vetoed_by_reason.items():
        values[_key("vetoed_by_reason", reason)] = float(count)
    for name in ("n_unknown_ids", "n_invalid_records"):
        values[name] = float(getattr(summary, name))
    return values


def _flatten(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def config_params(config: Mapping[str, Any]) -> dict[str, str]:
    """The run's configuration as tracker parameters: nested keys joined by ``.``, values as
    JSON text (strings as they are), values longer than MLflow's limit cut with a note.

    Examples:
        >>> config_params({"encoder": "hash", "tau": 0.35, "judge": {"model": "m", "n": None}})
        {'encoder': 'hash', 'tau': '0.35', 'judge.model': 'm', 'judge.n': 'null'}
    """
    params: dict[str, str] = {}
    for key, value in _flatten(config, ""):
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        if len(text) > _PARAM_LIMIT:
            note = " ... (cut; the whole value is in summary.json)"
            text = text[: _PARAM_LIMIT - len(note)] + note
        params[key] = text
    return params


def item_rows(run: RunData) -> list[list[Any]]:
    """The per-item table: one row per ``examples.jsonl`` line, :data:`ITEM_COLUMNS` in order."""
    rows = []
    for item in run.items:
        data = item.model_dump()
        data["n_matched"] = len(item.matches)
        rows.append([data.get(column) for column in ITEM_COLUMNS])
    return rows


def _tags(run: RunData, command: str) -> dict[str, str]:
    from crystalbench._version import __version__

    summary = run.summary
    return {
        "crystalbench.results_dir": str(run.path),
        "crystalbench.run_id": summary.run_id or "",
        "crystalbench.examples_sha256": summary.examples_sha256 or "",
        "crystalbench.schema_version": summary.schema_version,
        "crystalbench.version": __version__,
        "crystalbench.command": command,
        "crystalbench.benchmark": str(summary.config.get("benchmark", "")),
    }


def check_tracker(tracker: str) -> None:
    """Refuse an unknown tracker or one whose package is missing, before any work is done.

    Raises:
        InputError: ``tracker`` is not one of :data:`TRACKERS` (names the nearest).
        MissingExtraError: Its package is not installed (names the extra).

    Examples:
        >>> try:
        ...     check_tracker("mlfow")
        ... except InputError as error:
        ...     print(error)
        --tracker: unknown tracker 'mlfow'; did you mean 'mlflow'? (valid: mlflow, wandb)
    """
    if tracker not in TRACKERS:
        from crystalbench.errors import UnknownNameError

        raise InputError(f"--tracker: {UnknownNameError('tracker', tracker, TRACKERS).message}")
    require(tracker, what=f"--tracker {tracker}", extra=tracker, load=False)


def track_runs(
    runs: Sequence[RunData],
    tracker: str,
    *,
    project: str | None = None,
    command: str = "crystal score",
    group: str | None = None,
) -> list[TrackedRun]:
    """Log each results folder of ``runs`` to ``tracker`` as one tracker run.

    Args:
        runs: Results folders, loaded (:func:`crystalbench.report.load_run`).
        tracker: ``mlflow`` or ``wandb``.
        project: The MLflow experiment or W&B project (default :data:`DEFAULT_PROJECT`).
        command: The command that logs them (a tag).
        group: A name that groups the runs (``crystal leaderboard`` passes one): an MLflow tag
            ``crystalbench.group``, the W&B run group.

    Returns:
        One :class:`TrackedRun` per folder, in order.

    Raises:
        InputError: An unknown tracker.
        MissingExtraError: The tracker's package is not installed (names its extra).
    """
    check_tracker(tracker)
    project = project or DEFAULT_PROJECT
    if tracker == "mlflow":
        return [_log_mlflow(run, project, command, group) for run in runs]
    return [_log_wandb(run, project, command, group) for run in runs]


def _log_mlflow(run: RunData, project: str, command: str, group: str | None) -> TrackedRun:
    mlflow = require("mlflow", what="--tracker mlflow", extra="mlflow")
    assert mlflow is not None
    experiment = mlflow.set_experiment(project)
    uri = mlflow.get_tracking_uri()
    tags = _tags(run, command)
    if group:
        tags["crystalbench.group"] = group
    if run.summary.run_id:
        earlier = mlflow.search_runs(
            experiment_ids=[experiment.experiment_id],
            filter_string=f"tags.`crystalbench.run_id` = '{run.summary.run_id}'",
            output_format="list",
            max_results=1,
        )
        if earlier:
            return TrackedRun(run.name, "mlflow", earlier[0].info.run_id, uri, already_logged=True)
    with mlflow.start_run(run_name=run.name, tags=tags) as active:
        params = config_params(run.summary.config)
        names = list(params)
        for start in range(0, len(names), 100):
            mlflow.log_params({name: params[name] for name in names[start : start + 100]})
        mlflow.log_metrics(run_metrics(run.summary))
        rows = item_rows(run)
        table = {column: [row[i] for row in rows] for i, column in enumerate(ITEM_COLUMNS)}
        mlflow.log_table(table, artifact_file="items.json")
        for name in (SUMMARY_FILE, EXAMPLES_FILE):
            mlflow.log_artifact(str(run.path / name), artifact_path="results")
        run_id = active.info.run_id
    return TrackedRun(run.name, "mlflow", run_id, uri)


def _log_wandb(run: RunData, project: str, command: str, group: str | None) -> TrackedRun:
    wandb = require("wandb", what="--tracker wandb", extra="wandb")
    assert wandb is not None
    tags = _tags(run, command)
    active = wandb.init(
        project=project,
        name=run.name,
        group=group,
        job_type=command.removeprefix("crystal ").replace(" ", "-"),
        config=dict(run.summary.config),
        tags=[f"schema-{run.summary.schema_version}"],
        notes=f"results folder {run.path}",
        reinit="create_new",
    )
    try:
        active.summary.update({**run_metrics(run.summary), **tags})
        active.log(
            {"items": wandb.Table(columns=list(ITEM_COLUMNS), data=item_rows(run))}, commit=True
        )
        artifact = wandb.Artifact(_wandb_name(run.name), type="crystal-results")
        for name in (SUMMARY_FILE, EXAMPLES_FILE):
            artifact.add_file(str(run.path / name), name=name)
        active.log_artifact(artifact)
        location = active.url or active.dir
        run_id = active.id
    finally:
        active.finish()
    return TrackedRun(run.name, "wandb", run_id, str(location))


def _wandb_name(name: str) -> str:
    """An artifact name W&B accepts (letters, digits, ``-``, ``_``, ``.``).

    Examples:
        >>> _wandb_name("qwen2.5-vl 7b/cot")
        'crystal-results-qwen2.5-vl_7b_cot'
    """
    return "crystal-results-" + re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
