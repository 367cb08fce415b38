"""Tiny copies of each source dataset in its exact published layout, written by code.

Every writer takes rows with the source's own column names and writes them the way the source
publishes them: Parquet shards named like the hub's (pyarrow, with the hub's ``huggingface``
schema metadata so ``datasets`` reads them too), ``save_to_disk`` folders (``datasets``),
MMVP's ``Questions.csv`` + ``MMVP Images/``, PlotQA's ``qa_pairs`` JSON + ``png/``, and
TextVQA's release JSON + ``train_images/``. Images are drawn with Pillow; each row's image is
different (its seed draws other shapes and colours).

Tests import it by name (``tests/`` is on ``sys.path``): ``from source_fixtures import ...``.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw


def draw_image(seed: int, *, size: tuple[int, int] = (48, 32), fmt: str = "PNG") -> bytes:
    """A small picture, different for every seed, encoded as ``fmt``."""
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
    """The hub's Arrow image struct."""
    if data is None:
        return None
    return {"bytes": data, "path": path}


# ---------------------------------------------------------------------------------------------
# Parquet and save_to_disk, with the hub's features
# ---------------------------------------------------------------------------------------------


def _features(columns: Mapping[str, str]) -> Any:
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

    schema = _features(columns).arrow_schema
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
    features = _features(columns)
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


def mathvision_rows() -> list[dict[str, Any]]:
    """Five problems: multiple choice, a number, a radical, a tuple, a path-only image."""
    return [
        {
            "id": "1",
            "question": "<image1> Which of the shapes has the largest area?",
            "options": ["A", "B", "C", "D", "E"],
            "image": "images/1.jpg",
            "decoded_image": image_struct(draw_image(1, fmt="JPEG"), "1.jpg"),
            "answer": "C",
            "solution": "",
            "level": 2,
            "subject": "metric geometry - area",
        },
        {
            "id": "2",
            "question": "How many triangles are in the figure <image1>?",
            "options": [],
            "image": "images/2.jpg",
            "decoded_image": image_struct(draw_image(2, fmt="JPEG"), "2.jpg"),
            "answer": "12",
            "solution": "Count them row by row: 5 + 4 + 3 = 12.",
            "level": 1,
            "subject": "counting",
        },
        {
            "id": "5",
            "question": "The square has side 2. What is the length of its diagonal? <image1>",
            "options": [],
            "image": "images/5.png",
            "decoded_image": image_struct(draw_image(5), "5.png"),
            "answer": "2\\sqrt{2}",
            "solution": "",
            "level": 3,
            "subject": "metric geometry - length",
        },
        {
            "id": "7",
            "question": "Give the coordinates of point P. <image1>",
            "options": [],
            "image": "images/7.png",
            "decoded_image": image_struct(draw_image(7), "7.png"),
            "answer": "(1,2)",
            "solution": "",
            "level": 4,
            "subject": "analytic geometry",
        },
        {
            "id": "9",
            "question": "Which net folds into the cube shown? <image1>",
            "options": ["1", "2", "3", "4", "5"],
            "image": "images/9.png",
            "decoded_image": None,
            "answer": "E",
            "solution": "",
            "level": 5,
            "subject": "solid geometry",
        },
    ]


def write_mathvision(
    root: Path, rows: Sequence[Mapping[str, Any]] | None = None, *, split: str = "test"
) -> Path:
    """A snapshot of ``MathLLMs/MathVision``: ``data/SPLIT-00000-of-00001-*.parquet`` and the
    ``images/`` files the ``image`` column names (written for rows without pixels)."""
    rows = list(rows if rows is not None else mathvision_rows())
    write_parquet(
        root / "data" / f"{split}-00000-of-00001-5e3f8c21.parquet", rows, MATHVISION_COLUMNS
    )
    for row in rows:
        if row.get("decoded_image") is None and row.get("image"):
            target = root / row["image"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(draw_image(100 + int(row["id"])))
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


def scienceqa_rows(split: str = "test", *, with_text_only: bool = False) -> list[dict[str, Any]]:
    """Three image questions (one with a hint); optionally a text-only one in between."""
    base = 300 if split == "train" else 200
    rows: list[dict[str, Any]] = [
        {
            "image": image_struct(draw_image(base + 1)),
            "question": "Which country is highlighted?",
            "choices": ["Palau", "the Federated States of Micronesia", "Tonga"],
            "answer": 1,
            "hint": "",
            "task": "closed choice",
            "grade": "grade5",
            "subject": "social science",
            "topic": "geography",
            "category": "Oceania: geography",
            "skill": "Identify countries of Oceania",
            "lecture": "",
            "solution": "This country is the Federated States of Micronesia.",
        },
        {
            "image": image_struct(draw_image(base + 2)),
            "question": "Which animal's feet are also adapted for swimming?",
            "choices": ["duck", "cat"],
            "answer": 0,
            "hint": "Sea otters have webbed feet. Their feet are adapted for swimming.",
            "task": "closed choice",
            "grade": "grade3",
            "subject": "natural science",
            "topic": "biology",
            "category": "Adaptations",
            "skill": "Animal adaptations: feet",
            "lecture": "An adaptation is an inherited trait.",
            "solution": "Look at the picture of the sea otter.",
        },
        {
            "image": image_struct(draw_image(base + 3)),
            "question": "What is the direction of this push?",
            "choices": ["away from the hand", "toward the hand", "sideways", "up"],
            "answer": 3,
            "hint": "",
            "task": "closed choice",
            "grade": "grade4",
            "subject": "natural science",
            "topic": "physics",
            "category": "Force and motion",
            "skill": "Identify directions of forces",
            "lecture": "",
            "solution": "",
        },
    ]
    if with_text_only:
        rows.insert(
            1,
            {
                **rows[0],
                "image": None,
                "question": "Which word would you find on a dictionary page?",
                "choices": ["apple", "zebra"],
                "answer": 0,
                "subject": "language science",
            },
        )
    return rows


def write_scienceqa(
    root: Path,
    splits: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    *,
    config: str = "ScienceQA-IMG",
) -> Path:
    """A snapshot of ``lmms-lab/ScienceQA``: ``CONFIG/SPLIT-00000-of-00001.parquet``; a
    ``ScienceQA-FULL`` folder is written too, with a text-only question in each split."""
    splits = splits or {"train": scienceqa_rows("train"), "test": scienceqa_rows("test")}
    for split, rows in splits.items():
        write_parquet(root / config / f"{split}-00000-of-00001.parquet", rows, SCIENCEQA_COLUMNS)
        if config == "ScienceQA-IMG":
            full = scienceqa_rows(split, with_text_only=True)
            write_parquet(
                root / "ScienceQA-FULL" / f"{split}-00000-of-00001.parquet", full, SCIENCEQA_COLUMNS
            )
    return root


# ---------------------------------------------------------------------------------------------
# RealWorldQA: xai-org/RealworldQA
# ---------------------------------------------------------------------------------------------

REALWORLDQA_COLUMNS = {"image": "image", "question": "string", "answer": "string"}

MC_INSTRUCTION = (
    "Please answer directly with only the letter of the correct option and nothing else."
)
OPEN_INSTRUCTION = "Please answer directly with a single word or number."


def realworldqa_rows() -> list[dict[str, Any]]:
    """Four questions: two with embedded options, a count, a yes/no."""
    return [
        {
            "image": image_struct(draw_image(401, fmt="JPEG")),
            "question": "In which direction is the road curving?\nA. Left\nB. Right\n"
            f"C. Straight\n{MC_INSTRUCTION}",
            "answer": "B",
        },
        {
            "image": image_struct(draw_image(402, fmt="JPEG")),
            "question": f"How many traffic lights are visible? {OPEN_INSTRUCTION}",
            "answer": "3",
        },
        {
            "image": image_struct(draw_image(403, fmt="JPEG")),
            "question": f"Is the car closer than the sign? {OPEN_INSTRUCTION}",
            "answer": "Yes",
        },
        {
            "image": image_struct(draw_image(404, fmt="JPEG")),
            "question": f"Which object is larger?\nA. The truck\nB. The bicycle\n{MC_INSTRUCTION}",
            "answer": "A",
        },
    ]


def write_realworldqa(root: Path, rows: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """A snapshot of the hub repo: two shards ``data/test-0000N-of-00002-*.parquet``."""
    rows = list(rows if rows is not None else realworldqa_rows())
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


def mmvp_rows(indices: Sequence[int] = (1, 2, 3, 4)) -> list[dict[str, Any]]:
    """Questions at these 1-based indices, pairs answering (a) then (b); 99/100 and 279/280
    carry the published (wrong) labels."""
    questions = {
        0: ("Are the butterfly's wings closer to being open or closed?", "(a) Open (b) Closed"),
        1: ("Is the dog facing left or right from the camera's perspective?", "(a) Left (b) Right"),
    }
    rows = []
    for index in indices:
        pair = (index - 1) // 2
        question, options = questions.get(pair % 2, questions[0])
        if pair == 49:
            question, options = "Are the elephant's tusks visible?", "(a) Yes (b) No"
        if pair == 139:
            question, options = "Is the person standing or sitting?", "(a) Standing (b) Sitting"
        gold = "(a)" if index % 2 == 1 else "(b)"
        rows.append(
            {"Index": index, "Question": question, "Options": options, "Correct Answer": gold}
        )
    return rows


def write_mmvp_original(
    root: Path,
    rows: Sequence[Mapping[str, Any]] | None = None,
    *,
    header: Sequence[str] = ("Index", "Question", "Options", "Correct Answer"),
) -> Path:
    """The ``MMVP/MMVP`` repo: ``Questions.csv`` and ``MMVP Images/{Index}.jpg``."""
    rows = list(rows if rows is not None else mmvp_rows())
    root.mkdir(parents=True, exist_ok=True)
    with (root / "Questions.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row["Index"], row["Question"], row["Options"], row["Correct Answer"]])
    images = root / "MMVP Images"
    images.mkdir(exist_ok=True)
    for row in rows:
        (images / f"{row['Index']}.jpg").write_bytes(
            draw_image(500 + int(row["Index"]), fmt="JPEG")
        )
    return root


def write_mmvp_lmms(root: Path, rows: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """A snapshot of ``lmms-lab-eval/MMVP``: ``data/train-00000-of-00001.parquet`` with images."""
    rows = [
        {**row, "image": image_struct(draw_image(500 + int(row["Index"]), fmt="JPEG"))}
        for row in (rows if rows is not None else mmvp_rows())
    ]
    write_parquet(root / "data" / "train-00000-of-00001.parquet", rows, MMVP_COLUMNS)
    return root


# ---------------------------------------------------------------------------------------------
# PlotQA: the official release
# ---------------------------------------------------------------------------------------------

PLOTQA_TEMPLATES = ("data_retrieval", "min_max", "comparison", "compound")
PLOTQA_TYPES = ("vbar_categorical", "hbar_categorical", "dot_line", "line")


def plotqa_pairs(n_images: int = 6) -> list[dict[str, Any]]:
    """QA pairs over ``n_images`` plots, several templates and plot types, numeric, yes/no
    and label answers."""
    pairs: list[dict[str, Any]] = []
    for image_index in range(n_images):
        plot_type = PLOTQA_TYPES[image_index % len(PLOTQA_TYPES)]
        pairs.append(
            {
                "image_index": image_index,
                "question_string": f"What is the highest value in plot {image_index}?",
                "answer": 82.0172 + image_index,
                "answer_bbox": {"x": 10.0, "y": 20.5, "w": 4.0, "h": 30.0},
                "template": "min_max",
                "type": plot_type,
            }
        )
        pairs.append(
            {
                "image_index": image_index,
                "question_string": "Does the number of tourists increase over the years?",
                "answer": "Yes" if image_index % 2 else "No",
                "answer_bbox": [],
                "template": "comparison",
                "type": plot_type,
            }
        )
        pairs.append(
            {
                "image_index": image_index,
                "question_string": "In which year was the revenue the highest?",
                "answer": "2004",
                "answer_bbox": {"x": 1.0, "y": 2.0, "w": 3.0, "h": 4.0},
                "template": "data_retrieval",
                "type": plot_type,
            }
        )
        pairs.append(
            {
                "image_index": image_index,
                "question_string": "How many bars are there?",
                "answer": 5.0,
                "answer_bbox": [],
                "template": "compound",
                "type": plot_type,
            }
        )
    return pairs


def write_plotqa(
    root: Path,
    pairs: Sequence[Mapping[str, Any]] | None = None,
    *,
    split: str = "test",
    name: str = "qa_pairs_V1.json",
    wrapped: bool = True,
) -> Path:
    """A release folder: ``SPLIT/png/{image_index}.png`` and ``SPLIT/NAME`` (``{"qa_pairs":
    [...]}`` when ``wrapped``, a bare list otherwise). Returns the release folder."""
    pairs = list(pairs if pairs is not None else plotqa_pairs())
    folder = root / split
    (folder / "png").mkdir(parents=True, exist_ok=True)
    for index in sorted(
        {int(p["image_index"]) for p in pairs if isinstance(p.get("image_index"), int)}
    ):
        (folder / "png" / f"{index}.png").write_bytes(draw_image(600 + index, size=(64, 48)))
    value: Any = {"qa_pairs": pairs} if wrapped else pairs
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


def textvqa_rows() -> list[dict[str, Any]]:
    """Three questions: a clear majority, a normalisation merge, a tie."""

    def row(qid: int, image_id: str, question: str, answers: list[str]) -> dict[str, Any]:
        return {
            "question": question,
            "image_id": image_id,
            "image_classes": ["Sign", "Building"],
            "flickr_original_url": f"https://farm.example/{image_id}_o.jpg",
            "flickr_300k_url": f"https://farm.example/{image_id}_z.jpg",
            "image_width": 48,
            "image_height": 32,
            "answers": answers,
            "question_tokens": question.lower().rstrip("?").split(),
            "question_id": qid,
            "set_name": "train",
        }

    return [
        row(
            34602,
            "0054c91397f2fe05",
            "what brand is the soda?",
            [
                "coca cola",
                "Coca Cola",
                "coca-cola",
                "pepsi",
                "coca cola",
                "coke",
                "coca cola",
                "Coca-Cola",
                "coca cola",
                "cola",
            ],
        ),
        row(
            34603,
            "00685bc495504d61",
            "what number is on the jersey?",
            ["23", "23", "23", "32", "23", "23", "23", "23", "23", "2"],
        ),
        row(
            34604,
            "006d10667d17b924",
            "what does the sign say?",
            ["stop", "yield", "stop", "yield", "exit", "stop", "yield", "go", "halt", "slow"],
        ),
    ]


def write_textvqa_release(
    root: Path, rows: Sequence[Mapping[str, Any]] | None = None, *, split: str = "train"
) -> Path:
    """The release: ``TextVQA_0.5.1_SPLIT.json`` (``{"data": [...]}``) and
    ``train_images/{image_id}.jpg``."""
    rows = list(rows if rows is not None else textvqa_rows())
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


def textvqa_table_rows(rows: Sequence[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The release rows in ``lmms-lab/textvqa``'s columns (image inlined, OCR tokens added)."""
    out = []
    for position, row in enumerate(rows if rows is not None else textvqa_rows()):
        out.append(
            {
                **row,
                "image": image_struct(draw_image(700 + position, fmt="JPEG")),
                "ocr_tokens": ["STOP", "23"],
            }
        )
    return out
