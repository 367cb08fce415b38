"""The fact rules: when do two steps state incompatible facts?

Each rule compares the facts of two steps
(:class:`~crystalbench.scoring.filters.guard.facts.StepFacts`)
and returns a :class:`Clash` (the reason and the two conflicting spans, in prepared-text
offsets) or None. Every rule is symmetric: swapping the two steps swaps the spans and
nothing else.

**The principle.** A veto needs two steps that say the same thing *except* for one slot that
holds incompatible values. So besides the conflicting values, every rule but the option
rule asks :func:`about_the_same`: neither step names a thing (a label such as ``AB``, a
name, a position such as "the *left* console", an ordinal, a day, a year, a row number, a
colour) that the other lacks while the other names one it lacks, neither step has content
words the other lacks while the other has some it lacks, and the two share something. "Side
AC is 6" and "Side BC is 8" are about different sides: no veto. "The top row has 2
triangles" and "The bottom row has 3 triangles": no veto. "There are 3 apples on the table"
and "I count 7 apples on the table": veto.

Precision comes first: a rule that cannot tell whether two values are about the same thing
keeps the pair. What is and is not caught is listed with each rule and in the package notes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from crystalbench.scoring.filters.guard.facts import RelationMention, StepFacts
from crystalbench.scoring.filters.guard.quantities import (
    Quantity,
    dimensions_comparable,
    quantities_agree,
)
from crystalbench.scoring.filters.guard.records import VetoReason

__all__ = [
    "Clash",
    "Computation",
    "about_the_same",
    "binding_clash",
    "colour_clash",
    "computation_clash",
    "computations",
    "negation_clash",
    "number_clash",
    "relation_clash",
]


@dataclass(frozen=True, slots=True)
class Clash:
    """What a rule found: the reason and the two spans (offsets in the prepared texts)."""

    reason: VetoReason
    pred: tuple[int, int]
    ref: tuple[int, int]

    def swapped(self) -> Clash:
        """The same clash seen from the other step."""
        return Clash(self.reason, self.ref, self.pred)


def _differ_both_ways(a: AbstractSet[Any], b: AbstractSet[Any]) -> bool:
    return bool(a - b) and bool(b - a)


def about_the_same(
    pred: StepFacts, ref: StepFacts, ignore: Iterable[str] = (), *, shared_values: bool = False
) -> bool:
    """The two steps speak of the same things (what every rule but the option rule asks).

    False when each step names a thing (identifier) the other does not, when each has
    content words the other lacks, or when they share nothing (no identifier, content word,
    relation dimension, or value when ``shared_values``) although one has content. Keys in
    ``ignore`` (the slot that conflicts, e.g. two colours) do not count.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> about_the_same(f("Side AC is 6."), f("Side BC is 8."))
        False
        >>> about_the_same(f("There are 3 apples on the table."), f("I count 7 apples there."))
        True
        >>> about_the_same(f("4 squared is 16."), f("The area is 25."))
        False
    """
    skip = frozenset(ignore)
    pred_ids = {pair for pair in pred.identifiers if pair[1] not in skip}
    ref_ids = {pair for pair in ref.identifiers if pair[1] not in skip}
    if _differ_both_ways(pred_ids, ref_ids):
        return False
    pred_words = pred.content - skip
    ref_words = ref.content - skip
    if _differ_both_ways(pred_words, ref_words):
        return False
    shared = (pred_ids & ref_ids) or (pred_words & ref_words) or (pred.dimensions & ref.dimensions)
    return bool(shared) or shared_values or not (pred_words or ref_words)


def overlap(pred: StepFacts, ref: StepFacts, ignore: Iterable[str] = ()) -> float:
    """Jaccard overlap of the two steps' content words (identifiers included), 1.0 when
    neither has any.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> overlap(f("The door is open."), f("The door is not open."))
        1.0
        >>> round(overlap(f("The area is 68."), f("The area of the full rectangle is 80.")), 2)
        0.33
    """
    skip = frozenset(ignore)
    a, b = pred.content - skip, ref.content - skip
    union = a | b
    return len(a & b) / len(union) if union else 1.0


CLOSE = 0.5
"""Least :func:`overlap` for a negation, an option text or a number without identifiers to
count as a restatement of the other step."""


# ---------------------------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------------------------


def _absorbed(alone: list[Quantity], other: Sequence[Quantity]) -> list[Quantity]:
    """Drop values that are the numerator or denominator of a fraction the other step left
    unmatched ("4 / 2 = 2" and "half of 4 is 2")."""
    parts = [part for q in other for part in q.parts]
    return [q for q in alone if not any(_value_is(q, part) for part in parts)]


def _value_is(quantity: Quantity, value: float) -> bool:
    return abs(quantity.face - value) <= 1e-9 * max(1.0, abs(value))


def _unmatched(pred: StepFacts, ref: StepFacts) -> tuple[list[Quantity], list[Quantity], int]:
    """Values of each step that the other does not state (indices left out), and how many
    values the two share."""
    left = [q for q in pred.quantities if not q.index]
    right = [q for q in ref.quantities if not q.index]
    used = [False] * len(right)
    matched = [False] * len(left)
    # values of the same thing and the same form first ("4 rows and 4 columns" / "6 rows and
    # 4 columns"; "4 / 2 = 2" / "half of 4 is 2"), then any equal value
    for strict in (True, False):
        for index, quantity in enumerate(left):
            if matched[index]:
                continue
            for position, other in enumerate(right):
                alike = quantity.noun == other.noun and bool(quantity.parts) == bool(other.parts)
                if used[position] or (strict and not alike):
                    continue
                if quantities_agree(quantity, other):
                    used[position] = matched[index] = True
                    break
    alone_left = [q for index, q in enumerate(left) if not matched[index]]
    alone_right = [q for position, q in enumerate(right) if not used[position]]
    # a fraction whose two parts the other step writes out is stated there too, and they
    # are its parts, not values of their own
    stated_left = [q for q in alone_left if not _written_out(q, right)]
    stated_right = [q for q in alone_right if not _written_out(q, left)]
    return (
        _absorbed(stated_left, alone_right),
        _absorbed(stated_right, alone_left),
        sum(used),
    )


def _written_out(fraction: Quantity, other: Sequence[Quantity]) -> bool:
    return bool(fraction.parts) and all(
        any(_value_is(q, part) for q in other) for part in fraction.parts
    )


def _same_quantity(a: Quantity, b: Quantity) -> bool:
    if not dimensions_comparable(a, b):
        return False
    return not (a.noun and b.noun and not a.noun & b.noun)


def _number_pair(pred: StepFacts, ref: StepFacts) -> tuple[Quantity, Quantity, bool] | None:
    """Two values, one left in each step, of one quantity; and whether the steps share most
    of their other values (an equation with one result changed)."""
    alone_pred, alone_ref, agreeing = _unmatched(pred, ref)
    if not alone_pred or not alone_ref:
        return None  # one step states a subset of the other's values: compatible
    if any(q.symbolic for q in alone_pred + alone_ref):
        return None  # "9 pi" may be the other's 28.27: not compared
    pairs = [(a, b) for a in alone_pred for b in alone_ref if _same_quantity(a, b)]
    if not pairs:
        return None
    if not agreeing and min(len(alone_pred), len(alone_ref)) >= 2:
        return None  # two computations with nothing in common ("4 by 3" / "80 - 12 = 68")
    pairs.sort(key=lambda pair: (not (pair[0].noun & pair[1].noun), pair[0].start, pair[1].start))
    mostly_shared = agreeing >= 2 and agreeing >= max(len(alone_pred), len(alone_ref))
    return pairs[0][0], pairs[0][1], mostly_shared


def _relation_dimensions(facts: StepFacts) -> frozenset[str]:
    return frozenset(r.dimension for r in facts.relations if not r.negated)


def number_clash(pred: StepFacts, ref: StepFacts) -> Clash | None:
    """Different values of one quantity.

    Values are matched across the two steps first, however they are written ("16" /
    "sixteen", "0.5" / "1/2" / "50%", "40°" / "40 degrees", "1 m" / "100 cm", "4 / 2" / "4"
    and "2"; see :func:`~crystalbench.scoring.filters.guard.quantities.quantities_agree`). When one
    step's
    values are all found in the other, the steps are compatible: an extra intermediate value
    ("4 squared is 16" / "The area is 16") is not a contradiction. Otherwise a value left in
    each step, of comparable units and counting the same thing, conflicts when the steps
    frame it alike:

    - they name the same things (identifiers: labels, names, positions, ordinals, days,
      years, row numbers, colours of things), no more and no less: "The top row has 2
      triangles" is not about the same quantity as "The picture has 6 triangles";
    - they state the same relations ("A exceeds B by 5" is not "A is 5");
    - and, when they name nothing, their content words overlap by half or more, or they
      share most of their values (an equation with its result changed).

    Not read: indices (years, "row 2", "3rd") which say *which* thing, symbolic expressions
    ("2 sqrt(3)", "9 pi", "AB^2"), numbers as words beyond what
    :func:`~crystalbench.normalize.number_words.words_to_digits` reads ("a dozen", "half",
    "twice"), and a bare "one" before anything but a noun. Restatements that name more
    things than the other step ("the red liquid in Monday's thermometer" / "Monday") are
    kept, whatever their values.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> number_clash(f("The angle ABC is 40 degrees."), f("The angle ABC is 50°.")).reason
        'number'
        >>> number_clash(f("There are 3 apples on the table."), f("There are 7 apples on it."))
        Clash(reason='number', pred=(10, 11), ref=(10, 11))
        >>> number_clash(f("4 squared is 16."), f("The area is 16.")) is None
        True
        >>> number_clash(f("Count the unit cells: 16."), f("There are sixteen unit cells."))
        >>> number_clash(f("The picture has 6 triangles."), f("The top row has 2 triangles."))
    """
    pair = _number_pair(pred, ref)
    if pair is None:
        return None
    a, b, mostly_shared = pair
    if pred.identifiers != ref.identifiers or _relation_dimensions(pred) != _relation_dimensions(
        ref
    ):
        return None
    if not about_the_same(pred, ref, shared_values=mostly_shared):
        return None
    if not pred.identifiers and not mostly_shared and overlap(pred, ref) < CLOSE:
        return None
    return Clash("number", (a.start, a.end), (b.start, b.end))


def numbers_differ(pred: StepFacts, ref: StepFacts) -> bool:
    """Each step holds a value of one quantity that the other does not state."""
    return _number_pair(pred, ref) is not None


# ---------------------------------------------------------------------------------------------
# negation
# ---------------------------------------------------------------------------------------------


def _word_span(facts: StepFacts, key: str) -> tuple[int, int] | None:
    """Where the step says ``key`` (a stem, a content key, or a value ``#10``)."""
    return facts.key_spans.get(key)


def negation_clash(pred: StepFacts, ref: StepFacts) -> Clash | None:
    """One step negates what the other states, or the two give opposite yes/no answers.

    A negation ("not", "no", "never", "none", "nothing", "neither", "without", "n't",
    "cannot", "≠", a negative prefix on a known root such as "unshaded", "impossible", or a
    zero count, "0 cats") negates the first content word after it. It conflicts when the
    other step states that word without negating it, the two steps carry a different number of
    negations (so "X does not eat Y" / "Y is not eaten by X" stay compatible), and the steps
    are :func:`about_the_same` thing. "not only", "no matter" and "whether or not" are not
    negations.

    Not caught: negation by meaning ("absent", "lacks", "fails to"), and a negation whose
    scope the first-word rule misreads.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> negation_clash(f("The door is open."), f("The door is not open."))
        Clash(reason='negation', pred=(12, 16), ref=(12, 15))
        >>> negation_clash(f("The door isn't open."), f("The door is not open.")) is None
        True
        >>> negation_clash(f("There is no cat."), f("There is a cat.")).reason
        'negation'
        >>> negation_clash(f("The answer is yes."), f("The answer is no.")).reason
        'negation'
        >>> negation_clash(f("The ice cube is not a liquid."), f("The juice is a liquid.")) is None
        True
    """
    answers = pred.answer is not None and ref.answer is not None
    if answers and pred.answer[0] != ref.answer[0] and about_the_same(pred, ref):  # type: ignore[index]
        return Clash("negation", pred.answer[1:], ref.answer[1:])  # type: ignore[index]
    if len(pred.negations) % 2 == len(ref.negations) % 2:
        return None
    for negating, stating, flip in ((pred, ref, False), (ref, pred, True)):
        for negation in negating.negations:
            head = negation.head
            if not head or head not in stating.said or head in stating.negated:
                continue
            if not about_the_same(pred, ref) or overlap(pred, ref) < CLOSE:
                return None
            span = _word_span(stating, head)
            if span is None:
                continue
            clash = Clash("negation", (negation.start, negation.end), span)
            return clash.swapped() if flip else clash
    return None


# ---------------------------------------------------------------------------------------------
# colours
# ---------------------------------------------------------------------------------------------


def colour_clash(pred: StepFacts, ref: StepFacts) -> Clash | None:
    """One thing given two colours.

    A colour of one step whose family the other step never names ("red" / "blue"; "crimson"
    and "red" agree, "teal" agrees with green and blue) conflicts with such a colour of the
    other step, when the steps are :func:`about_the_same` thing once the two colours are set
    aside, and their values do not differ too (two slots differing means two different
    things: "the red bar is 40" / "the blue bar is 50").

    Not caught: shades ("light blue" / "dark blue"), colours named by objects ("the colour of
    grass").

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> colour_clash(f("The car is red."), f("The car is blue."))
        Clash(reason='colour', pred=(11, 14), ref=(11, 15))
        >>> colour_clash(f("The car is crimson."), f("The car is red.")) is None
        True
        >>> colour_clash(f("The red bar reaches 40."), f("The blue bar reaches 50.")) is None
        True
        >>> colour_clash(f("The sky is blue."), f("The grass is green.")) is None
        True
    """
    pred_families = frozenset().union(*(c.families for c in pred.colours))
    ref_families = frozenset().union(*(c.families for c in ref.colours))
    for a in pred.colours:
        if not a.predicate or a.families & ref_families:
            continue
        for b in ref.colours:
            if not b.predicate or b.families & pred_families:
                continue
            ignore = set(a.families) | set(b.families)
            if numbers_differ(pred, ref) or not about_the_same(pred, ref, ignore):
                return None
            return Clash("colour", (a.start, a.end), (b.start, b.end))
    return None


# ---------------------------------------------------------------------------------------------
# relations
# ---------------------------------------------------------------------------------------------


def _names(signature: frozenset[str]) -> frozenset[str]:
    """The identifiers and values of an argument (``kind:key``, ``#3``)."""
    return frozenset(key for key in signature if ":" in key or key.startswith("#"))


def _same_argument(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    """Two arguments name the same thing: equal identifiers (when both name some) and
    nested content words (when both have some).

    Examples:
        >>> _same_argument(frozenset({"colour:red", "bar"}), frozenset({"colour:red"}))
        True
        >>> _same_argument(frozenset({"colour:red", "bar"}), frozenset({"colour:blue", "bar"}))
        False
        >>> _same_argument(frozenset({"cup"}), frozenset({"plat"}))
        False
    """
    if not a or not b:
        return False
    names_a, names_b = _names(a), _names(b)
    words_a, words_b = a - names_a, b - names_b
    if names_a and names_b and names_a != names_b:
        return False
    if words_a and words_b:
        return words_a <= words_b or words_b <= words_a
    return bool(names_a and names_b)


def _paired(a: RelationMention, b: RelationMention) -> str | None:
    """How two relations of one dimension relate: ``agree``, ``clash`` or None (unknown)."""
    if a.object is not None and b.object is not None:
        same = _same_argument(a.subject, b.subject) and _same_argument(a.object, b.object)
        swapped = _same_argument(a.subject, b.object) and _same_argument(a.object, b.subject)
        if same == swapped:
            return None
        opposite = a.value != b.value
        return "agree" if opposite == swapped else "clash"
    if _same_argument(a.subject, b.subject) or not a.subject or not b.subject:
        # one argument: said of the same thing, or of something unnamed ("they repel")
        return "agree" if a.value == b.value else "clash"
    return None


def _superlatives(a: RelationMention, b: RelationMention) -> str | None:
    if a.noun and b.noun and not a.noun & b.noun:
        return None  # "the largest angle" / "the largest side": different rankings
    names_a = {key for key in _names(a.subject) if not key.startswith("#")}
    names_b = {key for key in _names(b.subject) if not key.startswith("#")}
    if a.value == b.value:
        if names_a == names_b and names_a:
            return "agree"
        kinds_a = {key.partition(":")[0] for key in names_a}
        kinds_b = {key.partition(":")[0] for key in names_b}
        # one named holder each, of one kind, and not the same: two things hold one extreme
        if len(names_a) == 1 and len(names_b) == 1 and kinds_a == kinds_b:
            return "clash"
        return None
    # opposite extremes of one thing ("the left console is the largest" / "... smallest")
    return "clash" if _same_argument(a.subject, b.subject) else None


def relation_clash(pred: StepFacts, ref: StepFacts) -> Clash | None:
    """Opposed relations said of the same things, or one superlative of two things.

    Comparatives ("taller" / "shorter", "more" / "fewer", "greater than" / "less than",
    ``>`` / ``<``), prepositions ("above" / "below", "left of" / "right of", "before" /
    "after", "in front of" / "behind"), position predicates ("on the left" / "on the right"),
    changes and states ("increases" / "decreases", "open" / "closed", "attract" / "repel",
    "solid" / "liquid" / "gas") each have a dimension and a pole. Two relations of one
    dimension conflict when their arguments match and their poles differ, or their arguments
    are swapped and their poles agree; "B is shorter than A" restates "A is taller than B".
    A relation with one argument conflicts with an opposed one said of the same subject.
    Superlatives conflict when one is said of two different named things ("the left console
    is the smallest" / "the middle console is the smallest"), or opposite ones of the same
    thing. A relation that the other step also states (a partner that agrees) never
    conflicts; a negated relation ("not taller") is left to the negation rule.

    Not caught: relations whose arguments the clause reading cannot find, implied ones
    ("A is taller than B" / "B is taller than A" with different wording of A), and synonyms
    outside the lexicon.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> relation_clash(f("The red bar is taller than the blue bar."),
        ...                f("The red bar is shorter than the blue bar.")).reason
        'relation'
        >>> relation_clash(f("The red bar is taller than the blue bar."),
        ...                f("The blue bar is shorter than the red bar.")) is None
        True
        >>> relation_clash(f("The left console is the smallest."),
        ...                f("The middle console is the smallest.")).reason
        'relation'
        >>> relation_clash(f("The population increases."), f("The population decreases.")).reason
        'relation'
    """
    for a in pred.relations:
        if a.negated:
            continue
        for b in ref.relations:
            if b.negated or a.dimension != b.dimension:
                continue
            if (a.form == "superlative") != (b.form == "superlative"):
                continue
            verdict = _superlatives(a, b) if a.form == "superlative" else _paired(a, b)
            if verdict != "clash" or _supported(a, ref) or _supported(b, pred):
                continue
            if a.form == "superlative" or a.object is None or b.object is None:
                # said of one thing: the steps must be about it (the superlative's two
                # holders are the slot that differs)
                holders = a.subject | b.subject if a.form == "superlative" else frozenset()
                ignore = {key.partition(":")[2] or key for key in holders}
                if not about_the_same(pred, ref, ignore):
                    continue
            return Clash("relation", (a.start, a.end), (b.start, b.end))
    return None


def _supported(relation: RelationMention, other: StepFacts) -> bool:
    """The other step states this relation too (a partner that agrees with it)."""
    for candidate in other.relations:
        if candidate.negated or candidate.dimension != relation.dimension:
            continue
        if (candidate.form == "superlative") != (relation.form == "superlative"):
            continue
        if relation.form == "superlative":
            verdict = _superlatives(relation, candidate)
        else:
            verdict = _paired(relation, candidate)
        if verdict == "agree":
            return True
    return False


# ---------------------------------------------------------------------------------------------
# bindings: a value bound to a thing
# ---------------------------------------------------------------------------------------------

_ENTITY_KINDS = frozenset({"label", "name", "ordinal", "position", "time", "index", "colour"})
"""Identifier kinds that name *which* thing a value belongs to (the bar for *Chile*, side
*AB*, the *second* row, *Monday*, row *2*, the *red* bar)."""
_BINDING_FORMS = frozenset({"superlative"})
"""Relation forms a binding may carry: "the highest bar is Chile with 12,450" binds 12,450
to Chile as "the bar for Chile shows 12,450" does. A comparative, a preposition or a change
("Chile exceeds Peru by 300", "rises by 300") says something else of the value."""


def _values(facts: StepFacts) -> list[Quantity]:
    return [q for q in facts.quantities if q.quantity]


def _binds(facts: StepFacts) -> Quantity | None:
    """The one value the step binds to what it names, or None: a step with one value (not an
    index, not symbolic) and no relation but a superlative."""
    values = _values(facts)
    if len(values) != 1 or not facts.asserts:
        return None
    if any(r.form not in _BINDING_FORMS for r in facts.relations if not r.negated):
        return None
    return values[0]


def binding_clash(pred: StepFacts, ref: StepFacts) -> Clash | None:
    """Two bindings of a value to a thing that cannot both hold, or that are other facts.

    Each step binds one value to what it names (one value, no comparative, change or
    preposition; a superlative is allowed: "The highest bar is Chile with 12,450 arrivals."
    binds 12,450 to Chile). The pair conflicts

    - when the two name the same things and bind values that differ, however they are
      framed otherwise ("The highest bar is Chile with 11,450 arrivals." / "The bar for Chile
      shows a value of 12,450."): the number rule asks for the same frame, this one for the
      same thing and the same kind of quantity;
    - or when each names one thing the other does not, of one kind (another bar, another
      side, another row, another year), the rest of the two steps is alike, and the values
      differ ("The bar for Chile shows a value of 11,450." / "The bar for Peru shows a
      value of 8,120."): they are different facts of the same item, and matching one to the
      other would credit a step for a fact it does not state.

    Equal values agree however written ("12,450" / "12450" / "12.45 thousand"), and a value
    written at a coarser precision agrees with one that rounds to it ("about 12,500" /
    "12,450"; "12.5 thousand" / "12,450"). Values of different dimensions or counting
    different things are never compared ("Chile has 12,450 arrivals" / "Chile's share is
    35%").

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> binding_clash(f("The highest bar is Chile with 11,450 arrivals."),
        ...               f("The bar for Chile shows a value of 12,450.")).reason
        'number'
        >>> binding_clash(f("The bar for Chile shows a value of 11,450."),
        ...               f("The bar for Peru shows a value of 8,120.")).reason
        'number'
        >>> binding_clash(f("The highest bar is Chile with 12,450 arrivals."),
        ...               f("The bar for Chile shows a value of 12.45 thousand.")) is None
        True
        >>> binding_clash(f("Chile reads about 12,500."), f("Chile reads 12,450.")) is None
        True
        >>> binding_clash(f("Chile has 12,450 arrivals."), f("Chile's share is 35%.")) is None
        True
    """
    a, b = _binds(pred), _binds(ref)
    if a is None or b is None or not _same_quantity(a, b) or a.dimension != b.dimension:
        return None
    if quantities_agree(a, b) or len(pred.negations) % 2 != len(ref.negations) % 2:
        return None
    pred_ids = {pair for pair in pred.identifiers if pair[0] in _ENTITY_KINDS}
    ref_ids = {pair for pair in ref.identifiers if pair[0] in _ENTITY_KINDS}
    if not pred_ids or not ref_ids:
        return None
    if pred_ids == ref_ids:
        if pred.identifiers != ref.identifiers or not about_the_same(pred, ref):
            return None
        return Clash("number", (a.start, a.end), (b.start, b.end))
    only_pred, only_ref = pred_ids - ref_ids, ref_ids - pred_ids
    if len(only_pred) != 1 or len(only_ref) != 1:
        return None
    ((kind_a, key_a),), ((kind_b, key_b),) = only_pred, only_ref
    if kind_a != kind_b:
        return None
    ignore = {key_a, key_b}
    if not about_the_same(pred, ref, ignore) or overlap(pred, ref, ignore) < CLOSE:
        return None
    if _relation_dimensions(pred) != _relation_dimensions(ref):
        return None
    return Clash("number", (a.start, a.end), (b.start, b.end))


# ---------------------------------------------------------------------------------------------
# computations
# ---------------------------------------------------------------------------------------------

_OPERATORS = {
    "+": "+",
    "plus": "+",
    "-": "-",
    "minus": "-",
    "×": "*",
    "*": "*",
    "x": "*",
    "times": "*",
    "multiplied by": "*",
    "/": "/",
    "÷": "/",
    "divided by": "/",
    "over": "/",
    "of": "%of",
}
_EQUALS = frozenset({"=", "equals", "is", "gives", "makes", "≈", "is about"})
_BETWEEN = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Computation:
    """An arithmetic statement of a step: its operators and the values it combines."""

    operators: frozenset[str]
    """The operators it uses (``+``, ``-``, ``*``, ``/``, ``%of``)."""
    values: tuple[Quantity, ...]
    """Its operands and its result, in the order written."""


def _operator(text: str, before: Quantity) -> str | None:
    joined = _BETWEEN.sub(" ", text.strip().lower())
    if joined == "of" and before.dimension != "percent":
        return None  # "3 of 5 bars": a count, not a percentage of
    return _OPERATORS.get(joined)


@functools.lru_cache(maxsize=1 << 14)
def _read_computations(prepared: str, quantities: tuple[Quantity, ...]) -> tuple[Computation, ...]:
    found: list[Computation] = []
    chain: list[Quantity] = []
    operators: set[str] = set()

    def close() -> None:
        if operators and len(chain) >= 2:
            found.append(Computation(frozenset(operators), tuple(chain)))

    for quantity in quantities:
        if quantity.parts:  # "12.4/3": a division written as one number
            close()
            chain, operators = [quantity], {"/"}
            continue
        if chain:
            between = prepared[chain[-1].end : quantity.start]
            operator = _operator(between, chain[-1])
            if operator is not None:
                operators.add(operator)
                chain.append(quantity)
                continue
            equals = _BETWEEN.sub(" ", between.strip().lower()) in _EQUALS
            if equals and (operators or len(chain) > 1):
                chain.append(quantity)
                continue
            close()
        chain, operators = [quantity], set()
    close()
    return tuple(found)


def computations(facts: StepFacts) -> tuple[Computation, ...]:
    """The computations a step writes out ("12,450 - 3,200 = 9,250", "25% of 80 is 20",
    "12.4 / 3"): runs of values joined by arithmetic operators, with their result.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> [(sorted(c.operators), [q.value for q in c.values])
        ...  for c in computations(f("The difference is 12,450 - 3,200 = 9,250."))]
        [(['-'], [12450.0, 3200.0, 9250.0])]
        >>> [sorted(c.operators) for c in computations(f("25% of 80 is 20."))]
        [['%of']]
        >>> computations(f("The bar for Chile shows 12,450."))
        ()
    """
    return _read_computations(facts.prepared, facts.quantities)


def computation_clash(pred: StepFacts, ref: StepFacts) -> Clash | None:
    """Two computations of one kind with different operands or results.

    Each step writes a computation with the same operators ("a - b = c", "a / b", "x % of
    y"), the steps are :func:`about_the_same` thing (the values apart), and a value of each
    is found nowhere in the other's computation: "The difference is 11,450 - 3,900 = 7,550."
    and "The difference is 12,450 - 3,200 = 9,250." are incompatible, although they share
    no value (which the number rule reads as two unrelated computations). The same values in
    another order or another form agree ("9,250 = 12,450 - 3,200", "12450 - 3200 = 9250");
    a computation with other operators ("3,200 + 9,250 = 12,450") is compared only by the
    number rule.

    Examples:
        >>> from crystalbench.scoring.filters.guard.facts import step_facts as f
        >>> computation_clash(f("The difference is 11,450 - 3,900 = 7,550."),
        ...                   f("The difference is 12,450 - 3,200 = 9,250.")).reason
        'number'
        >>> computation_clash(f("So 9,250 = 12,450 - 3,200."),
        ...                   f("The difference is 12,450 - 3,200 = 9,250.")) is None
        True
        >>> computation_clash(f("The area is 4 x 3 = 12."), f("The area is 80 - 12 = 68.")) is None
        True
        >>> computation_clash(f("So 6 + 4 = 10 and 5 + 3 = 8."),
        ...                   f("So 6 + 4 = 10 and 5 + three = 8.")) is None
        True
    """
    left, right = computations(pred), computations(ref)
    if not left or not right:
        return None
    if pred.identifiers != ref.identifiers or not about_the_same(pred, ref, shared_values=True):
        return None

    def alone(a: Computation, b: Computation) -> list[Quantity]:
        return [q for q in a.values if not any(quantities_agree(q, o) for o in b.values)]

    # a computation the other step also writes (its values all found there) is stated there
    unstated_left = [a for a in left if all(alone(a, b) for b in right)]
    unstated_right = [b for b in right if all(alone(b, a) for a in left)]
    for a in unstated_left:
        for b in unstated_right:
            if a.operators != b.operators:
                continue
            pairs = [(x, y) for x in alone(a, b) for y in alone(b, a) if _same_quantity(x, y)]
            if pairs:
                x, y = pairs[0]
                return Clash("number", (x.start, x.end), (y.start, y.end))
    return None
