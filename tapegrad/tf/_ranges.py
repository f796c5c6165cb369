"""``tf.range`` and ``tf.linspace`` with TensorFlow's exact lengths, values and errors.

TensorFlow computes a float range's length as ``ceil(|(limit - start) /
delta|)`` in the argument dtype and each value as ``start + i * delta`` in
that dtype, so ``tf.range(-5.5, 1.0, 0.1)`` has 65 float32 values and
``tf.range(1.0, 1.3, 0.1)`` has 3 (NumPy's float64 ``arange`` gives 4).
``tf.linspace`` is TensorFlow's ``linspace_nd``: ``start + delta * k`` for the
inner points, with ``start`` and ``stop`` themselves at the ends.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor
from . import dtypes as _dt
from ._tensor import convert, tft
from .errors import InvalidArgumentError, kernel_message

# TensorFlow's order for inferring tf.range's dtype from its arguments
_HIERARCHY = [np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float16),
              np.dtype(np.float32), np.dtype(np.float64)]


def _invalid(msg: str, hint: str, op: str) -> InvalidArgumentError:
    # a kernel's error: eager TensorFlow's "{{function_node ...}}" prefix and op suffix
    return hinted(InvalidArgumentError(None, None, with_hint(kernel_message(msg, op), hint)))


def _fmt(v: Any) -> str:
    """A number as TensorFlow's error messages write it (absl's six significant digits)."""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
    return str(v)


def _scalar(v: Tensor, what: str) -> Any:
    if v._data.ndim != 0:
        dims = ",".join(str(d) for d in v._data.shape)
        raise _invalid(f"{what} must be a scalar, not shape [{dims}]",
                       f"tf.range takes scalar {what}", "Range")
    return v._data[()]


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
          name: str = "range") -> Tensor:
    """``tf.range``: like Python's range, int32 for ints, float32 for floats.

    The length is ``ceil(|(limit - start) / delta|)`` computed in the
    result dtype, and the values ``start + i * delta`` in that dtype, as
    TensorFlow computes them.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> tf.range(5)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([0, 1, 2, 3, 4], dtype=int32)>
    >>> tf.range(-5.5, 1.0, 0.1).shape
    TensorShape([65])
    >>> tf.range(1.0, 1.3, 0.1).shape
    TensorShape([3])
    """
    if limit is None:
        start, limit = 0, start
    if dtype is not None:
        npd = _dt.np_dtype(dtype)
        args = [v if isinstance(v, Tensor) else convert(v, npd) for v in (start, limit, delta)]
    else:
        args = [convert(v) for v in (start, limit, delta)]
        for a in args:
            if a._data.dtype not in _HIERARCHY:
                raise hinted(TypeError(with_hint(
                    f"Value passed to parameter 'start' has DataType {a._data.dtype.name} not in "
                    "list of allowed values: bfloat16, half, float32, float64, int8, int16, "
                    "int32, int64, uint16, uint32",
                    "pass numbers or numeric tensors")))
        npd = builtins.max((a._data.dtype for a in args), key=_HIERARCHY.index)
    traced = any(_traced(a) for a in args)
    if traced:
        from ..autodiff.tracing import quiet_values

        with quiet_values():  # checked on the trace's values; the op checks them again
            s, lim, d = (_scalar(a, w) for a, w in zip(args, ("start", "limit", "delta")))
    else:
        s, lim, d = (_scalar(a, w) for a, w in zip(args, ("start", "limit", "delta")))
    if traced:
        # a traced bound (inside tf.function): an op, so the program computes the range
        return _range_op(*args, dtype=npd)
    return tft(_values(s, lim, d, npd))


def _traced(x: Any) -> bool:
    """:func:`tapegrad.autodiff.tracing.is_traced`."""
    from ..autodiff.tracing import is_traced

    return is_traced(x)


def _values(s: Any, lim: Any, d: Any, npd: np.dtype) -> Any:
    """The values of ``tf.range(s, lim, d)`` in dtype ``npd`` (TensorFlow's checks)."""
    s, lim, d = (npd.type(v) for v in (s, lim, d))
    if d == 0:
        raise _invalid("Requires delta != 0: 0", "delta must not be 0", "Range")
    if d > 0 and s > lim:
        raise _invalid(f"Requires start <= limit when delta > 0: {_fmt(s)}/{_fmt(lim)}",
                       "swap start and limit, or use a negative delta", "Range")
    if d < 0 and s < lim:
        raise _invalid(f"Requires start >= limit when delta < 0: {_fmt(s)}/{_fmt(lim)}",
                       "swap start and limit, or use a positive delta", "Range")
    with np.errstate(over="ignore", invalid="ignore"):
        if npd.kind in "iu":
            n = -(-abs(int(lim) - int(s)) // abs(int(d)))
            vals = (int(s) + np.arange(n, dtype=np.int64) * int(d)).astype(npd)
        else:
            size = np.ceil(np.abs((lim - s) / d))
            if not np.isfinite(size):
                raise _invalid("Requires ((limit - start) / delta) <= 2147483647",
                               "the range must be finite", "Range")
            n = int(size)
            # start + i * delta, every operation in the result dtype
            vals = (s + np.arange(n).astype(npd) * d).astype(npd)
    return vals


@defop("range")
def _range_op(start: Any, limit: Any, delta: Any, *, dtype: np.dtype) -> Any:
    return _values(np.asarray(start)[()], np.asarray(limit)[()], np.asarray(delta)[()], dtype)


_range_op.vjp = None  # type: ignore[assignment]  # integers or a grid: never recorded


def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive), TensorFlow's way.

    Integer ``start``/``stop`` give float64 (TensorFlow divides with
    ``truediv``); ``start`` and ``stop`` may be tensors of one shape (or
    broadcastable), and the points go along ``axis``.  Recorded: gradients
    reach ``start`` and ``stop``.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> tf.linspace(0.0, 1.0, 3)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0. , 0.5, 1. ], dtype=float32)>
    >>> tf.linspace(0, 10, 3).dtype
    tf.float64
    """
    a = convert(start)
    try:
        b = convert(stop, a._data.dtype)
    except ValueError as e:
        raise ValueError(f"stop: {e}") from None
    n_t = convert(num)
    if n_t._data.dtype.kind not in "iu":
        raise hinted(TypeError(with_hint(
            f"Argument `tensor` (name: num) must be of type integer. Received `tensor` = "
            f"{n_t._data.item() if n_t._data.ndim == 0 else n_t._data} of dtype: "
            f"<dtype: '{n_t._data.dtype.name}'>", "num is the number of points: an int")))
    n = int(n_t._data)
    if n < 0:
        raise _invalid(f"Requires start <= limit when delta > 0: 1/{n}",
                       "num must be >= 0", "Range")
    shape = np.broadcast_shapes(a._data.shape, b._data.shape)
    a, b = ops.broadcast_to(a, shape), ops.broadcast_to(b, shape)
    nd = len(shape) + 1
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        raise _invalid(f"Expected axis to be in the range [-{nd}, {nd}), but got {axis}",
                       "axis counts the dimensions of the result", "ConcatV2")
    lo = ops.expand_dims(a, axis=ax)
    hi = ops.expand_dims(b, axis=ax)
    steps = builtins.max(n - 1, 1)
    delta = ops.divide(ops.subtract(hi, lo), steps)
    if delta._data.dtype != lo._data.dtype:        # integers: truediv gave float64
        lo = ops.cast(lo, dtype=delta._data.dtype)
        hi = ops.cast(hi, dtype=delta._data.dtype)
    npd = delta._data.dtype
    k_shape = [1] * nd
    k_shape[ax] = builtins.max(n - 2, 0)
    k = tft(np.arange(1, builtins.max(n - 1, 1), dtype=np.int64).astype(npd).reshape(k_shape))
    inner = ops.add(lo, ops.multiply(delta, k))
    full_shape = list(shape)
    full_shape.insert(ax, 1)
    parts = [ops.broadcast_to(lo, tuple(full_shape)), ops.broadcast_to(inner, tuple(
        full_shape[:ax] + [k_shape[ax]] + full_shape[ax + 1:])),
        ops.broadcast_to(hi, tuple(full_shape))]
    out = ops.concat(parts, axis=ax)
    index = tuple(slice(None) if i != ax else slice(0, n) for i in builtins.range(nd))
    return convert(ops.getitem(out, index))
