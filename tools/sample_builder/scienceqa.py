"""ScienceQA-style items: food webs, magnets, a map, states of matter, thermometers,
solutions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from PIL import Image

from tools.sample_builder.drawing import BLACK, GREY, WHITE, _arrow, _canvas, _text
from tools.sample_builder.specs import Drawer, SampleSpec, _mc_forms, _s

__all__ = ["scienceqa_specs"]


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


def scienceqa_specs() -> list[SampleSpec]:
    """The eight ScienceQA-style specs, in benchmark order (nothing is drawn yet)."""
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
