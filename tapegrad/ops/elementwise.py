"""Elementwise ops: forward on ndarrays, VJP beside it in tapegrad ops.

The engine reduces each returned gradient to its input's shape (``sum_to``)
and dtype, so VJPs here ignore broadcasting.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.registry import defop
from .._core.tensor import Tensor, make
from ._raw import data, mul_into, raw, scalar_in, scalar_of, scalar_pair, wrap
from ._tf_eigen import (
    cos_f32,
    exp_f32,
    expm1_f32,
    log1p_f32,
    log_f32,
    sigmoid_f32,
    sin_f32,
    tanh_f32,
)
from ._tf_softmax import _ftz
from .complex import holomorphic_vjp

_ND = np.ndarray
_asarray = np.asarray


def _broadcast_error(op: str, *operands: Any) -> Exception | None:
    """PyTorch's error for operands that do not broadcast (None if they do).

    Called only after numpy refused the operands, so the success path pays nothing.
    """
    shapes = [np.shape(a) for a in operands]
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            sa, sb = shapes[i], shapes[j]
            nd = max(len(sa), len(sb))
            pa = (1,) * (nd - len(sa)) + tuple(sa)
            pb = (1,) * (nd - len(sb)) + tuple(sb)
            for d in range(nd - 1, -1, -1):
                if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
                    return hinted(RuntimeError(
                        with_hint(
                            f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                            f"({pb[d]}) at non-singleton dimension {d}",
                            f"{op}: shapes {list(sa)} and {list(sb)} cannot be broadcast together",
                        )
                    ))
    return None



def _binary_fwd(op: str, fn: Any, x: Any, y: Any) -> Any:
    try:
        return fn(x, y)
    except ValueError:
        err = _broadcast_error(op, x, y)
        if err is None:
            raise
        raise err from None


def _link(result: Any, x: Any) -> Any:
    """Connect a piecewise-constant derivative to ``x`` with a zero derivative.

    When differentiating a backward pass (create_graph / nested tapes), both
    frameworks give relu, leaky_relu and abs a second derivative of 0 rather
    than "not connected"; ``result + 0 * sign(x)`` does that at no cost to
    first-order backward (grad mode is off there).
    """
    if _STATE.grad_enabled and isinstance(x, Tensor) and (x._rg or x._node is not None):
        return add(result, multiply(sign(x), 0.0))
    return result


# ---------------------------------------------------------------- arithmetic
@defop("add")
def add(x: Any, y: Any) -> Any:
    s = scalar_pair(x, y)
    if s is not None:  # 0-d float data: scalar arithmetic, same value and dtype
        return s[0] + s[1]
    try:
        return np.add(x, y)
    except ValueError:
        return _binary_fwd("add", np.add, x, y)


@add.defvjp
def _(g: Tensor) -> Any:  # d(x+y) = dx + dy
    return g, g


@defop("subtract", needs=True)
def subtract(x: Any, y: Any) -> Any:
    s = scalar_pair(x, y)
    if s is not None:
        return s[0] - s[1]
    try:
        return np.subtract(x, y)
    except ValueError:
        return _binary_fwd("subtract", np.subtract, x, y)


@subtract.defvjp
def _(g: Tensor, needs: tuple[bool, ...]) -> Any:  # d(x-y) = dx - dy
    return g, (negative(g) if needs[1] else None)


@defop("multiply", saves=("x", "y"), needs=True,
       save_for={"x": ("y",), "y": ("x",)})
def multiply(x: Any, y: Any) -> Any:
    s = scalar_pair(x, y)
    if s is not None:
        return s[0] * s[1]
    try:
        return np.multiply(x, y)
    except ValueError:
        return _binary_fwd("multiply", np.multiply, x, y)


@multiply.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    if g._data.dtype.kind == "c":  # complex: the holomorphic form of the real rule
        return _mul_vjp_complex(g, x, y, needs)
    return _mul_vjp(g, x, y, needs)


def _mul_vjp(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:  # d(xy) = y dx + x dy
    st = _STATE
    if not st.grad_enabled and not st.inference and not st.levels:  # raw(), inlined
        ga = g._data
        gx = gy = None
        if needs[0]:
            r = _mul_arrays(ga, y._data if isinstance(y, Tensor) else y)
            gx = make(r if r.__class__ is _ND else _asarray(r), None, False, g._style)
        if needs[1]:
            r = _mul_arrays(ga, x._data if isinstance(x, Tensor) else x)
            gy = make(r if r.__class__ is _ND else _asarray(r), None, False, g._style)
        return gx, gy
    return (multiply(g, y) if needs[0] else None), (multiply(g, x) if needs[1] else None)


_mul_vjp_complex = holomorphic_vjp(_mul_vjp)


def _mul_arrays(a: Any, b: Any) -> Any:
    """``a * b`` on arrays (the scalar path for 0-d float data, as the forward)."""
    s = scalar_pair(a, b)
    if s is not None:
        return s[0] * s[1]
    return np.multiply(a, b)


@defop("divide", saves=("x", "y"), needs=True,
       save_for={"x": ("y",)})
def divide(x: Any, y: Any) -> Any:
    s = scalar_pair(x, y)
    if s is not None and s[1]:  # (a zero divisor: NumPy's inf / nan, without a warning)
        return s[0] / s[1]
    with np.errstate(all="ignore"):
        return _binary_fwd("divide", np.true_divide, x, y)


def _div_vjp(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:  # dx/y - x dy/y^2
    gx = divide(g, y) if needs[0] else None
    gy = negative(divide(multiply(g, x), multiply(y, y))) if needs[1] else None
    return gx, gy


_div_vjp_complex = holomorphic_vjp(_div_vjp)


@divide.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    if g._data.dtype.kind == "c":  # complex: the holomorphic form of the real rule
        return _div_vjp_complex(g, x, y, needs)
    return _div_vjp(g, x, y, needs)


@defop("negative")
def negative(x: Any) -> Any:
    if x.__class__ is np.ndarray and not x.shape and x.dtype.kind == "f":
        return -x[()]
    return np.negative(x)


@negative.defvjp
def _(g: Tensor) -> Any:  # d(-x) = -dx
    if raw():
        return (wrap(np.negative(g._data), g),)
    return (negative(g),)


@defop("power", saves=("x", "y", "out"), needs=True)
def power(x: Any, y: Any) -> Any:
    with np.errstate(all="ignore"):
        if y.__class__ is int and y == 2 and x.__class__ is np.ndarray and x.dtype.kind == "f":
            return np.square(x)  # the values of np.power(x, 2), in a quarter of the time
        if isinstance(y, (int, np.integer)) and not isinstance(y, bool) and y < 0:
            y = float(y)
        if isinstance(x, np.ndarray) and x.dtype.kind in "iu" and isinstance(y, np.ndarray) \
                and y.dtype.kind in "iu" and np.any(y < 0):
            raise ValueError("Integers to negative integer powers are not allowed.")
        return _binary_fwd("power", np.power, x, y)


@power.defvjp
def _(g: Tensor, x: Any, y: Any, out: Tensor, needs: tuple[bool, ...]) -> Any:
    # d(x^y) = y x^(y-1) dx + x^y log(x) dy   (the dy term is 0 where x == 0 and y >= 0)
    gx = gy = None
    if needs[0] and not needs[1] and isinstance(y, (int, float)) and y != 0 and raw():
        return _power_dx_raw(g, x, y), None
    if needs[0]:
        if isinstance(y, (int, float)) and y == 0:
            gx = multiply(g, 0.0)
        elif isinstance(y, (int, float)) and y == 1:
            gx = g
        elif isinstance(y, (int, float)) and y == 2:
            gx = multiply(g, multiply(x, 2.0))
        else:
            # a Python exponent stays a Python number (keeps float32 as float32)
            ym1 = y - 1 if isinstance(y, (int, float)) else subtract(y, 1)
            d = multiply(y, power(x, ym1))
            yd = y._data if isinstance(y, Tensor) else np.asarray(y)
            if np.any(yd == 0):  # y x^(y-1) is 0 where y == 0, also at x == 0 (not 0 * inf)
                d = where(equal(y, 0), 0.0, d)
            gx = multiply(g, d)
    if needs[1]:
        mask = logical_and(equal(x, 0), greater_equal(y, 0))
        safe = where(mask, 1.0, x)
        gy = where(mask, 0.0, multiply(g, multiply(out, log(safe))))
    return gx, gy


def _power_dx_raw(g: Tensor, x: Tensor, y: int | float) -> Tensor:
    """``g * y * x^(y-1)`` for a Python exponent ``y != 0``, on raw arrays (grad mode off)."""
    ga, xa = g._data, x._data
    if y == 1:
        return g
    if y == 2:  # g * (2 x): one pass when g repeats one value (the VJP of a sum or mean)
        g0 = scalar_of(ga)
        if g0 is not None:
            s = g0 * 2
            if np.isfinite(s) or not np.isfinite(g0):  # 2 g0 is exact unless it overflows
                return wrap(np.multiply(xa, s), g)
        return wrap(mul_into(np.multiply(xa, 2.0), ga), g)
    ym1 = y - 1
    if isinstance(ym1, int) and ym1 < 0:
        ym1 = float(ym1)  # as the forward: integer arrays to negative powers need floats
    t = np.asarray(np.power(xa, ym1))  # a fresh array: scaled in place
    np.multiply(t, y, out=t)
    return wrap(mul_into(t, ga), g)


@defop("floor_divide")
def floor_divide(x: Any, y: Any) -> Any:
    with np.errstate(all="ignore"):
        return _binary_fwd("floor_divide", np.floor_divide, x, y)


@defop("remainder", saves=("x", "y"), needs=True)
def remainder(x: Any, y: Any) -> Any:
    with np.errstate(all="ignore"):
        return _binary_fwd("remainder", np.remainder, x, y)


@remainder.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    # x mod y = x - floor(x/y) y
    gy = multiply(negative(g), floor(divide(x, y))) if needs[1] else None
    return g, gy


# ---------------------------------------------------------------- non-differentiable
def _nondiff(name: str, fn: Any) -> Any:
    op = defop(name)(fn)
    op.vjp = None  # type: ignore[assignment]  # not differentiable: never recorded
    return op


floor = _nondiff("floor", lambda x: np.floor(x))
ceil = _nondiff("ceil", lambda x: np.ceil(x))
round = _nondiff("round", lambda x, *, decimals=0: np.round(x, decimals))
equal = _nondiff("equal", lambda x, y: _binary_fwd("equal", np.equal, x, y))
not_equal = _nondiff("not_equal", lambda x, y: _binary_fwd("not_equal", np.not_equal, x, y))
less = _nondiff("less", lambda x, y: _binary_fwd("less", np.less, x, y))
less_equal = _nondiff("less_equal", lambda x, y: _binary_fwd("less_equal", np.less_equal, x, y))
greater = _nondiff("greater", lambda x, y: _binary_fwd("greater", np.greater, x, y))
greater_equal = _nondiff("greater_equal", lambda x, y: _binary_fwd("greater_equal", np.greater_equal, x, y))
logical_and = _nondiff("logical_and", lambda x, y: _binary_fwd("logical_and", np.logical_and, x, y))
logical_or = _nondiff("logical_or", lambda x, y: _binary_fwd("logical_or", np.logical_or, x, y))
logical_xor = _nondiff("logical_xor", lambda x, y: _binary_fwd("logical_xor", np.logical_xor, x, y))
logical_not = _nondiff("logical_not", lambda x: np.logical_not(x))
isnan = _nondiff("isnan", lambda x: np.isnan(x))
isfinite = _nondiff("isfinite", lambda x: np.isfinite(x))
isinf = _nondiff("isinf", lambda x: np.isinf(x))


@defop("sign")
def sign(x: Any) -> Any:
    return np.sign(x)


@sign.defvjp
def _(g: Tensor) -> Any:  # sign is piecewise constant: zero gradient
    return (multiply(g, 0.0),)


# ---------------------------------------------------------------- unary math
@defop("abs", saves=("x",))
def abs(x: Any) -> Any:
    return np.abs(scalar_in(x))


@abs.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d|x| = sign(x) dx, 0 at x = 0
    if np.iscomplexobj(data(x)):
        return (multiply(g, _sgn(x)),)
    return (multiply(g, sign(x)),)


def _sgn(x: Any) -> Any:
    """``z / |z|`` (0 at 0) as a composite, so that its own derivative is the complex one
    (``sign``'s is zero, right for real numbers only)."""
    m = abs(x)
    zero = equal(m, 0.0)
    return where(zero, 0.0, divide(x, where(zero, 1.0, m)))


@defop("exp", saves=("out",))
def exp(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return exp_f32(x)
    with np.errstate(all="ignore"):
        return np.exp(scalar_in(x))


@exp.defvjp
def _(g: Tensor, out: Tensor, kernel: str = "") -> Any:  # d e^x = e^x dx
    if raw():
        return (wrap(np.multiply(g._data, out._data), g),)
    return (multiply(g, out),)


@defop("log", saves=("x",))
def log(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return log_f32(x)
    with np.errstate(all="ignore"):
        return np.log(scalar_in(x))


@log.defvjp
def _(g: Tensor, x: Tensor, kernel: str = "") -> Any:  # d log x = dx / x
    return (divide(g, x),)


@defop("log1p", saves=("x",))
def log1p(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return log1p_f32(x)
    with np.errstate(all="ignore"):
        return np.log1p(scalar_in(x))


@log1p.defvjp
def _(g: Tensor, x: Tensor, kernel: str = "") -> Any:  # d log(1+x) = dx / (1+x)
    return (divide(g, add(x, 1.0)),)


@defop("expm1", saves=("x", "out"))
def expm1(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return expm1_f32(x)
    with np.errstate(all="ignore"):
        return np.expm1(scalar_in(x))


@expm1.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, kernel: str = "") -> Any:
    # d(e^x - 1) = (out + 1) dx; kernel="tf": TensorFlow's Expm1Grad, grad * exp(x)
    if kernel:
        if raw() and x.dtype == np.float32:  # the product flushed to zero (FTZ), as there
            return (wrap(_ftz(np.multiply(g._data, exp_f32(x._data))), g),)
        return (multiply(g, exp(x, kernel=kernel)),)
    return (multiply(g, add(out, 1.0)),)


@defop("sqrt", saves=("out",))
def sqrt(x: Any, *, zero_safe: bool = False) -> Any:
    with np.errstate(all="ignore"):
        return np.sqrt(scalar_in(x))


@sqrt.defvjp
def _(g: Tensor, out: Tensor, zero_safe: bool = False) -> Any:
    # d sqrt(x) = dx / (2 sqrt(x)); zero_safe (TensorFlow): 0 wherever g is 0
    gx = divide(multiply(g, 0.5), out)
    if zero_safe:
        gx = where(equal(g, 0), 0.0, gx)
    return (gx,)


@defop("square", saves=("x",))
def square(x: Any) -> Any:
    return np.square(scalar_in(x))


@square.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d x^2 = 2x dx
    if raw():
        return (_power_dx_raw(g, x, 2),)
    return (multiply(g, multiply(x, 2.0)),)


@defop("reciprocal", saves=("out",))
def reciprocal(x: Any) -> Any:
    with np.errstate(all="ignore"):
        return np.reciprocal(scalar_in(x))


@reciprocal.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d(1/x) = -dx/x^2
    return (negative(multiply(g, multiply(out, out))),)


@defop("sin", saves=("x",))
def sin(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return sin_f32(x)
    return np.sin(scalar_in(x))


@sin.defvjp
def _(g: Tensor, x: Tensor, kernel: str = "") -> Any:  # d sin x = cos x dx
    return (multiply(g, cos(x, kernel=kernel) if kernel else cos(x)),)


@defop("cos", saves=("x",))
def cos(x: Any, *, kernel: str = "") -> Any:
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return cos_f32(x)
    return np.cos(scalar_in(x))


@cos.defvjp
def _(g: Tensor, x: Tensor, kernel: str = "") -> Any:  # d cos x = -sin x dx
    return (negative(multiply(g, sin(x, kernel=kernel) if kernel else sin(x))),)


@defop("tan", saves=("out",))
def tan(x: Any) -> Any:
    return np.tan(scalar_in(x))


@tan.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d tan x = (1 + tan^2 x) dx
    return (multiply(g, add(multiply(out, out), 1.0)),)


@defop("tanh", saves=("out",))
def tanh(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return tanh_f32(x)
    return np.tanh(scalar_in(x))


@tanh.defvjp
def _(g: Tensor, out: Tensor, kernel: str = "") -> Any:  # d tanh x = (1 - tanh^2 x) dx
    if raw():
        return (wrap(_tanh_backward_np(g._data, out._data), g),)
    return (tanh_backward(g, out),)


def _tanh_backward_np(g: Any, out: Any) -> Any:
    t = np.asarray(np.multiply(out, out))
    np.subtract(1.0, t, out=t)
    return mul_into(t, np.asarray(g))


@defop("tanh_backward", saves=("g", "y"), needs=True)
def tanh_backward(g: Any, y: Any) -> Any:
    """``g * (1 - y^2)`` with ``y = tanh(x)``: tanh's VJP as one op (one node when recorded)."""
    return _tanh_backward_np(g, y)


@tanh_backward.defvjp
def _(gg: Tensor, g: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    # d[g (1 - y^2)] = (1 - y^2) dg - 2 g y dy
    dg = dy = None
    if raw():
        gga, ga, ya = gg._data, data(g), data(y)
        if needs[0]:
            dg = wrap(_tanh_backward_np(gga, ya), gg)
        if needs[1]:
            t = np.asarray(np.multiply(gga, ga))
            dy = wrap(mul_into(t, np.asarray(np.multiply(ya, -2.0))), gg)
        return dg, dy
    if needs[0]:
        dg = tanh_backward(gg, y)
    if needs[1]:
        dy = multiply(multiply(gg, g), multiply(y, -2.0))
    return dg, dy


@defop("sigmoid", saves=("out",))
def sigmoid(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU kernel, bit for bit (ops/_tf_eigen.py)
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        return sigmoid_f32(x)
    # numerically stable in both tails
    with np.errstate(all="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(np.asarray(x) >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(
            np.result_type(x, np.float16) if np.asarray(x).dtype.kind in "fc" else np.float64,
            copy=False,
        )


@sigmoid.defvjp
def _(g: Tensor, out: Tensor, kernel: str = "") -> Any:  # d s(x) = s(x) (1 - s(x)) dx
    if raw():
        o = out._data
        t = np.asarray(np.subtract(1.0, o))
        np.multiply(o, t, out=t)
        r = mul_into(t, g._data)
        if kernel and r.dtype == np.float32 and r.size % 8 and r.shape == o.shape:
            # TensorFlow's SigmoidGrad: g * (y * (1 - y)) on whole packets of 8, and
            # (g * y) * (1 - y) on the scalar tail
            r = np.ascontiguousarray(r)
            rf, of = r.reshape(-1), o.reshape(-1)
            gf = np.broadcast_to(g._data, o.shape).reshape(-1)
            k = rf.size - rf.size % 8
            rf[k:] = (gf[k:] * of[k:]) * (np.float32(1) - of[k:])
        return (wrap(r, g),)
    return (multiply(g, multiply(out, subtract(1.0, out))),)


@defop("relu", saves=("out",))
def relu(x: Any) -> Any:
    return np.maximum(x, 0).astype(np.asarray(x).dtype, copy=False)


@relu.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d relu x = [x > 0] dx (0 at x = 0)
    if raw():
        return (wrap(np.multiply(g._data, np.greater(out._data, 0)), g),)
    return (_link(multiply(g, greater(out, 0)), out),)


@defop("sigmoid_backward", saves=("g", "y"), needs=True)
def sigmoid_backward(g: Any, y: Any) -> Any:
    """``g * (1 - y) * y`` with ``y = sigmoid(x)``: sigmoid's derivative applied to ``g`` as
    one op (the tangent of sigmoid in forward mode, PyTorch's ``sigmoid_backward``)."""
    return np.asarray(np.multiply(np.multiply(g, np.subtract(1.0, y)), y))


@sigmoid_backward.defvjp
def _(gg: Tensor, g: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    # d[g (1 - y) y] = (1 - y) y dg + g (1 - 2 y) dy
    dg = sigmoid_backward(gg, y) if needs[0] else None
    dy = multiply(multiply(gg, g), subtract(1.0, multiply(y, 2.0))) if needs[1] else None
    return dg, dy


@defop("threshold_backward", saves=("y",), needs=True)
def threshold_backward(g: Any, y: Any) -> Any:
    """``g`` where ``y > 0``, else 0: relu's derivative applied to ``g`` as one op (the
    tangent of relu in forward mode, PyTorch's ``threshold_backward``)."""
    g = np.asarray(g)
    return np.where(np.greater(y, 0), g, np.zeros((), dtype=g.dtype))


@threshold_backward.defvjp
def _(gg: Tensor, y: Any, needs: tuple[bool, ...]) -> Any:
    # linear in g; piecewise constant in y (a zero derivative, connected as relu's)
    dg = threshold_backward(gg, y) if needs[0] else None
    dy = multiply(gg, 0.0) if needs[1] else None
    return dg, dy


@defop("leaky_relu", saves=("x",))
def leaky_relu(x: Any, *, negative_slope: float = 0.01) -> Any:
    return np.where(x > 0, x, x * negative_slope).astype(np.asarray(x).dtype, copy=False)


@leaky_relu.defvjp
def _(g: Tensor, x: Tensor, negative_slope: float = 0.01) -> Any:
    # slope 1 for x > 0, negative_slope otherwise
    return (_link(multiply(g, where(greater(x, 0), 1.0, negative_slope)), x),)


@defop("elu", saves=("x", "out"))
def elu(x: Any, *, alpha: float = 1.0, scale: float = 1.0, kernel: str = "") -> Any:
    """``scale * x`` above 0, ``alpha * (e^x - 1)`` otherwise (``scale`` != 1: SELU's form,
    ``alpha`` then being its scale times alpha).  ``kernel="tf"`` (float32): TensorFlow's
    Elu/Selu kernel, ``alpha * (exp(x) - 1)`` below 0 by its Exp kernel (not expm1;
    ops/_tf_eigen.py), its gradient's choice by the sign of the output (at 0: ``scale``)."""
    if kernel and getattr(x, "dtype", None) == np.float32 and x.size:
        with np.errstate(all="ignore"):
            em1 = np.subtract(exp_f32(x), np.float32(1))
            neg = em1 if alpha == 1.0 else np.multiply(np.float32(alpha), em1)
            xd = _ftz(x)  # DAZ: a subnormal reads as 0 (and is not < 0)
            pos = x if scale == 1.0 else _ftz(np.multiply(np.float32(scale), xd))
            return np.where(xd < 0, _ftz(neg), pos)
    with np.errstate(all="ignore"):
        pos = x if scale == 1.0 else scale * np.asarray(x)
        return np.where(x > 0, pos, alpha * np.expm1(x)).astype(np.asarray(x).dtype, copy=False)


def _elu_slope(x: Any, out: Any, alpha: float, scale: float, kernel: str) -> Any:
    # scale for x > 0, alpha e^x = out + alpha otherwise; kernel: TensorFlow's EluGrad /
    # SeluGrad, ``out < 0 ? out + alpha : scale`` (its bits, -0 included)
    if kernel:
        return where(less(out, 0), add(out, alpha), scale)
    return where(greater(x, 0), scale, add(out, alpha))


@elu.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, alpha: float = 1.0, scale: float = 1.0,
      kernel: str = "") -> Any:
    if kernel and raw() and out.dtype == np.float32:  # TensorFlow's, FTZ on the product
        o = out._data
        with np.errstate(all="ignore"):
            slope = np.where(o < 0, np.add(o, np.float32(alpha)), np.float32(scale))
            return (wrap(_ftz(np.multiply(g._data, slope)), g),)
    return (multiply(g, _elu_slope(x, out, alpha, scale, kernel)),)


_erf_u = np.frompyfunc(math.erf, 1, 1)


@defop("erf", saves=("x",))
def erf(x: Any, *, kernel: str = "") -> Any:
    # kernel="tf": the gradient is TensorFlow's ErfGrad (the value is the correctly rounded
    # erf; Eigen's float32 perf is not emulated)
    a = np.asarray(x)
    return np.asarray(_erf_u(a), dtype=a.dtype if a.dtype.kind == "f" else np.float64)


_TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)


@erf.defvjp
def _(g: Tensor, x: Tensor, kernel: str = "") -> Any:  # d erf x = 2/sqrt(pi) e^(-x^2) dx
    if kernel and x.dtype == np.float32:
        # TensorFlow's ErfGrad: grad * (2/sqrt(pi)) * exp(-square(x)), its Exp kernel, FTZ
        if raw():
            xa = x._data
            with np.errstate(all="ignore"):
                e = exp_f32(np.negative(np.multiply(xa, xa)))
                return (wrap(_ftz(np.multiply(np.multiply(
                    g._data, np.float32(_TWO_OVER_ROOT_PI)), e)), g),)
        return (multiply(multiply(g, _TWO_OVER_ROOT_PI),
                         exp(negative(square(x)), kernel=kernel)),)
    return (multiply(g, multiply(exp(negative(square(x))), _TWO_OVER_ROOT_PI)),)


# ---------------------------------------------------------------- binary selections
@defop("maximum", saves=("x", "y"), needs=True)
def maximum(x: Any, y: Any, *, ties: str = "half") -> Any:
    return _binary_fwd("maximum", np.maximum, x, y)


@maximum.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...], ties: str = "half") -> Any:
    # gradient to the larger input; at ties: half each ("half", PyTorch) or all to x ("first", TF)
    if ties == "half":
        mx = add(greater(x, y), multiply(equal(x, y), 0.5))
        my = subtract(1.0, mx)
    else:
        mx = greater_equal(x, y)
        my = less(x, y)
    return (multiply(g, mx) if needs[0] else None), (multiply(g, my) if needs[1] else None)


@defop("minimum", saves=("x", "y"), needs=True)
def minimum(x: Any, y: Any, *, ties: str = "half") -> Any:
    return _binary_fwd("minimum", np.minimum, x, y)


@minimum.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...], ties: str = "half") -> Any:
    if ties == "half":
        mx = add(less(x, y), multiply(equal(x, y), 0.5))
        my = subtract(1.0, mx)
    else:
        mx = less_equal(x, y)
        my = greater(x, y)
    return (multiply(g, mx) if needs[0] else None), (multiply(g, my) if needs[1] else None)


@defop("clip", saves=("x", "lo", "hi"), needs=True)
def clip(x: Any, lo: Any, hi: Any, *, bounds: str = "numpy") -> Any:
    out = np.asarray(x)
    if lo is not None:
        out = _binary_fwd("clip", np.maximum, out, lo)
    if hi is not None:
        out = _binary_fwd("clip", np.minimum, out, hi)
    if bounds == "torch":  # PyTorch promotes with tensor bounds
        return out
    return out.astype(np.result_type(x), copy=False) if np.ndim(out) else out


@clip.defvjp
def _(g: Tensor, x: Any, lo: Any, hi: Any, needs: tuple[bool, ...], bounds: str = "numpy") -> Any:
    # dx passes where lo <= x <= hi (both frameworks give 1 at a bound); a tensor bound gets
    # the gradient where it is the active one.  When lo > hi the output is hi: "numpy" gives
    # the gradient to hi only where x > hi as well, "torch" (PyTorch's clamp_backward_min_max)
    # to hi everywhere and to lo nowhere.
    inside: Any = True
    if lo is not None:
        inside = greater_equal(x, lo)
    if hi is not None:
        inside = logical_and(inside, less_equal(x, hi)) if lo is not None else less_equal(x, hi)
    gx = multiply(g, inside) if needs[0] else None
    glo = ghi = None
    if needs[1] and lo is not None:
        m = less(x, lo)
        if hi is not None and bounds == "torch":
            m = logical_and(m, less(lo, hi))
        glo = multiply(g, m)
    if needs[2] and hi is not None:
        m = greater(x, hi)
        if lo is not None:
            m = logical_or(m, less(hi, lo)) if bounds == "torch" else \
                logical_and(m, greater_equal(hi, lo))
        ghi = multiply(g, m)
    return gx, glo, ghi


@defop("where", saves=("cond",), needs=True)
def where(cond: Any, x: Any, y: Any) -> Any:
    try:
        return np.where(cond, x, y)
    except ValueError:
        err = _broadcast_error("where", cond, x, y)
        if err is None:
            raise
        raise err from None


@where.defvjp
def _(g: Tensor, cond: Any, needs: tuple[bool, ...]) -> Any:
    # the gradient goes to the branch that was taken
    gx = where(cond, g, 0.0) if needs[1] else None
    gy = where(cond, 0.0, g) if needs[2] else None
    return None, gx, gy


# ---------------------------------------------------------------- identity-like
@defop("cast")
def cast(x: Any, *, dtype: Any) -> Any:
    return np.asarray(x).astype(dtype)


@cast.defvjp
def _(g: Tensor, dtype: Any = None) -> Any:  # the engine casts back to the input dtype
    return (g,)


@defop("clone")
def clone(x: Any) -> Any:
    return np.array(x, copy=True)


@clone.defvjp
def _(g: Tensor) -> Any:
    return (g,)


@defop("contiguous")
def contiguous(x: Any) -> Any:
    """A row-major copy (PyTorch's ``Tensor.contiguous()`` on a non-contiguous tensor)."""
    return np.array(x, copy=True, order="C")


@contiguous.defvjp
def _(g: Tensor) -> Any:
    return (g,)


@defop("identity")
def identity(x: Any) -> Any:
    return np.asarray(x)


@identity.defvjp
def _(g: Tensor) -> Any:
    return (g,)


# ================================================================ forward-mode and batching rules
# Each op's JVP (tangent of the output; ``None`` tangents are zero) and batching rule, attached
# to the same op record as its forward and VJP above.
from ._batch import elementwise as _bw  # noqa: E402


def _tadd(a: Any, b: Any) -> Any:
    """The sum of two tangents, either of which may be ``None`` (zero)."""
    if a is None:
        return b
    if b is None:
        return a
    return add(a, b)


def _tscale(t: Any, f: Any) -> Any:
    return None if t is None else multiply(t, f)


add.defjvp(lambda dx, dy, x, y, *, out: _tadd(dx, dy))
subtract.defjvp(lambda dx, dy, x, y, *, out: _tadd(dx, None if dy is None else negative(dy)))
def _tracked(v: Any) -> bool:
    return isinstance(v, Tensor) and (v._rg or v._node is not None)


@multiply.defjvp
def _(dx: Any, dy: Any, x: Any, y: Any, *, out: Any) -> Any:
    a = _tscale(dx, y)
    b = _tscale(dy, x)
    if (a is None) != (b is None) and _STATE.grad_enabled:
        # PyTorch's formula, dy x + dx y, keeps the missing tangent's term as zeros: where
        # anything in it is tracked (a primal that requires grad), so is the tangent
        t, p = (a, x) if b is None else (b, y)
        if _tracked(t) or _tracked(p):
            z = multiply(np.zeros(np.shape(data(y if b is None else x)),
                                  dtype=out._data.dtype), p)
            return add(z, a) if b is None else add(b, z)
    return _tadd(a, b)
negative.defjvp(lambda dx, x, *, out: negative(dx))


@divide.defjvp
def _(dx: Any, dy: Any, x: Any, y: Any, *, out: Any) -> Any:  # (dx - out dy) / y
    num = _tadd(dx, None if dy is None else negative(multiply(out, dy)))
    return divide(num, y)


@power.defjvp
def _(dx: Any, dy: Any, x: Any, y: Any, *, out: Any) -> Any:
    # y x^(y-1) dx + x^y log(x) dy (the dy term 0 where x == 0 and y >= 0)
    t = None
    if dx is not None:
        if isinstance(y, (int, float)) and y == 0:
            t = multiply(dx, 0.0)
        elif isinstance(y, (int, float)) and y == 1:
            t = dx
        else:
            ym1 = y - 1 if isinstance(y, (int, float)) else subtract(y, 1)
            t = multiply(dx, multiply(y, power(x, ym1)))
    if dy is not None:
        mask = logical_and(equal(x, 0), greater_equal(y, 0))
        t = _tadd(t, where(mask, 0.0, multiply(dy, multiply(out, log(where(mask, 1.0, x))))))
    return t


remainder.defjvp(lambda dx, dy, x, y, *, out: _tadd(
    dx, None if dy is None else negative(multiply(dy, floor(divide(x, y))))))
sign.defjvp(lambda dx, x, *, out: multiply(dx, 0.0))
@abs.defjvp
def _(dx: Any, x: Any, *, out: Any) -> Any:  # d|z| = Re(conj(sgn z) dz)
    if np.iscomplexobj(data(x)):
        from .complex import conj, real

        return real(multiply(dx, conj(_sgn(x))))
    return multiply(dx, sign(x))
exp.defjvp(lambda dx, x, *, out, kernel="": multiply(dx, out))
log.defjvp(lambda dx, x, *, out, kernel="": divide(dx, x))
log1p.defjvp(lambda dx, x, *, out, kernel="": divide(dx, add(x, 1.0)))
expm1.defjvp(lambda dx, x, *, out, kernel="": multiply(
    dx, exp(x, kernel=kernel) if kernel else add(out, 1.0)))


@sqrt.defjvp
def _(dx: Any, x: Any, *, out: Any, zero_safe: bool = False) -> Any:
    t = divide(multiply(dx, 0.5), out)
    return where(equal(dx, 0), 0.0, t) if zero_safe else t


square.defjvp(lambda dx, x, *, out: multiply(dx, multiply(x, 2.0)))
reciprocal.defjvp(lambda dx, x, *, out: negative(multiply(dx, multiply(out, out))))
sin.defjvp(lambda dx, x, *, out, kernel="": multiply(
    dx, cos(x, kernel=kernel) if kernel else cos(x)))
cos.defjvp(lambda dx, x, *, out, kernel="": negative(multiply(
    dx, sin(x, kernel=kernel) if kernel else sin(x))))
tan.defjvp(lambda dx, x, *, out: multiply(dx, add(multiply(out, out), 1.0)))
tanh.defjvp(lambda dx, x, *, out, kernel="": tanh_backward(dx, out))
tanh_backward.defjvp(lambda dg, dy, g, y, *, out: _tadd(
    None if dg is None else tanh_backward(dg, y),
    None if dy is None else multiply(multiply(dy, g), multiply(y, -2.0))))
sigmoid.defjvp(lambda dx, x, *, out, kernel="": sigmoid_backward(dx, out))
sigmoid_backward.defjvp(lambda dg, dy, g, y, *, out: _tadd(
    None if dg is None else sigmoid_backward(dg, y),
    None if dy is None else multiply(multiply(dy, g), subtract(1.0, multiply(y, 2.0)))))
relu.defjvp(lambda dx, x, *, out: threshold_backward(dx, out))
threshold_backward.defjvp(lambda dg, dy, g, y, *, out: None if dg is None else
                          threshold_backward(dg, y))
leaky_relu.defjvp(lambda dx, x, *, out, negative_slope=0.01: multiply(
    dx, where(greater(x, 0), 1.0, negative_slope)))
elu.defjvp(lambda dx, x, *, out, alpha=1.0, scale=1.0, kernel="": multiply(
    dx, _elu_slope(x, out, alpha, scale, kernel)))
erf.defjvp(lambda dx, x, *, out, kernel="": multiply(
    dx, multiply(exp(negative(square(x)), kernel=kernel) if kernel else exp(negative(square(x))),
                 _TWO_OVER_ROOT_PI)))


def _select_jvp(larger: Any) -> Any:
    def rule(dx: Any, dy: Any, x: Any, y: Any, *, out: Any, ties: str = "half") -> Any:
        if ties == "half":
            mx = add(larger(x, y), multiply(equal(x, y), 0.5))
            my = subtract(1.0, mx)
        elif larger is greater:
            mx, my = greater_equal(x, y), less(x, y)
        else:
            mx, my = less_equal(x, y), greater(x, y)
        return _tadd(_tscale(dx, mx), _tscale(dy, my))

    return rule


maximum.defjvp(_select_jvp(greater))
minimum.defjvp(_select_jvp(less))


@clip.defjvp
def _(dx: Any, dlo: Any, dhi: Any, x: Any, lo: Any, hi: Any, *, out: Any,
      bounds: str = "numpy") -> Any:
    # the tangent of whichever of x, lo, hi the output is
    t = None
    inside: Any = True
    if lo is not None:
        inside = greater_equal(x, lo)
    if hi is not None:
        inside = logical_and(inside, less_equal(x, hi)) if lo is not None else less_equal(x, hi)
    if dx is not None:
        t = multiply(dx, inside)
    if dlo is not None and lo is not None:
        m = less(x, lo)
        if hi is not None and bounds == "torch":
            m = logical_and(m, less(lo, hi))
        t = _tadd(t, multiply(dlo, m))
    if dhi is not None and hi is not None:
        m = greater(x, hi)
        if lo is not None:
            m = logical_or(m, less(hi, lo)) if bounds == "torch" else \
                logical_and(m, greater_equal(hi, lo))
        t = _tadd(t, multiply(dhi, m))
    return t


@where.defjvp
def _(dc: Any, dx: Any, dy: Any, cond: Any, x: Any, y: Any, *, out: Any) -> Any:
    if dx is None and dy is None:
        return None
    zx = dx if dx is not None else 0.0
    zy = dy if dy is not None else 0.0
    return where(cond, zx, zy)


cast.defjvp(lambda dx, x, *, out, dtype: cast(dx, dtype=dtype))
clone.defjvp(lambda dx, x, *, out: clone(dx))
contiguous.defjvp(lambda dx, x, *, out: contiguous(dx))
identity.defjvp(lambda dx, x, *, out: dx)

for _op in (add, subtract, multiply, divide, negative, power, floor_divide, remainder, sign, abs,
            exp, log, log1p, expm1, sqrt, square, reciprocal, sin, cos, tan, tanh, tanh_backward,
            sigmoid, sigmoid_backward, relu, threshold_backward, leaky_relu, elu, erf, maximum, minimum, clip, where, cast, clone,
            contiguous, identity, floor, ceil, round, equal, not_equal, less, less_equal, greater,
            greater_equal, logical_and, logical_or, logical_xor, logical_not, isnan, isfinite,
            isinf):
    _op.defbatch(_bw(_op))
del _op
