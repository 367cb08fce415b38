"""Typed, frozen records that flow through crystalbench.

Data flows one way: ``BenchmarkItem`` + ``Prediction`` -> ``ParsedResponse`` ->
``ChainScore`` + ``AnswerVerdict`` -> ``ItemResult`` -> ``RunSummary``. Every record is a
pydantic model with ``extra="forbid"`` so a misspelt field fails loudly.

The step metrics of a chain are declared once, in :class:`ChainScore`; an
:class:`ItemResult` shares those fields (it is a ``ChainScore`` with the item's identity and
answer around it), so one line of ``examples.jsonl`` stays flat. What each metric means, and
which summary metric averages which per-item field, is declared in :mod:`crystalbench.metrics`.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from crystalbench.config.settings import SCHEMA_VERSION
from crystalbench.precedence import check_precedence

AnswerType = Literal["multiple_choice", "numeric", "yes_no", "free_form"]
"""How an answer is judged; see :func:`crystalbench.answers.infer_answer_type`."""

ANSWER_TYPES: tuple[str, ...] = ("multiple_choice", "numeric", "yes_no", "free_form")

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")

ParseStatus = Literal[
    "structured",
    "json",
    "json_repaired",
    "json_truncated",
    "markup",
    "sentences",
    "thinking_json",
    "thinking_markup",
    "thinking_sentences",
    "answer_only",
    "empty",
    "unparseable",
]
"""Which path :func:`crystalbench.parse_response` took.

- ``structured``: the prediction already held a list of steps (no text to parse);
- ``json``: the CRYSTAL JSON schema parsed as is (fences and surrounding prose allowed);
- ``json_repaired``: JSON parsed after repairs (trailing commas, quotes, objects as steps);
- ``json_truncated``: the JSON was cut off; the complete steps before the cut were kept;
- ``markup``: steps from "Step N:", numbered or bulleted lines, answer from tags or
  "Answer:" / "Final answer" / ``\\boxed{}``;
- ``sentences``: last resort, the text was split into sentences;
- ``thinking_json``, ``thinking_markup``, ``thinking_sentences``: the steps come from a think
  block (``<think>``, ``<thinking>``, ``<reasoning>``, ``◁think▷``, the part before a bare
  ``</think>``, or a block cut off by the token limit), read as JSON, as markup or as
  sentences, because the part after it held no steps of its own (only an answer such as
  ``<answer>B</answer>`` or "The answer is \\boxed{40}", or nothing); the model's
  self-checks ("Let me double-check.", "Wait,") are dropped from them. When the final part
  has its own steps, those are scored with their own status and the block stays aside;
- ``answer_only``: an answer was found but no steps;
- ``empty``: no text, only whitespace or chat tokens, or an empty think block;
- ``unparseable``: text was present but neither steps nor an answer could be found.
"""

PARSE_FAILED_STATUSES: frozenset[str] = frozenset({"empty", "unparseable"})
"""Statuses counted in ``n_parse_failed``."""


class Record(BaseModel):
    """Base of every crystalbench record: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class BenchmarkItem(Record):
    """One CRYSTAL question with its reference chain."""

    id: str
    """Stable item id (the row index for the hub dataset)."""
    source: str
    """Source dataset in lower case: mathvision, scienceqa, realworldqa, mmvp, plotqa, ..."""
    question: str
    """Question text as shown to the model (options excluded when given separately)."""
    options: list[str] = Field(default_factory=list)
    """Answer options in order (A, B, C...); empty for open questions."""
    answer: str
    """Gold answer: a letter, an option's text, a number, yes/no or free text."""
    answer_type: AnswerType | None = None
    """Answer type from the data; ``None`` means infer it from options and gold."""
    reference_steps: list[str]
    """Ordered reference reasoning chain: the primary one (the only one compat mode scores)."""
    reference_chains: list[list[str]] = Field(default_factory=list)
    """Alternative valid reference chains besides the primary one (empty: only the primary).

    In paper mode an item is scored against every chain and keeps the best one by Match F1
    (ties: Ordered F1, then the lower index); chain 0 is ``reference_steps`` and chain ``k``
    is ``reference_chains[k - 1]`` (see :attr:`all_reference_chains`)."""
    reference_precedence: list[tuple[StrictInt, StrictInt]] | None = None
    """Partial order of ``reference_steps``: ``[a, b]`` means step ``a`` must come before
    step ``b`` (0-based; the transitive closure is implied, steps it does not order are
    interchangeable). ``None``: the chain's own order, as the paper. Applies to the primary
    chain only; alternative chains keep their own order (``docs/metrics.md``, "Partial-order
    references"). Checked when the item is built (:func:`~crystalbench.precedence.
    check_precedence`) and kept sorted, each pair once."""
    image: str | None = None
    """Image reference: a file path (absolute after loading) or a loader-specific key."""
    difficulty: Difficulty | None = None
    """Difficulty tier from the data; ``None`` means derive it (see ``difficulty.py``)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the source carried (subject, level, original id...)."""

    @field_validator("reference_precedence")
    @classmethod
    def _precedence_fits_the_chain(
        cls, value: list[tuple[int, int]] | None, info: ValidationInfo
    ) -> list[tuple[int, int]] | None:
        steps = info.data.get("reference_steps")
        if value is None or steps is None:  # no steps: their own error is reported
            return value
        return check_precedence(value, len(steps))

    @model_serializer(mode="wrap")
    def _omit_no_alternatives(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Items without alternative chains or a precedence are written as before: no
        ``reference_chains`` or ``reference_precedence`` key (benchmark files, fingerprints
        and golden files of single-chain items do not move)."""
        data: dict[str, Any] = handler(self)
        if not self.reference_chains:
            data.pop("reference_chains", None)
        if self.reference_precedence is None:
            data.pop("reference_precedence", None)
        return data

    @property
    def all_reference_chains(self) -> list[list[str]]:
        """Every reference chain, the primary first: ``[reference_steps, *reference_chains]``.

        Examples:
            >>> item = BenchmarkItem(id="1", source="x", question="?", answer="4",
            ...                      reference_steps=["Add 2 and 2."],
            ...                      reference_chains=[["Double 2."]])
            >>> item.all_reference_chains
            [['Add 2 and 2.'], ['Double 2.']]
        """
        return [self.reference_steps, *self.reference_chains]


class Prediction(Record):
    """One model output for one item, as read from a predictions file."""

    id: str
    """Id of the benchmark item this prediction answers."""
    reasoning_steps: list[str] | None = None
    """Steps when the file already holds them; ``None`` when only raw text is given."""
    answer: str | None = None
    """Answer when the file already holds it."""
    response: str | None = None
    """Raw model text, parsed with :func:`crystalbench.parse_response` when steps are absent."""
    model: str | None = None
    """Model name, when the file records it."""


class ParsedResponse(Record):
    """What :func:`crystalbench.parse_response` found in a model's text."""

    steps: list[str]
    """Predicted reasoning steps, in order, stripped, blank ones removed."""
    answer: str | None
    """Predicted final answer, or ``None`` when none was found."""
    status: ParseStatus
    """Which parsing path produced the result, or why nothing was found."""
    raw: str
    """The text that was parsed, unchanged."""
    thinking: str | None = None
    """Content of think blocks. It is scored only when ``status`` starts with ``thinking_``
    (the final part had no steps of its own); otherwise it is kept for inspection."""
    extraction: str | None = None
    """The rule that took ``answer``: a key of
    :data:`crystalbench.parsing.answer.ANSWER_RULES` (``boxed``, ``answer_line``,
    ``answer_next_line``, ``prompt_phrase``, ``given``...); ``None`` when no rule committed
    (``answer`` is ``None`` too)."""
    truncated: bool = False
    """The reply stops mid-reasoning (cut off by the token limit): see
    :func:`crystalbench.parsing.response.is_truncated`."""

    @property
    def failed(self) -> bool:
        """True when the output yielded neither steps nor an answer."""
        return self.status in PARSE_FAILED_STATUSES


class StepMatch(Record):
    """One accepted (predicted step, reference step) pair."""

    pred_index: int
    """0-based index into the predicted steps."""
    ref_index: int
    """0-based index into the reference steps."""
    cosine: float
    """Cosine similarity of the two step embeddings."""


class ChainScore(Record):
    """Step metrics of one predicted chain against one reference chain.

    Built by :func:`crystalbench.scoring.matching.score_chain`; every :class:`ItemResult` carries
    the same fields (they are declared here only).
    """

    n_pred: int
    """m: number of predicted steps scored (blank ones excluded, except in compat mode)."""
    n_ref: int
    """n: number of (non-blank) reference steps."""
    n_blank_dropped: int = 0
    """Blank predicted or reference steps dropped before embedding."""
    matches: list[tuple[int, int, float]]
    """Accepted pairs as ``[pred_idx, ref_idx, cosine]``, in acceptance order."""
    out_of_order: list[tuple[int, int]]
    """Matched pairs ``[pred_idx, ref_idx]`` outside the longest increasing subsequence."""
    precision: float
    """Matched share of the predicted steps (``|M| / m``; see ``docs/metrics.md``)."""
    recall: float
    """Matched share of the reference steps (``|M| / n``)."""
    f1: float
    """Match F1: harmonic mean of precision and recall (0 when both are 0)."""
    lis: float
    """Longest-increasing-subsequence ratio of the matches (1.0 with fewer than 2)."""
    kendall: float
    """Kendall tau of the matches normalised to [0, 1] (1.0 with fewer than 2)."""
    ordered_f1: float
    """``f1 * ((1 - alpha) + alpha * order)``."""


class AnswerVerdict(Record):
    """Whether a predicted answer is correct, and which rule decided."""

    correct: bool | None
    """True / False, or ``None`` when unscored (e.g. the judge failed)."""
    rule: str
    """Rule that decided: ``missing``, ``mc_letter``, ``mc_text``, ``numeric``, ``symbolic``,
    ``yes_no``, ``exact``, ``judge``, ``judge_failed``, ``no_match``..."""
    answer_type: AnswerType
    """Type the answer was judged as."""
    predicted: str | None = None
    """The normalised form the rule compared (letter, number, text)."""
    gold: str | None = None
    """The normalised gold the rule compared against."""
    detail: str | None = None
    """Optional human-readable explanation (e.g. the judge's reason)."""


VetoReason = Literal["number", "negation", "relation", "option", "colour", "entity"]
"""Why the fact guard vetoed a step pair (:mod:`crystalbench.scoring.filters.guard`):

- ``number``: the two steps give different values of one quantity ("40 degrees" / "50
  degrees", "3 apples" / "7 apples");
- ``negation``: one step negates what the other states ("open" / "not open", "yes" / "no");
- ``relation``: opposed comparatives, positions, changes or states said of the same things
  ("taller" / "shorter", "left of" / "right of", "increases" / "decreases", "solid" /
  "liquid"), the same relation with its arguments swapped, or one superlative said of two
  different things ("the left console is the smallest" / "the middle console is the
  smallest");
- ``option``: the steps name different options of the item (letters or option texts);
- ``colour``: the steps give one thing different colours;
- ``entity``: the predicted step copies the reference step with the thing it is about
  swapped for another ("The bar for *Peru* ends at 58.5%." / "The bar for *Fiji* ends at
  58.5%."): another fact (:mod:`crystalbench.scoring.filters.guard.slots`).
"""

VETO_REASONS: tuple[str, ...] = get_args(VetoReason)
"""The veto reasons, read off :data:`VetoReason`."""

VetoScope = Literal["pair", "step"]
"""What a veto removed from the candidates: the ``pair`` alone (``--guard facts``: greedy
matching goes on to the next best pair), or the whole predicted ``step`` (``--guard
facts-strict``, where the pair is the step and its closest reference step: the step states a
wrong fact, so it matches nothing)."""


class TextSpan(Record):
    """A stretch of a step's text.

    Examples:
        >>> TextSpan(start=13, end=23, text="40 degrees").model_dump()
        {'start': 13, 'end': 23, 'text': '40 degrees'}
    """

    start: int
    """Character offset of the first character in the step as written."""
    end: int
    """Character offset just past the last character."""
    text: str
    """``step[start:end]``."""


class ConflictSpans(Record):
    """The two stretches of text that conflict, one in each step."""

    pred: TextSpan
    """In the predicted step."""
    ref: TextSpan
    """In the reference step."""


class Veto(Record):
    """A step pair the fact guard kept from matching: one entry of an item record's
    ``vetoed`` list (``examples.jsonl``).

    The guard reads the pairs the greedy walk reaches (a pair whose steps are both still
    unmatched when its turn comes): these are the pairs that would have matched but for the
    guard, and the only ones recorded.

    Examples:
        >>> span = TextSpan(start=0, end=2, text="40")
        >>> veto = Veto(pred=0, ref=3, cosine=0.89, reason="number",
        ...             spans=ConflictSpans(pred=span, ref=span))
        >>> sorted(veto.model_dump()), veto.scope
        (['cosine', 'pred', 'reason', 'ref', 'scope', 'spans'], 'pair')
    """

    pred: int
    """0-based index of the predicted step (into ``pred_steps``)."""
    ref: int
    """0-based index of the reference step (into ``ref_steps``)."""
    cosine: float
    """Cosine similarity of the pair (it passed the threshold)."""
    reason: VetoReason
    """Which rule vetoed the pair (see :data:`VetoReason`)."""
    spans: ConflictSpans
    """The conflicting text in each step."""
    scope: VetoScope = "pair"
    """``pair``: this pair is no candidate; ``step`` (``facts-strict``): the predicted step
    contradicts its closest reference step and matches nothing (see :data:`VetoScope`)."""

    @classmethod
    def from_conflict(
        cls, conflict: Any, *, pred: int, ref: int, cosine: float, scope: VetoScope = "pair"
    ) -> Veto:
        """The veto of pair ``(pred, ref)`` for a conflict a guard found (a
        :class:`crystalbench.scoring.filters.guard.Conflict`: its ``reason`` and ``spans``)."""
        return cls(
            pred=pred,
            ref=ref,
            cosine=cosine,
            reason=conflict.reason,
            spans=conflict.spans,
            scope=scope,
        )


StepLabel = Literal["supported", "wrong_perception", "wrong_logic", "irrelevant"]
"""A step verifier's label: ``supported`` (correct for the image and question),
``wrong_perception`` (states something the image does not show), ``wrong_logic`` (an
invalid inference or calculation), ``irrelevant`` (restates the question, filler,
off-topic)."""


class StepVerdict(Record):
    """The step verifier's verdict on one predicted step: one entry of an item record's
    ``verdicts`` list (``crystal score --verify``; :mod:`crystalbench.scoring.verify`)."""

    pred: int
    """0-based index of the predicted step (into ``pred_steps``)."""
    label: StepLabel | None
    """The label, or ``None`` when the verifier gave none (``error`` says why): the step is
    then counted in ``n_unverified``, never as wrong."""
    p_correct: float | None = None
    """Probability that the step is correct: P(yes) / (P(yes) + P(no)) of one constrained
    token where the server gives logprobs, else the probability the JSON reply states; 0.0 for
    a step a rule labelled wrong, ``None`` for filler and failures."""
    reason: str | None = None
    """The verifier's (or the rule's) short reason."""
    judge: str
    """Who decided: ``model:<name>`` for the verifier model, ``rule:<name>`` for a rule of
    the cascade (``rule:filler``, ``rule:guard-<reason>``)."""
    error: str | None = None
    """Why there is no label (connection, timeout, unreadable reply, dry run)."""
    votes: dict[str, StepLabel | None] | None = None
    """With several judges (``verifier.judges``): each judge's label (``None``: its call
    failed), by ``model:<name>``; ``label`` is their majority. ``None``, and absent from the
    record: one judge, or a rule decided."""

    @model_serializer(mode="wrap")
    def _omit_votes(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A one-judge verdict is written as it was before panels existed."""
        data: dict[str, Any] = handler(self)
        if self.votes is None:
            data.pop("votes", None)
        return data


class JudgeFigures(Record):
    """One judge of a panel, scored alone: its own verdicts in place of the majority."""

    verified_precision: float | None
    """(matched or ``supported`` by this judge) / (predicted steps - this judge's
    unverified)."""
    hallucination_rate: float | None
    """``wrong_perception`` by this judge / (predicted steps - this judge's unverified)."""
    n_unverified: int
    """Steps this judge was asked about and gave no label (failed calls)."""
    labels: dict[str, int]
    """Steps per label this judge gave (rule verdicts included, as in the pooled counts)."""
    agreement_with_majority: float | None
    """Share of this judge's labels equal to the panel's majority label (steps the model was
    asked about, where the judge gave a label)."""


class PanelAgreement(Record):
    """How far the judges of a panel agree (``summary.json``'s ``verification.agreement``):
    over the steps the judges were asked about (rule verdicts are not judged by them)."""

    judges: list[str]
    """The judges, ``model:<name>``, in the config's order."""
    n_units: int
    """Steps at least two judges labelled (the units of the statistics)."""
    krippendorff_alpha: float | None
    """Nominal Krippendorff's alpha over the four labels (failed calls missing); ``None``
    when undefined (no unit, or one label throughout)."""
    krippendorff_alpha_supported: float | None
    """The same over ``supported`` against any other label: agreement on what
    ``verified_precision`` counts."""
    percent_agreement: float | None
    """Share of the units whose labels are all the same."""
    n_ties: int
    """Steps whose vote tied (the less favourable label won: wrong_perception, wrong_logic,
    irrelevant, supported)."""
    by_judge: dict[str, JudgeFigures]
    """Each judge scored alone, by ``model:<name>``."""


class VerificationCounts(Record):
    """The verifier's figures over a set of items (pooled over predicted steps)."""

    n_steps: int
    """Predicted steps of the items."""
    n_matched: int
    """Of them, steps a reference step matched."""
    n_checked: int
    """Steps that needed a verdict (unmatched ones, or every step with ``verify="all"``)."""
    n_unverified: int
    """Checked steps left without a label (failed calls): out of every denominator."""
    verified_precision: float | None
    """(matched or ``supported`` steps) / (predicted steps - unverified); ``None`` with no
    step to count."""
    hallucination_rate: float | None
    """``wrong_perception`` steps / (predicted steps - unverified)."""
    labels: dict[str, int]
    """Checked steps per label (every label, 0 included)."""
    label_shares: dict[str, float]
    """Each label's share of the labelled checked steps (0.0 each when none is labelled)."""


class VerificationSummary(VerificationCounts):
    """``summary.json``'s ``verification``: the figures, how they were reached, and by source
    and difficulty."""

    mode: str
    """``unmatched`` or ``all``."""
    judge: dict[str, Any]
    """The verifier's identity: model, URL, prompt name and hash, served model ids,
    ``system_fingerprint`` values, the options that shape a verdict."""
    n_rule_labelled: int
    """Checked steps the cascade's rules labelled without a call (calls saved)."""
    n_model_verdicts: int
    """Checked steps the model labelled (from the cache or a request)."""
    requests: int
    """Requests sent."""
    cache_hits: int
    """Replies served from the cache."""
    prompt_tokens: int
    """Prompt tokens the server reported."""
    completion_tokens: int
    """Completion tokens the server reported."""
    unclosed_think: int
    """Replies whose think block never closed."""
    dry_run: bool = False
    """Nothing was sent (every step to ask is unverified)."""
    first_error: str | None = None
    """The first failed call's message."""
    agreement: PanelAgreement | None = None
    """With several judges: their agreement and each judge's own figures; ``None``: one
    judge."""
    by_source: dict[str, VerificationCounts] = Field(default_factory=dict)
    by_difficulty: dict[str, VerificationCounts] = Field(default_factory=dict)


class ExtractionSummary(Record):
    """``summary.json``'s ``extraction``: what the model-based answer extractor did
    (``--extractor-url`` / ``--extractor-model``; :mod:`crystalbench.scoring.extract`).

    ``n_asked = n_extracted + n_none + n_failed``: every item whose response no answer rule
    committed on was asked once.
    """

    mode: str
    """``rules+model`` (the answer rules first, the model where none committed)."""
    extractor: dict[str, Any]
    """The extractor's identity: model, URL, prompt name and hash, served model ids,
    ``system_fingerprint`` values, the options that shape a reply."""
    n_rules: int
    """Items whose answer a rule (or the predictions file) gave: not asked."""
    n_asked: int
    """Items with a response no rule committed on: the model was asked."""
    n_extracted: int
    """Asked items the model read an answer from (``answer_extraction == "model"``)."""
    n_none: int
    """Asked items whose response, the model said, states no answer (no answer, as
    before)."""
    n_failed: int
    """Asked items whose call failed or whose reply could not be read: no answer, counted
    here and in the item's ``extraction_error``, never a guessed one."""
    requests: int
    """Requests sent for this set."""
    cache_hits: int
    """Replies served from the cache."""
    prompt_tokens: int
    """Prompt tokens the server reported."""
    completion_tokens: int
    """Completion tokens the server reported."""
    dry_run: bool = False
    """Nothing was sent (every asked item is counted failed)."""
    first_error: str | None = None
    """The first failed call's message."""


class _ItemHead(Record):
    """The first fields of an ``examples.jsonl`` line: which item, and what was predicted.

    A base class only so that pydantic writes these fields before :class:`ChainScore`'s,
    keeping the line's key order of results written before the two records were merged.
    """

    schema_version: str = SCHEMA_VERSION
    id: str
    source: str
    difficulty: Difficulty
    missing: bool
    """True when the predictions held nothing for this item (it scores 0)."""
    parse_status: ParseStatus | Literal["missing"]


class ItemResult(ChainScore, _ItemHead):
    """One line of ``examples.jsonl``: everything scored for one benchmark item.

    The step metrics are :class:`ChainScore`'s fields; the line keeps the key order
    ``schema_version, id, ..., parse_status``, the chain's fields, then the answer's.
    """

    answer_correct: bool | None
    answer_rule: str
    answer_type: AnswerType
    pred_answer: str | None = None
    gold_answer: str
    pred_steps: list[str] = Field(default_factory=list)
    """Predicted steps as scored (indices in ``matches`` point here)."""
    ref_steps: list[str] = Field(default_factory=list)
    """Reference steps as scored (indices in ``matches`` point here): those of the chain
    ``ref_chain``."""
    ref_chain: int = 0
    """Which reference chain was scored: 0 for the primary (``reference_steps``), ``k`` for
    ``reference_chains[k - 1]``; the best chain by Match F1 (ties: Ordered F1, then the lower
    index) when the item has several."""
    n_ref_chains: int = 1
    """Reference chains the item was scored against (1 in compat mode)."""
    ref_precedence: list[tuple[int, int]] | None = None
    """The partial order the order metrics (``lis``, ``kendall``, ``out_of_order``) were
    scored against: the item's ``reference_precedence`` among the steps of ``ref_steps``
    (indices point there), as its transitive reduction; steps it does not order are
    interchangeable. ``None``, and absent from the line: the chain's own order, as the paper
    (no precedence, an alternative chain won, or compat mode)."""
    pair: str | None = None
    """``source/pair id`` of the pair the question belongs to (MMVP), ``None`` when unpaired."""
    pair_size: int | None = None
    """Questions the pair should have (``pair_items`` in the metadata, else 2)."""
    vetoed: list[Veto] | None = None
    """The step pairs the fact guard kept from matching in the scored chain, by the order
    the greedy walk reached them (``--guard facts`` or ``facts-strict``; an empty list: the
    guard ran and vetoed nothing). ``None``, and absent from the line: no guard (the paper)."""
    verdicts: list[StepVerdict] | None = None
    """The step verifier's verdicts on the checked predicted steps, by step index
    (``--verify unmatched`` or ``all``). ``None``, and absent from the line: no verifier."""
    answer_extraction: str | None = None
    """Which extraction rule took ``pred_answer`` from the model's text
    (:data:`crystalbench.parsing.answer.ANSWER_RULES`: ``boxed``, ``answer_next_line``,
    ``prompt_phrase``, ``json``, ``given``...; ``answer_rule`` is the comparison rule that
    judged it). ``None``, and absent from the line: no answer was found."""
    truncated: bool = False
    """The reply stops mid-reasoning (cut off); absent from the line when ``False``."""
    answer_extractor: str | None = None
    """The model-based answer extractor asked about this item (``model:<name>``): no rule
    committed on its response. ``answer_extraction`` is then ``model`` when the model read an
    answer. ``None``, and absent from the line: the model was not asked (rules only, or a
    rule committed)."""
    extraction_error: str | None = None
    """Why the extractor's call gave no answer (connection, HTTP status, unreadable reply,
    dry run): the item keeps no answer. ``None``, and absent from the line: no failed call."""

    @model_serializer(mode="wrap")
    def _omit_unused_extensions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Fields of opt-in extensions are written only when used: the lines of a run that
        uses none stay as they were (golden files, ``examples_sha256``)."""
        data: dict[str, Any] = handler(self)
        if self.answer_extractor is None:
            data.pop("answer_extractor", None)
        if self.extraction_error is None:
            data.pop("extraction_error", None)
        if self.ref_precedence is None:
            data.pop("ref_precedence", None)
        if self.vetoed is None:
            data.pop("vetoed", None)
        if self.verdicts is None:
            data.pop("verdicts", None)
        if self.answer_extraction is None:
            data.pop("answer_extraction", None)
        if not self.truncated:
            data.pop("truncated", None)
        return data

    @property
    def parse_failed(self) -> bool:
        """The output gave neither steps nor an answer (counted in ``n_parse_failed``)."""
        return self.parse_status in PARSE_FAILED_STATUSES

    @property
    def no_steps(self) -> bool:
        """The output parsed but gave no step to score, e.g. an answer alone or
        ``reasoning_steps: []`` (counted in ``n_no_steps``; the step metrics are 0)."""
        return not self.missing and self.n_pred == 0 and not self.parse_failed

    @property
    def chain(self) -> ChainScore:
        """The item's step metrics alone, as a :class:`ChainScore`."""
        return ChainScore(**{name: getattr(self, name) for name in ChainScore.model_fields})


class MetricSummary(Record):
    """Macro-averages over a set of items, and how the items split.

    ``n_items = n_scored + n_no_steps + n_missing + n_parse_failed``; every mean is over all
    ``n_items`` (see :mod:`crystalbench.metrics` for each metric).
    """

    n_items: int
    n_scored: int
    """Items whose prediction parsed into at least one step."""
    n_no_steps: int = 0
    """Items whose prediction parsed but gave no step (an answer alone, or
    ``reasoning_steps: []``); they score 0 on the step metrics. Absent from results written
    before this count existed, where such items were part of ``n_scored``:
    :func:`crystalbench.report.load_run` derives it from ``examples.jsonl`` then."""
    n_missing: int
    n_parse_failed: int
    n_judge_unscored: int
    accuracy: float
    """Share of items with a correct answer; missing, unparseable and unscored count as wrong."""
    match_f1: float
    precision: float
    recall: float
    steps: float
    """Mean number of predicted steps (m) per item."""
    lis: float
    kendall: float
    ordered_f1: float
    n_multi_chain: int = 0
    """Items scored against more than one reference chain."""
    n_alt_chain_won: int = 0
    """Items whose best reference chain was not the primary one (``ref_chain > 0``)."""
    n_order_undefined: int = 0
    """Items with fewer than two matched pairs (missing, unparsed and step-less items
    included): their order is undefined and LIS and Kendall are 1.0 by the paper's convention,
    so ``lis`` and ``kendall`` average over them as 1.0 (Match F1 and Ordered F1 are 0 for an
    item without matches). Absent from results written before this count existed."""
    n_compat_blank: int = 0
    """Items whose blank answer crystal-metrics 0.2.0's answer rules credited
    (``answer_rule == "compat_blank"``; compat answer rules only)."""
    n_precedence: int = 0
    """Items whose order was scored against a partial-order reference (``ref_precedence``
    in their record)."""
    n_vetoed_pairs: int = 0
    """Step pairs the fact guard kept from matching (``vetoed`` in the item records; 0
    without a guard)."""
    n_vetoed_items: int = 0
    """Items with at least one vetoed pair."""
    n_truncated: int = 0
    """Items whose reply stops mid-reasoning (``truncated`` in their record); absent from the
    summary when 0."""

    @model_serializer(mode="wrap")
    def _omit_no_truncated(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``n_truncated`` is written only when an item was cut off: summaries of runs
        without one stay as they were."""
        data: dict[str, Any] = handler(self)
        if not self.n_truncated:
            data.pop("n_truncated", None)
        return data


class PairSummary(Record):
    """Accuracy over paired questions (MMVP): per question, and per pair (both right).

    A pair whose partner is not in the run (the benchmark lacks it) is incomplete: it counts
    as not right and is counted in ``n_pairs_incomplete``. A missing prediction is a wrong
    answer, so its pair is not right either.
    """

    n_paired_items: int
    """Items that belong to a pair."""
    question_accuracy: float
    """Share of the paired questions answered correctly."""
    n_pairs: int
    """Pairs in the run, complete or not."""
    n_pairs_right: int
    """Complete pairs with every question answered correctly."""
    n_pairs_incomplete: int
    """Pairs with a question absent from the run (counted as not right)."""
    pair_accuracy: float
    """``n_pairs_right / n_pairs``."""


class RunSummary(MetricSummary):
    """``summary.json``: overall metrics, breakdowns and the exact configuration."""

    schema_version: str = SCHEMA_VERSION
    run_id: str | None = None
    """Random id of the write that produced this folder (``None`` until the results are
    written, and in results written before run ids existed)."""
    examples_sha256: str | None = None
    """SHA-256 of the ``examples.jsonl`` written with this summary: readers check that the two
    files belong to the same run (``None`` in older results, which are not checked)."""
    by_source: dict[str, MetricSummary]
    by_difficulty: dict[str, MetricSummary]
    pairs: PairSummary | None = None
    """Question and pair accuracy over the paired items (MMVP); ``None`` when none is paired."""
    n_unknown_ids: int = 0
    """Prediction records whose id is not in the benchmark (skipped under ``--lenient``)."""
    n_invalid_records: int = 0
    """Malformed prediction records skipped under ``--lenient``."""
    vetoed_by_reason: dict[str, int] = Field(default_factory=dict)
    """Vetoed pairs by the guard rule that vetoed them (``number``, ``negation``,
    ``relation``, ``option``, ``colour``: every reason, 0 included, when a guard ran; empty
    without one). Which guard ran is ``config["guard"]``."""
    problems: list[str] = Field(default_factory=list)
    """The first skipped-record messages, each naming file, line and field."""
    warnings: list[str] = Field(default_factory=list)
    """What makes these numbers misleading, one line each (most items without a
    prediction: :func:`crystalbench.metrics.missing_warning`); empty, and absent from the
    file, when nothing does."""
    verification: VerificationSummary | None = None
    """The step verifier's figures (``--verify``); ``None``, and absent from the file: no
    verifier ran."""
    extraction: ExtractionSummary | None = None
    """The model-based answer extractor's counts (``--extractor-url``); ``None``, and absent
    from the file: rules only (``config["answer_extraction"]`` says which)."""
    config: dict[str, Any]
    """Encoder, threshold, alpha, order metric, compat, package version, benchmark fingerprint..."""

    @model_serializer(mode="wrap")
    def _omit_unused_extensions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``verification`` and ``extraction`` are written only when a verifier or an
        extractor ran, ``warnings`` only when there is one: summaries of runs without them
        stay as they were."""
        data: dict[str, Any] = handler(self)
        if self.verification is None:
            data.pop("verification", None)
        if self.extraction is None:
            data.pop("extraction", None)
        if not self.warnings:
            data.pop("warnings", None)
        return data
