"""Builders shared by the validation tests: pairs and label files of known content."""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from pathlib import Path

from crystalbench.types import Prediction
from crystalbench.validation.bands import band_index, band_labels
from crystalbench.validation.pairs import StepPair

PAPER_BANDS = (
    # (a cosine inside the band, pairs people call a match, pairs in the band): Table 3.
    (0.10, 0, 33),
    (0.30, 0, 14),
    (0.40, 13, 19),
    (0.60, 16, 25),
    (0.80, 8, 9),
)
"""The paper's Table 3 as counts: 47 pairs below tau (all "no"), 53 at or above it, of which
people call 37 a match. Agreement 84/100; standard Cohen's kappa 0.685; 16 false positives."""


def make_pair(pair_id: str, cosine: float, **extra: object) -> StepPair:
    """A pair with realistic texts whose band follows its cosine."""
    band = band_labels()[int(band_index([cosine], (0.20, 0.35, 0.50, 0.70))[0])]
    fields: dict[str, object] = {
        "item_id": f"item-{pair_id}",
        "model": "model-a",
        "pred_step": f"The bar for region {pair_id} reaches 40 units.",
        "ref_step": f"Region {pair_id} has a value of 40.",
        "band": band,
    }
    fields.update(extra)
    return StepPair(pair_id=pair_id, cosine=cosine, **fields)  # type: ignore[arg-type]


def paper_pairs() -> tuple[list[StepPair], list[tuple[str, str, str]]]:
    """100 pairs with the paper's Table 3 counts and one annotator's labels for them."""
    pairs: list[StepPair] = []
    labels: list[tuple[str, str, str]] = []
    for cosine, matches, n in PAPER_BANDS:
        for k in range(n):
            pair = make_pair(f"b{int(cosine * 100)}-{k}", cosine)
            pairs.append(pair)
            labels.append((pair.pair_id, "annotator-1", "match" if k < matches else "no_match"))
    return pairs, labels


def write_pairs_jsonl(path: Path, pairs: Sequence[StepPair]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(pair.model_dump_json(exclude_none=True) + "\n" for pair in pairs), encoding="utf-8"
    )
    return path


def write_labels_csv(path: Path, rows: Sequence[Sequence[str]], header: Sequence[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def perturbed_predictions(bench, seed: int, keep: float) -> list[Prediction]:
    """Realistic noisy chains: kept steps with words dropped or swapped, fillers, shuffles."""
    rng = random.Random(seed)
    fillers = ["Let me look at the image.", "I will now compute the answer.", "This is tricky."]
    out = []
    for item in bench.items:
        steps = []
        for step in item.reference_steps:
            if rng.random() > keep:
                continue
            words = step.split()
            if len(words) > 4 and rng.random() < 0.6:
                del words[rng.randrange(len(words))]
            if len(words) > 4 and rng.random() < 0.4:
                i, j = rng.randrange(len(words)), rng.randrange(len(words))
                words[i], words[j] = words[j], words[i]
            steps.append(" ".join(words))
        steps += rng.sample(fillers, k=rng.randrange(3))
        if rng.random() < 0.3:
            rng.shuffle(steps)
        out.append(Prediction(id=item.id, reasoning_steps=steps, answer=item.answer))
    return out
