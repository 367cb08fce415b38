"""Words, sentence templates and rendering of the synthetic CRYSTAL workload (``workload.py``).

A reference or predicted step starts as a :class:`Unit` (a kind such as "read a value off a
chart" plus its slots: entity, value, unit...) and becomes a sentence through one of the
kind's templates (:func:`render`); :func:`synonymise` swaps words for synonyms. The item
drafts (``workload_items.py``) and the prediction generator (``workload.py``) draw on the
vocabularies here.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass


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
