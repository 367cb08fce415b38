"""Deterministic CRYSTAL-scale scoring workload: benchmark items and K prediction sets.

The real CRYSTAL test split (6,372 items, reference chains of 3 to 42 steps, mean 11.6)
is gated, so speed measurements run on a synthetic look-alike made of realistic
visual-reasoning sentences. Every reference step is a *semantic unit* (a kind such as
"read a value off a chart" plus its slots: entity, value, unit...) rendered through one
of several templates. A prediction set ("model") re-renders the units it keeps with other
templates and rephrases them in its own *voice* (preferred words, openers and closing
phrases, contractions, symbols, elaborations), copies only a few verbatim, omits units,
merges neighbours, swaps or scrambles their order, and adds distractors: a restated
question, meta comments about the figure, self-checks that repeat a step in other words,
filler steps, a closing answer sentence, and hallucinated units with wrong values or
entities. Similarities therefore spread on both sides of tau: paraphrases of the same unit
sit high, other steps about the same chart or figure sit in the middle, fillers sit low.

Two generators: ``v2`` (the default, above; ``stats`` reports the share of predicted steps
that copy a reference step verbatim, about 4 % over five sets and at most 12 % for the
most faithful model) and ``v1`` (``--workload v1``: the first generator, which re-rendered
units through the same small template bank, so models shared many sentences word for word;
the figures recorded before issue 18 used it).

Everything is a pure function of ``(seed, item index, profile, generator)``: the same
arguments give byte-identical files on every machine.

Usage::

    python benchmarks/workload.py write --items 6372 --sets 5 --out benchmarks/workdir/w6372
    python benchmarks/workload.py histogram --items 300      # cosines with minilm-offline
    python benchmarks/workload.py stats --items 6372         # chain lengths, copies, uniqueness
    python benchmarks/workload.py show 5                     # one item and its predictions
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

CRYSTAL_ITEMS = 6372
"""Items in the CRYSTAL test split."""
MIN_STEPS = 3
MAX_STEPS = 42
MEAN_STEPS = 11.6
DEFAULT_SEED = 20260
LETTERS = "ABCDE"


# --------------------------------------------------------------------------- vocabularies
def _words(text: str, sep: str | None = None) -> tuple[str, ...]:
    """A vocabulary written as one string (compact to read, easy to extend)."""
    return tuple(text.split(sep))


COUNTRIES = _words(
    "Argentina Australia Austria Bangladesh Belgium Bolivia Brazil Bulgaria Cambodia "
    "Cameroon Canada Chile China Colombia Croatia Cuba Denmark Ecuador Egypt Estonia "
    "Ethiopia Finland France Germany Ghana Greece Guatemala Honduras Hungary Iceland India "
    "Indonesia Ireland Israel Italy Jamaica Japan Jordan Kenya Latvia Lebanon Lithuania "
    "Madagascar Malaysia Mali Mexico Mongolia Morocco Nepal Netherlands Nicaragua Niger "
    "Nigeria Norway Pakistan Panama Paraguay Peru Philippines Poland Portugal Romania "
    "Rwanda Senegal Serbia Singapore Slovakia Slovenia Spain Sweden Switzerland Tanzania "
    "Thailand Tunisia Turkey Uganda Ukraine Uruguay Vietnam Zambia Zimbabwe"
)
YEARS = [str(y) for y in range(1990, 2023)]
MONTHS = _words(
    "January February March April May June July August September October November December"
)
PRODUCTS = _words(
    "laptops tablets smartphones headphones cameras printers monitors routers keyboards "
    "speakers smartwatches consoles projectors scanners drones e-readers"
)
EXPENSES = _words(
    "rent groceries transport utilities insurance education healthcare clothing "
    "entertainment savings dining travel childcare internet"
)
METRICS = (
    ("exports", "billion US dollars"),
    ("imports", "billion US dollars"),
    ("population", "million people"),
    ("CO2 emissions", "million tonnes"),
    ("unemployment rate", "percent"),
    ("number of tourists", "thousand visitors"),
    ("electricity production", "terawatt hours"),
    ("rice production", "thousand tonnes"),
    ("school enrolment", "percent"),
    ("forest area", "thousand square kilometres"),
    ("internet users", "percent of the population"),
    ("health expenditure", "percent of GDP"),
    ("revenue", "million dollars"),
    ("units sold", "thousand units"),
    ("average rainfall", "millimetres"),
    ("average temperature", "degrees Celsius"),
)
CHARTS = (
    ("bar chart", "bar"),
    ("horizontal bar chart", "bar"),
    ("line graph", "point"),
    ("dot plot", "dot"),
    ("grouped bar chart", "bar"),
    ("stacked bar chart", "segment"),
)
COLORS = _words(
    "red blue green orange purple yellow gray black white brown pink teal navy maroon beige silver"
)
VEHICLES = _words(
    "car|truck|bus|van|bicycle|motorcycle|taxi|tram|scooter|pickup truck|SUV|delivery van",
    "|",
)
STREET_OBJECTS = _words(
    "traffic light|stop sign|pedestrian|crosswalk|lamp post|parked car|road barrier|"
    "traffic cone|bus stop|fire hydrant|speed limit sign|street sign|cyclist|bench|tree|"
    "billboard|building|shop front|lane marking|guard rail",
    "|",
)
POSITIONS = _words(
    "on the left side of the road|on the right side of the road|in the foreground|"
    "near the center of the image|in the top right corner|in the bottom left corner|"
    "in the distance|at the intersection ahead|next to the sidewalk|in the oncoming lane|"
    "directly ahead of the camera|behind the parked cars|across the street|"
    "on the far right|at the edge of the frame|partly hidden behind a tree",
    "|",
)
RELATIONS = _words(
    "in front of|behind|to the left of|to the right of|next to|farther away than|"
    "closer than|partially blocking|parked beside|approaching",
    "|",
)
ANIMALS = _words(
    "dog cat horse rabbit parrot owl fox deer duck goat sheep cow squirrel hamster penguin "
    "turtle lizard elephant giraffe zebra"
)
MMVP_PARTS = (
    ("head", ("turned to the left", "turned to the right", "tilted down", "facing the camera")),
    ("mouth", ("open", "closed", "slightly open")),
    ("eyes", ("open", "closed", "looking up", "looking sideways")),
    ("tail", ("raised", "hanging down", "curled", "not visible")),
    ("ears", ("pointing up", "folded back", "drooping")),
    ("front legs", ("stretched forward", "tucked under the body", "straight")),
)
OBJECTS_MMVP = (
    ("door", ("open", "closed", "half open")),
    ("window", ("open", "closed", "covered by a curtain")),
    ("lamp", ("switched on", "switched off")),
    ("laptop", ("open", "closed")),
    ("umbrella", ("open", "folded")),
    ("faucet", ("running", "turned off")),
    ("book", ("open", "closed", "lying face down")),
    ("clock", ("showing three o'clock", "showing half past nine", "showing noon")),
)
ORGANISMS = (
    ("grass", "producer"),
    ("algae", "producer"),
    ("oak tree", "producer"),
    ("kelp", "producer"),
    ("phytoplankton", "producer"),
    ("rabbit", "consumer"),
    ("grasshopper", "consumer"),
    ("mouse", "consumer"),
    ("zooplankton", "consumer"),
    ("sea urchin", "consumer"),
    ("caterpillar", "consumer"),
    ("frog", "consumer"),
    ("snake", "consumer"),
    ("fox", "consumer"),
    ("hawk", "consumer"),
    ("owl", "consumer"),
    ("sea otter", "consumer"),
    ("heron", "consumer"),
    ("small fish", "consumer"),
    ("shark", "consumer"),
    ("mushroom", "decomposer"),
    ("earthworm", "decomposer"),
)
MATERIALS = _words(
    "wood plastic glass rubber steel copper aluminium cotton wool paper clay ceramic "
    "leather granite"
)
PROPERTIES = _words(
    "hard soft flexible transparent opaque brittle smooth rough stretchy shiny waterproof fragile"
)
SUBSTANCES = _words(
    "water|juice|milk|honey|olive oil|ice cube|butter|steam|oxygen|helium|sand|chocolate|"
    "wax candle",
    "|",
)
CITIES = _words(
    "Denver Boston Miami Seattle Chicago Phoenix Houston Atlanta Portland Dallas Nashville "
    "Detroit Memphis Omaha Tucson Austin Raleigh Tampa"
)
SHAPES = ("triangle", "rectangle", "square", "trapezoid", "parallelogram", "rhombus", "pentagon")
GEO_RULES = (
    "the interior angles of a triangle add up to 180 degrees",
    "the square of the hypotenuse equals the sum of the squares of the legs",
    "the area of a triangle is half of the base times the height",
    "the area of a rectangle is its length times its width",
    "the circumference of a circle is 2 pi times the radius",
    "the area of a circle is pi times the radius squared",
    "opposite sides of a parallelogram are equal and parallel",
    "vertical angles are equal",
    "angles on a straight line add up to 180 degrees",
    "an angle inscribed in a semicircle is a right angle",
    "the base angles of an isosceles triangle are equal",
    "corresponding angles formed by parallel lines are equal",
    "the perimeter is the sum of all the side lengths",
    "similar triangles have proportional sides",
    "the diagonals of a rectangle are equal in length",
    "the exterior angle of a triangle equals the sum of the two remote interior angles",
)
SCI_RULES = (
    "opposite magnetic poles attract each other while like poles repel",
    "the magnetic force is stronger when the magnets are closer together",
    "energy in a food web flows from the organism that is eaten to the organism that eats it",
    "producers make their own food using energy from sunlight",
    "a substance with particles of greater average kinetic energy has a higher temperature",
    "when an object is heated its particles move faster",
    "a solid has a definite shape and a definite volume",
    "a liquid takes the shape of its container but keeps its volume",
    "a gas spreads out to fill all of the space available",
    "weather describes the atmosphere at a certain place and time",
    "climate is the pattern of weather in an area over many years",
    "an inherited trait is passed from parents to offspring",
    "a physical change does not form a new substance",
    "a chemical change forms a new substance with different properties",
)

SYNONYMS: dict[str, tuple[str, ...]] = {
    "shows": ("displays", "depicts", "presents", "illustrates"),
    "figure": ("diagram", "image", "picture", "drawing"),
    "image": ("picture", "photo", "scene", "figure"),
    "chart": ("graph", "plot", "diagram"),
    "value": ("amount", "number", "figure", "reading"),
    "therefore": ("thus", "hence", "so", "consequently"),
    "about": ("approximately", "roughly", "around", "close to"),
    "roughly": ("about", "approximately", "around"),
    "highest": ("largest", "greatest", "maximum", "biggest"),
    "lowest": ("smallest", "minimum", "least"),
    "higher": ("greater", "larger", "bigger"),
    "lower": ("smaller", "less"),
    "find": ("determine", "compute", "figure out", "identify"),
    "determine": ("find", "work out", "establish"),
    "labelled": ("marked", "labeled", "annotated", "given"),
    "marked": ("labelled", "indicated", "shown"),
    "visible": ("shown", "present", "apparent"),
    "see": ("notice", "observe", "spot"),
    "difference": ("gap", "change"),
    "total": ("sum", "combined amount"),
    "equals": ("is", "comes to", "gives"),
    "answer": ("result", "solution", "response"),
    "correct": ("right", "valid"),
    "because": ("since", "as"),
    "reaches": ("hits", "gets to", "stands at"),
    "looking": ("glancing", "checking"),
    "arrow": ("pointer", "line with an arrowhead"),
    "eats": ("feeds on", "consumes", "preys on"),
    "shape": ("form", "outline"),
}
_SYNONYM_RE = re.compile(r"\b(" + "|".join(sorted(SYNONYMS, key=len, reverse=True)) + r")\b")

FILLERS = (
    "Let me look at the image carefully.",
    "First, I will identify the relevant information in the figure.",
    "Okay, let me think about this step by step.",
    "I need to be careful with the details here.",
    "Let me double-check this before moving on.",
    "This is consistent with what I observed earlier.",
    "Now I have everything I need to answer.",
    "Let me re-read the question to make sure I understand it.",
    "I will go through the picture from left to right.",
    "It is important not to confuse the similar-looking parts.",
    "Nothing else in the image seems relevant.",
    "I should verify that I read the numbers correctly.",
    "Hmm, let me reconsider that.",
    "Wait, I should check the labels again.",
    "The image quality is good enough to read the details.",
    "There may be a trick in how the question is phrased.",
    "Let me organise what I know so far.",
    "This step is straightforward.",
    "I am fairly confident about this reading.",
    "Putting these observations together helps.",
    "Let me summarise the relevant facts.",
    "I will ignore the decorative elements.",
    "The question is about a specific detail in the picture.",
    "Careful: the scale does not start at a round number.",
    "Next, I focus on the part of the image the question refers to.",
    "That settles the key observation.",
    "All of the options look plausible at first glance.",
    "I can rule out some possibilities right away.",
)
HEDGES = ("It seems that ", "It looks like ", "Apparently, ", "I think ", "Clearly, ", "")
LEADS = ("First, ", "Next, ", "Then, ", "Now, ", "Also, ", "Looking closely, ", "Finally, ")

# --------------------------------------------------------------------------- templates
# Each kind has full templates (references and most prediction steps) and terse ones
# (compressed predictions). Slots are filled with str.format.
TEMPLATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "goal": (
        (
            "The question asks for {target}.",
            "We need to determine {target}.",
            "The task is to find {target}.",
            "To answer, I have to work out {target}.",
            "The goal is to identify {target}.",
            "We are asked to find {target}.",
            "What we need is {target}.",
        ),
        ("Find {target}.", "Goal: {target}.", "Need {target}."),
    ),
    "conclude": (
        (
            "Therefore, the answer is {answer}.",
            "So the correct answer is {answer}.",
            "Hence the final answer is {answer}.",
            "This means the answer must be {answer}.",
            "Based on this, I conclude that the answer is {answer}.",
            "The answer to the question is {answer}.",
        ),
        ("Answer: {answer}.", "So {answer}.", "Final: {answer}."),
    ),
    "choose": (
        (
            "Among the choices, {option} corresponds to option {letter}.",
            "This matches option {letter}, which reads {option}.",
            "The option that says {option} is {letter}.",
            "Option {letter} ({option}) is the one that fits.",
            "Looking at the options, {option} is listed as {letter}.",
        ),
        ("That is option {letter}.", "Pick {letter}.", "{option} = {letter}."),
    ),
    "eliminate": (
        (
            "Option {letter} ({option}) can be ruled out because {reason}.",
            "We can eliminate {option} since {reason}.",
            "{option} is not correct, because {reason}.",
            "Choice {letter} does not work: {reason}.",
        ),
        ("Not {letter}: {reason}.", "Rule out {option}."),
    ),
    "check": (
        (
            "Checking again, {what}.",
            "As a sanity check, {what}.",
            "Double-checking confirms that {what}.",
            "To verify, note that {what}.",
        ),
        ("Check: {what}.",),
    ),
    "rule": (
        (
            "Recall that {rule}{ctx}.",
            "We know that {rule}{ctx}.",
            "Using the fact that {rule}{ctx}.",
            "A key fact here is that {rule}{ctx}.",
            "The relevant principle is that {rule}{ctx}.",
        ),
        ("Rule: {rule}.", "Fact: {rule}{ctx}."),
    ),
    "compute": (
        (
            "So the {what} is {expr} = {result}.",
            "Computing the {what}: {expr} = {result}.",
            "The {what} equals {expr}, which is {result}.",
            "Working it out, {expr} = {result}, so the {what} is {result}.",
            "This gives a {what} of {expr} = {result}.",
            "Calculating {expr} yields {result} for the {what}.",
        ),
        ("{expr} = {result}.", "{what}: {result}.", "= {result}."),
    ),
    # charts
    "chart": (
        (
            "The image is a {chart} showing {metric} for different {xaxis}.",
            "This {chart} plots {metric} across several {xaxis}.",
            "The figure is a {chart} of {metric}, with {xaxis} along the horizontal axis.",
            "We are looking at a {chart} that compares {metric} by {xaxis}.",
            "The picture contains a {chart} titled '{metric} by {xaxis}'.",
        ),
        ("{chart} of {metric}.", "A {chart}."),
    ),
    "axis": (
        (
            "The y-axis measures {metric} in {unit}, ranging from 0 to {top}.",
            "The vertical axis shows {metric} ({unit}) with ticks up to {top}.",
            "Values on the y-axis go from 0 to {top} {unit}.",
            "The scale on the left runs from 0 to {top}, in {unit}.",
        ),
        ("Axis: 0-{top} {unit}.", "Scale up to {top}."),
    ),
    "legend": (
        (
            "The legend identifies the series as {series}.",
            "According to the legend, the colours represent {series}.",
            "There are separate series for {series}.",
            "The key at the top lists {series}.",
        ),
        ("Series: {series}.",),
    ),
    "read": (
        (
            "The {mark} for {cat} reaches about {value} {unit}.",
            "For {cat}, the {metric} is {value} {unit}.",
            "Reading the chart, {cat} has a value of {value} {unit}.",
            "In {cat}, the {metric} stands at roughly {value} {unit}.",
            "The value recorded for {cat} is {value} {unit}.",
            "The {mark} labelled {cat} lines up with {value} on the axis.",
            "{cat} shows a {metric} of {value} {unit}.",
        ),
        ("{cat}: {value}.", "{cat} = {value} {unit}.", "{cat} is {value}."),
    ),
    "compare": (
        (
            "{a} is higher than {b}.",
            "Comparing the two, {a} exceeds {b}.",
            "{b} is lower than {a}.",
            "The {mark} for {a} is taller than the one for {b}.",
            "{a} has a larger {metric} than {b}.",
        ),
        ("{a} > {b}.", "{a} beats {b}."),
    ),
    "extreme": (
        (
            "The {extreme} value belongs to {cat}.",
            "{cat} has the {extreme} {metric} among all {xaxis}.",
            "Of all the {xaxis}, {cat} is the {extreme}.",
            "The {extreme} {mark} corresponds to {cat}.",
        ),
        ("{extreme}: {cat}.",),
    ),
    "trend": (
        (
            "From {a} to {b}, the {metric} {direction} steadily.",
            "Between {a} and {b} the {metric} {direction}.",
            "The {metric} {direction} over the period from {a} to {b}.",
        ),
        ("{a}-{b}: {direction}.",),
    ),
    # geometry
    "figure": (
        (
            "The figure shows a {shape} {name} with {feature}.",
            "In the diagram there is a {shape} {name} that has {feature}.",
            "The image contains {shape} {name}; it has {feature}.",
            "We see a {shape} labelled {name}, with {feature}.",
        ),
        ("{shape} {name}.", "Shape: {shape} {name}."),
    ),
    "label": (
        (
            "Side {seg} is labelled {value}.",
            "The length of {seg} is given as {value}.",
            "{seg} measures {value} units in the figure.",
            "The figure marks {seg} with the number {value}.",
            "According to the diagram, {seg} = {value}.",
        ),
        ("{seg} = {value}.", "{seg}: {value}."),
    ),
    "angle": (
        (
            "The angle at {pt} is marked {value} degrees.",
            "Angle {pt} measures {value} degrees.",
            "The diagram shows that the angle at vertex {pt} is {value} degrees.",
            "At {pt} the angle is labelled {value} degrees.",
        ),
        ("angle {pt} = {value} degrees.", "{pt}: {value} deg."),
    ),
    "property": (
        (
            "Since {reason}, {claim}.",
            "{claim}, because {reason}.",
            "Because {reason}, it follows that {claim}.",
            "We can tell that {claim} since {reason}.",
        ),
        ("{claim}.",),
    ),
    # science
    "link": (
        (
            "In the food web, an arrow points from the {a} to the {b}.",
            "The diagram draws an arrow from {a} to {b}.",
            "There is an arrow going from the {a} to the {b}.",
            "An arrow connects the {a} to the {b} in the web.",
        ),
        ("{a} -> {b}.", "Arrow {a} to {b}."),
    ),
    "eats": (
        (
            "This means the {b} eats the {a}.",
            "So the {a} is food for the {b}.",
            "The {b} gets its energy by eating the {a}.",
            "Therefore the {b} consumes the {a}.",
        ),
        ("{b} eats {a}.",),
    ),
    "magnet": (
        (
            "The {p1} pole of magnet {m1} faces the {p2} pole of magnet {m2}.",
            "Magnet {m1} has its {p1} pole next to the {p2} pole of magnet {m2}.",
            "In pair {m1}, the {p1} end is closest to the {p2} end of magnet {m2}.",
        ),
        ("{p1} faces {p2}.", "{m1}: {p1} to {p2}."),
    ),
    "distance": (
        (
            "The magnets in pair {pair} are {value} centimetres apart.",
            "In pair {pair}, the gap between the magnets is {value} cm.",
            "The distance shown for pair {pair} is {value} centimetres.",
        ),
        ("Pair {pair}: {value} cm.",),
    ),
    "sample": (
        (
            "Sample {s} has particles with a mass of {mass} u moving at {speed} m/s.",
            "In sample {s}, each particle weighs {mass} u and the average speed is {speed} m/s.",
            "The diagram gives sample {s} a particle mass of {mass} u and speed {speed} m/s.",
        ),
        ("Sample {s}: {mass} u, {speed} m/s.",),
    ),
    "material": (
        (
            "The {obj} is made of {material}, which is {prop}.",
            "The picture shows a {obj} made from {material}; {material} is {prop}.",
            "A {material} {obj} is {prop}.",
        ),
        ("{obj}: {material}, {prop}.",),
    ),
    "weather": (
        (
            "The map shows {city} with {value} millimetres of rain in {month}.",
            "According to the graph, {city} receives {value} mm of precipitation in {month}.",
            "In {month}, the rainfall bar for {city} reaches {value} mm.",
        ),
        ("{city}, {month}: {value} mm.",),
    ),
    # street scenes
    "see": (
        (
            "There is a {color} {obj} {pos}.",
            "I can see a {color} {obj} {pos}.",
            "A {color} {obj} is visible {pos}.",
            "In the image, a {color} {obj} appears {pos}.",
            "The scene includes a {color} {obj} {pos}.",
        ),
        ("{color} {obj} {pos}.", "{obj}: {pos}."),
    ),
    "count": (
        (
            "There are {n} {objs} {pos}.",
            "I count {n} {objs} {pos}.",
            "In total, {n} {objs} can be seen {pos}.",
            "The image shows {n} {objs} {pos}.",
        ),
        ("{n} {objs}.", "{objs}: {n}."),
    ),
    "relation": (
        (
            "The {o1} is {rel} the {o2}.",
            "The {o1} appears to be {rel} the {o2}.",
            "Relative to the {o2}, the {o1} is {rel} it.",
            "Looking at their positions, the {o1} is {rel} the {o2}.",
        ),
        ("{o1} {rel} {o2}.",),
    ),
    "state": (
        (
            "The traffic light facing the camera is {state}.",
            "The signal ahead shows {state}.",
            "The light at the intersection is {state}.",
        ),
        ("Light: {state}.",),
    ),
    "far": (
        (
            "The {obj} is roughly {value} meters away from the camera.",
            "I estimate the {obj} to be about {value} meters ahead.",
            "The distance to the {obj} looks like around {value} meters.",
        ),
        ("{obj} ~{value} m.",),
    ),
    # fine details
    "detail": (
        (
            "The {animal}'s {part} is {state}.",
            "Looking closely, the {part} of the {animal} is {state}.",
            "In this picture the {animal} has its {part} {state}.",
            "The {animal} is shown with its {part} {state}.",
        ),
        ("{part}: {state}.", "{animal} {part} {state}."),
    ),
    "thing": (
        (
            "The {obj} in the picture is {state}.",
            "I can see that the {obj} is {state}.",
            "The {obj} appears {state}.",
        ),
        ("{obj}: {state}.",),
    ),
    "scene": (
        (
            "The photo shows a {animal} {place}.",
            "A {animal} is sitting {place} in the image.",
            "The image features a {animal} {place}.",
        ),
        ("{animal} {place}.",),
    ),
}


@dataclass(frozen=True)
class Unit:
    """One reasoning step before rendering: a kind plus the values of its slots."""

    kind: str
    slots: dict[str, str]
    essential: bool = True


@dataclass
class Draft:
    """An item before rendering: question, options, gold answer and its reasoning units."""

    source: str
    question: str
    answer: str
    units: list[Unit]
    options: list[str] = field(default_factory=list)
    topic: str = ""
    perturb: Callable[[Unit, random.Random], Unit] | None = None
    context: str = "the figure"
    """What the item is about (``triangle ABC``, ``the food web``), to situate general rules."""


def _num(rng: random.Random, low: float, high: float, decimals: int = 0) -> str:
    value = rng.uniform(low, high)
    return f"{value:.{decimals}f}" if decimals else str(round(value))


def _fmt(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def _options(rng: random.Random, correct: str, wrong: Sequence[str]) -> tuple[list[str], str]:
    """Shuffle the correct option among distinct wrong ones; returns options and the letter."""
    pool = [w for w in dict.fromkeys(wrong) if w != correct]
    rng.shuffle(pool)
    options = [correct, *pool[: rng.randint(3, 4)]]
    rng.shuffle(options)
    return options, LETTERS[options.index(correct)]


def _choose_units(options: list[str], letter: str, rng: random.Random, why: str) -> list[Unit]:
    """Option-handling steps: eliminate one or two wrong options, then choose."""
    units: list[Unit] = []
    wrong = [(LETTERS[k], o) for k, o in enumerate(options) if LETTERS[k] != letter]
    rng.shuffle(wrong)
    for wl, wo in wrong[: rng.randint(1, 2)]:
        units.append(
            Unit("eliminate", {"letter": wl, "option": wo, "reason": why}, essential=False)
        )
    units.append(Unit("choose", {"letter": letter, "option": options[LETTERS.index(letter)]}))
    return units


# --------------------------------------------------------------------------- topic drafts
def _draft_chart(rng: random.Random, n: int) -> Draft:
    chart, mark = rng.choice(CHARTS)
    metric, unit = rng.choice(METRICS)
    axis_kind = rng.random()
    if axis_kind < 0.45:
        xaxis = "years"
        start = rng.randint(0, len(YEARS) - 12)
        cats = YEARS[start : start + 12]
    elif axis_kind < 0.8:
        xaxis = "countries"
        cats = rng.sample(COUNTRIES, 12)
    else:
        xaxis = "months"
        cats = list(MONTHS)
    scale = rng.choice((10, 50, 100, 500, 1000))
    decimals = 1 if scale <= 50 and rng.random() < 0.5 else 0
    values = {c: float(_num(rng, scale * 0.05, scale, decimals)) for c in cats}
    # Chains grow with the number of values read off the chart.
    k = max(2, min(len(cats), (n - 3) // 2 + 1))
    used = cats[:k] if xaxis != "countries" else rng.sample(cats, k)
    qtype = rng.choice(("difference", "sum", "average", "max", "ratio", "above"))
    units: list[Unit] = [
        Unit("chart", {"chart": chart, "metric": metric, "xaxis": xaxis}, essential=False),
        Unit("axis", {"metric": metric, "unit": unit, "top": str(scale)}, essential=False),
    ]
    if chart.startswith(("grouped", "stacked")) or rng.random() < 0.2:
        series = ", ".join(rng.sample(COUNTRIES, 3)) if xaxis != "countries" else "2010 and 2020"
        units.append(Unit("legend", {"series": series}, essential=False))
    reads = [
        Unit(
            "read",
            {
                "mark": mark,
                "cat": c,
                "metric": metric,
                "value": _fmt(values[c]),
                "unit": unit,
            },
        )
        for c in used
    ]
    options: list[str] = []
    if qtype == "difference":
        a, b = used[0], used[-1]
        diff = values[a] - values[b]
        target = f"the difference in {metric} between {a} and {b}"
        body = [reads[0], reads[-1]] + [replace(r, essential=False) for r in reads[1:-1]]
        body.append(
            Unit(
                "compute",
                {
                    "what": "difference",
                    "expr": f"{_fmt(values[a])} - {_fmt(values[b])}",
                    "result": _fmt(diff),
                },
            )
        )
        answer = _fmt(diff)
        question = f"What is the difference in {metric} between {a} and {b}?"
    elif qtype in ("sum", "average"):
        body = []
        running = 0.0
        for idx, r in enumerate(reads):
            body.append(r)
            value = values[used[idx]]
            if idx >= 1:
                body.append(
                    Unit(
                        "compute",
                        {
                            "what": "running total",
                            "expr": f"{_fmt(running)} + {_fmt(value)}",
                            "result": _fmt(running + value),
                        },
                        essential=idx == len(reads) - 1,
                    )
                )
            running += value
        if qtype == "average":
            mean = running / len(used)
            body.append(
                Unit(
                    "compute",
                    {
                        "what": "average",
                        "expr": f"{_fmt(running)} / {len(used)}",
                        "result": _fmt(mean),
                    },
                )
            )
            answer = _fmt(mean)
            target = f"the average {metric} over {used[0]} to {used[-1]}"
            question = f"What is the average {metric} from {used[0]} to {used[-1]}?"
        else:
            answer = _fmt(running)
            target = f"the total {metric} of " + ", ".join(used[:3]) + (" and the rest" * (k > 3))
            question = f"What is the total {metric} of the {k} {xaxis} shown?"
    elif qtype == "ratio":
        a, b = used[0], used[1]
        ratio = values[a] / values[b]
        body = [reads[0], reads[1]] + [replace(r, essential=False) for r in reads[2:]]
        body.append(
            Unit(
                "compute",
                {
                    "what": "ratio",
                    "expr": f"{_fmt(values[a])} / {_fmt(values[b])}",
                    "result": _fmt(ratio),
                },
            )
        )
        answer = _fmt(ratio)
        target = f"the ratio of the {metric} in {a} to that in {b}"
        question = f"What is the ratio of {metric} in {a} to {metric} in {b}?"
    elif qtype == "above":
        cut = float(_fmt(scale * rng.uniform(0.3, 0.7)))
        above = [c for c in used if values[c] > cut]
        body = list(reads)
        body.append(
            Unit(
                "check",
                {"what": f"{len(above)} of the {len(used)} values exceed {_fmt(cut)}"},
            )
        )
        answer = str(len(above))
        target = f"how many {xaxis} have a {metric} above {_fmt(cut)} {unit}"
        question = f"How many {xaxis} have {metric} greater than {_fmt(cut)} {unit}?"
    else:  # max
        best = max(used, key=lambda c: values[c])
        body = list(reads)
        others = [c for c in used if c != best]
        for other in others[: max(1, len(others) // 3)]:
            body.append(
                Unit(
                    "compare",
                    {"a": best, "b": other, "mark": mark, "metric": metric},
                    essential=False,
                )
            )
        body.append(
            Unit(
                "extreme",
                {"extreme": "highest", "cat": best, "metric": metric, "xaxis": xaxis, "mark": mark},
            )
        )
        options, letter = _options(rng, best, used + rng.sample(COUNTRIES, 3))
        body.extend(_choose_units(options, letter, rng, f"its {mark} is shorter than {best}"))
        answer = letter
        target = f"which of the {xaxis} has the highest {metric}"
        question = f"Which of the {xaxis} shown has the highest {metric}?"
    if xaxis == "years" and len(used) >= 3 and rng.random() < 0.5:
        rising = values[used[-1]] > values[used[0]]
        body.insert(
            len(body) - 1,
            Unit(
                "trend",
                {
                    "a": used[0],
                    "b": used[-1],
                    "metric": metric,
                    "direction": "rises" if rising else "falls",
                },
                essential=False,
            ),
        )
    units.append(Unit("goal", {"target": target}))
    units.extend(body)
    units.append(Unit("conclude", {"answer": answer}))

    def perturb(unit: Unit, prng: random.Random) -> Unit:
        slots = dict(unit.slots)
        if "value" in slots:
            slots["value"] = _fmt(float(slots["value"]) * prng.uniform(0.6, 1.4) + 1)
        if "cat" in slots:
            slots["cat"] = prng.choice(cats)
        if "result" in slots:
            slots["result"] = _fmt(float(_num(prng, 1, scale, 1)))
        if "a" in slots and "b" in slots:
            slots["a"], slots["b"] = slots["b"], slots["a"]
        return replace(unit, slots=slots)

    context = f"this {chart} of {metric}"
    return Draft("plotqa", question, answer, units, options, f"{chart}:{metric}", perturb, context)


def _draft_geometry(rng: random.Random, n: int) -> Draft:
    shape = rng.choice(SHAPES)
    pts = rng.sample("ABCDEFGHJKLMNPQRST", 4)
    name = "".join(pts[:3]) if shape == "triangle" else "".join(pts)
    units: list[Unit] = []
    kind = rng.choice(("angle", "hypotenuse", "area", "perimeter"))
    options: list[str] = []
    if kind == "angle" or (shape != "triangle" and kind == "hypotenuse"):
        a = rng.randint(25, 80)
        b = rng.randint(20, 150 - a)
        c = 180 - a - b
        feature = f"two of its angles marked and a question mark at {pts[2]}"
        units += [
            Unit("figure", {"shape": "triangle", "name": "".join(pts[:3]), "feature": feature}),
            Unit("goal", {"target": f"the measure of the angle at {pts[2]}"}),
            Unit("angle", {"pt": pts[0], "value": str(a)}),
            Unit("angle", {"pt": pts[1], "value": str(b)}),
            Unit("rule", {"rule": GEO_RULES[0]}),
            Unit(
                "compute",
                {"what": f"angle at {pts[2]}", "expr": f"180 - {a} - {b}", "result": str(c)},
            ),
        ]
        answer_value = f"{c} degrees"
        options, letter = _options(
            rng, f"{c} degrees", [f"{c + d} degrees" for d in (-20, -10, 5, 10, 15, 25)]
        )
        units += _choose_units(options, letter, rng, "it does not make the angles sum to 180")
        answer = letter
        question = f"In triangle {''.join(pts[:3])}, what is the measure of angle {pts[2]}?"
    elif kind == "hypotenuse":
        k = rng.randint(1, 6)
        a, b, c = rng.choice(((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (6, 8, 10)))
        a, b, c = a * k, b * k, c * k
        s1, s2, s3 = pts[0] + pts[2], pts[1] + pts[2], pts[0] + pts[1]
        feature = f"a right-angle mark at {pts[2]}"
        units += [
            Unit("figure", {"shape": "right triangle", "name": name, "feature": feature}),
            Unit("goal", {"target": f"the length of {s3}"}),
            Unit("label", {"seg": s1, "value": str(a)}),
            Unit("label", {"seg": s2, "value": str(b)}),
            Unit(
                "property",
                {
                    "reason": f"{s3} is opposite the right angle",
                    "claim": f"{s3} is the hypotenuse",
                },
            ),
            Unit("rule", {"rule": GEO_RULES[1]}),
            Unit(
                "compute",
                {
                    "what": f"square of {s3}",
                    "expr": f"{a}^2 + {b}^2 = {a * a} + {b * b}",
                    "result": str(c * c),
                },
            ),
            Unit(
                "compute", {"what": f"length of {s3}", "expr": f"sqrt({c * c})", "result": str(c)}
            ),
        ]
        answer = str(c)
        question = (
            f"In the right triangle {name}, the right angle is at {pts[2]}. How long is {s3}?"
        )
    else:
        w = rng.randint(2, 30)
        h = rng.randint(2, 30)
        s1, s2 = pts[0] + pts[1], pts[1] + pts[2]
        sh = "rectangle" if shape in ("triangle", "pentagon") else shape
        feature = f"sides {s1} and {s2} labelled"
        units += [
            Unit("figure", {"shape": sh, "name": "".join(pts), "feature": feature}),
            Unit("goal", {"target": f"the {kind} of {sh} {''.join(pts)}"}),
            Unit("label", {"seg": s1, "value": str(w)}),
            Unit("label", {"seg": s2, "value": str(h)}),
        ]
        if kind == "area":
            units += [
                Unit("rule", {"rule": GEO_RULES[3]}),
                Unit("compute", {"what": "area", "expr": f"{w} x {h}", "result": str(w * h)}),
            ]
            answer = str(w * h)
        else:
            units += [
                Unit("rule", {"rule": GEO_RULES[6]}),
                Unit("rule", {"rule": GEO_RULES[12]}),
                Unit(
                    "compute",
                    {"what": "perimeter", "expr": f"2 x ({w} + {h})", "result": str(2 * (w + h))},
                ),
            ]
            answer = str(2 * (w + h))
        question = f"What is the {kind} of {sh} {''.join(pts)} in the figure?"
    # Longer chains: more labelled quantities, auxiliary facts and checks.
    extra_rules = [r for r in GEO_RULES if all(r != u.slots.get("rule") for u in units)]
    rng.shuffle(extra_rules)
    seg_letters = "ABCDEFGHJKLMNPQRST"
    while len(units) + 1 < n:
        roll = rng.random()
        if roll < 0.35:
            seg = rng.choice(seg_letters) + rng.choice(seg_letters)
            unit = Unit("label", {"seg": seg, "value": str(rng.randint(2, 40))}, essential=False)
        elif roll < 0.55:
            unit = Unit(
                "angle",
                {"pt": rng.choice(seg_letters), "value": str(rng.randint(15, 165))},
                essential=False,
            )
        elif roll < 0.7 and extra_rules:
            unit = Unit("rule", {"rule": extra_rules.pop()}, essential=False)
        elif roll < 0.85:
            x, y = rng.randint(2, 60), rng.randint(2, 60)
            unit = Unit(
                "compute",
                {"what": "intermediate value", "expr": f"{x} + {y}", "result": str(x + y)},
                essential=False,
            )
        else:
            unit = Unit(
                "check",
                {"what": f"the result is consistent with the figure of {name}"},
                essential=False,
            )
        units.insert(rng.randint(2, max(2, len(units) - 1)), unit)
    units.append(Unit("conclude", {"answer": answer if kind != "angle" else answer_value}))

    def perturb(unit: Unit, prng: random.Random) -> Unit:
        slots = dict(unit.slots)
        if "value" in slots:
            slots["value"] = str(int(float(slots["value"])) + prng.choice((-7, -3, 2, 4, 9)))
        if "result" in slots:
            slots["result"] = str(prng.randint(2, 400))
        if "pt" in slots:
            slots["pt"] = prng.choice(seg_letters)
        if "seg" in slots:
            slots["seg"] = prng.choice(seg_letters) + prng.choice(seg_letters)
        return replace(unit, slots=slots)

    context = f"{shape} {name}"
    return Draft(
        "mathvision", question, answer, units, options, f"geometry:{kind}", perturb, context
    )


def _draft_science(rng: random.Random, n: int) -> Draft:
    kind = rng.choice(("foodweb", "magnets", "kinetic", "materials", "weather"))
    units: list[Unit] = []
    options: list[str] = []
    if kind == "foodweb":
        producers = [o for o, r in ORGANISMS if r == "producer"]
        consumers = [o for o, r in ORGANISMS if r == "consumer"]
        chain = [rng.choice(producers), *rng.sample(consumers, 3)]
        target_org = chain[1]
        units.append(Unit("goal", {"target": f"which organism the {target_org} gets energy from"}))
        for a, b in itertools.pairwise(chain):
            units.append(Unit("link", {"a": a, "b": b}))
            units.append(Unit("eats", {"a": a, "b": b}, essential=a == chain[0]))
        units.insert(1, Unit("rule", {"rule": SCI_RULES[2]}))
        correct = chain[0]
        options, letter = _options(rng, correct, chain[1:] + rng.sample(consumers, 3))
        units += _choose_units(options, letter, rng, "the arrow does not point to that organism")
        answer = letter
        question = f"Which organism in this food web does the {target_org} get energy from?"
        pool = consumers + producers

        def link_unit(prng: random.Random) -> Unit:
            a, b = prng.sample(pool, 2)
            return Unit(prng.choice(("link", "eats")), {"a": a, "b": b}, essential=False)

        extra = link_unit
    elif kind == "magnets":
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        while d2 == d1:
            d2 = rng.randint(1, 6)
        units += [
            Unit("goal", {"target": "which pair of magnets has the stronger magnetic force"}),
            Unit("magnet", {"p1": "north", "p2": "south", "m1": "1", "m2": "2"}),
            Unit("magnet", {"p1": "north", "p2": "south", "m1": "3", "m2": "4"}),
            Unit("distance", {"pair": "1", "value": str(d1)}),
            Unit("distance", {"pair": "2", "value": str(d2)}),
            Unit("rule", {"rule": SCI_RULES[1]}),
            Unit(
                "compare",
                {
                    "a": f"the force in pair {1 if d1 < d2 else 2}",
                    "b": f"the force in pair {2 if d1 < d2 else 1}",
                    "mark": "arrow",
                    "metric": "magnitude",
                },
            ),
        ]
        correct = f"The magnetic force is stronger in Pair {1 if d1 < d2 else 2}."
        options, letter = _options(
            rng,
            correct,
            [
                f"The magnetic force is stronger in Pair {2 if d1 < d2 else 1}.",
                "The strength of the magnetic force is the same in both pairs.",
            ],
        )
        units.append(Unit("choose", {"letter": letter, "option": correct}))
        answer = letter
        question = "Think about the magnetic force between the magnets in each pair. Which is true?"

        def extra(prng: random.Random) -> Unit:
            if prng.random() < 0.5:
                return Unit(
                    "magnet",
                    {
                        "p1": prng.choice(("north", "south")),
                        "p2": prng.choice(("north", "south")),
                        "m1": str(prng.randint(1, 8)),
                        "m2": str(prng.randint(1, 8)),
                    },
                    essential=False,
                )
            return Unit("rule", {"rule": SCI_RULES[0]}, essential=False)

    elif kind == "kinetic":
        m1, m2 = rng.randint(14, 46), rng.randint(14, 46)
        v = rng.randint(400, 1900)
        hot = "A" if m1 > m2 else "B"
        units += [
            Unit("goal", {"target": "which sample has the higher temperature"}),
            Unit("sample", {"s": "A", "mass": str(m1), "speed": str(v)}),
            Unit("sample", {"s": "B", "mass": str(m2), "speed": str(v)}),
            Unit("rule", {"rule": SCI_RULES[4]}),
            Unit(
                "property",
                {
                    "reason": "the particles move at the same speed",
                    "claim": f"the heavier particles in sample {hot} carry more kinetic energy",
                },
            ),
        ]
        options = ["sample A", "sample B", "neither; the samples have the same temperature"]
        letter = "A" if hot == "A" else "B"
        units += _choose_units(options, letter, rng, "its particles have less kinetic energy")
        answer = letter
        question = (
            "Compare the average kinetic energies of the particles. "
            "Which sample has the higher temperature?"
        )

        def extra(prng: random.Random) -> Unit:
            return Unit(
                "rule", {"rule": prng.choice(SCI_RULES[4:9])}, essential=prng.random() < 0.3
            )

    elif kind == "materials":
        objs = rng.sample(("spoon", "ball", "window", "rope", "bottle", "chair", "sweater"), 3)
        props = rng.sample(PROPERTIES, 3)
        mats = rng.sample(MATERIALS, 3)
        units.append(Unit("goal", {"target": "which property the three objects share"}))
        for o, m in zip(objs, mats, strict=True):
            units.append(Unit("material", {"obj": o, "material": m, "prop": props[0]}))
        units.append(Unit("rule", {"rule": SCI_RULES[12]}, essential=False))
        options, letter = _options(rng, props[0], props[1:] + rng.sample(PROPERTIES, 2))
        units += _choose_units(options, letter, rng, "not every object has this property")
        answer = letter
        question = "Which property do these three objects have in common?"

        def extra(prng: random.Random) -> Unit:
            return Unit(
                "material",
                {
                    "obj": prng.choice(objs),
                    "material": prng.choice(MATERIALS),
                    "prop": prng.choice(PROPERTIES),
                },
                essential=False,
            )

    else:
        city = rng.choice(CITIES)
        months = rng.sample(MONTHS, 4)
        rain = {m: rng.randint(5, 260) for m in months}
        wettest = max(months, key=lambda m: rain[m])
        units.append(Unit("goal", {"target": f"the wettest month in {city}"}))
        for m in months:
            units.append(Unit("weather", {"city": city, "month": m, "value": str(rain[m])}))
        units.append(Unit("rule", {"rule": SCI_RULES[10]}, essential=False))
        units.append(
            Unit(
                "extreme",
                {
                    "extreme": "highest",
                    "cat": wettest,
                    "metric": "precipitation",
                    "xaxis": "months",
                    "mark": "bar",
                },
            )
        )
        options, letter = _options(rng, wettest, months)
        units.append(Unit("choose", {"letter": letter, "option": wettest}))
        answer = letter
        question = f"Which month is the wettest on average in {city}?"

        def extra(prng: random.Random) -> Unit:
            return Unit(
                "weather",
                {
                    "city": prng.choice(CITIES),
                    "month": prng.choice(MONTHS),
                    "value": str(prng.randint(5, 260)),
                },
                essential=False,
            )

    while len(units) + 1 < n:
        units.insert(rng.randint(1, max(1, len(units) - 1)), extra(rng))
    units.append(Unit("conclude", {"answer": answer}))
    context = {
        "foodweb": "this food web",
        "magnets": "the two pairs of magnets",
        "kinetic": "samples A and B",
        "materials": "these objects",
        "weather": "the rainfall graph",
    }[kind]

    def perturb(unit: Unit, prng: random.Random) -> Unit:
        slots = dict(unit.slots)
        for key in ("value", "mass", "speed"):
            if key in slots:
                slots[key] = str(int(slots[key]) + prng.randint(3, 30))
        if "a" in slots and "b" in slots:
            slots["a"], slots["b"] = slots["b"], slots["a"]
        if "month" in slots:
            slots["month"] = prng.choice(MONTHS)
        if "prop" in slots:
            slots["prop"] = prng.choice(PROPERTIES)
        return replace(unit, slots=slots)

    return Draft("scienceqa", question, answer, units, options, f"science:{kind}", perturb, context)


def _draft_street(rng: random.Random, n: int) -> Draft:
    objs = rng.sample(STREET_OBJECTS, 6)
    vehicle = rng.choice(VEHICLES)
    color = rng.choice(COLORS)
    units: list[Unit] = [
        Unit(
            "see",
            {"color": color, "obj": vehicle, "pos": rng.choice(POSITIONS)},
        )
    ]
    qtype = rng.choice(("count", "yesno", "position", "distance"))
    options: list[str] = []
    if qtype == "count":
        objs_name = rng.choice(("cars", "pedestrians", "traffic cones", "bicycles", "trucks"))
        parts = [rng.randint(0, 4) for _ in range(rng.randint(2, 4))]
        total = sum(parts)
        units.append(Unit("goal", {"target": f"how many {objs_name} are in the image"}))
        places = rng.sample(POSITIONS, len(parts))
        for c, p in zip(parts, places, strict=True):
            units.append(Unit("count", {"n": str(c), "objs": objs_name, "pos": p}))
        expr = " + ".join(str(c) for c in parts)
        units.append(Unit("compute", {"what": "total count", "expr": expr, "result": str(total)}))
        answer = str(total)
        question = f"How many {objs_name} are visible in this image?"
    elif qtype == "yesno":
        light = rng.choice(("red", "green", "yellow"))
        units += [
            Unit("goal", {"target": "whether it is safe to drive through the intersection now"}),
            Unit("state", {"state": light}),
            Unit(
                "relation",
                {"o1": "pedestrian", "o2": "crosswalk", "rel": rng.choice(("on", "next to"))},
            ),
        ]
        answer = "yes" if light == "green" else "no"
        units.append(
            Unit(
                "property",
                {
                    "reason": f"the light is {light}",
                    "claim": "the car may proceed" if light == "green" else "the car must stop",
                },
            )
        )
        question = "Is it safe for the car to drive through the intersection right now?"
    elif qtype == "position":
        o1, o2 = objs[0], objs[1]
        rel = rng.choice(("to the left of", "to the right of"))
        units += [
            Unit("goal", {"target": f"whether the {o1} is left or right of the {o2}"}),
            Unit("see", {"color": rng.choice(COLORS), "obj": o1, "pos": rng.choice(POSITIONS)}),
            Unit("see", {"color": rng.choice(COLORS), "obj": o2, "pos": rng.choice(POSITIONS)}),
            Unit("relation", {"o1": o1, "o2": o2, "rel": rel}),
        ]
        correct = "left" if "left" in rel else "right"
        options, letter = _options(rng, correct, ["left", "right", "directly above", "behind"])
        units.append(Unit("choose", {"letter": letter, "option": correct}))
        answer = letter
        question = f"Is the {o1} to the left or to the right of the {o2}?"
    else:
        d = rng.randint(5, 120)
        units += [
            Unit("goal", {"target": f"the approximate distance to the {vehicle}"}),
            Unit("far", {"obj": vehicle, "value": str(d)}),
            Unit(
                "relation",
                {"o1": vehicle, "o2": objs[0], "rel": rng.choice(RELATIONS)},
                essential=False,
            ),
        ]
        answer = f"about {d} meters"
        question = f"Roughly how far away is the {color} {vehicle}?"
    while len(units) + 1 < n:
        roll = rng.random()
        if roll < 0.45:
            unit = Unit(
                "see",
                {
                    "color": rng.choice(COLORS),
                    "obj": rng.choice(STREET_OBJECTS),
                    "pos": rng.choice(POSITIONS),
                },
                essential=False,
            )
        elif roll < 0.75:
            o1, o2 = rng.sample(STREET_OBJECTS, 2)
            unit = Unit("relation", {"o1": o1, "o2": o2, "rel": rng.choice(RELATIONS)}, False)
        elif roll < 0.9:
            unit = Unit(
                "far", {"obj": rng.choice(STREET_OBJECTS), "value": str(rng.randint(3, 150))}, False
            )
        else:
            unit = Unit(
                "count",
                {
                    "n": str(rng.randint(1, 9)),
                    "objs": rng.choice(("parked cars", "windows", "trees", "people", "signs")),
                    "pos": rng.choice(POSITIONS),
                },
                essential=False,
            )
        units.insert(rng.randint(1, max(1, len(units) - 1)), unit)
    units.append(Unit("conclude", {"answer": answer}))

    def perturb(unit: Unit, prng: random.Random) -> Unit:
        slots = dict(unit.slots)
        if "pos" in slots:
            slots["pos"] = prng.choice(POSITIONS)
        if "color" in slots:
            slots["color"] = prng.choice(COLORS)
        if "n" in slots:
            slots["n"] = str(int(slots["n"]) + prng.randint(1, 3))
        if "rel" in slots:
            slots["rel"] = prng.choice(RELATIONS)
        if "value" in slots:
            slots["value"] = str(prng.randint(3, 150))
        return replace(unit, slots=slots)

    context = f"the street scene with the {color} {vehicle}"
    return Draft(
        "realworldqa", question, answer, units, options, f"street:{qtype}", perturb, context
    )


def _draft_detail(rng: random.Random, n: int) -> Draft:
    animal = rng.choice(ANIMALS)
    place = rng.choice(
        (
            "on a wooden floor",
            "in a grassy field",
            "next to a window",
            "on a sofa",
            "in front of a fence",
            "on a snowy path",
            "beside a red ball",
        )
    )
    part, states = rng.choice(MMVP_PARTS)
    state = rng.choice(states)
    units = [
        Unit("scene", {"animal": animal, "place": place}, essential=False),
        Unit("goal", {"target": f"whether the {animal}'s {part} is {state}"}),
        Unit("detail", {"animal": animal, "part": part, "state": state}),
    ]
    options, letter = _options(rng, state, [*states, "not visible"])
    units += _choose_units(options, letter, rng, "that does not match what the picture shows")
    answer = letter
    question = f"In this image, what best describes the {animal}'s {part}?"
    while len(units) + 1 < n:
        if rng.random() < 0.6:
            p, ss = rng.choice(MMVP_PARTS)
            unit = Unit("detail", {"animal": animal, "part": p, "state": rng.choice(ss)}, False)
        else:
            obj, ss = rng.choice(OBJECTS_MMVP)
            unit = Unit("thing", {"obj": obj, "state": rng.choice(ss)}, essential=False)
        units.insert(rng.randint(1, max(1, len(units) - 1)), unit)
    units.append(Unit("conclude", {"answer": answer}))

    def perturb(unit: Unit, prng: random.Random) -> Unit:
        slots = dict(unit.slots)
        if "state" in slots:
            pool = [s for _, ss in (*MMVP_PARTS, *OBJECTS_MMVP) for s in ss]
            slots["state"] = prng.choice(pool)
        if "animal" in slots:
            slots["animal"] = prng.choice(ANIMALS)
        return replace(unit, slots=slots)

    context = f"the photo of the {animal}"
    return Draft("mmvp", question, answer, units, options, f"detail:{part}", perturb, context)


SOURCES: tuple[tuple[str, float, Callable[[random.Random, int], Draft]], ...] = (
    ("plotqa", 0.30, _draft_chart),
    ("mathvision", 0.22, _draft_geometry),
    ("scienceqa", 0.20, _draft_science),
    ("realworldqa", 0.16, _draft_street),
    ("mmvp", 0.12, _draft_detail),
)


# --------------------------------------------------------------------------- rendering
class _Slots(dict[str, str]):
    """Template slots; a slot a unit does not fill renders empty."""

    def __missing__(self, key: str) -> str:
        return ""


def render(unit: Unit, rng: random.Random, *, terse: bool = False, avoid: str = "") -> str:
    """Render a unit with a random template (``avoid``: a sentence not to reproduce)."""
    full, short = TEMPLATES[unit.kind]
    pool = short if terse else full
    slots = _Slots(unit.slots)
    for _ in range(4):
        text = rng.choice(pool).format_map(slots)
        if text != avoid:
            break
    return _capitalise(text)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


_PROPER = frozenset([*COUNTRIES, *MONTHS, *CITIES, "I"])
_CONNECTIVES = ("So ", "Therefore", "Hence", "Thus", "This ", "Based", "Since", "Because")


def _decapitalise(text: str) -> str:
    """Lower-case the first letter unless the first word is a name, "I" or an acronym."""
    first = text.split(" ", 1)[0].rstrip(",.:;'s")
    if first in _PROPER or first[1:2].isupper() or first.isdigit():
        return text
    return text[:1].lower() + text[1:]


def _lead(lead: str, text: str) -> str:
    """``lead`` + ``text``, unless the sentence already opens with a connective."""
    if not lead or text.startswith(_CONNECTIVES):
        return text
    return lead + _decapitalise(text)


def synonymise(text: str, rng: random.Random, rate: float) -> str:
    """Replace words that have synonyms with probability ``rate`` each."""

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        return rng.choice(SYNONYMS[word]) if rng.random() < rate else word

    return _capitalise(_SYNONYM_RE.sub(swap, _decapitalise(text)))


def chain_length(rng: random.Random) -> int:
    """Reference chain length: a shifted log-normal clipped to 3..42 with mean about 11.6."""
    raw = 2 + math.exp(rng.gauss(2.115, 0.6))
    return max(MIN_STEPS, min(MAX_STEPS, round(raw)))


@dataclass(frozen=True)
class WorkItem:
    """A generated benchmark item and the units its reference chain was rendered from."""

    id: str
    source: str
    question: str
    options: list[str]
    answer: str
    reference_steps: list[str]
    units: list[Unit]
    topic: str
    perturb: Callable[[Unit, random.Random], Unit] | None

    def record(self) -> dict[str, Any]:
        """A :class:`crystalbench.types.BenchmarkItem` row for ``benchmark.jsonl``."""
        return {
            "id": self.id,
            "source": self.source,
            "question": self.question,
            "options": self.options,
            "answer": self.answer,
            "reference_steps": self.reference_steps,
            "metadata": {"synthetic": True, "topic": self.topic},
        }


def _fit(units: list[Unit], n: int, rng: random.Random) -> list[Unit]:
    """Drop non-essential (then middle) units until the chain has exactly ``n`` units."""
    units = list(units)
    while len(units) > n:
        optional = [k for k, u in enumerate(units) if not u.essential]
        if optional:
            units.pop(rng.choice(optional))
        else:
            units.pop(len(units) // 2)
    return units


def generate_item(index: int, seed: int = DEFAULT_SEED) -> WorkItem:
    """The ``index``-th benchmark item (a pure function of ``seed`` and ``index``).

    Examples:
        >>> a, b = generate_item(7), generate_item(7)
        >>> a.reference_steps == b.reference_steps and 3 <= len(a.reference_steps) <= 42
        True
    """
    rng = random.Random(f"{seed}/item/{index}")
    n = chain_length(rng)
    roll = rng.random()
    acc = 0.0
    maker = SOURCES[-1][2]
    for _, weight, candidate in SOURCES:
        acc += weight
        if roll < acc:
            maker = candidate
            break
    draft = maker(rng, n)
    units = _fit(draft.units, n, rng)
    # General rules are stated about this item's own figure, as real chains do.
    contexts = ("", "", f" in {draft.context}", f", which applies to {draft.context}", " here")
    units = [
        replace(u, slots={**u.slots, "ctx": rng.choice(contexts)}) if u.kind == "rule" else u
        for u in units
    ]
    steps = [render(u, rng) for u in units]
    # Now and then a reference restates a step with a different lead-in.
    steps = [_lead(rng.choice(LEADS), s) if rng.random() < 0.12 else s for s in steps]
    return WorkItem(
        id=f"{draft.source}-{index:06d}",
        source=draft.source,
        question=draft.question,
        options=draft.options,
        answer=draft.answer,
        reference_steps=steps,
        units=units,
        topic=draft.topic,
        perturb=draft.perturb,
    )


# --------------------------------------------------------------------------- predictions
@dataclass(frozen=True)
class Profile:
    """How one synthetic model writes its chains."""

    name: str
    keep: float
    """Chance a reference unit appears in the prediction at all."""
    copy: float
    """Chance a kept unit is copied verbatim (else re-rendered)."""
    terse: float
    """Chance a kept unit uses a terse template."""
    synonyms: float
    """Per-word synonym substitution rate."""
    hedge: float
    """Chance of a hedge or lead-in phrase."""
    filler: float
    """Chance of a generic filler step after each kept unit."""
    hallucinate: float
    """Chance an omitted unit is replaced by a perturbed one (wrong value/entity)."""
    merge: float
    """Chance two neighbouring steps are merged into one."""
    swap: float
    """Chance each adjacent pair is swapped."""
    shuffle: float
    """Chance the whole middle of the chain is shuffled."""
    accuracy: float
    """Chance the final answer is right."""
    empty: float = 0.003
    """Chance the prediction has no steps at all (a failed generation)."""


PROFILES: tuple[Profile, ...] = (
    Profile("careful-large", 0.85, 0.08, 0.05, 0.25, 0.15, 0.08, 0.3, 0.04, 0.04, 0.01, 0.78),
    Profile("verbose-cot", 0.8, 0.02, 0.0, 0.35, 0.45, 0.45, 0.25, 0.0, 0.05, 0.02, 0.62),
    Profile("terse-small", 0.55, 0.0, 0.6, 0.2, 0.05, 0.02, 0.2, 0.25, 0.05, 0.02, 0.55),
    Profile("scrambled-order", 0.75, 0.03, 0.15, 0.3, 0.2, 0.1, 0.25, 0.05, 0.3, 0.25, 0.5),
    Profile("weak-hallucinating", 0.4, 0.0, 0.2, 0.4, 0.3, 0.25, 0.75, 0.08, 0.12, 0.05, 0.33),
)


def profile(k: int) -> Profile:
    """The ``k``-th prediction profile (cycling, with suffixed names past the fifth)."""
    base = PROFILES[k % len(PROFILES)]
    if k < len(PROFILES):
        return base
    shift = 0.04 * (k // len(PROFILES))
    return replace(
        base,
        name=f"{base.name}-{k // len(PROFILES) + 1}",
        keep=max(0.2, base.keep - shift),
        accuracy=max(0.2, base.accuracy - shift),
    )


def _wrong_answer(item: WorkItem, rng: random.Random) -> str:
    if item.options:
        letters = [c for c in LETTERS[: len(item.options)] if c != item.answer]
        return rng.choice(letters) if letters else "A"
    try:
        value = float(item.answer)
    except ValueError:
        if item.answer in ("yes", "no"):
            return "no" if item.answer == "yes" else "yes"
        return "about " + str(rng.randint(3, 150)) + " meters"
    return _fmt(value * rng.choice((0.5, 0.8, 1.3, 2.0)) + rng.choice((1, 3, 7)))


def _format_answer(answer: str, item: WorkItem, rng: random.Random) -> str:
    """Models write answers in several surface forms."""
    if item.options and answer in LETTERS and rng.random() < 0.3:
        forms = (f"({answer})", f"{answer}.", f"Option {answer}", f"The answer is {answer}")
        return rng.choice(forms)
    if answer in ("yes", "no") and rng.random() < 0.4:
        return answer.capitalize() + "."
    return answer


def generate_prediction(item: WorkItem, k: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The prediction of model ``k`` for ``item``: ``{id, model, reasoning_steps, answer}``.

    Examples:
        >>> item = generate_item(3)
        >>> generate_prediction(item, 1) == generate_prediction(item, 1)
        True
    """
    prof = profile(k)
    rng = random.Random(f"{seed}/pred/{prof.name}/{item.id}")
    correct = rng.random() < prof.accuracy
    answer = item.answer if correct else _wrong_answer(item, rng)
    record: dict[str, Any] = {"id": item.id, "model": prof.name}
    if rng.random() < prof.empty:
        record.update(reasoning_steps=[], answer=_format_answer(answer, item, rng))
        return record
    # Per-item quality: long chains are harder to reproduce.
    keep = min(0.98, max(0.05, prof.keep + rng.gauss(0, 0.1) - 0.006 * (len(item.units) - 11)))
    steps: list[str] = []
    for unit, ref_text in zip(item.units, item.reference_steps, strict=True):
        if rng.random() >= keep:
            if item.perturb is not None and rng.random() < prof.hallucinate:
                fake = item.perturb(unit, rng)
                steps.append(synonymise(render(fake, rng), rng, prof.synonyms))
            continue
        if rng.random() < prof.copy:
            text = ref_text
        else:
            text = render(unit, rng, terse=rng.random() < prof.terse, avoid=ref_text)
            text = synonymise(text, rng, prof.synonyms)
            if rng.random() < prof.hedge:
                text = _lead(rng.choice(HEDGES + LEADS), text)
        steps.append(text)
        if rng.random() < prof.filler:
            steps.append(rng.choice(FILLERS))
    # Merge neighbours ("A, and b").
    merged: list[str] = []
    for text in steps:
        if merged and rng.random() < prof.merge:
            head = merged[-1].rstrip(".")
            merged[-1] = f"{head}, and {_decapitalise(text)}"
        else:
            merged.append(text)
    steps = merged
    if len(steps) > 3 and rng.random() < prof.shuffle:
        middle = steps[1:-1]
        rng.shuffle(middle)
        steps = [steps[0], *middle, steps[-1]]
    for pos in range(len(steps) - 1):
        if rng.random() < prof.swap:
            steps[pos], steps[pos + 1] = steps[pos + 1], steps[pos]
    if not steps:
        steps = [rng.choice(FILLERS)]
    record.update(reasoning_steps=steps, answer=_format_answer(answer, item, rng))
    return record


# --------------------------------------------------------------------------- predictions, v2
# Real models rarely reproduce a reference sentence: each writes in its own voice (openers,
# closing phrases, preferred words, contractions, symbols), restates the question, comments
# on what it sees, double-checks itself and states the answer. Workload "v2" (the default)
# writes predictions that way: kept units are re-rendered and then rephrased in the model's
# voice, only ``V2_COPY`` of them are verbatim copies, and distractors are added. "v1" (the
# generator above, used for the figures recorded before issue 18) stays available.

WORKLOAD_STYLES = ("v2", "v1")
"""Prediction generators: ``v2`` (paraphrasing models, default) and ``v1`` (the first)."""

V2_COPY = {
    "careful-large": 0.12,
    "verbose-cot": 0.04,
    "terse-small": 0.03,
    "scrambled-order": 0.06,
    "weak-hallucinating": 0.02,
}
"""Chance a kept unit is copied verbatim from the reference, per base profile (v2)."""

V2_OPENERS = (
    "From the image, ",
    "Looking at the figure, ",
    "In the picture, ",
    "I can see that ",
    "Observing the diagram, ",
    "As shown, ",
    "Based on the figure, ",
    "From what is visible, ",
    "Upon inspection, ",
    "Here, ",
    "We observe that ",
    "Notice that ",
    "It can be seen that ",
    "Examining the image, ",
    "On closer inspection, ",
    "Visually, ",
    "In the given image, ",
    "Checking the figure, ",
    "From the visual information, ",
    "As we can see, ",
    "Taking a closer look, ",
    "Judging from the picture, ",
    "If we look carefully, ",
    "According to the image, ",
)
V2_CLOSERS = (
    " in the image",
    " as shown in the figure",
    " according to the picture",
    " based on what is visible",
    " from the diagram",
    " in this case",
    " as can be seen",
    " which is clear from the figure",
    " as the image shows",
    " judging by the picture",
    " in the provided figure",
    " if we read it carefully",
)
V2_ELABORATIONS = (
    "which will matter for the final answer",
    "which is the key piece of information",
    "and this is what the question depends on",
    "so this needs to be kept in mind",
    "which narrows things down",
    "and that is worth noting",
    "which helps answer the question",
    "and this detail is easy to miss",
    "which is consistent with the rest of the figure",
)
V2_RESTATE = (
    "The question asks: {question}",
    "We are asked the following: {question}",
    "The task: {question}",
    "Let me restate the question: {question}",
    "I need to answer this question: {question}",
    "Question: {question}",
)
V2_SELF_CHECK = (
    "Let me double-check: {step}",
    "Re-checking, {step}",
    "To confirm, {step}",
    "Just to be sure, {step}",
    "Verifying this again, {step}",
    "Wait, let me verify: {step}",
)
V2_FINAL = (
    "So my final answer is {answer}.",
    "Thus, the answer is {answer}.",
    "Final answer: {answer}.",
    "The correct choice is therefore {answer}.",
    "Putting it all together, the answer is {answer}.",
    "Hence I choose {answer}.",
)
V2_META = (
    "Let me carefully analyse the {thing}.",
    "I will go through the {thing} step by step.",
    "First, let me understand what the {thing} shows.",
    "I should focus on the {thing} itself.",
    "Let me think about what the {thing} tells us.",
    "The {thing} contains several details.",
    "I need to examine the {thing} closely.",
    "Now let me look at the {thing} again.",
)
V2_THINGS = ("image", "figure", "picture", "diagram", "visual", "scene", "chart", "graph")
_CONTRACTIONS = (
    ("it is", "it's"),
    ("does not", "doesn't"),
    ("is not", "isn't"),
    ("that is", "that's"),
    ("we are", "we're"),
    ("cannot", "can't"),
    ("there is", "there's"),
    ("do not", "don't"),
    ("I will", "I'll"),
    ("let us", "let's"),
)
_SYMBOLS = (
    (" percent", "%"),
    (" degrees", "°"),
    (" million", "M"),
    (" billion", "B"),
    (" thousand", "k"),
    (" and ", " & "),
)


@dataclass(frozen=True)
class Voice:
    """How one synthetic model phrases its steps (drawn from its name and the seed)."""

    openers: tuple[str, ...]
    closers: tuple[str, ...]
    preferred: dict[str, str]
    """The model's own choice of synonym for each word that has some."""
    open_rate: float
    close_rate: float
    elaborate: float
    contractions: bool
    symbols: bool
    restate: float
    """Chance the chain starts by restating the question."""
    meta: float
    """Chance of a meta comment ("Let me analyse the figure") per kept unit."""
    self_check: float
    """Chance of re-checking the previous step in other words."""
    final: float
    """Chance of a closing answer sentence of the model's own."""


def voice(name: str, seed: int = DEFAULT_SEED) -> Voice:
    """The voice of model ``name`` (a pure function of ``name`` and ``seed``).

    Examples:
        >>> voice("careful-large") == voice("careful-large")
        True
        >>> voice("careful-large").openers != voice("careful-large-2").openers
        True
    """
    rng = random.Random(f"{seed}/voice/{name}")
    verbose = "verbose" in name
    terse = "terse" in name
    return Voice(
        openers=tuple(rng.sample(V2_OPENERS, 5)),
        closers=tuple(rng.sample(V2_CLOSERS, 4)),
        preferred={word: rng.choice((word, *alts)) for word, alts in SYNONYMS.items()},
        open_rate=rng.uniform(0.1, 0.25) if terse else rng.uniform(0.35, 0.6),
        close_rate=rng.uniform(0.05, 0.1) if terse else rng.uniform(0.2, 0.4),
        elaborate=0.02
        if terse
        else (rng.uniform(0.2, 0.35) if verbose else rng.uniform(0.05, 0.15)),
        contractions=rng.random() < 0.5,
        symbols=rng.random() < (0.7 if terse else 0.3),
        restate=0.05 if terse else rng.uniform(0.2, 0.5),
        meta=0.0 if terse else (rng.uniform(0.15, 0.25) if verbose else rng.uniform(0.03, 0.08)),
        self_check=0.02 if terse else rng.uniform(0.05, 0.12),
        final=rng.uniform(0.3, 0.7),
    )


def _closing(text: str, phrase: str) -> str:
    """``text`` with ``phrase`` inserted before its final punctuation."""
    body = text.rstrip()
    end = body[-1] if body and body[-1] in ".!?" else "."
    return body.rstrip(".!?") + phrase + end


def rephrase(text: str, voice_: Voice, rng: random.Random, *, terse: bool = False) -> str:
    """Rewrite a rendered step in the model's voice (words, opener, closer, contractions).

    Examples:
        >>> rng = random.Random(0)
        >>> rephrase("The chart shows the value for 2019.", voice("a"), rng) != ""
        True
    """

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        if rng.random() < 0.7:
            return voice_.preferred[word]
        return rng.choice(SYNONYMS[word]) if rng.random() < 0.5 else word

    out = _capitalise(_SYNONYM_RE.sub(swap, _decapitalise(text)))
    if voice_.contractions:
        for full, short in _CONTRACTIONS:
            out = re.sub(rf"\b{full}\b", short, out)
            out = re.sub(rf"^{full.capitalize()}\b", short.capitalize(), out)
    if voice_.symbols:
        for word, symbol in _SYMBOLS:
            out = out.replace(word, symbol)
    if not terse:
        if rng.random() < voice_.close_rate:
            out = _closing(out, rng.choice(voice_.closers))
        if rng.random() < voice_.elaborate:
            out = _closing(out, ", " + rng.choice(V2_ELABORATIONS))
        if rng.random() < voice_.open_rate:
            out = _lead(rng.choice(voice_.openers), out)
    return out


def generate_prediction_v2(item: WorkItem, k: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Model ``k``'s prediction for ``item``, paraphrasing in its own voice (workload v2).

    Examples:
        >>> item = generate_item(3)
        >>> generate_prediction_v2(item, 1) == generate_prediction_v2(item, 1)
        True
    """
    prof = profile(k)
    style = voice(prof.name, seed)
    base = prof.name.rsplit("-", 1)[0] if prof.name[-1:].isdigit() else prof.name
    copy_rate = V2_COPY.get(base, prof.copy)
    rng = random.Random(f"{seed}/pred-v2/{prof.name}/{item.id}")
    correct = rng.random() < prof.accuracy
    answer = item.answer if correct else _wrong_answer(item, rng)
    record: dict[str, Any] = {"id": item.id, "model": prof.name}
    if rng.random() < prof.empty:
        record.update(reasoning_steps=[], answer=_format_answer(answer, item, rng))
        return record
    keep = min(0.98, max(0.05, prof.keep + rng.gauss(0, 0.1) - 0.006 * (len(item.units) - 11)))
    thing = rng.choice(V2_THINGS)
    steps: list[str] = []
    if rng.random() < style.restate:
        steps.append(rng.choice(V2_RESTATE).format(question=item.question))
    for unit, ref_text in zip(item.units, item.reference_steps, strict=True):
        if rng.random() < style.meta:
            steps.append(rng.choice(V2_META).format(thing=thing))
        if rng.random() >= keep:
            if item.perturb is not None and rng.random() < prof.hallucinate:
                fake = item.perturb(unit, rng)
                steps.append(rephrase(render(fake, rng), style, rng))
            continue
        terse = rng.random() < prof.terse
        if rng.random() < copy_rate:
            text = ref_text
        else:
            text = rephrase(render(unit, rng, terse=terse, avoid=ref_text), style, rng, terse=terse)
            if rng.random() < prof.synonyms * 0.5:
                text = synonymise(text, rng, prof.synonyms)
        steps.append(text)
        if steps and rng.random() < style.self_check:
            again = rephrase(render(unit, rng, avoid=text), style, rng, terse=True)
            steps.append(rng.choice(V2_SELF_CHECK).format(step=_decapitalise(again)))
        if rng.random() < prof.filler * 0.5:
            steps.append(rng.choice(FILLERS))
    merged: list[str] = []
    for text in steps:
        if merged and rng.random() < prof.merge:
            merged[-1] = f"{merged[-1].rstrip('.')}, and {_decapitalise(text)}"
        else:
            merged.append(text)
    steps = merged
    if len(steps) > 3 and rng.random() < prof.shuffle:
        middle = steps[1:-1]
        rng.shuffle(middle)
        steps = [steps[0], *middle, steps[-1]]
    for pos in range(len(steps) - 1):
        if rng.random() < prof.swap:
            steps[pos], steps[pos + 1] = steps[pos + 1], steps[pos]
    if rng.random() < style.final:
        final = _format_answer(answer, item, rng).rstrip(".")
        steps.append(rng.choice(V2_FINAL).format(answer=final))
    if not steps:
        steps = [rng.choice(FILLERS)]
    record.update(reasoning_steps=steps, answer=_format_answer(answer, item, rng))
    return record


def predict(item: WorkItem, k: int, seed: int = DEFAULT_SEED, style: str = "v2") -> dict[str, Any]:
    """Model ``k``'s prediction for ``item`` with the ``style`` generator (``v2`` or ``v1``)."""
    if style == "v2":
        return generate_prediction_v2(item, k, seed)
    if style == "v1":
        return generate_prediction(item, k, seed)
    raise ValueError(f"unknown workload style {style!r} (valid: {', '.join(WORKLOAD_STYLES)})")


# --------------------------------------------------------------------------- files
def iter_items(n_items: int, seed: int = DEFAULT_SEED) -> Iterator[WorkItem]:
    """Items ``0 .. n_items - 1`` in order."""
    for index in range(n_items):
        yield generate_item(index, seed)


@dataclass(frozen=True)
class WorkloadFiles:
    """Where :func:`write_workload` put things."""

    root: Path
    benchmark: Path
    predictions: list[Path]
    cm_references: Path | None
    cm_predictions: list[Path]


def generator_version() -> str:
    """Hash of this file: files written by another version of the generator are rewritten."""
    import hashlib

    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def write_workload(
    out: str | Path,
    n_items: int = CRYSTAL_ITEMS,
    n_sets: int = 5,
    *,
    seed: int = DEFAULT_SEED,
    crystal_metrics_format: bool = True,
    style: str = "v2",
) -> WorkloadFiles:
    """Write ``benchmark.jsonl``, ``predictions/<model>.jsonl`` and crystal-metrics JSON files.

    ``style`` picks the prediction generator (``v2``: paraphrasing models, the default;
    ``v1``: the first generator, behind the figures recorded before issue 18).

    Items stream to disk one at a time, so 100,000 items need little memory (except the
    crystal-metrics JSON objects, which are skipped when ``crystal_metrics_format`` is off).
    Files already written for the same arguments are reused (``manifest.json`` records them).
    """
    root = Path(out)
    manifest = {
        "items": n_items,
        "sets": n_sets,
        "seed": seed,
        "cm": crystal_metrics_format,
        "style": style,
        "generator": generator_version(),
    }
    names = [profile(k).name for k in range(n_sets)]
    files = WorkloadFiles(
        root=root,
        benchmark=root / "benchmark.jsonl",
        predictions=[root / "predictions" / f"{name}.jsonl" for name in names],
        cm_references=root / "cm" / "references.json" if crystal_metrics_format else None,
        cm_predictions=[root / "cm" / f"{name}.json" for name in names]
        if crystal_metrics_format
        else [],
    )
    stamp = root / "manifest.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == manifest:
        return files
    (root / "predictions").mkdir(parents=True, exist_ok=True)
    bench = files.benchmark.open("w", encoding="utf-8")
    preds = [p.open("w", encoding="utf-8") for p in files.predictions]
    cm_refs: dict[str, Any] = {}
    cm_preds: list[dict[str, Any]] = [{} for _ in range(n_sets)]
    try:
        for item in iter_items(n_items, seed):
            bench.write(json.dumps(item.record(), ensure_ascii=False) + "\n")
            if crystal_metrics_format:
                cm_refs[item.id] = {"reference_steps": item.reference_steps, "answer": item.answer}
            for k, handle in enumerate(preds):
                record = predict(item, k, seed, style)
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                if crystal_metrics_format:
                    cm_preds[k][item.id] = {
                        "question": item.question,
                        "reasoning_steps": record["reasoning_steps"],
                        "answer": record["answer"],
                    }
    finally:
        bench.close()
        for handle in preds:
            handle.close()
    if crystal_metrics_format:
        assert files.cm_references is not None
        files.cm_references.parent.mkdir(parents=True, exist_ok=True)
        files.cm_references.write_text(json.dumps(cm_refs, ensure_ascii=False), encoding="utf-8")
        for path, data in zip(files.cm_predictions, cm_preds, strict=True):
            path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    stamp.write_text(json.dumps(manifest))
    return files


# --------------------------------------------------------------------------- measurements
def describe(
    n_items: int, n_sets: int, seed: int = DEFAULT_SEED, style: str = "v2"
) -> dict[str, Any]:
    """Chain-length and uniqueness statistics of a workload, and how often models copy.

    ``verbatim_share``: predicted steps equal to a reference step of the same item;
    ``in_any_reference``: equal to any reference step of the workload; ``shared_with_other
    sets``: also written, word for word, by another model of the workload.
    """
    lengths: list[int] = []
    pred_lengths: list[list[int]] = [[] for _ in range(n_sets)]
    ref_texts: set[str] = set()
    pred_texts: list[set[str]] = [set() for _ in range(n_sets)]
    n_ref = 0
    n_pred = [0] * n_sets
    verbatim = [0] * n_sets
    sources: dict[str, int] = {}
    for item in iter_items(n_items, seed):
        lengths.append(len(item.reference_steps))
        ref_texts.update(item.reference_steps)
        n_ref += len(item.reference_steps)
        sources[item.source] = sources.get(item.source, 0) + 1
        own = set(item.reference_steps)
        for k in range(n_sets):
            steps = predict(item, k, seed, style)["reasoning_steps"]
            pred_lengths[k].append(len(steps))
            pred_texts[k].update(steps)
            n_pred[k] += len(steps)
            verbatim[k] += sum(1 for step in steps if step in own)
    union_all = set(ref_texts).union(*pred_texts)

    def shared(k: int) -> int:
        others = set().union(*(pred_texts[j] for j in range(n_sets) if j != k))
        return len(pred_texts[k] & others)

    words = [len(t.split()) for t in list(ref_texts)[:20000]]
    total_pred = sum(n_pred)
    return {
        "items": n_items,
        "style": style,
        "sources": sources,
        "ref_steps": {
            "min": min(lengths),
            "max": max(lengths),
            "mean": round(sum(lengths) / len(lengths), 2),
            "total": n_ref,
            "unique": len(ref_texts),
            "mean_words": round(sum(words) / len(words), 1),
        },
        "pred_sets": [
            {
                "model": profile(k).name,
                "mean_steps": round(sum(pred_lengths[k]) / n_items, 2),
                "total": n_pred[k],
                "unique": len(pred_texts[k]),
                "verbatim_share": round(verbatim[k] / max(1, n_pred[k]), 4),
                "in_any_reference": round(
                    len(pred_texts[k] & ref_texts) / max(1, len(pred_texts[k])), 4
                ),
                "shared_with_other_sets": round(shared(k) / max(1, len(pred_texts[k])), 4),
            }
            for k in range(n_sets)
        ],
        "verbatim_share_all_sets": round(sum(verbatim) / max(1, total_pred), 4),
        "texts_total_one_set": n_ref + (n_pred[0] if n_sets else 0),
        "texts_total_all_sets": n_ref * n_sets + sum(n_pred),
        "unique_all_sets": len(union_all),
    }


def cosine_histogram(
    n_items: int = 300,
    n_sets: int = 5,
    seed: int = DEFAULT_SEED,
    tau: float = 0.35,
    style: str = "v2",
) -> dict[str, Any]:
    """Cosines of every (predicted, reference) step pair within items, with minilm-offline."""
    import numpy as np

    from crystalbench.encoders import load_encoder

    encoder = load_encoder("minilm-offline")
    items = list(iter_items(n_items, seed))
    preds = [[predict(item, k, seed, style) for item in items] for k in range(n_sets)]
    texts = sorted(
        {s for it in items for s in it.reference_steps}
        | {s for pk in preds for p in pk for s in p["reasoning_steps"]}
    )
    vectors = encoder.encode(texts)
    row = {t: i for i, t in enumerate(texts)}
    all_pairs: list[np.ndarray] = []
    best_per_pred: list[np.ndarray] = []
    for k in range(n_sets):
        for item, pred in zip(items, preds[k], strict=True):
            if not pred["reasoning_steps"]:
                continue
            p = vectors[[row[s] for s in pred["reasoning_steps"]]]
            r = vectors[[row[s] for s in item.reference_steps]]
            sim = p @ r.T
            all_pairs.append(sim.ravel())
            best_per_pred.append(sim.max(axis=1))
    pairs = np.concatenate(all_pairs)
    best = np.concatenate(best_per_pred)
    edges = np.round(np.arange(-0.2, 1.0001, 0.05), 2)
    counts, _ = np.histogram(np.clip(pairs, -0.2, 1.0), bins=edges)
    best_counts, _ = np.histogram(np.clip(best, -0.2, 1.0), bins=edges)
    return {
        "items": n_items,
        "sets": n_sets,
        "style": style,
        "encoder": encoder.identity,
        "pairs": int(pairs.size),
        "share_0.25_0.50": round(float(((pairs >= 0.25) & (pairs < 0.5)).mean()), 4),
        "share_above_tau": round(float((pairs > tau).mean()), 4),
        "best_share_0.25_0.50": round(float(((best >= 0.25) & (best < 0.5)).mean()), 4),
        "best_share_above_tau": round(float((best > tau).mean()), 4),
        "best_within_0.05_of_tau": round(float((np.abs(best - tau) < 0.05).mean()), 4),
        "histogram": [
            (f"{lo:.2f}..{hi:.2f}", int(c), int(b))
            for lo, hi, c, b in zip(edges[:-1], edges[1:], counts, best_counts, strict=True)
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write benchmark, predictions and crystal-metrics files")
    w.add_argument("--items", type=int, default=CRYSTAL_ITEMS)
    w.add_argument("--sets", type=int, default=5)
    w.add_argument("--seed", type=int, default=DEFAULT_SEED)
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("--no-cm", action="store_true", help="skip the crystal-metrics JSON files")
    for command in (w,):
        command.add_argument("--workload", choices=WORKLOAD_STYLES, default="v2")
    s = sub.add_parser("stats", help="chain lengths and text uniqueness")
    s.add_argument("--items", type=int, default=CRYSTAL_ITEMS)
    s.add_argument("--sets", type=int, default=5)
    s.add_argument("--seed", type=int, default=DEFAULT_SEED)
    s.add_argument("--workload", choices=WORKLOAD_STYLES, default="v2")
    h = sub.add_parser("histogram", help="cosine histogram with minilm-offline")
    h.add_argument("--items", type=int, default=300)
    h.add_argument("--sets", type=int, default=5)
    h.add_argument("--seed", type=int, default=DEFAULT_SEED)
    h.add_argument("--workload", choices=WORKLOAD_STYLES, default="v2")
    x = sub.add_parser("show", help="print one item and its predictions")
    x.add_argument("index", type=int)
    x.add_argument("--sets", type=int, default=5)
    x.add_argument("--seed", type=int, default=DEFAULT_SEED)
    x.add_argument("--workload", choices=WORKLOAD_STYLES, default="v2")
    args = parser.parse_args(argv)
    if args.command == "write":
        files = write_workload(
            args.out,
            args.items,
            args.sets,
            seed=args.seed,
            crystal_metrics_format=not args.no_cm,
            style=args.workload,
        )
        print(json.dumps({"root": str(files.root), "sets": [p.name for p in files.predictions]}))
    elif args.command == "stats":
        print(json.dumps(describe(args.items, args.sets, args.seed, args.workload), indent=2))
    elif args.command == "histogram":
        result = cosine_histogram(args.items, args.sets, args.seed, style=args.workload)
        rows = result.pop("histogram")
        print(json.dumps(result, indent=2))
        print(f"{'cosine':>12} {'all pairs':>10} {'best per pred':>14}")
        for label, count, best in rows:
            print(f"{label:>12} {count:>10} {best:>14}")
    else:
        item = generate_item(args.index, args.seed)
        print(f"[{item.id}] {item.question} options={item.options} answer={item.answer}")
        for step in item.reference_steps:
            print("  REF ", step)
        for k in range(args.sets):
            pred = predict(item, k, args.seed, args.workload)
            print(f" -- {pred['model']} answer={pred['answer']!r}")
            for step in pred["reasoning_steps"]:
                print("    ", step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
