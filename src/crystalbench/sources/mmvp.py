"""MMVP: 150 pairs of images that CLIP-style encoders confuse, one question each (300).

Published two ways:

- the original ``MMVP/MMVP`` hub repo (the same files as GitHub ``tsb0601/MMVP``):
  ``Questions.csv`` with columns ``Index`` (1-based), ``Question``, ``Options``
  (``"(a) Open (b) Closed"``) and ``Correct Answer`` (``"(a)"``), and the images in
  ``MMVP Images/{Index}.jpg``. It is not loadable with ``datasets``; pass the folder (or the
  CSV file) with ``--from``;
- ``lmms-lab-eval/MMVP`` (MIT, split ``train``), the canonical hub id here: the same columns
  plus ``image``, with the label corrections below already applied.

Conventions:

- options given as one string ``(a) ... (b) ...`` become a list; the gold ``(a)`` becomes
  ``A`` (``multiple_choice``);
- questions come in pairs (Index 2k+1 and 2k+2: same question, opposite answers); the pair
  number ``(Index - 1) // 2`` and both item ids are in metadata (``pair``, ``pair_items``), and
  a set holding only one question of a pair says so in ``build.json``;
- the known ground-truth errors in ``mmvp_corrections.json`` (each with its source) are
  applied unless ``--no-corrections``; a row that already carries the corrected label is
  counted as corrected upstream;
- a ``Questions.csv`` whose first column is spelt ``lndex`` (a typo found in some copies) is
  read as ``Index``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from crystalbench.errors import InputError
from crystalbench.sources.base import (
    Draft,
    Skip,
    SourceAdapter,
    column_image,
    int_field,
    register,
    text_field,
)
from crystalbench.sources.reading import RecordRows
from crystalbench.sources.rows import RowRef, RowSource, UpstreamRow
from crystalbench.types import BenchmarkItem

QUESTIONS_CSV = "Questions.csv"
"""The question file of the original MMVP layout."""

IMAGES_FOLDER = "MMVP Images"
"""The image folder of the original MMVP layout (``{Index}.jpg``)."""

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
"""Image file suffixes looked for, in order, for ``MMVP Images/{Index}``."""

CORRECTIONS_FILE = "mmvp_corrections.json"
"""Packaged ground-truth corrections (``crystalbench/sources/``)."""

CSV_ALIASES = {"lndex": "Index"}
"""Header spellings read as the published name."""

_OPTION = re.compile(r"\(([a-z])\)\s*(.*?)\s*(?=\([a-z]\)|$)", re.DOTALL)
_GOLD = re.compile(r"\(?\s*([a-zA-Z])\s*\)?\.?")


@dataclass(frozen=True)
class Correction:
    """One ground-truth correction: at 1-based ``index``, label ``old`` becomes ``new``."""

    index: int
    old: str
    new: str
    what: str
    sources: tuple[str, ...]


@lru_cache(maxsize=1)
def packaged_corrections() -> dict[int, Correction]:
    """The corrections shipped with crystalbench, by 1-based Index.

    Examples:
        >>> sorted(packaged_corrections())
        [99, 100, 279, 280]
    """
    text = (
        resources.files("crystalbench.sources")
        .joinpath(CORRECTIONS_FILE)
        .read_text(encoding="utf-8")
    )
    data = json.loads(text)
    if data.get("index_base") != 1:
        raise InputError("corrections must use the 1-based Index", path=CORRECTIONS_FILE)
    found: dict[int, Correction] = {}
    for entry in data["corrections"]:
        found[int(entry["index"])] = Correction(
            index=int(entry["index"]),
            old=entry["old"],
            new=entry["new"],
            what=entry["what"],
            sources=tuple(entry["sources"]),
        )
    return found


def parse_options(text: str) -> list[str]:
    """Options of an MMVP ``Options`` string, ``[]`` when it is not ``(a) ... (b) ...``.

    Examples:
        >>> parse_options("(a) Open (b) Closed")
        ['Open', 'Closed']
        >>> parse_options("Open or closed")
        []
    """
    entries = [(m.group(1), m.group(2).strip()) for m in _OPTION.finditer(text.strip())]
    if len(entries) < 2 or not text.strip().startswith("("):
        return []
    letters = [entry[0] for entry in entries]
    if letters != [chr(ord("a") + i) for i in range(len(letters))]:
        return []
    return [entry[1] for entry in entries]


def gold_letter(text: str) -> str | None:
    """``(a)`` -> ``A``; ``None`` when the text is not one letter.

    Examples:
        >>> gold_letter("(b)"), gold_letter("b"), gold_letter("(ab)")
        ('B', 'B', None)
    """
    match = _GOLD.fullmatch(text.strip())
    return match.group(1).upper() if match else None


def read_questions_csv(path: Path) -> tuple[list[dict[str, Any]], list[int], list[str]]:
    """Rows of ``Questions.csv`` with the line each starts on, and header aliases used."""
    try:
        handle = path.open("r", encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path=path) from None
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError("empty CSV file", path=path) from None
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", path=path, line=1) from None
        names = [column.strip() for column in header]
        aliases = [name for name in names if name in CSV_ALIASES]
        names = [CSV_ALIASES.get(name, name) for name in names]
        rows: list[dict[str, Any]] = []
        lines: list[int] = []
        start = reader.line_num + 1
        while True:
            try:
                values = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise InputError(f"malformed CSV ({exc})", path=path, line=start) from None
            if any(value.strip() for value in values):
                if len(values) != len(names):
                    raise InputError(
                        f"{len(values)} fields, the header has {len(names)}",
                        path=path,
                        line=start,
                    )
                rows.append(dict(zip(names, values, strict=True)))
                lines.append(start)
            start = reader.line_num + 1
    return rows, lines, aliases


@register
class MMVP(SourceAdapter):
    """MMVP's 300 questions (CRYSTAL took 299)."""

    name = "mmvp"
    source = "mmvp"
    title = "MMVP"
    hub_id = "lmms-lab-eval/MMVP"
    hub_configs: ClassVar[Mapping[str, str | None]] = {"lmms-lab-eval/MMVP": None}
    default_split = "train"
    splits = ("train",)
    license = "MIT (lmms-lab-eval/MMVP)"
    layouts = (
        "the original folder (Questions.csv + 'MMVP Images/{Index}.jpg', or the CSV file "
        "itself), or lmms-lab-eval/MMVP as Parquet or save_to_disk"
    )
    image_columns = ("image",)
    required_columns = ("Index", "Question", "Options", "Correct Answer")
    layout_hint = (
        "MMVP/MMVP on the hub holds only the images, its questions are in Questions.csv: "
        "download the repo (`huggingface-cli download MMVP/MMVP --repo-type dataset "
        "--local-dir DIR`) and pass --from DIR, or use lmms-lab-eval/MMVP"
    )

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._images: Path | None = None
        self._corrections = packaged_corrections() if self.options.corrections else {}
        if not self.options.corrections:
            self.notes.append("MMVP ground-truth corrections not applied (--no-corrections)")

    def open_local(self, path: Path, split: str) -> RowSource:
        """The original CSV + image folder, else a table copy of lmms-lab-eval/MMVP."""
        csv_file: Path | None = None
        if path.is_file() and path.suffix.lower() == ".csv":
            csv_file = path
        elif path.is_dir() and (path / QUESTIONS_CSV).is_file():
            csv_file = path / QUESTIONS_CSV
        if csv_file is None:
            return super().open_local(path, split)
        images = csv_file.parent / IMAGES_FOLDER
        if not images.is_dir():
            raise InputError(f"no '{IMAGES_FOLDER}' folder beside {csv_file.name}", path=images)
        self._images = images
        rows, lines, aliases = read_questions_csv(csv_file)
        for alias in aliases:
            self.notes.append(f"Questions.csv column {alias!r} read as {CSV_ALIASES[alias]!r}")
        where = str(csv_file)
        return RecordRows(
            "csv", [where, str(images)], rows, lambda i: RowRef(where, lines[i], is_line=True)
        )

    def upstream_id(self, row: UpstreamRow, split: str) -> str:
        """The 1-based ``Index``."""
        index = int_field(row, "Index")
        if index < 1:
            raise row.ref.error(f"Index is 1-based, got {index}", "Index")
        return str(index)

    def _image(self, row: UpstreamRow, index: int) -> bytes:
        if self._images is None:
            image = column_image(row, "image")
            if image is None:
                raise row.ref.error("no image", "image")
            return image
        for suffix in IMAGE_SUFFIXES:
            candidate = self._images / f"{index}{suffix}"
            if candidate.is_file():
                return candidate.read_bytes()
        raise row.ref.error(f"image '{IMAGES_FOLDER}/{index}.jpg' not found", "Index")

    def convert(self, row: UpstreamRow, split: str) -> Draft | Skip:
        """One question: options split, gold letter, pair, corrections."""
        index = int(self.upstream_id(row, split))
        question = text_field(row, "Question")
        options_text = text_field(row, "Options")
        options = parse_options(options_text)
        if not options:
            raise row.ref.error(
                f"expected options like '(a) Open (b) Closed', got {options_text!r}", "Options"
            )
        raw_gold = text_field(row, "Correct Answer")
        gold = gold_letter(raw_gold)
        if gold is None or ord(gold) - ord("A") >= len(options):
            raise row.ref.error(
                f"expected one of {', '.join(f'({chr(97 + i)})' for i in range(len(options)))}, "
                f"got {raw_gold!r}",
                "Correct Answer",
            )
        pair = (index - 1) // 2
        metadata: dict[str, Any] = {
            "index": index,
            "index_base": 1,
            "pair": pair,
            "pair_items": [f"{self.source}/{2 * pair + 1}", f"{self.source}/{2 * pair + 2}"],
            "options_text": options_text,
        }
        correction = self._corrections.get(index)
        if correction is not None:
            old, new = gold_letter(correction.old), gold_letter(correction.new)
            if gold == old:
                metadata["gold_before_correction"] = gold
                metadata["correction_sources"] = list(correction.sources)
                gold = new or gold
                self.count("corrections_applied")
                self.notes.append(
                    f"Index {index} ({correction.what}): gold {correction.old} -> "
                    f"{correction.new} ({', '.join(correction.sources)})"
                )
            elif gold == new:
                metadata["correction_sources"] = list(correction.sources)
                self.count("corrections_already_upstream")
                self.notes.append(
                    f"Index {index} ({correction.what}): already {correction.new} upstream"
                )
            else:
                raise row.ref.error(
                    f"the packaged correction expects {correction.old} or {correction.new}, "
                    f"got {raw_gold!r}",
                    "Correct Answer",
                )
        return Draft(
            question=question,
            answer=gold,
            answer_type="multiple_choice",
            options=options,
            image=self._image(row, index),
            metadata=metadata,
        )

    def finish(self, items: list[BenchmarkItem]) -> None:
        """Note pairs of which only one question is in the set."""
        present = {item.id for item in items}
        incomplete = sorted(
            {
                item.metadata["pair"]
                for item in items
                if any(member not in present for member in item.metadata["pair_items"])
            }
        )
        self.counters["pairs_complete"] = len({i.metadata["pair"] for i in items}) - len(incomplete)
        self.counters["pairs_incomplete"] = len(incomplete)
        for pair in incomplete:
            members = [f"{self.source}/{2 * pair + 1}", f"{self.source}/{2 * pair + 2}"]
            kept = [member for member in members if member in present]
            self.notes.append(
                f"pair {pair} is incomplete: only {', '.join(kept)} is in the set "
                "(a pair accuracy cannot count it)"
            )
