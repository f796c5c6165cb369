"""Keras recurrent and attention layers on real Keras 3 (TensorFlow 2.21) and tapegrad.tf.keras:
weight names, shapes and order; outputs and gradients (inputs and weights) from the same
weights set with ``set_weights``; errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("tensorflow")
import tapegrad.tf as ttf  # noqa: E402

# (id, layer factory(layers), input shapes, call(layer, tf, *inputs))
CASES: list[tuple[str, Callable[[Any], Any], list[tuple[int, ...]], Callable[..., Any]]] = [
    ("simple_rnn", lambda L: L.SimpleRNN(4), [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("simple_rnn_seq_relu", lambda L: L.SimpleRNN(4, activation="relu", return_sequences=True),
     [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("lstm", lambda L: L.LSTM(4), [(2, 6, 3)], lambda m, tf, x: m(x)),
    ("lstm_seq_state", lambda L: L.LSTM(4, return_sequences=True, return_state=True),
     [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("lstm_initial_state", lambda L: L.LSTM(4, return_state=True),
     [(2, 5, 3), (2, 4), (2, 4)], lambda m, tf, x, h, c: m(x, initial_state=[h, c])),
    ("lstm_go_backwards", lambda L: L.LSTM(3, go_backwards=True, return_sequences=True),
     [(2, 4, 3)], lambda m, tf, x: m(x)),
    ("gru", lambda L: L.GRU(4), [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("gru_reset_before", lambda L: L.GRU(4, reset_after=False, return_sequences=True),
     [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("gru_state_no_bias", lambda L: L.GRU(4, use_bias=False, return_state=True),
     [(2, 5, 3), (2, 4)], lambda m, tf, x, h: m(x, initial_state=h)),
    ("bidirectional_lstm", lambda L: L.Bidirectional(L.LSTM(4, return_sequences=True)),
     [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("bidirectional_gru_sum", lambda L: L.Bidirectional(L.GRU(4), merge_mode="sum"),
     [(2, 5, 3)], lambda m, tf, x: m(x)),
    ("bidirectional_ave_state", lambda L: L.Bidirectional(L.LSTM(3, return_state=True),
                                                          merge_mode="ave"),
     [(2, 4, 3)], lambda m, tf, x: m(x)),
    ("mha_self", lambda L: L.MultiHeadAttention(num_heads=2, key_dim=3), [(2, 4, 5)],
     lambda m, tf, x: m(x, x)),
    ("mha_cross_scores", lambda L: L.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2),
     [(2, 4, 5), (2, 6, 7)], lambda m, tf, q, v: m(q, v, return_attention_scores=True)),
    ("mha_key_mask", lambda L: L.MultiHeadAttention(num_heads=3, key_dim=2, use_bias=False),
     [(2, 4, 5), (2, 6, 7), (2, 6, 3)],
     lambda m, tf, q, v, k: m(q, v, key=k, attention_mask=np.random.default_rng(0).random(
         (2, 4, 6)) > 0.3)),
    ("mha_causal", lambda L: L.MultiHeadAttention(num_heads=2, key_dim=4), [(2, 5, 3)],
     lambda m, tf, x: m(x, x, use_causal_mask=True, return_attention_scores=True)),
]


def _norm(paths: list[str]) -> list[str]:
    """Weight paths without the per-process instance numbers (``lstm_3`` -> ``lstm``)."""
    return [re.sub(r"_\d+(?=/|$)", "", p) for p in paths]


def _run(tf: Any, make: Callable[[Any], Any], shapes: list[tuple[int, ...]],
         call: Callable[..., Any], weights: list[np.ndarray] | None,
         ) -> tuple[list[np.ndarray], list[np.ndarray], list[str], list[tuple[int, ...]]]:
    layer = make(tf.keras.layers)
    rng = np.random.default_rng(1)
    xs = [tf.constant(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    call(layer, tf, *xs)  # build
    if weights is not None:
        layer.set_weights(weights)
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        out = call(layer, tf, *xs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        cots = [tf.constant(rng.standard_normal(tuple(o.shape)).astype(np.float32))
                for o in outs]
        loss = tf.add_n([tf.reduce_sum(o * c) for o, c in zip(outs, cots)])
    grads = tape.gradient(loss, xs + list(layer.trainable_weights))
    names = [w.path for w in layer.weights]
    shapes_w = [tuple(w.shape) for w in layer.weights]
    return ([o.numpy() for o in outs], [g.numpy() for g in grads], names, shapes_w)


@pytest.mark.parametrize("name,make,shapes,call", CASES, ids=[c[0] for c in CASES])
def test_same_weights_outputs_and_gradients(name: str, make: Any, shapes: Any,
                                            call: Any) -> None:
    probe = make(real.keras.layers)
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    call(probe, real, *[real.constant(x) for x in xs])
    weights = [(0.5 * rng.standard_normal(w.shape)).astype(np.float32)
               for w in probe.get_weights()]
    ro, rg, rn, rs = _run(real, make, shapes, call, weights)
    to, tg_, tn, ts = _run(ttf, make, shapes, call, weights)
    assert _norm(tn) == _norm(rn)
    assert ts == rs
    assert len(to) == len(ro)
    for a, b in zip(ro, to):
        assert b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-6)
    assert len(tg_) == len(rg)
    for a, b in zip(rg, tg_):
        np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("make", [
    lambda L: L.LSTM(4), lambda L: L.GRU(3), lambda L: L.GRU(3, reset_after=False),
    lambda L: L.SimpleRNN(2), lambda L: L.Bidirectional(L.LSTM(2)),
])
def test_weight_paths_match_keras(make: Any) -> None:
    # fresh names on both sides: compare the part below the outer layer's own name
    x = np.zeros((1, 3, 5), np.float32)
    r, t = make(real.keras.layers), make(ttf.keras.layers)
    r(x)
    t(ttf.constant(x))
    assert _norm([w.path for w in t.weights]) == _norm([w.path for w in r.weights])
    assert [tuple(w.shape) for w in t.weights] == [tuple(w.shape) for w in r.weights]


def test_lstm_forget_bias_and_orthogonal_recurrent_kernel() -> None:
    layer = ttf.keras.layers.LSTM(3)
    layer(ttf.zeros([1, 2, 4]))
    kernel, rec, bias = layer.get_weights()
    np.testing.assert_array_equal(bias, np.r_[np.zeros(3), np.ones(3), np.zeros(6)])
    q = rec.T  # (12, 3) with orthonormal columns
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-5)


def test_rnn_inside_sequential_trains() -> None:
    model = ttf.keras.Sequential([ttf.keras.layers.LSTM(4), ttf.keras.layers.Dense(1)])
    x = ttf.constant(np.random.default_rng(0).standard_normal((8, 5, 2)).astype(np.float32))
    y = ttf.reduce_sum(x, axis=[1, 2])[:, None]
    opt = ttf.keras.optimizers.Adam(learning_rate=0.05)
    losses = []
    for _ in range(30):
        with ttf.GradientTape() as tape:
            loss = ttf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_rnn_rejects_2d_input_as_keras() -> None:
    msgs = []
    for tf in (real, ttf):
        with pytest.raises(ValueError) as e:
            tf.keras.layers.LSTM(4, name="lstm_x")(np.zeros((2, 3), np.float32))
        msgs.append(str(e.value).split("\n[tapegrad hint]")[0])
    assert msgs[1] == msgs[0]


@pytest.mark.parametrize("make,nstates", [(lambda L: L.LSTMCell(3), 2),
                                          (lambda L: L.GRUCell(3), 1),
                                          (lambda L: L.SimpleRNNCell(3), 1)])
def test_cells_called_on_their_own(make: Any, nstates: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    states = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(nstates)]
    res = []
    weights = None
    for tf in (real, ttf):
        cell = make(tf.keras.layers)
        cell(tf.constant(x), [tf.constant(s) for s in states])
        if weights is None:
            weights = [0.5 * rng.standard_normal(w.shape).astype(np.float32)
                       for w in cell.get_weights()]
        cell.set_weights(weights)
        h, new = cell(tf.constant(x), [tf.constant(s) for s in states])
        res.append([np.asarray(h)] + [np.asarray(v) for v in new])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda L: L.LSTM(3, return_sequences=True, return_state=True),
    lambda L: L.GRU(3, return_state=True),
    lambda L: L.SimpleRNN(3, return_sequences=True, go_backwards=True),
    lambda L: L.Bidirectional(L.LSTM(2, return_sequences=True)),
])
def test_masked_steps(make: Any) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 1, 1, 0]], dtype=bool)
    res = []
    weights = None
    for tf in (real, ttf):
        layer = make(tf.keras.layers)
        layer(tf.constant(x))
        if weights is None:
            weights = [0.5 * rng.standard_normal(w.shape).astype(np.float32)
                       for w in layer.get_weights()]
        layer.set_weights(weights)
        xt = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(xt)
            out = layer(xt, mask=tf.constant(mask))
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            loss = tf.add_n([tf.reduce_sum(o * o) for o in outs])
        g = tape.gradient(loss, [xt] + list(layer.trainable_weights))
        res.append([o.numpy() for o in outs] + [v.numpy() for v in g])
    for a, b in zip(*res):
        assert b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-5)
