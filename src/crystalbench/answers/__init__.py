"""Typed answer correctness: is the model's final answer right?

Paper mode (the default) follows the metric contract (``docs/metrics.md``, "Answer
correctness (typed)"): the answer type comes from the data or is inferred, and each type has
one rule. Text is read through :mod:`crystalbench.normalize`, the one home of answer
normalisation.

- ``multiple_choice``: both the prediction and the gold resolve to an option index, by a
  letter standing as a whole token, by the option text, or by the option's value; correct
  iff they agree. A hedge naming several options resolves to none (rule ``mc_ambiguous``);
  an option's text right after a negation ("not open") never names it.
- ``numeric``: the number the model commits to, within ``NUMERIC_ABS_TOL`` or
  ``NUMERIC_REL_TOL`` of the gold; symbolic golds and answers (radicals, pi) are evaluated
  with math-verify (rule ``symbolic``). Golds that are clock times, ranges or ratios are
  compared as such (``numeric_time``, ``numeric_range``, ``numeric_ratio``); an answer that
  hedges between values is wrong (``numeric_hedged``).
- ``yes_no``: the committed yes/no word; abstentions and hedges are wrong.
- ``free_form``: exact match after normalisation (accents folded), else the judge when one is
  configured; judge failure is unscored (``correct=None``, rule ``judge_failed``). No
  substring fallback.

Compat mode (``compat="crystal-metrics-0.2"``) reproduces crystal-metrics 0.2.0's answer
heuristics (:mod:`crystalbench.answers.compat`), so its published accuracies can be
recomputed. Its rules are named ``compat_*``.

A missing or blank prediction is wrong in both modes (rule ``missing``). A gold answer that
cannot be read as its type is our own bad data and raises :class:`InputError`.

Layout: :mod:`~crystalbench.answers.options` (options and resolving to one),
:mod:`~crystalbench.answers.answer_type` (type inference), :mod:`~crystalbench.answers.rules`
and :mod:`~crystalbench.answers.numeric` (the per-type rules),
:mod:`~crystalbench.answers.scoring` (the entry points, and the one dispatch to compat mode).
"""

from __future__ import annotations

from crystalbench.answers.answer_type import infer_answer_type
from crystalbench.answers.compat import compat_question  # public name kept from answers.py
from crystalbench.answers.options import (
    ChoiceResolution,
    item_options,
    parse_embedded_options,
    resolve_choice,
)
from crystalbench.answers.scoring import score_answer, score_answers

__all__ = [
    "ChoiceResolution",
    "compat_question",
    "infer_answer_type",
    "item_options",
    "parse_embedded_options",
    "resolve_choice",
    "score_answer",
    "score_answers",
]
