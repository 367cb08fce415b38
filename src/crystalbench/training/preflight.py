"""Checks a run passes before anything is loaded or written: one line per problem, naming the
config field to change.

``crystal train`` must fail in seconds, not after minutes of hub retries or a transformers
traceback, when the machine cannot run what the config asks for:

- the ``train`` extra is missing (:func:`~crystalbench.training.config.require_training_stack`);
- bf16 / fp16, vLLM or DeepSpeed is asked for and no GPU is visible, or vLLM / DeepSpeed is not
  installed (``grpo.bf16``, ``grpo.use_cpu``, ``grpo.use_vllm``, ``grpo.deepspeed``);
- the policy or its processor is neither a folder nor in the local hub cache, and the hub
  cannot be reached: found out through the probe scoring uses
  (:func:`crystalbench._internal.hub_probe.hub_unreachable_reason`, a few seconds), not through
  ``huggingface_hub``'s retries (``model.name_or_path``, ``model.processor``).

Each problem raises :class:`~crystalbench.training.config.TrainingError` (the CLI prints it on
one line and exits 2). Torch is imported only to ask whether a GPU is visible.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from crystalbench.training.config import TrainConfig, TrainingError, require_training_stack
from crystalbench.training.tiny_model import is_tiny_model

__all__ = ["check_environment", "check_model_reachable", "gpu_visible"]

_CPU_FIX = "--set grpo.bf16=false --set grpo.use_cpu=true"


def gpu_visible() -> bool:
    """Whether torch sees a CUDA (or ROCm) device."""
    import torch

    return bool(torch.cuda.is_available())


def check_environment(
    config: TrainConfig, *, what: str = "crystal train", check_model: bool = True
) -> None:
    """Refuse, in one line naming the field, a run this machine cannot start.

    Raises:
        MissingExtraError: The ``train`` extra is not installed.
        TrainingError: No GPU for bf16 / fp16 / vLLM / DeepSpeed; vLLM or DeepSpeed not
            installed; the model cannot be reached (see the module docstring).
    """
    require_training_stack(what)
    grpo = config.grpo
    gpu = gpu_visible()
    precision = "fp16" if grpo.extra.get("fp16") else "bf16"
    wants_half = grpo.extra.get("fp16") or grpo.bf16 is not False
    if not gpu and not grpo.use_cpu and wants_half:
        field = "grpo.extra.fp16" if precision == "fp16" else "grpo.bf16"
        default = "" if grpo.bf16 is not None else " (TRL's default when it is unset)"
        raise TrainingError(
            f"no GPU is visible, and {field} asks for {precision} training{default}: to train "
            f"on this CPU set grpo.bf16: false and grpo.use_cpu: true ({_CPU_FIX}), or run on "
            "a machine with a GPU"
        )
    if gpu and precision == "bf16" and grpo.bf16 and not grpo.use_cpu:
        from transformers.utils import is_torch_bf16_gpu_available

        if not is_torch_bf16_gpu_available():
            raise TrainingError(
                "this GPU does not support bf16, and grpo.bf16 is true: set grpo.bf16: false "
                "(--set grpo.bf16=false; add grpo.extra.fp16: true for half precision)"
            )
    if grpo.use_vllm:
        if importlib.util.find_spec("vllm") is None:
            raise TrainingError(
                "grpo.use_vllm is true but vllm is not installed: pip install vllm (a version "
                "TRL supports), or set grpo.use_vllm: false (--set grpo.use_vllm=false)"
            )
        if not gpu:
            raise TrainingError(
                "grpo.use_vllm is true but no GPU is visible: set grpo.use_vllm: false "
                "(--set grpo.use_vllm=false)"
            )
    if grpo.deepspeed is not None:
        if importlib.util.find_spec("deepspeed") is None:
            raise TrainingError(
                f"grpo.deepspeed is {grpo.deepspeed!r} but deepspeed is not installed: pip "
                "install deepspeed, or set grpo.deepspeed: null (--set grpo.deepspeed=null)"
            )
        if not gpu:
            raise TrainingError(
                "grpo.deepspeed is set but no GPU is visible: set grpo.deepspeed: null "
                "(--set grpo.deepspeed=null)"
            )
    if check_model:
        check_model_reachable(config)


def check_model_reachable(config: TrainConfig) -> None:
    """Refuse a policy or processor that is not on this machine while the hub is unreachable.

    A folder, a bundled tiny model (``tiny:...``) or a hub id with a snapshot in the local hub
    cache passes without any network; any other hub id needs the hub, which is probed once
    (a few seconds at most; ``HF_HUB_OFFLINE=1`` answers at once).

    Raises:
        TrainingError: Naming ``model.name_or_path`` (or ``model.processor``), why the hub
            cannot be reached, and how to use a local copy.
    """
    fields = [("model.name_or_path", config.model.name_or_path)]
    if config.model.processor:
        fields.append(("model.processor", config.model.processor))
    for field, name in fields:
        if is_tiny_model(name) or Path(name).expanduser().is_dir():
            continue
        if name.startswith((".", "/", "~")):
            raise TrainingError(
                f"{field} {name!r}: no such folder; set {field} to a model folder or a hub id"
            )
        from crystalbench._internal.hub_probe import hub_unreachable_reason
        from crystalbench.encoders.model_files import local_hub_snapshot

        if local_hub_snapshot(name) is not None:
            continue
        reason = hub_unreachable_reason()
        if reason is None:
            continue
        raise TrainingError(
            f"{field} {name!r} is not on this machine and the model hub cannot be reached: "
            f"{reason}. Download it where the hub is reachable (huggingface-cli download "
            f"{name} --local-dir DIR) and set {field} to DIR (--set {field}=DIR)"
        )
