"""Conv nets on real TensorFlow 2.21 / Keras 3 and on tapegrad.tf: ``tf.nn`` convolution,
pooling and batch normalization, and the Keras conv-net layers (values, gradients with
respect to inputs and weights, weight order and shapes, ``training=`` semantics, moving
statistics, a small CNN trained a few steps from identical weights).

Weights come from NumPy: each layer is built on both frameworks, the real layer's
``get_weights`` shapes give the arrays, and both get them with ``set_weights``.
Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style.tf_helpers import real_tf

RNG = np.random.default_rng(21)
X4 = RNG.standard_normal((2, 7, 6, 4)).astype(np.float32)
X3 = RNG.standard_normal((2, 9, 4)).astype(np.float32)
X5 = RNG.standard_normal((2, 3, 4, 5, 2)).astype(np.float32)


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


def _np(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_np(u) for u in v]
    if v is None or isinstance(v, str):
        return v
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def _close(a: Any, b: Any, rtol: float, atol: float, path: str = "") -> None:
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, rtol, atol, f"{path}[{i}]")
        return
    if a is None or isinstance(a, str):
        assert a == b, f"{path}: {a!r} vs {b!r}"
        return
    assert a.shape == b.shape, f"{path}: shape {a.shape} vs {b.shape}"
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=path)


def both(rtf: Any, prog: Callable[[Any], Any], rtol: float = 2e-5, atol: float = 2e-5) -> None:
    _close(_np(prog(rtf)), _np(prog(tg)), rtol, atol)


def _grad(tf: Any, fn: Callable[..., Any], *arrays: np.ndarray) -> list[Any]:
    vs = [tf.Variable(a) for a in arrays]
    with tf.GradientTape() as tape:
        y = fn(*vs)
        loss = tf.reduce_sum(y * tf.cos(tf.reshape(tf.range(tf.size(y), dtype=y.dtype),
                                                   tf.shape(y))))
    return [y] + list(tape.gradient(loss, vs))


# ----------------------------------------------------------------------------- tf.nn
W = {s: RNG.standard_normal(s).astype(np.float32) for s in
     [(3, 2, 4, 5), (3, 3, 2, 6), (1, 1, 4, 3), (2, 3, 4, 4)]}
NN_CASES: dict[str, Callable[[Any], Any]] = {
    "conv2d_valid": lambda tf: _grad(tf, lambda x, w: tf.nn.conv2d(x, w, 1, "VALID"),
                                     X4, W[(3, 2, 4, 5)]),
    "conv2d_same_s2": lambda tf: _grad(tf, lambda x, w: tf.nn.conv2d(x, w, 2, "SAME"),
                                       X4, W[(3, 2, 4, 5)]),
    "conv2d_same_even_kernel": lambda tf: _grad(
        tf, lambda x, w: tf.nn.conv2d(x, w, [1, 2, 1, 1], "SAME"), X4, W[(2, 3, 4, 4)]),
    "conv2d_explicit": lambda tf: _grad(
        tf, lambda x, w: tf.nn.conv2d(x, w, 1, [[0, 0], [1, 2], [0, 1], [0, 0]]),
        X4, W[(3, 2, 4, 5)]),
    "conv2d_groups": lambda tf: _grad(tf, lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"),
                                      X4, W[(3, 3, 2, 6)]),
    "conv2d_dilated_values": lambda tf: [tf.nn.conv2d(tf.constant(X4), W[(3, 2, 4, 5)], 1,
                                                      "SAME", dilations=2)],
    "conv2d_1x1": lambda tf: _grad(tf, lambda x, w: tf.nn.conv2d(x, w, 1, "VALID"),
                                   X4, W[(1, 1, 4, 3)]),
    "conv1d": lambda tf: _grad(tf, lambda x, w: tf.nn.conv1d(x, w, 2, "SAME"), X3,
                               RNG_W1),
    "depthwise": lambda tf: _grad(
        tf, lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"), X4, RNG_WD),
    "conv2d_transpose_same": lambda tf: _grad(
        tf, lambda x, w: tf.nn.conv2d_transpose(x, w, [2, 14, 12, 5], 2, "SAME"), X4, RNG_WT),
    "conv2d_transpose_valid": lambda tf: _grad(
        tf, lambda x, w: tf.nn.conv2d_transpose(x, w, [2, 15, 13, 5], 2, "VALID"), X4,
        RNG_WT),
    "max_pool_valid": lambda tf: _grad(tf, lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"), X4),
    "max_pool_same": lambda tf: _grad(tf, lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), X4),
    "max_pool_ties": lambda tf: _grad(tf, lambda x: tf.nn.max_pool2d(x, 2, 1, "VALID"),
                                      np.round(X4)),
    "avg_pool_same": lambda tf: _grad(tf, lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), X4),
    "avg_pool_valid": lambda tf: _grad(tf, lambda x: tf.nn.avg_pool2d(x, [2, 3], [1, 2],
                                                                      "VALID"), X4),
    "max_pool1d": lambda tf: _grad(tf, lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"), X3),
    "batch_normalization": lambda tf: _grad(
        tf, lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3), X4,
        X4.mean((0, 1, 2)), X4.var((0, 1, 2)), np.linspace(-1, 1, 4).astype(np.float32),
        np.linspace(0.5, 2, 4).astype(np.float32)),
    "pad_reflect": lambda tf: _grad(tf, lambda x: tf.pad(x, [[0, 0], [2, 1], [1, 3], [0, 0]],
                                                         "REFLECT"), X4),
    "pad_symmetric": lambda tf: _grad(tf, lambda x: tf.pad(x, [[1, 0], [3, 0], [0, 2], [0, 0]],
                                                           "SYMMETRIC"), X4),
    "moments_bn": lambda tf: _grad(
        tf, lambda x: tf.nn.batch_normalization(x, *tf.nn.moments(x, [0, 1, 2]), None, None,
                                                1e-3), X4),
}
RNG_W1 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
RNG_WD = RNG.standard_normal((3, 3, 4, 2)).astype(np.float32)
RNG_WT = RNG.standard_normal((3, 3, 5, 4)).astype(np.float32)


@pytest.mark.parametrize("name", list(NN_CASES))
def test_tf_nn(rtf: Any, name: str) -> None:
    both(rtf, NN_CASES[name], rtol=1e-4, atol=1e-4)


def test_tf_nn_errors(rtf: Any) -> None:
    for T in (rtf, tg):
        with pytest.raises(T.errors.InvalidArgumentError, match="input depth must be evenly "
                                                               "divisible by filter depth: 3 vs 2"):
            T.nn.conv2d(T.ones([1, 3, 3, 3]), T.ones([2, 2, 2, 4]), 1, "VALID")
        with pytest.raises((ValueError, T.errors.InvalidArgumentError), match="padding"):
            T.nn.conv2d(T.ones([1, 3, 3, 2]), T.ones([2, 2, 2, 4]), 1, "FOO")
        with pytest.raises(T.errors.InvalidArgumentError,
                           match="paddings must be less than the dimension size: 3, 0 not "
                                 "less than 3"):
            T.pad(T.ones([2, 3]), [[0, 0], [3, 0]], "REFLECT")
        with pytest.raises(ValueError, match="Value of argument `mode` expected"):
            T.pad(T.ones([2, 3]), [[0, 0], [1, 0]], "FOO")


# ----------------------------------------------------------------------------- keras layers
def _layer_run(tf: Any, make: Callable[[Any], Any], x: Any, training: Any = None,
               weights: list[np.ndarray] | None = None) -> Any:
    layer = make(tf)
    xs = [tf.Variable(v) for v in x] if isinstance(x, list) else tf.Variable(x)
    layer(xs if not isinstance(x, list) else [tf.constant(v) for v in x])  # build
    if weights is not None:
        layer.set_weights(weights)
    with tf.GradientTape() as tape:
        kw = {} if training is None else {"training": training}
        y = layer(xs, **kw)
        loss = tf.reduce_sum(y * tf.cos(tf.reshape(tf.range(tf.size(y), dtype=y.dtype),
                                                   tf.shape(y))))
    src = (xs if isinstance(xs, list) else [xs]) + list(layer.trainable_weights)
    grads = tape.gradient(loss, src)
    names = [w.name for w in layer.weights]
    return [y, [g for g in grads], names, [w.numpy() for w in layer.weights]]


def _weights_like(rtf: Any, make: Callable[[Any], Any], x: Any) -> list[np.ndarray]:
    layer = make(rtf)
    layer([rtf.constant(v) for v in x] if isinstance(x, list) else rtf.constant(x))
    rng = np.random.default_rng(5)
    return [rng.uniform(0.5, 1.5, w.shape).astype(np.float32) for w in layer.get_weights()]


L = lambda tf: tf.keras.layers  # noqa: E731
LAYERS: dict[str, tuple[Callable[[Any], Any], Any, Any]] = {
    "Conv2D": (lambda tf: L(tf).Conv2D(3, 3), X4, None),
    "Conv2D_same_stride_relu": (lambda tf: L(tf).Conv2D(5, (2, 3), strides=2, padding="same",
                                                        activation="relu"), X4, None),
    "Conv2D_groups_dilation": (lambda tf: L(tf).Conv2D(4, 3, groups=2, dilation_rate=(1, 2)),
                               X4, None),
    "Conv2D_no_bias": (lambda tf: L(tf).Conv2D(2, 1, use_bias=False), X4, None),
    "Conv1D": (lambda tf: L(tf).Conv1D(3, 3, strides=2, padding="same"), X3, None),
    "Conv1D_causal": (lambda tf: L(tf).Conv1D(3, 3, padding="causal", dilation_rate=2), X3,
                      None),
    "Conv2DTranspose": (lambda tf: L(tf).Conv2DTranspose(3, 3, strides=2), X4, None),
    "Conv2DTranspose_same": (lambda tf: L(tf).Conv2DTranspose(3, (3, 2), strides=(2, 3),
                                                              padding="same"), X4, None),
    "Conv2DTranspose_output_padding": (lambda tf: L(tf).Conv2DTranspose(
        2, 3, strides=2, padding="same", output_padding=1), X4, None),
    "DepthwiseConv2D": (lambda tf: L(tf).DepthwiseConv2D(3, depth_multiplier=2, padding="same"),
                        X4, None),
    "MaxPooling2D": (lambda tf: L(tf).MaxPooling2D(), X4, None),
    "MaxPooling2D_same": (lambda tf: L(tf).MaxPooling2D(3, 2, padding="same"), X4, None),
    "MaxPooling1D": (lambda tf: L(tf).MaxPooling1D(2), X3, None),
    "AveragePooling2D": (lambda tf: L(tf).AveragePooling2D((2, 3), padding="same"), X4, None),
    "AveragePooling1D": (lambda tf: L(tf).AveragePooling1D(3, 2), X3, None),
    "GlobalAveragePooling2D": (lambda tf: L(tf).GlobalAveragePooling2D(), X4, None),
    "GlobalMaxPooling2D": (lambda tf: L(tf).GlobalMaxPooling2D(keepdims=True), X4, None),
    "GlobalAveragePooling1D": (lambda tf: L(tf).GlobalAveragePooling1D(), X3, None),
    "BatchNormalization_train": (lambda tf: L(tf).BatchNormalization(), X4, True),
    "BatchNormalization_infer": (lambda tf: L(tf).BatchNormalization(), X4, False),
    "BatchNormalization_axis1": (lambda tf: L(tf).BatchNormalization(axis=1, momentum=0.9),
                                 X4, True),
    "LayerNormalization": (lambda tf: L(tf).LayerNormalization(), X4, None),
    "LayerNormalization_axes": (lambda tf: L(tf).LayerNormalization(axis=[1, 2]), X4, None),
    "LayerNormalization_rms": (lambda tf: L(tf).LayerNormalization(rms_scaling=True), X4,
                               None),
    "GroupNormalization": (lambda tf: L(tf).GroupNormalization(groups=2), X4, None),
    "Dropout_infer": (lambda tf: L(tf).Dropout(0.5), X4, False),
    "SpatialDropout2D_infer": (lambda tf: L(tf).SpatialDropout2D(0.5), X4, None),
    "Flatten": (lambda tf: L(tf).Flatten(), X4, None),
    "Reshape": (lambda tf: L(tf).Reshape((6, -1)), X4, None),
    "Permute": (lambda tf: L(tf).Permute((3, 1, 2)), X4, None),
    "Lambda": (lambda tf: L(tf).Lambda(lambda v: v * 2.0 + 1.0), X4, None),
    "LeakyReLU": (lambda tf: L(tf).LeakyReLU(), X4, None),
    "ReLU_max_slope": (lambda tf: L(tf).ReLU(max_value=1.0, negative_slope=0.1,
                                             threshold=0.2), X4, None),
    "Softmax": (lambda tf: L(tf).Softmax(axis=1), X4, None),
    "Concatenate": (lambda tf: L(tf).Concatenate(axis=1), [X4, X4[:, :3]], None),
    "Add": (lambda tf: L(tf).Add(), [X4, X4 * 2], None),
    "Multiply": (lambda tf: L(tf).Multiply(), [X4, X4 + 1], None),
    "UpSampling2D": (lambda tf: L(tf).UpSampling2D((2, 3)), X4, None),
    "UpSampling2D_bilinear": (lambda tf: L(tf).UpSampling2D(interpolation="bilinear"), X4,
                              None),
    "ZeroPadding2D": (lambda tf: L(tf).ZeroPadding2D(((1, 0), (2, 1))), X4, None),
    "Conv3D": (lambda tf: L(tf).Conv3D(2, (2, 3, 2), padding="same"), X5, None),
    "Conv1DTranspose": (lambda tf: L(tf).Conv1DTranspose(3, 3, strides=2), X3, None),
    # no bias: on this CPU build Keras 3.15 adds bias[0] to every channel of a
    # channels_first Conv2D output (tapegrad adds bias[c] to channel c)
    "Conv2D_channels_first": (lambda tf: L(tf).Conv2D(3, 2, data_format="channels_first",
                                                      use_bias=False), X4, None),
    "GlobalMaxPooling1D": (lambda tf: L(tf).GlobalMaxPooling1D(), X3, None),
    "UpSampling1D": (lambda tf: L(tf).UpSampling1D(3), X3, None),
    "ZeroPadding1D": (lambda tf: L(tf).ZeroPadding1D((2, 1)), X3, None),
    "Cropping2D": (lambda tf: L(tf).Cropping2D(((1, 2), (0, 1))), X4, None),
    "SpatialDropout1D_infer": (lambda tf: L(tf).SpatialDropout1D(0.3), X3, False),
    "Subtract": (lambda tf: L(tf).Subtract(), [X4, X4 * 0.5], None),
    "Average": (lambda tf: L(tf).Average(), [X4, X4 * 3], None),
    "Maximum": (lambda tf: L(tf).Maximum(), [X4, -X4], None),
    "Activation": (lambda tf: L(tf).Activation("tanh"), X4, None),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_keras_layer(rtf: Any, name: str) -> None:
    make, x, training = LAYERS[name]
    w = _weights_like(rtf, make, x)
    both(rtf, lambda tf: _layer_run(tf, make, x, training, w), rtol=1e-4, atol=1e-4)


def test_keras_embedding(rtf: Any) -> None:
    ids = np.array([[1, 4, 4], [0, 2, 3]])
    table = RNG.standard_normal((5, 3)).astype(np.float32)

    def prog(tf: Any) -> Any:
        emb = tf.keras.layers.Embedding(5, 3)
        emb(tf.constant(ids))
        emb.set_weights([table])
        with tf.GradientTape() as tape:
            y = emb(tf.constant(ids))
            loss = tf.reduce_sum(y * y)
        g = tape.gradient(loss, emb.trainable_weights)[0]
        return [y, tf.convert_to_tensor(g), [w.name for w in emb.weights]]
    both(rtf, prog)


def test_keras_default_shapes_names_and_init_range(rtf: Any) -> None:
    def prog(tf: Any) -> Any:
        layers = [tf.keras.layers.Conv2D(4, 3), tf.keras.layers.Conv2DTranspose(4, 3),
                  tf.keras.layers.DepthwiseConv2D(3), tf.keras.layers.BatchNormalization(),
                  tf.keras.layers.GroupNormalization(2), tf.keras.layers.LayerNormalization()]
        out = []
        for layer in layers:
            layer(tf.constant(X4))
            out.append([layer.name.rstrip("_0123456789")] + [w.name for w in layer.weights]
                       + [str(tuple(w.shape)) for w in layer.weights])
        e = tf.keras.layers.Embedding(7, 3)
        e(tf.constant([[1]]))
        out.append([e.name.rstrip("_0123456789"),
                    str(bool(np.all(np.abs(e.get_weights()[0]) <= 0.05)))])
        return out
    both(rtf, prog)


def test_keras_batchnorm_moving_stats_and_training_context(rtf: Any) -> None:
    def prog(tf: Any) -> Any:
        model = tf.keras.Sequential([tf.keras.layers.Conv2D(3, 3),
                                     tf.keras.layers.BatchNormalization(momentum=0.8),
                                     tf.keras.layers.Dropout(0.0)])
        model.build((None, 7, 6, 4))
        rng = np.random.default_rng(3)
        model.set_weights([rng.uniform(-1, 1, w.shape).astype(np.float32)
                           for w in model.get_weights()])
        ys = [model(tf.constant(X4), training=True) for _ in range(2)]
        bn = model.layers[1]
        y_inf = model(tf.constant(X4))  # no training: moving statistics
        bn.trainable = False
        y_frozen = model(tf.constant(X4), training=True)  # frozen BN: inference mode
        return ys + [bn.moving_mean, bn.moving_variance, y_inf, y_frozen]
    both(rtf, prog, rtol=1e-4, atol=1e-5)


def test_keras_dropout_training_draws_a_mask() -> None:
    tg.random.set_seed(0)
    y = tg.keras.layers.Dropout(0.5)(tg.ones([1000]), training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 300 < (y == 0).sum() < 700
    z = tg.keras.layers.SpatialDropout2D(0.5)(tg.ones([4, 3, 3, 8]), training=True).numpy()
    per = z.reshape(4, 9, 8)
    assert np.all((per == per[:, :1]).all(1))


def test_keras_cnn_training_steps(rtf: Any) -> None:
    xb = RNG.standard_normal((8, 10, 10, 1)).astype(np.float32)
    yb = RNG.integers(0, 3, 8)

    def prog(tf: Any) -> Any:
        L = tf.keras.layers
        model = tf.keras.Sequential([
            tf.keras.Input(shape=(10, 10, 1)), L.Conv2D(4, 3, activation="relu"),
            L.BatchNormalization(), L.MaxPooling2D(), L.Conv2D(6, 3, padding="same"),
            L.ReLU(), L.GlobalAveragePooling2D(), L.Dense(3)])
        rng = np.random.default_rng(9)
        model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32)
                           if i not in (3, 5) else np.abs(w) + 1.0
                           for i, w in enumerate(model.get_weights())])
        opt = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        losses = []
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = loss_fn(tf.constant(yb), model(tf.constant(xb), training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            losses.append(loss)
        return losses + list(model.get_weights())
    both(rtf, prog, rtol=2e-4, atol=2e-5)
