"""What ``crystal score`` and ``crystal run`` print about the model calls beside the metric:
the step verifier (``--verify``) and the answer extractor (``--extractor-url``)."""

from __future__ import annotations

from typing import Any

from crystalbench.metrics import plural

__all__ = ["extraction_line", "verifier_line"]


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
        + _agreement(verified)
        + (f"; first error: {verified.first_error}" if verified.first_error else "")
    )


def extraction_line(summary: Any, name: str | None = None) -> str | None:
    """One line of the answer extractor's counts, or ``None`` when none ran (rules only).

    Examples:
        >>> extraction_line(type("S", (), {"extraction": None})()) is None
        True
    """
    extracted = getattr(summary, "extraction", None)
    if extracted is None:
        return None
    head = f"{name}: " if name else ""
    return (
        f"{head}answer extractor {extracted.extractor.get('model')} (rules, then the model"
        + (", dry run" if extracted.dry_run else "")
        + f"): {extracted.n_asked} items no rule committed on, {extracted.n_extracted} "
        f"answers read by the model, {extracted.n_none} without an answer, "
        f"{extracted.n_failed} failed calls (no answer) | {extracted.requests} requests, "
        f"{extracted.cache_hits} from cache, {extracted.prompt_tokens} + "
        f"{extracted.completion_tokens} tokens"
        + (f"; first error: {extracted.first_error}" if extracted.first_error else "")
    )


def _agreement(verified: Any) -> str:
    """`` | N judges: alpha A over U steps`` with a panel; else nothing."""
    agreement = getattr(verified, "agreement", None)
    if agreement is None:
        return ""
    alpha = agreement.krippendorff_alpha
    shown = "n/a" if alpha is None else f"{alpha:.3f}"
    return (
        f" | {len(agreement.judges)} judges: Krippendorff's alpha {shown} over "
        f"{agreement.n_units} steps, {agreement.n_ties} ties"
    )
