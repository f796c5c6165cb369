"""Keras training machinery without the real frameworks: fit/evaluate/predict, custom
steps, callbacks, metrics, functional models, optimizers' rules, schedules, utils."""

from __future__ import annotations

import contextlib
import io
import math
import re
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.optim import keras_rules as kr

keras = tf.keras
_rng = np.random.default_rng(0)
X = _rng.normal(size=(64, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-1.0], [0.5]], np.float32)).astype(np.float32)
Y_BIN = (X[:, 0] > 0).astype(np.float32)


def _reg_model() -> Any:
    tf.random.set_seed(1)
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(1)])


def _capture(fn: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()


# ---------------------------------------------------------------------------- fit & co
def test_fit_trains_and_returns_history() -> None:
    m = _reg_model()
    m.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    h = m.fit(X, Y, epochs=15, batch_size=16, verbose=0)
    assert h is m.history and h.epoch == list(range(15))
    assert h.params == {"verbose": 0, "epochs": 15, "steps": 4}
    assert list(h.history) == ["loss", "mae"]
    assert h.history["loss"][-1] < 0.2 * h.history["loss"][0]
    loss, mae = m.evaluate(X, Y, verbose=0)
    assert abs(loss - h.history["loss"][-1]) < 0.5 * h.history["loss"][0]
    assert m.predict(X, verbose=0).shape == (64, 1)


def test_epoch_loss_is_the_batch_size_weighted_mean_of_batch_losses() -> None:
    m = _reg_model()
    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    h = m.fit(X[:40], Y[:40], batch_size=16, epochs=1, shuffle=False, verbose=0)
    pred = m.predict(X[:40], verbose=0)
    per = ((pred - Y[:40]) ** 2)[:, 0]
    batches = [per[:16].mean(), per[16:32].mean(), per[32:].mean()]
    expected = (16 * batches[0] + 16 * batches[1] + 8 * batches[2]) / 40
    assert h.history["loss"][0] == pytest.approx(expected, rel=1e-5)
    assert m.evaluate(X[:40], Y[:40], verbose=0) == pytest.approx(expected, rel=1e-5)


def test_validation_split_takes_the_last_samples() -> None:
    m = _reg_model()
    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    h = m.fit(X, Y, validation_split=0.25, epochs=1, verbose=0, shuffle=False)
    assert h.params["steps"] == math.ceil(48 / 32)
    assert h.history["val_loss"][0] == pytest.approx(m.evaluate(X[48:], Y[48:], verbose=0),
                                                     rel=1e-6)
    with pytest.raises(ValueError, match="not sufficient to split"):
        m.fit(X[:1], Y[:1], validation_split=0.5, verbose=0)


def test_fit_on_a_dataset_and_unknown_length() -> None:
    m = _reg_model()
    m.compile(optimizer="adam", loss="mse")
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(10)
    h = m.fit(ds, epochs=2, verbose=0, validation_data=ds)
    assert h.params["steps"] == 7 and "val_loss" in h.history
    unknown = ds.filter(lambda x, y: tf.reduce_sum(x) > -100.0)
    out = _capture(lambda: m.fit(unknown, epochs=1, verbose=2))
    assert out.startswith("7/7 - ")  # the target becomes the steps seen
    with pytest.raises(ValueError, match="`y` should not be passed"):
        m.fit(ds, Y, verbose=0)


def test_fit_on_a_python_generator() -> None:
    def batches():
        while True:
            for i in range(0, 64, 16):
                yield X[i:i + 16], Y[i:i + 16]

    m = _reg_model()
    m.compile(optimizer="adam", loss="mse")
    h = m.fit(batches(), steps_per_epoch=4, epochs=3, verbose=0)
    assert h.params["steps"] == 4 and len(h.history["loss"]) == 3
    assert m.evaluate(iter([(X, Y)]), verbose=0) > 0
    with pytest.raises(ValueError, match="should not be passed"):
        m.fit(batches(), Y, verbose=0)


def test_class_weight_and_weighted_metrics() -> None:
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="binary_crossentropy",
              metrics=["accuracy"], weighted_metrics=["accuracy"])
    h = m.fit(X, Y_BIN, class_weight={0: 0.0, 1: 1.0}, epochs=1, verbose=0, shuffle=False)
    pred = m.predict(X, verbose=0)[:, 0]
    correct = ((pred > 0.5) == (Y_BIN == 1))
    assert h.history["accuracy"][0] == pytest.approx(correct.mean())  # unweighted
    assert h.history["weighted_accuracy"][0] == pytest.approx(correct[Y_BIN == 1].mean())
    with pytest.raises(ValueError, match="`class_weight` and `sample_weight`"):
        m.fit(X, Y_BIN, class_weight={0: 1.0}, sample_weight=np.ones(64), verbose=0)


def test_compile_is_required_and_a_loss_too() -> None:
    m = _reg_model()
    with pytest.raises(ValueError, match=r"You must call `compile\(\)`"):
        m.fit(X, Y, verbose=0)
    m.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="No loss to compute"):
        m.fit(X, Y, verbose=0)


def test_train_and_test_on_batch() -> None:
    m = _reg_model()
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    before = m.test_on_batch(X[:8], Y[:8])
    first = m.train_on_batch(X[:8], Y[:8])
    assert first == pytest.approx(before)  # the loss of the batch before the update
    after = m.test_on_batch(X[:8], Y[:8], return_dict=True)
    assert list(after) == ["loss", "mae"] and after["loss"] < before[0]
    assert m.predict_on_batch(X[:3]).shape == (3, 1)


def test_train_step_override_custom_training_guide() -> None:
    class CustomModel(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.loss_tracker = keras.metrics.Mean(name="loss")
            self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
            self.steps = 0

        def call(self, x: Any) -> Any:
            return self.dense(x)

        def train_step(self, data: Any) -> dict[str, Any]:
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = keras.losses.mean_squared_error(y, y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            self.steps += 1
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self) -> list[Any]:
            return [self.loss_tracker, self.mae_metric]

    m = CustomModel()
    m.compile(optimizer=keras.optimizers.Adam(0.05))
    h = m.fit(X, Y, epochs=10, batch_size=32, verbose=0)
    assert m.steps == 20 and sorted(h.history) == ["loss", "mae"]
    assert h.history["loss"][-1] < h.history["loss"][0]


def test_train_step_using_compute_loss_and_compiled_metrics() -> None:
    class M(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.d = keras.layers.Dense(1)

        def call(self, x: Any, training: Any = None) -> Any:
            assert training is not None
            return self.d(x)

        def train_step(self, data: Any) -> dict[str, Any]:
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    m = M()
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    h = m.fit(X, Y, epochs=2, verbose=0)
    assert sorted(h.history) == ["loss", "mae"]


def test_verbose_2_and_epoch_headers() -> None:
    m = _reg_model()
    m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    out = _capture(lambda: m.fit(X, Y, epochs=2, batch_size=32, verbose=2,
                                 validation_data=(X[:8], Y[:8])))
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    pat = (r"^2/2 - \d+s - \d+(us|ms|s)/step - loss: \d\.\d{4} - mae: \d\.\d{4} - "
           r"val_loss: \d\.\d{4} - val_mae: \d\.\d{4}$")
    assert re.match(pat, lines[1]) and re.match(pat, lines[3])
    one = _capture(lambda: m.fit(X, Y, epochs=1, verbose=2))
    assert not one.startswith("Epoch")  # a single epoch has no header
    assert _capture(lambda: m.fit(X, Y, epochs=2, verbose=0)) == ""
    ev = _capture(lambda: m.evaluate(X, Y, verbose=2))
    assert re.match(r"^2/2 - \d+s - \d+(us|ms|s)/step - loss: \S+ - mae: \S+\n$", ev)
    assert re.match(r"^2/2 - \d+s - \d+(us|ms|s)/step\n$",
                    _capture(lambda: m.predict(X, verbose=2)))


def test_verbose_1_bar() -> None:
    m = _reg_model()
    m.compile(optimizer="sgd", loss="mse")
    out = _capture(lambda: m.fit(X, Y, epochs=1, batch_size=16, verbose=1))
    last = out.split("\r")[-1]
    assert last.startswith("\x1b[1m4/4\x1b[0m \x1b[32m" + "━" * 20 + "\x1b[0m")
    assert " - loss: " in last and last.endswith("\n")


def test_progbar_value_formatting() -> None:
    bar = keras.utils.Progbar(10, verbose=2)
    out = _capture(lambda: bar.update(10, [("a", 0.5), ("b", 1e-5), ("c", 12.0)]))
    assert re.match(r"^10/10 - 0s - \d+(us|ms|s)/step - a: 0\.5000 - b: 1\.0000e-05 - "
                    r"c: 12\.0000\n$", out)


# ---------------------------------------------------------------------------- callbacks
def test_callback_order_and_logs() -> None:
    calls: list[str] = []

    class Rec(keras.callbacks.Callback):
        def on_train_begin(self, logs: Any = None) -> None:
            calls.append("train_begin")

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            calls.append(f"epoch_begin{epoch}")

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            calls.append(f"batch{batch}:{sorted(logs)}")

        def on_test_begin(self, logs: Any = None) -> None:
            calls.append("test_begin")

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            calls.append(f"epoch_end{epoch}:{sorted(logs)}")
            assert all(isinstance(v, float) for v in logs.values())
            assert self.model is m and self.params["epochs"] == 2

        def on_train_end(self, logs: Any = None) -> None:
            calls.append("train_end")

    m = _reg_model()
    m.compile(optimizer="sgd", loss="mse")
    m.fit(X[:20], Y[:20], batch_size=10, epochs=2, verbose=0, callbacks=[Rec()],
          validation_data=(X[:4], Y[:4]))
    assert calls == ["train_begin", "epoch_begin0", "batch0:['loss']", "batch1:['loss']",
                     "test_begin", "epoch_end0:['loss', 'val_loss']", "epoch_begin1",
                     "batch0:['loss']", "batch1:['loss']", "test_begin",
                     "epoch_end1:['loss', 'val_loss']", "train_end"]


def test_batch_hooks_reach_every_kind_of_listener() -> None:
    """Per-batch hooks go to the callbacks that define them (in the class, through the
    older ``on_batch_*`` names, or on the instance), with float logs; others get none."""
    seen: list[Any] = []

    class OldNames(keras.callbacks.Callback):  # the base forwards on_train_batch_* here
        def on_batch_begin(self, batch: int, logs: Any = None) -> None:
            seen.append(("old_begin", batch))

        def on_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.append(("old_end", batch, sorted(logs), type(logs["loss"])))

    class Quiet(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            raise AssertionError("replaced on the instance: never called")

    quiet = Quiet()
    quiet.on_train_batch_end = lambda batch, logs=None: seen.append(("inst", batch))  # type: ignore[method-assign]

    class Tests(keras.callbacks.Callback):
        def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.append(("test", batch, sorted(logs)))

        def on_predict_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.append(("predict", batch, sorted(logs)))

    lam = keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, lg: seen.append(
        ("lambda", b)))
    m = _reg_model()
    m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    m.fit(X[:20], Y[:20], batch_size=10, epochs=1, verbose=0,
          callbacks=[OldNames(), quiet, Tests(), lam, keras.callbacks.Callback()])
    assert seen == [("old_begin", 0), ("lambda", 0), ("old_end", 0, ["loss", "mae"], float),
                    ("inst", 0), ("old_begin", 1), ("lambda", 1),
                    ("old_end", 1, ["loss", "mae"], float), ("inst", 1)]
    seen.clear()
    m.evaluate(X[:20], Y[:20], batch_size=10, verbose=0, callbacks=[Tests(), OldNames()])
    m.predict(X[:10], batch_size=10, verbose=0, callbacks=[Tests()])
    assert seen == [("test", 0, ["loss", "mae"]), ("test", 1, ["loss", "mae"]),
                    ("predict", 0, ["outputs"])]
    # a callback added to a list that fit has seen is called from the next run on
    cbs = keras.callbacks.CallbackList([OldNames()], model=m)
    m.fit(X[:10], Y[:10], batch_size=10, epochs=1, verbose=0, callbacks=cbs)
    cbs.callbacks.append(lam)
    seen.clear()
    m.fit(X[:10], Y[:10], batch_size=10, epochs=1, verbose=0, callbacks=cbs)
    assert [s[0] for s in seen] == ["old_begin", "lambda", "old_end"]


def test_loss_tracker_is_the_weighted_mean_of_the_batch_losses() -> None:
    """The trainer's loss tracker (a scalar loss weighted by an int batch size) gives the
    same float32 state as the general ``Mean`` update with the same weights as floats."""
    fast, general = keras.metrics.Mean(), keras.metrics.Mean()
    rng = np.random.default_rng(3)
    for loss, n in zip(rng.normal(size=7).astype(np.float32) * 100, [32, 32, 7, 1, 128, 3, 0]):
        fast.update_state(tf.constant(loss), sample_weight=int(n))
        general.update_state(np.array([loss]), sample_weight=np.array([float(n)]))
        assert fast.total.numpy().tobytes() == general.total.numpy().tobytes()
        assert fast.count.numpy().tobytes() == general.count.numpy().tobytes()
        assert fast.result().numpy().tobytes() == general.result().numpy().tobytes()
    fast.reset_state()
    assert float(fast.result()) == 0.0 and fast.total.numpy().dtype == np.float32


def test_lambda_callback_with_any_parameter_names() -> None:
    seen: list[Any] = []
    cb = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, lg: seen.append((e, sorted(lg))),
                                        on_train_begin=lambda lg: seen.append("begin"))
    m = _reg_model()
    m.compile(optimizer="sgd", loss="mse")
    m.fit(X, Y, epochs=2, verbose=0, callbacks=[cb])
    assert seen == ["begin", (0, ["loss"]), (1, ["loss"])]


def test_early_stopping_and_restore_best_weights() -> None:
    m = _reg_model()
    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    es = keras.callbacks.EarlyStopping(monitor="loss", patience=2, verbose=1)
    # shuffle=False: with lr 0 every epoch's loss is then the same number to the last bit
    out = _capture(lambda: m.fit(X, Y, epochs=10, verbose=0, callbacks=[es], shuffle=False))
    assert m.history.epoch == [0, 1, 2] and es.stopped_epoch == 2
    assert out == "Epoch 3: early stopping\n"
    with pytest.warns(UserWarning, match="Early stopping conditioned on metric `nope`"):
        m.fit(X, Y, epochs=1, verbose=0,
              callbacks=[keras.callbacks.EarlyStopping(monitor="nope")])
    m2 = _reg_model()
    m2.compile(optimizer=keras.optimizers.SGD(5.0), loss="mse")  # diverges after epoch 0
    w_start = m2.get_weights()
    es2 = keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    with np.errstate(all="ignore"):
        m2.fit(X, Y, epochs=6, batch_size=64, verbose=0, callbacks=[es2])
    assert es2.best_epoch == 0
    assert not all(np.array_equal(a, b) for a, b in zip(w_start, m2.get_weights()))


def test_learning_rate_scheduler_and_reduce_on_plateau() -> None:
    m = _reg_model()
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    h = m.fit(X, Y, epochs=3, verbose=0, callbacks=[
        keras.callbacks.LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1))])
    np.testing.assert_allclose(h.history["learning_rate"], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    m.optimizer.learning_rate = 0.0
    rl = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_lr=0.0)
    m.optimizer.learning_rate = 0.2
    m.optimizer.learning_rate.assign(0.2)
    h = m.fit(X, Y, epochs=3, verbose=0,
              callbacks=[keras.callbacks.LambdaCallback(
                  on_epoch_begin=lambda e, logs: m.optimizer.learning_rate.assign(
                      float(m.optimizer.learning_rate.numpy()))), rl])
    assert "learning_rate" in h.history
    with pytest.raises(ValueError, match="factor >= 1.0"):
        keras.callbacks.ReduceLROnPlateau(factor=1.5)


def test_model_checkpoint_and_weights_round_trip(tmp_path: Any) -> None:
    pytest.importorskip("h5py")
    # Keras' initializers draw from keras.utils.set_random_seed's stream (tf.random's
    # seed alone leaves them random): a seed whose three epochs each improve the loss
    keras.utils.set_random_seed(1)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh"),
                          keras.layers.Dense(1)])
    m.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    path = str(tmp_path / "best-{epoch:02d}.weights.h5")
    ck = keras.callbacks.ModelCheckpoint(path, monitor="loss", save_best_only=True,
                                         save_weights_only=True)
    m.fit(X, Y, epochs=3, verbose=0, callbacks=[ck])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["best-01.weights.h5", "best-02.weights.h5", "best-03.weights.h5"]
    saved = m.get_weights()
    m.fit(X, Y, epochs=1, verbose=0)
    m.load_weights(str(tmp_path / "best-03.weights.h5"))
    for a, b in zip(saved, m.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "x.h5"), save_weights_only=True)
    with pytest.raises(ValueError, match="must end in `.keras`"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "x.h5"))
    whole = keras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"))
    m.fit(X, Y, epochs=1, verbose=0, callbacks=[whole])
    loaded = keras.models.load_model(str(tmp_path / "m.keras"))
    np.testing.assert_allclose(loaded.predict(X, verbose=0), m.predict(X, verbose=0), rtol=1e-6)
    assert loaded.compiled and isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert float(loaded.optimizer.learning_rate.numpy()) == pytest.approx(0.05)
    assert loaded.evaluate(X, Y, verbose=0) == pytest.approx(m.evaluate(X, Y, verbose=0))
    assert not keras.models.load_model(str(tmp_path / "m.keras"), compile=False).compiled
    with pytest.raises(ValueError, match="Invalid filepath extension"):
        m.save(str(tmp_path / "m.zip"))

    class Sub(keras.Model):
        def call(self, x: Any) -> Any:
            return x

    with pytest.raises(ValueError, match="the class is not registered"):
        Sub().save(str(tmp_path / "s.keras"))
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    before = other.get_weights()
    with pytest.raises(ValueError, match="must match"):
        other.load_weights(str(tmp_path / "best-03.weights.h5"))
    for a, b in zip(before, other.get_weights()):  # nothing changed
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------- functional
def test_functional_multi_input_multi_output_and_shared_layers() -> None:
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    shared = keras.layers.Dense(4, name="shared")
    h = shared(a) + keras.layers.Dense(4, name="hb")(b)
    out1 = keras.layers.Dense(1, name="reg")(h)
    out2 = keras.layers.Dense(2, activation="softmax", name="cls")(shared(a))
    m = keras.Model(inputs={"a": a, "b": b}, outputs=[out1, out2])
    assert m.output_names == ["reg", "cls"]
    assert len(m.trainable_variables) == 8  # the shared layer's weights once
    xb = np.ones((64, 2), np.float32)
    y1, y2 = m({"a": X, "b": xb})
    assert y1.shape == (64, 1) and y2.shape == (64, 2)
    m.compile(optimizer="adam", loss=["mse", "sparse_categorical_crossentropy"],
              loss_weights=[1.0, 0.5], metrics=[["mae"], ["accuracy"]])
    h = m.fit({"a": X, "b": xb}, [Y, (X[:, 0] > 0).astype(int)], epochs=2, verbose=0)
    assert sorted(h.history) == ["cls_accuracy", "cls_loss", "loss", "reg_loss", "reg_mae"]
    total = np.array(h.history["reg_loss"]) + 0.5 * np.array(h.history["cls_loss"])
    np.testing.assert_allclose(h.history["loss"], total, rtol=1e-5)
    preds = m.predict({"a": X, "b": xb}, verbose=0)
    assert isinstance(preds, list) and preds[1].shape == (64, 2)


def test_functional_errors_and_summary() -> None:
    a = keras.Input((3,), name="a")
    orphan = keras.Input((3,), name="orphan")
    out = keras.layers.Dense(1)(a + orphan)
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(inputs=a, outputs=out)
    m = keras.Model(a, keras.layers.Dense(2, name="d")(a), name="f")
    lines: list[str] = []
    m.summary(print_fn=lines.append)
    assert len(lines) == 1  # Keras 3 calls print_fn once, with the whole table
    lines = "".join(lines).splitlines()
    # a chain of calls: Keras' three-column table, the input's row first
    assert lines[0] == 'Model: "f"' and "Connected to" not in lines[2]
    assert lines[4] == "│ a (InputLayer)                  │ (None, 3)              │             0 │"
    assert lines[6] == "│ d (Dense)                       │ (None, 2)              │             8 │"
    b = keras.Input((3,), name="b")
    two = keras.Model([a, b], keras.layers.Add(name="add")([a, b]))
    lines = []
    two.summary(print_fn=lines.append)
    lines = "".join(lines).splitlines()
    assert "Connected to" in lines[2] and lines[8:10] == [
        "│ add (Add)           │ (None, 3)         │          0 │ a[0][0], b[0][0]  │",
        "└─────────────────────┴───────────────────┴────────────┴───────────────────┘"]
    long = keras.Model(a, keras.layers.Dense(2, name="a_rather_long_layer_name_here_yes")(a))
    lines = []
    long.summary(print_fn=lines.append)  # rich wraps at spaces, an over-long word ends in …
    lines = "".join(lines).splitlines()
    assert lines[6:8] == [
        "│ a_rather_long_layer_name_here_… │ (None, 2)              │             8 │",
        "│ (Dense)                         │                        │               │"]
    assert lines[-3:] == [" Total params: 8 (32.00 B)", " Trainable params: 8 (32.00 B)",
                          " Non-trainable params: 0 (0.00 B)"]
    assert [layer.name for layer in m.layers] == ["a", "d"]
    with pytest.raises(ValueError, match="expects 1 input"):
        m([X, X])


def test_deferred_build_and_count_params() -> None:
    m = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
    assert not m.built
    with pytest.raises(ValueError, match="isn't built"):
        m.count_params()
    lines: list[str] = []
    m.summary(print_fn=lines.append)
    lines = "".join(lines).splitlines()
    assert "0 (unbuilt)" in lines[4] and "?" in lines[4]
    m.compile(optimizer="sgd", loss="mse")
    m.fit(X, Y, epochs=1, verbose=0)
    assert m.built and m.count_params() == 3 * 4 + 4 + 4 + 1


# ---------------------------------------------------------------------------- metrics
def test_metrics_by_hand() -> None:
    m = keras.metrics.Mean()
    m.update_state([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 1.0])
    assert float(m.result()) == 2.0
    acc = keras.metrics.SparseCategoricalAccuracy()
    acc.update_state([0, 1, 2], [[0.9, 0.1, 0.0], [0.2, 0.3, 0.5], [0.0, 0.1, 0.9]])
    assert float(acc.result()) == pytest.approx(2 / 3)
    b = keras.metrics.BinaryAccuracy()
    b.update_state([1.0, 0.0, 1.0, 0.0], [[0.6], [0.4], [0.3], [0.7]])
    assert float(b.result()) == 0.5
    p, r = keras.metrics.Precision(), keras.metrics.Recall()
    for metric in (p, r):
        metric.update_state([1, 1, 0, 0, 1], [0.9, 0.2, 0.8, 0.1, 0.7])
    assert float(p.result()) == pytest.approx(2 / 3) and float(r.result()) == pytest.approx(2 / 3)
    auc = keras.metrics.AUC(num_thresholds=1000)
    auc.update_state([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert float(auc.result()) == pytest.approx(0.75, abs=1e-3)  # 3 of 4 pairs ordered
    auc.reset_state()
    assert float(auc.result()) == 0.0
    mse = keras.metrics.MeanSquaredError()
    mse.update_state([[1.0, 2.0]], [[0.0, 0.0]])
    assert float(mse.result()) == 2.5
    assert isinstance(keras.metrics.get("mae"), keras.metrics.MeanAbsoluteError)
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        keras.metrics.get("nonsense")


# ---------------------------------------------------------------------------- rules
def _one_step(fn: Any, **kw: Any) -> np.ndarray:
    p = np.array([1.0, -2.0], np.float64)
    fn(p, np.array([0.5, -1.5]), {}, **kw)
    return p


def test_keras_rules_first_step_by_hand() -> None:
    g = np.array([0.5, -1.5])
    p0 = np.array([1.0, -2.0])
    v = 0.1 * g * g
    np.testing.assert_allclose(_one_step(kr.rmsprop_update, lr=0.01),
                               p0 - 0.01 * g / np.sqrt(v + 1e-7))
    np.testing.assert_allclose(_one_step(kr.adagrad_update, lr=0.1),
                               p0 - 0.1 * g / np.sqrt(0.1 + g * g + 1e-7))
    acc = 0.05 * g * g
    delta = -np.sqrt(1e-7) * g / np.sqrt(acc + 1e-7)
    np.testing.assert_allclose(_one_step(kr.adadelta_update, lr=1.0), p0 + delta)
    np.testing.assert_allclose(_one_step(kr.adamax_update, lr=0.02, step=1),
                               p0 - 0.02 * (0.1 * g) / (0.1 * (np.abs(g) + 1e-7)))
    np.testing.assert_allclose(_one_step(kr.lion_update, lr=0.003), p0 - 0.003 * np.sign(g))
    up = kr.nadam_u_product(1.0, step=1, beta_1=0.9, dtype=np.float64)
    u1, u2 = 0.9 * (1 - 0.5 * 0.96), 0.9 * (1 - 0.5 * 0.96 ** 2)
    assert up == pytest.approx(u1)
    m_hat = u2 * 0.1 * g / (1 - up * u2) + (1 - u1) * g / (1 - up)
    v_hat = 0.001 * g * g / (1 - 0.999)
    np.testing.assert_allclose(_one_step(kr.nadam_update, lr=0.01, step=1, u_product=up),
                               p0 - m_hat * 0.01 / (np.sqrt(v_hat) + 1e-7))
    # FTRL with no regularisation: p = -linear / quadratic
    n = 0.1 + g * g
    lin = g - (np.sqrt(n) - np.sqrt(0.1)) / 0.1 * p0
    np.testing.assert_allclose(_one_step(kr.ftrl_update, lr=0.1), -lin / (np.sqrt(n) / 0.1))


def test_optimizers_by_name_and_float32_slots() -> None:
    for name in ("rmsprop", "adagrad", "adadelta", "adamax", "nadam", "ftrl", "lion", "adamw"):
        opt = keras.optimizers.get(name)
        w = tf.Variable([1.0, 2.0])
        for _ in range(3):
            opt.apply_gradients([(tf.constant([0.5, -0.5]), w)])
        assert w.dtype == tf.float32 and int(opt.iterations.numpy()) == 3
        assert not np.array_equal(w.numpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        keras.optimizers.get("adamz")


def test_schedules_by_hand_and_in_an_optimizer() -> None:
    s = keras.optimizers.schedules
    assert float(s.ExponentialDecay(1.0, 2, 0.5, staircase=True)(3)) == 0.5
    pw = s.PiecewiseConstantDecay([2, 4], [1.0, 0.5, 0.1])
    assert [float(pw(i)) for i in range(6)] == pytest.approx([1, 1, 1, 0.5, 0.5, 0.1])
    assert float(s.PolynomialDecay(1.0, 10, end_learning_rate=0.0)(5)) == pytest.approx(0.5)
    assert float(s.InverseTimeDecay(1.0, 1, 1.0)(3)) == pytest.approx(0.25)
    assert float(s.CosineDecay(1.0, 10)(5)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="1 less than the length of values"):
        s.PiecewiseConstantDecay([1], [1.0])
    opt = keras.optimizers.SGD(learning_rate=s.ExponentialDecay(0.1, 1, 0.5))
    w = tf.Variable(0.0)
    for _ in range(3):
        opt.apply_gradients([(tf.constant(-1.0), w)])
    assert float(w.numpy()) == pytest.approx(0.1 + 0.05 + 0.025)
    assert float(opt.learning_rate.numpy()) == pytest.approx(0.0125)


# ---------------------------------------------------------------------------- utils, Module
def test_to_categorical() -> None:
    out = keras.utils.to_categorical([[1], [0], [2]])
    assert out.shape == (3, 3) and out.dtype == np.float64
    assert out.tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    assert keras.utils.to_categorical([0, 1], num_classes=4).shape == (2, 4)


def test_module_order_scopes_and_config() -> None:
    class Block(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            with self.name_scope:
                self.w = tf.Variable(1.0, name="w")

    class Net(tf.Module):
        def __init__(self) -> None:
            super().__init__(name="net")
            self.block = Block()
            self.bias = tf.Variable(0.0, name="bias")
            self.dense = keras.layers.Dense(1)
            self.dense.build((None, 2))

    n = Net()
    assert [v.name for v in n.trainable_variables] == ["bias:0", "kernel", "bias", "block/w:0"]
    assert [type(s).__name__ for s in n.submodules] == ["Block"]
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="1x")
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.list_physical_devices()[0].device_type == "CPU"
    with tf.device("/GPU:0"):
        assert float(tf.constant(2.0) * 2.0) == 4.0
    assert tf.__version__.startswith("2.")


def test_training_loop_from_scratch_guide_and_add_loss() -> None:
    tf.random.set_seed(0)
    inputs = keras.Input(shape=(3,), name="digits")
    h = keras.layers.Dense(16, activation="relu")(inputs)
    model = keras.Model(inputs=inputs, outputs=keras.layers.Dense(1, name="predictions")(h))
    optimizer = keras.optimizers.SGD(learning_rate=0.05)
    loss_fn = keras.losses.MeanSquaredError()
    metric = keras.metrics.MeanAbsoluteError()
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(64, seed=0).batch(16)
    epoch_losses = []
    for _ in range(5):
        total = 0.0
        for xb, yb in ds:
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = loss_fn(yb, pred)
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
            metric.update_state(yb, pred)
            total += float(loss)
        epoch_losses.append(total)
        metric.reset_state()
    assert epoch_losses[-1] < 0.5 * epoch_losses[0]

    class Penalty(keras.layers.Layer):
        def call(self, x: Any) -> Any:
            self.add_loss(tf.constant(1.0))
            return x

    inp = keras.Input((3,))
    m = keras.Model(inp, keras.layers.Dense(1, kernel_initializer="zeros")(Penalty()(inp)))
    _ = m(X)
    _ = m(X)
    assert len(m.losses) == 1  # cleared at the start of every outermost call
    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    h = m.fit(X, Y, epochs=1, verbose=0)
    assert h.history["loss"][0] == pytest.approx(float(np.mean(Y ** 2)) + 1.0, rel=1e-5)


def test_more_metrics_by_hand() -> None:
    top = keras.metrics.SparseTopKCategoricalAccuracy(k=2)
    # label 2: one value above it -> in the top 2; label 0: two values above -> out;
    # label 1 ties with the second highest -> in (TensorFlow's in_top_k)
    top.update_state([2, 0, 1], [[0.5, 0.1, 0.4], [0.1, 0.5, 0.4], [0.5, 0.3, 0.3]])
    assert float(top.result()) == pytest.approx(2 / 3)
    rmse = keras.metrics.RootMeanSquaredError()
    rmse.update_state([[0.0], [0.0]], [[3.0], [4.0]])
    assert float(rmse.result()) == pytest.approx(np.sqrt(12.5))
    mape = keras.metrics.MeanAbsolutePercentageError()
    mape.update_state([[2.0]], [[1.0]])
    assert float(mape.result()) == pytest.approx(50.0)
    bce = keras.metrics.BinaryCrossentropy()
    bce.update_state([[1.0]], [[0.5]])
    assert float(bce.result()) == pytest.approx(np.log(2), rel=1e-5)
    for name in ("mape", "msle", "root_mean_squared_error", "sparse_top_k_categorical_accuracy",
                 "binary_crossentropy"):
        assert isinstance(keras.metrics.get(name), keras.metrics.Metric)


def test_gradient_accumulation_and_ema_checks() -> None:
    opt = keras.optimizers.SGD(learning_rate=1.0, gradient_accumulation_steps=2)
    w = tf.Variable(0.0)
    opt.apply_gradients([(tf.constant(1.0), w)])
    assert float(w.numpy()) == 0.0 and int(opt.iterations.numpy()) == 0
    opt.apply_gradients([(tf.constant(3.0), w)])
    assert float(w.numpy()) == -2.0 and int(opt.iterations.numpy()) == 1  # mean of 1 and 3
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        keras.optimizers.SGD(gradient_accumulation_steps=1)
    with pytest.raises(ValueError, match="ema_momentum"):
        keras.optimizers.Adam(use_ema=True, ema_momentum=2.0)


def test_ema_of_the_weights() -> None:
    opt = keras.optimizers.SGD(learning_rate=1.0, use_ema=True, ema_momentum=0.5)
    w = tf.Variable(0.0)
    for _ in range(3):
        opt.apply_gradients([(tf.constant(-1.0), w)])  # w: 1, 2, 3
    assert float(w.numpy()) == 3.0
    opt.finalize_variable_values([w])
    assert float(w.numpy()) == pytest.approx(0.5 * (0.5 * 1 + 0.5 * 2) + 0.5 * 3)


def test_fit_on_a_repeated_dataset_with_steps_per_epoch() -> None:
    m = _reg_model()
    m.compile(optimizer="adam", loss="mse")
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(16).repeat()
    h = m.fit(ds, steps_per_epoch=3, epochs=3, verbose=0,
              validation_data=ds, validation_steps=2)
    assert h.params["steps"] == 3 and len(h.history["val_loss"]) == 3
    assert int(m.optimizer.iterations.numpy()) == 9


def _rows_per_batch(shuffle: Any, seed: int, **kw: Any) -> list[list[int]]:
    seen: list[list[int]] = []

    class Rec(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.d = keras.layers.Dense(1)

        def call(self, x: Any) -> Any:
            return self.d(x)

        def train_step(self, data: Any) -> Any:
            seen.append([int(v) for v in data[1].numpy()])
            return {"n": tf.constant(1.0)}

    keras.utils.set_random_seed(seed)
    m = Rec()
    m.compile(optimizer="sgd", loss="mse")
    m.fit(np.arange(10, dtype=np.float32)[:, None], np.arange(10, dtype=np.float32),
          batch_size=4, epochs=2, shuffle=shuffle, verbose=0, **kw)
    return seen


def test_fit_shuffle_orders_are_keras_orders() -> None:
    """The rows real Keras 3 (TensorFlow 2.21) feeds its train_step after
    ``keras.utils.set_random_seed(1)``: one permutation, repeated every epoch."""
    assert _rows_per_batch(True, 1) == [[2, 4, 0, 8], [9, 1, 5, 6], [3, 7]] * 2
    assert _rows_per_batch("batch", 1) == [[0, 1, 2, 3], [7, 6, 4, 5], [8, 9]] * 2
    assert _rows_per_batch(True, 1, validation_split=0.3) == [[1, 0, 4, 6], [3, 5, 2]] * 2
    assert _rows_per_batch(False, 1) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] * 2
    tf.random.set_seed(1)
    before = tf.random.uniform([2]).numpy()
    _rows_per_batch(True, 1)  # fit takes no eager op seed
    np.testing.assert_array_equal(tf.random.uniform([2]).numpy(), before)
