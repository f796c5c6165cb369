"""Bad input in TensorFlow style: the same exception type as TensorFlow, and its message.

TensorFlow prefixes some messages with ``{{function_node ...}}``; tapegrad's
message without its hint line must appear in TensorFlow's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _og_dtype(tf: Any) -> Any:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = x * 2
    return tape.gradient(y, x, output_gradients=tf.constant([1.0, 1.0], dtype=tf.float64))


ERRORS: dict[str, Callable[[Any], Any]] = {
    "bool_add": lambda tf: tf.constant([True]) + tf.constant([True]),
    "int_floordiv_zero": lambda tf: tf.math.floordiv(tf.constant([1, 2]), tf.constant([1, 0])),
    "int_floormod_zero": lambda tf: tf.math.floormod(tf.constant([1]), tf.constant([0])),
    "zeros_negative": lambda tf: tf.zeros([-1]),
    "zeros_huge": lambda tf: tf.zeros([2 ** 40, 2 ** 40]),
    "constant_overflow": lambda tf: tf.constant([2 ** 70]),
    "constant_ragged": lambda tf: tf.constant([[1, 2], [3]]),
    "output_gradients_dtype": _og_dtype,
}

VALUES: dict[str, Callable[[Any], Any]] = {
    "max_empty": lambda tf: tf.reduce_max(tf.zeros([0])),
    "min_empty": lambda tf: tf.reduce_min(tf.zeros([0])),
    "max_empty_axis": lambda tf: tf.reduce_max(tf.zeros([0, 3]), axis=0),
    "max_empty_int": lambda tf: tf.reduce_max(tf.zeros([0], dtype=tf.int32)),
    "min_empty_int64": lambda tf: tf.reduce_min(tf.zeros([0], dtype=tf.int64)),
    "sum_empty": lambda tf: tf.reduce_sum(tf.zeros([0, 2]), axis=0),
    "prod_empty": lambda tf: tf.reduce_prod(tf.zeros([0])),
    "int_truediv_zero": lambda tf: tf.constant([1, 0]) / tf.constant([0, 0]),
}


def _norm_grad_at_zero(tf: Any) -> Any:
    x = tf.Variable([0.0, 0.0])
    with tf.GradientTape() as tape:
        y = tf.norm(x)
    return tape.gradient(y, x)


VALUES["norm_grad_at_zero"] = _norm_grad_at_zero  # TensorFlow's own value: NaN


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_tensorflow(rtf: Any, name: str) -> None:
    def err(tf: Any) -> BaseException:
        try:
            ERRORS[name](tf)
        except Exception as e:  # noqa: BLE001  (the point is to compare what was raised)
            return e
        raise AssertionError("no error")

    want, got = err(rtf), err(tg)
    assert type(got).__name__ == type(want).__name__
    mine = str(got).split("\n[tapegrad hint]")[0]
    mine = mine.split(" (setting an array element")[0]  # NumPy's detail on ragged input
    theirs = str(want)
    core = mine.split(" [Op:")[0].split("\n\t; NodeDef")[0]
    assert core and core in theirs, (mine, theirs)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_tensorflow(rtf: Any, name: str) -> None:
    want = np.asarray(VALUES[name](rtf))
    got = np.asarray(VALUES[name](tg))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
