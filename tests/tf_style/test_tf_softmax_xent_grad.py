"""``tf.nn.softmax_cross_entropy_with_logits`` differentiates as TensorFlow's kernel:
the logits' gradient is ``g * (softmax(logits) - labels)`` (the kernel's backprop, which
assumes labels that sum to one), so Keras' ``CategoricalCrossentropy(from_logits=True)``
on multi-hot or smoothed labels trains as in Keras; second derivatives and forward mode
follow it (the Jacobian of the softmax)."""

from __future__ import annotations

import numpy as np

import tapegrad.tf as tf

LG = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], np.float32)
Y = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]], np.float32)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_gradient_is_softmax_minus_labels() -> None:
    lg = tf.constant(LG)
    w = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(lg)
        loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(Y, lg) * w)
    g = t.gradient(loss, lg).numpy()
    np.testing.assert_allclose(g, (_softmax(LG) - Y) * np.array([[1.0], [2.0]]), rtol=1e-6)
    # the loss itself is -sum(labels * log_softmax)
    np.testing.assert_allclose(float(loss), float(np.sum(
        -np.sum(Y * np.log(_softmax(LG)), -1) * [1.0, 2.0])), rtol=1e-6)


def test_keras_from_logits_and_label_smoothing_use_it() -> None:
    lg = tf.constant(LG)
    for fn in (tf.keras.losses.CategoricalCrossentropy(from_logits=True),
               tf.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)):
        with tf.GradientTape() as t:
            t.watch(lg)
            loss = fn(Y, lg)
        smooth = getattr(fn, "label_smoothing", 0.0) or 0.0
        ys = Y * (1 - smooth) + smooth / 3
        np.testing.assert_allclose(t.gradient(loss, lg).numpy(), (_softmax(LG) - ys) / 2,
                                   rtol=1e-5, atol=1e-7)


def test_second_order_and_forward_mode_follow_the_softmax() -> None:
    lg = tf.constant(LG)
    with tf.GradientTape() as t2:
        t2.watch(lg)
        with tf.GradientTape() as t:
            t.watch(lg)
            loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(Y, lg))
        s = tf.reduce_sum(tf.square(t.gradient(loss, lg)))
    p = _softmax(LG)
    d = p - Y   # ds/dlogits = J_softmax^T (2 d)
    expect = 2 * (p * d - p * np.sum(p * d, -1, keepdims=True))
    np.testing.assert_allclose(t2.gradient(s, lg).numpy(), expect, rtol=1e-5, atol=1e-7)
    with tf.autodiff.ForwardAccumulator(lg, tf.ones_like(lg)) as acc:
        out = tf.nn.softmax_cross_entropy_with_logits(Y, lg)
    np.testing.assert_allclose(acc.jvp(out).numpy(), np.sum(p - Y, -1), rtol=1e-5, atol=1e-6)
