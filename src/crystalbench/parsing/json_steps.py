"""The CRYSTAL JSON schema in a model's text: candidates, schema keys, steps and answers.

Every ``{`` that opens something key-like is a candidate; each is read with :mod:`json` and,
when that fails, with :class:`~crystalbench.parsing.tolerant_json.TolerantReader`. A
candidate counts when it, or an object nested in it, has a steps key (``reasoning_steps``,
``steps``, ``reasoning``...) or an answer key (``answer``, ``final_answer``...), compared
case- and punctuation-insensitively. The readers work within a budget proportional to the
text length.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from crystalbench.parsing.answer import tidy_answer
from crystalbench.parsing.cleaning import clean_step
from crystalbench.parsing.lines import scan_lines
from crystalbench.parsing.sentences import split_sentences
from crystalbench.parsing.tolerant_json import (
    LATEX_ESCAPE,
    ParseError,
    RawNumber,
    TolerantReader,
    has_latex_escape,
)
from crystalbench.types import ParseStatus

__all__ = ["JsonHit", "choose_hit", "json_hits", "json_step_list"]

_DECODER = json.JSONDecoder(parse_float=RawNumber, parse_int=RawNumber)
# A "{" that opens something key-like: a quote, or a bare word followed by a colon.
# ("\frac{a}{b}" and "{1, 2}" are not candidates.)
_JSON_START = re.compile(
    r"\{(?=[ \t\n]*(?:/[/*][^\n]*\n[ \t\n]*)?(?:[\"'“‘”]|[A-Za-z_][\w \-]{0,40}[\"'”’]?[ \t]*:))"
)

_STEP_KEYS = (
    "reasoningsteps",
    "steps",
    "reasoningstep",
    "reasoningchain",
    "chainofthought",
    "stepbystep",
    "solutionsteps",
    "thinkingsteps",
    "reasoning",
    "thoughts",
    "rationale",
    "explanation",
    "solution",
    "cot",
)
_ANSWER_KEYS = (
    "answer",
    "finalanswer",
    "answertext",
    "correctanswer",
    "predictedanswer",
    "final",
    "prediction",
)
_STEP_KEY_SET = frozenset(_STEP_KEYS)
_ANSWER_KEY_SET = frozenset(_ANSWER_KEYS)
# Keys of a step given as an object, in the order they are preferred.
_STEP_TEXT_KEYS = (
    "text",
    "description",
    "content",
    "step",
    "reasoning",
    "explanation",
    "thought",
    "detail",
    "details",
    "statement",
    "observation",
    "action",
    "value",
    "title",
)
_ANSWER_TEXT_KEYS = ("answer", "value", "text", "content", "choice", "option", "letter")
_NON_ALNUM = re.compile(r"[\W_]+")


def _compact_key(key: str) -> str:
    return _NON_ALNUM.sub("", key).lower()


@dataclass(frozen=True)
class JsonHit:
    start: int
    end: int
    steps: list[str]
    answer: str | None
    status: ParseStatus
    truncated: bool


def json_hits(text: str) -> list[JsonHit]:
    """Every schema-bearing JSON object in ``text``, left to right, non-overlapping."""
    hits: list[JsonHit] = []
    budget = 2 * len(text) + 50_000  # characters the readers may scan in all
    pos = 0
    while budget > 0:
        m = _JSON_START.search(text, pos)
        if m is None:
            break
        start = m.start()
        strict = True
        truncated = False
        value: Any
        try:
            value, end = _DECODER.raw_decode(text, start)
            budget -= end - start
            if LATEX_ESCAPE.search(text, start, end) and has_latex_escape(text[start:end]):
                value = _reread_latex(text, start, end, value)
        except (ValueError, RecursionError) as exc:
            budget -= getattr(exc, "pos", start) - start + 1
            strict = False
            reader = TolerantReader(text, start)
            try:
                value = reader.read_object()
            except (ParseError, RecursionError):
                budget -= reader.pos - start + 1
                pos = start + 1
                continue
            end = reader.pos
            truncated = reader.truncated
            budget -= end - start + 1
        schema, top_level = _find_schema(value)
        if schema is None:
            pos = end if not truncated else start + 1
            continue
        hits.append(_hit_from_schema(schema, start, end, strict and top_level, truncated))
        pos = end
    return hits


_LIST_START = re.compile(r"\s*(?:```[A-Za-z]*\s*)?\[")


def json_step_list(text: str) -> tuple[list[str], int, bool] | None:
    """A reply that is a bare JSON list of steps: (steps, end offset, truncated)."""
    m = _LIST_START.match(text)
    if m is None:
        return None
    start = m.end() - 1
    truncated = False
    value: Any
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        reader = TolerantReader(text, start)
        try:
            value = reader.read_array()
        except (ParseError, RecursionError):
            return None
        end, truncated = reader.pos, reader.truncated
    if not isinstance(value, list) or not all(isinstance(x, (str, dict)) for x in value):
        return None
    steps = _steps_from_value(value)
    return (steps, end, truncated) if steps else None


def _reread_latex(text: str, start: int, end: int, value: Any) -> Any:
    """Valid JSON with "\\frac"-style LaTeX: read it again keeping those backslashes."""
    reader = TolerantReader(text, start)
    try:
        reread = reader.read_object()
    except (ParseError, RecursionError):
        return value
    return value if reader.truncated or reader.pos != end else reread


def choose_hit(hits: list[JsonHit]) -> JsonHit | None:
    """The last hit with steps (complete ones first), else the last with an answer."""
    if not hits:
        return None
    best = max(
        range(len(hits)),
        key=lambda i: (bool(hits[i].steps), not hits[i].truncated, hits[i].answer is not None, i),
    )
    return hits[best]


def _find_schema(value: Any, depth: int = 0) -> tuple[dict[str, Any] | None, bool]:
    """The (last) object holding a steps or answer key, and whether it is ``value`` itself."""
    if isinstance(value, dict):
        if any(
            isinstance(k, str) and _compact_key(k) in _STEP_KEY_SET | _ANSWER_KEY_SET for k in value
        ):
            return value, depth == 0
        children: list[Any] = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return None, False
    if depth >= 4:
        return None, False
    for child in reversed(children):
        found, _ = _find_schema(child, depth + 1)
        if found is not None:
            return found, False
    return None, False


def _hit_from_schema(
    schema: dict[str, Any], start: int, end: int, strict_top: bool, truncated: bool
) -> JsonHit:
    by_key: dict[str, Any] = {}
    for key, val in schema.items():
        if isinstance(key, str):
            by_key.setdefault(_compact_key(key), val)
    steps_value = next((by_key[k] for k in _STEP_KEYS if k in by_key), None)
    answer_value = next((by_key[k] for k in _ANSWER_KEYS if k in by_key), None)
    steps = _steps_from_value(steps_value)
    answer = _answer_from_value(answer_value)
    exact = (
        strict_top
        and isinstance(schema.get("reasoning_steps"), list)
        and all(type(s) is str for s in schema["reasoning_steps"])
        and type(schema.get("answer")) is str
    )
    status: ParseStatus
    if truncated:
        status = "json_truncated"
    elif exact:
        status = "json"
    else:
        status = "json_repaired"
    return JsonHit(start, end, steps, answer, status, truncated)


def _steps_from_value(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) and not isinstance(value, RawNumber):
        return _steps_from_string(value)
    items: list[Any]
    if isinstance(value, list):
        items = value
    elif isinstance(value, dict):
        items = list(value.values())
    else:
        items = [value]
    steps: list[str] = []
    for item in items:
        piece = _item_text(item)
        if piece is not None:
            cleaned = clean_step(piece)
            if cleaned:
                steps.append(cleaned)
    return steps


def _item_text(item: Any, depth: int = 0) -> str | None:
    if item is None:
        return None
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, str):
        return item
    if isinstance(item, (int, float)):
        return str(item)
    if depth > 3:
        return None
    if isinstance(item, list):
        parts = [_item_text(x, depth + 1) for x in item]
        return " ".join(p for p in parts if p and p.strip()) or None
    if isinstance(item, dict):
        by_key = {_compact_key(k): v for k, v in item.items() if isinstance(k, str)}
        for key in _STEP_TEXT_KEYS:
            val = by_key.get(key)
            if isinstance(val, str) and not isinstance(val, RawNumber) and val.strip():
                return val
        for val in item.values():
            if isinstance(val, str) and not isinstance(val, RawNumber) and val.strip():
                return val
        return None
    return str(item)


def _steps_from_string(value: str) -> list[str]:
    """Steps written as one string: one per line ("Step N" labels split a line), else
    sentences. Answer lines and headings are dropped."""
    lines = [
        line
        for line in scan_lines(value)
        if line.kind not in ("blank", "fence", "rule", "heading", "answer", "answer_head")
    ]
    pieces = [line.text for line in lines]
    if len(pieces) == 1:
        pieces = split_sentences(pieces[0])
    steps = []
    for piece in pieces:
        cleaned = clean_step(piece)
        if cleaned:
            steps.append(cleaned)
    return steps


def _answer_from_value(value: Any, depth: int = 0) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return tidy_answer(value, trim_period=False)
    if isinstance(value, (int, float)):
        return str(value)
    if depth > 3:
        return None
    if isinstance(value, list):
        parts = [_answer_from_value(x, depth + 1) for x in value]
        return ", ".join(p for p in parts if p) or None
    if isinstance(value, dict):
        by_key = {_compact_key(k): v for k, v in value.items() if isinstance(k, str)}
        for key in _ANSWER_TEXT_KEYS:
            if key in by_key:
                found = _answer_from_value(by_key[key], depth + 1)
                if found is not None:
                    return found
        try:
            return json.dumps(value, ensure_ascii=False) or None
        except (TypeError, ValueError):
            return None
    return str(value)
