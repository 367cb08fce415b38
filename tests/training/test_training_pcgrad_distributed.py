"""PCGrad across ranks: two CPU processes (gloo) must project the *global* gradients.

Each rank sees different data, so its local answer and reasoning gradients differ from the
global (rank-averaged) ones that DDP or ZeRO-3 would apply. The surgeon's update on every
rank must equal PCGrad of the global gradients, computed here in one process from all ranks'
data:

- DDP: backward passes under ``no_sync``, buffers all-reduced by hand at the boundary;
- ZeRO-3: a stand-in engine reduce-scatters each gradient into per-rank partitions exactly
  where ``deepspeed.utils.safe_get_local_grad`` / ``safe_set_local_grad`` expose them; the
  surgeon reads and clears them after every backward pass, all-reduces the three scalars,
  writes its partition of the update and steps the engine. (The real DeepSpeed is not
  installed here; the stand-in follows its local-gradient API and averaging semantics.)

Both run with two micro-batches per optimizer step, so accumulation is covered too.
"""

from __future__ import annotations

import gc
import math
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD = 2
MICRO_BATCHES = 2


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))


def _batch(rank: int, micro: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(100 * rank + micro)
    return torch.randn(5, 4, generator=generator)


def _losses(model: torch.nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out = model(x)
    # The reasoning objective mostly opposes the answer objective: a guaranteed conflict.
    return out[:, 0].sum(), -out[:, 0].sum() + 0.3 * out[:, 1].sum()


def _expected() -> tuple[torch.Tensor, bool]:
    """PCGrad of the rank-averaged, micro-batch-summed gradients, in one process."""
    from crystalbench.training.pcgrad import pcgrad_pair

    model = _model()
    params = list(model.parameters())
    total_a = torch.zeros(sum(p.numel() for p in params))
    total_r = torch.zeros_like(total_a)
    for rank in range(WORLD):
        for micro in range(MICRO_BATCHES):
            loss_a, loss_r = _losses(model, _batch(rank, micro))
            total_a += torch.cat(
                [g.reshape(-1) for g in torch.autograd.grad(loss_a, params, retain_graph=True)]
            )
            total_r += torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss_r, params)])
    update, info = pcgrad_pair(total_a / WORLD, total_r / WORLD)
    return update, info.conflict


class FakeZero3Engine:
    """Reduce-scatters gradients into per-rank fp32 partitions, like ZeRO-3's backward."""

    def __init__(self, module: torch.nn.Module, rank: int) -> None:
        self.module = module
        self.rank = rank
        self.optimizer = SimpleNamespace(offload_optimizer=False, dp_process_group=None)
        self.partitions: dict[int, torch.Tensor] = {}
        self.steps = 0
        for p in module.parameters():
            size = math.ceil(p.numel() / WORLD)
            self.partitions[id(p)] = torch.zeros(size)

    def zero_optimization_stage(self) -> int:
        return 3

    def set_gradient_accumulation_boundary(self, is_boundary: bool) -> None:
        self.boundary = is_boundary

    def backward(
        self, loss: torch.Tensor, retain_graph: bool = False, scale_wrt_gas: bool = True
    ) -> None:
        assert scale_wrt_gas is False
        loss.backward(retain_graph=retain_graph)
        for p in self.module.parameters():
            full = p.grad.reshape(-1).clone()
            dist.all_reduce(full)
            full /= WORLD
            size = self.partitions[id(p)].numel()
            padded = torch.cat([full, torch.zeros(size * WORLD - full.numel())])
            self.partitions[id(p)] += padded[self.rank * size : (self.rank + 1) * size]
            p.grad = None

    def step(self) -> None:
        self.steps += 1

    def full_gradient(self) -> torch.Tensor:
        pieces = []
        for p in self.module.parameters():
            local = self.partitions[id(p)]
            gathered = [torch.zeros_like(local) for _ in range(WORLD)]
            dist.all_gather(gathered, local)
            pieces.append(torch.cat(gathered)[: p.numel()])
        return torch.cat(pieces)


def _install_fake_deepspeed(engine: FakeZero3Engine) -> None:
    module = types.ModuleType("deepspeed")
    utils = types.ModuleType("deepspeed.utils")
    utils.safe_get_local_grad = lambda p: engine.partitions[
        id(p)
    ]  # aliases, as DeepSpeed's fp32 buffer
    utils.safe_set_local_grad = lambda p, value: engine.partitions[id(p)].copy_(value)
    module.utils = utils
    sys.modules["deepspeed"] = module
    sys.modules["deepspeed.utils"] = utils


def _worker(rank: int, store: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    try:
        for mode in ("ddp", "zero3"):
            _check(rank, mode)
        # Tear down only when both ranks are done: a rank that leaves while the other still
        # talks to it makes gloo abort ("terminate called without an active exception").
        gc.collect()  # drops DDP's reducer and its communication hooks first
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _check(rank: int, mode: str) -> None:
    from accelerate.utils import DistributedType

    from crystalbench.training.pcgrad import GradientSurgeon

    expected, conflict = _expected()
    model = _model()
    if mode == "ddp":
        wrapped = torch.nn.parallel.DistributedDataParallel(model)
        accelerator = SimpleNamespace(
            distributed_type=DistributedType.MULTI_CPU, scaler=None, sync_gradients=False
        )
        surgeon = GradientSurgeon(accelerator, wrapped)
        assert surgeon.backend == "ddp"
        forward = wrapped
    else:
        engine = FakeZero3Engine(model, rank)
        _install_fake_deepspeed(engine)
        accelerator = SimpleNamespace(
            distributed_type=DistributedType.DEEPSPEED,
            deepspeed_engine_wrapped=SimpleNamespace(engine=engine),
            scaler=None,
            sync_gradients=False,
        )
        surgeon = GradientSurgeon(accelerator, engine)
        assert surgeon.backend == "zero3"
        forward = model
    info = None
    for micro in range(MICRO_BATCHES):
        accelerator.sync_gradients = micro == MICRO_BATCHES - 1
        with surgeon.context(forward):
            loss_a, loss_r = _losses(forward, _batch(rank, micro))
            surgeon.backward("answer", loss_a, retain_graph=True)
            surgeon.backward("reasoning", loss_r, retain_graph=False)
        if accelerator.sync_gradients:
            info = surgeon.apply()
    assert info is not None
    assert info.conflict == conflict
    if mode == "ddp":
        actual = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    else:
        assert engine.steps == 1
        actual = engine.full_gradient()
    assert torch.allclose(actual, expected, atol=1e-5), (mode, (actual - expected).abs().max())


def test_pcgrad_projects_the_global_gradients_under_ddp_and_zero3(tmp_path: Path):
    assert _expected()[1], "the test objectives must conflict"
    mp.spawn(_worker, args=(str(tmp_path / "store"),), nprocs=WORLD, join=True)
