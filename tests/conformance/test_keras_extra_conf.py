"""Conformance: keras.regularizers, keras.constraints, keras.ops, the attention layers,
mixed_precision and preprocessing against real Keras 3 (TensorFlow backend): values,
dtypes, ``model.losses``, fit histories, constraint effects, configs and error texts.
Skipped without TensorFlow."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rk():  # type: ignore[no-untyped-def]
    real_tf()
    import keras

    return keras


_rng = np.random.default_rng(0)
F = _rng.normal(size=(3, 4)).astype(np.float32)
G = _rng.normal(size=(4, 2)).astype(np.float32)
P = _rng.uniform(0.05, 0.95, size=(3, 4)).astype(np.float32)
I32 = np.array([[1, -2, 3, 0], [4, 5, -6, 2], [0, 1, 1, 3]], np.int32)
I64 = I32.astype(np.int64)
U8 = np.array([1, 2, 250], np.uint8)
B = F > 0
F64 = F.astype(np.float64)
IDX = np.array([2, 0, 1], np.int32)


def _np(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    if hasattr(x, "values") and hasattr(x, "indices") and not hasattr(x, "numpy"):
        return [_np(x.values), _np(x.indices)]
    return np.asarray(x)


def _same(a: Any, b: Any, rtol: float = 2e-6, atol: float = 1e-7) -> None:
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v, rtol, atol)
        return
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(a, b)


OPS_CASES: list[tuple[str, Any]] = [
    ("add", lambda o: o.add(I32, F)), ("add_i64_f32", lambda o: o.add(I64, F)),
    ("add_u8_i8", lambda o: o.add(U8, np.array([1, 2, 3], np.int8))),
    ("add_scalar_f", lambda o: o.add(I32, 2.5)), ("add_scalar_i", lambda o: o.add(I32, 2)),
    ("add_f64", lambda o: o.add(F64, F)), ("add_py", lambda o: o.add(1, 2)),
    ("subtract", lambda o: o.subtract(F, 1)), ("multiply", lambda o: o.multiply(I32, I32)),
    ("divide_int", lambda o: o.divide(I32, 2)), ("divide_i64", lambda o: o.divide(I64, I64 + 10)),
    ("divide", lambda o: o.divide(F, P)), ("power", lambda o: o.power(P, 2)),
    ("power_int", lambda o: o.power(I32, 2)),
    ("maximum", lambda o: o.maximum(F, 0.0)), ("minimum", lambda o: o.minimum(I32, F)),
    ("matmul", lambda o: o.matmul(F, G)), ("dot", lambda o: o.dot(F, G)),
    ("matmul_vec", lambda o: o.matmul(F, G[:, 0])),
    ("sum", lambda o: o.sum(F, axis=1)), ("sum_bool", lambda o: o.sum(B)),
    ("sum_u8", lambda o: o.sum(U8)), ("sum_keep", lambda o: o.sum(I32, axis=0, keepdims=True)),
    ("mean", lambda o: o.mean(F)), ("mean_int", lambda o: o.mean(I32, axis=1)),
    ("max", lambda o: o.max(F, axis=0)), ("min", lambda o: o.min(I32)),
    ("argmax", lambda o: o.argmax(F, axis=1)), ("argmin", lambda o: o.argmin(F)),
    ("argmax_keep", lambda o: o.argmax(F, axis=0, keepdims=True)),
    ("abs", lambda o: o.abs(I32)), ("abs_f", lambda o: o.abs(F)),
    ("exp", lambda o: o.exp(F)), ("exp_int", lambda o: o.exp(I32)), ("log", lambda o: o.log(P)),
    ("sqrt", lambda o: o.sqrt(P)), ("sqrt_int", lambda o: o.sqrt(np.abs(I32))),
    ("square", lambda o: o.square(F)), ("square_bool", lambda o: o.square(B)),
    ("sigmoid", lambda o: o.sigmoid(F)), ("relu", lambda o: o.relu(F)),
    ("relu_int", lambda o: o.relu(I32)),
    ("softmax", lambda o: o.softmax(F)), ("softmax_axis0", lambda o: o.softmax(F, axis=0)),
    ("log_softmax", lambda o: o.log_softmax(F)), ("tanh", lambda o: o.tanh(F)),
    ("tanh_int", lambda o: o.tanh(I32)),
    ("concatenate", lambda o: o.concatenate([F, F], axis=1)),
    ("concatenate_mixed", lambda o: o.concatenate([I32, F])),
    ("stack", lambda o: o.stack([F, F], axis=1)), ("reshape", lambda o: o.reshape(F, (2, -1))),
    ("transpose", lambda o: o.transpose(F)), ("transpose_axes", lambda o: o.transpose(
        F.reshape(3, 2, 2), (2, 0, 1))),
    ("expand_dims", lambda o: o.expand_dims(F, 1)), ("squeeze", lambda o: o.squeeze(F[:1])),
    ("cast", lambda o: o.cast(F, "int32")), ("cast_f16", lambda o: o.cast(I32, "float16")),
    ("convert_list", lambda o: o.convert_to_tensor([1, 2])),
    ("convert_f64", lambda o: o.convert_to_tensor(F64)),
    ("convert_dtype", lambda o: o.convert_to_tensor([1, 2], dtype="float32")),
    ("zeros", lambda o: o.zeros((2, 3))), ("ones_int", lambda o: o.ones((2,), dtype="int32")),
    ("zeros_like", lambda o: o.zeros_like(I32)), ("ones_like", lambda o: o.ones_like(F)),
    ("full", lambda o: o.full((2, 2), 3.0)),
    ("arange", lambda o: o.arange(5)), ("arange_f", lambda o: o.arange(0, 3, 0.5)),
    ("arange_fstop", lambda o: o.arange(3.0)),
    ("linspace", lambda o: o.linspace(0, 1, 5)), ("eye", lambda o: o.eye(3)),
    ("where", lambda o: o.where(B, F, 0.0)), ("where_int", lambda o: o.where(B, I32, 7)),
    ("where_1", lambda o: o.where(B)),
    ("clip", lambda o: o.clip(F, -0.5, 0.5)), ("clip_int", lambda o: o.clip(I32, 0, 3)),
    ("take", lambda o: o.take(F, IDX, axis=0)), ("take_flat", lambda o: o.take(F, [1, -1])),
    ("take_along", lambda o: o.take_along_axis(F, np.argsort(F, axis=1), axis=1)),
    ("one_hot", lambda o: o.one_hot(IDX, 4)), ("cumsum", lambda o: o.cumsum(F, axis=1)),
    ("cumsum_flat", lambda o: o.cumsum(I32)), ("cumsum_bool", lambda o: o.cumsum(B, axis=0)),
    ("sort", lambda o: o.sort(F)), ("argsort", lambda o: o.argsort(F, axis=0)),
    ("top_k", lambda o: o.top_k(F, 2)),
    ("einsum", lambda o: o.einsum("ij,jk->ik", F, G)),
    ("norm", lambda o: o.norm(F)), ("norm_axis", lambda o: o.norm(F, axis=1)),
    ("norm_1", lambda o: o.norm(F, ord=1, axis=0)),
    ("logsumexp", lambda o: o.logsumexp(F, axis=1)), ("erf", lambda o: o.erf(F)),
    ("gelu", lambda o: o.gelu(F)), ("gelu_exact", lambda o: o.gelu(F, approximate=False)),
    ("silu", lambda o: o.silu(F)), ("softplus", lambda o: o.softplus(F)),
    ("bce", lambda o: o.binary_crossentropy((P > 0.5).astype(np.float32), P)),
    ("bce_logits", lambda o: o.binary_crossentropy((P > 0.5).astype(np.float32), F,
                                                   from_logits=True)),
    ("cce", lambda o: o.categorical_crossentropy(np.eye(4, dtype=np.float32)[IDX], P)),
    ("cce_logits", lambda o: o.categorical_crossentropy(np.eye(4, dtype=np.float32)[IDX], F,
                                                        from_logits=True)),
    ("scce", lambda o: o.sparse_categorical_crossentropy(IDX, P)),
    ("scce_logits", lambda o: o.sparse_categorical_crossentropy(IDX, F, from_logits=True)),
    ("tile", lambda o: o.tile(F, (2, 1))), ("tile_int", lambda o: o.tile(IDX, 2)),
    ("repeat", lambda o: o.repeat(F, 2, axis=1)), ("repeat_flat", lambda o: o.repeat(IDX, 2)),
    ("split", lambda o: o.split(F, 2, axis=1)), ("split_idx", lambda o: o.split(F, [1], axis=0)),
    ("flip", lambda o: o.flip(F, axis=1)), ("flip_all", lambda o: o.flip(F)),
    ("broadcast_to", lambda o: o.broadcast_to(IDX, (2, 3))),
    ("any", lambda o: o.any(B, axis=1)), ("all", lambda o: o.all(B)),
    ("isnan", lambda o: o.isnan(np.array([1.0, np.nan], np.float32))),
    ("isfinite", lambda o: o.isfinite(np.array([1.0, np.inf], np.float32))),
    ("isnan_int", lambda o: o.isnan(I32)),
    ("stop_gradient", lambda o: o.stop_gradient(F)),
    ("scatter", lambda o: o.scatter(np.array([[0, 1], [2, 3], [0, 1]]),
                                    np.array([1.0, 2.0, 3.0], np.float32), (3, 4))),
    ("slice", lambda o: o.slice(F, (1, 0), (2, 3))),
    ("equal", lambda o: o.equal(I32, 1)), ("greater", lambda o: o.greater(F, 0)),
    ("logical_and", lambda o: o.logical_and(B, F > 0.5)),
    ("sign", lambda o: o.sign(F)), ("negative", lambda o: o.negative(I32)),
    ("floor", lambda o: o.floor(F)), ("round", lambda o: o.round(F)),
    ("var", lambda o: o.var(F, axis=0)), ("std", lambda o: o.std(F)),
    ("prod", lambda o: o.prod(F, axis=1)), ("log1p", lambda o: o.log1p(P)),
    ("leaky_relu", lambda o: o.leaky_relu(F)), ("elu", lambda o: o.elu(F)),
    ("selu", lambda o: o.selu(F)), ("log_sigmoid", lambda o: o.log_sigmoid(F)),
    ("softsign", lambda o: o.softsign(F)), ("relu6", lambda o: o.relu6(F * 10)),
    ("pad", lambda o: o.pad(F, ((1, 0), (0, 2)))),
    ("outer", lambda o: o.outer(IDX, IDX)), ("tensordot", lambda o: o.tensordot(F, G, 1)),
    ("mod", lambda o: o.mod(I32, 4)), ("floor_divide", lambda o: o.floor_divide(I32, 4)),
    ("conv", lambda o: o.conv(F.reshape(1, 3, 4), G.reshape(2, 2, 2)[:, :, :].repeat(2, 1)
                             [:, :4, :], padding="same")),
    ("conv2d", lambda o: o.conv(np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2),
                               np.ones((2, 2, 2, 3), np.float32), strides=2)),
    ("max_pool", lambda o: o.max_pool(np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2), 2)),
    ("average_pool", lambda o: o.average_pool(
        np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2), 2, strides=1, padding="same")),
    ("convert_to_numpy", lambda o: o.convert_to_numpy(o.ones((2,)))),
    ("cond", lambda o: o.cond(True, lambda: o.ones((2,)), lambda: o.zeros((2,)))),
    ("while_loop", lambda o: o.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s * 2.0),
                                          (0, 1.0))),
    ("fori_loop", lambda o: o.fori_loop(0, 4, lambda i, v: v + o.cast(i, "float32"), 0.5)),
    ("vectorized_map", lambda o: o.vectorized_map(lambda r: o.sum(r * r), F)),
]


@pytest.mark.parametrize("name,fn", OPS_CASES, ids=[c[0] for c in OPS_CASES])
def test_keras_ops_match(rk: Any, name: str, fn: Any) -> None:
    ref = _np(fn(rk.ops))
    got = _np(fn(tg_tf.keras.ops))
    _same(got, ref)


def test_keras_ops_shape_and_result_types(rk: Any) -> None:
    for o in (rk.ops, tg_tf.keras.ops):
        assert o.shape(o.ones((2, 3))) == (2, 3)
    assert type(tg_tf.keras.ops.add(F, F)).__name__ == "Tensor" or \
        isinstance(tg_tf.keras.ops.add(F, F), tg_tf.Tensor)


# ----------------------------------------------------------------------------- regularizers
def _build_reg_model(k: Any) -> Any:
    Cst = k.initializers.Constant
    return k.Sequential([
        k.Input((4,)),
        k.layers.Dense(3, activation="relu", kernel_regularizer=k.regularizers.L2(0.05),
                       bias_regularizer="l1",
                       activity_regularizer=k.regularizers.L1L2(0.01, 0.02),
                       kernel_initializer=Cst(0.3), kernel_constraint=k.constraints.MaxNorm(0.5)),
        k.layers.Dense(2, kernel_regularizer=k.regularizers.OrthogonalRegularizer(0.1),
                       kernel_initializer="ones", bias_constraint="non_neg",
                       bias_initializer=Cst(-0.1))])


def _reg_run(k: Any) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.normal(size=(16, 2)).astype(np.float32)
    m = _build_reg_model(k)
    m(x)
    out: dict[str, Any] = {"losses": [float(v) for v in m.losses]}
    m.compile(optimizer=k.optimizers.SGD(0.1), loss="mse")
    out["hist"] = m.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False).history["loss"]
    out["eval"] = m.evaluate(x, y, verbose=0, batch_size=8)
    out["tob"] = float(np.asarray(m.train_on_batch(x, y)))
    out["weights"] = m.get_weights()
    return out


def test_regularized_fit_matches_keras(rk: Any) -> None:
    ref, got = _reg_run(rk), _reg_run(tg_tf.keras)
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=1e-6)
    np.testing.assert_allclose(got["hist"], ref["hist"], rtol=1e-5)
    np.testing.assert_allclose(got["eval"], ref["eval"], rtol=1e-5)
    np.testing.assert_allclose(got["tob"], ref["tob"], rtol=1e-5)
    for a, b in zip(got["weights"], ref["weights"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _conv_rnn_run(k: Any) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 5, 3)).astype(np.float32)
    y = rng.normal(size=(6, 2)).astype(np.float32)
    Cst = k.initializers.Constant
    m = k.Sequential([
        k.Input((5, 3)),
        k.layers.Conv1D(4, 2, kernel_initializer=Cst(0.2), kernel_regularizer="l2",
                        bias_regularizer=k.regularizers.L1(0.1), bias_initializer=Cst(0.5),
                        activity_regularizer="l2",
                        kernel_constraint=k.constraints.UnitNorm(axis=[0, 1])),
        k.layers.LSTM(3, kernel_initializer=Cst(0.1), recurrent_initializer=Cst(0.05),
                      kernel_regularizer=k.regularizers.L1L2(0.01, 0.01),
                      recurrent_regularizer="l1", activity_regularizer="l1",
                      recurrent_constraint=k.constraints.MinMaxNorm(0.1, 0.3, rate=0.5)),
        k.layers.Dense(2, kernel_initializer=Cst(0.3), kernel_constraint="non_neg")])
    m(x)
    out: dict[str, Any] = {"losses": [float(v) for v in m.losses]}
    m.compile(optimizer=k.optimizers.Adam(0.05), loss="mse")
    out["hist"] = m.fit(x, y, batch_size=3, epochs=3, verbose=0, shuffle=False).history["loss"]
    out["weights"] = m.get_weights()
    out["cfg"] = {key: v for key, v in m.layers[1].get_config().items()
                  if key.endswith(("_regularizer", "_constraint"))}
    return out


def test_conv_lstm_penalties_and_constraints_match_keras(rk: Any) -> None:
    ref, got = _conv_rnn_run(rk), _conv_rnn_run(tg_tf.keras)
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=1e-6)
    np.testing.assert_allclose(got["hist"], ref["hist"], rtol=1e-5)
    for a, b in zip(got["weights"], ref["weights"]):
        # Keras's recurrent kernel drifts apart by float noise across equal columns
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    assert got["cfg"] == ref["cfg"]


def test_regularizer_objects_match_keras(rk: Any) -> None:
    w = _rng.normal(size=(5, 3)).astype(np.float32)
    pairs = [(rk.regularizers.L1(0.3), tg_tf.keras.regularizers.L1(0.3)),
             (rk.regularizers.L2(), tg_tf.keras.regularizers.L2()),
             (rk.regularizers.L1L2(0.1, 0.2), tg_tf.keras.regularizers.L1L2(0.1, 0.2)),
             (rk.regularizers.OrthogonalRegularizer(0.2),
              tg_tf.keras.regularizers.OrthogonalRegularizer(0.2)),
             (rk.regularizers.OrthogonalRegularizer(0.2, mode="columns"),
              tg_tf.keras.regularizers.OrthogonalRegularizer(0.2, mode="columns"))]
    for a, b in pairs:
        # Keras's NumPy path of OrthogonalRegularizer(mode="columns") breaks: give it a tensor
        _same(_np(b(w)), _np(a(rk.ops.convert_to_tensor(w))), rtol=1e-6)
        assert b.get_config() == a.get_config()
        assert tg_tf.keras.regularizers.serialize(b) == rk.regularizers.serialize(a)
    for name in ("l1", "l2", "L1L2", "orthogonal_regularizer"):
        assert type(tg_tf.keras.regularizers.get(name)).__name__ == \
            type(rk.regularizers.get(name)).__name__
    for bad in (lambda r: r.get("l1_l2"), lambda r: r.L2(-1.0),
                lambda r: r.OrthogonalRegularizer(mode="x"),
                lambda r: r.OrthogonalRegularizer()(np.ones(3, np.float32))):
        with pytest.raises(ValueError) as e1:
            bad(rk.regularizers)
        with pytest.raises(ValueError) as e2:
            bad(tg_tf.keras.regularizers)
        assert str(e2.value) == str(e1.value)


def test_constraint_objects_match_keras(rk: Any) -> None:
    w = _rng.normal(size=(4, 3, 2)).astype(np.float32) * 3
    for make in (lambda c: c.MaxNorm(1.5), lambda c: c.MaxNorm(2, axis=[0, 1]),
                 lambda c: c.NonNeg(), lambda c: c.UnitNorm(axis=1),
                 lambda c: c.MinMaxNorm(0.5, 1.0, rate=0.7, axis=0)):
        a, b = make(rk.constraints), make(tg_tf.keras.constraints)
        _same(_np(b(w)), _np(a(w)), rtol=1e-6)
        assert b.get_config() == a.get_config()
        assert tg_tf.keras.constraints.serialize(b) == rk.constraints.serialize(a)
    with pytest.raises(ValueError) as e1:
        rk.constraints.get("foo")
    with pytest.raises(ValueError) as e2:
        tg_tf.keras.constraints.get("foo")
    assert str(e2.value) == str(e1.value)


def test_dense_penalty_config_matches_keras(rk: Any) -> None:
    def cfg(k: Any) -> dict[str, Any]:
        d = k.layers.Dense(2, kernel_regularizer="l2", activity_regularizer="l1",
                           kernel_constraint="non_neg", bias_regularizer=k.regularizers.L1(0.2))
        c = d.get_config()
        return {key: v for key, v in c.items() if key.endswith(("_regularizer", "_constraint"))}

    ref, got = cfg(rk), cfg(tg_tf.keras)
    # tapegrad's own Dense.get_config is short; the saved config carries them (below)
    from tapegrad.tf.keras.saving import _layer_config

    d = tg_tf.keras.layers.Dense(2, kernel_regularizer="l2", activity_regularizer="l1",
                                 kernel_constraint="non_neg",
                                 bias_regularizer=tg_tf.keras.regularizers.L1(0.2))
    saved = {key: v for key, v in _layer_config(d).items()
             if key.endswith(("_regularizer", "_constraint"))}
    assert saved == ref
    assert got["activity_regularizer"] == ref["activity_regularizer"]


def test_keras_loads_a_tapegrad_file_with_penalties_and_back(rk: Any) -> None:
    m = _build_reg_model(tg_tf.keras)
    x = _rng.normal(size=(3, 4)).astype(np.float32)
    want = np.asarray(m(x))
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.keras")
        m.save(p)
        km = rk.models.load_model(p)
        np.testing.assert_allclose(np.asarray(km(x)), want, rtol=1e-6)
        assert type(km.layers[0].kernel_regularizer).__name__ == "L2"
        assert type(km.layers[0].kernel_constraint).__name__ == "MaxNorm"
        assert type(km.layers[0].activity_regularizer).__name__ == "L1L2"
        np.testing.assert_allclose([float(v) for v in km.losses],
                                   [float(v) for v in m.losses], rtol=1e-6)
        p2 = os.path.join(d, "k.keras")
        km.save(p2)
        back = tg_tf.keras.models.load_model(p2)
    np.testing.assert_allclose(np.asarray(back(x)), want, rtol=1e-6)
    assert type(back.layers[1].kernel_regularizer).__name__ == "OrthogonalRegularizer"
    assert type(back.layers[1].bias_constraint).__name__ == "NonNeg"


# ----------------------------------------------------------------------------- layers
def _attention_run(k: Any) -> list[Any]:
    rng = np.random.default_rng(2)
    q = rng.normal(size=(2, 3, 4)).astype(np.float32)
    v = rng.normal(size=(2, 5, 4)).astype(np.float32)
    key = rng.normal(size=(2, 5, 4)).astype(np.float32)
    vm = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    qm = np.array([[1, 0, 1], [1, 1, 1]], bool)
    a = k.layers.Attention(use_scale=True)
    o, s = a([q, v, key], return_attention_scores=True, mask=[qm, vm])
    a2 = k.layers.Attention(score_mode="concat")
    o2 = a2([q, v], use_causal_mask=True)
    aa = k.layers.AdditiveAttention()
    aa.build([(None, 3, 4), (None, 5, 4)])
    aa.scale.assign(np.array([0.5, -1, 2, 0.1], np.float32))
    o3 = aa([q, v], mask=[None, vm])
    cfgs = []
    for layer in (a, a2, aa):
        c = layer.get_config()
        c.pop("dtype")
        c.pop("name")
        cfgs.append(c)
    names = [[w.name for w in layer.weights] for layer in (a, a2, aa)]
    return [_np(o), _np(s), _np(o2), _np(o3), cfgs, names]


def test_attention_layers_match_keras(rk: Any) -> None:
    ref, got = _attention_run(rk), _attention_run(tg_tf.keras)
    for i in range(4):
        _same(got[i], ref[i], rtol=1e-5, atol=1e-6)
    assert got[4] == ref[4] and got[5] == ref[5]
    for bad in (lambda k: k.layers.Attention()(np.ones((1, 2, 2), np.float32)),
                lambda k: k.layers.Attention(score_mode="x")):
        with pytest.raises(ValueError) as e1:
            bad(rk)
        with pytest.raises(ValueError) as e2:
            bad(tg_tf.keras)
        assert str(e2.value).split("Received")[0] == str(e1.value).split("Received")[0]


def _separable_run(k: Any) -> list[Any]:
    rng = np.random.default_rng(4)
    Cst = k.initializers.Constant
    x = rng.normal(size=(2, 6, 6, 3)).astype(np.float32)
    sc = k.layers.SeparableConv2D(4, 3, depth_multiplier=2, padding="same", strides=2,
                                  activation="relu")
    sc.build((None, 6, 6, 3))
    sc.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in sc.get_weights()])
    x1 = rng.normal(size=(2, 7, 2)).astype(np.float32)
    sc1 = k.layers.SeparableConv1D(3, 3, dilation_rate=2, depthwise_initializer=Cst(0.3),
                                   pointwise_initializer=Cst(-0.2))
    m = k.Sequential([k.Input((7, 2)),
                      k.layers.SeparableConv1D(2, 3, depthwise_initializer=Cst(0.3),
                                               pointwise_initializer=Cst(-0.2),
                                               depthwise_regularizer="l2"),
                      k.layers.Flatten(), k.layers.Dense(1, kernel_initializer="ones")])
    m.compile(optimizer="sgd", loss="mse")
    h = m.fit(x1, np.ones((2, 1), np.float32), epochs=2, verbose=0).history["loss"]
    shapes = [(w.name, tuple(w.shape)) for w in sc.weights]
    cfg = sc1.get_config()
    for key in ("dtype", "name", "depthwise_initializer", "pointwise_initializer"):
        cfg.pop(key)
    return [_np(sc(x)), _np(sc1(x1)), np.asarray(h), shapes, cfg]


def test_separable_conv_matches_keras(rk: Any) -> None:
    ref, got = _separable_run(rk), _separable_run(tg_tf.keras)
    for i in range(3):
        _same(got[i], ref[i], rtol=1e-5, atol=1e-5)
    assert got[3] == ref[3]
    assert got[4] == ref[4]


# ----------------------------------------------------------------------------- mixed precision
def test_mixed_precision_api_matches_keras(rk: Any) -> None:
    import warnings

    for mp in (rk.mixed_precision, tg_tf.keras.mixed_precision):
        try:
            assert repr(mp.global_policy()) == '<DTypePolicy "float32">'
            p = mp.Policy("mixed_float16")
            assert (repr(p), p.compute_dtype, p.variable_dtype) == (
                '<DTypePolicy "mixed_float16">', "float16", "float32")
            mp.set_global_policy("float64")
            d = (rk if mp is rk.mixed_precision else tg_tf.keras).layers.Dense(2)
            assert d(np.ones((1, 2))).dtype.name == "float64"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mp.set_global_policy("mixed_float16")
            d = (rk if mp is rk.mixed_precision else tg_tf.keras).layers.Dense(2)
            d.build((None, 2))
            assert repr(d.dtype_policy) == '<DTypePolicy "mixed_float16">'
            assert d.kernel.dtype == "float32"
        finally:
            mp.set_global_policy("float32")
    for bad in ("foo", None):
        with pytest.raises(ValueError) as e1:
            rk.mixed_precision.set_global_policy(bad)
        with pytest.raises(ValueError) as e2:
            tg_tf.keras.mixed_precision.set_global_policy(bad)
        assert str(e2.value) == str(e1.value)


def _lso_run(k: Any) -> list[float]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8, 1)).astype(np.float32)
    m = k.Sequential([k.Input((3,)),
                      k.layers.Dense(4, kernel_initializer="ones", activation="tanh"),
                      k.layers.Dense(1, kernel_initializer="ones")])
    m.compile(optimizer=k.mixed_precision.LossScaleOptimizer(k.optimizers.SGD(0.1)), loss="mse")
    return m.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False).history["loss"]


def test_loss_scale_optimizer_fit_matches_keras(rk: Any) -> None:
    np.testing.assert_allclose(_lso_run(tg_tf.keras), _lso_run(rk), rtol=1e-5)


# ----------------------------------------------------------------------------- preprocessing
def test_preprocessing_matches_keras(rk: Any) -> None:
    seqs = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
    for kw in ({}, {"maxlen": 2}, {"maxlen": 4, "padding": "post", "truncating": "post"},
               {"value": -1, "dtype": "float32"}):
        _same(tg_tf.keras.preprocessing.sequence.pad_sequences(seqs, **kw),
              rk.preprocessing.sequence.pad_sequences(seqs, **kw))
    for kw in ({"padding": "mid"}, {"truncating": "x", "maxlen": 1}, {"value": "a"}):
        with pytest.raises(ValueError) as e1:
            rk.preprocessing.sequence.pad_sequences(seqs, **kw)
        with pytest.raises(ValueError) as e2:
            tg_tf.keras.preprocessing.sequence.pad_sequences(seqs, **kw)
        assert str(e2.value) == str(e1.value)
    img = np.arange(3 * 6 * 2, dtype=np.float32).reshape(3, 6, 2)
    for df in ("channels_last", "channels_first"):
        _same(tg_tf.keras.preprocessing.image.img_to_array(img, data_format=df),
              rk.preprocessing.image.img_to_array(img, data_format=df))
    _same(_np(tg_tf.keras.preprocessing.image.smart_resize(img, (2, 2))),
          _np(rk.preprocessing.image.smart_resize(img, (2, 2))), rtol=1e-5)


# ----------------------------------------------------------------------------- augmentation
def _aug_layers(k: Any) -> list[Any]:
    L = k.layers
    out = [L.RandomContrast(0.5, seed=3), L.RandomContrast((0.2, 0.9), seed=4, value_range=(0, 100)),
           L.RandomBrightness(0.3, seed=5), L.RandomBrightness((-0.2, 0.1), value_range=(0, 1),
                                                               seed=6),
           L.RandomCrop(3, 4, seed=7), L.RandomCrop(6, 8, seed=8),
           L.RandomCrop(2, 2, seed=9, data_format="channels_first")]
    for kw in ({}, {"fill_mode": "wrap"}, {"fill_mode": "constant", "fill_value": 7.0},
               {"fill_mode": "nearest"}, {"interpolation": "nearest"},
               {"data_format": "channels_first"}):
        out += [L.RandomTranslation((-0.9, 0.9), (-1, 1), seed=11, **kw),
                L.RandomRotation((-0.5, 1.0), seed=13, **kw),
                L.RandomZoom((-0.5, 0.2), (0.1, 0.9), seed=15, **kw),
                L.RandomZoom(0.3, seed=14, **kw)]
    return out


def _aug_run(k: Any) -> list[Any]:
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 255, size=(3, 7, 6, 2)).astype(np.float32)
    res = []
    for layer in _aug_layers(k):
        a, b, c = layer(x), layer(x), layer(x[0])
        d = layer(x, training=False)
        cfg = layer.get_config()
        cfg.pop("dtype")
        cfg.pop("name")
        res.append(([_np(v) for v in (a, b, c, d)], cfg))
    return res


def test_augmentation_layers_match_keras(rk: Any) -> None:
    ref, got = _aug_run(rk), _aug_run(tg_tf.keras)
    for (gv, gc), (rv, rc) in zip(got, ref):
        for a, b in zip(gv, rv):
            _same(a, b, rtol=1e-5, atol=2e-3)
        assert gc == rc


def test_augmentation_errors_match_keras(rk: Any) -> None:
    for bad in (lambda k: k.layers.RandomContrast(2.0),
                lambda k: k.layers.RandomBrightness(0.1, value_range=3),
                lambda k: k.layers.RandomTranslation(2.0, 0.1),
                lambda k: k.layers.RandomZoom(-1.0), lambda k: k.layers.RandomRotation(3),
                lambda k: k.layers.RandomTranslation(0.1, 0.1, fill_mode="x")):
        with pytest.raises((ValueError, NotImplementedError)) as e1:
            bad(rk)
        with pytest.raises((ValueError, NotImplementedError)) as e2:
            bad(tg_tf.keras)
        assert type(e2.value) is type(e1.value) and str(e2.value) == str(e1.value)


def test_augmentation_in_a_model_predict_passes_through(rk: Any) -> None:
    def run(k: Any) -> np.ndarray:
        x = np.random.default_rng(1).uniform(0, 1, size=(3, 5, 6, 2)).astype(np.float32)
        m = k.Sequential([k.Input((5, 6, 2)), k.layers.RandomRotation(0.3, seed=1),
                          k.layers.RandomZoom(0.2, seed=2), k.layers.Flatten(),
                          k.layers.Dense(1, kernel_initializer="ones")])
        return np.asarray(m.predict(x, verbose=0))

    _same(run(tg_tf.keras), run(rk), rtol=1e-5)


def _functional_reg_run(k: Any) -> list[Any]:
    Cst = k.initializers.Constant
    i = k.Input((3,))
    h = k.layers.Dense(4, kernel_initializer=Cst(0.2), activity_regularizer="l2",
                       kernel_regularizer="l1")(i)
    o = k.layers.Dense(1, kernel_initializer=Cst(-0.3), bias_regularizer="l2",
                       bias_initializer=Cst(1.0))(h)
    m = k.Model(i, o)
    x = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    y = np.ones((6, 1), np.float32)
    m(x)
    losses = [float(v) for v in m.losses]
    m.compile(optimizer=k.optimizers.Adam(0.1), loss="mae")
    hist = m.fit(x, y, epochs=3, batch_size=2, verbose=0, shuffle=False).history["loss"]
    b = k.layers.Bidirectional(k.layers.GRU(2, kernel_initializer=Cst(0.1),
                                            recurrent_initializer=Cst(0.2),
                                            kernel_regularizer="l2",
                                            recurrent_regularizer=k.regularizers.L1(0.1),
                                            activity_regularizer="l1"))
    b(np.random.default_rng(0).normal(size=(2, 3, 2)).astype(np.float32))
    return [losses, hist, m.evaluate(x, y, verbose=0), [float(v) for v in b.losses]]


def test_functional_and_bidirectional_penalties_match_keras(rk: Any) -> None:
    ref, got = _functional_reg_run(rk), _functional_reg_run(tg_tf.keras)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_new_layers_round_trip_through_keras_files(rk: Any) -> None:
    x = np.random.default_rng(0).uniform(size=(2, 6, 6, 3)).astype(np.float32)

    def build(k: Any) -> Any:
        return k.Sequential([
            k.Input((6, 6, 3)), k.layers.RandomRotation(0.2, seed=1),
            k.layers.RandomContrast(0.3, seed=2),
            k.layers.SeparableConv2D(4, 3, depthwise_regularizer="l2",
                                     pointwise_constraint="non_neg"),
            k.layers.Flatten(), k.layers.Dense(1)])

    with tempfile.TemporaryDirectory() as d:
        for src, dst in ((rk, tg_tf.keras), (tg_tf.keras, rk)):
            m = build(src)
            want = np.asarray(m.predict(x, verbose=0))
            p = os.path.join(d, f"{src.__name__}.keras")
            m.save(p)
            m2 = dst.models.load_model(p)
            np.testing.assert_allclose(np.asarray(m2.predict(x, verbose=0)), want, rtol=1e-5)
            assert type(m2.layers[2].depthwise_regularizer).__name__ == "L2"
            assert type(m2.layers[2].pointwise_constraint).__name__ == "NonNeg"
            assert [type(v).__name__ for v in m2.layers] == [
                "RandomRotation", "RandomContrast", "SeparableConv2D", "Flatten", "Dense"]


def _convlstm_run(k: Any) -> list[Any]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 5, 6, 2)).astype(np.float32)
    res: list[Any] = []
    for kw in ({}, {"padding": "same", "return_sequences": True},
               {"strides": 2, "return_state": True, "go_backwards": True},
               {"dilation_rate": 2, "use_bias": False, "unit_forget_bias": False}):
        layer = k.layers.ConvLSTM2D(3, (3, 2), **kw)
        layer.build(x.shape)
        r = np.random.default_rng(1)
        layer.set_weights([r.normal(size=w.shape).astype(np.float32) * 0.3
                           for w in layer.get_weights()])
        out = layer(x)
        res.append([_np(o) for o in (out if isinstance(out, (list, tuple)) else [out])])
        res.append([w.path.split("/", 1)[1] for w in layer.weights])
    layer = k.layers.ConvLSTM2D(2, 2, kernel_regularizer="l2")
    layer(x)
    cfg = layer.get_config()
    for key in ("dtype", "name", "kernel_initializer", "recurrent_initializer"):
        cfg.pop(key)
    res.append(cfg)
    res.append(_np(layer.cell.bias))
    Cst = k.initializers.Constant
    y = rng.normal(size=(2, 1)).astype(np.float32)
    m = k.Sequential([k.Input((3, 5, 6, 2)),
                      k.layers.ConvLSTM2D(2, 3, padding="same", kernel_initializer=Cst(0.1),
                                          recurrent_initializer=Cst(-0.05),
                                          kernel_regularizer="l2"),
                      k.layers.Flatten(), k.layers.Dense(1, kernel_initializer="ones")])
    m.compile(optimizer=k.optimizers.Adam(0.01), loss="mse")
    res.append(np.asarray(m.fit(x, y, epochs=3, batch_size=1, verbose=0,
                                shuffle=False).history["loss"]))
    return res


def test_conv_lstm2d_matches_keras(rk: Any) -> None:
    ref, got = _convlstm_run(rk), _convlstm_run(tg_tf.keras)
    for i in range(0, 8, 2):
        _same(got[i], ref[i], rtol=1e-5, atol=1e-6)
        assert got[i + 1] == ref[i + 1]
    assert got[8] == ref[8]
    _same(got[9], ref[9])
    np.testing.assert_allclose(got[10], ref[10], rtol=1e-5)


def _mha_run(k: Any) -> list[Any]:
    Cst = k.initializers.Constant
    mha = k.layers.MultiHeadAttention(2, 3, kernel_initializer=Cst(0.1), kernel_regularizer="l2",
                                      bias_regularizer="l1", bias_initializer=Cst(0.2),
                                      activity_regularizer=k.regularizers.L2(0.1),
                                      kernel_constraint="non_neg")
    q = np.random.default_rng(0).normal(size=(2, 4, 5)).astype(np.float32)
    mha(q, q)
    cfg = mha.get_config()
    cfg.pop("dtype")
    cfg.pop("name")
    opt = k.optimizers.SGD(10.0)
    with_grads = [(np.ones(w.shape, np.float32), w) for w in mha.trainable_weights]
    opt.apply_gradients(with_grads)
    return [[float(v) for v in mha.losses], cfg,
            [float(np.asarray(w).min()) for w in mha.trainable_weights]]


def test_multi_head_attention_penalties_and_config_match_keras(rk: Any) -> None:
    ref, got = _mha_run(rk), _mha_run(tg_tf.keras)
    np.testing.assert_allclose(sorted(got[0]), sorted(ref[0]), rtol=1e-5)
    assert got[1] == ref[1]
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-6)  # NonNeg kernels: min 0


_IMG = np.random.default_rng(3).uniform(0, 1, size=(2, 5, 6, 3)).astype(np.float32)
_TR = np.array([[1.1, 0.2, -0.5, -0.1, 0.9, 0.7, 0.0, 0.0],
                [0.8, -0.3, 1.0, 0.2, 1.2, -0.4, 0.01, 0.0]], np.float32)
IMAGE_CASES: list[tuple[str, Any]] = [
    ("affine_bilinear", lambda o: o.image.affine_transform(_IMG, _TR)),
    ("affine_nearest_reflect", lambda o: o.image.affine_transform(
        _IMG, _TR, interpolation="nearest", fill_mode="reflect")),
    ("affine_wrap", lambda o: o.image.affine_transform(_IMG, _TR[0], fill_mode="wrap")),
    ("affine_fill", lambda o: o.image.affine_transform(_IMG[0], _TR[1], fill_value=0.5)),
    ("affine_cf", lambda o: o.image.affine_transform(_IMG.transpose(0, 3, 1, 2), _TR,
                                                     data_format="channels_first")),
    ("resize", lambda o: o.image.resize(_IMG, (3, 4))),
    ("resize_nearest", lambda o: o.image.resize(_IMG[0], (7, 9), interpolation="nearest")),
]


@pytest.mark.parametrize("name,fn", IMAGE_CASES, ids=[c[0] for c in IMAGE_CASES])
def test_keras_ops_image_match(rk: Any, name: str, fn: Any) -> None:
    _same(_np(fn(tg_tf.keras.ops)), _np(fn(rk.ops)), rtol=1e-5, atol=1e-6)


def test_keras_ops_image_errors_match(rk: Any) -> None:
    for kw in ({"fill_mode": "x"}, {"interpolation": "x"}):
        with pytest.raises(ValueError) as e1:
            rk.ops.image.affine_transform(_IMG, _TR, **kw)
        with pytest.raises(ValueError) as e2:
            tg_tf.keras.ops.image.affine_transform(_IMG, _TR, **kw)
        assert str(e2.value) == str(e1.value)


def _convlstm_dropout_run(k: Any) -> list[Any]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 5, 6, 2)).astype(np.float32)
    out = []
    for kw in ({"dropout": 0.3, "seed": 4}, {"recurrent_dropout": 0.4, "seed": 5, "padding": "same"},
               {"dropout": 0.2, "recurrent_dropout": 0.5, "seed": 6, "return_sequences": True}):
        layer = k.layers.ConvLSTM2D(3, (3, 2), **kw)
        layer.build(x.shape)
        r = np.random.default_rng(1)
        layer.set_weights([r.normal(size=w.shape).astype(np.float32) * 0.3
                           for w in layer.get_weights()])
        out += [_np(layer(x, training=True)), _np(layer(x, training=True)), _np(layer(x))]
    return out


def test_conv_lstm2d_dropout_masks_match_keras(rk: Any) -> None:
    for a, b in zip(_convlstm_dropout_run(tg_tf.keras), _convlstm_dropout_run(rk)):
        _same(a, b, rtol=1e-5, atol=1e-6)
