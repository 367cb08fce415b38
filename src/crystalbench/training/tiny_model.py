"""``tiny:qwen2.5-vl``: a Qwen2.5-VL-shaped policy with random weights, built offline on a CPU.

What ``recipe:tiny-cpu`` trains, so ``crystal train`` can be tried without a checkpoint, a
GPU or the network (numbers meaningless, plumbing real: the real chat template, image
processing, GRPO loop, validation, checkpoint selection and reports run).

- **Model:** ``Qwen2_5_VLForConditionalGeneration`` from a ``Qwen2_5_VLConfig`` with two text
  layers and two vision blocks of width 16 (tens of thousands of parameters), seeded.
- **Tokenizer:** a ``tokenizers`` WordLevel model over printable characters with Qwen's special
  tokens, wrapped as ``Qwen2TokenizerFast``; the processor pairs it with Qwen2-VL's PIL image
  processor at 28x28 pixels (one image token per image).
- **Completions:** a random model never writes the CRYSTAL JSON object character by character,
  so every reward would be 0 and nothing would move. The vocabulary therefore also holds a few
  *whole completions* as single tokens (per pool item: its reference chain with the right
  answer and with a wrong one; plus generic guesses and one malformed reply), and generation is
  restricted to them and end-of-turn (``generation_kwargs.bad_words_ids``, added by
  :func:`tiny_generation_kwargs`). Rewards then vary within each GRPO group.

Torch and transformers are imported when a model is built, not when this module is imported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crystalbench.types import BenchmarkItem

__all__ = [
    "TINY_MODELS",
    "TINY_PREFIX",
    "build_tiny_model",
    "completion_tokens",
    "is_tiny_model",
    "tiny_generation_kwargs",
]

TINY_PREFIX = "tiny:"
"""``model.name_or_path`` prefix of the bundled tiny models."""
TINY_MODELS: tuple[str, ...] = ("tiny:qwen2.5-vl",)
"""The bundled tiny models."""

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen-style ChatML with image placeholders (the layout Qwen2.5-VL's template produces)."""

_GUESSES = ("A", "B", "C", "(a)", "(b)", "Yes", "No", "4")


def is_tiny_model(name: str) -> bool:
    """Whether ``name`` names a bundled tiny model (``tiny:qwen2.5-vl``).

    Examples:
        >>> is_tiny_model("tiny:qwen2.5-vl"), is_tiny_model("Qwen/Qwen2.5-VL-3B-Instruct")
        (True, False)
    """
    return name.startswith(TINY_PREFIX)


def completion_tokens(items: Sequence[BenchmarkItem]) -> list[str]:
    """The whole completions the tiny model can emit, each one token (see the module docstring).

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="2+2?", answer="4",
        ...                      reference_steps=["Add 2 and 2."])
        >>> tokens = completion_tokens([item])
        >>> tokens[0]
        '{"reasoning_steps": ["Add 2 and 2."], "answer": "4"}'
        >>> tokens[-1]
        'I think the answer is 4.'
    """
    found: list[str] = []
    for item in items:
        steps = [step for step in item.reference_steps if step.strip()]
        found.append(json.dumps({"reasoning_steps": steps, "answer": item.answer}))
        wrong = "B" if item.answer.strip() == "A" else "A"
        found.append(json.dumps({"reasoning_steps": steps, "answer": wrong}))
    for guess in _GUESSES:
        found.append(json.dumps({"reasoning_steps": ["Look at the image."], "answer": guess}))
    found.append("I think the answer is 4.")
    return list(dict.fromkeys(found))


def _tokenizer(completions: Sequence[str]) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import Qwen2TokenizerFast  # type: ignore[attr-defined]

    vocab: dict[str, int] = {token: index for index, token in enumerate(SPECIAL_TOKENS)}
    for code in [*range(32, 127), 10]:
        vocab.setdefault(chr(code), len(vocab))
    vocab["[UNK]"] = len(vocab)
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS]
    )
    tokenizer = Qwen2TokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="[UNK]",
    )
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in completions])
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _processor(tokenizer: Any) -> Any:
    from transformers import Qwen2_5_VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )
    from transformers.processing_utils import ProcessorMixin

    class TinyQwen2_5_VLProcessor(Qwen2_5_VLProcessor):
        """Qwen2.5-VL's processor without a video processor (no torchvision needed)."""

        def __init__(
            self,
            image_processor: Any = None,
            tokenizer: Any = None,
            chat_template: str | None = None,
            **kwargs: Any,
        ) -> None:
            self.image_token = "<|image_pad|>"
            self.video_token = "<|video_pad|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
            self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
            ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    # Every image becomes 28x28 pixels: 4 patches of 14, merged 2x2 into one image token. One
    # size for all: with TRL 1.16 and transformers 5.25, a batch that mixes images of 2 and 4
    # tokens failed in Qwen2.5-VL's get_rope_index ("shape mismatch: value tensor of shape
    # [3, 439] cannot be broadcast to indexing result of shape [3, 441]").
    images = Qwen2VLImageProcessorPil(min_pixels=28 * 28, max_pixels=28 * 28)
    return TinyQwen2_5_VLProcessor(
        image_processor=images, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE
    )


def build_tiny_model(
    name: str, items: Sequence[BenchmarkItem], *, seed: int = 0
) -> tuple[Any, Any]:
    """``(model, processor)`` of a bundled tiny model, its vocabulary made for ``items``.

    Raises:
        UnknownNameError: ``name`` is not one of :data:`TINY_MODELS`.
    """
    from crystalbench.errors import UnknownNameError

    if name not in TINY_MODELS:
        raise UnknownNameError("tiny model (model.name_or_path)", name, TINY_MODELS)
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    processor = _processor(_tokenizer(completion_tokens(items)))
    tokenizer = processor.tokenizer
    token = tokenizer.convert_tokens_to_ids
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            # head_dim 4: the mrope sections must sum to head_dim / 2.
            "rope_parameters": {"rope_type": "default", "mrope_section": [1, 1], "rope_theta": 1e4},
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": None,
        },
        vision_config={
            "depth": 2,
            "hidden_size": 16,
            "intermediate_size": 16,
            "num_heads": 2,
            "out_hidden_size": 16,
            "fullatt_block_indexes": [1],
        },
        image_token_id=token("<|image_pad|>"),
        video_token_id=token("<|video_pad|>"),
        vision_start_token_id=token("<|vision_start|>"),
        vision_end_token_id=token("<|vision_end|>"),
    )
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model.train(), processor


def tiny_generation_kwargs(processor: Any) -> dict[str, Any]:
    """``generation_kwargs`` that restrict a tiny model to its whole-completion tokens and
    end-of-turn (for training rollouts and validation alike)."""
    tokenizer = processor.tokenizer
    added = set(tokenizer.get_added_vocab().values()) - set(
        tokenizer.convert_tokens_to_ids(list(SPECIAL_TOKENS))
    )
    allowed = {*added, tokenizer.eos_token_id}
    return {"bad_words_ids": [[i] for i in range(len(tokenizer)) if i not in allowed]}
