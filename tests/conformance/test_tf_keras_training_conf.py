"""Conformance: Keras training machinery against real Keras 3 (through ``tf.keras``).

Optimizer trajectories (50 steps from identical weights, 1e-5), learning-rate
schedules, metric values, ``fit`` histories with ``shuffle=False`` (arrays,
datasets, validation, callbacks, functional models), ``evaluate``/``predict``/
``train_on_batch``, and the exact text of ``verbose=2`` lines and of
``summary()``.  Skipped without TensorFlow.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


_rng = np.random.default_rng(7)
X = _rng.normal(size=(40, 3)).astype(np.float32)
Y_REG = (X @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
Y_BIN = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.float32)
Y_CLS = _rng.integers(0, 3, size=40)
W0 = [_rng.normal(size=(3, 8)).astype(np.float32) * 0.5, np.zeros(8, np.float32),
      _rng.normal(size=(8, 3)).astype(np.float32) * 0.5, np.full(3, 0.1, np.float32)]


def _model(tf: Any, out_units: int, out_act: Any = None) -> Any:
    m = tf.keras.Sequential([tf.keras.Input((3,)),
                             tf.keras.layers.Dense(8, activation="tanh", name="hidden"),
                             tf.keras.layers.Dense(out_units, activation=out_act, name="out")])
    m.set_weights(W0 if out_units == 3 else [W0[0], W0[1], W0[2][:, :1], W0[3][:1]])
    return m


# ---------------------------------------------------------------------------- optimizers
OPTIMIZERS = {
    "rmsprop": lambda k: k.optimizers.RMSprop(learning_rate=0.01),
    "rmsprop_momentum_centered": lambda k: k.optimizers.RMSprop(
        learning_rate=0.005, momentum=0.9, centered=True),
    "adagrad": lambda k: k.optimizers.Adagrad(learning_rate=0.1),
    "adadelta": lambda k: k.optimizers.Adadelta(learning_rate=1.0),
    "adamax": lambda k: k.optimizers.Adamax(learning_rate=0.02),
    "nadam": lambda k: k.optimizers.Nadam(learning_rate=0.01),
    "ftrl": lambda k: k.optimizers.Ftrl(learning_rate=0.1, l1_regularization_strength=0.001,
                                        l2_regularization_strength=0.01, beta=0.1),
    "lion": lambda k: k.optimizers.Lion(learning_rate=0.003),
    "adamw": lambda k: k.optimizers.AdamW(learning_rate=0.01, weight_decay=0.05),
    "sgd_wd_clip": lambda k: k.optimizers.SGD(learning_rate=0.05, momentum=0.5,
                                              weight_decay=0.01, clipnorm=0.5),
    "rmsprop_wd": lambda k: k.optimizers.RMSprop(learning_rate=0.01, weight_decay=0.1),
    "adam_exp_schedule": lambda k: k.optimizers.Adam(
        learning_rate=k.optimizers.schedules.ExponentialDecay(0.05, 10, 0.5)),
    "adam_accumulate_3": lambda k: k.optimizers.Adam(learning_rate=0.01,
                                                     gradient_accumulation_steps=3),
    "sgd_momentum_accumulate_2": lambda k: k.optimizers.SGD(
        learning_rate=0.05, momentum=0.9, gradient_accumulation_steps=2, clipnorm=1.0),
    "sgd_cosine_schedule": lambda k: k.optimizers.SGD(
        learning_rate=k.optimizers.schedules.CosineDecay(0.1, 40, alpha=0.1)),
}


def _trajectory(tf: Any, name: str, steps: int = 50) -> tuple[list[np.ndarray], list[float]]:
    model = _model(tf, 3)
    opt = OPTIMIZERS[name](tf.keras)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = tf.constant(X), tf.constant(Y_CLS)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return model.get_weights(), losses


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_trajectory_matches_keras(rtf: Any, name: str) -> None:
    w_tg, l_tg = _trajectory(tg_tf, name)
    w_tf, l_tf = _trajectory(rtf, name)
    assert l_tg[-1] < l_tg[0]
    np.testing.assert_allclose(l_tg, l_tf, rtol=1e-5)
    for a, b in zip(w_tg, w_tf):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_optimizer_defaults_match_keras(rtf: Any) -> None:
    for name in ("RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl", "Lion", "AdamW"):
        ours = getattr(tg_tf.keras.optimizers, name)()
        theirs = getattr(rtf.keras.optimizers, name)()
        assert float(ours.learning_rate.numpy()) == float(theirs.learning_rate.numpy()), name
        assert ours.name == re.sub(r"_\d+$", "", theirs.name)  # Keras numbers repeats
        for attr in ("rho", "momentum", "epsilon", "beta_1", "beta_2",
                     "initial_accumulator_value", "weight_decay", "learning_rate_power"):
            if hasattr(theirs, attr):
                assert getattr(ours, attr) == getattr(theirs, attr), (name, attr)


# ---------------------------------------------------------------------------- schedules
SCHEDULES = {
    "exp": lambda s: s.ExponentialDecay(0.1, decay_steps=7, decay_rate=0.8),
    "exp_stair": lambda s: s.ExponentialDecay(0.1, decay_steps=7, decay_rate=0.8,
                                              staircase=True),
    "piecewise": lambda s: s.PiecewiseConstantDecay([5, 12], [1.0, 0.5, 0.1]),
    "cosine": lambda s: s.CosineDecay(0.2, decay_steps=20, alpha=0.05),
    "cosine_warmup": lambda s: s.CosineDecay(0.0, decay_steps=20, warmup_target=0.3,
                                             warmup_steps=5),
    "poly": lambda s: s.PolynomialDecay(0.1, decay_steps=15, end_learning_rate=0.01,
                                        power=2.0),
    "poly_cycle": lambda s: s.PolynomialDecay(0.1, decay_steps=8, cycle=True),
    "inverse": lambda s: s.InverseTimeDecay(0.1, decay_steps=3, decay_rate=0.5),
    "inverse_stair": lambda s: s.InverseTimeDecay(0.1, decay_steps=3, decay_rate=0.5,
                                                  staircase=True),
    "restarts": lambda s: s.CosineDecayRestarts(0.1, first_decay_steps=5),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_values_match_keras(rtf: Any, name: str) -> None:
    ours = SCHEDULES[name](tg_tf.keras.optimizers.schedules)
    theirs = SCHEDULES[name](rtf.keras.optimizers.schedules)
    a = np.array([float(np.asarray(ours(s))) for s in range(30)], np.float32)
    b = np.array([float(np.asarray(theirs(s))) for s in range(30)], np.float32)
    np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-8)


# ---------------------------------------------------------------------------- metrics
_P = _rng.uniform(size=(30, 1)).astype(np.float32)
_T = (_rng.uniform(size=(30, 1)) > 0.4).astype(np.float32)
_SW = _rng.uniform(size=(30,)).astype(np.float32)
_PC = _rng.uniform(size=(30, 4)).astype(np.float32)
_TC = _rng.integers(0, 4, size=(30,))

METRICS: dict[str, Any] = {
    "mean": (lambda m: m.Mean(), lambda: (_P[:, 0],)),
    "sum": (lambda m: m.Sum(), lambda: (_P,)),
    "accuracy": (lambda m: m.Accuracy(), lambda: (_TC, np.argmax(_PC, axis=1))),
    "binary_accuracy": (lambda m: m.BinaryAccuracy(), lambda: (_T, _P)),
    "binary_accuracy_t": (lambda m: m.BinaryAccuracy(threshold=0.7), lambda: (_T[:, 0], _P)),
    "categorical_accuracy": (lambda m: m.CategoricalAccuracy(),
                             lambda: (np.eye(4, dtype=np.float32)[_TC], _PC)),
    "sparse_categorical_accuracy": (lambda m: m.SparseCategoricalAccuracy(),
                                    lambda: (_TC, _PC)),
    "mse": (lambda m: m.MeanSquaredError(), lambda: (_T, _P)),
    "mae": (lambda m: m.MeanAbsoluteError(), lambda: (_T, _P)),
    "auc": (lambda m: m.AUC(), lambda: (_T, _P)),
    "auc_pr": (lambda m: m.AUC(curve="PR", num_thresholds=50), lambda: (_T, _P)),
    "auc_minoring": (lambda m: m.AUC(summation_method="minoring"), lambda: (_T, _P)),
    "precision": (lambda m: m.Precision(), lambda: (_T, _P)),
    "recall": (lambda m: m.Recall(thresholds=0.3), lambda: (_T, _P)),
    "rmse": (lambda m: m.RootMeanSquaredError(), lambda: (_T, _P)),
    "mape": (lambda m: m.MeanAbsolutePercentageError(), lambda: (_T + 0.5, _P)),
    "msle": (lambda m: m.MeanSquaredLogarithmicError(), lambda: (_T, _P)),
    "top2": (lambda m: m.SparseTopKCategoricalAccuracy(k=2), lambda: (_TC, _PC)),
    "top2_onehot": (lambda m: m.TopKCategoricalAccuracy(k=2),
                    lambda: (np.eye(4, dtype=np.float32)[_TC], _PC)),
    "bce": (lambda m: m.BinaryCrossentropy(), lambda: (_T, _P)),
    "bce_logits": (lambda m: m.BinaryCrossentropy(from_logits=True), lambda: (_T, _P * 4 - 2)),
    "cce": (lambda m: m.CategoricalCrossentropy(),
            lambda: (np.eye(4, dtype=np.float32)[_TC], _PC)),
    "scce_logits": (lambda m: m.SparseCategoricalCrossentropy(from_logits=True),
                    lambda: (_TC, _PC * 3)),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_metric_values_match_keras(rtf: Any, name: str, weighted: bool) -> None:
    make, args = METRICS[name]
    results = []
    for k in (tg_tf.keras, rtf.keras):
        m = make(k.metrics)
        a = args()
        for lo, hi in ((0, 11), (11, 30)):  # two updates: the state accumulates
            part = [x[lo:hi] for x in a]
            sw = _SW[lo:hi] if weighted else None
            m.update_state(*part, sample_weight=sw)
        r1 = float(np.asarray(m.result()))
        m.reset_state()
        m.update_state(*[x[:5] for x in a])
        results.append((r1, float(np.asarray(m.result())), re.sub(r"_\d+$", "", m.name)))
    assert results[0][2] == results[1][2]
    np.testing.assert_allclose(results[0][:2], results[1][:2], rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------- fit
def _quiet() -> Any:
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def _fit_history(tf: Any, case: str) -> dict[str, Any]:
    k = tf.keras
    if case == "binary_adam_val_split":
        m = _model(tf, 1, "sigmoid")
        m.compile(optimizer=k.optimizers.Adam(0.01), loss="binary_crossentropy",
                  metrics=["accuracy", k.metrics.AUC(name="auc")])
        h = m.fit(X, Y_BIN, batch_size=8, epochs=3, shuffle=False, validation_split=0.25,
                  verbose=0)
    elif case == "sparse_rmsprop_val_data":
        m = _model(tf, 3)
        m.compile(optimizer="rmsprop",
                  loss=k.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
        h = m.fit(X[:30], Y_CLS[:30], batch_size=7, epochs=3, shuffle=False,
                  validation_data=(X[30:], Y_CLS[30:]), verbose=0)
    elif case == "mse_sgd_dataset":
        m = _model(tf, 1)
        m.compile(optimizer=k.optimizers.SGD(0.05, momentum=0.9), loss="mse", metrics=["mae"])
        ds = tf.data.Dataset.from_tensor_slices((X, Y_REG)).batch(6)
        h = m.fit(ds, epochs=4, verbose=0, validation_data=ds.take(2))
    elif case == "initial_epoch_sample_weight":
        m = _model(tf, 1)
        m.compile(optimizer=k.optimizers.Adam(0.02), loss="mse")
        h = m.fit(X, Y_REG, sample_weight=np.linspace(0.5, 1.5, 40), batch_size=16,
                  epochs=4, initial_epoch=2, shuffle=False, verbose=0)
    elif case == "lr_scheduler":
        m = _model(tf, 1)
        m.compile(optimizer=k.optimizers.SGD(0.1), loss="mse")
        cb = k.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch else lr)
        h = m.fit(X, Y_REG, batch_size=10, epochs=3, shuffle=False, verbose=0, callbacks=[cb])
    elif case == "reduce_lr_early_stopping":
        m = _model(tf, 1)
        m.compile(optimizer=k.optimizers.SGD(0.5), loss="mse")
        cbs = [k.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                             min_delta=10.0),
               k.callbacks.EarlyStopping(monitor="loss", patience=2, min_delta=10.0,
                                         restore_best_weights=True)]
        h = m.fit(X, Y_REG, batch_size=20, epochs=8, shuffle=False, verbose=0, callbacks=cbs)
    elif case == "functional_two_inputs":
        a = k.Input((2,), name="a")
        b = k.Input((1,), name="b")
        ha = k.layers.Dense(4, activation="relu", name="ha")(a)
        hb = k.layers.Dense(4, name="hb")(b)
        out = k.layers.Dense(1, name="y")(ha + hb)
        m = k.Model(inputs=[a, b], outputs=out)
        rng = np.random.default_rng(3)
        m.set_weights([w.astype(np.float32) for w in
                       (rng.normal(size=(2, 4)), np.zeros(4), rng.normal(size=(1, 4)),
                        np.zeros(4), rng.normal(size=(4, 1)), np.zeros(1))])
        m.compile(optimizer=k.optimizers.Adam(0.01), loss="mae", metrics=["mse"])
        h = m.fit([X[:, :2], X[:, 2:]], Y_REG, batch_size=10, epochs=3, shuffle=False,
                  verbose=0)
    elif case == "functional_two_outputs":
        a = k.Input((3,), name="x")
        h = k.layers.Dense(4, activation="tanh", name="h")(a)
        m = k.Model(a, [k.layers.Dense(1, name="o1")(h), k.layers.Dense(3, name="o2")(h)])
        rng = np.random.default_rng(5)
        m.set_weights([w.astype(np.float32) for w in
                       (rng.normal(size=(3, 4)), np.zeros(4), rng.normal(size=(4, 1)),
                        np.zeros(1), rng.normal(size=(4, 3)), np.zeros(3))])
        m.compile(optimizer=k.optimizers.Adam(0.01),
                  loss=["mse", k.losses.SparseCategoricalCrossentropy(from_logits=True)],
                  loss_weights=[1.0, 0.3], metrics=[["mae"], ["accuracy"]])
        h = m.fit(X, [Y_REG, Y_CLS], batch_size=10, epochs=2, shuffle=False, verbose=0,
                  validation_split=0.25)
        out0 = {"history": h.history, "epoch": h.epoch, "params": h.params,
                "weights": m.get_weights(),
                "evaluate": m.evaluate(X, [Y_REG, Y_CLS], verbose=0)}
        return out0
    elif case == "ema":
        m = _model(tf, 1)
        m.compile(optimizer=k.optimizers.Adam(0.05, use_ema=True, ema_momentum=0.8,
                                              ema_overwrite_frequency=5), loss="mse")
        h = m.fit(X, Y_REG, batch_size=8, epochs=3, shuffle=False, verbose=0)
    elif case == "class_weight":
        m = _model(tf, 1, "sigmoid")
        m.compile(optimizer=k.optimizers.SGD(0.1), loss="binary_crossentropy",
                  metrics=["accuracy"], weighted_metrics=["accuracy", "mse"])
        h = m.fit(X, Y_BIN, class_weight={0: 1.0, 1: 3.0}, batch_size=8, epochs=2,
                  shuffle=False, verbose=0)
    else:
        raise KeyError(case)
    out: dict[str, Any] = {"history": h.history, "epoch": h.epoch, "params": h.params,
                           "weights": m.get_weights()}
    out["evaluate"] = None
    return out


FIT_CASES = ["binary_adam_val_split", "sparse_rmsprop_val_data", "mse_sgd_dataset",
             "initial_epoch_sample_weight", "lr_scheduler", "reduce_lr_early_stopping",
             "functional_two_inputs", "class_weight", "functional_two_outputs", "ema"]


@pytest.mark.parametrize("case", FIT_CASES)
def test_fit_history_matches_keras(rtf: Any, case: str) -> None:
    with _quiet():
        ours = _fit_history(tg_tf, case)
        theirs = _fit_history(rtf, case)
    assert sorted(ours["history"]) == sorted(theirs["history"]), case
    assert list(ours["history"]) == list(theirs["history"])
    for key in theirs["history"]:
        np.testing.assert_allclose(ours["history"][key], theirs["history"][key], rtol=2e-5,
                                   atol=1e-6, err_msg=key)
    assert ours["epoch"] == theirs["epoch"]
    assert ours["params"] == theirs["params"]
    for a, b in zip(ours["weights"], theirs["weights"]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    if theirs["evaluate"] is not None:
        np.testing.assert_allclose(ours["evaluate"], theirs["evaluate"], rtol=2e-5)


def _shuffled_fit(tf: Any, seed: int, shuffle: Any, batch_size: int, split: float,
                  set_with: str) -> dict[str, Any]:
    """A fit with ``shuffle`` on arrays, after a seed: the orders shape every number."""
    k = tf.keras
    if set_with == "keras":
        k.utils.set_random_seed(seed)
    else:
        tf.random.set_seed(seed)
    m = _model(tf, 3)
    m.compile(optimizer=k.optimizers.SGD(0.2),
              loss=k.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    h = m.fit(X, Y_CLS, batch_size=batch_size, epochs=4, shuffle=shuffle,
              validation_split=split, verbose=0)
    # a second fit in the same seed state, then an eager draw: fit draws no eager op seed
    h2 = m.fit(X[:23], Y_CLS[:23], batch_size=batch_size, epochs=2, shuffle=shuffle, verbose=0)
    return {"history": h.history, "history2": h2.history, "weights": m.get_weights(),
            "after": tf.random.uniform([3]).numpy()}


@pytest.mark.parametrize("seed, shuffle, batch_size, split, set_with", [
    (1, True, 7, 0.0, "keras"),       # 40 = 5 * 7 + 5: a partial last batch
    (42, True, 16, 0.25, "tf"),       # validation_split: the training 30 are shuffled
    (0, True, 32, 0.0, "tf"),         # global seed 0: op seeds (0, 2**31 - 1)
    (12345, "batch", 6, 0.0, "keras"),
    (7, "batch", 9, 0.2, "tf"),
    (2**40 + 3, True, 5, 0.0, "tf"),  # a seed beyond 31 bits is truncated
])
def test_fit_shuffle_orders_match_keras(rtf: Any, seed: int, shuffle: Any, batch_size: int,
                                        split: float, set_with: str) -> None:
    with _quiet():
        ours = _shuffled_fit(tg_tf, seed, shuffle, batch_size, split, set_with)
        theirs = _shuffled_fit(rtf, seed, shuffle, batch_size, split, set_with)
    for which in ("history", "history2"):
        assert list(ours[which]) == list(theirs[which])
        for key in theirs[which]:
            np.testing.assert_allclose(ours[which][key], theirs[which][key], rtol=2e-5,
                                       atol=1e-6, err_msg=f"{which} {key}")
    for a, b in zip(ours["weights"], theirs["weights"]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(ours["after"], theirs["after"])


def _batches_seen(tf: Any, seed: int | None, shuffle: Any, n: int, batch_size: int,
                  **fit_kw: Any) -> list[list[int]]:
    """The rows each ``train_step`` receives over three epochs (row ``i`` has label ``i``)."""
    k = tf.keras
    seen: list[list[int]] = []

    class Rec(k.Model):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.d = k.layers.Dense(1)

        def call(self, x: Any) -> Any:
            return self.d(x)

        def train_step(self, data: Any) -> Any:
            seen.append([int(v) for v in np.asarray(data[1]).reshape(-1)])
            return {"n": tf.constant(1.0)}

    if seed is not None:
        k.utils.set_random_seed(seed)
    m = Rec()
    m.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    m.fit(np.arange(n, dtype=np.float32)[:, None], np.arange(n, dtype=np.float32),
          batch_size=batch_size, epochs=3, shuffle=shuffle, verbose=0, **fit_kw)
    return seen


@pytest.mark.parametrize("seed, shuffle, n, batch_size, steps", [
    (1, True, 10, 4, None), (3, "batch", 10, 4, None), (99, "batch", 23, 5, None),
    (5, True, 1, 4, None), (8, "batch", 9, 1, None),
    (1, True, 10, 4, 2), (2, "batch", 10, 3, 3), (4, False, 10, 4, 2), (6, True, 10, 4, 5)])
def test_fit_shuffle_batches_match_keras(rtf: Any, seed: int, shuffle: Any, n: int,
                                         batch_size: int, steps: int | None) -> None:
    """The exact rows of each batch: every epoch of a seeded fit repeats the same order
    (Keras's dataset makes a new RandomShuffle kernel per epoch's iterator); ``"batch"``
    permutes inside each batch, the kernel going on from batch to batch; with
    ``steps_per_epoch`` a pass goes on into the next epoch, and an epoch that reaches
    the pass's end stops there (warning that the input ran out)."""
    out = []
    for tf in (tg_tf, rtf):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seen = _batches_seen(tf, seed, shuffle, n, batch_size, steps_per_epoch=steps)
        ran_out = [str(w.message) for w in caught if "ran out of data" in str(w.message)]
        out.append((seen, ran_out))
    assert out[0] == out[1]


def test_fit_shuffle_without_a_seed_is_random_and_valid() -> None:
    """No global seed: each epoch is a fresh random order of all the rows."""
    import tapegrad.tf.random as tgr

    saved = tgr._CONTEXT["seed"]
    tgr.set_seed(None)
    try:
        for shuffle in (True, "batch"):
            seen = _batches_seen(tg_tf, None, shuffle, 50, 8)
            epochs = [sum(seen[i * 7:(i + 1) * 7], []) for i in range(3)]
            assert all(sorted(e) == list(range(50)) for e in epochs)
            assert len({tuple(e) for e in epochs}) == 3  # 50! orders: a repeat is no chance
            if shuffle == "batch":
                assert all(sorted(e[i:i + 8]) == list(range(i, min(i + 8, 50)))
                           for e in epochs for i in range(0, 50, 8))
    finally:
        tgr.set_seed(saved)


def _eval_predict(tf: Any) -> dict[str, Any]:
    k = tf.keras
    m = _model(tf, 3)
    m.compile(optimizer=k.optimizers.Adam(0.01),
              loss=k.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy", k.metrics.SparseCategoricalAccuracy(name="sca")])
    first = m.train_on_batch(X[:16], Y_CLS[:16])
    second = m.train_on_batch(X[16:], Y_CLS[16:], return_dict=True)
    test = m.test_on_batch(X[:10], Y_CLS[:10])
    ev = m.evaluate(X, Y_CLS, batch_size=9, verbose=0)
    evd = m.evaluate(X, Y_CLS, verbose=0, return_dict=True)
    pred = m.predict(X, batch_size=13, verbose=0)
    pob = m.predict_on_batch(X[:4])
    return {"first": first, "second": second, "test": test, "ev": ev, "evd": evd,
            "pred": pred, "pob": pob, "names": m.metrics_names}


def test_evaluate_predict_on_batch_match_keras(rtf: Any) -> None:
    with _quiet():
        ours, theirs = _eval_predict(tg_tf), _eval_predict(rtf)
    assert ours["names"] == theirs["names"]
    for key in ("first", "test", "ev"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5)
    for key in ("second", "evd"):
        assert list(ours[key]) == list(theirs[key])
        np.testing.assert_allclose(list(ours[key].values()), list(theirs[key].values()),
                                   rtol=1e-5)
    for key in ("pred", "pob"):
        assert ours[key].shape == theirs[key].shape and ours[key].dtype == theirs[key].dtype
        # two Adam steps normalise tiny float32 differences of the gradients up to ~lr*1e-4
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- text
_TIME = re.compile(r"\d+(?:ms|us|s)/step|- \d+s -")


def _printed(tf: Any, verbose: int) -> str:
    k = tf.keras
    m = _model(tf, 1, "sigmoid")
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    buf = io.StringIO()
    with _quiet(), contextlib.redirect_stdout(buf):
        m.fit(X, Y_BIN, batch_size=16, epochs=2, verbose=verbose, shuffle=False,
              validation_split=0.2)
        m.evaluate(X, Y_BIN, verbose=verbose)
        m.predict(X, verbose=verbose)
        k.Sequential  # noqa: B018
    return buf.getvalue()


def test_verbose_2_lines_match_keras(rtf: Any) -> None:
    ours, theirs = _printed(tg_tf, 2), _printed(rtf, 2)
    assert _TIME.sub("T", ours) == _TIME.sub("T", theirs)
    assert "Epoch 1/2\n" in ours and " - val_loss: " in ours


def test_verbose_1_bar_final_lines_match_keras(rtf: Any) -> None:
    def finals(text: str) -> list[str]:
        # the last redraw of each bar (the text after the last carriage return of a line)
        lines = [seg.split("\r")[-1] for seg in text.split("\n") if seg]
        return [re.sub(r"\x1b\[1m\d+s\x1b\[0m", "T", _TIME.sub("T", s)).rstrip()
                for s in lines]

    ours, theirs = _printed(tg_tf, 1), _printed(rtf, 1)
    assert finals(ours) == finals(theirs)
    assert "━" in ours and "\x1b[32m" in ours


def _summary(tf: Any, kind: str) -> str:
    k = tf.keras
    if kind == "sequential":
        m = k.Sequential([k.Input((3,)), k.layers.Dense(4, activation="relu", name="d1"),
                          k.layers.Dense(1, name="d2")], name="seq")
    elif kind == "unbuilt":
        m = k.Sequential([k.layers.Dense(2, name="lazy")], name="unbuilt")
    elif kind == "subclassed":
        class Net(k.Model):
            def __init__(self) -> None:
                super().__init__(name="net")
                self.h = k.layers.Dense(4, name="h")
                self.o = k.layers.Dense(1, name="o")

            def call(self, x: Any) -> Any:
                return self.o(self.h(x))

        m = Net()
        m(np.zeros((2, 3), np.float32))
    elif kind == "built_by_call":
        m = k.Sequential([k.layers.Dense(3, name="l1"), k.layers.Dense(2, name="l2")],
                         name="called")
        m(np.zeros((4, 5), np.float32))
    elif kind == "trained":
        m = k.Sequential([k.Input((3,)), k.layers.Dense(4, name="t1")], name="trained")
        m.compile(optimizer="adam", loss="mse")
        with _quiet():
            m.fit(X, np.zeros((40, 4), np.float32), verbose=0, epochs=1)
    elif kind == "two_inputs":
        a, b = k.Input((2,), name="a"), k.Input((1,), name="b")
        s = k.layers.Dense(4, name="ha")(a) + k.layers.Dense(4, name="hb")(b)
        m = k.Model([a, b], k.layers.Dense(1, name="y")(s), name="two")
        assert [layer.name for layer in m.layers] == ["a", "b", "ha", "hb", "y"]
    elif kind == "chain":  # a functional chain: Keras' three columns, the input's row
        inp = k.Input((4,), name="chain_in")
        h = k.layers.Dense(8, name="layer_with_a_really_quite_long_name_xx")(inp)
        m = k.Model(inp, k.layers.BatchNormalization(name="batch_normalization")(h),
                    name="chain")
    elif kind == "long_names":  # cells wrap at spaces, an over-long word ends in an ellipsis
        a = k.Input(shape=(4,), name="first_input_with_long_name")
        b = k.Input(shape=(4,), name="second")
        h = k.layers.Dense(8, name="a_very_long_dense_layer_name_indeed")(a)
        c = k.layers.Concatenate(name="cat")([h, k.layers.Dense(8, name="hb")(b), h])
        m = k.Model([a, b], c, name="long")
    else:
        inp = k.Input((3,), name="x")
        h = k.layers.Dense(4, name="h")(inp)
        m = k.Model(inp, [k.layers.Dense(1, name="o1")(h), k.layers.Dense(2, name="o2")(h)],
                    name="func")
    lines: list[str] = []
    m.summary(print_fn=lambda line, *a, **kw: lines.append(line))
    assert len(lines) == 1  # the whole table in one call
    return "\n".join(lines)


@pytest.mark.parametrize("kind", ["sequential", "unbuilt", "trained", "functional",
                                  "two_inputs", "built_by_call", "subclassed", "chain",
                                  "long_names"])
def test_summary_text_matches_keras(rtf: Any, kind: str) -> None:
    ours, theirs = _summary(tg_tf, kind), _summary(rtf, kind)

    def norm(text: str) -> str:
        text = "\n".join(line.rstrip() for line in text.splitlines() if line.strip())
        if kind == "two_inputs":
            # automatic names count per process (add, add_1 ...): compare them unnumbered,
            # and the padding that depends on their length with it
            text = re.sub(r" +", " ", re.sub(r"\badd(_\d+)?\b", "add", text))
        return text

    assert norm(ours) == norm(theirs)


def test_count_params_and_deferred_build_match_keras(rtf: Any) -> None:
    for tf in (tg_tf, rtf):
        m = tf.keras.Sequential([tf.keras.layers.Dense(5), tf.keras.layers.Dense(2)])
        assert not m.built
        with pytest.raises(ValueError, match="isn't built"):
            m.count_params()
        m(np.zeros((1, 7), np.float32))
        assert m.built and m.count_params() == 7 * 5 + 5 + 5 * 2 + 2


def test_to_categorical_matches_keras(rtf: Any) -> None:
    for args in (([0, 2, 1],), ([[1], [0]], 3), (np.array([3, 1]), 5)):
        a = tg_tf.keras.utils.to_categorical(*args)
        b = rtf.keras.utils.to_categorical(*args)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def test_weights_files_load_in_both_directions(rtf: Any, tmp_path: Any) -> None:
    pytest.importorskip("h5py")

    def seq(k: Any) -> Any:
        return k.Sequential([k.Input((3,)), k.layers.Dense(4, name="a"),
                             k.layers.Dense(2, name="b")])

    def func(k: Any) -> Any:
        inp = k.Input((3,))
        return k.Model(inp, k.layers.Dense(2)(k.layers.Dense(4)(inp)))

    for make in (seq, func):
        ours, theirs = make(tg_tf.keras), make(rtf.keras)
        ours.save_weights(str(tmp_path / "ours.weights.h5"))
        theirs.load_weights(str(tmp_path / "ours.weights.h5"))
        for a, b in zip(ours.get_weights(), theirs.get_weights()):
            np.testing.assert_array_equal(a, b)
        back = make(tg_tf.keras)
        theirs.save_weights(str(tmp_path / "theirs.weights.h5"))
        back.load_weights(str(tmp_path / "theirs.weights.h5"))
        for a, b in zip(back.get_weights(), theirs.get_weights()):
            np.testing.assert_array_equal(a, b)


def test_keras_files_load_in_both_directions(rtf: Any, tmp_path: Any) -> None:
    pytest.importorskip("h5py")

    def seq(k: Any) -> Any:
        return k.Sequential([k.Input((3,)), k.layers.Dense(4, activation="relu", name="a"),
                             k.layers.Dense(2, name="b")], name="seq")

    def func(k: Any) -> Any:
        a = k.Input((3,), name="x")
        h = k.layers.Dense(4, activation="tanh", name="h")(a)
        return k.Model(a, [k.layers.Dense(1, name="o1")(h), k.layers.Dense(2, name="o2")(h)],
                       name="func")

    def outs(p: Any) -> list[np.ndarray]:
        return list(p) if isinstance(p, list) else [p]

    for make in (seq, func):
        ours = make(tg_tf.keras)
        ours.save(str(tmp_path / "ours.keras"))
        theirs = rtf.keras.models.load_model(str(tmp_path / "ours.keras"))
        assert [layer.name for layer in theirs.layers] == [layer.name for layer in ours.layers]
        for a, b in zip(outs(ours.predict(X, verbose=0)), outs(theirs.predict(X, verbose=0))):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)  # float32 GEMM order
        real = make(rtf.keras)
        real.save(str(tmp_path / "theirs.keras"))
        back = tg_tf.keras.models.load_model(str(tmp_path / "theirs.keras"))
        assert back.name == real.name
        for a, b in zip(outs(back.predict(X, verbose=0)), outs(real.predict(X, verbose=0))):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)  # float32 GEMM order


def test_csv_logger_and_terminate_on_nan_match_keras(rtf: Any, tmp_path: Any) -> None:
    texts, stopped = [], []
    for tf in (tg_tf, rtf):
        k = tf.keras
        m = _model(tf, 1)
        m.compile(optimizer=k.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
        path = tmp_path / f"log_{len(texts)}.csv"
        with _quiet():
            m.fit(X, Y_REG, batch_size=10, epochs=3, shuffle=False, verbose=0,
                  validation_split=0.25, callbacks=[k.callbacks.CSVLogger(str(path))])
        texts.append(path.read_text().splitlines())
        bad = _model(tf, 1)
        bad.compile(optimizer=k.optimizers.SGD(1e6), loss="mse")
        buf = io.StringIO()
        with _quiet(), contextlib.redirect_stdout(buf), np.errstate(all="ignore"):
            h = bad.fit(X, Y_REG * 1e6, batch_size=4, epochs=5, shuffle=False, verbose=0,
                        callbacks=[k.callbacks.TerminateOnNaN()])
        stopped.append((buf.getvalue(), len(h.epoch)))
    assert texts[0][0] == texts[1][0] == "epoch,loss,mae,val_loss,val_mae"
    for a, b in zip(texts[0][1:], texts[1][1:]):
        np.testing.assert_allclose([float(v) for v in a.split(",")],
                                   [float(v) for v in b.split(",")], rtol=2e-5)
    assert stopped[0] == stopped[1]


def test_raw_python_lists_are_refused_like_keras(rtf: Any) -> None:
    msgs = []
    for tf in (tg_tf, rtf):
        m = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
        m.compile(optimizer="sgd", loss="mse")
        with pytest.raises(ValueError) as info:
            m.fit([[1.0], [2.0]], np.ones((2, 1)), verbose=0)
        msgs.append(str(info.value).splitlines()[0])
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("kwargs", [
    {"sequence_length": 4, "batch_size": 3},
    {"sequence_length": 3, "sequence_stride": 2, "sampling_rate": 2, "batch_size": 2},
    {"sequence_length": 5, "start_index": 2, "end_index": 17, "batch_size": None},
])
def test_timeseries_dataset_matches_keras(rtf: Any, kwargs: dict[str, Any]) -> None:
    data = np.arange(60, dtype=np.float64).reshape(20, 3)
    targets = np.arange(20) * 10
    got = []
    for tf in (tg_tf, rtf):
        ds = tf.keras.utils.timeseries_dataset_from_array(data, targets, **kwargs)
        got.append([(np.asarray(a).tolist(), np.asarray(b).tolist())
                    for a, b in ds.as_numpy_iterator()])
    assert got[0] == got[1]


def test_keras_files_keep_the_compile_state(rtf: Any, tmp_path: Any) -> None:
    pytest.importorskip("h5py")

    def make(k: Any) -> Any:
        m = k.Sequential([k.Input((3,)), k.layers.Dense(4, activation="relu", name="a"),
                          k.layers.Dense(3, name="b")], name="seq")
        m.compile(optimizer=k.optimizers.Adam(
            k.optimizers.schedules.ExponentialDecay(0.01, 10, 0.5), beta_1=0.8),
            loss=k.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy", k.metrics.SparseCategoricalAccuracy(name="sca")])
        return m

    for src, dst in ((tg_tf, rtf), (rtf, tg_tf)):
        original = make(src.keras)
        path = str(tmp_path / f"{src.__name__}.keras")
        with _quiet():
            original.save(path)
            loaded = dst.keras.models.load_model(path)
        assert type(loaded.optimizer).__name__ == "Adam" and loaded.optimizer.beta_1 == 0.8
        assert type(loaded.optimizer._learning_rate if dst is rtf else
                    loaded.optimizer._schedule).__name__ == "ExponentialDecay"
        with _quiet():
            a = loaded.evaluate(X, Y_CLS, verbose=0)
            b = original.evaluate(X, Y_CLS, verbose=0)
        np.testing.assert_allclose(a, b, rtol=1e-6)


def _dataset_fit_warnings(tf: Any) -> list[Any]:
    k = tf.keras
    k.utils.set_random_seed(0)
    m = _model(tf, 1)
    m.compile(optimizer="sgd", loss="mse")
    ds = tf.data.Dataset.from_tensor_slices((X, Y_REG)).batch(8)  # 5 batches
    out: list[Any] = []
    for kw in (dict(x=ds, steps_per_epoch=7, epochs=2), dict(x=ds.take(0), epochs=1),
               dict(x=ds, epochs=1, shuffle=False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            h = m.fit(verbose=0, **kw)
        out.append((h.epoch, sorted(h.history), [
            (w.category.__name__, str(w.message)) for w in caught
            if "data" in str(w.message) or "shuffle" in str(w.message)]))
    return out


def test_dataset_fit_warnings_match_keras(rtf: Any) -> None:
    """fit on a dataset: Keras's warning that the default ``shuffle=True`` is ignored, and
    its "ran out of data" text when ``steps_per_epoch`` asks for more (or there is none)."""
    assert _dataset_fit_warnings(tg_tf) == _dataset_fit_warnings(rtf)
