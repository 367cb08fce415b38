"""Human labels of step pairs: the review app's export, or plain CSV / JSONL from elsewhere.

Two kinds of file are read, told apart line by line:

- **The review app's export** (``crystal review export --kind pairs``), one JSON line per
  pair: ``pair_id``, ``item_id``, ``final_label`` (``match`` / ``no_match`` / ``unsure`` or
  ``null``), ``final_status`` (``unanimous`` / ``majority`` / ``adjudicated`` /
  ``unresolved``), ``labels`` (each annotator's current label: ``annotator``, ``label``,
  ``time``), ``adjudication`` (``null`` or the adjudicator's decision) and more. The app's
  final label is taken as it is; lines marked ``gold`` (quality-control tasks) are skipped
  and counted.
- **Plain labels**, one row per (pair, annotator): ``pair_id``, ``annotator``, ``label``
  (``match`` / ``no_match`` / ``unsure``; an empty label is a pair not labelled yet, as in a
  half-filled ``pairs.blind.csv``), optional ``role`` (``annotator``, the default, or
  ``adjudicator``: that label is final and not counted among the annotators) and ``time``.
  The final label is then the adjudicator's, else the majority of the ``match`` /
  ``no_match`` votes (``unsure`` abstains); a tie is ``unresolved``.

A CSV file is plain labels; a JSONL file may hold either kind, one per line. Every problem
raises an :class:`~crystalbench.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from crystalbench._internal.io import read_csv, read_jsonl
from crystalbench.errors import InputError
from crystalbench.types import Record

__all__ = [
    "FINAL_STATUSES",
    "LABELS",
    "LabelSet",
    "PairLabels",
    "Vote",
    "read_labels",
    "resolve_votes",
]

Label = Literal["match", "no_match", "unsure"]
LABELS: tuple[str, ...] = ("match", "no_match", "unsure")
"""What a person may say about a pair."""

FinalStatus = Literal["unanimous", "majority", "adjudicated", "unresolved"]
FINAL_STATUSES: tuple[str, ...] = ("unanimous", "majority", "adjudicated", "unresolved")
"""How a pair's final label was reached (the review app's statuses)."""

ROLES = ("annotator", "adjudicator")


class Vote(Record):
    """One annotator's label of one pair."""

    annotator: str
    label: Label
    time: str | None = None
    """When it was given, as the file wrote it."""


class PairLabels(Record):
    """Every label of one pair and the final human label."""

    pair_id: str
    votes: list[Vote]
    """The annotators' labels (adjudicators excluded), ``unsure`` included."""
    final: Literal["match", "no_match"] | None
    """The final human label; ``None`` when unresolved (a tie, only ``unsure``...)."""
    status: FinalStatus
    adjudicator: str | None = None
    """Who adjudicated, when someone did."""


@dataclass
class LabelSet:
    """The labels of one file.

    Attributes:
        path: The file.
        kind: ``review-export``, ``plain`` or ``mixed`` (both kinds of line).
        pairs: Labels by ``pair_id``, in file order.
        lines: The first line of each pair (for error messages).
        n_gold_skipped: Review-export lines of gold (quality-control) tasks, skipped.
        n_empty_skipped: Plain rows without a label (not labelled yet), skipped.
    """

    path: Path
    kind: str
    pairs: dict[str, PairLabels]
    lines: dict[str, int] = field(default_factory=dict)
    n_gold_skipped: int = 0
    n_empty_skipped: int = 0

    @property
    def annotators(self) -> list[str]:
        """Every annotator, in order of first appearance."""
        return list(dict.fromkeys(v.annotator for p in self.pairs.values() for v in p.votes))

    def statuses(self) -> dict[str, int]:
        """Pairs per final status."""
        counts: Counter[str] = Counter(p.status for p in self.pairs.values())
        return {status: counts.get(status, 0) for status in FINAL_STATUSES}


def resolve_votes(
    votes: Sequence[Vote], adjudicated: str | None = None
) -> tuple[str | None, FinalStatus]:
    """The final label and its status from annotators' votes (and an adjudication).

    Examples:
        >>> v = [Vote(annotator="a", label="match"), Vote(annotator="b", label="no_match"),
        ...      Vote(annotator="c", label="match")]
        >>> resolve_votes(v), resolve_votes(v[:2]), resolve_votes(v[:2], "no_match")
        (('match', 'majority'), (None, 'unresolved'), ('no_match', 'adjudicated'))
    """
    if adjudicated in ("match", "no_match"):
        return adjudicated, "adjudicated"
    counts = Counter(v.label for v in votes if v.label != "unsure")
    yes, no = counts.get("match", 0), counts.get("no_match", 0)
    if yes == no:
        return None, "unresolved"
    winner = "match" if yes > no else "no_match"
    return winner, "unanimous" if min(yes, no) == 0 else "majority"


def _text(value: Any, path: Path, line: int, name: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and name == "pair_id":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError("must be a non-empty string", path=path, line=line, field=name)
    return value


def _optional_text(value: Any, path: Path, line: int, name: str) -> str | None:
    return None if value in (None, "") else _text(value, path, line, name)


def _label(value: Any, path: Path, line: int, name: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or value not in LABELS:
        raise InputError(
            f"must be one of {', '.join(LABELS)}"
            + (" or null" if nullable else "")
            + f", got {value!r}",
            path=path,
            line=line,
            field=name,
        )
    return value


def _time(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _export_line(record: dict[str, Any], path: Path, line: int) -> PairLabels:
    """One line of the review app's pairs export."""
    pair_id = _text(record.get("pair_id"), path, line, "pair_id")
    final = _label(record.get("final_label"), path, line, "final_label", nullable=True)
    status = record.get("final_status")
    if status not in FINAL_STATUSES:
        raise InputError(
            f"must be one of {', '.join(FINAL_STATUSES)}, got {status!r}",
            path=path,
            line=line,
            field="final_status",
        )
    raw_labels = record.get("labels", [])
    if not isinstance(raw_labels, list):
        raise InputError("must be a list", path=path, line=line, field="labels")
    votes: list[Vote] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw_labels):
        where = f"labels.{index}"
        if not isinstance(entry, dict):
            raise InputError("must be an object", path=path, line=line, field=where)
        annotator = _text(entry.get("annotator"), path, line, f"{where}.annotator")
        if annotator in seen:
            raise InputError(
                f"annotator {annotator!r} labels this pair twice",
                path=path,
                line=line,
                field=f"{where}.annotator",
            )
        seen.add(annotator)
        label = _label(entry.get("label"), path, line, f"{where}.label")
        votes.append(Vote(annotator=annotator, label=label, time=_time(entry.get("time"))))
    adjudication = record.get("adjudication")
    adjudicator = None
    if adjudication is not None:
        if not isinstance(adjudication, dict):
            raise InputError(
                "must be an object or null", path=path, line=line, field="adjudication"
            )
        adjudicator = _optional_text(
            adjudication.get("adjudicator"), path, line, "adjudication.adjudicator"
        )
    decided = final if final in ("match", "no_match") else None
    return PairLabels(
        pair_id=pair_id,
        votes=votes,
        final=decided,
        status=status if decided is not None else "unresolved",
        adjudicator=adjudicator,
    )


@dataclass
class _Plain:
    votes: list[Vote] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    adjudication: tuple[str, str, int] | None = None


def _plain_rows(
    rows: Iterable[tuple[int, dict[str, Any]]], path: Path, plain: dict[str, _Plain]
) -> int:
    """Add plain label rows to ``plain``; returns how many rows had no label."""
    empty = 0
    for line, row in rows:
        pair_id = _text(row.get("pair_id"), path, line, "pair_id")
        raw_label = row.get("label")
        if raw_label is None or raw_label == "":
            empty += 1
            continue
        annotator = _text(row.get("annotator"), path, line, "annotator")
        label = _label(raw_label, path, line, "label")
        role = row.get("role") or "annotator"
        if role not in ROLES:
            raise InputError(
                f"must be one of {', '.join(ROLES)}, got {role!r}",
                path=path,
                line=line,
                field="role",
            )
        entry = plain.setdefault(pair_id, _Plain())
        if role == "adjudicator":
            if entry.adjudication is not None:
                raise InputError(
                    f"pair {pair_id!r} is adjudicated twice (first on line "
                    f"{entry.adjudication[2]})",
                    path=path,
                    line=line,
                    field="role",
                )
            if label == "unsure":
                raise InputError(
                    "an adjudicator decides: match or no_match", path=path, line=line, field="label"
                )
            entry.adjudication = (annotator, label, line)  # type: ignore[assignment]
            continue
        if annotator in entry.lines:
            raise InputError(
                f"annotator {annotator!r} labels pair {pair_id!r} twice (first on line "
                f"{entry.lines[annotator]})",
                path=path,
                line=line,
                field="annotator",
            )
        entry.lines[annotator] = line
        entry.votes.append(Vote(annotator=annotator, label=label, time=_time(row.get("time"))))
    return empty


def read_labels(path: str | Path) -> LabelSet:
    """Read human labels of step pairs (the review app's export, or plain CSV / JSONL).

    Raises:
        InputError: A malformed file, line or field (naming file, line and field), a pair
            labelled twice by one annotator, or a file that holds no label at all.

    Examples:
        >>> import tempfile
        >>> file = Path(tempfile.mkdtemp()) / "labels.csv"
        >>> _ = file.write_text("pair_id,annotator,label\\np1,ann,match\\np1,bob,no_match\\n")
        >>> labels = read_labels(file)
        >>> labels.kind, labels.pairs["p1"].status, labels.annotators
        ('plain', 'unresolved', ['ann', 'bob'])
    """
    path = Path(path)
    if path.suffix.lower() == ".csv":
        rows = read_csv(path, ("pair_id", "annotator", "label"))
        records: list[tuple[int, dict[str, Any]]] = [(line, dict(row)) for line, row in rows]
    else:
        records = list(read_jsonl(path))
    exported: dict[str, PairLabels] = {}
    first_line: dict[str, int] = {}
    plain: dict[str, _Plain] = {}
    plain_rows: list[tuple[int, dict[str, Any]]] = []
    gold = 0
    for line, record in records:
        if "final_label" in record or "labels" in record or "final_status" in record:
            if record.get("gold") is True:
                gold += 1
                continue
            pair = _export_line(record, path, line)
            if pair.pair_id in exported:
                raise InputError(
                    f"duplicate pair_id {pair.pair_id!r} (first on line "
                    f"{first_line[pair.pair_id]})",
                    path=path,
                    line=line,
                    field="pair_id",
                )
            exported[pair.pair_id] = pair
            first_line[pair.pair_id] = line
        else:
            for name in ("pair_id", "label"):
                if name not in record:
                    raise InputError(
                        "missing (a plain label needs pair_id, annotator and label; a review "
                        "export line needs final_label and labels)",
                        path=path,
                        line=line,
                        field=name,
                    )
            plain_rows.append((line, record))
    empty = _plain_rows(plain_rows, path, plain)
    for pair_id, entry in plain.items():
        if pair_id in exported:
            raise InputError(
                f"pair {pair_id!r} has a review-export line ({first_line[pair_id]}) and plain "
                "labels: give one kind per pair",
                path=path,
                line=min(entry.lines.values(), default=None),
                field="pair_id",
            )
        adjudicated = entry.adjudication[1] if entry.adjudication else None
        final, status = resolve_votes(entry.votes, adjudicated)
        exported[pair_id] = PairLabels(
            pair_id=pair_id,
            votes=entry.votes,
            final=final,
            status=status,
            adjudicator=entry.adjudication[0] if entry.adjudication else None,
        )
        lines = list(entry.lines.values()) + ([entry.adjudication[2]] if entry.adjudication else [])
        first_line[pair_id] = min(lines)
    if not exported:
        raise InputError(
            "the file holds no label (every row's label is empty, or only gold tasks)", path=path
        )
    kind = (
        "mixed" if plain and len(plain) < len(exported) else ("plain" if plain else "review-export")
    )
    return LabelSet(
        path=path,
        kind=kind,
        pairs=exported,
        lines=first_line,
        n_gold_skipped=gold,
        n_empty_skipped=empty,
    )


def read_decisions(path: str | Path) -> dict[str, dict[str, bool]]:
    """Another matcher's decisions on the pairs: CSV or JSONL rows of ``pair_id``,
    ``matcher`` (its name) and ``decision`` (``match`` / ``no_match``).

    Returns:
        Matcher name -> pair id -> decision, in file order.

    Raises:
        InputError: A malformed row, or a matcher deciding one pair twice (file, line, field).
    """
    path = Path(path)
    if path.suffix.lower() == ".csv":
        rows = read_csv(path, ("pair_id", "matcher", "decision"))
        records: list[tuple[int, dict[str, Any]]] = [(line, dict(row)) for line, row in rows]
    else:
        records = list(read_jsonl(path))
    out: dict[str, dict[str, bool]] = {}
    lines: dict[tuple[str, str], int] = {}
    for line, record in records:
        pair_id = _text(record.get("pair_id"), path, line, "pair_id")
        matcher = _text(record.get("matcher"), path, line, "matcher")
        decision = record.get("decision")
        if decision not in ("match", "no_match"):
            raise InputError(
                f"must be match or no_match, got {decision!r}",
                path=path,
                line=line,
                field="decision",
            )
        if (matcher, pair_id) in lines:
            raise InputError(
                f"matcher {matcher!r} decides pair {pair_id!r} twice (first on line "
                f"{lines[(matcher, pair_id)]})",
                path=path,
                line=line,
                field="pair_id",
            )
        lines[(matcher, pair_id)] = line
        out.setdefault(matcher, {})[pair_id] = decision == "match"
    return out
