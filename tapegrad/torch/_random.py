"""PyTorch's CPU random number generator, reproduced.

PyTorch's default CPU generator is an MT19937 seeded with ``init_genrand``
(default seed 67280421310721, truncated to 32 bits).  NumPy's ``MT19937`` bit
generator with legacy seeding produces the same 32-bit stream, and the
transformations below are PyTorch's (``uniform_real_distribution``,
``normal_distribution`` with its cached second Box-Muller sample,
``normal_fill`` for float32 tensors of 16 or more elements, ``random_from_to``
and ``randperm``).  So ``torch.manual_seed(0); torch.rand(3)`` gives the same
numbers as PyTorch (float32 normals of 16+ elements to within one ulp).

Bernoulli draws with a float ``p`` (``bernoulli_(p)``, so every dropout mask)
follow the CPU kernel PyTorch picks at run time: on Intel processors (MKL
builds) one 32-bit word seeds Intel MKL's ``VSL_BRNG_MCG31`` stream and
``viRngBernoulli(BERNOULLI_ICDF)`` draws every element from it (a 31-bit
multiplicative congruential generator, reproduced here with vectorised
modular powers); on other processors (AMD, ARM) each element takes one
double-precision uniform from the MT19937 stream (two 32-bit words) and is 1
when it is below ``p``.  Tensor probabilities (``torch.bernoulli(probs)``)
always take one uniform per element in the probabilities' precision.

>>> import tapegrad.torch as torch
>>> _ = torch.manual_seed(0)
>>> torch.rand(2)
tensor([0.4963, 0.7682])
"""

from __future__ import annotations

import math
import os
import platform
import sys
from typing import Any

import numpy as np

from .._core.mode import STATE as _STATE
from ..autodiff import tracing as _tracing

DEFAULT_SEED = 67280421310721


class Generator:
    """A PyTorch-compatible CPU random generator (``torch.Generator``).

    >>> import tapegrad.torch as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> torch.rand(1, generator=g)
    tensor([0.4963])
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self._bg = np.random.MT19937()
        self._seed = DEFAULT_SEED
        self._next_double: float | None = None
        self._next_float: float | None = None  # kept for PyTorch's state bytes only
        self._fresh = True  # seeded, nothing drawn yet (PyTorch's state then says next=0)
        self._bg._legacy_seeding(DEFAULT_SEED & 0xFFFFFFFF)

    def __repr__(self) -> str:
        # PyTorch's generator is a C++ object and prints as one
        return f"<torch._C.Generator object at {hex(id(self))}>"

    # -- seeding ---------------------------------------------------------------
    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        if seed < 0:
            seed &= 0xFFFFFFFFFFFFFFFF
        self._seed = seed
        self._bg._legacy_seeding(seed & 0xFFFFFFFF)
        self._next_double = None
        self._next_float = None
        self._fresh = True
        return self

    def seed(self) -> int:
        s = int.from_bytes(np.random.default_rng().bytes(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Any:
        """The state as PyTorch's 5056-byte ``torch.uint8`` tensor (see ``_rng_state``)."""
        from . import _rng_state
        from ._tensor import _wrap

        st = self._bg.state["state"]
        return _wrap(_rng_state.pack(self._seed, st["key"], int(st["pos"]), self._fresh,
                                     self._next_double, self._next_float))

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from :meth:`get_state` (tapegrad's or PyTorch's bytes); the bytes
        are parsed, never unpickled, and nothing changes if they are invalid."""
        from . import _rng_state

        seed, key, pos, fresh, nd, nf = _rng_state.unpack(new_state)
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._seed, self._next_double, self._next_float, self._fresh = seed, nd, nf, fresh
        return self

    # -- raw streams -------------------------------------------------------------
    def _u32(self, n: int) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.uint64)
        self._fresh = False
        return np.asarray(self._bg.random_raw(n), dtype=np.uint64)

    def _u64(self, n: int) -> np.ndarray:
        r = self._u32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # -- distributions -----------------------------------------------------------
    def uniform(self, n: int, dtype: np.dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """``n`` draws of U(low, high) in ``dtype`` (PyTorch's ``uniform_``)."""
        _tracing.note_break("random numbers")
        dtype = np.dtype(dtype)
        if dtype == np.float64:
            x = (self._u64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
            return x * (high - low) + low
        digits = 24 if dtype == np.float32 else 11
        ft = np.float32 if dtype == np.float32 else dtype.type
        x = ((self._u32(n) & np.uint64((1 << digits) - 1)).astype(np.float64)
             * 2.0 ** -digits).astype(ft)
        lo, hi = ft(low), ft(high)
        # PyTorch's kernel computes x * (to - from) + from with a fused multiply-add (one
        # rounding): exact in float64, then rounded once
        span = np.float64(ft(hi - lo))
        return (x.astype(np.float64) * span + np.float64(lo)).astype(dtype)

    def exponential(self, n: int, dtype: np.dtype, lambd: float = 1.0) -> np.ndarray:
        """``n`` draws of Exp(lambd) in ``dtype`` (PyTorch's CPU ``exponential_``): one double
        uniform each, ``-log1p(-u) / lambd`` with the C library's ``log1p`` (its bits),
        rounded once to ``dtype``."""
        u = self.uniform(n, np.dtype(np.float64)).tolist()
        inv = -1.0 / float(lambd)
        vals = np.fromiter((inv * math.log1p(-v) for v in u), dtype=np.float64, count=n)
        return vals.astype(dtype)

    def _normal_doubles(self, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.float64)
        k = 0
        if n and self._next_double is not None:
            out[0] = self._next_double
            self._next_double = None
            k = 1
        m = n - k
        if m > 0:
            pairs = (m + 1) // 2
            r = self._u64(2 * pairs) & np.uint64((1 << 53) - 1)
            u = r.astype(np.float64) * 2.0 ** -53
            u1, u2 = u[0::2], u[1::2]
            radius = np.sqrt(-2.0 * np.log1p(-u2))
            theta = 2.0 * math.pi * u1
            c = radius * np.cos(theta)
            s = radius * np.sin(theta)
            inter = np.empty(2 * pairs, dtype=np.float64)
            inter[0::2] = c
            inter[1::2] = s
            out[k:] = inter[:m]
            if m % 2:
                self._next_double = float(s[-1])
        return out

    def normal(self, n: int, dtype: np.dtype, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        """``n`` draws of N(mean, std^2) in ``dtype`` (PyTorch's ``normal_``)."""
        _tracing.note_break("random numbers")
        dtype = np.dtype(dtype)
        if dtype in (np.float32, np.float64) and n >= 16:
            data = self.uniform(n, dtype)
            _normal_fill(data, n, mean, std)
            tail = n % 16
            if tail:
                data[n - 16:] = self.uniform(16, dtype)
                _normal_fill(data[n - 16:], 16, mean, std)
            return data
        return (self._normal_doubles(n) * std + mean).astype(dtype)

    def bernoulli(self, shape: tuple[int, ...], p: float, order: Any = None) -> np.ndarray:
        """Bernoulli(p) draws as booleans of ``shape``, as PyTorch's ``bernoulli_(p)`` fills a
        tensor whose memory visits the axes in ``order`` (see :func:`fill_order`; ``None``:
        row-major).  The MKL kernel always fills row-major (through a contiguous buffer)."""
        _tracing.note_break("random numbers")
        n = int(np.prod(shape)) if shape else 1
        if bernoulli_kernel() == "mkl":
            # ATen's MKL kernel: seed = generator->random(), one MCG31 stream skipped ahead
            # per parallel chunk, which is the one stream whatever the thread count
            seed = int(self._u32(1)[0])
            return (mcg31_uniform32(seed, n) < np.float32(p)).reshape(shape)
        return _in_order(self.uniform(n, np.dtype(np.float64)) < p, shape, order)

    def bernoulli_tensor(self, probs: np.ndarray, order: Any = None) -> np.ndarray:
        """One Bernoulli draw per element of ``probs`` (PyTorch's ``bernoulli_(Tensor)``):
        a uniform in double precision for float64 probabilities, single otherwise, visited
        in ``order`` as :meth:`bernoulli`."""
        _tracing.note_break("random numbers")
        probs = np.asarray(probs)
        dt = np.dtype(np.float64 if probs.dtype == np.float64 else np.float32)
        u = _in_order(self.uniform(probs.size, dt), probs.shape, order)
        return u < probs.astype(dt, copy=False)

    def integers(self, n: int, low: int, high: int) -> np.ndarray:
        """``n`` draws from [low, high) (PyTorch's ``random_(from, to)``)."""
        _tracing.note_break("random numbers")
        rng = high - low
        raw = self._u64(n) if rng >= (1 << 28) else self._u32(n)
        return (raw % np.uint64(rng)).astype(np.int64) + low

    def permutation(self, n: int) -> np.ndarray:
        """PyTorch's CPU ``randperm`` (forward Fisher-Yates on 32-bit draws)."""
        _tracing.note_break("random numbers")
        raw = self._u32(max(n - 1, 0)) if n < (1 << 24) else self._u64(max(n - 1, 0))
        # the offsets of all steps at once (exact in uint64), the swaps on Python ints
        zs = (raw[:max(n - 1, 0)] % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        r = list(range(n))
        for i, z in enumerate(zs):
            j = i + z
            r[i], r[j] = r[j], r[i]
        return np.array(r, dtype=np.int64)


def _normal_fill(data: np.ndarray, n: int, mean: float, std: float) -> None:
    """PyTorch's ``normal_fill``: Box-Muller on blocks of 16 uniforms, in the data's dtype."""
    blocks = n // 16
    if not blocks:
        return
    ft = data.dtype.type
    d = data[: blocks * 16].reshape(blocks, 16)
    u1 = ft(1) - d[:, :8]
    u2 = d[:, 8:].copy()
    with np.errstate(all="ignore"):
        radius = np.sqrt(ft(-2) * np.log(u1))
    theta = ft(2.0 * math.pi) * u2
    d[:, :8] = radius * np.cos(theta) * ft(std) + ft(mean)
    d[:, 8:] = radius * np.sin(theta) * ft(std) + ft(mean)


def fill_order(arr: np.ndarray, dense_only: bool = False) -> tuple[int, ...] | None:
    """The axes of ``arr`` from the outermost in memory to the innermost: the order in which
    PyTorch's serial CPU kernels (a ``TensorIterator``) fill a tensor with these strides;
    ``None`` when that is row-major.  ``dense_only``: the rule of ``empty_like``, which keeps
    a layout only if it is dense and non-overlapping (otherwise the new tensor is
    contiguous, so row-major)."""
    if arr.ndim < 2 or arr.flags.c_contiguous:
        return None
    st = arr.strides
    if any(x < 0 for x in st):
        return None
    perm = tuple(sorted(range(arr.ndim), key=lambda i: -st[i] if arr.shape[i] > 1 else 0))
    if dense_only:
        expect = arr.itemsize
        for i in reversed(perm):
            if arr.shape[i] > 1 and st[i] != expect:
                return None
            expect *= arr.shape[i]
    return None if perm == tuple(range(arr.ndim)) else perm


def _in_order(flat: np.ndarray, shape: tuple[int, ...], order: Any) -> np.ndarray:
    """``flat`` laid into ``shape`` visiting the axes in ``order`` (outermost first)."""
    if order is None:
        return flat.reshape(shape)
    return flat.reshape(tuple(shape[i] for i in order)).transpose(np.argsort(order))


# --------------------------------------------------------------------------- MKL's MCG31m1
_M31 = (1 << 31) - 1
_A31 = 1132489760
_BLOCK = 2048


def _powers(base: int, n: int, x0: int = 1) -> np.ndarray:
    """``x0 * base**j mod (2**31 - 1)`` for ``j < n``, by doubling (products < 2**62)."""
    out = np.empty(n, dtype=np.uint64)
    out[0] = x0 % _M31
    m = np.uint64(_M31)
    s, bp = 1, base % _M31
    while s < n:
        k = min(s, n - s)
        np.remainder(out[:k] * np.uint64(bp), m, out=out[s:s + k])
        bp = bp * bp % _M31
        s += k
    return out


def mcg31_states(seed: int, n: int) -> np.ndarray:
    """The first ``n`` states of Intel MKL's ``VSL_BRNG_MCG31`` stream seeded with ``seed``:
    ``x0 = seed mod (2**31 - 1)`` (1 if that is 0), ``x[k+1] = 1132489760 * x[k] mod
    (2**31 - 1)``.  Blocks of 2048 consecutive powers times each block's start."""
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    x0 = seed % _M31 or 1
    b = min(n, _BLOCK)
    within = _powers(_A31, b)
    starts = _powers(pow(_A31, b, _M31), -(-n // b), x0)
    return np.remainder(starts[:, None] * within[None, :], np.uint64(_M31)).reshape(-1)[:n]


def mcg31_uniform32(seed: int, n: int) -> np.ndarray:
    """MKL's single-precision uniforms on [0, 1) from ``VSL_BRNG_MCG31``: each state times
    ``1 / (2**31 - 1)`` in double precision, rounded to float32 (what its Bernoulli
    inversion compares with ``float(p)``)."""
    return (mcg31_states(seed, n).astype(np.float64) * (1.0 / _M31)).astype(np.float32)


_KERNEL: list[str] = []


def _cpu_is_intel() -> bool:
    """Whether processor 0 is an Intel one (what ATen asks cpuinfo before using MKL)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                for line in f:
                    if line.startswith("vendor_id"):
                        return line.split(":", 1)[1].strip() == "GenuineIntel"
        except OSError:
            return False
        return False
    return "GenuineIntel" in platform.processor()


def bernoulli_kernel() -> str:
    """Which of PyTorch's CPU ``bernoulli_(p)`` kernels this machine's PyTorch runs:
    ``"mkl"`` on Intel x86 processors (PyTorch's Linux and Windows wheels are built with
    MKL), ``"default"`` elsewhere.  ``TAPEGRAD_TORCH_BERNOULLI=mkl`` or ``=default`` picks
    one (to reproduce masks drawn on another machine); read once.

    >>> from tapegrad.torch._random import bernoulli_kernel
    >>> bernoulli_kernel() in ("mkl", "default")
    True
    """
    if not _KERNEL:
        env = os.environ.get("TAPEGRAD_TORCH_BERNOULLI", "").strip().lower()
        _KERNEL.append(env if env in ("mkl", "default") else
                       ("mkl" if _cpu_is_intel() else "default"))
    return _KERNEL[0]


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed PyTorch's default generator; ``torch.manual_seed(0)`` reproduces PyTorch's draws.

    >>> import tapegrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.randint(0, 10, (3,))
    tensor([4, 9, 3])
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically and return the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    return default_generator.get_state()


def set_rng_state(state: Any) -> None:
    default_generator.set_state(state)


def gen(generator: Generator | None) -> Generator:
    if _STATE.levels:  # under vmap(randomness='error') a draw is PyTorch's error
        from ..autodiff.batching import vmap_randomness

        vmap_randomness()
    return default_generator if generator is None else generator
