"""The facts a step states, read once per step: quantities, negations, colours, relations.

:func:`step_facts` reads a step (cached by its text, so a step that meets many others is read
once) into a :class:`StepFacts`: what the rules of :mod:`crystalbench.scoring.filters.guard.rules`
compare.
Besides the facts themselves it keeps what tells two steps apart as being about *different
things*: identifiers (labels such as ``AB``, names, positions used as modifiers such as "the
*left* console", ordinals, days, years, row numbers, colours) and content words (stems of
the words that are neither function words nor the light words two restatements of one fact
differ by; see :data:`~crystalbench.scoring.filters.guard.lexicon.LIGHT_WORDS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from crystalbench.scoring.filters.guard.lexicon import (
    ADJECTIVE_STATES,
    ANSWER_WORDS,
    APPROXIMATE,
    CLAUSE_BREAKS,
    COLOUR_FAMILIES,
    COLOUR_NOUNS,
    COLOUR_SHADES,
    COLOUR_VERBS,
    COMPARATIVES,
    INDEX_NOUNS,
    LIGHT_WORDS,
    MULTIWORD_PREPOSITIONS,
    NEGATIONS,
    NEGATIVE_PREFIX_ROOTS,
    NEGATIVE_PREFIXES,
    NOT_A_COLOUR_BEFORE,
    NOT_A_POSITION_BEFORE,
    NOT_NEGATING_AFTER,
    ORDINALS,
    POSITIONS,
    PREDICATE_RELATIONS,
    PREPOSITIONS,
    SCALE_WORDS,
    STATE_SURFACE_ONLY,
    STATES,
    STOP_WORDS,
    SUPERLATIVES,
    SYMBOLIC_WORDS,
    TEMPORAL,
    Relation,
)
from crystalbench.scoring.filters.guard.quantities import Quantity, read_quantities
from crystalbench.scoring.filters.guard.text import TextToken, prepare_step, stem, tokenize

__all__ = [
    "ColourMention",
    "Negation",
    "RelationMention",
    "StepFacts",
    "step_facts",
]

RelationForm = Literal["comparative", "superlative", "preposition", "state"]

_LIGHT = frozenset(stem(word) for word in LIGHT_WORDS)
_STATES = {stem(word): readings for word, readings in STATES.items() if "_" not in word}
_GO = {"up": STATES["go_up"], "down": STATES["go_down"]}
_ARGUMENT_SKIP = frozenset({"than", "of", "to", "the", "a", "an", "from", "that", "as"})
_PREDICATE_LEAD = frozenset({"on", "to", "at", "in", "from", "toward", "towards"})
_MOTION = frozenset(
    stem(word)
    for word in [
        "turn",
        "point",
        "face",
        "move",
        "go",
        "lean",
        "tilt",
        "shift",
        "head",
        "swim",
        "walk",
        "drive",
        "steer",
        "rotate",
    ]
)
_HAVING = frozenset({"has", "have", "had", "with", "shows", "show", "holds", "contains"})
"""Before a comparative and its noun, these make it a statement ("Solution B has the higher
concentration", "the left lane has more cars"), not a modifier ("the higher bar")."""
_SENTENCE_STOPS = frozenset({".", ";", "!", "?"})
_SIDE_WORDS = frozenset({"side", "hand", "half", "part", "edge", "end", "corner"})
_CAPITALISED_COMMON = frozenset(
    {"celsius", "fahrenheit", "pythagorean", "pythagoras", "kelvin", "newton", "euclid"}
)
_LETTER_WORDS = frozenset({"A", "I"})
_LETTER_CONNECTORS = frozenset({"is", "and", "or", "has", "lies", "equals", "was", "are", "to"})
_QUESTION = re.compile(
    r"\?\s*$|\b(?:question|task|problem)\s+(?:asks|is\s+asking|wants)\b"
    r"|\b(?:asks|asking|ask)\s+(?:whether|which|what|how|for|if|who|where|when|us)\b"
    r"|\b(?:we|i)\s+(?:need|have)\s+to\s+(?:find|determine|decide|count|compute)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(?:[A-Z]{1,4}[0-9]*|[A-Z][A-Z0-9]+)$")


@dataclass(frozen=True, slots=True)
class ColourMention:
    """A colour named in a step."""

    word: str
    families: frozenset[str]
    """The colour families it belongs to ("teal": green and blue)."""
    predicate: bool
    """The step gives the colour to a thing ("the car is *red*"); False when the colour
    says which thing ("the *red* bar"), when it is also an identifier."""
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Negation:
    """A negation and the word it negates."""

    head: str
    """Stem of the negated word ("The door is not *open*": ``open``); ``""`` if none."""
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RelationMention:
    """A comparative, superlative, preposition or state, with what it says it of."""

    dimension: str
    value: int
    form: RelationForm
    subject: frozenset[str]
    """Signature of what the relation is said of (identifiers if any, else content stems)."""
    object: frozenset[str] | None
    """Signature of the second argument ("than the blue bar"); None when there is none."""
    noun: frozenset[str]
    """For a superlative, what it ranks ("the largest *angle*")."""
    negated: bool
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class StepFacts:
    """Everything the fact rules compare about one step."""

    text: str
    """The step as written."""
    prepared: str
    """The step as read (offsets of every fact refer to it)."""
    quantities: tuple[Quantity, ...]
    negations: tuple[Negation, ...]
    negated: frozenset[str]
    """Heads of the step's negations."""
    said: frozenset[str]
    """Keys the step says without negating them (content keys, stems, values ``#10``)."""
    key_spans: dict[str, tuple[int, int]] = field(repr=False, compare=False, hash=False)
    """Where each key of the step is first said or negated (offsets in ``prepared``)."""
    colours: tuple[ColourMention, ...]
    relations: tuple[RelationMention, ...]
    identifiers: frozenset[tuple[str, str]]
    """``(kind, key)``: labels, names, positions, ordinals, days, years, indices, colours."""
    content: frozenset[str]
    """Stems of the content words, identifiers included."""
    dimensions: frozenset[str]
    """Dimensions of the step's relations ("height", "change", "matter"...)."""
    answer: tuple[bool, int, int] | None
    """A yes/no answer the step gives (``(True, start, end)`` for "The answer is yes.")."""
    asserts: bool
    """False for a step that restates the question ("The question asks whether the door is
    open."): it states no fact, so no rule reads it."""
    words: tuple[tuple[str, int, int], ...] = field(repr=False)
    """Every word as ``(stem, start, end)``, for matching option texts."""


# ---------------------------------------------------------------------------------------------
# word roles
# ---------------------------------------------------------------------------------------------


def _low(tokens: Sequence[TextToken], index: int) -> str:
    if 0 <= index < len(tokens):
        return tokens[index].low
    return ""


def _is_label(tokens: Sequence[TextToken], index: int) -> bool:
    token = tokens[index]
    if not _LABEL.match(token.text):
        return False
    if token.text in _LETTER_WORDS:
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is not None and following.kind == "word":
            return following.text[0].isupper() or following.text.lower() in _LETTER_CONNECTORS
    return True


def _is_variable(tokens: Sequence[TextToken], index: int) -> bool:
    """A lower-case one-letter name ("h", "x", "r"), not the article or a unit."""
    text = tokens[index].text
    return len(text) == 1 and text.islower() and text not in ("a", "i", "s")


def _is_name(token: TextToken) -> bool:
    low = token.low
    return (
        token.capital
        and not token.sentence_start
        and token.text[1:] != token.text[1:].upper()
        and low not in STOP_WORDS
        and low not in _CAPITALISED_COMMON
    )


def _position_role(tokens: Sequence[TextToken], index: int) -> str | None:
    """``"predicate"`` ("on the left", "left of", "turn left"), ``"modifier"`` or None."""
    low = _low(tokens, index)
    if low not in POSITIONS or _low(tokens, index + 1) in NOT_A_POSITION_BEFORE.get(low, ()):
        return None
    if _low(tokens, index + 1) == "than":
        return None  # "lower than": a comparative
    lead = index - 2 if _low(tokens, index - 1) in ("the", "a", "an") else index - 1
    if low == "lower" and _low(tokens, lead) in _HAVING:
        return None  # "B has the lower concentration": a comparative
    canonical = POSITIONS[low]
    if canonical not in PREDICATE_RELATIONS or low in ("upper", "lower", "northern", "southern"):
        return "modifier"
    before, before2 = _low(tokens, index - 1), _low(tokens, index - 2)
    after = _low(tokens, index + 1)
    if after == "-" or after in POSITIONS:  # "the north-east corner", "top left"
        return "modifier"
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    directed = before == "to" or (before == "the" and before2 in ("to", "toward", "towards"))
    if (
        following is not None
        and following.kind == "word"
        and after not in STOP_WORDS
        and after not in _SIDE_WORDS
        and not directed
    ):
        return "modifier"  # "on the top shelf", "in the bottom row": which shelf, which row
    if before == "-" and before2 in POSITIONS:
        return "modifier"
    if before == "the" and before2 in _PREDICATE_LEAD:
        return "predicate"
    if after == "of" or (before == "on" and low == "top"):
        return "predicate"
    if index > 0 and tokens[index - 1].key in _MOTION:
        return "predicate"
    return "modifier"


def _colour(tokens: Sequence[TextToken], index: int) -> tuple[str, ...] | None:
    low = _low(tokens, index)
    if low not in COLOUR_FAMILIES or _low(tokens, index + 1) in NOT_A_COLOUR_BEFORE.get(low, ()):
        return None
    if low == "orange" and _low(tokens, index - 1) == "an":
        return None
    return COLOUR_FAMILIES[low]


def _colour_is_predicate(tokens: Sequence[TextToken], index: int) -> bool:
    """The colour is what the step says of a thing ("is red", "painted dark blue", "has a
    red colour"), not which thing it is about ("the red bar", "a white car")."""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    after = _low(tokens, index + 1)
    if after in COLOUR_NOUNS:
        return True
    if (
        following is not None
        and following.kind == "word"
        and after not in STOP_WORDS
        and after not in COLOUR_FAMILIES
        and after not in NEGATIONS
    ):
        return False  # "the red bar": which bar
    position = index - 1
    while position >= 0 and (
        _low(tokens, position) in COLOUR_SHADES or _low(tokens, position) == "-"
    ):
        position -= 1
    before = _low(tokens, position)
    return before in COLOUR_VERBS


_NEGATED_FORMS = {
    f"{prefix}{joint}{root}": root
    for prefix in NEGATIVE_PREFIXES
    for root in NEGATIVE_PREFIX_ROOTS
    for joint in ("", "-")
}
_MULTIWORD_FIRST = frozenset(words[0] for words in MULTIWORD_PREPOSITIONS)
_ONLY_FUNCTION = STOP_WORDS - {
    *SUPERLATIVES,
    *COMPARATIVES,
    *PREPOSITIONS,
    *POSITIONS,
    *ORDINALS,
    *COLOUR_FAMILIES,
    *NEGATIONS,
    *ANSWER_WORDS,
    *_MULTIWORD_FIRST,
    *CLAUSE_BREAKS,
    "one",
}
"""Function words that play no other part: the word loop skips them at once."""


def _prefix_negated_root(low: str) -> str | None:
    """The root a negative prefix negates ("unshaded" -> "shaded"), else None."""
    return _NEGATED_FORMS.get(low)


# ---------------------------------------------------------------------------------------------
# the reader
# ---------------------------------------------------------------------------------------------


@dataclass
class _Reading:
    tokens: list[TextToken]
    quantities: list[Quantity]
    consumed: set[int] = field(default_factory=set)
    identifier_at: dict[int, tuple[str, str]] = field(default_factory=dict)
    content_at: dict[int, str] = field(default_factory=dict)
    relation_at: dict[int, tuple[tuple[Relation, ...], RelationForm]] = field(default_factory=dict)
    relation_end: dict[int, int] = field(default_factory=dict)
    quantity_at: dict[int, Quantity] = field(default_factory=dict)
    boundary: set[int] = field(default_factory=set)


def _mark_quantities(reading: _Reading) -> list[tuple[str, str]]:
    identifiers = []
    tokens = reading.tokens
    for quantity in reading.quantities:
        covered = [i for i, t in enumerate(tokens) if quantity.start <= t.start < quantity.end]
        if not covered:
            continue
        reading.quantity_at[covered[0]] = quantity
        reading.consumed.update(covered[1:])
        if quantity.index:
            head = covered[0] - 1
            noun = tokens[head].key if head >= 0 and tokens[head].key in INDEX_NOUNS else ""
            identifiers.append(("index", f"{noun}:{quantity.value:g}"))
            reading.identifier_at[covered[0]] = ("index", f"{noun}:{quantity.value:g}")
    return identifiers


def _classify_words(reading: _Reading) -> tuple[list[ColourMention], list[tuple[str, str]]]:
    tokens = reading.tokens
    colour_at: list[tuple[int, bool]] = []
    identifiers: list[tuple[str, str]] = []
    skip_to = -1
    for index, token in enumerate(tokens):
        if token.kind == "break" or (token.kind == "word" and token.low in CLAUSE_BREAKS):
            reading.boundary.add(index)
        if index <= skip_to or index in reading.consumed or token.kind != "word":
            if token.kind == "symbol" and token.text in "<>≤≥":
                value = 1 if token.text in ">≥" else -1
                reading.relation_at[index] = ((Relation("value", value),), "comparative")
            continue
        low = token.low
        if low in _ONLY_FUNCTION and not token.text.isupper():
            continue  # most words: nothing to read
        multiword = None
        if low in _MULTIWORD_FIRST:
            multiword = next(
                (
                    (relation, len(words))
                    for words, relation in MULTIWORD_PREPOSITIONS.items()
                    if tuple(_low(tokens, index + k) for k in range(len(words))) == words
                ),
                None,
            )
        if multiword is not None:
            reading.relation_at[index] = ((multiword[0],), "preposition")
            reading.relation_end[index] = index + multiword[1] - 1
            skip_to = index + multiword[1] - 1
            continue
        position = _position_role(tokens, index)
        families = _colour(tokens, index)
        if _is_label(tokens, index) or _is_variable(tokens, index):
            identifiers.append(("label", low))
            reading.identifier_at[index] = ("label", low)
            reading.content_at[index] = low
        elif families is not None:
            listed = _low(tokens, index - 1) in ("and", "or", ",") and bool(colour_at)
            predicate = colour_at[-1][1] if listed else _colour_is_predicate(tokens, index)
            colour_at.append((index, predicate))
            if not predicate:
                reading.identifier_at[index] = ("colour", families[0])
            reading.content_at[index] = families[0]
        elif position == "predicate":
            canonical = POSITIONS[low]
            reading.relation_at[index] = ((PREDICATE_RELATIONS[canonical],), "preposition")
            if _low(tokens, index + 1) in _SIDE_WORDS:
                reading.consumed.add(index + 1)
                if _low(tokens, index + 2) == "side":  # "left-hand side"
                    reading.consumed.add(index + 2)
        elif position == "modifier":
            reading.identifier_at[index] = ("position", POSITIONS[low])
            reading.content_at[index] = POSITIONS[low]
        elif low in ORDINALS and _low(tokens, index + 1) not in ("of", ",", "step"):
            reading.identifier_at[index] = ("ordinal", str(ORDINALS[low]))
            reading.content_at[index] = low
        elif low in TEMPORAL or _is_name(token):
            kind = "time" if low in TEMPORAL else "name"
            reading.identifier_at[index] = (kind, token.key)
            reading.content_at[index] = token.key
        elif (
            _relation(reading, index)
            or low in STOP_WORDS
            or low in NEGATIONS
            or low in APPROXIMATE
            or low in SCALE_WORDS
            or low in SYMBOLIC_WORDS
            or low in ANSWER_WORDS
            or token.key in _LIGHT
        ):
            pass
        else:
            root = _prefix_negated_root(low)
            reading.content_at[index] = stem(root) if root is not None else token.key
    identifiers.extend(reading.identifier_at.values())
    colours = []
    for index, predicate in colour_at:
        token = tokens[index]
        family_set = frozenset(COLOUR_FAMILIES[token.low])
        colours.append(ColourMention(token.low, family_set, predicate, token.start, token.end))
    return colours, identifiers


def _relation(reading: _Reading, index: int) -> bool:
    """Record the relation word at ``index``, if it is one; True when it is."""
    tokens = reading.tokens
    low, before, after = _low(tokens, index), _low(tokens, index - 1), _low(tokens, index + 1)
    token = tokens[index]
    if low in SUPERLATIVES:
        if low in ("most", "least") and (before != "the" or after == "of"):
            return low in ("most", "least")
        reading.relation_at[index] = (SUPERLATIVES[low], "superlative")
        return True
    if low in COMPARATIVES:
        if low in ("more", "less", "fewer") and (
            before in ("no", "any", "one", "once") or after in ("and", "or")
        ):
            return True
        than_near = "than" in (_low(tokens, index + k) for k in range(1, 4))
        if after != "than" and not than_near and index + 1 < len(tokens):
            following = tokens[index + 1]
            lead = index - 2 if before in ("the", "a", "an") else index - 1
            stated = _low(tokens, lead) in _HAVING or (lead >= 0 and tokens[lead].kind == "number")
            if following.kind == "word" and after not in STOP_WORDS and not stated:
                return True  # "the higher bar": a modifier, not a statement
        reading.relation_at[index] = (COMPARATIVES[low], "comparative")
        return True
    if low in PREPOSITIONS:
        reading.relation_at[index] = (PREPOSITIONS[low], "preposition")
        return True
    if token.key == "go" and after in _GO:
        reading.relation_at[index] = (_GO[after], "state")
        reading.relation_end[index] = index + 1
        reading.consumed.add(index + 1)
        return True
    if token.key in _STATES and low not in STATE_SURFACE_ONLY:
        readings = _STATES[token.key]
        if readings[0].dimension in ADJECTIVE_STATES and _content_follows(tokens, index):
            return False  # "the full rectangle", "a solid line": a modifier, not a statement
        reading.relation_at[index] = (readings, "state")
        return True
    return False


def _content_follows(tokens: Sequence[TextToken], index: int) -> bool:
    if index + 1 >= len(tokens) or tokens[index + 1].kind != "word":
        return False
    after = _low(tokens, index + 1)
    return after not in STOP_WORDS and after not in NEGATIONS and after not in ("than",)


def _clause_bounds(reading: _Reading, index: int) -> tuple[int, int]:
    """The clause around ``index``: from after the previous break to before the next one."""
    tokens = reading.tokens

    between = {
        position
        for position, token in enumerate(tokens)
        if token.low == "and" and any(_low(tokens, position - k) == "between" for k in (2, 3, 4))
    }

    def stops(position: int) -> bool:
        low = _low(tokens, position)
        if position in between:  # "between 2005 and 2011": one argument
            return False
        return position in reading.boundary or low in ("and", "or")

    start = index
    while start > 0 and not stops(start - 1) and (start - 1) not in reading.relation_at:
        start -= 1
    end = reading.relation_end.get(index, index) + 1
    while end < len(tokens) and not stops(end) and end not in reading.relation_at:
        end += 1
    return start, end


def _signature(reading: _Reading, first: int, last: int, skip: range = range(0)) -> frozenset[str]:
    """What a span of tokens is about: identifiers (``kind:key``), values (``#3``) and the
    stems of its other content words."""
    keys: set[str] = set()
    for position in range(first, last):
        if position in skip:
            continue
        pair = reading.identifier_at.get(position)
        if pair is not None:
            keys.add(f"{pair[0]}:{pair[1]}")
        elif position in reading.quantity_at:
            keys.add(f"#{reading.quantity_at[position].value:g}")
        elif position in reading.content_at:
            keys.add(reading.content_at[position])
        elif position in reading.relation_at and reading.relation_at[position][1] == "preposition":
            low = _low(reading.tokens, position)
            if low in POSITIONS:  # "the smallest one is on the left": where it stands
                keys.add(f"position:{POSITIONS[low]}")
    return frozenset(keys)


def _sentence_bounds(reading: _Reading, index: int) -> tuple[int, int]:
    """The sentence around ``index`` (commas and other relation words crossed): where a
    superlative's holder may be named ("Kenya's bar, at 52.8, is the shortest")."""
    tokens = reading.tokens

    def ends(position: int) -> bool:
        return tokens[position].text in _SENTENCE_STOPS or tokens[position].low in CLAUSE_BREAKS

    start = index
    while start > 0 and not ends(start - 1):
        start -= 1
    end = index + 1
    while end < len(tokens) and not ends(end):
        end += 1
    return start, end


def _nouns_after(reading: _Reading, index: int) -> frozenset[str]:
    nouns = []
    for position in range(index + 1, min(index + 3, len(reading.tokens))):
        if position in reading.content_at:
            nouns.append(reading.content_at[position])
        elif nouns or _low(reading.tokens, position) not in ("the", "a", "an"):
            break
    return frozenset(nouns)


def _relations(reading: _Reading, negated_at: set[int]) -> list[RelationMention]:
    tokens = reading.tokens
    mentions: list[RelationMention] = []
    for index, (readings, form) in sorted(reading.relation_at.items()):
        start, end = _clause_bounds(reading, index)
        subject = _signature(reading, start, index)
        last_word = reading.relation_end.get(index, index)
        object_start = last_word + 1
        has_object = form == "preposition" or _low(tokens, last_word + 1) in ("than", "of", "to")
        than = next((k for k in range(index + 1, end) if _low(tokens, k) == "than"), None)
        if form == "comparative" and than is not None and not has_object:
            if not subject:
                # "there are more cats than dogs": what is compared follows the comparative
                subject = _signature(reading, index + 1, than)
            # "Fiji has a higher share than Nepal": the object follows "than"
            object_start, has_object = than + 1, True
        while object_start < end and _low(tokens, object_start) in _ARGUMENT_SKIP:
            object_start += 1
        argument = _signature(reading, object_start, end) if has_object else frozenset()
        noun: frozenset[str] = frozenset()
        if form == "superlative":
            noun = _nouns_after(reading, last_word)
            # the thing that holds the extreme: anything else the clause names
            first, last = _sentence_bounds(reading, index)
            subject = _signature(reading, first, last, range(index, last_word + 1 + len(noun)))
            has_object = False
        mentions.extend(
            RelationMention(
                dimension=relation.dimension,
                value=relation.value,
                form=form,
                subject=subject,
                object=argument if has_object and argument else None,
                noun=noun,
                negated=index in negated_at,
                start=tokens[index].start,
                end=tokens[last_word].end,
            )
            for relation in readings
        )
    return mentions


def _negations(reading: _Reading) -> tuple[list[Negation], set[int], dict[int, str]]:
    """The negations, the indices of negated tokens, and each negated token's stem."""
    tokens = reading.tokens
    found: list[Negation] = []
    heads: dict[int, str] = {}
    seen_neither = False
    for index, token in enumerate(tokens):
        low = token.low
        if token.kind == "symbol" and token.text == "≠":
            found.append(Negation("equal", token.start, token.end))
            continue
        if token.kind != "word":
            continue
        root = _prefix_negated_root(low)
        if root is not None:
            found.append(Negation(stem(root), token.start, token.end))
            continue
        if low not in NEGATIONS:
            continue
        after = _low(tokens, index + 1)
        if after in NOT_NEGATING_AFTER.get(low, ()):
            continue
        if (
            low == "not"
            and _low(tokens, index - 1) == "or"
            and _low(tokens, index - 2) == "whether"
        ):
            continue
        if low == "no" and _answer_at(tokens, index) is not None:
            continue
        if low == "nor" and seen_neither:
            continue
        seen_neither = seen_neither or low == "neither"
        if after in ("other", "else", "another", "more", "longer"):
            # "no other sign is visible": about other things, not what the other step says
            found.append(Negation("", token.start, token.end))
            continue
        head_index = None
        for position in range(index + 1, len(tokens)):
            if position in reading.boundary:
                break
            candidate = tokens[position]
            if (
                candidate.kind == "number"
                or position in reading.identifier_at  # "not S and S": a label
                or (
                    candidate.kind == "word"
                    and _low(tokens, position) not in STOP_WORDS
                    and _low(tokens, position) not in NEGATIONS
                )
            ):
                head_index = position
                break
        head = ""
        if head_index is not None:
            head = _head_key(reading, head_index)
            heads[head_index] = head
        found.append(Negation(head, token.start, token.end))
    for index, quantity in reading.quantity_at.items():
        if quantity.value == 0 and quantity.noun and not quantity.dimension:
            noun = sorted(quantity.noun)[-1]
            found.append(Negation(noun, quantity.start, quantity.end))
            for position in range(index + 1, min(index + 3, len(tokens))):
                if tokens[position].key in quantity.noun:
                    heads[position] = tokens[position].key
    return found, set(heads), heads


def _head_key(reading: _Reading, index: int) -> str:
    """The key a negated (or stated) word is compared by: a value as ``#10``, a content word
    by its content key ("white" by its colour family), any other word by its stem."""
    quantity = reading.quantity_at.get(index)
    if quantity is not None:
        return f"#{quantity.value:g}"
    return reading.content_at.get(index, reading.tokens[index].key)


def _answer_at(tokens: Sequence[TextToken], index: int) -> bool | None:
    """The yes/no answer the word at ``index`` gives, if it stands as one."""
    low = _low(tokens, index)
    if low not in ANSWER_WORDS:
        return None
    alone_after = index + 1 >= len(tokens) or tokens[index + 1].kind == "break"
    after_answer = any(_low(tokens, index - k) in ("answer", "answered") for k in (1, 2, 3))
    if alone_after or after_answer:
        return ANSWER_WORDS[low]
    return None


@functools.lru_cache(maxsize=1 << 16)
def step_facts(text: str) -> StepFacts:
    """Read the facts of one step (cached by text: pure, so safe to share).

    Examples:
        >>> facts = step_facts("The left console is not the smallest; it holds 3 apples.")
        >>> [(q.value, sorted(q.noun)) for q in facts.quantities]
        [(3.0, ['appl'])]
        >>> [(n.head) for n in facts.negations], sorted(facts.identifiers)
        (['smallest'], [('position', 'left')])
        >>> [(r.dimension, r.value, r.form, r.negated) for r in facts.relations]
        [('size', -1, 'superlative', True), ('value', -1, 'superlative', True)]
        >>> step_facts("The answer is no.").answer
        (False, 14, 16)
    """
    prepared = prepare_step(text)
    tokens = tokenize(prepared)
    reading = _Reading(tokens, read_quantities(tokens))
    identifiers = _mark_quantities(reading)
    colours, more_identifiers = _classify_words(reading)
    negations, negated_at, negated_heads = _negations(reading)
    relations = _relations(reading, negated_at)
    relation_words = {tokens[index].key for index in reading.relation_at}
    said = {key for index, key in reading.content_at.items() if index not in negated_at}
    said |= {f"#{q.value:g}" for index, q in reading.quantity_at.items() if index not in negated_at}
    said |= {
        tokens[index].key
        for index, token in enumerate(tokens)
        if token.kind == "word"
        and index not in negated_at
        and index not in reading.content_at
        and (token.key in _LIGHT or token.key in relation_words)
    }
    key_spans: dict[str, tuple[int, int]] = {}
    for index, token in enumerate(tokens):
        if token.kind in ("word", "number"):
            key_spans.setdefault(_head_key(reading, index), (token.start, token.end))
    for quantity in reading.quantity_at.values():
        key_spans[f"#{quantity.value:g}"] = (quantity.start, quantity.end)
    answer = None
    for index in range(len(tokens)):
        value = _answer_at(tokens, index)
        if value is not None:
            answer = (value, tokens[index].start, tokens[index].end)
    return StepFacts(
        text=text,
        prepared=prepared,
        quantities=tuple(reading.quantities),
        negations=tuple(negations),
        negated=frozenset(negated_heads.values()),
        said=frozenset(said),
        key_spans=key_spans,
        colours=tuple(colours),
        relations=tuple(relations),
        identifiers=frozenset(identifiers + more_identifiers),
        content=frozenset(reading.content_at.values()),
        dimensions=frozenset(r.dimension for r in relations),
        answer=answer,
        asserts=not _QUESTION.search(text),
        words=tuple((t.key, t.start, t.end) for t in tokens if t.kind == "word"),
    )
