"""Deterministic CRYSTAL-scale scoring workload: benchmark items and K prediction sets.

The real CRYSTAL test split (6,372 items, reference chains of 3 to 42 steps, mean 11.6)
is gated, so speed measurements run on a synthetic look-alike made of realistic
visual-reasoning sentences. Every reference step is a *semantic unit* (a kind such as
"read a value off a chart" plus its slots: entity, value, unit...) rendered through one
of several templates. A prediction set ("model") re-renders the units it keeps with other
templates and rephrases them in its own *voice* (preferred words, openers and closing
phrases, contractions, symbols, elaborations), copies only a few verbatim, omits units,
merges neighbours, swaps or scrambles their order, and adds distractors: a restated
question, meta comments about the figure, self-checks that repeat a step in other words,
filler steps, a closing answer sentence, and hallucinated units with wrong values or
entities. Similarities therefore spread on both sides of tau: paraphrases of the same unit
sit high, other steps about the same chart or figure sit in the middle, fillers sit low.

``stats`` reports the share of predicted steps that copy a reference step verbatim: about 4 %
over five sets and at most 12 % for the most faithful model. This is the workload's second
generator (:data:`WORKLOAD_VERSION` ``v2``, written into every record that used it). The
first (``v1``, which re-rendered units through the same small template bank, so models shared
many sentences word for word) produced the figures recorded before issue 18 and has been
removed; ``benchmarks/RESULTS.md`` names the commit that still has it.

Everything is a pure function of ``(seed, item index, profile)``: the same arguments give
byte-identical files on every machine. The words and templates live in ``workload_text.py``,
the items in ``workload_items.py``; this module writes the predictions, the files and the
statistics, and is the one the benchmark scripts import.

Usage::

    python benchmarks/workload.py write --items 6372 --sets 5 --out benchmarks/workdir/w6372
    python benchmarks/workload.py histogram --items 300      # cosines with minilm-offline
    python benchmarks/workload.py stats --items 6372         # chain lengths, copies, uniqueness
    python benchmarks/workload.py show 5                     # one item and its predictions
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workload_items import (
    CRYSTAL_ITEMS,
    DEFAULT_SEED,
    LETTERS,
    MAX_STEPS,
    MEAN_STEPS,
    MIN_STEPS,
    WorkItem,
    _fmt,
    generate_item,
    iter_items,
)
from workload_text import (
    _SYNONYM_RE,
    FILLERS,
    SYNONYMS,
    _capitalise,
    _decapitalise,
    _lead,
    render,
    synonymise,
)

__all__ = [
    "CRYSTAL_ITEMS",
    "DEFAULT_SEED",
    "MAX_STEPS",
    "MEAN_STEPS",
    "MIN_STEPS",
    "PROFILES",
    "WORKLOAD_VERSION",
    "Profile",
    "WorkItem",
    "WorkloadFiles",
    "cosine_histogram",
    "describe",
    "generate_item",
    "generate_prediction",
    "iter_items",
    "predict",
    "profile",
    "voice",
    "write_workload",
]

WORKLOAD_VERSION = "v2"
"""The prediction generator's name in the records (``"workload": "v2"``); ``v1`` is gone."""


# --------------------------------------------------------------------------- predictions
@dataclass(frozen=True)
class Profile:
    """How one synthetic model writes its chains."""

    name: str
    keep: float
    """Chance a reference unit appears in the prediction at all."""
    copy: float
    """Chance a kept unit is copied verbatim from the reference (else re-rendered)."""
    terse: float
    """Chance a kept unit uses a terse template."""
    synonyms: float
    """Per-word synonym substitution rate."""
    filler: float
    """Chance of a generic filler step after each kept unit."""
    hallucinate: float
    """Chance an omitted unit is replaced by a perturbed one (wrong value/entity)."""
    merge: float
    """Chance two neighbouring steps are merged into one."""
    swap: float
    """Chance each adjacent pair is swapped."""
    shuffle: float
    """Chance the whole middle of the chain is shuffled."""
    accuracy: float
    """Chance the final answer is right."""
    empty: float = 0.003
    """Chance the prediction has no steps at all (a failed generation)."""


PROFILES: tuple[Profile, ...] = (
    # name                 keep copy  terse syn   filler hallu merge swap  shuffle accuracy
    Profile("careful-large", 0.85, 0.12, 0.05, 0.25, 0.08, 0.3, 0.04, 0.04, 0.01, 0.78),
    Profile("verbose-cot", 0.8, 0.04, 0.0, 0.35, 0.45, 0.25, 0.0, 0.05, 0.02, 0.62),
    Profile("terse-small", 0.55, 0.03, 0.6, 0.2, 0.02, 0.2, 0.25, 0.05, 0.02, 0.55),
    Profile("scrambled-order", 0.75, 0.06, 0.15, 0.3, 0.1, 0.25, 0.05, 0.3, 0.25, 0.5),
    Profile("weak-hallucinating", 0.4, 0.02, 0.2, 0.4, 0.25, 0.75, 0.08, 0.12, 0.05, 0.33),
)


def profile(k: int) -> Profile:
    """The ``k``-th prediction profile (cycling, with suffixed names past the fifth)."""
    base = PROFILES[k % len(PROFILES)]
    if k < len(PROFILES):
        return base
    shift = 0.04 * (k // len(PROFILES))
    return replace(
        base,
        name=f"{base.name}-{k // len(PROFILES) + 1}",
        keep=max(0.2, base.keep - shift),
        accuracy=max(0.2, base.accuracy - shift),
    )


def _wrong_answer(item: WorkItem, rng: random.Random) -> str:
    if item.options:
        letters = [c for c in LETTERS[: len(item.options)] if c != item.answer]
        return rng.choice(letters) if letters else "A"
    try:
        value = float(item.answer)
    except ValueError:
        if item.answer in ("yes", "no"):
            return "no" if item.answer == "yes" else "yes"
        return "about " + str(rng.randint(3, 150)) + " meters"
    return _fmt(value * rng.choice((0.5, 0.8, 1.3, 2.0)) + rng.choice((1, 3, 7)))


def _format_answer(answer: str, item: WorkItem, rng: random.Random) -> str:
    """Models write answers in several surface forms."""
    if item.options and answer in LETTERS and rng.random() < 0.3:
        forms = (f"({answer})", f"{answer}.", f"Option {answer}", f"The answer is {answer}")
        return rng.choice(forms)
    if answer in ("yes", "no") and rng.random() < 0.4:
        return answer.capitalize() + "."
    return answer


# Real models rarely reproduce a reference sentence: each writes in its own voice (openers,
# closing phrases, preferred words, contractions, symbols), restates the question, comments
# on what it sees, double-checks itself and states the answer. Kept units are re-rendered and
# then rephrased in the model's voice, only ``Profile.copy`` of them are verbatim copies, and
# distractors are added.

OPENERS = (
    "From the image, ",
    "Looking at the figure, ",
    "In the picture, ",
    "I can see that ",
    "Observing the diagram, ",
    "As shown, ",
    "Based on the figure, ",
    "From what is visible, ",
    "Upon inspection, ",
    "Here, ",
    "We observe that ",
    "Notice that ",
    "It can be seen that ",
    "Examining the image, ",
    "On closer inspection, ",
    "Visually, ",
    "In the given image, ",
    "Checking the figure, ",
    "From the visual information, ",
    "As we can see, ",
    "Taking a closer look, ",
    "Judging from the picture, ",
    "If we look carefully, ",
    "According to the image, ",
)
CLOSERS = (
    " in the image",
    " as shown in the figure",
    " according to the picture",
    " based on what is visible",
    " from the diagram",
    " in this case",
    " as can be seen",
    " which is clear from the figure",
    " as the image shows",
    " judging by the picture",
    " in the provided figure",
    " if we read it carefully",
)
ELABORATIONS = (
    "which will matter for the final answer",
    "which is the key piece of information",
    "and this is what the question depends on",
    "so this needs to be kept in mind",
    "which narrows things down",
    "and that is worth noting",
    "which helps answer the question",
    "and this detail is easy to miss",
    "which is consistent with the rest of the figure",
)
RESTATE = (
    "The question asks: {question}",
    "We are asked the following: {question}",
    "The task: {question}",
    "Let me restate the question: {question}",
    "I need to answer this question: {question}",
    "Question: {question}",
)
SELF_CHECK = (
    "Let me double-check: {step}",
    "Re-checking, {step}",
    "To confirm, {step}",
    "Just to be sure, {step}",
    "Verifying this again, {step}",
    "Wait, let me verify: {step}",
)
FINAL = (
    "So my final answer is {answer}.",
    "Thus, the answer is {answer}.",
    "Final answer: {answer}.",
    "The correct choice is therefore {answer}.",
    "Putting it all together, the answer is {answer}.",
    "Hence I choose {answer}.",
)
META = (
    "Let me carefully analyse the {thing}.",
    "I will go through the {thing} step by step.",
    "First, let me understand what the {thing} shows.",
    "I should focus on the {thing} itself.",
    "Let me think about what the {thing} tells us.",
    "The {thing} contains several details.",
    "I need to examine the {thing} closely.",
    "Now let me look at the {thing} again.",
)
THINGS = ("image", "figure", "picture", "diagram", "visual", "scene", "chart", "graph")
_CONTRACTIONS = (
    ("it is", "it's"),
    ("does not", "doesn't"),
    ("is not", "isn't"),
    ("that is", "that's"),
    ("we are", "we're"),
    ("cannot", "can't"),
    ("there is", "there's"),
    ("do not", "don't"),
    ("I will", "I'll"),
    ("let us", "let's"),
)
_SYMBOLS = (
    (" percent", "%"),
    (" degrees", "°"),
    (" million", "M"),
    (" billion", "B"),
    (" thousand", "k"),
    (" and ", " & "),
)


@dataclass(frozen=True)
class Voice:
    """How one synthetic model phrases its steps (drawn from its name and the seed)."""

    openers: tuple[str, ...]
    closers: tuple[str, ...]
    preferred: dict[str, str]
    """The model's own choice of synonym for each word that has some."""
    open_rate: float
    close_rate: float
    elaborate: float
    contractions: bool
    symbols: bool
    restate: float
    """Chance the chain starts by restating the question."""
    meta: float
    """Chance of a meta comment ("Let me analyse the figure") per kept unit."""
    self_check: float
    """Chance of re-checking the previous step in other words."""
    final: float
    """Chance of a closing answer sentence of the model's own."""


def voice(name: str, seed: int = DEFAULT_SEED) -> Voice:
    """The voice of model ``name`` (a pure function of ``name`` and ``seed``).

    Examples:
        >>> voice("careful-large") == voice("careful-large")
        True
        >>> voice("careful-large").openers != voice("careful-large-2").openers
        True
    """
    rng = random.Random(f"{seed}/voice/{name}")
    verbose = "verbose" in name
    terse = "terse" in name
    return Voice(
        openers=tuple(rng.sample(OPENERS, 5)),
        closers=tuple(rng.sample(CLOSERS, 4)),
        preferred={word: rng.choice((word, *alts)) for word, alts in SYNONYMS.items()},
        open_rate=rng.uniform(0.1, 0.25) if terse else rng.uniform(0.35, 0.6),
        close_rate=rng.uniform(0.05, 0.1) if terse else rng.uniform(0.2, 0.4),
        elaborate=0.02
        if terse
        else (rng.uniform(0.2, 0.35) if verbose else rng.uniform(0.05, 0.15)),
        contractions=rng.random() < 0.5,
        symbols=rng.random() < (0.7 if terse else 0.3),
        restate=0.05 if terse else rng.uniform(0.2, 0.5),
        meta=0.0 if terse else (rng.uniform(0.15, 0.25) if verbose else rng.uniform(0.03, 0.08)),
        self_check=0.02 if terse else rng.uniform(0.05, 0.12),
        final=rng.uniform(0.3, 0.7),
    )


def _closing(text: str, phrase: str) -> str:
    """``text`` with ``phrase`` inserted before its final punctuation."""
    body = text.rstrip()
    end = body[-1] if body and body[-1] in ".!?" else "."
    return body.rstrip(".!?") + phrase + end


def rephrase(text: str, voice_: Voice, rng: random.Random, *, terse: bool = False) -> str:
    """Rewrite a rendered step in the model's voice (words, opener, closer, contractions).

    Examples:
        >>> rng = random.Random(0)
        >>> rephrase("The chart shows the value for 2019.", voice("a"), rng) != ""
        True
    """

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        if rng.random() < 0.7:
            return voice_.preferred[word]
        return rng.choice(SYNONYMS[word]) if rng.random() < 0.5 else word

    out = _capitalise(_SYNONYM_RE.sub(swap, _decapitalise(text)))
    if voice_.contractions:
        for full, short in _CONTRACTIONS:
            out = re.sub(rf"\b{full}\b", short, out)
            out = re.sub(rf"^{full.capitalize()}\b", short.capitalize(), out)
    if voice_.symbols:
        for word, symbol in _SYMBOLS:
            out = out.replace(word, symbol)
    if not terse:
        if rng.random() < voice_.close_rate:
            out = _closing(out, rng.choice(voice_.closers))
        if rng.random() < voice_.elaborate:
            out = _closing(out, ", " + rng.choice(ELABORATIONS))
        if rng.random() < voice_.open_rate:
            out = _lead(rng.choice(voice_.openers), out)
    return out


def generate_prediction(item: WorkItem, k: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Model ``k``'s prediction for ``item``, paraphrasing in its own voice.

    Returns ``{id, model, reasoning_steps, answer}``.

    Examples:
        >>> item = generate_item(3)
        >>> generate_prediction(item, 1) == generate_prediction(item, 1)
        True
    """
    prof = profile(k)
    style = voice(prof.name, seed)
    # "pred-v2" seeds the generator as when it was the second of two: same files as before.
    rng = random.Random(f"{seed}/pred-v2/{prof.name}/{item.id}")
    correct = rng.random() < prof.accuracy
    answer = item.answer if correct else _wrong_answer(item, rng)
    record: dict[str, Any] = {"id": item.id, "model": prof.name}
    if rng.random() < prof.empty:
        record.update(reasoning_steps=[], answer=_format_answer(answer, item, rng))
        return record
    keep = min(0.98, max(0.05, prof.keep + rng.gauss(0, 0.1) - 0.006 * (len(item.units) - 11)))
    thing = rng.choice(THINGS)
    steps: list[str] = []
    if rng.random() < style.restate:
        steps.append(rng.choice(RESTATE).format(question=item.question))
    for unit, ref_text in zip(item.units, item.reference_steps, strict=True):
        if rng.random() < style.meta:
            steps.append(rng.choice(META).format(thing=thing))
        if rng.random() >= keep:
            if item.perturb is not None and rng.random() < prof.hallucinate:
                fake = item.perturb(unit, rng)
                steps.append(rephrase(render(fake, rng), style, rng))
            continue
        terse = rng.random() < prof.terse
        if rng.random() < prof.copy:
            text = ref_text
        else:
            text = rephrase(render(unit, rng, terse=terse, avoid=ref_text), style, rng, terse=terse)
            if rng.random() < prof.synonyms * 0.5:
                text = synonymise(text, rng, prof.synonyms)
        steps.append(text)
        if steps and rng.random() < style.self_check:
            again = rephrase(render(unit, rng, avoid=text), style, rng, terse=True)
            steps.append(rng.choice(SELF_CHECK).format(step=_decapitalise(again)))
        if rng.random() < prof.filler * 0.5:
            steps.append(rng.choice(FILLERS))
    merged: list[str] = []
    for text in steps:
        if merged and rng.random() < prof.merge:
            merged[-1] = f"{merged[-1].rstrip('.')}, and {_decapitalise(text)}"
        else:
            merged.append(text)
    steps = merged
    if len(steps) > 3 and rng.random() < prof.shuffle:
        middle = steps[1:-1]
        rng.shuffle(middle)
        steps = [steps[0], *middle, steps[-1]]
    for pos in range(len(steps) - 1):
        if rng.random() < prof.swap:
            steps[pos], steps[pos + 1] = steps[pos + 1], steps[pos]
    if rng.random() < style.final:
        final = _format_answer(answer, item, rng).rstrip(".")
        steps.append(rng.choice(FINAL).format(answer=final))
    if not steps:
        steps = [rng.choice(FILLERS)]
    record.update(reasoning_steps=steps, answer=_format_answer(answer, item, rng))
    return record


def predict(item: WorkItem, k: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Model ``k``'s prediction for ``item`` (:func:`generate_prediction`)."""
    return generate_prediction(item, k, seed)


# --------------------------------------------------------------------------- files
@dataclass(frozen=True)
class WorkloadFiles:
    """Where :func:`write_workload` put things."""

    root: Path
    benchmark: Path
    predictions: list[Path]
    cm_references: Path | None
    cm_predictions: list[Path]


GENERATOR_FILES = ("workload.py", "workload_items.py", "workload_text.py")
"""The generator's source files (beside this one)."""


def generator_version() -> str:
    """Hash of the generator's files: files written by another version of it are rewritten."""
    digest = hashlib.sha256()
    for name in GENERATOR_FILES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:16]


def write_workload(
    out: str | Path,
    n_items: int = CRYSTAL_ITEMS,
    n_sets: int = 5,
    *,
    seed: int = DEFAULT_SEED,
    crystal_metrics_format: bool = True,
) -> WorkloadFiles:
    """Write ``benchmark.jsonl``, ``predictions/<model>.jsonl`` and crystal-metrics JSON files.

    Items stream to disk one at a time, so 100,000 items need little memory (except the
    crystal-metrics JSON objects, which are skipped when ``crystal_metrics_format`` is off).
    Files already written for the same arguments are reused (``manifest.json`` records them).
    """
    root = Path(out)
    manifest = {
        "items": n_items,
        "sets": n_sets,
        "seed": seed,
        "cm": crystal_metrics_format,
        "style": WORKLOAD_VERSION,
        "generator": generator_version(),
    }
    names = [profile(k).name for k in range(n_sets)]
    files = WorkloadFiles(
        root=root,
        benchmark=root / "benchmark.jsonl",
        predictions=[root / "predictions" / f"{name}.jsonl" for name in names],
        cm_references=root / "cm" / "references.json" if crystal_metrics_format else None,
        cm_predictions=[root / "cm" / f"{name}.json" for name in names]
        if crystal_metrics_format
        else [],
    )
    stamp = root / "manifest.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == manifest:
        return files
    (root / "predictions").mkdir(parents=True, exist_ok=True)
    bench = files.benchmark.open("w", encoding="utf-8")
    preds = [p.open("w", encoding="utf-8") for p in files.predictions]
    cm_refs: dict[str, Any] = {}
    cm_preds: list[dict[str, Any]] = [{} for _ in range(n_sets)]
    try:
        for item in iter_items(n_items, seed):
            bench.write(json.dumps(item.record(), ensure_ascii=False) + "\n")
            if crystal_metrics_format:
                cm_refs[item.id] = {"reference_steps": item.reference_steps, "answer": item.answer}
            for k, handle in enumerate(preds):
                record = predict(item, k, seed)
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                if crystal_metrics_format:
                    cm_preds[k][item.id] = {
                        "question": item.question,
                        "reasoning_steps": record["reasoning_steps"],
                        "answer": record["answer"],
                    }
    finally:
        bench.close()
        for handle in preds:
            handle.close()
    if crystal_metrics_format:
        assert files.cm_references is not None
        files.cm_references.parent.mkdir(parents=True, exist_ok=True)
        files.cm_references.write_text(json.dumps(cm_refs, ensure_ascii=False), encoding="utf-8")
        for path, data in zip(files.cm_predictions, cm_preds, strict=True):
            path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    stamp.write_text(json.dumps(manifest))
    return files


# --------------------------------------------------------------------------- measurements
def describe(n_items: int, n_sets: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Chain-length and uniqueness statistics of a workload, and how often models copy.

    ``verbatim_share``: predicted steps equal to a reference step of the same item;
    ``in_any_reference``: equal to any reference step of the workload; ``shared_with_other
    sets``: also written, word for word, by another model of the workload.
    """
    lengths: list[int] = []
    pred_lengths: list[list[int]] = [[] for _ in range(n_sets)]
    ref_texts: set[str] = set()
    pred_texts: list[set[str]] = [set() for _ in range(n_sets)]
    n_ref = 0
    n_pred = [0] * n_sets
    verbatim = [0] * n_sets
    sources: dict[str, int] = {}
    for item in iter_items(n_items, seed):
        lengths.append(len(item.reference_steps))
        ref_texts.update(item.reference_steps)
        n_ref += len(item.reference_steps)
        sources[item.source] = sources.get(item.source, 0) + 1
        own = set(item.reference_steps)
        for k in range(n_sets):
            steps = predict(item, k, seed)["reasoning_steps"]
            pred_lengths[k].append(len(steps))
            pred_texts[k].update(steps)
            n_pred[k] += len(steps)
            verbatim[k] += sum(1 for step in steps if step in own)
    union_all = set(ref_texts).union(*pred_texts)

    def shared(k: int) -> int:
        others = set().union(*(pred_texts[j] for j in range(n_sets) if j != k))
        return len(pred_texts[k] & others)

    words = [len(t.split()) for t in list(ref_texts)[:20000]]
    total_pred = sum(n_pred)
    return {
        "items": n_items,
        "style": WORKLOAD_VERSION,
        "sources": sources,
        "ref_steps": {
            "min": min(lengths),
            "max": max(lengths),
            "mean": round(sum(lengths) / len(lengths), 2),
            "total": n_ref,
            "unique": len(ref_texts),
            "mean_words": round(sum(words) / len(words), 1),
        },
        "pred_sets": [
            {
                "model": profile(k).name,
                "mean_steps": round(sum(pred_lengths[k]) / n_items, 2),
                "total": n_pred[k],
                "unique": len(pred_texts[k]),
                "verbatim_share": round(verbatim[k] / max(1, n_pred[k]), 4),
                "in_any_reference": round(
                    len(pred_texts[k] & ref_texts) / max(1, len(pred_texts[k])), 4
                ),
                "shared_with_other_sets": round(shared(k) / max(1, len(pred_texts[k])), 4),
            }
            for k in range(n_sets)
        ],
        "verbatim_share_all_sets": round(sum(verbatim) / max(1, total_pred), 4),
        "texts_total_one_set": n_ref + (n_pred[0] if n_sets else 0),
        "texts_total_all_sets": n_ref * n_sets + sum(n_pred),
        "unique_all_sets": len(union_all),
    }


def cosine_histogram(
    n_items: int = 300,
    n_sets: int = 5,
    seed: int = DEFAULT_SEED,
    tau: float = 0.35,
) -> dict[str, Any]:
    """Cosines of every (predicted, reference) step pair within items, with minilm-offline."""
    import numpy as np

    from crystalbench.encoders import load_encoder

    encoder = load_encoder("minilm-offline")
    items = list(iter_items(n_items, seed))
    preds = [[predict(item, k, seed) for item in items] for k in range(n_sets)]
    texts = sorted(
        {s for it in items for s in it.reference_steps}
        | {s for pk in preds for p in pk for s in p["reasoning_steps"]}
    )
    vectors = encoder.encode(texts)
    row = {t: i for i, t in enumerate(texts)}
    all_pairs: list[np.ndarray] = []
    best_per_pred: list[np.ndarray] = []
    for k in range(n_sets):
        for item, pred in zip(items, preds[k], strict=True):
            if not pred["reasoning_steps"]:
                continue
            p = vectors[[row[s] for s in pred["reasoning_steps"]]]
            r = vectors[[row[s] for s in item.reference_steps]]
            sim = p @ r.T
            all_pairs.append(sim.ravel())
            best_per_pred.append(sim.max(axis=1))
    pairs = np.concatenate(all_pairs)
    best = np.concatenate(best_per_pred)
    edges = np.round(np.arange(-0.2, 1.0001, 0.05), 2)
    counts, _ = np.histogram(np.clip(pairs, -0.2, 1.0), bins=edges)
    best_counts, _ = np.histogram(np.clip(best, -0.2, 1.0), bins=edges)
    return {
        "items": n_items,
        "sets": n_sets,
        "style": WORKLOAD_VERSION,
        "encoder": encoder.identity,
        "pairs": int(pairs.size),
        "share_0.25_0.50": round(float(((pairs >= 0.25) & (pairs < 0.5)).mean()), 4),
        "share_above_tau": round(float((pairs > tau).mean()), 4),
        "best_share_0.25_0.50": round(float(((best >= 0.25) & (best < 0.5)).mean()), 4),
        "best_share_above_tau": round(float((best > tau).mean()), 4),
        "best_within_0.05_of_tau": round(float((np.abs(best - tau) < 0.05).mean()), 4),
        "histogram": [
            (f"{lo:.2f}..{hi:.2f}", int(c), int(b))
            for lo, hi, c, b in zip(edges[:-1], edges[1:], counts, best_counts, strict=True)
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write benchmark, predictions and crystal-metrics files")
    w.add_argument("--items", type=int, default=CRYSTAL_ITEMS)
    w.add_argument("--sets", type=int, default=5)
    w.add_argument("--seed", type=int, default=DEFAULT_SEED)
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("--no-cm", action="store_true", help="skip the crystal-metrics JSON files")
    s = sub.add_parser("stats", help="chain lengths and text uniqueness")
    s.add_argument("--items", type=int, default=CRYSTAL_ITEMS)
    s.add_argument("--sets", type=int, default=5)
    s.add_argument("--seed", type=int, default=DEFAULT_SEED)
    h = sub.add_parser("histogram", help="cosine histogram with minilm-offline")
    h.add_argument("--items", type=int, default=300)
    h.add_argument("--sets", type=int, default=5)
    h.add_argument("--seed", type=int, default=DEFAULT_SEED)
    x = sub.add_parser("show", help="print one item and its predictions")
    x.add_argument("index", type=int)
    x.add_argument("--sets", type=int, default=5)
    x.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    if args.command == "write":
        files = write_workload(
            args.out,
            args.items,
            args.sets,
            seed=args.seed,
            crystal_metrics_format=not args.no_cm,
        )
        print(json.dumps({"root": str(files.root), "sets": [p.name for p in files.predictions]}))
    elif args.command == "stats":
        print(json.dumps(describe(args.items, args.sets, args.seed), indent=2))
    elif args.command == "histogram":
        result = cosine_histogram(args.items, args.sets, args.seed)
        rows = result.pop("histogram")
        print(json.dumps(result, indent=2))
        print(f"{'cosine':>12} {'all pairs':>10} {'best per pred':>14}")
        for label, count, best in rows:
            print(f"{label:>12} {count:>10} {best:>14}")
    else:
        item = generate_item(args.index, args.seed)
        print(f"[{item.id}] {item.question} options={item.options} answer={item.answer}")
        for step in item.reference_steps:
            print("  REF ", step)
        for k in range(args.sets):
            pred = predict(item, k, args.seed)
            print(f" -- {pred['model']} answer={pred['answer']!r}")
            for step in pred["reasoning_steps"]:
                print("    ", step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
