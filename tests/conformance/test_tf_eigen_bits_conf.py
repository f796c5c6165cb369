"""Conformance: TensorFlow's float32 ``Exp``, ``Log``, ``Log1p``, ``Sin``, ``Cos``, ``Tanh``,
``Sigmoid``, their gradients (not ``Log``'s and ``Log1p``'s), ``Sum`` and ``Mean``, bit for
bit against the installed TensorFlow 2.21.

tapegrad emulates TensorFlow's Eigen kernels (``tapegrad/ops/_tf_eigen.py``): a sweep of
two million values over [-110, 30], special values, and every size from 1 to 40 plus a few
long ones (where the scalar tail falls).  Skipped without TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf

_NAMES = ["exp", "tanh", "sigmoid", "sin", "cos"]
# Log's gradient is g * Reciprocal(x), whose kernel refines the CPU's approximate rcpps
# by a Newton step (not emulated): its values only
_VALUE_NAMES = [*_NAMES, "log", "log1p"]


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _same_bits(a: Any, b: Any) -> np.ndarray:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    assert a.shape == b.shape
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, -1e-40, 1.2e-38, 88.7,
                        88.8, -87.0, -103.9, -104.1, 16.6, 16.7, 7.9, 7.91, -7.91, 4e-4,
                        3e-4], np.float32)
    return ([special, np.linspace(-110, 30, 2_000_001).astype(np.float32),
             rng.normal(0, 4, (37, 129)).astype(np.float32)]
            + [rng.normal(0, 5, n).astype(np.float32) for n in [*range(1, 41), 1000, 4097,
                                                                 65537, 1_000_003]])


@pytest.mark.parametrize("name", _VALUE_NAMES)
def test_values_bit_for_bit(rtf: Any, name: str) -> None:
    for x in _inputs():
        if name in ("log", "log1p"):  # positive inputs too (the sweep's negatives are NaN)
            x = np.concatenate([x, np.abs(x) * 7])
        if name in ("sin", "cos") and x.size > 1_000_000:  # up to Eigen's huge-input path
            x = np.concatenate([x, np.linspace(-18000, 18000, 1_000_001, dtype=np.float32)])
        want = getattr(rtf.math, name)(rtf.constant(x)).numpy()
        got = getattr(tg_tf.math, name)(tg_tf.constant(x)).numpy()
        ok = _same_bits(got, want)
        assert ok.all(), (name, x.size, x.ravel()[~ok.ravel()][:5])


@pytest.mark.parametrize("name", _NAMES)
def test_gradients_bit_for_bit(rtf: Any, name: str) -> None:
    rng = np.random.default_rng(5)
    for n in [*range(1, 20), 1001, 65539]:
        x = rng.normal(0, 3, n).astype(np.float32)
        g = rng.normal(0, 1, n).astype(np.float32)
        res = []
        for tf in (rtf, tg_tf):
            xa = tf.constant(x)
            with tf.GradientTape() as tape:
                tape.watch(xa)
                y = getattr(tf, name)(xa)
            res.append(tape.gradient(y, xa, output_gradients=tf.constant(g)).numpy())
        ok = _same_bits(res[1], res[0])
        assert ok.all(), (name, n, x[~ok][:5])


def test_keras_activations_and_silu(rtf: Any) -> None:
    x = np.random.default_rng(2).normal(0, 3, (4, 37)).astype(np.float32)
    for name in ("tanh", "sigmoid"):
        want = getattr(rtf.keras.activations, name)(rtf.constant(x)).numpy()
        got = getattr(tg_tf.keras.activations, name)(tg_tf.constant(x)).numpy()
        assert _same_bits(got, want).all(), name
    assert _same_bits(tg_tf.nn.silu(tg_tf.constant(x)).numpy(),
                      rtf.nn.silu(rtf.constant(x)).numpy()).all()
    # silu's custom gradient, s * (1 + (beta x)(1 - s)), with beta 1 and 1.5
    for beta in (1.0, 1.5):
        res = []
        for tf in (rtf, tg_tf):
            xa = tf.constant(x)
            with tf.GradientTape() as tape:
                tape.watch(xa)
                y = tf.nn.silu(xa, beta=beta)
            res.append((y.numpy(), tape.gradient(y, xa).numpy()))
        assert _same_bits(res[1][0], res[0][0]).all() and _same_bits(res[1][1], res[0][1]).all()


_REDUCTIONS = [((5,), None), ((33,), None), ((128,), None), ((1000,), None), ((8193,), None),
               ((100_000,), None), ((1_000_003,), None), ((64, 10), None), ((64, 10), 1),
               ((500, 784), 1), ((32, 5, 7), (1, 2)), ((32, 5, 7), None), ((4, 3, 9000), 2),
               ((2, 20000), -1), ((1000, 3), 1), ((7, 1), 1)]


@pytest.mark.parametrize("shape,axis", _REDUCTIONS, ids=[f"{s}-{a}" for s, a in _REDUCTIONS])
def test_reduce_sum_and_mean_bit_for_bit(rtf: Any, shape: tuple[int, ...], axis: Any) -> None:
    rng = np.random.default_rng(sum(shape))
    for _trial in range(3):
        x = (rng.standard_normal(shape) * rng.uniform(0.1, 100)).astype(np.float32)
        for fn in ("reduce_sum", "reduce_mean"):
            for keep in (False, True):
                want = getattr(rtf, fn)(rtf.constant(x), axis=axis, keepdims=keep).numpy()
                got = getattr(tg_tf, fn)(tg_tf.constant(x), axis=axis, keepdims=keep).numpy()
                assert _same_bits(got, want).all(), (fn, shape, axis, keep)


def test_keras_losses_and_mean_metric(rtf: Any) -> None:
    import keras

    rng = np.random.default_rng(0)
    y = rng.standard_normal((64, 3)).astype(np.float32)
    logits = rng.standard_normal((64, 5)).astype(np.float32)
    labels = rng.integers(0, 5, 64)
    onehot = np.eye(5, dtype=np.float32)[labels]
    results = []
    for tf, K in ((rtf, keras), (tg_tf, tg_tf.keras)):
        yt, yp = tf.constant(y), tf.constant(y * 0.7 + 0.1)
        lab = tf.constant((y > 0).astype(np.float32))
        probs = tf.nn.softmax(tf.constant(logits))
        m = K.metrics.Mean()
        m.update_state(yp)
        mm = K.metrics.MeanSquaredError()
        mm.update_state(yt, yp)
        results.append([
            K.losses.MeanSquaredError()(yt, yp), K.losses.MeanAbsoluteError()(yt, yp),
            K.losses.BinaryCrossentropy()(lab, tf.sigmoid(yp)),
            K.losses.BinaryCrossentropy(from_logits=True)(lab, yp),
            K.losses.CategoricalCrossentropy()(tf.constant(onehot), probs),
            K.losses.SparseCategoricalCrossentropy(from_logits=True)(
                tf.constant(labels), tf.constant(logits)),
            m.result(), mm.result()])
    for k, (a, b) in enumerate(zip(*results)):
        assert _same_bits(np.asarray(a), np.asarray(b)).all(), (k, float(a), float(b))
