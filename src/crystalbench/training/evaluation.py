"""Validation during training: greedy answers on the held-out split, scored by crystalbench.

Each evaluation generates one greedy completion per validation item with the current policy
and scores it twice:

- exactly as the benchmark would (:func:`crystalbench.scoring.evaluation.evaluate`: the lenient
  parser,
  typed answers, greedy step matching with the reward's encoder and tau): ``accuracy``,
  ``match_f1``, ``ordered_f1``, ``precision``, ``recall``, ``lis``, ``steps``;
- with the strict reward contract (:class:`~crystalbench.rewards.RewardScorer` signals):
  ``format_rate`` (share of completions that are exactly the JSON object) and ``cpr`` (mean
  Causal Process Reward with the run's weights);

plus ``harmonic``, the harmonic mean of accuracy and Match F1 (a weight-free summary used by
the reward-weight sweep). The trainer adds ``proxy`` (the phase's own weighted reward on the
validation completions), ``heldout/NAME`` per held-out grader (:func:`reward_means`) and, with
``evaluation.kl``, ``kl`` and ``sqrt_kl`` to the phase's initial policy (:func:`sequence_kl`).
:func:`score_validation` is the pure part; :func:`generate_completions`
runs the model (single process, DDP or DeepSpeed ZeRO-3).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import Benchmark
from crystalbench.encoders.base import Encoder
from crystalbench.rewards.core import make_breakdown
from crystalbench.rewards.types import RewardWeights, SignalSource
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import BenchmarkItem, Prediction, Record

__all__ = [
    "VALIDATION_METRICS",
    "ValidationResult",
    "generate_completions",
    "harmonic_mean",
    "item_columns",
    "reward_means",
    "score_validation",
    "sequence_kl",
]

VALIDATION_METRICS = (
    "accuracy",
    "match_f1",
    "ordered_f1",
    "precision",
    "recall",
    "lis",
    "steps",
    "format_rate",
    "cpr",
    "harmonic",
)


class ValidationResult(Record):
    """Validation metrics of one evaluation (macro-averages over the scored items)."""

    n_items: int
    """Validation items scored."""
    metrics: dict[str, float]
    """``accuracy``, ``match_f1``, ``ordered_f1``, ``precision``, ``recall``, ``lis``,
    ``steps``, ``format_rate``, ``cpr``, ``harmonic``."""


def harmonic_mean(a: float, b: float) -> float:
    """``2ab / (a + b)`` (0 when both are 0).

    Examples:
        >>> harmonic_mean(0.5, 1.0), harmonic_mean(0.0, 0.0)
        (0.6666666666666666, 0.0)
    """
    return 2 * a * b / (a + b) if a + b > 0 else 0.0


def score_validation(
    items: Sequence[BenchmarkItem],
    completions: Sequence[str],
    *,
    source: SignalSource,
    weights: RewardWeights,
    encoder: Encoder,
    tau: float,
) -> ValidationResult:
    """Score validation completions with crystalbench (see the module docstring).

    Args:
        items: Validation items.
        completions: One completion text per item.
        source: Reward scorer (strict format and CPR).
        weights: CPR weights.
        encoder: Sentence encoder for Match F1 (the reward's).
        tau: Step-matching threshold.

    Examples:
        >>> from crystalbench.encoders import HashEncoder
        >>> from crystalbench.rewards import RewardScorer
        >>> item = BenchmarkItem(id="1", source="x", question="2+2?", answer="4",
        ...                      reference_steps=["Add 2 and 2.", "The sum is 4."])
        >>> good = '{"reasoning_steps": ["Add 2 and 2.", "The sum is 4."], "answer": "4"}'
        >>> result = score_validation([item, item.model_copy(update={"id": "2"})],
        ...     [good, "The answer is 4."], source=RewardScorer(HashEncoder()),
        ...     weights=RewardWeights(), encoder=HashEncoder(), tau=0.35)
        >>> result.metrics["accuracy"], result.metrics["format_rate"], result.metrics["cpr"]
        (1.0, 0.5, 0.5)

        The plain-text answer is right for the benchmark's lenient parser (accuracy 1) but
        fails the strict reward format (CPR 0).
    """
    if len(items) != len(completions):
        raise ValueError(f"{len(completions)} completions for {len(items)} items")
    if not items:
        return ValidationResult(n_items=0, metrics={name: 0.0 for name in VALIDATION_METRICS})
    bench = Benchmark(name="validation", items=list(items))
    predictions = [
        Prediction(id=item.id, response=text) for item, text in zip(items, completions, strict=True)
    ]
    run = evaluate(
        bench,
        predictions,
        ScoreConfig(encoder=encoder.identity, threshold=tau, use_cache=False),
        encoder=encoder,
        keep_items=False,
    )
    summary = run.summary
    signals = source.signals(list(completions), list(items))
    breakdowns = [make_breakdown(s, "cpr", weights) for s in signals]
    cprs = [b.total for b in breakdowns if b.total is not None]
    metrics = {
        "accuracy": summary.accuracy,
        "match_f1": summary.match_f1,
        "ordered_f1": summary.ordered_f1,
        "precision": summary.precision,
        "recall": summary.recall,
        "lis": summary.lis,
        "steps": summary.steps,
        "format_rate": math.fsum(float(s.format_ok) for s in signals) / len(signals),
        "cpr": math.fsum(cprs) / len(cprs) if cprs else 0.0,
        "harmonic": harmonic_mean(summary.accuracy, summary.match_f1),
    }
    return ValidationResult(n_items=len(items), metrics=metrics)


def item_columns(items: Sequence[BenchmarkItem]) -> dict[str, list[Any]]:
    """The TRL dataset columns reward functions read, for ``items`` (one value per item).

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="2+2?", answer="4",
        ...                      reference_steps=["Add."])
        >>> item_columns([item])["reference_steps"]
        [['Add.']]
    """
    from crystalbench.answers import infer_answer_type

    return {
        "id": [item.id for item in items],
        "source": [item.source for item in items],
        "question": [item.question for item in items],
        "options": [list(item.options) for item in items],
        "answer": [item.answer for item in items],
        "answer_type": [infer_answer_type(item) for item in items],
        "reference_steps": [[s for s in item.reference_steps if s.strip()] for item in items],
    }


def reward_means(
    functions: Sequence[Any],
    weights: Sequence[float],
    items: Sequence[BenchmarkItem],
    completions: Sequence[str],
) -> tuple[float, list[float]]:
    """``(weighted total, per-function means)`` of TRL reward functions on completions.

    The total is the mean over completions of ``sum_k w_k r_k`` (a ``None`` reward counts as
    absent, as TRL's ``nansum`` does); each per-function mean skips ``None``.

    Examples:
        >>> half = lambda completions, **kw: [0.5 for _ in completions]
        >>> none = lambda completions, **kw: [None for _ in completions]
        >>> item = BenchmarkItem(id="1", source="x", question="?", answer="a",
        ...                      reference_steps=["s"])
        >>> reward_means([half, none], [2.0, 1.0], [item], ["text"])
        (1.0, [0.5, nan])
    """
    columns = item_columns(items)
    rows = list(completions)
    prompts = [item.question for item in items]
    totals = [0.0] * len(rows)
    means: list[float] = []
    for function, weight in zip(functions, weights, strict=True):
        values = function(prompts=prompts, completions=rows, **columns)
        scored = [float(v) for v in values if v is not None]
        means.append(math.fsum(scored) / len(scored) if scored else float("nan"))
        for index, value in enumerate(values):
            if value is not None:
                totals[index] += weight * float(value)
    return (math.fsum(totals) / len(totals) if totals else 0.0), means


def generate_completions(
    trainer: Any,
    items: Sequence[BenchmarkItem],
    messages: Callable[[BenchmarkItem], list[dict[str, Any]]],
    image_bytes: Callable[[BenchmarkItem], bytes | None],
    *,
    batch_size: int,
    max_new_tokens: int,
    reference: Any = None,
    kl_out: list[float] | None = None,
) -> list[str]:
    """Greedy completions of the trainer's policy, one per item, identical on every rank.

    Items are sharded over the ranks (each rank runs the same number of batches, so ZeRO-3
    without gathered weights stays in step), generated in batches with the processor's chat
    template, and gathered back in item order.

    With a ``reference`` model, ``kl_out`` receives one value per item (in item order): the
    KL from the policy to ``reference`` summed over the completion's tokens, each token's KL
    taken over the whole vocabulary (:func:`sequence_kl`).
    """
    import io

    import torch
    from accelerate.utils import gather_object
    from PIL import Image
    from trl.data_utils import prepare_multimodal_messages
    from trl.models.utils import unwrap_model_for_generation

    accelerator = trainer.accelerator
    world = accelerator.num_processes
    rank = accelerator.process_index
    per_rank = math.ceil(len(items) / world)
    mine = list(range(rank * per_rank, min(len(items), (rank + 1) * per_rank)))
    n_batches = math.ceil(per_rank / batch_size)
    processor = trainer.processing_class
    tokenizer = getattr(processor, "tokenizer", processor)
    is_vlm = hasattr(processor, "image_processor")
    zero3 = bool(
        trainer.is_deepspeed_enabled
        and accelerator.state.deepspeed_plugin is not None
        and accelerator.state.deepspeed_plugin.zero_stage == 3
    )
    generation = {
        "max_new_tokens": max_new_tokens,
        "do_sample": False,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": trainer.eos_token_ids,
        "synced_gpus": zero3 and not trainer.args.ds3_gather_for_generation,
    }
    image_token_id = getattr(trainer.model.config, "image_token_id", None)
    if is_vlm and image_token_id is not None:
        generation["suppress_tokens"] = [image_token_id]
    # The run's generation constraints (stop strings, banned words...) apply here too;
    # its sampling settings do not (validation decodes greedily).
    sampling = {"do_sample", "temperature", "top_p", "top_k", "min_p", "num_beams"}
    for key, value in (trainer.args.generation_kwargs or {}).items():
        if key not in sampling:
            generation.setdefault(key, value)
    import inspect

    padding: dict[str, Any] = {"padding": True}
    if "processor_kwargs" in inspect.signature(processor.apply_chat_template).parameters:
        padding = {"processor_kwargs": padding}

    found: list[tuple[int, str]] = []
    found_kl: list[tuple[int, float]] = []
    padding_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped,
                accelerator,
                gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
            ) as unwrapped,
            torch.no_grad(),
        ):
            for b in range(n_batches):
                batch = mine[b * batch_size : (b + 1) * batch_size]
                # A rank with nothing left repeats its last item so every rank runs each batch.
                padded = batch or (mine[-1:] if mine else [0])
                conversations = []
                for index in padded:
                    item = items[index]
                    data = image_bytes(item)
                    images = [Image.open(io.BytesIO(data)).convert("RGB")] if data else []
                    prompt = messages(item)
                    conversations.append(
                        prepare_multimodal_messages(prompt, images=images) if is_vlm else prompt
                    )
                inputs = processor.apply_chat_template(
                    conversations,
                    add_generation_prompt=True,
                    tokenize=True,
                    return_dict=True,
                    return_tensors="pt",
                    **padding,
                )
                inputs = {
                    k: v.to(accelerator.device) for k, v in inputs.items() if hasattr(v, "to")
                }
                output = unwrapped.generate(**inputs, **generation)
                completions = output[:, inputs["input_ids"].shape[1] :]
                texts = tokenizer.batch_decode(completions, skip_special_tokens=True)
                found.extend(zip(batch, texts[: len(batch)], strict=True))
                if reference is not None:
                    kls = sequence_kl(unwrapped, reference, inputs, output, trainer.eos_token_ids)
                    found_kl.extend(zip(batch, kls[: len(batch)], strict=True))
    finally:
        tokenizer.padding_side = padding_side
        trainer.model.train(was_training)
    gathered = gather_object(found) if world > 1 else found
    by_index = dict(gathered)
    if reference is not None and kl_out is not None:
        kl_by_index = dict(gather_object(found_kl) if world > 1 else found_kl)
        kl_out.extend(kl_by_index.get(i, 0.0) for i in range(len(items)))
    return [by_index.get(i, "") for i in range(len(items))]


def sequence_kl(
    policy: Any, reference: Any, inputs: dict[str, Any], output: Any, eos_ids: Any
) -> list[float]:
    """KL(policy || reference) of each generated completion, summed over its tokens.

    One forward of each model over prompt + completion (``logits_to_keep``: only the
    completion's logits are kept); each position's KL is taken over the whole vocabulary;
    tokens after the first end-of-sequence token are masked out.
    """
    import torch

    prompt_ids = inputs["input_ids"]
    length = prompt_ids.shape[1]
    completion = output[:, length:]
    if completion.shape[1] == 0:
        return [0.0] * output.shape[0]
    ends = torch.tensor(list(eos_ids) if isinstance(eos_ids, (list, tuple)) else [eos_ids])
    is_end = torch.isin(completion, ends.to(completion.device))
    after_end = (torch.cumsum(is_end.long(), dim=1) - is_end.long()) > 0
    mask = ~after_end
    model_inputs: dict[str, Any] = {
        "input_ids": output,
        "attention_mask": torch.cat([inputs["attention_mask"], mask.long()], dim=1),
        "logits_to_keep": completion.shape[1] + 1,
    }
    for key, value in inputs.items():
        if key in ("input_ids", "attention_mask"):
            continue
        if hasattr(value, "shape") and tuple(value.shape[:2]) == tuple(prompt_ids.shape):
            pad = torch.zeros(
                (value.shape[0], completion.shape[1], *value.shape[2:]),
                dtype=value.dtype,
                device=value.device,
            )
            value = torch.cat([value, pad], dim=1)
        model_inputs[key] = value
    with torch.no_grad():
        logits_p = policy(**model_inputs).logits[:, :-1]
        logits_q = reference(**model_inputs).logits[:, :-1]
    out = []
    for row in range(logits_p.shape[0]):
        log_p = torch.log_softmax(logits_p[row].float(), dim=-1)
        log_q = torch.log_softmax(logits_q[row].float(), dim=-1)
        per_token = (log_p.exp() * (log_p - log_q)).sum(dim=-1).clamp(min=0.0)
        out.append(float((per_token * mask[row].float()).sum()))
    return out
