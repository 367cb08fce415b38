"""Model text -> :class:`~crystalbench.types.ParsedResponse`; never raises on model output.

The CRYSTAL prompt asks for ``{"reasoning_steps": [...], "answer": "..."}``, but real outputs
(Qwen2.5-VL, InternVL, LLaVA, GPT-4o, Gemini, DeepSeek-R1-style reasoners, MiniCPM) wrap it in
fences and prose, break it (trailing commas, single or smart quotes, raw newlines, Python
literals, unescaped LaTeX), cut it off at the token limit, or ignore it and write markdown.
:func:`parse_response` tries, in order:

1. **JSON** (status ``json``, ``json_repaired`` or ``json_truncated``). Every ``{`` that opens
   something key-like is a candidate; each is read with :mod:`json` and, when that fails, with a
   small tolerant reader (below). A candidate counts when it, or an object nested in it, has a
   steps key (``reasoning_steps``, ``steps``, ``reasoning``...) or an answer key (``answer``,
   ``final_answer``...), compared case- and punctuation-insensitively. Among them the last one
   with steps wins, complete ones before cut-off ones. ``json`` means the text held the exact
   schema (``reasoning_steps``: list of strings, ``answer``: string) as valid JSON; anything
   that needed a repair or a synonym (or a reply that is a bare JSON list of steps) is
   ``json_repaired``.
2. **Markup** (``markup``): "Step N:" blocks, else numbered / bulleted items (at least two).
3. **Sentences** (``sentences``): the last resort, :func:`split_sentences` over the text.

The answer, when the JSON holds none, is the *last* commitment in the text: ``<answer>`` tags,
``\\boxed{}`` (nested braces), "Answer:" / "Final answer:" / "**Answer:**" lines (or a
"Final Answer" heading followed by the answer line), "the (final) answer is ...". An answer
read from a line stops at the end of its first sentence or at "because" / "since" ("Answer: B.
The red bar..." gives "B"). Answer lines never become steps. A one-line reply that is an
option ("B", "(B) cat"), a number, yes/no, or at most five words ("The left one.") is an answer
with no steps.

Design choices worth knowing when reading scores:

- ``<think>`` / ``<thinking>`` / ``◁think▷`` blocks (also an unclosed opening tag, and a
  closing tag with no opening tag as DeepSeek-R1 emits) go to ``thinking`` and are not scored
  when anything parseable follows them. When nothing follows, or what follows yields neither
  steps nor an answer, the thinking text itself is parsed (a reasoner cut off mid-thought
  still shows its chain); ``thinking`` is filled either way. Only a think block that is itself
  empty, with nothing after it, gives ``empty``.
- Steps are stripped; "Step N:", list markers and markdown emphasis / headings are removed on
  every path (JSON too), because reference steps carry none of them. Blank steps are dropped;
  duplicates are kept (scoring must see them). Markup and sentence steps must contain a letter
  or digit; short filler such as "Sure! Let's solve this step by step." and intro lines ending
  in ":" are dropped from prose (never from JSON lists or labelled steps).
- JSON that decodes as valid but contains LaTeX written with single backslashes (``"\\frac"``
  is a form feed plus "rac" to a JSON reader) is re-read keeping the backslash; the status
  stays ``json``.
- A response cut inside its first JSON step keeps nothing: ``unparseable`` (or whatever the
  prose around it yields), never an empty ``json_truncated``.

Every regular expression here runs in linear time on adversarial input (no nested
quantifiers over overlapping classes); braces are matched with an explicit stack, and the
tolerant JSON reader works within a budget proportional to the text length.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from crystalbench.types import ParsedResponse, ParseStatus, Prediction

__all__ = ["parse_prediction", "parse_response", "split_sentences"]

# MARK: public API


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


def split_sentences(text: str) -> list[str]:
    """Split text into sentences: the parser's last resort.

    Line breaks always end a sentence. Inside a line a sentence ends at ``.``, ``!`` or ``?``
    (plus closing quotes or brackets) followed by a space, unless the next word starts in
    lower case, or the period ends an abbreviation ("e.g.", "i.e.", "Fig.", "Eq.", "vs.",
    "Dr.", "No. 3"...), an initial ("J. K. Rowling"), an acronym ("U.S.") or a list number
    ("1. First..."). Decimals never split ("3.5" has no space after its point). Chinese and
    Japanese full stops end a sentence without a space.

    Args:
        text: Any text.

    Returns:
        The sentences, stripped, blank ones dropped.

    Examples:
        >>> split_sentences("The ratio is 3.5, e.g. for Fig. 2. Next, compare! Done")
        ['The ratio is 3.5, e.g. for Fig. 2.', 'Next, compare!', 'Done']
        >>> split_sentences("J. K. Rowling wrote it. 1. First item")
        ['J. K. Rowling wrote it.', '1. First item']
    """
    out: list[str] = []
    for line in text.splitlines():
        start = 0
        for m in _SENTENCE_END.finditer(line):
            if m.start() < start or not _is_sentence_boundary(line, start, m):
                continue
            piece = line[start : m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out


# MARK: top-level flow

_ParseResult = tuple[list[str], str | None, ParseStatus]


def _parse_text(raw: str) -> tuple[list[str], str | None, ParseStatus, str | None]:
    """The parser without the safety net (tests call it to see real exceptions)."""
    if not raw.strip():
        return [], None, "empty", None
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _SPECIAL_TOKEN.sub("", text)
    body, thinking = _split_thinking(text)
    if body.strip():
        steps, answer, status = _parse_body(body)
        if status != "unparseable" or not thinking:
            return steps, answer, status, thinking
    if not thinking:
        return [], None, "empty", None
    # Nothing usable after the think block: the reasoning inside it is all there is.
    steps, answer, status = _parse_body(thinking)
    return steps, answer, status, thinking


def _parse_body(text: str) -> _ParseResult:
    hit = _choose_hit(_json_hits(text)) if "{" in text else None
    json_answer: str | None = None
    outside = text
    if hit is not None:
        outside = text[: hit.start] + "\n" + text[hit.end :]
        if hit.steps:
            answer = hit.answer
            if answer is None and not hit.truncated:
                answer = _find_answer(outside, _scan_lines(outside))
            return hit.steps, answer, hit.status
        json_answer = hit.answer
    elif text.lstrip()[:1] in ("[", "`"):
        listed = _json_step_list(text)
        if listed is not None:
            steps, end, truncated = listed
            rest = text[end:]
            return (
                steps,
                _find_answer(rest, _scan_lines(rest)),
                ("json_truncated" if truncated else "json_repaired"),
            )
    lines = _scan_lines(outside)
    answer = json_answer if json_answer is not None else _find_answer(outside, lines)
    step_lines = lines
    if "<" in outside:  # answer blocks are not steps; section tags only separate them
        untagged = _strip_tags(outside)
        if untagged != outside:
            step_lines = _scan_lines(untagged)
    units = _markup_steps(step_lines)
    if units:
        return units, answer, "markup"
    if answer is None:
        bare = _bare_answer(step_lines)
        if bare is not None:
            return [], bare, "answer_only"
    sentences = _sentence_steps(step_lines)
    if sentences:
        return sentences, answer, "sentences"
    if answer is not None:
        return [], answer, "answer_only"
    return [], None, "unparseable"


# MARK: special tokens and thinking

# Chat-template debris: <|im_end|>, <|endoftext|>, <｜end▁of▁sentence｜>, </s>, <end_of_turn>.
_SPECIAL_TOKEN = re.compile(
    r"<\|[^<>|\n]{1,40}\|>|<｜[^<>｜\n]{1,40}｜>|</?s>|<(?:start|end)_of_turn>(?:model\b)?"
)
_THINK_OPEN = re.compile(r"<[ \t]*think(?:ing)?[ \t]*>|◁think▷", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"<[ \t]*/[ \t]*think(?:ing)?[ \t]*>|◁/think▷", re.IGNORECASE)


def _split_thinking(text: str) -> tuple[str, str | None]:
    """(text outside think blocks, joined think contents or None)."""
    if "think" not in text.lower():
        return text, None
    thoughts: list[str] = []
    body: list[str] = []
    pos = 0
    first_close = _THINK_CLOSE.search(text)
    if first_close is not None and _THINK_OPEN.search(text, 0, first_close.start()) is None:
        # DeepSeek-R1: the chat template opened the block, the output only closes it.
        thoughts.append(text[: first_close.start()])
        pos = first_close.end()
    while True:
        opening = _THINK_OPEN.search(text, pos)
        if opening is None:
            body.append(text[pos:])
            break
        body.append(text[pos : opening.start()])
        closing = _THINK_CLOSE.search(text, opening.end())
        if closing is None:  # cut off while thinking
            thoughts.append(text[opening.end() :])
            break
        thoughts.append(text[opening.end() : closing.start()])
        pos = closing.end()
    remaining = _THINK_CLOSE.sub("\n", "".join(body))
    joined = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return remaining, (joined or None)


# MARK: JSON


class _RawNumber(str):
    """A JSON number kept as its source text ("3.50" stays "3.50")."""


class _ParseError(Exception):
    """The tolerant reader met something that is not JSON-like."""


class _EndOfText(Exception):
    """The text ended inside a string, number or literal."""


_DECODER = json.JSONDecoder(parse_float=_RawNumber, parse_int=_RawNumber)
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
class _JsonHit:
    start: int
    end: int
    steps: list[str]
    answer: str | None
    status: ParseStatus
    truncated: bool


def _json_hits(text: str) -> list[_JsonHit]:
    """Every schema-bearing JSON object in ``text``, left to right, non-overlapping."""
    hits: list[_JsonHit] = []
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
            if _LATEX_ESCAPE.search(text, start, end) and _has_latex_escape(text[start:end]):
                value = _reread_latex(text, start, end, value)
        except (ValueError, RecursionError) as exc:
            budget -= getattr(exc, "pos", start) - start + 1
            strict = False
            reader = _TolerantReader(text, start)
            try:
                value = reader.read_object()
            except (_ParseError, RecursionError):
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


def _json_step_list(text: str) -> tuple[list[str], int, bool] | None:
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
        reader = _TolerantReader(text, start)
        try:
            value = reader.read_array()
        except (_ParseError, RecursionError):
            return None
        end, truncated = reader.pos, reader.truncated
    if not isinstance(value, list) or not all(isinstance(x, (str, dict)) for x in value):
        return None
    steps = _steps_from_value(value)
    return (steps, end, truncated) if steps else None


def _reread_latex(text: str, start: int, end: int, value: Any) -> Any:
    """Valid JSON with "\\frac"-style LaTeX: read it again keeping those backslashes."""
    reader = _TolerantReader(text, start)
    try:
        reread = reader.read_object()
    except (_ParseError, RecursionError):
        return value
    return value if reader.truncated or reader.pos != end else reread


def _choose_hit(hits: list[_JsonHit]) -> _JsonHit | None:
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
) -> _JsonHit:
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
    return _JsonHit(start, end, steps, answer, status, truncated)


def _steps_from_value(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) and not isinstance(value, _RawNumber):
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
            cleaned = _clean_step(piece)
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
            if isinstance(val, str) and not isinstance(val, _RawNumber) and val.strip():
                return val
        for val in item.values():
            if isinstance(val, str) and not isinstance(val, _RawNumber) and val.strip():
                return val
        return None
    return str(item)


def _steps_from_string(value: str) -> list[str]:
    """Steps written as one string: one per line ("Step N" labels split a line), else
    sentences. Answer lines and headings are dropped."""
    lines = [
        line
        for line in _scan_lines(value)
        if line.kind not in ("blank", "fence", "rule", "heading", "answer", "answer_head")
    ]
    pieces = [line.text for line in lines]
    if len(pieces) == 1:
        pieces = split_sentences(pieces[0])
    steps = []
    for piece in pieces:
        cleaned = _clean_step(piece)
        if cleaned:
            steps.append(cleaned)
    return steps


def _answer_from_value(value: Any, depth: int = 0) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _clean_answer(value, trim_period=False)
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


# LaTeX commands whose first letter is also a JSON escape (\f -> form feed, \t -> tab...):
# "\frac" in a JSON string is almost always LaTeX written with one backslash.
_LATEX_WORDS = frozenset(
    (
        "bar",
        "beta",
        "bf",
        "big",
        "bigg",
        "bigl",
        "bigr",
        "bigcup",
        "bigcap",
        "binom",
        "bmod",
        "bot",
        "boxed",
        "breve",
        "bullet",
        "backslash",
        "because",
        "begin",
        "frac",
        "forall",
        "flat",
        "frown",
        "ne",
        "neq",
        "nabla",
        "nu",
        "not",
        "neg",
        "newline",
        "ni",
        "notin",
        "nmid",
        "nleq",
        "ngeq",
        "nexists",
        "natural",
        "rangle",
        "rceil",
        "rfloor",
        "rho",
        "right",
        "rightarrow",
        "rightleftharpoons",
        "rm",
        "rvert",
        "rbrace",
        "rbrack",
        "root",
        "tan",
        "tanh",
        "tau",
        "text",
        "textbf",
        "textit",
        "textrm",
        "texttt",
        "textdegree",
        "textstyle",
        "tfrac",
        "tbinom",
        "theta",
        "therefore",
        "tilde",
        "times",
        "to",
        "top",
        "triangle",
    )
)
_LATEX_ESCAPE = re.compile(r"\\[bfnrt][a-z]")
_BACKSLASH_RUN = re.compile(r"\\(\\|[bfnrt][A-Za-z]*)")
_LETTERS = re.compile(r"[A-Za-z]+")


def _has_latex_escape(span: str) -> bool:
    for m in _BACKSLASH_RUN.finditer(span):
        word = m.group(1)
        if word != "\\" and word in _LATEX_WORDS:
            return True
    return False


_QUOTE_CLOSERS = {'"': '"', "'": "'", "“": '”"“', "”": '”"', "‘": "’'", "’": "’'"}
_STRING_STOP = {q: re.compile("[\\\\" + re.escape(c) + "]") for q, c in _QUOTE_CLOSERS.items()}
_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "'": "'",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SPACES = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?=[ \t\r\n]*(?:[,\]}]|$))")
_BARE_VALUE = re.compile(r"[^,\]}\n\"]{1,400}")
_BARE_KEY = re.compile(r"[A-Za-z_][\w\-]*(?: [\w\-]+){0,6}")
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "none": None,
    "undefined": None,
}
_MAX_DEPTH = 64


class _TolerantReader:
    """A forgiving reader for JSON-like objects.

    Accepts single, smart and missing quotes (bare keys and values), trailing and missing
    commas, comments, Python literals, raw newlines in strings and unescaped inner quotes (a
    quote closes a string only when a delimiter follows it). Where the text ends inside a
    structure, it keeps the complete values read so far and sets ``truncated``.
    """

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.n = len(text)
        self.pos = pos
        self.truncated = False

    def read_object(self) -> dict[str, Any]:
        return self._object(0)

    def read_array(self) -> list[Any]:
        return self._array(0)

    def _skip_space(self) -> None:
        text = self.text
        while True:
            m = _SPACES.match(text, self.pos)
            self.pos = m.end() if m else self.pos
            if text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = self.n if newline < 0 else newline
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                self.pos = self.n if close < 0 else close + 2
            else:
                return

    def _value(self, depth: int) -> Any:
        self._skip_space()
        if self.pos >= self.n:
            raise _EndOfText
        char = self.text[self.pos]
        if char == "{":
            return self._object(depth + 1)
        if char == "[":
            return self._array(depth + 1)
        if char in _QUOTE_CLOSERS:
            return self._string(char, key=False)
        m = _NUMBER.match(self.text, self.pos)
        if m:
            if m.end() >= self.n:
                raise _EndOfText  # "42" at the very end may be the start of "420"
            self.pos = m.end()
            return _RawNumber(m.group())
        m = _BARE_VALUE.match(self.text, self.pos)
        if m is None:
            raise _ParseError
        if m.end() >= self.n:
            raise _EndOfText
        self.pos = m.end()
        word = m.group().strip()
        return _LITERALS.get(word.lower(), word)

    def _object(self, depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise _ParseError
        self.pos += 1  # "{"
        out: dict[str, Any] = {}
        while True:
            self._skip_space()
            if self.pos >= self.n:
                self.truncated = True
                return out
            char = self.text[self.pos]
            if char == "}":
                self.pos += 1
                return out
            if char == ",":
                self.pos += 1
                continue
            try:
                key = self._key()
                self._skip_space()
                if self.pos >= self.n:
                    raise _EndOfText
                if self.text[self.pos] not in ":=":
                    raise _ParseError
                self.pos += 1
                value = self._value(depth)
            except _EndOfText:
                self.pos = self.n
                self.truncated = True
                return out
            out[key] = value
            if self.truncated:
                return out

    def _array(self, depth: int) -> list[Any]:
        if depth > _MAX_DEPTH:
            raise _ParseError
        self.pos += 1  # "["
        out: list[Any] = []
        while True:
            self._skip_space()
            if self.pos >= self.n:
                self.truncated = True
                return out
            char = self.text[self.pos]
            if char == "]":
                self.pos += 1
                return out
            if char == "}":  # "[... }": the list was never closed; let the object close
                return out
            if char == ",":
                self.pos += 1
                continue
            try:
                value = self._value(depth)
            except _EndOfText:
                self.pos = self.n
                self.truncated = True
                return out
            out.append(value)
            if self.truncated:
                return out

    def _key(self) -> str:
        char = self.text[self.pos]
        if char in _QUOTE_CLOSERS:
            return self._string(char, key=True)
        m = _BARE_KEY.match(self.text, self.pos)
        if m is None:
            raise _ParseError
        self.pos = m.end()
        return m.group()

    def _string(self, quote: str, *, key: bool) -> str:
        text, n = self.text, self.n
        stop = _STRING_STOP[quote]
        parts: list[str] = []
        pos = self.pos + 1
        while True:
            m = stop.search(text, pos)
            if m is None:
                self.pos = n
                raise _EndOfText
            i = m.start()
            parts.append(text[pos:i])
            if text[i] == "\\":
                pos = self._escape(i, parts)
                continue
            # A quote closes the string only when a delimiter follows; otherwise it is an
            # unescaped quote inside the text ('It's', "the "A" label").
            j = _SPACES.match(text, i + 1)
            after = j.end() if j else i + 1
            if after >= n:
                self.pos = after
                return "".join(parts)
            nxt = text[after]
            if (
                (key and nxt in ":=")
                or (not key and nxt in ",}]")
                or (not key and nxt in _QUOTE_CLOSERS and "\n" in text[i + 1 : after])
            ):
                self.pos = i + 1
                return "".join(parts)
            parts.append(text[i])
            pos = i + 1

    def _escape(self, i: int, parts: list[str]) -> int:
        """Decode the escape at ``text[i] == "\\"``; return where reading resumes."""
        text = self.text
        if i + 1 >= self.n:
            self.pos = self.n
            raise _EndOfText
        nxt = text[i + 1]
        if nxt in "bfnrt":
            word = _LETTERS.match(text, i + 1)
            if word is not None and word.group() in _LATEX_WORDS:
                parts.append("\\")  # keep "\frac" as LaTeX; the letters follow as text
                return i + 1
        if nxt == "u":
            hex4 = _HEX4.fullmatch(text, i + 2, i + 6)
            if hex4 is None:
                parts.append("\\")  # "\underline"
                return i + 1
            code = int(hex4.group(), 16)
            if 0xD800 <= code < 0xDC00 and text.startswith("\\u", i + 6):
                low = _HEX4.fullmatch(text, i + 8, i + 12)
                if low is not None and 0xDC00 <= int(low.group(), 16) < 0xE000:
                    pair = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
                    parts.append(chr(pair))
                    return i + 12
            parts.append(chr(code))
            return i + 6
        if nxt in _ESCAPES:
            parts.append(_ESCAPES[nxt])
            return i + 2
        parts.append("\\")  # unknown escape such as "\(" or "\sqrt": keep it literally
        return i + 1


# MARK: lines (markup, answers, sentences)


@dataclass(frozen=True)
class _Line:
    text: str
    """The line as written (no newline)."""
    kind: str
    """blank, fence, rule, heading, title (a bold-only line), answer, answer_head (an answer
    marker with the answer on the next line), step, item or text."""
    indent: int
    offset: int
    """Offset of the line in the scanned text."""
    answer: str | None = None
    """For ``answer`` lines: the text after the marker."""
    answer_at: int = 0
    """Offset of ``answer`` in the scanned text."""


_HRULE = re.compile(r"[ \t]*([-*_=])(?:[ \t]*\1){2,}[ \t]*$")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"([ \t]*)(?:[-*+•·▪‣◦●]|\d{1,2}[.)]|\(\d{1,2}\))[ \t]+(?=\S)")
_STEP_LINE = re.compile(
    r"(?:>[ \t]*)*(?:#{1,6}[ \t]*)?(?:[-*+•][ \t]+)?(?:(?:\*\*|__)[ \t]*)?step[ \t]*\d{1,3}\b",
    re.IGNORECASE,
)
_PLAIN_PREFIX = re.compile(r"[ \t>#]*(?:[-*+•][ \t]+)?")
_ANSWER_WORD = r"(?:(?:the|my|our)[ \t]+)?(?:final[ \t]+|correct[ \t]+|short[ \t]+)?answer"
_ANSWER_LINE = re.compile(
    _ANSWER_WORD
    + r"(?:[ \t]*(?:is[ \t]*)?[:：=][ \t]*|[ \t]*[-–—][ \t]+|[ \t]+is[ \t]+)(?P<rest>.*)$|"
    + _ANSWER_WORD
    + r"[ \t]*(?:[:：][ \t]*)?$",
    re.IGNORECASE,
)
_BOLD_TITLE = re.compile(r"(?:\*\*|__)[^*_\n]{1,80}(?:\*\*|__)[ \t]*(?::[ \t]*)?$")


def _plain(line: str) -> str:
    """A line without emphasis markers and leading ``#``, ``>`` or bullet."""
    if "**" in line or "__" in line:
        line = line.replace("**", "").replace("__", "")
    m = _PLAIN_PREFIX.match(line)
    return line[m.end() :].strip() if m else line.strip()


# "Step 1: ... Step 2: ..." on one line; the split also cuts before a trailing "Answer:".
_INLINE_LABEL = re.compile(
    r"(?:\*\*)?\bstep[ \t]*\d{1,3}[ \t]*(?:\*\*)?[:.)]|\b(?:final[ \t]+)?answer[ \t]*[:：]",
    re.IGNORECASE,
)


def _scan_lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    offset = 0
    for raw_line in text.split("\n"):
        if "tep" in raw_line or "TEP" in raw_line:
            for piece, at in _split_inline_labels(raw_line):
                lines.append(_classify(piece, offset + at))
        else:
            lines.append(_classify(raw_line, offset))
        offset += len(raw_line) + 1
    return lines


def _split_inline_labels(line: str) -> list[tuple[str, int]]:
    """Cut a line holding two or more "Step N:" labels before each label."""
    labels = list(_INLINE_LABEL.finditer(line))
    if sum(1 for m in labels if "tep" in m.group().lower()) < 2:
        return [(line, 0)]
    cuts = [m.start() for m in labels if m.start() > 0 and line[: m.start()].strip()]
    if not cuts:
        return [(line, 0)]
    bounds = [0, *cuts, len(line)]
    return [(line[a:b], a) for a, b in itertools.pairwise(bounds) if line[a:b].strip()]


def _classify(line: str, offset: int) -> _Line:
    stripped = line.strip()
    if not stripped:
        return _Line(line, "blank", 0, offset)
    indent = len(line) - len(line.lstrip())
    if stripped.startswith(("```", "~~~")):
        return _Line(line, "fence", indent, offset)
    first = stripped[0]
    if first in "-*_=" and _HRULE.match(stripped):
        return _Line(line, "rule", indent, offset)
    if _STEP_LINE.match(stripped):
        return _Line(line, "step", indent, offset)
    plain = _plain(stripped)
    if plain[:1] in "AaFfTtMmOoSsCc" and "nswer" in plain[:24]:
        m = _ANSWER_LINE.match(plain)
        if m is not None:
            rest = m.group("rest")
            if rest is not None and rest.strip():
                rest_text = rest.strip()
                found = line.rfind(rest_text)
                where = offset + (found if found >= 0 else 0)
                return _Line(line, "answer", indent, offset, rest_text, where)
            return _Line(line, "answer_head", indent, offset)
    if first == "#" and _HEADING.match(line):
        return _Line(line, "heading", indent, offset)
    if first in "*_" and _BOLD_TITLE.match(stripped) and len(stripped.split()) <= 10:
        return _Line(line, "title", indent, offset)
    if _LIST_ITEM.match(line):
        return _Line(line, "item", indent, offset)
    return _Line(line, "text", indent, offset)


def _markup_steps(lines: list[_Line]) -> list[str]:
    """Steps from "Step N" blocks, else from numbered / bulleted items (at least two)."""
    has_step = any(line.kind == "step" for line in lines)
    if not has_step and sum(line.kind == "item" for line in lines) < 2:
        return []
    units: list[tuple[list[str], bool]] = []  # (lines, labelled)
    current: list[str] | None = None
    after_blank = True
    skip_answer_value = False
    for line in lines:
        kind = line.kind
        if kind == "blank":
            after_blank = True
            continue
        if kind in ("fence", "rule"):
            continue
        if skip_answer_value:  # the line under a "Final Answer" heading is the answer
            skip_answer_value = False
            if kind in ("text", "item"):
                continue
        if kind in ("answer", "answer_head", "heading", "title"):
            current = None
            skip_answer_value = kind == "answer_head"
            after_blank = True
            continue
        if kind == "step" or (kind == "item" and not has_step):
            current = [line.text]
            units.append((current, True))
        elif current is not None and (has_step or not after_blank or line.indent > 0):
            current.append(line.text)
        else:
            current = [line.text]
            units.append((current, False))
        after_blank = False
    steps: list[str] = []
    for parts, labelled in units:
        step = _join_pieces([_clean_step(p) for p in parts])
        if not step or not _has_alnum(step):
            continue
        if not labelled and _is_filler(step):
            continue
        steps.append(step)
    return steps


def _join_pieces(pieces: list[str]) -> str:
    """Join the lines of one step; a title line ("Compare the bars") gets a full stop."""
    step = ""
    for piece in pieces:
        if not piece:
            continue
        if not step:
            step = piece
        elif (step[-1].isalnum() or step[-1] == ")") and piece[0].isupper():
            step += ". " + piece
        else:
            step += " " + piece
    return step


def _sentence_steps(lines: list[_Line]) -> list[str]:
    steps: list[str] = []
    skip_answer_value = False
    for line in lines:
        kind = line.kind
        if kind == "blank":
            continue
        if skip_answer_value:
            skip_answer_value = False
            if kind in ("text", "item"):
                continue
        if kind in ("fence", "rule", "heading", "answer", "answer_head"):
            skip_answer_value = kind == "answer_head"
            continue
        if kind == "title" and not _is_sentence_title(line.text):
            continue
        for sentence in split_sentences(line.text):
            cleaned = _clean_step(sentence)
            if (
                cleaned
                and _has_alnum(cleaned)
                and not _is_filler(cleaned)
                and not _is_answer_statement(cleaned)
            ):
                steps.append(cleaned)
    return steps


def _is_answer_statement(sentence: str) -> bool:
    """ "The answer is B." / "Final answer: 3" on its own: the answer, not a step."""
    plain = _plain(sentence)
    return "nswer" in plain[:24] and _ANSWER_LINE.match(plain) is not None


_PLEASANTRY = re.compile(
    r"(?:sure|certainly|of course|okay|ok|alright|absolutely|great|hmm+)\b[\s,.!]*", re.IGNORECASE
)
_INTRO = re.compile(
    r"(?:let'?s|let me|let us|i will|i'll|we will|we'll|i need to|we need to)[ \t]+"
    r"(?:now[ \t]+|first[ \t]+|carefully[ \t]+)?"
    r"(?:solve|analy[sz]e|think|break|work|go|start|begin|reason|tackle|approach|figure|see)\b"
    r"|here(?:'s| is| are)\b",
    re.IGNORECASE,
)
_STEP_BY_STEP = re.compile(r"step[- ]by[- ]step", re.IGNORECASE)


def _is_filler(step: str) -> bool:
    """Intro lines and pleasantries that carry no reasoning ("Sure! Let's think.")."""
    if step.endswith(":"):
        return True
    m = _PLEASANTRY.match(step)
    rest = step[m.end() :] if m else step
    if not rest:
        return True
    words = rest.count(" ") + 1
    if _STEP_BY_STEP.search(rest):  # "Let's analyze the image step by step."
        return words <= 16
    return words <= 8 and _INTRO.match(rest) is not None


def _is_sentence_title(line: str) -> bool:
    """A bold-only line worth keeping as a sentence: long, or ending like a sentence."""
    inner = line.replace("**", "").replace("__", "").strip()
    return inner.count(" ") >= 4 or inner.endswith((".", "!", "?"))


def _has_alnum(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


# MARK: cleaning


_LEAD_MARKER = re.compile(
    r"(?:#{1,6}[ \t]+|>[ \t]*|[-*+•·▪‣◦●][ \t]+|\(?\d{1,2}[.)][ \t]+|\(\d{1,2}\)[ \t]*"
    r"|step[ \t]*\d{1,3}[ \t]*(?:\([^()\n]{0,60}\)[ \t]*)?(?:[:.)\-–—]+[ \t]*|(?=\s)|$))",
    re.IGNORECASE,
)
_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_UNDERSCORE_ITALIC = re.compile(r"(?<![\w\\])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?!\w)")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MARKUP_CHARS = frozenset("#>-+*•·▪‣◦●(0123456789sS")


def _clean_step(step: str) -> str:
    """Strip a step and remove labels, list markers and markdown emphasis."""
    step = step.strip()
    if not step:
        return ""
    if "**" in step or "__" in step:
        step = step.replace("**", "").replace("__", "").strip()
    if "*" in step:
        step = _ITALIC.sub(r"\1", step)
    if "_" in step:
        step = _UNDERSCORE_ITALIC.sub(r"\1", step)
    if "`" in step:
        step = _INLINE_CODE.sub(r"\1", step).replace("```", "")
    for _ in range(4):
        if not step or step[0] not in _MARKUP_CHARS:
            break
        m = _LEAD_MARKER.match(step)
        if m is None or m.end() == 0:
            break
        step = step[m.end() :].lstrip()
    if _SURROGATE.search(step):
        step = _SURROGATE.sub("\ufffd", step)
    return step.strip()


_WRAPPERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("`", "`"))


def _clean_answer(answer: str, *, trim_period: bool) -> str | None:
    """Strip emphasis, math delimiters and ``\\boxed{}`` from an answer; ``None`` if blank."""
    answer = answer.strip()
    if "**" in answer or "__" in answer:
        answer = answer.replace("**", "").replace("__", "").strip()
    boxed = _boxed_contents(answer)
    if boxed:
        answer = boxed[-1][1].strip()
    for _ in range(3):
        for left, right in _WRAPPERS:
            if len(answer) > len(left) + len(right) and answer.startswith(left):
                if answer.endswith(right):
                    answer = answer[len(left) : -len(right)].strip()
                elif answer.endswith(right + "."):
                    answer = answer[len(left) : -len(right) - 1].strip()
    if trim_period and len(answer) > 1 and answer.endswith(".") and not answer.endswith(".."):
        answer = answer[:-1].rstrip()
    if _SURROGATE.search(answer):
        answer = _SURROGATE.sub("\ufffd", answer)
    return answer or None


# MARK: answers

_BOXED_TOKEN = re.compile(r"\\(?:boxed|fbox)[ \t]*\{|\\[{}]|[{}]")
# <answer> (GLM-4.1V, R1-style prompts) and LLaVA-CoT's <CONCLUSION> hold the answer.
_ANSWER_TAGS = tuple(
    (
        re.compile(rf"<[ \t]*{name}[ \t]*>", re.IGNORECASE),
        re.compile(rf"<[ \t]*/[ \t]*{name}[ \t]*>", re.IGNORECASE),
    )
    for name in ("answer", "conclusion")
)
# Section tags (LLaVA-CoT's <SUMMARY>, <CAPTION>, <REASONING>; <step>...) become line breaks.
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_-]{0,30}[ \t]*/?>")


def _tag_blocks(text: str) -> list[tuple[int, int, int, int]]:
    """``(block_start, content_start, content_end, block_end)`` of answer-holding tags."""
    blocks: list[tuple[int, int, int, int]] = []
    for opening_tag, closing_tag in _ANSWER_TAGS:
        pos = 0
        while True:
            opening = opening_tag.search(text, pos)
            if opening is None:
                break
            closing = closing_tag.search(text, opening.end())
            if closing is None:  # cut off inside the block
                blocks.append((opening.start(), opening.end(), len(text), len(text)))
                break
            blocks.append((opening.start(), opening.end(), closing.start(), closing.end()))
            pos = closing.end()
    return blocks


def _strip_tags(text: str) -> str:
    """Text without answer blocks, every other tag replaced by a line break."""
    blocks = sorted(_tag_blocks(text))
    if blocks:
        kept: list[str] = []
        pos = 0
        for start, _, _, end in blocks:
            if start >= pos:
                kept.append(text[pos:start])
                pos = end
        kept.append(text[pos:])
        text = "\n".join(kept)
    return _TAG.sub("\n", text)


_ANSWER_PHRASE = re.compile(
    r"\banswer(?:[ \t]+(?:is|would[ \t]+be|should[ \t]+be|will[ \t]+be)|[ \t]*[:：])"
    r"[ \t]*(?:[:：][ \t]*)?(?=\S)",
    re.IGNORECASE,
)
# Where a committed answer stops: end of sentence, or the start of a justification.
_ANSWER_STOP = re.compile(
    r"[.!?。](?=\s|$)|;|,?[ \t]+(?:because|since)\b|,[ \t]*(?:as|which|so|given)\b",
    re.IGNORECASE,
)
_MAX_ANSWER_CHARS = 300


def _cut_answer(value: str) -> str:
    """ "B. The red car is first" -> "B"; "3, because..." -> "3"."""
    stop = _ANSWER_STOP.search(value)
    return value[: stop.start()] if stop is not None and stop.start() > 0 else value


def _boxed_contents(text: str) -> list[tuple[int, str]]:
    """``(offset, content)`` of every ``\\boxed{...}`` with balanced braces, in order."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return []
    found: list[tuple[int, str]] = []
    stack: list[tuple[int, bool]] = []
    for m in _BOXED_TOKEN.finditer(text):
        token = m.group()
        if token in ("\\{", "\\}"):
            continue
        if token == "}":
            if stack:
                begin, boxed = stack.pop()
                if boxed:
                    found.append((begin, text[begin : m.start()]))
        else:
            stack.append((m.end(), token != "{"))
    found.sort()
    return found


def _find_answer(text: str, lines: list[_Line]) -> str | None:
    """The last answer the text commits to, by position of the answer value."""
    candidates: list[tuple[int, str]] = []
    candidates.extend(_boxed_contents(text))
    if "<" in text:
        for _, content_start, content_end, _ in _tag_blocks(text):
            candidates.append((content_start, text[content_start:content_end]))
    for index, line in enumerate(lines):
        if line.kind == "answer" and line.answer is not None:
            candidates.append((line.answer_at, _cut_answer(line.answer)))
        elif line.kind == "answer_head":
            for following in lines[index + 1 : index + 4]:
                if following.kind == "blank":
                    continue
                if following.kind in ("text", "item"):
                    where = following.offset + following.indent
                    candidates.append((where, _cut_answer(following.text)))
                break
    if "nswer" in text:
        for m in _ANSWER_PHRASE.finditer(text):
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end < 0 else line_end
            segment = text[m.end() : min(line_end, m.end() + _MAX_ANSWER_CHARS)]
            candidates.append((m.end(), _cut_answer(segment)))
    for _, value in sorted(candidates, key=lambda c: c[0], reverse=True):
        cleaned = _clean_answer(value, trim_period=True)
        if cleaned is not None and _has_alnum(cleaned):
            return cleaned
    return None


_BARE_ANSWER = re.compile(
    r"\([A-Ha-h]\)(?:[ \t]+.{1,60})?|[A-Ha-h][.):](?:[ \t]+.{1,60})?|[A-Ha-h]"
    r"|[-+]?\$?\d[\d,]*(?:\.\d+)?[ \t]*%?|yes|no|true|false",
    re.IGNORECASE,
)


_SHORT_REPLY_WORDS = 5


def _bare_answer(lines: list[_Line]) -> str | None:
    """A one-line reply that is just an answer: "B", "(B) cat", "42", "Yes", or any reply of
    at most five words ("Red", "The left one.") that is not a question or filler."""
    content = [line for line in lines if line.kind not in ("blank", "fence", "rule")]
    if len(content) != 1 or content[0].kind not in ("text", "title", "item"):
        return None
    text = _clean_answer(_clean_step(content[0].text), trim_period=True)
    if text is None or not _has_alnum(text):
        return None
    if _BARE_ANSWER.fullmatch(text):
        return text
    short = text.count(" ") < _SHORT_REPLY_WORDS and not text.endswith(("?", ":"))
    if short and not _is_filler(text) and not _SENTENCE_END.search(text):
        return text
    return None


# MARK: sentences

_SENTENCE_END = re.compile(r"[。！？]+|[.!?]+[\"'”’)\]]*(?=\s|$)")
_ALWAYS_ABBREVIATIONS = frozenset(
    (
        "e.g",
        "i.e",
        "fig",
        "figs",
        "eq",
        "eqs",
        "vs",
        "cf",
        "al",
        "approx",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "jr",
        "sr",
        "st",
        "inc",
        "ltd",
        "co",
        "corp",
        "mt",
        "resp",
        "esp",
        "ca",
        "viz",
    )
)
_NUMBER_ABBREVIATIONS = frozenset(("no", "nos", "p", "pp", "vol", "sec", "ch", "tab", "ref", "art"))
_ENUMERATION = re.compile(r"\(?(?:\d{1,3}|[ivxIVX]{1,4}|[A-Za-z])\)?")
_ACRONYM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")


def _is_sentence_boundary(line: str, start: int, m: re.Match[str]) -> bool:
    punct = m.group()
    if punct[0] in "。！？":
        return True
    after = m.end()
    while after < len(line) and line[after].isspace():
        after += 1
    if after >= len(line):
        return True
    following = line[after]
    if following.islower():
        return False
    if punct[0] != "." or len(punct.rstrip("\"'”’)]")) > 1:
        return True
    space = line.rfind(" ", start, m.start())
    token = line[max(space + 1, start) : m.start()].lstrip("([\"'“‘")
    lower = token.lower()
    if lower in _ALWAYS_ABBREVIATIONS or (lower in _NUMBER_ABBREVIATIONS and following.isdigit()):
        return False
    if _ACRONYM.fullmatch(token):
        return False
    before = line[start : max(space + 1, start)].strip()
    if not before and _ENUMERATION.fullmatch(token):
        return False  # "1. First...", "a. ..." at the start of a sentence
    if len(token) == 1 and token.isupper():
        previous = before.rsplit(" ", 1)[-1] if before else ""
        if not previous or previous[:1].isupper():
            return False  # "J. K. Rowling", "George W. Bush"
    return True
