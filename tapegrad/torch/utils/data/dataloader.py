"""``torch.utils.data.DataLoader``: batches from a dataset, in the main process or in
real worker processes.

The loader draws as PyTorch draws: each iterator first takes a 64-bit base
seed from ``generator`` (the default generator when ``None``), then
``RandomSampler`` takes one more to seed its own generator; so after
``torch.manual_seed(s)`` a shuffled loader yields PyTorch's order.  With
``num_workers > 0`` batch ``k`` is fetched by worker ``k % num_workers`` in a
separate process (``multiprocessing``; the default start method unless
``multiprocessing_context`` says otherwise) and batches come back in sampler
order.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(5.0), torch.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ...._core.errors import hinted, with_hint
from ...._core.tensor import TORCH, make
from ...autograd.profiler import record_function
from ._collate import default_collate, default_convert
from ._worker import (
    MP_STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
)
from .dataset import IterableDataset, Subset, TensorDataset, torch_repr
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, random_int64

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler of an ``IterableDataset``: ``None`` forever (the dataset decides)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _tensor_source(dataset: Any) -> tuple[TensorDataset, Any] | None:
    """``(tensor_dataset, index_map)`` when ``dataset`` is a plain ``TensorDataset``, or
    plain ``Subset`` s of one, whose tensors do not require grad; else ``None``."""
    maps = []
    while type(dataset) is Subset:
        maps.append(dataset.indices)
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or any(t._rg for t in dataset.tensors):
        return None
    try:  # the index maps as arrays once per iterator (each epoch sees the current ones)
        return dataset, [np.asarray(m, dtype=np.int64) for m in maps]
    except (TypeError, ValueError):
        return None


class _MapDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        # default_collate of TensorDataset samples is one row-gather per tensor: do it
        # in one NumPy take instead of one index op per sample (same values and dtypes)
        # for a TensorDataset, or Subsets of one (random_split), holding plain tensors
        self._fast = _tensor_source(dataset) if (
            auto_collation and collate_fn is default_collate) else None

    def _fast_fetch(self, index: Any) -> Any:
        assert self._fast is not None
        ds, maps = self._fast
        idx = np.asarray(index, dtype=np.int64)
        for m in maps:
            idx = m[idx]
        return [make(np.take(t._data, idx, axis=0), None, False, TORCH) for t in ds.tensors]

    def fetch(self, index: Any) -> Any:
        if self._fast is not None and len(index) > 0:
            try:
                return self._fast_fetch(index)
            except (IndexError, TypeError, ValueError):
                pass  # the per-sample path below raises the error PyTorch raises
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _create_fetcher(kind: str, dataset: Any, auto_collation: bool,
                    collate_fn: Callable[..., Any], drop_last: bool) -> Any:
    cls = _MapDatasetFetcher if kind == "map" else _IterableDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


class DataLoader:
    """Iterate over a dataset in batches.

    Parameters
    ----------
    dataset : Dataset or IterableDataset
        Where the samples come from (any object with ``__getitem__``/``__len__``, or an
        ``IterableDataset``).
    batch_size : int or None
        Samples per batch (``None``: no batching, samples converted one by one).
    shuffle : bool
        A new random order each epoch (``RandomSampler``).
    sampler, batch_sampler : Sampler or iterable, optional
        Custom index order (mutually exclusive with ``shuffle``) or custom batches
        (mutually exclusive with ``batch_size``, ``shuffle``, ``sampler``, ``drop_last``).
    num_workers : int
        ``0``: load in the main process; ``n > 0``: ``n`` worker processes.
    collate_fn : callable, optional
        Turns a list of samples into a batch (default :func:`default_collate`).
    pin_memory : bool
        Accepted; there is no accelerator, so it warns as PyTorch does and does nothing.
    drop_last : bool
        Drop the last, incomplete batch.
    timeout : float
        Seconds to wait for a batch from the workers (0: no limit).
    worker_init_fn : callable, optional
        Called as ``worker_init_fn(worker_id)`` in each worker after seeding.
    multiprocessing_context : str or context, optional
        Start method (``"fork"``, ``"spawn"``, ``"forkserver"``) or a context.
    generator : torch.Generator, optional
        Source of the base seed and of ``RandomSampler``'s order.
    prefetch_factor : int, optional
        Batches loaded in advance per worker (default 2 with workers).
    persistent_workers : bool
        Keep the workers alive between epochs.
    in_order : bool
        ``False``: with workers, hand out each batch as soon as it is ready (the order
        then depends on the workers' timing).

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> from tapegrad.torch.utils.data import DataLoader
    >>> _ = torch.manual_seed(0)
    >>> [b.tolist() for b in DataLoader(range(6), batch_size=4, shuffle=True)]
    [[0, 4, 3, 5], [2, 1]]
    """

    _initialized = False
    __repr__ = torch_repr

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler[Any] | Iterable[Any] | None = None,
                 batch_sampler: Sampler[Any] | Iterable[Any] | None = None,
                 num_workers: int = 0, collate_fn: Callable[..., Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None
        self._iterator: _BaseDataLoaderIter | None = None
        self._initialized = True

    @property
    def multiprocessing_context(self) -> Any:
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx: Any) -> None:
        if ctx is not None:
            if self.num_workers > 0:
                if isinstance(ctx, str):
                    valid = multiprocessing.get_all_start_methods()
                    if ctx not in valid:
                        raise ValueError("multiprocessing_context option should specify a valid "
                                         f"start method in {valid!r}, but got "
                                         f"multiprocessing_context={ctx!r}")
                    ctx = multiprocessing.get_context(ctx)
                if not isinstance(ctx, multiprocessing.context.BaseContext):
                    raise TypeError("multiprocessing_context option should be a valid context "
                                    "object or a string specifying the start method, but got "
                                    f"multiprocessing_context={ctx}")
            else:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
        self._mp_context = ctx

    def __setattr__(self, attr: str, val: Any) -> None:
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                          "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            self._IterableDataset_len_called = length
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn, as PyTorch does, when more workers are asked for than there are CPUs."""
        cpus: int | None
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not on Linux
            cpus = os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            suggest = (f"Our suggested max number of worker in current system is {cpus}, which "
                       "is smaller than what this DataLoader is going to create."
                       if cpus is not None else
                       "DataLoader is not able to compute a suggested max number of worker in "
                       "current system.")
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. {suggest} Please be aware that excessive worker creation "
                          "might get DataLoader running slow or even freeze, lower the worker "
                          "number to avoid potential slowness/freeze if necessary.",
                          stacklevel=3)


class _BaseDataLoaderIter:
    __repr__ = torch_repr

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter: Iterator[Any] = iter(self._index_sampler)
        # the base seed is drawn before the sampler's own draw (its body runs on first next)
        self._base_seed = random_int64(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        # the profiler sees each batch as PyTorch names it
        with record_function(f"enumerate(DataLoader)#{type(self).__name__}.__next__"):
            data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == "iterable" and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _create_fetcher(self._dataset_kind, self._dataset,
                                        self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        index = self._next_index()
        return self._fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes fed round-robin through one index queue each; results come back
    on one queue and are handed out in sampler order."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = int(loader.prefetch_factor or 2)
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or multiprocessing
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        self._shutdown = False
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(target=_worker_loop,
                            args=(self._dataset_kind, self._dataset, iq,
                                  self._worker_result_queue, self._workers_done_event,
                                  self._auto_collation, self._collate_fn, self._drop_last,
                                  self._base_seed, loader.worker_init_fn, i, self._num_workers,
                                  self._persistent_workers))
            w.daemon = True
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for iq in self._index_queues:
                iq.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                r, _ = self._get_data()
                if isinstance(r, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float) -> tuple[bool, Any]:
        try:
            return True, self._worker_result_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for w in self._workers if not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise hinted(RuntimeError(with_hint(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly",
                    "a worker process died (out of memory, or killed); try num_workers=0 "
                    "to see the error in the main process"))) from None
            return False, None

    def _get_data(self) -> Any:
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    # in_order=False: hand out a batch as soon as it arrives
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order:
                    break
                # in_order=False: give the work to a worker with spare capacity
                if self._workers_num_tasks[worker_queue_idx] < max_tasks // sum(
                        self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for iq in self._index_queues:
                try:
                    iq.put(None)
                except (OSError, ValueError):  # pragma: no cover - queue already closed
                    pass
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
                if w.is_alive():
                    w.terminate()
            for iq in self._index_queues:
                iq.cancel_join_thread()
                iq.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()
