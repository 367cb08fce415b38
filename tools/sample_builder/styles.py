"""The five prediction styles: fake model outputs written from each item's spec with a seeded RNG.

- ``terse-precise``: 2-4 short steps, each a paraphrase of a reference step (P >> R);
- ``verbose-recall``: almost every reference step plus restatements and filler (R > P);
- ``scrambled-order``: most steps, paraphrased, in shuffled order (LIS and Ordered F1 drop);
- ``messy-raw``: raw text as models emit it (fences, prose, ``<think>``, truncation, markdown,
  garbage), with two items missing;
- ``right-answer-weak-reasoning``: right answers behind one or two vague steps.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from tools.sample_builder.specs import MISSING_IN_MESSY, PREDICTION_STYLES, SampleSpec

__all__ = ["build_predictions"]


FILLERS: tuple[str, ...] = (
    "Let me look at the image carefully before answering.",
    "I need to make sure I read every label correctly.",
    "This kind of question tests careful observation.",
    "It is important not to jump to conclusions here.",
    "Let me double-check that nothing in the picture was missed.",
    "I will now put these observations together.",
    "Everything found so far is consistent.",
    "Re-reading the question confirms what is being asked.",
    "No other details in the picture change the result.",
    "Checking the work once more, the reasoning holds.",
    "I should state the final answer clearly.",
    "The image is clear enough to read all the details.",
    "Now I can move on to the next part of the reasoning.",
    "This is a fairly standard problem of its type.",
    "I want to be careful and methodical about this.",
)

CONNECTIVES: tuple[str, ...] = (
    "Looking at the image, ",
    "Next, ",
    "I can see that ",
    "From the picture, ",
    "Then ",
    "Now, ",
    "It follows that ",
    "Also, ",
    "Observing closely, ",
    "Note that ",
)

TERSE_SHORTCUTS: tuple[str, ...] = (
    "This follows directly.",
    "No further work is needed.",
    "The rest is straightforward.",
    "That settles it.",
)
"""Unsupported shortcuts a terse model sometimes writes instead of a step."""

DISCOURSE_MARKERS: frozenset[str] = frozenset(
    {"So", "Therefore", "Thus", "Hence", "That", "This", "Alternatively", "Check", "Answer"}
)
"""Sentence openers that do not take another connective in front of them."""

VAGUE_STEPS: tuple[str, ...] = (
    "Looking at the image, the answer is clear.",
    "Based on what is shown, I picked the most reasonable answer.",
    "The picture gives enough information to answer the question.",
    "After a quick look, this seems right.",
    "Considering all the details, I am fairly confident.",
    "This is the most likely answer given the image.",
)

PROPER_NOUNS: frozenset[str] = frozenset(
    [
        "I",
        "Monday",
        "Tuesday",
        "Norland",
        "Eastmere",
        "Westhaven",
        "Southvale",
        "Solution",
        "Norway",
        "Chile",
        "Kenya",
        "Peru",
        "Vietnam",
        "Ethiopia",
        "Colombia",
        "Uganda",
        "North",
        "South",
        "East",
        "West",
        "Fiji",
        "Nepal",
        "Ghana",
        "Pythagoras",
    ]
)
"""First words that keep their capital after a connective (names, not sentence starts)."""


def _after_connective(text: str) -> str:
    """Lower-case the first letter of a sentence unless it starts a name or a variable.

    Examples:
        >>> _after_connective("The bar for Chile"), _after_connective("AB = 10")
        ('the bar for Chile', 'AB = 10')
    """
    first = re.split(r"[\s:,']", text, maxsplit=1)[0]
    article = first == "A" and text[2:3].islower()
    if not article and (first in PROPER_NOUNS or not first[1:].islower() or not first[0].isupper()):
        return text
    return text[0].lower() + text[1:]


def _lis_length(sequence: Sequence[int]) -> int:
    tails: list[int] = []
    for value in sequence:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(tails):
            tails.append(value)
        else:
            tails[lo] = value
    return len(tails)


def _wrong_ids(style: str, specs: Sequence[SampleSpec], count: int) -> set[str]:
    """Which items a style answers wrongly (fixed per style)."""
    rng = random.Random(f"{style}/wrong")
    return set(rng.sample([s.item_id for s in specs], count))


def _pick_answer(spec: SampleSpec, rng: random.Random, correct: bool, plain: bool = False) -> str:
    if not correct and spec.wrong:
        return rng.choice(spec.wrong)
    if plain:
        return spec.right[0] if spec.right else spec.answer
    return rng.choice(spec.right) if spec.right else spec.answer


def _terse(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    """2-4 paraphrased key steps, now and then one unsupported shortcut (P high, R low)."""
    steps = list(spec.steps)
    keys = [k for k, s in enumerate(steps) if s.key]
    want = min(len(steps), rng.choice((2, 3, 3, 4)))
    if len(keys) < want:
        others = [k for k in range(len(steps)) if k not in keys]
        keys += rng.sample(others, want - len(keys))
    chosen = sorted(rng.sample(keys, want))
    out = [steps[k].para for k in chosen]
    if rng.random() < 0.3:
        out.insert(rng.randrange(len(out) + 1), rng.choice(TERSE_SHORTCUTS))
    return out, _pick_answer(spec, rng, correct, plain=True)


def _question_restatement(spec: SampleSpec) -> str:
    wh = spec.ask.split()[0] in {"whether", "which", "how", "what"}
    return f"The question asks {'' if wh else 'for '}{spec.ask}."


def _with_connective(text: str, rng: random.Random, first: bool) -> str:
    """Prefix a connective the way chatty models do (not before "So", "Therefore"...)."""
    if text.split()[0].rstrip(",") in DISCOURSE_MARKERS:
        return text
    prefix = "First, " if first else rng.choice(CONNECTIVES)
    return prefix + _after_connective(text)


def _verbose(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    """Nearly every step, connectives, a restated question and filler (R high, P lower)."""
    steps = list(spec.steps)
    n = len(steps)
    n_drop = (1 if n >= 6 else 0) + (1 if n >= 9 and rng.random() < 0.5 else 0)
    dropped = set(rng.sample(range(1, n), n_drop))
    body: list[str] = []
    for k, step in enumerate(steps):
        if k not in dropped:
            body.append(_with_connective(step.para, rng, first=not body))
    target = round(n * rng.uniform(1.55, 1.95))
    n_fill = max(2, target - len(body) - 2)
    for filler in rng.sample(FILLERS, min(n_fill, len(FILLERS))):
        body.insert(rng.randrange(1, len(body) + 1), filler)
    answer = _pick_answer(spec, rng, correct)
    closer = f"Putting everything together, the final answer is {answer}."
    return [_question_restatement(spec), *body, closer], answer


def _scrambled(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    steps = list(spec.steps)
    n = len(steps)
    keep = list(range(n))
    if n >= 6:
        for k in rng.sample(keep, 1):
            keep.remove(k)
    best: list[int] = keep[:]
    best_ratio = 2.0
    for _ in range(40):
        order = keep[:]
        rng.shuffle(order)
        ratio = _lis_length(order) / len(order)
        if ratio < best_ratio:
            best, best_ratio = order, ratio
        if ratio <= 0.5:
            break
    return [steps[k].para for k in best], _pick_answer(spec, rng, correct, plain=True)


def _weak(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    count = rng.choice((1, 2, 2))
    steps = rng.sample(VAGUE_STEPS, count)
    if rng.random() < 0.35:
        steps[0] = f"I looked at {spec.topic} in the image."
    return steps, _pick_answer(spec, rng, correct, plain=True)


MESSY_FORMATS: tuple[str, ...] = (
    *("fenced",) * 7,
    *("prose",) * 6,
    *("think",) * 6,
    *("markdown",) * 6,
    *("numbered",) * 3,
    *("plain",) * 3,
    *("trailing_comma",) * 2,
    *("truncated",) * 2,
    "refusal",
    "symbols",
    "empty",
)
"""Raw-output shapes of ``messy-raw.jsonl`` (one per present item)."""


def _messy_formats(ids: Sequence[str]) -> dict[str, str]:
    present = [i for i in ids if i not in MISSING_IN_MESSY]
    if len(present) != len(MESSY_FORMATS):
        raise ValueError(
            f"messy formats cover {len(MESSY_FORMATS)} items, sample has {len(present)}"
        )
    formats = list(MESSY_FORMATS)
    random.Random("messy-raw/formats").shuffle(formats)
    return dict(zip(present, formats, strict=True))


def _boxed(answer: str) -> str:
    return answer if answer.startswith("\\boxed") else f"\\boxed{{{answer}}}"


def _messy(spec: SampleSpec, rng: random.Random, correct: bool, shape: str) -> str:
    steps = list(spec.steps)
    kept = [s.para for s in steps if rng.random() < 0.75] or [steps[-1].para]
    answer = _pick_answer(spec, rng, correct, plain=True)
    record = {"reasoning_steps": kept, "answer": answer}
    compact = json.dumps(record, ensure_ascii=False)
    pretty = json.dumps(record, ensure_ascii=False, indent=2)
    if shape == "fenced":
        return f"```json\n{pretty}\n```"
    if shape == "prose":
        return (
            "Sure! Here is my step-by-step reasoning.\n\n"
            f"{pretty}\n\nLet me know if you need anything else."
        )
    if shape == "think":
        musing = (
            f"Okay. {_question_restatement(spec)} Let me look at {spec.topic}. "
            f"{steps[0].para} Hmm, I should check this carefully. {steps[-1].para}"
        )
        return f"<think>\n{musing}\n</think>\n\n{compact}"
    if shape == "markdown":
        lines = ["Let's solve this step by step.", ""]
        lines += [f"**Step {k + 1}:** {text}" for k, text in enumerate(kept)]
        lines += ["", f"Final answer: {_boxed(answer)}"]
        return "\n".join(lines)
    if shape == "numbered":
        lines = [f"{k + 1}. {text}" for k, text in enumerate(kept)]
        return "\n".join([*lines, f"Answer: {answer}"])
    if shape == "plain":
        return compact
    if shape == "trailing_comma":
        body = ", ".join(json.dumps(t, ensure_ascii=False) for t in kept)
        return (
            f'{{"reasoning_steps": [{body},], "answer": {json.dumps(answer, ensure_ascii=False)},}}'
        )
    if shape == "truncated":
        cut = (
            compact.find(json.dumps(kept[-1], ensure_ascii=False))
            if len(kept) > 1
            else len(compact) // 2
        )
        return compact[: cut + max(8, len(kept[-1]) // 2)]
    if shape == "refusal":
        return "I cannot help with that."
    if shape == "symbols":
        return "}}}###"
    return ""


def build_predictions(specs: Sequence[SampleSpec]) -> dict[str, list[dict[str, Any]]]:
    """The prediction records of every style, in benchmark order.

    Args:
        specs: The sample specs (see
            :func:`~tools.sample_builder.writer.sample_specs`).

    Returns:
        ``{style: [record, ...]}`` with records ready to write as JSONL.

    Examples:
        >>> from tools.sample_builder import sample_specs
        >>> predictions = build_predictions(sample_specs())
        >>> {style: len(records) for style, records in predictions.items()}["messy-raw"]
        38
        >>> predictions["terse-precise"][0]["reasoning_steps"]
        ['The rest is straightforward.', 'So AB^2 = 36 + 64 = 100.', 'Therefore AB = 10.']
    """
    wrong = {
        "terse-precise": _wrong_ids("terse-precise", specs, 6),
        "verbose-recall": _wrong_ids("verbose-recall", specs, 10),
        "scrambled-order": _wrong_ids("scrambled-order", specs, 12),
        "messy-raw": _wrong_ids("messy-raw", specs, 11),
        "right-answer-weak-reasoning": _wrong_ids("right-answer-weak-reasoning", specs, 2),
    }
    structured = {
        "terse-precise": _terse,
        "verbose-recall": _verbose,
        "scrambled-order": _scrambled,
        "right-answer-weak-reasoning": _weak,
    }
    shapes = _messy_formats([s.item_id for s in specs])
    out: dict[str, list[dict[str, Any]]] = {style: [] for style in PREDICTION_STYLES}
    for spec in specs:
        for style, make in structured.items():
            rng = random.Random(f"{style}/{spec.item_id}")
            steps, answer = make(spec, rng, spec.item_id not in wrong[style])
            out[style].append(
                {"id": spec.item_id, "model": style, "reasoning_steps": steps, "answer": answer}
            )
        if spec.item_id in shapes:
            rng = random.Random(f"messy-raw/{spec.item_id}")
            text = _messy(spec, rng, spec.item_id not in wrong["messy-raw"], shapes[spec.item_id])
            out["messy-raw"].append({"id": spec.item_id, "model": "messy-raw", "response": text})
    return out
