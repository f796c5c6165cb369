"""The op set under PyTorch's names and signatures (``dim=``, ``keepdim=``, ...).

Every function here is a thin adapter over the core ops (or the torch-named
primitives in :mod:`._prims`): argument conventions, dtype promotion and
PyTorch's choices at non-differentiable points.  No op has a second
implementation.
"""

from __future__ import annotations

import builtins
import collections
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops as core
from .._core.errors import hinted, with_hint
from .._core.tensor import TORCH, Tensor, make, restyle
from ..ops.reduce import argsort as _core_argsort
from ..ops.reduce import norm_axis
from . import _prims as P
from ._dtype import Size, from_np, to_np
from ._tensor import _wrap, promote

_abs = builtins.abs
_max = builtins.max
_min = builtins.min
_sum = builtins.sum


def _t(x: Any) -> Tensor:
    """``x`` as a tensor (Python numbers become 0-d tensors of PyTorch's dtype)."""
    if isinstance(x, Tensor):
        return x
    from ._tensor import tensor

    return tensor(x)


def _check_tensor(x: Any, fn: str, arg: str = "input", pos: int = 1) -> Tensor:
    if not isinstance(x, Tensor):
        raise hinted(TypeError(
            with_hint(
                f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                f"{type(x).__name__}",
                f"wrap the value with torch.tensor(...) before calling {fn}",
            )
        ))
    return x


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, Tensor) else np.shape(x)


def _ndim(x: Any) -> int:
    return len(_shape(x))


def _dim(d: Any, ndim: int) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer, Tensor)):
        raise hinted(TypeError(with_hint(f"argument 'dim' must be int, not {type(d).__name__}",
                                  "dim is an integer, e.g. dim=0")))
    n = _max(ndim, 1)   # PyTorch wraps a 0-d tensor's dim as if it had one
    if not -n <= int(d) < n:
        raise hinted(IndexError(with_hint(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})",
            f"the tensor has {ndim} dimensions")))
    ax = norm_axis(int(d), ndim)
    return ax[0] if ax else 0


def _dims(d: Any, ndim: int) -> tuple[int, ...] | None:
    if d is None:
        return None
    if isinstance(d, (list, tuple)) and len(d) == 0:
        return None
    items = d if isinstance(d, (list, tuple)) else [d]
    for i in items:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer, Tensor)):
            raise hinted(TypeError(with_hint(
                f"argument 'dim' must be int or tuple of ints, not {type(i).__name__}",
                "dims are integers, e.g. dim=0 or dim=(0, 1)")))
    return norm_axis(d, ndim)


def _broadcast_check(a: Any, b: Any) -> None:
    sa, sb = _shape(a), _shape(b)
    if sa == sb:
        return
    n = _max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise hinted(RuntimeError(
                with_hint(
                    f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                    f"at non-singleton dimension {i}",
                    f"shapes {list(sa)} and {list(sb)} do not broadcast",
                )
            ))


def binary(name: str, a: Any, b: Any) -> Tensor:
    """A core binary op with PyTorch's promotion and broadcasting message."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _t(a)
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.shape != b._data.shape:
        _broadcast_check(a, b)
    a, b = promote(a, b, name)
    return getattr(core, name)(a, b)


# ----------------------------------------------------------------------------- arithmetic
def add(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """``input + alpha * other``.

    >>> import tapegrad.torch as torch
    >>> torch.add(torch.tensor([1.0, 2.0]), 1, alpha=2)
    tensor([3., 4.])
    """
    if alpha != 1:
        other = binary("multiply", other, alpha)
    return binary("add", input, other)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """``input - alpha * other``."""
    if isinstance(input, Tensor) and input._data.dtype == np.bool_ and isinstance(other, Tensor) \
            and other._data.dtype == np.bool_:
        raise hinted(RuntimeError(with_hint(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.", "convert to int or float first")))
    if alpha != 1:
        other = binary("multiply", other, alpha)
    return binary("subtract", input, other)


subtract = sub


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    return sub(other, input, alpha=alpha)


def mul(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Elementwise product."""
    return binary("multiply", input, other)


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Any = None) -> Tensor:
    """True division (``rounding_mode`` "trunc" or "floor" rounds the quotient)."""
    if rounding_mode is None:
        return binary("divide", input, other)
    if rounding_mode == "floor":
        return binary("floor_divide", input, other)
    if rounding_mode == "trunc":
        q = binary("divide", input, other)
        r = _wrap(np.trunc(q._data).astype(q._data.dtype))
        if isinstance(input, Tensor) and input._data.dtype.kind in "iu" and (
                not isinstance(other, Tensor) or other._data.dtype.kind in "iu") \
                and not isinstance(other, float):
            r = _wrap(r._data.astype(np.int64 if not isinstance(input, Tensor)
                                     else input._data.dtype))
        return r
    raise hinted(RuntimeError(with_hint(f"div expected rounding_mode to be one of None, 'trunc', or "
                                 f"'floor' but found '{rounding_mode}'",
                                 "pass None, 'trunc' or 'floor'")))


divide = div
true_divide = div


def floor_divide(input: Any, other: Any) -> Tensor:
    return binary("floor_divide", input, other)


def remainder(input: Any, other: Any) -> Tensor:
    return binary("remainder", input, other)


def fmod(input: Any, other: Any) -> Tensor:
    x = binary("remainder", input, other)
    a = _t(input)._data
    b = other._data if isinstance(other, Tensor) else other
    with np.errstate(all="ignore"):
        return _wrap(np.fmod(a, b).astype(x._data.dtype)) if not x.requires_grad else \
            binary("subtract", input, multiply(_wrap(np.trunc(np.true_divide(a, b))), other))


def pow(input: Any, exponent: Any, *, out: Any = None) -> Tensor:
    """``input ** exponent``; ``PowBackward1`` for a tensor exponent, ``PowBackward2``
    for a number base, as in PyTorch."""
    if not isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            a, b = promote(input, exponent, "power")
            return P.pow_scalar_base_op(a, b)
        input = _t(input)
    if isinstance(exponent, Tensor):
        _broadcast_check(input, exponent)
        a, b = promote(input, exponent, "power")
        return P.pow_tensor_op(a, b)
    return binary("power", input, exponent)


def neg(input: Tensor) -> Tensor:
    if input._data.dtype == np.bool_:
        raise hinted(RuntimeError(with_hint(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.",
            "use ~mask or logical_not")))
    return core.negative(input)


negative = neg


def _floatify(x: Tensor) -> Tensor:
    from ._dtype import default_np

    if not isinstance(x, Tensor):
        raise hinted(TypeError(with_hint(f"expected a Tensor, but got {type(x).__name__}",
                                  "pass a tensor (torch.tensor(...))")))
    return x if x._data.dtype.kind in "fc" else core.cast(x, dtype=default_np())


def _unary(fn: Any, name: str, floating: bool = True) -> Any:
    def f(input: Any, *, out: Any = None) -> Tensor:
        x = _check_tensor(input, name)
        return fn(_floatify(x) if floating else x)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (PyTorch's ``torch.{name}``)."
    return f


exp = _unary(core.exp, "exp")
log = _unary(core.log, "log")
log1p = _unary(core.log1p, "log1p")
expm1 = _unary(core.expm1, "expm1")
sqrt = _unary(core.sqrt, "sqrt")
sin = _unary(core.sin, "sin")
cos = _unary(core.cos, "cos")
tan = _unary(core.tan, "tan")
tanh = _unary(core.tanh, "tanh")
sigmoid = _unary(core.sigmoid, "sigmoid")
erf = _unary(core.erf, "erf")
reciprocal = _unary(core.reciprocal, "reciprocal")
abs = _unary(core.abs, "abs", floating=False)
absolute = abs
sign = _unary(core.sign, "sign", floating=False)
square = _unary(lambda x: core.power(x, 2), "square", floating=False)
floor = _unary(P.floor_op, "floor", floating=False)
ceil = _unary(P.ceil_op, "ceil", floating=False)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0), with gradient 0 at 0 (PyTorch's convention)."""
    return core.relu(_check_tensor(input, "relu"))


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return P.round_op(input, decimals=decimals)


def trunc(input: Tensor) -> Tensor:
    return P.trunc_op(input)


def log2(input: Tensor) -> Tensor:
    return core.divide(log(input), float(np.log(2.0)))


def log10(input: Tensor) -> Tensor:
    return core.divide(log(input), float(np.log(10.0)))


def rsqrt(input: Tensor) -> Tensor:
    return core.reciprocal(sqrt(input))


def exp2(input: Tensor) -> Tensor:
    return pow(2.0, _floatify(input))


def sinh(input: Tensor) -> Tensor:
    x = _floatify(input)
    return core.multiply(core.subtract(core.exp(x), core.exp(core.negative(x))), 0.5)


def cosh(input: Tensor) -> Tensor:
    x = _floatify(input)
    return core.multiply(core.add(core.exp(x), core.exp(core.negative(x))), 0.5)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise max; at ties each side gets half the gradient (PyTorch)."""
    _broadcast_check(input, other)
    a, b = promote(input, other, "maximum")
    return core.maximum(a, b, ties="half")


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise min; at ties each side gets half the gradient (PyTorch)."""
    _broadcast_check(input, other)
    a, b = promote(input, other, "minimum")
    return core.minimum(a, b, ties="half")


def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Any = None) -> Tensor:
    """Clamp to ``[min, max]``; the gradient passes at the bounds (inclusive), as in PyTorch.

    >>> import tapegrad.torch as torch
    >>> torch.clamp(torch.tensor([-1.0, 0.5, 2.0]), 0, 1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    x = _check_tensor(input, "clamp")
    if min is None and max is None:
        raise hinted(RuntimeError(with_hint("torch.clamp: At least one of 'min' or 'max' must not be "
                                     "None", "pass min=, max= or both")))
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return P.clamp_tensor_op(x, min, max, bounds="torch")
    if x._data.dtype.kind in "iub" and (isinstance(min, float) or isinstance(max, float)):
        x = _floatify(x)
    return core.clip(x, min, max)


clip = clamp


def clamp_min(input: Tensor, min: Any) -> Tensor:
    if isinstance(min, Tensor):
        return clamp(input, min=min)
    return P.clamp_min_op(_check_tensor(input, "clamp_min"), min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    if isinstance(max, Tensor):
        return clamp(input, max=max)
    return P.clamp_max_op(_check_tensor(input, "clamp_max"), None, max)


def where(condition: Any, input: Any = None, other: Any = None) -> Any:
    """``input`` where ``condition`` else ``other`` (one-argument form: ``nonzero``)."""
    if input is None and other is None:
        return tuple(_wrap(i) for i in np.nonzero(_t(condition)._data))
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise hinted(RuntimeError(with_hint(f"where expected condition to be a boolean tensor, but got "
                                     f"a tensor with dtype {from_np(cond.dtype).name.capitalize()}",
                                     "compare first, e.g. torch.where(x > 0, ...)")))
    a, b = promote(input, other, "where")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _t(a)
    return core.where(condition if _vmapped(condition) else cond, a, b)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    return add(input, mul(sub(end, input), weight))


# ----------------------------------------------------------------------------- linear algebra
def matmul(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Matrix product with PyTorch's 1-D and batch rules (same dtypes required)."""
    a, b = promote(_check_tensor(input, "matmul"), _check_tensor(other, "matmul", "other", 2),
                   "matmul")
    return core.matmul(a, b)


def mm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:
    """2-D matrix product."""
    if _ndim(input) != 2:
        raise hinted(RuntimeError(with_hint("self must be a matrix", f"got a {_ndim(input)}-D tensor")))
    if _ndim(mat2) != 2:
        raise hinted(RuntimeError(with_hint("mat2 must be a matrix", f"got a {_ndim(mat2)}-D tensor")))
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:
    """Batched (3-D) matrix product."""
    if _ndim(input) != 3:
        raise hinted(RuntimeError(with_hint("batch1 must be a 3D tensor", f"got {_ndim(input)}-D")))
    if _ndim(mat2) != 3:
        raise hinted(RuntimeError(with_hint("batch2 must be a 3D tensor", f"got {_ndim(mat2)}-D")))
    from ..ops.linalg import _bmm

    a, b = promote(input, mat2, "matmul")
    return _bmm(a, b)


def mv(input: Tensor, vec: Tensor, *, out: Any = None) -> Tensor:
    if _ndim(input) != 2 or _ndim(vec) != 1:
        raise hinted(RuntimeError(with_hint(f"vector + matrix @ vector expected, got 1, "
                                     f"{_ndim(input)}, {_ndim(vec)}",
                                     "mv takes a matrix and a vector")))
    return matmul(input, vec)


def dot(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Inner product of two 1-D tensors."""
    if _ndim(input) != 1 or _ndim(other) != 1:
        raise hinted(RuntimeError(with_hint(f"1D tensors expected, but got {_ndim(input)}D and "
                                     f"{_ndim(other)}D tensors", "dot takes two vectors")))
    n, m = _shape(input)[0], _shape(other)[0]
    if n != m:
        raise hinted(RuntimeError(with_hint(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively",
            "both vectors need the same length")))
    return matmul(input, other)


inner = dot


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    return mul(reshape(input, (-1, 1)), reshape(vec2, (1, -1)))


ger = outer


def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return core.einsum(equation, *operands)


# ----------------------------------------------------------------------------- reductions
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
        out: Any = None) -> Tensor:
    """Sum over ``dim`` (all elements when None); ints and bools sum to int64.

    >>> import tapegrad.torch as torch
    >>> torch.sum(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
    tensor([4., 6.])
    """
    x = _check_tensor(input, "sum")
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    elif x._data.dtype.kind in "biu" and x._data.dtype != np.int64:
        x = core.cast(x, dtype=np.int64)
    ax = _dims(dim, x._data.ndim)
    return core.sum(x, axis=ax, keepdims=keepdim)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Any = None) -> Tensor:
    """Mean over ``dim``; integer input raises as in PyTorch."""
    x = _check_tensor(input, "mean")
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    if x._data.dtype.kind not in "fc":
        raise hinted(RuntimeError(with_hint(
            f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} "
            "dtype must be either a floating point or complex dtype. Got: "
            f"{_scalar_type_name(x._data.dtype)}",
            "convert with .float() first, or pass dtype=torch.float32")))
    return core.mean(x, axis=_dims(dim, x._data.ndim), keepdims=keepdim)


_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _scalar_type_name(d: np.dtype) -> str:
    return _SCALAR_NAMES.get(np.dtype(d).name, np.dtype(d).name)


def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    x = _check_tensor(input, "prod")
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    elif x._data.dtype.kind in "biu" and x._data.dtype != np.int64:
        x = core.cast(x, dtype=np.int64)
    return core.prod(x, axis=None if dim is None else _dim(dim, x._data.ndim),
                     keepdims=keepdim)


class _ReturnType(tuple):
    """A named (values, indices) pair printed like ``torch.return_types.max(...)``."""

    _name = "max"
    _fields = ("values", "indices")

    def __new__(cls, values: Any, indices: Any) -> _ReturnType:
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self) -> Any:
        return self[0]

    @property
    def indices(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return (f"torch.return_types.{self._name}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


def _return_type(name: str) -> type[_ReturnType]:
    return type(name, (_ReturnType,), {"_name": name})


class return_types:
    """Named result types, as ``torch.return_types``."""

    max = _return_type("max")
    min = _return_type("min")
    sort = _return_type("sort")
    topk = _return_type("topk")
    median = _return_type("median")
    mode = _return_type("mode")
    kthvalue = _return_type("kthvalue")
    aminmax = collections.namedtuple("aminmax", ["min", "max"])


def _empty_reduction(which: str, x: Tensor, axes: tuple[int, ...] | None) -> None:
    """PyTorch's errors for max/min/argmax of nothing (an empty tensor, or an empty dim)."""
    if x._data.size:
        return
    if axes is None:
        if which.startswith("arg"):
            raise hinted(IndexError(with_hint(
                f"{which}(): Expected reduction dim to be specified for input.numel() == 0.",
                "the tensor is empty")))
        raise hinted(RuntimeError(with_hint(
            f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument.", "the tensor is empty")))
    for d in axes:
        if x._data.ndim and x._data.shape[d] == 0:
            raise hinted(IndexError(with_hint(
                f"{which}(): Expected reduction dim {d} to have non-zero size.",
                f"dim {d} of shape {list(x._data.shape)} is empty: nothing to take the "
                f"{which.lstrip('a').replace('rg', '')} of")))


def _empty_result(x: Tensor, axes: tuple[int, ...], keepdim: bool) -> np.ndarray:
    shape = tuple(1 if i in axes else n for i, n in enumerate(x._data.shape)) if keepdim else \
        tuple(n for i, n in enumerate(x._data.shape) if i not in axes)
    return np.zeros(shape, dtype=x._data.dtype)


def _extreme(which: str, input: Tensor, dim: Any, keepdim: bool, other: Any) -> Any:
    x = _check_tensor(input, which)
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim
    if other is not None:
        return maximum(x, other) if which == "max" else minimum(x, other)
    if dim is None:
        if x._data.size == 0:
            raise hinted(RuntimeError(with_hint(
                f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.",
                "the tensor is empty")))
        return core.max(x) if which == "max" else core.min(x)
    d = _dim(dim, x._data.ndim)
    if not x._data.size:
        _empty_reduction(which, x, (d,))
        vals = _empty_result(x, (d,), keepdim)
        rt0 = return_types.max if which == "max" else return_types.min
        return rt0(_wrap(vals), _wrap(vals.astype(np.int64)))
    op = P.max_dim_op if which == "max" else P.min_dim_op
    vals = op(x, axis=(d,) if x._data.ndim else (), keepdims=keepdim, ties="first")
    rt = return_types.max if which == "max" else return_types.min
    if x._data.ndim and _traced(x):  # values that differ between calls: an op on them
        arg = core.argmax if which == "max" else core.argmin
        return rt(vals, core.cast(arg(x, axis=d, keepdims=keepdim), dtype=np.int64))
    argf = np.argmax if which == "max" else np.argmin
    idx = argf(x._data, axis=d) if x._data.ndim else np.asarray(0)
    if keepdim and x._data.ndim:
        idx = np.expand_dims(idx, d)
    return rt(vals, _wrap(idx.astype(np.int64)))


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None,
        out: Any = None) -> Any:
    """``max()`` (ties split evenly), ``max(dim)`` → (values, indices) with the gradient to the
    first maximum, or ``max(other)`` (elementwise).

    >>> import tapegrad.torch as torch
    >>> torch.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1).indices
    tensor([1, 0])
    """
    return _extreme("max", input, dim, keepdim, other)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None,
        out: Any = None) -> Any:
    """Like :func:`max`, for the minimum."""
    return _extreme("min", input, dim, keepdim, other)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Max over ``dim`` (all dims by default); ties share the gradient evenly."""
    x = _check_tensor(input, "amax")
    ax = _dims(dim, x._data.ndim)
    if not x._data.size:
        _empty_reduction("amax", x, ax)
        return _wrap(_empty_result(x, ax or (), keepdim))
    return P.amax_op(x, axis=ax, keepdims=keepdim, ties="split")


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    x = _check_tensor(input, "amin")
    ax = _dims(dim, x._data.ndim)
    if not x._data.size:
        _empty_reduction("amin", x, ax)
        return _wrap(_empty_result(x, ax or (), keepdim))
    return P.amin_op(x, axis=ax, keepdims=keepdim, ties="split")


def argmax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    x = _check_tensor(input, "argmax")
    _empty_reduction("argmax", x, None if dim is None else (_dim(dim, x._data.ndim),))
    if _traced(x):  # values that differ between calls (torch.compile): an op on them
        return core.cast(core.argmax(x, axis=None if dim is None else _dim(dim, x._data.ndim),
                                    keepdims=keepdim and dim is not None), dtype=np.int64)
    if dim is None:
        return _wrap(np.asarray(np.argmax(x._data), dtype=np.int64))
    d = _dim(dim, x._data.ndim)
    r = np.argmax(x._data, axis=d)
    return _wrap(np.asarray(np.expand_dims(r, d) if keepdim else r, dtype=np.int64))


def argmin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    x = _check_tensor(input, "argmin")
    _empty_reduction("argmin", x, None if dim is None else (_dim(dim, x._data.ndim),))
    if _traced(x):  # values that differ between calls (torch.compile): an op on them
        return core.cast(core.argmin(x, axis=None if dim is None else _dim(dim, x._data.ndim),
                                    keepdims=keepdim and dim is not None), dtype=np.int64)
    if dim is None:
        return _wrap(np.asarray(np.argmin(x._data), dtype=np.int64))
    d = _dim(dim, x._data.ndim)
    r = np.argmin(x._data, axis=d)
    return _wrap(np.asarray(np.expand_dims(r, d) if keepdim else r, dtype=np.int64))


def _var_args(input: Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    dim = kwargs.pop("dim", None)
    unbiased = kwargs.pop("unbiased", None)
    keepdim = kwargs.pop("keepdim", False)
    correction = kwargs.pop("correction", None)
    kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"var() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], bool):
        unbiased = rest.pop(0)
    elif rest:
        dim = rest.pop(0)
        if rest and isinstance(rest[0], bool) and len(rest) == 2:
            unbiased = rest.pop(0)
        if rest:
            if len(rest) == 1 and unbiased is None and correction is None and len(args) == 3:
                unbiased = rest.pop(0)
            elif len(rest) >= 1:
                if len(rest) == 2:
                    unbiased = rest.pop(0)
                keepdim = rest.pop(0)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    x = _check_tensor(input, "var")
    if x._data.dtype.kind not in "fc":
        raise hinted(RuntimeError(with_hint(
            "std and var only support floating point and complex dtypes",
            "convert with .float() first")))
    ax = _dims(dim, x._data.ndim)
    n = x._data.size if ax is None else int(np.prod([x._data.shape[i] for i in ax]))
    if n - correction <= 0:
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    return x, ax, float(correction), bool(keepdim)


def var(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Variance, unbiased by default (``correction=1``), as in PyTorch.

    >>> import tapegrad.torch as torch
    >>> torch.tensor([1.0, 2.0]).var()
    tensor(0.5000)
    """
    x, ax, c, k = _var_args(input, args, kwargs)
    return P.var_op(x, axis=ax, correction=c, keepdims=k)


def std(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Standard deviation, unbiased by default (``correction=1``)."""
    x, ax, c, k = _var_args(input, args, kwargs)
    return P.std_op(x, axis=ax, correction=c, keepdims=k)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x), dim))``, computed stably."""
    x = _floatify(_check_tensor(input, "logsumexp"))
    return P.logsumexp_op(x, axis=_dims(dim, x._data.ndim), keepdims=keepdim)


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    x = _check_tensor(input, "cumsum")
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    return core.cumsum(x, axis=_dim(dim, x._data.ndim))


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """The older ``torch.norm``: a vector ``p``-norm over ``dim`` (all elements by default;
    ``'fro'`` is the 2-norm), or the nuclear norm (``p='nuc'``) of a matrix / ``dim`` pair.

    As in PyTorch it runs ``linalg.vector_norm`` / ``linalg.matrix_norm``, so the gradient
    at zero is zero.
    """
    from . import linalg

    x = _floatify(input) if dtype is None else input
    if p == "nuc":
        d = (-2, -1) if dim is None else tuple(dim)
        if dim is None and x._data.ndim != 2 or len(d) != 2:
            raise hinted(RuntimeError(with_hint(
                f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                f"{' '.join(map(str, range(x._data.ndim) if dim is None else d))}",
                "pass dim=(row_dim, col_dim)")))
        return linalg.matrix_norm(x, "nuc", (d[0], d[1]), keepdim, dtype=dtype)
    order = 2 if p in ("fro", None) else (float("inf") if p == "inf" else p)
    return linalg.vector_norm(x, order, dim, keepdim, dtype=dtype)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return core.all(input, axis=_dims(dim, _ndim(input)), keepdims=keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return core.any(input, axis=_dims(dim, _ndim(input)), keepdims=keepdim)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    ax = _dims(dim, _ndim(input))
    if _traced(input):  # values that differ between calls (torch.compile): ops on them
        return core.sum(core.cast(core.not_equal(input, 0), dtype=np.int64), axis=ax)
    return _wrap(np.asarray(np.count_nonzero(input._data, axis=ax), dtype=np.int64))


# ----------------------------------------------------------------------------- comparisons
def eq(input: Any, other: Any) -> Tensor:
    return binary("equal", input, other)


def ne(input: Any, other: Any) -> Tensor:
    return binary("not_equal", input, other)


def lt(input: Any, other: Any) -> Tensor:
    return binary("less", input, other)


def le(input: Any, other: Any) -> Tensor:
    return binary("less_equal", input, other)


def gt(input: Any, other: Any) -> Tensor:
    return binary("greater", input, other)


def ge(input: Any, other: Any) -> Tensor:
    return binary("greater_equal", input, other)


less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same size and elements."""
    return bool(input._data.shape == other._data.shape and np.array_equal(input._data,
                                                                           other._data))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(np.allclose(input._data, _t(other)._data, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def isclose(input: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    return _wrap(np.isclose(input._data, _t(other)._data, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def isnan(input: Tensor) -> Tensor:
    return _wrap(np.isnan(input._data))


def isinf(input: Tensor) -> Tensor:
    return _wrap(np.isinf(input._data))


def isfinite(input: Tensor) -> Tensor:
    return _wrap(np.isfinite(input._data))


def logical_not(input: Tensor) -> Tensor:
    return _wrap(np.logical_not(input._data))


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return _wrap(np.logical_and(input._data, _t(other)._data))


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return _wrap(np.logical_or(input._data, _t(other)._data))


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return _wrap(np.logical_xor(input._data, _t(other)._data))


# ----------------------------------------------------------------------------- shapes
def _shape_args(shape: Sequence[Any]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, Size)):
        shape = tuple(shape[0])
    if len(shape) == 1 and isinstance(shape[0], Tensor):
        shape = tuple(shape[0].tolist())
    return tuple(int(s) for s in shape)


def reshape(input: Tensor, shape: Any) -> Tensor:
    """Reshape (one size may be -1)."""
    x = _check_tensor(input, "reshape")
    shp = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if _sum(1 for s in shp if s == -1) > 1:
        raise hinted(RuntimeError(with_hint("only one dimension can be inferred",
                                     f"shape {list(shp)} has several -1")))
    return core.reshape(x, shp)


def view(input: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, list, tuple, Size)):
        # view(dtype): reinterpret the bytes
        return _wrap(input._data.view(to_np(shape[0])))
    return reshape(input, _shape_args(shape))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one."""
    x = _check_tensor(input, "flatten")
    shape = x._data.shape
    if not shape:
        return core.reshape(x, (1,))
    s = _dim(start_dim, len(shape))
    e = _dim(end_dim, len(shape))
    if s > e:
        raise hinted(RuntimeError(with_hint("flatten() has invalid args: start_dim cannot come after "
                                     "end_dim", f"start_dim={start_dim}, end_dim={end_dim}")))
    if s == e:
        return x
    new = shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:]
    return core.reshape(x, new)


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    shape = input._data.shape
    d = _dim(dim, len(shape))
    return reshape(input, shape[:d] + tuple(sizes) + shape[d + 1:])


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    return input.squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim`` (in ``[-ndim-1, ndim]``)."""
    x = _check_tensor(input, "unsqueeze")
    n = x._data.ndim + 1
    if not -n <= int(dim) < n:
        raise hinted(IndexError(with_hint(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})",
            f"the result has {n} dimensions")))
    return core.expand_dims(x, int(dim) % n)


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder dims."""
    x = _check_tensor(input, "permute")
    d = _shape_args(dims)
    n = x._data.ndim
    if len(d) != n:
        raise hinted(RuntimeError(with_hint(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(d)}", "pass one entry per dimension")))
    return core.transpose(x, tuple(_dim(i, n) for i in d))


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (``TransposeBackward0``)."""
    x = _check_tensor(input, "transpose")
    n = x._data.ndim
    if n == 0:
        return x
    a, b = _dim(dim0, n), _dim(dim1, n)
    perm = list(range(n))
    perm[a], perm[b] = perm[b], perm[a]
    return P.transpose_op(x, axes=tuple(perm))


swapaxes = transpose
swapdims = transpose


def t(input: Tensor) -> Tensor:
    """Transpose of a tensor of at most 2 dims (``TBackward0``)."""
    x = _check_tensor(input, "t")
    if x._data.ndim > 2:
        raise hinted(RuntimeError(with_hint(f"t() expects a tensor with <= 2 dimensions, but self is "
                                     f"{x._data.ndim}D", "use transpose(dim0, dim1) or permute")))
    if x._data.ndim < 2:
        return x
    return P.t_op(x, axes=(1, 0))


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    return core.moveaxis(input, source, destination)


def expand(input: Tensor, *sizes: Any) -> Tensor:
    """Broadcast to ``sizes`` (-1 keeps a size)."""
    x = input
    shp = _shape_args(sizes)
    cur = x._data.shape
    if len(shp) < len(cur):
        raise hinted(RuntimeError(with_hint(
            f"expand(torch.FloatTensor{{{list(cur)}}}, size={list(shp)}): the number of sizes "
            f"provided ({len(shp)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(cur)})", "pass at least one size per dimension")))
    lead = len(shp) - len(cur)
    full = tuple(cur[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shp))
    for i in range(len(cur)):
        if cur[i] != 1 and cur[i] != full[lead + i]:
            raise hinted(RuntimeError(with_hint(
                f"The expanded size of the tensor ({full[lead + i]}) must match the existing size "
                f"({cur[i]}) at non-singleton dimension {lead + i}.  Target sizes: {list(shp)}.  "
                f"Tensor sizes: {list(cur)}", "only size-1 dims can be expanded")))
    if full == cur:
        return _expand_same(x)
    return core.broadcast_to(x, full)


def _expand_same(x: Tensor) -> Tensor:
    from ..ops.shape import _broadcast_to

    return _broadcast_to(x, shape=x._data.shape)


def broadcast_to(input: Tensor, size: Any) -> Tensor:
    return expand(input, tuple(size))


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = np.broadcast_shapes(*(t._data.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def repeat(input: Tensor, *sizes: Any) -> Tensor:
    """Tile the tensor ``sizes[i]`` times along each dim."""
    reps = _shape_args(sizes)
    x = input
    shape = x._data.shape
    if len(reps) < len(shape):
        raise hinted(RuntimeError(with_hint(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor", f"the tensor has {len(shape)} dims, got {len(reps)} repeats")))
    shape = (1,) * (len(reps) - len(shape)) + tuple(shape)
    x = core.reshape(x, tuple(v for s in shape for v in (1, s)))
    x = core.broadcast_to(x, tuple(v for r, s in zip(reps, shape) for v in (r, s)))
    return core.reshape(x, tuple(r * s for r, s in zip(reps, shape)))


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    dims = tuple(dims)
    n = input._data.ndim
    if len(dims) < n:
        dims = (1,) * (n - len(dims)) + dims
    return repeat(input, dims)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None,
        out: Any = None) -> Tensor:
    """Join tensors along an existing dim (dtypes promoted as in PyTorch)."""
    if axis is not None:
        dim = axis
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise hinted(TypeError(with_hint(
            f"cat() received an invalid combination of arguments - got ({type(tensors).__name__}"
            "), but expected one of: (tuple of Tensors tensors, int dim)",
            "pass a list or tuple of tensors")))
    ts = list(tensors)
    if not ts:
        raise hinted(RuntimeError(with_hint("torch.cat(): expected a non-empty list of Tensors",
                                     "pass at least one tensor")))
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise hinted(TypeError(with_hint(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}",
                "every element of the list must be a tensor")))
    nd = ts[0]._data.ndim
    if nd == 0:
        raise hinted(RuntimeError(with_hint("zero-dimensional tensor (at position 0) cannot be "
                                     "concatenated", "use torch.stack for scalars")))
    d = _dim(dim, nd)
    for i, x in enumerate(ts[1:], 1):
        if x._data.ndim != nd:
            raise hinted(RuntimeError(with_hint(
                f"Tensors must have same number of dimensions: got {nd} and {x._data.ndim}",
                f"tensor {i} has shape {list(x._data.shape)}")))
        for j in range(nd):
            if j != d and x._data.shape[j] != ts[0]._data.shape[j]:
                raise hinted(RuntimeError(with_hint(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ts[0]._data.shape[j]} but got size {x._data.shape[j]} for tensor number "
                    f"{i} in the list.",
                    f"shapes {list(ts[0]._data.shape)} and {list(x._data.shape)}")))
    from ._dtype import result_type

    rt = result_type(*ts)
    ts = [x if x._data.dtype == rt else core.cast(x, dtype=rt) for x in ts]
    return core.concatenate(ts, axis=d)


concat = cat
concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Join tensors along a new dim."""
    ts = list(tensors)
    if not ts:
        raise hinted(RuntimeError(with_hint("stack expects a non-empty TensorList",
                                     "pass at least one tensor")))
    for i, x in enumerate(ts[1:], 1):
        if x._data.shape != ts[0]._data.shape:
            raise hinted(RuntimeError(with_hint(
                f"stack expects each tensor to be equal size, but got "
                f"{list(ts[0]._data.shape)} at entry 0 and {list(x._data.shape)} at entry {i}",
                "all tensors need the same shape")))
    from ._dtype import result_type

    rt = result_type(*ts)
    ts = [x if x._data.dtype == rt else core.cast(x, dtype=rt) for x in ts]
    n = ts[0]._data.ndim + 1
    if not -n <= int(dim) < n:
        raise hinted(IndexError(with_hint(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})",
            f"the result has {n} dimensions")))
    return core.stack(ts, axis=int(dim) % n)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = list(tensors)
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat([x if x._data.ndim > 1 else reshape(x, (1, -1)) for x in tensors], 0)


def _pieces(x: Tensor, d: int, sizes: list[int], op: Any) -> tuple[Tensor, ...]:
    out = []
    start = 0
    for s in sizes:
        idx = (slice(None),) * d + (slice(start, start + s),)
        out.append(op(x, index=idx))
        start += s
    return tuple(out)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into chunks of ``split_size`` (int) or of the given sizes (list)."""
    x = tensor
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        k = int(split_size_or_sections)
        if k <= 0:
            raise hinted(RuntimeError(with_hint(f"split_size can only be 0 if dimension size is 0, but "
                                         f"got dimension size of {n}", "pass a positive size")))
        sizes = [k] * (n // k) + ([n % k] if n % k else [])
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if _sum(sizes) != n:
            raise hinted(RuntimeError(with_hint(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}", "the sizes must add up")))
        return _pieces(x, d, sizes, P.split_sizes_op)
    return _pieces(x, d, sizes, P.split_op)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    if int(chunks) <= 0:
        raise hinted(RuntimeError(with_hint(
            f"chunk expects `chunks` to be greater than 0, got: {chunks}",
            "chunks is the number of pieces, at least 1")))
    d = _dim(dim, input._data.ndim)
    n = input._data.shape[d]
    k = -(-n // int(chunks)) if n else 0
    return split(input, _max(k, 1), d) if n else (input,)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    x = input
    d = _dim(dim, x._data.ndim)
    return tuple(P.unbind_op(x, index=(slice(None),) * d + (i,))
                 for i in range(x._data.shape[d]))


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    x = input
    d = _dim(dim, x._data.ndim)
    start = int(start) % _max(x._data.shape[d], 1) if start < 0 else int(start)
    if start + length > x._data.shape[d]:
        raise hinted(RuntimeError(with_hint(f"start ({start}) + length ({length}) exceeds dimension "
                                     f"size ({x._data.shape[d]}).", "narrow stays inside the dim")))
    return core.getitem(x, (slice(None),) * d + (slice(start, start + int(length)),))


def select(input: Tensor, dim: int, index: int) -> Tensor:
    x = input
    d = _dim(dim, x._data.ndim)
    return core.getitem(x, (slice(None),) * d + (int(index),))


def _restyle(t: Tensor) -> Tensor:
    """``t`` (an op's result) as a PyTorch-style tensor."""
    return restyle(t, TORCH)


def _vmapped(t: Any) -> bool:
    """Whether ``t`` is a ``vmap`` tracer (its ``_data`` stands for one example and holds no
    values: an op that reads values must take it as an input)."""
    if not isinstance(t, Tensor) or t._lvl is None:
        return False
    from ..autodiff.batching import BatchLevel

    return isinstance(t._lvl, BatchLevel)


def _traced(t: Any) -> bool:
    """Whether ``t``'s values cannot be read now, so an op must take it as an input: a
    tracer of a trace in progress (:func:`tapegrad.autodiff.tracing.is_traced`) or of a
    ``vmap`` (its ``_data`` stands for one example and holds no values)."""
    from ..autodiff.tracing import is_traced

    return _vmapped(t) or is_traced(t)


def _index_array(index: Any, fn: str) -> np.ndarray:
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise hinted(RuntimeError(with_hint(f"{fn}(): Expected dtype int64 for index",
                                     "indices must be integers (torch.long)")))
    return idx


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    x = input
    d = _dim(dim, x._data.ndim)
    if _traced(index):
        _index_array(index, "index_select")
        return core.getitem(x, (slice(None),) * d + (core.reshape(index, (-1,)),))
    idx = _index_array(index, "index_select").reshape(-1)
    return P.index_select_op(x, index=(slice(None),) * d + (idx,))


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` along ``dim``."""
    x = input
    d = _dim(dim, x._data.ndim)
    idx = _index_array(index, "gather")
    if idx.ndim != x._data.ndim:
        raise hinted(RuntimeError(with_hint("Index tensor must have the same number of dimensions as "
                                     "input tensor", f"input {list(x._data.shape)}, index "
                                     f"{list(idx.shape)}")))
    size = x._data.shape[d]
    bad = idx[(idx >= size) | (idx < 0)] if idx.size else idx
    if bad.size:
        raise hinted(RuntimeError(with_hint(
            f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {size}",
            f"indices along dim {d} must be in [0, {size})")))
    grids: list[Any] = list(np.indices(idx.shape, sparse=True))
    if _traced(index):  # the index an input of the op (checked above on this call's values)
        grids[d] = index
        return core.getitem(x, tuple(grids))
    grids[d] = idx
    return P.gather_op(x, index=tuple(grids))


def take(input: Tensor, index: Tensor) -> Tensor:
    idx = _index_array(index, "take")
    if _traced(index):
        return core.getitem(core.reshape(input, (-1,)), (index,))
    return P.take_op(core.reshape(input, (-1,)), index=(idx,))


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise hinted(RuntimeError(with_hint(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{from_np(m.dtype)}", "compare first, e.g. x > 0")))
    v = value if isinstance(value, Tensor) else input._data.dtype.type(value)
    return P.masked_fill_op(mask if _vmapped(mask) else m, v, input)


def flip(input: Tensor, dims: Any) -> Tensor:
    d = (dims,) if isinstance(dims, int) else tuple(dims)
    return core.flip(input, d)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    x = input
    if dims is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, shifts, 0), x._data.shape)
    sh = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    ds = (dims,) if isinstance(dims, int) else tuple(dims)
    for s, dd in zip(sh, ds):
        d = _dim(dd, x._data.ndim)
        n = x._data.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            a = narrow(x, d, n - s, s)
            b = narrow(x, d, 0, n - s)
            x = cat([a, b], d)
    return x


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    x = input
    d = _dim(dim, x._data.ndim) if x._data.ndim else 0
    if x._data.ndim == 0:
        return return_types.sort(x, _wrap(np.zeros((), dtype=np.int64)))
    a = x._data
    if _vmapped(x):  # no values to read (vmap): the order is an op
        order = _core_argsort(x, axis=d, descending=descending)
        tgrids: list[Any] = list(np.indices(a.shape, sparse=True))
        tgrids[d] = order
        return return_types.sort(core.getitem(x, tuple(tgrids)), _restyle(order))
    idx = np.argsort(-a if descending else a, axis=d, kind="stable")
    grids: list[Any] = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    vals = P.sort_op(x, index=tuple(grids))
    return return_types.sort(vals, _wrap(idx.astype(np.int64)))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return sort(input, dim, descending)[1]


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    x = input
    d = _dim(dim, x._data.ndim)
    a = x._data
    if _vmapped(x):  # no values to read (vmap): the order is an op
        top = core.getitem(_core_argsort(x, axis=d, descending=largest),
                           (slice(None),) * d + (slice(0, int(k)),))
        shape = list(a.shape)
        shape[d] = int(k)
        tgrids: list[Any] = list(np.indices(tuple(shape), sparse=True))
        tgrids[d] = top
        return return_types.topk(core.getitem(x, tuple(tgrids)), _restyle(top))
    order = np.argsort(-a if largest else a, axis=d, kind="stable")
    idx = np.take(order, np.arange(int(k)), axis=d)
    grids: list[Any] = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    return return_types.topk(P.topk_op(x, index=tuple(grids)), _wrap(idx.astype(np.int64)))


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    m = np.tril(np.ones(input._data.shape[-2:], dtype=bool), diagonal)
    return P.tril_op(m, input, input._data.dtype.type(0))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    m = np.triu(np.ones(input._data.shape[-2:], dtype=bool), diagonal)
    return P.triu_op(m, input, input._data.dtype.type(0))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    x = input
    if x._data.ndim == 1:
        n = x._data.shape[0] + _abs(diagonal)
        rows = np.arange(x._data.shape[0]) + _max(-diagonal, 0)
        cols = np.arange(x._data.shape[0]) + _max(diagonal, 0)
        return core.index_add_zeros(x, index=(rows, cols), shape=(n, n))
    rows, cols = np.nonzero(np.eye(x._data.shape[0], x._data.shape[1], k=diagonal, dtype=bool))
    return core.getitem(x, (rows, cols))


def trace(input: Tensor) -> Tensor:
    return sum(diag(input))


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    return core.clone(input)


def numel(input: Tensor) -> int:
    return int(input._data.size)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return bool(input._data.dtype.kind == "f")


def is_complex(input: Tensor) -> bool:
    return bool(input._data.dtype.kind == "c")


def is_nonzero(input: Tensor) -> bool:
    return bool(input)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    nz = np.nonzero(input._data)
    if as_tuple:
        return tuple(_wrap(i.astype(np.int64)) for i in nz)
    return _wrap(np.stack(nz, axis=-1).astype(np.int64))


def zeros_like_data(x: Tensor) -> Tensor:
    return make(np.zeros_like(x._data), None, False, TORCH)


def detach(input: Tensor) -> Tensor:
    return input.detach()


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """Softmax along ``dim`` (``SoftmaxBackward0``)."""
    from .nn.functional import softmax as _sm

    return _sm(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    from .nn.functional import log_softmax as _lsm

    return _lsm(input, dim, dtype=dtype)


def bucketize(input: Tensor, boundaries: Tensor, *, right: bool = False) -> Tensor:
    side = "left" if not right else "right"
    if _vmapped(input) or _vmapped(boundaries):  # no values to read (vmap): count with ops
        below = (core.less_equal if right else core.less)(boundaries, core.expand_dims(input, -1))
        return _restyle(core.sum(core.cast(below, dtype=np.int64), axis=-1))
    return _wrap(np.searchsorted(boundaries._data, input._data,  # type: ignore[call-overload]
                                 side=side).astype(np.int64))


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    r = np.unique(input._data, return_inverse=return_inverse,  # type: ignore[call-overload]
                  return_counts=return_counts)
    if isinstance(r, tuple):
        out = [_wrap(r[0])] + [_wrap(np.asarray(v, dtype=np.int64).reshape(
            input._data.shape) if i == 0 and return_inverse else np.asarray(v, dtype=np.int64))
            for i, v in enumerate(r[1:])]
        return tuple(out)
    return _wrap(r)


def real(input: Any) -> Tensor:
    """The real part (``torch.real``): of a real tensor, the tensor itself."""
    from ..ops.complex import real as _real

    x = _check_tensor(input, "real")
    return _real(x) if np.iscomplexobj(x._data) else x


def imag(input: Any) -> Tensor:
    """The imaginary part (``torch.imag``) of a complex tensor."""
    from ..ops.complex import imag as _imag

    x = _check_tensor(input, "imag")
    if not np.iscomplexobj(x._data):
        raise hinted(RuntimeError(with_hint(
            "imag is not implemented for tensors with non-complex dtypes.",
            "only complex tensors (e.g. the results of torch.linalg.eig) have an imaginary part")))
    return _imag(x)


def conj(input: Any) -> Tensor:
    """The complex conjugate (``torch.conj``): of a real tensor, the tensor itself."""
    from ..ops.complex import conj as _conj

    x = _check_tensor(input, "conj")
    return _conj(x) if np.iscomplexobj(x._data) else x


_PRIVATE = {"binary", "zeros_like_data"}
__all__ = [n for n, v in list(globals().items())
           if not n.startswith("_") and n not in _PRIVATE
           and getattr(v, "__module__", None) == __name__]
