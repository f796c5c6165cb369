"""TensorFlow 2.21's float32 CPU softmax kernels, emulated bit for bit in NumPy.

Measured against the installed TensorFlow wheel (x86-64, oneDNN on, its
default), the two ops run different kernels:

* ``Softmax`` is oneDNN's JIT softmax (``jit_uni_softmax``, avx512_core:
  16-float vectors, fused multiply-adds).  Per row: the max; ``exp(x - max)``
  by oneDNN's exp (``2 * 2**(n-1) * p(r)``, a degree-5 polynomial); the sum in
  four vector accumulators (vector ``i`` of each group of four into
  accumulator ``i``, the remaining whole vectors into the first ones, the
  masked tail vector into the first), combined ``(a0 + a1) + (a2 + a3)`` and
  reduced across lanes by halving shuffles; then ``exp * (1 / sum)``.
* ``LogSoftmax`` stays on Eigen's kernel (``softmax_op_functor.h``), built
  for AVX without FMA (8-float packets, a multiply-add is a multiply then an
  add).  Per row: ``x - max``; ``exp`` inside the sum (Eigen's ``pexp_float``
  on whole packets, glibc's ``expf`` on the row's tail); the sum by Eigen's
  inner-most reducer (four packet accumulators over groups of 32, one over the
  remaining packets, a scalar tail, ``predux``; rows longer than 8192 split in
  halves on packet boundaries); ``log`` by Eigen's ``plog_float`` on whole
  packets of rows, libm ``logf`` on the last ``rows % 8``; then ``x - max - log``.

Both run with flush-to-zero (TensorFlow sets it on its threads): subnormal
results become zero.  Every step is vectorised over rows; the loops are over
vector positions inside a row (at most 16 per row).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from decimal import Decimal
from typing import Any

import numpy as np

_F = np.float32
_TINY = np.finfo(np.float32).tiny


def _bits(u: int) -> np.float32:
    return np.float32(np.array([u], np.uint32).view(np.float32)[0])


def _ftz(a: np.ndarray) -> np.ndarray:
    """Flush subnormals to (signed) zero, as with MXCSR FTZ."""
    sub = np.abs(a) < _TINY
    if sub.any():
        a = np.where(sub, np.copysign(_F(0), a), a)
    return a


def _fma(a: np.ndarray, b: np.ndarray | np.float32, c: np.ndarray | np.float32) -> np.ndarray:
    """float32 fused multiply-add: the float32 product is exact in float64 (48 bits)."""
    return (np.multiply(a, b, dtype=np.float64) + np.float64(c)).astype(_F)


# --------------------------------------------------------------------- oneDNN
_LN_FLT_MAX = _bits(0x42B17218)
_LN_FLT_MIN = _bits(0xC2AEAC50)
_LOG2EF = _bits(0x3FB8AA3B)
_LN2F = _bits(0x3F317218)
_EXP_POL = (_bits(0x3F7FFFFB), _bits(0x3EFFFEE3), _bits(0x3E2AAD40), _bits(0x3D2B9D0D),
            _bits(0x3C07CFCE))


def _dnnl_exp(x: np.ndarray) -> np.ndarray:
    """oneDNN's eltwise exp (x64 JIT injector, FMA), with flush-to-zero."""
    low = x < _LN_FLT_MIN
    s = np.maximum(np.fmin(x, _LN_FLT_MAX), _LN_FLT_MIN)   # NaN -> ln(FLT_MAX), as vminps
    n = np.floor(s * _LOG2EF + _F(0.5))
    buf = np.multiply(n, -np.float64(_LN2F), dtype=np.float64)
    buf += s
    r = buf.astype(_F)                        # r = fma(-n, ln2, s)
    scale = ((n - _F(1)).astype(np.int32) + 127) << 23
    scale[low] = 0
    y = np.full_like(r, _EXP_POL[4])
    for c in (_EXP_POL[3], _EXP_POL[2], _EXP_POL[1], _EXP_POL[0], _F(1)):
        np.multiply(y, r, out=buf, dtype=np.float64)   # y = fma(y, r, c), no temporaries
        buf += np.float64(c)
        np.copyto(y, buf, casting="unsafe")
    y *= scale.view(_F)
    return _ftz(y) * _F(2)


def _lane_sum16(v: np.ndarray) -> np.ndarray:
    """oneDNN's horizontal sum of 16 lanes: add the lanes 8, 4, 2, 1 apart."""
    lanes = np.arange(16)
    for k in (8, 4, 2, 1):
        v = v + v[:, lanes ^ k]
    return v[:, 0]


def _dnnl_row_sum(e: np.ndarray) -> np.ndarray:
    rows, n = e.shape
    w, unroll = 16, 4
    full, tail = divmod(n, w)
    n_loops, loop_tail = divmod(full, unroll)
    groups = n_loops * unroll * w
    if n_loops:
        acc = np.add.accumulate(e[:, :groups].reshape(rows, n_loops, unroll, w), axis=1)[:, -1]
        accs = [acc[:, i] for i in range(unroll)]
    else:
        accs = [np.zeros((rows, w), _F) for _ in range(max(loop_tail, 1))]
    for i in range(loop_tail):
        accs[i] = accs[i] + e[:, groups + i * w:groups + (i + 1) * w]
    if tail:
        first = accs[0].copy()
        first[:, :tail] += e[:, full * w:]
        accs[0] = first
    if len(accs) == 4:
        v = (accs[0] + accs[1]) + (accs[2] + accs[3])
    elif len(accs) == 3:
        v = (accs[0] + accs[1]) + accs[2]
    elif len(accs) == 2:
        v = accs[0] + accs[1]
    else:
        v = accs[0]
    return _lane_sum16(v)


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Softmax`` of each row of the 2-D array ``x``."""
    with np.errstate(all="ignore"):
        x = _ftz(np.ascontiguousarray(x, _F))
        e = _dnnl_exp(x - x.max(axis=1, keepdims=True))
        inv = _F(1) / _dnnl_row_sum(e)
        return _ftz(e * inv[:, None])


# ---------------------------------------------------------------------- Eigen
_P = (_F(1.37449637986719608306884765625e-3), _F(8.36894474923610687255859375e-3),
      _F(4.166965186595916748046875e-2), _F(0.16666518151760101318359375),
      _F(0.49999988079071044921875))


def _eigen_pexp(x: np.ndarray) -> np.ndarray:
    """Eigen's ``pexp_float`` (AVX, no FMA), with flush-to-zero."""
    zero = x < _F(-104.0)
    xc = np.minimum(x, _F(88.723))
    m = np.floor(xc * _F(1.44269504088896341) + _F(0.5))
    r = m * _F(-0.693359375) + xc
    r = m * _F(2.12194440e-4) + r
    r2 = r * r
    p_even = r2 * _P[0] + _P[2]
    p_odd = r2 * _P[1] + _P[3]
    p_even = r2 * p_even + _P[4]
    y = r * p_odd + p_even
    y = r2 * y + (r + _F(1))
    # pldexp: y * 2**m, exact for normal results; its four partial products round only
    # into the subnormal range, which flush-to-zero empties anyway
    out = _ftz(np.ldexp(y, np.clip(m, -300, 300).astype(np.int32)))
    out = np.maximum(out, x)            # NaN in, NaN out (as pmax)
    if zero.any():
        out[zero] = 0
    return out


def _eigen_plog(x: np.ndarray) -> np.ndarray:
    """Eigen's ``plog_float`` (AVX, no FMA) for the positive normal sums here."""
    m, ex = np.frexp(x)
    m = m.astype(_F)
    e = ex.astype(_F)
    small = m < _F(0.707106781186547524)
    t = m - _F(1)
    e = e - np.where(small, _F(1), _F(0))
    t = t + np.where(small, m, _F(0))
    p = _F(0.18256296349849254) * t + _F(1.0000000190281063)
    p = t * (p * t + _F(1.0000000190281136))
    q = _F(0.049616247954120038) * t + _F(0.59923249590823520)
    q = (q * t + _F(1.4999999999999927)) * t + _F(1.0)
    out = e * _F(0.6931471805599453) + p / q
    out = np.where(x == np.inf, _F(np.inf), out)
    out = np.where((x < 0) | np.isnan(x), _F(np.nan), out)
    return np.where(x == 0, _F(-np.inf), out)


# glibc's expf (sysdeps/ieee754/flt-32/e_expf.c): 2^(k/32) from a table times a cubic,
# in double precision; its table is 2^(i/32) correctly rounded, less i/32 in the exponent
_N = 32
_EXP2_TAB = (np.array([float(Decimal(2) ** (Decimal(i) / _N)) for i in range(_N)], np.float64)
             .view(np.uint64) - (np.arange(_N, dtype=np.uint64) << np.uint64(52)) // np.uint64(_N))
_EXPF_C = (float.fromhex("0x1.c6af84b912394p-5") / _N ** 3,
           float.fromhex("0x1.ebfce50fac4f3p-3") / _N ** 2,
           float.fromhex("0x1.62e42ff0c52d6p-1") / _N)
_INVLN2N = float.fromhex("0x1.71547652b82fep+0") * _N
_SHIFT = float.fromhex("0x1.8p+52")
_EXPF_UNDER = float.fromhex("-0x1.9fe368p6")


def _glibc_expf(x: np.ndarray) -> np.ndarray:
    """glibc's ``expf`` (the scalar tail of Eigen's vectorised exp), with flush-to-zero."""
    xd = x.astype(np.float64)
    z = _INVLN2N * np.where(np.isfinite(xd), xd, 0.0)
    kd = z + _SHIFT
    ki = kd.view(np.uint64)
    r = z - (kd - _SHIFT)
    s = (_EXP2_TAB[(ki % np.uint64(_N)).astype(np.intp)] + (ki << np.uint64(47))).view(np.float64)
    y = ((_EXPF_C[0] * r + _EXPF_C[1]) * (r * r) + (_EXPF_C[2] * r + 1)) * s
    y = np.where(xd < _EXPF_UNDER, 0.0, y)
    y = np.where(np.isnan(xd) | (xd == np.inf), xd, y)
    return _ftz(y.astype(_F))


def _load_logf() -> Any:
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = lib.logf
    except (OSError, AttributeError):  # pragma: no cover - no C math library
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


_LOGF = _load_logf()


def _libm_logf(x: np.ndarray) -> np.ndarray:
    """The C library's ``logf`` (Eigen's scalar log) of the at most 7 sums left over.

    glibc's ``logf`` is table-driven and not always correctly rounded, so it is
    called itself (through ctypes); without a C library, the correctly rounded
    value.
    """
    if _LOGF is None or x.size > 64:  # pragma: no cover - fallback
        return np.log(x.astype(np.float64)).astype(_F)
    return np.array([_LOGF(float(v)) for v in x], _F)


def _predux8(v: np.ndarray) -> np.ndarray:
    h = v[:, :4] + v[:, 4:]
    return (h[:, 0] + h[:, 2]) + (h[:, 1] + h[:, 3])


def _eigen_leaf_sum(e: np.ndarray) -> np.ndarray:
    """``InnerMostDimReducer<.., vectorized, no tree>`` over each row (packets of 8)."""
    rows, n = e.shape
    start = 0
    acc = np.zeros((rows, 8), _F)
    if n >= 32:
        v4 = n // 32 * 32
        a = np.add.accumulate(e[:, :v4].reshape(rows, v4 // 32, 4, 8), axis=1)[:, -1]
        acc = ((a[:, 0] + a[:, 1]) + a[:, 2]) + a[:, 3]
        start = v4
    v = n // 8 * 8
    if start < v:
        acc = np.add.accumulate(
            np.concatenate([acc[:, None], e[:, start:v].reshape(rows, -1, 8)], axis=1),
            axis=1)[:, -1]
    s = np.zeros(rows, _F)
    for j in range(v, n):
        s = s + e[:, j]
    return s + _predux8(acc)


def _eigen_sum(e: np.ndarray, first: int) -> np.ndarray:
    """Eigen's tree reduction of rows starting at flat index ``first`` (one row if split)."""
    n = e.shape[1]
    if n <= 8 * 1024:
        return _eigen_leaf_sum(e)
    split = 8 * -(-(first + -(-n // 2)) // 8)
    left = min(split - first, n)
    out = _F(0) + _eigen_sum(e[:, :left], first)
    if left < n:
        out = out + _eigen_sum(e[:, left:], split)
    return out


def log_softmax_rows(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``LogSoftmax`` of each row of the 2-D array ``x``."""
    with np.errstate(all="ignore"):
        x = _ftz(np.ascontiguousarray(x, _F))
        rows, n = x.shape
        sh = x - x.max(axis=1, keepdims=True)
        v = n // 8 * 8
        e = np.empty_like(sh)
        e[:, :v] = _eigen_pexp(sh[:, :v])
        e[:, v:] = _glibc_expf(sh[:, v:])
        if n <= 8 * 1024:
            s = _eigen_leaf_sum(e)
        else:   # the split point depends on where the row starts
            s = np.concatenate([_eigen_sum(e[i:i + 1], i * n) for i in range(rows)])
        w = rows // 8 * 8
        lse = np.empty_like(s)
        lse[:w] = _eigen_plog(s[:w])
        lse[w:] = _libm_logf(s[w:])
        return sh - lse[:, None]


def _on_last_axis(fn: Any, x: np.ndarray, axis: int) -> np.ndarray:
    # TensorFlow swaps ``axis`` with the last one (not a move), which orders the rows
    a = np.swapaxes(x, axis, -1)
    out = fn(a.reshape(-1, a.shape[-1])).reshape(a.shape)
    return np.swapaxes(out, -1, axis)


def tf_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``tf.nn.softmax`` of a float32 array along ``axis``, TensorFlow's bits."""
    return _on_last_axis(softmax_rows, x, axis)


def tf_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``tf.nn.log_softmax`` of a float32 array along ``axis``, TensorFlow's bits."""
    return _on_last_axis(log_softmax_rows, x, axis)
