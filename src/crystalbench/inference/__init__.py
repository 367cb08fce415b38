"""Running vision-language models over CRYSTAL: prompts, backends, the resumable runner.

::

    from crystalbench.data import load_benchmark
    from crystalbench.inference import infer, GenerationSettings
    from crystalbench.inference.backends.openai_compat import OpenAIChatBackend

    bench = load_benchmark("sample")
    backend = OpenAIChatBackend("Qwen/Qwen2.5-VL-7B-Instruct", ["http://localhost:8000/v1"])
    config = InferenceConfig(model=backend.model, generation=GenerationSettings(max_tokens=2048))
    summary = infer(bench, backend, "preds.jsonl", config)

Or from one :class:`InferenceConfig` (what ``crystal infer`` and ``crystal run`` do)::

    from crystalbench.inference import InferenceConfig, RunConfig, run_benchmark, run_inference

    config = InferenceConfig(model="Qwen/Qwen2.5-VL-7B-Instruct",
                             base_urls=["http://localhost:8000/v1"])
    run_inference(config, "preds.jsonl")                          # infer only
    run = RunConfig(**config.model_dump(), scoring={"encoder": "all-distilroberta-v1"})
    run_benchmark(run, "runs/qwen7b")                             # infer, score, report

The output JSONL scores directly with ``crystal score --predictions preds.jsonl``.
See ``docs/inference.md`` for serving recipes and the resume semantics.

Layout: :mod:`.config` (the configuration), :mod:`.pipeline` (config-driven runs),
:mod:`.runner` (``infer`` / ``ainfer``), :mod:`.resume` (what an existing file already
answers), :mod:`.engine` (asking the backend, writing records), :mod:`.summary`
(counters and the closing summary), :mod:`.records` (the output file), :mod:`.retry`,
:mod:`.prompts`, :mod:`.images`, :mod:`.progress` and :mod:`.backends`.
"""

from __future__ import annotations

from crystalbench.inference.backends.base import (
    BackendError,
    Completion,
    GenerationRequest,
    InferenceAbortedError,
)
from crystalbench.inference.config import InferenceConfig, RunConfig, load_inference_config
from crystalbench.inference.images import PreparedImage
from crystalbench.inference.pipeline import (
    BenchmarkRun,
    InferenceRun,
    run_benchmark,
    run_inference,
)
from crystalbench.inference.prompts import PromptTemplate, load_prompt, render_options
from crystalbench.inference.records import (
    GenerationSettings,
    InferenceRecord,
    LoadedRecords,
    ResultsFile,
    TornLine,
)
from crystalbench.inference.retry import RetryPolicy, parse_retry_after
from crystalbench.inference.runner import ainfer, infer
from crystalbench.inference.summary import InferenceSummary, RunStats

__all__ = [
    "BackendError",
    "BenchmarkRun",
    "Completion",
    "GenerationRequest",
    "GenerationSettings",
    "InferenceAbortedError",
    "InferenceConfig",
    "InferenceRecord",
    "InferenceRun",
    "InferenceSummary",
    "LoadedRecords",
    "PreparedImage",
    "PromptTemplate",
    "ResultsFile",
    "RetryPolicy",
    "RunConfig",
    "RunStats",
    "TornLine",
    "ainfer",
    "infer",
    "load_inference_config",
    "load_prompt",
    "parse_retry_after",
    "render_options",
    "run_benchmark",
    "run_inference",
]
