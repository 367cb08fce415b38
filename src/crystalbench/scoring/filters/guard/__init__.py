"""Fact-aware matching: keep step pairs that state incompatible facts from matching.

The paper's matcher pairs steps by the cosine of their sentence embeddings, and embeddings
barely see the facts that make a step right or wrong: with MiniLM, "The angle ABC is 40
degrees." and "The angle ABC is 50 degrees." score 0.89. The fact guard (``--guard facts``;
the default ``none`` is the paper) reads both steps of a pair above the threshold and vetoes
the pair when they state incompatible facts; greedy one-to-one matching then goes on to the
next best pair.

Pure and deterministic: no I/O, no model. The rules
(:mod:`crystalbench.scoring.filters.guard.rules`,
:mod:`crystalbench.scoring.filters.guard.options`) compare the facts read from each step
(:mod:`crystalbench.scoring.filters.guard.facts`), reusing :mod:`crystalbench.normalize` for
numbers:

- ``number``: different values of one quantity ("40 degrees" / "50 degrees", "3 apples" /
  "7 apples"); equal values written differently agree ("16" / "sixteen", "0.5" / "1/2" /
  "50%", "40°" / "40 degrees", "1 m" / "100 cm"), and a step with an extra intermediate
  value is no contradiction ("4 squared is 16" / "The area is 16");
- ``negation``: "The door is open." / "The door is not open.", "yes" / "no";
- ``relation``: opposed comparatives, positions, changes and states of the same things
  ("taller" / "shorter", "left of" / "right of", "increases" / "decreases"), with arguments
  swapped ("B is shorter than A" restates "A is taller than B"), and a superlative said of two
  different things ("the left console is the smallest" / "the middle console is the
  smallest");
- ``option``: different option letters, or different option texts of the item;
- ``colour``: one thing given two colours;
- ``binding`` (reported as ``number``): one thing given another value however the steps are
  framed ("The highest bar is Chile with 11,450 arrivals." / "The bar for Chile shows a value
  of 12,450."), or another thing of the same kind with another value ("Side AC is 6." /
  "Side BC is 8.": different facts);
- ``computation`` (reported as ``number``): the same operators with other operands or
  results ("11,450 - 3,900 = 7,550" / "12,450 - 3,200 = 9,250").

Under both guards a predicted step that *copies* a reference step with its values or one
slot (a name, a label, a position, a relation word) changed to a wrong fact matches nothing
in the item (:mod:`crystalbench.scoring.filters.guard.slots`; veto reason ``entity`` for a
swapped thing), so it cannot go on to match a neighbouring reference step (issue 30).

In the scoring engine the guard is a candidate filter (:class:`GuardFilter`,
``ScoreConfig(guard="facts")`` or ``"facts-strict"``; ``--guard`` on ``crystal score`` and
``run``; ``RewardScorer(guard=...)``): it reads only the pairs the greedy walk reaches and
remembers its decisions in the embedding cache's file
(:mod:`crystalbench.scoring.filters.guard.memo`).
``facts-strict`` adds a step scope: a predicted step that contradicts its closest reference
step (the one it restates) matches nothing. ``docs/metrics.md``, "Fact-aware matching".

Every rule but the option letters also asks that the two steps be about the same things
(:func:`~crystalbench.scoring.filters.guard.rules.about_the_same`): "Side AC is 6." and
"Side BC is 8." are about different sides and are not vetoed. The rules favour precision:
when they cannot tell whether two values are about the same thing they keep the pair. Each
rule's docstring lists what it does not catch; ``benchmarks/data/fact_pairs`` measures it.

Examples:
    >>> from crystalbench.scoring.filters.guard import FactGuard
    >>> FactGuard().check("The door is not open.", "The door is open.").reason
    'negation'
"""

from __future__ import annotations

from crystalbench.scoring.filters.guard.candidates import GuardFilter
from crystalbench.scoring.filters.guard.facts import StepFacts, step_facts
from crystalbench.scoring.filters.guard.guard import (
    FactGuard,
    build_guard,
    veto_copied_steps,
    veto_whole_steps,
    without_vetoed,
)
from crystalbench.scoring.filters.guard.records import (
    VETO_REASONS,
    Conflict,
    ConflictSpans,
    TextSpan,
    Veto,
    VetoReason,
)

__all__ = [
    "VETO_REASONS",
    "Conflict",
    "ConflictSpans",
    "FactGuard",
    "GuardFilter",
    "StepFacts",
    "TextSpan",
    "Veto",
    "VetoReason",
    "build_guard",
    "step_facts",
    "veto_copied_steps",
    "veto_whole_steps",
    "without_vetoed",
]
