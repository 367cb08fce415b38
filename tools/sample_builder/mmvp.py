"""MMVP-style items: pairs of images that differ in one attribute, same question, opposite
answers.
"""

from __future__ import annotations

from PIL import Image

from tools.sample_builder.drawing import BLACK, GREY, _canvas
from tools.sample_builder.specs import Drawer, SampleSpec, Step, _mmvp_forms, _s

__all__ = ["mmvp_specs"]


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


def mmvp_specs() -> list[SampleSpec]:
    """The eight MMVP-style specs, in benchmark order (nothing is drawn yet)."""
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
