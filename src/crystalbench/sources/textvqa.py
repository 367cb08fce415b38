"""TextVQA: questions that need reading the text in an image (training pool).

Published two ways:

- the official release: ``TextVQA_0.5.1_{train,val,test}.json`` (an object whose ``data``
  list holds ``question_id``, ``question``, ``image_id``, ``answers`` (ten human answers;
  none in test), ``image_classes``, ``flickr_original_url``, ``set_name``...) and the images
  ``train_images/{image_id}.jpg`` (train and val) and ``test_images/{image_id}.jpg``;
- ``lmms-lab/textvqa`` (the canonical hub id here), Parquet files ``data/SPLIT-*.parquet``
  for ``train``, ``validation`` and ``test`` with the same fields plus ``image`` and
  ``ocr_tokens``.

Conventions:

- the gold is the most frequent of the ten human answers, counted after crystalbench's text
  normalisation (case, punctuation, articles; an answer that is only an article, such as the
  letter "a", counts as itself); a tie goes to the answer given first. All ten
  answers stay in ``metadata.answers`` (with ``answer_votes``, and ``answer_ties`` when
  tied) so a VQA-style accuracy rule can use them;
- the answer type is ``free_form`` for every item: TextVQA answers are read off the image and
  judged by agreement with the human answers, never with numeric tolerance ("1995" is not
  "1996");
- rows without human answers (the test split) are skipped with the reason ``no answers``;
- the upstream id is ``question_id``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from crystalbench.errors import InputError
from crystalbench.normalize import normalize_text
from crystalbench.sources.base import (
    Draft,
    Skip,
    SourceAdapter,
    column_image,
    register,
    string_list,
    text_field,
    upstream_text,
)
from crystalbench.sources.reading import json_rows
from crystalbench.sources.rows import RowSource, UpstreamRow

JSON_NAMES = {"train": "train", "validation": "val", "val": "val", "test": "test"}
"""Split name -> the name in ``TextVQA_0.5.1_{name}.json``."""

IMAGE_FOLDERS = {"train": "train_images", "val": "train_images", "test": "test_images"}
"""Release split -> its image folder (val images ship in ``train_images``)."""

_IMAGE_ID = re.compile(r"[A-Za-z0-9_-]+")

METADATA_COLUMNS = ("image_id", "set_name", "flickr_original_url", "image_classes", "ocr_tokens")
"""TextVQA columns copied into every item's metadata (when present)."""


def majority_answer(answers: list[str]) -> tuple[str, int, list[str]]:
    """``(gold, votes, other tied answers)`` of a list of human answers.

    Examples:
        >>> majority_answer(["Coca Cola", "coca-cola", "pepsi", "Coca Cola"])
        ('Coca Cola', 3, [])
        >>> majority_answer(["stop", "yield"])
        ('stop', 1, ['yield'])
        >>> majority_answer(["a", "A", "b"])
        ('a', 2, [])
    """
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for answer in answers:
        # normalize_text drops articles; an answer that is only "a" still counts as itself
        key = normalize_text(answer) or answer.strip().lower()
        if not key:
            continue
        counts[key] += 1
        first.setdefault(key, answer.strip())
    if not counts:
        return "", 0, []
    top = max(counts.values())
    tied = [key for key in first if counts[key] == top]  # first-seen order
    return first[tied[0]], top, [first[key] for key in tied[1:]]


def _json_metadata(value: Any) -> bool:
    return value is not None and value != [] and value != ""


@register
class TextVQA(SourceAdapter):
    """TextVQA train (34,602 questions; the CRYSTAL training pool took 24,094)."""

    name = "textvqa"
    source = "textvqa"
    title = "TextVQA"
    hub_id = "lmms-lab/textvqa"
    hub_configs: ClassVar[Mapping[str, str | None]] = {"lmms-lab/textvqa": None}
    default_split = "train"
    splits = ("train", "validation", "test")
    license = "CC BY 4.0 (annotations); images from Open Images (CC BY 2.0)"
    layouts = (
        "the official release (TextVQA_0.5.1_SPLIT.json + train_images/ or test_images/), "
        "lmms-lab/textvqa as Parquet (data/SPLIT-*.parquet), or a save_to_disk folder"
    )
    image_columns = ("image",)
    required_columns = ("question_id", "question", "answers")

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._images: Path | None = None

    def open_local(self, path: Path, split: str) -> RowSource:
        """The official JSON + image folder, else a table copy."""
        release = JSON_NAMES.get(split, split)
        json_file: Path | None = None
        if path.is_file() and path.suffix == ".json":
            json_file = path
        elif path.is_dir() and (path / f"TextVQA_0.5.1_{release}.json").is_file():
            json_file = path / f"TextVQA_0.5.1_{release}.json"
        if json_file is None:
            return super().open_local(path, split)
        images = json_file.parent / IMAGE_FOLDERS.get(release, "train_images")
        if not images.is_dir():
            raise InputError(f"no '{images.name}' folder beside {json_file.name}", path=images)
        self._images = images
        try:
            value = json.loads(json_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"malformed JSON ({exc.msg})", path=json_file, line=exc.lineno
            ) from None
        data = value.get("data") if isinstance(value, dict) else None
        if not isinstance(data, list):
            raise InputError("expected an object with a 'data' list", path=json_file)
        return json_rows(json_file, data, images)

    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """The ``question_id``."""
        return upstream_text(row, row.data.get("question_id"), "question_id")

    def stratum(self, row: UpstreamRow) -> str:
        """One stratum (TextVQA has no category column)."""
        return self.source

    def _image(self, row: UpstreamRow) -> bytes:
        if self._images is None:
            image = column_image(row, "image")
            if image is None:
                raise row.ref.error("no image", "image")
            return image
        image_id = text_field(row, "image_id")
        if not _IMAGE_ID.fullmatch(image_id):
            raise row.ref.error(f"unusable image_id {image_id!r}", "image_id")
        target = self._images / f"{image_id}.jpg"
        if not target.is_file():
            raise row.ref.error(f"image '{self._images.name}/{image_id}.jpg' not found", "image_id")
        return target.read_bytes()

    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """The majority answer as gold, all ten kept."""
        question = text_field(row, "question")
        answers = string_list(row, "answers")
        gold, votes, ties = majority_answer(answers)
        if not gold:
            self.count("skipped_no_answers")
            return Skip("no answers")
        metadata: dict[str, Any] = {"answers": answers, "answer_votes": votes}
        if ties:
            metadata["answer_ties"] = ties
            self.count("majority_ties")
        for name in METADATA_COLUMNS:
            value = row.data.get(name)
            if _json_metadata(value):
                metadata[name] = value
        return Draft(
            question=question,
            answer=gold,
            answer_type="free_form",
            image=self._image(row),
            metadata=metadata,
        )
