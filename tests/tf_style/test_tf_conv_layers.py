"""TensorFlow-style conv nets without TensorFlow: layouts, Keras building and weight
order, training semantics, gradients by finite differences through the public functions.
The real-TensorFlow comparison is tests/conformance/test_tf_conv_conf.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.testing import gradcheck

RNG = np.random.default_rng(4)
L = tf.keras.layers


def test_conv2d_nhwc_equals_nchw() -> None:
    x = RNG.standard_normal((2, 6, 5, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
    a = tf.nn.conv2d(x, w, 2, "SAME").numpy()
    b = tf.nn.conv2d(x.transpose(0, 3, 1, 2), w, 2, "SAME", data_format="NCHW").numpy()
    np.testing.assert_allclose(a, b.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-6)
    assert a.shape == (2, 3, 3, 4)  # SAME: ceil(n / stride)


@pytest.mark.parametrize("fn", [
    lambda x, w: tf.nn.conv2d(x, w, [1, 2, 1, 1], "SAME"),
    lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID"),
    lambda x, w: tf.nn.conv2d_transpose(x, w[:, :, :3, :3], [2, 10, 8, 3], 2, "SAME"),
])
def test_tf_nn_gradcheck_second_order(fn: Any) -> None:
    x = tf.constant(RNG.standard_normal((2, 5, 4, 3)))
    w = tf.constant(RNG.standard_normal((2, 3, 3, 3)))
    assert gradcheck(lambda a, b: fn(a, b) ** 2, [x, w], order=2)


def test_pooling_gradcheck_and_same_averaging() -> None:
    x = tf.constant(RNG.standard_normal((2, 5, 5, 2)))
    assert gradcheck(lambda v: tf.nn.max_pool2d(v, 2, 2, "SAME") ** 2, [x], order=2)
    assert gradcheck(lambda v: tf.nn.avg_pool2d(v, 3, 2, "SAME") ** 2, [x], order=2)
    ones = tf.nn.avg_pool2d(tf.ones([1, 3, 3, 1]), 2, 2, "SAME").numpy()
    np.testing.assert_allclose(ones, 1.0)  # padding is not averaged in


def test_keras_conv_weights_order_and_deferred_build() -> None:
    layer = L.Conv2D(4, (3, 2), use_bias=True)
    assert not layer.built
    y = layer(tf.ones([1, 5, 5, 3]))
    assert layer.built and tuple(y.shape) == (1, 3, 4, 4)
    assert [w.name for w in layer.weights] == ["kernel", "bias"]
    assert [tuple(w.shape) for w in layer.get_weights()] == [(3, 2, 3, 4), (4,)]
    assert layer.name.startswith("conv2d")
    t = L.Conv2DTranspose(2, 3, strides=2, padding="same")
    t(tf.ones([1, 4, 4, 3]))
    assert [tuple(w.shape) for w in t.get_weights()] == [(3, 3, 2, 3), (2,)]
    dw = L.DepthwiseConv2D(3, depth_multiplier=2)
    dw(tf.ones([1, 5, 5, 3]))
    assert [tuple(w.shape) for w in dw.get_weights()] == [(3, 3, 3, 2), (6,)]


def test_batchnorm_training_modes_and_moving_statistics() -> None:
    bn = L.BatchNormalization(momentum=0.9, epsilon=0.0)
    x = tf.constant([[1.0], [3.0]])
    y_inf = bn(x)  # no training flag: inference, moving statistics (0, 1)
    np.testing.assert_allclose(y_inf.numpy(), x.numpy(), rtol=1e-6)
    y = bn(x, training=True)
    np.testing.assert_allclose(y.numpy(), [[-1.0], [1.0]], rtol=1e-6)
    # Keras's rule: moving = 0.9 * moving + 0.1 * batch (biased variance)
    np.testing.assert_allclose(bn.moving_mean.numpy(), [0.2], rtol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), [0.9 * 1 + 0.1 * 1.0], rtol=1e-6)
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]


def test_training_flag_reaches_layers_inside_a_model() -> None:
    model = tf.keras.Sequential([L.Dense(4), L.Dropout(0.5), L.BatchNormalization()])
    model.build((None, 3))
    x = tf.ones([64, 3])
    tf.random.set_seed(0)
    before = model.layers[2].moving_mean.numpy().copy()
    model(x)  # inference: no dropout, no statistics update
    np.testing.assert_array_equal(model.layers[2].moving_mean.numpy(), before)
    model(x, training=True)
    assert not np.array_equal(model.layers[2].moving_mean.numpy(), before)


def test_keras_cnn_trains() -> None:
    tf.random.set_seed(1)
    model = tf.keras.Sequential([tf.keras.Input(shape=(8, 8, 1)), L.Conv2D(4, 3, padding="same",
                                                                         activation="relu"),
                                 L.MaxPooling2D(), L.Flatten(), L.Dense(2)])
    x = tf.constant(RNG.standard_normal((16, 8, 8, 1)).astype(np.float32))
    y = tf.constant((RNG.random(16) > 0.5).astype(np.int64))
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < losses[0]


def test_reshaping_merging_padding_layers() -> None:
    x = tf.constant(RNG.standard_normal((2, 3, 4, 5)).astype(np.float32))
    assert tuple(L.Flatten()(x).shape) == (2, 60)
    assert tuple(L.Reshape((12, -1))(x).shape) == (2, 12, 5)
    np.testing.assert_array_equal(L.Permute((3, 1, 2))(x).numpy(), x.numpy().transpose(0, 3, 1, 2))
    assert tuple(L.Concatenate(axis=1)([x, x]).shape) == (2, 6, 4, 5)
    np.testing.assert_allclose(L.Add()([x, x]).numpy(), 2 * x.numpy())
    assert tuple(L.ZeroPadding2D(((1, 0), (2, 1)))(x).shape) == (2, 4, 7, 5)
    up = L.UpSampling2D((2, 3))(x).numpy()
    np.testing.assert_array_equal(up[:, ::2, ::3], x.numpy())
    assert tuple(L.GlobalAveragePooling2D()(x).shape) == (2, 5)
    with pytest.raises(ValueError, match="A merge layer should be called on a list"):
        L.Add()(x)
    with pytest.raises(ValueError, match="total size of the tensor must be unchanged"):
        L.Reshape((7,))(x)


def test_keras_aliases() -> None:
    assert L.MaxPool2D is L.MaxPooling2D and L.GlobalAvgPool2D is L.GlobalAveragePooling2D
    assert L.Convolution2D is L.Conv2D and L.AvgPool1D is L.AveragePooling1D


def test_tf_pad_modes() -> None:
    x = tf.constant([[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(tf.pad(x, [[0, 0], [2, 1]], "REFLECT").numpy(),
                                  [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]])
    np.testing.assert_array_equal(tf.pad(x, [[0, 0], [2, 1]], "SYMMETRIC").numpy(),
                                  [[2.0, 1.0, 1.0, 2.0, 3.0, 3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="paddings must be less than"):
        tf.pad(x, [[0, 0], [3, 0]], "REFLECT")
