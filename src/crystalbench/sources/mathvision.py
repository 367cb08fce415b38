"""MathVision (MATH-V): competition maths problems with figures.

Published as ``MathLLMs/MathVision`` (MIT): Parquet files ``data/test-*.parquet`` (3,040
rows) and ``data/testmini-*.parquet`` (304) with columns ``id``, ``question``, ``options``,
``image`` (a relative path such as ``images/1.jpg``), ``decoded_image`` (the pixels),
``answer``, ``solution``, ``level`` and ``subject``.

Conventions:

- ``options`` empty means a free-form problem; otherwise the gold is a letter indexing
  ``options`` (``multiple_choice``; its option text is kept as ``metadata.answer_text``);
- a free-form gold's type follows crystalbench's rule for golds (``numeric`` for numbers and
  numeric expressions, ``free_form`` for tuples, formulas and words): the source does not say;
- ``level``, ``subject`` and ``solution`` go to metadata; the question keeps its
  ``<image1>`` placeholders;
- the image comes from ``decoded_image``, else from the ``image`` path inside the local copy.
"""

from __future__ import annotations

import re
from typing import Any

from crystalbench.sources.base import (
    Draft,
    Skip,
    SourceAdapter,
    check_options,
    column_image,
    gold_answer_type,
    image_from_root,
    letter,
    register,
    string_list,
    text_field,
    upstream_text,
)
from crystalbench.sources.rows import UpstreamRow
from crystalbench.types import AnswerType

_LETTER = re.compile(r"\(?\s*([A-Za-z])\s*\)?\.?")


@register
class MathVision(SourceAdapter):
    """MathVision test (3,040; CRYSTAL took 3,039) and testmini (304)."""

    name = "mathvision"
    source = "mathvision"
    title = "MathVision"
    hub_id = "MathLLMs/MathVision"
    default_split = "test"
    splits = ("test", "testmini")
    license = "MIT"
    layouts = (
        "a snapshot of the hub repo (data/SPLIT-*.parquet), one .parquet file, or a "
        "save_to_disk folder"
    )
    image_columns = ("decoded_image",)
    required_columns = ("id", "question", "options", "answer")

    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """The ``id`` column."""
        return upstream_text(row, row.data.get("id"), "id")

    def stratum(self, row: UpstreamRow) -> str:
        """Subject, so a sample keeps the mix of maths areas."""
        return str(row.data.get("subject") or "unknown")

    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """One problem: options, a letter or open gold, level/subject/solution in metadata."""
        question = text_field(row, "question")
        options = check_options(row, string_list(row, "options"), "options")
        answer = text_field(row, "answer")
        metadata: dict[str, Any] = {}
        answer_type: AnswerType
        if options:
            match = _LETTER.fullmatch(answer)
            position = ord(match.group(1).upper()) - ord("A") if match else -1
            if not 0 <= position < len(options):
                raise row.ref.error(
                    f"a multiple-choice gold must be a letter A-{letter(len(options) - 1)}, "
                    f"got {answer!r}",
                    "answer",
                )
            answer = self.multiple_choice(options, position, metadata)
            answer_type = "multiple_choice"
        else:
            answer_type = gold_answer_type(answer)
            metadata["answer_type_from"] = "gold"
            self.count("free_form_problems")
        level = row.data.get("level")
        if level is not None:
            if isinstance(level, bool) or not isinstance(level, int):
                raise row.ref.error(f"expected an integer level, got {level!r}", "level")
            metadata["level"] = level
        for name in ("subject", "solution"):
            value = text_field(row, name, allow_empty=True)
            if value:
                metadata[name] = value
        path = row.data.get("image")
        if isinstance(path, str) and path:
            metadata["upstream_image"] = path
        image = column_image(row, "decoded_image")
        image_field = "decoded_image"
        if image is None:
            if not isinstance(path, str) or not path:
                raise row.ref.error(
                    "no image: decoded_image is empty and image names no file", "decoded_image"
                )
            image = image_from_root(row, path, self.root, "image")
            image_field = "image"
            self.count("image_from_path")
        return Draft(
            question=question,
            answer=answer,
            answer_type=answer_type,
            options=options,
            image=image,
            metadata=metadata,
            image_field=image_field,
        )
