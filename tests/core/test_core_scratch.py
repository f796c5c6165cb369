"""The recycled memory behind the convolution kernels' large temporaries."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import _scratch as S
from tapegrad.ops.conv import conv

SHAPE = (256, 1024)  # 1 MiB of float32: pooled


@pytest.fixture(autouse=True)
def _fresh_pool() -> None:
    S.clear()


def _owner(a: np.ndarray) -> np.ndarray:
    return a if a.base is None else a.base


def test_memory_is_reused_once_nothing_refers_to_it() -> None:
    a = S.empty(SHAPE, np.float32)
    owner = id(_owner(a))
    del a
    gc.collect()
    b = S.empty(SHAPE, np.float32)
    assert id(_owner(b)) == owner


@pytest.mark.parametrize("keep", ["array", "view", "slice_of_reshape", "memoryview"])
def test_memory_in_use_is_never_handed_out_again(keep: str) -> None:
    a = S.empty(SHAPE, np.float32)
    a[...] = 7.0
    held: object
    if keep == "array":
        held = a
    elif keep == "view":
        held = a.T
    elif keep == "slice_of_reshape":
        held = a.reshape(-1)[::3]
    else:
        held = a.data  # a memoryview: the buffer protocol keeps the array alive
    del a
    others = [S.empty(SHAPE, np.float32) for _ in range(S.PER_SIZE + 2)]
    for o in others:
        o[...] = -1.0
    arr = np.asarray(held)
    assert (arr == 7.0).all()


def test_small_arrays_are_plain() -> None:
    a = S.empty((10, 10), np.float64)
    assert a.base is None and a.shape == (10, 10) and a.dtype == np.float64


def test_conv_columns_recycled_across_steps_give_the_same_values() -> None:
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    w = tg.tensor(rng.standard_normal((6, 1, 5, 5)).astype(np.float32), requires_grad=True)
    p0 = ((0, 0), (0, 0))
    first = None
    for _ in range(3):
        y = conv(x, w, (1, 1), p0, (1, 1))
        (y * y).sum().backward()
        assert w.grad is not None
        g = w.grad.numpy().copy()
        w.grad = None
        if first is None:
            first = (y._data.copy(), g)
        else:
            np.testing.assert_array_equal(y._data, first[0])
            np.testing.assert_array_equal(g, first[1])
