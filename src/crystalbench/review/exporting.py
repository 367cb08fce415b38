"""``crystal review export``: chains, rejected ids, pairs and the audit log.

- ``chains`` (JSONL, one line per chain task): ``item_id``, ``task_id``, ``reference_round``,
  ``verdict`` (``accept``/``reject`` or ``null``), ``status`` (``unanimous``, ``majority``,
  ``adjudicated``, ``unresolved``), ``reason``, ``note``, ``step_flags`` (per step, the flags
  of the reviews that agree with the verdict), ``reviews`` (every reviewer's current review)
  and ``revisions`` (reviews later superseded), ``adjudications``, ``quota``, ``gold``.
- ``rejected`` (text): the item ids whose newest chain was finally rejected, one per line,
  for ``crystal references regenerate --ids FILE``.
- ``pairs`` (JSONL, one line per pair): ``pair_id``, ``item_id``, ``final_label``
  (``match``/``no_match``/``unsure`` or ``null``), ``final_status``, ``labels`` (each
  annotator's current label with ``annotator``, ``label``, ``time``), ``revisions``,
  ``adjudication``, ``n_labels``, ``quota``, ``gold``.
- ``audit`` (JSONL): every audit entry, oldest first.

Every export is itself written to the audit log.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_text
from crystalbench.errors import InputError
from crystalbench.review import audit
from crystalbench.review.agreement import LabelRow, TaskOutcome, load_outcomes
from crystalbench.review.labels import STEP_FLAGS

EXPORT_KINDS: tuple[str, ...] = ("chains", "rejected", "pairs", "audit")


def _review(row: LabelRow, kind: str) -> dict[str, Any]:
    record: dict[str, Any] = {
        "annotator": row.annotator,
        ("verdict" if kind == "chain" else "label"): row.label,
        "time": row.created_at,
    }
    if kind == "chain":
        record.update(reason=row.reason, note=row.note, step_flags=row.step_flags)
    elif row.note is not None:
        record["note"] = row.note
    if row.duration_ms is not None:
        record["duration_ms"] = row.duration_ms
    return record


def _revisions(outcome: TaskOutcome, kind: str) -> list[dict[str, Any]]:
    current = {row.annotation_id for row in outcome.current}
    return [_review(row, kind) for row in outcome.history if row.annotation_id not in current]


def chain_record(outcome: TaskOutcome) -> dict[str, Any]:
    """The export line of one chain task."""
    decision = outcome.decision
    assert decision is not None
    n_steps = len(outcome.payload.get("steps", []))
    verdict = decision.label
    agreeing = [row for row in outcome.current if row.label == verdict]
    adjudication = outcome.adjudications[-1] if outcome.adjudications else None
    flags: list[list[str]] = [[] for _ in range(n_steps)]
    for row in agreeing:
        for index, step in enumerate(row.step_flags or []):
            if index < n_steps:
                flags[index] = sorted(set(flags[index]) | set(step), key=STEP_FLAGS.index)
    if adjudication is not None:
        reason = adjudication["reason"]
        note = adjudication["note"]
    else:
        reasons = Counter(row.reason for row in agreeing if row.reason)
        reason = reasons.most_common(1)[0][0] if reasons else None
        notes = [row.note for row in agreeing if row.note]
        note = " | ".join(notes) if notes else None
    return {
        "item_id": outcome.external_id,
        "task_id": outcome.task_id,
        "reference_round": outcome.payload.get("round"),
        "verdict": verdict,
        "status": decision.status,
        "reason": reason,
        "note": note,
        "step_flags": flags,
        "n_reviews": len(outcome.current),
        "quota": outcome.quota,
        "gold": outcome.is_gold,
        "reviews": [_review(row, "chain") for row in outcome.current],
        "revisions": _revisions(outcome, "chain"),
        "adjudications": outcome.adjudications,
    }


def pair_record(outcome: TaskOutcome) -> dict[str, Any]:
    """The export line of one step pair."""
    decision = outcome.decision
    assert decision is not None
    return {
        "pair_id": outcome.external_id,
        "item_id": outcome.item_key,
        "final_label": decision.label,
        "final_status": decision.status,
        "labels": [_review(row, "pair") for row in outcome.current],
        "revisions": _revisions(outcome, "pair"),
        "adjudication": outcome.adjudications[-1] if outcome.adjudications else None,
        "n_labels": len(outcome.current),
        "quota": outcome.quota,
        "gold": outcome.is_gold,
    }


def rejected_ids(outcomes: list[TaskOutcome]) -> list[str]:
    """Item ids whose newest chain task was finally rejected, in import order."""
    newest: dict[str, TaskOutcome] = {}
    for outcome in outcomes:
        if outcome.is_gold:
            continue
        known = newest.get(outcome.external_id)
        if known is None or outcome.position > known.position:
            newest[outcome.external_id] = outcome
    chosen = sorted(newest.values(), key=lambda o: o.position)
    return [
        o.external_id for o in chosen if o.decision is not None and o.decision.label == "reject"
    ]


def export_lines(session: Any, kind: str) -> Iterator[str]:
    """The lines of an export of ``kind`` (each without its newline).

    Raises:
        InputError: An unknown kind.
    """
    if kind == "chains":
        for outcome in load_outcomes(session, "chain"):
            yield json.dumps(chain_record(outcome), ensure_ascii=False)
    elif kind == "pairs":
        for outcome in load_outcomes(session, "pair"):
            yield json.dumps(pair_record(outcome), ensure_ascii=False)
    elif kind == "rejected":
        yield from rejected_ids(load_outcomes(session, "chain"))
    elif kind == "audit":
        for entry in audit.audit_rows(session):
            yield json.dumps(entry, ensure_ascii=False)
    else:
        raise InputError(f"--kind must be one of {', '.join(EXPORT_KINDS)}", field="--kind")


def export_text(
    db: Any, kind: str, *, user: Any = None, actor: str | None = None, remote: str | None = None
) -> tuple[str, int]:
    """The whole export as text and its line count; the export is audited.

    Raises:
        InputError: An unknown kind.
    """
    if kind not in EXPORT_KINDS:
        raise InputError(f"--kind must be one of {', '.join(EXPORT_KINDS)}", field="--kind")
    with db.read() as session:
        lines = list(export_lines(session, kind))
    with db.write() as session:
        audit.record(
            session,
            "export",
            user=user,
            actor=actor,
            new={"kind": kind, "lines": len(lines)},
            remote=remote,
        )
    return "".join(line + "\n" for line in lines), len(lines)


def export_file(db: Any, kind: str, out: str | Path, *, actor: str | None = None) -> int:
    """Write an export of ``kind`` to ``out`` atomically; returns the line count.

    Raises:
        InputError: An unknown kind.
    """
    text, count = export_text(db, kind, actor=actor or audit.cli_actor())
    atomic_write_text(out, text)
    return count
