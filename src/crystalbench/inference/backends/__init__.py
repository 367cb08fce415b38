"""Inference backends behind one interface (see :mod:`.base`).

- ``openai``: any OpenAI-compatible chat endpoint (:mod:`.openai_compat`);
- ``vllm``: offline ``vllm.LLM`` batching (:mod:`.vllm_offline`, needs vllm and a GPU);
- ``transformers``: local Hugging Face models (:mod:`.transformers_local`);
- ``scripted``: a deterministic fake for tests (:mod:`.scripted`).

Modules are imported on demand so that ``import crystalbench`` never pulls in openai,
torch or vllm.
"""

from __future__ import annotations

from crystalbench.config.settings import INFER_MAX_RETRY_AFTER
from crystalbench.inference.backends.base import (
    AsyncBackend,
    BackendError,
    BackendUnavailableError,
    BatchBackend,
    Completion,
    GenerationRequest,
    InferenceAbortedError,
)

BACKENDS = ("openai", "vllm", "transformers")
"""Backend names accepted by ``crystal infer --backend``."""

__all__ = [
    "BACKENDS",
    "AsyncBackend",
    "BackendError",
    "BackendUnavailableError",
    "BatchBackend",
    "Completion",
    "GenerationRequest",
    "InferenceAbortedError",
    "build_backend",
]


def build_backend(
    kind: str,
    model: str,
    *,
    base_urls: list[str] | None = None,
    api_key: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_retry_after: float | None = None,
    extra_body: dict[str, object] | None = None,
    batch_size: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    tensor_parallel_size: int = 1,
    gpu_memory_utilization: float = 0.9,
    max_model_len: int | None = None,
    trust_remote_code: bool = False,
) -> AsyncBackend | BatchBackend:
    """Build a backend by name (the options that do not apply to it are ignored).

    Raises:
        UnknownNameError: ``kind`` is not one of :data:`BACKENDS`.
        BackendUnavailableError: The backend's package is missing or the model fails to load.
    """
    from crystalbench.errors import UnknownNameError

    if kind == "openai":
        from crystalbench.inference.backends.openai_compat import (
            DEFAULT_CONCURRENCY,
            DEFAULT_TIMEOUT,
            OpenAIChatBackend,
        )

        return OpenAIChatBackend(
            model,
            base_urls or [],
            api_key=api_key,
            concurrency=concurrency or DEFAULT_CONCURRENCY,
            timeout=timeout or DEFAULT_TIMEOUT,
            max_retry_after=INFER_MAX_RETRY_AFTER if max_retry_after is None else max_retry_after,
            extra_body=extra_body,
        )
    if kind == "vllm":
        from crystalbench.inference.backends.vllm_offline import (
            DEFAULT_BATCH_SIZE as VLLM_BATCH,
        )
        from crystalbench.inference.backends.vllm_offline import VLLMOfflineBackend

        return VLLMOfflineBackend(
            model,
            batch_size=VLLM_BATCH if batch_size is None else batch_size,
            tensor_parallel_size=tensor_parallel_size,
            dtype=dtype or "auto",
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            trust_remote_code=trust_remote_code,
        )
    if kind == "transformers":
        from crystalbench.inference.backends.transformers_local import (
            DEFAULT_BATCH_SIZE as HF_BATCH,
        )
        from crystalbench.inference.backends.transformers_local import TransformersBackend

        return TransformersBackend(
            model,
            device=device,
            dtype=dtype or "auto",
            batch_size=HF_BATCH if batch_size is None else batch_size,
            trust_remote_code=trust_remote_code,
        )
    raise UnknownNameError("backend", kind, BACKENDS)
