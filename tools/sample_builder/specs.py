"""What one sample item is: its reference steps with their paraphrases, its answers, and how
its image is drawn.

The constants name the sources, the prediction styles and the items ``messy-raw`` leaves out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from crystalbench.types import BenchmarkItem

__all__ = ["MISSING_IN_MESSY", "PREDICTION_STYLES", "RWQA_SUFFIX", "SOURCES", "SampleSpec", "Step"]


SOURCES: tuple[str, ...] = ("mathvision", "scienceqa", "realworldqa", "mmvp", "plotqa")
"""Source styles of the sample, 8 items each."""

PREDICTION_STYLES: tuple[str, ...] = (
    "terse-precise",
    "verbose-recall",
    "scrambled-order",
    "messy-raw",
    "right-answer-weak-reasoning",
)
"""Prediction files written next to the benchmark (``predictions/<style>.jsonl``)."""

MISSING_IN_MESSY: tuple[str, ...] = ("scienceqa-04", "plotqa-06")
"""Items deliberately absent from ``messy-raw.jsonl`` (missing predictions are counted)."""

RWQA_SUFFIX = "Please answer directly with only the letter of the correct option and nothing else."
"""Instruction RealWorldQA appends after the options it embeds in the question."""

Drawer = Callable[[], Image.Image]


@dataclass(frozen=True)
class Step:
    """One reference step and the way a model would paraphrase it.

    Attributes:
        text: The reference wording.
        para: A model's shorter paraphrase of the same fact or operation.
        key: Whether a terse model would keep this step (decisive facts and computations).
    """

    text: str
    para: str
    key: bool = False


@dataclass(frozen=True)
class SampleSpec:
    """Everything needed to write one sample item, its image and the fake model outputs.

    Attributes:
        item_id: ``<source>-NN``.
        source: Source style.
        question: Question text (RealWorldQA-style items embed their options here).
        steps: Reference chain with paraphrases.
        answer: Gold answer as stored.
        draw: Draws the image from the same parameters the steps were written from.
        options: Options stored separately (MathVision, ScienceQA, MMVP, PlotQA MC).
        answer_type: Explicit type, or ``None`` to leave it to inference.
        difficulty: Explicit tier, or ``None`` to leave it to the derived tiers.
        metadata: Source-ish extras.
        right: Ways a model states the correct answer.
        wrong: Plausible wrong answers.
        ask: What the question asks for, as a noun phrase ("the length of AB").
        topic: Short noun phrase for the image ("the triangle").
    """

    item_id: str
    source: str
    question: str
    steps: tuple[Step, ...]
    answer: str
    draw: Drawer
    options: tuple[str, ...] = ()
    answer_type: str | None = None
    difficulty: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    right: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    ask: str = "the answer"
    topic: str = "the image"

    def item(self) -> BenchmarkItem:
        """The benchmark record (image path relative to ``benchmark.jsonl``)."""
        return BenchmarkItem.model_validate(
            {
                "id": self.item_id,
                "source": self.source,
                "question": self.question,
                "options": list(self.options),
                "answer": self.answer,
                "answer_type": self.answer_type,
                "reference_steps": [s.text for s in self.steps],
                "image": f"images/{self.item_id}.png",
                "difficulty": self.difficulty,
                "metadata": {"synthetic": True, **self.metadata},
            }
        )


def _s(text: str, para: str, key: bool = False) -> Step:
    return Step(text, para, key)


def _letter(index: int) -> str:
    return "ABCDEFGH"[index]


def _mc_forms(options: Sequence[str], gold_index: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Right and wrong answer forms for a lettered multiple-choice item."""
    letter, text = _letter(gold_index), options[gold_index]
    right = (letter, f"({letter})", f"{letter}. {text}", text)
    wrong = tuple(
        form for k, other in enumerate(options) if k != gold_index for form in (_letter(k), other)
    )
    return right, wrong


def _mmvp_forms(options: Sequence[str], gold_index: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Right and wrong answer forms for an MMVP item (gold ``(a)`` / ``(b)``)."""
    tag, other = "ab"[gold_index], "ab"[1 - gold_index]
    right = (f"({tag})", tag, f"({tag}) {options[gold_index]}", options[gold_index])
    wrong = (f"({other})", f"({other}) {options[1 - gold_index]}", options[1 - gold_index])
    return right, wrong


def _embedded(question: str, choices: Sequence[str]) -> str:
    """A RealWorldQA-style question with its options embedded in the text."""
    lines = [question] + [f"{_letter(k)}. {c}" for k, c in enumerate(choices)] + [RWQA_SUFFIX]
    return "\n".join(lines)
