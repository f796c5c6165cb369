"""``tf.sparse`` basics: :class:`SparseTensor` (COO ``indices``/``values``/``dense_shape``)
and ``to_dense``, ``from_dense``, ``sparse_dense_matmul``, ``reduce_sum``, ``add``,
``reorder``, ``retain``, ``slice``.

Values are ordinary tensors, so gradients reach them through the scatters and gathers
these functions are made of (``to_dense`` scatters the values, ``sparse_dense_matmul``
gathers rows of the dense operand and scatter-adds the products); indices and shapes
are int64 and carry no gradient, as in TensorFlow.

>>> import tapegrad.tf as tf
>>> st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[2, 3])
>>> tf.sparse.to_dense(st)
<tf.Tensor: shape=(2, 3), dtype=float32, numpy=
array([[1., 0., 0.],
       [0., 0., 2.]], dtype=float32)>
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops.shape import index_add
from ._ops import _invalid, _t
from ._ops import reduce_sum as _reduce_sum
from ._tensor import TensorShape, tft


class SparseTensor:
    """A sparse tensor: ``values[i]`` at ``indices[i]`` of a ``dense_shape`` tensor."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        ind = np.asarray(indices._data if isinstance(indices, Tensor) else indices, np.int64)
        if ind.ndim == 1 and ind.size == 0:
            ind = ind.reshape(0, len(np.asarray(_vals(dense_shape)).reshape(-1)))
        vals = _t(values)
        shp = np.asarray(_vals(dense_shape), np.int64).reshape(-1)
        if ind.ndim != 2 or vals._data.ndim != 1 or ind.shape[0] != vals._data.shape[0]:
            raise hinted(ValueError(with_hint(
                f"Dimensions {ind.shape[0] if ind.ndim else '?'} and "
                f"{vals._data.shape[0] if vals._data.ndim else '?'} are not compatible",
                "one value per row of indices")))
        if ind.shape[1] != shp.size:
            raise hinted(ValueError(with_hint(
                f"Dimensions {ind.shape[1]} and {shp.size} are not compatible",
                "each index has one entry per dimension of dense_shape")))
        self.indices = tft(ind)
        self.values = vals
        self.dense_shape = tft(shp)

    @property
    def shape(self) -> TensorShape:
        return TensorShape([int(s) for s in self.dense_shape._data])

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    def with_values(self, new_values: Any) -> SparseTensor:
        """The same indices and shape with other values."""
        return SparseTensor(self.indices, new_values, self.dense_shape)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={str(self.indices)}, values={str(self.values)}, "
                f"dense_shape={str(self.dense_shape)})")

    __str__ = __repr__


class SparseTensorSpec:
    """The type of a :class:`SparseTensor` (``tf.SparseTensorSpec``): its dense shape
    and dtype, as ``tf.data``'s ``element_spec`` shows it."""

    def __init__(self, shape: Any = None, dtype: Any = None) -> None:
        from . import dtypes as _dtypes

        self.shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        self.dtype = _dtypes.float32 if dtype is None else _dtypes.as_dtype(dtype)

    @property
    def value_type(self) -> type:
        return SparseTensor

    @classmethod
    def from_value(cls, value: SparseTensor) -> SparseTensorSpec:
        return cls(value.shape, value.dtype)

    def is_compatible_with(self, other: Any) -> bool:
        o = other if isinstance(other, SparseTensorSpec) else SparseTensorSpec.from_value(other)
        return self.dtype == o.dtype and self.shape.is_compatible_with(o.shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparseTensorSpec) and self.dtype == other.dtype \
            and self.shape.as_list() == other.shape.as_list()

    def __hash__(self) -> int:
        return hash((self.dtype, str(self.shape)))

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self.shape!r}, {self.dtype!r})"


def _vals(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _sp(x: Any, what: str = "sp_input") -> SparseTensor:
    if not isinstance(x, SparseTensor):
        raise hinted(TypeError(with_hint("Input must be a SparseTensor.",
                                         f"{what} must be a tf.sparse.SparseTensor")))
    return x


def _shape(sp: SparseTensor) -> tuple[int, ...]:
    return tuple(int(s) for s in sp.dense_shape._data)


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True,
             name: str | None = None) -> Tensor:
    """The dense tensor (``default_value``, 0 by default, where no value is given)."""
    sp = _sp(sp_input)
    ind = sp.indices._data
    shape = _shape(sp)
    shp_txt = "[" + ",".join(str(s) for s in shape) + "]"
    for i, row in enumerate(ind):
        if np.any(row < 0) or np.any(row >= np.asarray(shape)):
            raise _invalid(f"indices[{i}] = [{','.join(str(int(v)) for v in row)}] is out of "
                           f"bounds: need 0 <= index < {shp_txt}", "indices must lie inside "
                           "dense_shape", "SparseToDense")
        if validate_indices and i and tuple(row) <= tuple(ind[i - 1]):
            kind = "repeated" if tuple(row) == tuple(ind[i - 1]) else "out of order"
            raise _invalid(f"indices[{i}] = [{','.join(str(int(v)) for v in row)}] is {kind}. "
                           "Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` "
                           "to create a correctly ordered copy.\n\n", "sort with tf.sparse.reorder",
                           "SparseToDense")
    v = sp.values
    dense = index_add(v, tuple(ind[:, k] for k in range(ind.shape[1])), shape)
    if default_value is not None and float(np.asarray(_vals(default_value))) != 0:
        mask = np.ones(shape, bool)
        mask[tuple(ind[:, k] for k in range(ind.shape[1]))] = False
        fill = np.where(mask, np.asarray(_vals(default_value), v._data.dtype), 0).astype(
            v._data.dtype)
        dense = ops.add(dense, tft(fill))
    return dense


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The non-zero entries of ``tensor`` (row-major order)."""
    t = _t(tensor)
    ind = np.argwhere(t._data != 0).astype(np.int64)
    vals = ops.getitem(t, tuple(ind[:, k] for k in range(ind.shape[1]))) if t._data.ndim \
        else ops.reshape(t, (-1,))[: int(ind.shape[0])]
    return SparseTensor(ind, vals, np.asarray(t._data.shape, np.int64))


def sparse_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: str | None = None) -> Tensor:
    """``sp_a @ b`` for a 2-D sparse ``sp_a`` and dense ``b`` (either may be the sparse one).

    >>> import tapegrad.tf as tf
    >>> st = tf.sparse.SparseTensor([[0, 1]], [2.0], [2, 2])
    >>> tf.sparse.sparse_dense_matmul(st, tf.ones([2, 1]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[2.],
           [0.]], dtype=float32)>
    """
    if not isinstance(sp_a, SparseTensor) and isinstance(b, SparseTensor):
        # A' S' = (S'^T A'^T)^T with A' = a or a^H, S' = S or S^H (real values)
        a = _t(sp_a)
        if adjoint_a:
            if a._data.dtype.kind == "c":
                from ..ops.complex import conj

                a = conj(a)
        else:
            a = ops.transpose(a, (1, 0))
        out = sparse_dense_matmul(b, a, adjoint_a=not adjoint_b)
        return ops.transpose(out, (1, 0))
    sp = _sp(sp_a, "sp_a")
    bt = _t(b)
    if adjoint_b:
        bt = ops.transpose(bt, (1, 0))
    vals = sp.values
    if bt._data.dtype != vals._data.dtype:
        from . import dtypes as _dt

        raise _invalid(f"cannot compute SparseTensorDenseMatMul as input #3(zero-based) was "
                       f"expected to be a {_dt.kernel_name(vals._data.dtype)} tensor but is a "
                       f"{_dt.kernel_name(bt._data.dtype)} tensor",
                       "values and b need one dtype", "SparseTensorDenseMatMul")
    rows, cols = sp.indices._data[:, 0], sp.indices._data[:, 1]
    m, k = _shape(sp)
    if adjoint_a:
        rows, cols, m, k = cols, rows, k, m
    if bt._data.shape[0] != k:
        raise _invalid(f"Cannot multiply A and B because inner dimension does not match: {k} vs. "
                       f"{bt._data.shape[0]}.  Did you forget a transpose?  Dimensions of A: "
                       f"[{m}, {k}).  Dimensions of B: {list(bt._data.shape)}",
                       "the inner dimensions must agree", "SparseTensorDenseMatMul")
    prod = ops.multiply(ops.expand_dims(vals, 1), ops.take(bt, cols, axis=0))
    return index_add(prod, (rows,), (m, bt._data.shape[1]))


def reduce_sum(sp_input: Any, axis: Any = None, keepdims: Any = None,
               output_is_sparse: bool = False, name: str | None = None) -> Any:
    """The sum over ``axis`` of the dense tensor (sparse again with ``output_is_sparse``)."""
    dense = to_dense(sp_input, validate_indices=False)
    out = _reduce_sum(dense, axis=axis, keepdims=bool(keepdims))
    return from_dense(out) if output_is_sparse else out


def reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """The same sparse tensor with its indices in row-major order."""
    sp = _sp(sp_input)
    ind = sp.indices._data
    order = np.lexsort(ind.T[::-1]) if ind.size else np.arange(ind.shape[0])
    return SparseTensor(ind[order], ops.take(sp.values, order, axis=0), sp.dense_shape)


def retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries where ``to_retain`` (one bool per value) is True."""
    sp = _sp(sp_input)
    keep = np.asarray(_vals(to_retain), bool).reshape(-1)
    if keep.size != sp.values._data.shape[0]:
        raise hinted(ValueError(with_hint(
            f"Shapes {(sp.values._data.shape[0],)} and {keep.shape} are incompatible",
            "one flag per value")))
    pos = np.nonzero(keep)[0]
    return SparseTensor(sp.indices._data[pos], ops.take(sp.values, pos, axis=0), sp.dense_shape)


def add(a: Any, b: Any, threshold: Any = 0) -> Any:
    """Sparse + sparse (sparse; entries with ``|sum| < threshold`` dropped) or sparse +
    dense (dense)."""
    if not isinstance(a, SparseTensor):
        a, b = b, a
    sp = _sp(a, "a")
    if not isinstance(b, SparseTensor):
        return ops.add(to_dense(sp, validate_indices=False), _t(b))
    if _shape(sp) != _shape(b):
        raise _invalid(f"Operands do not have the same ranks; got shapes: "
                       f"{list(_shape(sp))} and {list(_shape(b))}", "add sparse tensors of one "
                       "shape", "SparseAdd")
    shape = _shape(sp)
    both = np.concatenate([sp.indices._data, b.indices._data])
    flat = np.ravel_multi_index(tuple(both.T), shape) if both.size else np.zeros(0, np.int64)
    uniq, inv = np.unique(flat, return_inverse=True)
    vals = ops.concatenate([sp.values, b.values], axis=0)
    summed = index_add(vals, (inv.reshape(-1),), (uniq.size,))
    ind = np.stack(np.unravel_index(uniq, shape), 1).astype(np.int64) if uniq.size else \
        np.zeros((0, len(shape)), np.int64)
    out = SparseTensor(ind, summed, sp.dense_shape)
    thr = float(np.asarray(_vals(threshold)))
    if thr > 0:
        out = retain(out, np.abs(summed._data) >= thr)
    return out


def slice(sp_input: Any, start: Any, size: Any, name: str | None = None) -> SparseTensor:  # noqa: A001
    """The entries inside the box ``[start, start + size)``, re-indexed from ``start``."""
    sp = _sp(sp_input)
    st = np.asarray(_vals(start), np.int64).reshape(-1)
    sz = np.asarray(_vals(size), np.int64).reshape(-1)
    shape = np.asarray(_shape(sp), np.int64)
    end = np.minimum(st + sz, shape)
    ind = sp.indices._data
    inside = np.all((ind >= st) & (ind < end), axis=1) if ind.size else np.zeros(0, bool)
    pos = np.nonzero(inside)[0]
    return SparseTensor(ind[pos] - st, ops.take(sp.values, pos, axis=0),
                        np.maximum(end - st, 0))


__all__ = ["SparseTensor", "to_dense", "from_dense", "sparse_dense_matmul", "reduce_sum",
           "reorder", "retain", "add", "slice"]

