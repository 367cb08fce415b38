"""crystal-metrics 0.2.0's GRPO reward functions, with its completion parsing.

Each reward takes ``completions`` in the trainer's format (``[[{"content": text}], ...]``
or plain strings) and returns one float per completion, as crystal-metrics' do, including
their reading of malformed output (their JSON repairs, their ``<think>`` step splitter,
``check_answer_match``'s own answer rules) and the exceptions some malformed completions
raise there. Answers checked by :func:`accuracy_reward` go through crystalbench's compat
answer rules (:mod:`~crystalbench.compat.crystal_metrics.accuracy`);
:func:`semantic_reasoning_reward` embeds the steps of a whole batch in one encoder call.

crystalbench's own rewards (:mod:`crystalbench.rewards`: the paper's CPR on embeddings,
batched, with a strict format check) are the ones to train new models with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from crystalbench.compat.crystal_metrics.similarity import _named_encoder_cache, best_match_f1

__all__ = [
    "accuracy_reward",
    "causal_process_reward",
    "check_answer_match",
    "format_reward",
    "parse_reasoning_steps",
    "select_reward_func",
    "semantic_reasoning_reward",
    "word_overlap_reasoning_reward",
]

_FENCES = re.compile(r"```json\s*|\s*```")


def _content_of(completion: Any) -> Any:
    """The text of one completion (``[{"content": ...}]`` or a string)."""
    if isinstance(completion, str):
        return completion
    try:
        return completion[0]["content"]
    except (KeyError, IndexError, TypeError):
        return str(completion)


def _outermost_object(text: str) -> str | None:
    """The first ``{`` up to the brace that balances it (strings are not skipped)."""
    start = text.find("{")
    if start == -1:
        return None
    depth = 0
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[start : end + 1]
    return None


def _extract_json_object(content: str) -> Any:
    """The JSON value of a completion: the whole text without code fences, else its
    outermost ``{...}`` after repairs (smart and single quotes, missing and trailing
    commas); ``None`` when neither parses."""
    cleaned = _FENCES.sub("", content).strip()
    try:
        return json.loads(cleaned)
    except Exception:
        pass
    candidate = _outermost_object(cleaned)
    if candidate is None:
        return None
    for old, new in (("“", '"'), ("”", '"'), ("‘", "'"), ("’", "'")):
        candidate = candidate.replace(old, new)
    candidate = re.sub(r"""(?<=[:,\[])\s*'([^']*)'(?=\s*[,\]\}])""", r' "\1"', candidate)
    candidate = re.sub(r'"\s*\n\s*"', '",\n    "', candidate)
    candidate = re.sub(r'"\s+(?=")', '", ', candidate)
    candidate = re.sub(r",(\s*[\]}])", r"\1", candidate)
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        return None


def _validate_schema(parsed: Any) -> tuple[dict[str, Any] | None, bool]:
    """``({"reasoning_steps": stripped non-blank steps, "answer": stripped}, True)`` for a
    dict with a list of strings (at least one non-blank) and a string answer."""
    if not isinstance(parsed, dict) or "reasoning_steps" not in parsed or "answer" not in parsed:
        return None, False
    steps, answer = parsed["reasoning_steps"], parsed["answer"]
    if not isinstance(steps, list) or not isinstance(answer, str):
        return None, False
    if not all(isinstance(step, str) for step in steps):
        return None, False
    kept = [step.strip() for step in steps if step and step.strip()]
    if not kept:
        return None, False
    return {"reasoning_steps": kept, "answer": answer.strip()}, True


_STEP_SPLITTERS = (
    (re.compile(r"Step\s*(\d+)[:.]\s*(.*?)(?=Step\s*\d+[:.:]|\Z)", re.DOTALL | re.IGNORECASE), 1),
    (re.compile(r"^\s*(\d+)[.)]\s*(.*?)(?=^\s*\d+[.)]|\Z)", re.DOTALL | re.MULTILINE), 1),
    (re.compile(r"[-•*]\s*(.*?)(?=[-•*]|\Z)", re.DOTALL), None),
)


def parse_reasoning_steps(response: str) -> tuple[list[str], str]:
    """``(steps, answer)`` of a completion: its JSON (in a ```` ```json ```` fence or a flat
    object holding ``"reasoning_steps"``), else the steps in ``<think>``/``<reasoning>``
    ("Step N:", numbered lines, bullets, then lines over 10 characters) and the answer in
    ``<answer>``/``<final_answer>``, else ``([], the whole text stripped)``.

    Examples:
        >>> parse_reasoning_steps("<think>Step 1: Look. Step 2: Green.</think><answer>B</answer>")
        (['Look.', 'Green.'], 'B')
    """
    try:
        fenced = re.search(r"```json\s*(.*?)\s*```", response, re.DOTALL)
        if fenced:
            json_text: str | None = fenced.group(1)
        else:
            flat = re.search(r'\{[^{}]*"reasoning_steps"[^{}]*\}', response, re.DOTALL)
            json_text = flat.group(0) if flat else None
        if json_text:
            data = json.loads(json_text)
            steps = data.get("reasoning_steps", [])
            if isinstance(steps, str):
                steps = [steps] if steps else []
            answer = data.get("answer", "")
            if steps or answer:
                return steps, str(answer)
    except (json.JSONDecodeError, TypeError):
        pass
    think = re.search(r"<think>(.*?)</think>", response, re.DOTALL) or re.search(
        r"<reasoning>(.*?)</reasoning>", response, re.DOTALL
    )
    if not think:
        return [], response.strip()
    body = think.group(1).strip()
    steps = []
    for pattern, group in _STEP_SPLITTERS:
        found = pattern.findall(body)
        parts = [m[group] if group is not None else m for m in found]
        steps = [part.strip() for part in parts if part.strip()]
        if steps:
            break
    if not steps:
        steps = [line for line in (s.strip() for s in body.split("\n")) if len(line) > 10]
    closing = re.search(r"<answer>(.*?)</answer>", response, re.DOTALL) or re.search(
        r"<final_answer>(.*?)</final_answer>", response, re.DOTALL
    )
    return steps, closing.group(1).strip() if closing else ""


_YES = {"yes", "true", "correct", "1"}
_NO = {"no", "false", "incorrect", "0"}


def check_answer_match(predicted: str, ground_truth: str) -> bool:
    """The training rewards' answer check (not :class:`AccuracyCalculator`'s): exact text,
    a leading option letter a-d, yes/no words, the first numbers within 1 %, else (golds
    over 10 characters) one text inside the other.

    Examples:
        >>> check_answer_match("B) the answer", "B"), check_answer_match("5", "5.0")
        (True, True)
    """
    if not predicted or not ground_truth:
        return False
    pred, gold = predicted.strip().lower(), ground_truth.strip().lower()
    if pred == gold:
        return True
    pred_letter, gold_letter = re.search(r"^([a-d])\b", pred), re.search(r"^([a-d])\b", gold)
    if pred_letter and gold_letter:
        return pred_letter.group(1) == gold_letter.group(1)
    if pred in _YES | _NO and gold in _YES | _NO:
        return (pred in _YES) == (gold in _YES)
    pred_numbers = re.findall(r"[-+]?\d*\.?\d+", pred)
    gold_numbers = re.findall(r"[-+]?\d*\.?\d+", gold)
    if pred_numbers and gold_numbers:
        value, target = float(pred_numbers[0]), float(gold_numbers[0])
        if abs(target) > 1:
            return abs(value - target) / abs(target) < 0.01
        return abs(value - target) < 0.01
    if len(gold) > 10:
        return gold in pred or pred in gold
    return False


def _valid_steps(completion: Any) -> list[str] | None:
    cleaned, valid = _validate_schema(_extract_json_object(_content_of(completion)))
    return cleaned["reasoning_steps"] if valid and cleaned is not None else None


def _references(reference_steps: Any, index: int) -> list[str]:
    ref = reference_steps[index] if index < len(reference_steps) else []
    return [str(step).strip() for step in ref if step and str(step).strip()]


def format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """1.0 per completion whose JSON has non-blank string steps and a string answer.

    Examples:
        >>> format_reward(['{"reasoning_steps": ["a"], "answer": "B"}', "no json"])
        [1.0, 0.0]
    """
    return [1.0 if _valid_steps(completion) is not None else 0.0 for completion in completions]


def accuracy_reward(
    completions: Sequence[Any],
    solution: Sequence[Any],
    use_llm_grader: bool = False,
    llm_model: str = "llama3.2",
    base_url: str = "http://localhost:11434/v1",
    **kwargs: Any,
) -> list[float]:
    """The accuracy calculator's confidence when the JSON answer is right, else 0.0
    (``problem`` in ``kwargs``: the questions, for option texts).

    Examples:
        >>> accuracy_reward(['{"reasoning_steps": [], "answer": "5.0"}'], solution=["5"])
        [1.0]
    """
    from crystalbench.compat.crystal_metrics.accuracy import AccuracyCalculator

    calculator = AccuracyCalculator(
        use_llm_grader=use_llm_grader, llm_model=llm_model, base_url=base_url
    )
    problems = kwargs.get("problem", [""] * len(completions))
    rewards = []
    for i, completion in enumerate(completions):
        parsed = _extract_json_object(_content_of(completion))
        answer = parsed.get("answer", "") if isinstance(parsed, dict) else ""
        reward = 0.0
        if answer:
            gold = solution[i] if i < len(solution) else ""
            problem = problems[i] if i < len(problems) else ""
            result = calculator.evaluate_single(problem, answer, gold)
            if result.is_correct:
                reward = result.confidence
        rewards.append(reward)
    return rewards


def word_overlap_reasoning_reward(
    completions: Sequence[Any],
    reference_steps: Any = None,
    threshold: float = 0.45,
    **kwargs: Any,
) -> list[float]:
    """Step F1 by word overlap for completions with valid JSON (else 0.0).

    Examples:
        >>> word_overlap_reasoning_reward(['{"reasoning_steps": ["go now"], "answer": "B"}'],
        ...                               reference_steps=[["go now", "stop"]])
        [0.6666666666666666]
    """
    if reference_steps is None:
        reference_steps = kwargs.get("reference_steps", [])
    rewards = []
    for i, completion in enumerate(completions):
        steps = _valid_steps(completion)
        reference = _references(reference_steps, i) if steps is not None else []
        f1 = best_match_f1(steps, reference, threshold=threshold)[0] if steps and reference else 0.0
        rewards.append(f1)
    return rewards


def semantic_reasoning_reward(
    completions: Sequence[Any],
    reference_steps: Any = None,
    threshold: float = 0.70,
    model: Any = None,
    **kwargs: Any,
) -> list[float]:
    """Semantic Process Reward: step F1 by embedding cosine for completions with valid
    JSON (else 0.0); word overlap at 0.45 when no encoder can run.

    Examples:
        >>> semantic_reasoning_reward(['{"reasoning_steps": ["go now"], "answer": "B"}'],
        ...                           reference_steps=[["go now"]], model="hash")
        [1.0]
    """
    from crystalbench.compat.crystal_metrics.similarity import semantic_match_f1

    if reference_steps is None:
        reference_steps = kwargs.get("reference_steps", [])
    work = []
    for i, completion in enumerate(completions):
        steps = _valid_steps(completion)
        work.append((steps, _references(reference_steps, i) if steps is not None else []))
    texts = [text for steps, reference in work if steps and reference for text in steps + reference]
    encoder_cache = None
    if texts:  # one encoder call for the whole batch; a failure is left to each completion
        try:
            encoder_cache = _named_encoder_cache(model)
            if encoder_cache is not None:
                encoder_cache.remember(list(dict.fromkeys(texts)))
        except Exception:
            encoder_cache = None
    try:
        rewards = []
        for steps, reference in work:
            f1 = 0.0
            if steps and reference:
                try:
                    f1 = semantic_match_f1(steps, reference, model=model, threshold=threshold)[0]
                except Exception:
                    f1 = best_match_f1(steps, reference, threshold=0.45)[0]
            rewards.append(f1)
        return rewards
    finally:
        if encoder_cache is not None:
            encoder_cache.forget()


def _lightweight_causal_reward(
    predicted_steps: Any,
    reference_steps: list[str],
    predicted_answer: str,
    ground_truth: str,
    answer_weight: float = 0.6,
    step_weight: float = 0.4,
) -> float:
    """``answer_weight + step_weight * F1`` when the answer matches, else
    ``0.3 * step_weight * F1`` (F1 by word overlap at 0.3)."""
    correct = check_answer_match(predicted_answer, ground_truth)
    step_f1 = 0.0
    if predicted_steps and reference_steps:
        step_f1 = best_match_f1(predicted_steps, reference_steps, threshold=0.3)[0]
    if correct:
        return answer_weight * 1.0 + step_weight * step_f1
    return step_weight * step_f1 * 0.3


def causal_process_reward(
    completions: Sequence[Any],
    ground_truths: Any = None,
    reference_steps: Any = None,
    answer_weight: float = 0.6,
    step_weight: float = 0.4,
    **kwargs: Any,
) -> list[float]:
    """crystal-metrics' Causal Process Reward (answer check x word-overlap step F1);
    golds also come from ``ground_truth``, ``answer`` or ``solution`` in ``kwargs``.

    Examples:
        >>> causal_process_reward(['{"reasoning_steps": ["go now"], "answer": "B"}'],
        ...                       ground_truths=["B"], reference_steps=[["go now"]])
        [1.0]
    """
    if ground_truths is None:
        ground_truths = kwargs.get("ground_truth", kwargs.get("answer", kwargs.get("solution")))
    if ground_truths is None:
        ground_truths = [""] * len(completions)
    if not isinstance(ground_truths, list):
        ground_truths = [ground_truths] * len(completions)
    golds = [str(gold) if gold is not None else "" for gold in ground_truths]
    if reference_steps is None:
        reference_steps = kwargs.get("reference_steps")
    if not isinstance(reference_steps, list):
        reference_steps = [[]] * len(completions)
    rewards = []
    for i, completion in enumerate(completions):
        steps, answer = parse_reasoning_steps(_content_of(completion))
        ref = reference_steps[i] if i < len(reference_steps) else []
        if ref and not isinstance(ref[0], str):
            ref = [str(step) for step in ref]
        ref = [step.strip() for step in ref if step and str(step).strip()]
        gold = golds[i] if i < len(golds) else ""
        rewards.append(
            _lightweight_causal_reward(steps, ref, answer, gold, answer_weight, step_weight)
        )
    return rewards


_REWARD_REGISTRY: dict[str, Callable[..., list[float]]] = {
    "format": format_reward,
    "accuracy": accuracy_reward,
    "reasoning": word_overlap_reasoning_reward,
    "reasoning_semantic": semantic_reasoning_reward,
    "reasoning_causal": causal_process_reward,
}


def select_reward_func(name: str) -> Callable[..., list[float]]:
    """The reward registered under ``name``.

    Raises:
        ValueError: Unknown name (the message lists the known ones).

    Examples:
        >>> select_reward_func("reasoning_causal") is causal_process_reward
        True
    """
    if name not in _REWARD_REGISTRY:
        raise ValueError(
            f"Unknown reward function: {name!r}. Available: {sorted(_REWARD_REGISTRY)}"
        )
    return _REWARD_REGISTRY[name]
