"""Settings of a running review app (``crystal review serve`` options)."""

from __future__ import annotations

from dataclasses import dataclass

from crystalbench.config.settings import (
    REVIEW_ADJUDICATION_THRESHOLD,
    REVIEW_GOLD_EVERY,
    REVIEW_HOLD_MINUTES,
    REVIEW_MAX_BODY_BYTES,
    REVIEW_SESSION_HOURS,
)


@dataclass(frozen=True)
class ReviewSettings:
    """How the app hands out work and guards sessions.

    Examples:
        >>> ReviewSettings().hold_minutes
        30.0
    """

    hold_minutes: float = REVIEW_HOLD_MINUTES
    """A task handed out stays reserved this long; after it, it may go to someone else."""
    gold_every: int = REVIEW_GOLD_EVERY
    """One task in this many is a gold task, while unseen ones remain (0: never)."""
    adjudication_threshold: float = REVIEW_ADJUDICATION_THRESHOLD
    """Finished tasks with pairwise agreement below this go to the adjudication queue."""
    session_hours: float = REVIEW_SESSION_HOURS
    """Lifetime of a login."""
    secure_cookies: bool = False
    """Mark cookies ``Secure`` (when served over HTTPS behind a proxy)."""
    max_body_bytes: int = REVIEW_MAX_BODY_BYTES
    """Largest request body read."""
    show_names_to_adjudicators: bool = False
    """Show annotators' names on the adjudication page (blind by default)."""
