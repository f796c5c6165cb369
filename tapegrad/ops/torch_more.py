"""Elementwise special functions and discrete Fourier transforms that PyTorch programs use.

(Keys ending in ``_t`` are the PyTorch style's own variants of ops other modules have.)

Each op: forward on ndarrays (in the input's float dtype), VJP and JVP in tapegrad ops
beside it (so every derivative is differentiable again), and a batching rule.  The
derivatives are PyTorch's (``tools/autograd/derivatives.yaml``): ``hypot``'s
``g * x / out``, ``logaddexp``'s ``g / (1 + exp(y - x))``, ``xlogy``'s ``g * log(y)`` with
``0`` where ``x == 0`` (and ``y`` not NaN), ``sinc``'s ``(cos(pi x) - sinc(x)) / x`` (0 at
0), the Bessel functions' ``i0' = i1``, ``i1' = i0 - i1 / x``, and the FFTs' adjoints
(``fft_c2c`` with the dual normalization, ``fft_r2c`` through a zero-padded inverse,
``fft_c2r`` through ``r2c`` with the non-edge bins doubled).  No SciPy: the Bessel
functions are their power series and asymptotic expansions in float64, ``erfc`` the C
library's, ``ndtri`` Newton steps on ``erfc``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._batch import diag_jvp
from ._batch import elementwise as _bw
from .complex import conj
from .elementwise import (
    add,
    cos,
    divide,
    equal,
    exp,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    multiply,
    negative,
    sigmoid,
    sqrt,
    square,
    subtract,
    where,
)
from .fused import erfc_op as erfc  # the one erfc op of both styles


def _float(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a if a.dtype.kind in "fc" else a.astype(np.float32)


def _like(out: Any, x: Any) -> np.ndarray:
    a = np.asarray(x)
    dt = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float32)
    return np.asarray(out, dtype=dt)


def _res_dtype(*xs: Any) -> np.dtype:
    return np.result_type(*[np.asarray(x).dtype for x in xs])


# ------------------------------------------------------------------ binary elementwise
@defop("hypot", saves=("x", "y", "out"), needs=True)
def hypot(x: Any, y: Any) -> Any:
    return np.hypot(x, y)


@hypot.defvjp
def _(g: Tensor, x: Any, y: Any, out: Tensor, needs: tuple[bool, ...]) -> Any:
    # d hypot = (x dx + y dy) / hypot
    gx = multiply(g, divide(x, out)) if needs[0] else None
    gy = multiply(g, divide(y, out)) if needs[1] else None
    return gx, gy


@defop("logaddexp", saves=("x", "y"), needs=True)
def logaddexp(x: Any, y: Any) -> Any:
    return np.logaddexp(x, y)


@logaddexp.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    # d logaddexp = sigmoid(x - y) dx + sigmoid(y - x) dy (PyTorch: g / (1 + exp(y - x)))
    gx = multiply(g, sigmoid(subtract(x, y))) if needs[0] else None
    gy = multiply(g, sigmoid(subtract(y, x))) if needs[1] else None
    return gx, gy


@defop("logaddexp2", saves=("x", "y"), needs=True)
def logaddexp2(x: Any, y: Any) -> Any:
    return np.logaddexp2(x, y)


@logaddexp2.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    # d logaddexp2 = dx / (1 + 2^(y - x)) + dy / (1 + 2^(x - y))
    ln2 = math.log(2.0)
    gx = multiply(g, sigmoid(multiply(subtract(x, y), ln2))) if needs[0] else None
    gy = multiply(g, sigmoid(multiply(subtract(y, x), ln2))) if needs[1] else None
    return gx, gy


def _xlog_op(name: str, np_log: Any, t_log: Any, shift: float) -> Any:
    """``x * log(y + shift)``, 0 where ``x == 0`` (NaN ``y`` stays NaN): ``xlogy`` (shift 0)
    and ``xlog1py`` (shift 1), one factory.  The gradient is PyTorch's: ``xlog...(g, y)`` in
    ``x`` (0 where ``x == 0`` and ``y + shift <= 0``) and ``g * x / (y + shift)`` in ``y``."""

    @defop(name, saves=("x", "y"), needs=True)
    def op(x: Any, y: Any) -> Any:
        xa, ya = np.asarray(x), np.asarray(y)
        with np.errstate(all="ignore"):
            out = np.where((xa == 0) & ~np.isnan(ya), 0.0, xa * np_log(ya))
        return out.astype(_res_dtype(xa, ya), copy=False)

    @op.defvjp
    def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
        from .elementwise import less_equal

        gx = gy = None
        if needs[0]:
            drop = logical_or(logical_and(equal(x, 0), less_equal(y, -shift)), equal(g, 0))
            gx = where(drop, 0.0, multiply(g, t_log(where(drop, 1.0 - shift, y))))
        if needs[1]:
            gy = multiply(g, divide(x, add(y, shift) if shift else y))
        return gx, gy

    return op


xlogy = _xlog_op("xlogy", np.log, log, 0.0)
xlog1py = _xlog_op("xlog1py", np.log1p, log1p, 1.0)


@defop("copysign", saves=("x", "out"), needs=True)
def copysign(x: Any, y: Any) -> Any:
    return np.copysign(x, y)


@copysign.defvjp
def _(g: Tensor, x: Any, out: Tensor, needs: tuple[bool, ...]) -> Any:
    # PyTorch: d copysign(x, y) / dx = out / x (0 where x == 0), nothing to y
    gx = None
    if needs[0]:
        zero = equal(x, 0)
        gx = multiply(g, where(zero, 0.0, divide(out, where(zero, 1.0, x))))
    return gx, (multiply(g, 0.0) if needs[1] else None)


# ------------------------------------------------------------------ unary elementwise
@defop("frac", saves=())
def frac(x: Any) -> Any:
    a = np.asarray(x)
    return a - np.trunc(a)


@frac.defvjp
def _(g: Tensor) -> Any:  # d frac x = dx
    return (g,)


@defop("sinc", saves=("x", "out"))
def sinc(x: Any) -> Any:
    a = _float(x)
    return np.sinc(a).astype(a.dtype, copy=False)


@sinc.defvjp
def _(g: Tensor, x: Tensor, out: Tensor) -> Any:
    # d sinc x = (cos(pi x) - sinc x) / x, 0 at x = 0
    zero = equal(x, 0)
    safe = where(zero, 1.0, x)
    d = divide(subtract(cos(multiply(x, math.pi)), out), safe)
    return (multiply(g, where(zero, 0.0, d)),)


@defop("nan_to_num", saves=("x",))
def nan_to_num(x: Any, *, nan: float, posinf: float, neginf: float) -> Any:
    a = np.asarray(x)
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf).astype(a.dtype, copy=False)


@nan_to_num.defvjp
def _(g: Tensor, x: Tensor, nan: float, posinf: float, neginf: float) -> Any:
    from .elementwise import isfinite  # PyTorch: grad * isfinite(x)

    return (where(isfinite(x), g, 0.0),)


@defop("logit", saves=("x",))
def logit(x: Any, *, eps: float | None) -> Any:
    a = _float(x)
    if eps is not None:
        a = np.clip(a, eps, 1.0 - eps).astype(a.dtype, copy=False)
    with np.errstate(all="ignore"):
        return np.log(a / (1 - a)).astype(a.dtype, copy=False)


@logit.defvjp
def _(g: Tensor, x: Tensor, eps: float | None) -> Any:
    # d logit x = dx / (x (1 - x)); with eps, 0 outside [eps, 1 - eps] (PyTorch's logit_backward)
    from .elementwise import greater, less

    d = divide(g, multiply(x, subtract(1.0, x)))
    if eps is None:
        return (d,)
    outside = logical_and(logical_not(less(x, eps)), logical_not(greater(x, 1.0 - eps)))
    return (where(outside, d, 0.0),)


_erfc_u = np.frompyfunc(math.erfc, 1, 1)


def _erfc_np(a: np.ndarray) -> np.ndarray:
    return np.asarray(_erfc_u(a.astype(np.float64)), dtype=np.float64)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# ---- Bessel functions of the first kind, modified, orders 0 and 1 (float64 internally)
def _bessel_i(order: int, v: np.ndarray, scaled: bool) -> np.ndarray:
    """``I_order(v)`` (times ``exp(-|v|)`` when ``scaled``): the power series for ``|v| <= 30``,
    the asymptotic expansion above."""
    ax = np.abs(v)
    small = ax <= 30.0
    xs = np.where(small, ax, 0.0)
    q = xs * xs / 4.0
    term = np.ones_like(xs) if order == 0 else xs / 2.0
    acc = term.copy()
    for k in range(1, 120):
        term = term * q / (k * (k + order))
        acc = acc + term
    with np.errstate(all="ignore"):
        series = acc * np.exp(-xs) if scaled else acc
        xl = np.where(small, 31.0, ax)
        mu = 4.0 * order * order
        t = np.ones_like(xl)
        s = np.ones_like(xl)
        for k in range(1, 30):
            t = -t * (mu - (2 * k - 1) ** 2) / (k * 8.0 * xl)
            s = s + t
        asym = s / np.sqrt(2.0 * np.pi * xl)
        if not scaled:
            asym = asym * np.exp(xl)
        res = np.where(small, series, asym)
    if order == 1:
        res = np.where(v < 0, -res, res)
    return np.where(np.isnan(v), np.nan, res)


@defop("i0", saves=("x",))
def i0(x: Any) -> Any:
    a = _float(x)
    return _like(_bessel_i(0, a.astype(np.float64), False), a)


@defop("i0e", saves=("x", "out"))
def i0e(x: Any) -> Any:
    a = _float(x)
    return _like(_bessel_i(0, a.astype(np.float64), True), a)


@defop("i1", saves=("x", "out"))
def i1(x: Any) -> Any:
    a = _float(x)
    return _like(_bessel_i(1, a.astype(np.float64), False), a)


@defop("i1e", saves=("x", "out"))
def i1e(x: Any) -> Any:
    a = _float(x)
    return _like(_bessel_i(1, a.astype(np.float64), True), a)


@i0.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d I0 = I1 dx
    return (multiply(g, i1(x)),)


@i0e.defvjp
def _(g: Tensor, x: Tensor, out: Tensor) -> Any:  # d i0e = (i1e - sign(x) i0e) dx
    from .elementwise import sign

    return (multiply(g, subtract(i1e(x), multiply(sign(x), out))),)


def _i1_ratio(x: Tensor, out: Tensor) -> Any:
    """``out / x`` with its limit ``1/2`` at ``x = 0`` (``I1(x) / x`` and ``i1e(x) / x``)."""
    zero = equal(x, 0)
    return where(zero, 0.5, divide(out, where(zero, 1.0, x)))


@i1.defvjp
def _(g: Tensor, x: Tensor, out: Tensor) -> Any:  # d I1 = (I0 - I1 / x) dx
    return (multiply(g, subtract(i0(x), _i1_ratio(x, out))),)


@i1e.defvjp
def _(g: Tensor, x: Tensor, out: Tensor) -> Any:  # d i1e = (i0e - i1e (sign(x) + 1/x)) dx
    from .elementwise import sign

    return (multiply(g, subtract(subtract(i0e(x), multiply(sign(x), out)),
                                 _i1_ratio(x, out))),)


# ---- the normal distribution
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@defop("ndtr", saves=("x",))
def ndtr(x: Any) -> Any:
    a = _float(x)
    return _like(0.5 * _erfc_np(-a.astype(np.float64) * _SQRT1_2), a)


@ndtr.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d ndtr = exp(-x^2/2) / sqrt(2 pi) dx
    return (multiply(g, exp(subtract(multiply(square(x), -0.5), _LOG_SQRT_2PI))),)


def _log_ndtr_np(v: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        direct = np.log(0.5 * _erfc_np(-v * _SQRT1_2))
        # far left tail: log(phi(x) / -x * (1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8))
        z = np.where(v < -20.0, v, -20.0)
        r = 1.0 / (z * z)
        ser = 1.0 - r * (1.0 - r * (3.0 - r * (15.0 - r * 105.0)))
        tail = -0.5 * z * z - _LOG_SQRT_2PI - np.log(-z) + np.log(ser)
        # right side: log1p(-ndtr(-x)) keeps the small negative values
        right = np.log1p(-0.5 * _erfc_np(v * _SQRT1_2))
    return np.where(v < -20.0, tail, np.where(v > 0, right, direct))


@defop("log_ndtr", saves=("x", "out"))
def log_ndtr(x: Any) -> Any:
    a = _float(x)
    return _like(_log_ndtr_np(a.astype(np.float64)), a)


@log_ndtr.defvjp
def _(g: Tensor, x: Tensor, out: Tensor) -> Any:
    # d log ndtr = phi(x) / ndtr(x) dx = exp(-x^2/2 - log sqrt(2 pi) - log_ndtr(x)) dx
    return (multiply(g, exp(subtract(subtract(multiply(square(x), -0.5), _LOG_SQRT_2PI),
                                     out))),)


def _ndtri_np(p: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        q = np.where((p > 0) & (p < 1), p, 0.5)
        # the start: sqrt(2) erfinv(2p - 1) in the middle, the tail asymptote outside;
        # then Newton steps on erfc (the residual relative to the smaller tail)
        from .special import _erfinv_np

        lo = np.minimum(q, 1.0 - q)
        t = np.sqrt(-2.0 * np.log(lo))
        x0 = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (
            1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3)
        mid = lo > 0.02
        x = np.where(mid, math.sqrt(2.0) * _erfinv_np(np.where(mid, 2.0 * q - 1.0, 0.0)),
                     np.where(q < 0.5, -x0, x0))
        for _ in range(6):
            # on the side of the smaller tail probability, so the residual stays relative
            left = x < 0
            cdf = np.where(left, 0.5 * _erfc_np(-x * _SQRT1_2), 0.5 * _erfc_np(x * _SQRT1_2))
            target = np.where(left, q, 1.0 - q)
            pdf = np.exp(-0.5 * x * x - _LOG_SQRT_2PI)
            step = (cdf - target) / pdf
            x = np.where(left, x - step, x + step)
        x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
        x = np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)
    return x


@defop("ndtri_t", saves=("out",))
def ndtri(x: Any) -> Any:
    a = _float(x)
    return _like(_ndtri_np(a.astype(np.float64)), a)


@ndtri.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d ndtri p = sqrt(2 pi) exp(ndtri(p)^2 / 2) dp
    return (multiply(g, exp(add(multiply(square(out), 0.5), _LOG_SQRT_2PI))),)


@defop("entr", saves=("x",))
def entr(x: Any) -> Any:
    a = _float(x)
    with np.errstate(all="ignore"):
        out = np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)),
                       np.where(a == 0, 0.0, -np.inf))
    return np.where(np.isnan(a), np.nan, out).astype(a.dtype, copy=False)


@entr.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d entr x = -(1 + log x) dx
    return (multiply(g, negative(add(log(x), 1.0))),)


# Hurwitz zeta (Cephes' zeta.c: Euler-Maclaurin summation)
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta1(x: float, q: float) -> float:
    if math.isnan(x) or math.isnan(q):
        return math.nan
    if x == 1.0:
        return math.inf
    if x < 1.0:
        return math.nan
    if math.isinf(q):  # Cephes' loop gives 0 * inf there; a pole at -inf
        return math.nan if q > 0 else math.inf
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    if q > 1e8:  # the asymptotic expansion (DLMF 25.11.43), as PyTorch's zeta has it
        return (1.0 / (x - 1.0) + 1.0 / (2.0 * q)) * q ** (1.0 - x)
    s = q ** -x
    if s == 0.0:
        return 0.0
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < 1.1102230246251565e-16:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    aa = 1.0
    k = 0.0
    for j in range(12):
        aa *= x + k
        b /= w
        t = aa * b / _ZETA_A[j]
        s += t
        if abs(t / s) < 1.1102230246251565e-16:
            return s
        k += 1.0
        aa *= x + k
        b /= w
        k += 1.0
    return s


_zeta_u = np.frompyfunc(_zeta1, 2, 1)


def zeta_np(x: Any, q: Any) -> np.ndarray:
    """The Hurwitz zeta function (not differentiated: PyTorch has no derivative in ``x``)."""
    xa, qa = np.asarray(x), np.asarray(q)
    dt = np.result_type(xa.dtype, qa.dtype)
    if dt.kind not in "fc":
        dt = np.dtype(np.float32)
    return np.asarray(_zeta_u(xa.astype(np.float64), qa.astype(np.float64)), dtype=dt)


# ------------------------------------------------------------------ forward mode, batching
for _op in (hypot, logaddexp, logaddexp2, xlogy, xlog1py, copysign, frac, sinc, nan_to_num,
            logit, i0, i0e, i1, i1e, ndtr, log_ndtr, ndtri, entr):
    _op.defjvp(diag_jvp(_op))
    _op.defbatch(_bw(_op))
del _op


# the discrete Fourier transforms are tapegrad.ops.fft's (one family for both styles)
from .fft import fft_c2c, fft_c2r, fft_r2c, fft_r2c_full  # noqa: E402

__all__ = ["hypot", "logaddexp", "logaddexp2", "xlogy", "xlog1py", "copysign", "frac", "sinc",
           "nan_to_num", "logit", "erfc", "i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr", "ndtri",
           "entr", "zeta_np", "fft_c2c", "fft_r2c", "fft_c2r", "fft_r2c_full", "conj", "sqrt"]


# ------------------------------------------------------------------ composites as one node
def composite(name: str, fn: Any, arity: int) -> Any:
    """An op record for ``fn``, a function of ``arity`` tensors written in tapegrad ops (and
    static keyword attributes): one node (so a front-end can name it, ``AddmmBackward0``),
    whose VJP and JVP are ``fn``'s own (``tapegrad.func.vjp`` / ``jvp`` of it, so they are
    differentiable again) and whose batching rule is the per-example loop.

    The forward runs ``fn`` on the arrays with no transform active and grad mode off.
    """
    from .._core.mode import STATE
    from .._core.tensor import TORCH, make

    def run(*arrays: Any, **attrs: Any) -> Any:
        s = STATE
        levels, grad = s.levels, s.grad_enabled
        s.levels, s.grad_enabled = [], False
        try:
            ts = [make(np.asarray(a), None, False, TORCH) for a in arrays]
            return fn(*ts, **attrs)._data
        finally:
            s.levels, s.grad_enabled = levels, grad

    if arity == 1:
        def fwd1(x: Any, **attrs: Any) -> Any:
            return run(x, **attrs)
        op = defop(name, saves=("x",))(fwd1)
    elif arity == 2:
        def fwd2(x: Any, y: Any, **attrs: Any) -> Any:
            return run(x, y, **attrs)
        op = defop(name, saves=("x", "y"))(fwd2)
    elif arity == 3:
        def fwd3(x: Any, y: Any, z: Any, **attrs: Any) -> Any:
            return run(x, y, z, **attrs)
        op = defop(name, saves=("x", "y", "z"))(fwd3)
    else:  # pragma: no cover - programming error
        raise ValueError(f"composite {name!r}: arity {arity} not supported")

    @op.defvjp
    def _(g: Tensor, *xs: Any, **attrs: Any) -> Any:
        from ..autodiff.functional import vjp

        _, pull = vjp(lambda *a: fn(*a, **attrs), *xs)
        return tuple(pull(g))

    @op.defjvp
    def _(*txs: Any, out: Any, **attrs: Any) -> Any:
        from ..autodiff.functional import jvp
        from .elementwise import multiply as _mul

        ts, xs = txs[:arity], txs[arity:]
        ts = tuple(_mul(x, 0.0) if t is None else t for t, x in zip(ts, xs))
        return jvp(lambda *a: fn(*a, **attrs), tuple(xs), ts)[1]

    return op


# ------------------------------------------------------------------ correctly rounded variants
def _rounded(name: str, npfn: Any, base: Any) -> Any:
    """``base`` (an op of :mod:`tapegrad.ops.special`) with its value computed in float64 and
    rounded once to the input's dtype (PyTorch's float32 kernels are within an ulp of that;
    NumPy's float32 loops are further), the same VJP and JVP."""

    def fwd(*xs: Any) -> Any:
        arrs = [np.asarray(x) for x in xs]
        dt = np.result_type(*[a.dtype for a in arrs])
        if dt.kind not in "fc":
            dt = np.dtype(np.float32)
        with np.errstate(all="ignore"):
            return npfn(*[a.astype(np.float64) if a.dtype == np.float32 else a
                          for a in arrs]).astype(dt, copy=False)

    if len(base.save_codes) and base.needs:
        def f2(y: Any, x: Any) -> Any:
            return fwd(y, x)
        op = defop(name, saves=base.saves, needs=True)(f2)
    else:
        def f1(x: Any) -> Any:
            return fwd(x)
        op = defop(name, saves=base.saves)(f1)
    op.vjp = base.vjp
    op.defjvp(base.jvp)
    op.defbatch(_bw(op))
    return op


def _make_rounded() -> dict[str, Any]:
    from . import special as _sp

    return {
        "atan": _rounded("atan_r", np.arctan, _sp.atan),
        "asin": _rounded("asin_r", np.arcsin, _sp.asin),
        "acos": _rounded("acos_r", np.arccos, _sp.acos),
        "atan2": _rounded("atan2_r", np.arctan2, _sp.atan2),
    }


ROUNDED = _make_rounded()


@defop("erfcx", saves=("x", "out"))
def erfcx(x: Any) -> Any:
    a = _float(x)
    v = a.astype(np.float64)
    with np.errstate(all="ignore"):
        near = np.exp(np.where(v < 26.0, v * v, 0.0)) * _erfc_np(np.where(v < 26.0, v, 0.0))
        xb = np.where(v < 26.0, 26.0, v)
        r = 1.0 / (xb * xb)
        far = (1.0 - r * (0.5 - r * (0.75 - r * (1.875 - r * 6.5625)))) / (xb * math.sqrt(math.pi))
    return _like(np.where(v < 26.0, near, far), a)


@erfcx.defvjp
def _(g: Tensor, x: Tensor, out: Tensor) -> Any:  # d erfcx = (2 x erfcx(x) - 2/sqrt(pi)) dx
    return (multiply(g, subtract(multiply(multiply(x, out), 2.0), _TWO_OVER_SQRT_PI)),)


erfcx.defjvp(diag_jvp(erfcx))
erfcx.defbatch(_bw(erfcx))


# ------------------------------------------------------------------ PyTorch's digamma family
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)


def _log_rounded(v: np.ndarray) -> np.ndarray:
    """``log`` correctly rounded to ``v``'s dtype (glibc's ``logf``/``log`` nearly always are)."""
    with np.errstate(all="ignore"):
        return np.log(v.astype(np.float64)).astype(v.dtype)


def torch_digamma_np(x: Any) -> np.ndarray:
    """PyTorch's ``calc_digamma`` (ATen's Math.h), step for step in the input's dtype: the
    reflection for ``x < 0``, the recurrence up to 10, ``psi(10)`` exactly, Cephes' series."""
    a = _float(x)
    if a.dtype not in (np.float32, np.float64):
        return _like(torch_digamma_np(a.astype(np.float32)), a)
    dt = a.dtype.type
    one, zero = dt(1), dt(0)
    with np.errstate(all="ignore"):
        neg = a < zero
        integer = a == np.trunc(a)
        r = np.modf(a.astype(np.float64))[0]
        refl = (np.pi / np.tan(np.pi * r)).astype(dt)       # computed in double, as there
        v = np.where(neg, one - a, a).astype(dt)
        res = np.zeros_like(v)
        while True:
            m = v < dt(10)
            if not m.any():
                break
            res = np.where(m, res - one / np.where(m, v, one), res).astype(dt)
            v = np.where(m, v + one, v).astype(dt)
        z = (one / (v * v)).astype(dt)
        poly = np.full_like(v, dt(_PSI_A[0]))
        for c in _PSI_A[1:]:
            poly = (poly * z + dt(c)).astype(dt)
        y = np.where(v < dt(1e17), z * poly, zero).astype(dt)
        out = (res + _log_rounded(v) - (dt(0.5) / v) - y).astype(dt)
        out = np.where(v == dt(10), (res + dt(2.25175258906672110764)).astype(dt), out)
        out = np.where(neg, (out - refl).astype(dt), out)
        out = np.where(neg & integer, dt(np.nan), out)
        out = np.where(a == zero, np.copysign(dt(np.inf), -a), out)
        out = np.where(np.isnan(a), dt(np.nan), out)
    return np.asarray(out, dtype=dt)


def torch_trigamma_np(x: Any) -> np.ndarray:
    """PyTorch's ``calc_trigamma``, step for step in the input's dtype."""
    a = _float(x)
    if a.dtype not in (np.float32, np.float64):
        return _like(torch_trigamma_np(a.astype(np.float32)), a)
    dt = a.dtype.type
    one = dt(1)
    pi = dt(np.pi)
    with np.errstate(all="ignore"):
        small = a < dt(0.5)
        s = np.sin((pi * a).astype(dt)).astype(dt) if dt is np.float32 else np.sin(pi * a)
        res = np.where(small, -(pi * pi) / (s * s), dt(0)).astype(dt)
        v = np.where(small, one - a, a).astype(dt)
        for _ in range(6):
            res = (res + one / (v * v)).astype(dt)
            v = (v + one).astype(dt)
        ixx = (one / (v * v)).astype(dt)
        tail = (one + one / (dt(2) * v) + ixx * (dt(1.0 / 6) - ixx * (dt(1.0 / 30) - ixx * dt(
            1.0 / 42)))).astype(dt) / v
        res = (res + tail).astype(dt)
        res = np.where(small, -res, res)
    return np.asarray(res, dtype=dt)


def torch_polygamma_np(n: int, x: Any) -> np.ndarray:
    """``psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)`` for ``n >= 2`` (PyTorch's formula)."""
    a = _float(x)
    z = zeta_np(np.full(a.shape, n + 1.0), a.astype(np.float64)).astype(np.float64)
    sign = 1.0 if n % 2 else -1.0
    return _like(sign * math.factorial(n) * z, a)


@defop("digamma_t", saves=("x",))
def digamma_t(x: Any) -> Any:
    return torch_digamma_np(x)


@defop("polygamma_t", saves=("x",))
def polygamma_t(x: Any, *, n: int) -> Any:
    return torch_trigamma_np(x) if n == 1 else torch_polygamma_np(n, x)


@digamma_t.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d psi = psi1 dx
    return (multiply(g, polygamma_t(x, n=1)),)


@polygamma_t.defvjp
def _(g: Tensor, x: Tensor, n: int) -> Any:  # d psi^(n) = psi^(n+1) dx
    return (multiply(g, polygamma_t(x, n=n + 1)),)


digamma_t.defjvp(lambda dx, x, *, out: multiply(dx, polygamma_t(x, n=1)))
polygamma_t.defjvp(lambda dx, x, *, out, n: multiply(dx, polygamma_t(x, n=n + 1)))
digamma_t.defbatch(_bw(digamma_t))
polygamma_t.defbatch(_bw(polygamma_t))


# ------------------------------------------------------------------ logcumsumexp
def _lcse_np(a: np.ndarray, axis: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.logaddexp.accumulate(a, axis=axis).astype(a.dtype, copy=False)


@defop("logcumsumexp_t", saves=("x", "out"))
def logcumsumexp(x: Any, *, axis: int) -> Any:
    """``log(cumsum(exp(x)))`` along ``axis`` by a running ``logaddexp`` (O(n))."""
    return _lcse_np(np.asarray(x), axis)


def _rev_lcse(v: Any, axis: int) -> Any:
    from .shape import flip

    return flip(logcumsumexp(flip(v, (axis,)), axis=axis), (axis,))


def _signed_log_parts(v: Any) -> tuple[Any, Any]:
    """``log|v|`` where ``v > 0`` and where ``v < 0`` (the lowest float elsewhere)."""
    from .elementwise import abs as _abs
    from .elementwise import greater, less

    d = v._data.dtype if isinstance(v, Tensor) else np.asarray(v).dtype
    low = np.finfo(d).min if d.kind == "f" else np.finfo(np.float64).min
    la = log(_abs(v))
    return where(greater(v, 0), la, d.type(low)), where(less(v, 0), la, d.type(low))


@logcumsumexp.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, axis: int) -> Any:
    # PyTorch's (TensorFlow's) formula: the positive and negative parts of g in log space,
    # dx_i = sum_{j >= i} g_j exp(x_i - out_j)
    pos, neg = _signed_log_parts(g)
    op = exp(add(_rev_lcse(subtract(pos, out), axis), x))
    on = exp(add(_rev_lcse(subtract(neg, out), axis), x))
    return (subtract(op, on),)


@logcumsumexp.defjvp
def _(dx: Any, x: Any, *, out: Any, axis: int) -> Any:
    # dout_j = sum_{i <= j} exp(x_i - out_j) dx_i, in log space the same way
    pos, neg = _signed_log_parts(dx)
    tp = exp(subtract(logcumsumexp(add(pos, x), axis=axis), out))
    tn = exp(subtract(logcumsumexp(add(neg, x), axis=axis), out))
    return subtract(tp, tn)


logcumsumexp.defbatch(lambda batched, x, *, axis: logcumsumexp(x, axis=axis + 1))


