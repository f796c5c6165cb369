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
