"""``crystal review import``: reference chains and step pairs into review tasks.

Two inputs, told apart by what they are:

- **A references output folder** ``DIR`` (``crystal references build``), or its
  ``DIR/benchmark.jsonl``: accepted items as :class:`~crystalbench.types.BenchmarkItem`
  records, image paths relative to the file. ``metadata["reference_provenance"]``, when
  present, holds one entry per step with ``support`` (int), ``models`` (list) and ``members``
  (the cluster's candidate steps: strings, or objects with ``text``);
  ``metadata["reference_round"]`` the construction round. Each item becomes one chain task;
  ``metadata["gold_verdict"]`` (``accept``/``reject``) makes it a gold task.
- **A step-pair file** (JSONL or CSV from ``crystal validate sample-pairs``): ``pair_id``,
  ``item_id``, ``pred_step``, ``ref_step`` and, kept hidden from annotators, ``model``,
  ``cosine``, ``band``; an optional ``gold_label`` (``match``/``no_match``) makes a gold
  task. The item's question and image come from ``--benchmark``.

Images are never copied: an item keeps its path relative to the benchmark folder it was
checked against (:mod:`crystalbench.data.images`), and the app reads it from there by task id.
Importing the same file again changes nothing; a regenerated chain (other steps or round) is
a new task; a pair id seen before with other content is refused.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crystalbench._internal.io import (
    InputLimits,
    note_first_line,
    read_csv,
    read_jsonl,
    resolve_limits,
)
from crystalbench.config.settings import REVIEW_ANNOTATORS_PER_CHAIN, REVIEW_ANNOTATORS_PER_PAIR
from crystalbench.data.images import image_roots
from crystalbench.data.loading import ITEM_SET_FILE, SAMPLE_DIR, Benchmark, load_jsonl_benchmark
from crystalbench.errors import InputError
from crystalbench.precedence import Precedence
from crystalbench.review import audit
from crystalbench.review.labels import CHAIN_VERDICTS
from crystalbench.review.models import ImportBatch, Item, Task, utcnow
from crystalbench.types import BenchmarkItem

PAIR_REQUIRED = ("pair_id", "item_id", "pred_step", "ref_step")
PAIR_HIDDEN = ("model", "cosine", "band")
PAIR_GOLD = ("match", "no_match")


@dataclass(frozen=True)
class ImportSummary:
    """What one import did."""

    kind: str
    import_id: int | None
    added: int
    unchanged: int
    gold: int
    source: str


def detect_kind(path: Path) -> str:
    """``chain`` for a references folder or a benchmark file, ``pair`` for a pair file.

    Raises:
        InputError: Neither.
    """
    if path.is_dir():
        if (path / "benchmark.jsonl").is_file():
            return "chain"
        raise InputError("not a references output folder (no benchmark.jsonl in it)", path=path)
    if not path.is_file():
        raise InputError("file or folder not found", path=path)
    if path.suffix.lower() == ".csv":
        return "pair"
    if path.suffix.lower() != ".jsonl":
        raise InputError(
            "expected a references folder, a benchmark.jsonl, or a pair file (.jsonl or .csv)",
            path=path,
        )
    for _number, row in read_jsonl(path):
        return "pair" if "pair_id" in row else "chain"
    raise InputError("file holds no records", path=path)  # pragma: no cover (read_jsonl raises)


def benchmark_file(spec: str | Path) -> Path:
    """The JSONL file of ``--benchmark``: ``sample``, a folder or a ``.jsonl`` file.

    Raises:
        InputError: Anything else (the app needs images that are files in a folder).
    """
    if str(spec) == "sample":
        return SAMPLE_DIR / "benchmark.jsonl"
    path = Path(spec).expanduser()
    if path.is_dir():
        for name in ("benchmark.jsonl", ITEM_SET_FILE):
            if (path / name).is_file():
                return path / name
    if path.is_file() and path.suffix == ".jsonl":
        return path
    raise InputError(
        "the review app reads items and images from a benchmark folder: give its "
        "benchmark.jsonl, the folder holding it, or 'sample'",
        path=path,
        field="--benchmark",
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")
    ).hexdigest()[:32]


def _image_place(
    bench: Benchmark, item: BenchmarkItem, roots: tuple[Path, ...], path: Path, line: int | None
) -> tuple[int | None, str | None]:
    """Which root the item's image lies under and its path there; checks it decodes."""
    if item.image is None:
        return None, None
    if item.image.startswith("row:"):
        raise InputError(
            "embedded image bytes are not supported by the review app; save the images as "
            "files beside the benchmark",
            path=path,
            line=line,
            field="image",
        )
    bench.image_bytes(item)  # missing, outside the folder, undecodable or too large: raises
    resolved = Path(item.image)
    for index, root in enumerate(roots):
        if resolved.is_relative_to(root):
            return index, resolved.relative_to(root).as_posix()
    raise InputError("image outside the benchmark folder", path=path, line=line, field="image")


def _lines_by_id(path: Path, limits: InputLimits) -> dict[str, int]:
    lines: dict[str, int] = {}
    for number, row in read_jsonl(path, limits=limits):
        key = row.get("id")
        if isinstance(key, (str, int)) and not isinstance(key, bool):
            lines.setdefault(str(key), number)
    return lines


def _member_text(member: Any) -> str | None:
    if isinstance(member, str):
        return member
    if isinstance(member, dict):
        for key in ("text", "step"):
            if isinstance(member.get(key), str):
                return str(member[key])
    return None


def chain_steps(
    item: BenchmarkItem, *, path: Path, line: int | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The steps shown to reviewers (text, support, member texts, and with a
    ``reference_precedence`` the steps each may swap with) and what stays hidden.

    Raises:
        InputError: ``reference_provenance`` is not one well-formed entry per step.
    """
    provenance = item.metadata.get("reference_provenance")
    steps: list[dict[str, Any]] = []
    if provenance is None:
        steps = [{"text": text, "support": None, "members": []} for text in item.reference_steps]
        return _with_interchangeable(steps, item), {"provenance": None}
    field = "metadata.reference_provenance"
    if not isinstance(provenance, list) or len(provenance) != len(item.reference_steps):
        raise InputError(
            f"must be a list with one entry per reference step ({len(item.reference_steps)})",
            path=path,
            line=line,
            field=field,
        )
    for index, (text, entry) in enumerate(zip(item.reference_steps, provenance, strict=True)):
        where = f"{field}[{index}]"
        if not isinstance(entry, dict):
            raise InputError("must be an object", path=path, line=line, field=where)
        support = entry.get("support")
        if not isinstance(support, int) or isinstance(support, bool) or support < 0:
            raise InputError(
                "support must be a non-negative integer", path=path, line=line, field=where
            )
        models = entry.get("models", [])
        members = entry.get("members", [])
        if not isinstance(models, list) or not isinstance(members, list):
            raise InputError("models and members must be lists", path=path, line=line, field=where)
        texts = [t for t in (_member_text(m) for m in members) if t is not None]
        steps.append({"text": text, "support": support, "members": texts})
    return _with_interchangeable(steps, item), {"provenance": provenance}


def interchangeable_steps(item: BenchmarkItem) -> list[list[int]] | None:
    """Per reference step, the steps it may come in either order with (0-based), when the
    item has a ``reference_precedence``; ``None`` without one (the chain's own order).

    Examples:
        >>> item = BenchmarkItem(id="1", source="plotqa", question="?", answer="15",
        ...                      reference_steps=["May is 40.", "June is 55.", "15 more."],
        ...                      reference_precedence=[[0, 2], [1, 2]])
        >>> interchangeable_steps(item)
        [[1], [0], []]
    """
    if item.reference_precedence is None:
        return None
    partners: list[list[int]] = [[] for _ in item.reference_steps]
    order = Precedence.from_pairs(item.reference_precedence, len(item.reference_steps))
    for a, b in order.interchangeable():
        partners[a].append(b)
        partners[b].append(a)
    return partners


def _with_interchangeable(steps: list[dict[str, Any]], item: BenchmarkItem) -> list[dict[str, Any]]:
    """``steps`` with ``free_with`` on each when the item has a precedence (only then, so the
    version of a chain without one stays as it was)."""
    partners = interchangeable_steps(item)
    if partners is None:
        return steps
    return [{**step, "free_with": free} for step, free in zip(steps, partners, strict=True)]


def _new_batch(
    session: Any,
    kind: str,
    source: Path,
    bench_file: Path,
    roots: tuple[Path, ...],
    actor: str,
    settings: dict[str, Any],
) -> ImportBatch:
    batch = ImportBatch(
        kind=kind,
        source=str(source),
        benchmark=str(bench_file),
        image_roots=[str(root) for root in roots],
        actor=actor,
        n_tasks=0,
        n_unchanged=0,
        settings=settings,
        created_at=utcnow(),
    )
    session.add(batch)
    session.flush()
    return batch


def _item_row(
    batch: ImportBatch, item: BenchmarkItem, place: tuple[int | None, str | None]
) -> Item:
    return Item(
        import_id=batch.id,
        item_key=item.id,
        source=item.source,
        question=item.question,
        options=list(item.options),
        answer=item.answer,
        image_root=place[0],
        image=place[1],
    )


def _next_position(session: Any, kind: str) -> int:
    from sqlalchemy import func, select

    return (
        int(
            session.execute(
                select(func.coalesce(func.max(Task.position), -1)).where(Task.kind == kind)
            ).scalar_one()
        )
        + 1
    )


def _existing_versions(session: Any, kind: str) -> dict[str, set[str]]:
    from sqlalchemy import select

    known: dict[str, set[str]] = {}
    for external, version in session.execute(
        select(Task.external_id, Task.version).where(Task.kind == kind)
    ):
        known.setdefault(external, set()).add(version)
    return known


@dataclass(frozen=True)
class _NewTask:
    """One task an import adds, before it has a row."""

    external_id: str
    version: str
    payload: dict[str, Any]
    hidden: dict[str, Any]
    gold: str | None


def _add_tasks(
    session: Any,
    batch: ImportBatch,
    kind: str,
    quota: int,
    new: list[tuple[Item, _NewTask]],
    *,
    unchanged: int,
    actor: str,
    audited: dict[str, Any],
) -> ImportSummary:
    """Add the tasks of one import after the last position of their kind (gold tasks have
    no quota), count them on the batch and audit the import (``audited``: what it read)."""
    session.flush()
    position = _next_position(session, kind)
    for row, task in new:
        session.add(
            Task(
                kind=kind,
                import_id=batch.id,
                item_id=row.id,
                external_id=task.external_id,
                version=task.version,
                position=position,
                quota=None if task.gold else quota,
                is_gold=task.gold is not None,
                gold_label=task.gold,
                n_active=0,
                n_done=0,
                payload=task.payload,
                hidden=task.hidden,
                created_at=utcnow(),
            )
        )
        position += 1
    added, gold_count = len(new), sum(task.gold is not None for _, task in new)
    batch.n_tasks = added
    batch.n_unchanged = unchanged
    audit.record(
        session,
        "import",
        actor=actor,
        new={
            "kind": kind,
            **audited,
            "import_id": batch.id,
            "added": added,
            "unchanged": unchanged,
            "gold": gold_count,
        },
    )
    return ImportSummary(kind, batch.id, added, unchanged, gold_count, audited["source"])


def _check_annotators(annotators: int | None, default: int) -> int:
    if annotators is None:
        return default
    if annotators < 1:
        raise InputError("must be at least 1", field="--annotators")
    return annotators


def import_chains(
    db: Any,
    source: Path,
    *,
    annotators: int | None = None,
    image_root: str | Path | None = None,
    actor: str,
    limits: InputLimits | None = None,
) -> ImportSummary:
    """Import a references folder (or its ``benchmark.jsonl``) as chain-review tasks.

    Raises:
        InputError: A malformed file, record, provenance entry or image.
    """
    limits = resolve_limits(limits)
    quota = _check_annotators(annotators, REVIEW_ANNOTATORS_PER_CHAIN)
    path = source / "benchmark.jsonl" if source.is_dir() else source
    bench = load_jsonl_benchmark(path, image_root=image_root, limits=limits)
    roots = image_roots(path.resolve().parent, image_root)
    lines = _lines_by_id(path, limits)
    prepared = []
    for item in bench.items:
        line = lines.get(item.id)
        steps, hidden = chain_steps(item, path=path, line=line)
        round_ = item.metadata.get("reference_round")
        gold = item.metadata.get("gold_verdict")
        if gold is not None and gold not in CHAIN_VERDICTS:
            raise InputError(
                "must be 'accept' or 'reject'", path=path, line=line, field="metadata.gold_verdict"
            )
        place = _image_place(bench, item, roots, path, line)
        version = _digest([item.question, item.options, item.answer, steps, round_, gold])
        payload: dict[str, Any] = {"steps": steps, "round": round_}
        if item.reference_precedence is not None:
            free = [(a, b) for a, step in enumerate(steps) for b in step["free_with"] if a < b]
            payload["interchangeable"] = [list(pair) for pair in free]
        hidden = {**hidden, "round": round_, "source": item.source}
        prepared.append((item, place, version, payload, hidden, gold))
    with db.write() as session:
        known = _existing_versions(session, "chain")
        batch = _new_batch(session, "chain", source, path, roots, actor, {"annotators": quota})
        new: list[tuple[Item, _NewTask]] = []
        unchanged = 0
        for item, place, version, payload, hidden, gold in prepared:
            if version in known.get(item.id, set()):
                unchanged += 1
                continue
            row = _item_row(batch, item, place)
            session.add(row)
            new.append((row, _NewTask(item.id, version, payload, hidden, gold)))
        return _add_tasks(
            session,
            batch,
            "chain",
            quota,
            new,
            unchanged=unchanged,
            actor=actor,
            audited={"source": str(source)},
        )


def read_pair_rows(
    path: Path, limits: InputLimits | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """The records of a pair file (JSONL or CSV) with their 1-based line numbers.

    Raises:
        InputError: The file is unreadable, too large or not UTF-8, or a CSV misses a column.
    """
    limits = resolve_limits(limits)
    if path.suffix.lower() != ".csv":
        return list(read_jsonl(path, limits=limits))
    return list(read_csv(path, PAIR_REQUIRED, limits=limits))


def _text_field(row: dict[str, Any], name: str, path: Path, line: int) -> str:
    value = row.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and name in ("pair_id", "item_id"):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError("must be a non-empty string", path=path, line=line, field=name)
    return value


def parse_pair(row: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """One pair record checked: the shown fields, the hidden ones, the gold label.

    Raises:
        InputError: A missing or malformed field (names the line and the field).
    """
    pair: dict[str, Any] = {name: _text_field(row, name, path, line) for name in PAIR_REQUIRED}
    hidden: dict[str, Any] = {}
    if row.get("model") not in (None, ""):
        hidden["model"] = str(row["model"])
    cosine = row.get("cosine")
    if cosine not in (None, ""):
        try:
            value = float(cosine) if not isinstance(cosine, bool) else math.nan
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            raise InputError("must be a number", path=path, line=line, field="cosine")
        hidden["cosine"] = value
    if row.get("band") not in (None, ""):
        hidden["band"] = str(row["band"])
    gold = row.get("gold_label")
    if gold in (None, ""):
        gold = None
    elif gold not in PAIR_GOLD:
        raise InputError("must be 'match' or 'no_match'", path=path, line=line, field="gold_label")
    pair["hidden"] = hidden
    pair["gold"] = gold
    return pair


def import_pairs(
    db: Any,
    source: Path,
    *,
    benchmark: str | Path | None,
    annotators: int | None = None,
    image_root: str | Path | None = None,
    actor: str,
    limits: InputLimits | None = None,
) -> ImportSummary:
    """Import a step-pair file as labelling tasks; questions and images from ``benchmark``.

    Raises:
        InputError: No ``--benchmark``, a malformed record, an unknown item id, a repeated
            pair id, or a pair id imported before with other content.
    """
    if benchmark is None:
        raise InputError(
            "a pair file needs --benchmark (the items' questions and images come from it)",
            field="--benchmark",
        )
    limits = resolve_limits(limits)
    quota = _check_annotators(annotators, REVIEW_ANNOTATORS_PER_PAIR)
    bench_path = benchmark_file(benchmark)
    bench = load_jsonl_benchmark(
        bench_path, image_root=image_root, limits=limits, require_references=False
    )
    roots = image_roots(bench_path.resolve().parent, image_root)
    rows = read_pair_rows(source, limits)
    pairs = []
    seen: dict[str, int] = {}
    places: dict[str, tuple[int | None, str | None]] = {}
    for line, row in rows:
        pair = parse_pair(row, source, line)
        note_first_line(seen, pair["pair_id"], line, path=source, field="pair_id", what="pair_id")
        item = bench.get(pair["item_id"])
        if item is None:
            raise InputError(
                f"item {pair['item_id']!r} is not in the benchmark {bench_path}",
                path=source,
                line=line,
                field="item_id",
            )
        if item.id not in places:
            places[item.id] = _image_place(bench, item, roots, bench_path, None)
        pair["version"] = _digest(
            [pair["item_id"], pair["pred_step"], pair["ref_step"], pair["gold"]]
        )
        pairs.append((line, pair))
    with db.write() as session:
        known = _existing_versions(session, "pair")
        for line, pair in pairs:
            versions = known.get(pair["pair_id"], set())
            if versions and pair["version"] not in versions:
                raise InputError(
                    f"pair_id {pair['pair_id']!r} was imported before with other content; "
                    "give changed pairs new ids",
                    path=source,
                    line=line,
                    field="pair_id",
                )
        batch = _new_batch(
            session,
            "pair",
            source,
            bench_path,
            roots,
            actor,
            {"annotators": quota, "benchmark": str(benchmark)},
        )
        item_rows: dict[str, Item] = {}
        new: list[tuple[Item, _NewTask]] = []
        unchanged = 0
        for _line, pair in pairs:
            if pair["version"] in known.get(pair["pair_id"], set()):
                unchanged += 1
                continue
            key = pair["item_id"]
            if key not in item_rows:
                item = bench.get(key)
                assert item is not None
                item_rows[key] = _item_row(batch, item, places[key])
                session.add(item_rows[key])
            payload = {"pred_step": pair["pred_step"], "ref_step": pair["ref_step"]}
            task = _NewTask(pair["pair_id"], pair["version"], payload, pair["hidden"], pair["gold"])
            new.append((item_rows[key], task))
        return _add_tasks(
            session,
            batch,
            "pair",
            quota,
            new,
            unchanged=unchanged,
            actor=actor,
            audited={"source": str(source), "benchmark": str(bench_path)},
        )


def import_path(
    db: Any,
    source: str | Path,
    *,
    benchmark: str | Path | None = None,
    annotators: int | None = None,
    image_root: str | Path | None = None,
    actor: str | None = None,
    limits: InputLimits | None = None,
) -> ImportSummary:
    """Import a references folder or a pair file, whichever ``source`` is.

    Raises:
        InputError: See :func:`import_chains` and :func:`import_pairs`.
    """
    path = Path(source).expanduser()
    kind = detect_kind(path)
    who = actor or audit.cli_actor()
    if kind == "chain":
        if benchmark is not None:
            raise InputError(
                "--benchmark is for pair files; a references folder holds its own items",
                field="--benchmark",
            )
        return import_chains(
            db, path, annotators=annotators, image_root=image_root, actor=who, limits=limits
        )
    return import_pairs(
        db,
        path,
        benchmark=benchmark,
        annotators=annotators,
        image_root=image_root,
        actor=who,
        limits=limits,
    )
