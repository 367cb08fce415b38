"""RealWorldQA-style items: drawn scenes (road, kitchen shelf, parking lot), options embedded
in the question.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from tools.sample_builder.drawing import (
    BLACK,
    COLOURS,
    GREY,
    RGB,
    WHITE,
    _arrow,
    _canvas,
    _text,
)
from tools.sample_builder.specs import Drawer, SampleSpec, _embedded, _mc_forms, _s

__all__ = ["realworldqa_specs"]


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


def realworldqa_specs() -> list[SampleSpec]:
    """The eight RealWorldQA-style specs, in benchmark order (nothing is drawn yet)."""
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
