"""Post-hoc checkpoint selection on validation, for runs that did not select one themselves.

verl and EasyR1 validate during training (on ``data.val_files``: give them the validation
split, never the benchmark's test items) and save ``global_step_N`` folders, but they pick no
checkpoint: the last one is what is left. :func:`select_from_log` reads the validation
metrics they logged and records the best validated checkpoint exactly like ``crystal train``
does (``best.json`` and a ``best`` link, :func:`~crystalbench.training.checkpoints.write_best`).
``crystal train-select RUN_DIR --metric NAME`` is its command.

Metrics logs read (:func:`read_metrics_log`):

- **JSONL**, one object per logged step: verl's ``file`` logger (``trainer.logger=[console,
  file]``, the path in ``VERL_FILE_LOGGER_PATH``) writes ``{"step": N, "data": {key: value}}``;
  EasyR1's file logger and most others write ``{"step": N, key: value, ...}``, with nested
  objects for ``val/...`` keys; ``crystal train``'s own ``validation.jsonl`` writes
  ``{"step": N, "metrics": {...}}``. Nested objects are flattened with ``/``.
- **CSV** with a ``step`` (or ``global_step``, ``_step``) column and one column per key (a
  tracker's export); empty cells are skipped.

Validation keys are those under ``val/``, ``val-core/`` or ``val-aux/`` (every key of a
``validation.jsonl``). ``--metric`` names one of them exactly, or a part of one that picks a
single key (:func:`resolve_metric`): ``heldout_f1_minilm`` finds verl's
``val-aux/crystal/heldout_f1_minilm/mean@1`` and EasyR1's ``val/heldout_f1_minilm_reward``.
A step is a candidate when a checkpoint folder of that step exists (``global_step_N`` for
verl and EasyR1, ``checkpoint-N`` for TRL). Torch-free.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crystalbench.errors import InputError, UnknownNameError
from crystalbench.training.checkpoints import CheckpointChoice, write_best

__all__ = [
    "METRICS_LOG_NAMES",
    "SelectConfig",
    "checkpoint_folders",
    "find_metrics_log",
    "read_metrics_log",
    "resolve_metric",
    "select_from_log",
    "validation_keys",
]

METRICS_LOG_NAMES = (
    "validation.jsonl",
    "metrics.jsonl",
    "experiment_log.jsonl",
    "metrics.csv",
)
"""Metrics logs looked for in the run folder, in this order, when none is named."""

_VALIDATION_PREFIXES = ("val/", "val-core/", "val-aux/")
_STEP_KEYS = ("step", "global_step", "_step")
_CHECKPOINT = re.compile(r"^(?:global_step_|checkpoint-)(\d+)$")


class SelectConfig(BaseModel):
    """What ``crystal train-select`` reads and how it chooses."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str
    """The run's checkpoint folder (verl's ``trainer.default_local_dir``, EasyR1's
    ``trainer.save_checkpoint_path``, a ``crystal train`` phase folder): where the
    ``global_step_N`` / ``checkpoint-N`` folders are, and where ``best.json`` is written."""
    metric: str = Field(min_length=1)
    """The validation metric that picks the checkpoint: a logged key or a part of one that
    names a single validation key (``heldout_f1_minilm``, ``val/accuracy_reward``)."""
    metrics_file: str | None = None
    """The metrics log (JSONL or CSV); ``None``: the first of ``validation.jsonl``,
    ``metrics.jsonl``, ``experiment_log.jsonl``, ``metrics.csv`` in ``run_dir``."""
    lower_is_better: bool = False
    """Pick the lowest value instead of the highest (a loss, a KL)."""


def _flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "/"))
        else:
            out[name] = value
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _step(row: Mapping[str, Any], path: Path, line: int) -> int:
    for key in _STEP_KEYS:
        if key in row and row[key] not in (None, ""):
            value = _number(row[key])
            if value is None or value != int(value):
                raise InputError(
                    f"{row[key]!r} is not a step number", path=path, line=line, field=key
                )
            return int(value)
    raise InputError(
        f"no step (one of {', '.join(_STEP_KEYS)})", path=path, line=line, field="step"
    )


def read_metrics_log(path: str | Path) -> tuple[dict[int, dict[str, float]], bool]:
    """The numeric values logged at each step, and whether every key is a validation key.

    Several records of one step are merged (later values win). Returns ``(values by step,
    all_validation)``; ``all_validation`` is true for a ``crystal train`` ``validation.jsonl``
    (``{"step", "metrics"}`` records), whose keys carry no ``val/`` prefix.

    Raises:
        InputError: The file is missing, or a line is not JSON, not an object, or has no step
            (file and line named).

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "m.jsonl").write_text(
        ...     '{"step": 2, "data": {"val-core/c/acc/mean@1": 0.5, "actor/lr": 1e-6}}\\n')
        >>> read_metrics_log(folder / "m.jsonl")
        ({2: {'val-core/c/acc/mean@1': 0.5, 'actor/lr': 1e-06}}, False)
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such metrics log", path=path)
    by_step: dict[int, dict[str, float]] = {}
    ours = True
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):
                step = _step(row, path, line)
                values = {
                    k: v
                    for k, raw in row.items()
                    if k and k not in _STEP_KEYS and (v := _number(raw)) is not None
                }
                by_step.setdefault(step, {}).update(values)
        return by_step, False
    text = path.read_text(encoding="utf-8")
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc.msg}", path=path, line=line) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", path=path, line=line)
        if list(record) == ["config"]:  # a logger's header line
            continue
        step = _step(record, path, line)
        if isinstance(record.get("metrics"), Mapping):
            body: Mapping[str, Any] = record["metrics"]
        elif isinstance(record.get("data"), Mapping):
            body, ours = record["data"], False
        else:
            body = {k: v for k, v in record.items() if k not in _STEP_KEYS}
            ours = False
        values = {
            k: v for k, raw_value in _flatten(body).items() if (v := _number(raw_value)) is not None
        }
        by_step.setdefault(step, {}).update(values)
    return by_step, ours and bool(by_step)


def validation_keys(keys: Iterable[str], *, all_validation: bool = False) -> list[str]:
    """The keys that are validation metrics (``val/``, ``val-core/``, ``val-aux/``), sorted.

    Examples:
        >>> validation_keys(["actor/lr", "val/accuracy_reward", "val-aux/c/f1/mean@1"])
        ['val-aux/c/f1/mean@1', 'val/accuracy_reward']
    """
    keys = set(keys)
    if all_validation:
        return sorted(keys)
    return sorted(k for k in keys if k.startswith(_VALIDATION_PREFIXES))


def resolve_metric(name: str, keys: Iterable[str]) -> str:
    """The one validation key ``name`` stands for.

    ``name`` is a key itself, or its ``/``-separated parts appear in a row among a key's
    parts (an EasyR1 part ``NAME_reward`` counts as ``NAME``). When several keys match and
    exactly one of them ends in a ``mean@K`` part (verl's mean over the validation samples),
    that one is taken.

    Raises:
        UnknownNameError: No key matches (the validation keys are listed).
        InputError: Several keys match (they are listed).

    Examples:
        >>> keys = ["val-aux/c/heldout_f1/mean@4", "val-aux/c/heldout_f1/std@4",
        ...         "val-core/c/acc/mean@4", "val/accuracy_reward"]
        >>> resolve_metric("heldout_f1", keys), resolve_metric("accuracy", keys)
        ('val-aux/c/heldout_f1/mean@4', 'val/accuracy_reward')
    """
    keys = sorted(set(keys))
    if name in keys:
        return name
    wanted = [part for part in name.split("/") if part]

    def parts(key: str) -> list[str]:
        return [p.removesuffix("_reward") if p.endswith("_reward") else p for p in key.split("/")]

    def contains(key: str) -> bool:
        have = parts(key)
        raw = key.split("/")
        for start in range(len(have) - len(wanted) + 1):
            window = range(start, start + len(wanted))
            if all(have[i] == w or raw[i] == w for i, w in zip(window, wanted, strict=True)):
                return True
        return False

    matches = [key for key in keys if wanted and contains(key)]
    if len(matches) > 1:
        means = [key for key in matches if key.rsplit("/", 1)[-1].startswith("mean@")]
        if len(means) == 1:
            return means[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UnknownNameError("validation metric", name, keys)
    raise InputError(
        f"{name!r} names several validation keys: {', '.join(matches)}; give one of them",
        field="metric",
    )


def checkpoint_folders(run_dir: str | Path) -> dict[int, Path]:
    """``step -> folder`` of the ``global_step_N`` and ``checkpoint-N`` folders in ``run_dir``."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return {}
    return {
        int(match.group(1)): path
        for path in run_dir.iterdir()
        if path.is_dir() and (match := _CHECKPOINT.match(path.name))
    }


def find_metrics_log(run_dir: str | Path) -> Path:
    """The metrics log in ``run_dir`` (:data:`METRICS_LOG_NAMES`, else its only ``.jsonl``).

    Raises:
        InputError: None there, or several ``.jsonl`` files and none of the known names.
    """
    run_dir = Path(run_dir)
    for name in METRICS_LOG_NAMES:
        if (run_dir / name).is_file():
            return run_dir / name
    found = sorted(run_dir.glob("*.jsonl")) if run_dir.is_dir() else []
    if len(found) == 1:
        return found[0]
    what = f"several .jsonl files ({', '.join(p.name for p in found)})" if found else "none"
    raise InputError(
        f"no metrics log in {run_dir} ({what}): name it with --metrics FILE (verl: "
        "trainer.logger=[console,file] with VERL_FILE_LOGGER_PATH=FILE; EasyR1: its file "
        "logger's experiment_log.jsonl; or a CSV export with a step column)",
        field="metrics_file",
    )


def select_from_log(config: SelectConfig) -> CheckpointChoice:
    """Pick the validated checkpoint with the best ``config.metric`` and record it.

    Writes ``best.json`` (the choice, ``split: validation``, the metrics log and the key) and
    a ``best`` link to the checkpoint folder into ``config.run_dir``. Ties go to the earlier
    step.

    Raises:
        InputError: No run folder, no metrics log, no such metric, or no step that was both
            validated and saved.
    """
    run_dir = Path(config.run_dir)
    if not run_dir.is_dir():
        raise InputError("no such run folder", path=run_dir, field="run_dir")
    log = Path(config.metrics_file) if config.metrics_file else find_metrics_log(run_dir)
    by_step, all_validation = read_metrics_log(log)
    keys = validation_keys(
        {key for values in by_step.values() for key in values}, all_validation=all_validation
    )
    if not keys:
        raise InputError(
            "no validation metrics (keys under val/, val-core/ or val-aux/) in the log: did the "
            "run validate (verl trainer.test_freq, EasyR1 trainer.val_freq)?",
            path=log,
            field="metric",
        )
    try:
        key = resolve_metric(config.metric, keys)
    except UnknownNameError as exc:
        raise InputError(exc.message, path=log, field="metric") from None
    checkpoints = checkpoint_folders(run_dir)
    steps = sorted(step for step in checkpoints if key in by_step.get(step, {}))
    if not steps:
        validated = sorted(step for step, values in by_step.items() if key in values)
        raise InputError(
            f"no step was both validated and saved: {key} at steps {validated}, checkpoints "
            f"at steps {sorted(checkpoints)} (save when you validate: verl "
            "trainer.save_freq = trainer.test_freq, EasyR1 trainer.save_freq = "
            "trainer.val_freq)",
            path=run_dir,
            field="run_dir",
        )
    sign = -1.0 if config.lower_is_better else 1.0
    best = max(steps, key=lambda step: (sign * by_step[step][key], -step))
    choice = CheckpointChoice(
        path=str(checkpoints[best]),
        step=best,
        metric=key,
        value=by_step[best][key],
        metrics={k: v for k, v in by_step[best].items() if k in set(keys)},
        candidates=[(step, by_step[step][key]) for step in steps],
    )
    write_best(
        run_dir,
        choice,
        extra={
            "metrics_file": str(log),
            "requested_metric": config.metric,
            "lower_is_better": config.lower_is_better,
        },
    )
    return choice
