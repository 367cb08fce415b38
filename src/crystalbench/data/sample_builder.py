"""Build the bundled sample benchmark and its prediction files, deterministically.

The sample is 40 items written for crystalbench (nothing is copied from a real dataset),
8 in the style of each CRYSTAL source: ``mathvision``, ``scienceqa``, ``realworldqa``,
``mmvp`` and ``plotqa``. Every image is drawn by code from the same parameters that
write its reference chain, so each fact a reference step states is visible in the image.

Five prediction files imitate contrasting model styles from the paper:

- ``terse-precise``: 2-4 short steps, each a paraphrase of a reference step (P >> R);
- ``verbose-recall``: almost every reference step plus restatements and filler (R > P);
- ``scrambled-order``: most steps, paraphrased, in shuffled order (LIS and Ordered F1 drop);
- ``messy-raw``: raw text as models emit it (fences, prose, ``<think>``, truncation, markdown,
  garbage), with two items missing;
- ``right-answer-weak-reasoning``: right answers behind one or two vague steps.

Run ``python -m crystalbench.data.sample_builder`` to regenerate
``crystalbench/data/sample``. Pillow draws the scenes; matplotlib (an optional dependency,
imported only when a chart is drawn) draws the PlotQA-style charts.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from crystalbench.types import BenchmarkItem

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
"""Where the committed sample lives."""

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
RGB = tuple[int, int, int]


# --------------------------------------------------------------------------------------------
# Specs: an item plus what the prediction styles need to imitate models answering it
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Drawing helpers (Pillow)
# --------------------------------------------------------------------------------------------

WHITE: RGB = (255, 255, 255)
BLACK: RGB = (20, 20, 20)
GREY: RGB = (120, 120, 120)
COLOURS: dict[str, RGB] = {
    "red": (214, 39, 40),
    "blue": (31, 90, 200),
    "white": (245, 245, 245),
    "yellow": (240, 200, 30),
    "green": (44, 160, 44),
    "grey": (140, 140, 150),
    "black": (35, 35, 35),
    "orange": (245, 130, 20),
    "purple": (128, 60, 170),
    "brown": (140, 90, 50),
}


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at ``size`` (FreeType when available)."""
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow < 10.1 or no FreeType: the bitmap font
        return ImageFont.load_default()


def _canvas(width: int, height: int, fill: RGB = WHITE) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (width, height), fill)
    return image, ImageDraw.Draw(image)


def _text(
    draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int = 18, fill: RGB = BLACK
) -> None:
    """Draw ``text`` centred on ``xy``."""
    font = _font(size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    x = xy[0] - (right - left) / 2 - left
    y = xy[1] - (bottom - top) / 2 - top
    draw.text((x, y), text, font=font, fill=fill)


def _arrow(
    draw: ImageDraw.ImageDraw,
    start: tuple[float, float],
    end: tuple[float, float],
    fill: RGB = BLACK,
    width: int = 3,
    shorten: float = 0.0,
) -> None:
    """A straight arrow from ``start`` to ``end`` (both ends pulled in by ``shorten``)."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    x0, y0 = x0 + ux * shorten, y0 + uy * shorten
    x1, y1 = x1 - ux * shorten, y1 - uy * shorten
    draw.line([(x0, y0), (x1, y1)], fill=fill, width=width)
    head, half = 14.0, 7.0
    bx, by = x1 - ux * head, y1 - uy * head
    draw.polygon(
        [(x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)], fill=fill
    )


def _dashed(
    draw: ImageDraw.ImageDraw,
    start: tuple[float, float],
    end: tuple[float, float],
    fill: RGB = BLACK,
    width: int = 2,
    dash: float = 10.0,
) -> None:
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    pieces = max(1, int(length // dash))
    for k in range(0, pieces, 2):
        a, b = k / pieces, min(1.0, (k + 1) / pieces)
        draw.line(
            [(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
            fill=fill,
            width=width,
        )


def _tick(
    draw: ImageDraw.ImageDraw, p: tuple[float, float], q: tuple[float, float], n: int = 1
) -> None:
    """Equal-length tick marks across the middle of segment ``pq``."""
    mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
    length = math.hypot(q[0] - p[0], q[1] - p[1])
    ux, uy = (q[0] - p[0]) / length, (q[1] - p[1]) / length
    for k in range(n):
        off = (k - (n - 1) / 2) * 6
        cx, cy = mx + ux * off, my + uy * off
        draw.line([(cx - uy * 8, cy + ux * 8), (cx + uy * 8, cy - ux * 8)], fill=BLACK, width=2)


# --------------------------------------------------------------------------------------------
# mathvision: geometry with labelled lengths and angles, counting puzzles
# --------------------------------------------------------------------------------------------


def _mathvision_specs() -> list[SampleSpec]:
    return [
        _mv_right_triangle(),
        _mv_equilateral_height(),
        _mv_angle_sum(),
        _mv_segment_ratio(),
        _mv_count_shapes(),
        _mv_l_shape_area(),
        _mv_shaded_grid(),
        _mv_circle_area(),
    ]


def _mv_right_triangle(a: int = 6, b: int = 8) -> SampleSpec:
    c = math.isqrt(a * a + b * b)

    def draw() -> Image.Image:
        img, d = _canvas(480, 360)
        scale = 225 / a
        cx, cy = 110, 300
        ax, ay = cx, cy - a * scale
        bx, by = cx + b * scale, cy
        d.polygon([(ax, ay), (bx, by), (cx, cy)], outline=BLACK, width=3)
        d.rectangle([cx, cy - 20, cx + 20, cy], outline=BLACK, width=2)
        _text(d, (ax - 18, ay - 6), "A", 22)
        _text(d, (bx + 16, by + 4), "B", 22)
        _text(d, (cx - 18, cy + 12), "C", 22)
        _text(d, (cx - 22, (ay + cy) / 2), str(a), 22)
        _text(d, ((cx + bx) / 2, cy + 22), str(b), 22)
        _text(d, ((ax + bx) / 2 + 18, (ay + by) / 2 - 16), "?", 24)
        return img

    steps = (
        _s(
            "The figure shows triangle ABC with a right-angle mark at vertex C.",
            "Triangle ABC has its right angle at C.",
        ),
        _s(
            "The question asks for the length of side AB, which is marked with a question mark.",
            "We need AB, the side marked with ?.",
        ),
        _s(f"Side AC is labelled with length {a}.", f"AC = {a} according to the figure.", True),
        _s(f"Side BC is labelled with length {b}.", f"BC = {b} from the diagram.", True),
        _s(
            "AB is opposite the right angle, so AB is the hypotenuse.",
            "AB lies opposite C, which makes it the hypotenuse.",
        ),
        _s(
            "By the Pythagorean theorem, AB^2 = AC^2 + BC^2.",
            "Pythagoras gives AB^2 = AC^2 + BC^2.",
        ),
        _s(
            f"Substituting the values gives AB^2 = {a}^2 + {b}^2 = {a * a} + {b * b} = {c * c}.",
            f"So AB^2 = {a * a} + {b * b} = {c * c}.",
            True,
        ),
        _s(
            f"Taking the positive square root, AB = sqrt({c * c}) = {c}.",
            f"Therefore AB = {c}.",
            True,
        ),
        _s(f"So the length of AB is {c}.", f"AB is {c} units long."),
    )
    return SampleSpec(
        item_id="mathvision-01",
        source="mathvision",
        question=(
            "In the right triangle ABC shown, the right angle is at C. What is the length of AB?"
        ),
        steps=steps,
        answer=str(c),
        draw=draw,
        difficulty="easy",
        metadata={"subject": "metric geometry - length", "level": 2},
        right=(str(c), f"AB = {c}", f"{c} units"),
        wrong=(str(a + b), str(c + 2)),
        ask="the length of the hypotenuse AB",
        topic="the triangle",
    )


def _mv_equilateral_height(side: int = 4) -> SampleSpec:
    def draw() -> Image.Image:
        img, d = _canvas(480, 360)
        bx, by, cx, cy = 100.0, 310.0, 380.0, 310.0
        ax, ay = 240.0, 310.0 - 280 * math.sqrt(3) / 2
        d.polygon([(ax, ay), (bx, by), (cx, cy)], outline=BLACK, width=3)
        for p, q in (((ax, ay), (bx, by)), ((ax, ay), (cx, cy)), ((bx, by), (cx, cy))):
            _tick(d, p, q)
        _dashed(d, (ax, ay), (240, 310), width=2)
        d.rectangle([240, 294, 256, 310], outline=BLACK, width=2)
        _text(d, (ax, ay - 16), "A", 22)
        _text(d, (bx - 16, by + 8), "B", 22)
        _text(d, (cx + 16, cy + 8), "C", 22)
        _text(d, (240, 328), "M", 20)
        _text(d, (228, 220), "h", 22)
        _text(d, ((ax + bx) / 2 - 22, (ay + by) / 2 - 10), str(side), 22)
        _text(d, ((ax + cx) / 2 + 22, (ay + cy) / 2 - 10), str(side), 22)
        _text(d, (310, 328), str(side), 22)
        return img

    half, sq = side // 2, side * side - (side // 2) ** 2
    steps = (
        _s(
            "The question asks for the height h, which is the length of the dashed segment AM.",
            "We need h, the length of AM.",
        ),
        _s(
            f"All three sides of triangle ABC are marked with length {side}, so the triangle "
            "is equilateral.",
            f"Every side of ABC is {side}, so it is equilateral.",
            True,
        ),
        _s(
            "The dashed segment AM is drawn from A perpendicular to BC, so AM is the height h.",
            "AM is the altitude h, perpendicular to BC.",
        ),
        _s(
            "In an equilateral triangle the altitude bisects the base, so M is the midpoint of BC.",
            "The altitude meets BC at its midpoint M.",
        ),
        _s(f"Therefore BM = {side} / 2 = {half}.", f"BM is half of {side}, i.e. {half}.", True),
        _s(
            f"Triangle ABM is a right triangle with hypotenuse AB = {side} and leg BM = {half}.",
            f"ABM is right-angled with AB = {side} and BM = {half}.",
        ),
        _s(
            f"By the Pythagorean theorem, AM^2 = AB^2 - BM^2 = {side * side} - {half * half} = "
            f"{sq}.",
            f"So h^2 = {side * side} - {half * half} = {sq}.",
            True,
        ),
        _s(f"Taking the square root gives AM = sqrt({sq}).", f"h = sqrt({sq})."),
        _s(
            f"Simplify: sqrt({sq}) = sqrt(4 * 3) = 2 sqrt(3).",
            f"sqrt({sq}) simplifies to 2 sqrt(3).",
            True,
        ),
        _s(
            "So the height of the triangle is 2 sqrt(3), which is about 3.46.",
            "h = 2 sqrt(3) ≈ 3.46.",
        ),
    )
    return SampleSpec(
        item_id="mathvision-02",
        source="mathvision",
        question="What is the height h of the triangle shown?",
        steps=steps,
        answer="2\\sqrt{3}",
        draw=draw,
        metadata={"subject": "metric geometry - length", "level": 3},
        right=("2\\sqrt{3}", "2√3", "\\boxed{2\\sqrt{3}}", "3.46"),
        wrong=("4\\sqrt{3}", "2\\sqrt{2}", "3"),
        ask="the height of the equilateral triangle",
        topic="the triangle",
    )


def _mv_angle_sum(angle_a: int = 50, angle_b: int = 65) -> SampleSpec:
    angle_c = 180 - angle_a - angle_b
    options = ["55°", "60°", "65°", "70°", "75°"]
    gold = options.index(f"{angle_c}°")

    def draw() -> Image.Image:
        img, d = _canvas(480, 360)
        ax, ay, bx, by = 60.0, 320.0, 420.0, 320.0
        # Law of sines: AC = AB * sin(B) / sin(C).
        ac = (bx - ax) * math.sin(math.radians(angle_b)) / math.sin(math.radians(angle_c))
        cx = ax + ac * math.cos(math.radians(angle_a))
        cy = ay - ac * math.sin(math.radians(angle_a))
        d.polygon([(ax, ay), (bx, by), (cx, cy)], outline=BLACK, width=3)
        d.arc([ax - 40, ay - 40, ax + 40, ay + 40], 360 - angle_a, 360, fill=BLACK, width=2)
        d.arc([bx - 40, by - 40, bx + 40, by + 40], 180, 180 + angle_b, fill=BLACK, width=2)
        _text(d, (ax + 66, ay - 22), f"{angle_a}°", 20)
        _text(d, (bx - 66, by - 22), f"{angle_b}°", 20)
        _text(d, (ax - 14, ay + 10), "A", 22)
        _text(d, (bx + 14, by + 10), "B", 22)
        _text(d, (cx, cy - 18), "C", 22)
        _text(d, (cx, cy + 40), "?", 22)
        return img

    right, wrong = _mc_forms(options, gold)
    steps = (
        _s(
            "The figure shows triangle ABC with two of its angles marked.",
            "Two angles of the triangle are given in the figure.",
        ),
        _s(f"The angle at vertex A is marked {angle_a}°.", f"Angle A = {angle_a}°.", True),
        _s(f"The angle at vertex B is marked {angle_b}°.", f"Angle B = {angle_b}°.", True),
        _s(
            "Angle C, at the top vertex, is marked with a question mark.",
            "Angle C at the top is unknown.",
        ),
        _s(
            "The interior angles of any triangle add up to 180°.",
            "The angles of a triangle sum to 180°.",
        ),
        _s(
            f"So angle C = 180° - {angle_a}° - {angle_b}°.",
            f"C = 180 - {angle_a} - {angle_b}.",
        ),
        _s(f"Computing gives angle C = {angle_c}°.", f"That leaves {angle_c}° for angle C.", True),
        _s(
            f"Among the choices, {angle_c}° is option {_letter(gold)}.",
            f"{angle_c}° corresponds to choice {_letter(gold)}.",
        ),
        _s(
            f"Select option {_letter(gold)} from the provided list of choices.",
            f"The answer is option {_letter(gold)}.",
        ),
    )
    return SampleSpec(
        item_id="mathvision-03",
        source="mathvision",
        question="In triangle ABC, what is the measure of angle C?",
        steps=steps,
        answer=_letter(gold),
        draw=draw,
        options=tuple(options),
        difficulty="easy",
        metadata={"subject": "metric geometry - angle", "level": 1},
        right=right,
        wrong=wrong,
        ask="the size of angle C",
        topic="the triangle",
    )


def _mv_segment_ratio(ap: int = 6, pb: int = 4) -> SampleSpec:
    g = math.gcd(ap, pb)

    def draw() -> Image.Image:
        img, d = _canvas(520, 240)
        unit = 40
        ax, px, bx, y = 60, 60 + ap * unit, 60 + (ap + pb) * unit, 130
        d.line([(ax, y), (bx, y)], fill=BLACK, width=3)
        for x, name in ((ax, "A"), (px, "P"), (bx, "B")):
            d.ellipse([x - 5, y - 5, x + 5, y + 5], fill=BLACK)
            _text(d, (x, y + 24), name, 22)
        for x0, x1, label in ((ax, px, str(ap)), (px, bx, str(pb))):
            d.line([(x0 + 4, y - 30), (x1 - 4, y - 30)], fill=(30, 90, 200), width=2)
            d.line([(x0 + 4, y - 38), (x0 + 4, y - 22)], fill=(30, 90, 200), width=2)
            d.line([(x1 - 4, y - 38), (x1 - 4, y - 22)], fill=(30, 90, 200), width=2)
            _text(d, ((x0 + x1) / 2, y - 52), label, 22, (30, 90, 200))
        d.line([(ax, y + 56), (bx, y + 56)], fill=GREY, width=2)
        d.line([(ax, y + 48), (ax, y + 64)], fill=GREY, width=2)
        d.line([(bx, y + 48), (bx, y + 64)], fill=GREY, width=2)
        _text(d, ((ax + bx) / 2, y + 78), str(ap + pb), 22, GREY)
        return img

    steps = (
        _s(
            "Point P lies on segment AB and divides it into two parts, AP and PB.",
            "P splits AB into the pieces AP and PB.",
        ),
        _s(f"The part AP is labelled {ap}.", f"AP = {ap}.", True),
        _s(f"The part PB is labelled {pb}.", f"PB = {pb}.", True),
        _s(
            f"The whole segment AB is labelled {ap + pb}, which agrees with {ap} + {pb} = "
            f"{ap + pb}.",
            f"AB = {ap + pb} = {ap} + {pb}, consistent.",
        ),
        _s(f"The ratio is AP/PB = {ap}/{pb}.", f"AP/PB = {ap}/{pb}.", True),
        _s(
            f"The greatest common divisor of {ap} and {pb} is {g}.",
            f"Both {ap} and {pb} are divisible by {g}.",
        ),
        _s(
            f"Dividing numerator and denominator by {g} gives {ap // g}/{pb // g}.",
            f"{ap}/{pb} reduces to {ap // g}/{pb // g}.",
            True,
        ),
        _s(
            f"{ap // g} and {pb // g} have no common factor, so {ap // g}/{pb // g} is in lowest "
            "terms.",
            f"{ap // g}/{pb // g} cannot be simplified further.",
        ),
        _s(f"So AP/PB = {ap // g}/{pb // g}.", f"The ratio AP/PB is {ap // g}/{pb // g}."),
    )
    return SampleSpec(
        item_id="mathvision-04",
        source="mathvision",
        question="Point P lies on segment AB as shown. What is the ratio AP/PB as a fraction in "
        "lowest terms?",
        steps=steps,
        answer=f"\\frac{{{ap // g}}}{{{pb // g}}}",
        draw=draw,
        metadata={"subject": "arithmetic", "level": 2},
        right=(f"\\frac{{{ap // g}}}{{{pb // g}}}", f"{ap // g}/{pb // g}", str(ap / pb)),
        wrong=(f"\\frac{{{pb // g}}}{{{ap // g}}}", f"{pb // g}/{ap // g}", f"{ap + pb}/{pb}"),
        ask="the ratio AP/PB",
        topic="the line segment",
    )


MV_SHAPE_ROWS: tuple[tuple[str, ...], ...] = (
    ("triangle", "circle", "square", "triangle", "circle"),
    ("square", "triangle", "circle", "square", "square"),
    ("triangle", "triangle", "circle", "triangle", "square"),
)


def _shape(d: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float, fill: RGB) -> None:
    if kind == "circle":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fill, outline=BLACK, width=2)
    elif kind == "square":
        d.rectangle([cx - r, cy - r, cx + r, cy + r], fill=fill, outline=BLACK, width=2)
    else:
        d.polygon(
            [(cx, cy - r), (cx - r, cy + r * 0.8), (cx + r, cy + r * 0.8)],
            fill=fill,
            outline=BLACK,
            width=2,
        )


def _mv_count_shapes() -> SampleSpec:
    rows = MV_SHAPE_ROWS
    counts = [row.count("triangle") for row in rows]
    total = sum(counts)
    names = ("top", "middle", "bottom")
    palette = [
        COLOURS["orange"],
        COLOURS["blue"],
        COLOURS["green"],
        COLOURS["yellow"],
        COLOURS["purple"],
    ]

    def draw() -> Image.Image:
        img, d = _canvas(480, 300)
        for r, row in enumerate(rows):
            for c, kind in enumerate(row):
                _shape(d, kind, 60 + c * 90, 60 + r * 90, 28, palette[(r * 2 + c) % len(palette)])
        return img

    row_steps = tuple(
        _s(
            f"The {name} row contains {n} triangle{'s' if n != 1 else ''}.",
            f"Row {k + 1} has {n} triangle{'s' if n != 1 else ''}.",
            True,
        )
        for k, (name, n) in enumerate(zip(names, counts, strict=False))
    )
    steps = (
        _s(
            "The picture shows 15 shapes in 3 rows of 5: circles, squares and triangles.",
            "There are 3 rows of 5 shapes of three kinds.",
        ),
        _s("Count the triangles row by row.", "I will count the triangles one row at a time."),
        _s(
            "The shapes have different colours, but only the shape matters, not the colour.",
            "Colour does not matter here, only shape.",
        ),
        *row_steps,
        _s(
            f"Adding the rows: {' + '.join(map(str, counts))} = {total}.",
            f"In total {' + '.join(map(str, counts))} = {total}.",
            True,
        ),
        _s(
            f"As a check, the other {15 - total} shapes are circles and squares, and {total} + "
            f"{15 - total} = 15.",
            f"Check: {15 - total} non-triangles plus {total} triangles make 15.",
        ),
        _s(
            f"There are {total} triangles in the picture.", f"So the picture has {total} triangles."
        ),
    )
    return SampleSpec(
        item_id="mathvision-05",
        source="mathvision",
        question="How many triangles are there in the picture?",
        steps=steps,
        answer=str(total),
        draw=draw,
        metadata={"subject": "counting", "level": 1},
        right=(str(total), f"{total} triangles"),
        wrong=(str(total - 1), str(total + 1)),
        ask="the number of triangles",
        topic="the shapes",
    )


def _mv_l_shape_area(
    width: int = 10, height: int = 8, notch_w: int = 4, notch_h: int = 3
) -> SampleSpec:
    full, cut = width * height, notch_w * notch_h
    area = full - cut
    left_w, right_h = width - notch_w, height - notch_h

    def draw() -> Image.Image:
        img, d = _canvas(480, 380)
        unit, ox, oy = 30, 90, 320

        def p(x: float, y: float) -> tuple[float, float]:
            return ox + x * unit, oy - y * unit

        corners = [
            p(0, 0),
            p(width, 0),
            p(width, right_h),
            p(left_w, right_h),
            p(left_w, height),
            p(0, height),
        ]
        d.polygon(corners, fill=(190, 215, 245), outline=BLACK, width=3)
        _dashed(d, p(left_w, height), p(width, height), fill=GREY)
        _dashed(d, p(width, height), p(width, right_h), fill=GREY)
        _text(d, (p(width / 2, 0)[0], oy + 22), str(width), 22)
        _text(d, (ox - 22, p(0, height / 2)[1]), str(height), 22)
        _text(d, (p(left_w / 2, height)[0], p(0, height)[1] - 18), str(left_w), 22)
        _text(d, (p(width, 0)[0] + 20, p(0, right_h / 2)[1]), str(right_h), 22)
        _text(d, (p(left_w + notch_w / 2, 0)[0], p(0, right_h)[1] + 18), str(notch_w), 22)
        _text(d, (p(left_w, 0)[0] + 18, p(0, right_h + notch_h / 2)[1]), str(notch_h), 22)
        return img

    steps = (
        _s(
            "The shaded figure is an L-shape whose corners are all right angles.",
            "The shape is an L made only of right angles.",
        ),
        _s(f"The bottom side is labelled {width}.", f"The bottom edge is {width}.", True),
        _s(f"The left side is labelled {height}.", f"The left edge is {height}.", True),
        _s(
            f"The notch cut from the top-right corner is {notch_w} wide and {notch_h} tall.",
            f"The missing corner measures {notch_w} by {notch_h}.",
            True,
        ),
        _s(
            "The removed corner is outlined with dashed lines.",
            "Dashed lines show the missing corner.",
        ),
        _s(
            f"The top side is labelled {left_w} and the lower right side is labelled {right_h}.",
            f"Top edge {left_w}, right edge {right_h}.",
        ),
        _s(
            f"These agree with the outer sides: {left_w} + {notch_w} = {width} and {right_h} + "
            f"{notch_h} = {height}.",
            f"{left_w} + {notch_w} = {width} and {right_h} + {notch_h} = {height}, consistent.",
        ),
        _s(
            f"Complete the L-shape to a full {width} by {height} rectangle.",
            f"Fill in the corner to get a {width} x {height} rectangle.",
        ),
        _s(
            f"The area of the full rectangle is {width} x {height} = {full}.",
            f"Full rectangle area = {full}.",
            True,
        ),
        _s(
            f"The missing corner rectangle has area {notch_w} x {notch_h} = {cut}.",
            f"Cut-out area = {notch_w} x {notch_h} = {cut}.",
            True,
        ),
        _s(
            f"Subtract the missing corner: {full} - {cut} = {area}.",
            f"{full} - {cut} = {area}.",
            True,
        ),
        _s(
            f"Check by splitting the figure: the left part is {left_w} x {height} = "
            f"{left_w * height} "
            f"and the right part is {notch_w} x {right_h} = {notch_w * right_h}.",
            f"Alternatively {left_w} x {height} + {notch_w} x {right_h} = {left_w * height} + "
            f"{notch_w * right_h}.",
        ),
        _s(
            f"{left_w * height} + {notch_w * right_h} = {area}, which agrees.",
            f"That also gives {area}.",
        ),
        _s(f"The area of the shaded figure is {area}.", f"So the area is {area}."),
        _s(
            f"The perimeter is not needed; the question asks only for the area, {area} square "
            "units.",
            f"Only the area ({area}) is asked for.",
        ),
    )
    return SampleSpec(
        item_id="mathvision-06",
        source="mathvision",
        question="The shaded figure is made by cutting a rectangle from the corner of a larger "
        "rectangle. All angles are right angles. What is the area of the shaded figure?",
        steps=steps,
        answer=str(area),
        draw=draw,
        difficulty="hard",
        metadata={"subject": "metric geometry - area", "level": 3},
        right=(str(area), f"{area} square units", f"Area = {area}"),
        wrong=(str(full), str(full + cut), str(2 * (width + height))),
        ask="the area of the L-shaped figure",
        topic="the L-shaped figure",
    )


MV_SHADED: tuple[tuple[int, ...], ...] = ((0, 3), (2,), (0, 1, 3), (1, 2))


def _mv_shaded_grid() -> SampleSpec:
    counts = [len(row) for row in MV_SHADED]
    total = sum(counts)
    options = [str(v) for v in range(total - 2, total + 3)]
    gold = options.index(str(total))

    def draw() -> Image.Image:
        img, d = _canvas(360, 360)
        cell, o = 70, 40
        for r in range(4):
            for c in range(4):
                fill = (70, 110, 190) if c in MV_SHADED[r] else WHITE
                d.rectangle(
                    [o + c * cell, o + r * cell, o + (c + 1) * cell, o + (r + 1) * cell],
                    fill=fill,
                    outline=BLACK,
                    width=2,
                )
        return img

    ordinal = ("first", "second", "third", "fourth")
    right, wrong = _mc_forms(options, gold)
    steps = (
        _s(
            "The grid has 4 rows and 4 columns, so it contains 16 small squares.",
            "It is a 4 by 4 grid of 16 squares.",
        ),
        _s(
            "Shaded squares are coloured blue and unshaded squares are white.",
            "Blue squares are shaded, white ones are not.",
        ),
        *(
            _s(
                f"The {ordinal[r]} row has {n} shaded square{'s' if n != 1 else ''}.",
                f"Row {r + 1}: {n} shaded.",
                r in (0, 2),
            )
            for r, n in enumerate(counts)
        ),
        _s(
            f"The total number of shaded squares is {' + '.join(map(str, counts))} = {total}.",
            f"Shaded in total: {' + '.join(map(str, counts))} = {total}.",
            True,
        ),
        _s(
            f"Check: 16 - {total} = {16 - total} squares are white.",
            f"{16 - total} squares remain white.",
        ),
        _s(f"{total} matches option {_letter(gold)}.", f"{total} is choice {_letter(gold)}."),
        _s(
            f"Select option {_letter(gold)} from the provided list of choices.",
            f"Answer: option {_letter(gold)}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="mathvision-07",
        source="mathvision",
        question="How many of the small squares in the grid are shaded?",
        steps=steps,
        answer=_letter(gold),
        draw=draw,
        options=tuple(options),
        metadata={"subject": "counting", "level": 1},
        right=right,
        wrong=wrong,
        ask="how many squares are shaded",
        topic="the grid",
    )


def _mv_circle_area(radius: int = 3) -> SampleSpec:
    def draw() -> Image.Image:
        img, d = _canvas(400, 360)
        cx, cy, r = 200, 180, 130
        d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=BLACK, width=3)
        d.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=BLACK)
        ex, ey = cx + r * math.cos(math.radians(-30)), cy + r * math.sin(math.radians(-30))
        d.line([(cx, cy), (ex, ey)], fill=BLACK, width=3)
        _text(d, (cx - 14, cy + 14), "O", 22)
        _text(d, ((cx + ex) / 2 - 8, (cy + ey) / 2 - 18), str(radius), 22)
        return img

    sq = radius * radius
    steps = (
        _s("The figure shows a circle with centre O.", "O is the centre of the circle."),
        _s(
            "The question asks for the area of the circle, not its circumference.",
            "We want the area, not the circumference.",
        ),
        _s(
            f"A radius from O to the circle is drawn and labelled {radius}.",
            f"The radius is {radius}.",
            True,
        ),
        _s("The area of a circle is pi r^2.", "Area = pi * r^2.", True),
        _s(
            f"Substituting r = {radius} gives pi * {radius}^2.",
            f"With r = {radius}, area = pi * {radius}^2.",
        ),
        _s(f"{radius}^2 = {sq}, so the area is {sq} pi.", f"That is {sq}pi.", True),
        _s(f"The exact answer is left in terms of pi: {sq} pi.", f"Exact form: {sq}pi."),
        _s(
            f"Numerically this is about {sq * math.pi:.2f}.", f"That is roughly {sq * math.pi:.2f}."
        ),
    )
    return SampleSpec(
        item_id="mathvision-08",
        source="mathvision",
        question="The circle has centre O. What is the area of the circle?",
        steps=steps,
        answer=f"{sq}\\pi",
        draw=draw,
        metadata={"subject": "metric geometry - area", "level": 1},
        right=(f"{sq}\\pi", f"{sq}π", f"\\boxed{{{sq}\\pi}}", f"{sq * math.pi:.2f}"),
        wrong=(f"{2 * radius}\\pi", f"{radius}\\pi", f"{2 * radius * math.pi:.2f}"),
        ask="the area of the circle",
        topic="the circle",
    )


# --------------------------------------------------------------------------------------------
# scienceqa: food webs, magnets, a map, states of matter, thermometers, solutions
# --------------------------------------------------------------------------------------------


def _box_exit(dx: float, dy: float, half_w: float, half_h: float) -> float:
    """Distance from a box's centre to its edge along direction ``(dx, dy)``."""
    length = math.hypot(dx, dy)
    ux, uy = abs(dx) / length, abs(dy) / length
    return min(half_w / ux if ux else math.inf, half_h / uy if uy else math.inf)


def _food_web(
    nodes: dict[str, tuple[int, int]], edges: Sequence[tuple[str, str]], size: tuple[int, int]
) -> Drawer:
    half_w, half_h = 52, 18

    def draw() -> Image.Image:
        img, d = _canvas(*size, fill=(240, 248, 235))
        for a, b in edges:
            (x0, y0), (x1, y1) = nodes[a], nodes[b]
            length = math.hypot(x1 - x0, y1 - y0)
            ux, uy = (x1 - x0) / length, (y1 - y0) / length
            gap = _box_exit(ux, uy, half_w, half_h) + 4
            _arrow(
                d, (x0 + ux * gap, y0 + uy * gap), (x1 - ux * gap, y1 - uy * gap), fill=(60, 60, 60)
            )
        for name, (x, y) in nodes.items():
            box = [x - half_w, y - half_h, x + half_w, y + half_h]
            d.rounded_rectangle(box, radius=9, fill=WHITE, outline=(70, 120, 60), width=2)
            _text(d, (x, y), name, 17)
        return img

    return draw


def _sq_producer() -> SampleSpec:
    nodes = {
        "grass": (220, 330),
        "rabbit": (90, 210),
        "grasshopper": (350, 230),
        "frog": (350, 110),
        "fox": (150, 60),
    }
    edges = [
        ("grass", "rabbit"),
        ("grass", "grasshopper"),
        ("grasshopper", "frog"),
        ("rabbit", "fox"),
        ("frog", "fox"),
    ]
    options = ["fox", "grass", "frog"]
    right, wrong = _mc_forms(options, 1)
    steps = (
        _s(
            "The diagram is a food web in which each arrow points from the organism that is eaten "
            "to the organism that eats it.",
            "Arrows in the food web point from the food to the eater.",
        ),
        _s(
            "Arrows go from the grass to the rabbit and from the grass to the grasshopper.",
            "The rabbit and the grasshopper both eat grass.",
            True,
        ),
        _s("An arrow goes from the grasshopper to the frog.", "The frog eats the grasshopper."),
        _s(
            "Arrows go from the rabbit and from the frog to the fox.",
            "The fox eats the rabbit and the frog.",
        ),
        _s(
            "No arrow points to the grass, so the grass does not eat any other organism.",
            "Nothing points into the grass; it eats nothing.",
            True,
        ),
        _s(
            "A producer makes its own food from sunlight, as plants such as grass do.",
            "Producers like plants make their own food by photosynthesis.",
            True,
        ),
        _s(
            "The fox and the frog both receive arrows, so they are consumers.",
            "Fox and frog are consumers.",
        ),
        _s(
            "The fox receives arrows but sends none, so it is the top consumer.",
            "Nothing eats the fox; it is at the top.",
        ),
        _s(
            "Therefore the producer among the choices is the grass.",
            "So grass is the producer.",
            True,
        ),
    )
    return SampleSpec(
        item_id="scienceqa-01",
        source="scienceqa",
        question="Which of these organisms is a producer in this food web?",
        steps=steps,
        answer="grass",
        draw=_food_web(nodes, edges, (440, 380)),
        options=tuple(options),
        metadata={"subject": "natural science", "topic": "food webs", "grade": "grade5"},
        right=right,
        wrong=wrong,
        ask="which organism is a producer",
        topic="the food web",
    )


def _sq_remove_mice() -> SampleSpec:
    nodes = {
        "seeds": (90, 330),
        "grass": (330, 330),
        "mouse": (90, 210),
        "cricket": (330, 210),
        "snake": (90, 90),
        "frog": (330, 90),
        "hawk": (210, 30),
    }
    edges = [
        ("seeds", "mouse"),
        ("mouse", "snake"),
        ("grass", "cricket"),
        ("cricket", "frog"),
        ("frog", "hawk"),
        ("snake", "hawk"),
    ]
    options = ["snake", "cricket", "grass"]
    right, wrong = _mc_forms(options, 0)
    steps = (
        _s(
            "The diagram is a food web; each arrow points from a food source to the organism that "
            "eats it.",
            "In this food web the arrows go from food to eater.",
        ),
        _s(
            "An arrow goes from the seeds to the mouse, so the mouse eats seeds.",
            "The mouse feeds on seeds.",
        ),
        _s(
            "The only arrow pointing to the snake comes from the mouse.",
            "The snake's single incoming arrow is from the mouse.",
            True,
        ),
        _s(
            "So the mouse is the snake's only food source in this food web.",
            "Mice are the snake's only food.",
            True,
        ),
        _s(
            "The cricket eats grass and is eaten by the frog; it does not depend on the mouse.",
            "The cricket eats grass and does not need mice.",
        ),
        _s(
            "The grass is a producer and does not depend on the mouse either.",
            "Grass makes its own food, so mice do not matter to it.",
        ),
        _s(
            "Arrows go from the snake and from the frog to the hawk.",
            "The hawk eats snakes and frogs.",
        ),
        _s(
            "The hawk could still eat frogs, so it does not lose its only food.",
            "The hawk has frogs as another food source.",
        ),
        _s(
            "If the mice were removed, the snakes would lose their food, so the snake population "
            "would decrease.",
            "Without mice the snakes would starve and decrease.",
            True,
        ),
        _s("The answer is the snake.", "So the snake population would go down."),
    )
    return SampleSpec(
        item_id="scienceqa-02",
        source="scienceqa",
        question="Which organism's population would most likely decrease if the mice were removed?",
        steps=steps,
        answer="snake",
        draw=_food_web(nodes, edges, (440, 380)),
        options=tuple(options),
        difficulty="medium",
        metadata={"subject": "natural science", "topic": "food webs", "grade": "grade6"},
        right=right,
        wrong=wrong,
        ask="which population would decrease without mice",
        topic="the food web",
    )


def _sq_magnets(item_id: str, left: str, right_magnet: str) -> SampleSpec:
    """Two bar magnets; ``left``/``right_magnet`` give pole order, e.g. ``"NS"``."""
    pole_colour = {"N": (214, 60, 60), "S": (50, 100, 200)}
    pole_name = {"N": "north", "S": "south"}
    facing = (left[1], right_magnet[0])
    same = facing[0] == facing[1]
    result = "repel" if same else "attract"
    options = ["repel", "attract"]
    gold = options.index(result)

    def draw() -> Image.Image:
        img, d = _canvas(480, 260, fill=(250, 250, 245))
        for x0, poles in ((30, left), (260, right_magnet)):
            for k, pole in enumerate(poles):
                xa = x0 + k * 95
                d.rectangle([xa, 100, xa + 95, 160], fill=pole_colour[pole], outline=BLACK, width=2)
                _text(d, (xa + 47, 130), pole, 30, WHITE)
        return img

    def side(poles: str) -> str:
        return f"its {poles[0]} pole on the left and its {poles[1]} pole on the right"

    rights, wrongs = _mc_forms(options, gold)
    steps = (
        _s(
            "The question asks whether the two magnets will attract or repel each other.",
            "We must decide between attract and repel.",
        ),
        _s(
            "The image shows two bar magnets placed end to end.",
            "Two bar magnets are lined up end to end.",
        ),
        _s(
            "Each magnet is split into a red half marked N and a blue half marked S.",
            "Red halves are N and blue halves are S.",
        ),
        _s(
            f"The left magnet has {side(left)}.",
            f"Left magnet: {left[0]} on the left, {left[1]} on the right.",
        ),
        _s(
            f"The right magnet has {side(right_magnet)}.",
            f"Right magnet: {right_magnet[0]} on the left, {right_magnet[1]} on the right.",
        ),
        _s(
            f"So the poles facing each other are {facing[0]} and {facing[1]}.",
            f"The facing ends are {pole_name[facing[0]]} and {pole_name[facing[1]]}.",
            True,
        ),
        _s(
            "Like poles repel each other and opposite poles attract each other.",
            "Same poles push apart while different poles pull together.",
            True,
        ),
        _s(
            f"The facing poles are {'the same' if same else 'opposite'}, so the magnets will "
            f"{result}.",
            f"Therefore they {result}.",
            True,
        ),
    )
    return SampleSpec(
        item_id=item_id,
        source="scienceqa",
        question="Will these magnets attract or repel each other?",
        steps=steps,
        answer=result,
        draw=draw,
        options=tuple(options),
        metadata={"subject": "natural science", "topic": "magnets", "grade": "grade3"},
        right=rights,
        wrong=wrongs,
        ask="whether the magnets attract or repel",
        topic="the magnets",
    )


def _sq_map() -> SampleSpec:
    regions = ["Norland", "Eastmere", "Westhaven", "Southvale"]
    highlighted = 1

    def draw() -> Image.Image:
        img, d = _canvas(480, 360, fill=(170, 205, 235))
        boxes = [(60, 50, 240, 180), (240, 50, 420, 180), (60, 180, 240, 310), (240, 180, 420, 310)]
        for k, box in enumerate(boxes):
            fill = (46, 125, 50) if k == highlighted else (220, 237, 200)
            d.rectangle(box, fill=fill, outline=(90, 90, 90), width=2)
            colour = WHITE if k == highlighted else BLACK
            _text(d, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), regions[k], 18, colour)
        _arrow(d, (450, 110), (450, 50), width=3)
        _text(d, (450, 34), "N", 20)
        return img

    options = ["Norland", "Eastmere", "Westhaven", "Southvale"]
    right, wrong = _mc_forms(options, highlighted)
    steps = (
        _s(
            "The map shows an island divided into four labelled regions.",
            "The island on the map has four named regions.",
        ),
        _s(
            "The four regions are Norland, Eastmere, Westhaven and Southvale.",
            "The regions are Norland, Eastmere, Westhaven, Southvale.",
        ),
        _s(
            "A compass arrow shows that north is at the top of the map.",
            "North points up on this map.",
        ),
        _s(
            "The region in the north-east corner is shaded dark green, while the other regions are "
            "pale.",
            "Only the north-east region is dark green.",
            True,
        ),
        _s(
            "The label on the dark green region reads Eastmere.",
            "The highlighted region is labelled Eastmere.",
            True,
        ),
        _s(
            "Eastmere lies east of Norland and north of Southvale.",
            "Eastmere is east of Norland, north of Southvale.",
        ),
        _s("Eastmere is the second option, B.", "Eastmere is choice B."),
        _s("Select option B from the provided list of choices.", "The answer is B.", True),
    )
    return SampleSpec(
        item_id="scienceqa-05",
        source="scienceqa",
        question="Which region is highlighted on the map?",
        steps=steps,
        answer="B",
        draw=draw,
        options=tuple(options),
        metadata={"subject": "social science", "topic": "geography", "grade": "grade4"},
        right=right,
        wrong=wrong,
        ask="which region is highlighted",
        topic="the map",
    )


def _sq_states_of_matter() -> SampleSpec:
    options = ["ice cube", "orange juice", "air inside a balloon"]
    right, wrong = _mc_forms(options, 1)

    def draw() -> Image.Image:
        img, d = _canvas(480, 300, fill=(250, 250, 250))
        d.rectangle([50, 120, 130, 200], fill=(200, 230, 250), outline=(90, 140, 190), width=3)
        d.line([(62, 135), (90, 135)], fill=WHITE, width=4)
        d.polygon([(200, 80), (280, 80), (270, 210), (210, 210)], outline=(120, 120, 120), width=3)
        d.polygon([(205, 140), (275, 140), (270, 208), (210, 208)], fill=(250, 160, 40))
        d.ellipse([350, 60, 440, 170], fill=(220, 50, 60), outline=(150, 30, 40), width=2)
        d.line([(395, 170), (390, 215)], fill=GREY, width=2)
        for x, name in ((90, "ice cube"), (240, "orange juice"), (395, "air in a balloon")):
            _text(d, (x, 250), name, 17)
        return img

    steps = (
        _s(
            "The picture shows three objects: an ice cube, a glass of orange juice and a balloon "
            "filled with air.",
            "The three things shown are an ice cube, orange juice and a balloon of air.",
        ),
        _s("A solid has a definite shape and a definite volume.", "Solids keep their own shape."),
        _s(
            "The ice cube keeps its cube shape, so it is a solid.",
            "The ice cube holds its shape, so it's solid.",
        ),
        _s(
            "A liquid has a definite volume but takes the shape of its container.",
            "Liquids take the shape of their container.",
            True,
        ),
        _s(
            "The orange juice fills the bottom of the glass and takes the glass's shape, so it is "
            "a liquid.",
            "The juice takes the shape of the glass, so it is a liquid.",
            True,
        ),
        _s(
            "A gas spreads out to fill all the space in its container.",
            "A gas fills whatever space it is in.",
        ),
        _s(
            "The air expands to fill the balloon, so it is a gas.",
            "The air fills the balloon, making it a gas.",
        ),
        _s(
            "The ice cube and the air are therefore not liquids.",
            "Neither the ice nor the air is a liquid.",
        ),
        _s(
            "So the object that is a liquid is the orange juice.",
            "The liquid is the orange juice.",
            True,
        ),
    )
    return SampleSpec(
        item_id="scienceqa-06",
        source="scienceqa",
        question="Which object is a liquid?",
        steps=steps,
        answer="orange juice",
        draw=draw,
        options=tuple(options),
        difficulty="medium",
        metadata={"subject": "natural science", "topic": "states of matter", "grade": "grade2"},
        right=right,
        wrong=wrong,
        ask="which object is a liquid",
        topic="the objects",
    )


def _sq_thermometers(monday: int = 15, tuesday: int = 25) -> SampleSpec:
    options = ["Monday", "Tuesday"]
    warmer = 1 if tuesday > monday else 0
    right, wrong = _mc_forms(options, warmer)

    def draw() -> Image.Image:
        img, d = _canvas(400, 380, fill=(252, 252, 252))
        top, bottom = 50, 290  # y of 40 °C and 0 °C
        for x, day, value in ((130, "Monday", monday), (290, "Tuesday", tuesday)):
            d.rounded_rectangle(
                [x - 10, top - 15, x + 10, bottom + 10],
                radius=10,
                fill=WHITE,
                outline=GREY,
                width=2,
            )
            d.ellipse(
                [x - 18, bottom, x + 18, bottom + 36], fill=(210, 40, 40), outline=GREY, width=2
            )
            level = bottom - (bottom - top) * value / 40
            d.rectangle([x - 5, level, x + 5, bottom + 10], fill=(210, 40, 40))
            for t in range(0, 41, 5):
                y = bottom - (bottom - top) * t / 40
                d.line([(x - 22, y), (x - 12, y)], fill=BLACK, width=2)
                _text(d, (x - 40, y), str(t), 14)
            _text(d, (x, 350), day, 18)
        _text(d, (200, 18), "°C", 18)
        return img

    days = ("Monday", "Tuesday")
    steps = (
        _s(
            "The image shows two thermometers, one labelled Monday and one labelled Tuesday.",
            "There are two thermometers: Monday and Tuesday.",
        ),
        _s(
            "Both thermometers use the same Celsius scale from 0 to 40, marked every 5 degrees.",
            "Both scales run from 0 to 40 °C.",
        ),
        _s(
            "In each thermometer a red column rises from the bulb at the bottom.",
            "Red liquid rises from each bulb.",
        ),
        _s(
            f"The red liquid in Monday's thermometer reaches {monday} °C.",
            f"Monday reads {monday} °C.",
            True,
        ),
        _s(
            f"The red liquid in Tuesday's thermometer reaches {tuesday} °C.",
            f"Tuesday reads {tuesday} °C.",
            True,
        ),
        _s("A higher reading means a warmer temperature.", "Higher reading means warmer."),
        _s(
            f"{max(monday, tuesday)} °C is higher than {min(monday, tuesday)} °C.",
            f"{max(monday, tuesday)} is more than {min(monday, tuesday)}.",
        ),
        _s(f"So {days[warmer]} was warmer at noon.", f"{days[warmer]} was the warmer day.", True),
    )
    return SampleSpec(
        item_id="scienceqa-07",
        source="scienceqa",
        question=(
            "Two thermometers show the air temperature at noon on two days. "
            "Which day was warmer at noon?"
        ),
        steps=steps,
        answer=days[warmer],
        draw=draw,
        options=tuple(options),
        metadata={"subject": "natural science", "topic": "temperature", "grade": "grade3"},
        right=right,
        wrong=wrong,
        ask="which day was warmer",
        topic="the thermometers",
    )


def _sq_solutions(count_a: int = 6, count_b: int = 9, volume: int = 40) -> SampleSpec:
    options = ["Solution A", "Solution B", "neither; their concentrations are the same"]
    gold = 1 if count_b > count_a else 0
    right, wrong = _mc_forms(options, gold)

    def draw() -> Image.Image:
        img, d = _canvas(480, 340, fill=WHITE)
        rng = random.Random("scienceqa-08/particles")
        for x0, name, count in ((50, "Solution A", count_a), (270, "Solution B", count_b)):
            d.rectangle([x0 + 5, 110, x0 + 155, 250], fill=(225, 240, 250))
            d.line([(x0, 60), (x0, 250), (x0 + 160, 250), (x0 + 160, 60)], fill=GREY, width=3)
            placed: list[tuple[int, int]] = []
            while len(placed) < count:
                px, py = rng.randint(x0 + 20, x0 + 140), rng.randint(125, 235)
                if all(abs(px - qx) > 22 or abs(py - qy) > 22 for qx, qy in placed):
                    placed.append((px, py))
            for px, py in placed:
                d.ellipse([px - 8, py - 8, px + 8, py + 8], fill=(128, 60, 170))
            _text(d, (x0 + 80, 30), name, 20)
            _text(d, (x0 + 80, 280), "Solvent volume:", 16)
            _text(d, (x0 + 80, 302), f"{volume} mL", 16)
        return img

    names = ("Solution A", "Solution B")
    steps = (
        _s(
            "The diagram shows two beakers, Solution A and Solution B.",
            "Two solutions, A and B, are shown.",
        ),
        _s(
            f"Both beakers are labelled with a solvent volume of {volume} mL.",
            f"Each has {volume} mL of solvent.",
            True,
        ),
        _s(
            f"Solution A contains {count_a} purple particles.",
            f"A has {count_a} purple particles.",
            True,
        ),
        _s(
            f"Solution B contains {count_b} purple particles.",
            f"B has {count_b} purple particles.",
            True,
        ),
        _s(
            "Concentration is the number of solute particles per volume of solvent.",
            "Concentration means particles per volume.",
        ),
        _s(
            "With equal solvent volumes, the solution with more particles has the higher "
            "concentration.",
            "Same volume, so more particles means more concentrated.",
        ),
        _s(
            f"{max(count_a, count_b)} particles is more than {min(count_a, count_b)} particles.",
            f"{max(count_a, count_b)} > {min(count_a, count_b)}.",
        ),
        _s(
            f"So Solution B has {count_b - count_a} more particles in the same volume.",
            f"B has {count_b - count_a} extra particles.",
        ),
        _s(
            f"So {names[gold]} has the higher concentration of purple particles.",
            f"{names[gold]} is more concentrated.",
            True,
        ),
    )
    return SampleSpec(
        item_id="scienceqa-08",
        source="scienceqa",
        question="The diagram below is a model of two solutions. Each purple ball represents one "
        "particle of solute. Which solution has a higher concentration of purple particles?",
        steps=steps,
        answer=names[gold],
        draw=draw,
        options=tuple(options),
        metadata={"subject": "natural science", "topic": "solutions", "grade": "grade7"},
        right=right,
        wrong=wrong,
        ask="which solution is more concentrated",
        topic="the two beakers",
    )


def _scienceqa_specs() -> list[SampleSpec]:
    return [
        _sq_producer(),
        _sq_remove_mice(),
        _sq_magnets("scienceqa-03", "NS", "SN"),
        _sq_magnets("scienceqa-04", "SN", "SN"),
        _sq_map(),
        _sq_states_of_matter(),
        _sq_thermometers(),
        _sq_solutions(),
    ]


# --------------------------------------------------------------------------------------------
# realworldqa: drawn scenes (road, kitchen shelf, parking lot)
# --------------------------------------------------------------------------------------------


def _car_top(d: ImageDraw.ImageDraw, cx: float, cy: float, colour: str) -> None:
    """A car seen from above, driving up the image."""
    body = COLOURS[colour]
    for wx in (cx - 30, cx + 24):
        for wy in (cy - 34, cy + 22):
            d.rectangle([wx, wy, wx + 6, wy + 14], fill=BLACK)
    d.rounded_rectangle(
        [cx - 26, cy - 46, cx + 26, cy + 46], radius=10, fill=body, outline=BLACK, width=2
    )
    d.rectangle([cx - 18, cy - 26, cx + 18, cy - 12], fill=(60, 70, 90))
    d.rectangle([cx - 18, cy + 20, cx + 18, cy + 30], fill=(60, 70, 90))


def _road(d: ImageDraw.ImageDraw, width: int, height: int) -> None:
    d.rectangle([140, 0, 340, height], fill=(95, 95, 100))
    d.line([(142, 0), (142, height)], fill=WHITE, width=3)
    d.line([(338, 0), (338, height)], fill=WHITE, width=3)
    for y in range(0, height, 40):
        d.line([(240, y), (240, y + 22)], fill=WHITE, width=4)


def _tree(d: ImageDraw.ImageDraw, x: float, y: float) -> None:
    d.ellipse([x - 26, y - 26, x + 26, y + 26], fill=(40, 120, 50), outline=(25, 80, 30), width=2)


def _road_scene(
    left_lane: Sequence[tuple[float, str]],
    right_lane: Sequence[tuple[float, str]],
    sign: int | None = None,
    light: str | None = None,
) -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(480, 360, fill=(120, 180, 90))
        _road(d, 480, 360)
        if light is None:
            _tree(d, 60, 60)
        _tree(d, 80, 290)
        _tree(d, 420, 320)
        for y, colour in left_lane:
            _car_top(d, 190, y, colour)
        for y, colour in right_lane:
            _car_top(d, 290, y, colour)
        if sign is not None:
            d.rectangle([404, 120, 410, 200], fill=GREY)
            d.ellipse([372, 70, 442, 140], fill=(210, 30, 30))
            d.ellipse([381, 79, 433, 131], fill=WHITE)
            _text(d, (407, 105), str(sign), 24)
        if light is not None:
            d.rectangle([94, 130, 100, 230], fill=GREY)
            d.rounded_rectangle([78, 40, 116, 140], radius=6, fill=(30, 30, 30))
            lamps = (
                ("red", 58, (220, 30, 30)),
                ("amber", 90, (240, 170, 20)),
                ("green", 122, (40, 200, 70)),
            )
            for name, y, lit in lamps:
                lamp: RGB = lit if name == light else (70, 70, 70)
                d.ellipse([87, y - 12, 107, y + 8], fill=lamp)
        return img

    return draw


def _rw_count_cars() -> SampleSpec:
    steps = (
        _s(
            "The image shows a two-lane road seen from above, with a dashed centre line.",
            "It's a two-lane road viewed from above.",
        ),
        _s(
            "The dashed line divides the road into a left lane and a right lane.",
            "A dashed line separates the left and right lanes.",
        ),
        _s(
            "In the left lane there is a red car near the bottom of the image.",
            "A red car is in the left lane.",
            True,
        ),
        _s(
            "Further up the left lane there is a white car.",
            "There is also a white car ahead in the left lane.",
            True,
        ),
        _s("In the right lane there is a blue car.", "The right lane has a blue car.", True),
        _s(
            "No other vehicles are on the road; the green areas beside it only have trees.",
            "Apart from trees on the grass, nothing else is there.",
        ),
        _s(
            "Counting the cars: red, white and blue makes 3 cars.",
            "Red + white + blue = 3 cars.",
            True,
        ),
        _s("There are 3 cars on the road.", "So the road has 3 cars."),
    )
    return SampleSpec(
        item_id="realworldqa-01",
        source="realworldqa",
        question="How many cars are on the road?",
        steps=steps,
        answer="3",
        draw=_road_scene([(280, "red"), (90, "white")], [(200, "blue")]),
        difficulty="easy",
        right=("3", "3 cars", "three"),
        wrong=("2", "4"),
        ask="how many cars are on the road",
        topic="the road",
    )


def _rw_speed_sign() -> SampleSpec:
    choices = ["30", "50", "70"]
    right, _wrong = _mc_forms(choices, 1)
    steps = (
        _s(
            "The image shows a two-lane road seen from above with a grey car in the left lane.",
            "A grey car drives on a two-lane road.",
        ),
        _s(
            "There is a round traffic sign on the right side of the road.",
            "A round sign stands at the right roadside.",
        ),
        _s(
            "The sign has a red ring around a white centre, the style of a speed limit sign.",
            "Its red ring with a white middle marks a speed limit sign.",
        ),
        _s("The number 50 is printed in the middle of the sign.", "The sign reads 50.", True),
        _s("So the speed limit shown is 50.", "The speed limit is 50.", True),
        _s(
            "No other sign is visible, so this is the only limit shown.",
            "There is only this one sign.",
        ),
        _s("Option B is 50.", "50 corresponds to B."),
        _s("Select option B from the provided list of choices.", "Answer B.", True),
    )
    return SampleSpec(
        item_id="realworldqa-02",
        source="realworldqa",
        question=_embedded("What is the speed limit shown on the sign?", choices),
        steps=steps,
        answer="B",
        draw=_road_scene([(250, "grey")], [], sign=50),
        answer_type="multiple_choice",
        right=right[:3],
        wrong=("A", "C"),
        ask="the speed limit on the sign",
        topic="the road sign",
    )


def _rw_traffic_light() -> SampleSpec:
    steps = (
        _s(
            "The road has a yellow car in the left lane and a black car in the right lane.",
            "A yellow car and a black car are on the road.",
        ),
        _s(
            "A traffic light stands at the left side of the road.",
            "There is a traffic light on the left.",
        ),
        _s(
            "The traffic light has three lamps: red at the top, amber in the middle and green at "
            "the bottom.",
            "It has red, amber and green lamps from top to bottom.",
        ),
        _s("The top red lamp is dark.", "The red lamp is not lit.", True),
        _s("The amber lamp in the middle is also dark.", "The amber lamp is off too."),
        _s("Only the bottom green lamp is lit.", "Only the green lamp is on.", True),
        _s("So the light is showing green, not red.", "The light shows green.", True),
        _s("The answer is no.", "So no, it is not red."),
    )
    return SampleSpec(
        item_id="realworldqa-03",
        source="realworldqa",
        question="Is the traffic light showing red?",
        steps=steps,
        answer="No",
        draw=_road_scene([(200, "yellow")], [(300, "black")], light="green"),
        answer_type="yes_no",
        right=("No", "no", "No."),
        wrong=("Yes", "yes"),
        ask="whether the traffic light is red",
        topic="the traffic light",
    )


SHELF_CUPS: tuple[str, ...] = ("white", "yellow", "white", "green")


def _kitchen_shelf() -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(480, 380, fill=(238, 230, 215))
        wood = (150, 105, 60)
        d.rectangle([60, 20, 72, 370], fill=wood)
        d.rectangle([408, 20, 420, 370], fill=wood)
        for y in (130, 245, 360):
            d.rectangle([60, y, 420, y + 10], fill=wood)
        for k, colour in enumerate(SHELF_CUPS):  # cups on the top shelf
            x = 100 + k * 80
            d.rectangle([x, 80, x + 40, 130], fill=COLOURS[colour], outline=BLACK, width=2)
            d.arc([x + 30, 90, x + 56, 118], 270, 90, fill=BLACK, width=4)
        for k in range(3):  # jars on the middle shelf
            x = 110 + k * 100
            d.rectangle([x, 180, x + 50, 245], fill=(215, 235, 240), outline=GREY, width=2)
            d.rectangle([x - 2, 172, x + 52, 182], fill=(180, 60, 40))
        d.rectangle([120, 300, 240, 360], fill=(200, 35, 35), outline=BLACK, width=2)  # red pot
        d.rectangle([104, 312, 120, 322], fill=BLACK)
        d.rectangle([240, 312, 256, 322], fill=BLACK)
        d.chord([280, 280, 380, 360], 0, 180, fill=(40, 90, 190), outline=BLACK, width=2)  # bowl
        return img

    return draw


def _rw_cups() -> SampleSpec:
    n = len(SHELF_CUPS)
    steps = (
        _s(
            "The image shows a kitchen shelf unit with three shelves.",
            "It's a kitchen shelf with three levels.",
        ),
        _s(
            "The top shelf holds a row of cups with handles.",
            "Cups with handles stand on the top shelf.",
        ),
        _s("Each cup has its handle on the right side.", "The cup handles point right."),
        _s(
            "From left to right the cups are "
            + ", ".join(SHELF_CUPS[:-1])
            + f" and {SHELF_CUPS[-1]}.",
            "The cups are " + ", ".join(SHELF_CUPS) + ".",
            True,
        ),
        _s(f"That makes {n} cups on the top shelf.", f"So there are {n} cups up top.", True),
        _s(
            "The middle shelf holds glass jars with lids, which are not cups.",
            "The jars on the middle shelf are not cups.",
        ),
        _s(
            "The bottom shelf holds a red pot and a blue bowl, which are not cups either.",
            "The pot and bowl below are not cups.",
        ),
        _s(f"There are {n} cups on the top shelf.", f"Answer: {n} cups."),
    )
    return SampleSpec(
        item_id="realworldqa-04",
        source="realworldqa",
        question="How many cups are on the top shelf?",
        steps=steps,
        answer=str(n),
        draw=_kitchen_shelf(),
        right=(str(n), f"{n} cups"),
        wrong=(str(n - 1), str(n + 1), "7"),
        ask="the number of cups on the top shelf",
        topic="the kitchen shelf",
    )


def _rw_red_pot() -> SampleSpec:
    choices = ["Top shelf", "Middle shelf", "Bottom shelf"]
    right, _wrong = _mc_forms(choices, 2)
    steps = (
        _s(
            "The shelf unit has three shelves: top, middle and bottom.",
            "There are top, middle and bottom shelves.",
        ),
        _s("The top shelf holds four cups.", "Cups are on the top shelf."),
        _s(
            "The middle shelf holds three glass jars with red lids.",
            "The middle shelf has three jars.",
        ),
        _s(
            "The red pot with two handles sits on the bottom shelf next to a blue bowl.",
            "The red pot is on the bottom shelf beside a blue bowl.",
            True,
        ),
        _s(
            "The pot is red with a black handle on each side.", "The red pot has two black handles."
        ),
        _s("So the red pot is on the bottom shelf.", "The pot is on the bottom shelf.", True),
        _s("The bottom shelf is option C.", "Bottom shelf is C."),
        _s("Select option C from the provided list of choices.", "Answer: C.", True),
    )
    return SampleSpec(
        item_id="realworldqa-05",
        source="realworldqa",
        question=_embedded("Which shelf holds the red pot?", choices),
        steps=steps,
        answer="C",
        draw=_kitchen_shelf(),
        answer_type="multiple_choice",
        right=right[:3],
        wrong=("A", "B"),
        ask="which shelf the red pot is on",
        topic="the kitchen shelf",
    )


LOT_TOP: tuple[str | None, ...] = ("blue", None, "red", "white", None)
LOT_BOTTOM: tuple[str | None, ...] = (None, "grey", "green", None, "black")


def _parking_lot() -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(500, 360, fill=(105, 105, 110))
        d.rectangle([0, 0, 80, 360], fill=(120, 180, 90))
        d.rectangle([0, 150, 80, 210], fill=(105, 105, 110))
        _text(d, (40, 130), "ENTRANCE", 13, WHITE)
        _arrow(d, (10, 180), (70, 180), fill=WHITE, width=3)
        for row, y0 in ((LOT_TOP, 20), (LOT_BOTTOM, 230)):
            for k, colour in enumerate(row):
                x0 = 110 + k * 76
                d.line([(x0, y0), (x0, y0 + 110)], fill=WHITE, width=3)
                if colour is not None:
                    _car_top(d, x0 + 38, y0 + 55, colour)
            d.line([(110 + 5 * 76, y0), (110 + 5 * 76, y0 + 110)], fill=WHITE, width=3)
        return img

    return draw


def _rw_empty_spaces() -> SampleSpec:
    top_empty = [k + 1 for k, c in enumerate(LOT_TOP) if c is None]
    bottom_empty = [k + 1 for k, c in enumerate(LOT_BOTTOM) if c is None]
    total = len(top_empty) + len(bottom_empty)
    steps = (
        _s(
            "The parking lot has two rows of five marked spaces, 10 spaces in total.",
            "There are 2 rows of 5 parking spaces.",
        ),
        _s("White lines mark the edges of each space.", "Spaces are marked with white lines."),
        _s(
            f"In the top row, spaces {top_empty[0]} and {top_empty[1]} (counting from the left) "
            "are empty.",
            f"Top row: spaces {top_empty[0]} and {top_empty[1]} are free.",
            True,
        ),
        _s(
            f"In the bottom row, spaces {bottom_empty[0]} and {bottom_empty[1]} are empty.",
            f"Bottom row: spaces {bottom_empty[0]} and {bottom_empty[1]} are free.",
            True,
        ),
        _s("The other 6 spaces each contain a car.", "Six spaces have cars in them."),
        _s(
            "The parked cars are blue, red, white, grey, green and black.",
            "The cars are blue, red, white, grey, green, black.",
        ),
        _s(
            f"So the number of empty spaces is {len(top_empty)} + {len(bottom_empty)} = {total}.",
            f"{len(top_empty)} + {len(bottom_empty)} = {total} empty spaces.",
            True,
        ),
        _s(f"There are {total} empty parking spaces.", f"{total} spaces are empty."),
    )
    return SampleSpec(
        item_id="realworldqa-06",
        source="realworldqa",
        question="How many parking spaces in the lot are empty?",
        steps=steps,
        answer=str(total),
        draw=_parking_lot(),
        right=(str(total), f"{total} spaces", "four"),
        wrong=("6", "3", "5"),
        ask="how many parking spaces are empty",
        topic="the parking lot",
    )


def _rw_closest_car() -> SampleSpec:
    colour = LOT_TOP[0]
    assert colour is not None
    assert LOT_BOTTOM[0] is None
    steps = (
        _s("The parking lot has two rows of five spaces.", "The lot has two rows of 5 spaces."),
        _s(
            "The entrance is marked on the left side of the parking lot.",
            "The entrance is on the left.",
            True,
        ),
        _s(
            "The spaces nearest the entrance are the first spaces of each row.",
            "The leftmost spaces are closest to it.",
        ),
        _s("The first space in the top row holds a car.", "The top-left space has a car."),
        _s("The first space in the bottom row is empty.", "The bottom-left space is empty."),
        _s(
            "So the car closest to the entrance is the one in the first top-row space.",
            "The closest car is the one in the top-left space.",
            True,
        ),
        _s(
            "The next car along the top row is red, but it is further from the entrance.",
            "The red car is further along the top row.",
        ),
        _s(f"That car is {colour}.", f"It is a {colour} car.", True),
    )
    return SampleSpec(
        item_id="realworldqa-07",
        source="realworldqa",
        question="What colour is the car parked closest to the entrance?",
        steps=steps,
        answer=colour,
        draw=_parking_lot(),
        difficulty="medium",
        right=(colour, colour.capitalize()),
        wrong=("red", "grey"),
        ask="the colour of the car nearest the entrance",
        topic="the parking lot",
    )


def _rw_lanes() -> SampleSpec:
    left = [(60, "yellow"), (175, "green"), (295, "red")]
    right_lane = [(220, "grey")]
    choices = ["The left lane", "The right lane", "Both lanes have the same number of cars"]
    right, _wrong = _mc_forms(choices, 0)
    steps = (
        _s(
            "The road has two lanes separated by a dashed white line.",
            "Two lanes are divided by a dashed line.",
        ),
        _s("Count the cars in each lane separately.", "Let me count each lane."),
        _s(
            "In the left lane there are three cars: yellow, green and red.",
            "The left lane has three cars (yellow, green, red).",
            True,
        ),
        _s("In the right lane there is one grey car.", "The right lane has one grey car.", True),
        _s(
            "No car crosses the dashed line, so each car belongs to one lane.",
            "Every car is clearly within one lane.",
        ),
        _s("Three is greater than one.", "3 > 1."),
        _s("So the left lane has more cars.", "The left lane has more cars.", True),
        _s("Select option A from the provided list of choices.", "Answer A."),
    )
    return SampleSpec(
        item_id="realworldqa-08",
        source="realworldqa",
        question=_embedded("Which lane has more cars?", choices),
        steps=steps,
        answer="A",
        draw=_road_scene(left, right_lane),
        answer_type="multiple_choice",
        right=right[:3],
        wrong=("B", "C"),
        ask="which lane has more cars",
        topic="the road",
    )


def _realworldqa_specs() -> list[SampleSpec]:
    return [
        _rw_count_cars(),
        _rw_speed_sign(),
        _rw_traffic_light(),
        _rw_cups(),
        _rw_red_pot(),
        _rw_empty_spaces(),
        _rw_closest_car(),
        _rw_lanes(),
    ]


# --------------------------------------------------------------------------------------------
# mmvp: pairs of images that differ in one attribute, same question, opposite answers
# --------------------------------------------------------------------------------------------


def _draw_side_car(facing: str) -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(400, 260, fill=(205, 225, 245))
        d.rectangle([0, 200, 400, 260], fill=(90, 90, 95))
        sign = 1 if facing == "right" else -1
        cx = 200

        def x(dx: float) -> float:
            return cx + sign * dx

        body = [(x(-130), 190), (x(-130), 140), (x(130), 140), (x(130), 190)]
        d.polygon(body, fill=(200, 40, 40), outline=BLACK)
        cabin = [(x(-90), 140), (x(-70), 95), (x(20), 95), (x(75), 140)]
        d.polygon(cabin, fill=(200, 40, 40), outline=BLACK)
        window = [(x(-78), 136), (x(-62), 103), (x(16), 103), (x(60), 136)]
        d.polygon(window, fill=(170, 210, 235))
        d.ellipse(_sorted_box(x(118), 150, x(132), 166), fill=(250, 220, 60))  # headlight
        d.rectangle(_sorted_box(x(-132), 150, x(-124), 166), fill=(120, 0, 0))  # tail light
        for wx in (x(-80), x(80)):
            d.ellipse([wx - 26, 166, wx + 26, 218], fill=BLACK)
            d.ellipse([wx - 10, 182, wx + 10, 202], fill=(180, 180, 180))
        return img

    return draw


def _sorted_box(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
    """A Pillow box with its corners in order (for shapes mirrored left/right)."""
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def _draw_house(door_open: bool) -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(400, 320, fill=(200, 228, 250))
        d.rectangle([0, 280, 400, 320], fill=(110, 170, 80))
        d.rectangle([90, 140, 310, 280], fill=(235, 220, 180), outline=BLACK, width=2)
        d.polygon([(70, 140), (200, 50), (330, 140)], fill=(160, 60, 50), outline=BLACK)
        d.rectangle([115, 170, 165, 215], fill=(170, 210, 235), outline=BLACK, width=2)
        d.rectangle([235, 170, 285, 215], fill=(170, 210, 235), outline=BLACK, width=2)
        if door_open:
            d.rectangle([175, 195, 225, 280], fill=(30, 25, 20))
            d.polygon(
                [(225, 195), (248, 188), (248, 287), (225, 280)], fill=(130, 80, 40), outline=BLACK
            )
        else:
            d.rectangle([175, 195, 225, 280], fill=(130, 80, 40), outline=BLACK, width=2)
            d.ellipse([212, 236, 220, 244], fill=(230, 200, 60))
        return img

    return draw


def _draw_mug(handle: str) -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(360, 280, fill=(245, 240, 230))
        d.rectangle([0, 210, 360, 280], fill=(170, 130, 90))
        d.rectangle([130, 90, 230, 215], fill=(40, 90, 190), outline=BLACK, width=2)
        d.ellipse([130, 80, 230, 100], fill=(30, 60, 140), outline=BLACK, width=2)
        if handle == "right":
            d.arc([205, 115, 265, 185], 270, 90, fill=(40, 90, 190), width=12)
        else:
            d.arc([95, 115, 155, 185], 90, 270, fill=(40, 90, 190), width=12)
        return img

    return draw


def _draw_glass(full: bool) -> Drawer:
    def draw() -> Image.Image:
        img, d = _canvas(360, 300, fill=(250, 250, 250))
        d.rectangle([0, 240, 360, 300], fill=(190, 160, 120))
        if full:
            d.polygon([(128, 62), (232, 62), (222, 238), (138, 238)], fill=(110, 170, 235))
            d.line([(128, 62), (232, 62)], fill=(40, 100, 190), width=3)
        d.line([(120, 40), (140, 240), (220, 240), (240, 40)], fill=GREY, width=4)
        return img

    return draw


def _mmvp_specs() -> list[SampleSpec]:
    specs: list[SampleSpec] = []

    def add(
        number: int,
        pair: int,
        question: str,
        options: tuple[str, str],
        gold: int,
        steps: tuple[Step, ...],
        draw: Drawer,
        ask: str,
        topic: str,
        difficulty: str | None = None,
    ) -> None:
        right, wrong = _mmvp_forms(options, gold)
        specs.append(
            SampleSpec(
                item_id=f"mmvp-{number:02d}",
                source="mmvp",
                question=question,
                steps=steps,
                answer=f"({'ab'[gold]})",
                draw=draw,
                options=options,
                difficulty=difficulty,
                metadata={
                    "pair": f"mmvp-pair-{pair}",
                    "original_options": f"(a) {options[0]} (b) {options[1]}",
                },
                right=right,
                wrong=wrong,
                ask=ask,
                topic=topic,
            )
        )

    for number, facing in ((1, "left"), (2, "right")):
        gold = 0 if facing == "left" else 1
        add(
            number,
            1,
            "Is the car facing left or right?",
            ("Left", "Right"),
            gold,
            (
                _s(
                    "The question asks whether the car points to the left or to the right.",
                    "We need the direction the car faces.",
                ),
                _s(
                    "The image shows a red car seen from the side, standing on a road.",
                    "A red car is shown from the side.",
                ),
                _s(
                    f"The yellow headlight is at the {facing} end of the car.",
                    f"The headlight is on the {facing}.",
                    True,
                ),
                _s(
                    f"The sloped windscreen and the bonnet are also on the {facing} side of the "
                    "cabin.",
                    f"The windscreen slopes toward the {facing}.",
                ),
                _s(
                    "The small red tail light is at the "
                    f"{'right' if facing == 'left' else 'left'} end, which is the back of the car.",
                    f"The tail light is on the {'right' if facing == 'left' else 'left'}, at the "
                    "back.",
                ),
                _s(
                    f"The front of a car carries the headlights, so the front points {facing}.",
                    f"The front of the car points {facing}.",
                    True,
                ),
                _s(
                    f"So the car is facing {facing}, which is option ({'ab'[gold]}).",
                    f"The car faces {facing}: ({'ab'[gold]}).",
                    True,
                ),
            ),
            _draw_side_car(facing),
            "the direction the car faces",
            "the car",
            "easy",
        )
    for number, is_open in ((3, True), (4, False)):
        gold = 0 if is_open else 1
        state = "open" if is_open else "closed"
        detail = (
            (
                _s(
                    "The doorway shows a dark opening instead of a solid door panel.",
                    "The doorway is a dark gap.",
                    True,
                ),
                _s(
                    "The brown door panel is swung out to the right side of the doorway.",
                    "The door panel is swung aside.",
                ),
            )
            if is_open
            else (
                _s(
                    "The brown door panel fills the whole doorway.",
                    "The door fills the doorway.",
                    True,
                ),
                _s(
                    "A round yellow doorknob is visible on the shut door.",
                    "A doorknob shows on the shut door.",
                ),
            )
        )
        add(
            number,
            2,
            "Is the door of the house open or closed?",
            ("Open", "Closed"),
            gold,
            (
                _s(
                    "The image shows a small house with a door in the middle of its front wall.",
                    "There is a house with a central door.",
                ),
                _s(
                    "The front wall has two windows, one on each side of the door.",
                    "Two windows flank the door.",
                ),
                *detail,
                _s(f"So the door is {state}.", f"The door is {state}.", True),
                _s(
                    f"The answer is ({'ab'[gold]}) {state.capitalize()}.", f"Option ({'ab'[gold]})."
                ),
            ),
            _draw_house(is_open),
            "whether the door is open",
            "the house",
        )
    for number, side in ((5, "right"), (6, "left")):
        gold = 0 if side == "left" else 1
        other = "left" if side == "right" else "right"
        add(
            number,
            3,
            "Is the handle of the mug on the left side or the right side?",
            ("Left side", "Right side"),
            gold,
            (
                _s(
                    "The image shows a single blue mug on a table.",
                    "One blue mug stands on a table.",
                ),
                _s("The mug has one curved handle.", "It has a single handle."),
                _s(
                    "The rim of the mug is seen as a dark blue ellipse at the top.",
                    "The mug's top rim is a dark ellipse.",
                ),
                _s(
                    f"The handle is attached to the {side} side of the mug's body.",
                    f"The handle sticks out on the {side}.",
                    True,
                ),
                _s(
                    f"Nothing is attached to the {other} side of the mug.",
                    f"The {other} side is plain.",
                ),
                _s(
                    f"So the handle is on the {side} side, option ({'ab'[gold]}).",
                    f"Handle on the {side}: ({'ab'[gold]}).",
                    True,
                ),
            ),
            _draw_mug(side),
            "which side the mug's handle is on",
            "the mug",
        )
    for number, full in ((7, True), (8, False)):
        gold = 0 if full else 1
        state = "full" if full else "empty"
        detail = (
            (
                _s(
                    "The glass is filled with blue water almost to the rim.",
                    "Blue water fills the glass nearly to the top.",
                    True,
                ),
                _s(
                    "The water line is close to the top edge of the glass.",
                    "The water level is near the rim.",
                ),
            )
            if full
            else (
                _s(
                    "The inside of the glass is clear, with no liquid in it.",
                    "There is no liquid in the glass.",
                    True,
                ),
                _s(
                    "There is no water line; the bottom of the glass is visible.",
                    "No water level can be seen.",
                ),
            )
        )
        add(
            number,
            4,
            "Is the glass full or empty?",
            ("Full", "Empty"),
            gold,
            (
                _s(
                    "The question asks whether the glass is full or empty.",
                    "We must say if the glass is full or empty.",
                ),
                _s(
                    "The image shows a clear drinking glass standing on a table.",
                    "A drinking glass is on a table.",
                ),
                _s(
                    "The glass is wider at the rim than at its base.",
                    "The glass widens toward the top.",
                ),
                *detail,
                _s(f"So the glass is {state}.", f"The glass is {state}.", True),
                _s(
                    f"Option ({'ab'[gold]}) is {state.capitalize()}.",
                    f"({'ab'[gold]}) {state.capitalize()}.",
                ),
            ),
            _draw_glass(full),
            "whether the glass is full",
            "the glass",
        )
    return specs


# --------------------------------------------------------------------------------------------
# plotqa: matplotlib bar and line charts with values on them
# --------------------------------------------------------------------------------------------


def _fig_to_image(fig: Any) -> Image.Image:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    canvas.print_png(buffer, metadata={"Software": None})
    buffer.seek(0)
    with Image.open(buffer) as image:
        return image.convert("RGB")


def _bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    title: str,
    axis_label: str,
    fmt: Callable[[float], str],
    horizontal: bool = False,
) -> Drawer:
    def draw() -> Image.Image:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.6, 3.8), dpi=100)
        ax = fig.add_subplot()
        colour = "#4c72b0"
        if horizontal:
            bars = ax.barh(list(labels), list(values), color=colour)
            ax.set_xlabel(axis_label)
            ax.set_xlim(0, max(values) * 1.2)
            ax.invert_yaxis()
            for bar, value in zip(bars, values, strict=False):
                ax.text(
                    bar.get_width() + max(values) * 0.01,
                    bar.get_y() + bar.get_height() / 2,
                    fmt(value),
                    va="center",
                    fontsize=9,
                )
        else:
            bars = ax.bar(list(labels), list(values), color=colour)
            ax.set_ylabel(axis_label)
            ax.set_ylim(0, max(values) * 1.18)
            for bar, value in zip(bars, values, strict=False):
                ax.text(
                    bar.get_x() + bar.get_width() / 2,
                    bar.get_height() + max(values) * 0.01,
                    fmt(value),
                    ha="center",
                    va="bottom",
                    fontsize=9,
                )
        ax.set_title(title, fontsize=11)
        fig.tight_layout()
        return _fig_to_image(fig)

    return draw


def _line_chart(
    years: Sequence[int],
    series: dict[str, Sequence[float]],
    title: str,
    axis_label: str,
    fmt: Callable[[float], str],
) -> Drawer:
    def draw() -> Image.Image:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.6, 3.8), dpi=100)
        ax = fig.add_subplot()
        for (name, values), colour in zip(series.items(), ("#c44e52", "#4c72b0"), strict=False):
            ax.plot(list(years), list(values), marker="o", color=colour, label=name)
            for x, v in zip(years, values, strict=False):
                ax.annotate(
                    fmt(v),
                    (x, v),
                    textcoords="offset points",
                    xytext=(0, 7),
                    ha="center",
                    fontsize=8,
                )
        ax.set_xticks(list(years))
        low = min(min(v) for v in series.values())
        high = max(max(v) for v in series.values())
        ax.set_ylim(low - (high - low) * 0.3, high + (high - low) * 0.3)
        ax.set_ylabel(axis_label)
        ax.set_title(title, fontsize=11)
        if len(series) > 1:
            ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        return _fig_to_image(fig)

    return draw


def _thousands(value: float) -> str:
    return f"{value:,.0f}"


def _one_decimal(value: float) -> str:
    return f"{value:.1f}"


def _two_decimals(value: float) -> str:
    return f"{value:.2f}"


def _read_steps(
    pairs: Sequence[tuple[str, str]], noun: str, keys: Sequence[str] = ()
) -> tuple[Step, ...]:
    """One reading step per bar / point: ``(label, formatted value)``."""
    return tuple(
        _s(f"The {noun} for {label} shows a value of {value}.", f"{label}: {value}.", label in keys)
        for label, value in pairs
    )


def _pq_range() -> SampleSpec:
    labels = ["Norway", "Chile", "Kenya", "Peru", "Vietnam"]
    values = [5680, 12450, 3200, 8120, 9760]
    hi, lo = max(values), min(values)
    hi_name, lo_name = labels[values.index(hi)], labels[values.index(lo)]
    diff = hi - lo
    steps = (
        _s(
            "The bar chart shows international tourist arrivals in 2018 for five countries.",
            "The chart gives 2018 tourist arrivals for five countries.",
        ),
        _s(
            "Each bar is labelled with its exact number of arrivals.",
            "Every bar has its value written on top.",
        ),
        *_read_steps([(lab, _thousands(v)) for lab, v in zip(labels, values, strict=False)], "bar"),
        _s(
            f"The highest bar is {hi_name} with {_thousands(hi)} arrivals.",
            f"Max: {hi_name}, {_thousands(hi)}.",
            True,
        ),
        _s(
            f"The lowest bar is {lo_name} with {_thousands(lo)} arrivals.",
            f"Min: {lo_name}, {_thousands(lo)}.",
            True,
        ),
        _s(
            f"The difference is {_thousands(hi)} - {_thousands(lo)} = {_thousands(diff)}.",
            f"{_thousands(hi)} - {_thousands(lo)} = {_thousands(diff)}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="plotqa-01",
        source="plotqa",
        question=(
            "What is the difference between the highest and the lowest number of "
            "tourist arrivals shown in the chart?"
        ),
        steps=steps,
        answer=_thousands(diff),
        draw=_bar_chart(
            labels, values, "International tourist arrivals, 2018", "Arrivals", _thousands
        ),
        difficulty="medium",
        metadata={"chart": "vbar", "template": "range"},
        right=(_thousands(diff), str(diff), f"{_thousands(diff)} arrivals"),
        wrong=(_thousands(hi - 5680), _thousands(hi)),
        ask="the difference between the highest and lowest values",
        topic="the bar chart",
    )


def _pq_argmax() -> SampleSpec:
    labels = ["Ethiopia", "Colombia", "Kenya", "Uganda"]
    values = [472.5, 754.2, 52.8, 301.6]
    best = labels[values.index(max(values))]
    steps = (
        _s(
            "The bar chart shows coffee production in thousand tonnes for four countries.",
            "The chart shows coffee production (thousand tonnes) by country.",
        ),
        *_read_steps(
            [(lab, _one_decimal(v)) for lab, v in zip(labels, values, strict=False)],
            "bar",
            keys=(best,),
        ),
        _s(
            f"Comparing the bars, {best}'s bar at {_one_decimal(max(values))} is the tallest.",
            f"{best} has the tallest bar.",
            True,
        ),
        _s("Kenya's bar, at 52.8, is the shortest.", "Kenya is lowest at 52.8."),
        _s(
            f"So {best} has the highest coffee production.",
            f"The highest producer is {best}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="plotqa-02",
        source="plotqa",
        question="Which country has the highest coffee production in the chart?",
        steps=steps,
        answer=best,
        draw=_bar_chart(labels, values, "Coffee production", "Thousand tonnes", _one_decimal),
        metadata={"chart": "vbar", "template": "argmax"},
        right=(best, best.lower()),
        wrong=("Ethiopia", "Uganda"),
        ask="which country produces the most coffee",
        topic="the bar chart",
    )


def _pq_average() -> SampleSpec:
    years = list(range(2010, 2016))
    values = [3.2, 4.7, 5.1, 2.6, 3.9, 4.4]
    window = values[1:4]
    total = round(sum(window), 1)
    mean = total / 3
    steps = (
        _s(
            "The line chart shows average rainfall in centimetres from 2010 to 2015.",
            "The chart plots yearly rainfall (cm), 2010-2015.",
        ),
        _s("The question needs only the years 2011, 2012 and 2013.", "Only 2011-2013 matter."),
        _s(f"The value for 2011 is {window[0]}.", f"2011: {window[0]} cm.", True),
        _s(f"The value for 2012 is {window[1]}.", f"2012: {window[1]} cm.", True),
        _s(f"The value for 2013 is {window[2]}.", f"2013: {window[2]} cm.", True),
        _s(
            f"The sum of the three values is {window[0]} + {window[1]} + {window[2]} = {total}.",
            f"Their sum is {total}.",
        ),
        _s("There are 3 years in the range 2011 to 2013.", "That is three years."),
        _s(
            "The values for 2010, 2014 and 2015 are outside the range and are ignored.",
            "2010, 2014 and 2015 are not used.",
        ),
        _s(f"The average is {total} / 3 = {mean:.2f}.", f"Average = {total}/3 ≈ {mean:.2f}.", True),
    )
    return SampleSpec(
        item_id="plotqa-03",
        source="plotqa",
        question="What is the average rainfall over the years 2011 to 2013?",
        steps=steps,
        answer=f"{mean:.2f}",
        draw=_line_chart(
            years, {"Rainfall": values}, "Average rainfall", "Rainfall (cm)", _one_decimal
        ),
        difficulty="medium",
        metadata={"chart": "line", "template": "mean"},
        right=(f"{mean:.2f}", f"{mean:.1f}", f"{mean:.2f} cm"),
        wrong=(f"{sum(values) / len(values):.2f}", "5.1"),
        ask="the average rainfall for 2011-2013",
        topic="the line chart",
    )


def _pq_compare_years() -> SampleSpec:
    years = list(range(2011, 2017))
    values = [7.8, 8.4, 8.1, 7.2, 6.5, 6.9]
    v2011, v2014 = values[0], values[3]
    verdict = "Yes" if v2014 > v2011 else "No"
    steps = (
        _s(
            "The line chart shows the unemployment rate in percent from 2011 to 2016.",
            "The chart plots the unemployment rate (%) for 2011-2016.",
        ),
        _s("Each point on the line is labelled with its value.", "The points carry value labels."),
        _s(f"The point for 2011 is labelled {v2011}.", f"2011: {v2011}%.", True),
        _s(f"The point for 2014 is labelled {v2014}.", f"2014: {v2014}%.", True),
        _s(
            "Between 2011 and 2014 the rate first rises to 8.4 in 2012 and then falls.",
            "The rate peaks at 8.4 in 2012, then declines.",
        ),
        _s(f"{v2014} is less than {v2011}.", f"{v2014} < {v2011}.", True),
        _s(
            "So the rate in 2014 is not greater than the rate in 2011.",
            "The 2014 rate is lower than in 2011.",
            True,
        ),
        _s("The answer is no.", "Answer: no."),
    )
    return SampleSpec(
        item_id="plotqa-04",
        source="plotqa",
        question="Is the unemployment rate in 2014 greater than the unemployment rate in 2011?",
        steps=steps,
        answer=verdict,
        draw=_line_chart(
            years, {"Unemployment": values}, "Unemployment rate", "Percent", _one_decimal
        ),
        metadata={"chart": "line", "template": "compare"},
        right=(verdict, verdict.lower()),
        wrong=("Yes",),
        ask="whether 2014 is higher than 2011",
        topic="the line chart",
    )


def _pq_mc_highest() -> SampleSpec:
    labels = ["Coal", "Gas", "Hydro", "Solar"]
    values = [212, 348, 167, 95]
    gold = values.index(max(values))
    right, wrong = _mc_forms(labels, gold)
    steps = (
        _s(
            "The bar chart shows electricity generated in TWh by four energy sources.",
            "Electricity generation (TWh) is shown for four sources.",
        ),
        *_read_steps(
            [(lab, str(v)) for lab, v in zip(labels, values, strict=False)],
            "bar",
            keys=(labels[gold],),
        ),
        _s(
            f"The tallest bar is {labels[gold]} at {max(values)} TWh.",
            f"{labels[gold]} is the highest bar.",
            True,
        ),
        _s("Solar has the shortest bar at 95 TWh.", "Solar is lowest with 95."),
        _s(f"{labels[gold]} is option {_letter(gold)}.", f"That is choice {_letter(gold)}."),
        _s(
            f"Select option {_letter(gold)} from the provided list of choices.",
            f"Answer {_letter(gold)}.",
        ),
    )
    return SampleSpec(
        item_id="plotqa-05",
        source="plotqa",
        question="Which energy source generated the most electricity?",
        steps=steps,
        answer=_letter(gold),
        draw=_bar_chart(
            labels, values, "Electricity generated by source", "TWh", lambda v: f"{v:.0f}"
        ),
        options=tuple(labels),
        metadata={"chart": "vbar", "template": "argmax"},
        right=right,
        wrong=wrong,
        ask="which source generated the most electricity",
        topic="the bar chart",
    )


def _pq_series_gap() -> SampleSpec:
    years = list(range(2012, 2017))
    exports = [4.20, 4.85, 5.10, 5.60, 6.05]
    imports = [3.90, 3.50, 3.75, 4.25, 4.40]
    k = years.index(2014)
    gap = round(exports[k] - imports[k], 2)
    steps = (
        _s(
            "The line chart shows exports and imports in billion US$ from 2012 to 2016.",
            "Two lines show exports and imports (billion US$), 2012-2016.",
        ),
        _s(
            "The red line is exports and the blue line is imports, according to the legend.",
            "Red = exports, blue = imports.",
        ),
        _s(
            "The exports line stays above the imports line in every year.",
            "Exports are higher than imports throughout.",
        ),
        _s("Locate the year 2014 on the horizontal axis.", "Look at 2014 on the x-axis."),
        _s(
            "Each point is labelled with its value to two decimals.",
            "Points show values with two decimals.",
        ),
        _s(
            f"In 2014 the exports point is labelled {exports[k]:.2f}.",
            f"Exports in 2014: {exports[k]:.2f}.",
            True,
        ),
        _s(
            f"In 2014 the imports point is labelled {imports[k]:.2f}.",
            f"Imports in 2014: {imports[k]:.2f}.",
            True,
        ),
        _s(
            f"The difference is {exports[k]:.2f} - {imports[k]:.2f} = {gap:.2f}.",
            f"{exports[k]:.2f} - {imports[k]:.2f} = {gap:.2f}.",
            True,
        ),
        _s(
            f"So exports exceeded imports by {gap:.2f} billion US$ in 2014.",
            f"The gap is {gap:.2f} billion.",
        ),
    )
    return SampleSpec(
        item_id="plotqa-06",
        source="plotqa",
        question="What is the difference between exports and imports in 2014?",
        steps=steps,
        answer=f"{gap:.2f}",
        draw=_line_chart(
            years,
            {"Exports": exports, "Imports": imports},
            "Exports and imports",
            "Billion US$",
            _two_decimals,
        ),
        difficulty="hard",
        metadata={"chart": "line", "template": "difference"},
        right=(f"{gap:.2f}", f"{gap:.2f} billion", f"${gap:.2f} billion"),
        wrong=(f"{exports[k] - imports[k + 1]:.2f}", "0.5"),
        ask="the gap between exports and imports in 2014",
        topic="the line chart",
    )


def _pq_sum() -> SampleSpec:
    labels = ["North", "South", "East", "West"]
    values = [7850, 4300, 6120, 3400]
    total = values[0] + values[2]
    steps = (
        _s(
            "The bar chart shows the number of students enrolled at four schools.",
            "The chart gives student enrolment for four schools.",
        ),
        _s("Each bar is labelled with its number of students.", "Bar labels give the enrolment."),
        *_read_steps(
            [(lab, _thousands(v)) for lab, v in zip(labels, values, strict=False)],
            "bar",
            keys=("North", "East"),
        ),
        _s(
            "The question needs the North and East schools only.", "Only North and East are needed."
        ),
        _s("South (4,300) and West (3,400) are not included.", "South and West are left out."),
        _s(
            f"Adding them: {_thousands(values[0])} + {_thousands(values[2])} = "
            f"{_thousands(total)}.",
            f"{_thousands(values[0])} + {_thousands(values[2])} = {_thousands(total)}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="plotqa-07",
        source="plotqa",
        question="What is the total number of students enrolled in the North and East schools?",
        steps=steps,
        answer=str(total),
        draw=_bar_chart(labels, values, "Students enrolled by school", "Students", _thousands),
        metadata={"chart": "vbar", "template": "sum"},
        right=(_thousands(total), str(total), f"{_thousands(total)} students"),
        wrong=(_thousands(values[0] + values[1]), _thousands(sum(values))),
        ask="the combined enrolment of North and East",
        topic="the bar chart",
    )


def _pq_hbar_compare() -> SampleSpec:
    labels = ["Peru", "Ghana", "Nepal", "Fiji"]
    values = [62.5, 37.5, 41.0, 58.5]
    fiji, nepal = values[3], values[2]
    steps = (
        _s(
            "The horizontal bar chart shows the share of households with internet access, in "
            "percent.",
            "The chart gives household internet access (%) by country.",
        ),
        _s(
            "The four countries are Peru, Ghana, Nepal and Fiji.",
            "Countries: Peru, Ghana, Nepal, Fiji.",
        ),
        _s(f"The bar for Fiji ends at {fiji}%.", f"Fiji: {fiji}%.", True),
        _s(f"The bar for Nepal ends at {nepal}%.", f"Nepal: {nepal}%.", True),
        _s(f"{fiji} is greater than {nepal}.", f"{fiji} > {nepal}.", True),
        _s("Fiji's bar is visibly longer than Nepal's bar.", "Fiji's bar is longer."),
        _s("So Fiji has a higher share than Nepal.", "Fiji's share is higher.", True),
        _s("The answer is yes.", "Yes."),
    )
    return SampleSpec(
        item_id="plotqa-08",
        source="plotqa",
        question="Does Fiji have a higher share of households with internet access than Nepal?",
        steps=steps,
        answer="Yes",
        draw=_bar_chart(
            labels,
            values,
            "Households with internet access",
            "Percent",
            _one_decimal,
            horizontal=True,
        ),
        answer_type="yes_no",
        metadata={"chart": "hbar", "template": "compare"},
        right=("Yes", "yes", "Yes."),
        wrong=("No",),
        ask="whether Fiji's share exceeds Nepal's",
        topic="the bar chart",
    )


def _plotqa_specs() -> list[SampleSpec]:
    return [
        _pq_range(),
        _pq_argmax(),
        _pq_average(),
        _pq_compare_years(),
        _pq_mc_highest(),
        _pq_series_gap(),
        _pq_sum(),
        _pq_hbar_compare(),
    ]


def sample_specs() -> list[SampleSpec]:
    """All 40 sample specs, in benchmark order (8 per source); nothing is drawn yet.

    Examples:
        >>> specs = sample_specs()
        >>> len(specs), specs[0].item_id, specs[0].item().image
        (40, 'mathvision-01', 'images/mathvision-01.png')
    """
    return [
        *_mathvision_specs(),
        *_scienceqa_specs(),
        *_realworldqa_specs(),
        *_mmvp_specs(),
        *_plotqa_specs(),
    ]


# --------------------------------------------------------------------------------------------
# Prediction styles
# --------------------------------------------------------------------------------------------

FILLERS: tuple[str, ...] = (
    "Let me look at the image carefully before answering.",
    "I need to make sure I read every label correctly.",
    "This kind of question tests careful observation.",
    "It is important not to jump to conclusions here.",
    "Let me double-check that nothing in the picture was missed.",
    "I will now put these observations together.",
    "Everything found so far is consistent.",
    "Re-reading the question confirms what is being asked.",
    "No other details in the picture change the result.",
    "Checking the work once more, the reasoning holds.",
    "I should state the final answer clearly.",
    "The image is clear enough to read all the details.",
    "Now I can move on to the next part of the reasoning.",
    "This is a fairly standard problem of its type.",
    "I want to be careful and methodical about this.",
)

CONNECTIVES: tuple[str, ...] = (
    "Looking at the image, ",
    "Next, ",
    "I can see that ",
    "From the picture, ",
    "Then ",
    "Now, ",
    "It follows that ",
    "Also, ",
    "Observing closely, ",
    "Note that ",
)

TERSE_SHORTCUTS: tuple[str, ...] = (
    "This follows directly.",
    "No further work is needed.",
    "The rest is straightforward.",
    "That settles it.",
)
"""Unsupported shortcuts a terse model sometimes writes instead of a step."""

DISCOURSE_MARKERS: frozenset[str] = frozenset(
    {"So", "Therefore", "Thus", "Hence", "That", "This", "Alternatively", "Check", "Answer"}
)
"""Sentence openers that do not take another connective in front of them."""

VAGUE_STEPS: tuple[str, ...] = (
    "Looking at the image, the answer is clear.",
    "Based on what is shown, I picked the most reasonable answer.",
    "The picture gives enough information to answer the question.",
    "After a quick look, this seems right.",
    "Considering all the details, I am fairly confident.",
    "This is the most likely answer given the image.",
)

PROPER_NOUNS: frozenset[str] = frozenset(
    [
        "I",
        "Monday",
        "Tuesday",
        "Norland",
        "Eastmere",
        "Westhaven",
        "Southvale",
        "Solution",
        "Norway",
        "Chile",
        "Kenya",
        "Peru",
        "Vietnam",
        "Ethiopia",
        "Colombia",
        "Uganda",
        "North",
        "South",
        "East",
        "West",
        "Fiji",
        "Nepal",
        "Ghana",
        "Pythagoras",
    ]
)
"""First words that keep their capital after a connective (names, not sentence starts)."""


def _after_connective(text: str) -> str:
    """Lower-case the first letter of a sentence unless it starts a name or a variable.

    Examples:
        >>> _after_connective("The bar for Chile"), _after_connective("AB = 10")
        ('the bar for Chile', 'AB = 10')
    """
    first = re.split(r"[\s:,']", text, maxsplit=1)[0]
    article = first == "A" and text[2:3].islower()
    if not article and (first in PROPER_NOUNS or not first[1:].islower() or not first[0].isupper()):
        return text
    return text[0].lower() + text[1:]


def _lis_length(sequence: Sequence[int]) -> int:
    tails: list[int] = []
    for value in sequence:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(tails):
            tails.append(value)
        else:
            tails[lo] = value
    return len(tails)


def _wrong_ids(style: str, specs: Sequence[SampleSpec], count: int) -> set[str]:
    """Which items a style answers wrongly (fixed per style)."""
    rng = random.Random(f"{style}/wrong")
    return set(rng.sample([s.item_id for s in specs], count))


def _pick_answer(spec: SampleSpec, rng: random.Random, correct: bool, plain: bool = False) -> str:
    if not correct and spec.wrong:
        return rng.choice(spec.wrong)
    if plain:
        return spec.right[0] if spec.right else spec.answer
    return rng.choice(spec.right) if spec.right else spec.answer


def _terse(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    """2-4 paraphrased key steps, now and then one unsupported shortcut (P high, R low)."""
    steps = list(spec.steps)
    keys = [k for k, s in enumerate(steps) if s.key]
    want = min(len(steps), rng.choice((2, 3, 3, 4)))
    if len(keys) < want:
        others = [k for k in range(len(steps)) if k not in keys]
        keys += rng.sample(others, want - len(keys))
    chosen = sorted(rng.sample(keys, want))
    out = [steps[k].para for k in chosen]
    if rng.random() < 0.3:
        out.insert(rng.randrange(len(out) + 1), rng.choice(TERSE_SHORTCUTS))
    return out, _pick_answer(spec, rng, correct, plain=True)


def _question_restatement(spec: SampleSpec) -> str:
    wh = spec.ask.split()[0] in {"whether", "which", "how", "what"}
    return f"The question asks {'' if wh else 'for '}{spec.ask}."


def _with_connective(text: str, rng: random.Random, first: bool) -> str:
    """Prefix a connective the way chatty models do (not before "So", "Therefore"...)."""
    if text.split()[0].rstrip(",") in DISCOURSE_MARKERS:
        return text
    prefix = "First, " if first else rng.choice(CONNECTIVES)
    return prefix + _after_connective(text)


def _verbose(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    """Nearly every step, connectives, a restated question and filler (R high, P lower)."""
    steps = list(spec.steps)
    n = len(steps)
    n_drop = (1 if n >= 6 else 0) + (1 if n >= 9 and rng.random() < 0.5 else 0)
    dropped = set(rng.sample(range(1, n), n_drop))
    body: list[str] = []
    for k, step in enumerate(steps):
        if k not in dropped:
            body.append(_with_connective(step.para, rng, first=not body))
    target = round(n * rng.uniform(1.55, 1.95))
    n_fill = max(2, target - len(body) - 2)
    for filler in rng.sample(FILLERS, min(n_fill, len(FILLERS))):
        body.insert(rng.randrange(1, len(body) + 1), filler)
    answer = _pick_answer(spec, rng, correct)
    closer = f"Putting everything together, the final answer is {answer}."
    return [_question_restatement(spec), *body, closer], answer


def _scrambled(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    steps = list(spec.steps)
    n = len(steps)
    keep = list(range(n))
    if n >= 6:
        for k in rng.sample(keep, 1):
            keep.remove(k)
    best: list[int] = keep[:]
    best_ratio = 2.0
    for _ in range(40):
        order = keep[:]
        rng.shuffle(order)
        ratio = _lis_length(order) / len(order)
        if ratio < best_ratio:
            best, best_ratio = order, ratio
        if ratio <= 0.5:
            break
    return [steps[k].para for k in best], _pick_answer(spec, rng, correct, plain=True)


def _weak(spec: SampleSpec, rng: random.Random, correct: bool) -> tuple[list[str], str]:
    count = rng.choice((1, 2, 2))
    steps = rng.sample(VAGUE_STEPS, count)
    if rng.random() < 0.35:
        steps[0] = f"I looked at {spec.topic} in the image."
    return steps, _pick_answer(spec, rng, correct, plain=True)


MESSY_FORMATS: tuple[str, ...] = (
    *("fenced",) * 7,
    *("prose",) * 6,
    *("think",) * 6,
    *("markdown",) * 6,
    *("numbered",) * 3,
    *("plain",) * 3,
    *("trailing_comma",) * 2,
    *("truncated",) * 2,
    "refusal",
    "symbols",
    "empty",
)
"""Raw-output shapes of ``messy-raw.jsonl`` (one per present item)."""


def _messy_formats(ids: Sequence[str]) -> dict[str, str]:
    present = [i for i in ids if i not in MISSING_IN_MESSY]
    if len(present) != len(MESSY_FORMATS):
        raise ValueError(
            f"messy formats cover {len(MESSY_FORMATS)} items, sample has {len(present)}"
        )
    formats = list(MESSY_FORMATS)
    random.Random("messy-raw/formats").shuffle(formats)
    return dict(zip(present, formats, strict=True))


def _boxed(answer: str) -> str:
    return answer if answer.startswith("\\boxed") else f"\\boxed{{{answer}}}"


def _messy(spec: SampleSpec, rng: random.Random, correct: bool, shape: str) -> str:
    steps = list(spec.steps)
    kept = [s.para for s in steps if rng.random() < 0.75] or [steps[-1].para]
    answer = _pick_answer(spec, rng, correct, plain=True)
    record = {"reasoning_steps": kept, "answer": answer}
    compact = json.dumps(record, ensure_ascii=False)
    pretty = json.dumps(record, ensure_ascii=False, indent=2)
    if shape == "fenced":
        return f"```json\n{pretty}\n```"
    if shape == "prose":
        return (
            "Sure! Here is my step-by-step reasoning.\n\n"
            f"{pretty}\n\nLet me know if you need anything else."
        )
    if shape == "think":
        musing = (
            f"Okay. {_question_restatement(spec)} Let me look at {spec.topic}. "
            f"{steps[0].para} Hmm, I should check this carefully. {steps[-1].para}"
        )
        return f"<think>\n{musing}\n</think>\n\n{compact}"
    if shape == "markdown":
        lines = ["Let's solve this step by step.", ""]
        lines += [f"**Step {k + 1}:** {text}" for k, text in enumerate(kept)]
        lines += ["", f"Final answer: {_boxed(answer)}"]
        return "\n".join(lines)
    if shape == "numbered":
        lines = [f"{k + 1}. {text}" for k, text in enumerate(kept)]
        return "\n".join([*lines, f"Answer: {answer}"])
    if shape == "plain":
        return compact
    if shape == "trailing_comma":
        body = ", ".join(json.dumps(t, ensure_ascii=False) for t in kept)
        return (
            f'{{"reasoning_steps": [{body},], "answer": {json.dumps(answer, ensure_ascii=False)},}}'
        )
    if shape == "truncated":
        cut = (
            compact.find(json.dumps(kept[-1], ensure_ascii=False))
            if len(kept) > 1
            else len(compact) // 2
        )
        return compact[: cut + max(8, len(kept[-1]) // 2)]
    if shape == "refusal":
        return "I cannot help with that."
    if shape == "symbols":
        return "}}}###"
    return ""


def build_predictions(specs: Sequence[SampleSpec]) -> dict[str, list[dict[str, Any]]]:
    """The prediction records of every style, in benchmark order.

    Args:
        specs: The sample specs (see :func:`sample_specs`).

    Returns:
        ``{style: [record, ...]}`` with records ready to write as JSONL.

    Examples:
        >>> predictions = build_predictions(sample_specs())
        >>> {style: len(records) for style, records in predictions.items()}["messy-raw"]
        38
        >>> predictions["terse-precise"][0]["reasoning_steps"]
        ['The rest is straightforward.', 'So AB^2 = 36 + 64 = 100.', 'Therefore AB = 10.']
    """
    wrong = {
        "terse-precise": _wrong_ids("terse-precise", specs, 6),
        "verbose-recall": _wrong_ids("verbose-recall", specs, 10),
        "scrambled-order": _wrong_ids("scrambled-order", specs, 12),
        "messy-raw": _wrong_ids("messy-raw", specs, 11),
        "right-answer-weak-reasoning": _wrong_ids("right-answer-weak-reasoning", specs, 2),
    }
    structured = {
        "terse-precise": _terse,
        "verbose-recall": _verbose,
        "scrambled-order": _scrambled,
        "right-answer-weak-reasoning": _weak,
    }
    shapes = _messy_formats([s.item_id for s in specs])
    out: dict[str, list[dict[str, Any]]] = {style: [] for style in PREDICTION_STYLES}
    for spec in specs:
        for style, make in structured.items():
            rng = random.Random(f"{style}/{spec.item_id}")
            steps, answer = make(spec, rng, spec.item_id not in wrong[style])
            out[style].append(
                {"id": spec.item_id, "model": style, "reasoning_steps": steps, "answer": answer}
            )
        if spec.item_id in shapes:
            rng = random.Random(f"messy-raw/{spec.item_id}")
            text = _messy(spec, rng, spec.item_id not in wrong["messy-raw"], shapes[spec.item_id])
            out["messy-raw"].append({"id": spec.item_id, "model": "messy-raw", "response": text})
    return out


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _jsonl(records: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def save_png(image: Image.Image, path: Path) -> None:
    """Save ``image`` as an RGB PNG whose bytes depend only on its pixels.

    Pillow writes no timestamp or software chunk, so equal pixels give equal bytes.
    """
    image.convert("RGB").save(path, format="PNG", optimize=True)


README = """\
# The crystalbench sample benchmark

40 visual questions written for crystalbench, 8 in the style of each CRYSTAL source
(`mathvision`, `scienceqa`, `realworldqa`, `mmvp`, `plotqa`). Nothing is copied from the real
datasets: every image is drawn by `crystalbench/data/sample_builder.py` (Pillow; matplotlib for
the charts) from the same parameters that write the item's reference chain, so the facts the
steps state are visible in the image.

- `benchmark.jsonl`: one `BenchmarkItem` per line; `image` is relative to this file.
  All four answer types appear (multiple choice with a letter, option-text or MMVP `(a)` gold,
  RealWorldQA-style options embedded in the question; numbers incl. decimals, thousands and
  LaTeX such as `\\frac{3}{2}`, `2\\sqrt{3}`, `9\\pi`; yes/no; short free text).
  `difficulty` is set on some items only, so the derived tiers are exercised too.
- `images/`: the drawn PNGs.
- `predictions/`: five contrasting model styles, generated from templates with a seeded RNG:
  - `terse-precise`: 2-4 paraphrased key steps (precision far above recall);
  - `verbose-recall`: nearly every step plus restatements and filler (recall above precision);
  - `scrambled-order`: most steps in shuffled order (LIS and Ordered F1 drop, Match F1 holds);
  - `messy-raw`: raw `response` text (JSON in fences or prose, `<think>` blocks, markdown
    steps with `\\boxed{}`, trailing commas, two truncated outputs, garbage), two items missing;
  - `right-answer-weak-reasoning`: right answers behind one or two vague steps.

What `crystal demo` measured when the sample was generated (encoder `minilm-offline`,
tau 0.35, macro averages over all 40 items; not comparable with the paper's numbers):

| style | Acc (%) | Match F1 | P | R | Steps | LIS | Ordered F1 | missing | parse failed |
|---|---|---|---|---|---|---|---|---|---|
| `terse-precise` | 85.0 | 0.498 | 0.945 | 0.346 | 3.02 | 0.992 | 0.497 | 0 | 0 |
| `verbose-recall` | 75.0 | 0.671 | 0.525 | 0.934 | 14.90 | 0.882 | 0.647 | 0 | 0 |
| `scrambled-order` | 70.0 | 0.922 | 0.987 | 0.865 | 7.35 | 0.444 | 0.768 | 0 | 0 |
| `messy-raw` | 57.5 | 0.725 | 0.875 | 0.630 | 5.35 | 0.973 | 0.719 | 2 | 2 |
| `right-answer-weak-reasoning` | 95.0 | 0.093 | 0.275 | 0.057 | 1.70 | 0.988 | 0.092 | 0 | 0 |

Regenerate with `python -m crystalbench.data.sample_builder` (needs matplotlib); the output is
deterministic. Run `crystal demo` to score the five styles.
"""


def build_sample(out_dir: str | Path = SAMPLE_DIR) -> list[BenchmarkItem]:
    """Write the sample benchmark, its images, prediction files and README under ``out_dir``.

    Args:
        out_dir: Target folder (created if needed); defaults to the bundled sample.

    Returns:
        The benchmark items as written (image paths relative to ``out_dir``).

    Examples:
        >>> import tempfile
        >>> items = build_sample(tempfile.mkdtemp())
        >>> len(items), items[0].id, items[0].reference_steps[0]
        (40, 'mathvision-01', 'The figure shows triangle ABC with a right-angle mark at vertex C.')
    """
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "predictions").mkdir(parents=True, exist_ok=True)
    specs = sample_specs()
    items = [spec.item() for spec in specs]
    for spec in specs:
        save_png(spec.draw(), out / "images" / f"{spec.item_id}.png")
    (out / "benchmark.jsonl").write_text(
        _jsonl([item.model_dump(mode="json") for item in items]), encoding="utf-8"
    )
    for style, records in build_predictions(specs).items():
        (out / "predictions" / f"{style}.jsonl").write_text(_jsonl(records), encoding="utf-8")
    (out / "README.md").write_text(README, encoding="utf-8")
    return items


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: ``python -m crystalbench.data.sample_builder [--out DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="output folder")
    args = parser.parse_args(argv)
    items = build_sample(args.out)
    print(
        f"wrote {len(items)} items, images and {len(PREDICTION_STYLES)} prediction files to "
        f"{args.out}"
    )


if __name__ == "__main__":
    main()
