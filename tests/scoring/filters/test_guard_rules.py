"""Each fact rule vetoes its contradictions and keeps its paraphrases, in both directions."""

from __future__ import annotations

import pytest

from crystalbench.scoring.filters.guard import FactGuard

# (reference step, predicted step, expected reason or None, options)
NUMBERS = [
    ("The angle ABC is 40 degrees.", "The angle ABC is 50 degrees.", "number", ()),
    ("There are 3 apples on the table.", "There are 7 apples on the table.", "number", ()),
    ("There are 3 apples on the table.", "I count seven apples on the table.", "number", ()),
    ("The angle at vertex A is marked 50°.", "Angle A = 55°.", "number", ()),
    ("Adding the rows: 2 + 1 + 3 = 6.", "In total 2 + 1 + 3 = 7.", "number", ()),
    ("So AB^2 = 36 + 64 = 100.", "So AB^2 = 36 + 64 = 110.", "number", ()),
    ("The ratio is AP/PB = 6/4.", "The ratio is AP/PB = 4/6.", "number", ()),
    ("The rope is 2 m long.", "The rope measures 250 cm.", "number", ()),
    ("The grid has 4 rows and 4 columns.", "The grid has 6 rows and 4 columns.", "number", ()),
    ("The clock shows 3:30.", "The clock shows 4:30.", "number", ()),
    ("The bar for Fiji ends at 58.5%.", "The bar for Fiji ends at 60.5%.", "number", ()),
    ("Therefore BM = 4 / 2 = 2.", "Therefore BM = 4 / 2 = 6.", "number", ()),
    ("There are 1800 marbles in the jar.", "There are 1900 marbles in the jar.", "number", ()),
]
NUMBER_PARAPHRASES = [
    ("The area is 16 square units.", "The area equals 16.", None, ()),
    ("Count the unit cells: 16.", "There are 16 unit cells.", None, ()),
    ("There are 16 unit cells.", "There are sixteen unit cells.", None, ()),
    ("Half of the pie is 0.5 of it.", "Half of the pie is 1/2 of it.", None, ()),
    ("The share is 0.5.", "The share is 50%.", None, ()),
    ("The angle is 40°.", "The angle is 40 degrees.", None, ()),
    ("The angle is 40°.", r"The angle is $40^\circ$.", None, ()),
    ("The rope is 1 m long.", "The rope is 100 cm long.", None, ()),
    ("The population is 1,200,000.", "The population is 1.2 million.", None, ()),
    ("The area is 16.", "4 squared is 16, which is the area.", None, ()),
    ("Therefore BM = 4 / 2 = 2.", "BM is half of 4, i.e. 2.", None, ()),
    ("The average is 12.4 / 3 = 4.13.", "The average is 12.4/3 ≈ 4.13.", None, ()),
    ("The height is about 3.46.", "The height is 3.464.", None, ()),
    ("So the height is 2 sqrt(3).", "So the height is about 3.46.", None, ()),
    ("The speed limit sign reads 50.", "The sign shows a speed limit of 50 km/h.", None, ()),
    ("The share is 58.5%.", "The share is 0.585.", None, ()),
    ("Only 2011-2013 matter.", "The value for 2011 is 4.7.", None, ()),
    ("The rate rises to 8.4 in 2012.", "The rate rises to 8.4 in 2012, its peak.", None, ()),
    ("Water boils at 100 °C.", "Water boils at 212 °F.", None, ()),
]
OTHER_ENTITY = [  # issue 30: another thing of the item with another value, another fact
    ("Side AC is labelled with length 6.", "Side BC is labelled with length 8.", "number", ()),
    ("The top row contains 2 triangles.", "The bottom row contains 3 triangles.", "number", ()),
    ("The value for 2012 is 30.", "The value for 2013 is 35.", "number", ()),
    ("The red bar reaches 40.", "The blue bar reaches 50.", "number", ()),
]
BINDINGS = [  # issue 30: one thing, another value, framed otherwise
    (
        "The bar for Chile shows a value of 12,450.",
        "The highest bar is Chile with 11,450 arrivals.",
        "number",
        (),
    ),
    (
        "The bar for Chile shows a value of 11,450.",
        "The bar for Peru shows a value of 8,120.",
        "number",
        (),
    ),
    (
        "The lowest bar is Kenya with 3,200 arrivals.",
        "The bar for Kenya shows a value of 3,900.",
        "number",
        (),
    ),
]
BINDING_PARAPHRASES = [  # the same value written otherwise, or read at another precision
    (
        "The bar for Chile shows a value of 12,450.",
        "The highest bar is Chile with 12450 arrivals.",
        None,
        (),
    ),
    ("The bar for Chile shows a value of 12,450.", "Chile's bar reaches 12.45 thousand.", None, ()),
    ("The bar for Chile shows a value of 12,450.", "Chile's bar reads about 12,500.", None, ()),
    ("The bar for Chile shows a value of 12,450.", "Chile's bar is at 12.5 thousand.", None, ()),
    ("Chile has 12,450 arrivals.", "Chile's share of the arrivals is 35%.", None, ()),
    ("The bar for Chile shows a value of 12,450.", "Chile exceeds Peru by 4,330.", None, ()),
]
COMPUTATIONS = [  # issue 30: other operands or results of one computation
    (
        "The difference is 12,450 - 3,200 = 9,250.",
        "The difference is 11,450 - 3,900 = 7,550.",
        "number",
        (),
    ),
    ("The average is 12.4 / 3 = 4.13.", "The average is 13.4 / 3 = 4.47.", "number", ()),
    ("So 25% of 80 is 20.", "So 25% of 60 is 15.", "number", ()),
]
COMPUTATION_PARAPHRASES = [  # the same computation the other way round or written otherwise
    ("The difference is 12,450 - 3,200 = 9,250.", "So 9,250 = 12,450 - 3,200.", None, ()),
    (
        "The difference is 12,450 - 3,200 = 9,250.",
        "The difference is 12450 - 3200 = 9250.",
        None,
        (),
    ),
    (
        "The difference is 12,450 - 3,200 = 9,250.",
        "The difference: 3,200 + 9,250 = 12,450.",
        None,
        (),
    ),
    (
        "These agree: 6 + 4 = 10 and 5 + 3 = 8.",
        "These agree: 6 + 4 = 10 and 5 + three = 8.",
        None,
        (),
    ),
    ("The width is 4 x 3 = 12.", "The length is 80 - 12 = 68.", None, ()),
]
DIFFERENT_THINGS = [  # different facts that are never vetoed
    ("The picture has 6 triangles.", "The top row has 2 triangles.", None, ()),
    ("The top row has 2 triangles.", "The top row has 3 circles.", None, ()),
    ("The area is 68.", "The area of the full rectangle is 10 x 8 = 80.", None, ()),
    ("Monday's thermometer shows 15 °C.", "The image shows two thermometers.", None, ()),
    ("The red lamp is not lit.", "Only the green lamp is on.", None, ()),
    ("4 squared is 16.", "The area is 25.", None, ()),
]
NEGATIONS = [
    ("The door is open.", "The door is not open.", "negation", ()),
    ("The door is open.", "The door isn't open.", "negation", ()),
    ("There is a cat on the sofa.", "There is no cat on the sofa.", "negation", ()),
    ("The rabbit eats the grass.", "The rabbit never eats the grass.", "negation", ()),
    ("All of the squares are shaded.", "None of the squares are shaded.", "negation", ()),
    ("There are 8 shaded squares.", "There are 8 unshaded squares.", "negation", ()),
    ("The man is wearing glasses.", "The man cannot be wearing glasses.", "negation", ()),
    ("The answer is yes.", "The answer is no.", "negation", ()),
    ("So the length of AB is 10.", "So the length of AB is not 10.", "negation", ()),
    ("That car is blue.", "That car is not blue.", "negation", ()),
    ("So the facing poles are S and S.", "So the facing poles are not S and S.", "negation", ()),
]
NEGATION_PARAPHRASES = [
    ("The door isn't open.", "The door is not open.", None, ()),
    ("It is impossible to see the sun.", "It is not possible to see the sun.", None, ()),
    ("Not only the cat but also the dog sleeps.", "The cat and the dog sleep.", None, ()),
    ("The ice cube is not a liquid.", "The orange juice is a liquid.", None, ()),
    ("No other sign is visible.", "The sign reads 50.", None, ()),
    ("The question asks whether the door is open.", "The door is not open.", None, ()),
]
RELATIONS = [
    (
        "The red bar is taller than the blue bar.",
        "The red bar is shorter than the blue bar.",
        "relation",
        (),
    ),
    (
        "The red bar is taller than the blue bar.",
        "The blue bar is taller than the red bar.",
        "relation",
        (),
    ),
    ("There are more cats than dogs.", "There are fewer cats than dogs.", "relation", ()),
    (
        "The cup is to the left of the plate.",
        "The cup is to the right of the plate.",
        "relation",
        (),
    ),
    ("The clock hangs above the door.", "The clock hangs below the door.", "relation", ()),
    (
        "The population increases from 2000 to 2010.",
        "The population decreases from 2000 to 2010.",
        "relation",
        (),
    ),
    ("The left console is the smallest.", "The middle console is the smallest.", "relation", ()),
    ("The left console is the smallest.", "The left console is the largest.", "relation", ()),
    ("The magnets will attract each other.", "The magnets will repel each other.", "relation", ()),
    ("The ice cube is a solid.", "The ice cube is a liquid.", "relation", ()),
    ("AB > CD.", "AB < CD.", "relation", ()),
    ("The road curves to the left ahead.", "The road curves to the right ahead.", "relation", ()),
    ("25 °C is higher than 15 °C.", "25 °C is lower than 15 °C.", "relation", ()),
    (
        "So Fiji has a higher share than Nepal.",
        "So Fiji has a lower share than Nepal.",
        "relation",
        (),
    ),
    (
        "Solution B has the higher concentration.",
        "Solution B has the lower concentration.",
        "relation",
        (),
    ),
    ("So the left lane has more cars.", "So the left lane has fewer cars.", "relation", ()),
    (
        "Kenya's bar, at 52.8, is the shortest.",
        "Kenya's bar, at 52.8, is the tallest.",
        "relation",
        (),
    ),
]
RELATION_PARAPHRASES = [
    (
        "The red bar is taller than the blue bar.",
        "The blue bar is shorter than the red bar.",
        None,
        (),
    ),
    ("There are more cats than dogs.", "There are fewer dogs than cats.", None, ()),
    ("The cup is to the left of the plate.", "The plate is to the right of the cup.", None, ()),
    ("The clock hangs above the door.", "The door is below the clock.", None, ()),
    ("AB > CD.", "CD < AB.", None, ()),
    ("The left console is the smallest.", "The smallest console is the left one.", None, ()),
    ("The left console is the smallest.", "The middle console is the largest.", None, ()),
    ("The largest angle is at vertex C.", "The largest side is AB.", None, ()),
    (
        "The red bar is not taller than the blue bar.",
        "The red bar is shorter than the blue bar.",
        None,
        (),
    ),
    ("Complete the L-shape to a full rectangle.", "Complete the L-shape to a rectangle.", None, ()),
    ("The higher bar is red.", "The bar on the right is red.", None, ()),
    ("So Fiji has a higher share than Nepal.", "So Nepal has a lower share than Fiji.", None, ()),
]
OPTIONS_ABC = ("fox", "grass", "frog")
OPTIONS = [
    ("Select option C from the list.", "Select option D from the list.", "option", ()),
    ("The answer is (B).", "The answer is (C).", "option", OPTIONS_ABC),
    (
        "Therefore the producer is the grass.",
        "Therefore the producer is the fox.",
        "option",
        OPTIONS_ABC,
    ),
    (
        "Eastmere is the second option.",
        "The answer is C.",
        "option",
        ("Norland", "Eastmere", "Westhaven"),
    ),
    ("Gas is option B.", "Gas is option C.", "option", ("Coal", "Gas", "Hydro")),
]
OPTION_PARAPHRASES = [
    (
        "Therefore the producer is the grass.",
        "Therefore the producer is option B.",
        None,
        OPTIONS_ABC,
    ),
    ("The answer is (B).", "The answer is option B.", None, OPTIONS_ABC),
    ("The fox and the frog are consumers.", "The grass is a producer.", None, OPTIONS_ABC),
    (
        "The ice cube keeps its shape, so it is a solid.",
        "The juice takes the glass's shape, so it is a liquid.",
        None,
        ("ice cube", "orange juice", "air"),
    ),
    ("The angle at vertex C is 65°.", "Angle C = 65°.", None, ("55°", "60°", "65°")),
]
COLOURS = [
    ("The car is red.", "The car is blue.", "colour", ()),
    ("The region is shaded dark green.", "The region is shaded dark blue.", "colour", ()),
    ("Shaded squares are coloured blue.", "Shaded squares are coloured red.", "colour", ()),
    ("The sign has a yellow colour.", "The sign has a green colour.", "colour", ()),
]
COLOUR_PARAPHRASES = [
    ("The car is red.", "The car is crimson.", None, ()),
    ("The bus is teal.", "The bus is blue.", None, ()),
    ("The car is red.", "The car in the picture is painted red.", None, ()),
    ("A red car is in the left lane.", "There is a white car in the left lane.", None, ()),
    ("The sky is blue.", "The grass is green.", None, ()),
    (
        "Counting the cars: red, white and blue makes 3 cars.",
        "Red + white + blue = 3 cars.",
        None,
        (),
    ),
    ("The orange juice is a liquid.", "The apple juice is a liquid.", None, ()),
]
ALL = (
    NUMBERS + NUMBER_PARAPHRASES + DIFFERENT_THINGS + OTHER_ENTITY + BINDINGS
    + BINDING_PARAPHRASES + COMPUTATIONS + COMPUTATION_PARAPHRASES + NEGATIONS
    + NEGATION_PARAPHRASES + RELATIONS
    + RELATION_PARAPHRASES + OPTIONS + OPTION_PARAPHRASES + COLOURS + COLOUR_PARAPHRASES
)  # fmt: skip


@pytest.mark.parametrize(
    ("ref", "pred", "reason", "options"), ALL, ids=[f"{r} | {p}" for r, p, *_ in ALL]
)
def test_the_rule_decides_the_pair_in_both_directions(
    ref: str, pred: str, reason: str | None, options: tuple[str, ...]
) -> None:
    guard = FactGuard(options)
    forward, backward = guard.check(pred, ref), guard.check(ref, pred)
    assert (forward.reason if forward else None) == reason
    assert (backward.reason if backward else None) == reason
    if forward is not None and backward is not None:
        assert forward.spans.pred == backward.spans.ref
        assert forward.spans.ref == backward.spans.pred


@pytest.mark.parametrize(("ref", "pred", "reason", "options"), [c for c in ALL if c[2]], ids=str)
def test_the_spans_point_at_the_conflicting_text(
    ref: str, pred: str, reason: str, options: tuple[str, ...]
) -> None:
    conflict = FactGuard(options).check(pred, ref)
    assert conflict is not None
    for step, span in ((pred, conflict.spans.pred), (ref, conflict.spans.ref)):
        assert 0 <= span.start < span.end <= len(step)
        assert step[span.start : span.end] == span.text
        assert span.text.strip() == span.text


def test_the_issue_table() -> None:
    """The seven rows of issue 24: five contradictions vetoed, two paraphrases kept."""
    guard = FactGuard()
    rows = {
        ("The angle ABC is 40 degrees.", "The angle ABC is 50 degrees."): "number",
        (
            "The red bar is taller than the blue bar.",
            "The red bar is shorter than the blue bar.",
        ): "relation",
        ("The door is open.", "The door is not open."): "negation",
        ("There are 3 apples on the table.", "There are 7 apples on the table."): "number",
        ("The left console is the smallest.", "The middle console is the smallest."): "relation",
        ("The area is 16 square units.", "The area equals 16."): None,
        ("Count the unit cells: 16.", "There are 16 unit cells."): None,
    }
    for (ref, pred), reason in rows.items():
        conflict = guard.check(pred, ref)
        assert (conflict.reason if conflict else None) == reason, (ref, pred)


def test_number_spans_carry_the_unit_and_the_original_spelling() -> None:
    conflict = FactGuard().check("The angle ABC is fifty degrees.", r"The angle ABC is $40^\circ$.")
    assert conflict is not None
    assert conflict.spans.pred.text == "fifty degrees"
    assert conflict.spans.ref.text.startswith("40")
