"""Tiny copies of each source dataset in its exact published layout, for the tests.

The layouts are written by :mod:`tools.source_examples.layouts` (the code that also writes the
package's example copies, ``src/crystalbench/sources/examples``); here are the rows the
tests give them, each chosen to exercise an adapter's edge cases, and writers with those rows
as defaults. Images are drawn with Pillow; each row's image is different (its seed draws
other shapes and colours).

Tests import it by name (``tests/`` is on ``sys.path``): ``from source_fixtures import ...``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tools.source_examples import layouts
from tools.source_examples.copies import textvqa_rows
from tools.source_examples.layouts import (
    MATHVISION_COLUMNS,
    MC_INSTRUCTION,
    MMVP_COLUMNS,
    OPEN_INSTRUCTION,
    REALWORLDQA_COLUMNS,
    SCIENCEQA_COLUMNS,
    TEXTVQA_COLUMNS,
    draw_image,
    image_struct,
    save_to_disk,
    write_parquet,
)
from tools.source_examples.layouts import hub_features as _features

__all__ = [
    "MATHVISION_COLUMNS",
    "MC_INSTRUCTION",
    "MMVP_COLUMNS",
    "OPEN_INSTRUCTION",
    "PLOTQA_TEMPLATES",
    "PLOTQA_TYPES",
    "REALWORLDQA_COLUMNS",
    "SCIENCEQA_COLUMNS",
    "TEXTVQA_COLUMNS",
    "_features",
    "draw_image",
    "image_struct",
    "mathvision_rows",
    "mmvp_rows",
    "plotqa_pairs",
    "realworldqa_rows",
    "save_to_disk",
    "scienceqa_rows",
    "textvqa_rows",
    "textvqa_table_rows",
    "write_mathvision",
    "write_mmvp_lmms",
    "write_mmvp_original",
    "write_parquet",
    "write_plotqa",
    "write_realworldqa",
    "write_scienceqa",
    "write_textvqa_release",
]

# ---------------------------------------------------------------------------------------------
# MathVision
# ---------------------------------------------------------------------------------------------


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
    """A snapshot of ``MathLLMs/MathVision`` holding :func:`mathvision_rows` by default."""
    return layouts.write_mathvision(
        root, list(rows if rows is not None else mathvision_rows()), split=split
    )


# ---------------------------------------------------------------------------------------------
# ScienceQA-IMG
# ---------------------------------------------------------------------------------------------


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
    layouts.write_scienceqa(root, splits, config=config)
    if config == "ScienceQA-IMG":
        full = {split: scienceqa_rows(split, with_text_only=True) for split in splits}
        layouts.write_scienceqa(root, full, config="ScienceQA-FULL")
    return root


# ---------------------------------------------------------------------------------------------
# RealWorldQA
# ---------------------------------------------------------------------------------------------


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
    """A snapshot of the hub repo holding :func:`realworldqa_rows` by default."""
    return layouts.write_realworldqa(root, list(rows if rows is not None else realworldqa_rows()))


# ---------------------------------------------------------------------------------------------
# MMVP
# ---------------------------------------------------------------------------------------------


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
    """The ``MMVP/MMVP`` repo holding :func:`mmvp_rows` by default."""
    return layouts.write_mmvp_original(
        root, list(rows if rows is not None else mmvp_rows()), header=header
    )


def write_mmvp_lmms(root: Path, rows: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """A snapshot of ``lmms-lab-eval/MMVP`` holding :func:`mmvp_rows` by default."""
    return layouts.write_mmvp_lmms(root, list(rows if rows is not None else mmvp_rows()))


# ---------------------------------------------------------------------------------------------
# PlotQA
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
    """A release folder holding :func:`plotqa_pairs` by default."""
    return layouts.write_plotqa(
        root,
        list(pairs if pairs is not None else plotqa_pairs()),
        split=split,
        name=name,
        wrapped=wrapped,
    )


# ---------------------------------------------------------------------------------------------
# TextVQA (its rows are the package's TextVQA example: tools.source_examples.copies)
# ---------------------------------------------------------------------------------------------


def write_textvqa_release(
    root: Path, rows: Sequence[Mapping[str, Any]] | None = None, *, split: str = "train"
) -> Path:
    """The release holding :func:`textvqa_rows` by default."""
    return layouts.write_textvqa_release(
        root, list(rows if rows is not None else textvqa_rows()), split=split
    )


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
