"""Conformance: gradients of softmax cross-entropy with labels that do not sum to one
(multi-hot, smoothed, scaled) against real TensorFlow: ``tf.nn`` and Keras'
``CategoricalCrossentropy(from_logits=True)``, first and second order, forward mode, and
a multi-output Keras model with multi-hot targets trained by ``fit``.
Skipped without TensorFlow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


def _grads(tf: Any) -> list[np.ndarray]:
    keras = tf.keras
    lg = tf.constant([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]])
    y = tf.constant([[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]])
    out = []
    for f in (lambda v: tf.nn.softmax_cross_entropy_with_logits(y, v),
              lambda v: keras.losses.CategoricalCrossentropy(from_logits=True)(y, v),
              lambda v: keras.losses.categorical_crossentropy(y, v, from_logits=True),
              lambda v: keras.losses.CategoricalCrossentropy(
                  from_logits=True, label_smoothing=0.2)(y, v)):
        with tf.GradientTape() as t2:
            t2.watch(lg)
            with tf.GradientTape() as t:
                t.watch(lg)
                loss = tf.reduce_sum(f(lg))
            g = t.gradient(loss, lg)
            s = tf.reduce_sum(g * g)
        out += [loss.numpy(), g.numpy(), t2.gradient(s, lg).numpy()]
    with tf.autodiff.ForwardAccumulator(lg, tf.ones_like(lg)) as acc:
        res = tf.nn.softmax_cross_entropy_with_logits(y, lg)
    return out + [acc.jvp(res).numpy()]


def test_gradients_match_tensorflow(rtf: Any) -> None:
    for a, b in zip(_grads(tg_tf), _grads(rtf)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _fit(tf: Any) -> dict[str, list[float]]:
    keras = tf.keras
    keras.utils.set_random_seed(3)
    inp = keras.Input(shape=(6,), name="x")
    h = keras.layers.Dense(8, activation="tanh")(inp)
    model = keras.Model(inp, {"p": keras.layers.Dense(1, name="p")(h),
                              "d": keras.layers.Dense(4, name="d")(h)})
    model.compile(optimizer=keras.optimizers.RMSprop(1e-2),
                  loss={"p": keras.losses.BinaryCrossentropy(from_logits=True),
                        "d": keras.losses.CategoricalCrossentropy(from_logits=True)},
                  loss_weights={"p": 1.0, "d": 0.2})
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 6)).astype("float32")
    ys = {"p": rng.random((64, 1)), "d": rng.integers(2, size=(64, 4))}
    h = model.fit(x, ys, epochs=3, batch_size=32, verbose=0, shuffle=False)
    return {k: [float(v) for v in vs] for k, vs in sorted(h.history.items())}


def test_multi_hot_targets_train_as_keras(rtf: Any) -> None:
    ours, theirs = _fit(tg_tf), _fit(rtf)
    assert ours.keys() == theirs.keys()
    for k in ours:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=2e-5)
