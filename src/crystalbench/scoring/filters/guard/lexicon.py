"""The word lists the fact guard reads steps with: one place for each list.

Everything here is data: function words, the light words that do not tell two statements
apart, colours by family, position and ordinal words, negation markers, units, and the
relation lexicon (comparatives, superlatives, opposed states). The lists are English and
deliberately short: a word missing from a list makes the guard miss a contradiction, never
invent one (see :mod:`crystalbench.scoring.filters.guard` for what each rule does with them).
"""

from __future__ import annotations

from typing import Final, NamedTuple


def _words(text: str) -> list[str]:
    """The words of a list written as one string (easier to read and to keep sorted)."""
    return text.split()


STOP_WORDS: Final = frozenset(
    _words(
        """a an the this that these those it its they them their theirs there here is are was were
        be been being am do does did done has have had having of to in on at by for from with as
        into onto upon and or but so if then than because since while which who whom whose what
        where when how why each every both any some such very also just only too can could will
        would shall should may might must we i you he she him her his our ours us my your me
        ones other others another out again once now let lets s per via whether else already
        still even yet all most really quite rather well thing things way ie eg etc given
        among amongst"""
    )
)
"""Function words: never content, never a fact."""

LIGHT_WORDS: Final = frozenset(
    _words(
        """value number amount measure equal reach show see give read label mark find compute
        calculate get obtain result indicate appear look seem contain hold make question answer
        step exact exactly approximately figure image picture diagram chart graph plot photo
        photograph scene check using use yield come become stand lie locate observe notice
        state says say tell write written count therefore thus hence next finally know
        clearly simply directly follow follows final work determine need ask asks want
        accord according total add adding choice option draw depict display present visible
        shown"""
    )
)
"""Words that two statements of the same fact often differ by ("measures", "reaches",
"equals", "the figure shows"): they never make two steps about different things. Compared
by stem (see :func:`crystalbench.scoring.filters.guard.text.stem`)."""

SYNONYMS: Final = {
    "sum": "total",
    "long": "length",
    "tall": "height",
    "high": "height",
    "wide": "width",
    "deep": "depth",
    "weigh": "weight",
    "heavy": "weight",
    "far": "distance",
    "cost": "price",
    "centre": "center",
    "colour": "color",
    "grey": "gray",
}
"""Words (by stem) that name the same thing, mapped to one key."""

NEGATIONS: Final = frozenset(
    {"not", "no", "never", "none", "nothing", "nobody", "nowhere", "neither", "nor", "without"}
)
"""Words that negate what follows them ("n't" and "cannot" are read as ``not``)."""

NOT_NEGATING_AFTER: Final = {
    "not": frozenset({"only", "just", "necessarily"}),
    "no": frozenset({"matter", "doubt"}),
    "nothing": frozenset({"but"}),
}
"""A negation word followed by one of these does not negate a fact ("not only", "no matter",
"nothing but")."""

NEGATIVE_PREFIX_ROOTS: Final = frozenset(
    _words(
        """shaded possible correct equal visible labelled labeled marked filled coloured colored
        known changed balanced stable safe clear certain connected related true like likely
        moving charged identical similar symmetric symmetrical even regular used occupied
        touched broken lit covered"""
    )
)
"""Roots read as negated under a prefix: "unshaded" is "not shaded", "impossible" is "not
possible" (only these roots; "unit" is not "not it")."""

NEGATIVE_PREFIXES: Final = ("non", "dis", "un", "in", "im", "il", "ir")
"""Prefixes that negate a root of :data:`NEGATIVE_PREFIX_ROOTS`."""

COLOUR_FAMILIES: Final = {
    "red": ("red",),
    "crimson": ("red",),
    "scarlet": ("red",),
    "maroon": ("red", "brown"),
    "burgundy": ("red", "purple"),
    "orange": ("orange",),
    "yellow": ("yellow",),
    "gold": ("yellow",),
    "golden": ("yellow",),
    "green": ("green",),
    "lime": ("green",),
    "olive": ("green",),
    "teal": ("green", "blue"),
    "turquoise": ("green", "blue"),
    "cyan": ("blue", "green"),
    "blue": ("blue",),
    "navy": ("blue",),
    "azure": ("blue",),
    "purple": ("purple",),
    "violet": ("purple",),
    "lavender": ("purple",),
    "magenta": ("purple", "pink"),
    "pink": ("pink",),
    "brown": ("brown",),
    "tan": ("brown",),
    "beige": ("brown", "white"),
    "black": ("black",),
    "white": ("white",),
    "gray": ("gray",),
    "grey": ("gray",),
    "silver": ("gray",),
}
"""Colour words and the families they belong to: two colours conflict only when their
families are disjoint ("crimson" and "red" agree, "teal" and "blue" agree)."""

NOT_A_COLOUR_BEFORE: Final = {
    "orange": frozenset({"juice", "juices", "peel", "tree", "trees", "fruit", "slice", "slices"}),
    "gold": frozenset({"medal", "medals", "coin", "coins"}),
    "silver": frozenset({"medal", "medals", "coin", "coins"}),
    "black": frozenset({"hole", "holes"}),
    "tan": frozenset({"theta", "x", "angle"}),
}
"""A colour word followed by one of these names a thing, not a colour ("orange juice")."""

COLOUR_VERBS: Final = frozenset(
    _words(
        """is are was were be looks look appears appear coloured colored painted shaded turns turn
        becomes become glows shows show reads"""
    )
)
"""Words after which a colour is what a step says of a thing ("the car *is* red", "*painted*
blue"): a predicate. A colour before a noun ("the red bar", "a white car") only says which
thing the step is about."""

COLOUR_SHADES: Final = frozenset({"dark", "light", "bright", "pale", "deep", "pure", "all"})
"""Words that may stand between a colour verb and the colour ("is *dark* green")."""

COLOUR_NOUNS: Final = frozenset({"colour", "color", "colours", "colors", "one", "ones", "in"})
"""Words after a colour that keep it a predicate ("has a red *colour*", "the red *one*")."""

POSITIONS: Final = {
    "left": "left",
    "leftmost": "left",
    "right": "right",
    "rightmost": "right",
    "top": "top",
    "topmost": "top",
    "upper": "top",
    "bottom": "bottom",
    "bottommost": "bottom",
    "lower": "bottom",
    "middle": "middle",
    "center": "middle",
    "centre": "middle",
    "central": "middle",
    "front": "front",
    "back": "back",
    "rear": "back",
    "north": "north",
    "south": "south",
    "east": "east",
    "west": "west",
    "northern": "north",
    "southern": "south",
    "eastern": "east",
    "western": "west",
    "inner": "inner",
    "outer": "outer",
}
"""Position words and their canonical key. As a modifier ("the left console") a position
tells which thing a step is about; as a predicate ("the cup is on the left") it is a
relation (see :data:`RELATIONS`)."""

NOT_A_POSITION_BEFORE: Final = {
    "right": frozenset(
        {
            "angle",
            "angles",
            "angled",
            "triangle",
            "triangles",
            "answer",
            "option",
            "choice",
            "prism",
            "cylinder",
            "cone",
            "isosceles",
            "one",
        }
    ),
    "back": frozenset({"to", "into", "and"}),
}
"""A position word followed by one of these is not a position ("a right angle")."""

ORDINALS: Final = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
}
"""Ordinal words: which item of a row or list a step is about."""

TEMPORAL: Final = frozenset(
    _words(
        """monday tuesday wednesday thursday friday saturday sunday january february april june
        july august september october november december spring summer autumn winter morning
        afternoon evening night"""
    )
)
"""Days, months, seasons and times of day: they tell which thing a step is about ("May" and
"March" count only where a capital makes them a name, as any name does)."""

INDEX_NOUNS: Final = frozenset(
    _words(
        """row column col step figure fig day week month year page level question item part line
        group quarter grade chapter exercise problem version stage round lane floor gate room
        platform shelf"""
    )
)
"""A number right after one of these is an index ("row 2"), not a quantity."""

APPROXIMATE: Final = frozenset(
    {"about", "approximately", "around", "roughly", "nearly", "almost", "approx", "circa"}
)
"""Words before a number that make it approximate ("about 3.5")."""

SYMBOLIC_WORDS: Final = frozenset({"sqrt", "pi", "log", "ln", "sin", "cos", "tan", "root", "e"})
"""Words next to a number that make it part of a symbolic expression (not compared)."""

ANSWER_WORDS: Final = {"yes": True, "no": False}
"""Words that answer a yes/no question when they stand alone ("The answer is no.")."""


class Unit(NamedTuple):
    """A unit: which dimension it measures and its factor to the dimension's base unit."""

    dimension: str
    scale: float


UNITS: Final = {
    "°": Unit("angle", 1.0),
    "degree": Unit("angle", 1.0),
    "degrees": Unit("angle", 1.0),
    "deg": Unit("angle", 1.0),
    "°c": Unit("celsius", 1.0),
    "degrees celsius": Unit("celsius", 1.0),
    "celsius": Unit("celsius", 1.0),
    "°f": Unit("fahrenheit", 1.0),
    "degrees fahrenheit": Unit("fahrenheit", 1.0),
    "fahrenheit": Unit("fahrenheit", 1.0),
    "rad": Unit("radian", 1.0),
    "radian": Unit("radian", 1.0),
    "radians": Unit("radian", 1.0),
    "%": Unit("percent", 1.0),
    "percent": Unit("percent", 1.0),
    "per cent": Unit("percent", 1.0),
    "mm": Unit("length", 0.001),
    "millimeter": Unit("length", 0.001),
    "millimeters": Unit("length", 0.001),
    "millimetre": Unit("length", 0.001),
    "millimetres": Unit("length", 0.001),
    "cm": Unit("length", 0.01),
    "centimeter": Unit("length", 0.01),
    "centimeters": Unit("length", 0.01),
    "centimetre": Unit("length", 0.01),
    "centimetres": Unit("length", 0.01),
    "m": Unit("length", 1.0),
    "meter": Unit("length", 1.0),
    "meters": Unit("length", 1.0),
    "metre": Unit("length", 1.0),
    "metres": Unit("length", 1.0),
    "km": Unit("length", 1000.0),
    "kilometer": Unit("length", 1000.0),
    "kilometers": Unit("length", 1000.0),
    "kilometre": Unit("length", 1000.0),
    "kilometres": Unit("length", 1000.0),
    "inch": Unit("length", 0.0254),
    "inches": Unit("length", 0.0254),
    "ft": Unit("length", 0.3048),
    "foot": Unit("length", 0.3048),
    "feet": Unit("length", 0.3048),
    "yd": Unit("length", 0.9144),
    "yard": Unit("length", 0.9144),
    "yards": Unit("length", 0.9144),
    "mile": Unit("length", 1609.344),
    "miles": Unit("length", 1609.344),
    "mg": Unit("mass", 0.001),
    "g": Unit("mass", 1.0),
    "gram": Unit("mass", 1.0),
    "grams": Unit("mass", 1.0),
    "kg": Unit("mass", 1000.0),
    "kilogram": Unit("mass", 1000.0),
    "kilograms": Unit("mass", 1000.0),
    "lb": Unit("mass", 453.59237),
    "lbs": Unit("mass", 453.59237),
    "pound": Unit("mass", 453.59237),
    "pounds": Unit("mass", 453.59237),
    "ml": Unit("volume", 0.001),
    "milliliter": Unit("volume", 0.001),
    "milliliters": Unit("volume", 0.001),
    "millilitre": Unit("volume", 0.001),
    "millilitres": Unit("volume", 0.001),
    "l": Unit("volume", 1.0),
    "liter": Unit("volume", 1.0),
    "liters": Unit("volume", 1.0),
    "litre": Unit("volume", 1.0),
    "litres": Unit("volume", 1.0),
    "ms": Unit("time", 0.001),
    "s": Unit("time", 1.0),
    "sec": Unit("time", 1.0),
    "second": Unit("time", 1.0),
    "seconds": Unit("time", 1.0),
    "min": Unit("time", 60.0),
    "mins": Unit("time", 60.0),
    "minute": Unit("time", 60.0),
    "minutes": Unit("time", 60.0),
    "h": Unit("time", 3600.0),
    "hr": Unit("time", 3600.0),
    "hrs": Unit("time", 3600.0),
    "hour": Unit("time", 3600.0),
    "hours": Unit("time", 3600.0),
    "days": Unit("time", 86400.0),
    "weeks": Unit("time", 604800.0),
    "km/h": Unit("speed", 1 / 3.6),
    "kph": Unit("speed", 1 / 3.6),
    "mph": Unit("speed", 0.44704),
    "m/s": Unit("speed", 1.0),
    "$": Unit("usd", 1.0),
    "dollar": Unit("usd", 1.0),
    "dollars": Unit("usd", 1.0),
    "usd": Unit("usd", 1.0),
    "cent": Unit("usd", 0.01),
    "cents": Unit("usd", 0.01),
    "€": Unit("eur", 1.0),
    "euro": Unit("eur", 1.0),
    "euros": Unit("eur", 1.0),
    "£": Unit("gbp", 1.0),
    "¥": Unit("jpy", 1.0),
    "square units": Unit("area", 1.0),
    "sq units": Unit("area", 1.0),
    "square unit": Unit("area", 1.0),
    "units²": Unit("area", 1.0),
    "units^2": Unit("area", 1.0),
    "cm²": Unit("area", 1e-4),
    "cm^2": Unit("area", 1e-4),
    "square cm": Unit("area", 1e-4),
    "square centimeters": Unit("area", 1e-4),
    "square centimetres": Unit("area", 1e-4),
    "m²": Unit("area", 1.0),
    "m^2": Unit("area", 1.0),
    "square meters": Unit("area", 1.0),
    "square metres": Unit("area", 1.0),
    "square feet": Unit("area", 0.09290304),
    "sq ft": Unit("area", 0.09290304),
    "cubic units": Unit("cubic", 1.0),
    "cm³": Unit("cubic", 1e-6),
    "cm^3": Unit("cubic", 1e-6),
    "unit": Unit("", 1.0),
    "units": Unit("", 1.0),
}
"""Units read after a number, lower-cased. Values in units of one dimension are compared
after conversion ("1 m" equals "100 cm"); values in different dimensions are never compared
("6 cm" and "6 degrees" are different quantities). ``units`` alone is no dimension: "AB is 6
units" compares with "AB = 8" as plain numbers."""

SCALE_WORDS: Final = {"thousand": 1e3, "k": 1e3, "million": 1e6, "billion": 1e9}
"""Multipliers after a number ("1.2 million")."""


class Relation(NamedTuple):
    """One reading of a relation word: a dimension and a pole (or a category) on it."""

    dimension: str
    value: int
    """``+1`` / ``-1`` for the two poles of a comparative or an opposed pair; a category
    number for mutually exclusive states (solid, liquid, gas)."""


def _poles(dimension: str, high: str, low: str) -> dict[str, tuple[Relation, ...]]:
    words: dict[str, tuple[Relation, ...]] = {}
    for value, spelled in ((1, high), (-1, low)):
        for word in _words(spelled):
            words[word] = (Relation(dimension, value),)
    return words


def _merge(*tables: dict[str, tuple[Relation, ...]]) -> dict[str, tuple[Relation, ...]]:
    merged: dict[str, tuple[Relation, ...]] = {}
    for table in tables:
        for word, readings in table.items():
            merged[word] = merged.get(word, ()) + readings
    return merged


COMPARATIVES: Final = _merge(
    _poles("height", "taller higher", "shorter lower"),
    _poles("length", "longer", "shorter"),
    _poles("size", "larger bigger greater", "smaller less lesser"),
    _poles("amount", "more greater", "fewer less"),
    _poles("value", "higher larger greater bigger more", "lower smaller less fewer"),
    _poles("width", "wider broader", "narrower"),
    _poles("thickness", "thicker", "thinner"),
    _poles("weight", "heavier", "lighter"),
    _poles("age", "older", "younger newer"),
    _poles("time", "earlier sooner", "later"),
    _poles("speed", "faster quicker", "slower"),
    _poles("temperature", "hotter warmer", "colder cooler"),
    _poles("depth", "deeper", "shallower"),
    _poles("brightness", "brighter", "darker dimmer"),
    _poles("distance", "farther further", "closer nearer"),
    _poles("steepness", "steeper", "flatter"),
)
"""Comparatives, each with the poles it stands for ("shorter" is the low pole of height and
of length). Two comparatives of one dimension with opposite poles are opposed; "B is shorter
than A" restates "A is taller than B" (the arguments swap with the pole)."""

SUPERLATIVES: Final = _merge(
    _poles("height", "tallest highest", "shortest lowest"),
    _poles("length", "longest", "shortest"),
    _poles("size", "largest biggest greatest", "smallest"),
    _poles("amount", "most", "fewest least"),
    _poles(
        "value",
        "highest largest greatest biggest maximum max most",
        "lowest smallest least minimum min fewest",
    ),
    _poles("width", "widest broadest", "narrowest"),
    _poles("thickness", "thickest", "thinnest"),
    _poles("weight", "heaviest", "lightest"),
    _poles("age", "oldest", "youngest newest"),
    _poles("time", "earliest", "latest"),
    _poles("speed", "fastest quickest", "slowest"),
    _poles("temperature", "hottest warmest", "coldest coolest"),
    _poles("depth", "deepest", "shallowest"),
    _poles("brightness", "brightest", "darkest dimmest"),
    _poles("distance", "farthest furthest", "closest nearest"),
)  # fmt: skip
"""Superlatives: one thing holds the extreme, so the same superlative said of two different
things conflicts, and opposite superlatives said of the same thing conflict."""

PREPOSITIONS: Final = _merge(
    _poles("vertical", "above", "below beneath underneath"),
    _poles("sequence", "before", "after"),
    _poles("containment", "inside", "outside"),
    {"behind": (Relation("depth-order", -1),)},
    {
        word: (Relation("value", 1),)
        for word in _words("exceed exceeds exceeded surpass surpasses surpassed")
    },
)
"""Relations between two things ("A is above B", "mix before heating"); the arguments swap
with the pole ("B is below A" restates "A is above B"). ``over``, ``under`` and ``within``
are left out: they are more often not a relation ("over time", "within 5 cm")."""

PREDICATE_RELATIONS: Final = {
    "left": Relation("horizontal", 1),
    "right": Relation("horizontal", -1),
    "top": Relation("vertical", 1),
    "bottom": Relation("vertical", -1),
    "north": Relation("compass-ns", 1),
    "south": Relation("compass-ns", -1),
    "east": Relation("compass-ew", 1),
    "west": Relation("compass-ew", -1),
}
"""Position words read as a relation when used as a predicate ("the cup is on the left",
"A is left of B", "the bar at the top", "turn right"); as a modifier ("the left console")
they are a position (see :data:`POSITIONS`)."""

MULTIWORD_PREPOSITIONS: Final = {
    ("in", "front", "of"): Relation("depth-order", 1),
    ("on", "top", "of"): Relation("vertical", 1),
}
"""Relations spelled in several words; ``behind`` is the other pole of ``in front of``."""

STATES: Final = _merge(
    _poles(
        "change",
        "increase rise grow climb upward upwards go_up",
        "decrease fall drop decline shrink downward downwards go_down",
    ),
    _poles("trend", "ascending", "descending"),
    _poles("sign", "positive", "negative"),
    _poles("openness", "open", "closed shut"),
    _poles("fullness", "full", "empty"),
    _poles("sameness", "same identical", "different opposite"),
    _poles("truth", "true", "false"),
    _poles("magnetism", "attract attraction", "repel repulsion"),
    _poles("life", "alive", "dead"),
    _poles("wetness", "wet", "dry"),
    _poles("heat", "hot warm", "cold cool"),
    _poles("rotation", "clockwise", "counterclockwise anticlockwise"),
    _poles("lines", "parallel", "perpendicular"),
    _poles("role", "producer", "consumer"),
    {
        "solid": (Relation("matter", 1),),
        "liquid": (Relation("matter", 2),),
        "gas": (Relation("matter", 3),),
    },
)  # fmt: skip
"""Opposed or mutually exclusive states and changes ("increases" / "decreases", "open" /
"closed", "solid" / "liquid" / "gas"), read by stem (any inflection; ``go_up`` is "goes up").
Said of the same thing they conflict."""

ADJECTIVE_STATES: Final = frozenset(
    {"sign", "openness", "fullness", "sameness", "truth", "life", "wetness", "heat",
     "rotation", "lines", "matter", "trend"}
)  # fmt: skip
"""State dimensions said by adjectives: before a noun they describe it ("the *full*
rectangle", "a *solid* line") rather than state a fact."""

STATE_SURFACE_ONLY: Final = frozenset({"close", "closer", "closely", "closest", "closing"})
"""Words whose stem is a state's ("clos") but which are not that state ("close to")."""

CLAUSE_BREAKS: Final = frozenset(
    _words(
        """but so because since while whereas although though therefore thus hence which where
        when if then whereas"""
    )
)
"""Words that start a new clause: arguments of a relation do not reach across them."""
