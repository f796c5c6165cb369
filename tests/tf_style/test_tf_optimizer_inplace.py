"""Keras optimizers update a variable's array in place only when no tensor can see it."""

from __future__ import annotations

import numpy as np

import tapegrad.tf as tf


def _step(v: tf.Variable, opt: tf.keras.optimizers.Optimizer) -> None:
    x = tf.constant(np.ones((2, 3), np.float32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.matmul(x, v) ** 2)
    opt.apply_gradients([(tape.gradient(y, v), v)])


def test_values_read_before_the_update_keep_theirs() -> None:
    v = tf.Variable(np.ones((3, 3), np.float32))
    opt = tf.keras.optimizers.SGD(learning_rate=0.01)
    old = v.value()
    before = id(v._data)
    _step(v, opt)
    np.testing.assert_array_equal(old.numpy(), np.ones((3, 3), np.float32))
    assert id(v._data) != before  # a copy was updated


def test_unshared_array_is_updated_in_place_with_the_same_values() -> None:
    for opt_a, opt_b in [(tf.keras.optimizers.SGD(0.01, momentum=0.9),
                          tf.keras.optimizers.SGD(0.01, momentum=0.9)),
                         (tf.keras.optimizers.Adam(0.01), tf.keras.optimizers.Adam(0.01))]:
        a = tf.Variable(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))
        b = tf.Variable(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))
        keep = []
        for _ in range(3):
            arr = id(a._data)
            _step(a, opt_a)
            assert id(a._data) == arr  # nothing else refers to it: in place
            keep.append(b.value())  # a read of b: b's updates must copy
            _step(b, opt_b)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert not np.array_equal(keep[0].numpy(), b.numpy())


def test_constraint_still_applies() -> None:
    v = tf.Variable(np.ones(3, np.float32), constraint=lambda t: tf.clip_by_value(t, 0.0, 0.5))
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v)])
    np.testing.assert_array_equal(v.numpy(), np.full(3, 0.5, np.float32))
