"""Hostile or careless input in TensorFlow style: TensorFlow's errors and values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad._core.errors import hint_of


@pytest.mark.parametrize("fn,value", [
    (lambda: tf.reduce_max(tf.zeros([0])), -np.inf),
    (lambda: tf.reduce_min(tf.zeros([0])), np.inf),
    (lambda: tf.reduce_max(tf.zeros([0], dtype=tf.int32)), np.iinfo(np.int32).min),
    (lambda: tf.reduce_min(tf.zeros([0], dtype=tf.int64)), np.iinfo(np.int64).max),
    (lambda: tf.reduce_sum(tf.zeros([0])), 0.0),
    (lambda: tf.reduce_prod(tf.zeros([0])), 1.0),
])
def test_empty_reductions_give_the_identity(fn: Any, value: Any) -> None:
    assert fn().numpy() == value


def test_empty_reductions_over_an_axis_keep_the_shape() -> None:
    r = tf.reduce_max(tf.zeros([0, 3]), axis=0)
    assert r.shape == (3,) and r.numpy().tolist() == [-np.inf] * 3
    assert tf.reduce_min(tf.zeros([2, 0]), axis=1, keepdims=True).shape == (2, 1)


@pytest.mark.parametrize("fn,msg", [
    (lambda: tf.constant([True]) + tf.constant([True]),
     "Value for attr 'T' of bool is not in the list of allowed values"),
    (lambda: tf.constant([True]) * tf.constant([False]), "node Mul"),
    (lambda: tf.math.floordiv(tf.constant([1, 2]), tf.constant([1, 0])),
     r"Integer division by zero \[Op:FloorDiv\]"),
    (lambda: tf.math.floormod(tf.constant([1]), 0), r"Integer division by zero \[Op:FloorMod\]"),
    (lambda: tf.constant([7]) // tf.constant([0]), "Integer division by zero"),
    (lambda: tf.zeros([-1]), r"Dimension -1 must be >= 0 \[Op:Fill\]"),
    (lambda: tf.ones([2 ** 40, 2 ** 40]), "would have more than 2\\*\\*63 - 1 elements"),
])
def test_invalid_argument_errors(fn: Any, msg: str) -> None:
    with pytest.raises(tf.errors.InvalidArgumentError, match=msg) as info:
        fn()
    assert hint_of(info.value) is not None  # the hint is a note


def test_out_of_memory_is_resource_exhausted() -> None:
    with pytest.raises(tf.errors.ResourceExhaustedError, match="OOM when allocating tensor"):
        tf.zeros([2 ** 45])


@pytest.mark.parametrize("value,msg", [
    ([2 ** 70], "Can't convert Python sequence with out-of-range integer to Tensor."),
    ([[1], [2 ** 64]], "out-of-range integer"),
    ([object()], "with an unsupported type \\(<class 'object'>\\) to a Tensor."),
])
def test_conversion_names_the_real_cause(value: Any, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        tf.constant(value)


def test_floats_still_divide_by_zero() -> None:
    assert tf.constant([1.0]).__truediv__(0.0).numpy().tolist() == [np.inf]
    assert (tf.constant([1]) / tf.constant([0])).numpy().tolist() == [np.inf]


def test_output_gradients_of_another_dtype() -> None:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = x * 2
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="cannot compute Mul as input #1\\(zero-based\\) was expected to be "
                             "a double tensor but is a float tensor"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 1.0], dtype=tf.float64))
