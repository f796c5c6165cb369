"""``torch.distributed``'s process groups and collectives, on MPI (:mod:`tapegrad.comm`).

The ranks are the MPI world's: start them with ``python -m tapegrad.launch -n 4
train.py`` (which also sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and
``MASTER_PORT`` as ``torchrun`` does) or ``mpirun -n 4 python train.py``.  Backends
``"mpi"`` and ``"gloo"`` (an alias that runs on MPI) are accepted; ``init_method="env://"``
reads PyTorch's variables and checks them against the MPI world.  Every wait honours the
group's ``timeout`` (a dead or missing rank raises ``torch.distributed.DistBackendError``,
never a hang).

On every rank::

    import tapegrad.torch as torch
    import tapegrad.torch.distributed as dist

    dist.init_process_group("gloo")
    t = torch.ones(3) * (dist.get_rank() + 1)
    dist.all_reduce(t)   # t: the sum over ranks

Outside a process group, the calls fail as PyTorch's do:

>>> import tapegrad.torch.distributed as dist
>>> dist.is_initialized()
False
>>> try:
...     dist.get_rank()
... except ValueError as e:
...     print(e)
Default process group has not been initialized, please make sure to call init_process_group.
"""

from __future__ import annotations

import datetime
import enum
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import comm as _comm
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistStoreError", "GroupMember", "P2POp",
    "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all_single", "barrier", "batch_isend_irecv",
    "broadcast", "broadcast_object_list", "destroy_process_group", "gather", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "irecv", "is_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "send",
]

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class DistError(RuntimeError):
    """``torch.distributed.DistError``."""


class DistBackendError(DistError):
    """``torch.distributed.DistBackendError``: the backend failed (here also a timeout)."""


class DistStoreError(DistError):
    """``torch.distributed.DistStoreError``."""


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {int(self)}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class _PremulSum:
    """``ReduceOp.PREMUL_SUM`` with its factor (``_make_nccl_premul_sum(factor)``)."""

    def __init__(self, factor: Any) -> None:
        self.factor = factor
        self.op = RedOpType.PREMUL_SUM


def _make_nccl_premul_sum(factor: Any) -> _PremulSum:
    return _PremulSum(factor)


class ReduceOp:
    """``torch.distributed.ReduceOp``: SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR,
    PREMUL_SUM (with a factor from ``_make_nccl_premul_sum``)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_OP_NAMES = {RedOpType.SUM: "sum", RedOpType.AVG: "avg", RedOpType.PRODUCT: "prod",
             RedOpType.MIN: "min", RedOpType.MAX: "max", RedOpType.BAND: "band",
             RedOpType.BOR: "bor", RedOpType.BXOR: "bxor", RedOpType.PREMUL_SUM: "premul_sum"}


class Backend(str):
    """``torch.distributed.Backend``: a backend name (``Backend.GLOO == "gloo"``)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise hinted(ValueError(with_hint(
                f"Backend constructor parameter must be string-ish, but got: {type(name)}",
                "pass 'gloo' or 'mpi'")))
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A group of ranks: ``rank()``, ``size()``; collectives take it as ``group=``."""

    def __init__(self, comm: _comm.Comm, ranks: list[int], backend: str, name: str) -> None:
        self._comm = comm
        self._ranks = ranks  # global ranks, in group order
        self._backend = backend
        self._name = name

    def rank(self) -> int:
        return self._comm.rank

    def size(self) -> int:
        return self._comm.size

    def name(self) -> str:
        return self._backend

    @property
    def group_name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<torch.distributed.distributed_c10d.ProcessGroup object at {id(self):#x}>"


class group:  # noqa: N801  (torch.distributed.group)
    """``torch.distributed.group.WORLD``: the default group once initialised (else None)."""

    WORLD: ProcessGroup | None = None


class GroupMember:
    """``GroupMember.WORLD`` and the marker a rank outside a ``new_group`` receives."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


class _State:
    default: ProcessGroup | None = None
    groups: list[ProcessGroup] = []
    backend: str = ""


_S = _State()


class Work:
    """The handle of an ``async_op=True`` call: ``wait()``, ``is_completed()`` ..."""

    def __init__(self, pending: Any, after: Any = None) -> None:
        self._p = pending
        self._after = after
        self._exc: BaseException | None = None
        self._result: Any = None
        self._done = False

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            r = self._p.result if self._p is not None else None
            self._result = self._after(r) if self._after is not None else r

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        if self._done:
            return True
        try:
            if self._p is not None:
                self._p.wait(None if timeout is None else timeout.total_seconds())
        except _comm.DistTimeoutError as e:
            self._exc = e
            raise _backend_error(e) from None
        self._finish()
        return True

    def is_completed(self) -> bool:
        if not self._done and (self._p is None or self._p.test()):
            self._finish()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed() and self._exc is None

    def exception(self) -> BaseException | None:
        return self._exc

    def source_rank(self) -> int:
        self.wait()
        return int(self._result)

    def result(self) -> list[Any]:
        self.wait()
        return [] if self._result is None else [self._result]

    def synchronize(self) -> None:
        self.wait()

    def get_future(self) -> _Future:
        return _Future(self)


class _Future:
    """``torch.futures.Future`` for a ``Work``: ``wait()``, ``value()``, ``done()``, ``then``."""

    def __init__(self, work: Work) -> None:
        self._w = work

    def wait(self) -> Any:
        return self._w.result()

    value = wait

    def done(self) -> bool:
        return self._w.is_completed()

    def then(self, fn: Any) -> Any:
        return fn(self)


def _backend_error(e: BaseException) -> DistBackendError:
    err = DistBackendError(str(e).split("\n")[0])
    for note in getattr(e, "__notes__", []):
        hinted(err, note[len("[tapegrad hint] "):] if note.startswith("[tapegrad hint] ")
               else note)
    return err


# ---------------------------------------------------------------------------- availability
def is_available() -> bool:
    """True: ``torch.distributed`` exists (its collectives need the ``distributed`` extra)."""
    return True


def is_mpi_available() -> bool:
    return _comm.available()


def is_gloo_available() -> bool:
    """The ``gloo`` name is accepted (and runs on MPI) when mpi4py is installed."""
    return _comm.available()


def is_nccl_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return "TORCHELASTIC_RUN_ID" in os.environ


def is_initialized() -> bool:
    return _S.default is not None


# ---------------------------------------------------------------------------- set up
def _env_int(name: str) -> int:
    return int(_env(name))


def _env(name: str) -> str:
    v = os.environ.get(name)
    if v is None:
        raise hinted(ValueError(with_hint(
            f"Error initializing torch.distributed using env:// rendezvous: environment "
            f"variable {name} expected, but not set",
            "start the ranks with python -m tapegrad.launch -n N script.py (it sets RANK, "
            "WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or pass rank= and world_size=")))
    return v


def _check_backend(backend: Any) -> str:
    name = "gloo" if backend is None else str(backend).lower()
    parts = [p.split(":")[-1] for p in name.split(",")]
    for p in parts:
        if p == "nccl":
            raise hinted(RuntimeError(with_hint(
                "Distributed package doesn't have NCCL built in",
                "tapegrad runs on the CPU: use backend='gloo' or 'mpi' (both run on MPI)")))
        if p not in ("gloo", "mpi"):
            raise hinted(AssertionError(with_hint(
                f"Unknown backend type {p}",
                "tapegrad's backends are 'gloo' and 'mpi' (both run on MPI)")))
    return parts[0]


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the MPI world as the default process group.

    ``rank`` and ``world_size`` (given, or read from the environment for ``env://``, as
    PyTorch does) must agree with MPI's: start every rank with ``mpirun`` or
    ``python -m tapegrad.launch``.
    """
    if _S.default is not None:
        raise hinted(ValueError(with_hint(
            "trying to initialize the default process group twice!",
            "call init_process_group once per process (destroy_process_group() to start over)")))
    name = _check_backend(backend)
    if not _comm.available():
        _comm.mpi()  # raises, naming the extra to install
    mpi_rank, mpi_size = _comm.world_rank_size()
    by_mpi = _comm.launched_by_mpi()
    if store is None and (init_method is None or init_method.startswith("env://")):
        # PyTorch's env:// rendezvous; under mpirun the launcher's ranks stand in for it
        env = os.environ
        if rank < 0:
            rank = int(env["RANK"]) if "RANK" in env else (
                mpi_rank if by_mpi else _env_int("RANK"))
        if world_size < 0:
            world_size = int(env["WORLD_SIZE"]) if "WORLD_SIZE" in env else (
                mpi_size if by_mpi else _env_int("WORLD_SIZE"))
        if not by_mpi:
            _env("MASTER_ADDR")
            _env_int("MASTER_PORT")
    w = _comm.world(_comm.default_timeout() if timeout is None else timeout.total_seconds())
    if world_size < 0:
        world_size = w.size
    if rank < 0:
        rank = w.rank
    if world_size != w.size or rank != w.rank:
        raise hinted(RuntimeError(with_hint(
            f"rank {rank} / world_size {world_size} do not match the MPI world "
            f"(rank {w.rank} of {w.size})",
            "tapegrad's process groups are MPI's: start every rank with python -m "
            "tapegrad.launch -n N script.py or mpirun -n N python script.py")))
    pg = ProcessGroup(w, list(range(w.size)), name, group_name or "0")
    _S.default = pg
    _S.groups = [pg]
    _S.backend = name
    group.WORLD = pg
    GroupMember.WORLD = pg
    _comm.abort_on_uncaught_exception()


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave ``group`` (default: every group, and the default one)."""
    if group is None:
        if _S.default is None:
            raise hinted(AssertionError(with_hint(
                "Process group cannot be None", "init_process_group() was not called")))
        for g in _S.groups[1:]:
            g._comm.free()
        _S.default = None
        _S.groups = []
        globals()["group"].WORLD = None
        GroupMember.WORLD = None
        return
    group._comm.free()
    _S.groups = [g for g in _S.groups if g is not group]


def _pg(group: ProcessGroup | None) -> ProcessGroup:
    if _S.default is None:
        raise hinted(ValueError(with_hint(
            _NOT_INIT, "call torch.distributed.init_process_group('gloo') first (and start "
            "the ranks with python -m tapegrad.launch -n N script.py)")))
    return _S.default if group is None else group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group); -1 outside the group."""
    if _non_member(group):
        _pg(None)
        return -1
    return _pg(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in ``group`` (the default group); -1 outside the group."""
    if _non_member(group):
        _pg(None)
        return -1
    return _pg(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    return _pg(group)._backend


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    return list(_pg(group)._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    return _pg(group)._ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    pg = _pg(group)
    if global_rank not in pg._ranks:
        raise hinted(ValueError(with_hint(
            f"Global rank {global_rank} is not part of group {pg}",
            f"the group's ranks are {pg._ranks}")))
    return pg._ranks.index(global_rank)


def new_group(ranks: Sequence[int] | None = None, timeout: datetime.timedelta | None = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> Any:
    """A group over ``ranks`` (every rank of the default group must call it, in the same
    order); ranks outside it get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _pg(None)
    if ranks is not None:
        ranks = sorted(int(r) for r in ranks)
        if len(ranks) > world.size():
            raise hinted(ValueError(with_hint(
                "the new group's world size should be less or equal to the world size set "
                "by init_process_group", f"the world has {world.size()} ranks")))
        for r in ranks:
            if r < 0 or r >= world.size():
                raise hinted(ValueError(with_hint(
                    "The new group's rank should be within the world_size set by "
                    "init_process_group", f"rank {r} is outside 0..{world.size() - 1}")))
    if backend is not None:
        _check_backend(backend)
    sub = world._comm.subgroup(ranks, None if timeout is None else timeout.total_seconds())
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(sub, list(range(world.size())) if ranks is None else list(ranks),
                      world._backend, str(len(_S.groups)))
    _S.groups.append(pg)
    return pg


# ---------------------------------------------------------------------------- checks
def _tensor(t: Any, name: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise hinted(TypeError(with_hint(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(t)} instead.", f"pass a tensor as `{name}`")))
    return t


def _tensor_list(ts: Any, name: str) -> list[Tensor]:
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise hinted(TypeError(with_hint(
            f"Invalid function argument. Expected parameter `{name}` of type "
            "List[torch.Tensor]\n             but got {type(ts)} instead.",
            f"pass a list of tensors as `{name}`")))
    return list(ts)


def _op(op: Any, t: Tensor) -> tuple[str, Any]:
    factor = None
    if isinstance(op, _PremulSum):
        factor = op.factor._data if isinstance(op.factor, Tensor) else op.factor
        code: Any = RedOpType.PREMUL_SUM
    else:
        code = op
    if not isinstance(code, RedOpType):
        raise hinted(TypeError(with_hint(
            "(): incompatible function arguments. The following argument types are "
            "supported:\n    1. (self: torch._C._distributed_c10d.AllreduceOptions, arg0: "
            f"torch._C._distributed_c10d.ReduceOp) -> None\n\nInvoked with: {op!r}",
            "pass a torch.distributed.ReduceOp, e.g. ReduceOp.SUM")))
    if code == RedOpType.PREMUL_SUM and factor is None:
        raise hinted(TypeError(with_hint(
            "(): incompatible function arguments. The following argument types are "
            "supported:\n    1. (self: torch._C._distributed_c10d.AllreduceOptions, arg0: "
            f"torch._C._distributed_c10d.ReduceOp) -> None\n\nInvoked with: {code!r}",
            "PREMUL_SUM needs its factor: torch.distributed._make_nccl_premul_sum(factor)")))
    if code in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and \
            t._data.dtype.kind not in "iub":
        raise hinted(RuntimeError(with_hint(
            f"Cannot use ReduceOp.{code.name} with non-integral dtype",
            "bitwise reductions need integer or bool tensors")))
    return _OP_NAMES[code], factor


def _root(pg: ProcessGroup, global_rank: int | None, group_rank: int | None, what: str,
          default: int | None = 0) -> int:
    if group_rank is not None:
        r = int(group_rank)
    elif global_rank is not None:
        r = get_group_rank(pg, int(global_rank)) if pg is not _S.default else int(global_rank)
    elif default is not None:
        r = default
    else:
        raise hinted(ValueError(with_hint(
            f"Either {what} or group_{what} must be specified",
            f"pass {what}= (a global rank)")))
    if r < 0 or r >= pg.size():
        raise hinted(RuntimeError(with_hint(
            f"ProcessGroupGloo::{_CALLER[0]}: invalid root rank: {r}",
            f"the group has ranks 0..{pg.size() - 1}")))
    return r


_CALLER = ["broadcast"]


def _done(pending: Any, async_op: bool, after: Any = None) -> Any:
    w = Work(pending, after)
    if async_op:
        return w
    w.wait()
    return None


def _write(t: Tensor, arr: np.ndarray) -> None:
    t._data[...] = arr


def _non_member(group: Any) -> bool:
    return group is GroupMember.NON_GROUP_MEMBER


# ---------------------------------------------------------------------------- collectives
def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Any:
    """Reduce ``tensor`` over the group's ranks, in place on every rank."""
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    name, factor = _op(op, t)
    return _done(pg._comm.allreduce(t._data, name, factor=factor, async_op=True), async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Any:
    """Copy ``tensor`` from rank ``src`` to every rank (in place)."""
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    _CALLER[0] = "broadcast"
    root = _root(pg, src, group_src, "src")
    return _done(pg._comm.broadcast(t._data, root, async_op=True), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Any:
    """Reduce ``tensor`` onto rank ``dst`` (in place there)."""
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    name, factor = _op(op, t)
    _CALLER[0] = "reduce"
    root = _root(pg, dst, group_dst, "dst")
    return _done(pg._comm.reduce(t._data, root, name, factor=factor, async_op=True), async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Any:
    """``tensor_list[i]`` receives rank i's ``tensor``."""
    t = _tensor(tensor)
    outs = _tensor_list(tensor_list, "tensor_list")
    if _non_member(group):
        return None
    pg = _pg(group)
    if len(outs) != pg.size():
        raise hinted(RuntimeError(with_hint(
            f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected "
            f"length {pg.size()}, got {len(outs)})", "pass one output tensor per rank")))
    for i, o in enumerate(outs):
        if o._data.shape != t._data.shape:
            raise hinted(RuntimeError(with_hint(
                f"ProcessGroupGloo::allgather: invalid tensor size at index {i} (expected "
                f"({', '.join(map(str, t._data.shape))}), got "
                f"({', '.join(map(str, o._data.shape))}))",
                "every output tensor must have the input's shape")))

    def after(stacked: np.ndarray) -> None:
        for o, part in zip(outs, stacked):
            _write(o, part)

    return _done(pg._comm.allgather(t._data, async_op=True), async_op, after)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None, async_op: bool = False) -> Any:
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    out = _tensor(output_tensor, "output_tensor")
    t = _tensor(input_tensor, "input_tensor")
    if _non_member(group):
        return None
    pg = _pg(group)
    n = pg.size()
    shp = t._data.shape
    cat = ((shp[0] * n,) + shp[1:]) if shp else (n,)
    if out._data.shape not in (cat, (n,) + shp):
        raise hinted(RuntimeError(with_hint(
            f"ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected "
            f"({', '.join(map(str, cat))}), got ({', '.join(map(str, out._data.shape))}))",
            f"the output holds {n} inputs: shape {cat} (concatenated) or {(n,) + shp}")))

    def after(stacked: np.ndarray) -> None:
        _write(out, stacked.reshape(out._data.shape))

    return _done(pg._comm.allgather(t._data, async_op=True), async_op, after)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: Any = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Any:
    """``output`` on rank i receives the reduction over ranks of their ``input_list[i]``."""
    out = _tensor(output, "output")
    ins = _tensor_list(input_list, "input_list")
    if _non_member(group):
        return None
    pg = _pg(group)
    if len(ins) != pg.size() or any(x._data.shape != out._data.shape for x in ins):
        raise hinted(ValueError(with_hint(
            "Cannot do reduce_scatter: input_list must hold one tensor of the output's shape "
            "per rank", f"pass {pg.size()} tensors of shape {tuple(out._data.shape)}")))
    name, factor = _op(op, out)
    chunks = np.stack([x._data for x in ins])
    return _done(pg._comm.reduce_scatter(chunks, name, factor=factor, async_op=True),
                 async_op, lambda r: _write(out, r))


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,
                          group: ProcessGroup | None = None, async_op: bool = False) -> Any:
    """``input`` split into one block per rank along dim 0; rank i gets block i reduced."""
    out = _tensor(output, "output")
    t = _tensor(input, "input")
    if _non_member(group):
        return None
    pg = _pg(group)
    n = pg.size()
    if t._data.size != out._data.size * n:
        raise hinted(ValueError(with_hint(
            "input tensor must be the same size as output size times world size",
            f"input has {t._data.size} elements, output {out._data.size}, world {n}")))
    name, factor = _op(op, out)
    chunks = t._data.reshape((n,) + out._data.shape)
    return _done(pg._comm.reduce_scatter(chunks, name, factor=factor, async_op=True),
                 async_op, lambda r: _write(out, r))


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Any:
    """Rank ``dst``'s ``gather_list[i]`` receives rank i's ``tensor``."""
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    _CALLER[0] = "gather"
    root = _root(pg, dst, group_dst, "dst")
    me = pg.rank() == root
    outs: list[Tensor] = []
    if me:
        outs = _tensor_list(gather_list, "gather_list")
        if len(outs) != pg.size():
            raise hinted(ValueError(with_hint(
                "Argument ``gather_list`` must have the same number of elements as the "
                "group size", f"pass {pg.size()} tensors")))
    elif gather_list:
        raise hinted(ValueError(with_hint(
            "Argument ``gather_list`` must NOT be specified on non-destination ranks.",
            "only rank dst passes gather_list")))

    def after(stacked: Any) -> None:
        if me:
            for o, part in zip(outs, stacked):
                _write(o, part)

    return _done(pg._comm.gather(t._data, root, async_op=True), async_op, after)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Any:
    """Rank i's ``tensor`` receives ``scatter_list[i]`` of rank ``src``."""
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    _CALLER[0] = "scatter"
    root = _root(pg, src, group_src, "src")
    chunks = None
    if pg.rank() == root:
        ins = _tensor_list(scatter_list, "scatter_list")
        if len(ins) != pg.size():
            raise hinted(ValueError(with_hint(
                "Argument ``scatter_list`` must have the same number of elements as the "
                "group size", f"pass {pg.size()} tensors")))
        chunks = np.stack([x._data for x in ins])
    elif scatter_list:
        raise hinted(ValueError(with_hint(
            "Argument ``scatter_list`` must NOT be specified on non-source ranks.",
            "only rank src passes scatter_list")))
    return _done(pg._comm.scatter(chunks, t._data, root, async_op=True), async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: Any = None,
                      input_split_sizes: Any = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Any:
    """Rank i sends block j of ``input`` (dim 0) to rank j, receiving into ``output``."""
    out = _tensor(output, "output")
    t = _tensor(input, "input")
    if _non_member(group):
        return None
    pg = _pg(group)
    n = pg.size()
    row_in = int(np.prod(t._data.shape[1:])) if t._data.ndim else 1
    row_out = int(np.prod(out._data.shape[1:])) if out._data.ndim else 1
    ins = list(input_split_sizes) if input_split_sizes else [t._data.shape[0] // n] * n
    outs = list(output_split_sizes) if output_split_sizes else [out._data.shape[0] // n] * n
    return _done(pg._comm.alltoall(t._data, [k * row_in for k in ins], out._data,
                                   [k * row_out for k in outs], async_op=True), async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None,
            timeout: datetime.timedelta | None = None) -> Any:
    """Wait until every rank of the group reached this barrier."""
    if _non_member(group):
        return None
    pg = _pg(group)
    p = pg._comm.barrier(async_op=True)
    w = Work(p)
    if async_op:
        return w
    w.wait(timeout)
    return None


def monitored_barrier(group: ProcessGroup | None = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that fails (``DistBackendError``) after ``timeout`` instead of waiting on."""
    barrier(group, timeout=timeout)


# ---------------------------------------------------------------------------- point to point
def _peer(pg: ProcessGroup, global_rank: int | None, group_rank: int | None,
          what: str) -> int:
    r = group_rank if group_rank is not None else (
        get_group_rank(pg, global_rank) if global_rank is not None and pg is not _S.default
        else global_rank)
    if r is None:
        raise hinted(ValueError(with_hint(
            f"Either {what} or group_{what} must be specified", f"pass {what}=")))
    if r == pg.rank():
        word = "destination" if what == "dst" else "source"
        raise hinted(ValueError(with_hint(
            f"Invalid {word} rank: {word} rank should not be the same as the rank of the "
            "current process.", "send to (or receive from) another rank")))
    return int(r)


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    return Work(pg._comm.send(t._data, _peer(pg, dst, group_dst, "dst"), tag, async_op=True))


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    t = _tensor(tensor)
    if _non_member(group):
        return None
    pg = _pg(group)
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src")
    return Work(pg._comm.recv(t._data, peer, tag, async_op=True))


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_dst: int | None = None) -> None:
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor``; returns the sender's rank (any rank when ``src`` is None)."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    r = int(w._result)
    pg = _pg(group)
    return pg._ranks[r] if r < len(pg._ranks) else r


class P2POp:
    """One operation for ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op: Any, tensor: Tensor, peer: int | None = None,
                 group: ProcessGroup | None = None, tag: int = 0,
                 group_peer: int | None = None) -> None:
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    out: list[Work] = []
    for p in p2p_op_list:
        w = p.op(p.tensor, p.peer, p.group, p.tag)
        if w is not None:
            out.append(w)
    return out


# ---------------------------------------------------------------------------- Python objects
def all_gather_object(object_list: list[Any], obj: Any,
                      group: ProcessGroup | None = None) -> None:
    """``object_list[i]`` becomes rank i's ``obj`` (pickled)."""
    if _non_member(group):
        return
    pg = _pg(group)
    got = pg._comm.allgather_object(obj)
    if len(object_list) != len(got):
        raise hinted(ValueError(with_hint(
            f"object_list must have {len(got)} entries (one per rank)",
            "pass [None] * world_size")))
    object_list[:] = got


def broadcast_object_list(object_list: list[Any], src: int | None = None,
                          group: ProcessGroup | None = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """Rank ``src``'s ``object_list`` entries replace every rank's (pickled)."""
    if _non_member(group):
        return
    pg = _pg(group)
    _CALLER[0] = "broadcast"
    root = _root(pg, src, group_src, "src")
    got = pg._comm.broadcast_object(list(object_list) if pg.rank() == root else None, root)
    object_list[:] = got
