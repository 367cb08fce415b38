"""The validator gate: reading a structured verdict from the fifth model, robustly.

The validator is asked (``references_validate_v1``) for one JSON object with the four
criteria (``logical_validity``, ``sequence_coherence``, ``visual_grounding``,
``answer_consistency``), ``accept``, ``first_error_step`` and ``reasons``.
:func:`parse_verdict` never raises on the reply: ``<think>`` blocks and code fences are
skipped, the first object with an ``accept`` field or all four criteria wins (repaired JSON
accepted: single quotes, trailing commas), ``"yes"``/``"true"``/1 read as true. A reply
that names no verdict is ``unparsed`` (retried, never taken as an acceptance).

When ``accept`` is missing it is the conjunction of the four criteria; when present it wins,
except that a chain is never accepted while a criterion is explicitly false.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from crystalbench.parsing.tolerant_json import ParseError, TolerantReader

CRITERIA = ("logical_validity", "sequence_coherence", "visual_grounding", "answer_consistency")
"""The four criteria the validator judges (the paper's Phase 3)."""

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_TRUE = frozenset({"true", "yes", "y", "pass", "passed", "accept", "accepted", "1", "valid"})
_FALSE = frozenset({"false", "no", "n", "fail", "failed", "reject", "rejected", "0", "invalid"})


@dataclass(frozen=True)
class Verdict:
    """What a validator reply said."""

    status: str
    """``ok`` (a verdict was read) or ``unparsed``."""
    accept: bool | None = None
    criteria: dict[str, bool | None] = field(default_factory=dict)
    first_error_step: int | None = None
    reasons: list[str] = field(default_factory=list)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _objects(text: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        value: Any
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            try:
                value = TolerantReader(text, match.start()).read_object()
            except (ParseError, RecursionError):
                continue
        if isinstance(value, dict):
            found.append(value)
    return found


def parse_verdict(raw: str | None) -> Verdict:
    """The verdict in a validator's reply (never raises).

    Examples:
        >>> v = parse_verdict('```json\\n{"logical_validity": true, "sequence_coherence": true,'
        ...                   ' "visual_grounding": "yes", "answer_consistency": true,'
        ...                   ' "accept": true, "reasons": []}\\n```')
        >>> v.status, v.accept
        ('ok', True)
        >>> v = parse_verdict("{'accept': false, 'reasons': ['step 3 is not visible'],"
        ...                   " 'first_error_step': 3,}")
        >>> v.accept, v.reasons, v.first_error_step
        (False, ['step 3 is not visible'], 3)
        >>> parse_verdict('{"logical_validity": true, "sequence_coherence": false,'
        ...               ' "visual_grounding": true, "answer_consistency": true}').accept
        False
        >>> parse_verdict("Looks good to me!").status
        'unparsed'
    """
    if raw is None or not raw.strip():
        return Verdict(status="unparsed")
    text = _THINK.sub(" ", raw)
    for value in _objects(text):
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        criteria = {name: _as_bool(lowered.get(name)) for name in CRITERIA}
        accept = _as_bool(lowered.get("accept", lowered.get("verdict")))
        if accept is None and not all(c is not None for c in criteria.values()):
            continue
        if accept is None or any(c is False for c in criteria.values()):
            accept = all(c is True for c in criteria.values()) if accept is None else False
        reasons_value = lowered.get("reasons", lowered.get("reason", lowered.get("rationale")))
        if isinstance(reasons_value, str):
            reasons = [reasons_value] if reasons_value.strip() else []
        elif isinstance(reasons_value, list):
            reasons = [str(r) for r in reasons_value if str(r).strip()]
        else:
            reasons = []
        step = lowered.get("first_error_step")
        if isinstance(step, str) and re.fullmatch(r"\s*-?\d{1,6}\s*", step):
            step = int(step)  # the tolerant reader keeps numbers as their text
        first = step if isinstance(step, int) and not isinstance(step, bool) and step > 0 else None
        return Verdict(
            status="ok", accept=accept, criteria=criteria, first_error_step=first, reasons=reasons
        )
    return Verdict(status="unparsed")


def chain_hash(steps: list[str]) -> str:
    """SHA-256 prefix of a chain (which chain a verdict judged).

    Examples:
        >>> chain_hash(["a", "b"]) == chain_hash(["a", "b"]) != chain_hash(["b", "a"])
        True
    """
    return hashlib.sha256(json.dumps(steps, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]
