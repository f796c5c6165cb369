"""More of ``torch.*``: the functions PyTorch programs reach for beyond the basic op set.

Inverse trigonometric functions, ``atan2``, ``hypot``, ``logaddexp``, ``xlogy``, the
value-selecting reductions (``median``, ``kthvalue``, ``mode``, ``cummax``, ``cummin``,
their gradient routed to the chosen index as PyTorch's), ``quantile``, the ``add*`` matrix
products, ``cdist``, ``tensordot``, ``kron``, ``diff``, counting and searching
(``bincount``, ``histc``, ``searchsorted``, ``isin``), splitting and stacking helpers,
``multinomial`` (drawn from the torch Generator stream) and more.  Each is an adapter over
the core ops (or the records in :mod:`tapegrad.ops.torch_more`), so gradients, ``vmap``
and forward mode come from the ops they are written in.
"""

from __future__ import annotations

import builtins
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops as core
from .._core.errors import hinted, with_hint
from .._core.mode import is_grad_enabled
from .._core.registry import defop
from .._core.tensor import Tensor
from ..ops import special as S
from ..ops import torch_more as M
from ..ops.elementwise import multiply as _mul_op
from ..ops.shape import _getitem
from . import _ops as O
from ._dtype import default_np, from_np, to_np
from ._tensor import _wrap, promote
from .linalg import _named

_abs = builtins.abs
_max = builtins.max
_min = builtins.min
_sum = builtins.sum
_round = builtins.round

_check = O._check_tensor
_dim = O._dim
_floatify = O._floatify


def _err(exc: type[Exception], msg: str, hint: str) -> Exception:
    return hinted(exc(with_hint(msg, hint)))


def _t(x: Any) -> Tensor:
    return O._t(x)


def tracked(t: Any) -> bool:
    """Whether a result computed from ``t`` must carry derivatives: ``t`` is recorded (it
    requires grad, grad mode on) or is a transform's tracer (forward mode, vmap)."""
    return isinstance(t, Tensor) and ((t._rg and is_grad_enabled()) or t._lvl is not None)


def _no_trace(name: str, *ts: Any) -> None:
    """A function that reads its input's values (or gives a value-dependent shape): under
    ``vmap``, where the values are not there to read, refused; under a trace
    (``torch.compile``), the trace is told, so that signature runs eagerly."""
    for t in ts:
        if O._vmapped(t):
            raise _err(NotImplementedError, f"tapegrad: torch.{name} reads its input's values "
                       "and cannot run under vmap",
                       "call it outside the transform (or loop over the batch)")
    for t in ts:
        if O._traced(t):
            from ..autodiff.tracing import note_break

            note_break(f"torch.{name} reads the values of its input")
            return


# ----------------------------------------------------------------------------- return types
O.return_types.cummax = O._return_type("cummax")  # type: ignore[attr-defined]
O.return_types.cummin = O._return_type("cummin")  # type: ignore[attr-defined]
O.return_types.nanmedian = O._return_type("nanmedian")  # type: ignore[attr-defined]
RT: Any = O.return_types
_LU_WITH_INFO = _named("_lu_with_info", ("LU", "pivots", "infos"))
RT._lu_with_info = _LU_WITH_INFO
RT.aminmax = _named("aminmax", ("min", "max"))

# the value-selecting reductions' nodes, under PyTorch's names
_median_all_op = _getitem.renamed("MedianBackward0")
_median_dim_op = _getitem.renamed("MedianBackward1")
_nanmedian_all_op = _getitem.renamed("NanmedianBackward0")
_nanmedian_dim_op = _getitem.renamed("NanmedianBackward1")
_kthvalue_op = _getitem.renamed("KthvalueBackward0")
_mode_op = _getitem.renamed("ModeBackward0")
_cummax_op = _getitem.renamed("CummaxBackward0")
_cummin_op = _getitem.renamed("CumminBackward0")


# ----------------------------------------------------------------------------- elementwise
def _un(fn: Any, name: str) -> Any:
    def f(input: Any, *, out: Any = None) -> Tensor:
        return fn(_floatify(_check(input, name)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (PyTorch's ``torch.{name}``)."
    return f


asin = arcsin = _un(M.ROUNDED["asin"], "asin")
acos = arccos = _un(M.ROUNDED["acos"], "acos")
atan = arctan = _un(M.ROUNDED["atan"], "atan")
asinh = arcsinh = _un(S.asinh, "asinh")
acosh = arccosh = _un(S.acosh, "acosh")
atanh = arctanh = _un(S.atanh, "atanh")
lgamma = _un(S.lgamma, "lgamma")
digamma = _un(M.digamma_t, "digamma")
erfc = _un(M.erfc, "erfc")
sinc = _un(M.sinc, "sinc")
i0 = _un(M.i0, "i0")
def frac(input: Tensor, *, out: Any = None) -> Tensor:
    """The fractional part ``x - trunc(x)`` (float tensors only, as PyTorch's)."""
    x = _check(input, "frac")
    _float_only("frac_cpu", x)
    return M.frac(x)


@defop("torch_erfinv", saves=("out",), grad_name="ErfinvBackward0")
def _TORCH_ERFINV(x: Any) -> Any:
    # the inverse of erf in float64 (PyTorch computes it in the input's precision, accurately;
    # the core's erfinv rounds (x + 1) / 2 first, as TensorFlow's kernel does)
    a = np.asarray(x)
    return np.asarray(S._erfinv_np(a.astype(np.float64)), dtype=a.dtype)


_HALF_SQRT_PI = math.sqrt(math.pi) / 2


@_TORCH_ERFINV.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d erfinv x = sqrt(pi)/2 exp(erfinv(x)^2) dx
    return (core.multiply(g, core.multiply(core.exp(core.square(out)), _HALF_SQRT_PI)),)


_TORCH_ERFINV.defjvp(lambda dx, x, *, out: core.multiply(
    dx, core.multiply(core.exp(core.square(out)), _HALF_SQRT_PI)))
_TORCH_ERFINV.defbatch(lambda batched, x: _TORCH_ERFINV(x))

erfinv = _un(_TORCH_ERFINV, "erfinv")


def polygamma(n: int, input: Tensor, *, out: Any = None) -> Tensor:
    """``torch.polygamma(n, x)``: the ``n``-th derivative of ``digamma``."""
    x = _floatify(_check(input, "polygamma", pos=2))
    if n < 0:
        raise _err(RuntimeError, "polygamma(n, x) does not support negative n.",
                   "n is the order of the derivative: 0, 1, 2, ...")
    if n == 0:
        return _POLY0(x)
    return M.polygamma_t(x, n=int(n))


_POLY0 = M.digamma_t.renamed("PolygammaBackward0")


def mvlgamma(input: Tensor, p: int, *, out: Any = None) -> Tensor:
    """The multivariate log-gamma ``sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)``."""
    x = _floatify(_check(input, "mvlgamma"))
    if p < 1:
        raise _err(RuntimeError, "p has to be greater than or equal to 1", "p is the dimension")
    return _MVLGAMMA(x, p=int(p))


def _mvlgamma_fn(x: Tensor, *, p: int) -> Tensor:
    acc = S.lgamma(x)
    for j in range(1, p):
        acc = core.add(acc, S.lgamma(core.subtract(x, j / 2.0)))
    return core.add(acc, p * (p - 1) / 4.0 * math.log(math.pi))


_MVLGAMMA = M.composite("mvlgamma_t", _mvlgamma_fn, 1)


def _bin_float(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Both operands promoted (PyTorch's rules), then made floating."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _t(a)
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        O._broadcast_check(a, b)
    a, b = promote(a, b, name)
    if not isinstance(a, Tensor):
        dt = _floating(b._data.dtype)
        a = _wrap(np.asarray(a, dtype=dt))
    elif not isinstance(b, Tensor):
        dt = _floating(a._data.dtype)
        b = _wrap(np.asarray(b, dtype=dt))
    else:
        dt = _floating(np.result_type(a._data.dtype, b._data.dtype))
    if a._data.dtype != dt:
        a = core.cast(a, dtype=dt)
    if b._data.dtype != dt:
        b = core.cast(b, dtype=dt)
    return a, b


def _floating(dt: np.dtype) -> np.dtype:
    return dt if dt.kind in "fc" else np.dtype(default_np())


def atan2(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """``atan(input / other)`` in the right quadrant (``Atan2Backward0``)."""
    a, b = _bin_float("atan2", _check(input, "atan2"), other)
    return M.ROUNDED["atan2"](a, b)


arctan2 = atan2


def _float_only(name: str, *ts: Any) -> None:
    """PyTorch's error for a float-only kernel given integer (or bool) tensors."""
    for t in ts:
        if isinstance(t, Tensor) and t._data.dtype.kind in "biu":
            raise _err(NotImplementedError, f'"{name}" not implemented for '
                       f"'{O._scalar_type_name(t._data.dtype)}'", "convert with .float() first")


def hypot(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow."""
    if isinstance(input, Tensor) and isinstance(other, Tensor) and \
            input._data.dtype.kind in "biu" and other._data.dtype.kind in "biu":
        _float_only("hypot_cpu", input)
    a, b = _bin_float("hypot", _check(input, "hypot"), other)
    return M.hypot(a, b)


def logaddexp(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """``log(exp(input) + exp(other))``, stably."""
    a, b = _bin_float("logaddexp", _check(input, "logaddexp"), other)
    return M.logaddexp(a, b)


def logaddexp2(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """``log2(2**input + 2**other)``, stably."""
    a, b = _bin_float("logaddexp2", _check(input, "logaddexp2"), other)
    return M.logaddexp2(a, b)


def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0`` (unless ``other`` is NaN)."""
    a, b = _bin_float("xlogy", input, other)
    return M.xlogy(a, b)


def xlog1py(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """``input * log1p(other)``, 0 where ``input == 0``."""
    a, b = _bin_float("xlog1py", input, other)
    return M.xlog1py(a, b)


def copysign(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other``."""
    a, b = _bin_float("copysign", _check(input, "copysign"), other)
    return M.copysign(a, b)


def float_power(input: Any, exponent: Any, *, out: Any = None) -> Tensor:
    """``input ** exponent`` in double precision (float64, or complex128)."""
    def up(v: Any) -> Any:
        if isinstance(v, Tensor):
            dt = np.complex128 if v._data.dtype.kind == "c" else np.float64
            return v if v._data.dtype == dt else core.cast(v, dtype=dt)
        return v

    a, b = up(input), up(exponent)
    if not isinstance(a, Tensor):
        a = _wrap(np.asarray(a, dtype=np.complex128 if isinstance(a, complex) else np.float64))
    if isinstance(b, Tensor) and isinstance(a, Tensor) and a._data.dtype != b._data.dtype:
        a, b = core.cast(a, dtype=np.complex128), core.cast(b, dtype=np.complex128)
    return O.pow(a, b)


_DEG2RAD = _mul_op.renamed("Deg2RadBackward0")
_RAD2DEG = _mul_op.renamed("Rad2DegBackward0")


def deg2rad(input: Tensor, *, out: Any = None) -> Tensor:
    """Degrees to radians."""
    return _DEG2RAD(_floatify(_check(input, "deg2rad")), math.pi / 180.0)


def rad2deg(input: Tensor, *, out: Any = None) -> Tensor:
    """Radians to degrees."""
    return _RAD2DEG(_floatify(_check(input, "rad2deg")), 180.0 / math.pi)


def signbit(input: Tensor, *, out: Any = None) -> Tensor:
    """Whether the sign bit is set (``-0.0`` included): a bool tensor."""
    x = _check(input, "signbit")
    if O._traced(x):  # the sign bit: negative, or a zero whose reciprocal is -inf
        neg = core.logical_or(core.less(x, 0), core.logical_and(
            core.equal(x, 0), core.less(core.divide(1.0, x), 0)))
        return O._restyle(neg)
    return _wrap(np.signbit(x._data))


def heaviside(input: Tensor, values: Tensor, *, out: Any = None) -> Tensor:
    """0 below zero, 1 above, ``values`` at zero (not differentiable, as in PyTorch)."""
    x = _check(input, "heaviside")
    v = _check(values, "heaviside", "values", 2)
    if x._data.dtype != v._data.dtype:
        raise _err(RuntimeError, "heaviside is not yet implemented for tensors with different "
                   "dtypes.", "cast values to the input's dtype")
    if x.requires_grad or v.requires_grad:
        if is_grad_enabled():
            raise _err(RuntimeError, "the derivative for 'heaviside' is not implemented.",
                       "heaviside is a step: its gradient is zero almost everywhere")
    _no_trace("heaviside", x, v)
    a, b = x._data, v._data
    return _wrap(np.heaviside(a, b).astype(np.result_type(a, b)))


def _int_only(name: str, a: Tensor) -> None:
    if a._data.dtype.kind not in "iub":
        raise _err(NotImplementedError, f'"{name}_cpu" not implemented for '
                   f"'{O._scalar_type_name(a._data.dtype)}'", f"{name} takes integer tensors")


def gcd(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The greatest common divisor, elementwise (integers)."""
    a, b = promote(_check(input, "gcd"), _check(other, "gcd", "other", 2), "gcd")
    _int_only("gcd", a)
    _no_trace("gcd", a, b)
    return _wrap(np.gcd(a._data, b._data))


def lcm(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The least common multiple, elementwise (integers)."""
    a, b = promote(_check(input, "lcm"), _check(other, "lcm", "other", 2), "lcm")
    _int_only("lcm", a)
    _no_trace("lcm", a, b)
    return _wrap(np.lcm(a._data, b._data))


def logit(input: Tensor, eps: float | None = None, *, out: Any = None) -> Tensor:
    """``log(p / (1 - p))``; with ``eps``, ``p`` clamped to ``[eps, 1 - eps]`` first."""
    x = _floatify(_check(input, "logit"))
    return M.logit(x, eps=None if eps is None else float(eps))


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Any = None) -> Tensor:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest / lowest finite values)."""
    x = _check(input, "nan_to_num")
    for arg, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))):
            raise _err(TypeError, f"nan_to_num(): argument '{arg}' must be float, not "
                       f"{type(v).__name__}", f"{arg} is a number")
    if x._data.dtype.kind not in "fc":
        return O.clone(x)
    fi = np.finfo(x._data.dtype)
    return M.nan_to_num(x, nan=float(nan), posinf=float(fi.max if posinf is None else posinf),
                        neginf=float(fi.min if neginf is None else neginf))


# ----------------------------------------------------------------------------- reductions
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
           out: Any = None) -> Tensor:
    """The sum, NaNs counted as zero (their gradient is zero)."""
    x = _check(input, "nansum")
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    if x._data.dtype.kind not in "fc":
        return O.sum(x, dim, keepdim)
    ax = O._dims(dim, x._data.ndim)
    return _NANSUM(x, axis=ax, keepdims=bool(keepdim))


def _nansum_fn(x: Tensor, *, axis: Any, keepdims: bool) -> Tensor:
    return core.sum(core.where(core.isnan(x), x._data.dtype.type(0), x), axis=axis,
                    keepdims=keepdims)


_NANSUM = M.composite("nansum_t", _nansum_fn, 1)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            out: Any = None) -> Tensor:
    """The mean of the non-NaN elements."""
    x = _check(input, "nanmean")
    if x._data.dtype.kind not in "fc":
        raise _err(RuntimeError, "nanmean(): expected input to have floating point or complex "
                   f"dtype but got {O._scalar_type_name(x._data.dtype)}",
                   "convert with .float() first")
    cnt = O.sum(core.logical_not(core.isnan(x)), dim, keepdim)
    return O.div(nansum(x, dim, keepdim, dtype=dtype), cnt)


def _pick(op: Any, x: Tensor, d: int, idx: np.ndarray, keepdim: bool) -> Tensor:
    """``x``'s elements at ``idx`` (keepdim-shaped) along ``d``, through ``op`` (a renamed
    gather: the gradient goes to those elements)."""
    if keepdim:
        grids: list[Any] = list(np.indices(idx.shape, sparse=True))
        grids[d] = idx
    else:
        sq = np.squeeze(idx, axis=d)
        grids = list(np.indices(sq.shape, sparse=True))
        grids.insert(d, sq)
    return op(x, index=tuple(grids))


def _order(a: np.ndarray, d: int) -> np.ndarray:
    """The stable ascending order along ``d`` with NaN last (as ``sort``)."""
    return np.argsort(a, axis=d, kind="stable")


def _select_kth(name: str, x: Tensor, k_of: Any, dim: Any, keepdim: bool,
                op: Any, nan_aware: bool) -> Any:
    rt = getattr(RT, name)
    a = x._data
    if a.ndim == 0:
        return rt(_pick(op, core.reshape(x, (1,)), 0, np.zeros((1,), np.int64), False),
                  _wrap(np.asarray(0, dtype=np.int64)))
    d = _dim(dim, a.ndim)
    n = a.shape[d]
    if n == 0:
        raise _err(IndexError, f"{name}(): Expected reduction dim {d} to have non-zero size.",
                   f"dim {d} of shape {list(a.shape)} is empty")
    if O._vmapped(x):
        if nan_aware:
            _no_trace(name, x)
        # the sort is an op here: the k-th position is static; a NaN (sorted last) wins
        srt = O.sort(x, d)
        kpos = int(k_of(np.asarray(n)))
        v = O.select(srt.values, d, kpos)
        ix_t = O.select(srt.indices, d, kpos)
        if a.dtype.kind == "f":
            has = core.any(core.isnan(x), axis=d)
            v = core.where(has, O.select(srt.values, d, n - 1), v)
            ix_t = core.where(has, O.select(srt.indices, d, n - 1), ix_t)
        if keepdim:
            v, ix_t = core.expand_dims(v, d), core.expand_dims(ix_t, d)
        return rt(v, ix_t)
    _no_trace(name, x)
    order = _order(a, d)
    if nan_aware:
        valid = np.sum(~np.isnan(a), axis=d, keepdims=True) if a.dtype.kind == "f" else \
            np.full([1 if i == d else s for i, s in enumerate(a.shape)], n)
        pos = k_of(valid)
    else:
        pos = k_of(np.full([1 if i == d else s for i, s in enumerate(a.shape)], n))
        if a.dtype.kind == "f":  # a NaN in the slice: it is the result (the first one)
            has = np.any(np.isnan(a), axis=d, keepdims=True)
            first_nan = np.sum(~np.isnan(a), axis=d, keepdims=True)
            pos = np.where(has, first_nan, pos)
    pos = np.clip(pos, 0, n - 1)
    idx = np.take_along_axis(order, pos.astype(np.intp), axis=d)
    vals = _pick(op, x, d, idx, keepdim)
    ix = idx if keepdim else np.squeeze(idx, axis=d)
    return rt(vals, _wrap(ix.astype(np.int64)))


def _median_all(x: Tensor, nan_aware: bool) -> Tensor:
    """``median()`` of all elements: the lower median; the gradient split evenly over the
    elements equal to it (PyTorch's ``evenly_distribute_backward``)."""
    a = x._data.reshape(-1)
    if a.size == 0:
        return _wrap(np.asarray(np.nan, dtype=a.dtype))
    if O._vmapped(x):
        if nan_aware:
            _no_trace("nanmedian", x)
        r = _select_kth("median", core.reshape(x, (-1,)), lambda n: (n - 1) // 2, 0, False,
                        _median_dim_op, False)
        return r.values
    _no_trace("nanmedian" if nan_aware else "median", x)
    s = np.sort(a)
    if a.dtype.kind == "f":
        nn = int(np.sum(~np.isnan(a)))
        if not nan_aware and nn < a.size:
            val = a.dtype.type(np.nan)
        elif nn == 0:
            val = a.dtype.type(np.nan)
        else:
            val = s[(nn - 1) // 2]
    else:
        val = s[(a.size - 1) // 2]
    out = np.asarray(val, dtype=a.dtype)
    if not tracked(x):
        return _wrap(out)
    op = _NANMEDIAN_ALL if nan_aware else _MEDIAN_ALL
    return _exact(op(x, val=out.item()), out)


def _median_all_fn(x: Tensor, *, val: Any) -> Tensor:
    """(mask / count) . x: ``val``, with the gradient split evenly over the elements equal to
    it (PyTorch's ``evenly_distribute_backward``)."""
    a = x._data.reshape(-1)
    mask = (a == val) | (np.isnan(a) & np.isnan(val)) if a.dtype.kind == "f" else a == val
    hits = np.flatnonzero(mask)
    w = np.full(hits.size, 1.0 / _max(int(hits.size), 1), dtype=a.dtype)
    return core.sum(core.multiply(core.getitem(core.reshape(x, (-1,)), (hits,)), w))


_MEDIAN_ALL = M.composite("median_all_t", _median_all_fn, 1)
_NANMEDIAN_ALL = M.composite("nanmedian_all_t", _median_all_fn, 1)


def _exact(res: Tensor, val: Any) -> Tensor:
    """``res`` (a weighted sum equal to ``val`` up to rounding) with ``val``'s exact bits."""
    res._data[...] = val
    return res


def median(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The lower median of all elements, or ``(values, indices)`` along ``dim``.

    >>> import tapegrad.torch as torch
    >>> torch.median(torch.tensor([[1.0, 5.0, 3.0]]), 1).values
    tensor([3.])
    """
    x = _check(input, "median")
    if dim is None:
        return _median_all(x, nan_aware=False)
    return _select_kth("median", x, lambda n: (n - 1) // 2, dim, keepdim, _median_dim_op, False)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """:func:`median` ignoring NaNs."""
    x = _check(input, "nanmedian")
    if dim is None:
        return _median_all(x, nan_aware=True)
    return _select_kth("nanmedian", x, lambda n: np.maximum(n - 1, 0) // 2, dim, keepdim,
                       _nanmedian_dim_op, True)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out: Any = None) -> Any:
    """The ``k``-th smallest element along ``dim`` and its index."""
    x = _check(input, "kthvalue")
    a = x._data
    d = _dim(dim, a.ndim) if a.ndim else 0
    n = a.shape[d] if a.ndim else 1
    if not 1 <= int(k) <= n:
        raise _err(RuntimeError, f"kthvalue(): selected number k out of range for dimension {d}",
                   f"k must be in [1, {n}]")
    return _select_kth("kthvalue", x, lambda m: np.full_like(m, int(k) - 1), dim, keepdim,
                       _kthvalue_op, False)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and
    the index of its last occurrence, as PyTorch's CPU kernel gives."""
    x = _check(input, "mode")
    _no_trace("mode", x)
    a = x._data
    if a.ndim == 0:
        return RT.mode(_pick(_mode_op, core.reshape(x, (1,)), 0, np.zeros((1,), np.int64), False),
                       _wrap(np.asarray(0, dtype=np.int64)))
    d = _dim(dim, a.ndim)
    if a.shape[d] == 0:
        raise _err(IndexError, f"mode(): Expected reduction dim {d} to have non-zero size.",
                   f"dim {d} of shape {list(a.shape)} is empty")
    moved = np.moveaxis(a, d, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    idx = np.empty(flat.shape[0], dtype=np.int64)
    for r, row in enumerate(flat):
        vals, counts = np.unique(row, return_counts=True)
        best = vals[int(np.argmax(counts))]
        hits = np.flatnonzero((row == best) | (np.isnan(row) & np.isnan(best))
                              if row.dtype.kind == "f" else row == best)
        idx[r] = hits[-1]
    idx_k = np.expand_dims(idx.reshape(moved.shape[:-1]), d)
    vals_t = _pick(_mode_op, x, d, idx_k, keepdim)
    return RT.mode(vals_t, _wrap(idx_k if keepdim else np.squeeze(idx_k, axis=d)))


def _cumext(name: str, input: Tensor, dim: int) -> Any:
    x = _check(input, name)
    a = x._data
    rt = getattr(RT, name)
    if a.ndim == 0:
        return rt(_pick(_cummax_op if name == "cummax" else _cummin_op,
                        core.reshape(x, (1,)), 0, np.zeros((1,), np.int64), False),
                  _wrap(np.asarray(0, dtype=np.int64)))
    d = _dim(dim, a.ndim)
    if O._traced(x) and a.shape[d]:
        return _cumext_traced(name, x, d)
    moved = np.moveaxis(a, d, -1)
    n = moved.shape[-1]
    idx = np.zeros(moved.shape, dtype=np.int64)
    if n:
        best = moved[..., 0].copy()
        cur = np.zeros(moved.shape[:-1], dtype=np.int64)
        isf = a.dtype.kind == "f"
        for j in range(1, n):
            v = moved[..., j]
            better = (v >= best) if name == "cummax" else (v <= best)
            if isf:  # a NaN wins and stays (its first index)
                better = (better | np.isnan(v)) & ~np.isnan(best)
            cur = np.where(better, j, cur)
            best = np.where(better, v, best)
            idx[..., j] = cur
    idx = np.moveaxis(idx, -1, d)
    op = _cummax_op if name == "cummax" else _cummin_op
    grids: list[Any] = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    return rt(op(x, index=tuple(grids)), _wrap(idx))


def _cumext_traced(name: str, x: Tensor, d: int) -> Any:
    """``cummax``/``cummin`` in ops (under ``vmap``): the latest extreme of each prefix, from a
    masked ``n x n`` comparison (NaN not treated specially)."""
    n = x._data.shape[d]
    xm = core.moveaxis(x, d, -1)                           # (..., n)
    lower = np.tril(np.ones((n, n), dtype=bool))           # [j, i]: i <= j
    rows = core.expand_dims(xm, -2)                        # (..., 1, n)
    fill = x._data.dtype.type(-np.inf if name == "cummax" else np.inf)
    masked = core.where(lower, rows, fill)                 # (..., n, n)
    arg = core.argmax if name == "cummax" else core.argmin
    ax = masked._data.ndim - 1
    last = arg(core.flip(masked, (ax,)), axis=ax)         # the latest among ties
    idx = core.cast(core.subtract(n - 1, last), dtype=np.int64)
    vals = O.gather(xm, xm._data.ndim - 1, O._restyle(idx))
    rt = getattr(RT, name)
    return rt(core.moveaxis(vals, -1, d), O._restyle(core.moveaxis(idx, -1, d)))


def cummax(input: Tensor, dim: int, *, out: Any = None) -> Any:
    """The running maximum along ``dim`` and where it was reached (the latest index at ties)."""
    return _cumext("cummax", input, dim)


def cummin(input: Tensor, dim: int, *, out: Any = None) -> Any:
    """The running minimum along ``dim`` and where it was reached."""
    return _cumext("cummin", input, dim)


def logcumsumexp(input: Tensor, dim: int, *, out: Any = None) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, stably: each output is a ``logsumexp`` over the
    prefix (a masked ``n x n`` reduction, so its gradient is the prefix's softmax)."""
    x = _check(input, "logcumsumexp")
    _float_only("logcumsumexp_out_cpu", x)
    if x._data.ndim == 0:
        return O.clone(x)
    d = _dim(dim, x._data.ndim)
    if x._data.shape[d] == 0:
        return O.clone(x)
    return M.logcumsumexp(x, axis=d)


def _quantile_args(name: str, x: Tensor, q: Any, interpolation: str) -> Tensor:
    if x._data.dtype.kind != "f":
        raise _err(RuntimeError, f"{name}() input tensor must be either float or double dtype",
                   "convert with .float() first")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise _err(RuntimeError, f"{name}() interpolation must be one of linear, lower, higher, "
                   f"midpoint or nearest, but got {interpolation}", "use interpolation='linear'")
    if isinstance(q, Tensor):
        qa = q._data
        if qa.dtype != x._data.dtype:
            raise _err(RuntimeError, f"{name}() q tensor must be same dtype as the input tensor",
                       "cast q to the input's dtype")
        if qa.ndim > 1:
            raise _err(RuntimeError, f"{name}() q must be a scalar or 1D tensor",
                       "pass a number or a 1-D tensor")
    else:
        qa = np.asarray(q, dtype=x._data.dtype)
    if qa.size and (np.any(qa < 0) or np.any(qa > 1)):
        if not isinstance(q, Tensor):
            raise _err(RuntimeError, f"{name}() q must be in the range [0, 1] but got {q}",
                       "q is a fraction")
        raise _err(RuntimeError, f"{name}() q values must be in the range [0, 1]",
                   "q is a fraction")
    return _wrap(np.asarray(qa))


def _quantile(name: str, input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    x = _check(input, name)
    qt = _quantile_args(name, x, q, interpolation)
    qa = qt._data
    scalar_q = qa.ndim == 0
    if dim is None:
        src = core.reshape(x, (-1,))
        d = 0
    else:
        d = _dim(dim, x._data.ndim)
        src = x if x._data.ndim else core.reshape(x, (1,))
    a = src._data
    n = a.shape[d]
    if n == 0:
        raise _err(RuntimeError, f"{name}() input tensor must be non-empty",
                   "there is nothing to take a quantile of")
    traced = O._vmapped(src)
    if not traced:
        _no_trace(name, src, q)
    if traced:
        _no_trace(name, q)
        if ignore_nan:
            _no_trace(name, src)
        srt = O.sort(src, d).values                       # the sort an op (vmap)
    else:
        order = _order(a, d)
        grids: list[Any] = list(np.indices(order.shape, sparse=True))
        grids[d] = order
        srt = O.P.sort_op(src, index=tuple(grids))       # sorted, NaN last; grad to the sources
    srt = core.moveaxis(srt, d, -1)                       # (..., n)
    sa = srt._data
    if traced:
        cnt = np.full(sa.shape[:-1] + (1,), n)
    elif ignore_nan:
        cnt = np.sum(~np.isnan(sa), axis=-1, keepdims=True)
    else:
        cnt = np.full(sa.shape[:-1] + (1,), n)
        cnt = np.where(np.any(np.isnan(sa), axis=-1, keepdims=True), -1, cnt)
    qflat = core.reshape(q, (-1,)) if isinstance(q, Tensor) else _wrap(qa.reshape(-1))
    nq = int(qflat._data.size)
    dt = sa.dtype.type
    span = (np.maximum(cnt, 1) - 1).astype(sa.dtype)
    outs = []
    for i in range(nq):
        # PyTorch's: ranks = q * (n - 1) in the input's dtype, lerp between the neighbours
        rank_t = core.multiply(core.getitem(qflat, (i,)), span)
        rank = rank_t._data
        if interpolation == "lower":
            rank = np.floor(rank)
        elif interpolation == "higher":
            rank = np.ceil(rank)
        elif interpolation == "nearest":
            rank = np.round(rank)  # half to even, as PyTorch's round
        lo = np.floor(rank).astype(np.int64)
        hi = np.ceil(rank).astype(np.int64)
        w: Any
        if interpolation == "linear":
            w = core.subtract(rank_t, lo.astype(sa.dtype))
        elif interpolation == "midpoint":
            w = dt(0.5)
        else:
            w = dt(0)
        lo = np.clip(lo, 0, n - 1)
        hi = np.clip(hi, 0, n - 1)
        lg = list(np.indices(lo.shape, sparse=True))
        lg[-1] = lo
        hg = list(np.indices(hi.shape, sparse=True))
        hg[-1] = hi
        vlo = core.getitem(srt, tuple(lg))
        vhi = core.getitem(srt, tuple(hg))
        v = core.add(vlo, core.multiply(core.subtract(vhi, vlo), w))   # lerp, as PyTorch's
        bad = cnt <= 0
        if traced and sa.dtype.kind == "f":  # a NaN in the slice makes it NaN
            v = core.where(core.any(core.isnan(srt), axis=-1, keepdims=True),
                           sa.dtype.type(np.nan), v)
        elif bad.any():
            v = core.where(bad, sa.dtype.type(np.nan), v)
        outs.append(v)                                    # (..., 1)
    res = core.concatenate(outs, axis=-1) if len(outs) > 1 else outs[0]   # (..., nq)
    res = core.moveaxis(res, -1, 0)                       # (nq, ...)
    if dim is None:
        shape: tuple[int, ...] = (nq,)
        if keepdim:
            shape = shape + (1,) * x._data.ndim
        res = core.reshape(res, shape)
    else:
        res = core.expand_dims(res, d + 1) if keepdim else res  # keep the reduced dim
        if not x._data.ndim and not keepdim:
            res = core.reshape(res, (nq,))
    if scalar_q:
        res = core.squeeze(res, axis=0)
    return res


def quantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> Tensor:
    """The ``q``-th quantiles along ``dim`` (all elements by default), interpolated as NumPy's
    (``linear`` by default); a NaN in a slice makes its quantiles NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Any = None) -> Tensor:
    """:func:`quantile` ignoring NaNs."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def _var_like(fn: Any, input: Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, ax, c, k = O._var_args(input, args, dict(kwargs))
    return fn(x, axis=ax, correction=c, keepdims=k), core.mean(x, axis=ax, keepdims=k)


def std_mean(input: Tensor, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over the same dims (``correction=1`` by default)."""
    return _var_like(O.P.std_op, input, args, kwargs)  # type: ignore[no-any-return, unused-ignore]


def var_mean(input: Tensor, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over the same dims."""
    return _var_like(O.P.var_op, input, args, kwargs)  # type: ignore[no-any-return, unused-ignore]


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False,
            out: Any = None) -> Any:
    """``(min, max)`` in one call (``torch.return_types.aminmax``)."""
    x = _check(input, "aminmax")
    if x._data.size == 0 and dim is None:
        raise _err(RuntimeError, "aminmax(): cannot compute aminmax over an empty dimension as "
                   "the operation has no identity.", "the tensor is empty")
    d = () if dim is None else dim
    return RT.aminmax(O.amin(x, d, keepdim), O.amax(x, d, keepdim))


# ----------------------------------------------------------------------------- matrix products
def _check_input_bcast(input: Tensor, target: tuple[int, ...], name: str) -> None:
    s = input._data.shape
    if s == target:
        return
    for i in range(len(target) - 1, -1, -1):
        j = i - (len(target) - len(s))
        if j >= 0 and s[j] != target[i] and s[j] != 1:
            raise _err(RuntimeError, f"The expanded size of the tensor ({target[i]}) must "
                       f"match the existing size ({s[j]}) at non-singleton dimension "
                       f"{j}.  Target sizes: {list(target)}.  Tensor sizes: {list(s)}",
                       f"{name}'s input must broadcast to the product's shape")


def _num(v: Any) -> Any:
    return v.item() if isinstance(v, Tensor) else v


def _combine(inp: Tensor, prod: Tensor, beta: Any, alpha: Any) -> Tensor:
    """``beta * inp + alpha * prod``; ``beta == 0`` ignores ``inp`` (NaN included)."""
    p = prod if alpha == 1 else core.multiply(prod, alpha)
    if beta == 0:
        return p
    return core.add(inp if beta == 1 else core.multiply(inp, beta), p)


def _addmm_fn(i: Tensor, a: Tensor, b: Tensor, *, beta: Any, alpha: Any) -> Tensor:
    return _combine(i, core.matmul(a, b), beta, alpha)


def _baddbmm_fn(i: Tensor, a: Tensor, b: Tensor, *, beta: Any, alpha: Any) -> Tensor:
    return _combine(i, core.matmul(a, b), beta, alpha)


def _addbmm_fn(i: Tensor, a: Tensor, b: Tensor, *, beta: Any, alpha: Any) -> Tensor:
    return _combine(i, core.sum(core.matmul(a, b), axis=0), beta, alpha)


def _addr_fn(i: Tensor, a: Tensor, b: Tensor, *, beta: Any, alpha: Any) -> Tensor:
    return _combine(i, core.multiply(core.expand_dims(a, -1), b), beta, alpha)


def _addcmul_fn(i: Tensor, a: Tensor, b: Tensor, *, value: Any) -> Tensor:
    p = core.multiply(a, b)
    return core.add(i, p if value == 1 else core.multiply(p, value))


def _addcdiv_fn(i: Tensor, a: Tensor, b: Tensor, *, value: Any) -> Tensor:
    p = core.divide(a, b)
    return core.add(i, p if value == 1 else core.multiply(p, value))


_ADDMM = M.composite("addmm_t", _addmm_fn, 3)
_ADDMV = M.composite("addmv_t", _addmm_fn, 3)
_ADDR = M.composite("addr_t", _addr_fn, 3)
_BADDBMM = M.composite("baddbmm_t", _baddbmm_fn, 3)
_ADDBMM = M.composite("addbmm_t", _addbmm_fn, 3)
_ADDCMUL = M.composite("addcmul_t", _addcmul_fn, 3)
_ADDCDIV = M.composite("addcdiv_t", _addcdiv_fn, 3)


def _add_scaled(op: Any, input: Tensor, a: Tensor, b: Tensor, target: tuple[int, ...],
                beta: Any, alpha: Any, name: str) -> Tensor:
    """``beta * input + alpha * (a (x) b)`` through the one-node ``op``."""
    _check_input_bcast(input, target, name)
    a, b = promote(a, b, "matmul")
    inp = input if input._data.dtype == a._data.dtype else core.cast(input, dtype=a._data.dtype)
    return op(inp, a, b, beta=_num(beta), alpha=_num(alpha))


def _dtype_check(name: str, *ts: Tensor) -> None:
    d0 = ts[0]._data.dtype
    for t in ts[1:]:
        if t._data.dtype != d0:
            raise _err(RuntimeError, f"self and mat2 must have the same dtype, but got "
                       f"{O._scalar_type_name(d0)} and {O._scalar_type_name(t._data.dtype)}",
                       f"{name}: convert every operand to one dtype")


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Any = None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``.

    >>> import tapegrad.torch as torch
    >>> torch.addmm(torch.zeros(2, 2), torch.eye(2), torch.ones(2, 2), alpha=2)
    tensor([[2., 2.],
            [2., 2.]])
    """
    x = _check(input, "addmm")
    m1 = _check(mat1, "addmm", "mat1", 2)
    m2 = _check(mat2, "addmm", "mat2", 3)
    if m1._data.ndim != 2:
        raise _err(RuntimeError, "mat1 must be a matrix, got "
                   f"{m1._data.ndim}-D tensor", "addmm multiplies two matrices")
    if m2._data.ndim != 2:
        raise _err(RuntimeError, "mat2 must be a matrix, got "
                   f"{m2._data.ndim}-D tensor", "addmm multiplies two matrices")
    (a, b), (c, e) = m1._data.shape, m2._data.shape
    if b != c:
        raise _err(RuntimeError, f"mat1 and mat2 shapes cannot be multiplied ({a}x{b} and "
                   f"{c}x{e})", "mat1's columns must equal mat2's rows")
    _dtype_check("addmm", m1, m2)
    return _add_scaled(_ADDMM, x, m1, m2, (a, e), beta, alpha, "addmm")


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Any = None) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    x = _check(input, "addmv")
    m = _check(mat, "addmv", "mat", 2)
    v = _check(vec, "addmv", "vec", 3)
    if m._data.ndim != 2 or v._data.ndim != 1:
        raise _err(RuntimeError, f"vector + matrix @ vector expected, got {x._data.ndim}, "
                   f"{m._data.ndim}, {v._data.ndim}", "addmv takes a matrix and a vector")
    if m._data.shape[1] != v._data.shape[0] or (x._data.ndim == 1 and x._data.shape[0] not in (
            1, m._data.shape[0])):
        raise _err(RuntimeError, f"size mismatch, got input ({x._data.shape[0] if x._data.ndim else 1}),"
                   f" mat ({m._data.shape[0]}x{m._data.shape[1]}), vec ({v._data.shape[0]})",
                   "input has mat's rows, vec has mat's columns")
    return _add_scaled(_ADDMV, x, m, v, (m._data.shape[0],), beta, alpha, "addmv")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1,
         out: Any = None) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    x = _check(input, "addr")
    v1 = _check(vec1, "addr", "vec1", 2)
    v2 = _check(vec2, "addr", "vec2", 3)
    if v1._data.ndim != 1 or v2._data.ndim != 1:
        raise _err(RuntimeError, f"addr: Expected 1-D argument vec1, but got "
                   f"{v1._data.ndim if v1._data.ndim != 1 else v2._data.ndim}-D",
                   "vec1 and vec2 are vectors")
    return _add_scaled(_ADDR, x, v1, v2, (v1._data.shape[0], v2._data.shape[0]), beta, alpha,
                       "addr")


def _bmm_check(b1: Tensor, b2: Tensor) -> None:
    if b1._data.ndim != 3:
        raise _err(RuntimeError, "batch1 must be a 3D tensor", f"got {b1._data.ndim}-D")
    if b2._data.ndim != 3:
        raise _err(RuntimeError, "batch2 must be a 3D tensor", f"got {b2._data.ndim}-D")
    n, _, k = b1._data.shape
    if b2._data.shape[0] != n or b2._data.shape[1] != k:
        raise _err(RuntimeError, f"Expected size for first two dimensions of batch2 tensor to be: "
                   f"[{n}, {k}] but got: [{b2._data.shape[0]}, {b2._data.shape[1]}].",
                   "batch2 needs batch1's batch size, and its rows batch1's columns")


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
            out: Any = None) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    x = _check(input, "baddbmm")
    b1, b2 = _check(batch1, "baddbmm", "batch1", 2), _check(batch2, "baddbmm", "batch2", 3)
    _bmm_check(b1, b2)
    target = (b1._data.shape[0], b1._data.shape[1], b2._data.shape[2])
    return _add_scaled(_BADDBMM, x, b1, b2, target, beta, alpha, "baddbmm")


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
           out: Any = None) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    x = _check(input, "addbmm")
    b1, b2 = _check(batch1, "addbmm", "batch1", 2), _check(batch2, "addbmm", "batch2", 3)
    _bmm_check(b1, b2)
    return _add_scaled(_ADDBMM, x, b1, b2, (b1._data.shape[1], b2._data.shape[2]), beta, alpha,
                       "addbmm")


def _addc(op: Any, name: str, input: Any, t1: Any, t2: Any, value: Any) -> Tensor:
    x = _check(input, name)
    a = _check(t1, name, "tensor1", 2)
    b = _check(t2, name, "tensor2", 3)
    from ._dtype import result_type

    O._broadcast_check(a, b)
    ab = np.broadcast_to(np.empty((), dtype=np.int8),
                         np.broadcast_shapes(a._data.shape, b._data.shape))
    O._broadcast_check(x, ab)
    rt = result_type(x, a, b)
    if isinstance(value, float) and np.dtype(rt).kind not in "fc":
        rt = default_np()
    if name == "addcdiv" and np.dtype(rt).kind not in "fc":
        rt = default_np()
    x, a, b = (t if t._data.dtype == rt else core.cast(t, dtype=rt) for t in (x, a, b))
    return op(x, a, b, value=_num(value))


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Any = None) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    return _addc(_ADDCMUL, "addcmul", input, tensor1, tensor2, value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Any = None) -> Tensor:
    """``input + value * tensor1 / tensor2``."""
    t1, t2 = _check(tensor1, "addcdiv", "tensor1", 2), _check(tensor2, "addcdiv", "tensor2", 3)
    if t1._data.dtype.kind in "iub" and t2._data.dtype.kind in "iub":
        raise _err(RuntimeError, "Integer division with addcdiv is no longer supported, and in a "
                   "future  release addcdiv will perform a true division of tensor1 and tensor2. "
                   "The historic addcdiv behavior can be implemented as (input + value * "
                   "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                   "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                   "behavior is just the latter implementation: (input + value * tensor1 / "
                   "tensor2), for all dtypes.", "use float tensors")
    return _addc(_ADDCDIV, "addcdiv", input, t1, t2, value)


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """The product of 2-D matrices, left to right (deprecated in PyTorch for
    ``torch.linalg.multi_dot``)."""
    import warnings

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise _err(RuntimeError, "chain_matmul(): Expected one or more matrices",
                   "pass at least one matrix")
    for i, m in enumerate(matrices):
        if m._data.ndim != 2:
            raise _err(RuntimeError, f"Tensor dimension is {m._data.ndim}, expected 2 instead.",
                       f"matrix {i} is not 2-D")
    if len(matrices) == 1:
        return O.clone(matrices[0])
    acc = matrices[0]
    for m in matrices[1:]:
        acc = O.mm(acc, m)
    return acc


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract ``dims`` (a count, or two lists of dims) of ``a`` and ``b``."""
    x, y = _check(a, "tensordot", "a"), _check(b, "tensordot", "b", 2)
    na, nb = x._data.ndim, y._data.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        k = int(dims)
        if k < 0:
            raise _err(RuntimeError, f"tensordot expects dims >= 0, but got dims={k}",
                       "dims counts the contracted dims")
        if k > _min(na, nb):
            raise _err(RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got "
                       f"dims={k}", f"a has {na} dims, b has {nb}")
        da, db = list(range(na - k, na)), list(range(k))
    else:
        da_, db_ = dims
        da = [da_] if isinstance(da_, int) else list(da_)
        db = [db_] if isinstance(db_, int) else list(db_)
    if len(da) != len(db):
        raise _err(RuntimeError, "both dimension lists should have same length",
                   f"got {len(da)} and {len(db)} dims")
    da = [_dim(d, na) for d in da]
    db = [_dim(d, nb) for d in db]
    for i, j in zip(da, db):
        if x._data.shape[i] != y._data.shape[j]:
            raise _err(RuntimeError, f"contracted dimensions need to match, but first has size "
                       f"{x._data.shape[i]} in dim {i} and second has size {y._data.shape[j]} in "
                       f"dim {j}", "the contracted dims must have equal sizes")
    fa = [i for i in range(na) if i not in da]
    fb = [j for j in range(nb) if j not in db]
    xs, ys = x._data.shape, y._data.shape
    k = int(np.prod([xs[i] for i in da])) if da else 1
    xa = core.reshape(core.transpose(x, tuple(fa + da)), (-1, k))
    yb = core.reshape(core.transpose(y, tuple(db + fb)), (k, -1))
    if xa._data.dtype != yb._data.dtype:
        raise _err(RuntimeError, "both inputs should have same dtype",
                   f"{from_np(x._data.dtype)} and {from_np(y._data.dtype)}: cast one")
    r = core.matmul(xa, yb)
    return core.reshape(r, tuple(xs[i] for i in fa) + tuple(ys[j] for j in fb))


def kron(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The Kronecker product (blocks ``input[i] * other``)."""
    a, b = promote(_check(input, "kron"), _check(other, "kron", "other", 2), "multiply")
    a, b = _t(a), _t(b)
    n = _max(a._data.ndim, b._data.ndim)
    sa = (1,) * (n - a._data.ndim) + a._data.shape
    sb = (1,) * (n - b._data.ndim) + b._data.shape
    ai = core.reshape(a, tuple(itertools.chain.from_iterable((s, 1) for s in sa)))
    bi = core.reshape(b, tuple(itertools.chain.from_iterable((1, s) for s in sb)))
    return core.reshape(core.multiply(ai, bi), tuple(p * q for p, q in zip(sa, sb)))


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_"
          "dist_if_necessary") -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` (``..., P, M``) and ``x2``
    (``..., R, M``): shape ``(..., P, R)``; the gradient is 0 at zero distance, as PyTorch's."""
    a, b = _check(x1, "cdist", "x1"), _check(x2, "cdist", "x2", 2)
    if a._data.ndim < 2:
        raise _err(RuntimeError, f"cdist only supports at least 2D tensors, X1 got: "
                   f"{a._data.ndim}D", "rows are points: pass (P, M)")
    if b._data.ndim < 2:
        raise _err(RuntimeError, f"cdist only supports at least 2D tensors, X2 got: "
                   f"{b._data.ndim}D", "rows are points: pass (R, M)")
    if a._data.shape[-1] != b._data.shape[-1]:
        raise _err(RuntimeError, f"X1 and X2 must have the same number of columns. X1: "
                   f"{a._data.shape[-1]} X2: {b._data.shape[-1]}",
                   f"shapes {list(a._data.shape)} and {list(b._data.shape)}")
    if a._data.dtype.kind != "f":
        raise _err(RuntimeError, f"cdist only supports floating-point dtypes, X1 got: "
                   f"{O._scalar_type_name(a._data.dtype)}", "convert with .float() first")
    if b._data.dtype.kind != "f":
        raise _err(RuntimeError, f"cdist only supports floating-point dtypes, X2 got: "
                   f"{O._scalar_type_name(b._data.dtype)}", "convert with .float() first")
    if p < 0:
        raise _err(RuntimeError, "cdist only supports non-negative p values",
                   "p is the norm's order")
    if a._data.dtype != b._data.dtype:
        raise _err(RuntimeError, f"expected scalar type {O._scalar_type_name(a._data.dtype)} but "
                   f"found {O._scalar_type_name(b._data.dtype)}", "cast x2 to x1's dtype")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise _err(ValueError, f"{compute_mode} is not a valid value for compute_mode",
                   "compute_mode is one of " + ", ".join(modes))
    big = a._data.shape[-2] > 25 or b._data.shape[-2] > 25
    mm = p == 2 and (compute_mode == modes[1] or (compute_mode == modes[0] and big))
    return _CDIST(a, b, p=float(p), mm=mm)


def _cdist_fn(a: Tensor, b: Tensor, *, p: float, mm: bool) -> Tensor:
    from ..ops.linalg_ext import vector_norm as _vnorm

    if mm:
        # PyTorch's _euclidean_dist: [-2 a, |a|^2, 1] @ [b, 1, |b|^2]^T, clamped at 0, sqrt
        # (O(P R) memory); the square root's gradient is 0 at 0, as _cdist_backward's
        an = core.sum(core.square(a), axis=-1, keepdims=True)
        bn = core.sum(core.square(b), axis=-1, keepdims=True)
        one_a = core.add(core.multiply(an, 0.0), 1.0)
        one_b = core.add(core.multiply(bn, 0.0), 1.0)
        a_ = core.concatenate([core.multiply(a, -2.0), an, one_a], axis=-1)
        b_ = core.concatenate([b, one_b, bn], axis=-1)
        d2 = core.matmul(a_, core.swapaxes(b_, -1, -2))
        pos = core.greater(d2, 0)
        return core.where(pos, core.sqrt(core.where(pos, d2, d2._data.dtype.type(1))),
                          d2._data.dtype.type(0))
    diff = core.subtract(core.expand_dims(a, -2), core.expand_dims(b, -3))  # (..., P, R, M)
    return _vnorm(diff, p, (diff._data.ndim - 1,), False)


_CDIST = M.composite("cdist_t", _cdist_fn, 2)


# ----------------------------------------------------------------------------- differences, sums
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (with ``prepend``/``append`` joined first)."""
    x = _check(input, "diff")
    if x._data.ndim == 0:
        raise _err(RuntimeError, "diff expects input to be at least one-dimensional",
                   "pass a 1-D or larger tensor")
    if n < 0:
        raise _err(RuntimeError, f"order must be non-negative but got {n}", "n counts the "
                   "differences")
    d = _dim(dim, x._data.ndim)
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        parts = [t if isinstance(t, Tensor) and t._data.ndim else
                 O.expand(_t(t), *[1 if i == d else s for i, s in enumerate(x._data.shape)])
                 for t in parts]
        x = O.cat(parts, d)
    for _ in range(n):
        m = x._data.shape[d]
        if m == 0:
            break
        hi = O.narrow(x, d, 1, m - 1)
        lo = O.narrow(x, d, 0, m - 1)
        x = core.logical_xor(hi, lo) if x._data.dtype == np.bool_ else O.sub(hi, lo)
    return x


def _trap_dx(y: Tensor, x: Any, dx: Any, d: int) -> Any:
    if x is None:
        return 1.0 if dx is None else dx
    xt = _t(x)
    if xt._data.ndim == 1:
        dd = diff(xt)
        shape = [1] * y._data.ndim
        shape[d] = -1
        return core.reshape(dd, tuple(shape))
    return diff(xt, dim=d)


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` (spacing ``dx``, or sample points ``x``)."""
    t = _check(y, "trapezoid", "y")
    d = _dim(dim, t._data.ndim)
    m = t._data.shape[d]
    if m == 0:
        return O.sum(t, d)
    s = O.add(O.narrow(t, d, 1, m - 1), O.narrow(t, d, 0, m - 1))
    step = _trap_dx(t, x, dx, d)
    return O.div(O.sum(O.mul(s, step), d), 2.0)


def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """NumPy's older name for :func:`trapezoid`."""
    if isinstance(x, (int, float)) and dx is None:  # torch.trapz(y, dx, dim=...) positional
        x, dx = None, x
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element fewer)."""
    t = _check(y, "cumulative_trapezoid", "y")
    d = _dim(dim, t._data.ndim)
    m = t._data.shape[d]
    s = O.add(O.narrow(t, d, 1, _max(m - 1, 0)), O.narrow(t, d, 0, _max(m - 1, 0)))
    step = _trap_dx(t, x, dx, d)
    return O.cumsum(O.div(O.mul(s, step), 2.0), d)


# ----------------------------------------------------------------------------- statistics
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the rows (variables) over the columns (observations)."""
    x = _check(input, "cov")
    if x._data.ndim > 2:
        raise _err(RuntimeError, f"cov(): expected input to have two or fewer dimensions but got "
                   f"an input with {x._data.ndim} dimensions", "rows are variables")
    if x._data.ndim < 2:
        x = core.reshape(x, (1, -1))
    if x._data.dtype.kind not in "fc":
        x = core.cast(x, dtype=default_np())
    n = x._data.shape[1]
    w: Any = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else O.mul(w, aweights)
    if w is None:
        avg = O.mean(x, 1, keepdim=True)
        wsum: Any = float(n)
        norm_f: Any = float(n - correction)
    else:
        w = core.cast(w, dtype=x._data.dtype) if w._data.dtype != x._data.dtype else w
        wsum = O.sum(w)
        avg = O.div(O.sum(O.mul(x, w), 1, keepdim=True), wsum)
        if correction == 0:
            norm_f = wsum
        elif aweights is None:
            norm_f = O.sub(wsum, correction)
        else:
            norm_f = O.sub(wsum, O.div(O.mul(O.sum(O.mul(w, aweights)), correction), wsum))
    if not isinstance(norm_f, Tensor) and norm_f <= 0:
        import warnings

        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_f = 0.0
    xm = O.sub(x, avg)
    xw = xm if w is None else O.mul(xm, w)
    c = O.matmul(xw, O.conj(O.t(xm)) if xm._data.dtype.kind == "c" else O.t(xm))
    r = O.div(c, norm_f)
    return core.squeeze(r) if input._data.ndim < 2 or r._data.shape == (1, 1) else r


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    c = cov(input)
    if c._data.ndim == 0:
        return O.div(c, c)
    dg = O.diag(c)
    sd = O.sqrt(dg)
    c = O.div(c, core.expand_dims(sd, -1))
    c = O.div(c, core.expand_dims(sd, 0))
    return O.clamp(c, -1, 1)


# ----------------------------------------------------------------------------- counting, search
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0 .. max`` occurs (with ``weights``: their sums)."""
    x = _check(input, "bincount")
    _no_trace("bincount", x, weights)
    a = x._data
    if a.dtype.kind not in "iub":
        raise _err(NotImplementedError, f"\"bincount_cpu\" not implemented for "
                   f"'{O._scalar_type_name(a.dtype)}'", "bincount counts integers")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise _err(RuntimeError, "bincount only supports 1-d non-negative integral inputs.",
                   "pass a 1-D tensor of counts >= 0")
    if minlength < 0:
        raise _err(RuntimeError, "minlength should be >= 0", "minlength is a size")
    if weights is None:
        return _wrap(np.bincount(a, minlength=minlength).astype(np.int64))
    w = _check(weights, "bincount", "weights", 2)
    if w._data.shape != a.shape:
        raise _err(RuntimeError, "weights should be 1-d and have the same length as input",
                   f"input {list(a.shape)}, weights {list(w._data.shape)}")
    dt = w._data.dtype if w._data.dtype.kind == "f" else np.dtype(np.float64)
    size = _max(int(a.max()) + 1 if a.size else 0, minlength)
    wt = w if w._data.dtype == dt else core.cast(w, dtype=dt)
    if tracked(wt):  # the sums of the weights: an index_add, differentiable in them
        return core.index_add_zeros(wt, index=(a,), shape=(size,))
    return _wrap(np.bincount(a, weights=wt._data, minlength=minlength).astype(dt))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,
          out: Any = None) -> Tensor:
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both 0);
    elements outside are ignored."""
    x = _check(input, "histc")
    _no_trace("histc", x)
    a = x._data
    if a.dtype.kind != "f":
        raise _err(NotImplementedError, f"\"histogram_cpu\" not implemented for "
                   f"'{O._scalar_type_name(a.dtype)}'", "convert with .float() first")
    if bins <= 0:
        raise _err(RuntimeError, f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0",
                   "bins counts the bins")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise _err(RuntimeError, "torch.histc: max must be larger than min",
                   f"got min {lo} and max {hi}: swap them")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _err(RuntimeError, f"torch.histc(): range of [{lo}, {hi}] is not finite",
                   "the data contains inf: pass min and max")
    v = a.reshape(-1).astype(np.float64)
    keep = (v >= lo) & (v <= hi)
    v = v[keep]
    pos = ((v - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return _wrap(np.bincount(pos, minlength=bins).astype(a.dtype))


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                 out: Any = None) -> Tensor:
    """Where ``input``'s values would go in the sorted innermost dim of ``sorted_sequence``."""
    s = _check(sorted_sequence, "searchsorted", "sorted_sequence")
    scalar = not isinstance(input, Tensor)
    v = _t(input)
    if side is not None:
        if side not in ("left", "right"):
            raise _err(RuntimeError, f"torch.searchsorted(): side can only be 'left' or 'right' "
                       f"but got {side}", "side='left' or 'right'")
        if right and side == "left":
            raise _err(RuntimeError, "torch.searchsorted(): side and right can't be set to "
                       "opposites, got side of left while right was True",
                       "give only one of side= and right=")
        right = side == "right"
    if (O._traced(s) or O._traced(v)) and s._data.ndim == 1 and sorter is None:
        below = (core.less_equal if right else core.less)(s, core.expand_dims(v, -1))
        cnt = core.sum(core.cast(below, dtype=np.int64), axis=-1)
        return O._restyle(core.cast(cnt, dtype=np.int32) if out_int32 else cnt)
    _no_trace("searchsorted", s, v, sorter)
    sa, va = s._data, v._data
    if sorter is not None:
        sa = np.take_along_axis(sa, sorter._data, axis=-1)
    if sa.ndim > 1 and (scalar or sa.shape[:-1] != va.shape[:-1]):
        raise _err(RuntimeError, "torch.searchsorted(): boundaries tensor should be 1 dimension "
                   "or the first N-1 dimensions of boundaries tensor and input value tensor must "
                   f"match, but we got boundaries tensor {list(sa.shape)} and input value tensor "
                   f"{list(va.shape)}", "use a 1-D boundaries tensor, or match the leading dims")
    dt = np.int32 if out_int32 else np.int64
    sd = "right" if right else "left"
    if sa.ndim <= 1:
        r = np.searchsorted(sa, va, side=sd)  # type: ignore[call-overload]
    else:
        fs = sa.reshape(-1, sa.shape[-1])
        fv = va.reshape(-1, va.shape[-1])
        r = np.stack([np.searchsorted(fs[i], fv[i], side=sd)  # type: ignore[call-overload]
                      for i in range(fs.shape[0])]).reshape(va.shape)
    return _wrap(np.asarray(r, dtype=dt))


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` occurs in ``test_elements`` (a bool tensor)."""
    if O._traced(elements) or O._traced(test_elements):
        et, tt_ = _t(elements), core.reshape(_t(test_elements), (-1,))
        hit = core.any(core.equal(core.expand_dims(et, -1), tt_), axis=-1)
        return O._restyle(core.logical_not(hit) if invert else hit)
    e = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    t = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _wrap(np.isin(e, t, invert=invert))


def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (``nonzero``)."""
    _no_trace("argwhere", input)
    x = _check(input, "argwhere")
    if x._data.ndim == 0:
        return _wrap(np.zeros((int(bool(x._data)), 0), dtype=np.int64))
    return O.nonzero(x)


def masked_select(input: Tensor, mask: Tensor, *, out: Any = None) -> Tensor:
    """The elements where ``mask`` (broadcast) is True, as a 1-D tensor."""
    x = _check(input, "masked_select")
    m = _check(mask, "masked_select", "mask", 2)
    _no_trace("masked_select", x, m)
    if m._data.dtype != np.bool_:
        raise _err(RuntimeError, "masked_select: expected BoolTensor for mask",
                   "compare first, e.g. x > 0")
    shape = np.broadcast_shapes(x._data.shape, m._data.shape)
    xb = x if x._data.shape == shape else O.expand(x, *shape)
    mb = np.broadcast_to(m._data, shape)
    return _MASKED_SELECT(xb, index=(mb,))


_MASKED_SELECT = _getitem.renamed("MaskedSelectBackward0")


def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """The tensor with consecutive repeats collapsed (with inverse indices and counts)."""
    x = _check(input, "unique_consecutive")
    _no_trace("unique_consecutive", x)
    a = x._data
    if dim is None:
        flat = a.reshape(-1)
        if flat.size == 0:
            starts = np.zeros(0, dtype=np.int64)
        else:
            change = np.ones(flat.size, dtype=bool)
            change[1:] = flat[1:] != flat[:-1]
            starts = np.flatnonzero(change)
        vals = flat[starts]
        inv = (np.cumsum(np.r_[False, flat[1:] != flat[:-1]]) if flat.size
               else np.zeros(0, np.int64)).reshape(a.shape)
        counts = np.diff(np.r_[starts, flat.size])
    else:
        d = _dim(dim, a.ndim)
        moved = np.moveaxis(a, d, 0)
        n = moved.shape[0]
        change = np.ones(n, dtype=bool)
        if n > 1:
            change[1:] = np.any((moved[1:] != moved[:-1]).reshape(n - 1, -1), axis=1)
        starts = np.flatnonzero(change)
        vals = np.moveaxis(moved[starts], 0, d)
        inv = np.cumsum(change) - 1
        counts = np.diff(np.r_[starts, n])
    res: list[Tensor] = [_wrap(np.ascontiguousarray(vals))]
    if return_inverse:
        res.append(_wrap(np.asarray(inv, dtype=np.int64)))
    if return_counts:
        res.append(_wrap(np.asarray(counts, dtype=np.int64)))
    return res[0] if len(res) == 1 else tuple(res)


# ----------------------------------------------------------------------------- construction
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) row/column indices of the lower triangle of a ``row x col`` matrix."""
    r, c = np.tril_indices(row, offset, col)
    return _wrap(np.stack([r, c]).astype(to_np(dtype) if dtype is not None else np.int64))


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) row/column indices of the upper triangle of a ``row x col`` matrix."""
    r, c = np.triu_indices(row, offset, col)
    return _wrap(np.stack([r, c]).astype(to_np(dtype) if dtype is not None else np.int64))


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, one row each."""
    if len(tensors) == 1:
        return tensors[0]
    grids = O.meshgrid(*tensors, indexing="ij") if hasattr(O, "meshgrid") else None
    if grids is None:
        from ._extras import meshgrid

        grids = meshgrid(*tensors, indexing="ij")
    return O.stack([core.reshape(g, (-1,)) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements, one row each."""
    x = _check(input, "combinations")
    if x._data.ndim != 1:
        raise _err(RuntimeError, f"Expect a 1D vector, but got shape {list(x._data.shape)}",
                   "combinations takes a 1-D tensor")
    if r < 0:
        raise _err(RuntimeError, f"Expect a non-negative number, but got {r}", "r is a count")
    n = x._data.shape[0]
    if r == 0:
        return _wrap(np.zeros((0,), dtype=x._data.dtype))
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    combos = np.asarray(list(gen(range(n), r)), dtype=np.int64).reshape(-1, r)
    if r == 0 or combos.size == 0:
        return _wrap(np.zeros((0,) if r == 0 else (0, r), dtype=x._data.dtype))
    return core.getitem(x, (combos,))


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-, 1- or 2-D) as blocks along the diagonal of one matrix."""
    mats = []
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise _err(RuntimeError, f"torch.block_diag: Input tensors must have 2 or fewer "
                       f"dimensions. Input {i} has {t._data.ndim} dimensions",
                       "flatten the extra dims first")
        mats.append(core.reshape(t, (1, -1)) if t._data.ndim < 2 else t)
    if not mats:
        return _wrap(np.zeros((1, 0), dtype=default_np()))
    from ._dtype import result_type

    rt = result_type(*mats)
    mats = [m if m._data.dtype == rt else core.cast(m, dtype=rt) for m in mats]
    cols = _sum(m._data.shape[1] for m in mats)
    rows = []
    left = 0
    for m in mats:
        c = m._data.shape[1]
        rows.append(core.pad(m, ((0, 0), (left, cols - left - c))))
        left += c
    return core.concatenate(rows, axis=0)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix ``x[:, None] ** powers`` (decreasing powers by default)."""
    t = _check(x, "vander", "x")
    if t._data.ndim != 1:
        raise _err(RuntimeError, "x must be a one-dimensional tensor.", "pass a 1-D tensor")
    n = t._data.shape[0] if N is None else int(N)
    if n < 0:
        raise _err(RuntimeError, "N must be non-negative.", "N counts the columns")
    if t._data.dtype.kind in "bui":
        t = core.cast(t, dtype=np.int64)
    if n == 0:
        return _wrap(np.zeros((t._data.shape[0], 0), dtype=t._data.dtype))
    cols = [O.ones_like(t) if hasattr(O, "ones_like") else core.add(core.multiply(t, 0), 1)]
    for _ in range(1, n):
        cols.append(O.mul(cols[-1], t))
    if not increasing:
        cols = cols[::-1]
    return O.stack(cols, 1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each sub-tensor along ``dim`` rescaled to ``p``-norm at most ``maxnorm`` (the factor
    ``maxnorm / (norm + 1e-7)`` is a constant in the gradient, as PyTorch's)."""
    x = _check(input, "renorm")
    if p <= 0:
        raise _err(RuntimeError, "renorm: non-positive-norm not supported", "p > 0")
    if maxnorm < 0:
        raise _err(RuntimeError, f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}",
                   "maxnorm >= 0")
    d = _dim(dim, x._data.ndim)
    return _RENORM(x, p=float(p), d=d, maxnorm=float(maxnorm))


def _renorm_fn(x: Tensor, *, p: float, d: int, maxnorm: float) -> Tensor:
    from ..ops.linalg_ext import vector_norm as _vnorm

    axes = tuple(i for i in range(x._data.ndim) if i != d)
    nrm = _vnorm(x, p, axes, True)
    # PyTorch's renorm_backward differentiates through the norm too
    scale = core.where(core.greater(nrm, maxnorm), core.divide(maxnorm, core.add(nrm, 1e-7)),
                       x._data.dtype.type(1))
    return core.multiply(x, scale)


_RENORM = M.composite("renorm_t", _renorm_fn, 1)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``."""
    x = _check(input, "rot90")
    dd = list(dims)
    if len(dd) != 2:
        raise _err(RuntimeError, f"expected total rotation dims == 2, but got dims = {len(dd)}",
                   "give two dims")
    nd = x._data.ndim
    if nd < 2:
        raise _err(RuntimeError, f"expected total dims >= 2, but got total dims = {nd}",
                   "rot90 needs a plane")
    a0, a1 = _dim(dd[0], nd), _dim(dd[1], nd)
    if a0 == a1:
        raise _err(RuntimeError, f"expected rotation dims to be different, but got dim0 = "
                   f"{dd[0]} and dim1 = {dd[1]}", "give two different dims")
    return _ROT90(x, k=int(k) % 4, a0=a0, a1=a1)


def _rot90_fn(x: Tensor, *, k: int, a0: int, a1: int) -> Tensor:
    if k == 1:
        return core.swapaxes(core.flip(x, (a1,)), a0, a1)
    if k == 2:
        return core.flip(x, (a0, a1))
    if k == 3:
        return core.flip(core.swapaxes(x, a0, a1), (a1,))
    return core.clone(x)


_ROT90 = M.composite("rot90_t", _rot90_fn, 1)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out: Any = None) -> Tensor:
    """``input``'s values at ``indices`` along ``dim`` (broadcast), or of the flattened tensor."""
    x = _check(input, "take_along_dim")
    idx = O._index_array(indices, "take_along_dim")
    if dim is None:
        return O.take(core.reshape(x, (-1,)), _wrap(idx.reshape(-1)))
    d = _dim(dim, x._data.ndim)
    if idx.ndim != x._data.ndim:
        raise _err(RuntimeError, "torch.take_along_dim(): input and indices should have the same "
                   f"number of dimensions, but got {x._data.ndim} dimensions for input, and "
                   f"{idx.ndim} dimensions for indices", "index with as many dims as the input")
    xs = list(x._data.shape)
    ish = list(idx.shape)
    xs_b = [s for i, s in enumerate(xs) if i != d]
    is_b = [s for i, s in enumerate(ish) if i != d]
    bshape = list(np.broadcast_shapes(tuple(xs_b), tuple(is_b)))
    xt = bshape[:d] + [xs[d]] + bshape[d:]
    it = bshape[:d] + [ish[d]] + bshape[d:]
    xe = x if xs == xt else O.expand(x, *xt)
    ie = np.broadcast_to(idx, it)
    return O.gather(xe, d, _wrap(np.ascontiguousarray(ie)))


def _split_tensor_arg(t: Tensor) -> Any:
    """``tensor_split``'s tensor argument: a 0-D long tensor is a section count, a 1-D one the
    indices (PyTorch's checks, in its order)."""
    from ._messages import _TORCH_TYPES

    if t._data.dtype != np.int64:
        name = _TORCH_TYPES.get(t._data.dtype.name, t._data.dtype.name)
        raise _err(RuntimeError, "tensor_split expected tensor_indices_or_sections to have dtype "
                   f"of long, but got {name}", "pass an int64 tensor")
    if t._data.ndim > 1:
        raise _err(RuntimeError, "tensor_split expected tensor_indices_or_sections to be a "
                   "zero-dimensional or one-dimensional tensor, but got a tensor with "
                   f"{t._data.ndim} dims", "pass a 0-D (sections) or 1-D (indices) tensor")
    return t.tolist()


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``n`` nearly equal parts, or at the given indices (views)."""
    x = _check(input, "tensor_split")
    if x._data.ndim == 0:
        raise _err(RuntimeError, "tensor_split expected at least a 1-dimensional tensor, but got "
                   "a tensor with 0 dims", "pass a 1-D or larger tensor")
    d = _dim(dim, x._data.ndim)
    n = x._data.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = _split_tensor_arg(ios)
    elif not isinstance(ios, (int, np.integer, list, tuple)) or isinstance(ios, bool):
        raise _err(TypeError, "tensor_split() received an invalid combination of arguments - "
                   f"got (Tensor, {type(ios).__name__}), but expected one of:\n"
                   " * (Tensor input, tuple of ints indices, int dim = 0)\n"
                   " * (Tensor input, Tensor tensor_indices_or_sections, int dim = 0)\n"
                   " * (Tensor input, int sections, int dim = 0)\n",
                   "pass an int, a list of ints or an integer tensor")
    if isinstance(ios, (int, np.integer)):
        k = int(ios)
        if k <= 0:
            raise _err(RuntimeError, f"number of sections must be larger than 0, got {k}",
                       "pass a positive number of sections")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = list(itertools.accumulate([0] + sizes))
    else:
        pts = [int(i) for i in ios]
        bounds = [0] + pts + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        a2 = _min(_max(a if a >= 0 else a + n, 0), n)
        b2 = _min(_max(b if b >= 0 else b + n, 0), n)
        out.append(O.narrow(x, d, a2, _max(b2 - a2, 0)))
    return tuple(out)


def _nsplit(name: str, x: Tensor, ios: Any, d: int, need: int) -> tuple[Tensor, ...]:
    t = _check(x, name)
    if t._data.ndim < need:
        raise _err(RuntimeError, f"torch.{name} requires a tensor with at least {need} dimension, "
                   f"but got a tensor with {t._data.ndim} dimensions!",
                   f"{name} splits dim {d}")
    if isinstance(ios, (int, np.integer)) and t._data.shape[d] % int(ios):
        raise _err(RuntimeError, f"torch.{name} attempted to split along dimension {d}, but the "
                   f"size of the dimension {t._data.shape[d]} is not divisible by the split_size "
                   f"{int(ios)}!", "use torch.tensor_split for unequal parts")
    return tensor_split(t, ios, d)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 1 (dim 0 for 1-D tensors)."""
    d = 0 if input._data.ndim == 1 else 1
    return _nsplit("hsplit", input, indices_or_sections, d, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 0 (at least 2-D)."""
    return _nsplit("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 2 (at least 3-D)."""
    return _nsplit("dsplit", input, indices_or_sections, 2, 3)


def _atleast(t: Tensor, n: int) -> Tensor:
    s = t._data.shape
    if len(s) >= n:
        return t
    if n == 2:
        return core.reshape(t, (1,) + s if len(s) == 1 else (1, 1))
    if len(s) == 0:
        return core.reshape(t, (1, 1, 1))
    if len(s) == 1:
        return core.reshape(t, (1, s[0], 1))
    return core.reshape(t, s + (1,))


def dstack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Join along dim 2 (each made at least 3-D)."""
    return O.cat([_atleast(t, 3) for t in tensors], 2)


def column_stack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Join as columns (0-/1-D tensors become columns)."""
    cols = [core.reshape(t, (-1, 1)) if t._data.ndim < 2 else t for t in tensors]
    return O.cat(cols, 1)


def row_stack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """:func:`torch.vstack`'s alias."""
    return O.cat([_atleast(t, 2) for t in tensors], 0)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    r = tuple(core.reshape(t, (1,)) if t._data.ndim == 0 else t for t in ts)
    return r[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else r


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    r = tuple(_atleast(t, 2) for t in ts)
    return r[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else r


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    r = tuple(_atleast(t, 3) for t in ts)
    return r[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else r


# ----------------------------------------------------------------------------- old linalg API
def cholesky(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The older ``torch.cholesky`` (``torch.linalg.cholesky`` with ``upper=``)."""
    import warnings

    from .linalg import cholesky as _chol

    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be "
                  "replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, "
                  "upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
                  "This transform will produce equivalent results for all valid (symmetric "
                  "positive definite) inputs.", UserWarning, stacklevel=2)
    return _chol(input, upper=upper)


def _lu_np(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LU with partial pivoting (LAPACK's getrf): packed LU, 1-based pivots, info."""
    lu: Any = np.array(a, dtype=a.dtype, copy=True)
    m, n = int(lu.shape[-2]), int(lu.shape[-1])
    k = _min(m, n)
    batch = lu.reshape((-1, m, n))
    piv = np.zeros((batch.shape[0], k), dtype=np.int32)
    info = np.zeros(batch.shape[0], dtype=np.int32)
    for b in range(batch.shape[0]):
        A = batch[b]
        for j in range(k):
            p = j + int(np.argmax(np.abs(A[j:, j])))
            piv[b, j] = p + 1
            if A[p, j] == 0:
                if info[b] == 0:
                    info[b] = j + 1
                continue
            if p != j:
                A[[j, p]] = A[[p, j]]
            A[j + 1:, j] /= A[j, j]
            A[j + 1:, j + 1:] -= np.outer(A[j + 1:, j], A[j, j + 1:])
    return (batch.reshape(lu.shape), piv.reshape(a.shape[:-2] + (k,)),
            info.reshape(a.shape[:-2]))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """The older ``torch.lu``: ``(A_LU, pivots[, infos])``, LAPACK's packed form (pivots
    1-based int32).  Not differentiable here."""
    x = _check(A, "lu", "A")
    if not pivot:
        raise _err(RuntimeError, "linalg.lu_factor: LU without pivoting is not implemented on "
                   "the CPU", "use pivot=True")
    if x._data.ndim < 2:
        raise _err(RuntimeError, "linalg.lu_factor: The input tensor A must have at least 2 "
                   "dimensions.", "pass a matrix or a batch of matrices")
    if x.requires_grad:
        if is_grad_enabled():
            raise _err(NotImplementedError, "tapegrad's torch.lu is not differentiable",
                       "use torch.linalg.solve / det / inv, which are")
    _no_trace("lu", x)
    packed, piv, info = _lu_np(x._data)
    if get_infos:
        return _LU_WITH_INFO(_wrap(packed), _wrap(piv), _wrap(info))
    return (_wrap(packed), _wrap(piv))


# ----------------------------------------------------------------------------- random sampling
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None, out: Any = None) -> Tensor:
    """Indices drawn from the categorical distributions in ``input``'s rows (unnormalized
    non-negative weights), with or without replacement, from the torch Generator stream."""
    from ._random import gen

    x = _check(input, "multinomial")
    _no_trace("multinomial", x)
    p = x._data
    if p.ndim not in (1, 2):
        raise _err(RuntimeError, "prob_dist must be 1 or 2 dim", f"got {p.ndim} dims")
    if p.dtype.kind != "f":
        raise _err(RuntimeError, "multinomial only supports floating-point dtypes for input, got: "
                   f"{O._scalar_type_name(p.dtype)}", "convert with .float() first")
    n_cat = p.shape[-1]
    if num_samples <= 0:
        raise _err(RuntimeError, "cannot sample n_sample <= 0 samples", "ask for 1 or more")
    if not replacement and num_samples > n_cat:
        raise _err(RuntimeError, "cannot sample n_sample > prob_dist.size(-1) samples without "
                   "replacement", f"{n_cat} categories; pass replacement=True")
    if n_cat > 2 ** 24:
        raise _err(RuntimeError, "number of categories cannot exceed 2^24",
                   "sample in groups")
    rows = p.reshape(-1, n_cat)
    if np.any(~np.isfinite(rows)) or np.any(rows < 0):
        raise _err(RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0",
                   "weights must be finite and non-negative")
    sums = rows.sum(axis=1)
    if np.any(sums <= 0):
        raise _err(RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)",
                   "every row needs a positive weight")
    g = gen(generator)
    out_idx = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    if not replacement or num_samples == 1:
        # PyTorch's fast path: argmax / top-k of p / q with q ~ Exp(1) (the Gumbel trick)
        u = g.uniform(rows.size, np.dtype(np.float64)).reshape(rows.shape)
        q = -np.log1p(-u)
        with np.errstate(divide="ignore"):
            keys = rows.astype(np.float64) / q
        order = np.argsort(-keys, axis=1, kind="stable")
        out_idx[...] = order[:, :num_samples]
    else:
        # the CPU kernel's: the normalized cumulative distribution, a binary search per draw
        for r in range(rows.shape[0]):
            cum = np.cumsum(rows[r], dtype=rows.dtype)
            cum = cum / cum[-1]
            u = g.uniform(num_samples, np.dtype(np.float64))
            idx = np.searchsorted(cum.astype(np.float64), u, side="left")
            out_idx[r] = np.minimum(idx, n_cat - 1)
    return _wrap(out_idx.reshape(p.shape[:-1] + (num_samples,)))


__all__ = [n for n, v in list(globals().items())
           if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__
           and n not in ("defop",)] + [
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "arctan2"]
__all__ = sorted(set(__all__))


# ----------------------------------------------------------------------------- Tensor methods
def _m(fn: Any, name: str) -> Any:
    def m(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    m.__name__ = m.__qualname__ = name
    m.__doc__ = fn.__doc__
    return m


def _polygamma_m(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


def _float_power_checked(self: Tensor, exponent: Any) -> Tensor:
    dt = np.complex128 if self._data.dtype.kind == "c" or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent._data.dtype.kind == "c") else np.float64
    if self._data.dtype != dt:
        raise _err(RuntimeError, f"the base given to float_power_ has dtype "
                   f"{O._scalar_type_name(self._data.dtype)} but the operation's result requires "
                   f"dtype {O._scalar_type_name(np.dtype(dt))}", "call .double() first")
    return float_power(self, exponent)


_METHOD_FNS: dict[str, Any] = {
    "atan": atan, "arctan": atan, "asin": asin, "arcsin": asin, "acos": acos, "arccos": acos,
    "asinh": asinh, "arcsinh": asinh, "acosh": acosh, "arccosh": acosh, "atanh": atanh,
    "arctanh": atanh, "atan2": atan2, "arctan2": atan2, "hypot": hypot, "logaddexp": logaddexp,
    "logaddexp2": logaddexp2, "xlogy": xlogy, "copysign": copysign, "float_power": float_power,
    "deg2rad": deg2rad, "rad2deg": rad2deg, "signbit": signbit, "heaviside": heaviside,
    "gcd": gcd, "lcm": lcm, "logit": logit, "nan_to_num": nan_to_num, "frac": frac,
    "sinc": sinc, "i0": i0, "erfinv": erfinv, "erfc": erfc, "lgamma": lgamma,
    "digamma": digamma, "mvlgamma": mvlgamma, "nansum": nansum, "nanmean": nanmean,
    "median": median, "nanmedian": nanmedian, "kthvalue": kthvalue, "mode": mode,
    "cummax": cummax, "cummin": cummin, "logcumsumexp": logcumsumexp, "quantile": quantile,
    "nanquantile": nanquantile, "aminmax": aminmax, "addmm": addmm, "addmv": addmv,
    "addr": addr, "addbmm": addbmm, "baddbmm": baddbmm, "addcmul": addcmul, "addcdiv": addcdiv,
    "diff": diff, "cov": cov, "corrcoef": corrcoef, "bincount": bincount, "histc": histc,
    "argwhere": argwhere, "masked_select": masked_select,
    "unique_consecutive": unique_consecutive, "renorm": renorm, "rot90": rot90,
    "take_along_dim": take_along_dim, "tensor_split": tensor_split, "hsplit": hsplit,
    "vsplit": vsplit, "dsplit": dsplit, "kron": kron, "lu": lu, "multinomial": multinomial,
}

# in-place forms PyTorch has
_INPLACE = ("atan", "arctan", "asin", "arcsin", "acos", "arccos", "asinh", "arcsinh", "acosh",
            "arccosh", "atanh", "arctanh", "atan2", "arctan2", "hypot", "xlogy", "copysign",
            "deg2rad", "rad2deg", "heaviside", "gcd", "lcm", "logit", "nan_to_num", "frac",
            "sinc", "i0", "erfinv", "erfc", "lgamma", "digamma", "mvlgamma", "addmm", "addmv",
            "addr", "addbmm", "baddbmm", "addcmul", "addcdiv", "renorm")


def install() -> None:
    """The methods above on the PyTorch-style tensor class (``x.atan()``, ``x.median(dim)``,
    ``x.addmm_(...)``, ...)."""
    from ._methods import _ip
    from ._tensor import TorchTensor as cls

    if cls.__dict__.get("_torch_more", False):
        return
    from .._core.registry import name_nodes

    name_nodes(GRAD_NAMES)
    for name, fn in _METHOD_FNS.items():
        setattr(cls, name, _m(fn, name))
    cls.polygamma = _polygamma_m  # type: ignore[attr-defined]
    for name in _INPLACE:
        setattr(cls, name + "_", _ip(name + "_", _METHOD_FNS[name]))
    cls.polygamma_ = _ip("polygamma_", _polygamma_m)  # type: ignore[attr-defined]
    cls.float_power_ = _ip("float_power_", _float_power_checked)  # type: ignore[attr-defined]
    cls._torch_more = True  # type: ignore[attr-defined]


def method_names() -> list[str]:
    """The method names :func:`install` adds (for the NumPy-style keyword aliases)."""
    return [*_METHOD_FNS, "polygamma", *(n + "_" for n in _INPLACE), "polygamma_",
            "float_power_"]


# PyTorch's node names for the ops of this module (installed with the methods)
GRAD_NAMES: dict[str, str] = {
    "addmm_t": "AddmmBackward0", "addmv_t": "AddmvBackward0", "addr_t": "AddrBackward0",
    "baddbmm_t": "BaddbmmBackward0", "addbmm_t": "AddbmmBackward0",
    "addcmul_t": "AddcmulBackward0", "addcdiv_t": "AddcdivBackward0",
    "fft_c2c": "FftC2CBackward0", "fft_r2c": "FftR2CBackward0",
    "fft_c2r": "FftC2RBackward0", "fft_r2c_full": "FftR2CBackward0", "erfc": "ErfcBackward0",
    "i0e": "SpecialI0EBackward0", "i1": "SpecialI1Backward0", "i1e": "SpecialI1EBackward0",
    "ndtri_t": "SpecialNdtriBackward0", "log_ndtr": "SpecialLogNdtrBackward0",
    "entr": "SpecialEntrBackward0", "xlog1py": "SpecialXlog1PyBackward0",
    "cdist_t": "CdistBackward0", "logcumsumexp_t": "LogcumsumexpBackward0",
    "renorm_t": "RenormBackward0", "mvlgamma_t": "MvlgammaBackward0",
"nansum_t": "NansumBackward0",
    "atan_r": "AtanBackward0", "asin_r": "AsinBackward0", "acos_r": "AcosBackward0",
    "atan2_r": "Atan2Backward0", "erfcx": "SpecialErfcxBackward0",
    "rot90_t": "Rot90Backward0", "digamma_t": "DigammaBackward0",
    "polygamma_t": "PolygammaBackward0", "median_all_t": "MedianBackward0", "nanmedian_all_t": "NanmedianBackward0",
}
