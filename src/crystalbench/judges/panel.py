"""Several step verifiers at once: every judge labels every step, the majority decides.

A panel (``verifier.judges``, or ``--verifier-model`` repeated) asks each judge through its
own :class:`~crystalbench.judges.verifier.OpenAIVerifier` (its own client and counters; one
reply cache file, keyed by the served model among the rest, so a re-run sends nothing), the
judges side by side. Per step:

- **the label** is the plurality of the labels the judges gave (a failed call is no vote);
  a tie goes to the less favourable label, in the order of :data:`TIE_ORDER`
  (``wrong_perception``, ``wrong_logic``, ``irrelevant``, ``supported``): half a panel is
  not enough to vouch for a step;
- **p_correct** is the mean of the judges' probabilities (those that gave one);
- **votes** keeps each judge's label; the step is unverified only when every judge failed.

How far the judges agree (Krippendorff's alpha) is computed over a run's verdicts by
:func:`crystalbench.scoring.verify.panel_agreement`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from crystalbench.config.judging import VerifierConfig
from crystalbench.judges.verifier import StepCheck, StepVerifier
from crystalbench.types import StepLabel, StepVerdict

__all__ = ["TIE_ORDER", "PanelVerifier", "build_verifier", "majority_verdict"]

TIE_ORDER: tuple[StepLabel, ...] = ("wrong_perception", "wrong_logic", "irrelevant", "supported")
"""Which label wins a tied vote: the first of the tied ones here."""


def majority_verdict(verdicts: Sequence[StepVerdict], names: Sequence[str]) -> StepVerdict:
    """The panel's verdict from one verdict per judge (``names[k]`` gave ``verdicts[k]``).

    Examples:
        >>> def v(label, p):
        ...     return StepVerdict(pred=0, label=label, p_correct=p, judge="x", reason=label)
        >>> out = majority_verdict(
        ...     [v("supported", 0.9), v("wrong_logic", 0.2), v("supported", 0.7)], ["a", "b", "c"]
        ... )
        >>> out.label, round(out.p_correct, 3), out.judge, out.votes["model:b"]
        ('supported', 0.6, 'panel:a+b+c', 'wrong_logic')
        >>> majority_verdict([v("supported", 0.9), v("wrong_logic", 0.2)], ["a", "b"]).label
        'wrong_logic'
    """
    judge = "panel:" + "+".join(names)
    votes: dict[str, StepLabel | None] = {
        f"model:{name}": verdict.label for name, verdict in zip(names, verdicts, strict=True)
    }
    given = [verdict for verdict in verdicts if verdict.label is not None]
    if not given:
        errors = "; ".join(
            f"{name}: {verdict.error}" for name, verdict in zip(names, verdicts, strict=True)
        )
        return StepVerdict(
            pred=0, label=None, judge=judge, error=f"every judge failed ({errors})", votes=votes
        )
    counts = Counter(verdict.label for verdict in given)
    top = max(counts.values())
    label = next(name for name in TIE_ORDER if counts.get(name, 0) == top)
    probabilities = [v.p_correct for v in given if v.p_correct is not None]
    reason = next(v.reason for v in given if v.label == label)
    return StepVerdict(
        pred=0,
        label=label,
        p_correct=sum(probabilities) / len(probabilities) if probabilities else None,
        reason=reason,
        judge=judge,
        votes=votes,
    )


def is_tie(verdict: StepVerdict) -> bool:
    """Whether a panel verdict came out of a tied vote.

    Examples:
        >>> is_tie(StepVerdict(pred=0, label="wrong_logic", judge="p",
        ...                    votes={"model:a": "supported", "model:b": "wrong_logic"}))
        True
    """
    if not verdict.votes:
        return False
    counts = Counter(label for label in verdict.votes.values() if label is not None)
    if not counts:
        return False
    top = max(counts.values())
    return sum(1 for n in counts.values() if n == top) > 1


class PanelVerifier:
    """Several :class:`~crystalbench.judges.verifier.StepVerifier` judges and their majority.

    Args:
        members: The judges, in order.
        names: Their model names (``votes`` keys are ``model:<name>``).

    Examples:
        >>> from crystalbench.judges.verifier import ScriptedVerifier
        >>> panel = PanelVerifier(
        ...     [ScriptedVerifier({"s": "supported"}, name="a"),
        ...      ScriptedVerifier({"s": "wrong_logic"}, name="b"),
        ...      ScriptedVerifier({"s": "supported"}, name="c")],
        ...     ["a", "b", "c"],
        ... )
        >>> panel.verify_many([StepCheck("q", "s", ())])[0].label
        'supported'
    """

    def __init__(self, members: Sequence[StepVerifier], names: Sequence[str]) -> None:
        if len(members) != len(names) or len(members) < 2:
            raise ValueError("a panel needs two judges or more, one name each")
        self.members = list(members)
        self.names = list(names)

    @property
    def name(self) -> str:
        """``panel:<a>+<b>...``: the ``judge`` of every verdict this panel gives."""
        return "panel:" + "+".join(self.names)

    def identity(self) -> dict[str, Any]:
        """``kind="panel"``, the models joined by ``+``, each judge's identity, the tie rule."""
        return {
            "kind": "panel",
            "model": "+".join(self.names),
            "judges": [member.identity() for member in self.members],
            "tie_order": list(TIE_ORDER),
        }

    def verify_many(self, checks: Sequence[StepCheck]) -> list[StepVerdict]:
        """Every judge on every check (the judges side by side), then the majority."""
        if not checks:
            return []
        with ThreadPoolExecutor(max_workers=len(self.members)) as pool:
            answers = list(pool.map(lambda member: member.verify_many(checks), self.members))
        return [
            majority_verdict([answer[k] for answer in answers], self.names)
            for k in range(len(checks))
        ]

    def call_stats(self) -> dict[str, int]:
        """Requests, cache hits and tokens of every judge's client, summed."""
        total: Counter[str] = Counter()
        for member in self.members:
            client = getattr(member, "client", None)
            if client is None:
                continue
            for key, value in client.stats.record().items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    total[key] += int(value)
        return dict(total)

    def close(self) -> None:
        """Close every judge that can be closed."""
        for member in self.members:
            closing = getattr(member, "close", None)
            if closing is not None:
                closing()


def build_verifier(
    config: VerifierConfig, *, cache_dir: str | Path | None = None, use_cache: bool = True
) -> StepVerifier:
    """The verifier a config names: one :class:`OpenAIVerifier`, or a :class:`PanelVerifier`
    of one per judge.

    Raises:
        InputError: A judge's config is refused (see :class:`OpenAIVerifier`).
        MissingExtraError: A panel without the ``krippendorff`` package (its agreement).
    """
    from crystalbench.judges.verifier import OpenAIVerifier

    judges = config.panel()
    if len(judges) == 1:
        return OpenAIVerifier(judges[0], cache_dir=cache_dir, use_cache=use_cache)
    from crystalbench._internal.extras import require

    require("krippendorff", what="the agreement of several verifier judges", load=False)
    members = [OpenAIVerifier(j, cache_dir=cache_dir, use_cache=use_cache) for j in judges]
    return PanelVerifier(members, [str(j.model) for j in judges])
