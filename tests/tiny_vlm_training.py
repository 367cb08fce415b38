"""Training fixtures on top of ``tests/tiny_models.py``: a tiny VLM that can earn rewards.

A randomly initialised model almost never writes the CRYSTAL JSON object character by
character, so every reward would be 0, every advantage 0 and no parameter would move. The
tokenizer of ``tiny_qwen2_5_vl`` is therefore extended with a few *whole completions* as
single (non-special) tokens, and generation is restricted to those tokens plus end-of-turn
(``bad_words_ids``). A sampled completion is then one of:

- ``perfect``: right answer, the reference steps (CPR 1.0);
- ``lucky``: right answer, one unrelated step (CPR 0.65: a_w only);
- ``diligent``: wrong answer, the reference steps (CPR 0.3 * 0.35 = 0.105);
- ``two tokens glued together``: not one JSON object (format fails, CPR 0).

Rewards vary within each group, so GRPO has non-zero advantages, and the answer and
reasoning objectives disagree (``lucky`` vs ``diligent``), which is what PCGrad is about.

The synthetic pool asks "What is 2 + 2?" about coloured squares, with reference chains of 1
to 4 steps (the curriculum orders by them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tiny_models import tiny_qwen2_5_vl

STEPS = ["Add 2 and 2.", "The sum is 4."]

COMPLETIONS = {
    "perfect": json.dumps({"reasoning_steps": STEPS, "answer": "4"}),
    "lucky": json.dumps({"reasoning_steps": ["Guess wildly."], "answer": "4"}),
    "diligent": json.dumps({"reasoning_steps": STEPS, "answer": "5"}),
}

CHAINS = [
    ["Add 2 and 2."],
    ["Add 2 and 2.", "The sum is 4."],
    ["Look at the square.", "Add 2 and 2.", "The sum is 4."],
    ["Look at the square.", "Note its colour.", "Add 2 and 2.", "The sum is 4."],
]


def training_model(seed: int = 0) -> tuple[Any, Any, list[int]]:
    """``(model, processor, bad_words_ids)`` with the whole-completion tokens added."""
    from tokenizers import AddedToken

    model, processor = tiny_qwen2_5_vl(seed)
    tokenizer = processor.tokenizer
    tokenizer.add_tokens(
        [AddedToken(text, special=False, normalized=False) for text in COMPLETIONS.values()]
    )
    model.resize_token_embeddings(len(tokenizer))
    allowed = {tokenizer.convert_tokens_to_ids(text) for text in COMPLETIONS.values()}
    allowed.add(tokenizer.eos_token_id)
    banned = [[i] for i in range(len(tokenizer)) if i not in allowed]
    return model.train(), processor, banned


def write_pool(folder: Path, n_items: int = 12, *, prefix: str = "pool") -> Path:
    """A JSONL pool of ``n_items`` items with 16x16 images, chains of 1 to 4 steps."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n_items):
        name = f"{prefix}-{i:02d}.png"
        Image.new("RGB", (16, 16), (20 * i % 256, 255 - 17 * i % 256, 60)).save(folder / name)
        rows.append(
            {
                "id": f"{prefix}-{i:02d}",
                "source": "synthetic" if i % 2 else "toy",
                "question": f"What is 2 + 2? (square {i})",
                "answer": "4",
                "reference_steps": CHAINS[(i * 7) % len(CHAINS)],
                "image": name,
            }
        )
    path = folder / f"{prefix}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def tiny_config(
    output_dir: Path,
    pool: Path,
    strategy: str,
    banned: list[list[int]],
    **sections: Any,
) -> Any:
    """A :class:`TrainConfig` for two fast CPU steps on the tiny model."""
    from crystalbench.training.config import TrainConfig

    grpo = {
        "learning_rate": 0.05,
        "max_steps": 2,
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "max_completion_length": 1,
        "temperature": 1.0,
        "bf16": False,
        "gradient_checkpointing": False,
        "use_cpu": True,
        "logging_steps": 1,
        "save_steps": 1,
        "eval_steps": 1,
        "extra": {"generation_kwargs": {"bad_words_ids": banned}},
    }
    grpo.update(sections.pop("grpo", {}))
    data = {"train": str(pool), "validation_fraction": 0.2, "leakage": {"benchmark": "sample"}}
    data.update(sections.pop("data", {}))
    return TrainConfig.model_validate(
        {
            "strategy": strategy,
            "output_dir": str(output_dir),
            "seed": 0,
            "model": {"name_or_path": "tiny-qwen2.5-vl", "dtype": "float32"},
            "data": data,
            "rewards": {"encoder": "hash"},
            "grpo": grpo,
            "evaluation": {"max_items": 2, "batch_size": 2},
            **sections,
        }
    )
