"""Running vision-language models over CRYSTAL: prompts, backends, the resumable runner.

::

    from crystalbench.data import load_benchmark
    from crystalbench.inference import infer, GenerationSettings
    from crystalbench.inference.backends.openai_compat import OpenAIChatBackend

    bench = load_benchmark("sample")
    backend = OpenAIChatBackend("Qwen/Qwen2.5-VL-7B-Instruct", ["http://localhost:8000/v1"])
    summary = infer(bench, backend, "preds.jsonl", settings=GenerationSettings(max_tokens=2048))

The output JSONL scores directly with ``crystal score --predictions preds.jsonl``.
See ``docs/inference.md`` for serving recipes and the resume semantics.
"""

from __future__ import annotations

from crystalbench.inference.backends.base import (
    BackendError,
    Completion,
    GenerationRequest,
    InferenceAbortedError,
)
from crystalbench.inference.images import PreparedImage
from crystalbench.inference.prompts import PromptTemplate, load_prompt, render_options
from crystalbench.inference.records import (
    GenerationSettings,
    InferenceRecord,
    LoadedRecords,
    ResultsFile,
    TornLine,
)
from crystalbench.inference.retry import RetryPolicy, parse_retry_after
from crystalbench.inference.runner import InferenceSummary, RunStats, ainfer, infer

__all__ = [
    "BackendError",
    "Completion",
    "GenerationRequest",
    "GenerationSettings",
    "InferenceAbortedError",
    "InferenceRecord",
    "InferenceSummary",
    "LoadedRecords",
    "PreparedImage",
    "PromptTemplate",
    "ResultsFile",
    "RetryPolicy",
    "RunStats",
    "TornLine",
    "ainfer",
    "infer",
    "load_prompt",
    "parse_retry_after",
    "render_options",
]
