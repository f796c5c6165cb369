"""TensorFlow's random kernels on NumPy: Philox4x32-10 and the distributions over it.

Everything here reproduces TensorFlow's CPU kernels bit for bit
(``core/lib/random/philox_random.h``, ``random_distributions.h``,
``core/kernels/random_op.cc``, ``stateless_random_ops.cc``,
``shuffle_common.h``, ``multinomial_op.cc``):

- :func:`philox` is the counter-based generator (10 rounds, 128-bit counter,
  64-bit key), vectorised over counters;
- a :class:`Philox` value is TensorFlow's ``random::PhiloxRandom`` (a counter
  and a key); a distribution reads consecutive 128-bit blocks from it exactly
  as ``FillPhiloxRandom`` does (one block per group of outputs, or 256 blocks
  reserved per group for the rejection-sampled truncated normal);
- the float transforms use the C library's ``logf``/``sinf``/``cosf`` (and
  ``log``/``sin``/``cos`` for float64) through :mod:`ctypes`, because
  TensorFlow's Box-Muller calls them and NumPy's own ``log``/``sin`` round
  differently in about 1% of cases.  Where the C library cannot be loaded,
  the double-precision NumPy functions rounded once stand in (then about 1
  value in 70 differs in its last bit).

>>> p = Philox.from_key_counter((0, 0), (0, 0, 0, 0))
>>> [hex(int(v)) for v in p.blocks(1)[0]]
['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from collections.abc import Callable
from typing import Any

import numpy as np

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_MA, _MB = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_WA, _WB = 0x9E3779B9, 0xBB67AE85
_U32 = np.uint64(32)
_LO = np.uint64(_M32)
# Reserved 128-bit samples per output element (random_op.cc / FillPhiloxRandomTask)
RESERVE = 256


def philox(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 of each row of ``counters`` ((n, 4) uint32) under ``key`` (two uint32)."""
    c0, c1, c2, c3 = (counters[:, i].astype(np.uint64) for i in range(4))
    k0, k1 = int(key[0]) & _M32, int(key[1]) & _M32
    for _ in range(10):
        p0 = _MA * c0
        p1 = _MB * c2
        c0, c1, c2, c3 = ((p1 >> _U32) ^ c1 ^ np.uint64(k0), p1 & _LO,
                          (p0 >> _U32) ^ c3 ^ np.uint64(k1), p0 & _LO)
        k0, k1 = (k0 + _WA) & _M32, (k1 + _WB) & _M32
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


class Philox:
    """TensorFlow's ``PhiloxRandom``: a 128-bit counter and a 64-bit key (immutable)."""

    __slots__ = ("counter", "key")

    def __init__(self, counter: int, key: int) -> None:
        self.counter = int(counter) & ((1 << 128) - 1)
        self.key = int(key) & _M64

    @classmethod
    def from_seeds(cls, seed_lo: int, seed_hi: int) -> Philox:
        """``PhiloxRandom(seed_lo, seed_hi)``: key from ``seed_lo``, counter's top from ``seed_hi``."""
        return cls((int(seed_hi) & _M64) << 64, seed_lo)

    @classmethod
    def from_key_counter(cls, key: tuple[int, int], counter: tuple[int, int, int, int]) -> Philox:
        """From the four 32-bit counter words and two 32-bit key words, low first."""
        c = sum((int(w) & _M32) << (32 * i) for i, w in enumerate(counter))
        return cls(c, (int(key[0]) & _M32) | ((int(key[1]) & _M32) << 32))

    def skip(self, n: int) -> Philox:
        """The generator ``n`` 128-bit blocks further on."""
        return Philox(self.counter + int(n), self.key)

    def _key(self) -> tuple[int, int]:
        return self.key & _M32, self.key >> 32

    def at(self, offsets: np.ndarray) -> np.ndarray:
        """The blocks ((len(offsets), 4) uint32) at counters ``counter + offsets``."""
        off = np.asarray(offsets, dtype=np.uint64)
        base_lo = np.uint64(self.counter & _M64)
        lo = base_lo + off
        hi = np.uint64(self.counter >> 64) + (lo < base_lo).astype(np.uint64)
        ctr = np.stack([lo & _LO, lo >> _U32, hi & _LO, hi >> _U32], axis=1).astype(np.uint32)
        return philox(ctr, self._key())

    def blocks(self, n: int) -> np.ndarray:
        """The next ``n`` blocks ((n, 4) uint32), one per counter value."""
        return self.at(np.arange(n, dtype=np.uint64))

    def words(self, n: int) -> np.ndarray:
        """The first ``n`` 32-bit outputs, in order (``SingleSampleAdapter``)."""
        return self.blocks((n + 3) // 4).reshape(-1)[:n]


def stateless_key_counter(seed0: int, seed1: int) -> Philox:
    """``GenerateKey`` of ``stateless_random_ops.cc``: scramble a seed pair into key and counter."""
    s0, s1 = int(seed0) & _M64, int(seed1) & _M64
    ctr = np.array([[s0 & _M32, s0 >> 32, s1 & _M32, s1 >> 32]], dtype=np.uint32)
    mix = philox(ctr, (0x3EC8F720, 0x02461E29))[0]
    return Philox.from_key_counter((int(mix[0]), int(mix[1])), (0, 0, int(mix[2]), int(mix[3])))


# ---------------------------------------------------------------------------
# The C library's math, element by element (what TensorFlow's kernels call)

def _libm() -> Any:
    name = ctypes.util.find_library("m")
    # the C library TensorFlow's kernels call: glibc / Apple's libm, or the UCRT on Windows
    for cand in ([name] if name else []) + ["libm.so.6", "ucrtbase"]:
        try:
            lib = ctypes.CDLL(cand)
            for fn, ty in (("logf", ctypes.c_float), ("sinf", ctypes.c_float),
                           ("cosf", ctypes.c_float), ("log", ctypes.c_double),
                           ("sin", ctypes.c_double), ("cos", ctypes.c_double)):
                f = getattr(lib, fn)
                f.restype, f.argtypes = ty, [ty]
        except (OSError, AttributeError):
            continue
        return lib
    return None


_LIBM = _libm()


def _elementwise(name: str, x: np.ndarray) -> np.ndarray:
    dt = x.dtype
    if _LIBM is None or x.size == 0:
        fallback: Callable[[np.ndarray], np.ndarray] = getattr(np, name.rstrip("f"))
        return fallback(x.astype(np.float64)).astype(dt)
    f = getattr(_LIBM, name)
    return np.fromiter(map(f, x.tolist()), dtype=dt, count=x.size)


def logf(x: np.ndarray) -> np.ndarray:
    """``logf`` of each float32 (the C library's rounding)."""
    return _elementwise("logf", x)


def sincosf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sinf`` and ``cosf`` of each float32."""
    return _elementwise("sinf", x), _elementwise("cosf", x)


def log64(x: np.ndarray) -> np.ndarray:
    """``log`` of each float64."""
    return _elementwise("log", x)


def sincos64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sin`` and ``cos`` of each float64."""
    return _elementwise("sin", x), _elementwise("cos", x)


# ---------------------------------------------------------------------------
# Bits to numbers (random_distributions.h)

def u32_to_float(x: np.ndarray) -> np.ndarray:
    """``Uint32ToFloat``: 23 random mantissa bits in [1, 2), minus 1."""
    bits = np.uint32(0x3F800000) | (x.astype(np.uint32) & np.uint32(0x7FFFFF))
    return bits.view(np.float32) - np.float32(1.0)


def u16_to_half(x: np.ndarray) -> np.ndarray:
    """``Uint16ToHalf``: 10 random mantissa bits in [1, 2), minus 1."""
    bits = np.uint16(15 << 10) | (x.astype(np.uint16) & np.uint16(0x3FF))
    return bits.view(np.float16) - np.float16(1.0)


def u64_to_double(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """``Uint64ToDouble``: 20 bits of ``x0`` and 32 of ``x1`` as the mantissa in [1, 2), minus 1."""
    man = ((x0.astype(np.uint64) & np.uint64(0xFFFFF)) << _U32) | x1.astype(np.uint64)
    return (np.uint64(1023 << 52) | man).view(np.float64) - 1.0


def box_muller_float(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``BoxMullerFloat``: two float32 normals from two words each."""
    u1 = np.maximum(u32_to_float(x0), np.float32(1.0e-7))
    # 2.0f * M_PI is a double: the angle is rounded to float once, after the product
    v1 = (2.0 * math.pi * u32_to_float(x1).astype(np.float64)).astype(np.float32)
    u2 = np.sqrt(np.float32(-2.0) * logf(u1))
    s, c = sincosf(v1)
    return s * u2, c * u2


def box_muller_double(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray,
                      x3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``BoxMullerDouble``: two float64 normals from four words each."""
    u1 = np.maximum(u64_to_double(x0, x1), 1.0e-7)
    v1 = 2 * math.pi * u64_to_double(x2, x3)
    u2 = np.sqrt(-2.0 * log64(u1))
    s, c = sincos64(v1)
    return s * u2, c * u2


def _interleave(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(a.size + b.size, dtype=a.dtype)
    out[0::2], out[1::2] = a, b
    return out


# ---------------------------------------------------------------------------
# Distributions: ``n`` values from ``gen`` as FillPhiloxRandom lays them out

def uniform(gen: Philox, n: int, dtype: np.dtype) -> np.ndarray:
    """``UniformDistribution`` of a float dtype: values in [0, 1)."""
    dt = np.dtype(dtype)
    if dt == np.float64:
        w = gen.blocks((n + 1) // 2).reshape(-1)
        return u64_to_double(w[0::2], w[1::2])[:n]
    w = gen.blocks((n + 3) // 4).reshape(-1)[:n]
    if dt == np.float16:
        return u16_to_half(w)
    return u32_to_float(w).astype(dt)


def uniform_int(gen: Philox, n: int, lo: int, hi: int, dtype: np.dtype) -> np.ndarray:
    """``UniformDistribution`` of int32/int64: ``lo + bits % (hi - lo)`` (wrapping)."""
    dt = np.dtype(dtype)
    if dt.itemsize == 8:
        w = gen.blocks((n + 1) // 2).reshape(-1).astype(np.uint64)
        bits = (w[0::2] | (w[1::2] << _U32))[:n]
        rng = np.uint64((int(hi) - int(lo)) & _M64)
        return (np.uint64(int(lo) & _M64) + bits % rng).view(np.int64).astype(dt)
    w = gen.blocks((n + 3) // 4).reshape(-1)[:n]
    rng32 = np.uint32((int(hi) - int(lo)) & _M32)
    return (np.uint32(int(lo) & _M32) + w % rng32).view(np.int32).astype(dt)


def full_int(gen: Philox, n: int, dtype: np.dtype) -> np.ndarray:
    """``UniformFullIntDistribution``: every bit random (int32/uint32/int64/uint64)."""
    dt = np.dtype(dtype)
    if dt.itemsize == 8:
        w = gen.blocks((n + 1) // 2).reshape(-1).astype(np.uint64)
        return (w[0::2] | (w[1::2] << _U32))[:n].view(dt)
    return gen.blocks((n + 3) // 4).reshape(-1)[:n].view(dt)


def normal(gen: Philox, n: int, dtype: np.dtype) -> np.ndarray:
    """``NormalDistribution``: Box-Muller normals (float16 rounds float32 ones)."""
    dt = np.dtype(dtype)
    if dt == np.float64:
        w = gen.blocks((n + 1) // 2)
        d0, d1 = box_muller_double(w[:, 0], w[:, 1], w[:, 2], w[:, 3])
        return _interleave(d0, d1)[:n]
    w = gen.blocks((n + 3) // 4).reshape(-1)
    f0, f1 = box_muller_float(w[0::2], w[1::2])
    return _interleave(f0, f1)[:n].astype(dt)


def truncated_normal(gen: Philox, n: int, dtype: np.dtype) -> np.ndarray:
    """``TruncatedNormalDistribution``: normals redrawn until ``|x| < 2``.

    Each group of outputs (4 for float32/float16, 2 for float64) reads its own
    run of 256 reserved blocks, starting at ``counter + group * skip``, and
    takes the first accepted Box-Muller values in order.
    """
    dt = np.dtype(dtype)
    per = 2 if dt == np.float64 else 4
    stride = RESERVE * per // 4
    groups = (n + per - 1) // per
    out = np.zeros((groups, per), dtype=np.float64 if dt == np.float64 else np.float32)
    filled = np.zeros(groups, dtype=np.int64)
    pending = np.arange(groups)
    j = 0
    while pending.size:
        w = gen.at(pending.astype(np.uint64) * np.uint64(stride) + np.uint64(j))
        if dt == np.float64:
            d0, d1 = box_muller_double(w[:, 0], w[:, 1], w[:, 2], w[:, 3])
            cand = np.stack([d0, d1], axis=1)
        else:
            f0, f1 = box_muller_float(w[:, 0::2].reshape(-1), w[:, 1::2].reshape(-1))
            cand = np.stack([f0, f1], axis=1).reshape(-1, 4)
        for k in range(cand.shape[1]):
            take = (np.abs(cand[:, k]) < 2.0) & (filled[pending] < per)
            rows = pending[take]
            out[rows, filled[rows]] = cand[take, k]
            filled[rows] += 1
        pending = pending[filled[pending] < per]
        j += 1
    return out.reshape(-1)[:n].astype(dt)


def shuffle_permutation(gen: Philox, size: int) -> np.ndarray:
    """The permutation ``RandomShuffle`` applies: Fisher-Yates with ``word % (size - i)``."""
    if size <= 1:
        return np.arange(size)
    i = np.arange(size - 1, dtype=np.int64)
    ks = (i + gen.words(size - 1).astype(np.int64) % (size - i)).tolist()  # all at once
    perm = list(range(size))
    for a, k in enumerate(ks):  # the swaps themselves, in order, on a list
        perm[a], perm[k] = perm[k], perm[a]
    return np.array(perm)


def multinomial(gen: Philox, logits: np.ndarray, num_samples: int) -> np.ndarray:
    """``MultinomialFunctor`` on CPU: inverse-CDF sampling with one double per draw.

    Rows are drawn one after another from one stream (the kernel's layout when
    it runs as one shard, which it does below 10,000 units of its cost model).
    """
    batch, classes = logits.shape
    out = np.zeros((batch, num_samples), dtype=np.int64)
    w = gen.words(2 * batch * num_samples)
    u = u64_to_double(w[0::2], w[1::2]).reshape(batch, num_samples) if w.size else \
        np.zeros((batch, num_samples))
    for b in range(batch):
        row = logits[b]
        fin = np.isfinite(row)
        mx = row[fin].max() if fin.any() else np.finfo(row.dtype).min
        cdf = np.cumsum(np.where(fin, np.exp(row.astype(np.float64) - float(mx)), 0.0))
        total = cdf[-1] if classes else 0.0
        out[b] = np.searchsorted(cdf, u[b] * total, side="right")
    return out
