"""``tf.distribute``: data-parallel strategies, on MPI (:mod:`tapegrad.comm`).

- ``MultiWorkerMirroredStrategy``: one replica per process of the MPI world (start them
  with ``python -m tapegrad.launch -n 4 train.py`` or ``mpirun -n 4 python train.py``;
  a ``TF_CONFIG``, when set, must agree with the ranks).
- ``MirroredStrategy``: one process, one replica (the CPU).

As in TensorFlow: variables created under ``strategy.scope()`` start from the same value
on every replica (rank 0's), ``strategy.run(step_fn, args)`` runs the step as this
replica, where ``optimizer.apply_gradients`` sums the gradients over replicas (scale the
loss with ``tf.nn.compute_average_loss(per_example_loss, global_batch_size=...)``);
``strategy.reduce`` combines per-replica values; ``experimental_distribute_dataset``
gives each replica its slice of every global batch; Keras ``fit`` under a strategy
averages the gradients and the metrics over replicas.

>>> import tapegrad.tf as tf
>>> strategy = tf.distribute.MirroredStrategy()
>>> strategy.num_replicas_in_sync
1
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ... import comm as _comm
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _nest
from .. import variables as _variables

__all__ = ["MirroredStrategy", "MultiWorkerMirroredStrategy", "OneDeviceStrategy",
           "ReduceOp", "ReplicaContext", "Strategy", "get_replica_context", "get_strategy",
           "has_strategy", "in_cross_replica_context", "experimental", "cluster_resolver",
           "DistributedDataset", "InputContext"]


class ReduceOp(enum.Enum):
    """``tf.distribute.ReduceOp``: how per-replica values combine."""

    SUM = "SUM"
    MEAN = "MEAN"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}: '{self.value}'>"


class _Local(threading.local):
    strategy: Strategy | None = None
    replica: ReplicaContext | None = None
    fit_mean: bool = False


_CTX = _Local()


def _np(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return np.asarray(x._data)
    return np.asarray(x)


def _const(a: np.ndarray) -> Any:
    from .. import constant

    return constant(a)


class ReplicaContext:
    """The replica a ``strategy.run`` step runs as (``replica_id_in_sync_group``)."""

    def __init__(self, strategy: Strategy, replica_id: int) -> None:
        self.strategy = strategy
        self.replica_id_in_sync_group = replica_id
        self.num_replicas_in_sync = strategy.num_replicas_in_sync

    def all_reduce(self, reduce_op: Any, value: Any) -> Any:
        """Combine ``value`` (a nest of tensors) over replicas, from inside the step."""
        return _nest.map_structure(lambda v: self.strategy._allreduce(reduce_op, v), value)


class InputContext:
    """What ``distribute_datasets_from_function``'s function receives."""

    def __init__(self, num_input_pipelines: int, input_pipeline_id: int,
                 num_replicas_in_sync: int) -> None:
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        if global_batch_size % self.num_replicas_in_sync:
            raise hinted(ValueError(with_hint(
                f"The `global_batch_size` {global_batch_size} is not divisible by "
                f"`num_replicas_in_sync` {self.num_replicas_in_sync}",
                "choose a global batch size that is a multiple of the number of replicas")))
        return global_batch_size // self.num_replicas_in_sync


class DistributedDataset:
    """Each element: this replica's contiguous slice of a global batch of the dataset."""

    def __init__(self, strategy: Strategy, dataset: Any) -> None:
        self._strategy = strategy
        self._dataset = dataset

    def __iter__(self) -> Iterator[Any]:
        s = self._strategy
        for element in self._dataset:
            yield s._local_slice(element)

    @property
    def element_spec(self) -> Any:
        return getattr(self._dataset, "element_spec", None)


class Strategy:
    """The base of the strategies: one replica per process of ``self._comm``."""

    def __init__(self, comm: _comm.Comm | None) -> None:
        self._comm = comm
        self.extended = self

    # ------------------------------------------------------------------ facts
    @property
    def num_replicas_in_sync(self) -> int:
        return 1 if self._comm is None else self._comm.size

    @property
    def _rank(self) -> int:
        return 0 if self._comm is None else self._comm.rank

    @property
    def cluster_resolver(self) -> Any:
        return None

    # ------------------------------------------------------------------ scope
    @contextlib.contextmanager
    def scope(self) -> Iterator[Strategy]:
        """Variables created inside start from rank 0's value on every replica; Keras
        models compiled inside train under this strategy."""
        if _CTX.strategy is not None and _CTX.strategy is not self:
            raise hinted(RuntimeError(with_hint(
                "Mixing different tf.distribute.Strategy objects: "
                f"{self!r} is not {_CTX.strategy!r}", "enter one strategy's scope at a time")))
        prev = _CTX.strategy
        _CTX.strategy = self
        hook = self._mirror_variable
        _variables.CREATION_HOOKS.append(hook)
        try:
            yield self
        finally:
            _variables.CREATION_HOOKS.remove(hook)
            _CTX.strategy = prev

    def _mirror_variable(self, v: Any) -> None:
        if self._comm is not None and self._comm.size > 1 and v._data.size:
            buf = np.ascontiguousarray(v._data)
            self._comm.broadcast(buf, 0)
            v._data[...] = buf

    def _broadcast_variables(self, variables: list[Any]) -> None:
        """Rank 0's values of ``variables`` on every rank (one broadcast per dtype)."""
        if self._comm is None or self._comm.size == 1:
            return
        groups: dict[str, list[Any]] = {}
        for v in variables:
            if v._data.size:
                groups.setdefault(v._data.dtype.str, []).append(v)
        for vs in groups.values():
            flat = np.concatenate([np.ravel(v._data) for v in vs])
            self._comm.broadcast(flat, 0)
            off = 0
            for v in vs:
                n = v._data.size
                v._data[...] = flat[off:off + n].reshape(v._data.shape)
                off += n

    # ------------------------------------------------------------------ steps
    def run(self, fn: Callable[..., Any], args: tuple[Any, ...] = (),
            kwargs: dict[str, Any] | None = None, options: Any = None) -> Any:
        """Run ``fn(*args, **kwargs)`` as this process's replica (gradients applied inside
        are summed over replicas); returns its per-replica result."""
        prev_s, prev_r = _CTX.strategy, _CTX.replica
        _CTX.strategy = self
        _CTX.replica = ReplicaContext(self, self._rank)
        try:
            return fn(*args, **(kwargs or {}))
        finally:
            _CTX.strategy, _CTX.replica = prev_s, prev_r

    def reduce(self, reduce_op: Any, value: Any, axis: int | None = None) -> Any:
        """Combine a per-replica ``value`` over replicas (and over ``axis`` if given)."""
        op = _reduce_op(reduce_op)
        def one(v: Any) -> Any:
            a = _np(v)
            count = 1
            if axis is not None:
                count = a.shape[axis]
                a = np.sum(a, axis=axis)
            total = self._sum(a)
            if op is ReduceOp.MEAN:
                n = self._sum(np.array(count, np.int64)) if axis is not None else \
                    self.num_replicas_in_sync
                total = (total / n).astype(a.dtype if a.dtype.kind == "f" else np.float32)
            return _const(np.asarray(total))

        return _nest.map_structure(one, value)

    def _sum(self, a: np.ndarray) -> np.ndarray:
        out = np.array(a, copy=True)
        if self._comm is not None and self._comm.size > 1:
            self._comm.allreduce(out, "sum")
        return out

    def _allreduce(self, reduce_op: Any, v: Any) -> Any:
        op = _reduce_op(reduce_op)
        a = _np(v)
        total = self._sum(a)
        if op is ReduceOp.MEAN:
            total = (total / self.num_replicas_in_sync).astype(a.dtype)
        return _const(total)

    def gather(self, value: Any, axis: int) -> Any:
        """Every replica's ``value`` concatenated along ``axis``."""
        a = _np(value)
        if self._comm is None or self._comm.size == 1:
            return _const(a)
        parts = self._comm.allgather_object(a)
        return _const(np.concatenate(parts, axis=axis))

    def experimental_local_results(self, value: Any) -> tuple[Any, ...]:
        return (value,)

    # ------------------------------------------------------------------ data
    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        """Each replica gets its contiguous share of every (global) batch of ``dataset``."""
        return DistributedDataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn: Callable[[InputContext], Any],
                                          options: Any = None) -> Any:
        """``dataset_fn(input_context)`` builds this replica's own pipeline."""
        ctx = InputContext(self.num_replicas_in_sync, self._rank, self.num_replicas_in_sync)
        return dataset_fn(ctx)

    def _local_slice(self, element: Any) -> Any:
        n = self.num_replicas_in_sync
        if n == 1:
            return element
        r = self._rank

        def cut(t: Any) -> Any:
            if t is None or np.ndim(t._data if isinstance(t, Tensor) else t) == 0:
                return t  # no batch axis (a missing sample weight, a scalar): shared
            size = int(np.shape(t._data if isinstance(t, Tensor) else t)[0])
            per, extra = divmod(size, n)
            start = r * per + min(r, extra)
            stop = start + per + (1 if r < extra else 0)
            return t[start:stop]

        return _nest.map_structure(cut, element)

    # ------------------------------------------------------------------ Keras fit
    def _fit_gradients(self, grads: list[np.ndarray]) -> list[np.ndarray]:
        """The gradients every replica applies: the sum over replicas (in a ``run`` step,
        as TensorFlow's optimizer does), or their mean (inside Keras ``fit``, whose
        loss scaling by ``1 / num_replicas`` amounts to it)."""
        if self._comm is None or self._comm.size == 1 or not grads:
            return grads
        groups: dict[str, list[int]] = {}
        for i, g in enumerate(grads):
            groups.setdefault(g.dtype.str, []).append(i)
        out = list(grads)
        mean = _CTX.fit_mean
        for idx in groups.values():
            flat = np.concatenate([np.ravel(grads[i]) for i in idx])
            self._comm.allreduce(flat, "sum")
            if mean:
                flat /= flat.dtype.type(self._comm.size)
            off = 0
            for i in idx:
                k = grads[i].size
                out[i] = flat[off:off + k].reshape(grads[i].shape)
                off += k
        return out

    def _keras_train_step(self, model: Any, batch: Any, first: bool) -> Any:
        """One ``fit`` step as this replica: its slice of the global batch, gradients
        averaged over replicas, logs from the metrics summed over replicas."""
        local = self._local_slice(batch)
        if first and self._comm is not None and self._comm.size > 1:
            if not model.weights:
                from ..keras.training import call_with_training, unpack_x_y_sample_weight

                call_with_training(model, unpack_x_y_sample_weight(local)[0], False)
            self._broadcast_variables(list(model.weights))
        with _keras_fit(self):
            model.train_step(local)
        return self._sync_metrics(model)

    def _sync_metrics(self, model: Any) -> Any:
        """Keras's logs with every metric's state summed over replicas (what reading a
        sync-on-read metric variable under a strategy gives)."""
        if self._comm is None or self._comm.size == 1:
            return model.get_metrics_result()
        vs = [v for m in model.metrics for v in m.variables]
        saved = [np.array(v._data, copy=True) for v in vs]
        try:
            for v, a in zip(vs, saved):
                total = self._sum(a)
                v._data[...] = total
            return {k: _const(_np(x)) for k, x in model.get_metrics_result().items()}
        finally:
            for v, a in zip(vs, saved):
                v._data[...] = a

    def __repr__(self) -> str:
        return f"<tensorflow.python.distribute.{type(self).__name__} object at {id(self):#x}>"


def _reduce_op(op: Any) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ("SUM", "MEAN"):
        return ReduceOp[op.upper()]
    raise hinted(ValueError(with_hint(
        f"Unsupported reduce op: {op!r}", "use tf.distribute.ReduceOp.SUM or .MEAN")))


class MirroredStrategy(Strategy):
    """Synchronous training on the devices of one process: here, one replica (the CPU)."""

    def __init__(self, devices: Any = None, cross_device_ops: Any = None) -> None:
        super().__init__(None)
        self._devices = tuple(devices) if devices else ("/job:localhost/replica:0/task:0/"
                                                       "device:CPU:0",)


class OneDeviceStrategy(Strategy):
    """Everything on one device (``tf.distribute.OneDeviceStrategy("/cpu:0")``)."""

    def __init__(self, device: str) -> None:
        super().__init__(None)
        self._device = device


class _DefaultStrategy(Strategy):
    def __init__(self) -> None:
        super().__init__(None)


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous training over the workers of the MPI world: one replica per process.

    ``TF_CONFIG`` (``{"cluster": {"worker": [...]}, "task": {"type": "worker",
    "index": i}}``), when set, must name as many workers as there are ranks and this
    rank's index.
    """

    def __init__(self, cluster_resolver: Any = None, communication_options: Any = None) -> None:
        world = _comm.world()
        cfg = os.environ.get("TF_CONFIG")
        if cfg:
            _check_tf_config(json.loads(cfg), world.rank, world.size)
        super().__init__(world.subgroup(None))
        _comm.abort_on_uncaught_exception()

    @property
    def cluster_resolver(self) -> Any:
        return cluster_resolver.TFConfigClusterResolver()


def _check_tf_config(spec: dict[str, Any], rank: int, size: int) -> None:
    """The cluster of ``TF_CONFIG`` must be the MPI world: chief (if any) is rank 0, then
    the workers in order."""
    cluster = spec.get("cluster", {})
    chiefs = list(cluster.get("chief", []))
    workers = list(cluster.get("worker", []))
    task = spec.get("task", {})
    kind = task.get("type", "worker")
    index = int(task.get("index", 0))
    expected = index if kind == "chief" else index + len(chiefs)
    if len(chiefs) + len(workers) != size or kind not in ("chief", "worker") or \
            expected != rank:
        raise hinted(ValueError(with_hint(
            f"TF_CONFIG describes {len(chiefs) + len(workers)} tasks and this task as "
            f"{kind} {index}, but this process is rank {rank} of an MPI world of {size}",
            "start one process per worker with python -m tapegrad.launch -n N (or leave "
            "TF_CONFIG unset: the MPI ranks are the workers)")))


_DEFAULT = _DefaultStrategy()


def get_strategy() -> Strategy:
    """The strategy whose scope (or ``run``) is active, else the default one."""
    return _CTX.strategy if _CTX.strategy is not None else _DEFAULT


def has_strategy() -> bool:
    return _CTX.strategy is not None


def in_cross_replica_context() -> bool:
    return _CTX.strategy is not None and _CTX.replica is None


def get_replica_context() -> ReplicaContext | None:
    if _CTX.replica is not None:
        return _CTX.replica
    if _CTX.strategy is None:
        return ReplicaContext(_DEFAULT, 0)
    return None


def gradient_reduction() -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
    """What ``apply_gradients`` does to the gradients first: the active strategy's
    all-reduce inside ``strategy.run`` or Keras ``fit`` under a strategy, else nothing."""
    s = _CTX.strategy
    if s is None or s._comm is None or s._comm.size == 1:
        return None
    if _CTX.replica is None and not _CTX.fit_mean:
        return None
    return s._fit_gradients


@contextlib.contextmanager
def _keras_fit(strategy: Strategy) -> Iterator[None]:
    """Inside Keras ``fit``'s steps under ``strategy``: gradients are averaged."""
    prev = (_CTX.strategy, _CTX.replica, _CTX.fit_mean)
    _CTX.strategy, _CTX.replica, _CTX.fit_mean = strategy, None, True
    try:
        yield
    finally:
        _CTX.strategy, _CTX.replica, _CTX.fit_mean = prev


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None,
                         global_batch_size: int | None = None) -> Any:
    """``tf.nn.compute_average_loss``: the sum of the per-example losses divided by the
    global batch size (by default this replica's batch times the number of replicas)."""
    from .. import constant

    a = per_example_loss
    if sample_weight is not None:
        a = a * sample_weight
    from .. import cast, reduce_sum

    total = reduce_sum(a)
    if global_batch_size is None:
        n = int(np.shape(_np(per_example_loss))[0]) if _np(per_example_loss).ndim else 1
        global_batch_size = n * get_strategy().num_replicas_in_sync
    return total / cast(constant(global_batch_size), total.dtype)


class _Experimental:
    """``tf.distribute.experimental``: the communication options (accepted)."""

    class CommunicationImplementation(enum.Enum):
        AUTO = "AUTO"
        RING = "RING"
        NCCL = "NCCL"

    class CommunicationOptions:
        def __init__(self, bytes_per_pack: int = 0, timeout_seconds: float | None = None,
                     implementation: Any = None) -> None:
            self.bytes_per_pack = bytes_per_pack
            self.timeout_seconds = timeout_seconds
            self.implementation = implementation

    MultiWorkerMirroredStrategy = MultiWorkerMirroredStrategy


experimental = _Experimental()


class _ClusterResolvers:
    class TFConfigClusterResolver:
        """The cluster as ``TF_CONFIG`` describes it (or the MPI world)."""

        def __init__(self) -> None:
            spec = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
            r, n = _comm.world_rank_size()
            self.task_type = spec.get("task", {}).get("type", "worker")
            self.task_id = int(spec.get("task", {}).get("index", r))
            self._cluster = spec.get("cluster", {"worker": [f"localhost:{i}" for i in range(n)]})

        def cluster_spec(self) -> Any:
            return self._cluster

        def num_accelerators(self, *args: Any, **kwargs: Any) -> dict[str, int]:
            return {}


cluster_resolver = _ClusterResolvers()
