"""The top-level flow: model text -> :class:`~crystalbench.types.ParsedResponse`."""

from __future__ import annotations

from crystalbench.parsing.answer import bare_answer, find_answer, strip_tags
from crystalbench.parsing.json_steps import choose_hit, json_hits, json_step_list
from crystalbench.parsing.lines import markup_steps, scan_lines, sentence_steps
from crystalbench.parsing.thinking import SPECIAL_TOKEN, drop_self_checks, split_thinking
from crystalbench.types import ParsedResponse, ParseStatus, Prediction

__all__ = ["parse_prediction", "parse_response"]


def parse_response(text: str | None) -> ParsedResponse:
    """Parse one model output into steps, an answer and the path that found them.

    Never raises on model output: whatever comes in, a :class:`ParsedResponse` comes out,
    with ``status`` saying how it was read (``empty`` and ``unparseable`` mark failures).

    Args:
        text: The raw model text, or ``None`` when the model produced nothing.

    Returns:
        The parsed response; ``raw`` is ``text`` unchanged (``""`` for ``None``).

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
    try:
        steps, answer, status, thinking = _parse_text(raw)
    except Exception:  # a parser bug must not take a whole evaluation run down with it
        steps, answer, status, thinking = [], None, "unparseable", None
    return ParsedResponse(steps=steps, answer=answer, status=status, raw=raw, thinking=thinking)


def parse_prediction(pred: Prediction) -> ParsedResponse:
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
    if pred.reasoning_steps is not None:
        steps = [s.strip() for s in pred.reasoning_steps if s.strip()]
        return ParsedResponse(
            steps=steps, answer=given_answer, status="structured", raw=pred.response or ""
        )
    if pred.response is None:
        status: ParseStatus = "answer_only" if given_answer is not None else "empty"
        return ParsedResponse(steps=[], answer=given_answer, status=status, raw="")
    parsed = parse_response(pred.response)
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
    )


# MARK: top-level flow

_ParseResult = tuple[list[str], str | None, ParseStatus]


def _parse_text(raw: str) -> tuple[list[str], str | None, ParseStatus, str | None]:
    """The parser without the safety net (tests call it to see real exceptions)."""
    if not raw.strip():
        return [], None, "empty", None
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = SPECIAL_TOKEN.sub("", text)
    body, thinking = split_thinking(text)
    if thinking is None:
        if not body.strip():
            return [], None, "empty", None
        return (*_parse_body(body), None)
    steps, answer, status = _parse_body(body) if body.strip() else ([], None, "empty")
    if any(not _restates_box(step) for step in steps):
        return steps, answer, status, thinking  # the final part has steps of its own
    # The final part only answers (or says nothing): the reasoning is in the think block.
    # A short think block is the reply itself only when nothing after it answers.
    think_steps, think_answer, think_status = _parse_body(thinking, reply=answer is None)
    if think_status in ("markup", "sentences"):
        think_steps = drop_self_checks(think_steps)
    if answer is None:
        answer = think_answer
    if think_steps:
        return think_steps, answer, _FROM_THINKING[think_status], thinking
    if steps:
        return steps, answer, status, thinking
    if answer is not None:
        return [], answer, "answer_only", thinking
    return [], None, "unparseable", thinking


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


def _parse_body(text: str, *, reply: bool = True) -> _ParseResult:
    """Steps, answer and status of one part of the text; a think block is not a ``reply``
    (a short line in it is reasoning, never a bare answer)."""
    hit = choose_hit(json_hits(text)) if "{" in text else None
    json_answer: str | None = None
    outside = text
    if hit is not None:
        outside = text[: hit.start] + "\n" + text[hit.end :]
        if hit.steps:
            answer = hit.answer
            if answer is None and not hit.truncated:
                answer = find_answer(outside, scan_lines(outside))
            return hit.steps, answer, hit.status
        json_answer = hit.answer
    elif text.lstrip()[:1] in ("[", "`"):
        listed = json_step_list(text)
        if listed is not None:
            steps, end, truncated = listed
            rest = text[end:]
            return (
                steps,
                find_answer(rest, scan_lines(rest)),
                ("json_truncated" if truncated else "json_repaired"),
            )
    lines = scan_lines(outside)
    answer = json_answer if json_answer is not None else find_answer(outside, lines)
    step_lines = lines
    if "<" in outside:  # answer blocks are not steps; section tags only separate them
        untagged = strip_tags(outside)
        if untagged != outside:
            step_lines = scan_lines(untagged)
    units = markup_steps(step_lines)
    if units:
        return units, answer, "markup"
    if answer is None and reply:
        bare = bare_answer(step_lines)
        if bare is not None:
            return [], bare, "answer_only"
    sentences = sentence_steps(step_lines)
    if sentences:
        return sentences, answer, "sentences"
    if answer is not None:
        return [], answer, "answer_only"
    return [], None, "unparseable"
