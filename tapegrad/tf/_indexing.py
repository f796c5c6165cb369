"""TensorFlow's indexing rules, sliced variable assignment and scatter updates.

- ``t[...]`` on a TensorFlow-style tensor follows ``tf.Tensor.__getitem__``
  (TensorFlow's strided slice): integers, slices, ``...``, ``tf.newaxis``
  and scalar integer tensors; a list is read like a tuple (``t[[0, 2]]`` is
  ``t[0, 2]``); a boolean tensor or array is a mask (``tf.boolean_mask``);
  anything else is TensorFlow's ``TypeError``, and an integer out of range
  its ``InvalidArgumentError``.
- ``v[idx]`` on a ``tf.Variable`` is the read slice with an ``assign``
  method (TensorFlow's ``ResourceStridedSliceAssign``): ``v[1, 2].assign(9)``,
  ``v[:, 0].assign(...)``.  As in TensorFlow the slice has ``assign`` only.
- ``tf.tensor_scatter_nd_update`` / ``_add`` / ``_sub`` / ``_max`` / ``_min``,
  ``tf.scatter_nd`` and the variable methods ``scatter_nd_update`` /
  ``_add`` / ``_sub`` / ``_max`` / ``_min``, ``scatter_update`` /
  ``scatter_add`` / ... (with :class:`IndexedSlices`), ``sparse_read`` and
  ``gather_nd``.
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor
from ..ops.scatter import scatter_extreme
from ..ops.shape import _has_tracer
from . import dtypes as _dt
from ._tensor import VariableBase, convert, convert_like, read, tft
from .errors import InvalidArgumentError, kernel_message

_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")


def _invalid(msg: str, hint: str, op: str, name: str = "") -> InvalidArgumentError:
    # a kernel's error: eager TensorFlow's "{{function_node ...}}" prefix and op suffix
    return hinted(InvalidArgumentError(None, None, with_hint(kernel_message(msg, op, name), hint)))


# ============================================================================ reading
def _scalar_index(s: Any) -> Any:
    """An integer index as TensorFlow's ``_check_index`` accepts it (else its TypeError)."""
    if isinstance(s, numbers.Integral):
        return int(s)
    if isinstance(s, (Tensor, np.ndarray, np.generic)):
        arr = s._data if isinstance(s, Tensor) else np.asarray(s)
        if arr.dtype in (np.int32, np.int64) and arr.ndim == 0:
            return int(arr)
    shown = repr(s)
    raise hinted(TypeError(with_hint(f"{_SLICE_TYPE_ERROR}, got {shown}",
                              "use tf.gather / tf.gather_nd to index with a list or array")))


def _slice_part(v: Any) -> Any:
    return None if v is None else _scalar_index(v)


def tf_index(shape: tuple[int, ...], key: Any, op: str = "StridedSlice") -> Any:
    """``key`` checked and normalised as TensorFlow's strided slice reads it.

    Returns ``("mask", array)`` for a boolean mask, else a tuple of basic
    NumPy indices with every integer in range.
    """
    if isinstance(key, bool) or (isinstance(key, (Tensor, np.ndarray)) and (
            key._data if isinstance(key, Tensor) else key).dtype == np.bool_):
        mask = key._data if isinstance(key, Tensor) else np.asarray(key)  # keeps a trace's mark
        if mask.ndim == 0:
            raise hinted(ValueError(with_hint("mask cannot be scalar.",
                                       "a boolean mask needs at least one dimension")))
        return ("mask", mask)
    spec = list(key) if isinstance(key, (list, tuple)) else [key]
    out: list[Any] = []
    dim = 0
    n_real = builtins.sum(1 for s in spec if s is not None and s is not Ellipsis)
    for pos, s in enumerate(spec):
        if s is Ellipsis:
            out.append(Ellipsis)
            dim = len(shape) - (n_real - builtins.sum(
                1 for t in spec[:pos] if t is not None and t is not Ellipsis))
            continue
        if s is None:
            out.append(None)
            continue
        if isinstance(s, slice):
            st = _slice_part(s.step)
            if st == 0:
                raise _invalid(f"strides[{pos}] must be non-zero", "a slice step is never 0",
                               op, "strided_slice/")
            out.append(slice(_slice_part(s.start), _slice_part(s.stop), st))
            dim += 1
            continue
        i = _scalar_index(s)
        if dim >= len(shape):
            raise _invalid(f"Index out of range using input dim {dim}; input has only "
                           f"{len(shape)} dims", f"the tensor has shape {list(shape)}", op,
                           "strided_slice/")
        n = shape[dim]
        if not -n <= i < n:
            raise _invalid(f"slice index {i if i >= 0 else i + n} of dimension {dim} out "
                           "of bounds.", f"dimension {dim} has size {n}", op, "strided_slice/")
        out.append(i)
        dim += 1
    if dim > len(shape):
        raise _invalid(f"Index out of range using input dim {len(shape)}; input has only "
                       f"{len(shape)} dims", f"the tensor has shape {list(shape)}", op,
                       "strided_slice/")
    return tuple(out)


def _traced_index(key: Any) -> bool:
    """Whether an index component is a tensor being traced (``tf.function``): its value
    differs between calls (a loop counter), so the index is an input of the op."""
    from ..autodiff.tracing import TraceLevel

    for k in key if isinstance(key, (tuple, list)) else (key,):
        if isinstance(k, Tensor) and isinstance(k._lvl, TraceLevel) and k._lvl.active \
                and k._data.dtype.kind in "iu" and k._data.ndim == 0 \
                and not k.__dict__.get("_static"):
            return True
    return False


def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]`` with TensorFlow's rules (recorded: the gradient scatters back)."""
    if _STATE.levels and not isinstance(t, VariableBase) and _traced_index(key):
        from ..autodiff.tracing import quiet_values

        # checked on the trace's values as TensorFlow checks it; the op takes the index
        # (so this read of a loop counter's value is not one the program depends on)
        with quiet_values():
            idx = tf_index(t._data.shape, key)
        if isinstance(idx, tuple):
            keys = list(key) if isinstance(key, (list, tuple)) else [key]
            if len(idx) == len(keys) and not any(k is None or k is Ellipsis for k in keys):
                dyn = tuple(k if isinstance(k, Tensor) and _traced_index(k) else i
                            for k, i in zip(keys, idx))
                return ops.getitem(t, dyn)
    idx = tf_index(t._data.shape, key)
    if isinstance(idx, tuple) and len(idx) == 2 and idx[0] == "mask":
        from ._ops import boolean_mask

        return boolean_mask(t, idx[1])
    src = read(t) if isinstance(t, VariableBase) else t
    out = ops.getitem(src, idx)
    if isinstance(t, VariableBase):
        var, index = t, idx

        def assign(value: Any, name: str | None = None) -> Any:
            """Assign ``value`` to this slice of the variable (ResourceStridedSliceAssign)."""
            return slice_assign(var, index, value)

        out.__dict__["assign"] = assign
    return out


def slice_assign(var: Any, index: tuple[Any, ...], value: Any) -> Any:
    """``var[index].assign(value)``: broadcast ``value`` into the slice, rebind the variable."""
    region = var._data[index]
    t = value if isinstance(value, Tensor) else convert_like(value, var._data.dtype, True)
    if isinstance(t, VariableBase):
        t = read(t)
    if t._data.dtype != var._data.dtype:
        raise hinted(ValueError(with_hint(
            f"Tensor conversion requested dtype {var._data.dtype.name} for Tensor with dtype "
            f"{t._data.dtype.name}: {t!r}", "cast the value to the variable's dtype with tf.cast")))
    try:
        vals = np.broadcast_to(t._data, region.shape)
    except ValueError:
        src = ",".join(str(d) for d in t._data.shape)
        dst = ",".join(str(d) for d in region.shape)
        raise _invalid(f"Cannot broadcast input shape [{src}] into final shape [{dst}]",
                       f"the slice has shape {tuple(region.shape)}",
                       "ResourceStridedSliceAssign", "strided_slice/_assign") from None
    new = var._data.copy()
    new[index] = vals
    return var._set(new, True)


# ============================================================================ scatter
def _nd_index(shape: tuple[int, ...], indices: Any, updates_shape: tuple[int, ...],
              op: str) -> tuple[Any, ...]:
    """``indices[..., k]`` as a NumPy index into ``shape``, checked as TensorFlow checks it."""
    # a traced tensor's array keeps its mark (a value taken from it is noted)
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise hinted(TypeError(with_hint(
            f"Value passed to parameter 'indices' has DataType {idx.dtype.name} not in list of "
            "allowed values: int16, int32, int64, uint16", "indices must be integers")))
    if idx.ndim == 0:
        raise _invalid("Indices shape must have rank at least one. Found:[]",
                       "indices[..., k] indexes axis k", op, "")
    k = idx.shape[-1]
    if k > len(shape):
        raise _invalid(f"Inner dimensions of output shape must match inner dimensions of "
                       f"updates shape. Output: [{','.join(map(str, shape))}] updates: "
                       f"[{','.join(map(str, updates_shape))}]", "too many index components",
                       op, "")
    want = idx.shape[:-1] + tuple(shape[k:])
    if tuple(updates_shape) != want:
        ishape = ",".join(map(str, idx.shape))
        ushape = ",".join(map(str, updates_shape))
        raise _invalid(f"Outer dimensions of indices and update must match. Indices shape: "
                       f"[{ishape}], updates shape:[{ushape}]",
                       f"updates must have shape {list(want)}", op, "")
    flat = idx.reshape(-1, k)
    bad = np.zeros(len(flat), dtype=bool)
    for j in builtins.range(k):
        bad |= (flat[:, j] < 0) | (flat[:, j] >= shape[j])
    if bad.any():
        i = int(np.argmax(bad))
        where = ",".join(str(int(p)) for p in np.unravel_index(i, idx.shape[:-1])) \
            if idx.ndim > 1 else "0"
        shown = ", ".join(str(int(r)) for r in flat[i])
        raise _invalid(f"indices[{where}] = [{shown}] does not index into shape "
                       f"[{','.join(map(str, shape))}]", "every index must be in range", op, "")
    return tuple(idx[..., j].astype(np.int64) for j in builtins.range(k))


def _updates_for(t: Tensor, updates: Any, op: str) -> Tensor:
    u = updates if isinstance(updates, Tensor) else convert_like(updates, t._data.dtype, True)
    if isinstance(u, VariableBase):
        u = read(u)
    if u._data.dtype != t._data.dtype:
        raise _invalid(f"cannot compute {op} as input #2(zero-based) was expected to be a "
                       f"{_dt.kernel_name(t._data.dtype)} tensor but is a "
                       f"{_dt.kernel_name(u._data.dtype)} tensor",
                       "updates must have the tensor's dtype", op, "")
    return u


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any,
                             name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` written at ``indices`` (recorded).

    The gradient is the incoming gradient with the written places zeroed for
    ``tensor``, and gathered at ``indices`` for ``updates``, as in TensorFlow.

    >>> import tapegrad.tf as tf
    >>> tf.tensor_scatter_nd_update(tf.zeros([4]), [[1], [3]], [5.0, 6.0])
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([0., 5., 0., 6.], dtype=float32)>
    """
    t = convert(tensor)
    u = _updates_for(t, updates, "TensorScatterUpdate")
    return ops.setitem(t, _nd_parts(t._data.shape, indices, u._data.shape,
                                    "TensorScatterUpdate"), u)


def _nd_parts(shape: tuple[int, ...], indices: Any, updates_shape: tuple[int, ...],
              op: str) -> tuple[Any, ...]:
    """:func:`_nd_index`; for indices a trace follows (``tf.function``), which differ
    between calls, the index components are tensors (inputs of the op), checked now on
    the trace's values as TensorFlow checks them."""
    if _has_tracer(indices):
        from ..autodiff.tracing import quiet_values

        with quiet_values():
            _nd_index(shape, indices, updates_shape, op)
        k = indices._data.shape[-1]
        return tuple(ops.getitem(indices, (Ellipsis, j)) for j in builtins.range(k))
    return _nd_index(shape, indices, updates_shape, op)


def _scatter_add(t: Tensor, index: tuple[Any, ...], u: Tensor) -> Tensor:
    return ops.index_add(u, index, t._data.shape)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """``tensor`` plus ``updates`` added at ``indices`` (repeated indices accumulate).

    >>> import tapegrad.tf as tf
    >>> tf.tensor_scatter_nd_add(tf.ones([3]), [[0], [0]], [1.0, 2.0])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([4., 1., 1.], dtype=float32)>
    """
    t = convert(tensor)
    u = _updates_for(t, updates, "TensorScatterAdd")
    index = _nd_parts(t._data.shape, indices, u._data.shape, "TensorScatterAdd")
    return ops.add(t, _scatter_add(t, index, u))


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """``tensor`` minus ``updates`` at ``indices`` (repeated indices accumulate)."""
    t = convert(tensor)
    u = _updates_for(t, updates, "TensorScatterSub")
    index = _nd_parts(t._data.shape, indices, u._data.shape, "TensorScatterSub")
    return ops.subtract(t, _scatter_add(t, index, u))


def _scatter_extreme(tensor: Any, indices: Any, updates: Any, op: str, mode: str) -> Tensor:
    t = convert(tensor)
    u = _updates_for(t, updates, op)
    index = _nd_index(t._data.shape, indices, u._data.shape, op)
    return scatter_extreme(t, u, index=index, mode=mode)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """``tensor`` with each place at ``indices`` set to the max of itself and ``updates``.

    Recorded; tied winners share the gradient evenly, as in TensorFlow.

    >>> import tapegrad.tf as tf
    >>> tf.tensor_scatter_nd_max(tf.zeros([3]), [[1], [1]], [2.0, 5.0]).numpy()
    array([0., 5., 0.], dtype=float32)
    """
    return _scatter_extreme(tensor, indices, updates, "TensorScatterMax", "max")


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """``tensor`` with each place at ``indices`` set to the min of itself and ``updates``.

    Recorded; tied winners share the gradient evenly, as in TensorFlow.
    """
    return _scatter_extreme(tensor, indices, updates, "TensorScatterMin", "min")


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (recorded).

    >>> import tapegrad.tf as tf
    >>> tf.scatter_nd([[1], [1]], [5.0, 6.0], [3])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0., 11.,  0.], dtype=float32)>
    """
    u = convert(updates)
    shp = tuple(int(s) for s in (shape._data.tolist() if isinstance(shape, Tensor) else shape))
    index = _nd_index(shp, indices, u._data.shape, "ScatterNd")
    return ops.index_add_zeros(u, index=index, shape=shp)


# ============================================================================ variables
class IndexedSlices:
    """``tf.IndexedSlices``: ``values`` for the rows ``indices`` of a ``dense_shape`` tensor.

    >>> import tapegrad.tf as tf
    >>> v = tf.Variable(tf.zeros([3, 2]))
    >>> v.scatter_add(tf.IndexedSlices(tf.ones([2, 2]), [1, 1])).numpy().tolist()
    [[0.0, 0.0], [2.0, 2.0], [0.0, 0.0]]
    """

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self.values = convert(values)
        self.indices = convert(indices)
        self.dense_shape = None if dense_shape is None else convert(dense_shape)

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    @property
    def shape(self) -> Any:
        if self.dense_shape is None:
            return self.values.shape
        from ._tensor import TensorShape

        return TensorShape(self.dense_shape._data.tolist())

    def to_dense(self) -> Tensor:
        """The dense tensor (what ``tf.convert_to_tensor`` gives; repeated rows add up)."""
        if self.dense_shape is None:
            raise hinted(ValueError(with_hint(
                "Tensor conversion requested for IndexedSlices for argument `value` without "
                f"dense_shape: {self!r}", "create it with dense_shape= to convert it")))
        shp = tuple(int(s) for s in self.dense_shape._data.tolist())
        idx = self.indices._data.astype(np.int64)
        return ops.index_add_zeros(self.values, index=(idx,), shape=shp)

    def __repr__(self) -> str:
        return (f"IndexedSlices(indices={self.indices!r}, values={self.values!r}"
                + ("" if self.dense_shape is None else f", dense_shape={self.dense_shape!r}")
                + ")")


def _sparse_rows(var: Any, sparse_delta: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(sparse_delta, IndexedSlices):
        raise hinted(TypeError(with_hint(f"sparse_delta is not IndexedSlices: {sparse_delta}",
                                  f"{what} takes tf.IndexedSlices(values, indices)")))
    idx = sparse_delta.indices._data.astype(np.int64)
    vals = convert_like(sparse_delta.values._data, var._data.dtype, True)._data
    n = var._data.shape[0] if var._data.ndim else 0
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise _invalid(f"indices[{i}] = {int(idx.reshape(-1)[i])} is not in [0, {n})",
                       f"the variable has {n} rows", "ResourceScatterUpdate", "")
    return idx, np.broadcast_to(vals, idx.shape + var._data.shape[1:])


def _install_variable_methods(cls: type) -> None:
    def scatter_nd_update(self: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
        """Write ``updates`` at ``indices`` (not recorded)."""
        return self.assign(tensor_scatter_nd_update(read(self), indices, updates))

    def scatter_nd_add(self: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
        """Add ``updates`` at ``indices`` (repeated indices accumulate; not recorded)."""
        return self.assign(tensor_scatter_nd_add(read(self), indices, updates))

    def scatter_nd_sub(self: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
        """Subtract ``updates`` at ``indices`` (not recorded)."""
        return self.assign(tensor_scatter_nd_sub(read(self), indices, updates))

    def scatter_nd_max(self: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
        return self.assign(tensor_scatter_nd_max(tft(self._data), indices, updates))

    def scatter_nd_min(self: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
        return self.assign(tensor_scatter_nd_min(tft(self._data), indices, updates))

    def _rows(fn: Any, what: str) -> Any:
        def method(self: Any, sparse_delta: Any, use_locking: bool = False,
                   name: str | None = None) -> Any:
            idx, vals = _sparse_rows(self, sparse_delta, what)
            new = self._data.copy()
            fn(new, idx, vals)
            return self._set(new, True)
        method.__name__ = what
        method.__doc__ = f"``Variable.{what}(tf.IndexedSlices(values, indices))`` (not recorded)."
        return method

    def _put(a: np.ndarray, i: np.ndarray, v: np.ndarray) -> None:
        a[i] = v

    def sparse_read(self: Any, indices: Any, name: str | None = None) -> Tensor:
        """The rows ``indices`` of the variable (recorded, as ``tf.gather``)."""
        from ._ops import gather

        return gather(self, indices)

    def gather_nd(self: Any, indices: Any, name: str | None = None) -> Tensor:
        """``tf.gather_nd(variable, indices)`` (recorded)."""
        from ._ops import gather_nd as _gnd

        return _gnd(self, indices)

    for f in (scatter_nd_update, scatter_nd_add, scatter_nd_sub, scatter_nd_max, scatter_nd_min,
              sparse_read, gather_nd):
        setattr(cls, f.__name__, f)
    for what, fn in (("scatter_update", _put), ("scatter_add", np.add.at),
                     ("scatter_sub", np.subtract.at), ("scatter_mul", np.multiply.at),
                     ("scatter_div", np.true_divide.at), ("scatter_max", np.maximum.at),
                     ("scatter_min", np.minimum.at)):
        setattr(cls, what, _rows(fn, what))

    def __getitem__(self: Any, key: Any) -> Tensor:
        return getitem(self, key)

    setattr(cls, "__getitem__", __getitem__)  # noqa: B010  (installed on the class)


_INSTALLED = [False]


def install() -> None:
    """TensorFlow's ``__getitem__`` for TensorFlow-style tensors; variable scatter methods."""
    if _INSTALLED[0]:
        return
    from ._tensor import EagerTensor
    from .variables import Variable

    def __getitem__(self: Tensor, index: Any) -> Tensor:
        return getitem(self, index)

    EagerTensor.__getitem__ = __getitem__  # type: ignore[method-assign]
    _install_variable_methods(Variable)
    _INSTALLED[0] = True
