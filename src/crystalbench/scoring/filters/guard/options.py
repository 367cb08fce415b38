"""Which options of a multiple-choice item a step names: by letter or by the option's text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from crystalbench.normalize.choice_letters import find_choice_letters
from crystalbench.normalize.numbers import parse_number
from crystalbench.scoring.filters.guard.facts import StepFacts, step_facts
from crystalbench.scoring.filters.guard.lexicon import ORDINALS, STOP_WORDS
from crystalbench.scoring.filters.guard.rules import (
    CLOSE,
    Clash,
    about_the_same,
    numbers_differ,
    overlap,
)

__all__ = ["OptionMention", "OptionReader"]

_EXPLICIT_TIERS = frozenset({"whole", "boxed", "answer_phrase", "option_word", "parenthesised"})
"""Tiers of :func:`~crystalbench.normalize.choice_letters.find_choice_letters` that name an
option on purpose; a trailing capital ("... at vertex C.") does not."""
_ORDINAL_OPTION = re.compile(
    r"\b(?P<ordinal>first|second|third|fourth|fifth|sixth|last)\s+(?:option|choice)\b", re.I
)
_ARTICLES = frozenset({"the", "a", "an"})
_YES_NO = frozenset({"yes", "no", "true", "false"})


@dataclass(frozen=True, slots=True)
class OptionMention:
    """An option a step names."""

    index: int
    """0-based option index (``A`` is 0)."""
    by_letter: bool
    """Named by its letter ("option C") rather than by its text."""
    start: int
    """Offset in the step's prepared text."""
    end: int


def _letter_span(prepared: str, letter: str) -> tuple[int, int]:
    pattern = re.compile(rf"(?<![\w'])[(\[]?{letter}[)\]]?(?![\w'])", re.IGNORECASE)
    found = list(pattern.finditer(prepared))
    if not found:
        return 0, len(prepared)
    return found[-1].span()


class OptionReader:
    """Finds the options of one item in steps.

    Options that are numbers or yes/no are left to the number and negation rules, and
    options made only of function words or of one character are not looked for as text.

    Examples:
        >>> reader = OptionReader(["fox", "grass", "frog"])
        >>> found = reader.mentions(step_facts("The producer is the grass."))
        >>> [(m.index, m.by_letter) for m in found]
        [(1, False)]
        >>> [m.index for m in reader.mentions(step_facts("Select option C."))]
        [2]
    """

    def __init__(self, options: Sequence[str]) -> None:
        self.n_options = len(options)
        self._texts: list[tuple[int, tuple[str, ...]]] = []
        for index, option in enumerate(options):
            text = str(option).strip()
            if len(text) <= 1 or parse_number(text) is not None or text.lower() in _YES_NO:
                continue
            stems = [key for key, _, _ in step_facts(text).words]
            while stems and stems[0] in _ARTICLES:
                stems.pop(0)
            if stems and not all(stem in STOP_WORDS for stem in stems):
                self._texts.append((index, tuple(stems)))
        self._texts.sort(key=lambda item: -len(item[1]))
        self._seen: dict[str, list[OptionMention]] = {}
        self.option_words = {index: frozenset(stems) for index, stems in self._texts}

    def mentions(self, facts: StepFacts) -> list[OptionMention]:
        """The options ``facts``' step names, by letter or by text (each option once)."""
        cached = self._seen.get(facts.text)
        if cached is None:
            cached = self._seen[facts.text] = self._read(facts)
        return cached

    def _read(self, facts: StepFacts) -> list[OptionMention]:
        found: dict[int, OptionMention] = {}
        letters = find_choice_letters(facts.prepared, self.n_options or None)
        if letters.how in _EXPLICIT_TIERS:
            for letter in letters.letters:
                start, end = _letter_span(facts.prepared, letter)
                index = ord(letter) - ord("A")
                found.setdefault(index, OptionMention(index, True, start, end))
        for match in _ORDINAL_OPTION.finditer(facts.prepared):
            ordinal = ORDINALS[match["ordinal"].lower()]
            index = ordinal - 1 if ordinal > 0 else self.n_options - 1
            if 0 <= index < (self.n_options or 26):
                found.setdefault(index, OptionMention(index, True, *match.span()))
        if found:  # a letter is the step's commitment ("Gas is option C" names C)
            return sorted(found.values(), key=lambda mention: mention.index)
        words = facts.words
        keys = [key for key, _, _ in words]
        taken = [False] * len(keys)
        for index, stems in self._texts:
            width = len(stems)
            for first in range(len(keys) - width + 1):
                if tuple(keys[first : first + width]) != stems or any(taken[first : first + width]):
                    continue
                for position in range(first, first + width):
                    taken[position] = True
                start, end = words[first][1], words[first + width - 1][2]
                found.setdefault(index, OptionMention(index, False, start, end))
        return sorted(found.values(), key=lambda mention: mention.index)

    def clash(self, pred: StepFacts, ref: StepFacts) -> Clash | None:
        """Each step names one option, and not the same one.

        Two letters ("Select option C" / "Answer: D") conflict whatever else the steps say: a
        step that names one option commits to it. An option named by its text conflicts
        when the steps are otherwise
        :func:`~crystalbench.scoring.filters.guard.rules.about_the_same`
        thing ("the producer is the grass" / "the producer is the fox"); "the ice cube is
        a solid" / "the orange juice is a liquid" are about different things and stay
        compatible. A step naming several options (listing them) is never vetoed.

        Examples:
            >>> reader = OptionReader(["fox", "grass", "frog"])
            >>> reader.clash(step_facts("Therefore the producer is the grass."),
            ...              step_facts("Therefore the producer is the fox.")).reason
            'option'
            >>> reader.clash(step_facts("The answer is option B."),
            ...              step_facts("So the producer is the grass.")) is None
            True
        """
        left, right = self.mentions(pred), self.mentions(ref)
        if len(left) != 1 or len(right) != 1 or left[0].index == right[0].index:
            return None
        a, b = left[0], right[0]
        if not (a.by_letter and b.by_letter):
            ignore = {chr(ord("a") + a.index), chr(ord("a") + b.index)}
            ignore |= self.option_words.get(a.index, frozenset())
            ignore |= self.option_words.get(b.index, frozenset())
            if not about_the_same(pred, ref, ignore) or overlap(pred, ref, ignore) < CLOSE:
                return None
            if pred.dimensions != ref.dimensions or numbers_differ(pred, ref):
                return None  # "gas is the highest bar" / "the bar for coal shows 212"
        return Clash("option", (a.start, a.end), (b.start, b.end))
