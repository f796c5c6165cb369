"""tf.linalg, tf.norm's matrix norms and the Keras recurrent/attention layers without the real
framework: values against NumPy references, gradients against finite differences, Keras's
weight layout, TensorFlow's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 3))
SPD = A @ A.T + 3 * np.eye(3)
M = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])


def _fd_check(fn: Callable[[Any], Any], x0: np.ndarray, rtol: float = 1e-5) -> None:
    """Tape gradient of ``sum(fn(x) * u)`` against a central difference along ``v``."""
    rng = np.random.default_rng(1)
    x = tf.Variable(x0)
    out = fn(x)
    u = rng.standard_normal(tuple(out.shape))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(fn(x) * u)
    g = tape.gradient(loss, x).numpy()
    v = rng.standard_normal(x0.shape)
    eps = 1e-6
    up = float(np.sum(fn(tf.constant(x0 + eps * v)).numpy() * u))
    down = float(np.sum(fn(tf.constant(x0 - eps * v)).numpy() * u))
    np.testing.assert_allclose(np.sum(g * v), (up - down) / (2 * eps), rtol=rtol, atol=1e-7)


LINALG: list[tuple[str, Callable[[Any], Any], np.ndarray, Callable[[np.ndarray], Any]]] = [
    ("inv", lambda x: tf.linalg.inv(x), A, np.linalg.inv),
    ("det", lambda x: tf.linalg.det(x), A, np.linalg.det),
    ("slogdet", lambda x: tf.linalg.slogdet(x)[1], A, lambda a: np.linalg.slogdet(a)[1]),
    ("cholesky", lambda x: tf.linalg.cholesky((x + tf.linalg.adjoint(x)) / 2), SPD,
     np.linalg.cholesky),
    ("expm", lambda x: tf.linalg.expm(x), 0.3 * A, None),
    ("pinv", lambda x: tf.linalg.pinv(x), M, np.linalg.pinv),
    ("norm_1", lambda x: tf.norm(x, ord=1, axis=[0, 1]), M, lambda a: np.linalg.norm(a, 1)),
    ("norm_inf", lambda x: tf.norm(x, ord=np.inf, axis=[0, 1]), M,
     lambda a: np.linalg.norm(a, np.inf)),
    ("norm_2", lambda x: tf.norm(x, ord=2, axis=[0, 1]), M, lambda a: np.linalg.norm(a, 2)),
    ("norm_fro", lambda x: tf.norm(x, ord="fro", axis=[0, 1]), M,
     lambda a: np.linalg.norm(a, "fro")),
    ("solve", lambda x: tf.linalg.solve(x, tf.constant(M.T.copy())), A,
     lambda a: np.linalg.solve(a, M.T)),
    ("lstsq", lambda x: tf.linalg.lstsq(x, tf.constant(np.ones((3, 1)))), M.T.copy(),
     lambda a: np.linalg.lstsq(a, np.ones((3, 1)), rcond=None)[0]),
]


@pytest.mark.parametrize("name,fn,x0,ref", LINALG, ids=[c[0] for c in LINALG])
def test_linalg_values_and_gradients(name: str, fn: Any, x0: np.ndarray, ref: Any) -> None:
    if ref is not None:
        np.testing.assert_allclose(fn(tf.constant(x0)).numpy(), ref(x0), rtol=1e-10,
                                   atol=1e-12)
    _fd_check(fn, x0)


def test_eigh_gradient_is_lower_triangular_as_tensorflow() -> None:
    x = tf.Variable(SPD)
    with tf.GradientTape() as tape:
        e, v = tf.linalg.eigh(x)
        loss = tf.reduce_sum(e * tf.constant([1.0, 2.0, 3.0], dtype=tf.float64))
    g = tape.gradient(loss, x).numpy()
    assert np.all(np.triu(g, 1) == 0)
    w, vv = np.linalg.eigh(SPD)
    full = vv @ np.diag([1.0, 2.0, 3.0]) @ vv.T  # d(sum c_i e_i)/dA for a symmetric input
    np.testing.assert_allclose(g, np.tril(full) + np.tril(full, -1), rtol=1e-10)


def test_tf_norm_errors() -> None:
    with pytest.raises(ValueError, match=r"'ord' must be a supported matrix norm in "
                                         r"\['euclidean', 'fro', 1, 2, inf\], got 3"):
        tf.norm(tf.eye(2), ord=3, axis=[0, 1])
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm, got fro"):
        tf.norm(tf.eye(2), ord="fro")
    with pytest.raises(ValueError, match="a tuple of 2 unique integers"):
        tf.norm(tf.eye(2), axis=[1, 1])


def test_linalg_errors() -> None:
    z = np.zeros((2, 2))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Input is not invertible. "
                                                             r"\[Op:MatrixInverse\]"):
        tf.linalg.inv(tf.constant(z))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square."):
        tf.linalg.det(tf.zeros([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32"):
        tf.linalg.cholesky(tf.eye(2, dtype=tf.int32))
    bad = tf.linalg.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]])).numpy()
    assert np.all(np.isnan(bad[np.tril_indices(2)]))


def test_svd_returns_s_u_v() -> None:
    s, u, v = tf.linalg.svd(tf.constant(M))
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, M, atol=1e-12)
    assert s.shape == (2,) and u.shape == (2, 2) and v.shape == (3, 2)


# ----------------------------------------------------------------------------- Keras layers
def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _np_keras_lstm(x: np.ndarray, k: np.ndarray, rk: np.ndarray, b: np.ndarray) -> np.ndarray:
    h = np.zeros((x.shape[0], rk.shape[0]))
    c = np.zeros_like(h)
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ rk + b
        i, f, cc, o = np.split(z, 4, axis=-1)
        c = _sig(f) * c + _sig(i) * np.tanh(cc)
        h = _sig(o) * np.tanh(c)
    return h


def _np_keras_gru(x: np.ndarray, k: np.ndarray, rk: np.ndarray, b: np.ndarray) -> np.ndarray:
    h = np.zeros((x.shape[0], rk.shape[0]))
    for t in range(x.shape[1]):
        xz, xr, xh = np.split(x[:, t] @ k + b[0], 3, axis=-1)
        rz, rr, rh = np.split(h @ rk + b[1], 3, axis=-1)
        z, r = _sig(xz + rz), _sig(xr + rr)
        hh = np.tanh(xh + r * rh)
        h = z * h + (1 - z) * hh
    return h


def test_keras_lstm_and_gru_match_numpy_reference() -> None:
    x = RNG.standard_normal((2, 5, 3))
    lstm = tf.keras.layers.LSTM(4, dtype="float64")
    lstm(tf.constant(x))
    ws = [RNG.standard_normal(w.shape) * 0.5 for w in lstm.get_weights()]
    lstm.set_weights(ws)
    np.testing.assert_allclose(lstm(tf.constant(x)).numpy(), _np_keras_lstm(x, *ws),
                               rtol=1e-12)
    gru = tf.keras.layers.GRU(4, dtype="float64")
    gru(tf.constant(x))
    ws = [RNG.standard_normal(w.shape) * 0.5 for w in gru.get_weights()]
    gru.set_weights(ws)
    np.testing.assert_allclose(gru(tf.constant(x)).numpy(), _np_keras_gru(x, *ws), rtol=1e-12)


KERAS: list[tuple[str, Callable[[], Any], tuple[int, ...]]] = [
    ("simple_rnn", lambda: tf.keras.layers.SimpleRNN(3, return_sequences=True, dtype="float64"),
     (2, 4, 3)),
    ("lstm", lambda: tf.keras.layers.LSTM(3, dtype="float64"), (2, 4, 3)),
    ("gru_reset_before", lambda: tf.keras.layers.GRU(3, reset_after=False, dtype="float64"),
     (2, 4, 3)),
    ("bidirectional", lambda: tf.keras.layers.Bidirectional(
        tf.keras.layers.GRU(2, return_sequences=True, dtype="float64"), dtype="float64"),
     (2, 4, 3)),
]


@pytest.mark.parametrize("name,make,shape", KERAS, ids=[c[0] for c in KERAS])
def test_keras_input_gradients(name: str, make: Callable[[], Any], shape: Any) -> None:
    layer = make()
    _fd_check(lambda x: layer(x), np.random.default_rng(2).standard_normal(shape))


def test_keras_mha_gradients_and_shapes() -> None:
    mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float64")
    q = np.random.default_rng(3).standard_normal((2, 4, 5))
    v = tf.constant(np.random.default_rng(4).standard_normal((2, 6, 7)))
    out, scores = mha(tf.constant(q), v, return_attention_scores=True)
    assert out.shape == (2, 4, 5) and scores.shape == (2, 2, 4, 6)
    np.testing.assert_allclose(scores.numpy().sum(-1), 1.0)
    assert [w.path for w in mha.weights] == [
        f"{mha.name}/{p}/{k}" for p in ("query", "key", "value", "attention_output")
        for k in ("kernel", "bias")]
    _fd_check(lambda x: mha(x, v), q)
    _, causal = mha(tf.constant(q), v[:, :4],
                    use_causal_mask=True, return_attention_scores=True)
    assert np.all(np.triu(causal.numpy()[0, 0], 1) < 1e-8)


def test_keras_rnn_weight_layout_and_return_state() -> None:
    lstm = tf.keras.layers.LSTM(4, return_sequences=True, return_state=True)
    out, h, c = lstm(tf.zeros([2, 5, 3]))
    assert out.shape == (2, 5, 4) and h.shape == (2, 4) and c.shape == (2, 4)
    assert [w.path.split("/", 1)[1] for w in lstm.weights] == [
        "lstm_cell/kernel", "lstm_cell/recurrent_kernel", "lstm_cell/bias"]
    assert [tuple(w.shape) for w in lstm.weights] == [(3, 16), (4, 16), (16,)]
    gru = tf.keras.layers.GRU(2)
    gru(tf.zeros([1, 2, 3]))
    assert [tuple(w.shape) for w in gru.weights] == [(3, 6), (2, 6), (2, 6)]
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        tf.keras.layers.LSTM(2)(tf.zeros([2, 3]))


@pytest.mark.parametrize("make", [
    lambda **k: tf.keras.layers.LSTM(3, **k), lambda **k: tf.keras.layers.GRU(3, **k),
    lambda **k: tf.keras.layers.SimpleRNN(3, **k),
    lambda **k: tf.keras.layers.Bidirectional(tf.keras.layers.GRU(2, **k)),
])
def test_keras_rnn_dropout_only_in_training(make: Callable[..., Any]) -> None:
    x = tf.constant(np.random.default_rng(0).standard_normal((4, 5, 3)).astype(np.float32))
    plain = make()
    plain(x)
    drop = make(dropout=0.5, recurrent_dropout=0.3)
    drop(x)
    drop.set_weights(plain.get_weights())
    np.testing.assert_allclose(drop(x).numpy(), plain(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(drop(x, training=False).numpy(), plain(x).numpy(), rtol=1e-6)
    assert not np.allclose(drop(x, training=True).numpy(), plain(x).numpy())
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(drop(x, training=True))
    assert all(g is not None for g in tape.gradient(loss, drop.trainable_weights))
    with pytest.raises(ValueError, match="Expected a float value between 0 and 1"):
        make(dropout=1.5)


def test_keras_mha_dropout_only_in_training() -> None:
    mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=2, dropout=0.5)
    x = tf.constant(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32))
    a, sa = mha(x, x, return_attention_scores=True)
    b, sb = mha(x, x, return_attention_scores=True, training=False)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c, sc = mha(x, x, return_attention_scores=True, training=True)
    assert not np.allclose(c.numpy(), a.numpy())
    np.testing.assert_allclose(sc.numpy(), sa.numpy(), rtol=1e-6)
