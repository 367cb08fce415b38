"""RealWorldQA: real-world spatial questions (765, CC BY-ND 4.0).

Published as ``xai-org/RealworldQA`` (split ``test``; mirrors ``lmms-lab/RealWorldQA``,
``lmms-lab-encoder/RealWorldQA``, ``visheratin/realworldqa``) with columns ``image``,
``question`` and ``answer`` only: no id and no options column. The options and an answering
instruction are written inside ``question``::

    Which object is closer to the camera?
    A. The car
    B. The tree
    Please answer directly with only the letter of the correct option and nothing else.

or, for open questions, ``"How many cars are there? Please answer directly with a single word
or number."``.

Conventions:

- option lines (``A. text``, ``B) text``; letters running from A) are moved into
  ``options``; the trailing instruction (from "Please answer" to the end) is removed; the
  question shown to the model is what remains. The original text is
  ``metadata.original_question`` and the instruction ``metadata.instruction``;
- with options the gold must be one of their letters (``multiple_choice``; a gold written as
  an option's text is turned into its letter and counted); without options the gold's type
  follows crystalbench's rule for golds (``numeric``, ``yes_no`` or ``free_form``);
- the upstream id is ``SPLIT-ROW``: the row's 0-based position in the split as published.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from crystalbench.normalize import normalize_text
from crystalbench.sources.base import (
    Draft,
    Skip,
    SourceAdapter,
    column_image,
    gold_answer_type,
    letter,
    register,
    text_field,
)
from crystalbench.sources.rows import UpstreamRow
from crystalbench.types import AnswerType

_OPTION = re.compile(r"^\s*([A-Z])[.)]\s+(\S.*?)\s*$")
_INSTRUCTION = re.compile(r"(?:^|(?<=[\s?.!:]))(Please\s+answer\b.*)\Z", re.IGNORECASE | re.DOTALL)
_GOLD_LETTER = re.compile(r"\(?\s*([A-Z])\s*\)?\.?")


def split_question(text: str) -> tuple[str, list[str], str]:
    """``(question, options, instruction)`` of a RealWorldQA question text.

    Examples:
        >>> split_question("Which side?\\nA. Left\\nB. Right\\nPlease answer directly with "
        ...                "only the letter of the correct option and nothing else.")[:2]
        ('Which side?', ['Left', 'Right'])
        >>> split_question("How many cars? Please answer directly with a single word or number.")
        ('How many cars?', [], 'Please answer directly with a single word or number.')
    """
    kept: list[str] = []
    options: list[str] = []
    letters: list[str] = []
    for line in text.splitlines():
        match = _OPTION.match(line)
        if match is not None and (
            (not letters and match.group(1) == "A")
            or (letters and ord(match.group(1)) == ord(letters[-1]) + 1)
        ):
            letters.append(match.group(1))
            options.append(match.group(2))
        else:
            kept.append(line)
    if len(options) == 1:  # a lone "A. ..." line is part of the question, not an option list
        kept, options = text.splitlines(), []
    body = "\n".join(kept).strip()
    instruction = ""
    found = _INSTRUCTION.search(body)
    if found is not None:
        instruction = found.group(1).strip()
        body = body[: found.start(1)].rstrip()
    return body, options, instruction


@register
class RealWorldQA(SourceAdapter):
    """RealWorldQA test: multiple-choice letters and short open answers."""

    name = "realworldqa"
    source = "realworldqa"
    title = "RealWorldQA"
    hub_id = "xai-org/RealworldQA"
    hub_configs: ClassVar[Mapping[str, str | None]] = {
        "xai-org/RealworldQA": None,
        "lmms-lab/RealWorldQA": None,
        "lmms-lab-encoder/RealWorldQA": None,
        "visheratin/realworldqa": None,
    }
    default_split = "test"
    splits = ("test",)
    license = "CC BY-ND 4.0"
    layouts = (
        "a snapshot of the hub repo (data/SPLIT-*.parquet), one .parquet file, or a "
        "save_to_disk folder"
    )
    image_columns = ("image",)
    required_columns = ("question", "answer")

    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """``SPLIT-ROW`` (RealWorldQA has no id column)."""
        return f"{split}-{row.index}"

    def stratum(self, row: UpstreamRow) -> str:
        """Multiple choice or open, so a sample keeps their mix."""
        return "options" if split_question(str(row.data.get("question") or ""))[1] else "open"

    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """Options out of the question text, the instruction removed."""
        original = text_field(row, "question")
        gold = text_field(row, "answer")
        question, options, instruction = split_question(original)
        if not question:
            raise row.ref.error("no question text left once options are taken out", "question")
        metadata: dict[str, Any] = {"original_question": original}
        if instruction:
            metadata["instruction"] = instruction
            self.count("instruction_removed")
        answer_type: AnswerType
        if options:
            position = -1
            match = _GOLD_LETTER.fullmatch(gold)
            if match is not None:
                position = ord(match.group(1)) - ord("A")
            else:
                target = normalize_text(gold)
                texts = [normalize_text(option) for option in options]
                if target and texts.count(target) == 1:
                    position = texts.index(target)
                    metadata["gold_as_written"] = gold
                    self.count("gold_text_to_letter")
            if not 0 <= position < len(options):
                raise row.ref.error(
                    f"the question lists options A-{letter(len(options) - 1)} but the answer "
                    f"{gold!r} names none of them",
                    "answer",
                )
            answer = self.multiple_choice(options, position, metadata)
            answer_type = "multiple_choice"
        else:
            answer = gold
            answer_type = gold_answer_type(gold)
            metadata["answer_type_from"] = "gold"
            self.count("open")
        image = column_image(row, "image")
        if image is None:
            raise row.ref.error("no image", "image")
        return Draft(
            question=question,
            answer=answer,
            answer_type=answer_type,
            options=options,
            image=image,
            metadata=metadata,
        )
