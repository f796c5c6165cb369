"""Primitives of TensorFlow-only ops whose gradient convention is not the derivative of a
composite: ``dynamic_stitch``.

``dynamic_stitch`` writes ``data[m][i]`` to row ``indices[m][i]`` of the result, later
writes winning.  TensorFlow's gradient (``data_flow_grad._DynamicStitchGrads``) sends
every data row the cotangent of the row it was written to, overwritten or not; a gather
of the concatenated data would give the overwritten rows zero.  So the forward is its
own op with that VJP (gathers, differentiable again); its JVP is the stitch of the
tangents; batching moves the batch axis behind the row axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import data

__all__ = ["dynamic_stitch"]


def _stitch_np(xs: tuple[Any, ...], idx: tuple[np.ndarray, ...], n: int,
               inner: tuple[int, ...], dtype: Any) -> np.ndarray:
    out = np.zeros((n,) + inner, dtype=dtype)
    for x, i in zip(xs, idx):
        out[i.reshape(-1)] = np.asarray(x).reshape((-1,) + inner)
    return out


@defop("dynamic_stitch")
def dynamic_stitch(*xs: Any, idx: tuple[np.ndarray, ...], n: int,
                   inner: tuple[int, ...]) -> Any:
    """``merged[idx[m][i]] = xs[m][i]`` (later writes win, unwritten rows zero)."""
    return _stitch_np(xs, idx, n, inner, np.asarray(xs[0]).dtype)


@dynamic_stitch.defvjp
def _(g: Tensor, idx: tuple[np.ndarray, ...], n: int, inner: tuple[int, ...]) -> Any:
    # TensorFlow's rule: each data row gets the cotangent of its target row
    from .shape import take

    return tuple(take(g, i, axis=0) for i in idx)


@dynamic_stitch.defjvp
def _(*args: Any, out: Any, idx: tuple[np.ndarray, ...], n: int, inner: tuple[int, ...]) -> Any:
    k = len(idx)
    dxs, xs = args[:k], args[k:]
    from .elementwise import multiply

    ts = [multiply(x, 0.0) if d is None else d for d, x in zip(dxs, xs)]
    return dynamic_stitch(*ts, idx=idx, n=n, inner=inner)


@dynamic_stitch.defbatch
def _(batched: tuple[bool, ...], *xs: Any, idx: tuple[np.ndarray, ...], n: int,
      inner: tuple[int, ...]) -> Any:
    from .shape import broadcast_to, moveaxis

    b = next(data(x).shape[0] for x, f in zip(xs, batched) if f)
    moved = []
    for x, f in zip(xs, batched):
        if not f:
            x = broadcast_to(x, (b,) + tuple(data(x).shape))
        # (B, *idx_shape, *inner) -> (*idx_shape, *inner, B): the batch becomes an inner axis
        moved.append(moveaxis(x, 0, -1))
    out = dynamic_stitch(*moved, idx=idx, n=n, inner=inner + (b,))
    return moveaxis(out, -1, 0)


# ------------------------------------------------------------------ modified Bessel functions
# one set of ops for both styles (tapegrad.ops.torch_more's i0, i0e, i1, i1e: float64
# series and asymptotic expansion, gradients I0' = I1, I1' = I0 - I1/x and their scaled
# forms, TensorFlow's math_grad formulas too)
from .torch_more import i0 as bessel_i0  # noqa: E402
from .torch_more import i0e as bessel_i0e  # noqa: E402
from .torch_more import i1 as bessel_i1  # noqa: E402
from .torch_more import i1e as bessel_i1e  # noqa: E402

# ------------------------------------------------------------------ Hurwitz zeta
_B2K = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
        -3617.0 / 510, 43867.0 / 798)


def _zeta_np(s: Any, q: Any) -> np.ndarray:
    """``sum_k (q + k) ** -s`` by Euler-Maclaurin summation (Cephes' scheme: 9 terms
    summed, then the integral, the half term and nine Bernoulli corrections)."""
    sa, qa = np.asarray(s), np.asarray(q)
    dt = np.result_type(sa.dtype, qa.dtype)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    x = sa.astype(np.float64)
    v = qa.astype(np.float64)
    n = 9
    with np.errstate(all="ignore"):
        total = np.zeros(np.broadcast_shapes(x.shape, v.shape))
        for k in range(n):
            total = total + (v + k) ** -x
        w = v + n
        total = total + w ** (1.0 - x) / (x - 1.0) + 0.5 * w ** -x
        fact = x * w ** (-x - 1.0)  # s (s+1) ... (s+2j-2) / (2j)! * w^(-s-2j+1), j = 1
        denom = 2.0
        for j, b in enumerate(_B2K, start=1):
            total = total + b * fact / denom
            fact = fact * (x + 2 * j - 1) * (x + 2 * j) / (w * w)
            denom = denom * (2 * j + 1) * (2 * j + 2)
        out = np.where(x == 1.0, np.inf, total)
        out = np.where(x < 1.0, np.nan, out)
        out = np.where(v <= 0, np.nan, out)  # q > 0 only (Eigen's q <= 0 cases are not kept)
    return np.asarray(out, dtype=dt)


@defop("zeta", saves=("x", "q"))
def zeta(x: Any, q: Any) -> Any:
    return _zeta_np(x, q)


@zeta.defvjp
def _(g: Tensor, x: Tensor, q: Tensor) -> Any:
    # TensorFlow differentiates in q only: d zeta(x, q) / dq = -x zeta(x + 1, q)
    from .elementwise import add, multiply, negative

    return None, multiply(g, negative(multiply(x, zeta(add(x, 1.0), q))))


@zeta.defjvp
def _(dx: Any, dq: Any, x: Any, q: Any, *, out: Any) -> Any:
    from .elementwise import add, multiply, negative

    if dq is None:
        return None
    return multiply(dq, negative(multiply(x, zeta(add(x, 1.0), q))))


from ._batch import elementwise as _bw  # noqa: E402

for _op in (zeta,):
    _op.defbatch(_bw(_op))
del _op

__all__ += ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "zeta"]


# ------------------------------------------------------------------ incomplete gamma
def _lgamma64(a: np.ndarray) -> np.ndarray:
    from .special import _lgamma_np

    return np.asarray(_lgamma_np(a.astype(np.float64)), dtype=np.float64)


def _igamma_np(a: Any, x: Any, upper: bool) -> np.ndarray:
    """``P(a, x)`` (``Q = 1 - P`` when ``upper``): the series below ``x = a + 1``, the
    continued fraction (modified Lentz) above, in float64, as Cephes' igam/igamc."""
    aa, xa = np.asarray(a), np.asarray(x)
    dt = np.result_type(aa.dtype, xa.dtype)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    av, xv = np.broadcast_arrays(aa.astype(np.float64), xa.astype(np.float64))
    bad = ~(av > 0) | ~(xv >= 0)
    a1 = np.where(bad, 1.0, av)
    x1 = np.where(bad, 1.0, xv)
    with np.errstate(all="ignore"):
        lp = a1 * np.log(x1) - x1 - _lgamma64(a1)
        # series: P = exp(lp) / a * sum_n x^n / ((a + 1) ... (a + n))
        term = np.ones_like(a1) / a1
        total = term.copy()
        for n in range(1, 600):
            term = term * x1 / (a1 + n)
            total = total + term
        p_series = np.exp(lp) * total
        # continued fraction for Q
        tiny = 1e-300
        b = x1 + 1.0 - a1
        c = np.full_like(a1, 1.0 / tiny)
        d = 1.0 / np.where(np.abs(b) < tiny, tiny, b)
        h = d.copy()
        for i in range(1, 300):
            an = -i * (i - a1)
            b = b + 2.0
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            h = h * d * c
        q_cf = np.exp(lp) * h
        use_series = x1 < a1 + 1.0
        p = np.where(use_series, p_series, 1.0 - q_cf)
        q = np.where(use_series, 1.0 - p_series, q_cf)
        out = q if upper else p
        out = np.where(xv == 0, 1.0 if upper else 0.0, out)
        out = np.where(np.isinf(xv) & (xv > 0), 0.0 if upper else 1.0, out)
        out = np.where(bad & ~(xv == 0) | np.isnan(av) | np.isnan(xv), np.nan, out)
    return np.asarray(out, dtype=dt)


def _igamma_grad_a_np(a: Any, x: Any) -> np.ndarray:
    """``dP(a, x) / da`` from the series ``P = sum_n exp(lp + L_n)``, ``L_n = sum_k log(x /
    (a + k))``: each term's log-derivative is ``log x - psi(a + 1) - sum_k 1 / (a + k)``."""
    from .special import _digamma_np

    aa, xa = np.asarray(a), np.asarray(x)
    dt = np.result_type(aa.dtype, xa.dtype)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    av, xv = np.broadcast_arrays(aa.astype(np.float64), xa.astype(np.float64))
    bad = ~(av > 0) | ~(xv > 0)
    a1 = np.where(bad, 1.0, av)
    x1 = np.where(bad, 1.0, xv)
    with np.errstate(all="ignore"):
        lp = a1 * np.log(x1) - x1 - _lgamma64(a1 + 1.0)
        base = np.log(x1) - np.asarray(_digamma_np(a1 + 1.0), np.float64)
        n_max = int(min(5000, np.max(x1 + 20.0 * np.sqrt(x1) + 60.0))) if x1.size else 0
        log_t = np.zeros_like(a1)
        harm = np.zeros_like(a1)
        total = np.exp(lp) * base
        for n in range(1, n_max + 1):
            log_t = log_t + np.log(x1 / (a1 + n))
            harm = harm + 1.0 / (a1 + n)
            total = total + np.exp(lp + log_t) * (base - harm)
        out = np.where(bad, np.where(xv == 0, 0.0, np.nan), total)
    return np.asarray(out, dtype=dt)


@defop("igamma", saves=("a", "x"))
def igamma(a: Any, x: Any) -> Any:
    return _igamma_np(a, x, False)


@defop("igammac", saves=("a", "x"))
def igammac(a: Any, x: Any) -> Any:
    return _igamma_np(a, x, True)


@defop("igamma_grad_a")
def igamma_grad_a(a: Any, x: Any) -> Any:
    """``dP(a, x) / da`` (TensorFlow's IgammaGradA, itself without a gradient)."""
    return _igamma_grad_a_np(a, x)


igamma_grad_a.vjp = None  # type: ignore[assignment]  # TensorFlow registers none either


def _d_igamma_x(a: Any, x: Any) -> Any:  # dP/dx = exp(-x + (a - 1) log x - lgamma(a))
    from .elementwise import exp, log, multiply, subtract
    from .special import lgamma

    return exp(subtract(subtract(multiply(subtract(a, 1.0), log(x)), x), lgamma(a)))


@igamma.defvjp
def _(g: Tensor, a: Tensor, x: Tensor) -> Any:
    from .elementwise import multiply

    return multiply(g, igamma_grad_a(a, x)), multiply(g, _d_igamma_x(a, x))


@igammac.defvjp
def _(g: Tensor, a: Tensor, x: Tensor) -> Any:  # Q = 1 - P
    from .elementwise import multiply, negative

    return (negative(multiply(g, igamma_grad_a(a, x))),
            negative(multiply(g, _d_igamma_x(a, x))))


def _igamma_jvp(sign: float) -> Any:
    def rule(da: Any, dx: Any, a: Any, x: Any, *, out: Any) -> Any:
        from .elementwise import add, multiply

        t = None
        if da is not None:
            t = multiply(da, multiply(igamma_grad_a(a, x), sign))
        if dx is not None:
            u = multiply(dx, multiply(_d_igamma_x(a, x), sign))
            t = u if t is None else add(t, u)
        return t
    return rule


igamma.defjvp(_igamma_jvp(1.0))
igammac.defjvp(_igamma_jvp(-1.0))
for _op in (igamma, igammac, igamma_grad_a):
    _op.defbatch(_bw(_op))
del _op

__all__ += ["igamma", "igammac", "igamma_grad_a"]
