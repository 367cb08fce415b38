"""The top-level flow: model text -> :class:`~crystalbench.types.ParsedResponse`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from crystalbench.parsing.answer import bare_answer, strip_tags
from crystalbench.parsing.answer_rules import Extraction, find_answer_rule, prompt_phrase_pattern
from crystalbench.parsing.json_steps import choose_hit, json_hits, json_step_list
from crystalbench.parsing.lines import (
    Line,
    join_answer_values,
    markup_steps,
    scan_lines,
    sentence_steps,
)
from crystalbench.parsing.thinking import SPECIAL_TOKEN, drop_self_checks, split_thinking
from crystalbench.types import ParsedResponse, ParseStatus, Prediction

__all__ = ["answer_phrases_of", "extract_answer", "parse_prediction", "parse_response"]

ANSWER_PHRASE_KEY = "answer_phrase"
"""The item metadata key that declares the benchmark prompt's answer phrase (a string or a
list of strings: MathVista's prompt asks for the "final value")."""


def answer_phrases_of(metadata: dict[str, Any] | None) -> tuple[str, ...]:
    """The answer phrases an item declares in its metadata (``answer_phrase``).

    Examples:
        >>> answer_phrases_of({"answer_phrase": "final value"})
        ('final value',)
        >>> answer_phrases_of({})
        ()
    """
    if not metadata:
        return ()
    value = metadata.get(ANSWER_PHRASE_KEY)
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if isinstance(v, str) and v.strip())
    return ()


def extract_answer(text: str | None, answer_phrases: Sequence[str] = ()) -> Extraction:
    r"""The answer a model output commits to and the rule that took it, or
    ``Extraction(None, None)`` when no rule commits (where a cascade may ask a model).

    Examples:
        >>> extract_answer("The bar for C is tallest.\nTherefore, the correct answer is:\n(C) 3")
        Extraction(answer='(C) 3', rule='answer_next_line')
        >>> extract_answer("So the perimeter of the rectangle is 6 yards.")
        Extraction(answer='6', rule='closing_number')
        >>> extract_answer("The taller bar belongs to the second group, so that one wins.")
        Extraction(answer=None, rule=None)
    """
    parsed = parse_response(text, answer_phrases=answer_phrases)
    return Extraction(parsed.answer, parsed.extraction)


def parse_response(text: str | None, *, answer_phrases: Sequence[str] = ()) -> ParsedResponse:
    """Parse one model output into steps, an answer and the path that found them.

    Never raises on model output: whatever comes in, a :class:`ParsedResponse` comes out,
    with ``status`` saying how it was read (``empty`` and ``unparseable`` mark failures).

    Args:
        text: The raw model text, or ``None`` when the model produced nothing.
        answer_phrases: Answer phrases the benchmark's prompt asks for ("final value"), read
            like "Answer:" (rule ``prompt_phrase``).

    Returns:
        The parsed response; ``raw`` is ``text`` unchanged (``""`` for ``None``);
        ``extraction`` names the rule that took the answer
        (:data:`~crystalbench.parsing.answer.ANSWER_RULES`), ``truncated`` flags a reply that
        stops mid-reasoning.

    Examples:
        >>> r = parse_response('```json\\n{"reasoning_steps": ["Red bar."], "answer": "B"}\\n```')
        >>> r.steps, r.answer, r.status
        (['Red bar.'], 'B', 'json')
        >>> r = parse_response("<think>hm</think>Step 1: Count cats.\\nStep 2: Add 1.\\nAnswer: 3")
        >>> r.steps, r.answer, r.status, r.thinking
        (['Count cats.', 'Add 1.'], '3', 'markup', 'hm')
        >>> parse_response("   ").status
        'empty'
    """
    if text is None:
        raw = ""
    elif isinstance(text, str):
        raw = text
    elif isinstance(text, (bytes, bytearray)):
        raw = bytes(text).decode("utf-8", errors="replace")
    else:
        raw = str(text)
    prompt = prompt_phrase_pattern(tuple(answer_phrases)) if answer_phrases else None
    try:
        steps, (answer, rule), status, thinking = _parse_text(raw, prompt)
        truncated = is_truncated(raw, answer, status)
    except Exception:  # a parser bug must not take a whole evaluation run down with it
        steps, answer, rule, status, thinking, truncated = (
            [],
            None,
            None,
            "unparseable",
            None,
            False,
        )
    return ParsedResponse(
        steps=steps,
        answer=answer,
        status=status,
        raw=raw,
        thinking=thinking,
        extraction=rule if answer is not None else None,
        truncated=truncated,
    )


def parse_prediction(pred: Prediction, *, answer_phrases: Sequence[str] = ()) -> ParsedResponse:
    """Steps and answer of a :class:`Prediction`, parsing its text only when needed.

    - ``reasoning_steps`` given: those steps (stripped, blank ones dropped) and ``answer``,
      status ``structured``; ``raw`` is ``response`` or ``""``.
    - only ``answer`` given (no steps, no text): status ``answer_only``.
    - ``response`` given: :func:`parse_response`; an ``answer`` stored next to it overrides the
      parsed one (the file states it explicitly), turning ``empty`` / ``unparseable`` into
      ``answer_only``.
    - nothing at all: status ``empty``.

    A blank ``answer`` counts as no answer.

    Args:
        pred: One prediction record.

    Returns:
        The parsed response.

    Examples:
        >>> parse_prediction(Prediction(id="1", reasoning_steps=[" a ", "", "b"], answer="C")).steps
        ['a', 'b']
        >>> parse_prediction(Prediction(id="1", answer="C")).status
        'answer_only'
        >>> parse_prediction(Prediction(id="1", response="Step 1: look.\\nStep 2: see.")).status
        'markup'
    """
    given_answer = pred.answer.strip() if pred.answer is not None and pred.answer.strip() else None
    given = "given" if given_answer is not None else None
    if pred.reasoning_steps is not None:
        steps = [s.strip() for s in pred.reasoning_steps if s.strip()]
        return ParsedResponse(
            steps=steps,
            answer=given_answer,
            status="structured",
            raw=pred.response or "",
            extraction=given,
        )
    if pred.response is None:
        status: ParseStatus = "answer_only" if given_answer is not None else "empty"
        return ParsedResponse(
            steps=[], answer=given_answer, status=status, raw="", extraction=given
        )
    parsed = parse_response(pred.response, answer_phrases=answer_phrases)
    if given_answer is None:
        return parsed
    status = parsed.status
    if status in ("empty", "unparseable"):
        status = "answer_only"
    return ParsedResponse(
        steps=parsed.steps,
        answer=given_answer,
        status=status,
        raw=parsed.raw,
        thinking=parsed.thinking,
        extraction=given,
        truncated=parsed.truncated,
    )


# MARK: top-level flow

_NO_ANSWER = Extraction(None, None)
_ParseResult = tuple[list[str], Extraction, ParseStatus]


def _parse_text(
    raw: str, prompt: re.Pattern[str] | None = None
) -> tuple[list[str], Extraction, ParseStatus, str | None]:
    """The parser without the safety net (tests call it to see real exceptions)."""
    if not raw.strip():
        return [], _NO_ANSWER, "empty", None
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = SPECIAL_TOKEN.sub("", text)
    body, thinking = split_thinking(text)
    if thinking is None:
        if not body.strip():
            return [], _NO_ANSWER, "empty", None
        return (*_parse_body(body, prompt=prompt), None)
    steps, answer, status = (
        _parse_body(body, prompt=prompt) if body.strip() else ([], _NO_ANSWER, "empty")
    )
    if any(not _restates_box(step) for step in steps):
        return steps, answer, status, thinking  # the final part has steps of its own
    # The final part only answers (or says nothing): the reasoning is in the think block.
    # A short think block is the reply itself only when nothing after it answers.
    think_steps, think_answer, think_status = _parse_body(
        thinking, reply=answer.answer is None, prompt=prompt
    )
    if think_status in ("markup", "sentences"):
        think_steps = drop_self_checks(think_steps)
    if answer.answer is None:
        answer = think_answer
    if think_steps:
        return think_steps, answer, _FROM_THINKING[think_status], thinking
    if steps:
        return steps, answer, status, thinking
    if answer.answer is not None:
        return [], answer, "answer_only", thinking
    return [], _NO_ANSWER, "unparseable", thinking


_FROM_THINKING: dict[ParseStatus, ParseStatus] = {
    "json": "thinking_json",
    "json_repaired": "thinking_json",
    "json_truncated": "thinking_json",
    "markup": "thinking_markup",
    "sentences": "thinking_sentences",
}


def _restates_box(step: str) -> bool:
    """ "The angle is $\\boxed{40^\\circ}$.": a step that only carries the answer."""
    return "\\boxed" in step or "\\fbox" in step


def _parse_body(
    text: str, *, reply: bool = True, prompt: re.Pattern[str] | None = None
) -> _ParseResult:
    """Steps, answer and status of one part of the text; a think block is not a ``reply``
    (a short line in it is reasoning, never a bare answer)."""
    hit = choose_hit(json_hits(text)) if "{" in text else None
    json_answer: str | None = None
    outside = text
    if hit is not None:
        outside = text[: hit.start] + "\n" + text[hit.end :]
        if hit.steps:
            answer = Extraction(hit.answer, "json") if hit.answer is not None else _NO_ANSWER
            if hit.answer is None and not hit.truncated:
                answer = find_answer_rule(outside, scan_lines(outside, prompt), prompt)
            return hit.steps, answer, hit.status
        json_answer = hit.answer
    elif text.lstrip()[:1] in ("[", "`"):
        listed = json_step_list(text)
        if listed is not None:
            steps, end, truncated = listed
            rest = text[end:]
            return (
                steps,
                find_answer_rule(rest, scan_lines(rest, prompt), prompt),
                ("json_truncated" if truncated else "json_repaired"),
            )
    lines = scan_lines(outside, prompt)
    answer = (
        Extraction(json_answer, "json")
        if json_answer is not None
        else find_answer_rule(outside, lines, prompt)
    )
    step_lines = lines
    if "<" in outside:  # answer blocks are not steps; section tags only separate them
        untagged = strip_tags(outside)
        if untagged != outside:
            step_lines = scan_lines(untagged, prompt)
    if answer.rule == "last_line":  # the bare value on the last line is not a step
        step_lines = _without_last_content_line(step_lines)
    step_lines = join_answer_values(step_lines, prompt)
    units = markup_steps(step_lines)
    if units:
        return units, answer, "markup"
    if answer.answer is None and reply:
        bare = bare_answer(step_lines)
        if bare is not None:
            return [], Extraction(bare, "bare_reply"), "answer_only"
    sentences = sentence_steps(step_lines)
    if sentences:
        return sentences, answer, "sentences"
    if answer.answer is not None:
        return [], answer, "answer_only"
    return [], _NO_ANSWER, "unparseable"


def _without_last_content_line(lines: list[Line]) -> list[Line]:
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].kind not in ("blank", "fence", "rule"):
            return [*lines[:index], replace(lines[index], text="", kind="blank")]
    return lines


# MARK: cut-off replies

_OPEN_END = frozenset(",;:([{=+/\\^&|<")
_FUNCTION_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "and",
        "or",
        "but",
        "with",
        "for",
        "from",
        "by",
        "in",
        "on",
        "at",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "that",
        "which",
        "this",
        "these",
        "those",
        "its",
        "their",
        "our",
        "we",
        "if",
        "then",
        "than",
        "so",
        "because",
        "since",
        "into",
        "onto",
        "whose",
    ]
)
_OPEN_MARKERS = (("\\[", "\\]"), ("\\(", "\\)"), ("<think>", "</think>"))


def is_truncated(raw: str, answer: str | None, status: str) -> bool:
    """True when a reply stops mid-reasoning (cut off by the token limit).

    The rule: JSON cut off (``json_truncated``); else, only when no answer was committed, the
    text ends inside a fenced block, a display or inline math block or a think block, or
    on a character or word that cannot end a sentence (``,``, ``=``, ``(``, "the", "of",
    "and"...).

    Examples:
        >>> is_truncated("First, the area is 3 x 4 = 12. Next, the", None, "sentences")
        True
        >>> is_truncated("The area is 12.", None, "sentences")
        False
    """
    if status == "json_truncated":
        return True
    if answer is not None or not raw.strip():
        return False
    text = raw.rstrip()
    lines = text.split("\n")
    fences = sum(1 for line in lines if line.strip().startswith(("```", "~~~")))
    if fences % 2 == 1:
        return True
    if text.count("$$") % 2 == 1:
        return True
    lower = text.lower()
    for opening, closing in _OPEN_MARKERS:
        if lower.count(opening) > lower.count(closing):
            return True
    if text[-1] in _OPEN_END:
        return True
    last_word = text.rsplit(None, 1)[-1].lower()
    return last_word in _FUNCTION_WORDS
