"""The pure reward core: completion text + benchmark item -> :class:`RewardBreakdown`.

Three steps, each a plain function:

1. :func:`check_format` reads the completion under the strict CRYSTAL JSON contract and
   returns its steps and answer (or why it failed). Steps and answer come from the JSON only;
   nothing outside the object is ever read, so text outside it can neither earn nor inject
   anything. There is deliberately no lenient fallback to the evaluation parser: a reward that
   also accepted markup or prose would pay for format drift, and every heuristic the parser
   uses to cut prose into steps is a lever a policy can learn to pull.
2. Step matching and answer checking reuse the evaluation code unchanged:
   :func:`crystalbench.scoring.matching.greedy_match` with the same encoder and tau, and
   :func:`crystalbench.answers.score_answer` (paper rules). Before matching,
   :func:`guard_steps` keeps verbatim repeats and copies of the question from matching
   (they still count as predicted steps); see :class:`~crystalbench.rewards.types.StepGuards`.
3. :func:`reward_components` weights the signals into one reward kind.

:func:`score_completion` runs all three for one completion with an encoder handed in; the
batched :class:`~crystalbench.rewards.scorer.RewardScorer` does the same for many completions
with a single encoder pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from crystalbench.answers import score_answer
from crystalbench.encoders.base import Encoder
from crystalbench.errors import UnknownNameError
from crystalbench.judges.base import Judge
from crystalbench.rewards.types import (
    ANSWER_KINDS,
    REWARD_KINDS,
    STEP_KINDS,
    FormatError,
    FormatRules,
    RewardBreakdown,
    RewardKind,
    RewardSignals,
    RewardWeights,
    StepGuards,
)
from crystalbench.scoring.matching import (
    MatchRules,
    cosine_matrix,
    greedy_match,
    precision_recall_f1,
)
from crystalbench.types import AnswerVerdict, BenchmarkItem

__all__ = [
    "FormatCheck",
    "GuardedSteps",
    "StepScores",
    "check_format",
    "cpr_parts",
    "cpr_reward",
    "guard_steps",
    "make_breakdown",
    "make_signals",
    "prompt_text",
    "reference_steps",
    "reward_components",
    "score_completion",
    "score_steps",
]

REQUIRED_KEYS = frozenset({"reasoning_steps", "answer"})

# The think block may open in the prompt (chat templates that pre-fill "<think>"), so the
# opening tag is optional; everything up to the first closing tag is skipped, unread.
_THINK = re.compile(r"\A\s*(?:<think>)?(.*?)</think>", re.DOTALL)
_FENCE = re.compile(r"\A```(?:json)?[ \t]*\r?\n(.*)\r?\n[ \t]*```\Z", re.DOTALL)


class FormatCheck(NamedTuple):
    """Result of :func:`check_format`."""

    ok: bool
    """The completion is exactly the CRYSTAL JSON object."""
    error: FormatError | None
    """Why it is not; ``None`` when ``ok``."""
    steps: tuple[str, ...]
    """The JSON steps, stripped (empty unless ``ok``)."""
    answer: str | None
    """The JSON answer, stripped (``None`` unless ``ok``)."""


class _DuplicateKey(Exception):
    pass


class _BadConstant(Exception):
    pass


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _DuplicateKey
    return dict(pairs)


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


_DECODER = json.JSONDecoder(object_pairs_hook=_object_pairs, parse_constant=_reject_constant)


def _fail(error: FormatError) -> FormatCheck:
    return FormatCheck(False, error, (), None)


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from "\ud800" escapes
        return False
    return True


def check_format(text: Any, rules: FormatRules | None = None) -> FormatCheck:
    """Strict check of the CRYSTAL output contract; never raises.

    The completion must be, after stripping surrounding whitespace, exactly one JSON object
    ``{"reasoning_steps": [...], "answer": "..."}``:

    - tolerated around it: whitespace; one Markdown code fence around the whole object
      (```` ```json ```` or ```` ``` ````, if ``rules.allow_code_fence``); one leading
      ``<think>...</think>`` block (only if ``rules.allow_think``). Any other text before or
      after the object fails (``text_outside_json``);
    - strict JSON: no trailing commas, single quotes, comments, ``NaN``, duplicate keys;
    - exactly the two keys; ``reasoning_steps`` a non-empty list of non-blank strings,
      ``answer`` a non-blank string;
    - within the caps of ``rules`` (characters, steps, step length, answer length), checked
      before anything expensive.

    Args:
        text: The completion text (anything else fails with ``not_text``).
        rules: Tolerances and caps; defaults when ``None``.

    Returns:
        A :class:`FormatCheck` with the stripped steps and answer when it passed.

    Examples:
        >>> check_format('{"reasoning_steps": ["Read the axis."], "answer": "B"}')
        FormatCheck(ok=True, error=None, steps=('Read the axis.',), answer='B')
        >>> check_format('Sure! {"reasoning_steps": ["x"], "answer": "B"}').error
        'text_outside_json'
        >>> check_format('{"reasoning_steps": [], "answer": "B"}').error
        'no_steps'
    """
    rules = rules or FormatRules()
    if not isinstance(text, str):
        return _fail("not_text")
    if len(text) > rules.max_chars:
        return _fail("too_long")
    body = text
    if rules.allow_think and "</think>" in body:
        think = _THINK.match(body)
        if think is None or "<think>" in think.group(1):
            return _fail("bad_think_block")
        body = body[think.end() :]
    body = body.strip()
    if body.startswith("```"):
        fence = _FENCE.match(body) if rules.allow_code_fence else None
        if fence is None:
            return _fail("bad_code_fence" if rules.allow_code_fence else "text_outside_json")
        body = fence.group(1).strip()
    if not body.startswith("{"):
        return _fail("text_outside_json" if "{" in body else "no_json")
    try:
        value, end = _DECODER.raw_decode(body)
    except _DuplicateKey:
        return _fail("duplicate_key")
    except (ValueError, _BadConstant, RecursionError):
        return _fail("invalid_json")
    if body[end:].strip():
        return _fail("text_outside_json")
    return _check_object(value, rules)


def _check_object(value: Any, rules: FormatRules) -> FormatCheck:
    if not isinstance(value, dict):
        return _fail("not_object")
    keys = set(value)
    if not keys >= REQUIRED_KEYS:
        return _fail("missing_key")
    if keys - REQUIRED_KEYS:
        return _fail("extra_key")
    steps = value["reasoning_steps"]
    if not isinstance(steps, list):
        return _fail("steps_not_list")
    if not steps:
        return _fail("no_steps")
    if len(steps) > rules.max_steps:
        return _fail("too_many_steps")
    cleaned: list[str] = []
    for step in steps:
        if not isinstance(step, str):
            return _fail("step_not_string")
        stripped = step.strip()
        if not stripped:
            return _fail("blank_step")
        if len(stripped) > rules.max_step_chars:
            return _fail("step_too_long")
        if not _is_unicode(stripped):
            return _fail("invalid_unicode")
        cleaned.append(stripped)
    answer = value["answer"]
    if not isinstance(answer, str):
        return _fail("answer_not_string")
    answer = answer.strip()
    if not answer:
        return _fail("blank_answer")
    if len(answer) > rules.max_answer_chars:
        return _fail("answer_too_long")
    if not _is_unicode(answer):
        return _fail("invalid_unicode")
    return FormatCheck(True, None, tuple(cleaned), answer)


# ---------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------


class StepScores(NamedTuple):
    """Step matching of one completion against its reference."""

    n_matched: int
    precision: float
    recall: float
    f1: float


class GuardedSteps(NamedTuple):
    """Result of :func:`guard_steps`."""

    allowed: tuple[str, ...]
    """Steps that may match, in order."""
    n_steps: int
    """All predicted steps (the precision denominator)."""
    n_repeated: int
    """Steps blocked as verbatim repeats."""
    n_question_copies: int
    """Steps blocked as copies of the question."""


_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def prompt_text(item: BenchmarkItem) -> str:
    """The question and its options: the text a step must not merely copy."""
    return " ".join([item.question, *item.options])


def _longest_copied_run(words: Sequence[str], positions: dict[str, list[int]]) -> int:
    """Length of the longest run of ``words`` found contiguous in the prompt.

    Dynamic programming over matching word pairs only, so the cost is the number of
    (step word, prompt occurrence) pairs, not the product of the lengths.
    """
    best = 0
    previous: dict[int, int] = {}
    for word in words:
        current: dict[int, int] = {}
        for position in positions.get(word, ()):
            run = previous.get(position - 1, 0) + 1
            current[position] = run
            best = max(best, run)
        previous = current
    return best


def guard_steps(
    steps: Sequence[str], prompt: str = "", guards: StepGuards | None = None
) -> GuardedSteps:
    """Split steps into those that may match and those blocked by the guards.

    A step is a *repeat* when its words (case-folded, punctuation dropped) equal an earlier
    step's. It is a *question copy* when it has at least ``copy_min_words`` words and one run
    of its words, found verbatim and contiguous in ``prompt``, covers at least
    ``copy_coverage`` of them ("Question: <question>" is a copy; "The area of the shaded
    figure is 68." recombines question words with a result and is not).

    Args:
        steps: The predicted steps, in order.
        prompt: The question (and options) shown to the model.
        guards: Which guards apply (both by default).

    Examples:
        >>> g = guard_steps(["AC is 6.", "ac is 6", "What is the length of AB?", "AB = 10."],
        ...                 "In triangle ABC, what is the length of AB?")
        >>> g.allowed, g.n_repeated, g.n_question_copies
        (('AC is 6.', 'AB = 10.'), 1, 1)
    """
    guards = guards or StepGuards()
    positions: dict[str, list[int]] = {}
    if guards.block_question_copies:
        for index, word in enumerate(_words(prompt)):
            positions.setdefault(word, []).append(index)
    seen: set[tuple[str, ...]] = set()
    allowed: list[str] = []
    repeated = copies = 0
    for step in steps:
        words = _words(step)
        key = tuple(words)
        if guards.block_repeats and key in seen:
            repeated += 1
            continue
        seen.add(key)
        if (
            positions
            and len(words) >= guards.copy_min_words
            and _longest_copied_run(words, positions) >= guards.copy_coverage * len(words)
        ):
            copies += 1
            continue
        allowed.append(step)
    return GuardedSteps(tuple(allowed), len(steps), repeated, copies)


def reference_steps(item: BenchmarkItem) -> list[str]:
    """The item's reference steps as evaluation scores them: blank ones dropped, text as is.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="?", answer="B",
        ...                      reference_steps=["Read the axis.", "  ", "Compare bars."])
        >>> reference_steps(item)
        ['Read the axis.', 'Compare bars.']
    """
    return [step for step in item.reference_steps if step.strip()]


def score_steps(
    pred: np.ndarray,
    ref: np.ndarray,
    rules: MatchRules | None = None,
    *,
    n_pred: int | None = None,
) -> StepScores:
    """Greedy one-to-one matching of step embeddings and its precision, recall and F1.

    Exactly evaluation's Match F1 (:mod:`crystalbench.scoring.matching`): same threshold test, same
    tie order, same edge cases.

    Args:
        pred: ``(k, d)`` unit embeddings of the predicted steps allowed to match.
        ref: ``(n, d)`` unit embeddings of the reference steps.
        rules: Matching rules (tau, tie order); paper rules by default.
        n_pred: All predicted steps, blocked ones included (default ``k``): the
            precision denominator.

    Examples:
        >>> eye = np.eye(3, dtype=np.float32)
        >>> score_steps(eye[:2], eye)
        StepScores(n_matched=2, precision=1.0, recall=0.6666666666666666, f1=0.8)
        >>> score_steps(eye[:2], eye, n_pred=4).precision
        0.5
    """
    matches = greedy_match(cosine_matrix(pred, ref, rules), rules)
    k = pred.shape[0] if pred.ndim == 2 else 0
    n_ref = ref.shape[0] if ref.ndim == 2 else 0
    precision, recall, f1 = precision_recall_f1(
        len(matches), n_pred if n_pred is not None else k, n_ref
    )
    return StepScores(len(matches), precision, recall, f1)


# ---------------------------------------------------------------------------------------------
# Signals and weighting
# ---------------------------------------------------------------------------------------------


def make_signals(
    check: FormatCheck,
    *,
    has_gold: bool,
    n_ref: int,
    verdict: AnswerVerdict | None = None,
    steps: StepScores | None = None,
    guarded: GuardedSteps | None = None,
) -> RewardSignals:
    """Assemble :class:`RewardSignals` from the format check, answer verdict and step scores.

    A failed format check scores the answer wrong and the steps 0 (when a gold answer and
    reference steps exist to score against); a missing gold answer or reference leaves the
    corresponding signal ``None`` (unscored).

    Args:
        check: Result of :func:`check_format`.
        has_gold: A gold answer was given for this row.
        n_ref: Number of non-blank reference steps (0: none given).
        verdict: Answer verdict (needed when ``check.ok`` and ``has_gold``).
        steps: Step scores (needed when ``check.ok`` and ``n_ref > 0``).
        guarded: What the step guards blocked (counts only).

    Examples:
        >>> make_signals(check_format("no json"), has_gold=True, n_ref=3).step_f1
        0.0
    """
    if not check.ok:
        return RewardSignals(
            format_ok=False,
            format_error=check.error,
            answer_correct=False if has_gold else None,
            answer_rule="format_failed" if has_gold else "no_gold",
            n_ref=n_ref,
            step_precision=0.0 if n_ref else None,
            step_recall=0.0 if n_ref else None,
            step_f1=0.0 if n_ref else None,
        )
    if has_gold and verdict is None:
        raise ValueError("a passing completion with a gold answer needs its verdict")
    if n_ref and steps is None:
        raise ValueError("a passing completion with reference steps needs its step scores")
    return RewardSignals(
        format_ok=True,
        answer=check.answer,
        answer_correct=verdict.correct if verdict is not None else None,
        answer_rule=verdict.rule if verdict is not None else "no_gold",
        n_steps=len(check.steps),
        n_ref=n_ref,
        n_matched=steps.n_matched if steps is not None else 0,
        n_repeated=guarded.n_repeated if guarded is not None else 0,
        n_question_copies=guarded.n_question_copies if guarded is not None else 0,
        step_precision=steps.precision if steps is not None else None,
        step_recall=steps.recall if steps is not None else None,
        step_f1=steps.f1 if steps is not None else None,
    )


def cpr_parts(
    correct: bool, f1: float, weights: RewardWeights | None = None
) -> tuple[float, float]:
    """CPR split into its answer part and its step part, which add up to CPR exactly.

    ``R_ans = a_w * c`` and ``R_rsn = s_w * F1 * (c + lambda * (1 - c))`` with ``c`` in {0, 1}.

    Examples:
        >>> cpr_parts(True, 0.5)
        (0.65, 0.175)
        >>> cpr_parts(False, 0.5)
        (0.0, 0.0525)
    """
    w = weights or RewardWeights()
    c = 1.0 if correct else 0.0
    return w.cpr_answer * c, w.cpr_step * f1 * (c + w.cpr_wrong_discount * (1.0 - c))


def cpr_reward(correct: bool, f1: float, weights: RewardWeights | None = None) -> float:
    """Causal Process Reward as the paper writes it.

    ``a_w + s_w * F1`` when the answer is correct, ``lambda * s_w * F1`` otherwise
    (a_w = 0.65, s_w = 0.35, lambda = 0.3).

    Examples:
        >>> cpr_reward(True, 0.0), cpr_reward(True, 1.0), round(cpr_reward(False, 1.0), 3)
        (0.65, 1.0, 0.105)
    """
    w = weights or RewardWeights()
    if correct:
        return w.cpr_answer + w.cpr_step * f1
    return w.cpr_wrong_discount * w.cpr_step * f1


def reward_components(
    kind: str,
    *,
    format_ok: bool,
    correct: bool | None,
    f1: float | None,
    weights: RewardWeights | None = None,
) -> dict[str, float] | None:
    """The named weighted terms of one reward kind; ``None`` when the row cannot be scored.

    A kind that needs the answer is unscored when ``correct`` is ``None``; one that needs
    steps is unscored when ``f1`` is ``None`` (see :data:`~crystalbench.rewards.types.STEP_KINDS`).

    Args:
        kind: One of :data:`~crystalbench.rewards.types.REWARD_KINDS`.
        format_ok: The format check passed.
        correct: Answer correctness (``None``: unknown).
        f1: Step Match F1 (``None``: no reference).
        weights: Weights and CPR constants; paper defaults when ``None``.

    Raises:
        UnknownNameError: ``kind`` is not a reward kind.

    Examples:
        >>> reward_components("composite", format_ok=True, correct=False, f1=0.5)
        {'format': 1.0, 'answer': 0.0, 'step_f1': 0.5}
        >>> reward_components("cpr", format_ok=True, correct=True, f1=1.0)
        {'answer': 0.65, 'reasoning': 0.35}
        >>> reward_components("cpr", format_ok=True, correct=True, f1=None) is None
        True
    """
    if kind not in REWARD_KINDS:
        raise UnknownNameError("reward kind", kind, REWARD_KINDS)
    w = weights or RewardWeights()
    if (kind in ANSWER_KINDS and correct is None) or (kind in STEP_KINDS and f1 is None):
        return None
    fmt = 1.0 if format_ok else 0.0
    c = 1.0 if correct else 0.0
    step = f1 if f1 is not None else 0.0
    if kind == "format":
        return {"format": fmt}
    if kind == "answer":
        return {"answer": c}
    if kind == "step_f1":
        return {"step_f1": step}
    if kind in ("answer_only", "curriculum_phase1"):
        return {"format": w.format * fmt, "answer": w.answer * c}
    if kind == "composite":
        return {"format": w.format * fmt, "answer": w.answer * c, "step_f1": w.step * step}
    answer_part, reasoning_part = cpr_parts(bool(correct), step, w)
    if kind == "cpr_answer":
        return {"answer": answer_part}
    if kind == "cpr_reasoning":
        return {"reasoning": reasoning_part}
    return {"answer": answer_part, "reasoning": reasoning_part}


def make_breakdown(
    signals: RewardSignals, kind: str, weights: RewardWeights | None = None
) -> RewardBreakdown:
    """Weight ``signals`` into the reward ``kind``: components and their total.

    Examples:
        >>> s = RewardSignals(format_ok=True, answer="B", answer_correct=True, n_steps=2,
        ...                   n_ref=2, n_matched=1, step_precision=0.5, step_recall=0.5,
        ...                   step_f1=0.5)
        >>> make_breakdown(s, "cpr").total
        0.825
    """
    components = reward_components(
        kind,
        format_ok=signals.format_ok,
        correct=signals.answer_correct,
        f1=signals.step_f1,
        weights=weights,
    )
    w = weights or RewardWeights()
    if (
        components is not None
        and w.verified_precision > 0.0
        and signals.verified_precision is not None
    ):  # the step verifier's term (off by default: the paper's rewards)
        components = {
            **components,
            "verified_precision": w.verified_precision * signals.verified_precision,
        }
    total = None if components is None else sum(components.values())
    return RewardBreakdown(
        **signals.model_dump(), kind=kind, components=components or {}, total=total
    )


# ---------------------------------------------------------------------------------------------
# One completion, end to end
# ---------------------------------------------------------------------------------------------


def score_completion(
    text: str,
    item: BenchmarkItem | None,
    encoder: Encoder,
    *,
    kind: RewardKind = "cpr",
    weights: RewardWeights | None = None,
    format_rules: FormatRules | None = None,
    match_rules: MatchRules | None = None,
    guards: StepGuards | None = None,
    judge: Judge | None = None,
) -> RewardBreakdown:
    """Reward of one completion for one item (the unbatched reference path).

    Use :class:`~crystalbench.rewards.scorer.RewardScorer` for batches: it gives the same
    numbers with one encoder pass per batch and cached reference embeddings.

    Args:
        text: The completion text.
        item: The item (gold answer, answer type, options, reference steps); ``None`` when
            the row carries none (only ``format`` can then be scored).
        encoder: Sentence encoder; use the evaluation's encoder and tau.
        kind: Reward kind to total.
        weights: Weights and CPR constants (paper defaults).
        format_rules: Format tolerances and caps (defaults).
        match_rules: Step-matching rules (paper tau 0.35).
        guards: Step guards (both on by default).
        judge: Judge for free-form answers; exact match only when ``None``.

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> item = BenchmarkItem(id="1", source="x", question="Which bar is tallest?",
        ...     options=["2019", "2020"], answer="B",
        ...     reference_steps=["Find the bar for 2019.", "Find the bar for 2020.",
        ...                      "The 2020 bar is taller."])
        >>> text = ('{"reasoning_steps": ["Find the bar for 2020.", "The 2020 bar is '
        ...         'taller."], "answer": "B"}')
        >>> b = score_completion(text, item, HashEncoder())
        >>> b.answer_correct, b.n_matched, round(b.step_f1, 2), round(b.total, 4)
        (True, 2, 0.8, 0.93)
    """
    check = check_format(text, format_rules)
    refs = reference_steps(item) if item is not None else []
    if not check.ok:
        signals = make_signals(check, has_gold=item is not None, n_ref=len(refs))
        return make_breakdown(signals, kind, weights)
    verdict = score_answer(check.answer, item, judge=judge) if item is not None else None
    steps = guarded = None
    if item is not None and refs:
        guarded = guard_steps(check.steps, prompt_text(item), guards)
        allowed = list(guarded.allowed)
        vectors = encoder.encode(allowed + refs)
        steps = score_steps(
            vectors[: len(allowed)], vectors[len(allowed) :], match_rules, n_pred=guarded.n_steps
        )
    signals = make_signals(
        check,
        has_gold=item is not None,
        n_ref=len(refs),
        verdict=verdict,
        steps=steps,
        guarded=guarded,
    )
    return make_breakdown(signals, kind, weights)
