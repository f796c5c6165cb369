"""The TensorFlow op set over the shared core ops.

Every function converts its inputs as TensorFlow does (Python floats are
float32; a binary op converts a Python operand to the other operand's dtype
and refuses mixed dtypes), checks shapes with TensorFlow's messages, and then
calls the one core op.  TensorFlow's conventions at non-differentiable points
are core-op attributes (``maximum(ties="first")``, ``max(ties="split")``,
``sqrt(zero_safe=True)``); the few ops whose TensorFlow gradient differs from
the core's everywhere on a boundary (``pow`` for a non-positive base,
``softplus``, ``relu6``, ``sigmoid_cross_entropy_with_logits`` at 0) are
written here, forward and VJP side by side, with the core's machinery.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.registry import defop
from .._core.tensor import TF, Tensor, make
from ..ops._raw import data
from ..ops.fused import erfc_op, power_tf_op, stop_gradient_op
from . import dtypes as _dt
from ._tensor import (
    VariableBase,
    binary_args,
    check_broadcast,
    check_matmul,
    constant_array,
    convert,
    convert_like,
    ensure_float,
    fmt_shape,
    read,
    tft,
)
from .errors import InvalidArgumentError, kernel_message

_bmax = builtins.max
_brange = builtins.range
_bsum = builtins.sum


def _t(x: Any, dtype: Any = None) -> Tensor:
    return convert(x, dtype)


def _invalid(msg: str, hint: str, op: str, name: str | None = "",
             kernel: str | None = None) -> InvalidArgumentError:
    """TensorFlow's eager kernel error (see :func:`tapegrad.tf.errors.kernel_message`)."""
    return hinted(InvalidArgumentError(None, None, with_hint(
        kernel_message(msg, op, name, kernel), hint)))


# ============================================================================ creation
def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """A constant tensor (Python floats become float32, Python ints int32).

    >>> import tapegrad.tf as tf
    >>> tf.constant([1.0, 2.0])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    >>> tf.constant(0.0, shape=[2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    from ._convert import check_constant_sequence

    check_constant_sequence(value)
    if isinstance(value, VariableBase):
        value = read(value)
    arr = np.array(constant_array(value, dtype), copy=True)
    if shape is not None:
        shp = tuple(int(s) for s in (shape.as_list() if hasattr(shape, "as_list") else shape))
        n = int(np.prod(shp, dtype=np.int64))
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shp).copy()
        elif arr.size == n:
            arr = arr.reshape(shp)
        else:
            raise hinted(TypeError(
                with_hint(
                    f"Eager execution of tf.constant with unsupported shape. Tensor {arr} "
                    f"(converted from {value!r}) has {arr.size} elements, but got `shape` "
                    f"{shp} with {n} elements).",
                    "shape= can only fill from one value or reshape the same number of elements",
                )
            ))
    return tft(arr)


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None,
                      name: str | None = None) -> Tensor:
    """Convert a value to a tensor; tensors pass through, variables are read.

    >>> import tapegrad.tf as tf
    >>> tf.convert_to_tensor([1, 2]).dtype
    tf.int32
    """
    return convert(value, dtype, dtype_hint)


def _int(x: Any) -> int:
    """A Python int argument (an axis, a count) that may be given as a tensor: a traced
    tensor's value is taken as front-end code takes it (noted, so that signature runs
    eagerly), not as the user's ``int(t)`` (TensorFlow's error inside tf.function)."""
    return int(x._data) if isinstance(x, Tensor) else int(x)


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape._data.tolist()
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    out = tuple(_int(s) for s in shape)
    if any(not -(1 << 63) <= s < (1 << 63) for s in out):
        raise hinted(ValueError(with_hint(
            "Can't convert Python sequence with out-of-range integer to int32 Tensor.",
            "sizes and axes must fit in int64")))
    return out


def _creation_shape(shape: Any) -> tuple[int, ...]:
    """A shape for zeros/ones/fill, with TensorFlow's Fill errors for impossible sizes."""
    out = _shape_arg(shape)
    for s in out:
        if s < 0:
            raise _invalid(f"Dimension {s} must be >= 0", "every size must be >= 0", "Fill")
    n = 1
    for s in out:
        n *= s
    if n > (1 << 63) - 1:
        raise hinted(InvalidArgumentError(None, None, with_hint(
            f"Shape [{','.join(str(s) for s in out)}] would have more than 2**63 - 1 elements "
            "[Op:Fill] name: ", "the tensor cannot exist")))
    return out


def _alloc(fn: Any, shape: tuple[int, ...], dtype: np.dtype, *args: Any) -> np.ndarray:
    """``fn(shape, *args, dtype=dtype)``, TensorFlow's OOM error if the memory is not there."""
    try:
        return fn(shape, *args, dtype=dtype)
    except (MemoryError, ValueError):
        from .errors import ResourceExhaustedError

        raise hinted(ResourceExhaustedError(None, None, with_hint(
            f"OOM when allocating tensor with shape[{','.join(str(s) for s in shape)}] and type "
            f"{np.dtype(dtype).name} on /job:localhost/replica:0/task:0/device:CPU:0 by "
            "allocator cpu [Op:Fill] name: ", "the tensor does not fit in memory"))) from None


def zeros(shape: Any, dtype: Any = _dt.float32, name: str | None = None) -> Tensor:
    """A tensor of zeros (float32 by default).

    >>> import tapegrad.tf as tf
    >>> tf.zeros([2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    return tft(_alloc(np.zeros, _creation_shape(shape), _dt.np_dtype(dtype)))


def ones(shape: Any, dtype: Any = _dt.float32, name: str | None = None) -> Tensor:
    """A tensor of ones (float32 by default).

    >>> import tapegrad.tf as tf
    >>> tf.ones([2], dtype=tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 1], dtype=int32)>
    """
    return tft(_alloc(np.ones, _creation_shape(shape), _dt.np_dtype(dtype)))


def zeros_like(input: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of ``input``.

    >>> import tapegrad.tf as tf
    >>> tf.zeros_like(tf.constant([1, 2]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 0], dtype=int32)>
    """
    x = _t(input)
    return tft(np.zeros_like(x._data, dtype=None if dtype is None else _dt.np_dtype(dtype),
                            subok=False))  # a shape only: not a loop variable's value


def ones_like(input: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Ones with the shape (and dtype, unless given) of ``input``.

    >>> import tapegrad.tf as tf
    >>> tf.ones_like(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>
    """
    x = _t(input)
    return tft(np.ones_like(x._data, dtype=None if dtype is None else _dt.np_dtype(dtype),
                           subok=False))  # a shape only: not a loop variable's value


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` filled with ``value`` (value's dtype).

    >>> import tapegrad.tf as tf
    >>> tf.fill([2], 3)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([3, 3], dtype=int32)>
    """
    v = _t(value)
    shp = _creation_shape(dims)
    if v._data.ndim:
        raise _invalid(f"value must represent a scalar, got shape {fmt_shape(v._data.shape)}",
                       "fill takes a scalar value", "Fill", None)
    if _traced(v):  # a value that differs between calls of a tf.function: an op on it
        return ops.broadcast_to(v, tuple(int(d) for d in shp))
    return tft(_alloc(np.full, shp, v._data.dtype, v._data))


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
          name: str = "range") -> Tensor:
    """``tf.range``: like Python's range, int32 for ints, float32 for floats.

    >>> import tapegrad.tf as tf
    >>> tf.range(5)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([0, 1, 2, 3, 4], dtype=int32)>
    """
    if limit is None:
        start, limit = 0, start
    vals = [_t(v) for v in (start, limit, delta)]
    if dtype is None:
        kinds = [v._data.dtype for v in vals]
        npd = np.result_type(*kinds)
        if npd.kind == "f" and all(k != np.float64 for k in kinds):
            npd = np.dtype(np.float32)
    else:
        npd = _dt.np_dtype(dtype)
    s, lim, d = (v._data.item() for v in vals)
    if d == 0:
        raise _invalid("Requires delta != 0: 0", "delta must not be 0", "Range")
    return tft(np.arange(s, lim, d).astype(npd))


def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive).

    >>> import tapegrad.tf as tf
    >>> tf.linspace(0.0, 1.0, 3)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0. , 0.5, 1. ], dtype=float32)>
    """
    a, b = _t(start), _t(stop)
    npd = a._data.dtype if a._data.dtype.kind == "f" else np.dtype(np.float32)
    return tft(np.linspace(a._data, b._data, _int(num), axis=axis).astype(npd))


def eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None,
        dtype: Any = _dt.float32, name: str | None = None) -> Tensor:
    """The identity matrix (float32 by default).

    >>> import tapegrad.tf as tf
    >>> tf.eye(2)
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [0., 1.]], dtype=float32)>
    """
    m = np.eye(_int(num_rows), None if num_columns is None else _int(num_columns),
               dtype=_dt.np_dtype(dtype))
    if batch_shape is not None:
        m = np.broadcast_to(m, _shape_arg(batch_shape) + m.shape).copy()
    return tft(m)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Change the dtype (float to int truncates toward zero, as TensorFlow does).

    The gradient passes through casts between floating dtypes.

    >>> import tapegrad.tf as tf
    >>> tf.cast(tf.constant([1.7, -1.7]), tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1, -1], dtype=int32)>
    """
    t = _t(x)
    npd = _dt.np_dtype(dtype)
    if t._data.dtype == npd:
        return t
    if t._data.dtype.kind == "c" and npd.kind != "c":
        return ops.cast(ops_real(t), dtype=npd)
    return ops.cast(t, dtype=npd)


def ops_real(t: Tensor) -> Tensor:
    return tft(np.real(t._data))


def identity(input: Any, name: str | None = None) -> Tensor:
    """The same value as a new tensor (recorded: gradients pass through).

    >>> import tapegrad.tf as tf
    >>> float(tf.identity(tf.constant(2.0)))
    2.0
    """
    return ops.identity(_t(input))


_stop_gradient = stop_gradient_op


def stop_gradient(input: Any, name: str | None = None) -> Tensor:
    """The same value, with the gradient path cut.

    >>> import tapegrad.tf as tf
    >>> x = tf.Variable(3.0)
    >>> with tf.GradientTape() as tape:
    ...     y = tf.stop_gradient(x) * x
    >>> float(tape.gradient(y, x))
    3.0
    """
    return _stop_gradient(_t(input))


def is_tensor(x: Any) -> bool:
    """True for tensors and variables."""
    return isinstance(x, Tensor)


def shape(input: Any, out_type: Any = _dt.int32, name: str | None = None) -> Tensor:
    """The shape as an int32 tensor.

    >>> import tapegrad.tf as tf
    >>> tf.shape(tf.ones([2, 3]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>
    """
    x = _t(input)
    if _traced(x):  # traced (tf.function): an op, so the program reads the shape
        return _mark_static(_shape_op(x, dtype=_dt.np_dtype(out_type)))
    return tft(np.asarray(x._data.shape, dtype=_dt.np_dtype(out_type)))


def _traced(x: Any) -> bool:
    """:func:`tapegrad.autodiff.tracing.is_traced`."""
    from ..autodiff.tracing import is_traced

    return is_traced(x)


def _mark_static(t: Tensor) -> Tensor:
    from ..autodiff.tracing import TraceLevel

    lv = t._lvl
    return lv.mark_static(t) if isinstance(lv, TraceLevel) else t


@defop("shape")
def _shape_op(x: Any, *, dtype: np.dtype) -> Any:
    return np.asarray(np.shape(x), dtype=dtype)


_shape_op.vjp = None  # type: ignore[assignment]  # integers: never recorded


@defop("size")
def _size_op(x: Any, *, dtype: np.dtype) -> Any:
    return np.asarray(np.size(x), dtype=dtype)


_size_op.vjp = None  # type: ignore[assignment]  # an integer: never recorded


def size(input: Any, out_type: Any = _dt.int32, name: str | None = None) -> Tensor:
    """The number of elements as an int32 tensor.

    >>> import tapegrad.tf as tf
    >>> tf.size(tf.ones([2, 3]))
    <tf.Tensor: shape=(), dtype=int32, numpy=6>
    """
    x = _t(input)
    if _traced(x):  # traced: an op of the program
        return _mark_static(_size_op(x, dtype=_dt.np_dtype(out_type)))
    return tft(np.asarray(x._data.size, dtype=_dt.np_dtype(out_type)))


def rank(input: Any, name: str | None = None) -> Tensor:
    """The number of axes as an int32 tensor.

    >>> import tapegrad.tf as tf
    >>> tf.rank(tf.ones([2, 3]))
    <tf.Tensor: shape=(), dtype=int32, numpy=2>
    """
    return tft(np.asarray(_t(input)._data.ndim, dtype=np.int32))


# ============================================================================ elementwise
def _unary(fn: Any, x: Any, op: str, float_only: bool = True, **kw: Any) -> Tensor:
    t = _t(x)
    if float_only:
        ensure_float(t, op)
    return fn(t, **kw)


def _binary(fn: Any, x: Any, y: Any, name: str, **kw: Any) -> Tensor:
    a, b = binary_args(x, y, function=True, name=name)
    return fn(a, b, **kw)


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x + y`` (same dtype required, as in TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.add(tf.constant([1.0, 2.0]), 1.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
    """
    return _binary(ops.add, x, y, "add")


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x - y``.

    >>> import tapegrad.tf as tf
    >>> tf.subtract(tf.constant(5.0), 2.0)
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """
    return _binary(ops.subtract, x, y, "subtract")


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y`` (one dtype; Python numbers take the other operand's dtype).

    >>> import tapegrad.tf as tf
    >>> tf.multiply(tf.constant([1.0, 2.0]), 3.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 6.], dtype=float32)>
    """
    return _binary(ops.multiply, x, y, "multiply")


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``; integer tensors divide to float64, as TensorFlow's truediv.

    >>> import tapegrad.tf as tf
    >>> tf.divide(tf.constant([1, 2]), 2)
    <tf.Tensor: shape=(2,), dtype=float64, numpy=array([0.5, 1. ])>
    """
    return _binary(ops.divide, x, y, "divide")


truediv = divide


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x // y`` (rounding toward minus infinity).

    >>> import tapegrad.tf as tf
    >>> tf.math.floordiv(tf.constant([7, -7]), 2)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 3, -4], dtype=int32)>
    """
    return _binary(ops.floor_divide, x, y, "floor_divide")


floor_div = floordiv


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x % y`` with the sign of ``y`` (TensorFlow's FloorMod).

    >>> import tapegrad.tf as tf
    >>> tf.math.floormod(tf.constant([7, -7]), 3)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    return _binary(ops.remainder, x, y, "remainder")


mod = floormod


def negative(x: Any, name: str | None = None) -> Tensor:
    """``-x``.

    >>> import tapegrad.tf as tf
    >>> tf.negative(tf.constant([1.0, -2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-1.,  2.], dtype=float32)>
    """
    return ops.negative(_t(x))


def _pow(x: Any, y: Any) -> Tensor:
    """``x ** y`` on tensors, as TensorFlow's Pow (its gradient convention, its error for
    integers to negative powers)."""
    if np.asarray(data(x)).dtype.kind in "iu" and np.any(np.asarray(data(y)) < 0):
        raise hinted(InvalidArgumentError(
            None, None,
            with_hint("Integers to negative integer powers are not allowed [Op:Pow] name: ",
                      "cast the base to a float dtype first"),
        ))
    return power_tf_op(x, y)


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x ** y`` with TensorFlow's gradient (0 for the exponent where ``x <= 0``).

    >>> import tapegrad.tf as tf
    >>> tf.pow(tf.constant([2.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 9.], dtype=float32)>
    """
    return _binary(_pow, x, y, "power")


def pow_operator(x: Any, y: Any) -> Tensor:
    """``x ** y`` and ``y.__rpow__``: operator conversion (either side may be Python)."""
    a, b = binary_args(x, y, "power")
    return _pow(a, b)


def square(x: Any, name: str | None = None) -> Tensor:
    """``x * x``.

    >>> import tapegrad.tf as tf
    >>> tf.square(tf.constant([2.0, -3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 9.], dtype=float32)>
    """
    return ops.square(_t(x))


def sqrt(x: Any, name: str | None = None) -> Tensor:
    """Square root; its gradient is 0 wherever the incoming gradient is 0 (TensorFlow).

    So ``tf.where(x > 0, tf.sqrt(x), 0.)`` has gradient 0 (not NaN) at 0.

    >>> import tapegrad.tf as tf
    >>> tf.sqrt(tf.constant([4.0, 9.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
    """
    return _unary(ops.sqrt, x, "Sqrt", zero_safe=True)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    """``1 / sqrt(x)``.

    >>> import tapegrad.tf as tf
    >>> tf.math.rsqrt(tf.constant(4.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.5>
    """
    return ops.reciprocal(_unary(ops.sqrt, x, "Rsqrt", zero_safe=True))


def exp(x: Any, name: str | None = None) -> Tensor:
    """Exponential (gradient ``exp(x)``).

    >>> import tapegrad.tf as tf
    >>> tf.exp(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    return _unary(ops.exp, x, "Exp", kernel="tf")


def expm1(x: Any, name: str | None = None) -> Tensor:
    """``exp(x) - 1``, accurate near 0.

    >>> import tapegrad.tf as tf
    >>> tf.math.expm1(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.expm1, x, "Expm1", kernel="tf")


def log(x: Any, name: str | None = None) -> Tensor:
    """Natural logarithm (gradient ``1 / x``).

    >>> import tapegrad.tf as tf
    >>> tf.math.log(tf.constant(1.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.log, x, "Log", kernel="tf")


def log1p(x: Any, name: str | None = None) -> Tensor:
    """``log(1 + x)``, accurate near 0.

    >>> import tapegrad.tf as tf
    >>> tf.math.log1p(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.log1p, x, "Log1p", kernel="tf")


def sin(x: Any, name: str | None = None) -> Tensor:
    """Sine (gradient ``cos(x)``).

    >>> import tapegrad.tf as tf
    >>> tf.sin(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.sin, x, "Sin", kernel="tf")


def cos(x: Any, name: str | None = None) -> Tensor:
    """Cosine (gradient ``-sin(x)``).

    >>> import tapegrad.tf as tf
    >>> tf.cos(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    return _unary(ops.cos, x, "Cos", kernel="tf")


def tan(x: Any, name: str | None = None) -> Tensor:
    """Tangent.

    >>> import tapegrad.tf as tf
    >>> tf.tan(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.tan, x, "Tan")


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent (gradient ``1 - tanh(x)^2``).

    >>> import tapegrad.tf as tf
    >>> tf.tanh(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.tanh, x, "Tanh", kernel="tf")


def sinh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic sine.

    >>> import tapegrad.tf as tf
    >>> tf.math.sinh(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    t = _unary(ops.exp, x, "Sinh")
    return ops.multiply(ops.subtract(t, ops.reciprocal(t)), 0.5)


def cosh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic cosine.

    >>> import tapegrad.tf as tf
    >>> tf.math.cosh(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    t = _unary(ops.exp, x, "Cosh")
    return ops.multiply(ops.add(t, ops.reciprocal(t)), 0.5)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """Logistic sigmoid ``1 / (1 + exp(-x))``.

    >>> import tapegrad.tf as tf
    >>> tf.sigmoid(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.5>
    """
    return _unary(ops.sigmoid, x, "Sigmoid", kernel="tf")


def erf(x: Any, name: str | None = None) -> Tensor:
    """The error function.

    >>> import tapegrad.tf as tf
    >>> tf.math.erf(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(ops.erf, x, "Erf", kernel="tf")


_erfc = erfc_op


def erfc(x: Any, name: str | None = None) -> Tensor:
    """Complementary error function ``1 - erf(x)`` (accurate where erf is near 1).

    >>> import tapegrad.tf as tf
    >>> tf.math.erfc(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    return _unary(_erfc, x, "Erfc")


def abs(x: Any, name: str | None = None) -> Tensor:
    """Absolute value (gradient ``sign(x)``, 0 at 0).

    >>> import tapegrad.tf as tf
    >>> tf.abs(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return ops.abs(_t(x))


def real(input: Any, name: str | None = None) -> Tensor:
    """The real part of a complex tensor (``tf.math.real``); a real tensor as it is."""
    from ..ops.complex import real as _real

    x = _t(input)
    return _real(x) if np.iscomplexobj(x._data) else x


def imag(input: Any, name: str | None = None) -> Tensor:
    """The imaginary part of a complex tensor (``tf.math.imag``); zeros for a real one."""
    from ..ops.complex import imag as _imag

    x = _t(input)
    return _imag(x) if np.iscomplexobj(x._data) else ops.multiply(x, 0)


def conj(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate (``tf.math.conj``); a real tensor as it is."""
    from ..ops.complex import conj as _conj

    t = _t(x)
    return _conj(t) if np.iscomplexobj(t._data) else t


def sign(x: Any, name: str | None = None) -> Tensor:
    """-1, 0 or 1 (gradient 0).

    >>> import tapegrad.tf as tf
    >>> tf.sign(tf.constant([-2.0, 0.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([-1.,  0.,  1.], dtype=float32)>
    """
    return ops.sign(_t(x))


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    """``1 / x``.

    >>> import tapegrad.tf as tf
    >>> tf.math.reciprocal(tf.constant(4.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.25>
    """
    return _unary(ops.reciprocal, x, "Reciprocal")


def floor(x: Any, name: str | None = None) -> Tensor:
    """Round down (no gradient).

    >>> import tapegrad.tf as tf
    >>> tf.floor(tf.constant([1.5, -1.5]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 1., -2.], dtype=float32)>
    """
    return ops.floor(_t(x))


def ceil(x: Any, name: str | None = None) -> Tensor:
    """Round up (no gradient).

    >>> import tapegrad.tf as tf
    >>> tf.math.ceil(tf.constant([1.2, -1.2]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 2., -1.], dtype=float32)>
    """
    return ops.ceil(_t(x))


def round(x: Any, name: str | None = None) -> Tensor:
    """Round half to even (banker's rounding), as TensorFlow does.

    >>> import tapegrad.tf as tf
    >>> tf.round(tf.constant([0.5, 1.5, 2.5]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0., 2., 2.], dtype=float32)>
    """
    return ops.round(_t(x))


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise maximum; at ties the whole gradient goes to ``x`` (TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.maximum(tf.constant([1.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
    """
    return _binary(ops.maximum, x, y, "maximum", ties="first")


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise minimum; at ties the whole gradient goes to ``x`` (TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.minimum(tf.constant([1.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return _binary(ops.minimum, x, y, "minimum", ties="first")


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``(x - y) ** 2``.

    >>> import tapegrad.tf as tf
    >>> tf.math.squared_difference(tf.constant(3.0), 1.0)
    <tf.Tensor: shape=(), dtype=float32, numpy=4.0>
    """
    a, b = binary_args(x, y, function=True, name="squared_difference")
    return ops.square(ops.subtract(a, b))


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, and 0 where ``y == 0`` (gradients 0 there too).

    >>> import tapegrad.tf as tf
    >>> tf.math.divide_no_nan(tf.constant([1.0, 1.0]), tf.constant([2.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 0. ], dtype=float32)>
    """
    a, b = binary_args(x, y, function=True, name="DivNoNan")
    zero = ops.equal(b, 0)
    safe = ops.where(zero, 1.0, b)
    return ops.where(zero, 0.0, ops.divide(a, safe))


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0``.

    >>> import tapegrad.tf as tf
    >>> tf.math.xlogy(tf.constant([0.0, 1.0]), tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    a, b = binary_args(x, y, function=True, name="Xlogy")
    zero = ops.equal(a, 0)
    return ops.where(zero, 0.0, ops.multiply(a, ops.log(ops.where(zero, 1.0, b))))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sum of a list of tensors of one shape and dtype.

    >>> import tapegrad.tf as tf
    >>> tf.add_n([tf.constant(1.0), tf.constant(2.0)])
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """
    ts = [_t(x) for x in inputs]
    if not ts:
        raise hinted(ValueError(with_hint("inputs must be a list of at least one Tensor with the same "
                                   "dtype and shape", "pass a non-empty list")))
    out = ts[0]
    for t in ts[1:]:
        out = add(out, t)
    return out


def _compare(fn: Any, x: Any, y: Any, name: str) -> Tensor:
    a, b = binary_args(x, y, function=True, name=name)
    return fn(a, b)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x == y`` (bool; operands of one dtype).

    >>> import tapegrad.tf as tf
    >>> tf.equal(tf.constant([1, 2]), 2)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return _compare(ops.equal, x, y, "equal")


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x != y`` (bool).

    >>> import tapegrad.tf as tf
    >>> tf.not_equal(tf.constant([1, 2]), 2)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return _compare(ops.not_equal, x, y, "not_equal")


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x < y`` (bool).

    >>> import tapegrad.tf as tf
    >>> tf.less(tf.constant([1.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return _compare(ops.less, x, y, "less")


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x <= y`` (bool).

    >>> import tapegrad.tf as tf
    >>> tf.less_equal(tf.constant([1.0, 2.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True,  True])>
    """
    return _compare(ops.less_equal, x, y, "less_equal")


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x > y`` (bool).

    >>> import tapegrad.tf as tf
    >>> tf.greater(tf.constant([1.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return _compare(ops.greater, x, y, "greater")


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x >= y`` (bool).

    >>> import tapegrad.tf as tf
    >>> tf.greater_equal(tf.constant([1.0, 2.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return _compare(ops.greater_equal, x, y, "greater_equal")


def _check_bool(t: Tensor, op: str) -> None:
    if t._data.dtype.kind != "b":
        raise _invalid(f"cannot compute {op} as input #0(zero-based) was expected to be a bool "
                       f"tensor but is a {_dt.kernel_name(t._data.dtype)} tensor",
                       "logical ops take bool tensors (e.g. the result of a comparison)", op)


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise AND of bool tensors.

    >>> import tapegrad.tf as tf
    >>> tf.logical_and(tf.constant([True, True]), tf.constant([True, False]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    a, b = binary_args(x, y, function=True, name="logical_and")
    _check_bool(a, "LogicalAnd")
    return ops.logical_and(a, b)


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise OR of bool tensors.

    >>> import tapegrad.tf as tf
    >>> tf.logical_or(tf.constant([True, False]), tf.constant([False, False]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    a, b = binary_args(x, y, function=True, name="logical_or")
    _check_bool(a, "LogicalOr")
    return ops.logical_or(a, b)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """Elementwise XOR of bool tensors.

    >>> import tapegrad.tf as tf
    >>> tf.math.logical_xor(tf.constant([True, False]), tf.constant([True, True]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    a, b = binary_args(x, y, function=True, name="logical_xor")
    _check_bool(a, "LogicalXor")
    return ops.logical_xor(a, b)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    """Elementwise NOT of a bool tensor.

    >>> import tapegrad.tf as tf
    >>> tf.logical_not(tf.constant([True, False]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    t = _t(x)
    _check_bool(t, "LogicalNot")
    return ops.logical_not(t)


def is_nan(x: Any, name: str | None = None) -> Tensor:
    """True where ``x`` is NaN.

    >>> import tapegrad.tf as tf
    >>> tf.math.is_nan(tf.constant([1.0, float('nan')]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return ops.isnan(_t(x))


def is_inf(x: Any, name: str | None = None) -> Tensor:
    """True where ``x`` is +-inf.

    >>> import tapegrad.tf as tf
    >>> tf.math.is_inf(tf.constant([1.0, float('inf')]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return ops.isinf(_t(x))


def is_finite(x: Any, name: str | None = None) -> Tensor:
    """True where ``x`` is neither inf nor NaN.

    >>> import tapegrad.tf as tf
    >>> tf.math.is_finite(tf.constant([1.0, float('inf')]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return ops.isfinite(_t(x))


# ============================================================================ reductions
def _axes(axis: Any, t: Tensor, op: str) -> tuple[int, ...] | None:
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis._data.tolist()
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    nd = t._data.ndim
    out = []
    for a in axes:
        a = int(a)
        if not -nd <= a < nd and not (nd == 0 and a in (0, -1)):
            raise _invalid(f"Invalid reduction dimension ({a} for input with {nd} dimension(s)",
                           f"axis must be in [-{nd}, {nd})" if nd else
                           "a scalar has no axis to reduce", op)
        out.append(a % nd if nd else 0)
    if nd == 0:
        return ()
    return tuple(sorted(set(out)))


def _empty_extreme(t: Tensor, fn: Any, axes: Any, keepdims: bool, low: bool) -> Tensor:
    """TensorFlow's max/min of nothing: the identity (-inf / inf, or the integer limits)."""
    d = t._data.dtype
    if d.kind == "f":
        init: Any = -np.inf if low else np.inf
    elif d.kind in "iu":
        info = np.iinfo(d)
        init = info.min if low else info.max
    else:
        init = not low
    return tft(np.asarray(fn(t._data, axis=axes, keepdims=keepdims, initial=init)).astype(d))


def _int_reduce_kernel(arr: Any, kind: str, axes: Any, keepdims: bool) -> Any:
    if kind == "mean":
        s = np.sum(arr, axis=axes, keepdims=keepdims, dtype=np.int64)
        n = arr.size if axes is None else int(np.prod([arr.shape[a] for a in axes]))
        q = np.trunc(s / _bmax(n, 1)) if n else s
        return np.asarray(q).astype(arr.dtype)
    fn: Any = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[kind]
    return np.asarray(fn(arr, axis=axes, keepdims=keepdims)).astype(arr.dtype)


@defop("int_reduce")
def _int_reduce_op(x: Any, *, kind: str, axes: Any, keepdims: bool) -> Any:
    return _int_reduce_kernel(np.asarray(x), kind, axes, keepdims)


_int_reduce_op.vjp = None  # type: ignore[assignment]  # integers: never differentiated
_INT_KINDS = {np.sum: "sum", np.max: "max", np.min: "min", np.prod: "prod"}


def _int_reduce(t: Tensor, fn: Any, axes: Any, keepdims: bool) -> Tensor:
    """An integer reduction (NumPy's, in the input dtype); inside tf.function an op of the
    program, so every call reduces its own values."""
    kind = fn if isinstance(fn, str) else _INT_KINDS[fn]
    ax = None if axes is None else tuple(axes)
    if _traced(t):
        return _int_reduce_op(t, kind=kind, axes=ax, keepdims=keepdims)
    return tft(_int_reduce_kernel(t._data, kind, ax, keepdims))


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Sum over ``axis`` (all axes when None).

    >>> import tapegrad.tf as tf
    >>> tf.reduce_sum(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 6.], dtype=float32)>
    """
    t = _t(input_tensor)
    ax = _axes(axis, t, "Sum")
    if t._data.dtype.kind not in "fc":
        return _int_reduce(t, np.sum, ax, bool(keepdims))
    return ops.sum(t, axis=ax, keepdims=bool(keepdims), kernel="tf")


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                name: str | None = None) -> Tensor:
    """Mean over ``axis``; integer tensors give the truncated integer mean, as TensorFlow.

    >>> import tapegrad.tf as tf
    >>> tf.reduce_mean(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.5, 3.5], dtype=float32)>
    """
    t = _t(input_tensor)
    ax = _axes(axis, t, "Mean")
    if t._data.dtype.kind not in "fc":
        return _int_reduce(t, "mean", ax, bool(keepdims))
    return ops.mean(t, axis=ax, keepdims=bool(keepdims), kernel="tf")


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Largest element over ``axis``; tied maxima share the gradient evenly (TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.reduce_max(tf.constant([[1.0, 5.0], [3.0, 2.0]]), axis=0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 5.], dtype=float32)>
    """
    t = _t(input_tensor)
    ax = _axes(axis, t, "Max")
    if t._data.size == 0:
        return _empty_extreme(t, np.max, ax, bool(keepdims), low=True)
    if t._data.dtype.kind not in "fc":
        return _int_reduce(t, np.max, ax, bool(keepdims))
    return ops.max(t, axis=ax, keepdims=bool(keepdims), ties="split")


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Smallest element over ``axis``; tied minima share the gradient evenly.

    >>> import tapegrad.tf as tf
    >>> tf.reduce_min(tf.constant([[1.0, 5.0], [3.0, 2.0]]), axis=1, keepdims=True)
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1.],
           [2.]], dtype=float32)>
    """
    t = _t(input_tensor)
    ax = _axes(axis, t, "Min")
    if t._data.size == 0:
        return _empty_extreme(t, np.min, ax, bool(keepdims), low=False)
    if t._data.dtype.kind not in "fc":
        return _int_reduce(t, np.min, ax, bool(keepdims))
    return ops.min(t, axis=ax, keepdims=bool(keepdims), ties="split")


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                name: str | None = None) -> Tensor:
    """Product over ``axis`` (the gradient handles zeros exactly).

    >>> import tapegrad.tf as tf
    >>> tf.reduce_prod(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 2., 12.], dtype=float32)>
    """
    t = _t(input_tensor)
    ax = _axes(axis, t, "Prod")
    if t._data.dtype.kind not in "fc":
        return _int_reduce(t, np.prod, ax, bool(keepdims))
    return ops.prod(t, axis=ax, keepdims=bool(keepdims))


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                     name: str | None = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably.

    >>> import tapegrad.tf as tf
    >>> tf.reduce_logsumexp(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.6931471824645996>
    """
    t = _t(input_tensor)
    ensure_float(t, "Exp")
    ax = _axes(axis, t, "Max")
    return ops.logsumexp(t, axis=ax, keepdims=bool(keepdims))


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Logical OR over ``axis``.

    >>> import tapegrad.tf as tf
    >>> tf.reduce_any(tf.constant([True, False]))
    <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """
    t = _t(input_tensor)
    # an op (not NumPy on the array): inside tf.function it is part of the program
    return ops.any(t, axis=_axes(axis, t, "Any"), keepdims=bool(keepdims))


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Logical AND over ``axis``.

    >>> import tapegrad.tf as tf
    >>> tf.reduce_all(tf.constant([True, False]))
    <tf.Tensor: shape=(), dtype=bool, numpy=False>
    """
    t = _t(input_tensor)
    return ops.all(t, axis=_axes(axis, t, "All"), keepdims=bool(keepdims))


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """Variance over ``axis`` (population, as TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.math.reduce_variance(tf.constant([1.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    t = _t(input_tensor)
    ensure_float(t, "Mean")
    ax = _axes(axis, t, "Mean")
    return ops.var(t, axis=ax, keepdims=bool(keepdims))


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Standard deviation over ``axis`` (population, as TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.math.reduce_std(tf.constant([1.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    return ops.sqrt(reduce_variance(input_tensor, axis, keepdims), zero_safe=True)


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """``sqrt(sum(x ** 2))`` over ``axis``.

    >>> import tapegrad.tf as tf
    >>> tf.math.reduce_euclidean_norm(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    t = _t(input_tensor)
    return ops.sqrt(reduce_sum(ops.square(t), axis, keepdims), zero_safe=True)


def argmax(input: Any, axis: Any = None, output_type: Any = _dt.int64,
           name: str | None = None) -> Tensor:
    """Index of the largest value along ``axis`` (0 when None), int64 by default.

    >>> import tapegrad.tf as tf
    >>> tf.argmax(tf.constant([1.0, 3.0, 2.0]))
    <tf.Tensor: shape=(), dtype=int64, numpy=1>
    """
    t = _t(input)
    ax = 0 if axis is None else _int(axis)
    nd = _bmax(t._data.ndim, 1)
    if not -nd <= ax < nd:
        raise _invalid(f"Expected dimension in the range [{-nd}, {nd}), but got {ax}",
                       f"the input has {t._data.ndim} dimensions", "ArgMax")
    # an op (not NumPy on the array): inside tf.function it is part of the program
    return ops.cast(ops.argmax(t, axis=ax), dtype=_dt.np_dtype(output_type))


def argmin(input: Any, axis: Any = None, output_type: Any = _dt.int64,
           name: str | None = None) -> Tensor:
    """Index of the smallest value along ``axis`` (0 when None), int64 by default.

    >>> import tapegrad.tf as tf
    >>> tf.argmin(tf.constant([3.0, 1.0, 2.0]))
    <tf.Tensor: shape=(), dtype=int64, numpy=1>
    """
    t = _t(input)
    ax = 0 if axis is None else _int(axis)
    nd = _bmax(t._data.ndim, 1)
    if not -nd <= ax < nd:
        raise _invalid(f"Expected dimension in the range [{-nd}, {nd}), but got {ax}",
                       f"the input has {t._data.ndim} dimensions", "ArgMin")
    return ops.cast(ops.argmin(t, axis=ax), dtype=_dt.np_dtype(output_type))


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """Cumulative sum along ``axis`` (``exclusive``/``reverse`` as in TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.cumsum(tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 3., 6.], dtype=float32)>
    """
    t = _t(x)
    ax = _int(axis) % _bmax(t._data.ndim, 1)
    if reverse:
        t = ops.flip(t, axis=ax)
    out = ops.cumsum(t, axis=ax)
    if exclusive:
        n = t._data.shape[ax]
        pad = [(0, 0)] * t._data.ndim
        pad[ax] = (1, 0)
        idx = tuple(slice(None) if i != ax else slice(0, n) for i in _brange(t._data.ndim))
        out = ops.getitem(ops.pad(out, pad), idx)
    if reverse:
        out = ops.flip(out, axis=ax)
    return out


# ============================================================================ linear algebra
def _swap_last(t: Tensor) -> Tensor:
    return ops.swapaxes(t, -1, -2)


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, output_type: Any = None, grad_a: bool = False,
           grad_b: bool = False, name: str | None = None) -> Tensor:
    """Matrix product of rank >= 2 tensors (batched); 1-D operands are refused, as in TF.

    >>> import tapegrad.tf as tf
    >>> tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]), transpose_b=True).numpy()
    array([[3., 3.],
           [3., 3.]], dtype=float32)
    """
    x = _t(a)
    if isinstance(b, Tensor):
        y = read(b) if isinstance(b, VariableBase) else b
    else:
        y = convert_like(b, x._data.dtype, False)
    if x._data.dtype != y._data.dtype:
        binary_args(x, y, function=True, name="matmul")  # raises TensorFlow's dtype error
    if x._data.ndim < 2 or y._data.ndim < 2:
        check_matmul(x, y)
    if transpose_a or adjoint_a:
        x = _swap_last(x)
    if transpose_b or adjoint_b:
        y = _swap_last(y)
    check_matmul(x, y)
    if (transpose_b or adjoint_b) and x._data.shape[0] < 16:
        return ops.matmul(x, y)  # another oneDNN kernel below 16 rows: not emulated
    return ops.matmul(x, y, kernel="tf")  # 2-D float32: TensorFlow's order (ops/linalg.py)


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False,
           name: str | None = None) -> Tensor:
    """Matrix times vector: ``matmul(a, b[..., None])[..., 0]``.

    >>> import tapegrad.tf as tf
    >>> tf.linalg.matvec(tf.eye(2), tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    if transpose_a or adjoint_a:
        x, v = _t(a), _t(b)
        xd, vd = x._data, v._data
        if xd.ndim == 2 and vd.ndim == 1 and xd.dtype == vd.dtype and xd.dtype.kind == "f" \
                and xd.shape[0] == vd.shape[0]:
            # a^T b as the vector b times a (the same BLAS product, the same values): the
            # gradient of a is then one outer product in a's own layout, where the
            # transposed form hands back a transposed view (a strided copy for whoever
            # reads it: 3x the time of a plain copy for vmap's per-example weight gradients)
            return ops.matmul(v, x)
    bb = expand_dims(b, -1)
    return squeeze(matmul(a, bb, transpose_a=transpose_a, adjoint_a=adjoint_a), -1)


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over the given axes of ``a`` and ``b`` (``axes`` an int or a pair of lists).

    >>> import tapegrad.tf as tf
    >>> tf.tensordot(tf.ones([2, 3]), tf.ones([3]), axes=1)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 3.], dtype=float32)>
    """
    x, y = _t(a), _t(b)
    if x._data.dtype != y._data.dtype:
        binary_args(x, y, function=True, name="matmul")
    na, nb = x._data.ndim, y._data.ndim
    if isinstance(axes, (int, np.integer)):
        k = int(axes)
        ax_a, ax_b = list(_brange(na - k, na)), list(_brange(k))
    else:
        ax_a, ax_b = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                      [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
        ax_a = [int(i) % na for i in ax_a]
        ax_b = [int(i) % nb for i in ax_b]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    sa = list(letters[:na])
    sb = list(letters[na:na + nb])
    for i, j in zip(ax_a, ax_b):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in ax_a] + \
          [c for j, c in enumerate(sb) if j not in ax_b]
    return ops.einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", x, y)


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Einstein summation (differentiable in every operand).

    >>> import tapegrad.tf as tf
    >>> tf.einsum('ij,j->i', tf.ones([2, 3]), tf.ones([3]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 3.], dtype=float32)>
    """
    ts = [_t(x) for x in inputs]
    return ops.einsum(equation, *ts, kernel="tf")


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = None,
         name: str | None = None) -> Tensor:
    """Vector norm (``'euclidean'``/2, 1, ``np.inf``, any ``p > 0``) or, with a 2-element
    ``axis``, matrix norm (``'euclidean'``/``'fro'``, 1, 2, ``np.inf``).

    >>> import tapegrad.tf as tf
    >>> tf.norm(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    >>> tf.norm(tf.constant([[1.0, -2.0], [3.0, 4.0]]), ord=1, axis=[0, 1])
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
    """
    t = _t(tensor)
    keep = bool(keepdims)
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        ax2 = tuple(axis)
        if not all(isinstance(a, int) for a in ax2) or ax2[0] == ax2[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                             f"got {ax2}")
        supported: list[Any] = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                             f"got {axis}")
        if ord not in ("euclidean", 1, 2, np.inf) and (
                isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    if ord in ("euclidean", "fro") or (ord in (2, 2.0) and not is_matrix):
        s = reduce_sum(ops.multiply(t, t), axis=axis, keepdims=True)
        r = ops.sqrt(s, zero_safe=True)
    elif is_matrix and ord in (2, 2.0):
        from ..ops import linalg_ext

        nd = t._data.ndim
        a0, a1 = ax2[0] % nd, ax2[1] % nd
        sv = linalg_ext.svdvals(ops.moveaxis(t, (a0, a1), (-2, -1)))
        r = ops.expand_dims(reduce_max(sv, axis=-1), tuple(sorted((a0, a1))))
    elif ord in (1, 1.0):
        r = ops.abs(t)
        if is_matrix:  # the largest column sum
            r = reduce_max(reduce_sum(r, axis=ax2[0], keepdims=True), axis=ax2[1],
                           keepdims=True)
        else:
            r = reduce_sum(r, axis=axis, keepdims=True)
    elif ord in (np.inf, "inf"):
        r = ops.abs(t)
        if is_matrix:  # the largest row sum
            r = reduce_max(reduce_sum(r, axis=ax2[1], keepdims=True), axis=ax2[0],
                           keepdims=True)
        else:
            r = reduce_max(r, axis=axis, keepdims=True)
    else:
        p = float(ord)
        r = ops.power(reduce_sum(ops.power(ops.abs(t), p), axis=axis, keepdims=True), 1.0 / p)
    if not keep:
        ax = _axes(list(axis) if is_matrix else axis, t, "Norm")
        new = tuple(s for i, s in enumerate(r._data.shape) if ax is not None and i not in ax)
        r = ops.reshape(r, new)
    return r


# ============================================================================ shapes
def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """Reshape (one ``-1`` allowed), with TensorFlow's error message.

    >>> import tapegrad.tf as tf
    >>> tf.reshape(tf.range(6), [2, -1])
    <tf.Tensor: shape=(2, 3), dtype=int32, numpy=
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)>
    """
    t = _t(tensor)
    shp = _shape_arg(shape)
    n = t._data.size
    known = int(np.prod([s for s in shp if s != -1], dtype=np.int64)) if shp else 1
    if -1 in shp:
        if shp.count(-1) > 1:
            raise _invalid("Only one input size may be -1, not both 0 and 1",
                           "at most one dimension may be -1", "Reshape", None)
        if known == 0 or n % known:
            raise _invalid(f"Input to reshape is a tensor with {n} values, but the requested "
                           f"shape requires a multiple of {known}",
                           f"the input has shape {tuple(t._data.shape)}", "Reshape", None)
    elif known != n:
        from ._graph_errors import reshape_error

        ge = reshape_error(t, shp)  # inside tf.function: the graph builder's error
        if ge is not None:
            raise ge
        raise _invalid(f"Input to reshape is a tensor with {n} values, but the requested shape "
                       f"has {known}", f"the input has shape {tuple(t._data.shape)}",
                       "Reshape", None)
    return ops.reshape(t, shp)


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str = "transpose") -> Tensor:
    """Permute axes (reverse them when ``perm`` is None).

    >>> import tapegrad.tf as tf
    >>> tf.transpose(tf.ones([2, 3])).shape
    TensorShape([3, 2])
    """
    t = _t(a)
    if perm is None:
        return ops.transpose(t)
    p = _shape_arg(perm)
    nd = t._data.ndim
    if len(p) == nd:
        for x in p:
            d = x + nd if x < 0 else x
            if not 0 <= d < nd:
                raise _invalid(f"{d} is out of range [0 .. {nd})",
                               "perm must be a permutation of the axes", "Transpose", None)
    if sorted(x % _bmax(t._data.ndim, 1) for x in p) != list(_brange(t._data.ndim)):
        if len(p) != t._data.ndim:
            raise _invalid(f"transpose expects a vector of size {t._data.ndim}. But input(1) "
                           f"is a vector of size {len(p)}", "perm must be a permutation of the "
                           "axes", "Transpose", None)
        missing = next(d for d in _brange(t._data.ndim)
                       if d not in [x % _bmax(t._data.ndim, 1) for x in p])
        raise _invalid(f"{missing} is missing from {{{','.join(str(x) for x in p)}}}.",
                       "perm must be a permutation of the axes", "Transpose", None)
    return ops.transpose(t, p)


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Swap the last two axes.

    >>> import tapegrad.tf as tf
    >>> tf.linalg.matrix_transpose(tf.ones([2, 3])).shape
    TensorShape([3, 2])
    """
    return _swap_last(_t(a))


def _same_dtype(ts: list[Tensor], op: str) -> list[Tensor]:
    first = next((t for t in ts if isinstance(t, Tensor)), None)
    if first is None:
        return [_t(t) for t in ts]
    npd = (read(first) if isinstance(first, VariableBase) else first)._data.dtype
    out = []
    for t in ts:
        if isinstance(t, Tensor):
            t = read(t) if isinstance(t, VariableBase) else t
            if t._data.dtype != npd:
                i = next(j for j, x in enumerate(ts) if x is t or (
                    isinstance(x, Tensor) and x._data is t._data))
                raise _invalid(
                    f"cannot compute {op} as input #{i}(zero-based) was expected to be a "
                    f"{_dt.kernel_name(npd)} tensor but is a {_dt.kernel_name(t._data.dtype)} "
                    "tensor", "tf.cast the tensors to one dtype first", op,
                    {"ConcatV2": "concat", "Pack": "stack"}.get(op, ""))
            out.append(t)
        else:
            out.append(convert_like(t, npd, True))
    return out


def concat(values: Sequence[Any], axis: int, name: str = "concat") -> Tensor:
    """Join tensors along an existing axis.

    >>> import tapegrad.tf as tf
    >>> tf.concat([tf.ones([1, 2]), tf.zeros([1, 2])], axis=0).shape
    TensorShape([2, 2])
    """
    ts = _same_dtype(list(values), "ConcatV2")
    if len(ts) == 1:
        return identity(ts[0])
    nd = ts[0]._data.ndim
    ax = _int(axis)
    if not -nd <= ax < nd:
        raise _invalid(f"ConcatOp : Expected concatenating dimensions in the range [{-nd}, {nd}),"
                       f" but got {ax}", f"the tensors have rank {nd}", "ConcatV2", name,
                       f"ConcatV2_N_{len(ts)}")
    ax %= nd
    s0 = ts[0]._data.shape
    for i, t in enumerate(ts[1:], 1):
        s = t._data.shape
        if len(s) != nd:
            raise _invalid(f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                           f"{fmt_shape(s0)} vs. shape[{i}] = {fmt_shape(s)}",
                           "all tensors must have the same rank", "ConcatV2", name,
                           f"ConcatV2_N_{len(ts)}")
        for d in _brange(nd):
            if d != ax and s[d] != s0[d]:
                from ._graph_errors import concat_error

                ge = concat_error(ts, ax, i, d)  # inside tf.function: the graph's error
                if ge is not None:
                    raise ge
                raise _invalid(f"ConcatOp : Dimension {d} in both shapes must be equal: "
                               f"shape[0] = {fmt_shape(s0)} vs. shape[{i}] = {fmt_shape(s)}",
                               f"only axis {ax} may differ between the tensors", "ConcatV2",
                               name, f"ConcatV2_N_{len(ts)}")
    return ops.concatenate(ts, axis=ax)


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> Tensor:
    """Join tensors of one shape along a new axis.

    >>> import tapegrad.tf as tf
    >>> tf.stack([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])], axis=1)
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 3.],
           [2., 4.]], dtype=float32)>
    """
    ts = _same_dtype(list(values), "Pack")
    s0 = ts[0]._data.shape
    for i, t in enumerate(ts[1:], 1):
        if t._data.shape != s0:
            raise _invalid(f"Shapes of all inputs must match: values[0].shape = {fmt_shape(s0)} "
                           f"!= values[{i}].shape = {fmt_shape(t._data.shape)}",
                           "tf.stack needs tensors of one shape", "Pack", name,
                           f"Pack_N_{len(ts)}")
    nd = len(s0) + 1
    if not -nd <= _int(axis) < nd:
        raise hinted(ValueError(with_hint(f"Argument `axis` = {axis} not in range [{-nd}, {nd})",
                                   f"the stacked tensor has rank {nd}")))
    return ops.stack(ts, axis=_int(axis))


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """Split along ``axis`` into a list of tensors of one rank less.

    >>> import tapegrad.tf as tf
    >>> tf.unstack(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    [<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>, <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 4.], dtype=float32)>]
    """
    t = _t(value)
    ax = _int(axis) % _bmax(t._data.ndim, 1)
    n = t._data.shape[ax]
    pre = (slice(None),) * ax
    return [ops.getitem(t, pre + (i,)) for i in _brange(n)]


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None,
          name: str = "split") -> list[Tensor]:
    """Split into ``n`` equal parts, or parts of the given sizes (one may be -1).

    >>> import tapegrad.tf as tf
    >>> [t.shape for t in tf.split(tf.ones([5, 2]), [2, -1])]
    [TensorShape([2, 2]), TensorShape([3, 2])]
    """
    t = _t(value)
    nd = t._data.ndim
    ax = _int(axis) % _bmax(nd, 1)
    n = t._data.shape[ax]
    if isinstance(num_or_size_splits, (int, np.integer)):
        k = int(num_or_size_splits)
        if k <= 0 or n % k:
            raise _invalid(f"Number of ways to split should evenly divide the split dimension, "
                           f"but got split_dim {ax} (size = {n}) and num_split {k}",
                           f"{k} does not divide {n}", "Split", name, f"Split_num_split_{k}")
        sizes = [n // k] * k
    else:
        sizes = [int(s) for s in _shape_arg(num_or_size_splits)]
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = n - (_bsum(sizes) + 1)
        if _bsum(sizes) != n or builtins.any(s < 0 for s in sizes):
            raise _invalid(f"Determined shape must either match input shape along split_dim "
                           f"exactly if fully specified, or be less than the size of the input "
                           f"along split_dim if not fully specified.  Got: {_bsum(sizes)}",
                           f"the sizes must add up to {n}", "SplitV", name,
                           f"SplitV_num_split_{len(sizes)}")
    out = []
    start = 0
    for s in sizes:
        idx = (slice(None),) * ax + (slice(start, start + s),)
        out.append(ops.getitem(t, idx))
        start += s
    return out


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """Remove size-1 axes (only ``axis`` when given; other sizes are an error).

    >>> import tapegrad.tf as tf
    >>> tf.squeeze(tf.ones([1, 2, 1])).shape
    TensorShape([2])
    """
    t = _t(input)
    if axis is None:
        return ops.squeeze(t)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    nd = t._data.ndim
    for a in axes:
        a = int(a)
        if not -nd <= a < nd:
            raise _invalid(f"Tried to squeeze dim index {a} for tensor with {nd} dimensions.",
                           f"the tensor has rank {nd}", "Squeeze")
        if t._data.shape[a] != 1:
            raise _invalid(f"Can not squeeze dim[{a % nd}], expected a dimension of 1, got "
                           f"{t._data.shape[a]}", f"the tensor has shape {tuple(t._data.shape)}",
                           "Squeeze")
    return ops.squeeze(t, tuple(int(a) for a in axes))


def expand_dims(input: Any, axis: int, name: str | None = None) -> Tensor:
    """Insert a size-1 axis at ``axis``.

    >>> import tapegrad.tf as tf
    >>> tf.expand_dims(tf.ones([2]), 0).shape
    TensorShape([1, 2])
    """
    t = _t(input)
    nd = t._data.ndim
    a = _int(axis)
    if not -nd - 1 <= a <= nd:
        raise _invalid(f"Tried to expand dim index {a} for tensor with {nd} dimensions.",
                       f"axis must be in [{-nd - 1}, {nd}]", "ExpandDims")
    return ops.expand_dims(t, a)


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """Broadcast to ``shape`` (the gradient is summed back).

    >>> import tapegrad.tf as tf
    >>> tf.broadcast_to(tf.constant([1.0, 2.0]), [2, 2])
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 2.],
           [1., 2.]], dtype=float32)>
    """
    t = _t(input)
    shp = _shape_arg(shape)
    try:
        np.broadcast_shapes(t._data.shape, shp)
        ok = np.broadcast_shapes(t._data.shape, shp) == shp
    except ValueError:
        ok = False
    if not ok:
        raise _invalid(f"Incompatible shapes: {fmt_shape(t._data.shape)} vs. {fmt_shape(shp)}",
                       "each axis must match or be 1", "BroadcastTo", None)
    return ops.broadcast_to(t, shp)


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    """Repeat the tensor ``multiples[i]`` times along axis ``i``.

    >>> import tapegrad.tf as tf
    >>> tf.tile(tf.constant([[1, 2]]), [2, 1])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [1, 2]], dtype=int32)>
    """
    t = _t(input)
    m = _shape_arg(multiples)
    s = t._data.shape
    if len(m) != len(s):
        raise _invalid(f"Expected multiples argument to be a vector of length {len(s)} but got "
                       f"length {len(m)}", "one multiple per axis", "Tile", None)
    x = ops.reshape(t, tuple(v for d in s for v in (1, d)))
    x = ops.broadcast_to(x, tuple(v for k, d in zip(m, s) for v in (k, d)))
    return ops.reshape(x, tuple(k * d for k, d in zip(m, s)))


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0,
        name: str | None = None) -> Tensor:
    """Padding (``paddings`` one ``[before, after]`` pair per axis): ``CONSTANT``,
    ``REFLECT`` or ``SYMMETRIC`` (TensorFlow's MirrorPad).

    >>> import tapegrad.tf as tf
    >>> tf.pad(tf.constant([[1.0]]), [[1, 0], [0, 1]])
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0., 0.],
           [1., 0.]], dtype=float32)>
    """
    t = _t(tensor)
    m = str(mode).upper()
    if m not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise hinted(ValueError(with_hint(
            'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or '
            f'"SYMMETRIC". Received `mode` = {mode}', "use CONSTANT, REFLECT or SYMMETRIC")))
    pw = paddings._data.astype(int, copy=False) if isinstance(paddings, Tensor) else \
        np.asarray(paddings, dtype=int)  # a traced tensor's array keeps its mark
    op = "Pad" if m == "CONSTANT" else "MirrorPad"
    if pw.ndim != 2 or pw.shape[1] != 2:
        raise _invalid(f"paddings must be a matrix with 2 columns: {fmt_shape(pw.shape)}",
                       "one [before, after] pair per axis", op, None)
    if pw.shape[0] != t._data.ndim:
        raise _invalid("The first dimension of paddings must be the rank of inputs"
                       f"{fmt_shape(pw.shape)}{',' if op == 'MirrorPad' else ''} "
                       f"{fmt_shape(t._data.shape)}",
                       "one [before, after] pair per axis", op, None)
    # the pad widths as Python ints (of a traced tensor: noted, that signature runs eagerly)
    pw = np.asarray(pw.tolist(), dtype=int)
    if m == "CONSTANT":
        return ops.pad(t, pw, constant_values=float(np.asarray(constant_values)))
    from ..ops.padding import pad_mode

    for n, (a, b) in zip(t._data.shape, pw):  # MirrorPad's limits
        if m == "REFLECT" and (a >= n or b >= n):
            raise _invalid(f"paddings must be less than the dimension size: {a}, {b} not less "
                           f"than {n}", "REFLECT pads at most size - 1", "MirrorPad")
        if m == "SYMMETRIC" and (a > n or b > n):
            raise _invalid(f"paddings must be no greater than the dimension size: {a}, {b} "
                           f"greater than {n}", "SYMMETRIC pads at most size", "MirrorPad")
    return pad_mode(t, pw, m.lower())


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverse the order of elements along the given axes.

    >>> import tapegrad.tf as tf
    >>> tf.reverse(tf.constant([1.0, 2.0, 3.0]), [0])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([3., 2., 1.], dtype=float32)>
    """
    t = _t(tensor)
    return ops.flip(t, axis=_shape_arg(axis))


def _indices(indices: Any) -> np.ndarray:
    if isinstance(indices, Tensor):
        return indices._data
    return np.asarray(indices)


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None,
           batch_dims: int = 0, name: str | None = None) -> Tensor:
    """Take slices of ``params`` along ``axis`` (0 by default) at ``indices``.

    Repeated indices accumulate in the gradient.  (TensorFlow returns that
    gradient as ``tf.IndexedSlices``; here it is the equivalent dense tensor.)

    >>> import tapegrad.tf as tf
    >>> tf.gather(tf.constant([10.0, 20.0, 30.0]), [2, 0])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([30., 10.], dtype=float32)>
    """
    t = _t(params)
    traced = _traced(indices)
    if traced:
        from ..autodiff.tracing import quiet_values

        with quiet_values():  # checked on the trace's values, as TensorFlow checks them
            idx = _indices(indices)
    else:
        idx = _indices(indices)
    if idx.dtype.kind not in "iu":
        raise _invalid(
            f"Value for attr 'Tindices' of {_dt.kernel_name(idx.dtype)} is not in the list of "
            "allowed values: int16, int32, int64\n\t; NodeDef: {{node GatherV2}}; "
            "Op<name=GatherV2; signature=params:Tparams, indices:Tindices, axis:Taxis -> "
            "output:Tparams; attr=batch_dims:int,default=0; attr=Tparams:type; "
            "attr=Tindices:type,allowed=[DT_INT16, DT_INT32, DT_INT64]; "
            "attr=Taxis:type,allowed=[DT_INT32, DT_INT64]>", "indices must be integers",
            "GatherV2")
    nd = t._data.ndim
    ax = 0 if axis is None else int(axis._data if isinstance(axis, Tensor) else axis)
    if not -nd <= ax < _bmax(nd, 1):
        raise _invalid(f"Expected axis in the range [{-nd}, {nd}), but got {ax}",
                       f"params has rank {nd}", "GatherV2")
    ax %= _bmax(nd, 1)
    if int(batch_dims) != 0:
        raise hinted(NotImplementedError(with_hint("tf.gather with batch_dims != 0",
                                            "gather per batch element with tf.stack")))
    n = t._data.shape[ax]
    err: InvalidArgumentError | None = None
    if idx.ndim == 0 and not 0 <= int(idx) < n:
        err = _invalid(f"indices = {int(idx)} is not in [0, {n})",
                       f"axis {ax} of params has size {n}", "GatherV2")
    else:
        bad = np.argwhere((idx < 0) | (idx >= n))
        if bad.size:
            pos = tuple(int(i) for i in bad[0])
            where = "indices" + "".join(f"[{p}]" for p in pos)
            err = _invalid(f"{where} = {int(idx[pos])} is not in [0, {n})",
                           f"axis {ax} of params has size {n}", "GatherV2", None)
    if err is not None:
        if not traced and _STATE.levels:
            # inside tf.function: the op fails when it runs, if its value is needed
            from ..autodiff.tracing import deferred_error

            shp = t._data.shape[:ax] + idx.shape + t._data.shape[ax + 1:]
            return deferred_error(err, make(np.zeros(shp, t._data.dtype), None, False, TF))
        raise err
    if traced:  # a node of the program: GatherV2 (its run-time error names it)
        from ..autodiff.tracing import name_op

        return name_op(ops.take(t, indices, axis=ax), "GatherV2", str(ax))
    return ops.take(t, idx, axis=ax)


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Tensor:
    """Gather by index tuples: ``indices[..., k]`` indexes axis ``k`` of ``params``.

    >>> import tapegrad.tf as tf
    >>> tf.gather_nd(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [[1, 0]])
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([3.], dtype=float32)>
    """
    t = _t(params)
    traced = _traced(indices)
    if traced:
        from ..autodiff.tracing import quiet_values

        with quiet_values():  # checked on the trace's values, as TensorFlow checks them
            _gather_nd_index(t, _indices(indices))
        # indices that differ between calls (tf.function): index components are op inputs
        k = indices._data.shape[-1]
        return ops.getitem(t, tuple(ops.getitem(indices, (Ellipsis, j)) for j in _brange(k)))
    return ops.getitem(t, _gather_nd_index(t, _indices(indices)))


def _gather_nd_index(t: Tensor, idx: np.ndarray) -> tuple[Any, ...]:
    k = idx.shape[-1]
    index = tuple(idx[..., i] for i in _brange(k))
    for i, part in enumerate(index):
        n = t._data.shape[i]
        if np.any((part < 0) | (part >= n)):
            raise _invalid(f"indices contains an index out of bounds for axis {i} (size {n})",
                           f"params has shape {tuple(t._data.shape)}", "GatherNd")
    return index


def boolean_mask(tensor: Any, mask: Any, axis: Any = None, name: str = "boolean_mask") -> Tensor:
    """The elements of ``tensor`` where ``mask`` is True (gradient scattered back).

    >>> import tapegrad.tf as tf
    >>> tf.boolean_mask(tf.constant([1.0, 2.0, 3.0]), [True, False, True])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32)>
    """
    t = _t(tensor)
    m = _indices(mask).astype(bool)
    ax = 0 if axis is None else _int(axis)
    return ops.getitem(t, (slice(None),) * ax + (m,))


_ONE_HOT_TI = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64))
_ONE_HOT_SIG = (
    "\n\t; NodeDef: {{node OneHot}}; Op<name=OneHot; signature=indices:TI, depth:int32, "
    "on_value:T, off_value:T -> output:T; attr=axis:int,default=-1; attr=T:type; "
    "attr=TI:type,default=DT_INT64,allowed=[DT_UINT8, DT_INT8, DT_INT32, DT_INT64]>")


def _one_hot_indices(indices: Any, name: str | None) -> np.ndarray:
    """``indices`` as TensorFlow's OneHot takes them (attr TI: uint8, int8, int32, int64).

    A tensor must already have one of those dtypes; NumPy data is cast to
    int64; a Python list is converted as ``tf.constant`` would and, if that
    dtype is not allowed, once more as int64, as TensorFlow's eager fallback
    does (so bools pass and floats are refused).
    """
    if isinstance(indices, Tensor):
        arr = read(indices)._data if isinstance(indices, VariableBase) else indices._data
    elif isinstance(indices, (np.ndarray, np.generic)):
        return np.asarray(indices).astype(np.int64)
    elif isinstance(indices, (bool, int, float)):
        return constant_array(indices, np.int64)
    else:
        arr = _t(indices)._data
        if arr.dtype not in _ONE_HOT_TI:
            try:
                arr = constant_array(indices, np.int64)
            except (TypeError, ValueError):
                pass
    if arr.dtype not in _ONE_HOT_TI:
        raise _invalid(f"Value for attr 'TI' of {_dt.kernel_name(arr.dtype)} is not in the "
                       "list of allowed values: uint8, int8, int32, int64" + _ONE_HOT_SIG,
                       "indices must be integers: tf.cast them to tf.int32 or tf.int64",
                       "OneHot", name)
    return arr


def _one_hot_depth(depth: Any, name: str | None) -> np.ndarray:
    """``depth`` converted to int32 as TensorFlow's OneHot takes it (may wrap, as there)."""
    if isinstance(depth, Tensor):
        d = read(depth) if isinstance(depth, VariableBase) else depth
        if d._data.dtype != np.int32:
            if name is None or d._data.dtype.kind not in "fc":
                return _t(d, np.int32)._data   # TensorFlow's conversion ValueError
            raise _invalid(
                "cannot compute OneHot as input #1(zero-based) was expected to be a int32 "
                f"tensor but is a {_dt.kernel_name(d._data.dtype)} tensor",
                "depth must be an int32 tensor", "OneHot", name)
        return d._data
    if isinstance(depth, (np.ndarray, np.generic)):
        return np.asarray(depth).astype(np.int32)
    if type(depth) is int and -(2**63) <= depth < 2**63:
        return np.array(depth, np.int64).astype(np.int32)
    return _t(depth, np.int32)._data


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: Any = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """One-hot encoding of integer ``indices`` (float32 by default).

    Indices out of ``[0, depth)`` give a row of ``off_value``.  The arguments
    are checked as TensorFlow checks them, with its exceptions and messages:
    float indices, non-scalar ``depth``/``on_value``/``off_value``, a negative
    ``depth``, an ``axis`` out of range, and ``on_value``/``off_value``/``dtype``
    that disagree.

    >>> import tapegrad.tf as tf
    >>> tf.one_hot([0, 2], depth=3)
    <tf.Tensor: shape=(2, 3), dtype=float32, numpy=
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)>
    """
    dt = None if dtype is None else _dt.as_dtype(dtype)
    on = None if on_value is None else convert(on_value, dtype_hint=dt)
    off = None if off_value is None else convert(off_value, dtype_hint=dt)
    on_dt = None if on is None else _dt.as_dtype(on._data.dtype)
    off_dt = None if off is None else _dt.as_dtype(off._data.dtype)
    if on is not None or off is not None:
        if dt is not None:
            for what, got in (("on_value", on_dt), ("off_value", off_dt)):
                if got is not None and got != dt:
                    raise hinted(TypeError(with_hint(
                        f"dtype {got} of {what} does not match dtype parameter {dt}",
                        f"write {what} in the dtype given, or leave dtype out")))
        else:
            dt = on_dt if on_dt is not None else off_dt
    elif dt is None:
        dt = _dt.float32
    assert dt is not None
    npd = _dt.np_dtype(dt)
    on_arr = constant_array(1, npd) if on is None else on._data
    off_arr = constant_array(0, npd) if off is None else off._data
    on_dt = _dt.as_dtype(on_arr.dtype)
    off_dt = _dt.as_dtype(off_arr.dtype)
    if on_dt != off_dt:
        raise hinted(TypeError(with_hint(
            f"dtype {on_dt} of on_value does not match dtype {off_dt} of off_value",
            "give on_value and off_value the same dtype")))
    # TensorFlow's eager fast path appends " name: " to kernel errors; its fallback, taken
    # for Python sequences and depths it cannot pass straight through, does not
    seq = isinstance(indices, (list, tuple)) or isinstance(depth, (list, tuple)) or (
        isinstance(depth, np.generic) and np.asarray(depth).dtype != np.int32)
    kname: str | None = None if seq else ""
    idx = _one_hot_indices(indices, kname)
    dep = _one_hot_depth(depth, kname)
    ax = -1 if axis is None else int(axis._data if isinstance(axis, Tensor) else axis)
    out_dims = idx.ndim + 1
    if not (ax == -1 or 0 <= ax < out_dims):
        raise _invalid(f"Expected axis to be -1 or between [0, {out_dims}).  But received: "
                       f"{ax}", f"the output has rank {out_dims}", "OneHot", kname)
    for what, arr in (("depth", dep), ("on_value", on_arr), ("off_value", off_arr)):
        if arr.ndim != 0:
            raise _invalid(f"{what} must be a scalar, but got: "
                           f"[{','.join(str(s) for s in arr.shape)}]",
                           f"{what} has shape {tuple(arr.shape)}", "OneHot", kname)
    d = int(dep)
    if d < 0:
        raise _invalid(f"depth must be non-negative, got: {d}", "depth is the number "
                       "of classes", "OneHot", kname)
    if isinstance(indices, Tensor) and _traced(indices):
        # indices that differ between calls (tf.function): the encoding is ops on them
        ind = read(indices) if isinstance(indices, VariableBase) else indices
        hot_t = ops.equal(ops.expand_dims(ops.cast(ind, dtype=np.int64), -1),
                          np.arange(d, dtype=np.int64))
        res = ops.where(hot_t, on_arr, off_arr)
        if res._data.dtype != npd:
            res = ops.cast(res, dtype=npd)
        return res if ax == -1 else ops.moveaxis(res, -1, ax)
    hot = idx.astype(np.int64)[..., None] == np.arange(d)
    out = np.where(hot, on_arr, off_arr).astype(npd)
    if ax != -1:
        out = np.moveaxis(out, -1, ax)
    return tft(out)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Select from ``x`` where ``condition`` is True, else from ``y`` (broadcasting).

    With only ``condition``: the int64 coordinates of its True elements.  The
    gradient goes only to the branch taken, so a NaN/inf in the other branch's
    value does not reach the gradient (but its own gradient must be finite:
    see ``tf.sqrt``).

    >>> import tapegrad.tf as tf
    >>> tf.where(tf.constant([True, False]), 1.0, 0.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 0.], dtype=float32)>
    """
    c = _t(condition)
    if x is None and y is None:
        return tft(np.argwhere(c._data).astype(np.int64))
    if x is None or y is None:
        raise hinted(ValueError(with_hint("x and y must both be non-None or both be None.",
                                   "pass both branches, or neither")))
    if c._data.dtype.kind != "b":
        raise _invalid(f"cannot compute SelectV2 as input #0(zero-based) was expected to be a "
                       f"bool tensor but is a {_dt.kernel_name(c._data.dtype)} tensor",
                       "the condition must be a bool tensor", "SelectV2")
    a, b = binary_args(x, y, function=True, name="SelectV2")
    check_broadcast(c, a, "SelectV2")
    check_broadcast(c, b, "SelectV2")
    return ops.where(c, a, b)  # the condition is an input (traced: not a constant)


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: str | None = None) -> Tensor:
    """Clip to ``[min, max]``; the gradient is 1 inside and *at* the bounds (TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.clip_by_value(tf.constant([-2.0, 0.5, 2.0]), -1.0, 1.0)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([-1. ,  0.5,  1. ], dtype=float32)>
    """
    x = _t(t)
    lo = clip_value_min if isinstance(clip_value_min, Tensor) else \
        convert_like(clip_value_min, x._data.dtype, False)
    hi = clip_value_max if isinstance(clip_value_max, Tensor) else \
        convert_like(clip_value_max, x._data.dtype, False)
    lo = read(lo) if isinstance(lo, VariableBase) else lo
    hi = read(hi) if isinstance(hi, VariableBase) else hi
    for bound in (lo, hi):
        if bound._data.dtype != x._data.dtype:
            binary_args(x, bound, "Maximum")
    return ops.clip(x, lo, hi)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """Scale ``t`` so that its L2 norm over ``axes`` is at most ``clip_norm`` (TF's formula).

    >>> import tapegrad.tf as tf
    >>> tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.6, 0.8], dtype=float32)>
    """
    x = _t(t)
    cn = convert_like(clip_norm, x._data.dtype, False)
    l2sum = reduce_sum(ops.multiply(x, x), axis=axes, keepdims=True)
    pred = ops.greater(l2sum, 0)
    safe = ops.where(pred, l2sum, 1.0)
    l2norm = ops.where(pred, ops.sqrt(safe, zero_safe=True), l2sum)
    return ops.divide(ops.multiply(x, cn), ops.maximum(l2norm, cn, ties="first"))


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """Sorted values along ``axis`` (the gradient follows the permutation).

    >>> import tapegrad.tf as tf
    >>> tf.sort(tf.constant([3.0, 1.0, 2.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 2., 3.], dtype=float32)>
    """
    t = _t(values)
    idx = argsort(t, axis, direction)._data
    ax = _int(axis) % _bmax(t._data.ndim, 1)
    grid: list[Any] = list(np.indices(idx.shape, sparse=True))
    grid[ax] = idx
    return ops.getitem(t, tuple(grid))


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """Indices that sort ``values`` along ``axis`` (int32).

    >>> import tapegrad.tf as tf
    >>> tf.argsort(tf.constant([3.0, 1.0, 2.0]))
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 0], dtype=int32)>
    """
    t = _t(values)
    idx = np.argsort(t._data, axis=axis, kind="stable")
    if direction == "DESCENDING":
        idx = np.flip(idx, axis=axis)
    return tft(idx.astype(np.int32))


def meshgrid(*args: Any, indexing: str = "xy", **kwargs: Any) -> list[Tensor]:
    """Coordinate grids (no gradient), ``indexing='xy'`` as NumPy.

    >>> import tapegrad.tf as tf
    >>> [t.shape for t in tf.meshgrid(tf.range(2), tf.range(3))]
    [TensorShape([3, 2]), TensorShape([3, 2])]
    """
    arrays: list[Any] = [_t(x)._data for x in args]
    return [tft(a) for a in np.meshgrid(*arrays, indexing=indexing)]  # type: ignore[call-overload]

