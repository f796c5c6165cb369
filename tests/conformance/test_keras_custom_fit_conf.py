"""Conformance: the "customizing what happens in fit()" guide's models (a Model subclass
built from inputs and outputs with its own ``train_step`` / ``test_step`` / ``metrics``)
train to real Keras 3's histories from the same seed.  Skipped without TensorFlow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _guide(tf: Any) -> dict[str, Any]:
    keras = tf.keras
    keras.utils.set_random_seed(1)

    class CustomModel(keras.Model):
        def train_step(self, data: Any) -> Any:
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    class Tracked(keras.Model):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.loss_tracker = keras.metrics.Mean(name="loss")
            self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
            self.loss_fn = keras.losses.MeanSquaredError()

        def train_step(self, data: Any) -> Any:
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.loss_fn(y, self(x, training=True))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, self(x, training=False))
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self) -> list[Any]:
            return [self.loss_tracker, self.mae_metric]

    rng = np.random.default_rng(0)
    x = rng.random((200, 8)).astype(np.float32)
    y = rng.random((200, 1)).astype(np.float32)
    out: dict[str, Any] = {}
    for cls in (CustomModel, Tracked):
        inputs = keras.Input(shape=(8,))
        model = cls(inputs, keras.layers.Dense(1)(inputs))
        if cls is CustomModel:
            model.compile(optimizer="adam", loss="mse", metrics=["mae"])
        else:
            model.compile(optimizer="adam")
        h = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
        out[cls.__name__] = (type(model).__mro__[1].__name__, model.name.split("_")[0],
                             [m.name for m in model.metrics], h.history)
    return out


def test_customized_fit_trains_as_keras(rtf: Any) -> None:
    ours, theirs = _guide(tg_tf), _guide(rtf)
    for key in ours:
        (b1, n1, m1, h1), (b2, n2, m2, h2) = ours[key], theirs[key]
        assert (b1, n1, m1) == (b2, n2, m2) == ("Functional", "custom" if key == "CustomModel"
                                                 else "tracked", m1)
        assert h1.keys() == h2.keys()
        for k in h1:
            np.testing.assert_allclose(h1[k], h2[k], rtol=2e-6)
