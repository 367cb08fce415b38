"""What ``crystal score`` prints about the step verifier (``--verify``), and
``crystal validate verifier``'s printing."""

from __future__ import annotations

from typing import Any

from crystalbench.metrics import plural

__all__ = ["verifier_line"]


def verifier_line(summary: Any, name: str | None = None) -> str | None:
    """One line of the verifier's figures, or ``None`` when none ran.

    Examples:
        >>> verifier_line(type("S", (), {"verification": None})()) is None
        True
    """
    verified = getattr(summary, "verification", None)
    if verified is None:
        return None

    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    head = f"{name}: " if name else ""
    return (
        f"{head}verifier {verified.judge.get('model')} ({verified.mode}"
        + (", dry run" if verified.dry_run else "")
        + f"): verified precision {share(verified.verified_precision)}, hallucination rate "
        f"{share(verified.hallucination_rate)} | {plural(verified.n_checked, 'step')} checked, "
        f"{verified.n_rule_labelled} by rules (calls saved), {verified.n_unverified} "
        f"unverified | {verified.requests} requests, {verified.cache_hits} from cache, "
        f"{verified.prompt_tokens} + {verified.completion_tokens} tokens"
        + (f"; first error: {verified.first_error}" if verified.first_error else "")
    )
