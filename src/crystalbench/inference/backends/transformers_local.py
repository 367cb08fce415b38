"""Local vision-language models with Hugging Face transformers, on CPU or GPU.

The model's own processor builds the prompt with ``processor.apply_chat_template``
(images as ``{"type": "image"}`` content parts), which is how Qwen2-VL, Qwen2.5-VL,
Qwen3-VL, InternVL (the ``-hf`` checkpoints, e.g. ``OpenGVLab/InternVL3-8B-hf``), Gemma 3,
Llama 4, LLaVA and other ``AutoModelForImageTextToText`` models expect it. Batches are
left-padded; generation is greedy at temperature 0 and sampled otherwise.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any

from crystalbench._internal.extras import require
from crystalbench.inference.backends.base import (
    BackendUnavailableError,
    Completion,
    GenerationRequest,
)

DEFAULT_BATCH_SIZE = 4
"""Items per ``generate`` call (raise it on a large GPU)."""


def _require_transformers() -> Any:
    return require("transformers", "torch", what="the transformers backend", extra="transformers")


def resolve_dtype(dtype: str | None, device: str) -> Any:
    """``auto`` -> bfloat16 on CUDA (float16 without bf16 support), float32 on CPU."""
    import torch

    if dtype in (None, "auto"):
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    names = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32"}
    value = getattr(torch, names.get(dtype, dtype), None)
    if not isinstance(value, torch.dtype):
        from crystalbench.errors import UnknownNameError

        raise UnknownNameError("dtype", dtype, ["auto", "bfloat16", "float16", "float32"])
    return value


class TransformersBackend:
    """Batched local generation with a Hugging Face vision-language model.

    Args:
        model: A hub id or local folder, or an already built model object.
        processor: The model's processor (required when ``model`` is an object).
        device: ``cuda``, ``cuda:1``, ``cpu``, ``mps``; default: CUDA when available.
        dtype: ``auto``, ``bfloat16``, ``float16`` or ``float32``.
        batch_size: Items per ``generate`` call.
        trust_remote_code: Allow custom model code from the hub.
        model_name: Name written into records (default: ``model`` or the config's path).
        attn_implementation: e.g. ``sdpa`` or ``flash_attention_2``.
    """

    name = "transformers"

    def __init__(
        self,
        model: str | Any,
        *,
        processor: Any = None,
        device: str | None = None,
        dtype: str | None = "auto",
        batch_size: int = DEFAULT_BATCH_SIZE,
        trust_remote_code: bool = False,
        model_name: str | None = None,
        attn_implementation: str | None = None,
    ) -> None:
        transformers = _require_transformers()
        import torch

        self.batch_size = batch_size
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        if isinstance(model, str):
            self.model = model_name or model
            try:
                self.processor = processor or transformers.AutoProcessor.from_pretrained(
                    model, trust_remote_code=trust_remote_code
                )
                self.net = self._load_model(
                    transformers, model, device, dtype, trust_remote_code, attn_implementation
                )
            except (OSError, ValueError) as exc:  # missing files, no hub, unknown architecture
                raise BackendUnavailableError(f"cannot load {model!r}: {exc}") from exc
        else:
            if processor is None:
                raise BackendUnavailableError("pass the processor together with a model object")
            self.net = model.to(device)
            self.processor = processor
            configured = getattr(model.config, "_name_or_path", "")
            self.model = model_name or configured or type(model).__name__
        self.net.eval()
        tokenizer = getattr(self.processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"  # decoder-only models generate after the prompt
        self._processor_kwargs = (
            "processor_kwargs" in inspect.signature(self.processor.apply_chat_template).parameters
        )

    @staticmethod
    def _load_model(
        transformers: Any,
        path: str,
        device: str,
        dtype: str | None,
        trust_remote_code: bool,
        attn_implementation: str | None,
    ) -> Any:
        model_class = getattr(transformers, "AutoModelForImageTextToText", None)
        if model_class is None:  # transformers < 4.50
            model_class = transformers.AutoModelForVision2Seq
        torch_dtype = resolve_dtype(dtype, device)
        major = int(transformers.__version__.split(".")[0])
        kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        kwargs["dtype" if major >= 5 else "torch_dtype"] = torch_dtype
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        net = model_class.from_pretrained(path, **kwargs)
        return net.to(device)

    def conversation(self, request: GenerationRequest) -> list[dict[str, Any]]:
        """One chat in the processor's format: the image first, then the prompt."""
        content: list[dict[str, Any]] = []
        if request.image is not None:
            content.append({"type": "image", "image": request.image.pil(request.image_max_side)})
        content.append({"type": "text", "text": request.prompt})
        return [{"role": "user", "content": content}]

    def _inputs(self, requests: Sequence[GenerationRequest]) -> Any:
        conversations = [self.conversation(r) for r in requests]
        options: dict[str, Any] = {
            "add_generation_prompt": True,
            "tokenize": True,
            "return_dict": True,
            "return_tensors": "pt",
        }
        if self._processor_kwargs:
            options["processor_kwargs"] = {"padding": True}
        else:  # transformers 4.x
            options["padding"] = True
        return self.processor.apply_chat_template(conversations, **options)

    def _stop_ids(self) -> set[int]:
        ids: set[int] = set()
        for source in (getattr(self.net, "generation_config", None), self.processor.tokenizer):
            value = getattr(source, "eos_token_id", None)
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(int(v) for v in value)
        return ids

    def complete_batch(self, requests: list[GenerationRequest]) -> list[Completion]:
        """Generate for a batch of requests (one ``generate`` call)."""
        import torch

        settings = requests[0].settings
        started = time.perf_counter()
        inputs = self._inputs(requests).to(self.net.device)
        tokenizer = self.processor.tokenizer
        pad_id = tokenizer.pad_token_id
        if pad_id is None:
            pad_id = tokenizer.eos_token_id
        kwargs: dict[str, Any] = {"max_new_tokens": settings.max_tokens, "pad_token_id": pad_id}
        if settings.temperature > 0:
            kwargs.update(do_sample=True, temperature=settings.temperature)
            if settings.top_p is not None:
                kwargs["top_p"] = settings.top_p
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if settings.seed is not None:
            torch.manual_seed(settings.seed)
        with torch.inference_mode():
            output = self.net.generate(**inputs, **kwargs)
        prompt_length = inputs["input_ids"].shape[1]
        generated = output[:, prompt_length:].tolist()
        prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
        stops = self._stop_ids()
        latency = (time.perf_counter() - started) / len(requests)
        completions = []
        for row, n_prompt in zip(generated, prompt_tokens, strict=True):
            end = next((i for i, token in enumerate(row) if token in stops), None)
            kept = row if end is None else row[:end]
            text = self.processor.batch_decode([kept], skip_special_tokens=True)[0]
            completions.append(
                Completion(
                    text=text.strip(),
                    prompt_tokens=int(n_prompt),
                    completion_tokens=len(row) if end is None else end + 1,
                    finish_reason="length" if end is None else "stop",
                    endpoint=f"transformers:{self.device}",
                    latency_s=latency,
                )
            )
        return completions

    def close(self) -> None:
        self.net = None
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:  # pragma: no cover
            pass
