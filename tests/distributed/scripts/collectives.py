"""Every torch.distributed collective on N ranks, checked against NumPy on the data every
rank can compute for every other (rank r holds ``data(r)``).  Exits non-zero on a
mismatch; prints one ``OK`` line per rank."""

from __future__ import annotations

import datetime

import numpy as np

import tapegrad.torch as torch
import tapegrad.torch.distributed as dist


def data(r: int, shape: tuple[int, ...] = (3, 4), dtype: str = "float32") -> np.ndarray:
    rng = np.random.default_rng(100 + r)
    if dtype.startswith("int"):
        return rng.integers(-20, 20, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def close(got: object, want: np.ndarray, what: str) -> None:
    g = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    if g.shape != want.shape or not np.allclose(g, want, rtol=1e-5, atol=1e-6):
        raise AssertionError(f"{what}: got {g!r}, want {want!r}")


def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    r, n = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    every = [data(k) for k in range(n)]
    ints = [data(k, (5,), "int64") for k in range(n)]
    R = dist.ReduceOp
    reductions = {R.SUM: np.sum, R.PRODUCT: np.prod, R.MIN: np.min, R.MAX: np.max}
    for op, fn in reductions.items():
        t = torch.tensor(every[r])
        dist.all_reduce(t, op=op)
        close(t, fn(np.stack(every), axis=0), f"all_reduce {op}")
    t = torch.tensor(every[r])
    dist.all_reduce(t, op=R.AVG)
    close(t, np.mean(np.stack(every), axis=0), "all_reduce AVG")
    t = torch.tensor(every[r])
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.5))
    close(t, 0.5 * np.sum(np.stack(every), axis=0), "all_reduce PREMUL_SUM")
    for op, fn in ((R.BAND, np.bitwise_and.reduce), (R.BOR, np.bitwise_or.reduce),
                   (R.BXOR, np.bitwise_xor.reduce)):
        t = torch.tensor(ints[r])
        dist.all_reduce(t, op=op)
        close(t, fn(np.stack(ints), axis=0), f"all_reduce {op}")
    # float64 and async handles
    t = torch.tensor(every[r].astype("float64"))
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    close(t, np.sum(np.stack(every), axis=0).astype("float64"), "async all_reduce")
    # broadcast from the last rank
    t = torch.tensor(every[r])
    dist.broadcast(t, src=n - 1)
    close(t, every[n - 1], "broadcast")
    # reduce onto rank 0
    t = torch.tensor(every[r])
    dist.reduce(t, dst=0, op=R.MAX)
    close(t, np.max(np.stack(every), axis=0) if r == 0 else every[r], "reduce")
    # all_gather, all_gather_into_tensor
    outs = [torch.zeros(3, 4) for _ in range(n)]
    dist.all_gather(outs, torch.tensor(every[r]))
    for k in range(n):
        close(outs[k], every[k], f"all_gather[{k}]")
    out = torch.zeros(3 * n, 4)
    dist.all_gather_into_tensor(out, torch.tensor(every[r]))
    close(out, np.concatenate(every), "all_gather_into_tensor")
    # reduce_scatter (list) and reduce_scatter_tensor
    chunks = [data(10 * r + k, (2, 2)) for k in range(n)]
    want = np.sum([data(10 * q + r, (2, 2)) for q in range(n)], axis=0)
    out = torch.zeros(2, 2)
    dist.reduce_scatter(out, [torch.tensor(c) for c in chunks])
    close(out, want, "reduce_scatter")
    out = torch.zeros(2, 2)
    dist.reduce_scatter_tensor(out, torch.tensor(np.concatenate(chunks)))
    close(out, want, "reduce_scatter_tensor")
    # gather to rank 1 % n, scatter from rank 0
    dst = 1 % n
    gl = [torch.zeros(3, 4) for _ in range(n)] if r == dst else None
    dist.gather(torch.tensor(every[r]), gl, dst=dst)
    if r == dst:
        assert gl is not None
        for k in range(n):
            close(gl[k], every[k], f"gather[{k}]")
    t = torch.zeros(3, 4)
    dist.scatter(t, [torch.tensor(e) for e in every] if r == 0 else None, src=0)
    close(t, every[r], "scatter")
    # all_to_all_single: block j of rank i's input goes to rank j
    inp = torch.tensor(np.stack([data(10 * r + j, (2,)) for j in range(n)]))
    out = torch.zeros(n, 2)
    dist.all_to_all_single(out, inp)
    close(out, np.stack([data(10 * j + r, (2,)) for j in range(n)]), "all_to_all_single")
    # point to point: a ring with isend/irecv, and blocking send/recv
    nxt, prv = (r + 1) % n, (r - 1) % n
    if n > 1:
        got = torch.zeros(3, 4)
        ws = [dist.isend(torch.tensor(every[r]), nxt), dist.irecv(got, prv)]
        for w in ws:
            w.wait()
        close(got, every[prv], "isend/irecv")
        if r == 0:
            dist.send(torch.tensor(every[0]), 1)
        elif r == 1:
            got = torch.zeros(3, 4)
            assert dist.recv(got) == 0  # from any rank: returns the sender
            close(got, every[0], "send/recv")
    # objects
    objs: list[object] = [None] * n
    dist.all_gather_object(objs, {"rank": r})
    assert objs == [{"rank": k} for k in range(n)], objs
    lst: list[object] = [r, "x"] if r == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [0, "x"], lst
    # a subgroup of the even ranks
    evens = list(range(0, n, 2))
    g = dist.new_group(evens)
    if r in evens:
        t = torch.tensor(every[r])
        dist.all_reduce(t, group=g)
        close(t, np.sum([every[k] for k in evens], axis=0), "all_reduce on new_group")
        assert dist.get_world_size(g) == len(evens)
        assert dist.get_rank(g) == evens.index(r)
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
    dist.barrier()
    # errors: PyTorch's types and words
    try:
        dist.all_reduce(3)  # type: ignore[arg-type]
    except TypeError as e:
        assert "Expected parameter `tensor` of type torch.Tensor" in str(e)
    else:
        raise AssertionError("no TypeError")
    try:
        dist.init_process_group("gloo")
    except ValueError as e:
        assert str(e).startswith("trying to initialize the default process group twice!")
    else:
        raise AssertionError("no ValueError")
    dist.destroy_process_group()
    assert not dist.is_initialized()
    try:
        dist.all_reduce(torch.ones(2))
    except ValueError as e:
        assert str(e).startswith("Default process group has not been initialized")
    else:
        raise AssertionError("no ValueError after destroy")
    print(f"OK collectives rank {r} of {n}", flush=True)


if __name__ == "__main__":
    main()
