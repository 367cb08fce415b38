"""Pages of adjudicators and admins: the adjudication queue, the admin overview with
agreement, exports and the audit log."""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

from http import HTTPStatus
from typing import Any

from sqlalchemy import select

from crystalbench.config.settings import REVIEW_AUDIT_PAGE
from crystalbench.review import audit
from crystalbench.review.agreement import (
    adjudication_queue,
    agreement_summary,
    annotator_stats,
    load_outcomes,
)
from crystalbench.review.assign import NotVisible, any_task, queue_progress
from crystalbench.review.exporting import EXPORT_KINDS, export_text
from crystalbench.review.labels import (
    ADJUDICATION_REASON_TEXT,
    ADJUDICATION_REASONS,
    PAIR_LABEL_TEXT,
    REJECT_REASON_TEXT,
    STEP_FLAG_TEXT,
    labels_for,
    majority_label,
)
from crystalbench.review.models import TASK_KINDS, Adjudication, User, utcnow
from crystalbench.review.routes import KIND_TITLES
from crystalbench.review.web import Context

LABEL_TEXT = {**PAIR_LABEL_TEXT, "accept": "Accept", "reject": "Reject"}


def _queue(context: Context, kind: str) -> list[Any]:
    assert context.user is not None
    with context.db.read() as session:
        outcomes = load_outcomes(session, kind)
    return adjudication_queue(
        outcomes, context.settings.adjudication_threshold, exclude_user=context.user.id
    )


def adjudication_list(context: Context) -> Any:
    """GET /adjudicate: tasks whose annotators disagree, lowest agreement first."""
    queues = {kind: _queue(context, kind) for kind in TASK_KINDS}
    return context.render(
        "adjudicate_list.html",
        queues=queues,
        titles=KIND_TITLES,
        label_text=LABEL_TEXT,
        progress=None,
    )


def _outcome(context: Context, task_id: int) -> tuple[Any, Any, Any]:
    with context.db.read() as session:
        task, item = any_task(session, task_id)
        outcomes = load_outcomes(session, task.kind, task_ids=[task_id])
    return task, item, outcomes[0]


def adjudication_page(context: Context, *, status: int = 200, message: str | None = None) -> Any:
    """GET /adjudicate/<id>: the task, every annotator's label (blind), the decision form."""
    assert context.user is not None
    task_id = int(context.params["task_id"])
    task, item, outcome = _outcome(context, task_id)
    if not outcome.current:
        raise NotVisible(task_id)
    own = any(row.user_id == context.user.id for row in outcome.current)
    names = [
        row.annotator if context.settings.show_names_to_adjudicators else f"Annotator {i + 1}"
        for i, row in enumerate(outcome.current)
    ]
    return context.render(
        "adjudicate.html",
        status=status,
        message=message,
        task=task,
        item=item,
        has_image=item.image is not None,
        outcome=outcome,
        rows=list(zip(names, outcome.current, strict=True)),
        own=own,
        majority=majority_label(outcome.labels),
        labels=labels_for(task.kind),
        label_text=LABEL_TEXT,
        reasons=ADJUDICATION_REASON_TEXT,
        reject_reasons=REJECT_REASON_TEXT,
        step_flags=STEP_FLAG_TEXT,
        form=context.form,
        progress=None,
    )


def adjudicate(context: Context) -> Any:
    """POST /adjudicate/<id>: the final decision; a note is needed to override a majority."""
    assert context.user is not None
    task_id = int(context.params["task_id"])
    task, _item, outcome = _outcome(context, task_id)
    if not outcome.current:
        raise NotVisible(task_id)
    if any(row.user_id == context.user.id for row in outcome.current):
        return context.error(HTTPStatus.FORBIDDEN, "you labelled this task: someone else decides")
    form = context.form
    label = form.get("label", "")
    reason = form.get("reason", "")
    note = form.get("note", "").strip() or None
    majority = majority_label(outcome.labels)
    overrides = majority is not None and label != majority
    problem = None
    if label not in labels_for(task.kind):
        problem = "choose the final label"
    elif reason not in ADJUDICATION_REASONS:
        problem = "choose why the annotators disagreed"
    elif overrides and note is None:
        problem = f"your decision overrides the majority ({LABEL_TEXT[majority or '']}): add a note"
    elif reason == "other" and note is None:
        problem = "the reason 'other' needs a note"
    elif note is not None and len(note) > 4000:
        problem = "the note is too long"
    if problem is not None:
        return adjudication_page(context, status=400, message=problem)
    assert outcome.decision is not None
    with context.db.write() as session:
        previous = session.execute(
            select(Adjudication.id)
            .where(Adjudication.task_id == task_id)
            .order_by(Adjudication.id.desc())
            .limit(1)
        ).scalar_one_or_none()
        session.add(
            Adjudication(
                task_id=task_id,
                user_id=context.user.id,
                label=label,
                reason=reason,
                note=note,
                overrides_majority=overrides,
                supersedes_id=previous,
                created_at=utcnow(),
            )
        )
        audit.record(
            session,
            "adjudicate",
            user=context.user,
            task_id=task_id,
            old={"final_label": outcome.decision.label, "status": outcome.decision.status},
            new={"label": label, "reason": reason, "note": note, "overrides_majority": overrides},
            remote=context.remote,
        )
    remaining = [o for o in _queue(context, task.kind) if o.task_id != task_id]
    if remaining:
        return context.redirect(f"/adjudicate/{remaining[0].task_id}")
    return context.redirect("/adjudicate")


def admin_page(context: Context) -> Any:
    """GET /admin: progress, per-annotator counts and pace, agreement, exports."""
    sections = []
    with context.db.read() as session:
        users = session.execute(select(User).order_by(User.name)).scalars().all()
        for kind in TASK_KINDS:
            outcomes = load_outcomes(session, kind)
            progress = queue_progress(session, kind)
            if not outcomes:
                continue
            sections.append(
                {
                    "kind": kind,
                    "title": KIND_TITLES[kind],
                    "progress": progress,
                    "gold": sum(o.is_gold for o in outcomes),
                    "agreement": agreement_summary(outcomes),
                    "annotators": annotator_stats(session, outcomes, kind),
                    "queue": len(
                        adjudication_queue(outcomes, context.settings.adjudication_threshold)
                    ),
                }
            )
    return context.render(
        "admin.html", sections=sections, users=users, exports=EXPORT_KINDS, progress=None
    )


def export(context: Context) -> Any:
    """POST /admin/export: download an export (the same files as ``crystal review export``)."""
    from starlette.responses import Response

    assert context.user is not None
    kind = context.form.get("kind", "")
    if kind not in EXPORT_KINDS:
        return context.error(
            HTTPStatus.BAD_REQUEST, f"kind must be one of {', '.join(EXPORT_KINDS)}"
        )
    text, _count = export_text(context.db, kind, user=context.user, remote=context.remote)
    suffix = "txt" if kind == "rejected" else "jsonl"
    stamp = utcnow().strftime("%Y%m%d-%H%M%S")
    media = "text/plain" if kind == "rejected" else "application/x-ndjson"
    return Response(
        text.encode("utf-8"),
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="review-{kind}-{stamp}.{suffix}"'},
    )


def audit_page(context: Context) -> Any:
    """GET /admin/audit: the newest audit entries (``?before=<id>`` pages back)."""
    raw = context.request.query_params.get("before")
    before = int(raw) if raw is not None and raw.isdigit() else None
    with context.db.read() as session:
        rows = list(audit.audit_rows(session, before=before, limit=REVIEW_AUDIT_PAGE))
    older = rows[-1]["id"] if len(rows) == REVIEW_AUDIT_PAGE else None
    return context.render("audit.html", rows=rows, older=older, progress=None)
