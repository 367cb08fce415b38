"""``--engine ray``: the same pipeline with its requests and consensus on a Ray cluster.

The pipeline (rounds, journals, resume) stays on the driver; this engine runs each pass:

- **Reading**: Ray Data reads the item set's ``items.jsonl`` (``ray.data.read_text``) and
  expands each item into its pending requests of the pass.
- **Generation and validation**, two processors:

  - ``http`` (default): a Ray Data ``map_batches`` over an actor pool
    (``ray.concurrency`` actors, ``ray.batch_size`` rows per batch) whose actors ask the
    models' OpenAI-compatible endpoints through the *same* backend as the local engine
    (:func:`crystalbench.references.engine.answer_job`: replicas, per-URL concurrency, total
    deadlines, backoff honouring ``Retry-After``, image downscaling). Ray Data LLM's own
    ``HttpRequestProcessorConfig`` (ray 2.60) takes one URL, has no replicas, and raises
    after its retries, which aborts the whole dataset (``should_continue_on_error`` exists
    only on the engine processors); rows must not abort the job here, so it is not used.
  - ``vllm``: Ray Data LLM ``vLLMEngineProcessorConfig`` engines on the cluster's GPUs, one
    processor per model (:func:`vllm_processor_kwargs` maps each model's ``vllm`` options),
    with ``should_continue_on_error=True``: a failed row comes back with
    ``__inference_error__`` and is retried by the pipeline, never aborting the job.

  A failed request is a row with an error (retried with the next attempt and a new seed
  in the next pass), never an exception that stops the job.
- **Checkpointing and resume**: every result row is journaled by the driver as it streams
  out of the dataset (``candidates.jsonl``, ``verdicts.jsonl``); a killed job rerun with
  the same command skips every journaled request, as the local engine does.
- **Consensus** runs as a Ray ``map_batches`` over the items of the pass (each actor loads
  the encoder once; with ``use_cache`` they share the SQLite embedding cache on one node).

Launch recipe (a cluster with the models already served, or GPUs for ``vllm``)::

    ray start --head                      # on the head node; `ray start --address=...` on workers
    crystal references build --engine ray --ray-address auto --config refs.yaml --out refs/

The item set and its images must be readable at the same path on every node (a shared
file system), and so must the output folder on the driver.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from crystalbench._internal.extras import require
from crystalbench.errors import InputError
from crystalbench.inference.backends.base import InferenceAbortedError, describe_error
from crystalbench.inference.images import PreparedImage, prepare_image
from crystalbench.inference.records import GenerationSettings
from crystalbench.references.config import ModelEndpoint, ReferencesConfig
from crystalbench.references.consensus import CandidateChain, ConsensusChain
from crystalbench.references.engine import ImageSource, Job, JobResult, LocalEngine, answer_job

IO_ACTOR_CPUS = 0.25
"""CPUs reserved per reading and HTTP actor: they wait on the network, so four share a core
(and a small local instance still fits every stage at once)."""


def _ray() -> Any:
    require("ray.data", what="--engine ray (Ray Data)", extra="ray")
    import ray

    return ray


def job_row(job: Job) -> dict[str, str]:
    """A job as a Ray Data row (JSON text: no schema inference over nested fields)."""
    return {
        "key": job.key,
        "job": json.dumps(
            {
                "key": job.key,
                "item_id": job.item_id,
                "model": job.model,
                "prompt": job.prompt,
                "settings": job.settings.model_dump(),
                "image_path": job.image_path,
            }
        ),
    }


def row_job(text: str) -> Job:
    """The inverse of :func:`job_row`."""
    data = json.loads(text)
    data["settings"] = GenerationSettings.model_validate(data["settings"])
    return Job(**data)


def result_text(result: JobResult) -> str:
    return json.dumps(result.__dict__)


def items_file(config: ReferencesConfig) -> Path | None:
    """The JSONL file Ray Data reads the items from (``None``: not a local file)."""
    if not config.items:
        return None
    path = Path(config.items).expanduser()
    if path.is_dir():
        for name in ("items.jsonl", "benchmark.jsonl"):
            if (path / name).is_file():
                return path / name
        return None
    return path if path.suffix == ".jsonl" and path.is_file() else None


class _Expand:
    """Item rows -> the pass's request rows (jobs travel once per actor, by object ref)."""

    def __init__(self, jobs_ref: Any) -> None:
        import ray

        self.jobs: dict[str, list[dict[str, str]]] = ray.get(jobs_ref[0])

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        keys, jobs = [], []
        for line in batch["text"]:
            text = str(line).strip()
            if not text:
                continue
            try:
                item_id = str(json.loads(text).get("id"))
            except ValueError:
                continue  # the driver already validated the file; nothing of ours here
            for row in self.jobs.get(item_id, []):
                keys.append(row["key"])
                jobs.append(row["job"])
        return {"key": keys, "job": jobs}


class _HttpGenerate:
    """A Ray actor answering request rows through the inference backends."""

    def __init__(self, config_json: str) -> None:
        from crystalbench.references.engine import build_endpoint_backend

        self.config = ReferencesConfig.model_validate_json(config_json)
        self.loop = asyncio.new_event_loop()
        self.rng = random.Random(0)
        self.retry = self.config.retry_policy()
        endpoints = list(self.config.generators)
        if self.config.validator is not None:
            endpoints.append(self.config.validator)
        self.endpoints = {e.name: e for e in endpoints}
        self.backends: dict[str, Any] = {}
        self._build = build_endpoint_backend

    def _backend(self, name: str) -> Any:
        if name not in self.backends:
            self.backends[name] = self._build(self.endpoints[name], self.config)
        return self.backends[name]

    async def _one(self, job: Job, images: dict[str, Any]) -> JobResult:
        try:
            if job.item_id not in images:
                data = Path(job.image_path).read_bytes() if job.image_path else None
                images[job.item_id] = prepare_image(data, self.config.max_image_side)
            image = images[job.item_id]
        except Exception as exc:
            return JobResult(
                key=job.key,
                error=describe_error(exc),
                error_kind="image",
                http_attempts=0,
            )
        return await answer_job(
            self._backend(job.model), job, image, self.retry, self.rng, self.config.max_image_side
        )

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        jobs = [row_job(str(text)) for text in batch["job"]]
        images: dict[str, Any] = {}

        async def answer_all() -> list[JobResult]:
            return list(await asyncio.gather(*(self._one(job, images) for job in jobs)))

        results = self.loop.run_until_complete(answer_all())
        return {"key": [r.key for r in results], "result": [result_text(r) for r in results]}


class _Consensus:
    """A Ray actor computing consensus chains (the encoder loads once per actor)."""

    def __init__(self, config_json: str) -> None:
        from crystalbench.references.consensus_run import open_encoder

        self.config = ReferencesConfig.model_validate_json(config_json)
        self.encoder = open_encoder(self.config)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        from crystalbench.references.consensus_run import ConsensusTask, compute_consensus

        tasks = []
        for text in batch["task"]:
            data = json.loads(str(text))
            chains = [
                CandidateChain(c["model"], c["seed"], tuple(c["steps"]), c["sample"], c["key"])
                for c in data["chains"]
            ]
            tasks.append(
                ConsensusTask(data["item_id"], data["round"], chains, data["previous"], [])
            )
        chains_out = compute_consensus(tasks, self.encoder, self.config)
        return {
            "index": [int(i) for i in batch["index"]],
            "chain": [c.model_dump_json() for c in chains_out],
        }


def vllm_processor_kwargs(endpoint: ModelEndpoint, config: ReferencesConfig) -> dict[str, Any]:
    """``vLLMEngineProcessorConfig`` arguments for one model (the GPU cluster path).

    The model's ``vllm`` options are engine arguments (``tensor_parallel_size``,
    ``pipeline_parallel_size``, ``max_model_len``, ``gpu_memory_utilization``,
    ``trust_remote_code``...), except the processor's own keys ``model_source``,
    ``concurrency``, ``batch_size``, ``accelerator_type``, ``runtime_env`` and
    ``placement_group_config``, which are lifted out.

    Examples:
        >>> endpoint = ModelEndpoint(name="qwen", model="Qwen/Qwen2.5-VL-72B-Instruct",
        ...     vllm={"tensor_parallel_size": 4, "max_model_len": 16384, "concurrency": 2})
        >>> kwargs = vllm_processor_kwargs(endpoint, ReferencesConfig())
        >>> kwargs["model_source"], kwargs["concurrency"], kwargs["engine_kwargs"]
        ('Qwen/Qwen2.5-VL-72B-Instruct', 2, {'tensor_parallel_size': 4, 'max_model_len': 16384})
        >>> kwargs["should_continue_on_error"], kwargs["prepare_multimodal_stage"]
        (True, {'enabled': True})
    """
    options = dict(endpoint.vllm or {})
    lifted: dict[str, Any] = {
        name: options.pop(name)
        for name in ("accelerator_type", "runtime_env", "placement_group_config")
        if name in options
    }
    return {
        "model_source": options.pop("model_source", endpoint.served),
        "concurrency": options.pop("concurrency", config.ray.concurrency),
        "batch_size": options.pop("batch_size", config.ray.batch_size),
        "engine_kwargs": options,
        "should_continue_on_error": True,
        "chat_template_stage": True,
        "tokenize_stage": True,
        "detokenize_stage": True,
        "prepare_multimodal_stage": {"enabled": True},
        **lifted,
    }


def vllm_request(job: Job) -> dict[str, Any]:
    """The row a vLLM processor receives for one job: chat messages and sampling params.

    Examples:
        >>> job = Job("k", "i", "m", "Why?", GenerationSettings(temperature=0.7, seed=5))
        >>> row = vllm_request(job)
        >>> row["messages"][0]["content"][-1], row["sampling_params"]["seed"]
        ({'type': 'text', 'text': 'Why?'}, 5)
    """
    content: list[dict[str, Any]] = []
    if job.image_path:
        image = PreparedImage(Path(job.image_path).read_bytes())
        content.append({"type": "image_url", "image_url": {"url": image.data_url()}})
    content.append({"type": "text", "text": job.prompt})
    return {
        "key": job.key,
        "messages": [{"role": "user", "content": content}],
        "sampling_params": job.settings.sampling(),
    }


def vllm_result(row: dict[str, Any]) -> JobResult:
    """A vLLM processor's output row as a :class:`JobResult` (errors kept, never raised)."""
    error = row.get("__inference_error__") or ""
    if error:
        return JobResult(key=str(row["key"]), error=str(error), error_kind="generation")
    tokens = row.get("num_generated_tokens")
    return JobResult(
        key=str(row["key"]),
        text=str(row.get("generated_text") or ""),
        completion_tokens=int(tokens) if tokens is not None else None,
        finish_reason=row.get("finish_reason"),
        endpoint="vllm",
    )


class RayEngine:
    """Requests and consensus as Ray Data jobs (see the module docstring)."""

    name = "ray"

    def __init__(self, config: ReferencesConfig) -> None:
        self.config = config
        self.ray = _ray()
        if not self.ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if config.ray.address:
                options["address"] = config.ray.address
            elif config.ray.num_cpus:
                options["num_cpus"] = config.ray.num_cpus
            self.ray.init(**options)
            self._started = True
        else:
            self._started = False
        context = self.ray.data.DataContext.get_current()
        context.enable_progress_bars = False

    def preflight(self) -> list[str]:
        """Check the endpoints from the driver (``http`` processor only)."""
        if self.config.ray.processor != "http":
            return []
        local = LocalEngine(self.config)
        try:
            return local.preflight()
        finally:
            local.close()

    def _dataset(self, jobs: Sequence[Job]) -> Any:
        ray = self.ray
        by_item: dict[str, list[dict[str, str]]] = {}
        for job in jobs:
            by_item.setdefault(job.item_id, []).append(job_row(job))
        source = items_file(self.config)
        if source is None:
            return ray.data.from_items([row for rows in by_item.values() for row in rows])
        reference = ray.put(by_item)
        return ray.data.read_text(str(source)).map_batches(
            _Expand,
            fn_constructor_args=([reference],),
            batch_size=256,
            compute=self.ray.data.ActorPoolStrategy(size=1),
            num_cpus=IO_ACTOR_CPUS,
        )

    def run(
        self, jobs: Sequence[Job], images: ImageSource, on_result: Callable[[JobResult], None]
    ) -> None:
        """Answer ``jobs`` on the cluster, journaling each result as it streams out."""
        if not jobs:
            return
        del images  # workers read the images from the item set's files
        if self.config.ray.processor == "vllm":
            self._run_vllm(jobs, on_result)
            return
        dataset = self._dataset(jobs).map_batches(
            _HttpGenerate,
            fn_constructor_args=(self.config.model_dump_json(by_alias=True),),
            batch_size=self.config.ray.batch_size,
            compute=self.ray.data.ActorPoolStrategy(size=self.config.ray.concurrency),
            num_cpus=IO_ACTOR_CPUS,
        )
        fatal: JobResult | None = None
        seen = 0
        for row in dataset.iter_rows():
            result = JobResult(**json.loads(row["result"]))
            on_result(result)
            seen += 1
            if result.fatal and fatal is None:
                fatal = result
        if fatal is not None:
            raise InferenceAbortedError(
                f"stopping: {fatal.error}. Fix the endpoint, key or model name, then rerun "
                "the same command to resume"
            )
        if seen != len(jobs):
            raise InputError(
                f"Ray returned {seen} results for {len(jobs)} requests: are the item set's "
                "ids unique and its file the one the build read?"
            )

    def _run_vllm(  # pragma: no cover - needs GPUs and ray[llm] (vllm)
        self, jobs: Sequence[Job], on_result: Callable[[JobResult], None]
    ) -> None:
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig

        endpoints = {e.name: e for e in self.config.generators}
        if self.config.validator is not None:
            endpoints[self.config.validator.name] = self.config.validator
        for model in dict.fromkeys(job.model for job in jobs):
            chosen = [job for job in jobs if job.model == model]
            processor = build_processor(
                vLLMEngineProcessorConfig(**vllm_processor_kwargs(endpoints[model], self.config)),
                preprocess=lambda row: vllm_request(row_job(row["job"])),
                postprocess=lambda row: {
                    "key": row["key"],
                    "result": result_text(vllm_result(row)),
                },
            )
            dataset = processor(self.ray.data.from_items([job_row(job) for job in chosen]))
            for row in dataset.iter_rows():
                on_result(JobResult(**json.loads(row["result"])))

    def consensus_map(self, tasks: Sequence[Any], config: ReferencesConfig) -> list[ConsensusChain]:
        """The consensus of each task, as a Ray map (results in task order)."""
        rows = [
            {
                "index": index,
                "task": json.dumps(
                    {
                        "item_id": task.item_id,
                        "round": task.round,
                        "previous": task.previous,
                        "chains": [
                            {
                                "model": c.model,
                                "seed": c.seed,
                                "steps": list(c.steps),
                                "sample": c.sample,
                                "key": c.key,
                            }
                            for c in task.chains
                        ],
                    }
                ),
            }
            for index, task in enumerate(tasks)
        ]
        dataset = self.ray.data.from_items(rows).map_batches(
            _Consensus,
            fn_constructor_args=(config.model_dump_json(by_alias=True),),
            batch_size=max(1, self.config.ray.batch_size * 4),
            compute=self.ray.data.ActorPoolStrategy(size=self.config.ray.concurrency),
        )
        out: dict[int, ConsensusChain] = {}
        for row in dataset.iter_rows():
            out[int(row["index"])] = ConsensusChain.model_validate_json(row["chain"])
        return [out[i] for i in range(len(tasks))]

    def close(self) -> None:
        """Shut down a Ray instance this engine started."""
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
