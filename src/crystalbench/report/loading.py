"""Reading results folders (``examples.jsonl`` + ``summary.json``) for reports and tests.

A results folder is what ``crystal score`` (and ``crystal run`` / ``crystal demo``) write:
one :class:`~crystalbench.types.ItemResult` per line of ``examples.jsonl`` and one
:class:`~crystalbench.types.RunSummary` in ``summary.json``, written as a pair (see
:mod:`crystalbench.scoring.results`: the loader reads the examples that belong to the summary).
Malformed files raise :class:`~crystalbench.errors.InputError` naming the file, line and
field; softer problems (a summary that disagrees with its items, another schema version,
examples edited since they were written) become warnings.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from crystalbench._internal.io import read_json_file, read_jsonl
from crystalbench.config.settings import SCHEMA_VERSION
from crystalbench.errors import InputError
from crystalbench.metrics import METRICS, plural
from crystalbench.metrics import metric as metric_by_key
from crystalbench.scoring.results import EXAMPLES_FILE, SUMMARY_FILE, examples_for
from crystalbench.types import ItemResult, MetricSummary, RunSummary

MANIFEST_FILES = ("run.json", "manifest.json", "infer.json", "inference.json", "metadata.json")
"""Extra JSON files of a results folder searched for provenance (e.g. the prompt hash)."""


class ReportWarning(UserWarning):
    """Something a reader of the report or comparison must know, but not an error."""


def warn(message: str) -> None:
    """Emit a :class:`ReportWarning` (the CLI prints these; the report lists them)."""
    warnings.warn(message, ReportWarning, stacklevel=3)


@dataclass
class RunData:
    """One results folder, loaded.

    Attributes:
        name: Display name (the model from the config, else the folder name).
        path: The results folder.
        summary: ``summary.json``.
        items: ``examples.jsonl``, in file order.
        manifest: Provenance found in extra JSON files of the folder (may be empty).
    """

    name: str
    path: Path
    summary: RunSummary
    items: list[ItemResult]
    manifest: dict[str, Any] = field(default_factory=dict)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for position, item in enumerate(self.items):
            if item.id in index:
                raise InputError(
                    f"duplicate item id {item.id!r} (lines {index[item.id] + 1} and "
                    f"{position + 1})",
                    path=self.path / EXAMPLES_FILE,
                    field="id",
                )
            index[item.id] = position
        self._index = index

    def __len__(self) -> int:
        return len(self.items)

    @property
    def ids(self) -> list[str]:
        """Item ids in file order."""
        return [item.id for item in self.items]

    def position(self, item_id: str) -> int | None:
        """Index of the item with this id, or ``None``."""
        return self._index.get(item_id)

    @property
    def config(self) -> dict[str, Any]:
        """The scoring configuration recorded in ``summary.json``."""
        return self.summary.config

    def values(self, key: str, positions: Sequence[int] | None = None) -> np.ndarray:
        """Per-item values of a summary metric (``accuracy``, ``match_f1``, ``steps``...).

        Which per-item field a metric reads is :data:`crystalbench.metrics.METRICS`.
        Accuracy is 1 for a correct answer and 0 otherwise (missing, unparseable and
        unscored answers count as wrong, as in the summary).

        Args:
            key: A summary metric key.
            positions: Item positions to take (default: all, in file order).

        Raises:
            KeyError: Unknown metric.
        """
        value = metric_by_key(key).item_value
        items = self.items if positions is None else [self.items[p] for p in positions]
        return np.array([value(it) for it in items], dtype=np.float64)

    def labels(self, attribute: str, positions: Sequence[int] | None = None) -> list[str]:
        """Per-item ``source`` or ``difficulty`` labels."""
        items = self.items if positions is None else [self.items[p] for p in positions]
        return [str(getattr(it, attribute)) for it in items]

    @property
    def guard(self) -> str:
        """The fact guard the run was scored with (``none``: the paper, also for results
        written before the guard existed)."""
        return str(self.config.get("guard") or "none")

    @property
    def verifier(self) -> str:
        """Who verified the run's steps (``none``: no verifier, the paper): the judge's
        model (a panel's joined by ``+``), the mode and the prompt with its hash's first 8
        characters, e.g. ``vlm (unmatched, verify_step_v1@1a2b3c4d)``. Two runs are
        comparable on the verifier's figures only when this is the same."""
        from crystalbench.scoring.verify import verifier_label

        return verifier_label(self.summary.verification)

    def prompt_hash(self) -> str | None:
        """The prompt hash from the config or a manifest file of the folder, when recorded."""
        found = find_key(self.config, "prompt_hash") or find_key(self.manifest, "prompt_hash")
        return str(found) if found is not None else None

    def provenance(self) -> dict[str, Any]:
        """Encoder, tau, alpha, order metric, versions, prompt hash, benchmark fingerprint."""
        config = self.config
        return {
            "encoder": config.get("encoder"),
            "encoder_identity": config.get("encoder_identity"),
            "tau": config.get("threshold"),
            "alpha": config.get("alpha"),
            "order_metric": config.get("order_metric"),
            "compat": config.get("compat"),
            "answer_rules": config.get("answer_rules"),
            "guard": self.guard,
            "verifier": self.verifier,
            "judge": config.get("judge_identity") or _judge_label(config.get("judge")),
            "package_version": config.get("package_version"),
            "schema_version": self.summary.schema_version,
            "prompt_hash": self.prompt_hash(),
            "model": config.get("model"),
            "benchmark": config.get("benchmark"),
            "benchmark_fingerprint": config.get("benchmark_fingerprint"),
            "sources": config.get("sources"),
            "scored_at": config.get("created_at"),
            "results_dir": str(self.path),
        }


def _judge_label(judge: Any) -> str | None:
    if isinstance(judge, dict) and judge.get("model"):
        return f"{judge.get('model')} @ {judge.get('url')}"
    return None


def find_key(value: Any, key: str) -> Any:
    """The first value stored under ``key`` anywhere in nested dicts and lists, or ``None``.

    Examples:
        >>> find_key({"inference": {"prompt": {"prompt_hash": "ab12"}}}, "prompt_hash")
        'ab12'
        >>> find_key([1, {"x": 2}], "y") is None
        True
    """
    if isinstance(value, dict):
        if value.get(key) is not None:
            return value[key]
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = find_key(child, key)
        if found is not None:
            return found
    return None


def is_results_folder(path: str | Path) -> bool:
    """True for a folder holding ``summary.json`` (or the path of one of the two files).

    Examples:
        >>> is_results_folder("/nonexistent/folder")
        False
    """
    path = Path(path)
    if path.is_file():
        return path.name in (EXAMPLES_FILE, SUMMARY_FILE) and (path.parent / SUMMARY_FILE).is_file()
    return (path / SUMMARY_FILE).is_file()


def _read_summary(path: Path) -> tuple[RunSummary, dict[str, Any]]:
    """``summary.json`` validated, and the raw mapping (to know which fields it recorded)."""
    file = path / SUMMARY_FILE
    if not file.is_file():
        raise InputError(
            f"not a results folder: {SUMMARY_FILE} is missing (run `crystal score` first)",
            path=path,
        )
    data = read_json_file(file, whole=False)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=file)
    try:
        return RunSummary.model_validate(data), data
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first.get("loc", ())) or None
        raise InputError(first.get("msg", "invalid value"), path=file, field=loc) from None


def _read_items(path: Path, file: Path) -> list[ItemResult]:
    if not file.is_file():
        raise InputError(f"not a results folder: {EXAMPLES_FILE} is missing", path=path)
    items: list[ItemResult] = []
    for line, record in read_jsonl(file, allow_empty=True):
        try:
            items.append(ItemResult.model_validate(record))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(part) for part in first.get("loc", ())) or None
            raise InputError(
                first.get("msg", "invalid value"), path=file, line=line, field=loc
            ) from None
    return items


def _with_no_steps_counted(summary: RunSummary, items: Sequence[ItemResult]) -> RunSummary:
    """A summary written before ``n_no_steps`` existed, with that count taken from its items.

    Those items were part of ``n_scored`` then; they move to ``n_no_steps`` (overall, by
    source and by difficulty) so that ``n_items = n_scored + n_no_steps + n_missing +
    n_parse_failed`` holds for old results too. No metric changes.
    """

    def recount(group: MetricSummary, members: Sequence[ItemResult]) -> MetricSummary:
        n = sum(1 for it in members if it.no_steps)
        return group.model_copy(update={"n_no_steps": n, "n_scored": max(group.n_scored - n, 0)})

    by_source = {
        key: recount(group, [it for it in items if it.source == key])
        for key, group in summary.by_source.items()
    }
    by_difficulty = {
        key: recount(group, [it for it in items if it.difficulty == key])
        for key, group in summary.by_difficulty.items()
    }
    overall = recount(summary, items)
    return summary.model_copy(
        update={
            "n_no_steps": overall.n_no_steps,
            "n_scored": overall.n_scored,
            "by_source": by_source,
            "by_difficulty": by_difficulty,
        }
    )


def _read_manifest(path: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = {}
    for name in MANIFEST_FILES:
        file = path / name
        if not file.is_file():
            continue
        try:
            data = read_json_file(file, whole=False)
        except InputError as exc:
            warn(f"{exc}; ignored for provenance")
            continue
        if isinstance(data, dict):
            manifest[name] = data
    return manifest


def _check_consistency(run: RunData) -> None:
    """Warn when summary.json and examples.jsonl tell different stories."""
    summary = run.summary
    where = run.path
    if summary.schema_version != SCHEMA_VERSION:
        warn(
            f"{where}: results schema version {summary.schema_version!r}, this crystalbench "
            f"reads {SCHEMA_VERSION!r}"
        )
    n = len(run.items)
    if n != summary.n_items:
        warn(
            f"{where}: summary.json counts {plural(summary.n_items, 'item')} "
            f"but examples.jsonl holds {n} "
            "(truncated or edited results?)"
        )
        return
    if n == 0:
        return
    for declared in METRICS:
        mean = float(run.values(declared.key).mean())
        recorded = float(getattr(summary, declared.key))
        if abs(mean - recorded) > 1e-6:
            warn(
                f"{where}: summary.json {declared.key} = {recorded:.6f} but the mean "
                f"over examples.jsonl is {mean:.6f}; the report uses examples.jsonl"
            )
    missing = sum(1 for it in run.items if it.missing)
    failed = sum(1 for it in run.items if it.parse_failed)
    no_steps = sum(1 for it in run.items if it.no_steps)
    if (missing, failed, no_steps) != (
        summary.n_missing,
        summary.n_parse_failed,
        summary.n_no_steps,
    ):
        warn(
            f"{where}: summary.json counts {summary.n_missing} missing / "
            f"{summary.n_parse_failed} parse failures / {summary.n_no_steps} without steps; "
            f"examples.jsonl has {missing} / {failed} / {no_steps}"
        )


def _read_pair(folder: Path) -> tuple[RunSummary, list[ItemResult]]:
    """The summary and the examples that belong to it
    (:func:`crystalbench.scoring.results.examples_for`).

    A run that commits while the folder is being read changes the summary under the
    reader: the pair is then read again, once.
    """
    for attempt in range(2):
        summary, raw = _read_summary(folder)
        found = examples_for(folder, summary)
        items = _read_items(folder, found.path)
        if found.problem is not None and attempt == 0:
            again, _ = _read_summary(folder)
            if again.run_id != summary.run_id:  # a run committed meanwhile: read its pair
                continue
        if found.problem is not None:
            warn(found.problem)
        if "n_no_steps" not in raw:
            summary = _with_no_steps_counted(summary, items)
        return summary, items
    raise AssertionError("unreachable")  # pragma: no cover


def load_run(path: str | Path, *, name: str | None = None) -> RunData:
    """Load one results folder.

    Args:
        path: A folder holding ``examples.jsonl`` and ``summary.json`` (or the path of
            one of those files).
        name: Display name; default: the ``model`` recorded in the config, else the
            folder name.

    Raises:
        InputError: The folder or a file is missing or malformed (file, line, field).
    """
    folder = Path(path)
    if folder.is_file() and folder.name in (EXAMPLES_FILE, SUMMARY_FILE):
        folder = folder.parent
    if not folder.is_dir():
        raise InputError("results folder not found", path=folder)
    summary, items = _read_pair(folder)
    manifest = _read_manifest(folder)
    model = summary.config.get("model")
    display = name or (str(model) if isinstance(model, str) and model.strip() else None)
    display = display or folder.resolve().name
    run = RunData(name=display, path=folder, summary=summary, items=items, manifest=manifest)
    _check_consistency(run)
    return run


def load_runs(paths: Sequence[str | Path], *, names: Sequence[str] | None = None) -> list[RunData]:
    """Load several results folders; duplicate display names get their folder appended.

    Raises:
        InputError: No folder given, a folder is malformed, or ``names`` has the wrong length.
    """
    if not paths:
        raise InputError("no results folder given")
    if names is not None and len(names) != len(paths):
        raise InputError(f"{len(names)} names for {len(paths)} results folders", field="name")
    runs = [
        load_run(path, name=names[i] if names is not None else None) for i, path in enumerate(paths)
    ]
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.name] = counts.get(run.name, 0) + 1
    seen: dict[str, int] = {}
    for run in runs:
        if counts[run.name] > 1:
            base = f"{run.name} ({run.path.resolve().name})"
            seen[base] = seen.get(base, 0) + 1
            run.name = base if seen[base] == 1 else f"{base} #{seen[base]}"
    return runs


@dataclass(frozen=True)
class Selection:
    """Which of the paths a user gave are results folders (see :func:`select_results`).

    Attributes:
        paths: The results folders, in the order given.
        names: Their display names (``None`` when none were given).
        skipped: One line per path left out, saying why.
    """

    paths: list[Path]
    names: list[str] | None
    skipped: list[str]


def select_results(paths: Sequence[str | Path], *, names: Sequence[str] | None = None) -> Selection:
    """Keep the paths that are results folders; say which others were left out, and why.

    A shell glob (``crystal leaderboard crystal-demo/*``) also matches the files beside
    the results folders (``report.html``); they are skipped with a note rather than
    failing the command. A folder that holds ``summary.json`` is kept even when it is
    broken, so that its error is reported by the loader.

    Args:
        paths: What the user gave.
        names: One display name per path (those of skipped paths are dropped too).

    Raises:
        InputError: ``names`` does not have one entry per path, or no path is usable.
    """
    if names is not None and len(names) != len(paths):
        raise InputError(f"{len(names)} names for {len(paths)} results folders", field="name")
    kept: list[Path] = []
    kept_names: list[str] = []
    skipped: list[str] = []
    for index, given in enumerate(paths):
        path = Path(given)
        if is_results_folder(path):
            kept.append(path)
            if names is not None:
                kept_names.append(names[index])
            continue
        if not path.exists():
            why = "no such file or folder"
        elif path.is_dir():
            why = f"not a results folder (no {SUMMARY_FILE})"
        else:
            why = "a file, not a results folder"
        skipped.append(f"skipped {path}: {why}")
    if not kept:
        raise InputError(
            "none of the paths given is a results folder (a folder with "
            f"{EXAMPLES_FILE} and {SUMMARY_FILE} written by `crystal score`): " + "; ".join(skipped)
        )
    return Selection(paths=kept, names=kept_names if names is not None else None, skipped=skipped)


@dataclass(frozen=True)
class Alignment:
    """Which items two runs share, in run A's order."""

    common: list[str]
    """Ids present in both runs, in A's order."""
    only_a: list[str]
    """Ids only in run A."""
    only_b: list[str]
    """Ids only in run B."""

    @property
    def identical(self) -> bool:
        """True when both runs hold exactly the same ids."""
        return not self.only_a and not self.only_b


def align_runs(a: RunData, b: RunData) -> Alignment:
    """Match the items of two runs by id.

    Examples:
        >>> from types import SimpleNamespace as NS
        >>> align_runs(NS(ids=["1", "2", "3"]), NS(ids=["3", "4", "1"]))
        Alignment(common=['1', '3'], only_a=['2'], only_b=['4'])
    """
    ids_b = set(b.ids)
    ids_a = set(a.ids)
    return Alignment(
        common=[i for i in a.ids if i in ids_b],
        only_a=[i for i in a.ids if i not in ids_b],
        only_b=[i for i in b.ids if i not in ids_a],
    )
