"""Conformance: TensorFlow's float32 softmax and log-softmax, bit for bit.

Real TensorFlow 2.21 on x86-64 runs oneDNN's JIT softmax and Eigen's
log-softmax kernel; tapegrad emulates both (``tapegrad/ops/_tf_softmax.py``).
Rows of 1..300 (and longer) values, many scales, ``-inf`` masks, every axis:
the float32 bits must be TensorFlow's.  Skipped without TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and bool(np.all((a.view(np.int32) == b.view(np.int32))
                                              | (np.isnan(a) & np.isnan(b))))


_LENGTHS = [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128, 129,
            200, 255, 256, 257, 300]


def _inputs(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    out = []
    for rows, scale in ((1, 1.0), (3, 0.01), (8, 10.0), (9, 100.0), (17, 3.0), (5, 1e4)):
        x = rng.normal(0.0, scale, (rows, n)).astype(np.float32)
        out.append(x)
    masked = rng.normal(0.0, 5.0, (6, n)).astype(np.float32)
    if n > 1:
        masked[:, 1::3] = -np.inf
    out.append(masked)
    out.append((rng.normal(0.0, 30.0, (4, n)) + 50.0).astype(np.float32))  # tiny exps flush
    return out


@pytest.mark.parametrize("n", _LENGTHS)
def test_softmax_bits_are_tensorflows(rtf: Any, n: int) -> None:
    for x in _inputs(n):
        assert _same_bits(tg_tf.nn.softmax(x).numpy(), rtf.nn.softmax(x).numpy())


@pytest.mark.parametrize("n", _LENGTHS)
def test_log_softmax_bits_are_tensorflows(rtf: Any, n: int) -> None:
    for x in _inputs(n):
        assert _same_bits(tg_tf.nn.log_softmax(x).numpy(), rtf.nn.log_softmax(x).numpy())


@pytest.mark.parametrize("shape,axis", [((2, 3, 5, 7), -1), ((2, 3, 5, 7), 1), ((2, 3, 5, 7), 0),
                                        ((4, 9, 3), 1), ((37,), 0), ((3, 1000), -1),
                                        ((2, 9000), -1)])
def test_softmax_any_axis_and_long_rows(rtf: Any, shape: tuple[int, ...], axis: int) -> None:
    x = np.random.default_rng(len(shape) + axis).normal(0.0, 4.0, shape).astype(np.float32)
    assert _same_bits(tg_tf.nn.softmax(x, axis=axis).numpy(), rtf.nn.softmax(x, axis=axis).numpy())
    assert _same_bits(tg_tf.nn.log_softmax(x, axis=axis).numpy(),
                      rtf.nn.log_softmax(x, axis=axis).numpy())


def test_keras_softmax_activation_and_masked_layer(rtf: Any) -> None:
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(5)
    x = rng.normal(0.0, 4.0, (6, 37)).astype(np.float32)
    mask = rng.random((6, 37)) > 0.3
    mask[0] = False   # a fully masked row: zeros, as Keras 3
    assert _same_bits(tg_tf.keras.activations.softmax(tg_tf.constant(x)).numpy(),
                      keras.activations.softmax(x).numpy())
    ours = tg_tf.keras.layers.Softmax()(tg_tf.constant(x), mask=tg_tf.constant(mask)).numpy()
    assert _same_bits(ours, keras.layers.Softmax()(x, mask=mask).numpy())


def test_softmax_gradient_is_unchanged_and_matches_finite_differences(rtf: Any) -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(0.0, 2.0, (3, 11)).astype(np.float32)
    w = rng.normal(0.0, 1.0, (3, 11)).astype(np.float32)
    for fn in (tg_tf.nn.softmax, tg_tf.nn.log_softmax):
        v = tg_tf.Variable(x)
        with tg_tf.GradientTape() as tape:
            y = tg_tf.reduce_sum(fn(v) * w)
        g = tape.gradient(y, v).numpy().astype(np.float64)
        real = getattr(rtf.nn, fn.__name__)
        rv = rtf.Variable(x)
        with rtf.GradientTape() as tape:
            ry = rtf.reduce_sum(real(rv) * w)
        np.testing.assert_allclose(g, tape.gradient(ry, rv).numpy(), rtol=1e-5, atol=1e-6)
        # central differences in float64 on the same function
        x64, eps = x.astype(np.float64), 1e-6
        ref = np.zeros_like(x64)
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x64)
            d[i] = eps
            hi = tg_tf.reduce_sum(fn(tg_tf.constant(x64 + d)) * w.astype(np.float64)).numpy()
            lo = tg_tf.reduce_sum(fn(tg_tf.constant(x64 - d)) * w.astype(np.float64)).numpy()
            ref[i] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-5)
