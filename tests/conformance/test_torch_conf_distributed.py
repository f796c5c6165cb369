"""``DistributedSampler`` orders and ``torch.distributed`` error texts against real PyTorch
(skipped without it); the samplers need no MPI."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.utils.data.distributed import DistributedSampler as RealSampler  # noqa: E402

import tapegrad.torch as tt  # noqa: E402
import tapegrad.torch.distributed as tdist  # noqa: E402
from tapegrad.torch.utils.data.distributed import DistributedSampler  # noqa: E402


@pytest.mark.parametrize("n", [0, 1, 5, 10, 17, 100, 1001])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_sampler_orders_equal_pytorch(n: int, replicas: int, shuffle: bool,
                                      drop_last: bool) -> None:
    for rank in range(replicas):
        for epoch, seed in ((0, 0), (3, 0), (1, 42)):
            real = RealSampler(range(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                               seed=seed, drop_last=drop_last)
            ours = DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                      shuffle=shuffle, seed=seed, drop_last=drop_last)
            real.set_epoch(epoch)
            ours.set_epoch(epoch)
            assert list(ours) == list(real)
            assert len(ours) == len(real)


def test_sampler_bad_rank_message() -> None:
    with pytest.raises(ValueError) as real:
        RealSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError) as ours:
        DistributedSampler(range(4), num_replicas=2, rank=2)
    assert str(ours.value) == str(real.value)


@pytest.mark.parametrize("call", ["get_rank", "get_world_size", "all_reduce", "barrier",
                                  "broadcast", "sampler", "ddp"])
def test_before_init_process_group_errors_equal_pytorch(call: str) -> None:
    import torch.distributed as dist

    def run(d: object, t: object, sampler: object, ddp: object) -> None:
        if call == "all_reduce":
            d.all_reduce(t.ones(2))  # type: ignore[attr-defined]
        elif call == "broadcast":
            d.broadcast(t.ones(2), 0)  # type: ignore[attr-defined]
        elif call == "sampler":
            sampler(range(4))  # type: ignore[operator]
        elif call == "ddp":
            ddp(t.nn.Linear(2, 2))  # type: ignore[attr-defined, operator]
        else:
            getattr(d, call)()

    from torch.nn.parallel import DistributedDataParallel as RealDDP

    from tapegrad.torch.nn.parallel import DistributedDataParallel as DDP

    assert not dist.is_initialized() and not tdist.is_initialized()
    with pytest.raises(Exception) as real:
        run(dist, torch, RealSampler, RealDDP)
    with pytest.raises(Exception) as ours:
        run(tdist, tt, DistributedSampler, DDP)
    assert type(ours.value).__name__ == type(real.value).__name__
    assert str(ours.value) == str(real.value)
    assert any("init_process_group" in n for n in getattr(ours.value, "__notes__", []))


def test_backend_errors_equal_pytorch() -> None:
    import torch.distributed as dist

    for backend in ("nccl",):
        with pytest.raises(RuntimeError) as real:
            dist.init_process_group(backend, rank=0, world_size=1,
                                    init_method="tcp://127.0.0.1:29517")
        with pytest.raises(RuntimeError) as ours:
            tdist.init_process_group(backend, rank=0, world_size=1,
                                     init_method="tcp://127.0.0.1:29517")
        assert str(ours.value) == str(real.value)
    assert repr(tdist.ReduceOp.SUM) == repr(dist.ReduceOp.SUM)
    assert str(tdist.ReduceOp.MAX) == str(dist.ReduceOp.MAX)
    names = [n for n in dir(dist.ReduceOp) if n.isupper()]
    assert names == [n for n in dir(tdist.ReduceOp) if n.isupper()]
