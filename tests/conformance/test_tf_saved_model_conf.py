"""tf.saved_model: the same module code saved and loaded by tapegrad and by real TensorFlow.

Real TensorFlow writes its own protobuf format and tapegrad its JSON + npz format (the
files do not cross); the oracle is the loaded objects' behaviour: outputs, gradients
through the loaded functions, restored variables, ``serving_default`` and the error for a
signature that was not saved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def make_module(tf: Any) -> Any:
    """The user's code, written once for the TensorFlow API."""

    class Model(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            rng = np.random.default_rng(3)
            self.w1 = tf.Variable(rng.standard_normal((3, 4)).astype(np.float32), name="w1")
            self.b1 = tf.Variable(np.zeros(4, np.float32), name="b1")
            self.w2 = tf.Variable(rng.standard_normal((4, 1)).astype(np.float32), name="w2")
            self.temp = tf.Variable(2.0, name="temp", trainable=False)
            self.steps = tf.Variable(0, name="steps")

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x: Any) -> Any:
            h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
            return tf.sigmoid(tf.matmul(h, self.w2) / self.temp)

        @tf.function
        def loss(self, x: Any, y: Any) -> Any:
            self.steps.assign_add(1)
            p = self(x)
            return tf.reduce_mean(tf.square(p - y))

        @tf.function
        def gated(self, x: Any) -> Any:
            return tf.cond(tf.reduce_max(x) > 1.0, lambda: tf.tanh(x) * self.temp,
                           lambda: x * x)

        @tf.function
        def inner_grad(self, x: Any) -> Any:
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(tf.sin(x * self.temp) ** 2)
            return t.gradient(y, x)

    return Model()


X = np.random.default_rng(4).standard_normal((6, 3)).astype(np.float32)
Y = np.random.default_rng(5).uniform(size=(6, 1)).astype(np.float32)
G = np.array([0.5, 1.5, -0.2], np.float32)


def _save_load(tf: Any, d: Path) -> tuple[Any, Any]:
    m = make_module(tf)
    m.loss(tf.constant(X), tf.constant(Y))
    m.gated(tf.constant(G))
    m.inner_grad(tf.constant(G))
    tf.saved_model.save(m, str(d))
    return m, tf.saved_model.load(str(d))


@pytest.fixture(scope="module")
def both(rtf: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    _, real = _save_load(rtf, tmp_path_factory.mktemp("real"))
    _, ours = _save_load(tg, tmp_path_factory.mktemp("ours"))
    return real, ours


def test_variables(both: tuple[Any, Any]) -> None:
    real, ours = both
    for name in ("w1", "b1", "w2", "temp", "steps"):
        r, o = getattr(real, name), getattr(ours, name)
        np.testing.assert_array_equal(o.numpy(), r.numpy())
        assert o.name == r.name and o.trainable == r.trainable and o.dtype.name == r.dtype.name


def test_outputs(rtf: Any, both: tuple[Any, Any]) -> None:
    real, ours = both
    x = X[:4] * 1.5  # another batch size, new values
    np.testing.assert_allclose(ours(tg.constant(x)).numpy(), real(rtf.constant(x)).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.loss(tg.constant(X), tg.constant(Y)).numpy(),
                               real.loss(rtf.constant(X), rtf.constant(Y)).numpy(), rtol=1e-5)
    assert int(ours.steps.numpy()) == int(real.steps.numpy())
    for g in (G, G * 0.1):
        np.testing.assert_allclose(ours.gated(tg.constant(g)).numpy(),
                                   real.gated(rtf.constant(g)).numpy(), rtol=1e-6)


def test_gradients(rtf: Any, both: tuple[Any, Any]) -> None:
    real, ours = both

    def grads(tf: Any, obj: Any) -> list[np.ndarray]:
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = obj.loss(x, tf.constant(Y))
        return [g.numpy() for g in tape.gradient(loss, [obj.w1, obj.b1, obj.w2, x])]

    for o, r in zip(grads(tg, ours), grads(rtf, real)):
        np.testing.assert_allclose(o, r, rtol=1e-4, atol=1e-6)


def test_serving_default(rtf: Any, both: tuple[Any, Any]) -> None:
    real, ours = both
    assert list(ours.signatures) == list(real.signatures) == ["serving_default"]
    rs, os_ = real.signatures["serving_default"], ours.signatures["serving_default"]
    assert repr(os_.structured_input_signature) == repr(rs.structured_input_signature)
    r = rs(x=rtf.constant(X))
    o = os_(x=tg.constant(X))
    assert list(o) == list(r)
    np.testing.assert_allclose(o["output_0"].numpy(), r["output_0"].numpy(), rtol=1e-5,
                               atol=1e-6)


def test_unsaved_signature_error(rtf: Any, both: tuple[Any, Any]) -> None:
    real, ours = both
    with pytest.raises(ValueError) as er:
        real.gated(rtf.constant([1.0, 2.0]))
    with pytest.raises(ValueError) as eo:
        ours.gated(tg.constant([1.0, 2.0]))
    assert str(eo.value) == str(er.value)


def test_second_order_through_loaded_backward(rtf: Any, both: tuple[Any, Any]) -> None:
    real, ours = both

    def run(tf: Any, obj: Any) -> tuple[np.ndarray, np.ndarray]:
        x = tf.constant(G * 0.7)
        with tf.GradientTape() as tape:
            tape.watch(x)
            g = obj.inner_grad(x)
            s = tf.reduce_sum(g * g)
        return g.numpy(), tape.gradient(s, x).numpy()

    for o, r in zip(run(tg, ours), run(rtf, real)):
        np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-6)


def _serve(tf: Any, model: Any) -> Any:
    class Serve(tf.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.model = m

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x: Any) -> Any:
            return self.model(x)

    return Serve(model)


def test_keras_sequential_inside_module(rtf: Any, tmp_path: Path) -> None:
    keras = pytest.importorskip("keras")
    ours_m = tg.keras.Sequential([tg.keras.layers.Dense(5, activation="tanh"),
                                  tg.keras.layers.Dense(2)])
    real_m = keras.Sequential([keras.layers.Dense(5, activation="tanh"), keras.layers.Dense(2)])
    ours_m(np.zeros((1, 3), np.float32))
    real_m(np.zeros((1, 3), np.float32))
    real_m.set_weights([w.numpy() for w in ours_m.weights])
    tg.saved_model.save(_serve(tg, ours_m), str(tmp_path / "ours"))
    rtf.saved_model.save(_serve(rtf, real_m), str(tmp_path / "real"))
    lo = tg.saved_model.load(str(tmp_path / "ours"))
    lr = rtf.saved_model.load(str(tmp_path / "real"))
    x = X[:5]
    np.testing.assert_allclose(lo(tg.constant(x)).numpy(), lr(rtf.constant(x)).numpy(),
                               rtol=1e-5, atol=1e-6)
    o = lo.signatures["serving_default"](x=tg.constant(x))
    r = lr.signatures["serving_default"](x=rtf.constant(x))
    assert list(o) == list(r)
    np.testing.assert_allclose(o["output_0"].numpy(), r["output_0"].numpy(), rtol=1e-5,
                               atol=1e-6)
