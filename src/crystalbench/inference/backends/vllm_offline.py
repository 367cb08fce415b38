"""Offline vLLM: one ``vllm.LLM`` in this process, batches of chats through ``LLM.chat``.

``LLM.chat`` takes OpenAI-style conversations (so images go in as the same base64 data
URLs the HTTP backend sends), applies the model's chat template and schedules the whole
batch with continuous batching. The runner hands over ``batch_size`` items per call
(``0``: the whole selection in one call) and appends their records after each call, so
a large batch trades resume granularity for GPU utilisation.

Needs ``pip install vllm`` on Linux with a CUDA GPU; nothing else in crystalbench
imports it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from crystalbench.inference.backends.base import (
    BackendUnavailableError,
    Completion,
    GenerationRequest,
)

DEFAULT_BATCH_SIZE = 1024
"""Items per ``LLM.chat`` call: large enough to keep the GPU busy, small enough to save
progress every few minutes."""


def _require_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise BackendUnavailableError(
            "the vllm backend needs vLLM (Linux with a CUDA GPU): pip install vllm. Without "
            "it, serve the model elsewhere with `vllm serve MODEL` and use --base-url"
        ) from exc
    return vllm


class VLLMOfflineBackend:
    """Batched offline generation with ``vllm.LLM``.

    Args:
        model: Hub id or local folder.
        batch_size: Items per ``LLM.chat`` call (``0``: everything at once).
        tensor_parallel_size: GPUs to shard the model over.
        dtype: ``auto``, ``bfloat16``, ``float16``...
        gpu_memory_utilization: Share of GPU memory vLLM may take.
        max_model_len: Context length cap (lower it when the KV cache does not fit).
        trust_remote_code: Allow custom model code from the hub.
        max_images: Images per prompt (``limit_mm_per_prompt``); CRYSTAL has one.
        chat_template: A Jinja chat template overriding the model's.
        engine_args: Any other ``vllm.LLM`` / ``EngineArgs`` keyword arguments.
        model_name: Name written into records (default: ``model``).
        llm: An already built ``vllm.LLM`` (then the engine arguments are ignored).
    """

    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        trust_remote_code: bool = False,
        max_images: int = 1,
        chat_template: str | None = None,
        engine_args: Mapping[str, Any] | None = None,
        model_name: str | None = None,
        llm: Any = None,
    ) -> None:
        self._vllm = _require_vllm()
        self.model = model_name or model
        self.batch_size = batch_size
        self.chat_template = chat_template
        if llm is None:
            kwargs: dict[str, Any] = {
                "model": model,
                "tensor_parallel_size": tensor_parallel_size,
                "dtype": dtype,
                "gpu_memory_utilization": gpu_memory_utilization,
                "trust_remote_code": trust_remote_code,
                "limit_mm_per_prompt": {"image": max_images},
            }
            if max_model_len is not None:
                kwargs["max_model_len"] = max_model_len
            kwargs.update(engine_args or {})
            llm = self._vllm.LLM(**kwargs)
        self.llm = llm

    def sampling_params(self, request: GenerationRequest) -> Any:
        """``vllm.SamplingParams`` for a request's settings."""
        return self._vllm.SamplingParams(**request.settings.sampling())

    @staticmethod
    def conversation(request: GenerationRequest) -> list[dict[str, Any]]:
        """The OpenAI-style chat ``LLM.chat`` takes: the image first, then the prompt."""
        content: list[dict[str, Any]] = []
        if request.image is not None:
            url = request.image.data_url(request.image_max_side)
            content.append({"type": "image_url", "image_url": {"url": url}})
        content.append({"type": "text", "text": request.prompt})
        return [{"role": "user", "content": content}]

    def complete_batch(self, requests: list[GenerationRequest]) -> list[Completion]:
        """Generate for every request with one ``LLM.chat`` call."""
        started = time.perf_counter()
        conversations = [self.conversation(r) for r in requests]
        params = [self.sampling_params(r) for r in requests]
        kwargs: dict[str, Any] = {"sampling_params": params, "use_tqdm": False}
        if self.chat_template is not None:
            kwargs["chat_template"] = self.chat_template
        outputs = self.llm.chat(conversations, **kwargs)
        latency = (time.perf_counter() - started) / max(1, len(requests))
        completions = []
        for output in outputs:
            best = output.outputs[0]
            prompt_ids = getattr(output, "prompt_token_ids", None)
            completions.append(
                Completion(
                    text=best.text,
                    prompt_tokens=len(prompt_ids) if prompt_ids is not None else None,
                    completion_tokens=len(best.token_ids),
                    finish_reason=getattr(best, "finish_reason", None),
                    endpoint="vllm:offline",
                    latency_s=latency,
                )
            )
        return completions

    def close(self) -> None:
        self.llm = None
