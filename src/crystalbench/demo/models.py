"""The scripted models of the demo server: four generators, a validator and the sample's
model styles, answering from the bundled sample's data (no model, no GPU, deterministic).

:class:`DemoModels` reads a request the way a model would: which prompt it is (the reference
generation prompt asks for steps towards a given correct answer; the validation prompt asks
for a verdict on numbered steps; anything else is a question to answer, as ``crystal infer``
sends it), which item it is about (the question in the prompt, the correct answer when the
prompt gives it, else the picture), and answers in the prompt's JSON format.

- **Generators** rewrite the item's sample reference chain in four styles, so the consensus
  has real clusters to find and steps to drop: ``gen-literal`` (the reference wording),
  ``gen-grounded`` (each step anchored in the image: "In the image, ..."), ``gen-terse`` (one
  step left out, which one depends on the request's seed) and ``gen-digressive`` (the
  reference plus, for one seed in three, one claim the image does not show). A name not in
  this list gets one of the four styles by a stable hash of the name.
- The **validator** (``validator``) rejects a chain holding a claim the image does not show
  (``visual_grounding: false``, the step named) and accepts the others, so a digressive step
  that reaches the consensus sends its item to another round.
- **Model styles** (``terse-precise``, ``verbose-recall``, ``scrambled-order``, ``messy-raw``,
  ``right-answer-weak-reasoning``) answer a ``crystal infer`` question with the sample's
  prediction of that style (its steps and answer, or its raw text; nothing for the items the
  style leaves out). Any other name answers with the reference chain and answer.

An item the sample does not hold gets a generic chain built from its question and correct
answer (and a guessed answer when none is given), so the server runs on any item set.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crystalbench.types import BenchmarkItem

__all__ = [
    "DISTRACTORS",
    "GENERATORS",
    "MODEL_STYLES",
    "VALIDATOR",
    "DemoModels",
    "DemoRequest",
    "generator_chain",
]

GENERATORS: tuple[str, ...] = ("gen-literal", "gen-grounded", "gen-terse", "gen-digressive")
"""The four scripted generators, one per chain style."""

VALIDATOR = "validator"
"""The scripted validator's name."""

MODEL_STYLES: tuple[str, ...] = (
    "terse-precise",
    "verbose-recall",
    "scrambled-order",
    "messy-raw",
    "right-answer-weak-reasoning",
)
"""The sample's model styles (``data/sample/predictions``), served as models to infer with."""

DISTRACTORS: tuple[str, ...] = (
    "A small red logo is printed in the top-right corner of the image.",
    "A ruler lies along the bottom edge of the picture.",
    "The caption under the image gives the date it was taken.",
)
"""Claims no sample image shows: ``gen-digressive`` adds one, the validator rejects them."""

_WORD = re.compile(r"\s+")
_ANSWER = re.compile(r"^Correct answer: (.*)$", re.MULTILINE)
_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)
_STEP = re.compile(r"^\s*(\d+)[.)] (.*)$")


def _normal(text: str) -> str:
    return _WORD.sub(" ", text).strip().lower()


def _seeded(*parts: object) -> int:
    joined = "\0".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(joined).digest()[:8], "big")


@dataclass(frozen=True)
class DemoRequest:
    """One chat request as the demo models read it."""

    model: str
    prompt: str
    image: bytes | None = None
    seed: int | None = None


def generator_chain(style: str, steps: Sequence[str], seed: int | None) -> list[str]:
    """A generator's rewrite of a reference chain (see the module docstring).

    Examples:
        >>> steps = ["The bar is red.", "The bar reaches 5.", "So the answer is 5."]
        >>> generator_chain("gen-literal", steps, 0) == steps
        True
        >>> generator_chain("gen-grounded", steps, 0)[0]
        'In the image, the bar is red.'
        >>> len(generator_chain("gen-terse", steps * 2, 1))
        5
    """
    chain = list(steps)
    if style == "gen-grounded":
        return ["In the image, " + s[:1].lower() + s[1:] if s else s for s in chain]
    if style == "gen-terse":
        if len(chain) > 3:
            del chain[_seeded("terse", seed) % (len(chain) - 1)]  # never the conclusion
        return chain
    if style == "gen-digressive":
        pick = _seeded("digressive", seed)
        if pick % 3 == 0:
            chain.insert(len(chain) // 2, DISTRACTORS[pick % len(DISTRACTORS)])
        return chain
    return chain


def _style_of(model: str) -> str:
    if model in GENERATORS:
        return model
    return GENERATORS[_seeded("style", model) % len(GENERATORS)]


def _image_hash(data: bytes) -> int | None:
    """A 64-bit average hash of a picture (robust to resizing and re-encoding)."""
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            small = image.convert("L").resize((8, 8))
            pixels = list(small.tobytes())  # mode L: one byte per pixel
    except Exception:  # a broken picture identifies nothing
        return None
    mean = sum(pixels) / len(pixels)
    return sum(1 << i for i, value in enumerate(pixels) if value > mean)


@dataclass
class DemoModels:
    """The scripted models over a benchmark's items (see the module docstring).

    Args:
        items: The items the models know (the bundled sample's, usually), with their
            reference chains.
        images: Each item's picture as bytes (to tell items with the same question apart
            when no answer is given), by id.
        predictions: Per model style, the sample's prediction records by item id.

    Examples:
        >>> models = DemoModels.from_sample()
        >>> item = models.items[0]
        >>> prompt = f"Question: {item.question}\\n\\nCorrect answer: {item.answer}\\n" + (
        ...     'Reply with {"reasoning_steps": [...], "answer": "..."}')
        >>> reply = json.loads(models.reply(DemoRequest("gen-literal", prompt, seed=1)))
        >>> reply["reasoning_steps"] == item.reference_steps, reply["answer"] == item.answer
        (True, True)
    """

    items: list[BenchmarkItem]
    images: dict[str, bytes] = field(default_factory=dict)
    predictions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    _keys: list[tuple[str, BenchmarkItem]] = field(default_factory=list, repr=False)
    _hashes: dict[str, int | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # Longest question first: a question that contains another is matched as itself.
        keys = [(_normal(item.question.split("\n")[0]), item) for item in self.items]
        self._keys = sorted(keys, key=lambda pair: -len(pair[0]))

    @classmethod
    def from_sample(cls) -> DemoModels:
        """The models of the bundled sample: its items, pictures and five model styles."""
        from crystalbench.data.loading import SAMPLE_DIR, load_benchmark

        bench = load_benchmark("sample")
        images = {}
        for item in bench.items:
            data = bench.image_bytes(item)
            if data is not None:
                images[item.id] = data
        predictions: dict[str, dict[str, dict[str, Any]]] = {}
        for style in MODEL_STYLES:
            path = SAMPLE_DIR / "predictions" / f"{style}.jsonl"
            records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
            predictions[style] = {str(record["id"]): record for record in records}
        return cls(items=list(bench.items), images=images, predictions=predictions)

    # ------------------------------------------------------------------ which item
    def item_for(self, prompt: str, image: bytes | None = None) -> BenchmarkItem | None:
        """The known item a prompt is about, or ``None``: its question (first line) must be
        in the prompt; several such items are told apart by the correct answer the prompt
        gives, else by the picture."""
        text = _normal(prompt)
        found = [(key, item) for key, item in self._keys if key and key in text]
        if not found:
            return None
        longest = len(found[0][0])  # a question inside a longer one is not that one
        candidates = [item for key, item in found if len(key) == longest]
        given = _ANSWER.search(prompt)
        if given is not None and len(candidates) > 1:
            answered = [c for c in candidates if _normal(given.group(1)) in _answers(c)]
            candidates = answered or candidates
        if len(candidates) > 1 and image is not None:
            target = _image_hash(image)
            if target is not None:
                candidates.sort(key=lambda c: bin(target ^ (self._hash(c) or 0)).count("1"))
        return candidates[0]

    def _hash(self, item: BenchmarkItem) -> int | None:
        if item.id not in self._hashes:
            data = self.images.get(item.id)
            self._hashes[item.id] = _image_hash(data) if data is not None else None
        return self._hashes[item.id]

    # ------------------------------------------------------------------ replies
    def reply(self, request: DemoRequest) -> str:
        """The completion text of one request."""
        prompt = request.prompt
        if '"logical_validity"' in prompt:
            return json.dumps(self._verdict(prompt))
        item = self.item_for(prompt, request.image)
        given = _ANSWER.search(prompt)
        if given is not None and '"reasoning_steps"' in prompt:
            answer = given.group(1).strip()
            steps = item.reference_steps if item is not None else _generic_steps(prompt, answer)
            chain = generator_chain(_style_of(request.model), steps, request.seed)
            return json.dumps({"reasoning_steps": chain, "answer": answer})
        return self._answer(request.model, item, prompt)

    def _verdict(self, prompt: str) -> dict[str, Any]:
        steps = _chain_steps(prompt)
        bad = [number for number, text in steps if any(d in text for d in DISTRACTORS)]
        verdict: dict[str, Any] = {
            "logical_validity": True,
            "sequence_coherence": True,
            "visual_grounding": not bad,
            "answer_consistency": True,
            "accept": not bad,
            "first_error_step": bad[0] if bad else -1,
            "reasons": [f"step {n} claims something the image does not show" for n in bad],
        }
        return verdict

    def _answer(self, model: str, item: BenchmarkItem | None, prompt: str) -> str:
        if model in self.predictions:
            record = self.predictions[model].get(item.id) if item is not None else None
            if record is None:
                return ""  # this style left the item unanswered
            if record.get("response") is not None:
                return str(record["response"])
            steps = record.get("reasoning_steps") or []
            return json.dumps({"reasoning_steps": steps, "answer": record.get("answer")})
        if item is not None:
            return json.dumps({"reasoning_steps": item.reference_steps, "answer": item.answer})
        question = _QUESTION.search(prompt)
        asked = question.group(1).strip() if question else "the question"
        guess = "A" if re.search(r"^\(?A[.)]", prompt, re.MULTILINE) else "unknown"
        return json.dumps({"reasoning_steps": [f"The question asks: {asked}"], "answer": guess})


def _answers(item: BenchmarkItem) -> set[str]:
    """Every way an item's gold may be written (normalised): itself, without thousands
    separators, its letter, its option's text (options as a list or written into the
    question, as RealWorldQA does), MMVP's ``(a)`` as ``a``.

    Examples:
        >>> item = BenchmarkItem(id="1", source="s", question="Q", options=["fox", "grass"],
        ...                      answer="grass", reference_steps=["s"])
        >>> sorted(_answers(item))
        ['b', 'grass']
    """
    letters = "abcdefghij"
    gold = _normal(item.answer)
    found = {gold, gold.replace(",", "")}
    mmvp = re.fullmatch(r"\(([a-j])\)", gold)
    if mmvp:
        gold = mmvp.group(1)
        found.add(gold)
    options = [_normal(o) for o in item.options]
    for line in item.question.splitlines()[1:]:  # options written into the question
        match = re.match(r"([A-J])\. (.*)", line.strip())
        if match:
            options.append(_normal(match.group(2)))
    if len(gold) == 1 and gold in letters[: len(options)]:
        found.add(options[letters.index(gold)])
    elif gold in options:
        found.add(letters[options.index(gold)])
    return found


def _generic_steps(prompt: str, answer: str) -> list[str]:
    question = _QUESTION.search(prompt)
    asked = question.group(1).strip() if question else "what the image shows"
    return [
        f"The question asks: {asked}",
        "The image shows the part of the scene the question is about.",
        f"Reading that part of the image gives {answer}.",
        f"So the answer is {answer}.",
    ]


def _chain_steps(prompt: str) -> list[tuple[int, str]]:
    """The numbered steps of a validation prompt (between ``Steps:`` and ``Criteria:``)."""
    _, _, rest = prompt.partition("Steps:")
    body, _, _ = rest.partition("Criteria:")
    steps = []
    for line in body.splitlines():
        match = _STEP.match(line)
        if match:
            steps.append((int(match.group(1)), match.group(2)))
    return steps
