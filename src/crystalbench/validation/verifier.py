"""Validate a step verifier against people: VisualProcessBench's metric on human step labels.

``crystal validate verifier --labels FILE`` reads VisualProcessBench's ``test.jsonl`` layout
(one solution a line: ``image``, a list of paths relative to ``--images``; ``question``;
``answer``; ``response`` with ``steps`` and ``process_correctness``, one label per step:
1 correct, 0 neutral, -1 wrong; ``policy_model``; ``data_source``), asks the verifier about
every step given the steps before it (never the answer), and reports:

- **VisualProcessBench's macro-F1**: the mean of the F1 of the correct steps and the F1 of
  the wrong steps (``sklearn.metrics.f1_score``, labels 1 and -1, ``average="macro"``),
  neutral steps excluded, pooled over the test split and per ``data_source``, with a
  percentile bootstrap interval over test solutions;
- **the threshold**: a step is predicted correct when ``p_correct >= threshold``; the
  threshold is fitted on the dev split (every ``dev_every``-th solution, starting with the
  first), the one of the dev steps' ``p_correct`` values (and 0.5) with the best dev macro-F1
  (ties: the lowest), and never on the test split; a fixed ``threshold`` makes every solution
  test. A step with a label but no probability is predicted correct iff its label is
  ``supported``;
- **label-level confusion**: human label (correct / neutral / wrong) by verifier label
  (the four labels and ``unverified``), over the test split;
- **unverified steps** (failed calls) are counted and left out of every F1.

Images are resolved under the ``--images`` folder and a path that leaves it (``..``, an
absolute path elsewhere, a link out) is refused with its line and field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench._internal.io import read_jsonl
from crystalbench.config.judging import VerifierValidationConfig
from crystalbench.errors import InputError
from crystalbench.judges.verifier import LABELS, StepCheck, StepVerifier
from crystalbench.scoring.verify import call_stats
from crystalbench.types import StepVerdict

__all__ = [
    "LabelledSolution",
    "read_process_labels",
    "validate_verifier",
    "vpb_f1",
]

HUMAN_LABELS = {1: "correct", 0: "neutral", -1: "wrong"}
"""VisualProcessBench's ``process_correctness`` values."""


@dataclass(frozen=True)
class LabelledSolution:
    """One line of the labels file."""

    line: int
    question: str
    steps: tuple[str, ...]
    labels: tuple[int, ...]
    """1 correct, 0 neutral, -1 wrong, one per step."""
    image: str | None
    """The first image's resolved path (``None``: the line has none)."""
    source: str
    policy_model: str | None
    reference: tuple[str, ...] = ()
    """Optional ``reference_steps`` of the line (for the cosine bands)."""


def _inside(folder: Path, relative: str, path: Path, line: int) -> str:
    base = folder.resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise InputError(
            f"image path {relative!r} leaves the images folder {folder}",
            path=path,
            line=line,
            field="image",
        )
    return str(target)


def read_process_labels(
    path: str | Path, images: str | Path | None = None
) -> list[LabelledSolution]:
    """Read a VisualProcessBench-layout labels file.

    Raises:
        InputError: A line lacks a field, has a field of the wrong type, has as many labels
            as steps only in name, a label outside -1/0/1, or an image path leaving the
            images folder (naming the file, line and field).
    """
    path = Path(path)
    folder = Path(images) if images is not None else path.parent
    solutions = []
    for number, record in read_jsonl(path):

        def bad(message: str, field: str, number: int = number) -> InputError:
            return InputError(message, path=path, line=number, field=field)

        response = record.get("response")
        if not isinstance(response, dict):
            raise bad("expected an object with steps and process_correctness", "response")
        steps = response.get("steps")
        labels = response.get("process_correctness")
        if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
            raise bad("expected a list of strings", "response.steps")
        if not isinstance(labels, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v in HUMAN_LABELS for v in labels
        ):
            raise bad("expected a list of 1, 0 or -1", "response.process_correctness")
        if len(labels) != len(steps):
            raise bad(
                f"{len(labels)} labels for {len(steps)} steps", "response.process_correctness"
            )
        question = record.get("question")
        if not isinstance(question, str):
            raise bad("expected a string", "question")
        image_list = record.get("image", [])
        if isinstance(image_list, str):
            image_list = [image_list]
        if not isinstance(image_list, list) or not all(isinstance(i, str) for i in image_list):
            raise bad("expected a list of relative paths", "image")
        resolved = [_inside(folder, relative, path, number) for relative in image_list]
        reference = record.get("reference_steps", [])
        if not isinstance(reference, list) or not all(isinstance(r, str) for r in reference):
            raise bad("expected a list of strings", "reference_steps")
        source = record.get("data_source", "unknown")
        policy = record.get("policy_model")
        solutions.append(
            LabelledSolution(
                line=number,
                question=question,
                steps=tuple(steps),
                labels=tuple(labels),
                image=resolved[0] if resolved else None,
                source=str(source),
                policy_model=str(policy) if policy is not None else None,
                reference=tuple(reference),
            )
        )
    return solutions


def vpb_f1(truth: Sequence[int], predicted: Sequence[int]) -> tuple[float, float, float]:
    """``(macro_f1, f1_correct, f1_wrong)`` of VisualProcessBench over steps labelled 1
    (correct) or -1 (wrong); ``predicted`` holds 1 or -1. No step: all 0.

    Examples:
        >>> vpb_f1([1, 1, -1, -1], [1, -1, -1, -1])
        (0.7333333333333334, 0.6666666666666666, 0.8)
    """
    from sklearn.metrics import f1_score  # the validate extra

    if not truth:
        return 0.0, 0.0, 0.0
    f1s = f1_score(list(truth), list(predicted), labels=[1, -1], average=None, zero_division=0)
    macro = f1_score(list(truth), list(predicted), labels=[1, -1], average="macro", zero_division=0)
    return float(macro), float(f1s[0]), float(f1s[1])


@dataclass(frozen=True)
class _Step:
    solution: int
    """Index of the solution in the file."""
    human: int
    verdict: StepVerdict
    source: str
    cosine: float | None = None
    """Best cosine of the step to the line's reference steps (``None``: none given)."""

    def predicted(self, threshold: float) -> int | None:
        """1 / -1 at ``threshold``; ``None`` when unverified."""
        if self.verdict.label is None:
            return None
        if self.verdict.p_correct is None:
            return 1 if self.verdict.label == "supported" else -1
        return 1 if self.verdict.p_correct >= threshold else -1


def _scored(steps: Sequence[_Step], threshold: float) -> tuple[list[int], list[int]]:
    truth, predicted = [], []
    for step in steps:
        guess = step.predicted(threshold)
        if step.human == 0 or guess is None:
            continue
        truth.append(step.human)
        predicted.append(guess)
    return truth, predicted


def fit_threshold(steps: Sequence[_Step]) -> float:
    """The threshold with the best macro-F1 on ``steps`` (the dev split): among 0.5 and the
    steps' ``p_correct`` values, ties to the lowest."""
    candidates = sorted(
        {0.5} | {s.verdict.p_correct for s in steps if s.verdict.p_correct is not None}
    )
    best, best_f1 = 0.5, -1.0
    for candidate in candidates:
        macro = vpb_f1(*_scored(steps, candidate))[0]
        if macro > best_f1:
            best, best_f1 = candidate, macro
    return best


def _figures(steps: Sequence[_Step], threshold: float) -> dict[str, Any]:
    truth, predicted = _scored(steps, threshold)
    macro, correct, wrong = vpb_f1(truth, predicted)
    return {
        "macro_f1": macro,
        "f1_correct": correct,
        "f1_wrong": wrong,
        "n_steps": len(truth),
        "n_neutral": sum(1 for s in steps if s.human == 0),
        "n_unverified": sum(1 for s in steps if s.verdict.label is None),
    }


def _bootstrap(
    steps: Sequence[_Step], threshold: float, resamples: int, confidence: float, seed: int
) -> list[float] | None:
    """Percentile interval of the macro-F1 over resampled test solutions."""
    if resamples == 0 or not steps:
        return None
    by_solution: dict[int, list[_Step]] = {}
    for step in steps:
        by_solution.setdefault(step.solution, []).append(step)
    groups = list(by_solution.values())
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(groups), size=len(groups))
        values.append(vpb_f1(*_scored([s for k in drawn for s in groups[k]], threshold))[0])
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return [float(low), float(high)]


def validate_verifier(
    config: VerifierValidationConfig, verifier: StepVerifier | None = None
) -> dict[str, Any]:
    """The report of ``crystal validate verifier`` (the ``verifier.json`` object).

    Args:
        config: Labels file, images folder, verifier and split.
        verifier: Instead of building :class:`~crystalbench.judges.verifier.OpenAIVerifier`
            from ``config.verifier``.
    """
    solutions = read_process_labels(config.labels, config.images)
    built = None
    if verifier is None:
        from crystalbench.judges.panel import build_verifier

        verifier = built = build_verifier(
            config.verifier, cache_dir=config.cache_dir, use_cache=config.use_cache
        )
    try:
        checks = [
            StepCheck(solution.question, step, solution.steps[:k], image=solution.image)
            for solution in solutions
            for k, step in enumerate(solution.steps)
        ]
        verdicts = verifier.verify_many(checks) if checks else []
        identity = dict(verifier.identity())
        calls = call_stats(verifier)
    finally:
        closing = getattr(built, "close", None)
        if closing is not None:
            closing()
    cosines = _best_cosines(solutions, config.encoder) if config.encoder else {}
    steps: list[_Step] = []
    position = 0
    for index, solution in enumerate(solutions):
        for k, human in enumerate(solution.labels):
            steps.append(
                _Step(index, human, verdicts[position], solution.source, cosines.get((index, k)))
            )
            position += 1
    if config.threshold is not None:
        threshold = config.threshold
        dev: list[_Step] = []
        test = steps
    else:
        dev = [s for s in steps if s.solution % config.dev_every == 0]
        test = [s for s in steps if s.solution % config.dev_every != 0]
        threshold = fit_threshold(dev)
    pooled = _figures(test, threshold)
    sources = sorted({s.source for s in test})
    confusion: dict[str, Counter[str]] = {name: Counter() for name in HUMAN_LABELS.values()}
    for step in test:
        confusion[HUMAN_LABELS[step.human]][step.verdict.label or "unverified"] += 1
    columns = [*LABELS, "unverified"]
    return {
        **pooled,
        "interval": _bootstrap(test, threshold, config.resamples, config.confidence, config.seed),
        "confidence": config.confidence,
        "threshold": threshold,
        "threshold_fitted_on": "dev" if config.threshold is None else "given",
        "n_dev_steps": len(_scored(dev, threshold)[0]),
        "n_solutions": len(solutions),
        "n_test_solutions": len({s.solution for s in test}),
        "by_source": {
            source: _figures([s for s in test if s.source == source], threshold)
            for source in sources
        },
        "confusion": {
            human: {column: counts.get(column, 0) for column in columns}
            for human, counts in confusion.items()
        },
        "by_band": _by_band(test, threshold, config.bands) if cosines else None,
        "judge": identity,
        "calls": calls,
        "config": config.model_dump(mode="json"),
    }


def _best_cosines(
    solutions: Sequence[LabelledSolution], encoder_name: str
) -> dict[tuple[int, int], float]:
    """``(solution, step) -> best cosine to the solution's reference steps`` (lines with
    ``reference_steps`` only)."""
    from crystalbench.encoders import load_encoder

    texts = sorted(
        {t for s in solutions if s.reference for t in (*s.steps, *s.reference) if t.strip()}
    )
    if not texts:
        return {}
    vectors = load_encoder(encoder_name).encode(texts)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = dict(zip(texts, vectors / np.where(norms == 0, 1.0, norms), strict=True))
    out: dict[tuple[int, int], float] = {}
    for index, solution in enumerate(solutions):
        refs = [unit[r] for r in solution.reference if r.strip()]
        if not refs:
            continue
        matrix = np.stack(refs)
        for k, step in enumerate(solution.steps):
            if step.strip():
                out[(index, k)] = float(np.max(matrix @ unit[step]))
    return out


def _by_band(
    steps: Sequence[_Step], threshold: float, edges: Sequence[float]
) -> dict[str, dict[str, Any]]:
    """Table-3-style: per band of the best cosine, the verifier's figures and its agreement
    with the human labels (share of correct/wrong steps it called the same way). The bands
    below tau hold the steps CRYSTAL's matching cannot vouch for."""
    from crystalbench.validation.bands import band_index, band_labels

    banded = [s for s in steps if s.cosine is not None]
    labels = band_labels(edges)
    cosines = [s.cosine for s in banded if s.cosine is not None]
    index: list[int] = band_index(cosines, edges).tolist() if banded else []
    out: dict[str, dict[str, Any]] = {}
    for band, label in enumerate(labels):
        inside = [s for s, b in zip(banded, index, strict=True) if b == band]
        truth, predicted = _scored(inside, threshold)
        agreed = sum(1 for t, p in zip(truth, predicted, strict=True) if t == p)
        out[label] = {
            **_figures(inside, threshold),
            "agreement": agreed / len(truth) if truth else None,
        }
    return out
