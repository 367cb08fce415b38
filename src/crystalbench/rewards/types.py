"""Records of the reward side: what a completion earned, and the knobs that decide it.

Every record is frozen, forbids unknown fields and documents each field, like
:mod:`crystalbench.types`. :class:`RewardSignals` is everything measured about one completion
(format, answer, step matching) independent of how the measurements are weighted;
:class:`RewardBreakdown` adds the weighting of one reward kind: its named components and their
total. The split lets one encoder pass feed several reward functions (TRL calls each reward
function separately, PCGrad needs the answer part and the step part apart).
:class:`SignalSource` is the protocol every adapter (TRL, verl, EasyR1) and the trainer read
signals through, so it lives here, below all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from crystalbench.defaults import CPR_ANSWER_WEIGHT, CPR_STEP_WEIGHT, CPR_WRONG_DISCOUNT
from crystalbench.types import BenchmarkItem, Record

RewardKind = Literal[
    "format",
    "answer",
    "step_f1",
    "answer_only",
    "curriculum_phase1",
    "composite",
    "cpr",
    "cpr_answer",
    "cpr_reasoning",
]
"""Which reward a breakdown totals.

- ``format``: 1 when the completion is exactly the CRYSTAL JSON object, else 0;
- ``answer``: 1 when the JSON answer is correct (paper rules), else 0;
- ``step_f1``: Match F1 of the JSON steps against the reference steps;
- ``answer_only``: ``w_format * format + w_answer * answer`` (the paper's Answer-Only);
- ``curriculum_phase1``: the same sum, named for phase 1 of CPR-Curriculum;
- ``composite``: ``w_format * format + w_answer * answer + w_step * F1``;
- ``cpr``: ``a_w + s_w * F1`` when the answer is correct, ``lambda * s_w * F1`` otherwise;
- ``cpr_answer``: CPR's answer part ``a_w * c``;
- ``cpr_reasoning``: CPR's step part ``s_w * F1 * (c + lambda * (1 - c))``;
  ``cpr_answer + cpr_reasoning == cpr`` exactly.
"""

REWARD_KINDS: tuple[str, ...] = get_args(RewardKind)

STEP_KINDS: frozenset[str] = frozenset(
    {"step_f1", "composite", "cpr", "cpr_answer", "cpr_reasoning"}
)
"""Kinds that need reference steps; ``cpr_answer`` is included so that it is unscored exactly
when ``cpr_reasoning`` is, and the two always add up to ``cpr``."""

ANSWER_KINDS: frozenset[str] = frozenset(REWARD_KINDS) - {"format", "step_f1"}
"""Kinds that need a gold answer (all but ``format`` and ``step_f1``)."""

FormatError = Literal[
    "not_text",
    "too_long",
    "no_json",
    "text_outside_json",
    "bad_think_block",
    "bad_code_fence",
    "invalid_json",
    "not_object",
    "duplicate_key",
    "missing_key",
    "extra_key",
    "steps_not_list",
    "no_steps",
    "too_many_steps",
    "step_not_string",
    "blank_step",
    "step_too_long",
    "answer_not_string",
    "blank_answer",
    "answer_too_long",
    "invalid_unicode",
]
"""Why a completion failed the format check (see ``docs/rewards.md``)."""


class FormatRules(Record):
    """What the strict format check tolerates, and the caps that bound the work per completion.

    A completion over a cap fails the format check (reward 0) before anything is encoded, so
    an enormous completion costs a length check, never an encoder pass.
    """

    allow_code_fence: bool = True
    """Accept the object wrapped in one Markdown code fence (```` ```json ... ``` ````)."""
    allow_think: bool = False
    """Accept one leading ``<think>...</think>`` block before the object (reasoning models).
    Its content is never scored."""
    max_chars: int = Field(16_000, ge=1)
    """Longest completion, in characters, that is parsed at all."""
    max_steps: int = Field(64, ge=1)
    """Most reasoning steps (CRYSTAL references have at most 42)."""
    max_step_chars: int = Field(1_000, ge=1)
    """Longest single step, in characters."""
    max_answer_chars: int = Field(300, ge=1)
    """Longest answer, in characters."""


class StepGuards(Record):
    """Two guards that keep step F1 from paying for copying instead of reasoning.

    Blocked steps still count as predicted steps (they lower precision) but can match no
    reference step. With both guards off, the reward's step F1 is exactly evaluation's
    Match F1; on chains that neither repeat a step verbatim nor copy the question, the
    guards change nothing.
    """

    block_repeats: bool = True
    """A step whose words (case and punctuation folded) repeat an earlier step's cannot match:
    without this, k copies of one vague step match k different reference steps."""
    block_question_copies: bool = True
    """A step that is mostly one verbatim run of the question's (or options') words cannot
    match: reference chains restate the question, so a copy would earn recall for free."""
    copy_min_words: int = Field(1, ge=1)
    """Shortest step, in words, that can count as a copy (1: an option's text alone is one)."""
    copy_coverage: float = Field(0.8, gt=0.0, le=1.0)
    """Share of a step's words that one run copied from the question must cover."""


class RewardWeights(Record):
    """Weights of the additive rewards and the constants of CPR (paper values by default)."""

    format: float = 1.0
    """Weight of the format term in ``answer_only``, ``curriculum_phase1`` and ``composite``."""
    answer: float = 1.0
    """Weight of the answer term in ``answer_only``, ``curriculum_phase1`` and ``composite``."""
    step: float = 1.0
    """Weight of the step-F1 term in ``composite``."""
    cpr_answer: float = CPR_ANSWER_WEIGHT
    """a_w: CPR's reward for a correct answer."""
    cpr_step: float = CPR_STEP_WEIGHT
    """s_w: CPR's weight on step F1."""
    cpr_wrong_discount: float = Field(CPR_WRONG_DISCOUNT, ge=0.0, le=1.0)
    """lambda: CPR's discount on the step term when the answer is wrong."""
    verified_precision: float = Field(0.0, ge=0.0)
    """Weight of the step verifier's term (not in the paper; 0: off, every reward as
    before): ``verified_precision`` times this is added to the reward of every kind, when
    the scorer has a verifier and the completion's figure could be computed. Absent from
    dumps when 0."""

    @model_serializer(mode="wrap")
    def _omit_unused_verifier_weight(
        self, handler: SerializerFunctionWrapHandler
    ) -> dict[str, Any]:
        """Weights without the verifier's term dump what they dumped before it existed."""
        data: dict[str, Any] = handler(self)
        if self.verified_precision == 0.0:
            data.pop("verified_precision", None)
        return data


class RewardSignals(Record):
    """Everything measured about one completion, before any weighting."""

    format_ok: bool
    """The completion is exactly the CRYSTAL JSON object (see :class:`FormatRules`)."""
    format_error: FormatError | None = None
    """Why the format check failed; ``None`` when it passed."""
    answer: str | None = None
    """The JSON ``answer`` (stripped) when the format check passed."""
    answer_correct: bool | None = None
    """Answer verdict; ``False`` when the format failed; ``None`` when no gold answer was
    given or the judge could not decide."""
    answer_rule: str = "unscored"
    """Rule that decided the answer (``mc_letter``, ``numeric``, ``format_failed``...)."""
    n_steps: int = 0
    """Steps taken from the JSON (0 when the format failed)."""
    n_ref: int = 0
    """Non-blank reference steps (0 when none were given)."""
    n_matched: int = 0
    """Accepted step pairs of greedy one-to-one matching."""
    n_repeated: int = 0
    """Steps blocked from matching as verbatim repeats of an earlier step."""
    n_question_copies: int = 0
    """Steps blocked from matching as copies of the question or its options."""
    step_precision: float | None = None
    """Matched / predicted steps; ``None`` when no reference steps were given."""
    step_recall: float | None = None
    """Matched / reference steps; ``None`` when no reference steps were given."""
    step_f1: float | None = None
    """Match F1 (0 when the format failed); ``None`` when no reference steps were given."""
    verified_precision: float | None = None
    """With a step verifier (:class:`~crystalbench.rewards.scorer.RewardScorer`'s
    ``verifier``, weight ``verified_precision`` above 0): (matched or ``supported``
    steps) / (predicted steps - unverified); steps blocked by the step guards count as not
    supported, filler as ``irrelevant`` without a call. ``None`` (and absent from dumps):
    no verifier, or no step left to count."""
    n_unverified: int = 0
    """Steps the verifier left without a label (failed calls); absent from dumps when 0."""

    @model_serializer(mode="wrap")
    def _omit_unused_verifier(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Signals without a verifier dump what they dumped before it existed."""
        data: dict[str, Any] = handler(self)
        if self.verified_precision is None:
            data.pop("verified_precision", None)
        if self.n_unverified == 0:
            data.pop("n_unverified", None)
        return data


class RewardBreakdown(RewardSignals):
    """:class:`RewardSignals` plus the weighting of one reward kind."""

    kind: RewardKind
    """The reward this breakdown totals."""
    components: dict[str, float] = Field(default_factory=dict)
    """Named weighted terms whose sum is ``total`` (empty when unscored)."""
    total: float | None
    """The reward; ``None`` when the row cannot be scored (no gold answer or no reference
    steps where the kind needs them, or the judge failed)."""


class HeldoutGrader(Record):
    """A grader logged beside the reward and never trained on: the check that a gain is not
    grader fitting.

    In ``crystal train`` it is a TRL reward function of weight 0 (logged as
    ``rewards/heldout_<name>/mean``) and is scored at each validation (``heldout/<name>`` in
    ``validation.jsonl``; selectable by ``evaluation.selection_metric``). In verl and EasyR1
    (the ``heldout`` reward keyword) it is one more key of each result dict,
    ``heldout_<name>``, that the trainer logs and never adds to the reward.

    Examples:
        >>> HeldoutGrader(name="f1_minilm", encoder="minilm-offline").kind
        'step_f1'
    """

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """Short name (``f1_minilm``, ``accuracy``): the logged key."""
    kind: RewardKind = "step_f1"
    """What it measures: ``step_f1`` (Match F1 of the JSON steps), ``answer``, ``format``,
    ``cpr``..."""
    encoder: str | None = None
    """Encoder of its step matching (``None``: the reward's encoder); another family than the
    reward's makes it a held-out grader of the reasoning."""
    tau: float | None = Field(None, ge=-1.0, le=1.0)
    """Its matching threshold (``None``: the reward's tau; use the encoder's own threshold)."""


@runtime_checkable
class SignalSource(Protocol):
    """Anything that turns a batch into :class:`RewardSignals`: the in-process
    :class:`~crystalbench.rewards.scorer.RewardScorer` or the reward-server client
    :class:`~crystalbench.rewards.client.RemoteRewardScorer`."""

    weights: RewardWeights

    def signals(
        self, completions: Sequence[Any], items: Sequence[BenchmarkItem | None]
    ) -> list[RewardSignals]:
        """One :class:`RewardSignals` per completion."""
        ...
