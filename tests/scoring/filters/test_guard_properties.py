"""Properties of the fact guard over generated steps (hypothesis)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.scoring.filters.guard import FactGuard

GUARD = FactGuard(["fox", "grass", "frog"])

_UNITS = ["", " cm", " degrees", "°", "%", " apples", " square units", " km/h"]
_NOUNS = ["angle ABC", "area", "red bar", "left console", "number of cats", "value for 2015"]
_COLOURS = ["red", "blue", "green", "crimson", "teal", "white"]
_RELATIONS = ["taller than", "shorter than", "to the left of", "above", "more than", "the same as"]
_THINGS = ["the red bar", "the cup", "box P", "the blue ball", "AB", "the grass"]


_STATES = ["increases", "decreases", "is open", "is closed", "is the smallest"]
_ANSWERS = ["yes", "no", "grass", "fox", "(B)"]


def _coloured(thing: str, colour: str, negated: bool) -> str:
    return f"{thing.capitalize()} is {'not ' if negated else ''}{colour}."


statement = st.one_of(
    st.builds(
        lambda noun, value, unit: f"The {noun} is {value}{unit}.",
        st.sampled_from(_NOUNS),
        st.integers(0, 2000),
        st.sampled_from(_UNITS),
    ),
    st.builds(_coloured, st.sampled_from(_THINGS), st.sampled_from(_COLOURS), st.booleans()),
    st.builds(
        lambda a, relation, b: f"{a.capitalize()} is {relation} {b}.",
        st.sampled_from(_THINGS),
        st.sampled_from(_RELATIONS),
        st.sampled_from(_THINGS),
    ),
    st.builds(
        lambda thing, verb: f"{thing.capitalize()} {verb}.",
        st.sampled_from(_THINGS),
        st.sampled_from(_STATES),
    ),
    st.builds(lambda letter: f"Select option {letter}.", st.sampled_from("ABCDE")),
    st.builds(lambda answer: f"The answer is {answer}.", st.sampled_from(_ANSWERS)),
)

any_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80
) | st.from_regex(r"[A-Za-z0-9 .,%°$/^=+\-]{0,60}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(statement)
def test_a_step_is_never_vetoed_against_itself(step: str) -> None:
    assert GUARD.check(step, step) is None


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_any_text_is_read_without_error_and_never_vetoed_against_itself(text: str) -> None:
    assert GUARD.check(text, text) is None


@settings(max_examples=400, deadline=None)
@given(statement, statement)
def test_the_verdict_does_not_depend_on_which_step_is_predicted(a: str, b: str) -> None:
    forward, backward = GUARD.check(a, b), GUARD.check(b, a)
    assert (forward is None) == (backward is None)
    if forward is not None and backward is not None:
        assert forward.reason == backward.reason
        assert forward.spans.pred == backward.spans.ref


@settings(max_examples=300, deadline=None)
@given(any_text, any_text)
def test_any_pair_of_texts_is_checked_without_error(a: str, b: str) -> None:
    conflict = GUARD.check(a, b)
    if conflict is not None:
        assert a[conflict.spans.pred.start : conflict.spans.pred.end] == conflict.spans.pred.text
        assert b[conflict.spans.ref.start : conflict.spans.ref.end] == conflict.spans.ref.text


_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _in_words(value: int) -> str:
    if value < 20:
        return _WORDS[value]
    tens, unit = divmod(value, 10)
    return _TENS[tens - 2] + (f"-{_WORDS[unit]}" if unit else "")


def _spellings(value: int) -> list[str]:
    """One integer written several ways, all the same value."""
    out = [str(value), f"{value}.0", f"{value:,}"]
    if value < 100:
        out.append(_in_words(value))
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 99_999),
    st.sampled_from(
        [
            "The area is {}.",
            "There are {} apples on the table.",
            "AB = {} cm.",
            "The angle ABC is {} degrees.",
        ]
    ),
    st.data(),
)
def test_rewriting_a_number_in_another_spelling_is_never_vetoed(
    value: int, frame: str, data: st.DataObject
) -> None:
    a, b = (data.draw(st.sampled_from(_spellings(value))) for _ in range(2))
    assert GUARD.check(frame.format(a), frame.format(b)) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 99), st.sampled_from([2, 4, 5, 8, 10, 20, 25, 50, 100]))
def test_a_fraction_a_decimal_and_a_percentage_of_one_value_agree(
    numerator: int, denominator: int
) -> None:
    share = Fraction(numerator, denominator)
    decimal = f"{float(share):g}"
    spellings = [f"{numerator}/{denominator}", decimal]
    if share <= 1:
        spellings.append(f"{float(share * 100):g}%")
    frame = "The shaded share of the figure is {}."
    for a in spellings:
        for b in spellings:
            assert GUARD.check(frame.format(a), frame.format(b)) is None, (a, b)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2000), st.integers(0, 2000))
def test_two_different_values_of_one_quantity_are_always_vetoed(a: int, b: int) -> None:
    frame = "There are {} marbles in the jar."
    conflict = GUARD.check(frame.format(a), frame.format(b))
    assert (conflict is not None) == (a != b)
    if conflict is not None:
        assert conflict.reason == "number"
