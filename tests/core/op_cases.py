"""The one table of op cases for the core.

Each :class:`OpCase` is a function of core tensors written with ``tapegrad``
ops, its input arrays and the derivative orders to check.  The same table
drives the gradient checks (central differences, orders 1 to 3), the oracle
comparisons (HIPS ``autograd`` and real PyTorch) and, through ``ref``/``tref``,
the front-end equivalence suites, which can import it::

    from tests.core.op_cases import CASES, OpCase

``ref(np, *arrays)`` is the same computation written against a NumPy-like
module (it runs on ``autograd.numpy``); ``tref(torch, *tensors)`` is it in
PyTorch.  Inputs that are integer or bool arrays are constants (indices,
class targets); floating inputs are differentiated.  Input values keep away
from kinks (|x| >= 0.2 for abs/relu, no ties for max/maximum, nothing at a
clip bound), so finite differences are meaningful; the conventional values
at the kinks have their own tests in ``test_core_conventions.py``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import tapegrad as tg

Fn = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class OpCase:
    """One row of the op table.

    Attributes
    ----------
    name:
        Unique id, used as the pytest id.
    op:
        The SPEC op this row covers (several rows may cover one op).
    fn:
        Function of core tensors (one per input), using tapegrad ops; returns a
        tensor or a list of tensors.
    inputs:
        The input arrays (floating ones are differentiated).
    order:
        Highest derivative order that ``gradcheck`` checks (1, 2 or 3).
    ref:
        ``ref(np_module, *arrays)``: the computation for ``autograd.numpy``.
    tref:
        ``tref(torch, *tensors)``: the computation in PyTorch.
    slow:
        The third-order check is slow (marked ``@pytest.mark.slow``).
    f32:
        Also check a float32 copy of the case.
    """

    name: str
    op: str
    fn: Fn
    inputs: tuple[np.ndarray, ...]
    order: int = 3
    ref: Fn | None = None
    tref: Fn | None = None
    slow: bool = False
    f32: bool = True

    def astype(self, dtype: Any) -> OpCase:
        """The same case with every floating input cast to ``dtype``."""
        ins = tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in self.inputs)
        return dataclasses.replace(self, name=f"{self.name}[{np.dtype(dtype).name}]", inputs=ins)

    def tensors(self) -> list[tg.Tensor]:
        """The inputs as fresh core tensors (not requiring grad)."""
        return [tg.tensor(a) for a in self.inputs]


_rng = np.random.default_rng(20240521)


def rand(*shape: int, lo: float = -1.5, hi: float = 1.5) -> np.ndarray:
    """Uniform float64 values in ``[lo, hi)``."""
    return _rng.uniform(lo, hi, size=shape)


def pos(*shape: int, lo: float = 0.3, hi: float = 2.0) -> np.ndarray:
    """Positive float64 values (for log, sqrt, a divisor, a base of a power)."""
    return _rng.uniform(lo, hi, size=shape)


def away(*shape: int, gap: float = 0.2, hi: float = 1.5) -> np.ndarray:
    """Values of both signs with ``|x| >= gap`` (away from the kink at 0)."""
    mag = _rng.uniform(gap, hi, size=shape)
    sgn = np.where(_rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    return mag * sgn


def distinct(*shape: int) -> np.ndarray:
    """Values at least 0.1 apart from each other (no ties for max/min)."""
    n = int(np.prod(shape)) if shape else 1
    vals = (_rng.permutation(n) - n / 2) * 0.25 + _rng.uniform(-0.05, 0.05, size=n)
    return vals.reshape(shape)


CASES: list[OpCase] = []


def case(name: str, op: str, fn: Fn, *inputs: Any, order: int = 3, ref: Fn | None = None,
         tref: Fn | None = None, slow: bool = False, f32: bool = True) -> None:
    """Add a row to :data:`CASES`."""
    arrays = tuple(np.asarray(a) for a in inputs)
    if any(c.name == name for c in CASES):
        raise ValueError(f"duplicate op case {name!r}")
    CASES.append(OpCase(name, op, fn, arrays, order, ref, tref, slow, f32))


def _ew() -> Any:
    from tapegrad.ops import elementwise

    return elementwise


# ---------------------------------------------------------------------------- helpers for refs
def _np_sigmoid(np: Any, x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))


def _np_softplus(np: Any, x: Any) -> Any:
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


def _np_logsumexp(np: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    m = np.max(x, axis=axis, keepdims=True)
    m = m._value if hasattr(m, "_value") else m  # constant shift, as the op does
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else np.reshape(out, ())
    return out


def _np_log_softmax(np: Any, x: Any, axis: int = -1) -> Any:
    return x - _np_logsumexp(np, x, axis=axis, keepdims=True)


def _np_softmax(np: Any, x: Any, axis: int = -1) -> Any:
    return np.exp(_np_log_softmax(np, x, axis))


def _np_erf(np: Any, x: Any) -> Any:
    try:
        from autograd.scipy.special import erf
    except ImportError:  # pragma: no cover - autograd is a dev dependency
        return np.vectorize(math.erf)(x)
    return erf(x)


# ---------------------------------------------------------------------------- arithmetic
case("add", "+", lambda x, y: x + y, rand(3, 4), rand(3, 4),
     ref=lambda np, x, y: x + y, tref=lambda t, x, y: x + y)
case("add_broadcast", "+", lambda x, y: x + y, rand(2, 1, 3), rand(4, 1),
     ref=lambda np, x, y: x + y, tref=lambda t, x, y: x + y)
case("add_scalar_shape", "+", lambda x, y: x + y, rand(), rand(3),
     ref=lambda np, x, y: x + y, tref=lambda t, x, y: x + y)
case("add_fn", "+", lambda x, y: tg.add(x, y), rand(3), rand(),
     ref=lambda np, x, y: np.add(x, y), tref=lambda t, x, y: t.add(x, y))
case("sub_broadcast", "-", lambda x, y: x - y, rand(3, 1), rand(1, 4),
     ref=lambda np, x, y: x - y, tref=lambda t, x, y: x - y)
case("sub_fn", "-", lambda x, y: tg.subtract(x, y), rand(4), rand(2, 4),
     ref=lambda np, x, y: np.subtract(x, y), tref=lambda t, x, y: t.sub(x, y))
case("mul", "*", lambda x, y: x * y, rand(3, 4), rand(3, 4),
     ref=lambda np, x, y: x * y, tref=lambda t, x, y: x * y)
case("mul_broadcast", "*", lambda x, y: x * y, rand(2, 3, 4), rand(3, 1),
     ref=lambda np, x, y: x * y, tref=lambda t, x, y: x * y)
case("mul_same_input", "*", lambda x: x * x, rand(5),
     ref=lambda np, x: x * x, tref=lambda t, x: x * x)
case("mul_scalars", "*", lambda x, y: x * y, rand(), rand(),
     ref=lambda np, x, y: x * y, tref=lambda t, x, y: x * y)
case("div", "/", lambda x, y: x / y, rand(3, 4), away(4, gap=0.5),
     ref=lambda np, x, y: x / y, tref=lambda t, x, y: x / y)
case("div_broadcast_both", "/", lambda x, y: x / y, rand(3, 1), away(1, 4, gap=0.5),
     ref=lambda np, x, y: x / y, tref=lambda t, x, y: x / y)
case("pow_tensor_tensor", "**", lambda x, y: x ** y, pos(3, 4), rand(3, 4),
     ref=lambda np, x, y: x ** y, tref=lambda t, x, y: x ** y)
case("pow_broadcast", "**", lambda x, y: x ** y, pos(2, 3), rand(3),
     ref=lambda np, x, y: x ** y, tref=lambda t, x, y: x ** y)
case("pow_int_exponent", "**", lambda x: x ** 3, rand(4),
     ref=lambda np, x: x ** 3, tref=lambda t, x: x ** 3)
case("pow_two", "**", lambda x: x ** 2, rand(2, 3),
     ref=lambda np, x: x ** 2, tref=lambda t, x: x ** 2)
case("pow_half", "**", lambda x: x ** 0.5, pos(4),
     ref=lambda np, x: x ** 0.5, tref=lambda t, x: x ** 0.5)
case("pow_negative", "**", lambda x: x ** -2, away(4, gap=0.5),
     ref=lambda np, x: x ** -2, tref=lambda t, x: x ** -2)
case("pow_zero_exponent", "**", lambda x: x ** 0 + x, rand(3),
     ref=lambda np, x: x ** 0 + x, tref=lambda t, x: x ** 0 + x)
case("pow_one_exponent", "**", lambda x: x ** 1 * x, rand(3),
     ref=lambda np, x: x ** 1 * x, tref=lambda t, x: x ** 1 * x)
case("pow_fn", "**", lambda x, y: tg.power(x, y), pos(3), rand(),
     ref=lambda np, x, y: np.power(x, y), tref=lambda t, x, y: t.pow(x, y))
case("neg", "unary -", lambda x: -x, rand(3, 2),
     ref=lambda np, x: -x, tref=lambda t, x: -x)
case("neg_fn", "unary -", lambda x: tg.negative(x) * x, rand(),
     ref=lambda np, x: np.negative(x) * x, tref=lambda t, x: t.neg(x) * x)

# matmul: 2-D, batched, broadcast batch, 1-D operands on either side
case("matmul_2d", "@", lambda a, b: a @ b, rand(3, 4), rand(4, 5),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_batched", "@", lambda a, b: a @ b, rand(2, 3, 4), rand(2, 4, 5),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_batch_broadcast", "@", lambda a, b: a @ b, rand(2, 1, 3, 4), rand(3, 4, 2),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_3d_2d", "@", lambda a, b: a @ b, rand(2, 3, 4), rand(4, 2),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_vec_vec", "@", lambda a, b: a @ b, rand(4), rand(4),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_mat_vec", "@", lambda a, b: a @ b, rand(3, 4), rand(4),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_vec_mat", "@", lambda a, b: a @ b, rand(4), rand(4, 5),
     ref=lambda np, a, b: a @ b, tref=lambda t, a, b: a @ b)
case("matmul_vec_batched", "@", lambda a, b: a @ b, rand(4), rand(2, 4, 3),
     ref=lambda np, a, b: np.matmul(a, b), tref=lambda t, a, b: t.matmul(a, b))
case("matmul_batched_vec", "@", lambda a, b: tg.matmul(a, b), rand(2, 3, 4), rand(4),
     ref=lambda np, a, b: np.matmul(a, b), tref=lambda t, a, b: t.matmul(a, b))

# reflected forms: a non-tensor on the left
case("radd", "reflected", lambda x: 2.5 + x, rand(3),
     ref=lambda np, x: 2.5 + x, tref=lambda t, x: 2.5 + x)
case("rsub", "reflected", lambda x: 2.5 - x, rand(3),
     ref=lambda np, x: 2.5 - x, tref=lambda t, x: 2.5 - x)
case("rmul", "reflected", lambda x: 2.5 * x, rand(3),
     ref=lambda np, x: 2.5 * x, tref=lambda t, x: 2.5 * x)
case("rtruediv", "reflected", lambda x: 2.5 / x, away(3, gap=0.5),
     ref=lambda np, x: 2.5 / x, tref=lambda t, x: 2.5 / x)
case("rpow", "reflected", lambda x: 2.5 ** x, rand(3),
     ref=lambda np, x: 2.5 ** x, tref=lambda t, x: 2.5 ** x)
_M = rand(2, 3)
case("rmatmul_list", "reflected", lambda x: _M.tolist() @ x, rand(3, 2),
     ref=lambda np, x: np.matmul(_M, x),
     tref=lambda t, x: t.tensor(_M, dtype=x.dtype) @ x)
case("rmatmul_ndarray", "reflected", lambda x: _M @ x, rand(3),
     ref=lambda np, x: np.matmul(_M, x),
     tref=lambda t, x: t.tensor(_M, dtype=x.dtype) @ x)
case("rsub_array", "reflected", lambda x: np.array([1.0, 2.0, 3.0]) - x, rand(2, 3),
     ref=lambda np, x: np.array([1.0, 2.0, 3.0]) - x,
     tref=lambda t, x: t.tensor([1.0, 2.0, 3.0], dtype=x.dtype) - x)


# in-place forms on a non-leaf (the core follows PyTorch: the tensor is updated, the graph
# records the op)
def _iadd(x: Any, y: Any) -> Any:
    z = x * 1.0
    z += y
    return z


def _isub(x: Any, y: Any) -> Any:
    z = x * 1.0
    z -= y
    z -= 0.5
    return z


def _imul(x: Any, y: Any) -> Any:
    z = x * 1.0
    z *= y
    return z


def _idiv(x: Any, y: Any) -> Any:
    z = x + 0.0
    z /= y
    return z


def _ipow(x: Any) -> Any:
    z = x + 0.0
    z **= 3
    return z


def _ichain(x: Any, y: Any) -> Any:
    z = x.exp() * 1.0
    z *= y
    z += x
    z /= 2.0
    return z * z


def _inplace_after_use(x: Any) -> Any:
    z = x * 2.0
    s = z.sum()  # saved nothing of z: z may change afterwards
    z += 1.0
    return z * s


def _setitem_slice(x: Any, y: Any) -> Any:
    z = x * 1.0
    z[1:3] = y
    return z * z


def _setitem_int_array(x: Any, y: Any) -> Any:
    z = x * 1.0
    z[[0, 2]] = y
    return z * x


def _setitem_mask(x: Any) -> Any:
    z = x * 1.0
    z[x > 0] = 0.0
    return z * z


def _setitem_into_constant(y: Any, t: Any) -> Any:
    z = t.zeros((2, 3), dtype=y.dtype)
    z[:, 1] = y
    return z * z


case("inplace_after_use", "in-place", _inplace_after_use, rand(3),
     ref=lambda np, x: (x * 2.0 + 1.0) * np.sum(x * 2.0), tref=lambda t, x: _inplace_after_use(x))
case("setitem_slice", "in-place", _setitem_slice, rand(4, 3), rand(3),
     ref=lambda np, x, y: np.concatenate([x[:1], np.stack([y, y]), x[3:]]) ** 2,
     tref=lambda t, x, y: _setitem_slice(x, y))
case("setitem_int_array", "in-place", _setitem_int_array, rand(4), rand(2),
     ref=lambda np, x, y: np.stack([y[0], x[1], y[1], x[3]]) * x,
     tref=lambda t, x, y: _setitem_int_array(x, y))
case("setitem_mask", "in-place", _setitem_mask, away(2, 3),
     ref=lambda np, x: np.where(x > 0, 0.0, x) ** 2, tref=lambda t, x: _setitem_mask(x))
case("setitem_into_constant", "in-place", lambda y: _setitem_into_constant(y, tg), rand(2),
     ref=lambda np, y: np.stack([0.0 * y, y, 0.0 * y], axis=1) ** 2,
     tref=lambda t, y: _setitem_into_constant(y, t))
# the ops of in-place writes through views (tapegrad.ops.views): positions in a (2, 3) base;
# inputs from their own generator (the shared one's draws are other rows' inputs)
_vrng = np.random.default_rng(20261202)


def _vr(*shape: int) -> np.ndarray:
    return _vrng.uniform(-1.5, 1.5, size=shape)


_VIDX = np.array([[0, 5], [3, 2]])
_VONE = np.eye(6)[_VIDX.reshape(-1)]  # (4, 6): one row per view element
_DIDX = np.array([0, 2, 2, 5])  # a repeated position (an expanded view) accumulates
_DONE = np.eye(6)[_DIDX]


def _take_flat(x: Any) -> Any:
    from tapegrad.ops.views import take_flat

    return take_flat(x, idx=_VIDX, shape=(2, 3), overlap=False) ** 2


def _put_flat(g: Any) -> Any:
    from tapegrad.ops.views import put_flat

    return put_flat(g, idx=_DIDX, shape=(2, 3), overlap=True) ** 2


def _copy_slices(b: Any, v: Any) -> Any:
    from tapegrad.ops.views import copy_slices

    return copy_slices(b, v, idx=_VIDX) ** 2


def _fill(x: Any) -> Any:
    from tapegrad.ops.views import fill

    return fill(x, value=0.5) * x


def _fill_tensor(x: Any, v: Any) -> Any:
    from tapegrad.ops.views import fill_tensor

    return fill_tensor(x, v) * x


case("fill", "in-place", _fill, _vr(2, 3), ref=lambda np, x: 0.5 * x,
     tref=lambda t, x: t.full_like(x, 0.5) * x)
case("fill_tensor", "in-place", _fill_tensor, _vr(2, 3), _vr(),
     ref=lambda np, x, v: v * x, tref=lambda t, x, v: v * x)
case("view_take_flat", "in-place", _take_flat, _vr(2, 3),
     ref=lambda np, x: np.reshape(np.dot(_VONE, np.reshape(x, (-1,))), (2, 2)) ** 2,
     tref=lambda t, x: (t.as_tensor(_VONE, dtype=x.dtype) @ x.reshape(-1)).reshape(2, 2) ** 2)
case("view_put_flat", "in-place", _put_flat, _vr(4),
     ref=lambda np, g: np.reshape(np.dot(g, _DONE), (2, 3)) ** 2,
     tref=lambda t, g: (g @ t.as_tensor(_DONE, dtype=g.dtype)).reshape(2, 3) ** 2)
case("view_copy_slices", "in-place", _copy_slices, _vr(2, 3), _vr(2, 2),
     ref=lambda np, b, v: np.reshape(np.reshape(b, (-1,)) * (1.0 - np.sum(_VONE, axis=0))
                                     + np.dot(np.reshape(v, (-1,)), _VONE), (2, 3)) ** 2,
     tref=lambda t, b, v: (b.reshape(-1) * (1.0 - t.as_tensor(_VONE, dtype=b.dtype).sum(0))
                           + v.reshape(-1) @ t.as_tensor(_VONE, dtype=b.dtype)).reshape(2, 3)
     ** 2)
case("iadd", "in-place", _iadd, rand(3, 4), rand(4), ref=lambda np, x, y: x + y,
     tref=lambda t, x, y: _iadd(x, y))
case("isub", "in-place", _isub, rand(3), rand(3), ref=lambda np, x, y: x - y - 0.5,
     tref=lambda t, x, y: _isub(x, y))
case("imul", "in-place", _imul, rand(2, 3), rand(2, 3), ref=lambda np, x, y: x * y,
     tref=lambda t, x, y: _imul(x, y))
case("idiv", "in-place", _idiv, rand(3), away(3, gap=0.5), ref=lambda np, x, y: x / y,
     tref=lambda t, x, y: _idiv(x, y))
case("ipow", "in-place", _ipow, rand(3), ref=lambda np, x: x ** 3, tref=lambda t, x: _ipow(x))
case("inplace_chain", "in-place", _ichain, rand(3), rand(3),
     ref=lambda np, x, y: ((np.exp(x) * y + x) / 2.0) ** 2, tref=lambda t, x, y: _ichain(x, y))

# ---------------------------------------------------------------------------- unary math
case("abs", "abs", lambda x: tg.abs(x), away(3, 4),
     ref=lambda np, x: np.abs(x), tref=lambda t, x: t.abs(x))
case("abs_operator", "abs", lambda x: abs(x) * x, away(3),
     ref=lambda np, x: np.abs(x) * x, tref=lambda t, x: abs(x) * x)
case("sign", "sign", lambda x: tg.sign(x) * x, away(4),
     ref=lambda np, x: np.sign(x) * x, tref=lambda t, x: t.sign(x) * x)
case("exp", "exp", lambda x: tg.exp(x), rand(3, 2),
     ref=lambda np, x: np.exp(x), tref=lambda t, x: t.exp(x))
case("exp_scalar", "exp", lambda x: tg.exp(x), rand(),
     ref=lambda np, x: np.exp(x), tref=lambda t, x: t.exp(x))
case("log", "log", lambda x: tg.log(x), pos(3, 2),
     ref=lambda np, x: np.log(x), tref=lambda t, x: t.log(x))
case("log1p", "log1p", lambda x: tg.log1p(x), pos(4, lo=-0.7, hi=2.0),
     ref=lambda np, x: np.log1p(x), tref=lambda t, x: t.log1p(x))
case("expm1", "expm1", lambda x: tg.expm1(x), rand(4),
     ref=lambda np, x: np.expm1(x), tref=lambda t, x: t.expm1(x))
case("sqrt", "sqrt", lambda x: tg.sqrt(x), pos(2, 3),
     ref=lambda np, x: np.sqrt(x), tref=lambda t, x: t.sqrt(x))
case("sqrt_zero_safe", "sqrt", lambda x: tg.sqrt(x, zero_safe=True), pos(3),
     ref=lambda np, x: np.sqrt(x), tref=lambda t, x: t.sqrt(x))
case("square", "square", lambda x: tg.square(x), rand(3, 2),
     ref=lambda np, x: np.square(x), tref=lambda t, x: t.square(x))
case("sin", "sin", lambda x: tg.sin(x), rand(4),
     ref=lambda np, x: np.sin(x), tref=lambda t, x: t.sin(x))
case("cos", "cos", lambda x: tg.cos(x), rand(4),
     ref=lambda np, x: np.cos(x), tref=lambda t, x: t.cos(x))
case("tan", "tan", lambda x: tg.tan(x), rand(4, lo=-1.1, hi=1.1),
     ref=lambda np, x: np.tan(x), tref=lambda t, x: t.tan(x))
case("tanh", "tanh", lambda x: tg.tanh(x), rand(2, 3),
     ref=lambda np, x: np.tanh(x), tref=lambda t, x: t.tanh(x))
case("sigmoid", "sigmoid", lambda x: tg.sigmoid(x), rand(2, 3, lo=-4, hi=4),
     ref=_np_sigmoid, tref=lambda t, x: t.sigmoid(x))
case("relu", "relu", lambda x: tg.relu(x), away(3, 4),
     ref=lambda np, x: np.maximum(x, 0.0), tref=lambda t, x: t.relu(x))
case("relu_squared", "relu", lambda x: tg.relu(x) * x, away(5),
     ref=lambda np, x: np.maximum(x, 0.0) * x, tref=lambda t, x: t.relu(x) * x)
case("sigmoid_backward", "sigmoid", lambda g, y: _ew().sigmoid_backward(g, y) * y, _vr(2, 3),
     _vrng.uniform(0.1, 0.9, (2, 3)), ref=lambda np, g, y: g * (1.0 - y) * y * y,
     tref=lambda t, g, y: g * (1.0 - y) * y * y)
case("threshold_backward", "relu", lambda g, y: _ew().threshold_backward(g, y) * g, _vr(2, 3),
     np.where(np.arange(6).reshape(2, 3) % 2, 1.0, -1.0) * _vrng.uniform(0.2, 1.5, (2, 3)),
     ref=lambda np, g, y: np.where(y > 0, g, 0.0) * g,
     tref=lambda t, g, y: t.where(y > 0, g, 0.0) * g)
case("leaky_relu", "leaky_relu", lambda x: tg.leaky_relu(x) * x, away(6),
     ref=lambda np, x: np.where(x > 0, x, 0.01 * x) * x,
     tref=lambda t, x: t.nn.functional.leaky_relu(x) * x)
case("leaky_relu_slope", "leaky_relu", lambda x: tg.leaky_relu(x, negative_slope=0.2), away(6),
     ref=lambda np, x: np.where(x > 0, x, 0.2 * x),
     tref=lambda t, x: t.nn.functional.leaky_relu(x, 0.2))
case("elu", "elu", lambda x: tg.elu(x), away(6),
     ref=lambda np, x: np.where(x > 0, x, np.expm1(x)), tref=lambda t, x: t.nn.functional.elu(x))
case("elu_alpha", "elu", lambda x: tg.elu(x, alpha=1.5), away(2, 3),
     ref=lambda np, x: np.where(x > 0, x, 1.5 * np.expm1(x)),
     tref=lambda t, x: t.nn.functional.elu(x, alpha=1.5))
case("gelu", "gelu", lambda x: tg.gelu(x), rand(6, lo=-3, hi=3),
     ref=lambda np, x: 0.5 * x * (1.0 + _np_erf(np, x / math.sqrt(2.0))),
     tref=lambda t, x: t.nn.functional.gelu(x))
case("gelu_tanh", "gelu", lambda x: tg.gelu(x, approximate="tanh"), rand(6, lo=-3, hi=3),
     ref=lambda np, x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
     tref=lambda t, x: t.nn.functional.gelu(x, approximate="tanh"))
case("softplus", "softplus", lambda x: tg.softplus(x), rand(6, lo=-5, hi=5),
     ref=_np_softplus, tref=lambda t, x: t.nn.functional.softplus(x))
case("softplus_beta_threshold", "softplus",
     lambda x: tg.softplus(x, beta=2.0, threshold=3.0), np.array([-2.0, -0.3, 0.4, 1.0, 2.5, 4.0]),
     ref=lambda np, x: np.where(2.0 * x > 3.0, x, _np_softplus(np, 2.0 * x) / 2.0),
     tref=lambda t, x: t.nn.functional.softplus(x, beta=2.0, threshold=3.0))

# ---------------------------------------------------------------------------- selections
case("maximum", "maximum", lambda x, y: tg.maximum(x, y), distinct(3, 4), distinct(4) + 0.05,
     ref=lambda np, x, y: np.maximum(x, y), tref=lambda t, x, y: t.maximum(x, y))
case("maximum_first", "maximum", lambda x, y: tg.maximum(x, y, ties="first"), distinct(3),
     distinct(2, 3) + 0.05, ref=lambda np, x, y: np.maximum(x, y),
     tref=lambda t, x, y: t.maximum(x, y))
case("minimum", "minimum", lambda x, y: tg.minimum(x, y), distinct(3, 1), distinct(4) + 0.05,
     ref=lambda np, x, y: np.minimum(x, y), tref=lambda t, x, y: t.minimum(x, y))
case("minimum_first", "minimum", lambda x, y: tg.minimum(x, y, ties="first"), distinct(5),
     distinct(5) + 0.05, ref=lambda np, x, y: np.minimum(x, y),
     tref=lambda t, x, y: t.minimum(x, y))
case("clip", "clip", lambda x: tg.clip(x, -0.5, 0.7), np.array([-1.3, -0.6, -0.2, 0.1, 0.5, 0.9]),
     ref=lambda np, x: np.clip(x, -0.5, 0.7), tref=lambda t, x: t.clamp(x, -0.5, 0.7))
case("clip_lower_only", "clip", lambda x: tg.clip(x, 0.0, None) * x, away(6),
     ref=lambda np, x: np.maximum(x, 0.0) * x, tref=lambda t, x: t.clamp(x, min=0.0) * x)
case("clip_upper_only", "clip", lambda x: tg.clip(x, None, 0.3), away(6),
     ref=lambda np, x: np.minimum(x, 0.3), tref=lambda t, x: t.clamp(x, max=0.3))
case("clip_tensor_bounds", "clip", lambda x, lo, hi: tg.clip(x, lo, hi),
     np.array([-1.0, 0.0, 0.3, 1.2, 2.0]), np.array([-0.5, 0.2, -0.1, 0.4, 0.1]),
     np.array([0.5, 0.6, 0.9, 0.8, 0.1 + 0.4]),
     ref=lambda np, x, lo, hi: np.minimum(np.maximum(x, lo), hi),
     tref=lambda t, x, lo, hi: t.clamp(x, lo, hi))
_COND = np.array([[True, False, True], [False, False, True]])
case("where", "where", lambda x, y: tg.where(_COND, x, y), rand(2, 3), rand(3),
     ref=lambda np, x, y: np.where(_COND, x, y + 0.0 * x),
     tref=lambda t, x, y: t.where(t.tensor(_COND), x, y))
case("where_tensor_cond", "where", lambda x, y: tg.where(x > y, x * y, x + y), distinct(4),
     distinct(4) + 0.05, ref=lambda np, x, y: np.where(x > y, x * y, x + y),
     tref=lambda t, x, y: t.where(x > y, x * y, x + y))
case("where_scalar_branch", "where", lambda x: tg.where(x > 0, x, 0.0) * x, away(5),
     ref=lambda np, x: np.where(x > 0, x, 0.0) * x,
     tref=lambda t, x: t.where(x > 0, x, 0.0) * x)

# ---------------------------------------------------------------------------- reductions
case("sum_all", "sum", lambda x: tg.sum(x), rand(3, 4),
     ref=lambda np, x: np.sum(x), tref=lambda t, x: t.sum(x))
case("sum_axis0", "sum", lambda x: tg.sum(x * x, axis=0), rand(3, 4),
     ref=lambda np, x: np.sum(x * x, axis=0), tref=lambda t, x: t.sum(x * x, dim=0))
case("sum_neg_axis_keepdims", "sum", lambda x: tg.sum(x * x, axis=-1, keepdims=True),
     rand(2, 3, 4), ref=lambda np, x: np.sum(x * x, axis=-1, keepdims=True),
     tref=lambda t, x: t.sum(x * x, dim=-1, keepdim=True))
case("sum_two_axes", "sum", lambda x: tg.sum(x * x, axis=(0, -1)), rand(2, 3, 4),
     ref=lambda np, x: np.sum(x * x, axis=(0, 2)), tref=lambda t, x: t.sum(x * x, dim=(0, 2)))
case("sum_scalar_input", "sum", lambda x: tg.sum(x * x), rand(),
     ref=lambda np, x: np.sum(x * x), tref=lambda t, x: t.sum(x * x))
case("sum_method_dim", "sum", lambda x: (x * x).sum(dim=1, keepdim=True), rand(3, 2),
     ref=lambda np, x: np.sum(x * x, axis=1, keepdims=True),
     tref=lambda t, x: (x * x).sum(dim=1, keepdim=True))
case("mean_all", "mean", lambda x: tg.mean(x * x), rand(3, 4),
     ref=lambda np, x: np.mean(x * x), tref=lambda t, x: t.mean(x * x))
case("mean_axis_keepdims", "mean", lambda x: tg.mean(x * x, axis=-2, keepdims=True), rand(2, 3, 4),
     ref=lambda np, x: np.mean(x * x, axis=-2, keepdims=True),
     tref=lambda t, x: t.mean(x * x, dim=-2, keepdim=True))
case("mean_axes", "mean", lambda x: tg.mean(x * x, axis=(0, 1)), rand(2, 3, 4),
     ref=lambda np, x: np.mean(x * x, axis=(0, 1)), tref=lambda t, x: t.mean(x * x, dim=(0, 1)))
case("prod_all", "prod", lambda x: tg.prod(x), rand(2, 3),
     ref=lambda np, x: np.prod(x), tref=lambda t, x: t.prod(x))
case("prod_axis", "prod", lambda x: tg.prod(x, axis=1), rand(3, 4),
     ref=lambda np, x: np.prod(x, axis=1), tref=lambda t, x: t.prod(x, dim=1))
case("prod_neg_axis_keepdims", "prod", lambda x: tg.prod(x, axis=-1, keepdims=True),
     rand(2, 2, 3), ref=lambda np, x: np.prod(x, axis=-1, keepdims=True),
     tref=lambda t, x: t.prod(x, dim=-1, keepdim=True))
case("prod_with_zero", "prod", lambda x: tg.prod(x, axis=0),
     np.array([[0.0, 1.5, 0.7], [1.3, 0.0, -0.4], [0.9, 0.0, 2.0]]),
     ref=lambda np, x: x[0] * x[1] * x[2], tref=lambda t, x: t.prod(x, dim=0))
case("prod_all_with_zero", "prod", lambda x: tg.prod(x), np.array([0.0, 1.5, -0.7, 1.1]),
     ref=lambda np, x: x[0] * x[1] * x[2] * x[3], tref=lambda t, x: t.prod(x))
case("max_all", "max", lambda x: tg.max(x), distinct(3, 4),
     ref=lambda np, x: np.max(x), tref=lambda t, x: t.max(x))
case("max_axis", "max", lambda x: tg.max(x, axis=1), distinct(3, 4),
     ref=lambda np, x: np.max(x, axis=1), tref=lambda t, x: t.amax(x, dim=1))
case("max_neg_axis_keepdims", "max", lambda x: tg.max(x, axis=-1, keepdims=True),
     distinct(2, 3, 4), ref=lambda np, x: np.max(x, axis=-1, keepdims=True),
     tref=lambda t, x: t.amax(x, dim=-1, keepdim=True))
case("max_axes", "max", lambda x: tg.max(x, axis=(0, 2)), distinct(2, 3, 4),
     ref=lambda np, x: np.max(x, axis=(0, 2)), tref=lambda t, x: t.amax(x, dim=(0, 2)))
case("max_first", "max", lambda x: tg.max(x, axis=0, ties="first"), distinct(3, 4),
     ref=lambda np, x: np.max(x, axis=0), tref=lambda t, x: t.max(x, dim=0)[0])
case("max_scalar", "max", lambda x: tg.max(x) * x, rand(),
     ref=lambda np, x: np.max(x) * x, tref=lambda t, x: t.max(x) * x)
case("min_all", "min", lambda x: tg.min(x), distinct(3, 4),
     ref=lambda np, x: np.min(x), tref=lambda t, x: t.min(x))
case("min_axis_keepdims", "min", lambda x: tg.min(x, axis=0, keepdims=True), distinct(3, 4),
     ref=lambda np, x: np.min(x, axis=0, keepdims=True),
     tref=lambda t, x: t.amin(x, dim=0, keepdim=True))
case("min_first", "min", lambda x: tg.min(x, axis=-1, ties="first"), distinct(2, 5),
     ref=lambda np, x: np.min(x, axis=-1), tref=lambda t, x: t.min(x, dim=-1)[0])
case("var_all", "var", lambda x: tg.var(x), rand(3, 4),
     ref=lambda np, x: np.var(x), tref=lambda t, x: t.var(x, unbiased=False))
case("var_axis_ddof", "var", lambda x: tg.var(x, axis=-1, ddof=1), rand(3, 4),
     ref=lambda np, x: np.var(x, axis=-1, ddof=1), tref=lambda t, x: t.var(x, dim=-1))
case("var_keepdims", "var", lambda x: tg.var(x, axis=0, keepdims=True), rand(3, 2),
     ref=lambda np, x: np.var(x, axis=0, keepdims=True),
     tref=lambda t, x: t.var(x, dim=0, keepdim=True, unbiased=False))
case("std_all", "std", lambda x: tg.std(x), rand(3, 4),
     ref=lambda np, x: np.std(x), tref=lambda t, x: t.std(x, unbiased=False))
case("std_axis_ddof_keepdims", "std", lambda x: tg.std(x, axis=1, ddof=1, keepdims=True),
     rand(2, 5), ref=lambda np, x: np.std(x, axis=1, ddof=1, keepdims=True),
     tref=lambda t, x: t.std(x, dim=1, keepdim=True))
case("logsumexp_all", "logsumexp", lambda x: tg.logsumexp(x), rand(3, 4),
     ref=lambda np, x: _np_logsumexp(np, x), tref=lambda t, x: t.logsumexp(x, dim=(0, 1)))
case("logsumexp_axis", "logsumexp", lambda x: tg.logsumexp(x, axis=-1), rand(3, 4, lo=-30, hi=30),
     ref=lambda np, x: _np_logsumexp(np, x, axis=-1), tref=lambda t, x: t.logsumexp(x, dim=-1))
case("logsumexp_keepdims", "logsumexp", lambda x: tg.logsumexp(x, axis=0, keepdims=True),
     rand(3, 2), ref=lambda np, x: _np_logsumexp(np, x, axis=0, keepdims=True),
     tref=lambda t, x: t.logsumexp(x, dim=0, keepdim=True))
case("softmax", "softmax", lambda x: tg.softmax(x), rand(3, 4),
     ref=lambda np, x: _np_softmax(np, x), tref=lambda t, x: t.softmax(x, dim=-1))
case("softmax_axis0", "softmax", lambda x: tg.softmax(x, axis=0), rand(3, 4, lo=-20, hi=20),
     ref=lambda np, x: _np_softmax(np, x, axis=0), tref=lambda t, x: t.softmax(x, dim=0))
case("log_softmax", "log_softmax", lambda x: tg.log_softmax(x), rand(3, 4),
     ref=lambda np, x: _np_log_softmax(np, x), tref=lambda t, x: t.log_softmax(x, dim=-1))
case("log_softmax_axis", "log_softmax", lambda x: tg.log_softmax(x, axis=1), rand(2, 3, 2),
     ref=lambda np, x: _np_log_softmax(np, x, axis=1), tref=lambda t, x: t.log_softmax(x, dim=1))
case("cumsum_flat", "cumsum", lambda x: tg.cumsum(x), rand(2, 3),
     ref=lambda np, x: np.cumsum(x), tref=lambda t, x: t.cumsum(x.reshape(-1), dim=0))
case("cumsum_axis", "cumsum", lambda x: tg.cumsum(x * x, axis=1), rand(3, 4),
     ref=lambda np, x: np.cumsum(x * x, axis=1), tref=lambda t, x: t.cumsum(x * x, dim=1))
case("cumsum_neg_axis", "cumsum", lambda x: tg.cumsum(x, axis=-1), rand(2, 2, 3),
     ref=lambda np, x: np.cumsum(x, axis=-1), tref=lambda t, x: t.cumsum(x, dim=-1))

# ---------------------------------------------------------------------------- products
case("dot_vec", "dot", lambda a, b: tg.dot(a, b), rand(5), rand(5),
     ref=lambda np, a, b: np.dot(a, b), tref=lambda t, a, b: t.dot(a, b))
case("dot_mat_vec", "dot", lambda a, b: tg.dot(a, b), rand(3, 5), rand(5),
     ref=lambda np, a, b: np.dot(a, b), tref=lambda t, a, b: t.mv(a, b))
case("dot_mat_mat", "dot", lambda a, b: tg.dot(a, b), rand(3, 2), rand(2, 4),
     ref=lambda np, a, b: np.dot(a, b), tref=lambda t, a, b: t.mm(a, b))
case("dot_scalar", "dot", lambda a, b: tg.dot(a, b), rand(), rand(3),
     ref=lambda np, a, b: np.dot(a, b), tref=lambda t, a, b: a * b)
case("einsum_matmul", "einsum", lambda a, b: tg.einsum("ij,jk->ik", a, b), rand(3, 4), rand(4, 2),
     ref=lambda np, a, b: np.einsum("ij,jk->ik", a, b),
     tref=lambda t, a, b: t.einsum("ij,jk->ik", a, b))
case("einsum_batched", "einsum", lambda a, b: tg.einsum("bij,bjk->bik", a, b), rand(2, 3, 4),
     rand(2, 4, 2), ref=lambda np, a, b: np.einsum("bij,bjk->bik", a, b),
     tref=lambda t, a, b: t.einsum("bij,bjk->bik", a, b))
case("einsum_implicit", "einsum", lambda a, b: tg.einsum("ij,jk", a, b), rand(2, 3), rand(3, 2),
     ref=lambda np, a, b: np.einsum("ij,jk", a, b), tref=lambda t, a, b: t.einsum("ij,jk", a, b))
case("einsum_inner", "einsum", lambda a, b: tg.einsum("i,i->", a, b), rand(4), rand(4),
     ref=lambda np, a, b: np.einsum("i,i->", a, b), tref=lambda t, a, b: t.einsum("i,i->", a, b))
case("einsum_outer", "einsum", lambda a, b: tg.einsum("i,j->ij", a, b), rand(3), rand(2),
     ref=lambda np, a, b: np.einsum("i,j->ij", a, b),
     tref=lambda t, a, b: t.einsum("i,j->ij", a, b))
case("einsum_sum_transpose", "einsum", lambda a: tg.einsum("ijk->kj", a * a), rand(2, 3, 4),
     ref=lambda np, a: np.einsum("ijk->kj", a * a), tref=lambda t, a: t.einsum("ijk->kj", a * a))
case("einsum_ellipsis", "einsum", lambda a, b: tg.einsum("...ij,...jk->...ik", a, b),
     rand(2, 3, 4), rand(4, 2), ref=lambda np, a, b: np.einsum("...ij,...jk->...ik", a, b),
     tref=lambda t, a, b: t.einsum("...ij,...jk->...ik", a, b))
case("einsum_ellipsis_broadcast", "einsum",
     lambda a, b: tg.einsum("...ij,...jk->...ik", a, b), rand(2, 1, 3, 4), rand(5, 4, 2),
     ref=lambda np, a, b: np.matmul(a, b),
     tref=lambda t, a, b: t.einsum("...ij,...jk->...ik", a, b))
case("einsum_three", "einsum", lambda a, b, c: tg.einsum("ij,jk,k->i", a, b, c), rand(2, 3),
     rand(3, 4), rand(4), ref=lambda np, a, b, c: np.einsum("ij,jk,k->i", a, b, c),
     tref=lambda t, a, b, c: t.einsum("ij,jk,k->i", a, b, c))
case("einsum_trace", "einsum", lambda a: tg.einsum("ii->", a * a), rand(3, 3),
     ref=lambda np, a: np.trace(a * a), tref=lambda t, a: t.einsum("ii->", a * a))
case("einsum_diag", "einsum", lambda a, b: tg.einsum("ii,i->i", a, b), rand(3, 3), rand(3),
     ref=lambda np, a, b: np.diag(a) * b,
     tref=lambda t, a, b: t.einsum("ii,i->i", a, b))

# ---------------------------------------------------------------------------- shape ops
case("transpose_default", "transpose", lambda x: tg.transpose(x * x), rand(2, 3, 4),
     ref=lambda np, x: np.transpose(x * x), tref=lambda t, x: (x * x).permute(2, 1, 0))
case("transpose_axes", "transpose", lambda x: tg.transpose(x, (1, 0, 2)), rand(2, 3, 4),
     ref=lambda np, x: np.transpose(x, (1, 0, 2)), tref=lambda t, x: x.permute(1, 0, 2))
case("transpose_T", "transpose", lambda x: x.T @ x, rand(3, 2),
     ref=lambda np, x: x.T @ x, tref=lambda t, x: x.T @ x)
case("permute_negative", "permute", lambda x: tg.permute(x * x, (-1, 0, -2)), rand(2, 3, 4),
     ref=lambda np, x: np.transpose(x * x, (2, 0, 1)), tref=lambda t, x: (x * x).permute(-1, 0, -2))
case("moveaxis", "permute", lambda x: tg.moveaxis(x * x, 0, -1), rand(2, 3, 4),
     ref=lambda np, x: np.transpose(x * x, (1, 2, 0)), tref=lambda t, x: t.movedim(x * x, 0, -1))
case("swapaxes", "permute", lambda x: tg.swapaxes(x, 0, -1) * 2.0, rand(2, 3, 4),
     ref=lambda np, x: np.transpose(x, (2, 1, 0)) * 2.0, tref=lambda t, x: t.swapaxes(x, 0, -1) * 2.0)
case("reshape", "reshape", lambda x: tg.reshape(x, (4, -1)) * 2.0, rand(2, 3, 2),
     ref=lambda np, x: np.reshape(x, (4, -1)) * 2.0, tref=lambda t, x: x.reshape(4, -1) * 2.0)
case("reshape_to_scalar", "reshape", lambda x: tg.reshape(x * x, ()), rand(1, 1),
     ref=lambda np, x: np.reshape(x * x, ()), tref=lambda t, x: (x * x).reshape(()))
case("reshape_method", "reshape", lambda x: (x * x).reshape(3, 2)[0], rand(6),
     ref=lambda np, x: np.reshape(x * x, (3, 2))[0], tref=lambda t, x: (x * x).reshape(3, 2)[0])
case("squeeze_all", "squeeze", lambda x: tg.squeeze(x * x), rand(1, 3, 1),
     ref=lambda np, x: np.squeeze(x * x), tref=lambda t, x: t.squeeze(x * x))
case("squeeze_axis", "squeeze", lambda x: tg.squeeze(x * x, axis=-1), rand(1, 3, 1),
     ref=lambda np, x: np.squeeze(x * x, axis=-1), tref=lambda t, x: t.squeeze(x * x, -1))
case("expand_dims", "expand_dims", lambda x: tg.expand_dims(x, 0) * x, rand(3),
     ref=lambda np, x: np.expand_dims(x, 0) * x, tref=lambda t, x: t.unsqueeze(x, 0) * x)
case("expand_dims_neg", "expand_dims", lambda x: tg.expand_dims(x * x, -1), rand(2, 3),
     ref=lambda np, x: np.expand_dims(x * x, -1), tref=lambda t, x: t.unsqueeze(x * x, -1))
case("broadcast_to", "broadcast_to", lambda x: tg.broadcast_to(x, (2, 3, 4)) * 1.5, rand(3, 1),
     ref=lambda np, x: x * np.ones((2, 3, 4)) * 1.5,
     tref=lambda t, x: t.broadcast_to(x, (2, 3, 4)) * 1.5)
case("broadcast_to_scalar", "broadcast_to", lambda x: tg.broadcast_to(x * x, (3,)), rand(),
     ref=lambda np, x: x * x * np.ones(3), tref=lambda t, x: t.broadcast_to(x * x, (3,)))
case("concat_axis0", "concat", lambda a, b: tg.concatenate([a, b]), rand(2, 3), rand(1, 3),
     ref=lambda np, a, b: np.concatenate([a, b]), tref=lambda t, a, b: t.cat([a, b]))
case("concat_neg_axis", "concat", lambda a, b, c: tg.concat([a, b * b, c], axis=-1),
     rand(2, 1), rand(2, 3), rand(2, 2),
     ref=lambda np, a, b, c: np.concatenate([a, b * b, c], axis=-1),
     tref=lambda t, a, b, c: t.cat([a, b * b, c], dim=-1))
case("concat_same_tensor", "concat", lambda a: tg.concatenate([a, a * a], axis=0), rand(2),
     ref=lambda np, a: np.concatenate([a, a * a], axis=0), tref=lambda t, a: t.cat([a, a * a]))
case("stack_axis0", "stack", lambda a, b: tg.stack([a, b * a]), rand(2, 3), rand(2, 3),
     ref=lambda np, a, b: np.stack([a, b * a]), tref=lambda t, a, b: t.stack([a, b * a]))
case("stack_neg_axis", "stack", lambda a, b: tg.stack([a, b], axis=-1), rand(3), rand(3),
     ref=lambda np, a, b: np.stack([a, b], axis=-1), tref=lambda t, a, b: t.stack([a, b], dim=-1))
case("stack_scalars", "stack", lambda a, b: tg.stack([a * b, b]), rand(), rand(),
     ref=lambda np, a, b: np.stack([a * b, b]), tref=lambda t, a, b: t.stack([a * b, b]))
case("split_sections", "split", lambda x: [p * p for p in tg.split(x, 2, axis=1)], rand(3, 4),
     ref=lambda np, x: [p * p for p in np.split(x, 2, axis=1)],
     tref=lambda t, x: [p * p for p in t.split(x, 2, dim=1)])
case("split_indices", "split", lambda x: tg.split(x * x, [1, 3]), rand(5, 2),
     ref=lambda np, x: np.split(x * x, [1, 3]),
     tref=lambda t, x: list(t.split(x * x, [1, 2, 2])))
case("split_one_used", "split", lambda x: tg.split(x, 3, axis=-1)[1] * x[:, :1], rand(2, 3),
     ref=lambda np, x: np.split(x, 3, axis=-1)[1] * x[:, :1],
     tref=lambda t, x: t.split(x, 1, dim=-1)[1] * x[:, :1])

# ---------------------------------------------------------------------------- indexing
_IDX = np.array([0, 2, 2, 1, 2])
_IDX2 = np.array([[0, 1], [2, 2]])
_MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, True, False]])
case("index_int", "indexing", lambda x: x[1] * x[2], rand(3, 4),
     ref=lambda np, x: x[1] * x[2], tref=lambda t, x: x[1] * x[2])
case("index_negative_int", "indexing", lambda x: x[-1] * x[0, -1], rand(3, 4),
     ref=lambda np, x: x[-1] * x[0, -1], tref=lambda t, x: x[-1] * x[0, -1])
case("index_slice", "indexing", lambda x: x[1:3] * 2.0, rand(4, 2),
     ref=lambda np, x: x[1:3] * 2.0, tref=lambda t, x: x[1:3] * 2.0)
case("index_strided", "indexing", lambda x: x[:, ::2] * x[:, 1::2], rand(3, 4),
     ref=lambda np, x: x[:, ::2] * x[:, 1::2], tref=lambda t, x: x[:, ::2] * x[:, 1::2])
case("index_reverse_step", "indexing", lambda x: x[::-1] * x, rand(5),
     ref=lambda np, x: x[::-1] * x, tref=lambda t, x: t.flip(x, (0,)) * x)
case("index_ellipsis_newaxis", "indexing", lambda x: x[..., 1][None] * 3.0, rand(2, 3, 4),
     ref=lambda np, x: x[..., 1][None] * 3.0, tref=lambda t, x: x[..., 1][None] * 3.0)
case("index_int_array_repeated", "indexing", lambda x: x[_IDX] * x[_IDX], rand(3, 2),
     ref=lambda np, x: x[_IDX] * x[_IDX], tref=lambda t, x: x[t.tensor(_IDX)] * x[t.tensor(_IDX)])
case("index_list_repeated", "indexing", lambda x: x[[0, 0, 1]] * 1.0, rand(3),
     ref=lambda np, x: x[np.array([0, 0, 1])] * 1.0, tref=lambda t, x: x[[0, 0, 1]] * 1.0)
case("index_2d_int_array", "indexing", lambda x: x[_IDX2] * x[_IDX2], rand(3, 2),
     ref=lambda np, x: x[_IDX2] * x[_IDX2],
     tref=lambda t, x: x[t.tensor(_IDX2)] * x[t.tensor(_IDX2)])
case("index_two_arrays", "indexing", lambda x: x[_IDX2[0], _IDX2[1]] * x[1, 1], rand(3, 3),
     ref=lambda np, x: x[_IDX2[0], _IDX2[1]] * x[1, 1],
     tref=lambda t, x: x[t.tensor(_IDX2[0]), t.tensor(_IDX2[1])] * x[1, 1])
case("index_mixed", "indexing", lambda x: x[1:, [0, 0, 2]] ** 2, rand(3, 3),
     ref=lambda np, x: x[1:, np.array([0, 0, 2])] ** 2, tref=lambda t, x: x[1:, [0, 0, 2]] ** 2)
case("index_bool_mask", "indexing", lambda x: x[_MASK] * x[_MASK], rand(3, 4),
     ref=lambda np, x: x[_MASK] * x[_MASK], tref=lambda t, x: x[t.tensor(_MASK)] * x[t.tensor(_MASK)])
case("index_bool_rows", "indexing", lambda x: x[np.array([True, False, True])] * 2.0, rand(3, 2),
     ref=lambda np, x: x[np.array([True, False, True])] * 2.0,
     tref=lambda t, x: x[t.tensor([True, False, True])] * 2.0)
case("index_tensor_index", "indexing", lambda x, i: x[i] * x[i], rand(4), np.array([3, 0, 3]),
     ref=lambda np, x, i: x[i] * x[i], tref=lambda t, x, i: x[i] * x[i])
case("take_flat", "take", lambda x: tg.take(x, [5, 0, 5, 2]) ** 2, rand(2, 3),
     ref=lambda np, x: np.reshape(x, -1)[np.array([5, 0, 5, 2])] ** 2,
     tref=lambda t, x: t.take(x, t.tensor([5, 0, 5, 2])) ** 2)
case("take_axis", "take", lambda x: tg.take(x, _IDX, axis=1) ** 2, rand(2, 3),
     ref=lambda np, x: x[:, _IDX] ** 2,
     tref=lambda t, x: t.index_select(x, 1, t.tensor(_IDX)) ** 2)
case("take_neg_axis_2d_indices", "take", lambda x: tg.take(x, _IDX2, axis=-1) * 3.0, rand(2, 3),
     ref=lambda np, x: x[:, _IDX2] * 3.0,
     tref=lambda t, x: x[:, t.tensor(_IDX2)] * 3.0)
case("gather_rows", "gather", lambda x, i: tg.take(x, i, axis=0) * x[0], rand(3, 2),
     np.array([2, 2, 0]), ref=lambda np, x, i: x[i] * x[0],
     tref=lambda t, x, i: x[i] * x[0])
case("pad", "pad", lambda x: tg.pad(x, ((1, 2), (0, 1))) * tg.tensor(np.arange(20.0).reshape(5, 4)),
     rand(2, 3), ref=lambda np, x: np.pad(x, ((1, 2), (0, 1)), mode="constant")
     * np.arange(20.0).reshape(5, 4),
     tref=lambda t, x: t.nn.functional.pad(x, (0, 1, 1, 2))
     * t.arange(20.0, dtype=x.dtype).reshape(5, 4))
case("pad_value", "pad", lambda x: tg.pad(x * x, 1, constant_values=0.5), rand(3),
     ref=lambda np, x: np.pad(x * x, 1, mode="constant", constant_values=0.5),
     tref=lambda t, x: t.nn.functional.pad(x * x, (1, 1), value=0.5))
case("flip_all", "flip", lambda x: tg.flip(x) * tg.tensor(np.arange(6.0).reshape(2, 3)), rand(2, 3),
     ref=lambda np, x: x[::-1, ::-1] * np.arange(6.0).reshape(2, 3),
     tref=lambda t, x: t.flip(x, (0, 1)) * t.arange(6.0, dtype=x.dtype).reshape(2, 3))
case("flip_axis", "flip", lambda x: tg.flip(x, axis=-1) * x, rand(2, 3),
     ref=lambda np, x: x[:, ::-1] * x, tref=lambda t, x: t.flip(x, (-1,)) * x)

# ---------------------------------------------------------------------------- losses
_T = np.array([1, 0, 3, 3])
_P = _rng.dirichlet(np.ones(5), size=4)
case("cross_entropy", "cross_entropy", lambda z: tg.cross_entropy(z, _T), rand(4, 5),
     ref=lambda np, z: -np.mean(_np_log_softmax(np, z)[np.arange(4), _T]),
     tref=lambda t, z: t.nn.functional.cross_entropy(z, t.tensor(_T)))
case("cross_entropy_sum", "cross_entropy",
     lambda z: tg.cross_entropy(z, _T, reduction="sum"), rand(4, 5),
     ref=lambda np, z: -np.sum(_np_log_softmax(np, z)[np.arange(4), _T]),
     tref=lambda t, z: t.nn.functional.cross_entropy(z, t.tensor(_T), reduction="sum"))
case("cross_entropy_none", "cross_entropy",
     lambda z: tg.cross_entropy(z, _T, reduction="none"), rand(4, 5),
     ref=lambda np, z: -_np_log_softmax(np, z)[np.arange(4), _T],
     tref=lambda t, z: t.nn.functional.cross_entropy(z, t.tensor(_T), reduction="none"))
case("cross_entropy_probs", "cross_entropy", lambda z, p: tg.cross_entropy(z, p), rand(4, 5), _P,
     ref=lambda np, z, p: np.mean(-np.sum(p * _np_log_softmax(np, z), axis=-1)),
     tref=lambda t, z, p: t.nn.functional.cross_entropy(z, p))
case("cross_entropy_1d", "cross_entropy", lambda z: tg.cross_entropy(z, np.array(2)), rand(5),
     ref=lambda np, z: -_np_log_softmax(np, z)[2],
     tref=lambda t, z: t.nn.functional.cross_entropy(z, t.tensor(2)))
_T3 = np.array([[0, 2, 1, 2], [1, 1, 0, 2]])
case("cross_entropy_class_axis1", "cross_entropy",
     lambda z: tg.cross_entropy(z, _T3, axis=1), rand(2, 3, 4),
     ref=lambda np, z: -np.mean(np.sum(_np_log_softmax(np, z, axis=1)
                                       * (np.arange(3)[None, :, None] == _T3[:, None, :]), axis=1)),
     tref=lambda t, z: t.nn.functional.cross_entropy(z, t.tensor(_T3)))
case("mse_loss", "mse_loss", lambda a, b: tg.mse_loss(a, b), rand(3, 4), rand(3, 4),
     ref=lambda np, a, b: np.mean((a - b) ** 2), tref=lambda t, a, b: t.nn.functional.mse_loss(a, b))
case("mse_loss_sum", "mse_loss", lambda a, b: tg.mse_loss(a, b, reduction="sum"), rand(5), rand(5),
     ref=lambda np, a, b: np.sum((a - b) ** 2),
     tref=lambda t, a, b: t.nn.functional.mse_loss(a, b, reduction="sum"))
case("mse_loss_none", "mse_loss", lambda a, b: tg.mse_loss(a, b, reduction="none"), rand(2, 3),
     rand(2, 3), ref=lambda np, a, b: (a - b) ** 2,
     tref=lambda t, a, b: t.nn.functional.mse_loss(a, b, reduction="none"))
case("sigmoid_xent", "cross_entropy",
     lambda y, z: tg.sigmoid_cross_entropy_with_logits(y, z), _rng.uniform(0, 1, (2, 3)),
     rand(2, 3, lo=-4, hi=4),
     ref=lambda np, y, z: -(y * np.log(_np_sigmoid(np, z)) + (1 - y) * np.log(1 - _np_sigmoid(np, z))),
     tref=lambda t, y, z: t.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none"))
case("softmax_xent", "cross_entropy",
     lambda p, z: tg.softmax_cross_entropy_with_logits(p, z), _P, rand(4, 5),
     ref=lambda np, p, z: -np.sum(p * _np_log_softmax(np, z), axis=-1),
     tref=lambda t, p, z: t.nn.functional.cross_entropy(z, p, reduction="none"))

# ---------------------------------------------------------------------------- compositions
case("mlp", "composition",
     lambda x, w, b: tg.mean(tg.tanh(x @ w + b) ** 2), rand(4, 3), rand(3, 2), rand(2),
     ref=lambda np, x, w, b: np.mean(np.tanh(x @ w + b) ** 2),
     tref=lambda t, x, w, b: t.mean(t.tanh(x @ w + b) ** 2))
case("layernorm", "composition",
     lambda x: (x - tg.mean(x, axis=-1, keepdims=True))
     / tg.sqrt(tg.var(x, axis=-1, keepdims=True) + 1e-5), rand(2, 4),
     ref=lambda np, x: (x - np.mean(x, axis=-1, keepdims=True))
     / np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5),
     tref=lambda t, x: t.nn.functional.layer_norm(x, (4,), eps=1e-5))
case("cast_identity_clone", "composition",
     lambda x: tg.cast(x, dtype=np.float64) * tg.clone(x) + tg.identity(x), rand(3),
     ref=lambda np, x: x * x + x, tref=lambda t, x: x.double() * x.clone() + x, f32=False)


# ---------------------------------------------------------------------------- coverage
#: The op set of SPEC section 1, as the ``op`` tags above name it.
SPEC_OPS: tuple[str, ...] = (
    "+", "-", "*", "/", "**", "@", "unary -", "reflected", "in-place", "abs", "sign", "exp",
    "log", "log1p", "expm1", "sqrt", "square", "sin", "cos", "tan", "tanh", "sigmoid", "relu",
    "leaky_relu", "elu", "gelu", "softplus", "maximum", "minimum", "clip", "where", "sum",
    "mean", "prod", "max", "min", "var", "std", "logsumexp", "softmax", "log_softmax", "cumsum",
    "dot", "einsum", "transpose", "permute", "reshape", "squeeze", "expand_dims",
    "broadcast_to", "concat", "stack", "split", "indexing", "take", "gather", "pad", "flip",
    "cross_entropy", "mse_loss",
)


def all_cases(dtypes: Sequence[Any] = (np.float64, np.float32)) -> list[OpCase]:
    """Every case in float64, plus a float32 copy of those marked ``f32``."""
    out: list[OpCase] = []
    for c in CASES:
        for dt in dtypes:
            if np.dtype(dt) == np.float64:
                out.append(c)
            elif c.f32:
                out.append(c.astype(dt))
    return out
