"""The ``sample`` split: the bundled sample's reference steps, each copied with one fact
changed (see ``generate.py`` and README.md)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

from pairs_common import COLOURS, Pair, pair, words

HERE = Path(__file__).resolve().parent

SAMPLE = HERE.parents[2] / "src" / "crystalbench" / "data" / "sample" / "benchmark.jsonl"
_NUMBER = re.compile(
    r"(?<![\w.^/,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w.,]*\d)(?!\s*/)(?!st|nd|rd|th)"
)
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
_INDEX_BEFORE = re.compile(
    r"(?:row|column|step|figure|space|spaces|day|page|level|and|,)\s*$", re.I
)
_NEGATABLE = re.compile(r"\b(is|are|was|were|will|can|does|do)\b(?! not)")
_ANTONYMS = {
    "taller": "shorter", "shorter": "taller", "larger": "smaller", "smaller": "larger",
    "more": "fewer", "fewer": "more", "greater": "less", "higher": "lower", "lower": "higher",
    "tallest": "shortest", "shortest": "tallest", "largest": "smallest", "smallest": "largest",
    "highest": "lowest", "lowest": "highest", "increase": "decrease", "decrease": "increase",
    "increases": "decreases", "decreases": "increases", "warmer": "colder", "colder": "warmer",
    "attract": "repel", "repel": "attract", "open": "closed", "closed": "open",
    "empty": "full", "above": "below", "below": "above",
    "before": "after", "after": "before", "solid": "liquid", "liquid": "gas",
}  # fmt: skip
_QUESTION = re.compile(r"\bquestion\b|\basks?\b", re.I)
_COLOUR_WORD = re.compile(
    r"\b(red|blue|green|yellow|orange|purple|white|black|brown|pink|gray|grey)\b"
)
_COLOUR_AFTER_VERB = re.compile(
    r"\b(?:is|are|was|were|coloured|colored|painted|shaded)\s+(?:dark\s+|light\s+|bright\s+)?$"
)
_OPTION_LETTER = re.compile(r"(\boption\s+|\()([A-E])(\)?)")


def _changed_number(rng: random.Random, text: str) -> str:
    """ "6" -> "8", "2.5" -> "3.5": a different value written the same way."""
    if "," in text:
        return f"{int(text.replace(',', '')) + rng.choice([-1000, 1000, 2000]):,}"
    if "." in text:
        return f"{float(text) + rng.choice([-1.5, 1.0, 2.0]):.{len(text.split('.')[1])}f}"
    value = int(text)
    return str(
        max(
            0,
            value + rng.choice([-3, -2, -1, 1, 2, 3, 5])
            if value > 3
            else value + rng.choice([1, 2, 4]),
        )
    )


def sample_pairs(rng: random.Random) -> Iterator[tuple[str, Pair]]:
    """Each reference step of the bundled sample, copied with one fact changed (the attack
    of issue 24: reference wording, wrong fact) and, where it has a number, rewritten with
    that number spelled differently (must still match)."""
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        source = item["source"]
        options = item.get("options") or []
        for step in item["reference_steps"]:
            numbers = [
                m for m in _NUMBER.finditer(step)
                if not _YEAR.match(m.group(1)) and not _INDEX_BEFORE.search(step[: m.start()])
                and "sqrt" not in step[max(0, m.start() - 6) : m.start()]
            ]  # fmt: skip
            if numbers:
                m = rng.choice(numbers)
                changed = step[: m.start()] + _changed_number(rng, m.group(1)) + step[m.end() :]
                if changed != step:
                    yield (
                        item["id"],
                        pair("contradiction", "number", source, step, changed, options),
                    )
                small = [n for n in numbers if n.group(1).isdigit() and int(n.group(1)) < 20]
                if small:
                    n = rng.choice(small)
                    spelled = step[: n.start()] + words(int(n.group(1))) + step[n.end() :]
                    yield (
                        item["id"],
                        pair("paraphrase", "number-words", source, step, spelled, options),
                    )
            if "°" in step:
                yield (
                    item["id"],
                    pair(
                        "paraphrase",
                        "unit-spelling",
                        source,
                        step,
                        step.replace("°", " degrees"),
                        options,
                    ),
                )
            negatable = _NEGATABLE.search(step)
            if (
                negatable
                and not _QUESTION.search(step)
                and " not " not in step
                and "n't" not in step
                and " no " not in step.lower()
            ):
                negated = step[: negatable.end()] + " not" + step[negatable.end() :]
                yield item["id"], pair("contradiction", "negation", source, step, negated, options)
            for word, opposite in _ANTONYMS.items():
                found = re.search(rf"\b{word}\b", step)
                if found:
                    swapped = step[: found.start()] + opposite + step[found.end() :]
                    yield (
                        item["id"],
                        pair("contradiction", "relation", source, step, swapped, options),
                    )
                    break
            colour = _COLOUR_WORD.search(step)
            if colour:
                other_colour = rng.choice([c for c in COLOURS if c != colour.group(1)])
                recoloured = step[: colour.start()] + other_colour + step[colour.end() :]
                if _COLOUR_AFTER_VERB.search(step[: colour.start()]):
                    yield (
                        item["id"],
                        pair("contradiction", "colour", source, step, recoloured, options),
                    )
                else:  # "the red lamp" -> "the green lamp": another thing, not a contradiction
                    yield (
                        item["id"],
                        pair("unrelated", "swapped-identifier", source, step, recoloured, options),
                    )
            letter = _OPTION_LETTER.search(step)
            if letter:
                other_letter = rng.choice([c for c in "ABCD" if c != letter.group(2)])
                relettered = step[: letter.start(2)] + other_letter + step[letter.end(2) :]
                yield item["id"], pair("contradiction", "option", source, step, relettered, options)
