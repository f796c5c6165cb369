"""TensorFlow-style float32 ``exp``, ``tanh`` and ``sigmoid``: TensorFlow's own bits.

``tapegrad/ops/_tf_eigen.py`` replays TensorFlow 2.21's Eigen kernels (AVX, no FMA,
flush-to-zero; whole packets of 8 by the packet function, the last ``size % 8`` by the
scalar one).  The expected bits below were printed by real TensorFlow 2.21 for these 35
inputs (32 in packets, 3 in the scalar tail); the conformance suite compares sweeps of
millions of values with the installed TensorFlow.  Here, without TensorFlow: those bits,
accuracy against float64, and the gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.ops import _tf_eigen as k


def _u32(hexes: list[int]) -> np.ndarray:
    return np.array(hexes, np.uint32)


X = _u32([
    0xc1400000, 0xc1324925, 0xc1249249, 0xc116db6e, 0xc1092492, 0xc0f6db6e, 0xc0db6db7,
    0xc0c00000, 0xc0a49249, 0xc0892492, 0xc05b6db7, 0xc0249249, 0xbfdb6db7, 0xbf5b6db7,
    0x00000000, 0x3f5b6db7, 0x3fdb6db7, 0x40249249, 0x405b6db7, 0x40892492, 0x40a49249,
    0x40c00000, 0x40db6db7, 0x40f6db6e, 0x41092492, 0x4116db6e, 0x41249249, 0x41324925,
    0x41400000, 0x3e99999a, 0x80000000, 0x3727c5ac, 0x40fe6666, 0xc2dc0000, 0x42b10000,
])
TANH = _u32([
    0xbf800000, 0xbf800000, 0xbf800000, 0xbf800000, 0xbf800000, 0xbf7ffffa, 0xbf7fffda,
    0xbf7fff32, 0xbf7ffb87, 0xbf7fe72b, 0xbf7f7645, 0xbf7d06dc, 0xbf6fea75, 0xbf31dd47,
    0x00000000, 0x3f31dd47, 0x3f6fea75, 0x3f7d06dc, 0x3f7f7645, 0x3f7fe72b, 0x3f7ffb87,
    0x3f7fff32, 0x3f7fffda, 0x3f7ffffa, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000,
    0x3f800000, 0x3e9526ee, 0x80000000, 0x3727c5ac, 0x3f800000, 0xbf800000, 0x3f800000,
])
SIGMOID = _u32([
    0x36ce2a0f, 0x3772e70f, 0x380f17a2, 0x38a895b1, 0x39469b46, 0x39e9f09f, 0x3a89bb51,
    0x3b220bbb, 0x3bbe4923, 0x3c5e71b9, 0x3d00ac5c, 0x3d916876, 0x3e1c4570, 0x3e988b26,
    0x3f000000, 0x3f33ba6d, 0x3f58eea3, 0x3f6dd2f1, 0x3f77f53a, 0x3f7c8639, 0x3f7e836e,
    0x3f7f5df4, 0x3f7fbb22, 0x3f7fe2c2, 0x3f7ff396, 0x3f7ffabb, 0x3f7ffdc4, 0x3f7fff0d,
    0x3f7fff99, 0x3f130ea9, 0x3f000000, 0x3f00002a, 0x3f7fe8e5, 0x00000000, 0x3f800000,
])
EXP = _u32([
    0x36ce2a62, 0x3772e7f4, 0x380f18e0, 0x38a8992c, 0x3946a4eb, 0x39ea0b5a, 0x3a89e06a,
    0x3b227290, 0x3bbf65ac, 0x3c618184, 0x3d04d8b8, 0x3d9c8563, 0x3e386a1e, 0x3ed94766,
    0x3f800000, 0x4016cf90, 0x40b1afc9, 0x41515a20, 0x41f6a918, 0x42914f0f, 0x432b3447,
    0x43c9b6e2, 0x446da96a, 0x450c01f6, 0x45a4f550, 0x46425afd, 0x46e4fdc3, 0x4786e65f,
    0x481ef0b2, 0x3facc82c, 0x3f800000, 0x3f800054, 0x45313931, 0x00000000, 0x7f4cdcc4,
])
DSIGMOID = _u32([
    0xb6ce29bc, 0xb75d777e, 0xb7ebac65, 0xb877e617, 0xb9007c5b, 0xb982ac3d, 0xba017e5e,
    0xba7738d4, 0xbade90c7, 0xbb34b3c5, 0xbb6a9986, 0xbafe46a2, 0x3bf94442, 0x3cfbfd22,
    0x3d70f0f1, 0x3d8a9806, 0x3d5a1bbf, 0x3d071588, 0x3c929ff8, 0x3c146f1d, 0x3b90aacd,
    0x3b09dfec, 0x3a817f03, 0x39f0b5e8, 0x395df35a, 0x38cb5357, 0x38390d71, 0x37a7f415,
    0x3717783b, 0x3ec31b44, 0x3ed2d2d3, 0x3ede1e1e, 0x3a28797e, 0x00000000, 0x00000000,
])

SIN = _u32([
    0x3f095cd8, 0x3f7d3a78, 0x3f4229fa, 0x3b78a03f, 0xbf40e484, 0xbf7d8193, 0xbf0aff69,
    0x3e8f0f8c, 0x3f68a52f, 0x3f690c7e, 0x3e90ecb4, 0xbf0a2e62, 0xbf7d5e7d, 0xbf41879a,
    0x00000000, 0x3f41879a, 0x3f7d5e7d, 0x3f0a2e62, 0xbe90ecb4, 0xbf690c7e, 0xbf68a52f,
    0xbe8f0f8c, 0x3f0aff69, 0x3f7d8193, 0x3f40e484, 0xbb78a03f, 0xbf4229fa, 0xbf7d3a78,
    0xbf095cd8, 0x3e974e6d, 0x80000000, 0x3727c5ac, 0x3f7ed221, 0x3d3537cf, 0x3f029bd0,
])
COS = _u32([
    0x3f5806d0, 0x3e1645fd, 0xbf26d7a0, 0xbf7fff87, 0xbf284f7e, 0x3e0e956b, 0x3f56fa6e,
    0x3f75cdb8, 0x3ed5a7da, 0xbed3e3a1, 0xbf7587cd, 0xbf578104, 0xbe126df1, 0x3f2793de,
    0x3f800000, 0x3f2793de, 0xbe126df1, 0xbf578104, 0xbf7587cd, 0xbed3e3a1, 0x3ed5a7da,
    0x3f75cdb8, 0x3f56fa6e, 0x3e0e956b, 0xbf284f7e, 0xbf7fff87, 0xbf26d7a0, 0x3e1645fd,
    0x3f5806d0, 0x3f7490ef, 0x3f800000, 0x3f800000, 0xbdc457dc, 0xbf7fbfd4, 0x3f5c2d01,
])

_X = X.view(np.float32)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "exp", "sin", "cos"])
def test_the_bits_tensorflow_printed(name: str) -> None:
    want = {"tanh": TANH, "sigmoid": SIGMOID, "exp": EXP, "sin": SIN, "cos": COS}[name]
    got = getattr(tf, name)(tf.constant(_X)).numpy()
    assert got.dtype == np.float32
    assert got.view(np.uint32).tolist() == want.tolist()
    # the same through tf.math, tf.nn and Keras's activations
    assert getattr(tf.math, name)(_X).numpy().view(np.uint32).tolist() == want.tolist()
    if name in ("tanh", "sigmoid"):
        act = getattr(tf.keras.activations, name)(tf.constant(_X)).numpy()
        assert act.view(np.uint32).tolist() == want.tolist()


def test_sigmoid_gradient_bits() -> None:
    # TensorFlow's SigmoidGrad: g * (y * (1 - y)) on packets, (g * y) * (1 - y) on the tail
    x = tf.constant(_X)
    g = tf.constant(np.linspace(-1, 2, _X.size).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sigmoid(x)
    got = tape.gradient(y, x, output_gradients=g).numpy()
    assert got.view(np.uint32).tolist() == DSIGMOID.tolist()


@pytest.mark.parametrize("size", [1, 7, 8, 9, 1000, 4099])
@pytest.mark.parametrize("fn,ref,ulps", [
    (k.tanh_f32, np.tanh, 6),
    (k.sigmoid_f32, lambda v: 1 / (1 + np.exp(-v)), 7),
    (k.exp_f32, np.exp, 3),
    (k.sin_f32, np.sin, 2),
    (k.cos_f32, np.cos, 2),
])
def test_accurate_to_a_few_ulps(size: int, fn: Any, ref: Any, ulps: int) -> None:
    x = np.random.default_rng(size).normal(0.0, 4.0, size).astype(np.float32)
    y = fn(x.reshape(1, -1))
    assert y.shape == (1, size) and y.dtype == np.float32
    want = ref(x.astype(np.float64))
    err = np.abs(y[0].astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))
    assert err.max() <= ulps


@pytest.mark.parametrize("size", [1, 7, 8, 9, 1000, 4099])
def test_log_accurate(size: int) -> None:
    x = np.exp(np.random.default_rng(size).uniform(-80, 80, size)).astype(np.float32)
    y = k.log_f32(x.reshape(1, -1))
    assert y.shape == (1, size) and y.dtype == np.float32
    np.testing.assert_allclose(y[0], np.log(x.astype(np.float64)), rtol=3e-7, atol=1e-7)


def test_special_values() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 8.0, -8.0], np.float32)
    t = k.tanh_f32(x)
    assert t[:4].tolist() == [0.0, 0.0, 1.0, -1.0] and np.signbit(t[1]) and np.isnan(t[4])
    assert t[5] == 0 and t[6] == 0 and t[7] == 1 and t[8] == -1  # subnormals read as 0
    s = k.sigmoid_f32(x)
    assert s[:4].tolist() == [0.5, 0.5, 1.0, 0.0] and np.isnan(s[4])
    e = k.exp_f32(x)
    assert e[:4].tolist() == [1.0, 1.0, np.inf, 0.0] and np.isnan(e[4])
    lg = k.log_f32(np.array([0.0, -0.0, np.inf, -1.0, np.nan, 1e-40, 1e-40, 1.0, 2.0,
                             1e-40, -1e-40], np.float32))
    # packets: a subnormal reads as 0 (-inf); the scalar tail (glibc logf under DAZ):
    # -103.97208 for a positive one, NaN for a negative one
    assert lg[:3].tolist() == [-np.inf, -np.inf, np.inf] and np.isnan(lg[3:5]).all()
    assert lg[5] == lg[6] == -np.inf and lg[7] == 0 and lg[9] == np.float32(-103.97208)
    assert np.isnan(lg[10])


def test_gradients_match_finite_differences() -> None:
    x64 = np.linspace(-3, 3, 13)
    for name in ("tanh", "sigmoid", "exp"):
        xs = tf.constant(x64.astype(np.float32))
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = getattr(tf, name)(xs)
        g = tape.gradient(y, xs).numpy().astype(np.float64)
        f = {"tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "exp": np.exp}[name]
        fd = (f(x64 + 1e-6) - f(x64 - 1e-6)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=2e-6, atol=1e-6)


def test_float64_and_torch_style_keep_numpy() -> None:
    x = np.linspace(-5, 5, 11)
    assert np.array_equal(tf.tanh(tf.constant(x)).numpy(), np.tanh(x))
    import tapegrad.torch as torch

    xf = x.astype(np.float32)
    assert np.array_equal(torch.tanh(torch.tensor(xf)).numpy(), np.tanh(xf))


@pytest.mark.parametrize("beta", [1.0, 1.5])
def test_silu_value_and_gradient(beta: float) -> None:
    x64 = np.linspace(-4, 4, 17)
    xs = tf.constant(x64)
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = tf.nn.silu(xs, beta=beta)
    s = 1 / (1 + np.exp(-beta * x64))
    np.testing.assert_allclose(y.numpy(), x64 * s, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(y, xs).numpy(), s * (1 + beta * x64 * (1 - s)),
                               rtol=1e-12)
    x32 = tf.constant(x64.astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x32)
        y32 = tf.nn.silu(x32, beta=beta)
    assert y32.dtype == tf.float32
    np.testing.assert_allclose(tape.gradient(y32, x32).numpy(), s * (1 + beta * x64 * (1 - s)),
                               rtol=2e-6, atol=1e-6)


# tf.reduce_sum / reduce_mean of float32: the bits real TensorFlow 2.21 printed
@pytest.mark.parametrize("n,bits", [(33, 0xbf628396), (1000, 0xc12f3436), (8193, 0xc273b776),
                                    (20000, 0xc36bf5eb)])
def test_reduce_sum_bits(n: int, bits: int) -> None:
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    got = tf.reduce_sum(tf.constant(x)).numpy()
    assert got.dtype == np.float32 and int(got.view(np.uint32)) == bits
    # the same sum over a trailing axis, kept, and under a tape (the gradient is ones)
    xs = tf.constant(x.reshape(1, n))
    with tf.GradientTape() as tape:
        tape.watch(xs)
        s = tf.reduce_sum(xs, axis=-1, keepdims=True)
    assert s.shape == (1, 1) and int(s.numpy().view(np.uint32)[0, 0]) == bits
    assert np.array_equal(tape.gradient(s, xs).numpy(), np.ones((1, n), np.float32))


def test_reduce_mean_bits_and_keras() -> None:
    x = np.random.default_rng(7).standard_normal((6, 100)).astype(np.float32)
    want = [0xbe31148f, 0xbdba5b06, 0xbe06d3f4, 0xbcdfffc3, 0xbe5ff534, 0xbe249781]
    assert tf.reduce_mean(tf.constant(x), axis=1).numpy().view(np.uint32).tolist() == want
    # Keras's MeanSquaredError against zeros: mean over the last axis, then over the batch
    mse = tf.keras.losses.mean_squared_error(tf.zeros((6, 100)), tf.constant(x)).numpy()
    sq = x * x
    np.testing.assert_allclose(mse, sq.astype(np.float64).mean(axis=1), rtol=1e-6)
    # over a leading axis of under 16 rows TensorFlow adds row by row, as NumPy does
    assert np.array_equal(tf.reduce_sum(tf.constant(x), axis=0).numpy(), x.sum(axis=0))
