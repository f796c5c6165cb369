"""TensorFlow 2.21's float32 CPU kernels for ``Exp``, ``Expm1``, ``Log``, ``Log1p``, ``Sin``,
``Cos``, ``Tanh``, ``Sigmoid``, ``Sum`` and ``Mean``, bit for bit (and the kernel formulas of
``Elu``, ``Selu``, ``Softplus`` and the ``Expm1``/``Erf``/``Softplus`` gradients built on them,
in the ops that use them).

TensorFlow runs these element-wise ops on Eigen, built for AVX without FMA (8-float
packets; a multiply-add is a multiply, then an add, each rounded) and with
flush-to-zero.  Over the flattened tensor, whole packets take Eigen's packet
function and the last ``size % 8`` values its scalar one.  Measured against the
installed TensorFlow wheel: equal on every value of 2 million-point sweeps of
[-110, 30] and on every size from 1 to 10**6 + 3.

* ``Exp``: ``pexp_float`` on packets, glibc's ``expf`` on the tail (the same two
  functions that ``LogSoftmax`` uses, ``ops/_tf_softmax.py``).
* ``Tanh``: ``ptanh_float`` (Eigen's ``EIGEN_FAST_MATH`` form, its scalar op too): the
  input clamped to +-7.90738964 and a [9/8] rational in ``x^2``,
  ``(x^3 * p(x^2) + x) / q(x^2)``.
* ``Log``: ``plog_float`` on packets (a subnormal reads as zero: ``-inf``), the C
  library's ``logf`` on the tail, where a positive subnormal gives -103.97208 (glibc
  scales it by 2**23 first, which DAZ reads as zero) and a negative one NaN.
* ``Sum`` and ``Mean`` over trailing axes (all axes included): each output is Eigen's
  inner-most reducer over its contiguous values (four packet accumulators over groups
  of 32, the other whole packets into the first, a scalar tail, ``predux``), split in
  halves on packet boundaries past 8192 values (its tree reduction); ``Mean`` is that
  sum divided by the float32 count.  A reduction to one value is Eigen's ``FullReducer``
  on TensorFlow's thread pool: ``T = min(CPUs, int((n * 1.9375 - 1e5) / 1e5 + 0.9))``
  threads (its cost model: 1.9375 cycles a value; measured, 2 threads from 108,388
  values on 2 CPUs), ``n // T``-value shards, the leftover reduced first and the shards
  added to it in order.  Over leading axes: four row accumulators on whole packets of
  columns, rows in order on the rest (``_outer_sum_f32``).  Over middle axes: NumPy's
  order (TensorFlow's not emulated).
* ``Log1p``: Eigen's ``generic_plog1p`` on packets (``x * (log(1 + x) / ((1 + x) - 1))``
  with ``plog_float``, ``x`` itself where ``1 + x`` is 1 or infinite), the C library's
  ``log1pf`` on the tail.
* ``Sin``/``Cos``: ``psincos_float`` (no FMA): ``x * 2/pi`` rounded by the 2**23 trick,
  a four-step Cody-Waite reduction, the degree-7 sine or degree-8 cosine polynomial by
  the quadrant, the sign from its bits; glibc's ``sinf``/``cosf`` on the tail.  Inputs
  past 25966 (sine) or 18838 (cosine), where Eigen switches to its Payne-Hanek
  reduction, take ``sinf``/``cosf`` here (not emulated).
* ``Expm1``: Eigen's ``generic_expm1`` on packets (``u = pexp(x)``, ``(u - 1) * (x / plog(u))``;
  ``x`` where ``u`` is 1, -1 where ``u - 1`` is, ``u`` where it is infinite), glibc's
  ``expm1f`` on the tail.  ``Elu``'s kernel is ``exp(x) - 1`` below 0 (not ``expm1``).
* ``Sigmoid``: Eigen's ``scalar_logistic_op<float>``: on packets, ``e / (1 + e)`` with
  ``e = exp(x / 2)^2`` from a degree-5 polynomial (the input clamped above at
  16.6355324, 0 below -104); the scalar tail ``e = expf(min(x, 16.6355324))``.

NumPy's own ``tanh``, ``exp`` and the stable sigmoid are correctly rounded or close to
it and differ from these in the last bit on about half of all values, which is
enough to change the printed digits of a Keras model's outputs and losses.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._tf_softmax import (
    _eigen_pexp,
    _eigen_plog,
    _ftz,
    _glibc_expf,
    _leaf_sum,
    _libm_logf,
    _row_sums,
    _tree_sum,
    libm_float_fn,
)

_F = np.float32
_PACKET = 8

# TensorFlow's summation order in float32 MatMul, convolutions (ops/linalg.py,
# ops/conv.py), sums over leading axes (bias gradients) and the softmax cross-entropy
# gradient's sum of exps (ops/nn.py) costs about 4 ns a multiply-add against BLAS's < 0.1 ns, so it is off
# unless asked for: ``tapegrad.tf.config.set_exact_float32_sums(True)`` or the
# environment variable ``TAPEGRAD_TF_EXACT_SUMS=1`` (then products up to their budgets
# carry TensorFlow's last bits; larger ones keep BLAS's order either way)
EXACT_SUMS = [os.environ.get("TAPEGRAD_TF_EXACT_SUMS", "") not in ("", "0")]

# ptanh_float (EIGEN_FAST_MATH, no FMA): x^3 * p(x^2) + x over q(x^2), p and q by Horner
_TANH_CLAMP = _F(7.90738964080810547)
_TANH_P = (_F(1.394553628e-8), _F(2.102733560e-5), _F(3.520756727e-3), _F(1.340216100e-1))
_TANH_Q = (_F(8.015776984e-7), _F(3.326951409e-4), _F(2.597254514e-2), _F(4.673548340e-1),
           _F(1.0))

# scalar_logistic_op<float>
_LOGISTIC_HI = _F(16.6355324)
_LOGISTIC_LO = _F(-104.0)
_LOGISTIC_P = (_F(0.49999141693115234375), _F(0.16666877269744873046875),
               _F(4.1898667812347412109375e-2), _F(8.33471305668354034423828125e-3))


def _daz(x: np.ndarray) -> np.ndarray:
    """A float32 copy of ``x`` (flattened), subnormal inputs read as zero (DAZ)."""
    return _ftz(np.array(x, _F, copy=True).reshape(-1))


def _horner(x2: np.ndarray, coeffs: tuple[np.float32, ...]) -> np.ndarray:
    r = np.full_like(x2, coeffs[0])
    for c in coeffs[1:]:
        r *= x2
        r += c
    return r


def _by_packets(a: np.ndarray, packets: Callable[[np.ndarray], np.ndarray],
                tail: Callable[[np.ndarray], np.ndarray], daz: bool = True) -> np.ndarray:
    """An element-wise kernel over ``a`` flattened: ``packets`` on the whole packets of 8,
    ``tail`` on the last ``size % 8`` values (DAZ on the inputs unless ``daz=False``,
    where the tail reads subnormals itself)."""
    shape = np.shape(a)
    x = _daz(a) if daz else np.array(a, _F, copy=True).reshape(-1)
    k = x.size - x.size % _PACKET
    with np.errstate(all="ignore"):
        out = packets(x) if k == x.size else np.concatenate([packets(x[:k]), tail(x[k:])])
    return out.astype(_F, copy=False).reshape(shape)


def tanh_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Tanh`` of ``a`` (any shape)."""
    shape = np.shape(a)
    x = _daz(a)
    with np.errstate(all="ignore"):
        np.clip(x, -_TANH_CLAMP, _TANH_CLAMP, out=x)
        x2 = x * x
        x3 = x2 * x
        p = _horner(x2, _TANH_P)
        q = _horner(x2, _TANH_Q)
        p *= x3
        p += x
        p /= q
    return _ftz(p).reshape(shape)


def exp_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Exp`` of ``a`` (any shape)."""
    return _by_packets(a, _eigen_pexp, _glibc_expf)


def _logistic_packets(x_in: np.ndarray) -> np.ndarray:
    x = np.minimum(x_in, _LOGISTIC_HI)
    x *= _F(0.5)
    m = np.floor(x * _F(1.44269504088896341) + _F(0.5))
    r = m * _F(-0.693359375) + x
    r = m * _F(2.12194440e-4) + r
    r2 = r * r
    p_even = r2 * _LOGISTIC_P[2] + _LOGISTIC_P[0]
    p_odd = r2 * _LOGISTIC_P[3] + _LOGISTIC_P[1]
    p = r * p_odd + p_even
    p = r2 * p + (r + _F(1))
    # pldexp_fast: p * 2**m exactly (|m| <= 13 here, far from the subnormal range)
    e = np.ldexp(p, np.clip(m, -126, 127).astype(np.int32)).astype(_F, copy=False)
    e = _ftz(e * e)
    out = e / (_F(1) + e)
    out[x_in < _LOGISTIC_LO] = 0
    return out


def _logistic_scalar(x: np.ndarray) -> np.ndarray:
    e = _glibc_expf(np.minimum(x, _LOGISTIC_HI))
    return e / (_F(1) + e)


def sigmoid_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Sigmoid`` of ``a`` (any shape)."""
    out = _by_packets(a, _logistic_packets, _logistic_scalar)
    out = np.where(np.isnan(np.asarray(a, _F)), _F(np.nan), out)  # NaN in, NaN out
    return _ftz(out)


_LOGF_SUBNORMAL = _F(-103.97208)  # glibc logf of a subnormal under DAZ (measured)


def _log_tail(x: np.ndarray) -> np.ndarray:
    out = _libm_logf(x)
    sub = (x != 0) & (np.abs(x) < np.finfo(_F).tiny)
    if sub.any():
        out = np.where(sub, np.where(x > 0, _LOGF_SUBNORMAL, _F(np.nan)), out)
    return out.astype(_F, copy=False)


def log_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Log`` of ``a`` (any shape)."""
    return _by_packets(a, lambda x: _eigen_plog(_ftz(x)), _log_tail, daz=False)


def inner_sum_f32(a: np.ndarray, axis: tuple[int, ...] | None, keepdims: bool,
                  mean: bool) -> np.ndarray | None:
    """TensorFlow's float32 ``Sum`` (``Mean`` when ``mean``) of ``a`` over ``axis``, or
    ``None`` where it is not emulated (other dtypes, nothing to add, leading axes)."""
    if a.dtype != _F or a.ndim == 0 or a.size == 0:
        return None
    nd = a.ndim
    ax = tuple(range(nd)) if axis is None else tuple(sorted(axis))
    k = nd - len(ax)
    if ax == tuple(range(len(ax))) and k > 0:
        # TensorFlow's order over leading axes costs ~30x NumPy's: with the exact products
        return _outer_sum_f32(a, len(ax), keepdims, mean) if EXACT_SUMS[0] else None
    if ax != tuple(range(k, nd)):
        return None
    shape = a.shape
    inner = int(np.prod(shape[k:]))
    if inner < 2:
        return None  # nothing added: NumPy's value is the same
    x = _ftz(np.ascontiguousarray(a).reshape(-1, inner))
    with np.errstate(all="ignore"):
        threads = _full_reducer_threads(inner) if x.shape[0] == 1 else 1
        if threads > 1:
            s = np.array([_sharded_sum(x[0], threads)], _F)
        else:
            s = _row_sums(x, _PACKET, 1024, _leaf)
        if mean:
            s = s / _F(inner)
    return _ftz(s.astype(_F, copy=False)).reshape(shape[:k] + ((1,) * len(ax) if keepdims
                                                              else ()))


def _outer_sum_f32(a: np.ndarray, lead: int, keepdims: bool, mean: bool) -> np.ndarray:
    """``Sum``/``Mean`` over the ``lead`` leading axes (measured against TensorFlow 2.21, rows
    up to 20000): from 16 rows, the columns in whole packets of 8 by four row accumulators
    (rows ``i``, ``i+1``, ``i+2``, ``i+3`` into accumulators 0-3), added in order, then the
    left-over rows one by one; the last ``cols % 8`` columns, and all of them under 16
    rows, row by row in order."""
    shape = a.shape
    rows = int(np.prod(shape[:lead]))
    x = _ftz(np.ascontiguousarray(a).reshape(rows, -1))
    cols = x.shape[1]
    v = cols - cols % _PACKET if rows >= 16 else 0
    with np.errstate(all="ignore"):
        out = np.zeros(cols, _F)
        # np.add.accumulate adds strictly in order (float32 throughout)
        if v and rows:
            r4 = rows - rows % 4
            acc = np.add.accumulate(x[:r4, :v].reshape(r4 // 4, 4, v), axis=0)[-1]
            s = acc[0] + acc[1]
            s += acc[2]
            s += acc[3]
            for i in range(r4, rows):
                s += x[i, :v]
            out[:v] = s
        if v < cols and rows:
            out[v:] = np.add.accumulate(x[:, v:], axis=0)[-1]
        if mean:
            out = out / _F(rows)
    out = _ftz(out.astype(_F, copy=False))
    return out.reshape(((1,) * lead if keepdims else ()) + shape[lead:])


def _leaf(r: np.ndarray) -> np.ndarray:
    return _leaf_sum(r, _PACKET)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _full_reducer_threads(n: int) -> int:
    """The threads Eigen's cost model gives a float32 full sum of ``n`` values (at most
    TensorFlow's intra-op pool, one per CPU)."""
    t = (n * 1.9375 - 100000.0) / 100000.0 + 0.9
    return max(1, min(_cpus(), int(t)))


def _sharded_sum(v: np.ndarray, threads: int) -> np.float32:
    """``FullReducer<ThreadPoolDevice>``: shards of ``n // threads`` values, the leftover's
    sum first, then each shard's added in order."""
    n = v.size
    bs = n // threads
    nb = n // bs
    acc = _F(0)
    if nb * bs < n:
        acc = _tree_sum(v[None, nb * bs:], nb * bs, _PACKET, 1024, _leaf)[0]
    for i in range(nb):
        acc = _F(acc + _tree_sum(v[None, i * bs:(i + 1) * bs], i * bs, _PACKET, 1024, _leaf)[0])
    return acc


_LOG1PF = libm_float_fn("log1pf")
_EXPM1F = libm_float_fn("expm1f")


def expm1_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Expm1`` of ``a`` (any shape)."""
    return _by_packets(a, _expm1_packets,
                       lambda t: _ftz(_libm_each(_EXPM1F, np.expm1, t)), daz=False)


def _expm1_packets(x_in: np.ndarray) -> np.ndarray:
    # a subnormal reads as 0 in the arithmetic (DAZ) but is selected back unchanged
    x = _ftz(x_in)
    u = _eigen_pexp(x)
    um1 = u - _F(1)
    logu = _eigen_plog(u)
    e = um1 * (x / logu)
    e = np.where(logu == u, u, e)  # u infinite
    return np.where(u == _F(1), x_in, np.where(um1 == _F(-1), _F(-1), e))


def log1p_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Log1p`` of ``a`` (any shape)."""
    return _by_packets(a, _log1p_packets, _log1p_tail, daz=False)


def _log1p_packets(x: np.ndarray) -> np.ndarray:
    h = _ftz(x)
    xp1 = h + _F(1)
    lg = _eigen_plog(_ftz(xp1))
    big = h * (lg / (xp1 - _F(1)))
    return np.where((xp1 == _F(1)) | (xp1 == lg), h, big)


def _log1p_tail(t: np.ndarray) -> np.ndarray:
    if _LOG1PF is None:  # pragma: no cover - no C math library
        return np.log1p(t.astype(np.float64)).astype(_F)
    return np.array([_LOG1PF(float(v)) for v in t], _F)


_SINF = libm_float_fn("sinf")
_COSF = libm_float_fn("cosf")
_U = np.uint32
_REDUCE = (_F(-1.5703125), _F(-0.000483989715576171875), _F(1.62865035235881805419921875e-07),
           _F(5.5644315544167710640977020375430583953857421875e-11))
_COS_P = (_F(2.4372266125283204019069671630859375e-05), _F(-0.00138865201734006404876708984375),
          _F(0.041666619479656219482421875), _F(-0.5), _F(1.0))
_SIN_P = (_F(-0.0001959234114083702898469196984621021329076029360294342041015625),
          _F(0.0083326873655616851693794799871284340042620897293090820312500000),
          _F(-0.1666666203982298255503735617821803316473960876464843750000000000))


def _libm_each(fn: Any, ref: Any, t: np.ndarray) -> np.ndarray:
    if fn is None:  # pragma: no cover - no C math library
        return ref(t.astype(np.float64)).astype(_F)
    return np.array([fn(float(v)) for v in t], _F)


def _sincos_packets(x_in: np.ndarray, sine: bool) -> np.ndarray:
    x = np.abs(x_in)
    yr = x * _F(0.636619746685028076171875) + _F(12582912.0)
    yi = yr.view(np.int32)
    y = yr - _F(12582912.0)
    for c in _REDUCE:
        x = y * c + x
    sign = (x_in.view(_U) ^ (yi.view(_U) << _U(30))) if sine else \
        ((yi + 1).view(_U) << _U(30))
    x2 = x * x
    p_cos = _horner(x2, _COS_P)
    p_sin = _horner(x2, _SIN_P) * x2 * x + x
    use_sin = (yi & 1) == 0
    if not sine:
        use_sin = ~use_sin
    out = (np.where(use_sin, p_sin, p_cos).view(_U) ^ (sign & _U(0x80000000))).view(_F)
    huge = np.abs(x_in) >= _F(25966.0 if sine else 18838.0)
    if huge.any():  # Eigen's Payne-Hanek path: the C library's value instead
        fin = huge & np.isfinite(x_in)
        out[fin] = _libm_each(_SINF if sine else _COSF, np.sin if sine else np.cos, x_in[fin])
    return out


def sin_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Sin`` of ``a`` (any shape)."""
    return _by_packets(a, lambda x: _sincos_packets(x, True),
                       lambda t: _libm_each(_SINF, np.sin, t))


def cos_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Cos`` of ``a`` (any shape)."""
    return _by_packets(a, lambda x: _sincos_packets(x, False),
                       lambda t: _libm_each(_COSF, np.cos, t))
