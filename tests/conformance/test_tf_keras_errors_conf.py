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


PROGRAMS: dict[str, Callable[[Any], Any]] = {
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
