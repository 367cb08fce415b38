"""Outcomes of tasks and agreement between annotators, from the database.

What is computed (the admin page and the exports use these, nothing else):

- **Current labels.** Each annotator's latest annotation of a task (revisions supersede).
- **Decision** per task: :func:`crystalbench.review.labels.final_decision`.
- **Agreement between annotators**: :func:`crystalbench.statistics.agreement.rater_agreement`, the
  one
  computation ``crystal validate agreement`` also reports as its human ceiling, so both show
  the same numbers for the same labels: percent agreement, Cohen's kappa of every pair of
  annotators (the headline figure when exactly two annotators labelled) and their mean
  (Light's kappa), nominal Krippendorff's alpha with a bootstrap interval. ``unsure`` is an
  abstention, a missing value, in all of them (counted and shown, see
  :mod:`crystalbench.statistics.agreement` for why); the adjudication queue still sends a task with
  an
  ``unsure`` label to an adjudicator.

Gold tasks are left out of agreement and decided by their own gold label; they measure each
annotator's accuracy instead.

- **Agreement with the final label** per annotator (:func:`annotator_stats`, the admin page's
  "Agrees with final label"): of the annotator's current labels on regular tasks whose final
  label is settled by other people too (adjudicated, or unanimous or a majority among two or
  more labels), the share equal to that final label. An adjudicator overruling the annotator
  counts against them; a tie not yet adjudicated, a task labelled by the annotator alone,
  gold tasks (the gold column) and the annotator's ``unsure`` labels (abstentions, as in the
  agreement figures) are left out and do not count either way. Before, ties were left out
  even once adjudicated, so an annotator whose three disputed labels were all overruled
  still read 100 %.
"""

from __future__ import annotations

import crystalbench.review._extra  # noqa: F401  (the review extra, named if missing)

# isort: split

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from crystalbench.config.settings import (
    REVIEW_FAST_LABEL_MS,
    REVIEW_GOLD_MIN_ACCURACY,
    REVIEW_GOLD_MIN_SEEN,
    VALIDATION_BOOTSTRAP_RESAMPLES,
    VALIDATION_CONFIDENCE,
    VALIDATION_SEED,
)
from crystalbench.review.labels import FINAL_STATUSES, Decision, final_decision
from crystalbench.review.models import Adjudication, Annotation, Assignment, Item, Task, User
from crystalbench.statistics.agreement import RaterAgreement, rater_agreement


@dataclass(frozen=True)
class LabelRow:
    """One annotator's label as the exports and the adjudication page show it."""

    annotation_id: int
    user_id: int
    annotator: str
    label: str
    reason: str | None
    note: str | None
    step_flags: list[list[str]] | None
    duration_ms: int | None
    created_at: str
    supersedes_id: int | None


@dataclass
class TaskOutcome:
    """A task with its labels (current and superseded), adjudications and decision."""

    task_id: int
    kind: str
    external_id: str
    item_key: str
    quota: int | None
    is_gold: bool
    gold_label: str | None
    position: int
    payload: dict[str, Any]
    hidden: dict[str, Any]
    current: list[LabelRow] = field(default_factory=list)
    history: list[LabelRow] = field(default_factory=list)
    adjudications: list[dict[str, Any]] = field(default_factory=list)
    decision: Decision | None = None

    @property
    def labels(self) -> list[str]:
        """The current labels, one per annotator."""
        return [row.label for row in self.current]


def load_outcomes(
    session: Any, kind: str, *, task_ids: Sequence[int] | None = None
) -> list[TaskOutcome]:
    """Every task of ``kind`` (or those of ``task_ids``) with labels and decision, in import
    order."""
    query = (
        select(
            Task.id,
            Task.kind,
            Task.external_id,
            Item.item_key,
            Task.quota,
            Task.is_gold,
            Task.gold_label,
            Task.position,
            Task.payload,
            Task.hidden,
        )
        .join(Item, Item.id == Task.item_id)
        .where(Task.kind == kind)
        .order_by(Task.position, Task.id)
    )
    if task_ids is not None:
        query = query.where(Task.id.in_(list(task_ids)))
    outcomes: dict[int, TaskOutcome] = {}
    for row in session.execute(query):
        outcomes[row[0]] = TaskOutcome(*row)
    if not outcomes:
        return []
    names = dict(session.execute(select(User.id, User.name)).all())
    annotation_query = (
        select(Annotation).join(Task, Task.id == Annotation.task_id).where(Task.kind == kind)
    )
    if task_ids is not None:
        annotation_query = annotation_query.where(Annotation.task_id.in_(list(task_ids)))
    latest: dict[tuple[int, int], LabelRow] = {}
    for annotation in session.execute(annotation_query.order_by(Annotation.id)).scalars():
        row = LabelRow(
            annotation_id=annotation.id,
            user_id=annotation.user_id,
            annotator=names.get(annotation.user_id, str(annotation.user_id)),
            label=annotation.label,
            reason=annotation.reason,
            note=annotation.note,
            step_flags=annotation.step_flags,
            duration_ms=annotation.duration_ms,
            created_at=annotation.created_at.isoformat(),
            supersedes_id=annotation.supersedes_id,
        )
        outcome = outcomes.get(annotation.task_id)
        if outcome is None:
            continue
        outcome.history.append(row)
        latest[(annotation.task_id, annotation.user_id)] = row
    for (task_id, _user), row in latest.items():
        outcomes[task_id].current.append(row)
    adjudication_query = (
        select(Adjudication).join(Task, Task.id == Adjudication.task_id).where(Task.kind == kind)
    )
    if task_ids is not None:
        adjudication_query = adjudication_query.where(Adjudication.task_id.in_(list(task_ids)))
    for adjudication in session.execute(adjudication_query.order_by(Adjudication.id)).scalars():
        outcomes[adjudication.task_id].adjudications.append(
            {
                "adjudicator": names.get(adjudication.user_id, str(adjudication.user_id)),
                "label": adjudication.label,
                "reason": adjudication.reason,
                "note": adjudication.note,
                "overrides_majority": adjudication.overrides_majority,
                "time": adjudication.created_at.isoformat(),
            }
        )
    for outcome in outcomes.values():
        outcome.current.sort(key=lambda r: r.annotation_id)
        final = outcome.adjudications[-1]["label"] if outcome.adjudications else None
        outcome.decision = final_decision(outcome.labels, outcome.quota, final)
    return list(outcomes.values())


@dataclass(frozen=True)
class AgreementSummary:
    """Agreement and outcomes over the regular (not gold) tasks of one kind."""

    n_tasks: int
    """Regular tasks."""
    statuses: dict[str, int]
    """Regular tasks per final status."""
    raters: RaterAgreement
    """Agreement between annotators (:func:`crystalbench.statistics.agreement.rater_agreement`)."""
    confidence: float
    """Level of the alpha interval."""


def task_ratings(outcomes: Sequence[TaskOutcome]) -> dict[str, dict[str, str]]:
    """Each regular task's current labels by annotator, keyed by the task's external id (the
    ``pair_id`` of a pair, as the pairs export writes it), for
    :func:`crystalbench.statistics.agreement.rater_agreement`. Gold tasks are left out."""
    ratings: dict[str, dict[str, str]] = {}
    for outcome in outcomes:
        if outcome.is_gold:
            continue
        key = outcome.external_id
        if key in ratings:  # two versions of one task: keep them apart
            key = f"{key}#{outcome.task_id}"
        ratings[key] = {row.annotator: row.label for row in outcome.current}
    return ratings


def agreement_summary(
    outcomes: Sequence[TaskOutcome],
    *,
    confidence: float = VALIDATION_CONFIDENCE,
    n_resamples: int = VALIDATION_BOOTSTRAP_RESAMPLES,
    seed: int = VALIDATION_SEED,
) -> AgreementSummary:
    """Final statuses and agreement between annotators over the regular tasks.

    Args:
        outcomes: The tasks of one kind (:func:`load_outcomes`).
        confidence: Level of the alpha interval.
        n_resamples: Bootstrap resamples of the alpha interval (0: none).
        seed: Seed of the bootstrap.
    """
    regular = [o for o in outcomes if not o.is_gold]
    statuses = {name: 0 for name in FINAL_STATUSES}
    for outcome in regular:
        assert outcome.decision is not None
        statuses[outcome.decision.status] += 1
    return AgreementSummary(
        n_tasks=len(regular),
        statuses=statuses,
        raters=rater_agreement(
            task_ratings(outcomes), confidence=confidence, n_resamples=n_resamples, seed=seed
        ),
        confidence=confidence,
    )


@dataclass(frozen=True)
class AnnotatorStats:
    """One annotator's work on one kind of task."""

    name: str
    role: str
    labels: int
    held: int
    median_seconds: float | None
    per_hour: float | None
    gold_seen: int
    gold_right: int
    final_compared: int
    """Labels compared with a settled final label (see the module docstring)."""
    final_agreed: int
    """Of those, the ones equal to it."""
    flags: list[str]

    @property
    def agreement_with_final(self) -> float | None:
        """Share of the compared labels equal to the final label (``None``: none compared)."""
        return self.final_agreed / self.final_compared if self.final_compared else None

    @property
    def gold_accuracy(self) -> float | None:
        """Share of gold tasks answered right."""
        return self.gold_right / self.gold_seen if self.gold_seen else None


def settled_label(outcome: TaskOutcome) -> str | None:
    """A regular task's final label when people other than any one annotator settled it: an
    adjudicator's, or the unanimous or majority label of two or more current labels; else
    ``None`` (gold tasks, ties not yet adjudicated, a single label, too few labels).

    Examples:
        >>> from crystalbench.review.labels import final_decision
        >>> def task(labels, adjudicated=None):
        ...     outcome = TaskOutcome(1, "pair", "p", "i", 2, False, None, 0, {}, {})
        ...     outcome.current = [LabelRow(k, k, f"a{k}", label, None, None, None, None, "",
        ...                                 None) for k, label in enumerate(labels)]
        ...     outcome.decision = final_decision(labels, 2, adjudicated)
        ...     return outcome
        >>> settled_label(task(["match", "no_match"])) is None  # a tie, not adjudicated
        True
        >>> settled_label(task(["match", "no_match"], adjudicated="no_match"))
        'no_match'
        >>> settled_label(task(["match", "match"])), settled_label(task(["match"]))
        ('match', None)
    """
    if outcome.is_gold or outcome.decision is None or outcome.decision.label is None:
        return None
    if outcome.decision.status == "adjudicated":
        return outcome.decision.label
    if len(outcome.current) < 2:
        return None
    return outcome.decision.label


def annotator_stats(
    session: Any, outcomes: Sequence[TaskOutcome], kind: str
) -> list[AnnotatorStats]:
    """Counts, pace, gold accuracy and agreement with the final label per annotator (its
    definition is in the module docstring)."""
    users = session.execute(select(User).order_by(User.name)).scalars().all()
    durations: dict[int, list[float]] = defaultdict(list)
    held: dict[int, int] = defaultdict(int)
    for user_id, status, created, finished in session.execute(
        select(
            Assignment.user_id, Assignment.status, Assignment.created_at, Assignment.finished_at
        ).where(Assignment.kind == kind)
    ):
        if status == "done" and finished is not None:
            durations[user_id].append((finished - created).total_seconds())
        elif status == "held":
            held[user_id] += 1
    counts: dict[int, int] = defaultdict(int)
    gold_seen: dict[int, int] = defaultdict(int)
    gold_right: dict[int, int] = defaultdict(int)
    agree: dict[int, list[bool]] = defaultdict(list)
    client_ms: dict[int, list[int]] = defaultdict(list)
    for outcome in outcomes:
        final = settled_label(outcome)
        for row in outcome.current:
            counts[row.user_id] += 1
            if row.duration_ms is not None:
                client_ms[row.user_id].append(row.duration_ms)
            if outcome.is_gold and outcome.gold_label is not None:
                gold_seen[row.user_id] += 1
                gold_right[row.user_id] += row.label == outcome.gold_label
            elif final is not None and row.label != "unsure":
                agree[row.user_id].append(row.label == final)
    stats = []
    for user in users:
        if not counts[user.id] and not held[user.id]:
            continue
        seconds = statistics.median(durations[user.id]) if durations[user.id] else None
        flags = []
        fast = client_ms[user.id]
        if fast and statistics.median(fast) < REVIEW_FAST_LABEL_MS:
            flags.append("fast")
        seen = gold_seen[user.id]
        if seen >= REVIEW_GOLD_MIN_SEEN and gold_right[user.id] / seen < REVIEW_GOLD_MIN_ACCURACY:
            flags.append("gold")
        stats.append(
            AnnotatorStats(
                name=user.name,
                role=user.role,
                labels=counts[user.id],
                held=held[user.id],
                median_seconds=seconds,
                per_hour=3600.0 / seconds if seconds else None,
                gold_seen=seen,
                gold_right=gold_right[user.id],
                final_compared=len(agree[user.id]),
                final_agreed=sum(agree[user.id]),
                flags=flags,
            )
        )
    return stats


def adjudication_queue(
    outcomes: Sequence[TaskOutcome], threshold: float, *, exclude_user: int | None = None
) -> list[TaskOutcome]:
    """Complete, unadjudicated regular tasks with agreement below ``threshold``, lowest
    agreement first (then import order); tasks ``exclude_user`` labelled are left out."""
    from crystalbench.review.labels import needs_adjudication

    queue = [
        o
        for o in outcomes
        if not o.is_gold
        and o.decision is not None
        and needs_adjudication(o.decision, threshold)
        and (exclude_user is None or all(r.user_id != exclude_user for r in o.current))
    ]
    queue.sort(key=lambda o: (o.decision.agreement if o.decision else 0.0, o.position))
    return queue
