"""Each CRYSTAL source's exact published layout, written by code from rows in its own columns.

Every writer takes rows with the source's own column names and writes them the way the source
publishes them: Parquet shards named like the hub's (pyarrow, with the hub's ``huggingface``
schema metadata so ``datasets`` reads them too), ``save_to_disk`` folders (``datasets``),
MMVP's ``Questions.csv`` + ``MMVP Images/``, PlotQA's ``qa_pairs`` JSON + ``png/``, and
TextVQA's release JSON + ``train_images/``.

Two users: the tests of ``crystal data build`` (``tests/sources/source_fixtures.py`` gives them
rows that exercise each adapter's edge cases; images are drawn with :func:`draw_image`, each
row's different), and :mod:`tools.source_examples.copies`, which writes the bundled sample's
items in every layout as the package's example data
(``src/crystalbench/sources/examples``). A repository tool, not part of the installed
package; it needs ``datasets`` and ``pyarrow`` (the ``hub`` extra).
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

__all__ = [
    "MATHVISION_COLUMNS",
    "MC_INSTRUCTION",
    "MMVP_COLUMNS",
    "OPEN_INSTRUCTION",
    "REALWORLDQA_COLUMNS",
    "SCIENCEQA_COLUMNS",
    "TEXTVQA_COLUMNS",
    "draw_image",
    "hub_features",
    "image_struct",
    "save_to_disk",
    "write_mathvision",
    "write_mmvp_lmms",
    "write_mmvp_original",
    "write_parquet",
    "write_plotqa",
    "write_realworldqa",
    "write_scienceqa",
    "write_textvqa_release",
]

ImageFor = Callable[[Mapping[str, Any]], bytes]
"""The image bytes of one row (a writer's ``image_for`` argument)."""


def draw_image(seed: int, *, size: tuple[int, int] = (48, 32), fmt: str = "PNG") -> bytes:
    """A small picture, different for every seed, encoded as ``fmt``.

    Examples:
        >>> draw_image(1) == draw_image(1), draw_image(1) == draw_image(2)
        (True, False)
    """
    rng = random.Random(seed)
    image = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    for _ in range(4):
        x0, y0 = rng.randrange(size[0] - 8), rng.randrange(size[1] - 8)
        box = (x0, y0, x0 + rng.randrange(4, 20), y0 + rng.randrange(4, 14))
        draw.rectangle(box, fill=tuple(rng.randrange(256) for _ in range(3)))
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def image_struct(data: bytes | None, path: str | None = None) -> dict[str, Any] | None:
    """The hub's Arrow image struct (``{"bytes", "path"}``), or ``None`` for no image."""
    if data is None:
        return None
    return {"bytes": data, "path": path}


# ---------------------------------------------------------------------------------------------
# Parquet and save_to_disk, with the hub's features
# ---------------------------------------------------------------------------------------------


def hub_features(columns: Mapping[str, str]) -> Any:
    """``datasets.Features`` for columns given as ``string``, ``int64``, ``int32``, ``int8``,
    ``image`` or ``strings`` (a list of strings)."""
    import datasets

    kinds = {
        "string": lambda: datasets.Value("string"),
        "int64": lambda: datasets.Value("int64"),
        "int32": lambda: datasets.Value("int32"),
        "int8": lambda: datasets.Value("int8"),
        "image": datasets.Image,
        "strings": lambda: datasets.List(datasets.Value("string")),
    }
    return datasets.Features({name: kinds[kind]() for name, kind in columns.items()})


def write_parquet(
    path: Path, rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str]
) -> Path:
    """Rows as one Parquet file with the hub's schema (``huggingface`` metadata included)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = hub_features(columns).arrow_schema
    table = pa.Table.from_pylist([dict(row) for row in rows], schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def save_to_disk(
    path: Path, splits: Mapping[str, Sequence[Mapping[str, Any]]], columns: Mapping[str, str]
) -> Path:
    """Rows per split as ``DatasetDict.save_to_disk`` writes them (one split: a ``Dataset``
    when ``splits`` has the single key ``""``)."""
    import datasets

    datasets.disable_progress_bars()
    features = hub_features(columns)
    built = {
        name: datasets.Dataset.from_list([dict(row) for row in rows], features=features)
        for name, rows in splits.items()
    }
    if list(built) == [""]:
        built[""].save_to_disk(str(path))
    else:
        datasets.DatasetDict(built).save_to_disk(str(path))
    return path


# ---------------------------------------------------------------------------------------------
# MathVision: MathLLMs/MathVision
# ---------------------------------------------------------------------------------------------

MATHVISION_COLUMNS = {
    "id": "string",
    "question": "string",
    "options": "strings",
    "image": "string",
    "decoded_image": "image",
    "answer": "string",
    "solution": "string",
    "level": "int64",
    "subject": "string",
}


def write_mathvision(
    root: Path,
    rows: Sequence[Mapping[str, Any]],
    *,
    split: str = "test",
    image_for: ImageFor | None = None,
) -> Path:
    """A snapshot of ``MathLLMs/MathVision``: ``data/SPLIT-00000-of-00001-*.parquet`` and the
    ``images/`` files the ``image`` column names (written for rows without pixels, with
    ``image_for``, else drawn)."""
    write_parquet(
        root / "data" / f"{split}-00000-of-00001-5e3f8c21.parquet", rows, MATHVISION_COLUMNS
    )
    for row in rows:
        if row.get("decoded_image") is None and row.get("image"):
            target = root / row["image"]
            target.parent.mkdir(parents=True, exist_ok=True)
            data = image_for(row) if image_for else draw_image(100 + int(row["id"]))
            target.write_bytes(data)
    return root


# ---------------------------------------------------------------------------------------------
# ScienceQA-IMG: lmms-lab/ScienceQA, config ScienceQA-IMG
# ---------------------------------------------------------------------------------------------

SCIENCEQA_COLUMNS = {
    "image": "image",
    "question": "string",
    "choices": "strings",
    "answer": "int8",
    "hint": "string",
    "task": "string",
    "grade": "string",
    "subject": "string",
    "topic": "string",
    "category": "string",
    "skill": "string",
    "lecture": "string",
    "solution": "string",
}


def write_scienceqa(
    root: Path,
    splits: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    config: str = "ScienceQA-IMG",
) -> Path:
    """A snapshot of ``lmms-lab/ScienceQA``: ``CONFIG/SPLIT-00000-of-00001.parquet``."""
    for split, rows in splits.items():
        write_parquet(root / config / f"{split}-00000-of-00001.parquet", rows, SCIENCEQA_COLUMNS)
    return root


# ---------------------------------------------------------------------------------------------
# RealWorldQA: xai-org/RealworldQA
# ---------------------------------------------------------------------------------------------

REALWORLDQA_COLUMNS = {"image": "image", "question": "string", "answer": "string"}

MC_INSTRUCTION = (
    "Please answer directly with only the letter of the correct option and nothing else."
)
"""The instruction RealWorldQA appends to a question with lettered options."""

OPEN_INSTRUCTION = "Please answer directly with a single word or number."
"""The instruction RealWorldQA appends to an open question."""


def write_realworldqa(root: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """A snapshot of the hub repo: two shards ``data/test-0000N-of-00002-*.parquet``."""
    rows = list(rows)
    half = (len(rows) + 1) // 2
    write_parquet(
        root / "data" / "test-00000-of-00002-0c1d2e3f.parquet", rows[:half], REALWORLDQA_COLUMNS
    )
    write_parquet(
        root / "data" / "test-00001-of-00002-4a5b6c7d.parquet", rows[half:], REALWORLDQA_COLUMNS
    )
    return root


# ---------------------------------------------------------------------------------------------
# MMVP: MMVP/MMVP (Questions.csv + MMVP Images) and lmms-lab-eval/MMVP
# ---------------------------------------------------------------------------------------------

MMVP_COLUMNS = {
    "Index": "int32",
    "Question": "string",
    "Options": "string",
    "Correct Answer": "string",
    "image": "image",
}


def _mmvp_image(row: Mapping[str, Any], image_for: ImageFor | None) -> bytes:
    return image_for(row) if image_for else draw_image(500 + int(row["Index"]), fmt="JPEG")


def write_mmvp_original(
    root: Path,
    rows: Sequence[Mapping[str, Any]],
    *,
    header: Sequence[str] = ("Index", "Question", "Options", "Correct Answer"),
    image_for: ImageFor | None = None,
) -> Path:
    """The ``MMVP/MMVP`` repo: ``Questions.csv`` and ``MMVP Images/{Index}.jpg``."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / "Questions.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row["Index"], row["Question"], row["Options"], row["Correct Answer"]])
    images = root / "MMVP Images"
    images.mkdir(exist_ok=True)
    for row in rows:
        (images / f"{row['Index']}.jpg").write_bytes(_mmvp_image(row, image_for))
    return root


def write_mmvp_lmms(
    root: Path, rows: Sequence[Mapping[str, Any]], *, image_for: ImageFor | None = None
) -> Path:
    """A snapshot of ``lmms-lab-eval/MMVP``: ``data/train-00000-of-00001.parquet`` with images."""
    table = [{**row, "image": image_struct(_mmvp_image(row, image_for))} for row in rows]
    write_parquet(root / "data" / "train-00000-of-00001.parquet", table, MMVP_COLUMNS)
    return root


# ---------------------------------------------------------------------------------------------
# PlotQA: the official release
# ---------------------------------------------------------------------------------------------


def write_plotqa(
    root: Path,
    pairs: Sequence[Mapping[str, Any]],
    *,
    split: str = "test",
    name: str = "qa_pairs_V1.json",
    wrapped: bool = True,
    image_for: Callable[[int], bytes] | None = None,
) -> Path:
    """A release folder: ``SPLIT/png/{image_index}.png`` (``image_for(index)``, else drawn) and
    ``SPLIT/NAME`` (``{"qa_pairs": [...]}`` when ``wrapped``, a bare list otherwise). Returns
    the release folder."""
    folder = root / split
    (folder / "png").mkdir(parents=True, exist_ok=True)
    for index in sorted(
        {int(p["image_index"]) for p in pairs if isinstance(p.get("image_index"), int)}
    ):
        data = image_for(index) if image_for else draw_image(600 + index, size=(64, 48))
        (folder / "png" / f"{index}.png").write_bytes(data)
    value: Any = {"qa_pairs": list(pairs)} if wrapped else list(pairs)
    (folder / name).write_text(json.dumps(value), encoding="utf-8")
    return root


# ---------------------------------------------------------------------------------------------
# TextVQA: the 0.5.1 release and lmms-lab/textvqa
# ---------------------------------------------------------------------------------------------

TEXTVQA_COLUMNS = {
    "image_id": "string",
    "question_id": "int64",
    "question": "string",
    "question_tokens": "strings",
    "image": "image",
    "image_width": "int64",
    "image_height": "int64",
    "flickr_original_url": "string",
    "flickr_300k_url": "string",
    "answers": "strings",
    "image_classes": "strings",
    "set_name": "string",
    "ocr_tokens": "strings",
}


def write_textvqa_release(
    root: Path, rows: Sequence[Mapping[str, Any]], *, split: str = "train"
) -> Path:
    """The release: ``TextVQA_0.5.1_SPLIT.json`` (``{"data": [...]}``) and
    ``train_images/{image_id}.jpg`` (drawn, one per row)."""
    rows = list(rows)
    root.mkdir(parents=True, exist_ok=True)
    value = {
        "dataset_type": split,
        "dataset_name": "textvqa",
        "dataset_version": "0.5.1",
        "data": rows,
    }
    (root / f"TextVQA_0.5.1_{split}.json").write_text(json.dumps(value), encoding="utf-8")
    images = root / ("test_images" if split == "test" else "train_images")
    images.mkdir(exist_ok=True)
    for position, row in enumerate(rows):
        (images / f"{row['image_id']}.jpg").write_bytes(draw_image(700 + position, fmt="JPEG"))
    return root
