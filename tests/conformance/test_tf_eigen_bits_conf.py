"""Conformance: TensorFlow's float32 ``Exp``, ``Tanh`` and ``Sigmoid`` (and ``SigmoidGrad``,
``TanhGrad``), bit for bit against the installed TensorFlow 2.21.

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

_NAMES = ["exp", "tanh", "sigmoid"]


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


@pytest.mark.parametrize("name", _NAMES)
def test_values_bit_for_bit(rtf: Any, name: str) -> None:
    for x in _inputs():
        want = getattr(rtf, name)(rtf.constant(x)).numpy()
        got = getattr(tg_tf, name)(tg_tf.constant(x)).numpy()
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
