"""What annotators and adjudicators may answer, and how a task's final label is decided.

Pure functions of plain data (no database): the vocabularies of both task kinds, the check of
a submitted form, and :func:`final_decision`, which tags a task's outcome ``unanimous``,
``majority``, ``adjudicated`` or ``unresolved``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from crystalbench.config.settings import REVIEW_MAX_NOTE_CHARS

PAIR_LABELS: tuple[str, ...] = ("match", "no_match", "unsure")
"""Step-pair labels: the predicted step says the same as the reference step, or not."""

PAIR_LABEL_TEXT: Mapping[str, str] = {
    "match": "Match",
    "no_match": "No match",
    "unsure": "Unsure",
}

CHAIN_VERDICTS: tuple[str, ...] = ("accept", "reject")
"""A reference chain is kept, or sent back for regeneration."""

STEP_FLAGS: tuple[str, ...] = ("not_visible", "unjustified", "wrong")
"""What can be wrong with one step of a chain: a perceptual claim the image does not show, a
transition the earlier steps do not justify, a false statement."""

STEP_FLAG_TEXT: Mapping[str, str] = {
    "not_visible": "Not visible",
    "unjustified": "Unjustified",
    "wrong": "Wrong",
}

REJECT_REASONS: tuple[str, ...] = (
    "not_visible",
    "unjustified",
    "wrong_step",
    "wrong_answer",
    "incomplete",
    "bad_item",
    "other",
)
"""Why a chain is rejected (the short taxonomy; ``other`` needs a note)."""

REJECT_REASON_TEXT: Mapping[str, str] = {
    "not_visible": "Claims something the image does not show",
    "unjustified": "A transition is not justified",
    "wrong_step": "A step is wrong",
    "wrong_answer": "Following it does not give the gold answer",
    "incomplete": "Steps are missing",
    "bad_item": "The item itself is broken (question, image or gold answer)",
    "other": "Other (say why in the note)",
}

ADJUDICATION_REASONS: tuple[str, ...] = (
    "annotator_error",
    "ambiguous_item",
    "guideline_gap",
    "edge_case",
    "subjective",
    "other",
)
"""Why annotators disagreed, as the adjudicator sees it."""

ADJUDICATION_REASON_TEXT: Mapping[str, str] = {
    "annotator_error": "An annotator made a mistake",
    "ambiguous_item": "The steps or the item are ambiguous",
    "guideline_gap": "The guidelines do not cover this",
    "edge_case": "A genuine edge case",
    "subjective": "A matter of judgement",
    "other": "Other (say why in the note)",
}

FINAL_STATUSES: tuple[str, ...] = ("unanimous", "majority", "adjudicated", "unresolved")

FinalStatus = Literal["unanimous", "majority", "adjudicated", "unresolved"]


def labels_for(kind: str) -> tuple[str, ...]:
    """The labels of a task kind.

    Examples:
        >>> labels_for("pair")
        ('match', 'no_match', 'unsure')
        >>> labels_for("chain")
        ('accept', 'reject')
    """
    return CHAIN_VERDICTS if kind == "chain" else PAIR_LABELS


class SubmissionError(ValueError):
    """A submitted form is not a valid label (the page shows the message)."""


class AcceptNeedsConfirmation(SubmissionError):
    """Accept was pressed while steps are flagged or a reject reason is chosen, and not
    confirmed (``confirm_accept=1``): the page asks whether to accept anyway."""


def accept_conflicts(step_flags: Sequence[Sequence[str]], reason: str | None) -> str | None:
    """What contradicts an Accept: the flagged steps (1-based) and a chosen reject reason, in
    one sentence; ``None`` when nothing does.

    Examples:
        >>> accept_conflicts([[], ["wrong"], [], ["unjustified", "wrong"]], None)
        'steps 2 and 4 are flagged'
        >>> accept_conflicts([["not_visible"]], "wrong_step")
        "step 1 is flagged and the reject reason 'A step is wrong' is chosen"
        >>> accept_conflicts([[]], None) is None
        True
    """
    flagged = [str(index + 1) for index, flags in enumerate(step_flags) if flags]
    parts = []
    if flagged:
        listed = (
            flagged[0] if len(flagged) == 1 else ", ".join(flagged[:-1]) + " and " + flagged[-1]
        )
        parts.append(f"step{'s' if len(flagged) > 1 else ''} {listed} "
                     f"{'are' if len(flagged) > 1 else 'is'} flagged")  # fmt: skip
    if reason is not None:
        text = REJECT_REASON_TEXT.get(reason, reason)
        parts.append(f"the reject reason {text!r} is chosen")
    return " and ".join(parts) or None


@dataclass(frozen=True)
class Submission:
    """A checked label: what the annotation row will hold."""

    label: str
    reason: str | None = None
    note: str | None = None
    step_flags: list[list[str]] | None = None
    duration_ms: int | None = None


def _note(form: Mapping[str, str]) -> str | None:
    note = form.get("note", "").strip()
    if len(note) > REVIEW_MAX_NOTE_CHARS:
        raise SubmissionError(f"the note is over {REVIEW_MAX_NOTE_CHARS} characters")
    return note or None


def _duration(form: Mapping[str, str]) -> int | None:
    raw = form.get("duration_ms", "").strip()
    if not raw:
        return None
    try:
        value = int(float(raw))
    except ValueError:
        return None
    return value if 0 <= value < 10**9 else None


def parse_submission(kind: str, form: Mapping[str, str], n_steps: int = 0) -> Submission:
    """Check a label form of a pair (``label``) or a chain (``verdict``, ``reason``,
    ``note``, ``flag-<step>-<flag>`` boxes).

    An Accept while steps are flagged or a reject reason is chosen must be confirmed
    (``confirm_accept=1``, the page's "Accept anyway"): the flags are kept, the reason is
    dropped. ``confirm_accept=1`` alone means Accept.

    Raises:
        SubmissionError: An unknown label, reason or flag, a reject without a reason, an
            ``other`` without a note, or a note that is too long.
        AcceptNeedsConfirmation: An Accept with flags or a reason, not confirmed.

    Examples:
        >>> parse_submission("pair", {"label": "match"}).label
        'match'
        >>> form = {"verdict": "reject", "reason": "wrong_step", "flag-1-wrong": "on"}
        >>> parse_submission("chain", form, n_steps=2).step_flags
        [[], ['wrong']]
        >>> parse_submission("chain", {"verdict": "accept", "flag-0-wrong": "on"}, n_steps=2)
        Traceback (most recent call last):
        ...
        crystalbench.review.labels.AcceptNeedsConfirmation: You pressed Accept, but step 1 is \
flagged. Accept anyway (step flags are kept with your review, a reject reason is dropped), or \
reject the chain, or clear them first.
        >>> form = {"verdict": "accept", "flag-0-wrong": "on", "confirm_accept": "1"}
        >>> parse_submission("chain", form, n_steps=2).step_flags
        [['wrong'], []]
        >>> parse_submission("chain", {"verdict": "reject"}, n_steps=2)
        Traceback (most recent call last):
        ...
        crystalbench.review.labels.SubmissionError: a rejected chain needs a reason
    """
    note = _note(form)
    duration = _duration(form)
    if kind == "pair":
        label = form.get("label", "")
        if label not in PAIR_LABELS:
            raise SubmissionError(f"label must be one of {', '.join(PAIR_LABELS)}")
        return Submission(label=label, note=note, duration_ms=duration)
    confirmed = form.get("confirm_accept", "") == "1"
    verdict = form.get("verdict", "") or ("accept" if confirmed else "")
    if verdict not in CHAIN_VERDICTS:
        raise SubmissionError("choose accept or reject")
    flags: list[list[str]] = [[] for _ in range(n_steps)]
    for key, value in form.items():
        if not key.startswith("flag-") or not value:
            continue
        _, _, rest = key.partition("-")
        index_text, _, flag = rest.partition("-")
        if not index_text.isdigit() or int(index_text) >= n_steps or flag not in STEP_FLAGS:
            raise SubmissionError(f"unknown step flag {key!r}")
        flags[int(index_text)].append(flag)
    flags = [sorted(set(step), key=STEP_FLAGS.index) for step in flags]
    reason = form.get("reason", "").strip() or None
    if verdict == "reject":
        if reason is None:
            raise SubmissionError("a rejected chain needs a reason")
        if reason not in REJECT_REASONS:
            raise SubmissionError(f"reason must be one of {', '.join(REJECT_REASONS)}")
        if reason == "other" and note is None:
            raise SubmissionError("the reason 'other' needs a note")
    else:
        conflicts = accept_conflicts(flags, reason)
        if conflicts is not None and not confirmed:
            raise AcceptNeedsConfirmation(
                f"You pressed Accept, but {conflicts}. Accept anyway (step flags are kept "
                "with your review, a reject reason is dropped), or reject the chain, or clear "
                "them first."
            )
        reason = None
    return Submission(
        label=verdict, reason=reason, note=note, step_flags=flags, duration_ms=duration
    )


def majority_label(labels: Sequence[str]) -> str | None:
    """The label more than half of ``labels`` carry, or ``None``.

    Examples:
        >>> majority_label(["match", "match", "no_match"])
        'match'
        >>> majority_label(["match", "no_match"]) is None
        True
    """
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if count * 2 > len(labels) else None


def pairwise_agreement(labels: Sequence[str]) -> float | None:
    """Share of annotator pairs of one task that gave the same label; ``None`` under two.

    Examples:
        >>> pairwise_agreement(["a", "a", "b"])  # 1 agreeing pair of 3
        0.3333333333333333
        >>> pairwise_agreement(["a"]) is None
        True
    """
    if len(labels) < 2:
        return None
    pairs = list(combinations(labels, 2))
    return sum(a == b for a, b in pairs) / len(pairs)


@dataclass(frozen=True)
class Decision:
    """The outcome of one task."""

    label: str | None
    """The final label, or ``None`` while unresolved."""
    status: FinalStatus
    complete: bool
    """Whether the task has as many labels as its quota asks for."""
    agreement: float | None
    """Pairwise agreement of the annotators' labels (``None`` under two labels)."""


def final_decision(
    labels: Sequence[str], quota: int | None, adjudicated: str | None = None
) -> Decision:
    """Decide a task: an adjudicator's label is final; else, once the task has its quota of
    labels, all the same is ``unanimous`` and a strict majority is ``majority``; anything else
    (too few labels, a tie) is ``unresolved`` with no label.

    A gold task (``quota`` ``None``) is complete with one label. One label on a task that asks
    for one counts as unanimous.

    Examples:
        >>> final_decision(["match", "match"], 2)
        Decision(label='match', status='unanimous', complete=True, agreement=1.0)
        >>> final_decision(["match", "no_match", "match"], 3).status
        'majority'
        >>> final_decision(["match", "no_match"], 2)
        Decision(label=None, status='unresolved', complete=True, agreement=0.0)
        >>> final_decision(["match"], 2).status
        'unresolved'
        >>> final_decision(["match", "no_match"], 2, adjudicated="no_match").label
        'no_match'
    """
    need = 1 if quota is None else quota
    complete = len(labels) >= need
    agreement = pairwise_agreement(labels)
    if adjudicated is not None:
        return Decision(adjudicated, "adjudicated", complete, agreement)
    if not complete or not labels:
        return Decision(None, "unresolved", complete, agreement)
    if len(set(labels)) == 1:
        return Decision(labels[0], "unanimous", complete, agreement)
    majority = majority_label(labels)
    if majority is not None:
        return Decision(majority, "majority", complete, agreement)
    return Decision(None, "unresolved", complete, agreement)


def needs_adjudication(decision: Decision, threshold: float) -> bool:
    """Whether a task goes to the adjudication queue: complete, not yet adjudicated, with
    pairwise agreement below ``threshold`` (1.0: any disagreement).

    Examples:
        >>> needs_adjudication(final_decision(["match", "no_match"], 2), 1.0)
        True
        >>> needs_adjudication(final_decision(["match", "match"], 2), 1.0)
        False
    """
    if decision.status == "adjudicated" or not decision.complete:
        return False
    return decision.agreement is not None and decision.agreement < threshold
