"""Worker processes of the ``DataLoader``: the loop each worker runs, its seeds, and
``get_worker_info``.

Each worker ``i`` seeds Python's ``random`` and tapegrad's torch generator with
``base_seed + i`` and NumPy's global generator with PyTorch's
``_generate_state(base_seed, i)``, as PyTorch's workers do.
"""

from __future__ import annotations

import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info"]

MP_STATUS_CHECK_INTERVAL = 5.0


@dataclass
class WorkerInfo:
    """What a worker knows about itself (``torch.utils.data.get_worker_info()``).

    Attributes
    ----------
    id : int
        The worker's index, ``0 .. num_workers - 1``.
    num_workers : int
        How many workers the loader started.
    seed : int
        The seed of this worker's generators (``base_seed + id``).
    dataset : Dataset
        This process's copy of the dataset.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any
    worker_method: str = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the current worker process; ``None`` in the main process.

    >>> from tapegrad.torch.utils.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return _worker_info


class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an ``IterableDataset`` is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch."""


class _KeyErrorMessage(str):
    """A message that a ``KeyError`` prints as it is (not as its repr)."""

    def __repr__(self) -> str:
        return str(self)


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, re-raised in the main
    process with PyTorch's wording (``Caught ValueError in DataLoader worker process 0.``)."""

    def __init__(self, exc_info: Any, where: str) -> None:
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError prints its message with repr(): keep it readable, as PyTorch does
            raise KeyError(_KeyErrorMessage(msg))
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """PyTorch's NumPy seed for a worker (a SeedSequence-like hash of the base seed and id)."""
    init_a, mult_a = 0x43B0D7E5, 0x931E8875
    init_b, mult_b = 0x8B51F9DD, 0x58F38DED
    mix_l, mix_r = 0xCA01F9DD, 0x4973F715
    xshift, mask = 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    hash_a = init_a

    def hash_(value: int) -> int:
        nonlocal hash_a
        value = (value ^ hash_a) & mask
        hash_a = (hash_a * mult_a) & mask
        value = (value * hash_a) & mask
        return (value ^ (value >> xshift)) & mask

    def mix(x: int, y: int) -> int:
        r = (((mix_l * x) & mask) - ((mix_r * y) & mask)) & mask
        return (r ^ (r >> xshift)) & mask

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_b = init_b
    state = []
    for v in pool:
        v = (v ^ hash_b) & mask
        hash_b = (hash_b * mult_b) & mask
        v = (v * hash_b) & mask
        state.append((v ^ (v >> xshift)) & mask)
    return state


def _worker_loop(dataset_kind: str, dataset: Any, index_queue: Any, data_queue: Any,
                 done_event: Any, auto_collation: bool, collate_fn: Any, drop_last: bool,
                 base_seed: int, init_fn: Any, worker_id: int, num_workers: int,
                 persistent_workers: bool) -> None:
    """The body of one worker process: fetch the batches named on ``index_queue`` and put
    ``(task index, batch)`` on ``data_queue`` until told to stop (``None``)."""
    global _worker_info
    from ... import _random
    from .dataloader import _create_fetcher

    try:
        seed = base_seed + worker_id
        random.seed(seed)
        _random.manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                      drop_last)
        except Exception:
            init_exception = ExceptionWrapper(sys.exc_info(),
                                              f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                          drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            data: Any
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == "iterable":
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(sys.exc_info(),
                                                f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
