"""ScienceQA, image questions only (ScienceQA-IMG).

Published as ``lmms-lab/ScienceQA`` (configuration ``ScienceQA-IMG``: train 6,218 /
validation 2,097 / test 2,017, CRYSTAL's test count exactly; the same files are in
``lmms-lab/ScienceQA-IMG`` and ``lmms-lab-encoder/ScienceQA``) and in full as
``derek-thomas/ScienceQA`` (12,726 / 4,241 / 4,241, text-only questions included). Columns:
``image``, ``question``, ``choices``, ``answer`` (an int index into ``choices``), ``hint``,
``task``, ``grade``, ``subject``, ``topic``, ``category``, ``skill``, ``lecture``,
``solution``. There is no id column.

Conventions:

- only rows with an image become items; the others are skipped with the reason
  ``no image`` (every row of the full dataset's text-only questions);
- ``answer`` is an index into ``choices``, turned into a letter (``multiple_choice``); the
  option text is ``metadata.answer_text``;
- a non-empty ``hint`` is the question's context and is shown to the model:
  ``"Context: {hint}\\n{question}"`` (as lmms-eval's ScienceQA-IMG task shows it); the original
  question and the hint stay in metadata;
- subject, grade, topic (and category, skill, task, lecture, solution) go to metadata;
- the upstream id is ``SPLIT-ROW``: the row's 0-based position in the split as published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from crystalbench.sources.base import (
    Draft,
    Skip,
    SourceAdapter,
    check_options,
    column_image,
    int_field,
    letter,
    register,
    string_list,
    text_field,
)
from crystalbench.sources.rows import UpstreamRow

METADATA_COLUMNS = ("subject", "grade", "topic", "category", "skill", "task", "lecture", "solution")
"""ScienceQA's descriptive columns copied into every item's metadata (when not empty)."""


@register
class ScienceQAImage(SourceAdapter):
    """ScienceQA questions that have an image: test for CRYSTAL, train for the training pool."""

    name = "scienceqa-img"
    source = "scienceqa"
    title = "ScienceQA-IMG"
    hub_id = "lmms-lab/ScienceQA"
    hub_configs: ClassVar[Mapping[str, str | None]] = {
        "lmms-lab/ScienceQA": "ScienceQA-IMG",
        "lmms-lab-encoder/ScienceQA": "ScienceQA-IMG",
        "lmms-lab/ScienceQA-IMG": None,
        "derek-thomas/ScienceQA": None,
    }
    default_split = "test"
    splits = ("train", "validation", "test")
    license = "CC BY-SA 4.0 (derek-thomas/ScienceQA card)"
    layouts = (
        "a snapshot of the hub repo (ScienceQA-IMG/SPLIT-*.parquet or data/SPLIT-*.parquet), "
        "one .parquet file, or a save_to_disk folder"
    )
    image_columns = ("image",)
    required_columns = ("question", "choices", "answer")

    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """``SPLIT-ROW`` (ScienceQA has no id column)."""
        return f"{split}-{row.index}"

    def stratum(self, row: UpstreamRow) -> str:
        """Subject (natural, social or language science)."""
        return str(row.data.get("subject") or "unknown")

    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """One question with an image; the hint becomes its context."""
        image = column_image(row, "image")
        if image is None:
            self.count("skipped_no_image")
            return Skip("no image")
        original = text_field(row, "question")
        choices = check_options(row, string_list(row, "choices"), "choices")
        if len(choices) < 2:
            raise row.ref.error(f"expected at least 2 choices, got {len(choices)}", "choices")
        index = int_field(row, "answer")
        if not 0 <= index < len(choices):
            raise row.ref.error(
                f"answer index {index} is outside the {len(choices)} choices", "answer"
            )
        hint = text_field(row, "hint", allow_empty=True)
        question = f"Context: {hint}\n{original}" if hint else original
        metadata: dict[str, Any] = {
            "answer_index": index,
            "answer_text": choices[index],
            "original_question": original,
        }
        if hint:
            metadata["hint"] = hint
            self.count("hint_in_question")
        for name in METADATA_COLUMNS:
            value = text_field(row, name, allow_empty=True)
            if value:
                metadata[name] = value
        return Draft(
            question=question,
            answer=letter(index),
            answer_type="multiple_choice",
            options=choices,
            image=image,
            metadata=metadata,
        )
