"""Still more of TensorFlow's op set: slicing (``tf.slice``, ``tf.strided_slice``),
``roll``, ``unique``, ``searchsorted``, ``sequence_mask``, the loops ``scan``/``foldl``/
``foldr``, partition/stitch, bit operations and a few ``tf.math`` functions.

Differentiable results compose core ops (``getitem``, ``take``, ``concatenate``...), so
gradients, higher derivatives and batching come from the core; integer and boolean
results are computed on the values and carry no gradient, as in TensorFlow.  Values read
from a traced tensor mark the ``tf.function`` signature as eager (see
:func:`tapegrad.tf._ops._int`), so data-dependent shapes (``unique``) stay correct there.
"""

from __future__ import annotations

import builtins
import collections
import math as _pymath
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops import special as _sp
from ..ops import tf_more as _tfm
from ..ops.tf_more import dynamic_stitch as _stitch_op
from . import _nest
from . import dtypes as _dt
from ._ops import _int, _invalid, _t, add_n, reduce_sum
from ._ops_more import _allowed, lgamma
from ._tensor import _OP_DEFS, binary_args, convert, tft
from .errors import InvalidArgumentError

# TensorFlow's allowed-dtype text of the float-only kernels here (``ensure_float``)
_OP_DEFS.update({k: _allowed("bfloat16, half, float, double", "x:T -> y:T")
                 for k in ("BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "Ndtri")})
_OP_DEFS.update({"Zeta": _allowed("float, double", "x:T, q:T -> z:T"),
                 "Igamma": _allowed("bfloat16, half, float, double", "a:T, x:T -> z:T"),
                 "Igammac": _allowed("bfloat16, half, float, double", "a:T, x:T -> z:T"),
                 "Polygamma": _allowed("float, double", "a:T, x:T -> z:T")})

_bmax = builtins.max
_bmin = builtins.min
_brange = builtins.range


def _vals(x: Any) -> np.ndarray:
    """The ndarray of a tensor or array-like argument (index lists, sizes)."""
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _int_list(x: Any) -> list[int]:
    return [int(v) for v in np.asarray(_vals(x)).reshape(-1)]


# ============================================================================ slicing
def slice_(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    """``input_[begin[i] : begin[i] + size[i]]`` on every axis (``size[i] = -1``: the rest).

    >>> import tapegrad.tf as tf
    >>> tf.slice(tf.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[2, 3],
           [5, 6]], dtype=int32)>
    """
    t = _t(input_)
    b, s = _int_list(begin), _int_list(size)
    shape = t._data.shape
    nd = len(shape)
    if len(b) != nd or len(s) != nd:
        raise _invalid(f"Expected begin and size arguments to be 1-D tensors of size {nd}, but "
                       f"got shapes [{len(b)}] and [{len(s)}] instead.",
                       f"the input has rank {nd}", "Slice", None)
    index = []
    for i, (bi, si, n) in enumerate(zip(b, s, shape)):
        if not 0 <= bi <= n:
            raise _invalid(f"Expected begin[{i}] in [0, {n}], but got {bi}",
                           f"axis {i} has size {n}", "Slice", None)
        if si == -1:
            si = n - bi
        if not 0 <= si <= n - bi:
            raise _invalid(f"Expected size[{i}] in [0, {n - bi}], but got {si}",
                           f"axis {i} has size {n} and begins at {bi}", "Slice", None)
        index.append(slice(bi, bi + si))
    return ops.getitem(t, tuple(index))


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0,
                  end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None, name: str | None = None) -> Tensor:
    """TensorFlow's strided slice: ``begin``/``end``/``strides`` with the five bit masks
    (``x[1:, ..., tf.newaxis, 0]`` is what Python indexing builds from them).

    >>> import tapegrad.tf as tf
    >>> tf.strided_slice(tf.constant([1, 2, 3, 4]), [3], [0], [-1])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([4, 3, 2], dtype=int32)>
    """
    t = _t(input_)
    b, e = _int_list(begin), _int_list(end)
    st = [1] * len(b) if strides is None else _int_list(strides)
    if not len(b) == len(e) == len(st):
        raise _invalid(f"Expected begin, end, and strides to be 1D equal size tensors, but got "
                       f"shapes [{len(b)}], [{len(e)}], and [{len(st)}] instead.",
                       "begin, end and strides need one entry per slice spec", "StridedSlice",
                       None)
    for i, s in enumerate(st):
        if s == 0:
            raise _invalid(f"strides[{i}] must be non-zero", "a stride of 0 selects nothing",
                           "StridedSlice", None)
    shape = t._data.shape
    # which input axis each spec refers to (the ellipsis spans the axes left over)
    n_real = builtins.sum(1 for i in _brange(len(b))
                          if not (new_axis_mask >> i) & 1 and not (ellipsis_mask >> i) & 1)
    index: list[Any] = []
    dim = 0
    seen_ellipsis = False
    for i in _brange(len(b)):
        if (ellipsis_mask >> i) & 1:
            if not seen_ellipsis:
                index.append(Ellipsis)
                dim += len(shape) - n_real
                seen_ellipsis = True
            continue
        if (new_axis_mask >> i) & 1:
            index.append(None)
            continue
        if dim >= len(shape):
            raise _invalid(f"Index out of range using input dim {dim}; input has only "
                           f"{len(shape)} dims", f"the input has rank {len(shape)}",
                           "StridedSlice", None)
        n = shape[dim]
        if (shrink_axis_mask >> i) & 1:
            k = b[i]
            if not -n <= k < n:
                raise _invalid(f"slice index {k} of dimension {dim} out of bounds.",
                               f"axis {dim} has size {n}", "StridedSlice", None)
            index.append(k % n)
        else:
            index.append(slice(None if (begin_mask >> i) & 1 else b[i],
                                        None if (end_mask >> i) & 1 else e[i], st[i]))
        dim += 1
    return ops.getitem(t, tuple(index))


# ============================================================================ roll
def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:
    """Shift elements along ``axis`` by ``shift`` (wrapping around); a gather, so the
    gradient rolls back.

    >>> import tapegrad.tf as tf
    >>> tf.roll(tf.constant([0, 1, 2, 3, 4]), shift=2, axis=0)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([3, 4, 0, 1, 2], dtype=int32)>
    """
    t = _t(input)
    shifts, axes = _int_list(shift), _int_list(axis)
    if len(shifts) != len(axes):
        raise _invalid("shift and axis must have the same size",
                       f"{len(shifts)} shifts for {len(axes)} axes", "Roll")
    nd = t._data.ndim
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        if not -nd <= a < nd:
            raise _invalid(f"axis {a} is out of range", f"the input has rank {nd}", "Roll")
        total[a % nd] = total.get(a % nd, 0) + s
    out = t
    for a, s in total.items():
        n = t._data.shape[a]
        if n and s % n:
            out = ops.take(out, (np.arange(n) - s) % n, axis=a)
    return out if out is not t else ops.identity(t)


# ============================================================================ unique
Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _unique(x: Any, out_idx: Any, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = _t(x)._data
    if a.ndim != 1:
        raise _invalid("unique expects a 1D vector.", f"the input has shape {list(a.shape)}", op)
    _, first, inv, counts = np.unique(a, return_index=True, return_inverse=True,
                                      return_counts=True)
    order = np.argsort(first, kind="stable")  # TensorFlow: the order of first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    npd = _dt.np_dtype(out_idx)
    return a[first[order]], rank[inv.reshape(-1)].astype(npd), counts[order].astype(npd)


def unique(x: Any, out_idx: Any = _dt.int32, name: str | None = None) -> Unique:
    """The distinct values of a 1-D tensor in order of first occurrence, and each
    element's position among them (not differentiable, as in TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.unique(tf.constant([1, 1, 2, 4, 4])).y
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 4], dtype=int32)>
    """
    y, idx, _ = _unique(x, out_idx, "Unique")
    return Unique(tft(y), tft(idx))


def unique_with_counts(x: Any, out_idx: Any = _dt.int32,
                       name: str | None = None) -> UniqueWithCounts:
    """:func:`unique` plus how often each distinct value occurs.

    >>> import tapegrad.tf as tf
    >>> tf.unique_with_counts(tf.constant([1, 1, 2])).count
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 1], dtype=int32)>
    """
    y, idx, count = _unique(x, out_idx, "UniqueWithCounts")
    return UniqueWithCounts(tft(y), tft(idx), tft(count))


# ============================================================================ searchsorted
def searchsorted(sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = _dt.int32,
                 name: str | None = None) -> Tensor:
    """Insertion points of ``values`` in the innermost rows of ``sorted_sequence``.

    >>> import tapegrad.tf as tf
    >>> tf.searchsorted(tf.constant([0, 3, 9, 10]), tf.constant([2, 9]), side="right")
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 3], dtype=int32)>
    """
    op = {"left": "LowerBound", "right": "UpperBound"}.get(side)
    if op is None:
        raise hinted(ValueError(with_hint(f"Argument `side` must be either 'right' or 'left'. "
                                          f"Received: `side` = '{side}'.", "use 'left' or 'right'")))
    s, v = _t(sorted_sequence), _t(values)
    sa, va = s._data, v._data
    if sa.dtype != va.dtype:
        raise _invalid(f"cannot compute {op} as input #1(zero-based) was expected to be a "
                       f"{_dt.kernel_name(sa.dtype)} tensor but is a "
                       f"{_dt.kernel_name(va.dtype)} tensor", "one dtype for both", op)
    if sa.ndim == 0 or va.ndim == 0 or sa.shape[:-1] != va.shape[:-1]:
        raise _invalid("Leading dim_size of both tensors must match.",
                       f"shapes {list(sa.shape)} and {list(va.shape)}", op)
    s2 = sa.reshape(-1, sa.shape[-1])
    v2 = va.reshape(-1, va.shape[-1])
    how: Any = side
    out = np.stack([np.searchsorted(s2[i], v2[i], side=how) for i in _brange(s2.shape[0])]) \
        if s2.shape[0] else np.zeros(v2.shape, np.int64)
    return tft(out.reshape(va.shape).astype(_dt.np_dtype(out_type)))


# ============================================================================ sequence_mask
def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = _dt.bool,
                  name: str | None = None) -> Tensor:
    """``mask[i..., j] = j < lengths[i...]`` for ``j < maxlen`` (``max(lengths)`` by default).

    >>> import tapegrad.tf as tf
    >>> tf.sequence_mask([1, 3], 4)
    <tf.Tensor: shape=(2, 4), dtype=bool, numpy=
    array([[ True, False, False, False],
           [ True,  True,  True, False]])>
    """
    ln = _vals(lengths)
    if maxlen is None:
        m = int(ln.max()) if ln.size else 0
        m = _bmax(m, 0)
    else:
        mv = _vals(maxlen)
        if mv.ndim != 0:
            raise hinted(ValueError(with_hint(
                f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = "
                f"{mv} with shape '{mv.shape}' instead",
                "maxlen is one length for all rows")))
        m = int(mv)
    mask = np.arange(m) < ln[..., None]
    return tft(mask.astype(_dt.np_dtype(dtype)))


# ============================================================================ loops
def _check_elems(elems: Any, what: str) -> tuple[list[Tensor], int]:
    flat = [_t(e) for e in _nest.flatten(elems)]
    if flat and flat[0]._data.ndim < 1:  # TensorFlow indexes the static shape's axis 0
        raise IndexError("tuple index out of range")
    if not flat:
        raise hinted(ValueError(with_hint(
            f"elems must be a Tensor or (possibly nested) sequence of Tensors. Got {elems!r}, "
            "which does not contain any Tensors.", f"pass at least one tensor to {what}")))
    for x in flat:
        if x._data.ndim < 1:
            raise hinted(ValueError(with_hint(
                "Elements in elems must be 1+ dimensional Tensors, not scalars",
                f"{what} loops over axis 0 of each tensor")))
    n = flat[0]._data.shape[0]
    for x in flat[1:]:
        if x._data.shape[0] != n:
            raise hinted(ValueError(with_hint(
                f"Dimensions {n} and {x._data.shape[0]} are not compatible",
                "every tensor in elems needs the same size along axis 0")))
    return flat, n


def _pack(struct: Any, flat: list[Any]) -> Any:
    return _nest.pack_sequence_as(struct, flat) if _nest.is_nested(struct) else flat[0]


def _as_tensors(v: Any) -> Any:
    return _nest.map_structure(lambda e: e if isinstance(e, Tensor) and not hasattr(e, "assign")
                               else convert(e), v)


def _check_structure(ref: Any, value: Any) -> None:
    """``tf.nest.assert_same_structure(ref, value)`` as the loops check each step's result."""
    from .control_flow import structure_mismatch

    mismatch = structure_mismatch(ref, value)
    if mismatch is not None:
        kind = TypeError if "same sequence type" in mismatch else ValueError
        raise hinted(kind(with_hint(mismatch, "fn must return the accumulator's structure")))


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
         parallel_iterations: Any = 10, back_prop: bool = True, swap_memory: bool = False,
         infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """``a_i = fn(a_{i-1}, elems[i])`` along axis 0, stacked (``a_0`` is ``initializer``,
    or ``elems[0]`` which is then also the first output).  Gradients flow through every
    step; ``elems`` and the accumulator may be nested structures.

    >>> import tapegrad.tf as tf
    >>> tf.scan(lambda a, x: a + x, tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 3., 6.], dtype=float32)>
    """
    flat, n = _check_elems(elems, "scan")
    order = list(_brange(n))[::-1] if reverse else list(_brange(n))

    def piece(i: int) -> Any:
        return _pack(elems, [ops.getitem(x, i) for x in flat])

    outs: list[Any] = []
    if initializer is None:
        if not order:
            raise hinted(IndexError(with_hint("list index out of range",
                                              "scan without initializer needs elems[0]")))
        acc = piece(order[0])
        outs.append(acc)
        order = order[1:]
    else:
        acc = _as_tensors(initializer)
    ref = elems if initializer is None else initializer
    for i in order:
        acc = fn(acc, piece(i))
        _check_structure(ref, acc)
        outs.append(acc)
    if not outs:  # no steps with an initializer: zero-length results of its shapes
        return _nest.map_structure(
            lambda v: tft(np.zeros((0,) + _t(v)._data.shape, _t(v)._data.dtype)), initializer)
    flat_outs = [[_t(v) for v in _nest.flatten(o)] for o in outs]
    if reverse:
        flat_outs = flat_outs[::-1]
    stacked = [ops.stack([o[j] for o in flat_outs], axis=0) for j in _brange(len(flat_outs[0]))]
    return _pack(outs[0], stacked)


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: Any = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])`` (``initializer``
    defaults to ``elems[0]``); differentiable through every step.

    >>> import tapegrad.tf as tf
    >>> tf.foldl(lambda a, x: a + x, tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
    """
    return _fold(fn, elems, initializer, False)


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: Any = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """:func:`foldl` from the last element to the first.

    >>> import tapegrad.tf as tf
    >>> tf.foldr(lambda a, x: a * 2.0 + x, tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=17.0>
    """
    return _fold(fn, elems, initializer, True)


def _fold(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any, rev: bool) -> Any:
    flat = [_t(e) for e in _nest.flatten(elems)]
    if not flat or flat[0]._data.ndim < 1:  # TensorFlow indexes the static shape's axis 0
        raise IndexError("tuple index out of range")
    n = flat[0]._data.shape[0]
    order = list(_brange(n))[::-1] if rev else list(_brange(n))

    def piece(i: int) -> Any:
        return _pack(elems, [ops.getitem(x, i) for x in flat])

    if initializer is None:
        acc = piece(order[0])
        order = order[1:]
    else:
        acc = _as_tensors(initializer)
    ref = elems if initializer is None else initializer
    for i in order:
        acc = fn(acc, piece(i))
        _check_structure(ref, acc)
    return acc


# ============================================================================ histogram
def histogram_fixed_width(values: Any, value_range: Any, nbins: Any = 100, dtype: Any = _dt.int32,
                          name: str | None = None) -> Tensor:
    """Counts of ``values`` in ``nbins`` equal bins over ``value_range`` (values outside go
    to the first or last bin).

    >>> import tapegrad.tf as tf
    >>> tf.histogram_fixed_width(tf.constant([0.0, 1.5, 4.9]), [0.0, 5.0], nbins=5)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([1, 1, 0, 0, 1], dtype=int32)>
    """
    v = _t(values)._data
    r = np.asarray(_vals(value_range), dtype=v.dtype)
    nb = _int(nbins)
    if nb <= 0:
        raise _invalid(f"nbins should be a positive number, but got '{nb}'",
                       "ask for at least one bin", "HistogramFixedWidth")
    lo, hi = r[0], r[1]
    if not lo < hi:
        raise _invalid(f"value_range should satisfy value_range[0] < value_range[1], but got "
                       f"'[{float(lo):g}, {float(hi):g}]'", "the range must not be empty",
                       "HistogramFixedWidth", None)
    # TensorFlow's kernel: floor((v - lo) / (hi - lo) * nbins) in the values' dtype, clamped
    with np.errstate(all="ignore"):
        step = ((v.reshape(-1) - lo) / (hi - lo) * v.dtype.type(nb)) if v.dtype.kind == "f" \
            else (v.reshape(-1).astype(np.float64) - lo) / (hi - lo) * nb
    idx = np.clip(np.floor(step), 0, nb - 1).astype(np.int64)
    return tft(np.bincount(idx, minlength=nb).astype(_dt.np_dtype(dtype)))


# ============================================================================ bitcast
# TensorFlow's DataType enum values, which its Bitcast error prints
_ENUM = {np.dtype(k).str: v for k, v in (
    ("float32", 1), ("float64", 2), ("int32", 3), ("uint8", 4), ("int16", 5), ("int8", 6),
    ("complex64", 8), ("int64", 9), ("bool", 10), ("uint16", 17), ("complex128", 18),
    ("float16", 19), ("uint32", 22), ("uint64", 23))}


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Reinterpret the bytes: a wider type consumes the last axis, a narrower one adds one.

    >>> import tapegrad.tf as tf
    >>> tf.bitcast(tf.constant([1.0]), tf.uint8)
    <tf.Tensor: shape=(1, 4), dtype=uint8, numpy=array([[  0,   0, 128,  63]], dtype=uint8)>
    """
    a = np.ascontiguousarray(_t(input)._data)
    npd = _dt.np_dtype(type)
    i, o = a.dtype.itemsize, npd.itemsize
    if i == o:
        return tft(a.view(npd))
    if i > o:
        return tft(a.reshape(a.shape + (1,)).view(npd))
    if not a.ndim or a.shape[-1] * i != o:
        raise _invalid(f"Cannot bitcast from {_ENUM[a.dtype.str]} to {_ENUM[npd.str]}",
                       f"the last axis must hold {o // i} elements", "Bitcast")
    return tft(a.view(npd).reshape(a.shape[:-1]))


# ============================================================================ partition / stitch
def dynamic_partition(data: Any, partitions: Any, num_partitions: int,
                      name: str | None = None) -> list[Tensor]:
    """Split ``data`` into ``num_partitions`` tensors by the partition id of each slice
    (gradient: scattered back).

    >>> import tapegrad.tf as tf
    >>> tf.dynamic_partition(tf.constant([10, 20, 30]), [0, 1, 0], 2)[0]
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([10, 30], dtype=int32)>
    """
    t = _t(data)
    p = np.asarray(_vals(partitions))
    k = int(num_partitions)
    kernel = f"DynamicPartition_num_partitions_{k}"
    if t._data.shape[:p.ndim] != p.shape:
        raise _invalid(f"data.shape must start with partitions.shape, got data.shape = "
                       f"{list(t._data.shape)}, partitions.shape = {list(p.shape)}",
                       "one partition id per leading slice of data", "DynamicPartition", None,
                       kernel)
    flat_p = p.reshape(-1)
    bad = np.nonzero((flat_p < 0) | (flat_p >= k))[0]
    if bad.size:
        j = int(bad[0])
        raise _invalid(f"partitions[{j}] = {int(flat_p[j])} is not in [0, {k})",
                       f"partition ids go from 0 to {k - 1}", "DynamicPartition", None, kernel)
    flat = ops.reshape(t, (-1,) + t._data.shape[p.ndim:])
    return [ops.take(flat, np.nonzero(flat_p == i)[0], axis=0) for i in _brange(k)]


def dynamic_stitch(indices: Sequence[Any], data: Sequence[Any], name: str | None = None) -> Tensor:
    """``merged[indices[m][i]] = data[m][i]`` (later writes win; unwritten rows are zero).
    The gradient is TensorFlow's: every data row gets its target row's cotangent.

    >>> import tapegrad.tf as tf
    >>> tf.dynamic_stitch([[0, 2], [1]], [tf.constant([1.0, 3.0]), tf.constant([2.0])])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 2., 3.], dtype=float32)>
    """
    idx = [np.asarray(_vals(i)).astype(np.int64) for i in indices]
    ds = [_t(d) for d in data]
    if len(idx) != len(ds):
        raise hinted(ValueError(with_hint(
            f"List argument 'data' to 'dynamic_stitch' Op with length {len(ds)} must match "
            f"length {len(idx)} of argument 'indices'.", "one data tensor per index tensor")))
    inner: tuple[int, ...] = ds[0]._data.shape[idx[0].ndim:] if ds else ()
    for m, (i, d) in enumerate(zip(idx, ds)):
        if d._data.shape[:i.ndim] != i.shape:
            raise _invalid(f"data[{m}].shape = {list(d._data.shape)} does not start with "
                           f"indices[{m}].shape = {list(i.shape)}",
                           "each data tensor needs one slice per index", "DynamicStitch")
    all_idx = np.concatenate([i.reshape(-1) for i in idx]) if idx else np.zeros(0, np.int64)
    if np.any(all_idx < 0):
        j = int(np.nonzero(all_idx < 0)[0][0])
        raise _invalid(f"indices[{j}] is out of range", "indices must be >= 0", "DynamicStitch")
    n = int(all_idx.max()) + 1 if all_idx.size else 0
    dt = ds[0]._data.dtype
    same = [d if d._data.dtype == dt else convert(d, _dt.as_dtype(dt)) for d in ds]
    return _stitch_op(*same, idx=tuple(idx), n=n, inner=tuple(inner))


# ============================================================================ unravel_index
def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """Flat indices to coordinates in an array of shape ``dims`` (one row per axis).

    >>> import tapegrad.tf as tf
    >>> tf.unravel_index([3, 7], [3, 3])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [0, 1]], dtype=int32)>
    """
    it = _t(indices)
    i = it._data
    d = (dims if isinstance(dims, Tensor) else convert(dims, _dt.as_dtype(i.dtype)))._data
    if i.dtype != d.dtype:
        raise _invalid(f"cannot compute UnravelIndex as input #1(zero-based) was expected to be "
                       f"a {_dt.kernel_name(i.dtype)} tensor but is a "
                       f"{_dt.kernel_name(d.dtype)} tensor", "indices and dims need one dtype",
                       "UnravelIndex")
    if np.any(i < 0) or np.any(i >= int(np.prod(d))):
        raise _invalid("index is out of bound as with dims", f"dims {d.tolist()} hold "
                       f"{int(np.prod(d))} elements", "UnravelIndex", None)
    out = np.asarray(np.unravel_index(i, tuple(int(v) for v in d)))
    return tft(out.astype(i.dtype))


# ============================================================================ Assert / tuple
def _summarize(v: Any, summarize: int) -> str:
    """One data item as TensorFlow's Assert prints it: the first ``summarize`` elements."""
    if isinstance(v, str):
        return repr(v.encode())
    if isinstance(v, bytes):
        return repr(v)
    a = (v if isinstance(v, Tensor) else convert(v))._data
    if a.ndim == 0:
        item = a.item()
        return repr(item) if isinstance(item, bytes) else str(item)
    flat = a.reshape(-1).tolist()
    parts = [repr(x) if isinstance(x, bytes) else str(x) for x in flat[:summarize]]
    return ", ".join(parts + (["..."] if len(flat) > summarize else []))


def Assert(condition: Any, data: Sequence[Any], summarize: int | None = None,  # noqa: N802
           name: str | None = None) -> None:
    """Raise ``InvalidArgumentError`` with ``data`` summarized when ``condition`` is False.

    >>> import tapegrad.tf as tf
    >>> tf.Assert(tf.constant(True), ["never shown"])
    """
    c = condition
    ok = bool(np.all(c._data)) if isinstance(c, Tensor) else bool(c)
    if ok:
        return None
    summ = 3 if summarize is None else int(summarize)
    text = "\n".join(_summarize(v, summ) for v in data)
    raise hinted(InvalidArgumentError(None, None, with_hint(
        f"Expected '{str(c)}' to be true. Summarized data: {text}",
        "the asserted condition is False")))


def tuple_(tensors: Sequence[Any], control_inputs: Any = None,
          name: str | None = None) -> list[Any]:
    """The tensors (``None`` kept), each as an identity: eagerly they are all ready at once.

    >>> import tapegrad.tf as tf
    >>> tf.tuple([tf.constant(1.0), None])
    [<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, None]
    """
    return [None if v is None else ops.identity(_t(v)) for v in tensors]


# ============================================================================ tf.math extras
def accumulate_n(inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None,
                 name: str | None = None) -> Tensor:
    """The elementwise sum of ``inputs`` (``tf.math.add_n``; TensorFlow deprecates this).

    >>> import tapegrad.tf as tf
    >>> tf.math.accumulate_n([tf.constant([1.0]), tf.constant([2.0])])
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([3.], dtype=float32)>
    """
    return add_n(inputs)


def angle(input: Any, name: str | None = None) -> Tensor:
    """The argument of a complex number; for real input ``pi`` where negative, else 0.

    >>> import tapegrad.tf as tf
    >>> tf.math.angle(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3.1415927, 0.       ], dtype=float32)>
    """
    t = _t(input)
    a = t._data
    if a.dtype.kind == "c":
        return _sp.atan2(_imag(t), _real(t))
    return tft(np.where(a < 0, np.pi, 0.0).astype(a.dtype))


def _real(t: Tensor) -> Tensor:
    from ..ops.complex import real

    return real(t)


def _imag(t: Tensor) -> Tensor:
    from ..ops.complex import imag

    return imag(t)


def cumulative_logsumexp(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
                         name: str | None = None) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably (shifted by the maximum).

    >>> import tapegrad.tf as tf
    >>> tf.math.cumulative_logsumexp(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.6931472], dtype=float32)>
    """
    from ._ops import cumsum

    t = _t(x)
    from ._tensor import ensure_float

    ensure_float(t, "CumulativeLogsumexp")
    ax = _int(axis) % _bmax(t._data.ndim, 1)
    a = t._data
    m = np.max(a, axis=ax, keepdims=True) if a.size else np.zeros((), a.dtype)
    m = np.where(np.isfinite(m), m, 0).astype(a.dtype)
    e = ops.exp(ops.subtract(t, tft(m)))
    with np.errstate(divide="ignore"):
        return ops.add(ops.log(cumsum(e, axis=ax, exclusive=exclusive, reverse=reverse)), tft(m))


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """``y[x[i]] = i`` for a permutation ``x`` of ``0..n-1``.

    >>> import tapegrad.tf as tf
    >>> tf.math.invert_permutation([2, 0, 1])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 0], dtype=int32)>
    """
    a = _t(x)._data
    if a.ndim != 1:
        raise _invalid("invert_permutation expects a 1D vector.", f"shape {list(a.shape)}",
                       "InvertPermutation", None)
    n = a.size
    out = np.full(n, -1, a.dtype)
    for i, v in enumerate(a.tolist()):
        if not 0 <= v < n:
            raise _invalid(f"{v} is not between 0 and {n}", "a permutation of 0..n-1",
                           "InvertPermutation", None)
        if out[v] != -1:
            raise _invalid(f"{v} is duplicated in the input.", "a permutation of 0..n-1",
                           "InvertPermutation", None)
        out[v] = i
    return tft(out)


def _monotone(x: Any, strict: bool) -> Tensor:
    a = _t(x)._data.reshape(-1)
    d = a[1:] > a[:-1] if strict else a[1:] >= a[:-1]
    return tft(np.asarray(bool(np.all(d))))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """True when the flattened ``x`` never decreases.

    >>> import tapegrad.tf as tf
    >>> tf.math.is_non_decreasing([1, 1, 2])
    <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """
    return _monotone(x, False)


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """True when the flattened ``x`` always increases.

    >>> import tapegrad.tf as tf
    >>> tf.math.is_strictly_increasing([1, 1, 2])
    <tf.Tensor: shape=(), dtype=bool, numpy=False>
    """
    return _monotone(x, True)


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """``log|B(x)|`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))``.

    >>> import tapegrad.tf as tf
    >>> tf.math.lbeta(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=-0.6931471824645996>
    """
    t = _t(x)
    if t._data.ndim and t._data.shape[-1] == 0:  # TensorFlow: the empty product, log 1 = 0
        return tft(np.zeros(t._data.shape[:-1], t._data.dtype))
    return ops.subtract(reduce_sum(lgamma(t), axis=-1), lgamma(reduce_sum(t, axis=-1)))


def polyval(coeffs: Sequence[Any], x: Any, name: str | None = None) -> Tensor:
    """``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule.

    >>> import tapegrad.tf as tf
    >>> tf.math.polyval([1.0, 2.0, 3.0], tf.constant(2.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=11.0>
    """
    if isinstance(coeffs, Tensor) or not isinstance(coeffs, (list, builtins.tuple)):
        raise hinted(ValueError(with_hint(
            f"Argument coeffs must be list type. Received type {builtins.type(coeffs)}.",
            "pass the coefficients as a Python list")))
    t = _t(x)
    if not coeffs:
        return tft(np.zeros(t._data.shape, t._data.dtype))
    from ._ops import add, multiply

    p = _t(coeffs[0])
    for c in coeffs[1:]:
        p = add(_t(c), multiply(p, t))
    return p


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    """``scalar * x`` for a 0-D ``scalar``.

    >>> import tapegrad.tf as tf
    >>> tf.math.scalar_mul(2.0, tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """
    from ._ops import multiply

    xt = _t(x)
    s = scalar if isinstance(scalar, Tensor) else convert(scalar, dtype=_dt.as_dtype(
        xt._data.dtype)) if isinstance(scalar, (int, float, complex)) else convert(scalar)
    if s._data.ndim != 0:
        raise hinted(ValueError(with_hint(
            f"The input scalar must be a 0-D value. Received shape {s._data.shape}.",
            "use tf.multiply for tensors")))
    return multiply(s, xt)


def xlog1py(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * log1p(y)``, 0 where ``x`` is 0 (gradients as TensorFlow's: 0 there too).

    >>> import tapegrad.tf as tf
    >>> tf.math.xlog1py(tf.constant([0.0, 1.0]), tf.constant([-2.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.6931472], dtype=float32)>
    """
    from ._tensor import ensure_float

    a, b = binary_args(x, y, function=True, name="Xlog1py")
    ensure_float(a, "Xlog1py")
    zero = ops.equal(a, 0.0)
    # the log is taken where x != 0 only, so a 0 * log1p(-2) never makes NaN gradients
    safe_y = ops.where(zero, tft(np.zeros((), b._data.dtype)), b)
    with np.errstate(all="ignore"):
        return ops.where(zero, tft(np.zeros((), a._data.dtype)), ops.multiply(a, ops.log1p(safe_y)))


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Tensor:
    """The next representable value after ``x1`` towards ``x2`` (float32/float64; no gradient).

    >>> import tapegrad.tf as tf
    >>> bool(tf.math.nextafter(tf.constant(1.0), tf.constant(2.0)) > 1.0)
    True
    """
    a, b = binary_args(x1, x2, function=True, name="NextAfter")
    if a._data.dtype not in (np.float32, np.float64):
        from ._ops_more import _attr_error

        raise _attr_error("T", a._data.dtype, "double, float", "NextAfter",
                          "x1:T, x2:T -> output:T", "attr=T:type,default=DT_FLOAT,allowed="
                          "[DT_DOUBLE, DT_FLOAT]")
    return tft(np.asarray(np.nextafter(a._data, b._data), a._data.dtype))


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """``psi^(a)(x)`` for integer-valued orders ``a >= 0`` (differentiable in ``x``).

    >>> import tapegrad.tf as tf
    >>> tf.math.polygamma(tf.constant(1.0), tf.constant(1.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.644934058189392>
    """
    from ._tensor import ensure_float

    at, xt = binary_args(a, x, function=True, name="Polygamma")
    ensure_float(xt, "Polygamma")
    shape = np.broadcast_shapes(at._data.shape, xt._data.shape)
    av = np.broadcast_to(at._data, shape)
    xb = ops.broadcast_to(xt, shape) if xt._data.shape != shape else xt
    out: Tensor | None = None
    nan = tft(np.full(shape, np.nan, xt._data.dtype))
    for order in np.unique(av):
        o = float(order)
        if o < 0 or o != _pymath.floor(o):
            part: Tensor = nan
        elif o == 0:
            part = _sp.digamma(xb)
        elif o == 1:
            part = _sp.trigamma(xb)
        else:
            part = _sp.polygamma_n(xb, n=int(o))
        out = part if out is None else ops.where(tft(av == order), part, out)
    return out if out is not None else nan


def ndtri(x: Any, name: str | None = None) -> Tensor:
    """The inverse of the standard normal CDF, ``sqrt(2) * erfinv(2x - 1)``.

    >>> import tapegrad.tf as tf
    >>> tf.math.ndtri(tf.constant(0.5))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    from ._tensor import ensure_float

    t = _t(x)
    ensure_float(t, "Ndtri")
    return _ndtri_op(t)


# the one ndtri op (tapegrad.ops.torch_more: Newton-refined, accurate in both tails)
from ..ops.torch_more import ndtri as _ndtri_op  # noqa: E402


# ============================================================================ Bessel, zeta
def _special1(op: Any, x: Any, kernel: str) -> Tensor:
    from ._tensor import ensure_float

    t = _t(x)
    ensure_float(t, kernel)
    return op(t)


def bessel_i0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function ``I0`` (gradient ``I1``).

    >>> import tapegrad.tf as tf
    >>> tf.math.bessel_i0(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    return _special1(_tfm.bessel_i0, x, "BesselI0")


def bessel_i0e(x: Any, name: str | None = None) -> Tensor:
    """``exp(-|x|) I0(x)``."""
    return _special1(_tfm.bessel_i0e, x, "BesselI0e")


def bessel_i1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function ``I1`` (gradient ``I0 - I1 / x``)."""
    return _special1(_tfm.bessel_i1, x, "BesselI1")


def bessel_i1e(x: Any, name: str | None = None) -> Tensor:
    """``exp(-|x|) I1(x)``."""
    return _special1(_tfm.bessel_i1e, x, "BesselI1e")


def zeta(x: Any, q: Any, name: str | None = None) -> Tensor:
    """The Hurwitz zeta function ``sum_k (q + k) ** -x`` (``x > 1``, ``q > 0``); the
    gradient is TensorFlow's: in ``q`` only (``-x zeta(x + 1, q)``).

    >>> import tapegrad.tf as tf
    >>> tf.math.zeta(tf.constant(2.0), tf.constant(1.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.644934058189392>
    """
    from ._tensor import ensure_float

    a, b = binary_args(x, q, function=True, name="Zeta")
    ensure_float(a, "Zeta")
    return _tfm.zeta(a, b)


def igamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)`` (gradients in both
    arguments, TensorFlow's ``IgammaGradA`` for ``a``).

    >>> import tapegrad.tf as tf
    >>> round(float(tf.math.igamma(tf.constant(1.0), tf.constant(2.0))), 6)
    0.864665
    """
    from ._tensor import ensure_float

    at, xt = binary_args(a, x, function=True, name="Igamma")
    ensure_float(at, "Igamma")
    return _tfm.igamma(at, xt)


def igammac(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    from ._tensor import ensure_float

    at, xt = binary_args(a, x, function=True, name="Igammac")
    ensure_float(at, "Igammac")
    return _tfm.igammac(at, xt)


# ============================================================================ complex
def complex_(real: Any, imag: Any, name: str | None = None) -> Tensor:
    """``real + 1j * imag`` (float32 gives complex64, float64 complex128); the gradient
    sends the real and imaginary parts of the cotangent back.

    >>> import tapegrad.tf as tf
    >>> tf.complex(tf.constant([1.0]), tf.constant([2.0]))
    <tf.Tensor: shape=(1,), dtype=complex64, numpy=array([1.+2.j], dtype=complex64)>
    """
    re, im = binary_args(real, imag, function=True, name="Complex")
    if re._data.dtype not in (np.float32, np.float64) or im._data.dtype != re._data.dtype:
        raise hinted(TypeError(with_hint(
            f"The `real` and `imag` components have incorrect types: "
            f"{_dt.as_dtype(re._data.dtype).name} {_dt.as_dtype(im._data.dtype).name}. They must "
            "be consistent, and one of [tf.float32, tf.float64]", "pass float32 or float64 parts")))
    cdt = _dt.complex64 if re._data.dtype == np.float32 else _dt.complex128
    from ._ops import cast as _cast

    unit = tft(np.asarray(1j, _dt.np_dtype(cdt)))
    return ops.add(_cast(re, cdt), ops.multiply(_cast(im, cdt), unit))


# ============================================================================ tf.bitwise
_INTS = "int8, int16, int32, int64, uint8, uint16, uint32, uint64"


def _bit_check(t: Tensor, op: str, sig: str, comm: bool) -> None:
    if t._data.dtype.kind not in "iu":
        from ._ops_more import _attr_error, _dt_list

        raise _attr_error("T", t._data.dtype, _INTS, op, sig,
                          f"attr=T:type,allowed=[{_dt_list(_INTS)}]"
                          + ("; is_commutative=true" if comm else ""))


def _bitwise2(fn: Any, x: Any, y: Any, op: str, comm: bool) -> Tensor:
    a, b = binary_args(x, y, function=True, name=op)
    _bit_check(a, op, "x:T, y:T -> z:T", comm)
    return tft(np.asarray(fn(a._data, b._data), a._data.dtype))


def bitwise_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x & y`` of integers.

    >>> import tapegrad.tf as tf
    >>> tf.bitwise.bitwise_and(tf.constant([6]), tf.constant([3]))
    <tf.Tensor: shape=(1,), dtype=int32, numpy=array([2], dtype=int32)>
    """
    return _bitwise2(np.bitwise_and, x, y, "BitwiseAnd", True)


def bitwise_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x | y`` of integers."""
    return _bitwise2(np.bitwise_or, x, y, "BitwiseOr", True)


def bitwise_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x ^ y`` of integers."""
    return _bitwise2(np.bitwise_xor, x, y, "BitwiseXor", True)


def invert(x: Any, name: str | None = None) -> Tensor:
    """Elementwise ``~x`` of integers.

    >>> import tapegrad.tf as tf
    >>> tf.bitwise.invert(tf.constant([0], tf.uint8))
    <tf.Tensor: shape=(1,), dtype=uint8, numpy=array([255], dtype=uint8)>
    """
    t = _t(x)
    _bit_check(t, "Invert", "x:T -> y:T", False)
    return tft(np.invert(t._data))


def _shift_amount(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # TensorFlow's kernels clamp the shift to [0, bits - 1]
    return np.clip(b, 0, a.dtype.itemsize * 8 - 1).astype(a.dtype)


def left_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x << y`` (the shift clamped to ``[0, bits - 1]`` as TensorFlow does).

    >>> import tapegrad.tf as tf
    >>> tf.bitwise.left_shift(tf.constant([1]), tf.constant([3]))
    <tf.Tensor: shape=(1,), dtype=int32, numpy=array([8], dtype=int32)>
    """
    return _bitwise2(lambda a, b: np.left_shift(a, _shift_amount(a, b)), x, y, "LeftShift", False)


def right_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x >> y`` (arithmetic for signed types; shift clamped to ``[0, bits - 1]``)."""
    return _bitwise2(lambda a, b: np.right_shift(a, _shift_amount(a, b)), x, y, "RightShift",
                     False)


# TensorFlow's names, which shadow builtins: bound as tf.slice/tf.tuple/tf.complex
for _f, _n in ((slice_, "slice"), (tuple_, "tuple"), (complex_, "complex")):
    _f.__name__ = _f.__qualname__ = _n
del _f, _n

__all__ = [
    "slice_", "strided_slice", "roll", "unique", "unique_with_counts", "searchsorted",
    "sequence_mask", "scan", "foldl", "foldr", "histogram_fixed_width", "bitcast",
    "dynamic_partition", "dynamic_stitch", "unravel_index", "Assert", "tuple_", "accumulate_n",
    "angle", "cumulative_logsumexp", "invert_permutation", "is_non_decreasing",
    "is_strictly_increasing", "lbeta", "polyval", "scalar_mul", "xlog1py", "nextafter",
    "polygamma", "ndtri", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
    "right_shift", "Unique", "UniqueWithCounts", "complex_", "bessel_i0",
    "bessel_i0e", "bessel_i1", "bessel_i1e", "zeta", "igamma", "igammac",
]
