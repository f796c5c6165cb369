"""TensorFlow's rejection samplers on Philox: Poisson, gamma and binomial, bit for bit.

These reproduce the CPU kernels of ``random_poisson_op.cc``,
``random_op.cc`` / ``stateless_random_gamma_op.cc`` (``RandomGamma``,
``StatelessRandomGammaV3``) and ``random_binomial_op.cc``:

- output ``i`` (counted parameter-major: all samples of the first parameter,
  then of the next) reads its own run of Philox blocks starting
  ``reserve * i`` blocks after the op's generator (256 blocks, or 42 for the
  binomial inversion sampler);
- the kernels take their uniforms and normals from a block *last first*
  (``UNIFORM`` macro, ``SampleBuffer``): a block of two doubles gives its
  second value, then its first;
- the arithmetic is double precision with the C library's ``log``, ``exp``,
  ``log1p``, ``pow``, ``lgamma``, ``sin`` and ``cos`` (Python's :mod:`math`
  calls the same C functions, except ``lgamma``, taken from the C library
  through :mod:`ctypes`).

The loops are scalar Python, one output at a time, as the kernels are.

>>> from tapegrad.tf import _philox as px      # tf.random.stateless_poisson([4, 1], [1, 2], [3.0])
>>> poisson(px.stateless_key_counter(1, 2), [3.0], 4, np.dtype(np.float32)).tolist()
[[5.0], [5.0], [4.0], [6.0]]
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ._philox import Philox

_M32 = 0xFFFFFFFF
_M128 = (1 << 128) - 1
_MA, _MB = 0xD2511F53, 0xCD9E8D57
_WA, _WB = 0x9E3779B9, 0xBB67AE85
_PACK_Q = struct.Struct("<Q")
_PACK_D = struct.Struct("<d")


def _lgamma_fn() -> Callable[[float], float]:
    name = ctypes.util.find_library("m")
    for cand in ([name] if name else []) + ["libm.so.6", "ucrtbase"]:
        try:
            f = ctypes.CDLL(cand).lgamma
        except (OSError, AttributeError):
            continue
        f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
        return f
    return math.lgamma


_lgamma = _lgamma_fn()


def block(counter: int, key: int) -> tuple[int, int, int, int]:
    """One Philox4x32-10 block (pure Python: faster than NumPy for a single block)."""
    c0, c1 = counter & _M32, (counter >> 32) & _M32
    c2, c3 = (counter >> 64) & _M32, (counter >> 96) & _M32
    k0, k1 = key & _M32, (key >> 32) & _M32
    for _ in range(10):
        p0 = _MA * c0
        p1 = _MB * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & _M32, (p0 >> 32) ^ c3 ^ k1, p0 & _M32
        k0, k1 = (k0 + _WA) & _M32, (k1 + _WB) & _M32
    return c0, c1, c2, c3


def _u64_to_double(x0: int, x1: int) -> float:
    bits = (1023 << 52) | ((x0 & 0xFFFFF) << 32) | x1
    return float(_PACK_D.unpack(_PACK_Q.pack(bits))[0]) - 1.0


class _Stream:
    """A copy of the op's generator skipped to one output's run of blocks (``pre``: its first
    blocks, computed for all outputs at once)."""

    __slots__ = ("counter", "key", "_uni", "_norm", "_pre")

    def __init__(self, gen: Philox, skip: int, pre: list[list[int]] | None = None) -> None:
        self.counter = (gen.counter + skip) & _M128
        self.key = gen.key
        self._uni: list[float] = []
        self._norm: list[float] = []
        self._pre = pre[::-1] if pre else []

    def _next(self) -> tuple[int, int, int, int] | list[int]:
        self.counter = (self.counter + 1) & _M128
        if self._pre:
            return self._pre.pop()
        return block((self.counter - 1) & _M128, self.key)

    def uniform(self) -> float:
        """The next double of ``UniformDistribution<double>``, last of a block first."""
        if not self._uni:
            w = self._next()
            self._uni = [_u64_to_double(w[0], w[1]), _u64_to_double(w[2], w[3])]
        return self._uni.pop()

    def normal(self) -> float:
        """The next double of ``NormalDistribution<double>`` (Box-Muller), last first."""
        if not self._norm:
            w = self._next()
            u1 = max(_u64_to_double(w[0], w[1]), 1.0e-7)
            v1 = 2 * math.pi * _u64_to_double(w[2], w[3])
            u2 = math.sqrt(-2.0 * math.log(u1))
            self._norm = [math.sin(v1) * u2, math.cos(v1) * u2]
        return self._norm.pop()


_PREFETCH = 2


def _prefetch(gen: Philox, stride: int, count: int) -> list[list[list[int]]]:
    """The first blocks of ``count`` outputs' streams (``stride`` blocks apart), vectorised."""
    if count == 0:
        return []
    offs = (np.arange(count, dtype=np.uint64)[:, None] * np.uint64(stride)
            + np.arange(_PREFETCH, dtype=np.uint64)[None, :]).reshape(-1)
    rows = gen.at(offs).tolist()
    return [rows[i * _PREFETCH:(i + 1) * _PREFETCH] for i in range(count)]


def _highest(dt: np.dtype) -> float:
    return float(np.finfo(dt).max) if dt.kind == "f" else float(np.iinfo(dt).max)


def _poisson_one(s: _Stream, rate: float, top: float) -> float:
    if rate < 10:
        exp_neg_rate = math.exp(-rate)
        prod, x = 1.0, 0.0
        while True:
            prod = prod * s.uniform()
            if prod <= exp_neg_rate and x <= top:
                return x
            x += 1
    log_rate = math.log(rate)
    b = 0.931 + 2.53 * math.sqrt(rate)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    while True:
        u = s.uniform() - 0.5
        v = s.uniform()
        u_shifted = 0.5 - abs(u)
        k = float(math.floor((2.0 * a / u_shifted + b) * u + rate + 0.43))
        if k > top:
            continue
        if u_shifted >= 0.07 and v <= 0.9277 - 3.6224 / (b - 2):
            return k
        if k < 0 or (u_shifted < 0.013 and v > u_shifted):
            continue
        s_ = math.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -rate + k * log_rate - _lgamma(k + 1)
        if s_ <= t:
            return k


def poisson(gen: Philox, rates: Any, num_samples: int, out: np.dtype) -> np.ndarray:
    """``PoissonFunctor``: ``(num_samples, len(rates))`` draws, one per rate per sample."""
    flat = [float(r) for r in np.asarray(rates).reshape(-1).astype(np.float64)]
    res = np.zeros((num_samples, len(flat)), dtype=np.float64)
    top = _highest(out)
    pre = _prefetch(gen, 256, num_samples * len(flat))
    idx = 0
    for j, rate in enumerate(flat):
        for i in range(num_samples):
            s = _Stream(gen, 256 * idx, pre[idx])
            res[i, j] = _poisson_one(s, rate, top) if not math.isnan(rate) else 0.0
            idx += 1
    return res


def gamma(gen: Philox, alphas: Any, num_samples: int) -> np.ndarray:
    """``RandomGamma`` / ``StatelessRandomGamma``: ``(num_samples, len(alphas))`` doubles.

    Both kernels share the sampler (alpha 1 is ``-log1p(-u)``, an exponential).
    """
    flat = [float(a) for a in np.asarray(alphas).reshape(-1).astype(np.float64)]
    res = np.zeros((num_samples, len(flat)), dtype=np.float64)
    pre = _prefetch(gen, 256, num_samples * len(flat))
    idx = 0
    for j, alpha in enumerate(flat):
        less = alpha < 1
        d = alpha + (2.0 / 3 if less else -1.0 / 3)
        c = 1.0 / 3 / math.sqrt(d) if d > 0 else math.nan
        for i in range(num_samples):
            s = _Stream(gen, 256 * idx, pre[idx])
            idx += 1
            if alpha == 1.0:
                u = s.uniform()
                res[i, j] = -math.log1p(-u)
                continue
            if not d > 0:   # alpha <= -2/3 or NaN: the kernel's loop never ends; TF gives NaN
                res[i, j] = math.nan
                continue
            while True:
                x = s.normal()
                v = 1 + c * x
                if v <= 0:
                    continue
                v = v * v * v
                u = s.uniform()
                if (u < 1 - 0.0331 * (x * x) * (x * x)) or (
                        math.log(u) < 0.5 * x * x + d * (1 - v + math.log(v))):
                    r = d * v
                    if less:
                        r *= math.pow(s.uniform(), 1 / alpha)
                    res[i, j] = r
                    break
    return res


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(s: _Stream, count: float, prob: float) -> float:
    geom_sum, num_geom = 0.0, 0
    while True:
        geom = math.ceil(math.log(s.uniform()) / math.log1p(-prob))
        geom_sum += geom
        if geom_sum > count:
            return float(num_geom)
        num_geom += 1


def _btrs(s: _Stream, count: float, prob: float) -> float:
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(math.floor((count + 1) * prob))
    while True:
        u = s.uniform()
        v = s.uniform()
        u = u - 0.5
        us = 0.5 - abs(u)
        k = float(math.floor((2 * a / us + b) * u + c))
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or k > count:
            continue
        v = math.log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upper:
            return k


def binomial(gen: Philox, counts: np.ndarray, probs: np.ndarray,
             num_samples: int) -> np.ndarray:
    """``RandomBinomialFunctor``: ``(num_samples, batch)`` doubles.

    ``counts`` and ``probs`` are the flattened, broadcast parameters in their
    dtype ``T``; ``count * prob`` and ``1 - prob`` are computed in ``T`` as the
    kernel does.
    """
    nb = counts.size
    res = np.zeros((num_samples, nb), dtype=np.float64)
    one, ten, half = (probs.dtype.type(v) for v in (1.0, 10.0, 0.5))
    idx = 0
    for j in range(nb):
        count_t, prob_t = counts[j], probs[j]
        dcount = float(count_t)
        small = prob_t <= half
        pq = prob_t if small else one - prob_t
        sampled = not (dcount <= 0.0 or prob_t <= 0 or prob_t >= one) and (
            prob_t <= half or prob_t > half)
        use_btrs = bool(count_t * pq >= ten)
        stride = 256 if use_btrs else 42
        pre: list[list[list[int]]] = []
        if sampled:   # the batch's streams start idx * stride blocks on; their first blocks
            pre = _prefetch(gen.skip(stride * idx), stride, num_samples)
        for i in range(num_samples):
            if dcount <= 0.0 or prob_t <= 0:
                val = 0.0
            elif prob_t >= one:
                val = dcount
            elif sampled:
                st = _Stream(gen, stride * idx, pre[i])
                draw = (_btrs(st, dcount, float(pq)) if use_btrs
                        else _inversion(st, dcount, float(pq)))
                val = draw if small else dcount - draw
            else:
                val = math.nan
            res[i, j] = val
            idx += 1
    return res
