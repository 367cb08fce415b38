"""Typed answer correctness: is the model's final answer right?

Paper mode (the default) follows the metric contract (``docs/metrics.md``, "Answer
correctness (typed)"): the answer type comes from the data or is inferred, and each type has
one rule. Text is read through :mod:`crystalbench.normalize`, the one home of answer
normalisation.

- ``multiple_choice``: both the prediction and the gold resolve to an option index, by a
  letter standing as a whole token or by the option text; correct iff they agree. A hedge
  naming several letters resolves to none (rule ``mc_ambiguous``).
- ``numeric``: the number the model commits to, within ``NUMERIC_ABS_TOL`` or
  ``NUMERIC_REL_TOL`` of the gold; symbolic golds and answers (radicals, pi) are evaluated
  with math-verify (rule ``symbolic``).
- ``yes_no``: whole-word yes/true vs no/false/not/incorrect; abstentions are wrong.
- ``free_form``: exact match after normalisation, else the judge when one is configured;
  judge failure is unscored (``correct=None``, rule ``judge_failed``). No substring fallback.

Compat mode (``compat="crystal-metrics-0.2"``) reproduces ``crystal_metrics.accuracy``'s
``AccuracyCalculator.evaluate_single`` of crystal-metrics 0.2.0, heuristics and all, so its
published accuracies can be recomputed. Its rules are named ``compat_*``. A judge, when given,
runs where crystal-metrics' LLM grader runs (multi-word text mismatches), and a failed judge
falls back to its string matching, as the package does.

A missing or blank prediction is wrong in both modes (rule ``missing``). A gold answer that
cannot be read as its type is our own bad data and raises :class:`InputError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from crystalbench.defaults import (
    COMPAT_CRYSTAL_METRICS,
    COMPAT_MODES,
    NUMERIC_ABS_TOL,
    NUMERIC_REL_TOL,
)
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.judges.base import Judge, JudgeRequest, JudgeVerdict, judge_many
from crystalbench.normalize import (
    ParsedNumber,
    clean_answer,
    committed_segment,
    extract_number,
    find_choice_letters,
    has_symbolic_markup,
    math_equivalent,
    normalize_text,
    numbers_close,
    parse_number,
    parse_yes_no,
    symbolic_value,
)
from crystalbench.types import AnswerType, AnswerVerdict, BenchmarkItem

__all__ = [
    "ChoiceResolution",
    "compat_question",
    "infer_answer_type",
    "item_options",
    "parse_embedded_options",
    "resolve_choice",
    "score_answer",
    "score_answers",
]


# ---------------------------------------------------------------------------------------------
# Options and answer types
# ---------------------------------------------------------------------------------------------

_OPTION_LINE = re.compile(r"^\s*(?:\(\s*([A-Za-z])\s*\)|([A-Za-z])[.):])\s+(\S.*?)\s*$")
_INLINE_MARKER = re.compile(r"(?<!\w)\(\s*([A-Za-z])\s*\)")
_INLINE_TAIL = re.compile(r"[\s,;]*(?:\bor\b)?[\s,;]*$", re.IGNORECASE)


def _run_from_a(entries: list[tuple[str, str]]) -> list[str]:
    """Texts of the first run of letters a, b, c... (either case) among ``entries``."""
    for start, (letter, _) in enumerate(entries):
        if letter.upper() != "A":
            continue
        texts: list[str] = []
        for offset, (next_letter, text) in enumerate(entries[start:]):
            if next_letter.upper() != chr(ord("A") + offset):
                break
            texts.append(text)
        if len(texts) >= 2:
            return texts
    return []


def parse_embedded_options(question: str) -> list[str]:
    """Options written inside a question, in order; ``[]`` when there are none.

    Two layouts are understood: one option per line ("A. Left", "B) Right", "(C) Up",
    RealWorldQA style) and inline parenthesised markers after the question or a colon
    ("...closed? (a) Open (b) Closed", MMVP style). Letters must run A, B, C... from A, and
    there must be at least two.

    Examples:
        >>> parse_embedded_options("Which way?\\nA. Left\\nB. Right\\nPlease answer directly.")
        ['Left', 'Right']
        >>> parse_embedded_options("Is the door open or closed? (a) Open (b) Closed")
        ['Open', 'Closed']
        >>> parse_embedded_options("How many cars are there?")
        []
    """
    lines: list[tuple[str, str]] = []
    for line in question.splitlines():
        match = _OPTION_LINE.match(line)
        if match is not None:
            lines.append((match.group(1) or match.group(2), match.group(3)))
        elif line.strip() and lines and lines[-1][0] != "":
            lines.append(("", ""))  # a foreign line ends a run
    found = _run_from_a(lines)
    if found:
        return found
    for line in question.splitlines():
        markers = list(_INLINE_MARKER.finditer(line))
        if not markers or not re.search(r"(?:^|[?:.!])\s*$", line[: markers[0].start()]):
            continue  # inline options follow the question: "...closed? (a) Open (b) Closed"
        entries = []
        for index, marker in enumerate(markers):
            end = markers[index + 1].start() if index + 1 < len(markers) else len(line)
            text = _INLINE_TAIL.sub("", line[marker.end() : end]).strip()
            entries.append((marker.group(1), text))
        found = _run_from_a(entries)
        if found and all(found):
            return found
    return []


def item_options(item: BenchmarkItem) -> list[str]:
    """The item's options: ``item.options``, else those embedded in its question.

    Examples:
        >>> item = BenchmarkItem(id="1", source="mmvp", question="Open? (a) Open (b) Closed",
        ...                      answer="(a)", reference_steps=[])
        >>> item_options(item)
        ['Open', 'Closed']
    """
    if item.options:
        return list(item.options)
    return parse_embedded_options(item.question)


def _gold_index(gold: str, options: Sequence[str]) -> int | None:
    """Option index of a gold answer (a letter form or an option's text), else ``None``."""
    letters = find_choice_letters(gold, len(options) or None)
    if letters.how == "whole" and len(letters.letters) == 1:
        return ord(letters.letters[0]) - ord("A")
    target = normalize_text(clean_answer(gold))
    for index, option in enumerate(options):
        if target and normalize_text(option) == target:
            return index
    return None


def _is_yes_no_gold(gold: str) -> bool:
    return normalize_text(gold) in {"yes", "no", "true", "false"}


def _gold_number(gold: str) -> float | None:
    number = parse_number(gold)
    if number is not None:
        return number.value
    if re.search(r"\d|\\pi|π", gold):
        return symbolic_value(clean_answer(gold), prose=False)
    return None


def infer_answer_type(item: BenchmarkItem) -> AnswerType:
    """The answer type of ``item``: from the data when given, else inferred.

    Inference, in order: options given -> ``multiple_choice``; options embedded in the
    question and the gold names one of them -> ``multiple_choice``; the gold is a number or
    a numeric expression ("1,234", "3/4", "45^\\circ", "2\\sqrt{3}") -> ``numeric``; the gold
    is yes/no/true/false -> ``yes_no``; otherwise ``free_form``.

    Examples:
        >>> def item(answer, question="Q?", options=()):
        ...     return BenchmarkItem(id="1", source="x", question=question, answer=answer,
        ...                          options=list(options), reference_steps=[])
        >>> infer_answer_type(item("B", options=["cat", "dog"]))
        'multiple_choice'
        >>> infer_answer_type(item("A", question="Side?\\nA. Left\\nB. Right"))
        'multiple_choice'
        >>> infer_answer_type(item(r"2\\sqrt{3}")), infer_answer_type(item("No"))
        ('numeric', 'yes_no')
        >>> infer_answer_type(item("a red umbrella"))
        'free_form'
    """
    if item.answer_type is not None:
        return item.answer_type
    if item.options:
        return "multiple_choice"
    embedded = parse_embedded_options(item.question)
    if embedded and _gold_index(item.answer, embedded) is not None:
        return "multiple_choice"
    if _gold_number(item.answer) is not None:
        return "numeric"
    if _is_yes_no_gold(item.answer):
        return "yes_no"
    return "free_form"


# ---------------------------------------------------------------------------------------------
# Multiple choice
# ---------------------------------------------------------------------------------------------


class ChoiceResolution(NamedTuple):
    """How an answer resolved against a list of options."""

    option: int | None
    """0-based option index, or ``None`` when the answer names no single option."""
    how: str
    """``letter``, ``text``, ``ambiguous`` (several options named) or ``unresolved``."""
    detail: str
    """Which pattern decided, for the verdict's ``detail``."""


def _options_in_text(text: str, options: Sequence[str]) -> list[int]:
    """Options whose normalised text appears as whole words in ``text``.

    An option found only as part of another found option ("red" inside "dark red") is dropped.
    """
    normalised = normalize_text(text)
    found: dict[int, str] = {}
    for index, option in enumerate(options):
        phrase = normalize_text(option)
        if phrase and re.search(rf"(?<!\S){re.escape(phrase)}(?!\S)", normalised):
            found[index] = phrase
    kept = []
    for index, phrase in found.items():
        inside_other = any(
            other != phrase and re.search(rf"(?<!\S){re.escape(phrase)}(?!\S)", other)
            for other_index, other in found.items()
            if other_index != index
        )
        if not inside_other:
            kept.append(index)
    return kept


_LEADING_MARKER = re.compile(r"\s*(?:\(\s*[A-Za-z]\s*\)|\[\s*[A-Za-z]\s*\]|[A-Za-z][.):](?=\s|$))")


def resolve_choice(text: str, options: Sequence[str]) -> ChoiceResolution:
    """Resolve a predicted answer to one option, or say why it cannot be.

    Order (first decisive step wins):

    1. the whole answer is a letter form ("B", "(b)", "option B", "A or B"), or it starts
       with a letter marker ("(a) Left", "B. Right": the marker wins over the text);
    2. the whole answer, cleaned ("The answer is Left."), equals an option's text;
    3. an explicit letter pattern: ``\\boxed{B}``, "the answer is B", a leading "B." / "(B)",
       "option B", "(B)" or "**B**" anywhere (see :func:`find_choice_letters`);
    4. exactly one option's text appears in the answer as whole words;
    5. the answer ends with a standalone capital letter ("... so it is B").

    Several letters at the deciding step (a hedge such as "A or B", "A, B, C, D") give
    ``ambiguous``. Letters beyond the last option are ignored.

    Examples:
        >>> resolve_choice("I'd say (B) Right", ["Left", "Right"]).option
        1
        >>> resolve_choice("The left one, clearly.", ["Left", "Right"])
        ChoiceResolution(option=0, how='text', detail='option text in answer')
        >>> resolve_choice("A or B", ["Left", "Right"]).how
        'ambiguous'
    """
    n_options = len(options) or None
    letters = find_choice_letters(text, n_options)

    def from_letters() -> ChoiceResolution:
        if len(letters.letters) > 1:
            named = ", ".join(letters.letters)
            return ChoiceResolution(None, "ambiguous", f"several letters ({named}), {letters.how}")
        return ChoiceResolution(
            ord(letters.letters[0]) - ord("A"), "letter", f"letter, {letters.how}"
        )

    if letters.how == "whole" or (letters.how == "leading" and _LEADING_MARKER.match(text)):
        return from_letters()
    cleaned = normalize_text(clean_answer(text))
    if cleaned:
        for index, option in enumerate(options):
            if normalize_text(option) == cleaned:
                return ChoiceResolution(index, "text", "option text")
    if letters.letters and letters.how != "trailing":
        return from_letters()
    named = _options_in_text(clean_answer(text), options)
    if len(named) == 1:
        return ChoiceResolution(named[0], "text", "option text in answer")
    if letters.letters:
        return from_letters()
    if len(named) > 1:
        return ChoiceResolution(None, "ambiguous", f"{len(named)} option texts in answer")
    return ChoiceResolution(None, "unresolved", "no option letter or text found")


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def _multiple_choice(predicted: str, item: BenchmarkItem) -> AnswerVerdict:
    options = item_options(item)
    gold_index = _gold_index(item.answer, options)
    if gold_index is None or (options and gold_index >= len(options)):
        raise InputError(
            f"item {item.id}: gold answer {item.answer!r} is neither an option letter nor "
            f"one of the options {options!r}",
            field="answer",
        )
    resolution = resolve_choice(predicted, options)
    gold = _letter(gold_index)
    if resolution.option is None:
        rule = "mc_ambiguous" if resolution.how == "ambiguous" else "mc_unresolved"
        return AnswerVerdict(
            correct=False,
            rule=rule,
            answer_type="multiple_choice",
            predicted=None,
            gold=gold,
            detail=resolution.detail,
        )
    return AnswerVerdict(
        correct=resolution.option == gold_index,
        rule="mc_letter" if resolution.how == "letter" else "mc_text",
        answer_type="multiple_choice",
        predicted=_letter(resolution.option),
        gold=gold,
        detail=resolution.detail,
    )


# ---------------------------------------------------------------------------------------------
# Numeric
# ---------------------------------------------------------------------------------------------


def _format_number(value: float) -> str:
    return format(value, ".10g")


def _numbers_agree(predicted: ParsedNumber, gold: ParsedNumber) -> bool:
    """Paper tolerance; when exactly one side is a percentage, either scale may match."""
    candidates = [predicted.value]
    if predicted.percent and not gold.percent:
        candidates.append(predicted.value / 100)
    elif gold.percent and not predicted.percent:
        candidates.append(predicted.value * 100)
    return any(
        numbers_close(value, gold.value, abs_tol=NUMERIC_ABS_TOL, rel_tol=NUMERIC_REL_TOL)
        for value in candidates
    )


def _numeric(predicted: str, item: BenchmarkItem) -> AnswerVerdict:
    rule = "numeric"
    gold = parse_number(item.answer)
    if gold is None:
        value = symbolic_value(clean_answer(item.answer), prose=False)
        if value is None:
            raise InputError(
                f"item {item.id}: gold answer {item.answer!r} is not a number or a numeric "
                "expression",
                field="answer",
            )
        gold, rule = ParsedNumber(value, False), "symbolic"
    segment = committed_segment(predicted)
    readings: list[ParsedNumber] = []
    if has_symbolic_markup(segment):  # math our number reader cannot read: 2\\sqrt{3}, \\pi
        value = symbolic_value(segment)
        if value is not None:
            readings.append(ParsedNumber(value, "%" in segment))
            rule = "symbolic"
    if not readings:
        number = extract_number(predicted)
        if number is not None:
            readings.append(number)
        if rule == "symbolic":  # a symbolic gold ("1:2") also gets math-verify's reading
            value = symbolic_value(segment)
            if value is not None:
                readings.append(ParsedNumber(value, "%" in segment))
    if not readings:
        return AnswerVerdict(
            correct=False,
            rule=rule,
            answer_type="numeric",
            gold=_format_number(gold.value),
            detail="no number in the answer",
        )
    agreeing = [reading for reading in readings if _numbers_agree(reading, gold)]
    answer = agreeing[0] if agreeing else readings[0]
    return AnswerVerdict(
        correct=bool(agreeing),
        rule=rule,
        answer_type="numeric",
        predicted=_format_number(answer.value),
        gold=_format_number(gold.value),
    )


# ---------------------------------------------------------------------------------------------
# Yes / no and free form
# ---------------------------------------------------------------------------------------------


def _yes_no(predicted: str, item: BenchmarkItem) -> AnswerVerdict:
    gold = parse_yes_no(item.answer)
    if gold is None:
        raise InputError(
            f"item {item.id}: gold answer {item.answer!r} is not yes or no", field="answer"
        )
    answer = parse_yes_no(predicted)
    return AnswerVerdict(
        correct=answer == gold,
        rule="yes_no",
        answer_type="yes_no",
        predicted=answer,
        gold=gold,
        detail=None if answer is not None else "no yes/no answer (absent, hedged or abstained)",
    )


class _NeedsJudge(NamedTuple):
    """A verdict the rules could not reach: ask the judge, else use ``fallback``."""

    request: JudgeRequest
    answer_type: AnswerType
    predicted: str
    gold: str
    fallback: AnswerVerdict
    """Verdict when the judge fails (paper: unscored; compat: substring fallback)."""


_SHOWN_CHARS = 200
"""Longest normalised answer text kept in a verdict (the raw answer is stored elsewhere)."""


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _free_form(
    predicted: str, item: BenchmarkItem, judge: Judge | None
) -> AnswerVerdict | _NeedsJudge:
    gold = normalize_text(clean_answer(item.answer))
    answer = normalize_text(clean_answer(predicted))
    matched = answer == gold and (answer or clean_answer(predicted) == clean_answer(item.answer))
    answer = _shown(answer)
    if matched:
        return AnswerVerdict(
            correct=True, rule="exact", answer_type="free_form", predicted=answer, gold=gold
        )
    if math_equivalent(predicted, item.answer):
        return AnswerVerdict(
            correct=True, rule="symbolic", answer_type="free_form", predicted=answer, gold=gold
        )
    if judge is None:
        return AnswerVerdict(
            correct=False, rule="exact", answer_type="free_form", predicted=answer, gold=gold
        )
    return _NeedsJudge(
        request=JudgeRequest(item.question, item.answer, predicted),
        answer_type="free_form",
        predicted=answer,
        gold=gold,
        fallback=AnswerVerdict(
            correct=None, rule="judge_failed", answer_type="free_form", predicted=answer, gold=gold
        ),
    )


# ---------------------------------------------------------------------------------------------
# Compat mode: crystal-metrics 0.2.0
# ---------------------------------------------------------------------------------------------
# Re-implemented from the behaviour of crystal_metrics/accuracy.py (AnswerNormalizer and
# AccuracyCalculator.evaluate_single). The quirks are deliberate: reproducing them is the
# point of this mode. tests/answers/test_answers.py checks parity with the real package.

_CM_DELTA = 1e-10
_CM_LEAD_INS = ("the answer is", "the result is", "answer", "result", "approximately", "about")
_CM_LETTER_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        r"^([a-z])\)",
        r"^\(([a-z])\)",
        r"^([a-z])\.",
        r"option\s+([a-z])",
        r"choice\s+([a-z])",
        r"answer\s+is\s+([a-z])",
        r"\(([a-z])\)",
        r"\b([a-z])\)",
    )
)


def _cm_normalize(text: str) -> str:
    text = str(text).strip().lower()
    for old, new in (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'), ("`", "'")):
        text = text.replace(old, new)
    text = re.sub(r"(?<!\d)\.(?!\d)", "", text)
    text = re.sub(r"""[,()"\[\]{}']""", "", text)
    return re.sub(r"\s+", " ", text)


def _cm_number(text: str) -> float | None:
    text = str(text).strip().lower()
    for lead_in in _CM_LEAD_INS:
        text = re.sub(re.escape(lead_in) + r":?\s*", "", text, flags=re.IGNORECASE)
    first = re.search(r"-?\d+\.?\d*", text)
    return float(first.group(0)) if first else None


def _cm_numbers_agree(predicted: float, gold: float) -> bool:
    difference = abs(predicted - gold)
    if predicted == gold or difference <= NUMERIC_ABS_TOL:
        return True
    relative = difference / max(abs(gold), _CM_DELTA)
    if relative <= NUMERIC_REL_TOL or difference < 0.01:
        return True
    if gold != 0:
        digits = str(predicted).rstrip("0").rstrip(".")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if decimals <= 2 and (relative < 0.15 or abs(predicted - round(gold, decimals)) < 1e-6):
            return True
    return False


def _cm_option_for_text(answer: str, question: str) -> str | None:
    target = _cm_normalize(answer)
    for letter, option in re.findall(r"([A-Z])\)\s*([^\n]+)", question):
        text = _cm_normalize(option)
        if target == text:
            return str(letter)
        if target in text or text in target:
            shorter, longer = sorted((len(target), len(text)))
            if longer > 0 and shorter / longer >= 0.8:
                return str(letter)
    return None


def _cm_choice(answer: str, question: str) -> str | None:
    normalised = _cm_normalize(answer)
    if len(normalised) <= 3:
        single = re.search(r"^([a-z])$", normalised)
        if single:
            return single.group(1).upper()
    for pattern in _CM_LETTER_PATTERNS:
        found = pattern.search(normalised)
        if found:
            return found.group(1).upper()
    return _cm_option_for_text(answer, question) if question else None


def _cm_yes_no(text: str) -> str:
    normalised = _cm_normalize(text)
    for word in ("yes", "true", "correct", "affirmative"):
        if word in normalised:
            return "yes"
    for word in ("no", "false", "incorrect", "negative"):
        if word in normalised:
            return "no"
    return normalised


def compat_question(item: BenchmarkItem) -> str:
    """The question text crystal-metrics would have seen for ``item``.

    The authors' inference script appends the options as ``"A) text"`` lines after a blank
    line; crystal-metrics matches option texts against such lines. Questions without a
    separate option list are used as they are.

    Examples:
        >>> compat_question(BenchmarkItem(id="1", source="x", question="Pet?",
        ...                               options=["cat", "dog"], answer="A", reference_steps=[]))
        'Pet?\\n\\nA) cat\\nB) dog'
    """
    if not item.options:
        return item.question
    lines = "\n".join(f"{_letter(index)}) {option}" for index, option in enumerate(item.options))
    return f"{item.question}\n\n{lines}"


def _compat(
    predicted: str, item: BenchmarkItem, answer_type: AnswerType, judge: Judge | None
) -> AnswerVerdict | _NeedsJudge:
    question = compat_question(item)
    gold_text = item.answer

    def verdict(correct: bool, rule: str, answer: str, gold: str) -> AnswerVerdict:
        return AnswerVerdict(
            correct=correct,
            rule=rule,
            answer_type=answer_type,
            predicted=answer,
            gold=gold,
            detail="crystal-metrics 0.2.0 heuristics",
        )

    answer_number, gold_number = _cm_number(predicted), _cm_number(gold_text)
    if answer_number is not None and gold_number is not None:
        return verdict(
            _cm_numbers_agree(answer_number, gold_number),
            "compat_numeric",
            str(answer_number),
            str(gold_number),
        )
    answer_norm, gold_norm = _cm_normalize(predicted), _cm_normalize(gold_text)
    if _cm_normalize(gold_norm) in ("yes", "no", "true", "false"):
        answer_yn, gold_yn = _cm_yes_no(predicted), _cm_yes_no(gold_text)
        return verdict(answer_yn == gold_yn, "compat_yes_no", answer_yn, gold_yn)
    answer_choice, gold_choice = _cm_choice(predicted, question), _cm_choice(gold_text, question)
    if answer_choice is not None or gold_choice is not None:
        if answer_choice is None:
            answer_choice = _cm_option_for_text(predicted, question)
        if gold_choice is None:
            gold_choice = _cm_option_for_text(gold_text, question)
        if answer_choice is not None and gold_choice is not None:
            return verdict(
                answer_choice == gold_choice, "compat_choice", answer_choice, gold_choice
            )
    if answer_norm == gold_norm:
        return verdict(True, "compat_exact", answer_norm, gold_norm)
    if len(gold_norm.split()) == 1 and len(answer_norm.split()) == 1:
        return verdict(False, "compat_single_word", answer_norm, gold_norm)
    substring = verdict(
        answer_norm in gold_norm or gold_norm in answer_norm,
        "compat_substring",
        answer_norm,
        gold_norm,
    )
    if judge is None:
        return substring
    return _NeedsJudge(
        request=JudgeRequest(question, gold_text, predicted),
        answer_type=answer_type,
        predicted=answer_norm,
        gold=gold_norm,
        fallback=substring,
    )


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _check_compat(compat: str | None) -> bool:
    if compat is None or compat == "none":
        return False
    if compat == COMPAT_CRYSTAL_METRICS:
        return True
    raise UnknownNameError("compat mode", compat, COMPAT_MODES)


def _rules(
    predicted: str | None, item: BenchmarkItem, judge: Judge | None, compat: str | None
) -> AnswerVerdict | _NeedsJudge:
    use_compat = _check_compat(compat)
    answer_type = infer_answer_type(item)
    if not item.answer.strip():
        raise InputError(f"item {item.id}: empty gold answer", field="answer")
    if predicted is None or not predicted.strip():
        return AnswerVerdict(
            correct=False,
            rule="missing",
            answer_type=answer_type,
            gold=item.answer,
            detail="no answer",
        )
    if use_compat:
        return _compat(predicted, item, answer_type, judge)
    if answer_type == "multiple_choice":
        return _multiple_choice(predicted, item)
    if answer_type == "numeric":
        return _numeric(predicted, item)
    if answer_type == "yes_no":
        return _yes_no(predicted, item)
    return _free_form(predicted, item, judge)


def _apply_judge(pending: _NeedsJudge, verdict: JudgeVerdict) -> AnswerVerdict:
    if verdict.correct is None:
        reason = f"judge failed: {verdict.error or 'no verdict'}"
        return pending.fallback.model_copy(update={"detail": reason})
    return AnswerVerdict(
        correct=verdict.correct,
        rule="judge",
        answer_type=pending.answer_type,
        predicted=pending.predicted,
        gold=pending.gold,
        detail=verdict.reason,
    )


def score_answer(
    predicted: str | None,
    item: BenchmarkItem,
    *,
    judge: Judge | None = None,
    compat: str | None = None,
) -> AnswerVerdict:
    """Decide whether ``predicted`` answers ``item`` correctly.

    Args:
        predicted: The model's extracted final answer (may be a sentence); ``None`` or
            blank counts as missing (wrong).
        item: The benchmark item (gold answer, options, answer type).
        judge: Decides free-form mismatches; without one they are wrong.
        compat: ``None`` (paper rules) or ``"crystal-metrics-0.2"``.

    Returns:
        The verdict: ``correct`` (``None`` when the judge failed), the deciding ``rule``,
        the type, and the normalised values compared.

    Raises:
        InputError: The gold answer cannot be read as the item's answer type.
        UnknownNameError: Unknown compat mode.

    Examples:
        >>> item = BenchmarkItem(id="7", source="mathvision", question="Which?",
        ...                      options=["3", "4", "5"], answer="B", reference_steps=[])
        >>> score_answer("The answer is (B).", item).correct
        True
        >>> score_answer("answer is blue", item).rule
        'mc_unresolved'
        >>> plot = BenchmarkItem(id="8", source="plotqa", question="Max?", answer="1,234",
        ...                      reference_steps=[])
        >>> score_answer("In 2019 it peaked at 1240", plot).correct
        True
    """
    outcome = _rules(predicted, item, judge, compat)
    if isinstance(outcome, AnswerVerdict):
        return outcome
    assert judge is not None  # _NeedsJudge only arises with a judge
    try:
        verdict = judge.judge(*outcome.request)
    except Exception as error:  # a judge must not raise; never let one stop scoring
        verdict = JudgeVerdict(correct=None, error=f"{type(error).__name__}: {error}")
    return _apply_judge(outcome, verdict)


def score_answers(
    predicted: Sequence[str | None],
    items: Sequence[BenchmarkItem],
    *,
    judge: Judge | None = None,
    compat: str | None = None,
    max_workers: int = 8,
) -> list[AnswerVerdict]:
    """:func:`score_answer` over many items; the judge calls go out together, concurrently.

    Examples:
        >>> items = [BenchmarkItem(id=str(i), source="x", question="?", answer=a,
        ...                        reference_steps=[]) for i, a in enumerate(["yes", "12"])]
        >>> [v.correct for v in score_answers(["Yes.", "12.3"], items)]
        [True, True]
    """
    if len(predicted) != len(items):
        raise ValueError(f"{len(predicted)} answers for {len(items)} items")
    outcomes = [
        _rules(answer, item, judge, compat) for answer, item in zip(predicted, items, strict=True)
    ]
    pending = [outcome for outcome in outcomes if isinstance(outcome, _NeedsJudge)]
    if pending:
        assert judge is not None
        verdicts = judge_many(
            judge, [outcome.request for outcome in pending], max_workers=max_workers
        )
        answered = iter(verdicts)
        outcomes = [
            _apply_judge(outcome, next(answered)) if isinstance(outcome, _NeedsJudge) else outcome
            for outcome in outcomes
        ]
    return [outcome for outcome in outcomes if isinstance(outcome, AnswerVerdict)]
