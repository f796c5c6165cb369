"""Recycled memory for the convolution kernels' large temporaries.

A fresh NumPy array of a few megabytes is a fresh ``mmap`` from the C allocator, and
the first write to each of its pages is a page fault: for the im2col columns of a small
CNN (W8) that costs more than the copy itself.  :func:`empty` hands out arrays whose
memory is kept in a small pool and reused once nothing refers to it any more (its
reference count says so: every array made from it, views included, refers to it
through ``.base``), so a training loop that makes the same columns every step writes
into memory that is already mapped.

Only arrays of at least :data:`MIN_BYTES` are pooled, at most :data:`PER_SIZE` buffers
per size and :data:`MAX_BYTES` in all; anything beyond that is a plain ``np.empty``.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np

MIN_BYTES = 256 * 1024
PER_SIZE = 4
MAX_BYTES = 64 * 1024 * 1024

_pool: dict[int, list[np.ndarray]] = {}
_held = 0
_lock = threading.Lock()


def _free_count() -> int:
    """The reference count :func:`empty` sees for a buffer nothing else uses (the
    pool's list entry and the loop variable, as this interpreter counts them)."""
    bufs = [np.empty(1, dtype=np.uint8)]
    for b in bufs:
        return sys.getrefcount(b)
    raise AssertionError  # pragma: no cover


_FREE = _free_count()


def empty(shape: tuple[int, ...], dtype: Any, order: str = "C") -> np.ndarray:
    """``np.empty(shape, dtype, order)``, in recycled memory when it is large."""
    global _held
    dt = np.dtype(dtype)
    nbytes = dt.itemsize * math.prod(shape)
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype=dt, order=order)  # type: ignore[call-overload]
    with _lock:
        bufs = _pool.setdefault(nbytes, [])
        for b in bufs:
            if sys.getrefcount(b) <= _FREE:
                return _shaped(b, dt, shape, order)
        if len(bufs) >= PER_SIZE or _held + nbytes > MAX_BYTES:
            return np.empty(shape, dtype=dt, order=order)  # type: ignore[call-overload]
        b = np.empty(nbytes, dtype=np.uint8)
        bufs.append(b)
        _held += nbytes
        return _shaped(b, dt, shape, order)


def _shaped(b: np.ndarray, dt: np.dtype, shape: tuple[int, ...], order: str) -> np.ndarray:
    if order == "F":
        return b.view(dt).reshape(shape[::-1]).T
    return b.view(dt).reshape(shape)


def clear() -> None:
    """Drop the pool (memory still in use stays with its arrays)."""
    global _held
    with _lock:
        _pool.clear()
        _held = 0
