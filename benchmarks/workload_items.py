"""Benchmark items of the synthetic CRYSTAL workload (``workload.py``): one draft per source.

Each item is a pure function of ``(seed, index)``: a chain length drawn to match CRYSTAL's
(3 to 42 steps, mean about 11.6), a source drawn in the paper's mix, and a draft of that
source's kind (a chart, a geometry figure, a science diagram, a street scene, an MMVP-style
detail) whose units :func:`~workload_text.render` turns into reference steps.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workload_text import (
    ANIMALS,
    CHARTS,
    CITIES,
    COLORS,
    COUNTRIES,
    GEO_RULES,
    LEADS,
    MATERIALS,
    METRICS,
    MMVP_PARTS,
    MONTHS,
    OBJECTS_MMVP,
    ORGANISMS,
    POSITIONS,
    PROPERTIES,
    RELATIONS,
    SCI_RULES,
    SHAPES,
    STREET_OBJECTS,
    VEHICLES,
    YEARS,
    Unit,
    _lead,
    render,
)

CRYSTAL_ITEMS = 6372
"""Items in the CRYSTAL test split."""
MIN_STEPS = 3
MAX_STEPS = 42
MEAN_STEPS = 11.6
DEFAULT_SEED = 20260
LETTERS = "ABCDE"


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


def iter_items(n_items: int, seed: int = DEFAULT_SEED) -> Iterator[WorkItem]:
    """Items ``0 .. n_items - 1`` in order."""
    for index in range(n_items):
        yield generate_item(index, seed)
