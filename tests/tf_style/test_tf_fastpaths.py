"""TensorFlow-style shortcuts keep the values of the general path."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_by_pow_matches_the_general_rule(dtype: type) -> None:
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((5, 4)).astype(dtype)
    x = tf.constant(xv)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 2
        loss = tf.reduce_sum(y * tf.constant(np.arange(20.0, dtype=dtype).reshape(5, 4)))
        z = tf.reduce_sum(tf.pow(x * x + 1.0, 1.5))  # the general rule, as a check that it is still used
    np.testing.assert_array_equal(y.numpy(), xv * xv)
    g = tape.gradient(loss, x).numpy()
    np.testing.assert_array_equal(g, np.arange(20.0, dtype=dtype).reshape(5, 4) * (2 * xv))
    gz = tape.gradient(z, x).numpy()
    np.testing.assert_allclose(gz, 3.0 * xv * np.sqrt(xv * xv + 1.0), rtol=1e-5)
    assert g.dtype == dtype


def test_square_by_pow_second_derivative() -> None:
    x = tf.constant([1.5, -2.0, 0.0], dtype=tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(x ** 2 * x)  # x^3
        g = inner.gradient(y, x)
    gg = outer.gradient(g, x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(gg.numpy(), 6 * x.numpy())


def test_python_float_operand_keeps_the_tensor_dtype_and_gradient() -> None:
    x = tf.constant([1.0, 2.0], dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = (x * 1.0001 + 0.0001) / 3.0 - 1.5
        y = 2.0 * y + 0.5
        s = tf.reduce_sum(y)
    assert y.dtype == tf.float32
    g = tape.gradient(s, x)
    assert g.dtype == tf.float32
    np.testing.assert_allclose(g.numpy(), [2 * 1.0001 / 3.0] * 2, rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1, 2]) * 1.5  # an int tensor still refuses a float, as TensorFlow does
