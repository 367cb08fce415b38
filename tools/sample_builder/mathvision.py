"""MathVision-style items: geometry with labelled lengths and angles, counting puzzles."""

from __future__ import annotations

import math

from PIL import Image, ImageDraw

from tools.sample_builder.drawing import (
    BLACK,
    COLOURS,
    GREY,
    RGB,
    WHITE,
    _canvas,
    _dashed,
    _text,
    _tick,
)
from tools.sample_builder.specs import SampleSpec, _letter, _mc_forms, _s

__all__ = ["mathvision_specs"]


def mathvision_specs() -> list[SampleSpec]:
    """The eight MathVision-style specs, in benchmark order (nothing is drawn yet)."""
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
