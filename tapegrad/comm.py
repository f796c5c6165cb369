"""Communication between processes, on MPI (``mpi4py``): what both front-ends' data-parallel
APIs (``torch.distributed``, ``tf.distribute``) are built on.

Every operation works on NumPy arrays and is issued as a non-blocking MPI call; waiting
polls it against a deadline, so a rank whose peer died or skipped a collective raises a
``DistTimeoutError`` (a ``RuntimeError``) instead of hanging forever.  The ranks are the
MPI world's (``mpirun -n 4 python train.py`` or ``python -m tapegrad.launch -n 4 ...``).

On every rank::

    from tapegrad import comm

    c = comm.world()
    a = np.ones(3)
    c.allreduce(a)   # in place: the sum over ranks

Needs the ``distributed`` extra (``pip install 'tapegrad[distributed]'``: mpi4py and
MPICH's runtime).
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._core.errors import hinted, with_hint

__all__ = ["Comm", "DistTimeoutError", "Pending", "available", "mpi", "world",
           "world_rank_size", "launched_by_mpi", "default_timeout", "DEFAULT_TIMEOUT_S"]

DEFAULT_TIMEOUT_S = 1800.0  # PyTorch's default process-group timeout (30 minutes)
OPS = ("sum", "prod", "min", "max", "band", "bor", "bxor", "avg", "premul_sum")

_MPI: Any = None


class DistTimeoutError(RuntimeError):
    """A collective or a point-to-point transfer did not complete within the timeout."""


def available() -> bool:
    """Whether ``mpi4py`` can be imported (the ``distributed`` extra is installed)."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def mpi() -> Any:
    """The ``mpi4py.MPI`` module (imported, and MPI initialised, on first use)."""
    global _MPI
    if _MPI is None:
        try:
            import mpi4py

            mpi4py.rc.recv_mprobe = False
            from mpi4py import MPI
        except ImportError as e:
            raise hinted(ModuleNotFoundError(with_hint(
                "No module named 'mpi4py'",
                "data-parallel training runs on MPI: pip install 'tapegrad[distributed]' "
                "(mpi4py and MPICH)"))) from e
        _MPI = MPI
    return _MPI


def world_rank_size() -> tuple[int, int]:
    """This process's rank and the world size as the launcher set them (MPICH's ``PMI_*``,
    Open MPI's ``OMPI_COMM_WORLD_*``), without starting MPI; ``(0, 1)`` when started alone."""
    env = os.environ
    for r, s in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                 ("PMIX_RANK", "PMIX_SIZE")):
        if r in env and s in env:
            return int(env[r]), int(env[s])
    return 0, 1


def launched_by_mpi() -> bool:
    """Whether an MPI launcher (``mpirun``/``mpiexec``) started this process."""
    env = os.environ
    return any(k in env for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"))


def _mpi_op(MPI: Any, op: str) -> Any:
    return {"sum": MPI.SUM, "avg": MPI.SUM, "premul_sum": MPI.SUM, "prod": MPI.PROD,
            "min": MPI.MIN, "max": MPI.MAX, "band": MPI.BAND, "bor": MPI.BOR,
            "bxor": MPI.BXOR}[op]


def _wire(a: np.ndarray) -> np.ndarray:
    """A contiguous array of a type MPI reduces (float16 via float32, bool via uint8)."""
    if a.dtype == np.float16:
        return np.ascontiguousarray(a, dtype=np.float32)
    if a.dtype == np.bool_:
        return np.ascontiguousarray(a, dtype=np.uint8)
    return np.ascontiguousarray(a)


class Pending:
    """MPI requests in flight, and what to do once they completed (copy results back).

    ``wait()`` polls until every request completed or the timeout passed.
    """

    def __init__(self, comm: Comm, reqs: Sequence[Any], what: str,
                 finish: Callable[[], Any] | None = None, keep: Any = None) -> None:
        self.comm = comm
        self.reqs = list(reqs)
        self.what = what
        self.finish = finish
        self.keep = keep  # buffers MPI reads or writes until completion
        self.done = not self.reqs
        self.result: Any = None
        self.status: Any = None
        if self.done:
            self._complete()

    def _complete(self) -> None:
        self.done = True
        if self.finish is not None:
            self.result = self.finish()
            self.finish = None
        self.keep = None

    def test(self) -> bool:
        """Drive progress; True once complete (and its results are in place)."""
        if self.done:
            return True
        MPI = mpi()
        if MPI.Request.Testall(self.reqs, self._statuses()):
            self._complete()
        return self.done

    def _statuses(self) -> list[Any]:
        if self.status is None:
            MPI = mpi()
            self.status = [MPI.Status() for _ in self.reqs]
        return self.status

    def wait(self, timeout_s: float | None = None) -> Any:
        """Block until complete; raise ``DistTimeoutError`` after the timeout."""
        if self.done:
            return self.result
        limit = self.comm.timeout_s if timeout_s is None else timeout_s
        start = time.monotonic()
        deadline = start + limit
        # Poll: spin for the first millisecond (a collective whose peers are there is done
        # by then, as fast as MPI's blocking call), then yield the CPU between polls: ranks
        # share the cores, and a busy wait made one all-reduce 3-10x slower on a loaded
        # machine; sleep longer once the wait is long (a peer still computing, or gone)
        while not self.test():
            now = time.monotonic()
            if now > deadline:
                raise hinted(DistTimeoutError(with_hint(
                    f"[{self.comm.label}] Timed out waiting {int(limit * 1000)}ms for "
                    f"{self.what} to complete on rank {self.comm.rank} of "
                    f"{self.comm.size}",
                    "another rank died, hangs or skipped this collective (every rank "
                    "must call the same collectives in the same order); see its output")))
            waited = now - start
            if waited > 1e-3:
                time.sleep(0 if waited < 0.05 else 1e-4 if waited < 1.0 else 1e-3)
        return self.result


class Comm:
    """One MPI communicator, with collectives on NumPy arrays that respect a timeout."""

    def __init__(self, mpicomm: Any, timeout_s: float = DEFAULT_TIMEOUT_S,
                 label: str = "mpi") -> None:
        self.c = mpicomm
        self.rank = int(mpicomm.Get_rank())
        self.size = int(mpicomm.Get_size())
        self.timeout_s = float(timeout_s)
        self.label = label
        self.bytes_sent = 0  # bytes this rank handed to collectives (what the benchmark counts)

    # ------------------------------------------------------------------ helpers
    def _run(self, reqs: Sequence[Any], what: str, finish: Callable[[], Any] | None,
             keep: Any, async_op: bool) -> Any:
        p = Pending(self, reqs, what, finish, keep)
        if async_op:
            return p
        return p.wait()

    def _count(self, *arrays: np.ndarray) -> None:
        self.bytes_sent += sum(int(a.nbytes) for a in arrays)

    # ------------------------------------------------------------------ collectives
    def allreduce(self, a: np.ndarray, op: str = "sum", *, factor: Any = None,
                  async_op: bool = False) -> Any:
        """Reduce ``a`` over every rank, writing the result into ``a`` (in place)."""
        MPI = mpi()
        buf = _wire(a)
        if op == "premul_sum":
            buf = buf * np.asarray(factor, dtype=buf.dtype)  # a fresh array: ``a`` unchanged
        self._count(buf)
        if self.size == 1:
            reqs: list[Any] = []
        else:
            reqs = [self.c.Iallreduce(MPI.IN_PLACE, buf, _mpi_op(MPI, op))]

        def finish() -> np.ndarray:
            out = buf
            if op == "avg":
                out = out / self.size if out.dtype.kind in "fc" else out // self.size
            if out is not a:
                a[...] = out.astype(a.dtype, copy=False) if a.dtype != np.bool_ else out != 0
            return a

        return self._run(reqs, "all_reduce", finish, buf, async_op)

    def broadcast(self, a: np.ndarray, root: int, *, async_op: bool = False) -> Any:
        buf = np.ascontiguousarray(a)
        if self.rank == root:
            self._count(buf)
        reqs = [] if self.size == 1 else [self.c.Ibcast(buf, root=root)]

        def finish() -> np.ndarray:
            if buf is not a:
                a[...] = buf
            return a

        return self._run(reqs, "broadcast", finish, buf, async_op)

    def allgather(self, a: np.ndarray, *, async_op: bool = False) -> Any:
        """Every rank's ``a`` stacked on a new first axis (returned)."""
        send = np.ascontiguousarray(a)
        recv = np.empty((self.size,) + send.shape, send.dtype)
        self._count(send)
        if self.size == 1:
            recv[0] = send
            reqs: list[Any] = []
        else:
            reqs = [self.c.Iallgather(send, recv)]
        return self._run(reqs, "all_gather", lambda: recv, (send, recv), async_op)

    def reduce_scatter(self, chunks: np.ndarray, op: str = "sum", *, factor: Any = None,
                       async_op: bool = False) -> Any:
        """``chunks`` has one block per rank on its first axis; returns this rank's block
        reduced over ranks."""
        MPI = mpi()
        send = _wire(chunks).copy()
        if op == "premul_sum":
            send *= np.asarray(factor, dtype=send.dtype)
        recv = np.empty(send.shape[1:], send.dtype)
        self._count(send)
        if self.size == 1:
            recv[...] = send[0]
            reqs: list[Any] = []
        else:
            reqs = [self.c.Ireduce_scatter_block(send, recv, _mpi_op(MPI, op))]

        def finish() -> np.ndarray:
            out = recv
            if op == "avg":
                out = out / self.size if out.dtype.kind in "fc" else out // self.size
            return np.asarray(out).astype(chunks.dtype, copy=False)

        return self._run(reqs, "reduce_scatter", finish, (send, recv), async_op)

    def reduce(self, a: np.ndarray, root: int, op: str = "sum", *, factor: Any = None,
               async_op: bool = False) -> Any:
        """Reduce onto ``root`` (in place there; other ranks keep their ``a``)."""
        MPI = mpi()
        send = _wire(a).copy()
        if op == "premul_sum":
            send *= np.asarray(factor, dtype=send.dtype)
        recv = np.empty_like(send)
        self._count(send)
        if self.size == 1:
            recv[...] = send
            reqs: list[Any] = []
        else:
            reqs = [self.c.Ireduce(send, recv, _mpi_op(MPI, op), root=root)]

        def finish() -> np.ndarray:
            if self.rank == root:
                out = recv
                if op == "avg":
                    out = out / self.size if out.dtype.kind in "fc" else out // self.size
                a[...] = out.astype(a.dtype, copy=False) if a.dtype != np.bool_ else out != 0
            return a

        return self._run(reqs, "reduce", finish, (send, recv), async_op)

    def gather(self, a: np.ndarray, root: int, *, async_op: bool = False) -> Any:
        """Every rank's ``a`` stacked at ``root`` (None elsewhere)."""
        send = np.ascontiguousarray(a)
        recv = np.empty((self.size,) + send.shape, send.dtype) if self.rank == root else None
        self._count(send)
        if self.size == 1:
            assert recv is not None
            recv[0] = send
            reqs: list[Any] = []
        else:
            reqs = [self.c.Igather(send, recv, root=root)]
        return self._run(reqs, "gather", lambda: recv, (send, recv), async_op)

    def scatter(self, chunks: np.ndarray | None, out: np.ndarray, root: int, *,
                async_op: bool = False) -> Any:
        """Block ``rank`` of ``chunks`` (given at ``root``) into ``out`` on every rank."""
        send = None if chunks is None else np.ascontiguousarray(chunks, dtype=out.dtype)
        recv = np.empty(out.shape, out.dtype)
        if send is not None:
            self._count(send)
        if self.size == 1:
            assert send is not None
            recv[...] = send[0]
            reqs: list[Any] = []
        else:
            reqs = [self.c.Iscatter(send, recv, root=root)]

        def finish() -> np.ndarray:
            out[...] = recv
            return out

        return self._run(reqs, "scatter", finish, (send, recv), async_op)

    def alltoall(self, send: np.ndarray, send_counts: Sequence[int], out: np.ndarray,
                 recv_counts: Sequence[int], *, async_op: bool = False) -> Any:
        """``all_to_all_single``: ``send_counts[i]`` elements to rank i (flat order)."""
        s = np.ascontiguousarray(send).reshape(-1)
        r = np.empty(out.size, out.dtype)
        sd = np.concatenate([[0], np.cumsum(send_counts)[:-1]]).astype(int)
        rd = np.concatenate([[0], np.cumsum(recv_counts)[:-1]]).astype(int)
        self._count(s)
        reqs = [self.c.Ialltoallv([s, (list(send_counts), list(sd))],
                                  [r, (list(recv_counts), list(rd))])]

        def finish() -> np.ndarray:
            out[...] = r.reshape(out.shape)
            return out

        return self._run(reqs, "all_to_all", finish, (s, r), async_op)

    def barrier(self, *, async_op: bool = False, timeout_s: float | None = None) -> Any:
        reqs = [] if self.size == 1 else [self.c.Ibarrier()]
        p = Pending(self, reqs, "barrier")
        if async_op:
            return p
        return p.wait(timeout_s)

    # ------------------------------------------------------------------ point to point
    def send(self, a: np.ndarray, dst: int, tag: int = 0, *, async_op: bool = False) -> Any:
        buf = np.ascontiguousarray(a)
        self._count(buf)
        return self._run([self.c.Isend(buf, dest=dst, tag=tag)], f"send to rank {dst}", None,
                         buf, async_op)

    def recv(self, a: np.ndarray, src: int | None, tag: int = 0, *,
             async_op: bool = False) -> Any:
        """Receive into ``a``; the result is the sender's rank."""
        MPI = mpi()
        buf = np.empty(a.shape, a.dtype)
        req = self.c.Irecv(buf, source=MPI.ANY_SOURCE if src is None else src, tag=tag)
        p: Pending

        def finish() -> int:
            a[...] = buf
            st = p.status[0] if p.status else None
            return int(st.Get_source()) if st is not None and src is None else int(src or 0)

        p = Pending(self, [req], "recv" if src is None else f"recv from rank {src}", finish,
                    buf)
        p._statuses()
        if async_op:
            return p
        return p.wait()

    # ------------------------------------------------------------------ Python objects
    def allgather_bytes(self, data: bytes) -> list[bytes]:
        n = self.allgather(np.array([len(data)], np.int64))[:, 0]
        send = np.frombuffer(data, np.uint8) if data else np.zeros(0, np.uint8)
        recv = np.empty(int(n.sum()), np.uint8)
        displs = np.concatenate([[0], np.cumsum(n)[:-1]]).astype(int)
        if self.size == 1:
            recv[...] = send
        else:
            Pending(self, [self.c.Iallgatherv(send, [recv, (list(map(int, n)), list(displs))])],
                    "all_gather_object", keep=(send, recv)).wait()
        return [recv[d:d + k].tobytes() for d, k in zip(displs, map(int, n))]

    def allgather_object(self, obj: Any) -> list[Any]:
        return [pickle.loads(b) for b in self.allgather_bytes(pickle.dumps(obj))]

    def broadcast_object(self, obj: Any, root: int) -> Any:
        data = pickle.dumps(obj) if self.rank == root else b""
        n = np.array([len(data)], np.int64)
        self.broadcast(n, root)
        buf = np.frombuffer(data, np.uint8).copy() if self.rank == root else \
            np.empty(int(n[0]), np.uint8)
        self.broadcast(buf, root)
        return pickle.loads(buf.tobytes())

    # ------------------------------------------------------------------ groups
    def subgroup(self, ranks: Sequence[int] | None, timeout_s: float | None = None) -> Comm | None:
        """A communicator over ``ranks`` of this one (every rank must call; None for ranks
        outside it)."""
        if ranks is None:
            sub = self.c.Dup()
        else:
            sub = self.c.Create(self.c.Get_group().Incl(list(ranks)))
        MPI = mpi()
        if sub == MPI.COMM_NULL:
            return None
        return Comm(sub, self.timeout_s if timeout_s is None else timeout_s, self.label)

    def free(self) -> None:
        MPI = mpi()
        if self.c not in (MPI.COMM_WORLD, MPI.COMM_SELF, MPI.COMM_NULL):
            try:
                self.c.Free()
            except Exception:  # already freed or MPI finalised: nothing left to release
                pass


_WORLD: Comm | None = None


def default_timeout() -> float:
    """Seconds a wait may take: ``TAPEGRAD_DIST_TIMEOUT`` (``tapegrad.launch --timeout``),
    else PyTorch's default of 30 minutes."""
    return float(os.environ.get("TAPEGRAD_DIST_TIMEOUT", DEFAULT_TIMEOUT_S))


def world(timeout_s: float | None = None) -> Comm:
    """The MPI world (a duplicate of ``COMM_WORLD``, so user MPI code cannot mix with ours)."""
    global _WORLD
    if _WORLD is None:
        MPI = mpi()
        _WORLD = Comm(MPI.COMM_WORLD.Dup(), default_timeout() if timeout_s is None
                      else timeout_s)
    elif timeout_s is not None:
        _WORLD.timeout_s = float(timeout_s)
    return _WORLD


def abort_on_uncaught_exception() -> None:
    """An uncaught exception on one rank aborts the whole MPI job (every rank stops at once)
    instead of leaving the others to wait for it: what ``python -m mpi4py`` does."""
    import sys

    prev = sys.excepthook
    if getattr(prev, "_tapegrad_abort", False):
        return

    def hook(tp: Any, value: Any, tb: Any) -> None:
        prev(tp, value, tb)
        try:
            MPI = mpi()
            if MPI.COMM_WORLD.Get_size() > 1:
                what = "was interrupted" if issubclass(tp, KeyboardInterrupt) else \
                    f"failed with {tp.__name__}"
                sys.stderr.write(f"tapegrad.distributed: rank {MPI.COMM_WORLD.Get_rank()} "
                                 f"{what}; aborting every rank\n")
                sys.stderr.flush()
                # let mpiexec's I/O forwarding pass the traceback on before the abort
                # kills the job (under load it could drop it: the user saw no error)
                import time

                time.sleep(0.2)
                MPI.COMM_WORLD.Abort(1)
        except Exception:  # MPI already gone: the exit code tells the launcher
            pass

    hook._tapegrad_abort = True  # type: ignore[attr-defined]
    sys.excepthook = hook
