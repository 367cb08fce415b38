"""The bundled sample's predictions in crystal-metrics' input formats, for parity tests.

crystal-metrics reads ``{id: {"reasoning_steps": [...], "answer": ..., "question": ...}}``
(predictions) and ``{id: {"reference_steps": [...], "answer": ...}}`` (references), and its
rewards read completions (``[{"content": text}]``). A structured prediction keeps its steps
as given (blank ones included, as crystal-metrics scores them); a raw response is split by
crystalbench's parser; a missing answer is ``""`` (crystal-metrics' default).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from crystalbench.answers.compat import compat_question
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import HashEncoder
from crystalbench.parsing import parse_prediction


@dataclass
class SampleSet:
    """One prediction file of the sample, in crystal-metrics' shapes."""

    name: str
    predictions: dict[str, dict[str, Any]] = field(default_factory=dict)
    completions: list[Any] = field(default_factory=list)
    """Trainer-format completions, one per prediction, in file order."""
    ids: list[str] = field(default_factory=list)
    """The item id of each completion."""


@cache
def references() -> dict[str, dict[str, Any]]:
    """The sample's items: reference steps, gold answer and the question crystal-metrics saw."""
    return {
        item.id: {
            "reference_steps": list(item.reference_steps),
            "answer": item.answer,
            "question": compat_question(item),
        }
        for item in load_benchmark("sample")
    }


@cache
def sample_sets() -> tuple[SampleSet, ...]:
    """Every prediction file of the sample."""
    refs = references()
    sets = []
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        found = SampleSet(path.stem)
        for pid, pred in load_predictions(path).by_id.items():
            parsed = parse_prediction(pred)
            steps = pred.reasoning_steps if pred.reasoning_steps is not None else parsed.steps
            answer = pred.answer if pred.answer is not None else (parsed.answer or "")
            found.predictions[pid] = {
                "reasoning_steps": list(steps),
                "answer": answer,
                "question": refs[pid]["question"],
            }
            text = pred.response or json.dumps({"reasoning_steps": steps, "answer": answer})
            found.completions.append([{"content": text}])
            found.ids.append(pid)
        sets.append(found)
    return tuple(sets)


def hash_embeddings(texts: list[str]) -> np.ndarray:
    """The hash encoder's vectors, in crystal-metrics' ``_compute_embeddings`` contract."""
    return HashEncoder().encode(texts) if texts else np.array([])


class HashModel:
    """A model object as crystal-metrics' semantic functions take one (``encode``)."""

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: list[str], convert_to_tensor: bool = False, **_: Any) -> np.ndarray:
        self.calls += 1
        return HashEncoder().encode(texts)
