"""Tiny randomly initialised vision-language models built offline, for tests.

Nothing is downloaded: the tokenizer is a character-level ``tokenizers`` WordLevel model
with Qwen's special tokens, wrapped as ``Qwen2TokenizerFast``; the processor pairs it
with a PIL Qwen2-VL image processor capped at a few patches; the model is a
``Qwen2_5_VLForConditionalGeneration`` with two layers of width 16 (about 36k
parameters). Generation is meaningless but exercises the real chat template, image
processing, batching and ``generate`` code paths.

``tiny_qwen2_5_vl()`` returns ``(model, processor)``. Shared by the inference and
training tests; keep it dependency-light (no torchvision: the video processor is left
out, which Qwen's processor class only accepts through the small subclass below).
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

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
"""Qwen-style ChatML with image placeholders, the layout Qwen2.5-VL's template produces."""


def tiny_tokenizer() -> Any:
    """A character-level fast tokenizer with Qwen's special tokens (no download)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import Qwen2TokenizerFast

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
    return Qwen2TokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="[UNK]",
    )


def tiny_processor(
    tokenizer: Any | None = None, *, min_pixels: int = 28 * 28, max_pixels: int = 56 * 56
) -> Any:
    """A Qwen2.5-VL processor without a video processor (so no torchvision is needed).

    Images are resized to between ``min_pixels`` and ``max_pixels`` (default: at most
    56x56 pixels, one image token; ``benchmarks/gpu_train_smoke.py`` passes the recipe's).
    """
    from transformers import Qwen2_5_VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )
    from transformers.processing_utils import ProcessorMixin

    class TinyQwen2_5_VLProcessor(Qwen2_5_VLProcessor):
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

    tokenizer = tokenizer or tiny_tokenizer()
    # By default at most 56x56 pixels: 4 patches of 14, merged 2x2 into one image token.
    images = Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels)
    return TinyQwen2_5_VLProcessor(
        image_processor=images, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE
    )


def tiny_qwen2_5_vl(seed: int = 0) -> tuple[Any, Any]:
    """``(model, processor)``: a randomly initialised two-layer Qwen2.5-VL on CPU."""
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    processor = tiny_processor()
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
            "max_position_embeddings": 1024,
            # head_dim 4: mrope sections must sum to head_dim / 2.
            "rope_parameters": {
                "rope_type": "default",
                "mrope_section": [1, 1],
                "rope_theta": 10000.0,
            },
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
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, processor
