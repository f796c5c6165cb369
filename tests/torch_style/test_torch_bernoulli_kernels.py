"""PyTorch's two CPU kernels for ``bernoulli_(p)``, reproduced in ``tapegrad.torch._random``.

The MKL kernel (what PyTorch runs on Intel processors) is checked against an
independent pure-Python MCG31m1 recurrence and, where Intel MKL's runtime library can
be loaded (``ctypes.util.find_library("mkl_rt")`` or ``$TAPEGRAD_MKL_RT``), against
MKL's own ``viRngBernoulli`` with ``vslSkipAheadStream`` as ATen calls them.  The
MT19937 kernel (elsewhere) is checked against the generator's own uniforms; the
conformance tests compare whichever kernel this machine's PyTorch runs with PyTorch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.torch import _random

M31 = 2 ** 31 - 1
A31 = 1132489760


def _python_mcg31(seed: int, n: int, skip: int = 0) -> list[int]:
    x = seed % M31 or 1
    for _ in range(skip):
        x = x * A31 % M31
    out = []
    for _ in range(n):
        out.append(x)
        x = x * A31 % M31
    return out


@pytest.fixture
def kernel() -> Iterator[Any]:
    saved = list(_random._KERNEL)

    def use(name: str) -> None:
        _random._KERNEL[:] = [name]
    yield use
    _random._KERNEL[:] = saved


@pytest.mark.parametrize("seed,n", [(0, 3), (1, 2047), (12345, 2048), (M31, 2049),
                                    (2 ** 32 - 1, 5000), (2 ** 31, 1)])
def test_mcg31_states_match_the_recurrence(seed: int, n: int) -> None:
    got = _random.mcg31_states(seed, n)
    assert got.tolist() == _python_mcg31(seed, n)


def test_mcg31_uniforms_are_states_over_the_modulus() -> None:
    u = _random.mcg31_uniform32(987654321, 3000)
    ref = np.array([np.float32(x * (1.0 / M31)) for x in _python_mcg31(987654321, 3000)])
    assert u.dtype == np.float32 and np.array_equal(u, ref)
    assert 0 <= u.min() and u.max() < 1


def test_mkl_kernel_takes_one_word_and_draws_the_mcg31_stream(kernel: Any) -> None:
    kernel("mkl")
    torch.manual_seed(0)
    y = torch.empty(1700).bernoulli_(0.3)
    after = torch.rand(2)
    # the seed is the first 32-bit MT19937 word after manual_seed(0)
    mt = np.random.MT19937()
    mt._legacy_seeding(0)
    words = mt.random_raw(5)
    ref = [np.float32(x * (1.0 / M31)) < np.float32(0.3)
           for x in _python_mcg31(int(words[0]), 1700)]
    assert np.array_equal(y.numpy(), np.array(ref, dtype=np.float32))
    # torch.rand's float32 uniforms use the next words: 24 bits each
    assert after.numpy().tolist() == [float(np.float32((int(w) & (2 ** 24 - 1)) * 2.0 ** -24))
                                      for w in words[1:3]]


def test_mkl_kernel_fills_row_major_whatever_the_layout(kernel: Any) -> None:
    kernel("mkl")
    x = torch.ones(6, 7)
    torch.manual_seed(1)
    a = torch.nn.functional.dropout(x.t(), 0.5).numpy()
    torch.manual_seed(1)
    b = torch.nn.functional.dropout(x.t().clone(), 0.5).numpy()
    assert np.array_equal(a, b)


def test_default_kernel_uses_double_uniforms(kernel: Any) -> None:
    kernel("default")
    g = torch.Generator().manual_seed(3)
    u = g.uniform(900, np.dtype(np.float64))
    torch.manual_seed(3)
    y = torch.nn.functional.dropout(torch.ones(900, dtype=torch.float64), 0.25).numpy()
    assert np.array_equal(y, np.where(u < 0.75, 1 / 0.75, 0.0))


def test_default_kernel_fills_in_memory_order(kernel: Any) -> None:
    kernel("default")
    x = torch.ones(6, 7)
    torch.manual_seed(1)
    a = torch.nn.functional.dropout(x.t(), 0.5).numpy()
    torch.manual_seed(1)
    b = torch.nn.functional.dropout(x, 0.5).numpy()
    assert np.array_equal(a, b.T)


def test_fill_order() -> None:
    a = np.zeros((2, 3, 4))
    assert _random.fill_order(a) is None
    assert _random.fill_order(a.transpose(2, 0, 1)) == (1, 2, 0)
    assert _random.fill_order(a[:, ::2], True) is None  # not dense: a new contiguous tensor
    assert _random.fill_order(a.transpose(1, 0, 2)[:, :, ::2]) == (1, 0, 2)
    assert _random.fill_order(np.broadcast_to(np.zeros(3), (4, 3)), True) is None


def test_bernoulli_kernel_env_override(monkeypatch: pytest.MonkeyPatch, kernel: Any) -> None:
    _random._KERNEL.clear()
    monkeypatch.setenv("TAPEGRAD_TORCH_BERNOULLI", "mkl")
    assert _random.bernoulli_kernel() == "mkl"
    _random._KERNEL.clear()
    monkeypatch.setenv("TAPEGRAD_TORCH_BERNOULLI", "default")
    assert _random.bernoulli_kernel() == "default"
    _random._KERNEL.clear()
    monkeypatch.delenv("TAPEGRAD_TORCH_BERNOULLI")
    assert _random.bernoulli_kernel() == ("mkl" if _random._cpu_is_intel() else "default")


def _mkl() -> Any:
    path = os.environ.get("TAPEGRAD_MKL_RT") or ctypes.util.find_library("mkl_rt")
    if not path:
        pytest.skip("Intel MKL's runtime library (libmkl_rt) is not installed")
    # the sequential layer: a threaded one needs libiomp5, and MKL exits if it is missing
    os.environ.setdefault("MKL_THREADING_LAYER", "SEQUENTIAL")
    try:
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        pytest.skip(f"cannot load {path}")


def test_mcg31_bernoulli_matches_intel_mkl() -> None:
    rt = _mkl()
    brng_mcg31, method_icdf = 1 << 20, 0
    rng = np.random.default_rng(0)
    for _ in range(40):
        seed = int(rng.integers(0, 2 ** 32))
        n = int(rng.integers(1, 4000))
        p = float(rng.random())
        out = np.zeros(n, dtype=np.int32)
        # ATen: chunks of at least 800, each its own stream skipped ahead to its start
        for begin in range(0, n, 800):
            stream = ctypes.c_void_p()
            assert rt.vslNewStream(ctypes.byref(stream), brng_mcg31, ctypes.c_uint(seed)) == 0
            assert rt.vslSkipAheadStream(stream, ctypes.c_longlong(begin)) == 0
            k = min(800, n - begin)
            chunk = np.zeros(k, dtype=np.int32)
            assert rt.viRngBernoulli(method_icdf, stream, ctypes.c_int(k),
                                     chunk.ctypes.data_as(ctypes.c_void_p),
                                     ctypes.c_double(p)) == 0
            rt.vslDeleteStream(ctypes.byref(stream))
            out[begin:begin + k] = chunk
        ours = _random.mcg31_uniform32(seed, n) < np.float32(p)
        assert np.array_equal(out.astype(bool), ours), (seed, n, p)
