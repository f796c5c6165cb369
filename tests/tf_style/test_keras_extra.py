"""Unit tests (no TensorFlow needed) for keras.regularizers, keras.constraints, keras.ops,
the attention and separable-conv layers, keras.mixed_precision and keras.preprocessing:
values against NumPy formulas, gradients against finite differences, configs, errors."""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf

keras = tf.keras
R = keras.regularizers
C = keras.constraints
O = keras.ops

_rng = np.random.default_rng(0)
W = _rng.normal(size=(4, 3)).astype(np.float32)


def _f(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


# ----------------------------------------------------------------------------- regularizers
def test_regularizer_values_match_formulas() -> None:
    np.testing.assert_allclose(_f(R.L1(0.3)(W)), 0.3 * np.abs(W).sum(), rtol=1e-6)
    np.testing.assert_allclose(_f(R.L2(0.1)(W)), 0.1 * np.square(W).sum(), rtol=1e-6)
    np.testing.assert_allclose(_f(R.L1L2(0.1, 0.2)(W)),
                               0.1 * np.abs(W).sum() + 0.2 * np.square(W).sum(), rtol=1e-6)
    n = W / np.linalg.norm(W, axis=1, keepdims=True)
    p = n @ n.T
    want = 0.05 * 0.5 * np.abs(p * (1 - np.eye(4))).sum() / 6.0
    np.testing.assert_allclose(_f(R.OrthogonalRegularizer(0.05)(W)), want, rtol=1e-5)
    assert _f(R.L2(0.1)(W)).dtype == np.float32
    assert _f(R.L2(0.1)(W.astype(np.float64))).dtype == np.float64


def test_regularizer_get_serialize_and_errors() -> None:
    assert isinstance(R.get("l2"), R.L2) and R.get("l2").l2 == 0.01
    assert isinstance(R.get("L1L2"), R.L1L2) and R.get(None) is None
    assert R.l1 is R.L1 and R.l2 is R.L2
    fn = lambda w: 0.0  # noqa: E731
    assert R.get(fn) is fn
    ser = R.serialize(R.L2(0.05))
    assert ser == {"module": "keras.regularizers", "class_name": "L2",
                   "config": {"l2": 0.05}, "registered_name": None}
    back = R.deserialize(ser)
    assert isinstance(back, R.L2) and back.l2 == 0.05
    assert R.get(ser).get_config() == {"l2": 0.05}
    assert R.L1(0.01).get_config() == {"l1": float(np.float32(0.01))}
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: l1_l2"):
        R.get("l1_l2")
    with pytest.raises(ValueError, match="expected a non-negative float"):
        R.L2(-1.0)
    with pytest.raises(ValueError, match="Invalid value for argument `mode`"):
        R.OrthogonalRegularizer(mode="diag")
    with pytest.raises(ValueError, match="must have rank 2"):
        R.OrthogonalRegularizer()(np.ones(3, np.float32))


def test_dense_losses_include_weight_and_activity_penalties() -> None:
    layer = keras.layers.Dense(
        5, kernel_initializer="ones", kernel_regularizer=R.L1(0.01),
        activity_regularizer=R.L2(0.01))
    x = np.full((5, 5), 2.0, np.float32)
    layer(x)
    # Keras's doc example: kernel term 0.25, activity term 5.0 (divided by the batch)
    vals = [float(v) for v in layer.losses]
    np.testing.assert_allclose(vals, [5.0, 0.25], rtol=1e-6)
    layer(x[:1])  # a new call replaces the activity loss; divided by a batch of 1 now
    np.testing.assert_allclose([float(v) for v in layer.losses], [5.0, 0.25], rtol=1e-6)
    layer(x[:1] * 0.5)
    np.testing.assert_allclose([float(v) for v in layer.losses], [1.25, 0.25], rtol=1e-6)


def test_regularized_loss_gradient_matches_finite_differences() -> None:
    reg = R.L1L2(0.03, 0.07)
    v = tf.Variable(W.astype(np.float64))
    with tf.GradientTape() as tape:
        loss = reg(v)
    g = _f(tape.gradient(loss, v))
    w64 = W.astype(np.float64)
    np.testing.assert_allclose(g, 0.03 * np.sign(w64) + 0.14 * w64, rtol=1e-10)
    o = R.OrthogonalRegularizer(0.1, mode="columns")
    w0 = W.astype(np.float64)
    v = tf.Variable(w0)
    with tf.GradientTape() as tape:
        loss = o(v)
    g = _f(tape.gradient(loss, v))
    fd = np.zeros_like(w0)
    eps = 1e-6
    for i in np.ndindex(w0.shape):
        d = np.zeros_like(w0)
        d[i] = eps
        fd[i] = (float(o(w0 + d)) - float(o(w0 - d))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)


def test_fit_adds_the_penalties_to_the_loss() -> None:
    x = _rng.normal(size=(8, 3)).astype(np.float32)
    y = _rng.normal(size=(8, 1)).astype(np.float32)

    def make(reg: Any) -> Any:
        m = keras.Sequential([keras.Input((3,)),
                              keras.layers.Dense(1, kernel_initializer="ones",
                                                 kernel_regularizer=reg)])
        m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
        return m

    plain = make(None).evaluate(x, y, verbose=0)
    reg = make(R.L2(0.5)).evaluate(x, y, verbose=0)
    np.testing.assert_allclose(reg - plain, 0.5 * 3.0, rtol=1e-5)
    m = make(R.L2(0.5))
    h = m.fit(x, y, epochs=1, batch_size=8, verbose=0)
    np.testing.assert_allclose(h.history["loss"][0], reg, rtol=1e-6)


def test_regularizer_configs_round_trip_through_a_keras_file() -> None:
    m = keras.Sequential([keras.Input((3,)),
                          keras.layers.Dense(2, kernel_regularizer=R.L2(0.2),
                                             bias_constraint=C.NonNeg(),
                                             activity_regularizer="l1")])
    cfg = m.layers[0].get_config()
    assert cfg["activity_regularizer"]["class_name"] == "L1"
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.keras")
        m.save(p)
        m2 = keras.models.load_model(p)
    d2 = m2.layers[0]
    assert isinstance(d2.kernel_regularizer, R.L2) and d2.kernel_regularizer.l2 == 0.2
    assert isinstance(d2.bias_constraint, C.NonNeg)
    assert isinstance(d2.activity_regularizer, R.L1)
    assert d2.kernel.regularizer is d2.kernel_regularizer


def test_regularizers_reach_conv_embedding_rnn_and_norm_layers() -> None:
    conv = keras.layers.Conv2D(2, 2, kernel_regularizer="l2", bias_regularizer="l1")
    conv(np.ones((1, 3, 3, 1), np.float32))
    assert len(conv.losses) == 2
    emb = keras.layers.Embedding(5, 2, embeddings_regularizer=R.L2(1.0))
    emb(np.array([[1, 2]]))
    np.testing.assert_allclose(float(emb.losses[0]),
                               np.square(_f(emb.embeddings)).sum(), rtol=1e-6)
    lstm = keras.layers.LSTM(2, kernel_regularizer="l2", recurrent_regularizer="l1",
                             bias_regularizer="l2")
    lstm(np.ones((1, 3, 2), np.float32))
    assert len(lstm.losses) == 3
    bn = keras.layers.BatchNormalization(gamma_regularizer=R.L2(1.0))
    bn(np.ones((2, 3), np.float32))
    np.testing.assert_allclose(float(bn.losses[0]), 3.0)
    frozen = keras.layers.Dense(2, kernel_regularizer="l2")
    frozen(np.ones((1, 2), np.float32))
    frozen.trainable = False
    assert frozen.losses == []


# ----------------------------------------------------------------------------- constraints
def test_constraint_values() -> None:
    w = W.astype(np.float32)
    norms = np.sqrt((w ** 2).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(_f(C.MaxNorm(1.0)(w)),
                               w * (np.clip(norms, 0, 1.0) / (1e-7 + norms)), rtol=1e-6)
    np.testing.assert_allclose(_f(C.UnitNorm()(w)), w / (1e-7 + norms), rtol=1e-6)
    np.testing.assert_array_equal(_f(C.NonNeg()(w)), np.maximum(w, 0))
    mm = C.MinMaxNorm(0.5, 0.8, rate=0.5)
    want = w * ((0.5 * np.clip(norms, 0.5, 0.8) + 0.5 * norms) / (1e-7 + norms))
    np.testing.assert_allclose(_f(mm(w)), want, rtol=1e-6)
    n1 = np.sqrt((w ** 2).sum(axis=(0, 1), keepdims=True))
    np.testing.assert_allclose(_f(C.UnitNorm(axis=[0, 1])(w)), w / (1e-7 + n1), rtol=1e-6)
    assert C.serialize(C.MaxNorm(3)) == {"module": "keras.constraints", "class_name": "MaxNorm",
                                        "config": {"max_value": 3, "axis": 0},
                                        "registered_name": None}
    assert isinstance(C.get("non_neg"), C.NonNeg) and isinstance(C.get("MaxNorm"), C.MaxNorm)
    with pytest.raises(ValueError, match="Could not interpret constraint identifier: foo"):
        C.get("foo")


def test_constraints_apply_after_each_optimizer_step_not_on_assign() -> None:
    layer = keras.layers.Dense(2, kernel_initializer="ones", kernel_constraint=C.NonNeg(),
                               bias_constraint=C.MaxNorm(0.5))
    layer.build((None, 2))
    layer.kernel.assign(-np.ones((2, 2), np.float32))
    assert (_f(layer.kernel) < 0).all()  # assign is not constrained (Keras 3)
    opt = keras.optimizers.SGD(1.0)
    opt.apply_gradients([(np.full((2, 2), -0.5, np.float32), layer.kernel),
                         (np.full((2,), -3.0, np.float32), layer.bias)])
    np.testing.assert_array_equal(_f(layer.kernel), np.zeros((2, 2), np.float32))
    b = _f(layer.bias)
    np.testing.assert_allclose(np.linalg.norm(b), 0.5, rtol=1e-5)
    assert int(opt.iterations) == 1


def test_fit_keeps_constrained_weights_in_bounds() -> None:
    x = _rng.normal(size=(16, 3)).astype(np.float32)
    y = (x @ np.array([[-2.0], [3.0], [-1.0]], np.float32)).astype(np.float32)
    m = keras.Sequential([keras.Input((3,)),
                          keras.layers.Dense(1, kernel_constraint="non_neg",
                                             kernel_initializer="ones")])
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    m.fit(x, y, epochs=3, batch_size=4, verbose=0)
    assert (_f(m.layers[0].kernel) >= 0).all()


# ----------------------------------------------------------------------------- keras.ops
def test_ops_dtypes_follow_keras_promotion() -> None:
    i32 = np.array([1, 2, 3], np.int32)
    f32 = np.array([1.0, 2.0, 3.0], np.float32)
    assert O.add(i32, f32).dtype == tf.float32
    assert O.add(i32, 2).dtype == tf.int32
    assert O.add(i32, 2.5).dtype == tf.float32
    assert O.add(i32.astype(np.int64), f32).dtype == tf.float32
    assert O.add(np.array([1], np.uint8), np.array([1], np.int8)).dtype == tf.int16
    assert O.divide(i32, i32).dtype == tf.float32
    assert O.multiply(f32.astype(np.float64), f32).dtype == tf.float64
    assert O.sum(np.array([True, False])).dtype == tf.int32
    assert O.mean(i32).dtype == tf.float32
    assert O.exp(i32).dtype == tf.float32
    assert O.argmax(f32).dtype == tf.int32
    assert O.arange(3).dtype == tf.int32 and O.arange(3.0).dtype == tf.float32
    assert O.cumsum(i32).dtype == tf.int32
    assert O.shape(O.ones((2, 3))) == (2, 3)
    assert isinstance(O.convert_to_numpy(O.ones((2,))), np.ndarray)


def test_ops_values_against_numpy() -> None:
    x = _rng.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(_f(O.softmax(x)), np.exp(x) / np.exp(x).sum(-1, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(_f(O.logsumexp(x, axis=1)),
                               np.log(np.exp(x).sum(1)), rtol=1e-5)
    np.testing.assert_allclose(_f(O.norm(x, axis=1)), np.linalg.norm(x, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(_f(O.take_along_axis(x, np.argsort(x, 1), 1)),
                                  np.sort(x, 1))
    np.testing.assert_array_equal(_f(O.take(x, [-1, 0], axis=1)), x[:, [-1, 0]])
    np.testing.assert_array_equal(_f(O.scatter([[0, 1], [0, 1]], [1.0, 2.0], (2, 2))),
                                  np.array([[0, 3.0], [0, 0]], np.float32))
    v, i = O.top_k(np.array([1.0, 5.0, 3.0], np.float32), 2)
    np.testing.assert_array_equal(_f(i), [1, 2])
    parts = O.split(x, [1, 3], axis=1)
    assert [tuple(p.shape) for p in parts] == [(3, 1), (3, 2), (3, 1)]
    assert [_f(t).tolist() for t in O.where(np.array([True, False, True]))] == [[0, 2]]
    i_out, s_out = O.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0), (0, 1.0))
    assert int(i_out) == 3 and float(s_out) == 8.0
    assert float(O.fori_loop(0, 3, lambda i, v: v + 1.0, 0.0)) == 3.0
    np.testing.assert_array_equal(_f(O.pad(np.ones((1, 1), np.float32), ((1, 0), (0, 1)))),
                                  np.array([[0, 0], [1, 0]], np.float32))
    bce = _f(O.binary_crossentropy(np.array([0.0, 1.0], np.float32),
                                   np.array([0.3, 0.6], np.float32)))
    np.testing.assert_allclose(bce, -np.log([0.7, 0.6]), rtol=1e-6)


def test_ops_are_differentiable() -> None:
    x = tf.Variable(_rng.normal(size=(3, 4)))
    with tf.GradientTape() as tape:
        y = O.sum(O.square(O.tanh(O.matmul(x, O.transpose(x)))))
    g = _f(tape.gradient(y, x))
    x0 = _f(x)

    def f(a: np.ndarray) -> float:
        return float(np.sum(np.tanh(a @ a.T) ** 2))

    fd = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = 1e-6
        fd[i] = (f(x0 + d) - f(x0 - d)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_ops_bad_input() -> None:
    with pytest.raises(ValueError, match="either both should be `None`"):
        O.where(np.array([True]), 1.0)
    with pytest.raises(NotImplementedError):
        O.norm(np.ones((2, 2), np.float32), ord="nuc", axis=(0, 1))


# ----------------------------------------------------------------------------- layers
def test_attention_matches_numpy() -> None:
    q = _rng.normal(size=(2, 3, 4)).astype(np.float32)
    v = _rng.normal(size=(2, 5, 4)).astype(np.float32)
    vm = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    att = keras.layers.Attention()
    out, scores = att([q, v], mask=[None, vm], return_attention_scores=True)
    s = q @ v.transpose(0, 2, 1)
    s = np.where(vm[:, None, :], s, s - 1e9)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(_f(scores), w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_f(out), w @ v, rtol=1e-5, atol=1e-6)
    causal = _f(att([q, v], use_causal_mask=True, return_attention_scores=True)[1])
    assert np.allclose(np.triu(causal[0], 1), 0)
    add = keras.layers.AdditiveAttention()
    o2 = add([q, v])
    sc = _f(add.scale)
    s2 = (sc * np.tanh(q[:, :, None, :] + v[:, None, :, :])).sum(-1)
    w2 = np.exp(s2 - s2.max(-1, keepdims=True))
    w2 /= w2.sum(-1, keepdims=True)
    np.testing.assert_allclose(_f(o2), w2 @ v, rtol=1e-5, atol=1e-6)
    assert [w_.name for w_ in add.weights] == ["scale"]
    assert "score_mode" not in add.get_config()
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        att(q)
    with pytest.raises(ValueError, match="Invalid value for argument score_mode"):
        keras.layers.Attention(score_mode="x")


def test_attention_in_a_functional_model_trains() -> None:
    qi = keras.Input((3, 4))
    vi = keras.Input((5, 4))
    y = keras.layers.Attention(use_scale=True)([qi, vi])
    y = keras.layers.GlobalAveragePooling1D()(y)
    m = keras.Model([qi, vi], keras.layers.Dense(1)(y))
    m.compile(optimizer="adam", loss="mse")
    q = _rng.normal(size=(4, 3, 4)).astype(np.float32)
    v = _rng.normal(size=(4, 5, 4)).astype(np.float32)
    h = m.fit([q, v], np.ones((4, 1), np.float32), epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2 and np.isfinite(h.history["loss"]).all()


def test_separable_conv_equals_depthwise_then_pointwise() -> None:
    x = _rng.normal(size=(1, 5, 5, 2)).astype(np.float32)
    sc = keras.layers.SeparableConv2D(3, 2, depth_multiplier=2, padding="same")
    y = sc(x)
    dw = keras.layers.DepthwiseConv2D(2, depth_multiplier=2, padding="same", use_bias=False)
    dw.build((None, 5, 5, 2))
    dw.set_weights([_f(sc.depthwise_kernel)])
    ref = np.einsum("nhwc,cf->nhwf", _f(dw(x)), _f(sc.pointwise_kernel)[0, 0]) + _f(sc.bias)
    np.testing.assert_allclose(_f(y), ref, rtol=1e-5, atol=1e-6)
    assert [w.name for w in sc.weights] == ["depthwise_kernel", "pointwise_kernel", "bias"]
    sc1 = keras.layers.SeparableConv1D(4, 3)
    assert tuple(sc1(np.ones((2, 6, 2), np.float32)).shape) == (2, 4, 4)
    assert tuple(sc1.pointwise_kernel.shape) == (1, 2, 4)
    cfg = sc1.get_config()
    assert cfg["filters"] == 4 and cfg["pointwise_regularizer"] is None


# ----------------------------------------------------------------------------- mixed precision
def test_mixed_precision_policies() -> None:
    mp = keras.mixed_precision
    try:
        assert repr(mp.global_policy()) == '<DTypePolicy "float32">'
        mp.set_global_policy("float64")
        d = keras.layers.Dense(2)
        assert d(np.ones((1, 2))).dtype == tf.float64 and d.kernel.dtype == "float64"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mp.set_global_policy("mixed_float16")
        d = keras.layers.Dense(2)
        d.build((None, 2))
        assert d.dtype_policy.name == "mixed_float16" and d.kernel.dtype == "float32"
        p = mp.Policy("mixed_bfloat16")
        assert (p.compute_dtype, p.variable_dtype) == ("bfloat16", "float32")
        with pytest.raises(ValueError, match="Cannot convert 'foo'"):
            mp.set_global_policy("foo")
    finally:
        mp.set_global_policy("float32")


def test_loss_scale_optimizer_trains_like_its_inner_optimizer() -> None:
    x = _rng.normal(size=(8, 3)).astype(np.float32)
    y = _rng.normal(size=(8, 1)).astype(np.float32)
    hist = []
    for wrap in (False, True):
        m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="ones")])
        opt: Any = keras.optimizers.SGD(0.1)
        if wrap:
            opt = keras.mixed_precision.LossScaleOptimizer(opt)
        m.compile(optimizer=opt, loss="mse")
        hist.append(m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
                    .history["loss"])
    np.testing.assert_allclose(hist[0], hist[1], rtol=1e-6)
    lso = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1))
    v = tf.Variable([1.0])
    lso.apply_gradients([(tf.constant([np.inf]), v)])
    assert float(v[0]) == 1.0 and float(lso.dynamic_scale) == 2.0 ** 14


# ----------------------------------------------------------------------------- preprocessing
def test_pad_sequences() -> None:
    ps = keras.preprocessing.sequence.pad_sequences
    np.testing.assert_array_equal(ps([[1, 2, 3], [4], []]),
                                  [[1, 2, 3], [0, 0, 4], [0, 0, 0]])
    np.testing.assert_array_equal(ps([[1, 2, 3], [4]], maxlen=2, padding="post",
                                     truncating="post", value=-1), [[1, 2], [4, -1]])
    assert ps([[1]]).dtype == np.int32 and keras.utils.pad_sequences is ps
    with pytest.raises(ValueError, match='Padding type "mid" not understood'):
        ps([[1]], padding="mid")
    img = keras.preprocessing.image.img_to_array(np.zeros((3, 4), np.uint8))
    assert img.shape == (3, 4, 1) and img.dtype == np.float32


# ----------------------------------------------------------------------------- augmentation
def test_augmentation_layers_inference_and_shapes() -> None:
    L = keras.layers
    x = _rng.uniform(0, 255, size=(2, 5, 6, 3)).astype(np.float32)
    for layer in (L.RandomContrast(0.5, seed=1), L.RandomBrightness(0.2, seed=1),
                  L.RandomTranslation(0.2, 0.3, seed=1), L.RandomRotation(0.2, seed=1),
                  L.RandomZoom(0.3, seed=1)):
        np.testing.assert_array_equal(_f(layer(x, training=False)), x)
        y = _f(layer(x))
        assert y.shape == x.shape and not np.array_equal(y, x)
        assert _f(layer(x[0])).shape == x[0].shape
    crop = L.RandomCrop(3, 4, seed=2)
    assert _f(crop(x)).shape == (2, 3, 4, 3)
    assert _f(L.RandomCrop(8, 8, seed=2)(x)).shape == (2, 8, 8, 3)


def test_random_contrast_and_brightness_formulas() -> None:
    x = _rng.uniform(0, 255, size=(2, 4, 4, 1)).astype(np.float32)
    y = _f(keras.layers.RandomContrast((0.0, 0.0), seed=3)(x))
    np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-4)  # factor 1: unchanged (mean rounding)
    y = _f(keras.layers.RandomBrightness((0.5, 0.5), value_range=(0, 255), seed=3)(x))
    np.testing.assert_allclose(y, np.clip(x + 127.5, 0, 255), rtol=1e-6)
    with pytest.raises(ValueError, match=r"in the range \[0, 1\]"):
        keras.layers.RandomContrast(1.5)


def test_affine_kernel_identity_shift_and_gradient() -> None:
    from tapegrad.tf.keras.layers_augment import affine_transform

    img = np.arange(20, dtype=np.float32).reshape(1, 4, 5, 1)
    ident = np.array([[1, 0, 0, 0, 1, 0, 0, 0]], np.float32)
    np.testing.assert_array_equal(_f(affine_transform(tf.constant(img), ident, "bilinear",
                                                      "reflect", 0.0)), img)
    shift = np.array([[1, 0, -1, 0, 1, 0, 0, 0]], np.float32)  # output x reads input x - 1
    out = _f(affine_transform(tf.constant(img), shift, "nearest", "constant", -1.0))
    np.testing.assert_array_equal(out[0, :, 1:, 0], img[0, :, :-1, 0])
    np.testing.assert_array_equal(out[0, :, 0, 0], -1.0)
    wrap = _f(affine_transform(tf.constant(img), shift, "nearest", "wrap", 0.0))
    np.testing.assert_array_equal(wrap[0, :, 0, 0], img[0, :, -1, 0])
    half = np.array([[1, 0, 0.5, 0, 1, 0, 0, 0]], np.float32)
    v = tf.Variable(img)
    with tf.GradientTape() as tape:
        y = affine_transform(v, half, "bilinear", "nearest", 0.0)
        s = tf.reduce_sum(y)
    mid = _f(y)[0, 0, :4, 0]
    np.testing.assert_allclose(mid, (img[0, 0, :4, 0] + img[0, 0, 1:, 0]) / 2)
    g = _f(tape.gradient(s, v))[0, :, :, 0]
    np.testing.assert_allclose(g.sum(), 20.0, rtol=1e-6)  # each output pixel: weights sum to 1


def test_conv_lstm2d_matches_a_numpy_step_loop() -> None:
    x = _rng.normal(size=(1, 2, 4, 4, 1)).astype(np.float32)
    layer = keras.layers.ConvLSTM2D(2, 1, return_sequences=True, return_state=True)
    layer.build(x.shape)
    k, rk, b = (_f(w) for w in layer.weights)
    assert [w.path for w in layer.weights] == [
        f"{layer.name}/conv_lstm_cell/kernel", f"{layer.name}/conv_lstm_cell/recurrent_kernel",
        f"{layer.name}/conv_lstm_cell/bias"]
    np.testing.assert_array_equal(b, [0, 0, 1, 1, 0, 0, 0, 0])  # unit_forget_bias
    seq, h_last, c_last = layer(x)

    def sig(v: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-v))

    h = np.zeros((1, 4, 4, 2), np.float64)
    c = np.zeros_like(h)
    outs = []
    for t in range(2):
        z = x[:, t] @ k[0, 0] + h @ rk[0, 0] + b  # 1x1 kernels: per-pixel matmuls
        i, f, g, o = np.split(z, 4, axis=-1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        outs.append(h)
    np.testing.assert_allclose(_f(seq), np.stack(outs, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_f(h_last), h[0][None], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_f(c_last), c, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError):
        keras.layers.ConvLSTM2D(2, 3, stateful=True)
    drop = keras.layers.ConvLSTM2D(2, 1, dropout=0.5, recurrent_dropout=0.5, seed=1)
    drop.build(x.shape)
    np.testing.assert_array_equal(_f(drop(x)), _f(drop(x)))  # inference: no masks
    assert not np.array_equal(_f(drop(x, training=True)), _f(drop(x)))
    m = keras.Sequential([keras.Input((2, 4, 4, 1)),
                          keras.layers.ConvLSTM2D(2, 3, padding="same", kernel_regularizer="l2"),
                          keras.layers.Flatten(), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    hist = m.fit(x.repeat(2, 0), np.ones((2, 1), np.float32), epochs=2, verbose=0)
    assert np.isfinite(hist.history["loss"]).all() and len(m.losses) == 1
