"""Conformance: errors raised through Keras print as Keras 3 prints them.

An error escaping a layer's ``call`` is framed ("Exception encountered when
calling X.call()" plus the arguments received); a layer's own input check is
framed by its caller; the type and ``str(e)`` must equal real Keras's.
Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _custom_call(tf: Any) -> Any:
    class Bad(tf.keras.layers.Layer):
        def call(self, x: Any, scale: float = 2.0) -> Any:
            return tf.reshape(x * scale, [7])

    return Bad()(tf.ones((2, 3)), scale=3.0)


def _nested(tf: Any) -> Any:
    class Inner(tf.keras.layers.Layer):
        def call(self, x: Any) -> Any:
            raise ValueError("inner failure")

    class Outer(tf.keras.layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.inner = Inner()

        def call(self, x: Any) -> Any:
            return self.inner(x)

    return Outer()(tf.ones((1, 2)))


def _dense_direct(tf: Any) -> Any:
    d = tf.keras.layers.Dense(2, name="dd")
    d(tf.ones((1, 3)))
    return d(tf.ones((1, 4)))


def _sequential(tf: Any) -> Any:
    m = tf.keras.Sequential([tf.keras.layers.Dense(2, name="sd")])
    m(tf.ones((1, 3)))
    return m(tf.ones((1, 5)))


def _unknown_variable(tf: Any) -> Any:
    opt = tf.keras.optimizers.SGD(0.1)
    w, u = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    opt.apply([tf.constant([1.0, 1.0])], [w])
    return opt.apply_gradients([(tf.constant(1.0), u)])


def _unknown_variable_in_function(tf: Any) -> Any:
    # the guide's custom loop with one optimizer reused for a second model: the error
    # names the Keras variable without its (symbolic) value
    keras = tf.keras
    opt = keras.optimizers.SGD(0.1)
    for units in (2, 3):
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(units, name=f"u{units}")])

        @tf.function
        def step(x: Any) -> Any:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))  # noqa: B023
            grads = tape.gradient(loss, model.trainable_weights)  # noqa: B023
            opt.apply(grads, model.trainable_weights)  # noqa: B023
            return loss

        step(tf.ones((1, 4)))  # called at once, inside the iteration


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "optimizer_unknown_variable": _unknown_variable,
    "optimizer_apply_unbuilt": lambda tf: tf.keras.optimizers.Adam().apply([tf.constant(1.0)]),
    "custom_call": _custom_call,
    "nested_layers": _nested,
    "dense_input_check": _dense_direct,
    "sequential_input_check": _sequential,
    "mse_shapes": lambda tf: tf.keras.losses.MeanSquaredError()(tf.ones((2, 3)),
                                                                tf.ones((2, 4))),
    "dropout_rate": lambda tf: tf.keras.layers.Dropout(2.0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_keras_error_text_is_keras(rtf: Any, name: str) -> None:
    results = []
    for tf in (tg_tf, rtf):
        with pytest.raises(Exception) as info:  # noqa: B017 - the type is compared below
            PROGRAMS[name](tf)
        results.append((type(info.value).__name__, str(info.value)))
    assert results[0] == results[1]


def test_the_hint_note_survives_the_frame() -> None:
    with pytest.raises(tg_tf.errors.InvalidArgumentError) as info:
        _custom_call(tg_tf)
    assert str(info.value).startswith("Exception encountered when calling Bad.call().")
    assert getattr(info.value, "__notes__", [""])[0].startswith("[tapegrad hint] ")


def test_an_unknown_variable_inside_tf_function_is_named_as_keras_names_it(rtf: Any) -> None:
    # the frames differ (Keras' own lines are in real TF's text): compare the error line,
    # with the per-process model counters taken out
    import re

    lines = []
    for tf in (tg_tf, rtf):
        with pytest.raises(ValueError) as info:
            _unknown_variable_in_function(tf)
        text = str(info.value)
        assert text.startswith("in user code:")
        last = [ln.strip() for ln in text.splitlines() if ln.strip()][-1]
        lines.append(re.sub(r"sequential(_\d+)?/", "sequential/", last))
    assert lines[0] == lines[1]
    assert lines[0].startswith("ValueError: Unknown variable: <Variable path=sequential/u3/kernel,")
