"""``keras.ops``: Keras 3's backend-agnostic ops, as on the TensorFlow backend.

Each op delegates to ``tapegrad.tf`` with Keras 3's conventions: its dtype promotion
(``int32 + float32 -> float32``, a Python scalar takes the other operand's dtype,
``divide`` and the transcendental ops give ``floatx`` for integers), NumPy-style
names and arguments (``axis``, ``keepdims``), and tf tensors as results.

>>> import tapegrad.tf as tf
>>> from tapegrad.tf.keras import ops
>>> ops.divide(ops.convert_to_tensor([1, 2]), 2).dtype
tf.float32
>>> ops.sum(ops.ones((2, 3)), axis=1).numpy()
array([3., 3.], dtype=float32)
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _ops as T
from .. import _ops_more as TM
from .. import nn as N
from .._tensor import VariableBase, read

_FLOATX = np.dtype(np.float32)
_EPS = 1e-7


# ------------------------------------------------------------------ dtypes (Keras's lattice)
def _dtype_of(x: Any) -> Any:
    """A dtype for promotion: ``int``/``float``/``bool`` stand for weak Python scalars."""
    if isinstance(x, (Tensor, np.ndarray, np.generic)):
        return np.dtype(x._data.dtype if isinstance(x, Tensor) else x.dtype)
    if isinstance(x, builtins.bool):
        return builtins.bool
    if isinstance(x, builtins.int):
        return builtins.int
    if isinstance(x, builtins.float):
        return builtins.float
    return np.asarray(x).dtype if not isinstance(x, (list, tuple)) else \
        _tensor(x)._data.dtype


def _int_join(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    if s.itemsize > u.itemsize:
        return s
    return np.dtype(f"int{builtins.min(64, 2 * u.itemsize * 8)}")


def result_type(*dtypes: Any) -> np.dtype:
    """Keras 3's ``dtypes.result_type``: JAX-like promotion with weak Python scalars."""
    strong = [np.dtype(d) for d in dtypes if isinstance(d, np.dtype)]
    weak = [d for d in dtypes if not isinstance(d, np.dtype)]
    floats = [d for d in strong if d.kind in "fc"]
    if floats:
        if builtins.any(d.kind == "c" for d in floats):
            return builtins.max((d for d in floats if d.kind == "c"), key=lambda d: d.itemsize)
        out = builtins.max(floats, key=lambda d: d.itemsize)
        if out == np.float16 and builtins.any(d.name == "bfloat16" for d in floats):
            return np.dtype(np.float32)
        return out
    if builtins.float in weak:
        return _FLOATX
    ints = [d for d in strong if d.kind in "iu"]
    if ints:
        out = ints[0]
        for d in ints[1:]:
            out = _int_join(out, d)
        return out
    if strong and builtins.int not in weak:
        return np.dtype(np.bool_)
    if builtins.int in weak:
        return np.dtype(np.int32)
    return np.dtype(np.bool_)


def _tensor(x: Any, dtype: Any = None) -> Tensor:
    if isinstance(x, VariableBase):
        t = read(x)
    elif isinstance(x, Tensor):
        t = x
    else:
        t = T.convert_to_tensor(x)
    if dtype is not None and t._data.dtype != np.dtype(dtype):
        t = T.cast(t, np.dtype(dtype).name)
    return t


def _float(x: Any) -> Tensor:
    """A tensor, integers and booleans cast to ``floatx`` (Keras's unary float ops)."""
    t = _tensor(x)
    return t if t._data.dtype.kind in "fc" else T.cast(t, "float32")


def _binary(fn: Callable[[Any, Any], Any], x1: Any, x2: Any, to_float: bool = False) -> Any:
    dt = result_type(_dtype_of(x1), _dtype_of(x2), *((builtins.float,) if to_float else ()))
    return fn(_tensor(x1, dt), _tensor(x2, dt))


def _ax(axis: Any) -> Any:
    return list(axis) if isinstance(axis, tuple) else axis


# ------------------------------------------------------------------ creation and conversion
def convert_to_tensor(x: Any, dtype: Any = None, sparse: Any = None, ragged: Any = None
                      ) -> Tensor:
    if dtype is not None:
        from .. import dtypes as _dt

        return _tensor(x, _dt.np_dtype(dtype))
    return _tensor(x)


def convert_to_numpy(x: Any) -> np.ndarray:
    return np.array(_tensor(x)._data)


def cast(x: Any, dtype: Any) -> Tensor:
    from .. import dtypes as _dt

    return T.cast(_tensor(x), _dt.as_dtype(dtype))


def shape(x: Any) -> tuple[Any, ...]:
    """The static shape, a tuple of ints (Keras 3 on TensorFlow, eagerly)."""
    return tuple(int(s) for s in _tensor(x)._data.shape)


def ndim(x: Any) -> int:
    return int(_tensor(x)._data.ndim)


def size(x: Any) -> Tensor:
    return T.convert_to_tensor(np.int32(_tensor(x)._data.size))


def _dt_or(dtype: Any, default: Any) -> str:
    from .. import dtypes as _dt

    return _dt.np_dtype(default if dtype is None else dtype).name


def zeros(shape: Any, dtype: Any = None) -> Tensor:
    return T.zeros(shape, dtype=_dt_or(dtype, "float32"))


def ones(shape: Any, dtype: Any = None) -> Tensor:
    return T.ones(shape, dtype=_dt_or(dtype, "float32"))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    dt = _dt_or(dtype, result_type(_dtype_of(fill_value)))
    return T.fill(list(shape) if not isinstance(shape, int) else [shape],
                  _tensor(fill_value, dt))


def zeros_like(x: Any, dtype: Any = None) -> Tensor:
    t = _tensor(x)
    return T.zeros(t._data.shape, dtype=_dt_or(dtype, t._data.dtype))


def ones_like(x: Any, dtype: Any = None) -> Tensor:
    t = _tensor(x)
    return T.ones(t._data.shape, dtype=_dt_or(dtype, t._data.dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    t = _tensor(x)
    return full(t._data.shape, fill_value, dtype or t._data.dtype)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:
    return T.convert_to_tensor(np.eye(N, M, k, dtype=_dt_or(dtype, "float32")))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Tensor:
    if dtype is None:
        dts = [_dtype_of(v) for v in (start, stop, step) if v is not None]
        dt = result_type(*dts)
        if dt.kind == "b":
            dt = np.dtype(np.int32)
    else:
        dt = np.dtype(_dt_or(dtype, "int32"))
    if stop is None:
        start, stop = 0, start
    return T.range(_tensor(start, dt), _tensor(stop, dt), _tensor(1 if step is None else step,
                                                                  dt))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    dt = np.dtype(_dt_or(dtype, result_type(_dtype_of(start), _dtype_of(stop),
                                            builtins.float)))
    arr, step = np.linspace(np.asarray(_tensor(start)._data, np.float64),
                            np.asarray(_tensor(stop)._data, np.float64), int(num),
                            endpoint=endpoint, retstep=True, axis=axis)
    out = T.convert_to_tensor(arr.astype(dt))
    return (out, T.convert_to_tensor(np.asarray(step, dt))) if retstep else out


# ------------------------------------------------------------------ elementwise arithmetic
def add(x1: Any, x2: Any) -> Tensor:
    return _binary(T.add, x1, x2)


def subtract(x1: Any, x2: Any) -> Tensor:
    return _binary(T.subtract, x1, x2)


def multiply(x1: Any, x2: Any) -> Tensor:
    return _binary(T.multiply, x1, x2)


def divide(x1: Any, x2: Any) -> Tensor:
    return _binary(T.divide, x1, x2, to_float=True)


true_divide = divide


def divide_no_nan(x1: Any, x2: Any) -> Tensor:
    return _binary(T.divide_no_nan, x1, x2, to_float=True)


def floor_divide(x1: Any, x2: Any) -> Tensor:
    return _binary(T.floordiv, x1, x2)


def mod(x1: Any, x2: Any) -> Tensor:
    return _binary(T.floormod, x1, x2)


def power(x1: Any, x2: Any) -> Tensor:
    return _binary(T.pow, x1, x2)


def maximum(x1: Any, x2: Any) -> Tensor:
    return _binary(T.maximum, x1, x2)


def minimum(x1: Any, x2: Any) -> Tensor:
    return _binary(T.minimum, x1, x2)


def negative(x: Any) -> Tensor:
    return T.negative(_tensor(x))


def abs(x: Any) -> Tensor:
    t = _tensor(x)
    return t if t._data.dtype.kind in "bu" else T.abs(t)


absolute = abs


def sign(x: Any) -> Tensor:
    return T.sign(_tensor(x))


def square(x: Any) -> Tensor:
    t = _tensor(x)
    if t._data.dtype.kind == "b":
        t = T.cast(t, "int32")
    return T.square(t)


def _unary_float(fn: Callable[[Any], Any]) -> Callable[[Any], Tensor]:
    def op(x: Any) -> Tensor:
        return fn(_float(x))

    op.__name__ = getattr(fn, "__name__", "op")
    op.__doc__ = f"Keras's ``{op.__name__}`` (integers and booleans become floatx)."
    return op


exp = _unary_float(T.exp)
expm1 = _unary_float(T.expm1)
log = _unary_float(T.log)
log1p = _unary_float(T.log1p)
sqrt = _unary_float(T.sqrt)
rsqrt = _unary_float(T.rsqrt)
sin = _unary_float(T.sin)
cos = _unary_float(T.cos)
tan = _unary_float(T.tan)
tanh = _unary_float(T.tanh)
sinh = _unary_float(T.sinh)
cosh = _unary_float(T.cosh)
arcsin = _unary_float(TM.asin)
arccos = _unary_float(TM.acos)
arctan = _unary_float(TM.atan)


def log2(x: Any) -> Tensor:
    t = _float(x)
    return T.divide(T.log(t), T.log(_tensor(2.0, t._data.dtype)))


def log10(x: Any) -> Tensor:
    t = _float(x)
    return T.divide(T.log(t), T.log(_tensor(10.0, t._data.dtype)))


def reciprocal(x: Any) -> Tensor:
    return divide(1.0, x)


def floor(x: Any) -> Tensor:
    return T.floor(_float(x))


def ceil(x: Any) -> Tensor:
    return T.ceil(_float(x))


def round(x: Any, decimals: int = 0) -> Tensor:
    t = _tensor(x)
    if decimals == 0:
        return T.round(t) if t._data.dtype.kind in "fc" else t
    f = _tensor(10.0 ** decimals, t._data.dtype if t._data.dtype.kind == "f" else "float32")
    return T.divide(T.round(T.multiply(_float(t), f)), f)


def erf(x: Any) -> Tensor:
    return T.erf(_tensor(x))


def clip(x: Any, x_min: Any, x_max: Any) -> Tensor:
    t = _tensor(x)
    if t._data.dtype.kind == "b":
        t = T.cast(t, "int32")
    dt = t._data.dtype
    return T.clip_by_value(t, _tensor(x_min, dt), _tensor(x_max, dt))


# ------------------------------------------------------------------ comparisons and logic
def equal(x1: Any, x2: Any) -> Tensor:
    return _binary(T.equal, x1, x2)


def not_equal(x1: Any, x2: Any) -> Tensor:
    return _binary(T.not_equal, x1, x2)


def greater(x1: Any, x2: Any) -> Tensor:
    return _binary(T.greater, x1, x2)


def greater_equal(x1: Any, x2: Any) -> Tensor:
    return _binary(T.greater_equal, x1, x2)


def less(x1: Any, x2: Any) -> Tensor:
    return _binary(T.less, x1, x2)


def less_equal(x1: Any, x2: Any) -> Tensor:
    return _binary(T.less_equal, x1, x2)


def logical_and(x1: Any, x2: Any) -> Tensor:
    return T.logical_and(_tensor(x1, np.bool_), _tensor(x2, np.bool_))


def logical_or(x1: Any, x2: Any) -> Tensor:
    return T.logical_or(_tensor(x1, np.bool_), _tensor(x2, np.bool_))


def logical_not(x: Any) -> Tensor:
    return T.logical_not(_tensor(x, np.bool_))


def isnan(x: Any) -> Tensor:
    t = _tensor(x)
    return T.is_nan(t) if t._data.dtype.kind in "fc" else \
        T.convert_to_tensor(np.zeros(t._data.shape, np.bool_))


def isinf(x: Any) -> Tensor:
    t = _tensor(x)
    return T.is_inf(t) if t._data.dtype.kind in "fc" else \
        T.convert_to_tensor(np.zeros(t._data.shape, np.bool_))


def isfinite(x: Any) -> Tensor:
    t = _tensor(x)
    return T.is_finite(t) if t._data.dtype.kind in "fc" else \
        T.convert_to_tensor(np.ones(t._data.shape, np.bool_))


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return T.reduce_any(_tensor(x, np.bool_), axis=_ax(axis), keepdims=keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return T.reduce_all(_tensor(x, np.bool_), axis=_ax(axis), keepdims=keepdims)


def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    c = _tensor(condition, np.bool_)
    if x1 is None and x2 is None:
        return [T.convert_to_tensor(i.astype(np.int32)) for i in np.nonzero(c._data)]
    if x1 is None or x2 is None:
        raise hinted(ValueError(with_hint(
            "`x1` and `x2` either both should be `None` or both should have non-None value.",
            "pass both branches, or neither")))
    dt = result_type(_dtype_of(x1), _dtype_of(x2))
    return T.where(c, _tensor(x1, dt), _tensor(x2, dt))


# ------------------------------------------------------------------ reductions
def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    t = _tensor(x)
    k = t._data.dtype
    if k.kind == "b" or (k.kind == "i" and k.itemsize < 4):
        t = T.cast(t, "int32")
    elif k.kind == "u" and k.itemsize < 4:
        t = T.cast(t, "uint32")
    return T.reduce_sum(t, axis=_ax(axis), keepdims=keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return T.reduce_mean(_float(x), axis=_ax(axis), keepdims=keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Tensor:
    out = T.reduce_max(_tensor(x), axis=_ax(axis), keepdims=keepdims)
    return out if initial is None else maximum(out, initial)


def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Tensor:
    out = T.reduce_min(_tensor(x), axis=_ax(axis), keepdims=keepdims)
    return out if initial is None else minimum(out, initial)


amax = max
amin = min


def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    t = _tensor(x) if dtype is None else _tensor(x, _dt_or(dtype, "float32"))
    if t._data.dtype.kind == "b":
        t = T.cast(t, "int32")
    return T.reduce_prod(t, axis=_ax(axis), keepdims=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return T.reduce_variance(_float(x), axis=_ax(axis), keepdims=keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return T.reduce_std(_float(x), axis=_ax(axis), keepdims=keepdims)


def _arg(fn: Callable[..., Any], x: Any, axis: Any, keepdims: bool) -> Tensor:
    t = _tensor(x)
    if axis is None:
        t = T.reshape(t, [-1])
        axis = 0
    out = fn(t, axis=axis, output_type="int32")
    if keepdims:
        out = T.expand_dims(out, axis)
    return out


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _arg(T.argmax, x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _arg(T.argmin, x, axis, keepdims)


def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    t = _tensor(x) if dtype is None else _tensor(x, _dt_or(dtype, "float32"))
    if t._data.dtype.kind == "b":
        t = T.cast(t, "int32")
    if axis is None:
        t, axis = T.reshape(t, [-1]), 0
    out = T.cumsum(t, axis=axis)
    if out._data.dtype != t._data.dtype:  # tapegrad's tf.cumsum widens int32 (TF keeps it)
        out = T.cast(out, t._data.dtype.name)
    return out


def cumprod(x: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    t = _tensor(x) if dtype is None else _tensor(x, _dt_or(dtype, "float32"))
    if t._data.dtype.kind == "b":
        t = T.cast(t, "int32")
    if axis is None:
        t, axis = T.reshape(t, [-1]), 0
    return TM.cumprod(t, axis=axis)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return T.reduce_logsumexp(_tensor(x), axis=_ax(axis), keepdims=keepdims)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``keras.ops.norm``: the vector 2-norm (or ``ord``), Frobenius for matrices."""
    t = _float(x)
    if ord is None or ord == "fro" or ord == 2 and not isinstance(axis, (tuple, list)):
        return T.sqrt(T.reduce_sum(T.square(t), axis=_ax(axis), keepdims=keepdims))
    if ord == 1 and not isinstance(axis, (tuple, list)):
        return T.reduce_sum(T.abs(t), axis=_ax(axis), keepdims=keepdims)
    if ord in (np.inf, float("inf")) and not isinstance(axis, (tuple, list)):
        return T.reduce_max(T.abs(t), axis=_ax(axis), keepdims=keepdims)
    if isinstance(ord, (int, float)) and not isinstance(axis, (tuple, list)) and ord > 0:
        p = _tensor(float(ord), t._data.dtype)
        s = T.reduce_sum(T.pow(T.abs(t), p), axis=_ax(axis), keepdims=keepdims)
        return T.pow(s, T.divide(_tensor(1.0, t._data.dtype), p))
    raise hinted(NotImplementedError(with_hint(
        f"keras.ops.norm(ord={ord!r}, axis={axis!r}) is not implemented in tapegrad",
        "use ord=None/'fro'/1/2/inf or p > 0 over one axis")))


# ------------------------------------------------------------------ shapes and layout
def reshape(x: Any, newshape: Any) -> Tensor:
    return T.reshape(_tensor(x), [newshape] if isinstance(newshape, int) else list(newshape))


def transpose(x: Any, axes: Any = None) -> Tensor:
    return T.transpose(_tensor(x), perm=None if axes is None else list(axes))


def expand_dims(x: Any, axis: Any) -> Tensor:
    t = _tensor(x)
    if isinstance(axis, (list, tuple)):
        for a in sorted(a % (t._data.ndim + len(axis)) for a in axis):
            t = T.expand_dims(t, a)
        return t
    return T.expand_dims(t, axis)


def squeeze(x: Any, axis: Any = None) -> Tensor:
    return T.squeeze(_tensor(x), axis=None if axis is None else
                     (list(axis) if isinstance(axis, (list, tuple)) else [axis]))


def _same(xs: Any) -> list[Tensor]:
    ts = [_tensor(v) for v in xs]
    dt = result_type(*[t._data.dtype for t in ts])
    return [_tensor(t, dt) for t in ts]


def concatenate(xs: Any, axis: int = 0) -> Tensor:
    return T.concat(_same(xs), axis=axis)


def stack(x: Any, axis: int = 0) -> Tensor:
    return T.stack(_same(x), axis=axis)


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    t = _tensor(x)
    if isinstance(indices_or_sections, int):
        return list(T.split(t, indices_or_sections, axis=axis))
    n = t._data.shape[axis]
    edges = [0] + [int(i) for i in indices_or_sections] + [n]
    return list(T.split(t, [b - a for a, b in zip(edges[:-1], edges[1:])], axis=axis))


def tile(x: Any, repeats: Any) -> Tensor:
    t = _tensor(x)
    reps = [repeats] if isinstance(repeats, int) else list(repeats)
    if len(reps) < t._data.ndim:
        reps = [1] * (t._data.ndim - len(reps)) + reps
    elif len(reps) > t._data.ndim:
        t = T.reshape(t, [1] * (len(reps) - t._data.ndim) + list(t._data.shape))
    return T.tile(t, reps)


def repeat(x: Any, repeats: Any, axis: Any = None) -> Tensor:
    t = _tensor(x)
    if axis is None:
        t, axis = T.reshape(t, [-1]), 0
    return TM.repeat(t, repeats, axis=axis)


def flip(x: Any, axis: Any = None) -> Tensor:
    t = _tensor(x)
    ax = list(range(t._data.ndim)) if axis is None else \
        (list(axis) if isinstance(axis, (list, tuple)) else [axis])
    return T.reverse(t, ax)


def broadcast_to(x: Any, shape: Any) -> Tensor:
    return T.broadcast_to(_tensor(x), list(shape))


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> Tensor:
    t = _tensor(x)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (t._data.ndim, 2))
    return T.pad(t, pw.tolist(), mode=mode.upper(),
                 constant_values=0 if constant_values is None else constant_values)


def take(x: Any, indices: Any, axis: Any = None) -> Tensor:
    t = _tensor(x)
    idx = _tensor(indices)
    if idx._data.dtype.kind not in "iu":
        idx = T.cast(idx, "int32")
    if axis is None:
        t, axis = T.reshape(t, [-1]), 0
    n = t._data.shape[axis]
    # Keras wraps negative indices (NumPy's take)
    idx = T.convert_to_tensor(np.where(idx._data < 0, idx._data + n, idx._data))
    return T.gather(t, idx, axis=axis)


def take_along_axis(x: Any, indices: Any, axis: Any = None) -> Tensor:
    t = _tensor(x)
    idx = np.asarray(_tensor(indices)._data)
    if axis is None:
        t, axis = T.reshape(t, [-1]), 0
    ax = axis % t._data.ndim
    n = t._data.shape[ax]
    idx = np.where(idx < 0, idx + n, idx)
    shp = np.broadcast_shapes(tuple(s if i != ax else 1 for i, s in enumerate(t._data.shape)),
                              tuple(s if i != ax else 1 for i, s in enumerate(idx.shape)))
    full_idx = np.broadcast_to(idx, shp[:ax] + (idx.shape[ax],) + shp[ax + 1:])
    grids = list(np.meshgrid(*[np.arange(s) for s in full_idx.shape], indexing="ij"))
    grids[ax] = full_idx
    src_shape = shp[:ax] + (n,) + shp[ax + 1:]
    src = T.broadcast_to(t, list(src_shape))
    nd = np.stack(grids, axis=-1).astype(np.int64)
    return T.gather_nd(src, T.convert_to_tensor(nd))


def slice(inputs: Any, start_indices: Any, shape: Any) -> Tensor:
    t = _tensor(inputs)
    st = [int(v) for v in np.asarray(_tensor(start_indices)._data).reshape(-1)]
    sh = [int(v) for v in np.asarray(_tensor(shape)._data).reshape(-1)]
    return TM.slice(t, st, sh) if hasattr(TM, "slice") else \
        t[tuple(builtins.slice(a, a + b) for a, b in zip(st, sh))]


def scatter(indices: Any, values: Any, shape: Any) -> Tensor:
    """Zeros of ``shape`` with ``values`` added at ``indices`` (duplicates summed)."""
    from .._indexing import scatter_nd

    return scatter_nd(_tensor(indices), _tensor(values), list(shape))


def scatter_update(inputs: Any, indices: Any, updates: Any) -> Tensor:
    from .._indexing import tensor_scatter_nd_update

    return tensor_scatter_nd_update(_tensor(inputs), _tensor(indices), _tensor(updates))


def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None,
            sparse: bool = False) -> Tensor:
    return T.one_hot(_tensor(x), int(num_classes), axis=axis,
                     dtype=_dt_or(dtype, "float32"))


def sort(x: Any, axis: int = -1) -> Tensor:
    return T.sort(_tensor(x), axis=axis)


def argsort(x: Any, axis: int = -1) -> Tensor:
    t = _tensor(x)
    if t._data.ndim == 0:
        return T.convert_to_tensor(np.int32(0))
    return T.argsort(t, axis=axis, stable=True)


def top_k(x: Any, k: int, sorted: bool = True) -> Any:
    return TM.top_k(_tensor(x), k=k, sorted=sorted)


# ------------------------------------------------------------------ linear algebra
def matmul(x1: Any, x2: Any) -> Tensor:
    a, b = _same([x1, x2])
    if a._data.ndim == 1 or b._data.ndim == 1:
        return T.convert_to_tensor(np.matmul(a._data, b._data)) if a._data.dtype.kind != "f" \
            else _vec_matmul(a, b)
    return T.matmul(a, b)


def _vec_matmul(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim == 1 and b._data.ndim == 1:
        return T.reduce_sum(T.multiply(a, b))
    if a._data.ndim == 1:
        return T.squeeze(T.matmul(T.expand_dims(a, 0), b), [-2])
    return T.squeeze(T.matmul(a, T.expand_dims(b, -1)), [-1])


def dot(x1: Any, x2: Any) -> Tensor:
    a, b = _same([x1, x2])
    if a._data.ndim == 0 or b._data.ndim == 0:
        return T.multiply(a, b)
    if b._data.ndim <= 2:
        return matmul(a, b)
    return T.tensordot(a, b, axes=[[a._data.ndim - 1], [b._data.ndim - 2]])


def einsum(subscripts: str, *operands: Any) -> Tensor:
    return T.einsum(subscripts, *_same(operands))


def tensordot(x1: Any, x2: Any, axes: Any = 2) -> Tensor:
    a, b = _same([x1, x2])
    return T.tensordot(a, b, axes=axes)


def outer(x1: Any, x2: Any) -> Tensor:
    a, b = _same([x1, x2])
    return T.multiply(T.reshape(a, [-1, 1]), T.reshape(b, [1, -1]))


# ------------------------------------------------------------------ nn
def relu(x: Any) -> Tensor:
    return N.relu(_tensor(x))


def relu6(x: Any) -> Tensor:
    return N.relu6(_tensor(x))


def sigmoid(x: Any) -> Tensor:
    return T.sigmoid(_tensor(x))


def softplus(x: Any) -> Tensor:
    return N.softplus(_tensor(x))


def softsign(x: Any) -> Tensor:
    return N.softsign(_tensor(x))


def silu(x: Any) -> Tensor:
    return N.silu(_tensor(x))


swish = silu


def gelu(x: Any, approximate: bool = True) -> Tensor:
    return N.gelu(_tensor(x), approximate=approximate)


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    from .activations import elu as _elu

    return _elu(_tensor(x), alpha=alpha)


def selu(x: Any) -> Tensor:
    return N.selu(_tensor(x))


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
    return N.leaky_relu(_tensor(x), alpha=negative_slope)


def log_sigmoid(x: Any) -> Tensor:
    return TM.log_sigmoid(_tensor(x))


def _softmax_axes(fn: Callable[..., Any], x: Any, axis: Any) -> Tensor:
    t = _tensor(x)
    if isinstance(axis, (tuple, list)):
        # Keras: move the axes last, flatten them, apply, and restore
        nd = t._data.ndim
        ax = [a % nd for a in axis]
        keep = [i for i in range(nd) if i not in ax]
        perm = keep + ax
        y = T.transpose(t, perm)
        shp = [t._data.shape[i] for i in perm]
        y = fn(T.reshape(y, [*shp[:len(keep)], -1]), axis=-1)
        y = T.reshape(y, shp)
        return T.transpose(y, list(np.argsort(perm)))
    return fn(t, axis=-1 if axis is None else axis)


def softmax(x: Any, axis: Any = -1) -> Tensor:
    return _softmax_axes(N.softmax, x, axis)


def log_softmax(x: Any, axis: Any = -1) -> Tensor:
    return _softmax_axes(N.log_softmax, x, axis)


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Tensor:
    t, o = _tensor(target), _tensor(output)
    if from_logits:
        return N.sigmoid_cross_entropy_with_logits(labels=t, logits=o)
    dt = o._data.dtype
    o = T.clip_by_value(o, _tensor(_EPS, dt), _tensor(1.0 - _EPS, dt))
    bce = T.multiply(t, T.log(o))
    one = _tensor(1, t._data.dtype)
    bce = T.add(bce, T.multiply(T.subtract(one, t), T.log(T.subtract(_tensor(1, dt), o))))
    return T.negative(bce)


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                             axis: int = -1) -> Tensor:
    t, o = _tensor(target), _tensor(output)
    if from_logits:
        return N.softmax_cross_entropy_with_logits(labels=t, logits=o, axis=axis)
    dt = o._data.dtype
    o = T.divide(o, T.reduce_sum(o, axis, keepdims=True))
    o = T.clip_by_value(o, _tensor(_EPS, dt), _tensor(1.0 - _EPS, dt))
    return T.negative(T.reduce_sum(T.multiply(t, T.log(o)), axis))


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                                    axis: int = -1) -> Tensor:
    t, o = _tensor(target), _tensor(output)
    if t._data.ndim == o._data.ndim and t._data.shape[-1] == 1:
        t = T.squeeze(t, axis=[-1])
    if not from_logits:
        dt = o._data.dtype
        o = T.log(T.clip_by_value(o, _tensor(_EPS, dt), _tensor(1.0 - _EPS, dt)))
    return N.sparse_softmax_cross_entropy_with_logits(labels=t, logits=o)


def _data_format(df: Any) -> str:
    return "channels_last" if df is None else str(df)


def conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
         data_format: Any = None, dilation_rate: Any = 1) -> Tensor:
    """``keras.ops.conv``: an N-d convolution (kernel ``(*spatial, in, out)``)."""
    from .. import nn_conv as tfn

    x, k = _tensor(inputs), _tensor(kernel)
    n = x._data.ndim - 2
    last = _data_format(data_format) == "channels_last"
    fmt = ("N" + "DHW"[3 - n:] + "C") if last else ("NC" + "DHW"[3 - n:])
    if n == 1:
        fmt = "NWC" if last else "NCW"

    def tup(v: Any) -> tuple[int, ...]:
        return (v,) * n if isinstance(v, int) else tuple(v)

    return tfn._conv(n, x, k, tup(strides), padding.upper(), fmt, tup(dilation_rate), "Conv2D")


def _pool(kind: str, inputs: Any, pool_size: Any, strides: Any, padding: str,
          data_format: Any) -> Tensor:
    x = _tensor(inputs)
    n = x._data.ndim - 2
    ps = (pool_size,) * n if isinstance(pool_size, int) else tuple(pool_size)
    st = ps if strides is None else ((strides,) * n if isinstance(strides, int)
                                     else tuple(strides))
    last = _data_format(data_format) == "channels_last"
    fmt = ("N" + "DHW"[3 - n:] + "C") if last else ("NC" + "DHW"[3 - n:])
    if n == 1:
        fmt = "NWC" if last else "NCW"
    fn = N.max_pool if kind == "max" else N.avg_pool
    return fn(x, list(ps), list(st), padding.upper(), data_format=fmt)


def max_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: Any = None) -> Tensor:
    return _pool("max", inputs, pool_size, strides, padding, data_format)


def average_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
                 data_format: Any = None) -> Tensor:
    return _pool("avg", inputs, pool_size, strides, padding, data_format)


def moments(x: Any, axes: Any, keepdims: bool = False, synchronized: bool = False) -> Any:
    return N.moments(_float(x), axes=list(axes), keepdims=keepdims)


# ------------------------------------------------------------------ control flow and misc
def stop_gradient(variable: Any) -> Tensor:
    return T.stop_gradient(_tensor(variable))


def vectorized_map(function: Callable[..., Any], elements: Any) -> Any:
    from .. import vectorized_map as _vm

    return _vm(function, elements)


def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    from .. import cond as _cond

    return _cond(pred, true_fn, false_fn)


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               maximum_iterations: int | None = None) -> Any:
    from .. import while_loop as _wl

    single = not isinstance(loop_vars, (list, tuple))
    lv = (loop_vars,) if single else tuple(loop_vars)

    def body_fn(*args: Any) -> Any:
        out = body(*args)
        return (out,) if single or not isinstance(out, (list, tuple)) else tuple(out)

    out = _wl(cond, body_fn, lv, maximum_iterations=maximum_iterations)
    if single:
        return out[0] if isinstance(out, (list, tuple)) else out
    return tuple(out) if isinstance(loop_vars, tuple) else list(out)


def fori_loop(lower: int, upper: int, body_fun: Callable[[Any, Any], Any],
              init_val: Any) -> Any:
    from .. import while_loop as _wl

    def c(i: Any, v: Any) -> Any:
        return T.less(i, _tensor(upper, np.int32))

    def b(i: Any, v: Any) -> Any:
        return T.add(i, _tensor(1, np.int32)), body_fun(i, v)

    _, out = _wl(c, b, (_tensor(lower, np.int32), init_val))
    return out


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def dtype(x: Any) -> str:
    return str(_tensor(x)._data.dtype.name)


__all__ = [n for n, v in list(globals().items())
           if not n.startswith("_") and callable(v) and getattr(v, "__module__", "") == __name__
           and n not in ("annotations",)]
__all__ += ["true_divide", "absolute", "amax", "amin", "swish"]

# Keras 3's sub-namespaces (``keras.ops.nn.relu``, ``keras.ops.numpy.add`` ...) name the
# same functions
import sys as _sys  # noqa: E402

nn = numpy = core = math = _sys.modules[__name__]


def _image_affine_transform(images: Any, transform: Any, interpolation: str = "bilinear",
                            fill_mode: str = "constant", fill_value: Any = 0,
                            data_format: Any = None) -> Tensor:
    """``keras.ops.image.affine_transform``: TensorFlow's projective-transform kernel."""
    from .layers_augment import affine_transform

    if interpolation not in ("nearest", "bilinear"):
        raise hinted(ValueError(with_hint(
            "Invalid value for argument `interpolation`. Expected of one "
            f"('nearest', 'bilinear'). Received: interpolation={interpolation}",
            "use 'bilinear' or 'nearest'")))
    if fill_mode not in ("constant", "nearest", "wrap", "reflect"):
        raise hinted(ValueError(with_hint(
            "Invalid value for argument `fill_mode`. Expected of one "
            "('constant', 'nearest', 'wrap', 'reflect'). Received: "
            f"fill_mode={fill_mode}",
            "use 'constant', 'nearest', 'wrap' or 'reflect'")))
    x = _tensor(images)
    t = np.asarray(_tensor(transform)._data, np.float32)
    if x._data.ndim not in (3, 4):
        raise hinted(ValueError(with_hint(
            "Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images)."
            f" Received input with shape: images.shape={tuple(x._data.shape)}",
            "pass (h, w, c) or (batch, h, w, c)")))
    single = x._data.ndim == 3
    y = T.expand_dims(x, 0) if single else x
    last = _data_format(data_format) == "channels_last"
    if not last:
        y = T.transpose(y, [0, 2, 3, 1])
    y = affine_transform(y, t.reshape(-1, 8), interpolation, fill_mode, float(fill_value))
    if not last:
        y = T.transpose(y, [0, 3, 1, 2])
    return T.squeeze(y, [0]) if single else y


def _image_resize(images: Any, size: Any, interpolation: str = "bilinear",
                  antialias: bool = False, crop_to_aspect_ratio: bool = False,
                  pad_to_aspect_ratio: bool = False, fill_mode: str = "constant",
                  fill_value: float = 0.0, data_format: Any = None) -> Tensor:
    """``keras.ops.image.resize`` (through ``keras.layers.Resizing``'s code)."""
    from .layers_more import Resizing

    x = _tensor(images)
    layer = Resizing(int(size[0]), int(size[1]), interpolation=interpolation,
                     crop_to_aspect_ratio=crop_to_aspect_ratio,
                     pad_to_aspect_ratio=pad_to_aspect_ratio, fill_mode=fill_mode,
                     fill_value=fill_value, antialias=antialias,
                     data_format=_data_format(data_format), dtype=x._data.dtype.name
                     if x._data.dtype.kind == "f" else None)
    single = x._data.ndim == 3
    out = layer(T.expand_dims(x, 0) if single else x)
    return T.squeeze(out, [0]) if single else out


import types as _types  # noqa: E402

image = _types.SimpleNamespace(affine_transform=_image_affine_transform, resize=_image_resize)
