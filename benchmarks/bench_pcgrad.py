"""Cost of PCGrad against plain CPR per optimizer step: a CPU proxy on a small random VLM.

PCGrad changes only the policy-update phase of GRPO (generation and reward scoring are the
same), so this times exactly that phase on fixed inputs, three ways:

- ``cpr``: TRL's loss with the CPR advantage, one backward pass (what ``GRPOTrainer`` does);
- ``pcgrad-shared``: one forward, a loss per objective, two backward passes
  (``retain_graph``), projection and combination of the gradients;
- ``pcgrad-separate``: one forward and one backward pass per objective.

The model is a Qwen2.5-VL-architecture model with a wider text tower than the test model
(``--hidden``, ``--layers``), fed a batch of ``--batch`` completions of ``--completion``
tokens after ``--prompt`` prompt tokens (text only). Reported:

- time per step: the three modes alternate step by step in one process for ``--steps``
  rounds after a warm-up step each (so that load from other processes hits them alike);
  median and minimum;
- peak memory: each mode in a fresh process, the growth of the process's peak resident
  memory over its first step (``ru_maxrss``: a coarse CPU stand-in for GPU peak memory;
  the model's fp32 gradient is ``4 * params`` bytes).

Usage::

    .venv/bin/python benchmarks/bench_pcgrad.py --steps 10
    .venv/bin/python benchmarks/bench_pcgrad.py --mode pcgrad-shared --json   # one mode
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODES = ("cpr", "pcgrad-shared", "pcgrad-separate")


def build(args: argparse.Namespace, mode: str):  # type: ignore[no-untyped-def]
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    from crystalbench.training.config import phase_plans
    from crystalbench.training.pcgrad import split_advantages
    from crystalbench.training.runner import build_trainer, prepare_data
    from tiny_models import tiny_processor
    from tiny_vlm_training import tiny_config, write_pool

    processor = tiny_processor()
    tokenizer = processor.tokenizer
    token = tokenizer.convert_tokens_to_ids
    heads = max(2, args.hidden // 32)
    half = args.hidden // heads // 2
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": args.hidden,
            "intermediate_size": args.hidden * 3,
            "num_hidden_layers": args.layers,
            "num_attention_heads": heads,
            "num_key_value_heads": max(1, heads // 2),
            "max_position_embeddings": 4096,
            "rope_parameters": {
                "rope_type": "default",
                "mrope_section": [half - 2 * (half // 3), half // 3, half // 3],
                "rope_theta": 10000.0,
            },
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": None,
        },
        vision_config={
            "depth": 1,
            "hidden_size": 16,
            "intermediate_size": 16,
            "num_heads": 2,
            "out_hidden_size": args.hidden,
            "fullatt_block_indexes": [0],
        },
        image_token_id=token("<|image_pad|>"),
        video_token_id=token("<|video_pad|>"),
        vision_start_token_id=token("<|vision_start|>"),
        vision_end_token_id=token("<|vision_end|>"),
    )
    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration(config).train()
    tmp = Path(tempfile.mkdtemp(prefix="bench-pcgrad-"))
    pool = write_pool(tmp / "pool", 6)
    run = tiny_config(
        tmp / "run",
        pool,
        "cpr",
        [],
        pcgrad={
            "enabled": mode != "cpr",
            "forward": "separate" if mode == "pcgrad-separate" else "shared",
        },
        evaluation={"enabled": False},
        data={"leakage": {"benchmark": None, "on_leak": "ignore"}},
    )
    data = prepare_data(run)
    trainer = build_trainer(run, phase_plans(run)[0], data, model=model, processing_class=processor)
    trainer.current_gradient_accumulation_steps = 1
    trainer.accelerator.gradient_state._set_sync_gradients(True)

    generator = torch.Generator().manual_seed(1)
    vocab = 100  # ordinary characters only
    batch, groups = args.batch, 4
    prompt = torch.randint(10, vocab, (batch // groups, args.prompt), generator=generator)
    rewards = torch.rand(batch, 2, generator=generator) * torch.tensor([0.65, 0.35])
    parts = split_advantages(
        rewards, torch.ones(2), ["answer", "reasoning"], num_generations=groups
    )
    inputs = {
        "prompt_ids": prompt.repeat_interleave(groups, dim=0),
        "prompt_mask": torch.ones(batch, args.prompt, dtype=torch.long),
        "completion_ids": torch.randint(10, vocab, (batch, args.completion), generator=generator),
        "completion_mask": torch.ones(batch, args.completion, dtype=torch.long),
        "advantages": parts["answer"] + parts["reasoning"],
        "advantages_answer": parts["answer"],
        "advantages_reasoning": parts["reasoning"],
        "num_items_in_batch": torch.tensor(float(batch * args.completion)),
    }
    return trainer, inputs


def one_mode(args: argparse.Namespace) -> dict[str, float]:
    import torch

    from crystalbench.training.pcgrad import GradientSurgeon

    torch.set_num_threads(args.threads)
    trainer, inputs = build(args, args.mode)
    model = trainer.model
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    surgeon = GradientSurgeon(trainer.accelerator, model) if args.mode != "cpr" else None
    trainer._surgeon = surgeon

    def step() -> None:
        model.zero_grad(set_to_none=True)
        if surgeon is None:
            trainer._compute_loss(model, dict(inputs)).backward()
        else:
            trainer._objective_backward(model, dict(inputs))
            surgeon.apply()

    # Peak memory: growth of the process's peak RSS over the first step (the setup's own
    # peak is lower: it holds no activations or gradients).
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    step()  # warm-up
    times = []
    for _ in range(args.steps):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return {
        "mode": args.mode,
        "params": n_params,
        "ms_per_step": 1000 * statistics.median(times),
        "ms_min": 1000 * min(times),
        "peak_rss_mb": peak / 1024,
        "peak_growth_mb": (peak - base) / 1024,
    }


def interleaved_timing(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Time the three modes in one process, alternating step by step, so that load from other
    processes on the machine hits them alike."""
    import torch

    from crystalbench.training.pcgrad import GradientSurgeon

    torch.set_num_threads(args.threads)
    trainer, inputs = build(args, "pcgrad-shared")
    model = trainer.model
    surgeon = GradientSurgeon(trainer.accelerator, model)
    trainer._surgeon = surgeon
    shared = trainer.pcgrad_config
    separate = shared.model_copy(update={"forward": "separate"})

    def step(mode: str) -> None:
        model.zero_grad(set_to_none=True)
        if mode == "cpr":
            trainer._compute_loss(model, dict(inputs)).backward()
            return
        trainer.pcgrad_config = shared if mode == "pcgrad-shared" else separate
        trainer._objective_backward(model, dict(inputs))
        surgeon.apply()

    for mode in MODES:
        step(mode)  # warm-up
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_ in range(args.steps):
        order = MODES[round_ % 3 :] + MODES[: round_ % 3]
        for mode in order:
            started = time.perf_counter()
            step(mode)
            times[mode].append(1000 * (time.perf_counter() - started))
    return {
        mode: {"ms_median": statistics.median(values), "ms_min": min(values)}
        for mode, values in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=MODES)
    parser.add_argument("--json", action="store_true", help="print one JSON line (one mode)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--completion", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--timing-only", action="store_true", help="only the interleaved timing (JSON)"
    )
    args = parser.parse_args()
    if args.timing_only:
        print(json.dumps(interleaved_timing(args)))
        return
    if args.mode is not None:
        result = one_mode(args)
        print(json.dumps(result) if args.json else result)
        return
    rows = []
    load_before = os.getloadavg()
    passed = [a for a in sys.argv[1:] if a not in ("--json",)]
    for mode in MODES:
        out = subprocess.run(
            [sys.executable, __file__, *passed, "--mode", mode, "--json", "--steps", "1"],
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    timing = subprocess.run(
        [sys.executable, __file__, *passed, "--timing-only"],
        check=True,
        capture_output=True,
        text=True,
    )
    interleaved = json.loads(timing.stdout.strip().splitlines()[-1])
    for row in rows:
        row["ms_per_step"] = interleaved[row["mode"]]["ms_median"]
        row["ms_min"] = interleaved[row["mode"]]["ms_min"]
    base = rows[0]
    gradient_mb = 4 * base["params"] / 2**20
    print(
        f"model: {base['params']:,} trainable parameters (fp32 gradient {gradient_mb:.1f} MB); "
        f"load average before/after: {load_before} / {os.getloadavg()}"
    )
    print(
        "| mode | ms / step (median) | ms / step (min) | x cpr (min) "
        "| peak RSS growth, first step (MB) |"
    )
    print("|---|---|---|---|---|")
    for row in rows:
        ratio = row["ms_min"] / base["ms_min"]
        print(
            f"| {row['mode']} | {row['ms_per_step']:.0f} | {row['ms_min']:.0f} | {ratio:.2f} "
            f"| {row['peak_growth_mb']:.1f} |"
        )


if __name__ == "__main__":
    main()
