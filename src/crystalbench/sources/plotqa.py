"""PlotQA: questions over scientific plots (Methani et al., WACV 2020).

There is no canonical hub copy: the official release (GitHub ``NiteshMethani/PlotQA``, files
on Google Drive) gives, per split (``train``, ``val``, ``test``), a ``png/`` folder of plots
named ``{image_index}.png`` and ``qa_pairs`` JSON files (``qa_pairs_V1.json``: 8.19 M pairs
over all splits, ``qa_pairs_V2.json``: 28.95 M). Each pair has ``image_index``,
``question_string``, ``answer``, ``answer_bbox``, ``template`` and ``type`` (the plot type:
``vbar_categorical``, ``hbar_categorical``, ``dot_line``, ``line``). The file holds a list of
pairs, or an object whose ``qa_pairs`` key holds it; both are read.

``--from`` takes a ``qa_pairs`` JSON file (``png/`` beside it), a split folder (``png/`` and
one ``qa_pairs*.json``), or the release folder holding one folder per split.

Conventions:

- the split is far too large to take whole: a build needs ``--sample N`` (a seeded sample
  stratified by question template and plot type, see
  :func:`~crystalbench.sources.build.stratified_sample`) or ``--manifest``. The build's
  ``manifest.json`` reproduces the draw;
- an answer the JSON stores as a number is ``numeric`` (integral floats written without
  ``.0``); ``Yes``/``No`` is ``yes_no``; any other string (a label, a year on a category axis)
  is ``free_form``. ``metadata.answer_json_type`` records what the JSON held;
- the upstream id is ``SPLIT-POSITION``: the pair's 0-based position in the ``qa_pairs`` list.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from crystalbench.errors import InputError
from crystalbench.sources.base import (
    Draft,
    Skip,
    SourceAdapter,
    int_field,
    register,
    text_field,
)
from crystalbench.sources.reading import json_rows
from crystalbench.sources.rows import RowSource, UpstreamRow
from crystalbench.types import AnswerType

PNG_FOLDER = "png"
"""Folder of a split's plot images (``{image_index}.png``)."""


def format_number(value: int | float) -> str:
    """A JSON number as the gold text: integral floats without ``.0``, others exactly.

    Examples:
        >>> format_number(82.0172), format_number(5.0), format_number(12)
        ('82.0172', '5', '12')
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def load_qa_pairs(path: Path) -> list[Any]:
    """The pairs of a ``qa_pairs`` JSON file (a list, or an object with a ``qa_pairs`` list)."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            value = json.load(handle)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", path=path, line=exc.lineno
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", path=path) from None
    if isinstance(value, dict):
        value = value.get("qa_pairs")
    if not isinstance(value, list):
        raise InputError(
            "expected a list of QA pairs or an object with a 'qa_pairs' list", path=path
        )
    return value


@register
class PlotQA(SourceAdapter):
    """PlotQA, sampled: CRYSTAL took about 250 test pairs."""

    name = "plotqa"
    source = "plotqa"
    title = "PlotQA"
    hub_id = None
    default_split = "test"
    splits = ("train", "val", "test")
    license = "MIT (NiteshMethani/PlotQA)"
    layouts = (
        "the official release: a qa_pairs JSON file with png/ beside it, a split folder "
        "(png/ + qa_pairs*.json), or the folder holding train/ val/ test/"
    )
    image_columns = ()
    required_columns = ("image_index", "question_string", "answer", "template", "type")
    needs_selection = True

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._png: Path | None = None

    def open_local(self, path: Path, split: str) -> RowSource:
        """The release's JSON and png folder."""
        if path.is_file():
            qa_file = path
        else:
            base = path / split if (path / split).is_dir() else path
            found = sorted(base.glob("qa_pairs*.json"))
            if not found:
                raise InputError(f"no qa_pairs*.json file for split {split!r}", path=base)
            if len(found) > 1:
                names = ", ".join(p.name for p in found)
                raise InputError(
                    f"several QA files ({names}); pass the one you mean with --from", path=base
                )
            qa_file = found[0]
        png = qa_file.parent / PNG_FOLDER
        if not png.is_dir():
            raise InputError(f"no '{PNG_FOLDER}' folder beside {qa_file.name}", path=png)
        self._png = png
        return json_rows(qa_file, load_qa_pairs(qa_file), png, "QA pair")

    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """``SPLIT-POSITION`` in the ``qa_pairs`` list."""
        return f"{split}-{row.index}"

    def stratum(self, row: UpstreamRow) -> str:
        """``template|type``: question template and plot type."""
        return f"{row.data.get('template')}|{row.data.get('type')}"

    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """One QA pair with its plot; numeric answers stay numeric."""
        image_index = int_field(row, "image_index")
        if image_index < 0:
            raise row.ref.error(f"image_index must be >= 0, got {image_index}", "image_index")
        question = text_field(row, "question_string")
        template = text_field(row, "template")
        plot_type = text_field(row, "type")
        value = row.data.get("answer")
        answer_type: AnswerType
        if isinstance(value, bool) or value is None:
            raise row.ref.error(f"expected a number or text, got {value!r}", "answer")
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                raise row.ref.error(f"answer {value!r} is not a finite number", "answer")
            answer, answer_type, json_type = format_number(value), "numeric", "number"
            self.count("numeric")
        elif isinstance(value, str) and value.strip():
            answer = value.strip()
            json_type = "string"
            if answer.lower() in ("yes", "no"):
                answer_type = "yes_no"
                self.count("yes_no")
            else:
                answer_type = "free_form"
                self.count("text")
        else:
            raise row.ref.error(f"expected a number or text, got {value!r}", "answer")
        assert self._png is not None
        image_file = self._png / f"{image_index}.png"
        if not image_file.is_file():
            raise row.ref.error(f"image '{PNG_FOLDER}/{image_index}.png' not found", "image_index")
        metadata: dict[str, Any] = {
            "image_index": image_index,
            "template": template,
            "plot_type": plot_type,
            "answer_json_type": json_type,
        }
        bbox = row.data.get("answer_bbox")
        if bbox:
            metadata["answer_bbox"] = bbox
        return Draft(
            question=question,
            answer=answer,
            answer_type=answer_type,
            image=image_file.read_bytes(),
            metadata=metadata,
        )
