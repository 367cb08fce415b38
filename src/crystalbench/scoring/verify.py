"""The step verifier as a post-matching step of the scoring engine (``--verify``).

CRYSTAL's precision counts every predicted step no reference step matched as wrong, though
references do not exhaust valid solutions. With ``verify="unmatched"`` (or ``"all"``), each
such step (or every step) gets a verdict after matching, in a cascade:

1. **rules, without a call** (each counted in ``n_rule_labelled``, the calls saved):
   - a blank or filler step (:data:`FILLER`: sign-offs, "Let's solve this step by step",
     a step without a word) is ``irrelevant``;
   - a step the fact guard vetoed against a reference step and that matched nothing
     is wrong: the reference it restates states another fact. :data:`GUARD_LABELS` maps the
     guard's reason to the label (a colour, relation, negation or option read off the image
     is ``wrong_perception``; a different number is ``wrong_logic``, since numbers in chains
     are mostly computed);
2. **the verifier model** (:class:`~crystalbench.judges.verifier.StepVerifier`) for the rest,
   all of a chunk's checks together.

The item record gets ``verdicts`` (one :class:`~crystalbench.types.StepVerdict` per checked
step); the set's ``summary.json`` gets ``verification``
(:class:`~crystalbench.types.VerificationSummary`), pooled over predicted steps:

- ``verified_precision`` = (steps matched or ``supported``) / (predicted steps - unverified);
- ``hallucination_rate`` = ``wrong_perception`` steps / (predicted steps - unverified);
- ``n_unverified``: checked steps whose call failed. They are counted and kept out of both
  denominators, never scored as wrong (a matched step whose check failed in ``all`` mode
  still counts as matched, in both).

With several judges (``verifier.judges``; :mod:`crystalbench.judges.panel`) each verdict is
their majority, with each judge's label in ``votes``; the summary's ``agreement``
(:class:`~crystalbench.types.PanelAgreement`, :func:`panel_agreement`) says how far they
agree (Krippendorff's alpha over the steps they were asked about) and scores each judge
alone.

``verify="none"`` (the default, the paper) adds nothing: records and summaries are those of a
run without this module.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from crystalbench.config.judging import VerifierConfig
from crystalbench.judges.client import CHARS_PER_TOKEN, IMAGE_TOKENS
from crystalbench.judges.verifier import LABELS, StepCheck, StepVerifier
from crystalbench.types import (
    BenchmarkItem,
    ItemResult,
    JudgeFigures,
    PanelAgreement,
    StepLabel,
    StepVerdict,
    VerificationCounts,
    VerificationSummary,
)

__all__ = [
    "FILLER",
    "GUARD_LABELS",
    "SetVerification",
    "Verification",
    "call_stats",
    "is_filler",
    "item_question",
    "panel_agreement",
    "verifier_label",
]

FILLER = re.compile(
    r"""^\W*(?:
        i\ hope\ (?:this|that)\ helps | let\ me\ know\ if .* | feel\ free\ to .*
      | (?:sure|okay|ok|alright)[,!.]?(?:\ (?:let'?s|here).*)?
      | let'?s\ (?:solve|think|work|break)\ (?:this|it|through|about|down).*
      | here\ is\ .*solution.*
      | (?:step\ \d+|solution|answer|final\ answer)\ *[:.]?
    )\W*$""",
    re.IGNORECASE | re.VERBOSE,
)
"""Steps that carry no claim: sign-offs, openers and bare headings (a documented list;
a step without any letter or digit is filler too)."""

GUARD_LABELS: dict[str, StepLabel] = {
    "number": "wrong_logic",
    "negation": "wrong_perception",
    "relation": "wrong_perception",
    "option": "wrong_perception",
    "colour": "wrong_perception",
}
"""The label a guard veto gives a step that matched nothing, by the guard's reason."""


def is_filler(step: str) -> bool:
    """Whether a step is blank or filler (:data:`FILLER`).

    Examples:
        >>> is_filler("I hope this helps!"), is_filler("Step 2:"), is_filler("---")
        (True, True, True)
        >>> is_filler("The bar for C is tallest.")
        False
    """
    if not re.search(r"\w", step):
        return True
    return FILLER.match(step.strip()) is not None


def item_question(item: BenchmarkItem) -> str:
    """The question as the verifier sees it: the text, then the options (lettered).

    Examples:
        >>> item = BenchmarkItem(id="1", source="s", question="Which?", options=["x", "y"],
        ...                      answer="A", reference_steps=["r"])
        >>> item_question(item)
        'Which?\\nOptions: (A) x (B) y'
    """
    if not item.options:
        return item.question
    letters = " ".join(f"({chr(65 + k)}) {o}" for k, o in enumerate(item.options))
    return f"{item.question}\nOptions: {letters}"


@dataclass
class _Tally:
    """Pooled step counts of one group of items."""

    n_steps: int = 0
    n_matched: int = 0
    n_checked: int = 0
    n_unverified: int = 0
    n_unverified_unmatched: int = 0
    n_good: int = 0
    labels: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LABELS, 0))

    def add(self, result: ItemResult, verdicts: Sequence[StepVerdict]) -> None:
        matched = {pred for pred, _, _ in result.matches}
        self.n_steps += len(result.pred_steps)
        self.n_matched += len(matched)
        self.n_checked += len(verdicts)
        supported = set()
        for verdict in verdicts:
            if verdict.label is None:
                self.n_unverified += 1
                if verdict.pred not in matched:
                    self.n_unverified_unmatched += 1
                continue
            self.labels[verdict.label] += 1
            if verdict.label == "supported":
                supported.add(verdict.pred)
        self.n_good += len(matched | supported)

    def counts(self) -> VerificationCounts:
        counted = self.n_steps - self.n_unverified_unmatched
        labelled = sum(self.labels.values())
        return VerificationCounts(
            n_steps=self.n_steps,
            n_matched=self.n_matched,
            n_checked=self.n_checked,
            n_unverified=self.n_unverified,
            verified_precision=self.n_good / counted if counted else None,
            hallucination_rate=self.labels["wrong_perception"] / counted if counted else None,
            labels=dict(self.labels),
            label_shares={
                label: (n / labelled if labelled else 0.0) for label, n in self.labels.items()
            },
        )


def _as_judged_by(verdicts: Sequence[StepVerdict], judge: str) -> list[StepVerdict]:
    """The verdicts with one judge's vote in place of the majority (rule verdicts kept)."""
    return [
        verdict
        if verdict.votes is None
        else verdict.model_copy(update={"label": verdict.votes.get(judge), "votes": None})
        for verdict in verdicts
    ]


def panel_agreement(
    votes: Sequence[dict[str, StepLabel | None]],
    majority: Sequence[StepLabel | None],
    judges: Sequence[str],
    tallies: dict[str, VerificationCounts],
    n_ties: int = 0,
) -> PanelAgreement:
    """The agreement of a panel over the steps it was asked about.

    Args:
        votes: Per step, each judge's label (``None``: its call failed).
        majority: Per step, the panel's label.
        judges: The judges (``model:<name>``), in order.
        tallies: Each judge's figures scored alone.
        n_ties: Steps whose vote tied.

    Examples:
        >>> votes = [{"a": "supported", "b": "supported"}, {"a": "wrong_logic", "b": "supported"},
        ...          {"a": "wrong_logic", "b": "wrong_logic"}]
        >>> top = ["supported", "wrong_logic", "wrong_logic"]
        >>> out = panel_agreement(votes, top, ["a", "b"], {})
        >>> out.n_units, round(out.percent_agreement, 3), round(out.krippendorff_alpha, 3)
        (3, 0.667, 0.444)
    """
    from crystalbench.statistics.agreement import krippendorff_alpha

    units = [[label for label in step.values() if label is not None] for step in votes]
    pairable = [unit for unit in units if len(unit) >= 2]
    binary = [["supported" if x == "supported" else "not" for x in unit] for unit in pairable]
    agreeing = sum(1 for unit in pairable if len(set(unit)) == 1)
    by_judge = {}
    for judge in judges:
        given = [(step.get(judge), top) for step, top in zip(votes, majority, strict=True)]
        labelled = [(mine, top) for mine, top in given if mine is not None]
        counts = tallies.get(judge)
        by_judge[judge] = JudgeFigures(
            verified_precision=counts.verified_precision if counts else None,
            hallucination_rate=counts.hallucination_rate if counts else None,
            n_unverified=counts.n_unverified if counts else 0,
            labels=dict(counts.labels) if counts else {},
            agreement_with_majority=(
                sum(1 for mine, top in labelled if mine == top) / len(labelled)
                if labelled
                else None
            ),
        )
    return PanelAgreement(
        judges=list(judges),
        n_units=len(pairable),
        krippendorff_alpha=krippendorff_alpha(pairable),
        krippendorff_alpha_supported=krippendorff_alpha(binary),
        percent_agreement=agreeing / len(pairable) if pairable else None,
        n_ties=n_ties,
        by_judge=by_judge,
    )


def _clients(verifier: object) -> list[Any]:
    """The judge clients behind a verifier (a panel's, one each)."""
    members = getattr(verifier, "members", None)
    found = members if members is not None else [verifier]
    return [client for m in found if (client := getattr(m, "client", None)) is not None]


def verifier_label(verified: VerificationSummary | None) -> str:
    """Who verified a run, as the leaderboard shows it: the judge's model (a panel's joined
    by ``+``), the mode, the prompt with its hash's first 8 characters, and the options that
    change a verdict; ``none`` without a verifier. Runs are comparable on the verifier's
    figures only when this is the same.

    Examples:
        >>> summary = VerificationSummary(
        ...     n_steps=1, n_matched=1, n_checked=0, n_unverified=0, verified_precision=1.0,
        ...     hallucination_rate=0.0, labels={}, label_shares={}, mode="unmatched",
        ...     judge={"model": "vlm", "prompt_name": "verify_step_v1", "prompt_hash": "ab" * 32},
        ...     n_rule_labelled=0, n_model_verdicts=0, requests=0, cache_hits=0,
        ...     prompt_tokens=0, completion_tokens=0, unclosed_think=0)
        >>> verifier_label(summary), verifier_label(None)
        ('vlm (unmatched, verify_step_v1@abababab)', 'none')
    """
    if verified is None:
        return "none"
    judge = verified.judge
    members = judge.get("judges") or [judge]
    prompts = sorted(
        {f"{m.get('prompt_name', '?')}@{str(m.get('prompt_hash', ''))[:8]}" for m in members}
    )
    options = sorted(
        {
            f"{key}={m[key]}"
            for m in members
            for key in ("with_reference", "probability")
            if m.get(key) not in (None, False, "auto")
        }
    )
    return f"{judge.get('model', '?')} ({', '.join([verified.mode, *prompts, *options])})"


def call_stats(verifier: object) -> dict[str, Any]:
    """Requests, cache hits and tokens of every client behind a verifier, summed."""
    total: dict[str, int] = {}
    for client in _clients(verifier):
        for key, value in client.stats.record().items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total


class SetVerification:
    """The verifier step of one prediction set: labels its chunks and tallies them.

    Args:
        verifier: The model (:class:`~crystalbench.judges.verifier.StepVerifier`).
        mode: ``unmatched`` or ``all``.
        with_reference: Show the verifier the scored reference chain.
    """

    def __init__(self, verifier: StepVerifier, mode: str, *, with_reference: bool) -> None:
        self.verifier = verifier
        self.mode = mode
        self.with_reference = with_reference
        self.n_rule_labelled = 0
        self.n_model_verdicts = 0
        self.first_error: str | None = None
        self.overall = _Tally()
        self.by_source: dict[str, _Tally] = {}
        self.by_difficulty: dict[str, _Tally] = {}
        self.judge_tallies: dict[str, _Tally] = {}
        """With a panel: each judge scored alone."""
        self.votes: list[dict[str, StepLabel | None]] = []
        """With a panel: each judge's label of every step the model was asked about."""
        self.majority: list[StepLabel | None] = []
        self.n_ties = 0

    def steps_to_check(self, result: ItemResult) -> list[int]:
        """The predicted step indices that need a verdict."""
        if self.mode == "all":
            return list(range(len(result.pred_steps)))
        matched = {pred for pred, _, _ in result.matches}
        return [k for k in range(len(result.pred_steps)) if k not in matched]

    def rule_verdict(self, result: ItemResult, pred: int) -> StepVerdict | None:
        """The cascade's rules for one step (``None``: ask the model)."""
        step = result.pred_steps[pred]
        if is_filler(step):
            return StepVerdict(
                pred=pred,
                label="irrelevant",
                reason="blank or filler: no claim to check",
                judge="rule:filler",
            )
        matched = {p for p, _, _ in result.matches}
        if pred in matched:
            return None
        for veto in result.vetoed or []:
            if veto.pred == pred:
                ref = result.ref_steps[veto.ref] if veto.ref < len(result.ref_steps) else ""
                return StepVerdict(
                    pred=pred,
                    label=GUARD_LABELS.get(veto.reason, "wrong_perception"),
                    p_correct=0.0,
                    reason=f"states another {veto.reason} than reference step {veto.ref + 1}: "
                    f"{ref}",
                    judge=f"rule:guard-{veto.reason}",
                )
        return None

    def apply(
        self, items: Sequence[BenchmarkItem], results: Sequence[ItemResult]
    ) -> list[ItemResult]:
        """``results`` (one per item, in order) with their ``verdicts``; the chunk's model
        checks go out together."""
        per_item: list[list[StepVerdict]] = []
        asks: list[tuple[int, int, StepCheck]] = []
        for position, (item, result) in enumerate(zip(items, results, strict=True)):
            found: list[StepVerdict] = []
            for pred in self.steps_to_check(result):
                rule = self.rule_verdict(result, pred)
                if rule is not None:
                    found.append(rule)
                    self.n_rule_labelled += 1
                    continue
                check = StepCheck(
                    question=item_question(item),
                    step=result.pred_steps[pred],
                    prior_steps=tuple(result.pred_steps[:pred]),
                    image=_image_path(item),
                    reference=tuple(result.ref_steps) if self.with_reference else None,
                )
                asks.append((position, pred, check))
            per_item.append(found)
        answers = self.verifier.verify_many([check for _, _, check in asks]) if asks else []
        for (position, pred, _), verdict in zip(asks, answers, strict=True):
            per_item[position].append(verdict.model_copy(update={"pred": pred}))
            if verdict.votes is not None:
                from crystalbench.judges.panel import is_tie

                self.votes.append(dict(verdict.votes))
                self.majority.append(verdict.label)
                self.n_ties += is_tie(verdict)
            if verdict.label is None:
                self.first_error = self.first_error or verdict.error
            else:
                self.n_model_verdicts += 1
        updated = []
        for result, verdicts in zip(results, per_item, strict=True):
            verdicts.sort(key=lambda verdict: verdict.pred)
            for tally in (
                self.overall,
                self.by_source.setdefault(result.source, _Tally()),
                self.by_difficulty.setdefault(str(result.difficulty), _Tally()),
            ):
                tally.add(result, verdicts)
            for judge in getattr(self.verifier, "names", None) or []:
                own = _as_judged_by(verdicts, f"model:{judge}")
                self.judge_tallies.setdefault(f"model:{judge}", _Tally()).add(result, own)
            updated.append(result.model_copy(update={"verdicts": verdicts}))
        return updated

    def summary(self) -> VerificationSummary:
        """The set's ``verification`` block."""
        identity = dict(self.verifier.identity())
        stats = call_stats(self.verifier)
        clients = _clients(self.verifier)
        names = getattr(self.verifier, "names", None)
        agreement = None
        if names:
            judges = [f"model:{name}" for name in names]
            agreement = panel_agreement(
                self.votes,
                self.majority,
                judges,
                {judge: self.judge_tallies.get(judge, _Tally()).counts() for judge in judges},
                self.n_ties,
            )
        return VerificationSummary(
            **self.overall.counts().model_dump(),
            mode=self.mode,
            judge=identity,
            n_rule_labelled=self.n_rule_labelled,
            n_model_verdicts=self.n_model_verdicts,
            requests=int(stats.get("requests", 0)),
            cache_hits=int(stats.get("cache_hits", 0)),
            prompt_tokens=int(stats.get("prompt_tokens", 0)),
            completion_tokens=int(stats.get("completion_tokens", 0)),
            unclosed_think=int(stats.get("unclosed_think", 0)),
            dry_run=any(bool(getattr(client, "dry_run", False)) for client in clients),
            first_error=self.first_error,
            agreement=agreement,
            by_source={k: t.counts() for k, t in sorted(self.by_source.items())},
            by_difficulty={k: t.counts() for k, t in sorted(self.by_difficulty.items())},
        )


def _image_path(item: BenchmarkItem) -> str | None:
    """The item's image file (one that cannot be read makes the check unverified, never a
    check without the image)."""
    return item.image or None


class Verification:
    """The engine's verifier: one model shared by the sets, one :class:`SetVerification` each.

    Args:
        verifier: The model.
        config: The verifier's config (mode aside).
        mode: ``unmatched`` or ``all``.
        announce: Where the estimate and the dry run's requests are printed (default:
            standard error).
    """

    def __init__(
        self,
        verifier: StepVerifier,
        config: VerifierConfig,
        mode: str,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.verifier = verifier
        self.config = config
        self.mode = mode
        self.announce = announce or (lambda line: print(line, file=sys.stderr, flush=True))
        self._sets: dict[int, SetVerification] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Any, verifier: StepVerifier | None = None) -> Verification | None:
        """The verifier step of a :class:`~crystalbench.config.scoring.ScoreConfig`
        (``None`` with ``verify="none"``); ``verifier`` instead of building
        :class:`~crystalbench.judges.verifier.OpenAIVerifier` from ``config.verifier``."""
        if config.verify == "none":
            return None
        assert config.verifier is not None  # the config checks it
        if verifier is None:
            from crystalbench.judges.panel import build_verifier

            verifier = build_verifier(
                config.verifier, cache_dir=config.cache_dir, use_cache=config.use_cache
            )
        return cls(verifier, config.verifier, config.verify)

    def for_set(self, scorer: object) -> SetVerification:
        """The verifier step of the set ``scorer`` scores (one per item scorer)."""
        with self._lock:
            found = self._sets.get(id(scorer))
            if found is None:
                found = self._sets[id(scorer)] = SetVerification(
                    self.verifier, self.mode, with_reference=self.config.with_reference
                )
            return found

    def plan(self, prepared: Sequence[Sequence[Any]]) -> dict[str, float]:
        """Before the run: the most requests, tokens and cost the verifier may take (every
        predicted step checked, two requests each, the whole token limit), printed.

        ``prepared`` holds, per set, its :class:`~crystalbench.scoring.items.PreparedItem`
        records.
        """
        from crystalbench.judges.verifier import load_verify_prompt

        prompt = load_verify_prompt(self.config.prompt)
        steps = prompt_tokens = completion_tokens = 0
        yes_no = self.config.probability != "json" and not self.config.reasoning
        for batch in prepared:
            for ready in batch:
                image = IMAGE_TOKENS if self.config.with_image and ready.item.image else 0
                for k, step in enumerate(ready.pred_steps):
                    check = StepCheck(item_question(ready.item), step, tuple(ready.pred_steps[:k]))
                    text = len(prompt.system) + len(prompt.render(check))
                    tokens = text // CHARS_PER_TOKEN + image
                    steps += 1
                    prompt_tokens += tokens * (2 if yes_no else 1)
                    completion_tokens += self.config.max_tokens + (1 if yes_no else 0)
        judges = [str(judge.model) for judge in self.config.panel()]
        prices = [self.config.prices.get(judge) for judge in judges]
        cost = (
            sum(p.cost(prompt_tokens, completion_tokens) for p in prices if p is not None)
            if all(p is not None for p in prices)
            else None
        )
        n = len(judges)
        prompt_tokens *= n
        completion_tokens *= n
        line = (
            f"verifier {self.config.name} ({self.mode}): at most {steps} steps, "
            f"{steps * (2 if yes_no else 1) * n} requests, ~{prompt_tokens} prompt + "
            f"{completion_tokens} completion tokens"
            + (f", estimated cost {cost:.4f}" if cost is not None else " (no price for it)")
            + (" [dry run: nothing is sent]" if self.config.dry_run else "")
        )
        self.announce(line)
        return {
            "steps": steps,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cost": cost if cost is not None else float("nan"),
        }

    def report_dry_run(self) -> None:
        """With ``dry_run``: print each request that would have been sent."""
        clients = [client for client in _clients(self.verifier) if client.dry_run]
        if not clients:
            return
        from crystalbench.judges.client import estimate_tokens

        planned = 0
        for client in clients:
            for request in client.stats.planned:
                prompt, _ = estimate_tokens(request)
                step = request.text().rsplit("Step to check:\n", 1)[-1].split("\n", 1)[0]
                kind = "yes/no logprobs" if request.logprobs else "json label"
                self.announce(
                    f"dry run: POST {client.base_url}/chat/completions model={client.model} "
                    f"{kind} max_tokens={request.max_tokens} ~{prompt} prompt tokens "
                    f"step={step[:80]!r}"
                )
            planned += len(client.stats.planned)
        self.announce(f"dry run: {planned} requests not sent")
