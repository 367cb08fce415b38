"""Answer normalisation: text, numbers, symbolic values, yes/no and choice letters."""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crystalbench.normalize import (
    Clock,
    NumberRange,
    ParsedNumber,
    answer_key,
    answer_tail,
    clean_answer,
    clocks_agree,
    committed_segment,
    extract_boxed,
    extract_number,
    find_choice_letters,
    fold_accents,
    has_symbolic_markup,
    math_equivalent,
    normalize_text,
    numbers_close,
    parse_clock,
    parse_number,
    parse_range,
    parse_ratio,
    parse_yes_no,
    plain_math,
    ratios_agree,
    read_number,
    symbolic_value,
)
from crystalbench.normalize.number_words import words_to_digits

# ------------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Golden Retriever", "golden retriever"),
        ("  the  Red   Umbrella. ", "red umbrella"),
        ("An apple", "apple"),
        ("don’t", "dont"),
        ("well-known", "well known"),
        ("3.5 m", "3.5 m"),
        ("3. 5", "3 5"),
        ("(2, -3)", "2 -3"),
        ("x-1", "x 1"),
        ("ＡＢＣ", "abc"),  # full-width letters fold (NFKC)
        ("", ""),
        ("...", ""),
        ("Theatre", "theatre"),  # "the" inside a word is not an article
    ],
)
def test_normalize_text(text, expected):
    assert normalize_text(text) == expected


@given(st.text(max_size=60))
def test_normalize_text_is_idempotent(text):
    once = normalize_text(text)
    assert normalize_text(once) == once


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\boxed{12}", "12"),
        (r"so \boxed{\frac{1}{2}} then", r"\frac{1}{2}"),
        (r"\boxed{3} or \boxed{4}", "4"),
        (r"\fbox{A}", "A"),
        (r"\boxed{unclosed", None),
        ("nothing", None),
    ],
)
def test_extract_boxed(text, expected):
    assert extract_boxed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is Paris.", "Paris"),
        ("**Final answer:** blue", "blue"),
        ("Answer: the answer is 42", "42"),
        (r"$\boxed{\text{red}}$", "red"),
        ("So, the answer is: yes.", "yes"),
        ("To answer this we look.", "To answer this we look"),
    ],
)
def test_clean_answer(text, expected):
    assert clean_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We count. The answer is 7.", "7."),
        ("Final answer: B", "B"),
        ("Answer = 12", "12"),
        ("To answer this, count.", None),
        ("answers vary", None),
    ],
)
def test_answer_tail(text, expected):
    assert answer_tail(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"x = 2, so \boxed{5}", "5"),
        ("The answer is 3 cm", "3 cm"),
        ("a = 3 = 4", "4"),
        ("just text", "just text"),
        ("x = ", "x ="),
    ],
)
def test_committed_segment(text, expected):
    assert committed_segment(text) == expected


# ------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "value", "percent"),
    [
        ("12", 12.0, False),
        ("-3.25", -3.25, False),
        ("+7", 7.0, False),
        ("1,234", 1234.0, False),
        ("1,234,567.5", 1234567.5, False),
        (".5", 0.5, False),
        ("3/4", 0.75, False),
        ("-3/4", -0.75, False),
        (r"\frac{3}{2}", 1.5, False),
        (r"\dfrac{1}{4}", 0.25, False),
        (r"\tfrac{1}{8}", 0.125, False),
        (r"-\frac{1}{2}", -0.5, False),
        (r"\frac12", 0.5, False),
        ("45%", 45.0, True),
        (r"45\%", 45.0, True),
        ("45^\\circ", 45.0, False),
        ("45^{\\circ}", 45.0, False),
        ("45°", 45.0, False),
        ("1.2e3", 1200.0, False),
        ("1.2E-2", 0.012, False),
        (r"1.2 \times 10^{3}", 1200.0, False),
        ("3 × 10^-2", 0.03, False),
        ("$3.50", 3.5, False),
        ("€12", 12.0, False),
        ("12 cm", 12.0, False),
        ("3.5 m/s", 3.5, False),
        ("10 km^2", 10.0, False),
        (r"12\text{ cm}", 12.0, False),
        ("−5", -5.0, False),  # Unicode minus
        ("7.", 7.0, False),
        ("five", 5.0, False),
        ("3,5", 3.5, False),
    ],
)
def test_parse_number_reads_numbers(text, value, percent):
    number = parse_number(text)
    assert number is not None
    assert number.value == pytest.approx(value)
    assert number.percent is percent


@pytest.mark.parametrize(
    "text",
    [
        "2 dogs and 3 cats",
        "between 3 and 4",
        r"2\sqrt{3}",
        r"\frac{\pi}{2}",
        "x = 5",
        "1/0",
        "",
        "3,5,7",
        "(2,3)",
        "Seven Samurai",
        "one two",
        "A",
        "the year 2019",
    ],
)
def test_parse_number_rejects_non_numbers(text):
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("In 2019 the value was 45", 45.0),
        ("The answer is 1,234 people, up from 1,000.", 1234.0),
        ("The answer is 27, computed as 54 - 27.", 27.0),
        (r"We get \boxed{12} after checking 13", 12.0),
        (r"\boxed{2 + 3 = 5}", 5.0),
        ("x = 12 cm", 12.0),
        ("6 × 4 = 24", 24.0),
        ("About 3.46 units", 3.46),
        ("The growth was 12.5%", 12.5),
        ("it rose 3-5 times", 5.0),
        ("x=-5", -5.0),
        ("v2 gives 7", 7.0),
        ("1.2 × 10^3 kg", 1200.0),
        (r"x = \dfrac{3}{4}", 0.75),
        ("Final answer: -0.5", -0.5),
        ("The answer is seven.", 7.0),
        (r"\boxed{seven} although 8 appears", 7.0),
    ],
)
def test_extract_number(text, value):
    number = extract_number(text)
    assert number is not None
    assert number.value == pytest.approx(value)


@pytest.mark.parametrize(
    "text",
    ["no digits here", "The answer is the left one.", r"\boxed{many} although 7 appears", ""],
)
def test_extract_number_finds_none(text):
    assert extract_number(text) is None


def test_extract_number_keeps_percent_flag():
    assert extract_number("It is 45% of the total") == ParsedNumber(45.0, True)


@given(
    st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False),
    st.integers(min_value=1000, max_value=2100),
)
@settings(max_examples=150)
def test_last_number_wins_over_a_year(value, year):
    """Property: a year mentioned first never hides the number stated last."""
    text = f"In {year} the value was {value:.4f}"
    number = extract_number(text)
    assert number is not None
    assert number.value == pytest.approx(round(value, 4), abs=1e-6)


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_thousands_separators_round_trip(value):
    assert parse_number(f"{value:,}") == ParsedNumber(float(value), False)


@pytest.mark.parametrize(
    ("predicted", "gold", "close"),
    [
        (10.9, 10.0, True),
        (11.0, 10.0, True),  # exactly 10 % off: on the boundary, inside
        (11.1, 10.0, False),
        (0.35, 0.3, True),  # exactly 0.05 off
        (0.36, 0.3, False),
        (0.04, 0.0, True),
        (0.06, 0.0, False),
        (-3.1, -3.2, True),
        (3.2, -3.2, False),
    ],
)
def test_numbers_close_uses_paper_tolerances(predicted, gold, close):
    assert numbers_close(predicted, gold, abs_tol=0.05, rel_tol=0.10) is close


# ------------------------------------------------------------------------------- symbolic


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r"2\sqrt{3}", 2 * math.sqrt(3)),
        (r"\sqrt{12}", math.sqrt(12)),
        (r"\frac{\pi}{2}", math.pi / 2),
        ("2√3", 2 * math.sqrt(3)),
        ("π/4", math.pi / 4),
        ("3\\pi", 3 * math.pi),
        ("2^{10}", 1024.0),
        ("1:2", 0.5),
        (r"The side is 2\sqrt{3} cm", 2 * math.sqrt(3)),
        (r"The answer is $\frac{1}{2}\pi$.", math.pi / 2),
    ],
)
def test_symbolic_value(text, value):
    result = symbolic_value(text)
    assert result is not None
    assert result == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("text", ["x + 1", "", "(1, 2)", r"\{1, 2\}", r"\sqrt{-1}", "a" * 500])
def test_symbolic_value_none_for_non_real_numbers(text):
    assert symbolic_value(text) is None


def test_symbolic_value_works_outside_the_main_thread():
    """math-verify's signal timeout fails in threads; we must fall back, not return None."""
    results: list[float | None] = []
    worker = threading.Thread(target=lambda: results.append(symbolic_value(r"2\sqrt{3}")))
    worker.start()
    worker.join()
    assert results[0] == pytest.approx(2 * math.sqrt(3))


@pytest.mark.parametrize(
    ("text", "symbolic"),
    [
        (r"2\sqrt{3}", True),
        ("π", True),
        ("2^{10}", True),
        (r"\frac{3}{4}", False),  # a plain fraction: our number reader handles it
        ("45^\\circ", False),  # degrees, not a power
        ("10 km^2", False),  # a unit power
        ("12", False),
    ],
)
def test_has_symbolic_markup(text, symbolic):
    assert has_symbolic_markup(text) is symbolic


@pytest.mark.parametrize(
    ("answer", "gold", "equal"),
    [
        ("(2, 3)", "$(2,3)$", True),
        ("(3, 2)", "$(2,3)$", False),
        ("$x(x+2)$", "$x^2+2x$", True),
        ("$x(x+3)$", "$x^2+2x$", False),
        ("(2, 3)", "(2,3)", False),  # plain-text golds are not math-verified
    ],
)
def test_math_equivalent(answer, gold, equal):
    assert math_equivalent(answer, gold) is equal


# ------------------------------------------------------------------------------- yes / no


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", "yes"),
        ("yes.", "yes"),
        ("No", "no"),
        ("NO!", "no"),
        ("True", "yes"),
        ("false", "no"),
        ("correct", "yes"),
        ("incorrect", "no"),
        ("Not at all.", "no"),
        ("It isn't.", "no"),
        ("That is not true.", "no"),
        ("It's not correct", "no"),
        ("There is no cup.", "no"),
        ("Yes, it is not closed.", "yes"),
        ("No, it is not open.", "no"),
        ("The answer is yes.", "yes"),
        (r"\boxed{No}", "no"),
        ("I know", None),
        ("I don't know", None),
        ("I do not know.", None),
        ("Not sure.", None),
        ("It is unclear from the image.", None),
        ("I can't tell.", None),
        ("Maybe yes, maybe no.", None),
        ("Notably, yes.", "yes"),
        ("No doubt, yes.", "yes"),
        ("Without a doubt, no.", "no"),
        ("No wonder it is wet: yes.", "yes"),
        ("Yes, no other object is red.", "yes"),
        ("There is no question mark.", "no"),
        ("I have no idea.", None),
        ("nothing to see", None),
        ("", None),
    ],
)
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) == expected


_TRAP_WORDS = ["know", "known", "note", "notable", "nothing", "snow", "yesterday", "trueness"]


@given(st.lists(st.sampled_from([*_TRAP_WORDS, "the", "cup", "is", "on", "table"]), max_size=8))
def test_yes_no_words_are_whole_words(words):
    """Property: words that merely contain yes/no/true/not never read as an answer."""
    assert parse_yes_no(" ".join(words)) is None


# ------------------------------------------------------------------------------- letters


@pytest.mark.parametrize(
    ("text", "letters", "how"),
    [
        ("B", ("B",), "whole"),
        ("b", ("B",), "whole"),
        ("(B)", ("B",), "whole"),
        ("(b)", ("B",), "whole"),
        ("B)", ("B",), "whole"),
        ("B.", ("B",), "whole"),
        ("[B]", ("B",), "whole"),
        ("**B**", ("B",), "whole"),
        ("option B", ("B",), "whole"),
        ("Answer: B", ("B",), "whole"),
        ("the answer is B", ("B",), "whole"),
        ("A or B", ("A", "B"), "whole"),
        ("A, B, C, D", ("A", "B", "C", "D"), "whole"),
        ("(a) or (b)", ("A", "B"), "whole"),
        (r"\boxed{B}", ("B",), "boxed"),
        (r"So we get \boxed{B}", ("B",), "boxed"),
        (r"So we get \boxed{\text{C}}", ("C",), "boxed"),
        ("The answer is (B) because it is blue.", ("B",), "answer_phrase"),
        ("The correct option is D", ("D",), "whole"),
        ("The correct option is D since it is red", ("D",), "answer_phrase"),
        ("I choose E.", ("E",), "answer_phrase"),
        ("Option B is wrong; the answer is C.", ("C",), "answer_phrase"),
        ("The answer is C or D.", ("C", "D"), "whole"),
        ("I guess the answer is C or D here", ("C", "D"), "answer_phrase"),
        ("B. Right", ("B",), "leading"),
        ("(B) Right", ("B",), "leading"),
        ("b) right", ("B",), "leading"),
        ("B because it is red", ("B",), "leading"),
        ("A is correct.", ("A",), "leading"),
        ("A because it is red", ("A",), "leading"),
        ("(A)(B)", ("A", "B"), "leading"),
        ("Clearly option C fits", ("C",), "option_word"),
        ("I believe (D) fits", ("D",), "parenthesised"),
        ("I believe **D** fits", ("D",), "parenthesised"),
        ("so it must be D", ("D",), "trailing"),
        ("either B or C", ("B", "C"), "trailing"),
    ],
)
def test_find_choice_letters(text, letters, how):
    assert find_choice_letters(text, 5) == (letters, how)


@pytest.mark.parametrize(
    "text",
    [
        "blue",
        "answer is blue",
        "A cat is sitting on the mat.",
        "I think it is red",
        "a dog",
        "The answer is A cat",
        "The answer is not A",
        "in triangle ABC",
        "e.g. the left one",
        "i.e. none",
        "",
    ],
)
def test_find_choice_letters_ignores_words_and_articles(text):
    assert find_choice_letters(text, 5).letters == ()


def test_find_choice_letters_respects_option_count():
    assert find_choice_letters("E", 3).letters == ()
    assert find_choice_letters("E", 5).letters == ("E",)
    assert find_choice_letters("E", None).letters == ("E",)


@given(
    st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2),
        max_size=8,
    )
)
def test_letters_inside_words_never_count(words):
    """Property: text made only of words of two or more letters names no option."""
    assert find_choice_letters(" ".join(words), 26).letters == ()


# ------------------------------------------------------------------------------- answer keys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("São Paulo", "sao paulo"),
        ("Zürich", "zurich"),
        ("A", "a"),
        ("Vitamin A", "vitamin a"),
        ("A red umbrella.", "red umbrella"),
        ("The answer is B.", "b"),
        (r"$\frac{1}{2}$", "1 2"),
        (r"\dfrac{1}{2}", "1 2"),
        ("1/2", "1 2"),
        (r"$\sqrt{3}$", "√3"),
        ("√3", "√3"),
        (r"45^\circ", "45°"),
        ("$5$", "5"),
    ],
)
def test_answer_key(text, expected):
    assert answer_key(text) == expected


def test_normalize_text_keeps_its_behaviour():
    """The general key (leakage checks use it) still drops every article and keeps accents."""
    assert normalize_text("Vitamin A") == "vitamin"
    assert normalize_text("São Paulo") == "são paulo"


def test_fold_accents_and_plain_math():
    assert fold_accents("Ångström, façade, naïve") == "Angstrom, facade, naive"
    assert answer_key("が") != answer_key("か")  # marks on other scripts carry meaning
    assert plain_math(r"$\frac{\sqrt{3}}{2}$") == "√3/2"
    assert plain_math(r"\frac{\pi}{4}") == "π/4"


# ------------------------------------------------------------------------------- number spellings


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3,5", 3.5),
        ("12,75 cm", 12.75),
        ("0,25", 0.25),
        ("1,234", 1234.0),
        ("1,234,567", 1234567.0),
        ("1 234", 1234.0),
        ("1\u2009234", 1234.0),
        ("1\u202f234", 1234.0),
        ("1\u00a0234 567,5", 1234567.5),
        (r"1\,234", 1234.0),
        ("1{,}234", 1234.0),
        ("1 1/2", 1.5),
        ("-1 1/2", -1.5),
        (r"3 \frac{1}{2}", 3.5),
        ("1½", 1.5),
        ("½", 0.5),
        ("seven", 7.0),
        ("Seven.", 7.0),
        ("twenty-one", 21.0),
        ("one hundred and five", 105.0),
        ("two thousand and nineteen", 2019.0),
        ("minus 3", -3.0),
        ("negative five", -5.0),
        ("zero", 0.0),
    ],
)
def test_number_spellings(text, value):
    number = parse_number(text)
    assert number is not None, text
    assert number.value == pytest.approx(value)


@pytest.mark.parametrize(
    "text", ["3,5,7", "(2,3)", "3, 5", "1 23", "12 3456", "seven dwarfs", "one two", "5 3/2"]
)
def test_number_spellings_that_are_not_one_number(text):
    assert parse_number(text) is None


@given(st.integers(0, 10**6), st.integers(0, 99))
def test_decimal_comma_round_trip(whole, cents):
    """Property: one or two decimals after a comma are a decimal comma."""
    assert parse_number(f"{whole},{cents:02d}").value == pytest.approx(whole + cents / 100)
    if cents % 10 == 0:
        assert parse_number(f"{whole},{cents // 10}").value == pytest.approx(whole + cents / 100)


@given(st.integers(1000, 10**12), st.sampled_from([" ", "\u2009", "\u202f", "\u00a0"]))
def test_thousands_space_round_trip(value, space):
    assert parse_number(f"{value:,}".replace(",", space)) == ParsedNumber(float(value), False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("There are seven cars and twenty-one bikes.", "There are 7 cars and 21 bikes."),
        ("One.", "1."),
        ("the left one", "the left one"),
        ("one of them", "1 of them"),
        ("someone often", "someone often"),
        ("seven eight", "7 8"),
        ("7 minus 3", "7 minus 3"),
        ("a hundred", "a hundred"),
        ("one-third", "one-third"),
    ],
)
def test_words_to_digits(text, expected):
    assert words_to_digits(text) == expected


# ------------------------------------------------------------------------------- hedges


@pytest.mark.parametrize(
    ("text", "hedge"),
    [
        ("3 or 4", "3 or 4"),
        ("The answer is 3 or 4 apples.", "3 or 4"),
        ("4, maybe 5", "4, maybe 5"),
        ("between 10 and 12", "between 10 and 12"),
        ("about 3 to 4", "3 to 4"),
        ("roughly 40-45 birds", "40-45"),
        ("25–30", "25–30"),
        ("1, 2 or 3", "1, 2 or 3"),
        ("about 3", None),
        ("3 or so", None),
        ("4 or four", None),
        ("At first 3 or 4, but it is 5", None),
        ("from 2010 to 2012 it rose by 27", None),
        ("The difference between 2010 and 2012 is 27.", None),
        ("54 - 27", None),
        ("12, 3 more than before", None),
    ],
)
def test_read_number_hedge(text, hedge):
    reading = read_number(text)
    assert reading is not None
    assert reading.hedge == hedge


# ------------------------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    ("text", "clock"),
    [
        ("3:30", Clock(3, 30, None, None)),
        ("15:45", Clock(15, 45, None, None)),
        ("10:05:30", Clock(10, 5, 30, None)),
        ("3:30 PM", Clock(3, 30, None, "pm")),
        ("3:30 p.m.", Clock(3, 30, None, "pm")),
        ("7 am", Clock(7, 0, None, "am")),
        ("3 o'clock", Clock(3, 0, None, None)),
        ("three o'clock", Clock(3, 0, None, None)),
        ("3:2", None),
        ("7:75", None),
        ("25:10", None),
        ("13:00 pm", None),
        ("3.30", None),
    ],
)
def test_parse_clock(text, clock):
    assert parse_clock(text) == clock


@pytest.mark.parametrize(
    ("predicted", "gold", "agree"),
    [
        ("3:30", "15:30", True),
        ("3:30 pm", "15:30", True),
        ("3:30 am", "15:30", False),
        ("12:05 am", "0:05", True),
        ("12:05", "0:05", True),
        ("10:05:30", "10:05", True),
        ("10:05", "10:05:30", False),
    ],
)
def test_clocks_agree(predicted, gold, agree):
    assert clocks_agree(parse_clock(predicted), parse_clock(gold)) is agree


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("25-30", NumberRange(25, 30, False)),
        ("25 - 30", NumberRange(25, 30, False)),
        ("25–30", NumberRange(25, 30, False)),
        ("25 to 30 cm", NumberRange(25, 30, False)),
        ("between 10 and 12", NumberRange(10, 12, False)),
        ("from 1990 to 2000", NumberRange(1990, 2000, False)),
        ("1990-91", NumberRange(1990, 1991, False)),
        ("20%-30%", NumberRange(20, 30, True)),
        ("-5", None),
        ("25", None),
        ("3 and 4", None),
        ("25-30-35", None),
        ("the 25-30 age group", None),
    ],
)
def test_parse_range(text, expected):
    assert parse_range(text) == expected


def test_parse_ratio_and_agreement():
    assert parse_ratio("3:2") == (3.0, 2.0)
    assert parse_ratio("1 : 4") == (1.0, 4.0)
    assert parse_ratio("1:2:3") == (1.0, 2.0, 3.0)
    assert parse_ratio("3 to 2") is None
    assert parse_ratio("3 to 2", allow_to=True) == (3.0, 2.0)
    assert parse_ratio("3/2") is None
    assert ratios_agree((6.0, 4.0), (3.0, 2.0))
    assert ratios_agree((1.5, 1.0), (3.0, 2.0))
    assert not ratios_agree((2.0, 3.0), (3.0, 2.0))
    assert not ratios_agree((0.0, 0.0), (0.0, 0.0))
