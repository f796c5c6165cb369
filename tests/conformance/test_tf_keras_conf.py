"""Conformance: the small Keras against real Keras 3 (through ``tf.keras``).

50-step training runs with SGD (plain, momentum, Nesterov) and Adam start from
identical weights on both frameworks; the parameters must stay equal to 1e-5
relative.  Losses, layer outputs and the error types are compared too.
Skipped without TensorFlow.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf
from tests.tf_style.tf_programs import same


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


_rng = np.random.default_rng(42)
X = _rng.normal(size=(16, 3)).astype(np.float32)
Y_REG = (X @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
Y_CLS = _rng.integers(0, 3, size=16)
W0 = [_rng.normal(size=(3, 8)).astype(np.float32) * 0.5, np.zeros(8, np.float32),
      _rng.normal(size=(8, 3)).astype(np.float32) * 0.5, np.full(3, 0.1, np.float32)]


def _model(tf: Any, out_units: int) -> Any:
    m = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"),
                             tf.keras.layers.Dense(out_units)])
    m.build((None, 3))
    m.set_weights(W0 if out_units == 3 else [W0[0], W0[1], W0[2][:, :1], W0[3][:1]])
    return m


OPTIMIZERS = {
    "sgd": lambda tf: tf.keras.optimizers.SGD(learning_rate=0.05),
    "sgd_momentum": lambda tf: tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
    "sgd_nesterov": lambda tf: tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9,
                                                       nesterov=True),
    "adam": lambda tf: tf.keras.optimizers.Adam(learning_rate=0.01),
    "adam_amsgrad": lambda tf: tf.keras.optimizers.Adam(learning_rate=0.01, amsgrad=True),
}
TASKS = {
    "mse": (1, lambda tf: tf.keras.losses.MeanSquaredError(), Y_REG),
    "sparse_ce_logits": (3, lambda tf: tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True), Y_CLS),
}


def train(tf: Any, opt_name: str, task: str, steps: int = 50) -> tuple[list[np.ndarray], list[float]]:
    units, make_loss, y = TASKS[task]
    model = _model(tf, units)
    opt = OPTIMIZERS[opt_name](tf)
    loss_fn = make_loss(tf)
    x = tf.constant(X)
    yt = tf.constant(y)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = loss_fn(yt, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return model.get_weights(), losses


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_training_run_matches_keras(rtf, opt_name: str, task: str) -> None:  # type: ignore[no-untyped-def]
    w_tg, l_tg = train(tg_tf, opt_name, task)
    w_tf, l_tf = train(rtf, opt_name, task)
    assert l_tg[-1] < l_tg[0]
    np.testing.assert_allclose(l_tg, l_tf, rtol=1e-5)
    for a, b in zip(w_tg, w_tf):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _keras_facts(tf: Any) -> Any:
    d = tf.keras.layers.Dense(3, activation="relu", name="probe")
    before = d.built
    d.build((None, 4))
    d.set_weights([np.ones((4, 3), np.float32), np.array([0.5, -5.0, 0.0], np.float32)])
    out = d(tf.constant(X[:2, :3] @ np.ones((3, 4), np.float32)))
    mse = tf.keras.losses.MeanSquaredError()
    scce = tf.keras.losses.SparseCategoricalCrossentropy()
    scce_l = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    probs = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], np.float32)
    opt = tf.keras.optimizers.Adam()
    return {
        "built_before": before, "built": d.built,
        "names": [v.name for v in d.trainable_variables],
        "paths": [v.path for v in d.trainable_variables],
        "shapes": [tuple(v.shape) for v in d.weights],
        "out": out,
        "mse": mse(tf.constant([[1.0, 2.0]]), tf.constant([[0.0, 0.0]])),
        "mse_rank": mse(tf.constant([1.0, 3.0]), tf.constant([[0.0], [1.0]])),
        "scce_probs": scce(tf.constant([0, 2]), tf.constant(probs)),
        "scce_logits": scce_l(tf.constant([[0], [2]]), tf.constant(probs * 3.0)),
        "adam_eps": float(opt.epsilon), "adam_lr": float(opt.learning_rate.numpy()),
        "sgd_defaults": [float(tf.keras.optimizers.SGD().learning_rate.numpy()),
                         tf.keras.optimizers.SGD().momentum],
        "n_params_seq": len(_model(tf, 1).trainable_variables),
    }


def test_keras_facts_match(rtf) -> None:  # type: ignore[no-untyped-def]
    ours = _keras_facts(tg_tf)
    theirs = _keras_facts(rtf)
    for k in theirs:
        a = ours[k]
        b = theirs[k]
        if hasattr(a, "numpy"):
            a, b = np.asarray(a.numpy()), np.asarray(b.numpy())
        assert same(a, b, rtol=1e-6), (k, a, b)


def _error_of(fn: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"   # all of str(e): the hint is a note
    return "no error"


KERAS_ERRORS = {
    "no_gradients": lambda tf: tf.keras.optimizers.SGD().apply_gradients(
        zip([None], [tf.Variable(1.0)])),
    "set_weights_len": lambda tf: _built(tf).set_weights([np.zeros((2, 2), np.float32)]),
    "set_weights_shape": lambda tf: _built(tf).set_weights(
        [np.zeros((2, 3), np.float32), np.zeros(2, np.float32)]),
    "kernel_before_build": lambda tf: tf.keras.layers.Dense(2).kernel,
    "wrong_input_dim": lambda tf: _built(tf)(tf.ones([1, 5])),
    "grad_shape": lambda tf: tf.keras.optimizers.SGD().apply_gradients(
        zip([tf.constant([1.0, 2.0])], [tf.Variable(1.0)])),
}


def _built(tf: Any) -> Any:
    d = tf.keras.layers.Dense(2, name="err")
    d.build((None, 2))
    return d


@pytest.mark.parametrize("name", sorted(KERAS_ERRORS))
def test_keras_errors_match(rtf, name: str) -> None:  # type: ignore[no-untyped-def]
    ours = _error_of(lambda: KERAS_ERRORS[name](tg_tf))
    theirs = _error_of(lambda: KERAS_ERRORS[name](rtf))
    assert ours.split(":")[0] == theirs.split(":")[0], (ours, theirs)
    body = ours.split(": ", 1)[1]
    assert body in theirs or theirs.split(": ", 1)[1] in body, (ours, theirs)
