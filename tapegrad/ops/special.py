"""Inverse trigonometric/hyperbolic functions and special functions (lgamma, digamma, erfinv).

Forward on ndarrays (the input's float dtype kept), VJP and JVP in tapegrad ops beside
it, and the elementwise batching rule, as in :mod:`tapegrad.ops.elementwise`.  The
values of ``asinh``, ``acosh`` and ``lgamma`` (and float64 ``asin``/``acos``) are
the C library's, as TensorFlow's Eigen kernels call it; the
derivatives are TensorFlow's formulas (``math_grad.py``): ``asinh``'s is ``1 / cosh(y)``,
``acosh``'s ``1 / sinh(y)``, ``lgamma``'s ``digamma(x)``, ``digamma``'s ``trigamma(x)``
(itself not differentiated further), ``erfinv``'s ``sqrt(pi) / 2 * exp(erfinv(x)**2)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._batch import elementwise as _bw
from .elementwise import (
    add,
    divide,
    exp,
    multiply,
    negative,
    reciprocal,
    sqrt,
    square,
    subtract,
)


def _float(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a if a.dtype.kind in "fc" else a.astype(np.float64)


def _like(out: Any, x: Any) -> np.ndarray:
    """``out`` in ``x``'s float dtype (0-d stays an array)."""
    a = np.asarray(x)
    dt = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64)
    return np.asarray(out, dtype=dt)


_LIBM_FNS: dict[tuple[str, str], Any] = {}


def _libm_fn(name: str, dt: np.dtype) -> Any:
    """The C math library's ``name`` (``namef`` for float32) through ctypes, or None."""
    key = (name, dt.str)
    if key not in _LIBM_FNS:
        fn: Any = None
        try:
            import ctypes
            import ctypes.util

            lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            c = ctypes.c_float if dt == np.float32 else ctypes.c_double
            fn = getattr(lib, name + ("f" if dt == np.float32 else ""))
            fn.restype, fn.argtypes = c, [c]
        except (OSError, AttributeError):  # pragma: no cover - no C math library
            fn = None
        _LIBM_FNS[key] = fn
    return _LIBM_FNS[key]


def _libm(name: str, a: np.ndarray, dtypes: tuple[type, ...]) -> np.ndarray | None:
    """``name`` element by element from the C library, as TensorFlow's Eigen kernels call
    it for these functions (their bits), when ``a``'s dtype is one of ``dtypes``."""
    if a.dtype.type not in dtypes or a.size == 0:
        return None
    fn = _libm_fn(name, a.dtype)
    if fn is None:  # pragma: no cover - no C math library
        return None
    return np.fromiter((fn(v) for v in a.ravel().tolist()), dtype=a.dtype,
                       count=a.size).reshape(a.shape)


def _sinh(x: Any) -> Tensor:
    e = exp(x)
    return multiply(subtract(e, reciprocal(e)), 0.5)


def _cosh(x: Any) -> Tensor:
    e = exp(x)
    return multiply(add(e, reciprocal(e)), 0.5)


# ------------------------------------------------------------------ inverse trigonometric
@defop("asin", saves=("x",))
def asin(x: Any) -> Any:
    a = _float(x)
    out = _libm("asin", a, (np.float64,))
    if out is not None:
        return out
    with np.errstate(invalid="ignore"):
        return np.arcsin(a)


@asin.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d asin x = dx / sqrt(1 - x^2)
    return (divide(g, sqrt(subtract(1.0, square(x)))),)


@defop("acos", saves=("x",))
def acos(x: Any) -> Any:
    a = _float(x)
    out = _libm("acos", a, (np.float64,))
    if out is not None:
        return out
    with np.errstate(invalid="ignore"):
        return np.arccos(a)


@acos.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d acos x = -dx / sqrt(1 - x^2)
    return (negative(divide(g, sqrt(subtract(1.0, square(x))))),)


@defop("atan", saves=("x",))
def atan(x: Any) -> Any:
    return np.arctan(_float(x))


@atan.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d atan x = dx / (1 + x^2)
    return (divide(g, add(square(x), 1.0)),)


@defop("atan2", saves=("y", "x"), needs=True)
def atan2(y: Any, x: Any) -> Any:
    return np.arctan2(_float(y), _float(x))


@atan2.defvjp
def _(g: Tensor, y: Any, x: Any, needs: tuple[bool, ...]) -> Any:
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    den = add(square(x), square(y))
    gy = divide(multiply(g, x), den) if needs[0] else None
    gx = negative(divide(multiply(g, y), den)) if needs[1] else None
    return (gy, gx)


@defop("asinh", saves=("out",))
def asinh(x: Any) -> Any:
    a = _float(x)
    out = _libm("asinh", a, (np.float32, np.float64))
    return np.arcsinh(a) if out is None else out


@asinh.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d asinh x = dx / cosh(asinh x)
    return (divide(g, _cosh(out)),)


@defop("acosh", saves=("out",))
def acosh(x: Any) -> Any:
    a = _float(x)
    out = _libm("acosh", a, (np.float32, np.float64))
    if out is not None:
        return out
    with np.errstate(invalid="ignore"):
        return np.arccosh(a)


@acosh.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d acosh x = dx / sinh(acosh x)
    return (divide(g, _sinh(out)),)


@defop("atanh", saves=("x",))
def atanh(x: Any) -> Any:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.arctanh(_float(x))


@atanh.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d atanh x = dx / (1 - x^2)
    return (divide(g, subtract(1.0, square(x))),)


# ------------------------------------------------------------------ special functions
def _lgamma1(v: float) -> float:
    if math.isnan(v):
        return v
    if math.isinf(v) or (v <= 0 and v == math.floor(v)):
        return math.inf  # poles and both infinities (C's lgamma)
    return math.lgamma(v)


_lgamma_u = np.frompyfunc(_lgamma1, 1, 1)


def _lgamma_np(x: Any) -> np.ndarray:
    a = _float(x)
    out = _libm("lgamma", a, (np.float32, np.float64))
    return _like(_lgamma_u(a.astype(np.float64)), a) if out is None else out


# Cephes' asymptotic coefficients as Eigen's digamma_impl_maybe_poly has them
_PSI_A32 = np.array([-4.16666666666666666667E-3, 3.96825396825396825397E-3,
                     -8.33333333333333333333E-3, 8.33333333333333333333E-2], dtype=np.float32)
_PSI_A64 = np.array([8.33333333333333333333E-2, -2.10927960927960927961E-2,
                     7.57575757575757575758E-3, -4.16666666666666666667E-3,
                     3.96825396825396825397E-3, -8.33333333333333333333E-3,
                     8.33333333333333333333E-2])


def _digamma_np(x: Any) -> np.ndarray:
    """Eigen's ``digamma_impl`` (TensorFlow's kernel), step for step in the input's float
    dtype: the reflection for ``x <= 0``, the recurrence up to 10, Cephes' series; the
    logarithm correctly rounded (glibc's is, nearly always)."""
    a = _float(x)
    if a.dtype not in (np.float32, np.float64):
        return _like(_digamma_np(a.astype(np.float64)), a)
    dt = a.dtype.type
    one, half, zero = dt(1), dt(0.5), dt(0)
    with np.errstate(all="ignore"):
        neg = a <= zero
        p = np.floor(a)
        pole = neg & (p == a)
        nz = a - p
        up = neg & (nz > half)
        p = np.where(up, p + one, p)
        nz = np.where(up, a - p, nz)
        pi = dt(np.pi)
        refl = np.where(neg & (nz != half), pi / np.tan(pi * nz), zero).astype(dt)
        s = np.where(neg, one - a, a).astype(dt)
        w = np.zeros_like(s)
        while True:
            m = s < dt(10)
            if not m.any():
                break
            w = np.where(m, w + one / np.where(m, s, one), w).astype(dt)
            s = np.where(m, s + one, s).astype(dt)
        coeffs = _PSI_A32 if dt is np.float32 else _PSI_A64
        z = (one / (s * s)).astype(dt)
        poly = np.full_like(s, coeffs[0])
        for c in coeffs[1:]:
            poly = (poly * z + c).astype(dt)
        big = dt(1e8) if dt is np.float32 else dt(1e17)
        y = np.where(s < big, z * poly, zero).astype(dt)
        log_s = np.log(s.astype(np.float64)).astype(dt)
        y = (log_s - half / s - y - w).astype(dt)
        y = np.where(neg, y - refl, y)
        y = np.where(pole | np.isnan(a), dt(np.nan), y)
    return np.asarray(y, dtype=dt)


def _trigamma_np(x: Any) -> np.ndarray:
    a = _float(x)
    v = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        pole = (v <= 0) & (v == np.floor(v))
        refl = v < 0.5
        # psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x) for x < 1/2
        z = np.where(refl, 1.0 - v, v)
        acc = np.zeros_like(z)
        while True:
            small = z < 10.0
            if not small.any():
                break
            acc = acc + np.where(small, 1.0 / (z * z), 0.0)
            z = np.where(small, z + 1.0, z)
        r = 1.0 / (z * z)
        series = 1.0 / z + 0.5 * r + (1.0 / z) * r * (1.0 / 6 - r * (1.0 / 30 - r * (
            1.0 / 42 - r * (1.0 / 30))))
        res = series + acc
        res = np.where(refl, (np.pi / np.sin(np.pi * v)) ** 2 - res, res)
        res = np.where(pole, np.inf, res)
        res = np.where(v == np.inf, 0.0, res)
    return _like(res, a)


_erf_u = np.frompyfunc(math.erf, 1, 1)


def _erfinv_np(x: Any) -> np.ndarray:
    a = _float(x)
    v = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        # Giles' single-precision approximation, then Newton steps on erf(y) = x
        w = -np.log((1.0 - v) * (1.0 + v))
        ws = w - 2.5
        p1: Any = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            p1 = c + p1 * ws
        wb = np.sqrt(w) - 3.0
        p2: Any = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            p2 = c + p2 * wb
        y = np.where(w < 5.0, p1, p2) * v
        fin = np.isfinite(y)
        for _ in range(3):
            yy = np.where(fin, y, 0.0)
            err = np.asarray(_erf_u(yy), dtype=np.float64) - v
            y = np.where(fin, yy - err / (2.0 / math.sqrt(math.pi) * np.exp(-yy * yy)), y)
        y = np.where(v == 1.0, np.inf, np.where(v == -1.0, -np.inf, y))
        y = np.where(np.abs(v) > 1.0, np.nan, y)
    return _like(y, a)


@defop("trigamma", saves=("x",))
def trigamma(x: Any) -> Any:
    return _trigamma_np(x)


# Bernoulli numbers B_2k for the asymptotic series of the polygamma functions
_B2K = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6)


def _polygamma_np(n: int, x: Any) -> np.ndarray:
    """``psi^(n)(x)`` for ``n >= 1``: shifted up past 10 by the recurrence
    ``psi^(n)(x) = psi^(n)(x + 1) + (-1)^(n+1) n! / x^(n+1)``, then the asymptotic series
    ``(-1)^(n+1) [(n-1)!/z^n + n!/(2 z^(n+1)) + sum B_2k (2k+n-1)!/((2k)! z^(2k+n))]``."""
    a = _float(x)
    v = np.asarray(a, dtype=np.float64)
    sign = 1.0 if n % 2 else -1.0
    fact = float(math.factorial(n))
    with np.errstate(all="ignore"):
        pole = (v <= 0) & (v == np.floor(v))
        z = np.where(pole | ~np.isfinite(v), 20.0, v)
        acc = np.zeros_like(z)
        while True:
            small = z < 10.0
            if not small.any():
                break
            acc = acc + np.where(small, fact / z ** (n + 1), 0.0)
            z = np.where(small, z + 1.0, z)
        series = math.factorial(n - 1) / z ** n + fact / (2.0 * z ** (n + 1))
        for k, b in enumerate(_B2K, start=1):
            series = series + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) \
                / z ** (2 * k + n)
        res = sign * (series + acc)
        res = np.where(pole, np.nan if n % 2 == 0 else np.inf, res)
        res = np.where(v == np.inf, 0.0, np.where(np.isnan(v), np.nan, res))
    return _like(res, a)


@defop("polygamma_n", saves=("x",))
def polygamma_n(x: Any, *, n: int) -> Any:
    """``psi^(n)(x)`` (``n >= 2``; ``trigamma`` is ``n = 1``): the derivatives of ``trigamma``,
    each differentiable in turn."""
    return _polygamma_np(n, x)


@polygamma_n.defvjp
def _(g: Tensor, x: Tensor, n: int) -> Any:  # d psi^(n)(x) = psi^(n+1)(x) dx
    return (multiply(g, polygamma_n(x, n=n + 1)),)


polygamma_n.defjvp(lambda dx, x, *, out, n: multiply(dx, polygamma_n(x, n=n + 1)))


@trigamma.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d psi1(x) = psi2(x) dx
    return (multiply(g, polygamma_n(x, n=2)),)


trigamma.defjvp(lambda dx, x, *, out: multiply(dx, polygamma_n(x, n=2)))


@defop("digamma", saves=("x",))
def digamma(x: Any) -> Any:
    return _digamma_np(x)


@digamma.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d psi(x) = psi1(x) dx
    return (multiply(g, trigamma(x)),)


@defop("lgamma", saves=("x",))
def lgamma(x: Any) -> Any:
    return _lgamma_np(x)


@lgamma.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d log|Gamma(x)| = psi(x) dx
    return (multiply(g, digamma(x)),)


@defop("erfinv", saves=("out",))
def erfinv(x: Any) -> Any:
    # Eigen's erfinv is ndtri((x + 1) / 2) / sqrt(2) in the input's dtype: the rounding of
    # (x + 1) / 2 is TensorFlow's (it dominates near 0); the rest is computed accurately
    a = _float(x)
    dt = a.dtype.type
    with np.errstate(invalid="ignore"):
        p = ((a + dt(1)) * dt(0.5)).astype(a.dtype)
    return _like(_erfinv_np(2.0 * p.astype(np.float64) - 1.0), a)


_HALF_SQRT_PI = math.sqrt(math.pi) / 2


@erfinv.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d erfinv x = sqrt(pi)/2 exp(erfinv(x)^2) dx
    return (multiply(g, multiply(exp(square(out)), _HALF_SQRT_PI)),)


# ------------------------------------------------------------------ forward mode, batching
asin.defjvp(lambda dx, x, *, out: divide(dx, sqrt(subtract(1.0, square(x)))))
acos.defjvp(lambda dx, x, *, out: negative(divide(dx, sqrt(subtract(1.0, square(x))))))
atan.defjvp(lambda dx, x, *, out: divide(dx, add(square(x), 1.0)))
asinh.defjvp(lambda dx, x, *, out: divide(dx, _cosh(out)))
acosh.defjvp(lambda dx, x, *, out: divide(dx, _sinh(out)))
atanh.defjvp(lambda dx, x, *, out: divide(dx, subtract(1.0, square(x))))
digamma.defjvp(lambda dx, x, *, out: multiply(dx, trigamma(x)))
lgamma.defjvp(lambda dx, x, *, out: multiply(dx, digamma(x)))
erfinv.defjvp(lambda dx, x, *, out: multiply(dx, multiply(exp(square(out)), _HALF_SQRT_PI)))


@atan2.defjvp
def _(dy: Any, dx: Any, y: Any, x: Any, *, out: Any) -> Any:
    den = add(square(x), square(y))
    t = None if dy is None else divide(multiply(dy, x), den)
    if dx is not None:
        u = negative(divide(multiply(dx, y), den))
        t = u if t is None else add(t, u)
    return t


for _op in (asin, acos, atan, atan2, asinh, acosh, atanh, trigamma, polygamma_n, digamma,
            lgamma, erfinv):
    _op.defbatch(_bw(_op))
del _op

__all__ = ["asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "lgamma", "digamma",
           "trigamma", "erfinv", "cumprod"]


# ------------------------------------------------------------------ cumulative product
@defop("cumprod", saves=("x", "out"))
def cumprod(x: Any, *, axis: int) -> Any:
    return np.cumprod(x, axis=axis, dtype=np.asarray(x).dtype)


@cumprod.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, axis: int) -> Any:
    # TensorFlow's formula: the reverse cumulative sum of out * g, divided by x
    from .reduce import cumsum
    from .shape import flip

    return (divide(flip(cumsum(flip(multiply(out, g), axis=(axis,)), axis=axis), axis=(axis,)), x),)


@cumprod.defjvp
def _(dx: Any, x: Any, *, out: Any, axis: int) -> Any:  # out * cumsum(dx / x)
    from .reduce import cumsum

    return multiply(out, cumsum(divide(dx, x), axis=axis))


cumprod.defbatch(lambda batched, x, *, axis: cumprod(x, axis=axis + 1))
