"""Data-parallel training in PyTorch style: DDP + DistributedSampler on N ranks, or (with
``--reference N``) one process on the concatenated batches the N ranks would see.

Usage: ``torch_train.py sgd,adam OUT.npz`` under mpiexec, or
``torch_train.py sgd,adam OUT.npz --reference N`` alone (writes ``OUT_sgd.npz`` ...).  Each rank starts from a
different random model (rank 0's seed is the reference's): DDP's broadcast at
construction must make them equal.  Every other step accumulates two half-batches with
``no_sync()``; the model has a head that the loss never uses
(``find_unused_parameters=True``).
"""

from __future__ import annotations

import os
import sys

import numpy as np

if os.environ.get("TRAIN_WITH_REAL_TORCH"):  # the same script on the real PyTorch (gloo)
    import torch
else:
    import tapegrad.torch as torch  # type: ignore[no-redef]

nn = torch.nn
DataLoader = torch.utils.data.DataLoader
TensorDataset = torch.utils.data.TensorDataset
DistributedSampler = torch.utils.data.DistributedSampler

PER_RANK = 8
STEPS_EPOCHS = 2


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
        self.unused = nn.Linear(16, 2)  # never reaches the loss

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def dataset() -> TensorDataset:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((48, 6)).astype("float32")
    y = rng.integers(0, 3, size=48)
    return TensorDataset(torch.tensor(x), torch.tensor(y))


def make_opt(kind: str, params: object) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)  # type: ignore[arg-type]
    return torch.optim.Adam(params, lr=0.01)  # type: ignore[arg-type]


def step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
         it: int, no_sync: object = None) -> float:
    opt.zero_grad()
    lossf = nn.functional.cross_entropy
    if it % 2 == 1:  # gradient accumulation over two halves, the first without syncing
        h = x.shape[0] // 2
        ctx = no_sync() if no_sync is not None else _null()  # type: ignore[operator]
        with ctx:
            (lossf(model(x[:h]), y[:h]) / 2).backward()
        loss = lossf(model(x[h:]), y[h:]) / 2
    else:
        loss = lossf(model(x), y)
    loss.backward()
    opt.step()
    return float(loss.item())


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


def run_ddp(kind: str, out: str) -> None:
    dist = torch.distributed
    DDP = torch.nn.parallel.DistributedDataParallel

    if not dist.is_initialized():
        dist.init_process_group("gloo")
    r = dist.get_rank()
    torch.manual_seed(r)  # different starting weights on every rank
    net = Net()
    # small buckets (several per step, reduced while backward goes on) and an unused head
    model = DDP(net, find_unused_parameters=True, bucket_cap_mb=0.0001)
    if hasattr(model, "bucket_sizes"):
        assert len(model.bucket_sizes()) > 2, model.bucket_sizes()
    opt = make_opt(kind, model.parameters())
    ds = dataset()
    sampler = DistributedSampler(ds, shuffle=True, seed=3)
    loader = DataLoader(ds, batch_size=PER_RANK, sampler=sampler)
    it = 0
    for epoch in range(STEPS_EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            step(model, opt, x, y, it, model.no_sync)
            it += 1
    assert net.unused.weight.grad is None, "a parameter no rank used got a gradient"
    if r == 0:
        np.savez(out, **{k: v.detach().numpy() for k, v in net.state_dict().items()})
    dist.barrier()


def run_reference(kind: str, out: str, n: int) -> None:
    torch.manual_seed(0)
    net = Net()
    opt = make_opt(kind, net.parameters())
    ds = dataset()
    samplers = [DistributedSampler(ds, num_replicas=n, rank=k, shuffle=True, seed=3)
                for k in range(n)]
    it = 0
    for epoch in range(STEPS_EPOCHS):
        for s in samplers:
            s.set_epoch(epoch)
        orders = [list(s) for s in samplers]
        for b in range(0, len(orders[0]), PER_RANK):
            # rank k's batch b, the ranks' batches concatenated (halves kept per rank for
            # the accumulation steps: half 1 of every rank, then half 2 of every rank)
            parts = [o[b:b + PER_RANK] for o in orders]
            h = len(parts[0]) // 2
            idx = [i for p in parts for i in p[:h]] + [i for p in parts for i in p[h:]]
            x, y = ds[idx]
            step(net, opt, x, y, it)
            it += 1
    np.savez(out, **{k: v.detach().numpy() for k, v in net.state_dict().items()})


if __name__ == "__main__":
    kinds, path = sys.argv[1].split(","), sys.argv[2]
    for kind in kinds:  # one start for several optimizers: OUT gets the optimizer's name
        out = path.replace(".npz", f"_{kind}.npz")
        if len(sys.argv) > 3 and sys.argv[3] == "--reference":
            run_reference(kind, out, int(sys.argv[4]))
        else:
            run_ddp(kind, out)
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
