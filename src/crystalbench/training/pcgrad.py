r"""PCGrad between CRYSTAL's answer objective and its reasoning objective.

Three layers, from pure maths to the training loop:

1. **Projection maths** on gradients seen as flat vectors (Yu et al. 2020, "Gradient
   Surgery for Multi-Task Learning"). For two gradients :math:`g_a` (answer) and
   :math:`g_r` (reasoning) with :math:`d = g_a \cdot g_r`: if :math:`d < 0`,

   .. math::

       g_a' = g_a - \frac{d}{\|g_r\|^2} g_r, \qquad g_r' = g_r - \frac{d}{\|g_a\|^2} g_a

   (both projected against the *original* other gradient) and the update is
   :math:`g_a' + g_r' = (1 - d/\|g_a\|^2)\, g_a + (1 - d/\|g_r\|^2)\, g_r`. Without conflict
   (:math:`d \ge 0`) the update is :math:`g_a + g_r`, the plain sum. The two-objective case
   only needs three scalars (:func:`projection_weights`), which is what makes it cheap to run
   on gradients partitioned across ranks: each rank sums its partial dot products and
   squared norms, one all-reduce of three numbers gives the global ones, and every rank
   scales its own partition by the same two weights. :func:`pcgrad` is the general
   K-objective algorithm for reference and tests.

2. **Advantage decomposition** (:func:`split_advantages`). TRL's ``GRPOTrainer`` sums the
   weighted reward functions, ``R = sum_k w_k r_k``, and normalises within each group of
   ``G`` completions of one prompt:

   .. math:: A = \frac{R - \operatorname{mean}_g R}{\operatorname{std}_g R + 10^{-4}}

   (``scale_rewards="group"``; ``"batch"`` uses the std over the whole batch, ``"none"``
   divides by nothing). The reward terms are split by objective,
   :math:`R = R_{ans} + R_{rsn}` (for CPR, :math:`R_{ans} = a_w c` and
   :math:`R_{rsn} = s_w F1 (c + \lambda (1 - c))`), and each part gets **its own group
   baseline but the shared denominator**:

   .. math::

       A_{ans} = \frac{R_{ans} - \operatorname{mean}_g R_{ans}}{\operatorname{std}_g R + 10^{-4}},
       \qquad
       A_{rsn} = \frac{R_{rsn} - \operatorname{mean}_g R_{rsn}}{\operatorname{std}_g R + 10^{-4}}

   Because the group mean is linear, :math:`A_{ans} + A_{rsn} = A` exactly: PCGrad splits
   TRL's advantage, it does not change it. (Normalising each part by its own std, as GDPO
   does, would change the total and is not what the paper's CPR optimises.) With
   ``multi_objective_aggregation="normalize_then_sum"`` TRL first normalises each function
   within its group and then the weighted sum over the batch; the split keeps each part's
   share of the weighted sum, its own batch mean, and the shared batch std, so it sums to
   TRL's advantage there too. Rows for which every reward function returned ``None`` get
   advantage 0 in both parts, as in TRL.

3. **Gradient surgery in a data-parallel run** (:class:`GradientSurgeon`). The GRPO loss is
   linear in the advantage on policy (ratio 1), so the loss with :math:`A_{ans}` plus the
   loss with :math:`A_{rsn}` is the CPR loss. The surgeon runs one backward pass per
   objective, keeps each objective's gradient (accumulated over the micro-batches of one
   optimizer step), reduces the three scalars across ranks, and writes
   :math:`w_a g_a + w_r g_r` (plus the gradient of any regulariser such as the KL term,
   added once, unprojected) back where the optimizer reads it:

   - single process or DDP: parameter ``.grad``; under DDP both backward passes run under
     ``no_sync`` and the two gradient buffers are all-reduced (averaged) by hand at the
     optimizer boundary, so the dot product is the one of the *global* gradients;
   - DeepSpeed ZeRO-3: each rank reads and clears its fp32 gradient partition after every
     backward pass (``deepspeed.utils.safe_get_local_grad`` / ``safe_set_local_grad``),
     calls ``engine.backward`` directly (``accelerator.backward`` would call
     ``engine.step()`` straight after the first objective), all-reduces the three scalars
     over the data-parallel group, writes the combined partition back and then calls
     ``engine.step()``. Partitions are disjoint, so the summed partial dot products are
     exactly the global ones.

This module imports torch; it is only imported by the trainer and the tests.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, NamedTuple

import torch

__all__ = [
    "GradientSurgeon",
    "ProjectionInfo",
    "group_normalise",
    "pcgrad",
    "pcgrad_pair",
    "projection_weights",
    "split_advantages",
]

STD_EPS = 1e-4
"""TRL's constant in the advantage denominator."""


class ProjectionInfo(NamedTuple):
    """The three scalars of a two-objective PCGrad step and what they imply."""

    dot: float
    """``g_a . g_r``."""
    norm_answer: float
    """``|g_a|``."""
    norm_reasoning: float
    """``|g_r|``."""
    cosine: float
    """Cosine of the two gradients (0 when either is zero)."""
    conflict: bool
    """``dot < 0``: a projection happened."""
    weight_answer: float
    """``w_a``: the update is ``w_a g_a + w_r g_r``."""
    weight_reasoning: float
    """``w_r``."""


def projection_weights(
    dot: float, sq_answer: float, sq_reasoning: float, eps: float = 1e-20
) -> ProjectionInfo:
    """PCGrad for two objectives from their dot product and squared norms.

    Args:
        dot: ``g_a . g_r``.
        sq_answer: ``|g_a|^2``.
        sq_reasoning: ``|g_r|^2``.
        eps: Squared norms below this count as a zero gradient (nothing to project on).

    Returns:
        :class:`ProjectionInfo` with the weights of the combined update
        ``w_a g_a + w_r g_r``.

    Examples:
        >>> projection_weights(2.0, 4.0, 1.0).conflict  # aligned: plain sum
        False
        >>> info = projection_weights(-1.0, 1.0, 2.0)
        >>> info.weight_answer, info.weight_reasoning, round(info.cosine, 4)
        (2.0, 1.5, -0.7071)
    """
    norm_a = math.sqrt(max(sq_answer, 0.0))
    norm_r = math.sqrt(max(sq_reasoning, 0.0))
    cosine = dot / (norm_a * norm_r) if sq_answer > eps and sq_reasoning > eps else 0.0
    conflict = dot < 0.0 and sq_answer > eps and sq_reasoning > eps
    if not conflict:
        return ProjectionInfo(dot, norm_a, norm_r, cosine, False, 1.0, 1.0)
    return ProjectionInfo(
        dot, norm_a, norm_r, cosine, True, 1.0 - dot / sq_answer, 1.0 - dot / sq_reasoning
    )


def pcgrad_pair(
    g_answer: torch.Tensor, g_reasoning: torch.Tensor, eps: float = 1e-20
) -> tuple[torch.Tensor, ProjectionInfo]:
    """The PCGrad update of two flat gradient vectors.

    Examples:
        >>> update, info = pcgrad_pair(torch.tensor([1.0, 0.0]), torch.tensor([-1.0, 1.0]))
        >>> update.tolist(), info.conflict
        ([0.5, 1.5], True)
    """
    a = g_answer.double()
    r = g_reasoning.double()
    info = projection_weights(float(a @ r), float(a @ a), float(r @ r), eps)
    update = info.weight_answer * a + info.weight_reasoning * r
    return update.to(g_answer.dtype), info


def pcgrad(
    grads: Sequence[torch.Tensor], *, seed: int | None = None, eps: float = 1e-20
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """General PCGrad (Yu et al. 2020, Algorithm 1) on K flat gradient vectors.

    Each gradient is projected, in a random order of the others, onto the normal plane of
    every *original* gradient it conflicts with; the update is the sum of the projected
    gradients. For two objectives this equals :func:`pcgrad_pair` in either order.

    Args:
        grads: One flat gradient per objective.
        seed: Seed of the visiting order (``None``: the given order).
        eps: Squared norms below this are not projected on.

    Returns:
        ``(update, projected)``: the summed update and each projected gradient.

    Examples:
        >>> g1, g2 = torch.tensor([1.0, 1.0]), torch.tensor([-1.0, 0.0])
        >>> update, (p1, p2) = pcgrad([g1, g2])
        >>> p1.tolist(), p2.tolist(), update.tolist()
        ([0.0, 1.0], [-0.5, 0.5], [-0.5, 1.5])
    """
    rng = random.Random(seed) if seed is not None else None
    originals = [g.double() for g in grads]
    projected = []
    for i, g in enumerate(originals):
        current = g.clone()
        others = [j for j in range(len(originals)) if j != i]
        if rng is not None:
            rng.shuffle(others)
        for j in others:
            other = originals[j]
            sq = float(other @ other)
            dot = float(current @ other)
            if dot < 0.0 and sq > eps:
                current = current - (dot / sq) * other
        projected.append(current)
    update = torch.stack(projected).sum(dim=0)
    return update.to(grads[0].dtype), [p.to(grads[0].dtype) for p in projected]


# ---------------------------------------------------------------------------------------------
# Advantages
# ---------------------------------------------------------------------------------------------


def _nanstd(values: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    """Sample standard deviation ignoring NaN, Bessel-corrected; NaN with fewer than two
    values (the same definition as TRL's ``nanstd``)."""
    mean = torch.nanmean(values, dim=dim, keepdim=True)
    variance = torch.nanmean((values - mean) ** 2, dim=dim, keepdim=True)
    count = torch.sum(~torch.isnan(values), dim=dim, keepdim=True)
    correction = torch.where(
        count > 1, count / (count - 1).clamp(min=1), torch.full_like(variance, float("nan"))
    )
    std = torch.sqrt(variance * correction)
    if keepdim:
        return std
    return std.squeeze() if dim is None else std.squeeze(dim)


def group_normalise(
    rewards: torch.Tensor, num_generations: int, scale_rewards: str = "group"
) -> torch.Tensor:
    """TRL's GRPO advantage of one reward vector (``sum_then_normalize``), NaN rows -> 0.

    Examples:
        >>> group_normalise(torch.tensor([1.0, 0.0, 2.0, 2.0]), 2).tolist()  # doctest: +ELLIPSIS
        [0.707..., -0.707..., 0.0, 0.0]
    """
    parts = split_advantages(
        rewards.unsqueeze(1),
        torch.ones(1),
        ["answer"],
        num_generations=num_generations,
        scale_rewards=scale_rewards,
    )
    return parts["answer"]


def split_advantages(
    rewards_per_func: torch.Tensor,
    weights: torch.Tensor,
    objectives: Sequence[str],
    *,
    num_generations: int,
    scale_rewards: str = "group",
    aggregation: str = "sum_then_normalize",
) -> dict[str, torch.Tensor]:
    """Split TRL's GRPO advantage into one advantage per objective (see the module docstring).

    Args:
        rewards_per_func: ``(N, K)`` rewards of the K reward functions for N completions,
            grouped by prompt in runs of ``num_generations`` (NaN: the function returned
            ``None``). Gather it across processes first, as TRL does.
        weights: ``(K,)`` TRL ``reward_weights``.
        objectives: Objective of each function (``answer`` / ``reasoning``).
        num_generations: Group size G.
        scale_rewards: ``group``, ``batch`` or ``none`` (TRL's option).
        aggregation: ``sum_then_normalize`` (TRL's default) or ``normalize_then_sum``.

    Returns:
        ``{objective: (N,) advantage}``; the advantages of all objectives add up to TRL's
        advantage, and a row where every function returned ``None`` is 0 everywhere.

    Raises:
        ValueError: Unknown option, or ``N`` not a multiple of ``num_generations``.

    Examples:
        Two completions of one prompt, CPR parts ``(R_ans, R_rsn)``: a correct answer with
        F1 0.5 and a wrong one with F1 1.0.

        >>> r = torch.tensor([[0.65, 0.175], [0.0, 0.105]])
        >>> parts = split_advantages(r, torch.ones(2), ["answer", "reasoning"],
        ...                          num_generations=2)
        >>> [round(x, 4) for x in parts["answer"].tolist()]  # 0.325 / (0.72 / sqrt(2) + 1e-4)
        [0.6382, -0.6382]
        >>> [round(x, 4) for x in parts["reasoning"].tolist()]  # 0.035 / (same denominator)
        [0.0687, -0.0687]
    """
    if scale_rewards not in ("group", "batch", "none"):
        raise ValueError(f"unknown scale_rewards {scale_rewards!r}")
    if aggregation not in ("sum_then_normalize", "normalize_then_sum"):
        raise ValueError(f"unknown multi_objective_aggregation {aggregation!r}")
    n, k = rewards_per_func.shape
    if len(objectives) != k or weights.numel() != k:
        raise ValueError(
            f"{k} reward functions, {len(objectives)} objectives, {weights.numel()} weights"
        )
    if n % num_generations:
        raise ValueError(f"{n} completions is not a multiple of num_generations={num_generations}")
    rewards = rewards_per_func.float()
    w = weights.to(rewards.device, torch.float32).unsqueeze(0)
    unscorable = torch.isnan(rewards).all(dim=1)
    names = list(dict.fromkeys(objectives))

    if aggregation == "sum_then_normalize":
        weighted = rewards * w
        total = weighted.nansum(dim=1)
        total[unscorable] = torch.nan
        if scale_rewards == "batch":
            std = _nanstd(total).expand_as(total) if total.numel() > 1 else torch.zeros_like(total)
        elif num_generations > 1:
            std = _nanstd(total.view(-1, num_generations), dim=1).repeat_interleave(num_generations)
        else:
            std = torch.zeros_like(total)
        out = {}
        for name in names:
            columns = [i for i, o in enumerate(objectives) if o == name]
            part = weighted[:, columns].nansum(dim=1)
            part[unscorable] = torch.nan
            mean = torch.nanmean(part.view(-1, num_generations), dim=1)
            advantage = part - mean.repeat_interleave(num_generations)
            if scale_rewards != "none":
                advantage = advantage / (std + STD_EPS)
            out[name] = torch.nan_to_num(advantage, nan=0.0)
        return out

    grouped = rewards.view(-1, num_generations, k)
    mean_k = torch.nanmean(grouped, dim=1, keepdim=True)
    std_k = (
        _nanstd(grouped, dim=1, keepdim=True) if num_generations > 1 else torch.zeros_like(mean_k)
    )
    normalised = ((grouped - mean_k) / (std_k + STD_EPS)).view(-1, k) * w
    total = normalised.nansum(dim=1)
    total[unscorable] = torch.nan
    std = _nanstd(total) if total.numel() > 1 else torch.zeros(())
    out = {}
    for name in names:
        columns = [i for i, o in enumerate(objectives) if o == name]
        part = normalised[:, columns].nansum(dim=1)
        part[unscorable] = torch.nan
        out[name] = torch.nan_to_num((part - torch.nanmean(part)) / (std + STD_EPS), nan=0.0)
    return out


# ---------------------------------------------------------------------------------------------
# Gradient surgery in the training loop
# ---------------------------------------------------------------------------------------------


def _buckets(tensors: Sequence[torch.Tensor], max_numel: int) -> Iterator[list[torch.Tensor]]:
    bucket: list[torch.Tensor] = []
    size = 0
    for tensor in tensors:
        if bucket and size + tensor.numel() > max_numel:
            yield bucket
            bucket, size = [], 0
        bucket.append(tensor)
        size += tensor.numel()
    if bucket:
        yield bucket


class GradientSurgeon:
    """Per-objective gradient buffers and the PCGrad update, for one of three back ends.

    Use per micro-batch: :meth:`backward` once per objective (the last one without
    ``retain_graph``), and at the optimizer boundary :meth:`apply`. Between two boundaries
    the objective gradients accumulate, so PCGrad projects the gradients of the whole
    optimizer step (identical to per-micro-batch projection when
    ``gradient_accumulation_steps=1``).

    Args:
        accelerator: The trainer's ``accelerate.Accelerator``.
        model: The model the trainer steps (``DistributedDataParallel``, a DeepSpeed engine
            or a plain module).
        eps: See :func:`projection_weights`.

    Raises:
        NotImplementedError: FSDP, or DeepSpeed below ZeRO stage 3 / with the optimizer
            offloaded (their gradients are not reachable between two backward passes).
    """

    def __init__(self, accelerator: Any, model: torch.nn.Module, eps: float = 1e-20) -> None:
        from accelerate.utils import DistributedType

        self.accelerator = accelerator
        self.eps = eps
        distributed = accelerator.distributed_type
        self.engine: Any = None
        if distributed == DistributedType.DEEPSPEED:
            self.backend = "zero3"
            self.engine = accelerator.deepspeed_engine_wrapped.engine
            stage = self.engine.zero_optimization_stage()
            if stage != 3:
                raise NotImplementedError(
                    f"PCGrad under DeepSpeed needs ZeRO stage 3 (got stage {stage}): the local "
                    "gradient partitions it projects are only exposed by ZeRO-3"
                )
            if getattr(self.engine.optimizer, "offload_optimizer", False):
                raise NotImplementedError(
                    "PCGrad under ZeRO-3 does not support offload_optimizer: offloaded fp32 "
                    "gradients are only filled at the accumulation boundary"
                )
            module = self.engine.module
        elif distributed == DistributedType.FSDP:
            raise NotImplementedError(
                "PCGrad is implemented for DDP and DeepSpeed ZeRO-3, not FSDP"
            )
        else:
            self.backend = (
                "ddp" if isinstance(model, torch.nn.parallel.DistributedDataParallel) else "local"
            )
            module = model.module if self.backend == "ddp" else model
        self.params = [p for p in module.parameters() if p.requires_grad]
        self._buffers: dict[str, list[torch.Tensor | None]] = {}
        self._zeros: dict[int, torch.Tensor] = {}

    # -------------------------------------------------------------- per micro-batch
    def context(self, model: torch.nn.Module) -> Any:
        """Context for the forward and backward passes of one micro-batch (DDP: ``no_sync``)."""
        if self.backend == "ddp":
            return model.no_sync()  # type: ignore[operator]
        return nullcontext()

    def backward(self, name: str, loss: torch.Tensor, *, retain_graph: bool) -> None:
        """Backward pass of one objective's loss; its gradient is moved into buffer ``name``."""
        if self.backend == "zero3":
            self.engine.set_gradient_accumulation_boundary(
                is_boundary=self.accelerator.sync_gradients
            )
            self.engine.backward(loss, retain_graph=retain_graph, scale_wrt_gas=False)
        elif self.accelerator.scaler is not None:
            self.accelerator.scaler.scale(loss).backward(retain_graph=retain_graph)
        else:
            loss.backward(retain_graph=retain_graph)
        self._take(name)

    def _take(self, name: str) -> None:
        buffers = self._buffers.setdefault(name, [None] * len(self.params))
        if self.backend == "zero3":
            from deepspeed.utils import safe_get_local_grad, safe_set_local_grad

            for i, p in enumerate(self.params):
                grad = safe_get_local_grad(p)
                if grad is None:
                    continue
                # The partition buffer is reused by the next backward pass: copy, then clear.
                if buffers[i] is None:
                    buffers[i] = grad.detach().clone()
                else:
                    buffers[i].add_(grad)  # type: ignore[union-attr]
                safe_set_local_grad(p, self._zero_like(grad))
            return
        for i, p in enumerate(self.params):
            grad = p.grad
            if grad is None:
                continue
            if buffers[i] is None:
                buffers[i] = grad.detach()  # take ownership: no copy
            else:
                buffers[i].add_(grad)  # type: ignore[union-attr]
            p.grad = None

    def _zero_like(self, tensor: torch.Tensor) -> torch.Tensor:
        key = tensor.numel()
        zero = self._zeros.get(key)
        if zero is None or zero.dtype != tensor.dtype or zero.device != tensor.device:
            zero = torch.zeros_like(tensor)
            self._zeros[key] = zero
        return zero

    # -------------------------------------------------------------- optimizer boundary
    def apply(self, answer: str = "answer", reasoning: str = "reasoning") -> ProjectionInfo:
        """Project, combine and write the gradients of the step; then reset the buffers.

        Every buffer other than ``answer`` and ``reasoning`` (the regulariser's) is added
        unprojected. Under ZeRO-3 this also calls ``engine.step()``.
        """
        if self.backend == "ddp":
            self._all_reduce_buffers()
        names = list(self._buffers)
        buf_a = self._buffers.get(answer, [None] * len(self.params))
        buf_r = self._buffers.get(reasoning, [None] * len(self.params))
        device = self.params[0].device if self.params else torch.device("cpu")
        partial = torch.zeros(3, dtype=torch.float64, device=device)
        for a, r in zip(buf_a, buf_r, strict=True):
            if a is not None:
                a64 = a.double()
                partial[1] += (a64 * a64).sum()
                if r is not None:
                    partial[0] += (a64 * r.double()).sum()
            if r is not None:
                r64 = r.double()
                partial[2] += (r64 * r64).sum()
        if self.backend == "zero3":
            import torch.distributed as dist

            group = getattr(self.engine.optimizer, "dp_process_group", None)
            dist.all_reduce(partial, op=dist.ReduceOp.SUM, group=group)
        dot, sq_a, sq_r = (float(v) for v in partial.tolist())
        info = projection_weights(dot, sq_a, sq_r, self.eps)
        extra = [n for n in names if n not in (answer, reasoning)]
        for i, p in enumerate(self.params):
            combined = self._combine(i, buf_a[i], buf_r[i], info, extra)
            if combined is None:
                continue
            if self.backend == "zero3":
                from deepspeed.utils import safe_set_local_grad

                safe_set_local_grad(p, combined)
            else:
                p.grad = combined.to(p.dtype) if combined.dtype != p.dtype else combined
        self._buffers.clear()
        if self.backend == "zero3":
            self.engine.step()
        return info

    def _combine(
        self,
        index: int,
        a: torch.Tensor | None,
        r: torch.Tensor | None,
        info: ProjectionInfo,
        extra: Sequence[str],
    ) -> torch.Tensor | None:
        combined: torch.Tensor | None = None
        if a is not None:
            combined = a.mul_(info.weight_answer) if info.weight_answer != 1.0 else a
        if r is not None:
            if combined is None:
                combined = r.mul_(info.weight_reasoning) if info.weight_reasoning != 1.0 else r
            else:
                combined = combined.add_(r, alpha=info.weight_reasoning)
        for name in extra:
            g = self._buffers[name][index]
            if g is not None:
                combined = g if combined is None else combined.add_(g)
        return combined

    def _all_reduce_buffers(self) -> None:
        import torch.distributed as dist

        world = dist.get_world_size()
        for name in sorted(self._buffers):
            buffers = self._buffers[name]
            # Every rank must reduce the same tensors: materialise missing gradients as zeros.
            for i, p in enumerate(self.params):
                if buffers[i] is None:
                    buffers[i] = torch.zeros_like(p)
            dense = [b for b in buffers if b is not None]
            for bucket in _buckets(dense, 2**25):
                flat = torch.cat([t.reshape(-1) for t in bucket])
                dist.all_reduce(flat, op=dist.ReduceOp.SUM)
                flat.div_(world)
                offset = 0
                for t in bucket:
                    t.copy_(flat[offset : offset + t.numel()].view_as(t))
                    offset += t.numel()


@contextmanager
def restored(obj: Any, names: Sequence[str]) -> Iterator[None]:
    """Restore the listed attributes of ``obj`` on exit (those that exist)."""
    missing = object()
    saved = {name: getattr(obj, name, missing) for name in names}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is not missing:
                setattr(obj, name, value)
