"""Scripted generators and validator for the bundled sample (used by the end-to-end tests).

The sample's items carry reference chains; the scripted generators rewrite them in four
styles so the consensus has real clusters to find:

- ``gen-a``: the reference wording;
- ``gen-b``: each step led by "Looking at the image, ";
- ``gen-c``: the reference steps with "clearly" added, the last one left out;
- ``gen-d``: the reference wording plus one distractor step in the middle.

The item is recognised by its question and correct answer in the prompt. The validator
accepts a chain unless the item is in ``reject_first`` (rejected the first time it is
judged) or ``reject_always``. Per-(model, item) queues of bad replies (``bad``) are served
before the good answer.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from crystalbench.types import BenchmarkItem

GENERATORS = ("gen-a", "gen-b", "gen-c", "gen-d")
VALIDATOR = "judge"


def chain_for(model: str, steps: list[str]) -> list[str]:
    if model == "gen-a":
        return list(steps)
    if model == "gen-b":
        return ["Looking at the image, " + s[0].lower() + s[1:] for s in steps]
    if model == "gen-c":
        return [s.rstrip(".") + ", clearly." for s in steps[:-1]] or list(steps)
    middle = len(steps) // 2
    return [*steps[:middle], "Zebras quietly juggle purple umbrellas.", *steps[middle:]]


@dataclass
class ScriptedModels:
    items: list[BenchmarkItem]
    reject_first: set[str] = field(default_factory=set)
    reject_always: set[str] = field(default_factory=set)
    bad: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    judged: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def item_for(self, prompt: str) -> BenchmarkItem:
        found = [
            item
            for item in self.items
            if item.question.strip() in prompt and f"Correct answer: {item.answer}\n" in prompt
        ]
        return max(found, key=lambda item: len(item.question))

    def __call__(self, model: str, prompt: str, seed: int | None) -> dict[str, Any]:
        item = self.item_for(prompt)
        queue = self.bad.get((model, item.id))
        if queue:
            return queue.pop(0)
        if model == VALIDATOR:
            self.judged[item.id] += 1
            first = self.judged[item.id] == 1
            if item.id in self.reject_always or (first and item.id in self.reject_first):
                verdict = {
                    "logical_validity": True,
                    "sequence_coherence": False,
                    "visual_grounding": True,
                    "answer_consistency": True,
                    "accept": False,
                    "first_error_step": 2,
                    "reasons": ["step 2 is out of order"],
                }
            else:
                verdict = dict.fromkeys(
                    ("logical_validity", "sequence_coherence", "visual_grounding",
                     "answer_consistency", "accept"), True)  # fmt: skip
                verdict["reasons"] = []
            return {"text": json.dumps(verdict)}
        steps = chain_for(model, list(item.reference_steps))
        return {"text": json.dumps({"reasoning_steps": steps, "answer": item.answer})}
