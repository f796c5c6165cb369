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
  halves on packet boundaries, and each piece takes ``expf`` on its own last
  ``len % 8`` values); ``log`` by Eigen's ``plog_float`` on whole
  packets of rows, libm ``logf`` on the last ``rows % 8``; then ``x - max - log``.

Both run with flush-to-zero (TensorFlow sets it on its threads): subnormal
results become zero.  Every step is vectorised over rows; the loops are over
vector positions inside a row (at most 16 per row).

float64 and float16 take neither oneDNN path (oneDNN has no f64 softmax; its
f16 one needs AVX512-FP16, AMX-FP16 or AVX-NE-CONVERT, and TensorFlow logs
"oneDNN supports DT_HALF only on platforms with AVX-512" and falls back):
both run Eigen's ``SoftmaxEigenImpl`` for both ops, measured bit for bit:

* float64 (AVX ``Packet4d``, no FMA): ``pexp_double`` (Cephes' Padé form
  ``1 + 2 px / (qx - px)``) and ``plog_double`` on packets, glibc's ``exp`` /
  ``log`` on scalar leftovers; sums by the same inner-most reducer with
  4-double packets (tree-split past 4096).  ``Softmax``'s ``exp`` is an
  element-wise assignment that Eigen tiles: its blocks hold
  ``int(40000 / 15.75) = 2539`` coefficients (the cost model's 40000-cycle
  task over ``exp``'s 51 cycles / 4 lanes, two 8-byte loads at 11/64 cycles a
  byte and a 1/4-cycle subtraction), ``ceil(2539 / n)`` rows of ``n`` at a
  time or 2539-long pieces of longer rows, and the last ``len % 4`` of each
  contiguous run take the scalar ``exp``.
* float16 (``Packet8h``): every operation converts to float32, computes and
  rounds back to half, so ``x - max``, each ``exp`` (``pexp_float``) and every
  addition of the sum are rounded to half; the sum's lanes are reduced in
  float32 (``predux``) and rounded; leaves of the tree reduction are 200
  packets (1600 halves).  Rounded to half, ``pexp_float`` and glibc's
  ``expf`` agree for every non-positive half, as do ``plog_float`` and
  ``logf`` for every half >= 1 (the sums here), so where the scalar leftovers
  fall does not matter.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
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


def libm_float_fn(name: str) -> Any:
    """The C math library's float function ``name`` (``logf``, ``log1pf``), or None."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = getattr(lib, name)
    except (OSError, AttributeError):  # pragma: no cover - no C math library
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


_LOGF = libm_float_fn("logf")


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


def _exp_sum_leaf(sh: np.ndarray) -> np.ndarray:
    """A leaf of LogSoftmax's ``sum(exp(.))``: Eigen's leaf loop evaluates ``exp`` on the
    leaf's own whole packets (``pexp_float``) and its last ``len % 8`` values (glibc's
    ``expf``), so a piece of a split row has its own scalar tail."""
    n = sh.shape[1]
    v = n // 8 * 8
    e = np.empty_like(sh)
    e[:, :v] = _eigen_pexp(sh[:, :v])
    if v < n:
        e[:, v:] = _glibc_expf(sh[:, v:])
    return _eigen_leaf_sum(e)


def log_softmax_rows(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``LogSoftmax`` of each row of the 2-D array ``x``."""
    with np.errstate(all="ignore"):
        x = _ftz(np.ascontiguousarray(x, _F))
        rows = x.shape[0]
        sh = x - x.max(axis=1, keepdims=True)
        # rows longer than 8192 split where their flat start falls in a packet
        s = _row_sums(sh, 8, 1024, _exp_sum_leaf)
        w = rows // 8 * 8
        lse = np.empty_like(s)
        lse[:w] = _eigen_plog(s[:w])
        lse[w:] = _libm_logf(s[w:])
        return sh - lse[:, None]


# ----------------------------------------------------------- Eigen, float64
_D = np.float64
_TINY64 = np.finfo(np.float64).tiny


def _ftz64(a: np.ndarray) -> np.ndarray:
    """Flush float64 subnormals to (signed) zero, as with MXCSR FTZ/DAZ."""
    sub = np.abs(a) < _TINY64
    if sub.any():
        a = np.where(sub, np.copysign(_D(0), a), a)
    return a


_E64_HI, _E64_LO = 709.784, -709.784
_E64_LOG2EF = 1.4426950408889634073599
_E64_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_E64_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1,
          2.00000000000000000009e0)
_E64_C1, _E64_C2 = 0.693145751953125, 1.42860682030941723212e-6


def _eigen_pexp_double(x: np.ndarray) -> np.ndarray:
    """Eigen's ``pexp_double`` (AVX, no FMA: a multiply-add rounds twice), with flush-to-zero.

    For the non-positive (or NaN) arguments of a softmax; in-place steps, same roundings.
    """
    zero = x < _E64_LO
    r = np.minimum(x, _E64_HI)                     # NaN stays NaN
    fx = r * _E64_LOG2EF
    fx += 0.5
    np.floor(fx, out=fx)
    t = fx * _E64_C1
    r -= t
    np.multiply(fx, _E64_C2, out=t)
    r -= t
    r2 = r * r
    px = r2 * _E64_P[0]
    px += _E64_P[1]
    px *= r2
    px += _E64_P[2]
    px *= r
    qx = np.multiply(r2, _E64_Q[0], out=t)
    qx += _E64_Q[1]
    qx *= r2
    qx += _E64_Q[2]
    qx *= r2
    qx += _E64_Q[3]
    qx -= px
    px /= qx
    px *= 2.0
    px += 1.0
    # pldexp (four partial powers of two): exact for normal results, subnormal ones flush;
    # a NaN's exponent is any integer (its mantissa stays NaN)
    np.clip(fx, -2099.0, 2099.0, out=fx)
    out = np.ldexp(px, fx.astype(np.int32))
    out[out < _TINY64] = 0.0                       # the results are >= 0
    np.copyto(out, x, where=x > out)               # pmax(out, x): +inf in, +inf out
    out[zero] = 0.0
    return out


_CHUNK = 16000   # elements: each temporary stays under malloc's mmap threshold (128 KiB)


def _by_chunks(fn: Any, x: np.ndarray) -> np.ndarray:
    """An element-wise ``fn`` applied in chunks: large temporaries are mapped and faulted
    in afresh at every call, which made the float64 exp four times slower."""
    if x.size <= _CHUNK:
        return fn(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    for i in range(0, flat.size, _CHUNK):
        out[i:i + _CHUNK] = fn(flat[i:i + _CHUNK])
    return out.reshape(x.shape)


_L64_P = (1.01875663804580931796E-4, 4.97494994976747001425E-1, 4.70579119878881725854E0,
          1.44989225341610930846E1, 1.79368678507819816313E1, 7.70838733755885391666E0)
_L64_Q = (1.0, 1.12873587189167450590E1, 4.52279145837532221105E1, 8.29875266912776603211E1,
          7.11544750618563894466E1, 2.31251620126765340583E1)
_LN2_64 = 0.693147180559945286226764


def _eigen_plog_double(v: np.ndarray) -> np.ndarray:
    """Eigen's ``plog_double`` (Cephes' ``x - x²/2 + x³ P(x)/Q(x)``; AVX, no FMA)."""
    m, ex = np.frexp(v)
    small = m < 0.70710678118654752440
    e = ex.astype(_D) - small
    x = m - 1.0 + np.where(small, m, 0.0)
    x2 = x * x
    x3 = x2 * x
    y = (_L64_P[0] * x + _L64_P[1]) * x + _L64_P[2]
    y1 = (_L64_P[3] * x + _L64_P[4]) * x + _L64_P[5]
    num = (y * x3 + y1) * x3
    y = (_L64_Q[0] * x + _L64_Q[1]) * x + _L64_Q[2]
    y1 = (_L64_Q[3] * x + _L64_Q[4]) * x + _L64_Q[5]
    y = num / (y * x3 + y1)
    y = -0.5 * x2 + y
    out = e * _LN2_64 + (x + y)
    out = np.where(v == np.inf, np.inf, out)
    out = np.where((v < 0) | np.isnan(v), np.nan, out)
    return np.where(v == 0, -np.inf, out)


def _c_exp(v: float) -> float:
    return math.exp(v) if v < 709.0 else (math.inf if v == v else v)


def _c_log(v: float) -> float:
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)


def _glibc_exp(x: np.ndarray) -> np.ndarray:
    """The C library's ``exp`` (Eigen's scalar exp) of the few leftover values, flushed.

    ``math.exp`` is that function (glibc's, chosen at load time for the CPU, as
    TensorFlow's is); only the scalar leftovers of each run go through it.
    """
    flat = x.ravel()
    return _ftz64(np.fromiter(map(_c_exp, flat.tolist()), _D, flat.size).reshape(x.shape))


def _glibc_log(x: np.ndarray) -> np.ndarray:
    flat = x.ravel()
    return np.fromiter(map(_c_log, flat.tolist()), _D, flat.size).reshape(x.shape)


def _predux(v: np.ndarray) -> np.ndarray:
    """An AVX packet's horizontal sum: the halves added, then again, down to one lane."""
    while v.shape[1] > 1:
        h = v.shape[1] // 2
        v = v[:, :h] + v[:, h:]
    return v[:, 0]


def _leaf_sum(e: np.ndarray, packet: int) -> np.ndarray:
    """Eigen's vectorised inner-most reducer over each row, in ``e``'s dtype.

    Four packet accumulators over groups of ``4 * packet``, combined in order;
    the remaining whole packets into the first; the scalar leftovers into a
    scalar; then ``scalar + predux(packet)``.  Every addition is one of
    ``e``'s dtype (float16 ones round to half, as Eigen's ``Packet8h``).
    """
    rows, n = e.shape
    g4 = n // (4 * packet)
    acc = np.zeros((rows, packet), e.dtype)
    if g4:
        grp = e[:, :g4 * 4 * packet].reshape(rows, g4, 4, packet)
        if e.dtype == np.float16:   # element-wise half additions, each rounded
            a = grp[:, 0].copy()
            for k in range(1, g4):
                a += grp[:, k]
        else:                       # accumulate adds in order
            a = np.add.accumulate(grp, axis=1)[:, -1]
        acc = ((a[:, 0] + a[:, 1]) + a[:, 2]) + a[:, 3]
    for k in range(g4 * 4 * packet, n // packet * packet, packet):
        acc = acc + e[:, k:k + packet]
    s = np.zeros(rows, e.dtype)
    for j in range(n // packet * packet, n):
        s = s + e[:, j]
    red = _predux(acc.astype(_F)).astype(e.dtype) if e.dtype == np.float16 else _predux(acc)
    return s + red


def _tree_sum(a: np.ndarray, first: int, packet: int, leaf: int, fn: Any) -> np.ndarray:
    """Eigen's tree reduction (halves split on packet boundaries) of rows starting at ``first``."""
    n = a.shape[1]
    if n <= packet * leaf:
        return fn(a)
    split = packet * -(-(first + -(-n // 2)) // packet)
    left = min(split - first, n)
    out = np.zeros(a.shape[0], a.dtype) + _tree_sum(a[:, :left], first, packet, leaf, fn)
    if left < n:
        out = out + _tree_sum(a[:, left:], split, packet, leaf, fn)
    return out


def _row_sums(a: np.ndarray, packet: int, leaf: int, fn: Any) -> np.ndarray:
    """Each row's reduction; long rows split where their flat start falls in a packet."""
    rows, n = a.shape
    if n <= packet * leaf:
        return fn(a)
    out = np.empty(rows, a.dtype)
    phase = (np.arange(rows) * n) % packet
    for k in np.unique(phase):
        sel = phase == k
        out[sel] = _tree_sum(a[sel], int(k), packet, leaf, fn)
    return out


# Eigen's tiled assignment of Softmax's exp: blocks of int(40000 / 15.75) coefficients
_EXP_BLOCK = 2539


def _exp_block_tails(e: np.ndarray, sh: np.ndarray) -> None:
    """Recompute, with the scalar exp, the last ``len % 4`` of each contiguous run of a block.

    Eigen's block mapper (skewed to the inner dimension) takes ``min(n, 2539)``
    columns and ``ceil(2539 / columns)`` rows a block; a block of whole rows is
    one contiguous run, a block of a row's piece one run per row.
    """
    rows, n = sh.shape
    if n >= _EXP_BLOCK:
        for c0 in range(0, n, _EXP_BLOCK):
            c1 = min(n, c0 + _EXP_BLOCK)
            k = (c1 - c0) % 4
            if k:
                e[:, c1 - k:c1] = _glibc_exp(sh[:, c1 - k:c1])
        return
    per = -(-_EXP_BLOCK // n)                     # whole rows per block
    starts = np.arange(0, rows, per) * n
    ends = np.minimum(starts + per * n, rows * n)
    k = (ends - starts) % 4
    idx = [np.arange(b - t, b) for b, t in zip(ends.tolist(), k.tolist()) if t]
    if idx:
        ii = np.concatenate(idx)
        ef, sf = e.reshape(-1), sh.reshape(-1)
        ef[ii] = _glibc_exp(sf[ii])


def _exp_sum_leaf64(sh: np.ndarray) -> np.ndarray:
    """A leaf of LogSoftmax's ``sum(exp(.))``: pexp on whole packets, the C exp on the rest."""
    n = sh.shape[1]
    v = n // 4 * 4
    e = np.empty_like(sh)
    e[:, :v] = _by_chunks(_eigen_pexp_double, sh[:, :v])
    if v < n:
        e[:, v:] = _glibc_exp(sh[:, v:])
    return _leaf_sum(e, 4)


def softmax_rows_f64(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float64 ``Softmax`` (Eigen) of each row of the 2-D array ``x``."""
    with np.errstate(all="ignore"):
        x = _ftz64(np.ascontiguousarray(x, _D))
        sh = _ftz64(x - x.max(axis=1, keepdims=True))
        e = _by_chunks(_eigen_pexp_double, sh)
        _exp_block_tails(e, sh)
        s = _row_sums(e, 4, 1024, lambda a: _leaf_sum(a, 4))
        e *= (1.0 / s)[:, None]
        return _ftz64(e)


def log_softmax_rows_f64(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float64 ``LogSoftmax`` (Eigen) of each row of the 2-D array ``x``."""
    with np.errstate(all="ignore"):
        x = _ftz64(np.ascontiguousarray(x, _D))
        rows = x.shape[0]
        sh = _ftz64(x - x.max(axis=1, keepdims=True))
        s = _row_sums(sh, 4, 1024, _exp_sum_leaf64)
        w = rows // 4 * 4
        lse = np.empty_like(s)
        lse[:w] = _eigen_plog_double(s[:w])
        lse[w:] = _glibc_log(s[w:])
        sh -= lse[:, None]
        return sh


# ----------------------------------------------------------- Eigen, float16
_H = np.float16


def _shifted_half(x: np.ndarray) -> np.ndarray:
    xf = np.ascontiguousarray(x, _H).astype(_F)
    return (xf - xf.max(axis=1, keepdims=True)).astype(_H)


def softmax_rows_f16(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float16 ``Softmax`` (Eigen, each step in float32 rounded to half)."""
    with np.errstate(all="ignore"):
        sh = _shifted_half(x)
        e = _by_chunks(_eigen_pexp, sh.astype(_F)).astype(_H)
        s = _row_sums(e, 8, 200, lambda a: _leaf_sum(a, 8))
        inv = (_F(1) / s.astype(_F)).astype(_H)
        return (e.astype(_F) * inv.astype(_F)[:, None]).astype(_H)


def log_softmax_rows_f16(x: np.ndarray) -> np.ndarray:
    """TensorFlow's float16 ``LogSoftmax`` (Eigen, each step in float32 rounded to half)."""
    with np.errstate(all="ignore"):
        sh = _shifted_half(x)
        e = _by_chunks(_eigen_pexp, sh.astype(_F)).astype(_H)
        s = _row_sums(e, 8, 200, lambda a: _leaf_sum(a, 8))
        lse = _eigen_plog(s.astype(_F)).astype(_H)
        return (sh.astype(_F) - lse.astype(_F)[:, None]).astype(_H)


_SOFTMAX = {np.dtype(np.float32): softmax_rows, np.dtype(np.float64): softmax_rows_f64,
            np.dtype(np.float16): softmax_rows_f16}
_LOG_SOFTMAX = {np.dtype(np.float32): log_softmax_rows, np.dtype(np.float64): log_softmax_rows_f64,
                np.dtype(np.float16): log_softmax_rows_f16}
TF_SOFTMAX_DTYPES = frozenset(_SOFTMAX)


def _on_last_axis(fn: Any, x: np.ndarray, axis: int) -> np.ndarray:
    # TensorFlow swaps ``axis`` with the last one (not a move), which orders the rows
    a = np.swapaxes(x, axis, -1)
    out = fn(a.reshape(-1, a.shape[-1])).reshape(a.shape)
    return np.swapaxes(out, -1, axis)


def tf_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``tf.nn.softmax`` of a float32/float64/float16 array along ``axis``, TensorFlow's bits."""
    return _on_last_axis(_SOFTMAX[x.dtype], x, axis)


def tf_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``tf.nn.log_softmax`` of a float32/float64/float16 array along ``axis``, TensorFlow's bits."""
    return _on_last_axis(_LOG_SOFTMAX[x.dtype], x, axis)
