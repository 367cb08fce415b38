"""Answer normalisation: the one place that turns answer text into comparable values.

Everything that reads a model's (or a gold) answer goes through here: text normalisation for
exact matching, ``\\boxed{}`` and answer lead-in handling, number extraction (with hedges),
clock times, ranges and ratios, symbolic values through math-verify, yes/no reading and
choice-letter reading. :mod:`crystalbench.answers` holds the rules that decide correctness with
these values; parsing, rewards and reports reuse the same functions instead of carrying their
own regexes.

The package is split along its seams, all re-exported here:

- :mod:`~crystalbench.normalize.extraction`: where the committed answer is (``\\boxed{}``,
  "the answer is", the last ``=``);
- :mod:`~crystalbench.normalize.latex`: LaTeX and Unicode spellings of numbers;
- :mod:`~crystalbench.normalize.text`: text keys for exact comparison;
- :mod:`~crystalbench.normalize.number_words` and :mod:`~crystalbench.normalize.numbers`:
  numbers, the committed one, hedges;
- :mod:`~crystalbench.normalize.shapes`: clock times, ranges, ratios;
- :mod:`~crystalbench.normalize.symbolic`: math-verify;
- :mod:`~crystalbench.normalize.yes_no` and :mod:`~crystalbench.normalize.choice_letters`.

Nothing here raises on model output: a text that holds no number, no letter or no yes/no
gives ``None`` (or an empty result).
"""

from __future__ import annotations

from crystalbench.normalize.choice_letters import ChoiceLetters, find_choice_letters
from crystalbench.normalize.extraction import answer_tail, committed_segment, extract_boxed
from crystalbench.normalize.latex import has_symbolic_markup, plain_math
from crystalbench.normalize.numbers import (
    NumberReading,
    ParsedNumber,
    extract_number,
    numbers_close,
    parse_number,
    read_number,
)
from crystalbench.normalize.shapes import (
    Clock,
    NumberRange,
    clocks_agree,
    parse_clock,
    parse_range,
    parse_ratio,
    ratios_agree,
)
from crystalbench.normalize.symbolic import math_equivalent, symbolic_value
from crystalbench.normalize.text import answer_key, clean_answer, fold_accents, normalize_text
from crystalbench.normalize.yes_no import YesNo, parse_yes_no

__all__ = [
    "ChoiceLetters",
    "Clock",
    "NumberRange",
    "NumberReading",
    "ParsedNumber",
    "YesNo",
    "answer_key",
    "answer_tail",
    "clean_answer",
    "clocks_agree",
    "committed_segment",
    "extract_boxed",
    "extract_number",
    "find_choice_letters",
    "fold_accents",
    "has_symbolic_markup",
    "math_equivalent",
    "normalize_text",
    "numbers_close",
    "parse_clock",
    "parse_number",
    "parse_range",
    "parse_ratio",
    "parse_yes_no",
    "plain_math",
    "ratios_agree",
    "read_number",
    "symbolic_value",
]
