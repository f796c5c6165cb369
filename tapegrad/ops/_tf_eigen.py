"""TensorFlow 2.21's float32 CPU kernels for ``Exp``, ``Tanh`` and ``Sigmoid``, bit for bit.

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
* ``Sigmoid``: Eigen's ``scalar_logistic_op<float>``: on packets, ``e / (1 + e)`` with
  ``e = exp(x / 2)^2`` from a degree-5 polynomial (the input clamped above at
  16.6355324, 0 below -104); the scalar tail ``e = expf(min(x, 16.6355324))``.

NumPy's own ``tanh``, ``exp`` and the stable sigmoid are correctly rounded or close to
it and differ from these in the last bit on about half of all values, which is
enough to change the printed digits of a Keras model's outputs and losses.
"""

from __future__ import annotations

import numpy as np

from ._tf_softmax import _eigen_pexp, _ftz, _glibc_expf

_F = np.float32
_PACKET = 8

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
    shape = np.shape(a)
    x = _daz(a)
    k = x.size - x.size % _PACKET
    with np.errstate(all="ignore"):
        out = _eigen_pexp(x) if k == x.size else np.concatenate(
            [_eigen_pexp(x[:k]), _glibc_expf(x[k:])])
    return out.astype(_F, copy=False).reshape(shape)


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
    shape = np.shape(a)
    x = _daz(a)
    k = x.size - x.size % _PACKET
    with np.errstate(all="ignore"):
        out = _logistic_packets(x) if k == x.size else np.concatenate(
            [_logistic_packets(x[:k]), _logistic_scalar(x[k:])])
        out = np.where(np.isnan(x), x, out)  # NaN in, NaN out
    return _ftz(out).reshape(shape)
