"""``.keras`` files of built-in layers between tapegrad and real Keras 3, both ways.

A model of LSTM / GRU / Bidirectional / Embedding / Conv / BatchNormalization layers
saved by one loads in the other and gives the same outputs (the weights are the same
arrays).  Skipped without TensorFlow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf

pytest.importorskip("h5py")


@pytest.fixture(scope="module")
def rk() -> Any:
    real_tf()
    import keras

    return keras


def _build(K: Any, name: str) -> Any:
    L = K.layers
    if name == "text":
        return K.Sequential([K.Input((6,)), L.Embedding(20, 4),
                             L.Bidirectional(L.LSTM(3, return_sequences=True)), L.GRU(2),
                             L.Dense(1)])
    if name == "rnn":
        return K.Sequential([K.Input((5, 3)), L.SimpleRNN(3, return_sequences=True),
                             L.LSTM(2), L.Dense(1, activation="sigmoid")])
    return K.Sequential([K.Input((8, 8, 1)), L.Conv2D(2, 3, activation="relu"),
                         L.MaxPooling2D(), L.BatchNormalization(), L.Dropout(0.2),
                         L.Flatten(), L.Dense(3, activation="softmax")])


def _x(name: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if name == "text":
        return rng.integers(0, 20, (4, 6)).astype(np.int32)
    if name == "rnn":
        return rng.standard_normal((4, 5, 3)).astype(np.float32)
    return rng.standard_normal((4, 8, 8, 1)).astype(np.float32)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", ["text", "rnn", "conv"])
def test_files_load_both_ways(rk: Any, tmp_path: Path, name: str, compiled: bool) -> None:
    x = _x(name)
    for src, dst in ((tg_tf.keras, rk), (rk, tg_tf.keras)):
        m = _build(src, name)
        if compiled:
            m.compile(optimizer="adam", loss="mse")
        want = np.asarray(m(x))
        path = tmp_path / f"{src.__name__}-{name}.keras"
        m.save(path)
        m2 = dst.models.load_model(path)
        assert [type(a).__name__ for a in m2.layers] == [type(a).__name__ for a in m.layers]
        for a, b in zip(m.weights, m2.weights):
            np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))
        np.testing.assert_allclose(np.asarray(m2(x)), want, rtol=2e-6, atol=1e-6)


def test_functional_multi_head_attention_as_keras(rk: Any) -> None:
    res = []
    for K in (rk, tg_tf.keras):
        K.utils.set_random_seed(3)
        q, v = K.Input((4, 8)), K.Input((6, 8))
        att = K.layers.MultiHeadAttention(2, 4)
        out = att(q, v)
        x = K.layers.LayerNormalization()(K.layers.Add()([out, q]))
        m = K.Model([q, v], K.layers.Dense(1)(K.layers.GlobalAveragePooling1D()(x)))
        rng = np.random.default_rng(0)
        a = rng.standard_normal((2, 4, 8)).astype(np.float32)
        b = rng.standard_normal((2, 6, 8)).astype(np.float32)
        y0 = np.asarray(m([a, b]))
        m.compile(optimizer="adam", loss="mse")
        h = m.fit([a, b], np.ones((2, 1)), epochs=2, verbose=0)
        res.append((y0, h.history["loss"]))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5)
