"""The copy attack of issue 30: reference wording copied, one to three facts changed per chain.

A model (or a policy under a process reward) that has learnt that the step term rewards
reference *wording* copies the reference chain, gets a few facts wrong and keeps the right
answer. From **every** item of the bundled sample (``crystalbench/data/sample``) this script
builds such a chain, seeded: one to three steps of the chain each get one change, a value
(a number moved), an entity (a name or label swapped for another of the same item) or a
relation (a word swapped for its opposite: highest / lowest, left / right, more / fewer...),
and the other steps are copied as they are. The answer is the gold one.

Each attack is scored through the engine (``crystalbench.evaluate``) under every guard
(``none``, ``facts``, ``facts-strict``) and compared with what its unchanged steps alone
earn: with m predicted and n reference steps and k steps unchanged, an honest matcher pairs
the k copies and nothing else, Match F1 = 2k / (m + n). The target of issue 30: under
``facts`` the mean Match F1 within 0.05 of that. Also scored: the issue's own example
(``plotqa-01`` with Chile 11,450 and Kenya 3,900, seven steps: 0.824 before, 0.235 right)
and the sample's five model styles (which should not move by more than 0.01).

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/copy_attack.py [--encoder minilm-offline|hash]
        [--seed 30] [--out benchmarks/results/raw/copy-attack.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crystalbench import ScoreConfig, evaluate, load_benchmark, load_predictions
from crystalbench.data import SAMPLE_DIR
from crystalbench.encoders import load_encoder
from crystalbench.types import BenchmarkItem, Prediction

ROOT = Path(__file__).resolve().parents[1]
GUARDS = ("none", "facts", "facts-strict")
KINDS = ("value", "entity", "relation")

OPPOSITES = {
    "highest": "lowest",
    "tallest": "shortest",
    "largest": "smallest",
    "greatest": "least",
    "greater": "less",
    "more": "fewer",
    "higher": "lower",
    "longer": "shorter",
    "wider": "narrower",
    "warmer": "colder",
    "left": "right",
    "top": "bottom",
    "above": "below",
    "east": "west",
    "north": "south",
    "rises": "falls",
    "increase": "decrease",
    "exceeded": "trailed",
    "open": "closed",
    "full": "empty",
    "attract": "repel",
    "solid": "liquid",
    "opposite": "same",
    "first": "second",
}
OPPOSITES.update({b: a for a, b in list(OPPOSITES.items())})
_RELATION = re.compile(r"\b(" + "|".join(sorted(OPPOSITES, key=len, reverse=True)) + r")\b", re.I)
_NUMBER = re.compile(r"(?<![\w.^/,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w,]*\d)(?!\^)")
_YEAR = re.compile(r"^(18|19|20)\d\d$")
_NAME = re.compile(r"(?<=[a-z,;:(] )([A-Z][a-z]+)\b")
_LABEL = re.compile(r"\b([A-Z]{2,3})\b")


def _case_like(word: str, model: str) -> str:
    if model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _moved(text: str, rng: random.Random) -> str:
    """A number of the same form, moved: small counts by 1-3, larger values by 5-25 %."""
    whole, _, decimals = text.partition(".")
    grouped = "," in whole
    value = int(whole.replace(",", ""))
    if decimals:
        scale = 10 ** len(decimals)
        units = value * scale + int(decimals)
        step = max(1, round(units * rng.uniform(0.05, 0.25)))
        units += step if rng.random() < 0.5 or units - step <= 0 else -step
        new_whole, new_decimals = divmod(units, scale)
        moved = f"{new_whole}.{new_decimals:0{len(decimals)}d}"
    elif value < 20:
        moved = str(value + rng.choice([1, 2, 3]))
    else:
        step = max(1, round(value * rng.uniform(0.05, 0.25)))
        moved = str(value + step if rng.random() < 0.5 or value - step <= 0 else value - step)
    if grouped and "." not in moved:
        moved = f"{int(moved):,}"
    return moved


def changes(item: BenchmarkItem, index: int, rng: random.Random) -> list[tuple[str, str]]:
    """Every one-fact change of reference step ``index``: ``(kind, changed step)``."""
    step = item.reference_steps[index]
    text = " ".join(item.reference_steps)
    found: list[tuple[str, str]] = []
    for match in _NUMBER.finditer(step):
        written = match.group(0)
        if _YEAR.match(written) or not written.replace(",", "").replace(".", "").strip("0"):
            continue
        changed = step[: match.start()] + _moved(written, rng) + step[match.end() :]
        found.append(("value", changed))
    names = sorted({m.group(1) for m in _NAME.finditer(text)})
    labels = sorted({m.group(1) for m in _LABEL.finditer(text)})
    for pattern, pool in ((_NAME, names), (_LABEL, labels)):
        for match in pattern.finditer(step):
            others = [name for name in pool if name != match.group(1)]
            if others:
                swap = rng.choice(others)
                found.append(("entity", step[: match.start(1)] + swap + step[match.end(1) :]))
    for match in _RELATION.finditer(step):
        word = match.group(1)
        opposite = _case_like(OPPOSITES[word.lower()], word)
        found.append(("relation", step[: match.start()] + opposite + step[match.end() :]))
    references = set(item.reference_steps)
    return [(kind, changed) for kind, changed in found if changed not in references]


def build_attacks(items: Sequence[BenchmarkItem], seed: int) -> list[dict[str, Any]]:
    """One attack per item: one to three steps changed, one fact each, the rest copied."""
    rng = random.Random(seed)
    attacks = []
    for item in items:
        steps = list(item.reference_steps)
        options = {i: changes(item, i, rng) for i in range(len(steps))}
        changeable = [i for i, found in options.items() if found]
        if not changeable:
            attacks.append({"id": item.id, "steps": steps, "changed": []})
            continue
        k = min(rng.randint(1, 3), len(changeable))
        changed = []
        for index in sorted(rng.sample(changeable, k)):
            kind, new = rng.choice(options[index])
            changed.append({"step": index, "kind": kind, "from": steps[index], "to": new})
            steps[index] = new
        attacks.append({"id": item.id, "steps": steps, "changed": changed})
    return attacks


def unchanged_f1(n_pred: int, n_ref: int, kept: int) -> float:
    """Match F1 of a chain whose ``kept`` unchanged steps match and nothing else does."""
    return 2.0 * kept / (n_pred + n_ref) if n_pred + n_ref else 1.0


ISSUE_EXAMPLE = [
    "The bar chart shows international tourist arrivals in 2018 for five countries.",
    "The bar for Norway shows a value of 5,680.",
    "The bar for Chile shows a value of 11,450.",
    "The bar for Kenya shows a value of 3,900.",
    "The highest bar is Chile with 11,450 arrivals.",
    "The lowest bar is Kenya with 3,900 arrivals.",
    "The difference is 11,450 - 3,900 = 7,550.",
]
"""Issue 30's ``plotqa-01`` answer: the reference's wording, Chile and Kenya wrong."""


def score(bench: Any, preds: list[Prediction], encoder: Any, name: str, guard: str) -> Any:
    config = ScoreConfig(encoder=name, use_cache=False, guard=guard)
    return evaluate(bench, preds, config, encoder=encoder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoder", default="minilm-offline")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "raw" / "copy-attack.json"
    )
    args = parser.parse_args()
    began = time.perf_counter()
    encoder = load_encoder(args.encoder)
    bench = load_benchmark("sample")
    attacks = build_attacks(bench.items, args.seed)
    preds = [
        Prediction(id=a["id"], reasoning_steps=a["steps"], answer=bench.get(a["id"]).answer)
        for a in attacks
    ]
    earned = {
        a["id"]: unchanged_f1(
            len(a["steps"]),
            len(bench.get(a["id"]).reference_steps),
            len(a["steps"]) - len(a["changed"]),
        )
        for a in attacks
    }
    record: dict[str, Any] = {
        "encoder": encoder.identity,
        "seed": args.seed,
        "items": len(attacks),
        "items_changed": sum(1 for a in attacks if a["changed"]),
        "steps": sum(len(a["steps"]) for a in attacks),
        "steps_changed": sum(len(a["changed"]) for a in attacks),
        "changes_by_kind": {
            k: sum(c["kind"] == k for a in attacks for c in a["changed"]) for k in KINDS
        },
        "unchanged_steps_f1": round(sum(earned.values()) / len(earned), 4),
        "guards": {},
    }
    per_item: dict[str, dict[str, Any]] = {
        a["id"]: {"changed": a["changed"], "unchanged_f1": round(earned[a["id"]], 4)}
        for a in attacks
    }
    print(
        f"copy attack, seed {args.seed}: {record['items']} items, "
        f"{record['steps_changed']} of {record['steps']} steps changed "
        f"{record['changes_by_kind']}; unchanged steps alone: {record['unchanged_steps_f1']}"
    )
    for guard in GUARDS:
        run = score(bench, preds, encoder, args.encoder, guard)
        by_kind = {}
        for kind in KINDS:
            ids = [a["id"] for a in attacks if any(c["kind"] == kind for c in a["changed"])]
            rows = [r for r in run.items if r.id in ids]
            by_kind[kind] = {
                "items": len(ids),
                "match_f1": round(sum(r.f1 for r in rows) / max(len(rows), 1), 4),
                "unchanged_f1": round(sum(earned[i] for i in ids) / max(len(ids), 1), 4),
            }
        for result in run.items:
            per_item[result.id][guard] = round(result.f1, 4)
        summary = run.summary
        record["guards"][guard] = {
            "match_f1": round(summary.match_f1, 4),
            "gap_to_unchanged": round(summary.match_f1 - record["unchanged_steps_f1"], 4),
            "ordered_f1": round(summary.ordered_f1, 4),
            "vetoed_pairs": summary.n_vetoed_pairs,
            "step_vetoes": sum(1 for r in run.items for v in r.vetoed or () if v.scope == "step"),
            "by_kind": by_kind,
        }
        print(
            f"  {guard:12s} Match F1 {summary.match_f1:.4f} (gap "
            f"{record['guards'][guard]['gap_to_unchanged']:+.4f}), vetoes "
            f"{summary.n_vetoed_pairs}, by kind "
            + ", ".join(
                f"{k} {v['match_f1']:.3f}/{v['unchanged_f1']:.3f}" for k, v in by_kind.items()
            )
        )
    record["per_item"] = per_item

    example = bench.subset(ids=["plotqa-01"])
    guess = [Prediction(id="plotqa-01", reasoning_steps=ISSUE_EXAMPLE, answer="9,250")]
    record["issue_example"] = {
        "unchanged_f1": round(unchanged_f1(7, 10, 2), 4),
        **{
            g: round(score(example, guess, encoder, args.encoder, g).summary.match_f1, 4)
            for g in GUARDS
        },
    }
    print(f"  issue 30's plotqa-01 example: {record['issue_example']}")

    styles: dict[str, Any] = {}
    for path in sorted((Path(SAMPLE_DIR) / "predictions").glob("*.jsonl")):
        style_preds = load_predictions(path)
        rows = {g: score(bench, style_preds, encoder, args.encoder, g).summary for g in GUARDS}
        styles[path.stem] = {
            g: {
                "match_f1": round(s.match_f1, 4),
                "ordered_f1": round(s.ordered_f1, 4),
                "vetoed_pairs": s.n_vetoed_pairs,
            }
            for g, s in rows.items()
        }
        moved = max(abs(rows[g].match_f1 - rows["none"].match_f1) for g in GUARDS)
        styles[path.stem]["largest_move"] = round(moved, 4)
        print(
            f"  style {path.stem:28s} "
            + "  ".join(f"{g} {s.match_f1:.4f}/{s.ordered_f1:.4f}" for g, s in rows.items())
        )
    record["sample_styles"] = styles
    record.update(
        command=" ".join(["python", "benchmarks/copy_attack.py", *sys.argv[1:]]),
        seconds=round(time.perf_counter() - began, 1),
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
        cpus=os.cpu_count(),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
