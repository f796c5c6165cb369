"""``tf.sets``: set operations along the last axis (dense or sparse inputs), results as
:class:`~tapegrad.tf.sparse.SparseTensor` with each row's elements sorted, as TensorFlow.

>>> import tapegrad.tf as tf
>>> tf.sparse.to_dense(tf.sets.intersection(tf.constant([[1, 2, 3]]), tf.constant([[3, 1, 7]])))
<tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[1, 3]], dtype=int32)>
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ._ops import _t
from ._tensor import tft
from .sparse import SparseTensor


def _rows(x: Any) -> tuple[tuple[int, ...], dict[tuple[int, ...], set[Any]], np.dtype]:
    """The leading shape and each row's set of values."""
    if isinstance(x, SparseTensor):
        shape = tuple(int(s) for s in x.dense_shape._data)
        rows: dict[tuple[int, ...], set[Any]] = {}
        for idx, v in zip(x.indices._data.tolist(), x.values._data.tolist()):
            rows.setdefault(tuple(idx[:-1]), set()).add(v)
        return shape[:-1], rows, x.values._data.dtype
    a = _t(x)._data
    if a.ndim < 2:
        raise hinted(ValueError(with_hint(f"Shape must be at least rank 2 but is rank {a.ndim}",
                                          "sets are the last axis of a rank >= 2 tensor")))
    lead = a.shape[:-1]
    rows = {tuple(int(i) for i in idx): set(a[idx].tolist()) for idx in np.ndindex(*lead)}
    return lead, rows, a.dtype


def _set_op(a: Any, b: Any, fn: Any) -> SparseTensor:
    la, ra, dt = _rows(a)
    lb, rb, dtb = _rows(b)
    if dt != dtb:
        raise hinted(TypeError(with_hint(f"Unexpected dtypes {dt} and {dtb}", "one dtype")))
    lead = tuple(max(p, q) for p, q in zip(la, lb)) if len(la) == len(lb) else la
    ind: list[list[int]] = []
    vals: list[Any] = []
    width = 0
    for idx in np.ndindex(*lead):
        key = tuple(int(i) for i in idx)
        out = sorted(fn(ra.get(key, set()), rb.get(key, set())))
        width = max(width, len(out))
        for j, v in enumerate(out):
            ind.append(list(key) + [j])
            vals.append(v)
    indices = np.asarray(ind, np.int64).reshape(-1, len(lead) + 1)
    return SparseTensor(indices, tft(np.asarray(vals, dt).reshape(-1)),
                        np.asarray(list(lead) + [width], np.int64))


def intersection(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """The elements of each row of ``a`` that are also in ``b``'s row."""
    return _set_op(a, b, lambda p, q: p & q)


def union(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """The elements in either row."""
    return _set_op(a, b, lambda p, q: p | q)


def difference(a: Any, b: Any, aminusb: bool = True, validate_indices: bool = True) -> SparseTensor:
    """``a - b`` per row (``b - a`` with ``aminusb=False``)."""
    return _set_op(a, b, (lambda p, q: p - q) if aminusb else (lambda p, q: q - p))


def size(a: Any, validate_indices: bool = True) -> Tensor:
    """The number of distinct elements of each row of a sparse ``a`` (int32)."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {str(a)}.")
    lead, rows, _ = _rows(a)
    out = np.zeros(lead, np.int32)
    for key, s in rows.items():
        out[key] = len(s)
    return tft(out)


set_intersection = intersection
set_union = union
set_difference = difference
set_size = size

__all__ = ["intersection", "union", "difference", "size", "set_intersection", "set_union",
           "set_difference", "set_size"]
