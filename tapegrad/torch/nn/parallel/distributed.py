"""``torch.nn.parallel.DistributedDataParallel`` on MPI.

At construction the parameters and buffers are broadcast from rank 0 (every replica
starts equal) and put into buckets (reverse parameter order, ``bucket_cap_mb``, the
first bucket 1 MiB with the default cap), as PyTorch's reducer does.  During
``backward`` a hook on each parameter copies its gradient into its bucket as soon as
the engine has finished it; a full bucket is divided by the world size and its all-reduce starts at once
(non-blocking), in bucket order, so communication overlaps the rest of the backward
pass.  When the pass has written every ``.grad``, a queued callback waits for the
all-reduces and puts the averages into ``.grad``.

So N ranks each on a batch of B give every rank the gradient of the mean loss over the
N * B examples: the same step as one process on the concatenated batch.

On every rank::

    import tapegrad.torch as torch
    from tapegrad.torch.nn.parallel import DistributedDataParallel as DDP

    torch.distributed.init_process_group("gloo")
    model = DDP(torch.nn.Linear(4, 2))
    model(torch.randn(8, 4)).sum().backward()   # .grad: the average over ranks
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ...._core import mode
from ...._core.errors import hinted, with_hint
from ...._core.node import AccumulateGrad
from ...._core.tensor import TORCH, Tensor, make
from ....autodiff import entry
from ..modules import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def _unfinished_message(rank: int, missing: list[int]) -> str:
    return (
        "Expected to have finished reduction in the prior iteration before starting a new "
        "one. This error indicates that your module has parameters that were not used in "
        "producing loss. You can enable unused parameter detection by passing the keyword "
        "argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`"
        ", and by \nmaking sure all `forward` function outputs participate in calculating "
        "loss. \nIf you already have done the above, then the distributed data parallel "
        "module wasn't able to locate the output tensors in the return value of your "
        "module's `forward` function. Please include the loss function and the structure of "
        "the return value of `forward` of your module when reporting this issue (e.g. list, "
        "dict, iterable).\nParameter indices which did not receive grad for rank "
        f"{rank}: {' '.join(map(str, missing))}\n In addition, you can set the environment "
        "variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information "
        "about which particular parameters did not receive gradient on this rank as part of "
        "this error")


class _Bucket:
    """Gradients of some parameters (one dtype) in one flat buffer, all-reduced together."""

    def __init__(self, index: int, params: list[tuple[int, Tensor]], dtype: np.dtype) -> None:
        self.index = index
        self.params = params  # (parameter index, parameter)
        self.offsets: list[int] = []
        off = 0
        for _, p in params:
            self.offsets.append(off)
            off += p._data.size
        self.buffer = np.zeros(off, dtype)
        self.left = len(params)
        self.pending: Any = None

    def reset(self) -> None:
        self.left = len(self.params)
        self.pending = None


class DistributedDataParallel(Module):
    """Data parallelism at the module level: replicas on every rank, gradients averaged in
    buckets during ``backward``.

    Parameters
    ----------
    module : Module
        The model (the same one, built the same way, on every rank).
    process_group : ProcessGroup, optional
        Default: the default process group.
    broadcast_buffers : bool
        Broadcast rank 0's buffers (e.g. batch-norm statistics) at each forward.
    bucket_cap_mb : float, optional
        Bucket size in MiB (PyTorch's default 25, and then the first bucket is 1 MiB).
    find_unused_parameters : bool
        Walk the graph from the forward's outputs to find parameters that will get no
        gradient, so their buckets are reduced without them (slower; needed when some
        parameters are unused).
    init_sync : bool
        Broadcast rank 0's parameters and buffers at construction.

    ``device_ids``, ``output_device``, ``dim``, ``gradient_as_bucket_view`` and
    ``static_graph`` are accepted (everything runs on the CPU; ``.grad`` is never a view
    of a bucket here).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool | None = None, init_sync: bool = True,
                 process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 **kwargs: Any) -> None:
        super().__init__()
        from ...distributed import distributed_c10d as c10d

        pg = c10d._pg(process_group)
        self.module = module
        object.__setattr__(self, "process_group", pg)
        object.__setattr__(self, "_comm", pg._comm)
        object.__setattr__(self, "device_ids", device_ids)
        object.__setattr__(self, "output_device", output_device)
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "broadcast_buffers",
                           True if broadcast_buffers is None else bool(broadcast_buffers))
        object.__setattr__(self, "find_unused_parameters", bool(find_unused_parameters))
        object.__setattr__(self, "gradient_as_bucket_view", bool(gradient_as_bucket_view))
        object.__setattr__(self, "static_graph", bool(static_graph))
        object.__setattr__(self, "require_backward_grad_sync", True)
        object.__setattr__(self, "require_forward_param_sync", True)
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        object.__setattr__(self, "bucket_bytes_cap", int(cap * 1024 * 1024))
        # PyTorch's first bucket is 1 MiB only with the default cap (it holds the gradients
        # that arrive last, so a small one lets the last all-reduce start sooner)
        object.__setattr__(self, "_first_bucket_bytes",
                           _DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None
                           else self.bucket_bytes_cap)
        all_params = list(module.parameters())
        params = [p for p in all_params if p.requires_grad]
        if not params:
            raise hinted(RuntimeError(with_hint(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient.",
                "wrap the module that holds the trainable parameters")))
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_index", {id(p): k for k, p in enumerate(all_params)})
        self._verify_same_model(params)
        if init_sync:
            self._broadcast([p for p in all_params] + list(module.buffers()))
        self._build_buckets(params)
        hooks = []
        for i, p in enumerate(params):
            hooks.append(p.register_hook(self._make_hook(i)))
        object.__setattr__(self, "_hooks", hooks)
        object.__setattr__(self, "_used", None)
        object.__setattr__(self, "_unfinished", None)
        object.__setattr__(self, "_in_pass", False)
        object.__setattr__(self, "_pass_id", None)
        object.__setattr__(self, "_orphans", [])
        object.__setattr__(self, "_got", [False] * len(params))

    # ------------------------------------------------------------------ set up
    def _verify_same_model(self, params: Sequence[Tensor]) -> None:
        mine = [(tuple(p._data.shape), p._data.dtype.str) for p in params]
        everyone = self._comm.allgather_object(mine)
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(mine):
                raise hinted(RuntimeError(with_hint(
                    f"DDP expects same model across all ranks, but Rank {self._comm.rank} has "
                    f"{len(mine)} params, while rank {r} has inconsistent {len(theirs)} "
                    "params.", "build the same model on every rank")))
            for k, (a, b) in enumerate(zip(mine, theirs)):
                if a != b:
                    raise hinted(RuntimeError(with_hint(
                        f"[Rank {self._comm.rank}]: DDP expects same model across all ranks, "
                        f"but Rank {self._comm.rank} has parameter {k} of shape {list(a[0])} "
                        f"while rank {r} has shape {list(b[0])}.",
                        "build the same model on every rank")))

    def _broadcast(self, tensors: list[Tensor]) -> None:
        """Rank 0's values of ``tensors`` on every rank (one broadcast per dtype)."""
        if self._comm.size == 1:
            return
        by_dtype: dict[str, list[Tensor]] = {}
        for t in tensors:
            if t._data.size:
                by_dtype.setdefault(t._data.dtype.str, []).append(t)
        for group in by_dtype.values():
            flat = np.concatenate([t._data.ravel() for t in group])
            self._comm.broadcast(flat, 0)
            off = 0
            for t in group:
                n = t._data.size
                t._data[...] = flat[off:off + n].reshape(t._data.shape)
                off += n

    def _build_buckets(self, params: Sequence[Tensor]) -> None:
        """PyTorch's assignment: reverse order (gradients arrive roughly so), per dtype,
        the first bucket at 1 MiB (with the default cap) and the others at
        ``bucket_cap_mb``."""
        buckets: list[_Bucket] = []
        where: list[tuple[_Bucket, int]] = [None] * len(params)  # type: ignore[list-item]
        open_: dict[str, list[tuple[int, Tensor]]] = {}
        sizes: dict[str, int] = {}

        def close(key: str) -> None:
            members = open_.pop(key)
            b = _Bucket(len(buckets), members, np.dtype(key))
            buckets.append(b)
            sizes.pop(key, None)

        for i in reversed(range(len(params))):
            p = params[i]
            key = p._data.dtype.str
            open_.setdefault(key, []).append((i, p))
            sizes[key] = sizes.get(key, 0) + p._data.nbytes
            cap = self._first_bucket_bytes if not buckets else self.bucket_bytes_cap
            if sizes[key] >= cap:
                close(key)
        for key in list(open_):
            close(key)
        for b in buckets:
            for (i, _), off in zip(b.params, b.offsets):
                where[i] = (b, off)
        object.__setattr__(self, "_buckets", buckets)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_ready", [False] * len(params))
        object.__setattr__(self, "_next", 0)

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._unfinished is not None:
            missing = self._unfinished
            object.__setattr__(self, "_unfinished", None)
            raise hinted(RuntimeError(with_hint(
                _unfinished_message(self._comm.rank, missing),
                "some parameters got no gradient in the last backward: pass "
                "find_unused_parameters=True to DistributedDataParallel")))
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self.module.buffers())
            if bufs:
                self._broadcast(bufs)
        out = self.module(*inputs, **kwargs)
        used = None
        if self.find_unused_parameters and self.require_backward_grad_sync and \
                mode.STATE.grad_enabled:
            used = self._reachable(out)
        object.__setattr__(self, "_used", used)
        return out

    def _reachable(self, out: Any) -> set[int]:
        """Indices of the parameters the graph of ``out`` reaches (PyTorch's search for
        unused parameters at the end of the forward)."""
        pos = {id(p): i for i, p in enumerate(self._params)}
        found: set[int] = set()
        nodes: list[Any] = []
        for o in _flatten(out):
            if isinstance(o, Tensor):
                if o._node is not None:
                    nodes.append(o._node)
                elif id(o) in pos:
                    found.add(pos[id(o)])
        seen: set[int] = set()
        while nodes:
            n = nodes.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if isinstance(n, AccumulateGrad):
                v = n.variable_ref()
                if v is not None and id(v) in pos:
                    found.add(pos[id(v)])
                continue
            nodes.extend(c for c in n.next if c is not None)
        return found

    # ------------------------------------------------------------------ backward
    def _make_hook(self, i: int) -> Any:
        def hook(g: Tensor) -> None:
            if self.require_backward_grad_sync and entry.in_backward():
                self._mark_ready(i, g)
            return None

        return hook

    def _start_pass(self) -> None:
        object.__setattr__(self, "_in_pass", True)
        object.__setattr__(self, "_pass_id", entry.backward_id())
        object.__setattr__(self, "_got", [False] * len(self._params))
        entry.queue_callback(self._finish)
        if self._used is not None:  # found unused at the forward: their buckets need not wait
            for i in range(len(self._params)):
                if i not in self._used:
                    self._fill_unused(i)
            self._launch_ready()

    def _fill_unused(self, i: int) -> None:
        """A parameter without a gradient on this rank: its slot holds its ``.grad`` (or
        zeros), and it counts as ready."""
        b, off = self._where[i]
        p = self._params[i]
        g = p._grad
        b.buffer[off:off + p._data.size] = 0 if g is None else g._data.reshape(-1)
        self._ready[i] = True
        b.left -= 1

    def _reset(self) -> None:
        """Forget the current pass (its callback will not run: the backward failed)."""
        for b in self._buckets:
            if b.pending is not None and not b.pending.test():
                # still in flight (a failed pass): MPI owns that buffer; the bucket gets a
                # new one and the old stays alive with its request
                self._orphans.append(b.pending)
                b.buffer = np.zeros_like(b.buffer)
            b.reset()
        object.__setattr__(self, "_ready", [False] * len(self._params))
        object.__setattr__(self, "_next", 0)
        object.__setattr__(self, "_in_pass", False)
        object.__setattr__(self, "_used", None)

    def _mark_ready(self, i: int, g: Tensor) -> None:
        if self._in_pass and self._pass_id != entry.backward_id():
            self._reset()  # an earlier backward failed after this pass began
        if not self._in_pass:
            self._start_pass()
        if self._ready[i]:
            if not self._got[i]:
                self._reset()
                raise hinted(RuntimeError(with_hint(
                    "Expected to mark a variable ready only once. This error is caused by one "
                    "of the following reasons: 1) Use of a module parameter outside the "
                    "`forward` function. Please make sure model parameters are not shared "
                    "across multiple concurrent forward-backward passes. or try to use "
                    "_set_static_graph() as a workaround if this module graph does not change "
                    "during training loop.2) Reused parameters in multiple reentrant backward "
                    "passes. For example, if you use multiple `checkpoint` functions to wrap "
                    "the same part of your model, it would result in the same set of "
                    "parameters been used by different reentrant backward passes multiple "
                    "times, and hence marking a variable ready multiple times. DDP does not "
                    "support such use cases in default. You can try to use "
                    "_set_static_graph() as a workaround if your module graph does not change "
                    "over iterations.",
                    f"parameter {self._index[id(self._params[i])]} got a gradient although the "
                    "forward did not use it; call the DDP module for every forward")))
            return
        self._ready[i] = True
        self._got[i] = True
        b, off = self._where[i]
        p = self._params[i]
        n = p._data.size
        dst = b.buffer[off:off + n]
        old = p._grad
        if old is None:
            dst[...] = g._data.reshape(-1)
        else:  # .grad will be old + g once the pass is written (no_sync() accumulation)
            np.add(old._data.reshape(-1), g._data.reshape(-1), out=dst)
        b.left -= 1
        if b.left == 0:
            self._launch_ready()
        else:
            for other in self._buckets[:self._next]:
                if other.pending is not None:
                    other.pending.test()  # drive MPI's progress on the all-reduces in flight

    def _launch_ready(self) -> None:
        """Start the all-reduce of every complete bucket, in bucket order (every rank must
        issue them in the same order)."""
        k = self._next
        bs = self._buckets
        size = self._comm.size
        while k < len(bs) and bs[k].left == 0:
            b = bs[k]
            if size > 1:
                b.buffer /= b.buffer.dtype.type(size)
            b.pending = self._comm.allreduce(b.buffer, "sum", async_op=True)
            k += 1
        object.__setattr__(self, "_next", k)

    def _finish(self) -> None:
        """After the pass wrote ``.grad``: reduce what is left, wait, write the averages."""
        try:
            used_globally: np.ndarray | None = None
            if self.find_unused_parameters:
                local = np.array(self._got, dtype=np.int32)
                for i, ready in enumerate(self._ready):
                    if not ready:
                        self._fill_unused(i)
                self._launch_ready()
                used_globally = local.copy()
                self._comm.allreduce(used_globally, "max")
            else:
                self._launch_ready()
            if self._next < len(self._buckets):
                missing = sorted(self._index[id(self._params[i])]
                                 for i, r in enumerate(self._ready) if not r)
                for b in self._buckets[:self._next]:
                    if b.pending is not None:
                        b.pending.wait()
                object.__setattr__(self, "_unfinished", missing)
                return
            for b in self._buckets:
                b.pending.wait()
                for (i, p), off in zip(b.params, b.offsets):
                    if used_globally is not None and not used_globally[i]:
                        continue  # no rank used it: .grad stays as it was (PyTorch's choice)
                    n = p._data.size
                    avg = b.buffer[off:off + n].reshape(p._data.shape)
                    cur = p._grad
                    if cur is None or cur._node is not None:
                        p.grad = make(avg.astype(p._data.dtype, copy=True), None, False, TORCH)
                    else:
                        cur._data[...] = avg
                        cur._vc[0] += 1
        finally:
            self._reset()

    # ------------------------------------------------------------------ API
    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside accumulate local gradients without communicating; the
        first synced backward after it averages the accumulated ``.grad``."""
        old = self.require_backward_grad_sync
        object.__setattr__(self, "require_backward_grad_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "require_backward_grad_sync", old)

    def bucket_sizes(self) -> list[int]:
        """Bytes in each bucket (what one synced step all-reduces)."""
        return [int(b.buffer.nbytes) for b in self._buckets]

    def _get_ddp_logging_data(self) -> dict[str, Any]:
        return {"world_size": self._comm.size, "bucket_sizes": self.bucket_sizes(),
                "find_unused_parameters": int(self.find_unused_parameters),
                "num_buckets": len(self._buckets)}


def _flatten(o: Any) -> list[Any]:
    out: list[Any] = []
    stack = [o]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            out.append(x)
    return out
