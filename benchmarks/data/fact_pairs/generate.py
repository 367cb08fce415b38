"""Generate the templated step pairs of the fact-pair set (seeded, reproducible).

Two banks of templates with disjoint sentence frames and vocabulary write two splits:
``dev`` (the rules of ``crystalbench.scoring.filters.guard`` were written and tuned against it) and
``heldout`` (written at the same time, before any rule was run on it, and not used to tune;
see README.md). A third split, ``sample``, copies every reference step of the bundled sample
with one fact changed (the attack of issue 24: reference wording, wrong fact).

Each template draws one scene (an angle, a chart, a shelf of objects, a food web...) and emits
pairs of a reference step and a predicted step labelled

- ``paraphrase``: the same fact in other words (number spellings, units, arguments swapped,
  an extra intermediate value): must match;
- ``contradiction``: the same frame with one fact changed, of kind ``number``, ``negation``,
  ``relation``, ``option`` or ``colour``: must not match;
- ``unrelated``: another fact about the same scene: should not match.

Usage (from the repository root; rewrites ``generated.jsonl`` byte for byte)::

    python benchmarks/data/fact_pairs/generate.py [--seed 24] [--scenes 40]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "generated.jsonl"
sys.path.insert(0, str(HERE))  # the banks' helpers and the sample split live beside this file

from pairs_common import COLOUR_SYNONYMS, COLOURS, Pair, Template, labels, other, pair, words  # noqa: E402
from pairs_sample import sample_pairs  # noqa: E402

# =============================================================================================
# dev bank
# =============================================================================================


def dev_angle(rng: random.Random) -> Iterator[Pair]:
    name = labels(rng, 3)
    v = rng.randrange(20, 160, 5)
    w = other(rng, v, 20, 160)
    ref = f"The angle {name} is {v} degrees."
    yield pair("paraphrase", "unit-spelling", "mathvision", ref, f"Angle {name} measures {v}°.")
    yield pair("paraphrase", "latex", "mathvision", ref, f"$\\angle {name} = {v}^\\circ$.")
    yield pair("contradiction", "number", "mathvision", ref, f"The angle {name} is {w} degrees.")
    yield pair("contradiction", "number", "mathvision", ref, f"Angle {name} measures {w}°.")
    yield pair(
        "unrelated",
        "same-scene",
        "mathvision",
        ref,
        f"Triangle {name} has a right angle at {name[2]}.",
    )


def dev_count(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["apples", "cups", "books", "birds", "cars", "chairs", "coins", "pencils"])
    place = rng.choice(["table", "shelf", "desk", "floor", "tray"])
    n = rng.randint(2, 19)
    m = other(rng, n, 2, 19)
    ref = f"There are {n} {thing} on the {place}."
    yield pair(
        "paraphrase",
        "number-words",
        "realworldqa",
        ref,
        f"I count {words(n)} {thing} on the {place}.",
    )
    yield pair("paraphrase", "wording", "realworldqa", ref, f"The {place} holds {n} {thing}.")
    yield pair(
        "contradiction", "number", "realworldqa", ref, f"There are {m} {thing} on the {place}."
    )
    yield pair(
        "contradiction", "number", "realworldqa", ref, f"I count {words(m)} {thing} on the {place}."
    )
    yield pair("unrelated", "same-scene", "realworldqa", ref, f"The {place} is made of dark wood.")


def dev_bar_value(rng: random.Random) -> Iterator[Pair]:
    year = rng.randint(2000, 2020)
    v = rng.randrange(10, 95, 5)
    w = other(rng, v, 10, 95)
    series = rng.choice(["sales", "revenue", "exports", "rainfall", "visitors"])
    ref = f"The bar for {year} shows {series} of {v}."
    yield pair("paraphrase", "wording", "plotqa", ref, f"In {year}, {series} reached {v}.")
    yield pair("paraphrase", "decimal", "plotqa", ref, f"The {series} value in {year} is {v}.0.")
    yield pair(
        "contradiction", "number", "plotqa", ref, f"The bar for {year} shows {series} of {w}."
    )
    yield pair("contradiction", "number", "plotqa", ref, f"In {year}, {series} reached {w}.")
    yield pair(
        "unrelated",
        "same-scene",
        "plotqa",
        ref,
        "The x-axis of the chart lists the years from 2000 to 2020.",
    )


def dev_percent(rng: random.Random) -> Iterator[Pair]:
    p = rng.choice([10, 20, 25, 30, 40, 50, 60, 75, 80])
    q = other(rng, p, 5, 95)
    group = rng.choice(["students", "voters", "households", "respondents"])
    choice = rng.choice(["cycling", "the park", "tea", "option one"])
    ref = f"{p}% of the {group} chose {choice}."
    yield pair(
        "paraphrase",
        "fraction",
        "plotqa",
        ref,
        f"A share of {p / 100:g} of the {group} chose {choice}.",
    )
    yield pair(
        "paraphrase", "percent-word", "plotqa", ref, f"{p} percent of the {group} chose {choice}."
    )
    yield pair("contradiction", "number", "plotqa", ref, f"{q}% of the {group} chose {choice}.")
    yield pair("unrelated", "same-scene", "plotqa", ref, "The pie chart has four slices.")


def dev_length(rng: random.Random) -> Iterator[Pair]:
    side = labels(rng, 2)
    v = rng.randint(2, 15)
    w = other(rng, v, 2, 15)
    ref = f"Side {side} is {v} cm long."
    yield pair(
        "paraphrase", "unit-conversion", "mathvision", ref, f"The length of {side} is {v * 10} mm."
    )
    yield pair("paraphrase", "wording", "mathvision", ref, f"{side} = {v} cm.")
    yield pair("contradiction", "number", "mathvision", ref, f"Side {side} is {w} cm long.")
    yield pair("contradiction", "number", "mathvision", ref, f"{side} = {w} cm.")
    other_side = side[::-1] if side[::-1] != side else "XY"
    yield pair(
        "unrelated", "other-side", "mathvision", ref, f"Side {labels(rng, 2)} is {w} cm long."
    )
    del other_side


def dev_sum(rng: random.Random) -> Iterator[Pair]:
    parts = [rng.randint(1, 9) for _ in range(rng.randint(3, 4))]
    total = sum(parts)
    expr = " + ".join(str(p) for p in parts)
    ref = f"The total is {expr} = {total}."
    yield pair("paraphrase", "extra-value", "mathvision", ref, f"In total there are {total}.")
    yield pair("paraphrase", "wording", "mathvision", ref, f"Adding up: {expr} gives {total}.")
    yield pair(
        "contradiction",
        "number",
        "mathvision",
        ref,
        f"The total is {expr} = {total + rng.choice([-2, -1, 1, 2])}.",
    )
    yield pair(
        "contradiction",
        "number",
        "mathvision",
        ref,
        f"In total there are {total + rng.choice([3, 4, 5])}.",
    )


def dev_area(rng: random.Random) -> Iterator[Pair]:
    s = rng.randint(3, 12)
    ref = f"The area is {s * s} square units."
    yield pair(
        "paraphrase",
        "extra-value",
        "mathvision",
        ref,
        f"{s} squared is {s * s}, so that is the area.",
    )
    yield pair("paraphrase", "wording", "mathvision", ref, f"The area equals {s * s}.")
    yield pair(
        "contradiction",
        "number",
        "mathvision",
        ref,
        f"The area is {s * s + rng.choice([-4, 2, 6, 10])} square units.",
    )
    yield pair("unrelated", "same-scene", "mathvision", ref, "The square has four equal sides.")


def dev_door(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["door", "window", "gate", "drawer", "lid of the box"])
    state = rng.choice(["open", "closed", "locked", "painted"])
    ref = f"The {thing} is {state}."
    yield pair(
        "paraphrase", "wording", "realworldqa", ref, f"In the picture the {thing} is {state}."
    )
    yield pair("contradiction", "negation", "realworldqa", ref, f"The {thing} is not {state}.")
    yield pair("contradiction", "negation", "realworldqa", ref, f"The {thing} isn't {state}.")
    yield pair(
        "unrelated",
        "same-scene",
        "realworldqa",
        ref,
        f"A lamp stands next to the {thing.split()[-1]}.",
    )


def dev_presence(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["cat", "dog", "person", "bicycle", "traffic light", "umbrella"])
    place = rng.choice(["street", "sofa", "bench", "sidewalk", "porch"])
    ref = f"There is a {thing} on the {place}."
    yield pair("paraphrase", "wording", "mmvp", ref, f"A {thing} can be seen on the {place}.")
    yield pair("contradiction", "negation", "mmvp", ref, f"There is no {thing} on the {place}.")
    yield pair("contradiction", "negation", "mmvp", ref, f"No {thing} is visible on the {place}.")
    yield pair("unrelated", "same-scene", "mmvp", ref, f"The {place} is wet from the rain.")


def dev_food_web(rng: random.Random) -> Iterator[Pair]:
    eater, food = rng.choice(
        [
            ("rabbit", "grass"),
            ("frog", "grasshopper"),
            ("snake", "mouse"),
            ("fox", "rabbit"),
            ("hawk", "snake"),
        ]
    )
    ref = f"The {eater} eats the {food}."
    yield pair("paraphrase", "wording", "scienceqa", ref, f"The {food} is eaten by the {eater}.")
    yield pair(
        "contradiction", "negation", "scienceqa", ref, f"The {eater} does not eat the {food}."
    )
    yield pair("contradiction", "negation", "scienceqa", ref, f"The {eater} never eats the {food}.")
    yield pair(
        "unrelated",
        "same-scene",
        "scienceqa",
        ref,
        "The arrows in the food web show the flow of energy.",
    )


def dev_yes_no(rng: random.Random) -> Iterator[Pair]:
    answer = rng.choice(["yes", "no"])
    flip = "no" if answer == "yes" else "yes"
    ref = f"The answer is {answer}."
    yield pair("paraphrase", "wording", "mmvp", ref, f"So the answer is {answer.capitalize()}.")
    yield pair("contradiction", "negation", "mmvp", ref, f"The answer is {flip}.")


def dev_bars_compare(rng: random.Random) -> Iterator[Pair]:
    a, b = rng.sample(COLOURS[:6], 2)
    ref = f"The {a} bar is taller than the {b} bar."
    yield pair(
        "paraphrase", "argument-swap", "plotqa", ref, f"The {b} bar is shorter than the {a} bar."
    )
    yield pair("paraphrase", "wording", "plotqa", ref, f"The {a} bar is higher than the {b} bar.")
    yield pair(
        "contradiction", "relation", "plotqa", ref, f"The {a} bar is shorter than the {b} bar."
    )
    yield pair(
        "contradiction", "relation", "plotqa", ref, f"The {b} bar is taller than the {a} bar."
    )
    yield pair("unrelated", "same-scene", "plotqa", ref, f"The {a} bar has a black outline.")


def dev_more_fewer(rng: random.Random) -> Iterator[Pair]:
    x, y = rng.sample(["cats", "dogs", "birds", "cars", "trees", "boats", "people"], 2)
    ref = f"There are more {x} than {y} in the picture."
    yield pair(
        "paraphrase",
        "argument-swap",
        "realworldqa",
        ref,
        f"There are fewer {y} than {x} in the picture.",
    )
    yield pair(
        "contradiction",
        "relation",
        "realworldqa",
        ref,
        f"There are fewer {x} than {y} in the picture.",
    )
    yield pair(
        "contradiction",
        "relation",
        "realworldqa",
        ref,
        f"There are more {y} than {x} in the picture.",
    )


def dev_left_right(rng: random.Random) -> Iterator[Pair]:
    a, b = rng.sample(["cup", "plate", "lamp", "book", "vase", "phone", "laptop"], 2)
    ref = f"The {a} is to the left of the {b}."
    yield pair("paraphrase", "argument-swap", "mmvp", ref, f"The {b} is to the right of the {a}.")
    yield pair("contradiction", "relation", "mmvp", ref, f"The {a} is to the right of the {b}.")
    yield pair("contradiction", "relation", "mmvp", ref, f"The {b} is to the left of the {a}.")
    yield pair(
        "unrelated", "same-scene", "mmvp", ref, f"The {a} is white and the {b} is white too."
    )


def dev_trend(rng: random.Random) -> Iterator[Pair]:
    series = rng.choice(["population", "temperature", "price", "number of visitors"])
    y1 = rng.randint(1990, 2010)
    y2 = y1 + rng.randint(3, 10)
    ref = f"The {series} increases from {y1} to {y2}."
    yield pair("paraphrase", "wording", "plotqa", ref, f"Between {y1} and {y2} the {series} rises.")
    yield pair(
        "contradiction", "relation", "plotqa", ref, f"The {series} decreases from {y1} to {y2}."
    )
    yield pair(
        "contradiction", "relation", "plotqa", ref, f"Between {y1} and {y2} the {series} falls."
    )


def dev_superlative(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["console", "box", "bottle", "tree", "building"])
    p1, p2 = rng.sample(["left", "middle", "right"], 2)
    ref = f"The {p1} {thing} is the smallest."
    yield pair(
        "paraphrase", "wording", "realworldqa", ref, f"The smallest {thing} is the {p1} one."
    )
    yield pair(
        "contradiction", "relation", "realworldqa", ref, f"The {p2} {thing} is the smallest."
    )
    yield pair("contradiction", "relation", "realworldqa", ref, f"The {p1} {thing} is the largest.")
    yield pair("unrelated", "same-scene", "realworldqa", ref, f"The {p2} {thing} is the largest.")


def dev_magnets(rng: random.Random) -> Iterator[Pair]:
    verb = rng.choice(["attract", "repel"])
    flip = "repel" if verb == "attract" else "attract"
    ref = f"The magnets will {verb} each other."
    yield pair("paraphrase", "wording", "scienceqa", ref, f"These two magnets {verb} each other.")
    yield pair(
        "contradiction", "relation", "scienceqa", ref, f"The magnets will {flip} each other."
    )
    yield pair(
        "contradiction", "negation", "scienceqa", ref, f"The magnets will not {verb} each other."
    )


def dev_matter(rng: random.Random) -> Iterator[Pair]:
    thing, state = rng.choice(
        [
            ("ice cube", "solid"),
            ("orange juice", "liquid"),
            ("steam", "gas"),
            ("rock", "solid"),
            ("milk", "liquid"),
        ]
    )
    wrong = rng.choice([s for s in ("solid", "liquid", "gas") if s != state])
    ref = f"The {thing} is a {state}."
    yield pair(
        "paraphrase", "wording", "scienceqa", ref, f"So the {thing} is a {state}, it has that form."
    )
    yield pair("contradiction", "relation", "scienceqa", ref, f"The {thing} is a {wrong}.")


def dev_option_letter(rng: random.Random) -> Iterator[Pair]:
    options = [f"{v}°" for v in rng.sample(range(30, 90, 5), 4)]
    k = rng.randrange(4)
    j = other(rng, k, 0, 3)
    letter, wrong = "ABCD"[k], "ABCD"[j]
    ref = f"Select option {letter} from the provided list of choices."
    yield pair(
        "paraphrase",
        "letter-text",
        "mathvision",
        ref,
        f"Among the choices, {options[k]} is option {letter}.",
        options,
    )
    yield pair("paraphrase", "wording", "mathvision", ref, f"The answer is ({letter}).", options)
    yield pair(
        "contradiction",
        "option",
        "mathvision",
        ref,
        f"Select option {wrong} from the provided list of choices.",
        options,
    )
    yield pair("contradiction", "option", "mathvision", ref, f"The answer is ({wrong}).", options)


def dev_option_text(rng: random.Random) -> Iterator[Pair]:
    options = rng.sample(["fox", "grass", "frog", "hawk", "rabbit", "snake"], 3)
    k = rng.randrange(3)
    j = other(rng, k, 0, 2)
    role = rng.choice(["producer", "top consumer", "prey of the snake"])
    ref = f"Therefore the {role} among the choices is the {options[k]}."
    yield pair(
        "paraphrase",
        "letter-text",
        "scienceqa",
        ref,
        f"Therefore the {role} is option {'ABC'[k]}.",
        options,
    )
    yield pair(
        "paraphrase", "wording", "scienceqa", ref, f"So the {options[k]} is the {role}.", options
    )
    yield pair(
        "contradiction",
        "option",
        "scienceqa",
        ref,
        f"Therefore the {role} among the choices is the {options[j]}.",
        options,
    )
    yield pair(
        "contradiction", "option", "scienceqa", ref, f"So the {options[j]} is the {role}.", options
    )


def dev_colour(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["car", "umbrella", "bus", "jacket", "balloon", "door"])
    c1, c2 = rng.sample(COLOURS, 2)
    ref = f"The {thing} is {c1}."
    yield pair("paraphrase", "wording", "mmvp", ref, f"The {thing} in the image is painted {c1}.")
    if c1 in COLOUR_SYNONYMS:
        yield pair(
            "paraphrase", "colour-synonym", "mmvp", ref, f"The {thing} is {COLOUR_SYNONYMS[c1]}."
        )
    yield pair("contradiction", "colour", "mmvp", ref, f"The {thing} is {c2}.")
    yield pair("contradiction", "colour", "mmvp", ref, f"The {thing} in the image is painted {c2}.")
    yield pair("unrelated", "same-scene", "mmvp", ref, f"The {thing} is parked in the shade.")


def dev_colour_region(rng: random.Random) -> Iterator[Pair]:
    region = rng.choice(["north-east", "south-west", "central", "northern"])
    c1, c2 = rng.sample(["green", "blue", "yellow", "red", "purple"], 2)
    ref = f"The {region} region is shaded dark {c1}."
    yield pair(
        "paraphrase", "wording", "scienceqa", ref, f"The {region} region is the dark {c1} one."
    )
    yield pair(
        "contradiction", "colour", "scienceqa", ref, f"The {region} region is shaded dark {c2}."
    )


DEV_BANK: tuple[Template, ...] = (
    dev_angle, dev_count, dev_bar_value, dev_percent, dev_length, dev_sum, dev_area, dev_door,
    dev_presence, dev_food_web, dev_yes_no, dev_bars_compare, dev_more_fewer, dev_left_right,
    dev_trend, dev_superlative, dev_magnets, dev_matter, dev_option_letter, dev_option_text,
    dev_colour, dev_colour_region,
)  # fmt: skip

# =============================================================================================
# held-out bank: other frames, other vocabulary
# =============================================================================================


def held_triangle(rng: random.Random) -> Iterator[Pair]:
    a, b = rng.randrange(30, 80, 5), rng.randrange(30, 80, 5)
    c = 180 - a - b
    v = rng.choice("PQR")
    ref = f"So the third angle at vertex {v} equals 180° - {a}° - {b}° = {c}°."
    yield pair(
        "paraphrase",
        "wording",
        "mathvision",
        ref,
        f"The angle at {v} is {c} degrees because the angles of a triangle sum to 180.",
    )
    yield pair("paraphrase", "extra-value", "mathvision", ref, f"Angle {v} = {c}°.")
    yield pair(
        "contradiction",
        "number",
        "mathvision",
        ref,
        f"So the third angle at vertex {v} equals 180° - {a}° - {b}° = {c + 10}°.",
    )
    yield pair("contradiction", "number", "mathvision", ref, f"Angle {v} = {c - 5}°.")
    yield pair(
        "unrelated",
        "same-scene",
        "mathvision",
        ref,
        "The triangle is drawn with one side horizontal.",
    )


def held_shelf(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["jars", "toy cars", "mugs", "candles", "plants", "shoes"])
    n = rng.randint(2, 12)
    m = other(rng, n, 2, 12)
    ref = f"The top shelf holds {words(n)} {thing}."
    yield pair(
        "paraphrase",
        "number-words",
        "realworldqa",
        ref,
        f"On the top shelf we can see {n} {thing}.",
    )
    yield pair(
        "contradiction", "number", "realworldqa", ref, f"On the top shelf we can see {m} {thing}."
    )
    yield pair(
        "contradiction", "number", "realworldqa", ref, f"The top shelf holds {words(m)} {thing}."
    )
    yield pair(
        "unrelated",
        "other-shelf",
        "realworldqa",
        ref,
        f"The bottom shelf holds {words(m)} {thing}.",
    )


def held_line_chart(rng: random.Random) -> Iterator[Pair]:
    month = rng.choice(["January", "March", "June", "September", "November"])
    v = round(rng.uniform(1.0, 9.9), 1)
    w = round(v + rng.choice([-1.5, -0.8, 0.7, 1.2, 2.5]), 1)
    ref = f"In {month} the line is at {v} million."
    yield pair(
        "paraphrase", "scale-word", "plotqa", ref, f"The value for {month} is about {v} million."
    )
    yield pair(
        "paraphrase",
        "thousands",
        "plotqa",
        ref,
        f"For {month}, the chart reads {round(v * 1_000_000):,}.",
    )
    yield pair("contradiction", "number", "plotqa", ref, f"In {month} the line is at {w} million.")
    yield pair(
        "contradiction", "number", "plotqa", ref, f"The value for {month} is about {w} million."
    )


def held_fraction(rng: random.Random) -> Iterator[Pair]:
    a, b = rng.choice([(1, 2), (1, 4), (3, 4), (2, 5), (1, 5), (3, 8)])
    share = a / b
    ref = f"The shaded part is {a}/{b} of the circle."
    yield pair(
        "paraphrase", "decimal", "mathvision", ref, f"The shaded part is {share:g} of the circle."
    )
    yield pair(
        "paraphrase", "percent", "mathvision", ref, f"{share * 100:g}% of the circle is shaded."
    )
    yield pair(
        "contradiction",
        "number",
        "mathvision",
        ref,
        f"The shaded part is {b - a if b - a != a else a + 1}/{b + 1} of the circle.",
    )
    yield pair(
        "unrelated",
        "same-scene",
        "mathvision",
        ref,
        "The circle is divided by straight lines through its centre.",
    )


def held_thermometer(rng: random.Random) -> Iterator[Pair]:
    day = rng.choice(["Monday", "Tuesday", "Friday", "Sunday"])
    t = rng.randrange(5, 35, 5)
    ref = f"{day}'s thermometer shows {t} °C."
    yield pair(
        "paraphrase", "wording", "scienceqa", ref, f"The reading on {day} is {t} degrees Celsius."
    )
    yield pair(
        "contradiction", "number", "scienceqa", ref, f"{day}'s thermometer shows {t + 5} °C."
    )
    yield pair(
        "unrelated",
        "other-day",
        "scienceqa",
        ref,
        "The thermometer for the other day shows a lower reading.",
    )


def held_clock(rng: random.Random) -> Iterator[Pair]:
    h, m = rng.randint(1, 12), rng.choice([0, 15, 30, 45])
    ref = f"The clock shows {h}:{m:02d}."
    yield pair("paraphrase", "wording", "textvqa", ref, f"The time on the clock is {h}:{m:02d}.")
    yield pair("contradiction", "number", "textvqa", ref, f"The clock shows {h % 12 + 1}:{m:02d}.")


def held_light(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(["the traffic light", "the lamp", "the screen", "the oven"])
    ref = f"{thing.capitalize()} is switched on."
    yield pair(
        "paraphrase", "wording", "realworldqa", ref, f"We can see that {thing} is switched on."
    )
    yield pair(
        "contradiction", "negation", "realworldqa", ref, f"{thing.capitalize()} is not switched on."
    )
    yield pair(
        "unrelated", "same-scene", "realworldqa", ref, f"{thing.capitalize()} is mounted on a pole."
    )


def held_wearing(rng: random.Random) -> Iterator[Pair]:
    who = rng.choice(["The man", "The woman", "The child", "The cyclist"])
    item = rng.choice(["a hat", "glasses", "a helmet", "a scarf"])
    ref = f"{who} is wearing {item}."
    yield pair("paraphrase", "wording", "mmvp", ref, f"{who} has {item} on.")
    yield pair("contradiction", "negation", "mmvp", ref, f"{who} is not wearing {item}.")
    yield pair("contradiction", "negation", "mmvp", ref, f"{who} isn't wearing {item}.")


def held_lines(rng: random.Random) -> Iterator[Pair]:
    l1, l2 = labels(rng, 2), labels(rng, 2)
    ref = f"Lines {l1} and {l2} intersect."
    yield pair("paraphrase", "wording", "mathvision", ref, f"{l1} and {l2} cross each other.")
    yield pair(
        "contradiction", "negation", "mathvision", ref, f"Lines {l1} and {l2} do not intersect."
    )


def held_shapes_all(rng: random.Random) -> Iterator[Pair]:
    shape = rng.choice(["squares", "circles", "triangles", "stars"])
    prop = rng.choice(["shaded", "striped", "labelled"])
    ref = f"All of the {shape} are {prop}."
    yield pair("paraphrase", "wording", "mathvision", ref, f"Every one of the {shape} is {prop}.")
    yield pair("contradiction", "negation", "mathvision", ref, f"None of the {shape} are {prop}.")


def held_heavier(rng: random.Random) -> Iterator[Pair]:
    a, b = rng.sample(
        ["box P", "box Q", "the red ball", "the blue ball", "the left bag", "the right bag"], 2
    )
    ref = f"{a[0].upper() + a[1:]} is heavier than {b}."
    yield pair(
        "paraphrase",
        "argument-swap",
        "scienceqa",
        ref,
        f"{b[0].upper() + b[1:]} is lighter than {a}.",
    )
    yield pair(
        "contradiction",
        "relation",
        "scienceqa",
        ref,
        f"{a[0].upper() + a[1:]} is lighter than {b}.",
    )
    yield pair(
        "contradiction",
        "relation",
        "scienceqa",
        ref,
        f"{b[0].upper() + b[1:]} is heavier than {a}.",
    )


def held_above(rng: random.Random) -> Iterator[Pair]:
    a, b = rng.sample(["the clock", "the painting", "the shelf", "the mirror", "the window"], 2)
    ref = f"{a.capitalize()} hangs above {b}."
    yield pair("paraphrase", "argument-swap", "mmvp", ref, f"{b.capitalize()} is below {a}.")
    yield pair("contradiction", "relation", "mmvp", ref, f"{a.capitalize()} hangs below {b}.")


def held_greater(rng: random.Random) -> Iterator[Pair]:
    a, b = labels(rng, 2), labels(rng, 2)
    ref = f"{a} > {b}."
    yield pair("paraphrase", "argument-swap", "mathvision", ref, f"{b} < {a}.")
    yield pair("paraphrase", "wording", "mathvision", ref, f"{a} is greater than {b}.")
    yield pair("contradiction", "relation", "mathvision", ref, f"{a} < {b}.")
    yield pair("contradiction", "relation", "mathvision", ref, f"{a} is less than {b}.")


def held_highest(rng: random.Random) -> Iterator[Pair]:
    d1, d2 = rng.sample(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"], 2)
    ref = f"The highest temperature is on {d1}."
    yield pair(
        "paraphrase", "wording", "plotqa", ref, f"{d1} has the highest temperature of the week."
    )
    yield pair("contradiction", "relation", "plotqa", ref, f"The highest temperature is on {d2}.")
    yield pair("contradiction", "relation", "plotqa", ref, f"The lowest temperature is on {d1}.")


def held_declines(rng: random.Random) -> Iterator[Pair]:
    metric = rng.choice(["unemployment", "the share of renters", "the water level"])
    ref = f"After 2015, {metric} declines steadily."
    yield pair("paraphrase", "wording", "plotqa", ref, f"From 2015 onwards {metric} goes down.")
    yield pair("contradiction", "relation", "plotqa", ref, f"After 2015, {metric} grows steadily.")


def held_option_text(rng: random.Random) -> Iterator[Pair]:
    options = rng.sample(["Norland", "Eastmere", "Westhaven", "Southvale"], 4)
    k = rng.randrange(4)
    j = other(rng, k, 0, 3)
    ref = f"The highlighted region on the map is {options[k]}."
    yield pair(
        "paraphrase",
        "letter-text",
        "scienceqa",
        ref,
        f"The highlighted region is choice {'ABCD'[k]}.",
        options,
    )
    yield pair(
        "contradiction",
        "option",
        "scienceqa",
        ref,
        f"The highlighted region on the map is {options[j]}.",
        options,
    )
    yield pair(
        "contradiction",
        "option",
        "scienceqa",
        ref,
        f"The highlighted region is choice {'ABCD'[j]}.",
        options,
    )


def held_option_letter(rng: random.Random) -> Iterator[Pair]:
    k = rng.randrange(5)
    j = other(rng, k, 0, 4)
    options = [str(v) for v in rng.sample(range(2, 20), 5)]
    ref = f"{options[k]} corresponds to choice ({'ABCDE'[k]})."
    yield pair(
        "paraphrase", "wording", "mathvision", ref, f"The correct option is {'ABCDE'[k]}.", options
    )
    yield pair(
        "contradiction",
        "option",
        "mathvision",
        ref,
        f"The correct option is {'ABCDE'[j]}.",
        options,
    )


def held_colour(rng: random.Random) -> Iterator[Pair]:
    thing = rng.choice(
        [
            "The largest slice of the pie chart",
            "The sign above the door",
            "The truck on the right",
            "The boy's backpack",
        ]
    )
    c1, c2 = rng.sample(COLOURS, 2)
    ref = f"{thing} is coloured {c1}."
    yield pair("paraphrase", "wording", "textvqa", ref, f"{thing} has a {c1} colour.")
    yield pair("contradiction", "colour", "textvqa", ref, f"{thing} is coloured {c2}.")
    yield pair("contradiction", "colour", "textvqa", ref, f"{thing} has a {c2} colour.")


def held_unit_mix(rng: random.Random) -> Iterator[Pair]:
    m = rng.choice([1, 2, 3, 5])
    ref = f"The rope is {m} m long."
    yield pair(
        "paraphrase", "unit-conversion", "realworldqa", ref, f"The rope measures {m * 100} cm."
    )
    yield pair(
        "contradiction", "number", "realworldqa", ref, f"The rope measures {m * 100 + 50} cm."
    )


HELDOUT_BANK: tuple[Template, ...] = (
    held_triangle, held_shelf, held_line_chart, held_fraction, held_thermometer, held_clock,
    held_light, held_wearing, held_lines, held_shapes_all, held_heavier, held_above,
    held_greater, held_highest, held_declines, held_option_text, held_option_letter,
    held_colour, held_unit_mix,
)  # fmt: skip


def generate(seed: int, scenes: int) -> list[Pair]:
    """Every pair of both banks, ``scenes`` draws per template, deduplicated, with ids."""
    rng = random.Random(seed)
    out: list[Pair] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for split, bank in (("dev", DEV_BANK), ("heldout", HELDOUT_BANK)):
        for template in bank:
            count = 0
            for _ in range(scenes):
                for record in template(rng):
                    key = (record["ref"], record["pred"], tuple(record["options"]))
                    if key in seen or record["ref"] == record["pred"]:
                        continue
                    seen.add(key)
                    count += 1
                    name = template.__name__
                    record = {
                        "id": f"{name}-{count:03d}",
                        "split": split,
                        "origin": f"template:{name}",
                        **record,
                    }
                    out.append(record)
    counts: dict[str, int] = {}
    for item_id, record in sample_pairs(rng):
        counts[item_id] = counts.get(item_id, 0) + 1
        out.append(
            {
                "id": f"{item_id}-{counts[item_id]:03d}",
                "split": "sample",
                "origin": "sample-perturbed",
                **record,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--scenes", type=int, default=8, help="draws per template")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    records = generate(args.seed, args.scenes)
    with args.out.open("w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} pairs to {args.out}")


if __name__ == "__main__":
    main()
